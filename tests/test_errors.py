"""The errors of api.md's "Errors users must get": the right type, and a message that says
what is wrong (and, where the contract asks, what to do instead).

Every error class is also the built-in exception a NumPy user would catch (``TypeError`` /
``ValueError`` / ``RuntimeError``), which is checked once at the end.
"""

import numpy as np
import pytest

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.errors import (
    ArgnumsError,
    BatchingError,
    DiffkitError,
    EscapedTracerError,
    InputTypeError,
    NonScalarOutputError,
    ShapeMismatchError,
    TracerConversionError,
)

X3 = np.array([0.3, -1.2, 2.0])


def message(excinfo):
    return str(excinfo.value)


# --- grad of a non-scalar output --------------------------------------------------------


class TestNonScalarOutput:
    def test_vector_output(self):
        with pytest.raises(NonScalarOutputError) as excinfo:
            dk.grad(lambda x: dnp.sin(x))(X3)
        text = message(excinfo)
        assert "scalar" in text
        assert "(3,)" in text                        # the output's shape
        assert "vjp(fun, x)[1](v)" in text           # what to do instead
        assert "jacobian" in text

    def test_matrix_output_gives_its_shape(self):
        with pytest.raises(NonScalarOutputError, match=r"\(2, 3\)"):
            dk.grad(lambda x: x * 2)(np.ones((2, 3)))

    def test_one_element_vector_is_not_a_scalar(self):
        with pytest.raises(NonScalarOutputError, match=r"\(1,\)"):
            dk.grad(lambda x: x[:1])(X3)

    def test_tuple_output(self):
        with pytest.raises(NonScalarOutputError) as excinfo:
            dk.grad(lambda x: (dnp.sum(x), dnp.sum(x)))(X3)
        assert "tuple" in message(excinfo)
        assert "has_aux" in message(excinfo) or "vjp" in message(excinfo)

    def test_value_and_grad_too(self):
        with pytest.raises(NonScalarOutputError, match="scalar"):
            dk.value_and_grad(lambda x: x ** 2)(X3)

    def test_integer_output(self):
        with pytest.raises(NonScalarOutputError) as excinfo:
            dk.grad(lambda x: dnp.argmax(x))(X3)
        assert "int" in message(excinfo)
        assert "float" in message(excinfo)


# --- cotangents and tangents that do not match ------------------------------------------


class TestCotangentMismatch:
    def test_wrong_shape(self):
        _, pullback = dk.vjp(lambda x: x * 2, X3)
        with pytest.raises(ShapeMismatchError) as excinfo:
            pullback(np.ones(4))
        text = message(excinfo)
        assert "cotangent" in text
        assert "(4,)" in text and "(3,)" in text      # got and expected

    def test_wrong_rank(self):
        _, pullback = dk.vjp(lambda x: dnp.sum(x), X3)
        with pytest.raises(ShapeMismatchError) as excinfo:
            pullback(np.ones(1))
        assert "(1,)" in message(excinfo) and "()" in message(excinfo)

    def test_wrong_structure(self):
        _, pullback = dk.vjp(lambda x: x * 2, X3)
        with pytest.raises(ShapeMismatchError) as excinfo:
            pullback((np.ones(3),))
        text = message(excinfo)
        assert "structure" in text
        assert "(*,)" in text and "PyTreeDef(*)" in text

    def test_wrong_dict_keys(self):
        _, pullback = dk.vjp(lambda x: {"a": x, "b": x}, X3)
        with pytest.raises(ShapeMismatchError) as excinfo:
            pullback({"a": np.ones(3), "c": np.ones(3)})
        text = message(excinfo)
        assert "'b'" in text and "'c'" in text

    def test_wrong_shape_in_a_pytree_leaf(self):
        _, pullback = dk.vjp(lambda x: (x, dnp.sum(x)), X3)
        with pytest.raises(ShapeMismatchError) as excinfo:
            pullback((np.ones(3), np.ones(3)))
        assert "leaf 1" in message(excinfo)
        assert "(3,)" in message(excinfo) and "()" in message(excinfo)

    def test_complex_cotangent_for_real_output(self):
        _, pullback = dk.vjp(lambda x: x * 2, X3)
        with pytest.raises(ShapeMismatchError) as excinfo:
            pullback(np.ones(3, dtype=complex))
        assert "complex128" in message(excinfo) and "float64" in message(excinfo)

    def test_string_cotangent(self):
        _, pullback = dk.vjp(lambda x: x * 2, X3)
        with pytest.raises(DiffkitError) as excinfo:
            pullback(np.array(["a", "b", "c"]))
        assert isinstance(excinfo.value, (ShapeMismatchError, InputTypeError))
        assert "<U1" in message(excinfo) or "str" in message(excinfo)
        assert "float64" in message(excinfo)


class TestTangentMismatch:
    def test_wrong_shape(self):
        with pytest.raises(ShapeMismatchError) as excinfo:
            dk.jvp(lambda x: x * 2, (X3,), (np.ones(4),))
        text = message(excinfo)
        assert "tangent" in text
        assert "(4,)" in text and "(3,)" in text

    def test_wrong_structure(self):
        with pytest.raises(ShapeMismatchError) as excinfo:
            dk.jvp(lambda x: x * 2, (X3,), (X3, X3))
        assert "structure" in message(excinfo)
        assert "(*, *)" in message(excinfo) and "(*,)" in message(excinfo)

    def test_wrong_pytree_structure(self):
        with pytest.raises(ShapeMismatchError) as excinfo:
            dk.jvp(lambda p: p["a"], ({"a": X3},), ({"b": X3},))
        assert "'a'" in message(excinfo) and "'b'" in message(excinfo)

    def test_complex_tangent_for_real_primal(self):
        with pytest.raises(ShapeMismatchError) as excinfo:
            dk.jvp(lambda x: x * 2, (X3,), (np.ones(3, dtype=complex),))
        assert "complex128" in message(excinfo) and "float64" in message(excinfo)

    def test_primals_not_a_tuple(self):
        with pytest.raises(InputTypeError) as excinfo:
            dk.jvp(lambda x: x * 2, X3, X3)
        assert "tuple" in message(excinfo)
        assert "jvp(f, (x,), (v,))" in message(excinfo)

    def test_hvp_primals_not_a_tuple(self):
        # A bare array would otherwise be split into its rows, one "primal" per row.
        with pytest.raises(InputTypeError) as excinfo:
            dk.hvp(lambda x: dnp.sum(x ** 3), X3, X3)
        assert "hvp(f, (x,), (v,))" in message(excinfo)

    def test_linearize_tangent_wrong_shape(self):
        _, jvp_fn = dk.linearize(lambda x: x * 2, X3)
        with pytest.raises(ShapeMismatchError) as excinfo:
            jvp_fn(np.ones(2))
        assert "(2,)" in message(excinfo) and "(3,)" in message(excinfo)

    def test_hvp_tangent_wrong_shape(self):
        with pytest.raises(ShapeMismatchError) as excinfo:
            dk.hvp(lambda x: dnp.sum(x ** 3), (X3,), (np.ones(5),))
        assert "(5,)" in message(excinfo) and "(3,)" in message(excinfo)


# --- inputs that cannot be differentiated -----------------------------------------------

INT_OR_BOOL = {
    "int array": np.arange(3),
    "bool array": np.array([True, False, True]),
    "python int": 3,
    "python bool": True,
    "numpy int": np.int32(2),
}

TRANSFORMS = {
    "grad": lambda x: dk.grad(lambda z: dnp.sum(z * 1.0))(x),
    "value_and_grad": lambda x: dk.value_and_grad(lambda z: dnp.sum(z * 1.0))(x),
    "vjp": lambda x: dk.vjp(lambda z: z * 1.0, x),
    "jvp": lambda x: dk.jvp(lambda z: z * 1.0, (x,), (np.ones(np.shape(x)),)),
    "linearize": lambda x: dk.linearize(lambda z: z * 1.0, x),
    "jacfwd": lambda x: dk.jacfwd(lambda z: z * 1.0)(x),
    "jacrev": lambda x: dk.jacrev(lambda z: z * 1.0)(x),
    "jacobian": lambda x: dk.jacobian(lambda z: z * 1.0)(x),
    "hessian": lambda x: dk.hessian(lambda z: dnp.sum(z * 1.0))(x),
}


class TestInputTypes:
    @pytest.mark.parametrize("kind", sorted(INT_OR_BOOL))
    @pytest.mark.parametrize("transform", sorted(TRANSFORMS))
    def test_integer_and_bool_inputs(self, transform, kind):
        x = INT_OR_BOOL[kind]
        with pytest.raises(InputTypeError) as excinfo:
            TRANSFORMS[transform](x)
        text = message(excinfo)
        assert str(np.asarray(x).dtype) in text       # names the offending dtype
        assert "float" in text                         # says what is allowed

    def test_grad_error_names_grad(self):
        with pytest.raises(InputTypeError) as excinfo:
            dk.grad(lambda z: dnp.sum(z * 1.0))(np.arange(3))
        assert "grad" in message(excinfo)
        assert "vjp" not in message(excinfo)

    def test_integer_leaf_in_a_pytree(self):
        with pytest.raises(InputTypeError) as excinfo:
            dk.grad(lambda p: dnp.sum(p["w"]) * p["n"])({"w": X3, "n": 2})
        assert "int" in message(excinfo)

    def test_integer_argument_outside_argnums_is_fine(self):
        g = dk.grad(lambda x, n: dnp.sum(x ** n))(X3, 2)
        np.testing.assert_allclose(g, 2 * X3)

    @pytest.mark.parametrize("bad", ["abc", object(), {"a": "abc"}], ids=["str", "object",
                                                                          "str-leaf"])
    @pytest.mark.parametrize("transform", sorted(TRANSFORMS))
    def test_non_array_argument(self, transform, bad):
        with pytest.raises(InputTypeError) as excinfo:
            TRANSFORMS[transform](bad)
        text = message(excinfo)
        leaf = bad["a"] if isinstance(bad, dict) else bad
        assert type(leaf).__name__ in text
        assert "array" in text

    def test_vmap_non_array_argument(self):
        with pytest.raises(InputTypeError, match="str"):
            dk.vmap(lambda s: s)("abc")


# --- argnums ------------------------------------------------------------------------------


class TestArgnums:
    @pytest.mark.parametrize("argnums", [2, -3, (0, 2), (5,)])
    def test_out_of_range(self, argnums):
        with pytest.raises(ArgnumsError) as excinfo:
            dk.grad(lambda x, y: dnp.sum(x * y), argnums=argnums)(X3, X3)
        text = message(excinfo)
        assert f"argnums={argnums!r}" in text
        assert "2 positional argument" in text

    @pytest.mark.parametrize("make", [dk.value_and_grad, dk.jacfwd, dk.jacrev, dk.jacobian,
                                      dk.hessian], ids=lambda f: f.__name__)
    def test_every_transformation_checks(self, make):
        with pytest.raises(ArgnumsError, match="argnums=1"):
            make(lambda x: dnp.sum(x), argnums=1)(X3)

    def test_not_an_int(self):
        with pytest.raises(ArgnumsError, match="argnums='x'"):
            dk.grad(lambda x: dnp.sum(x), argnums="x")(X3)

    def test_keyword_argument_cannot_be_differentiated_by_position(self):
        # The function was called with one positional argument; y is a keyword.
        with pytest.raises(ArgnumsError, match="1 positional argument"):
            dk.grad(lambda x, y: dnp.sum(x * y), argnums=1)(X3, y=X3)


# --- vmap axes and batch sizes ------------------------------------------------------------


class TestVmapAxes:
    def test_in_axes_longer_than_arguments(self):
        with pytest.raises(BatchingError) as excinfo:
            dk.vmap(lambda x: x, in_axes=(0, 0))(X3)
        text = message(excinfo)
        assert "in_axes=(0, 0)" in text
        assert "2 entries" in text and "1 positional argument;" in text

    def test_in_axes_shorter_than_arguments(self):
        with pytest.raises(BatchingError, match="in_axes"):
            dk.vmap(lambda x, y: x + y, in_axes=(0,))(X3, X3)

    def test_in_axes_structure_mismatch(self):
        with pytest.raises(BatchingError) as excinfo:
            dk.vmap(lambda p: p["b"], in_axes=({"a": 0},))({"b": X3})
        assert "'a'" in message(excinfo) and "'b'" in message(excinfo)

    def test_axis_out_of_range(self):
        with pytest.raises(BatchingError) as excinfo:
            dk.vmap(lambda x: x, in_axes=1)(X3)
        text = message(excinfo)
        assert "axis 1" in text and "(3,)" in text

    def test_axis_not_an_int(self):
        with pytest.raises(BatchingError, match="'a'"):
            dk.vmap(lambda x: x, in_axes="a")(X3)

    def test_different_batch_sizes(self):
        with pytest.raises(BatchingError) as excinfo:
            dk.vmap(lambda x, y: x + y)(X3, np.ones(4))
        text = message(excinfo)
        assert "[3, 4]" in text
        assert "batch size" in text

    def test_different_batch_sizes_with_axes(self):
        with pytest.raises(BatchingError, match=r"\[2, 3\]"):
            dk.vmap(lambda x, y: x, in_axes=(0, 1))(np.ones((2, 3)), np.ones((2, 3)))

    def test_axis_size_disagrees(self):
        with pytest.raises(BatchingError) as excinfo:
            dk.vmap(lambda x: x, axis_size=4)(X3)
        assert "axis_size=4" in message(excinfo) and "3" in message(excinfo)

    def test_nothing_mapped_and_no_axis_size(self):
        with pytest.raises(BatchingError, match="axis_size"):
            dk.vmap(lambda x: x, in_axes=None)(X3)

    def test_out_axes_none_for_a_batched_output(self):
        with pytest.raises(BatchingError, match="out_axes"):
            dk.vmap(lambda x: x * 2, out_axes=None)(X3)

    def test_out_axes_out_of_range(self):
        with pytest.raises(BatchingError, match="out_axes 2"):
            dk.vmap(lambda x: x * 2, out_axes=2)(X3)

    def test_out_axes_structure_mismatch(self):
        with pytest.raises(BatchingError, match="out_axes"):
            dk.vmap(lambda x: (x, x), out_axes=(0, 0, 0))(X3)

    def test_data_dependent_branch(self):
        with pytest.raises(TracerConversionError) as excinfo:
            dk.vmap(lambda x: x if x > 0 else -x)(X3)
        assert "where" in message(excinfo)


# --- traced values escaping -------------------------------------------------------------


class TestConversionInsideTransformation:
    @pytest.mark.parametrize("run", [
        lambda f: dk.grad(f)(X3),
        lambda f: dk.jvp(f, (X3,), (np.ones(3),)),
        lambda f: dk.vmap(f)(np.ones((2, 3))),
    ], ids=["grad", "jvp", "vmap"])
    def test_np_asarray(self, run):
        with pytest.raises(TracerConversionError) as excinfo:
            run(lambda x: dnp.sum(np.asarray(x)))
        text = message(excinfo)
        assert "np.asarray" in text
        assert "derivative" in text
        assert "diffkit.numpy" in text or "dnp" in text   # says what to use instead

    def test_np_array(self):
        with pytest.raises(TracerConversionError, match="stop_gradient"):
            dk.grad(lambda x: dnp.sum(np.array(x) * 1.0))(X3)

    # (int() is an integer cast, a plain integer with zero derivative: tests/test_escapes.py)
    @pytest.mark.parametrize("convert", [float, complex], ids=lambda c: c.__name__)
    def test_python_number(self, convert):
        with pytest.raises(TracerConversionError) as excinfo:
            dk.grad(lambda x: convert(x) * x)(2.0)
        assert f"{convert.__name__}()" in message(excinfo)
        assert "derivative" in message(excinfo)

    def test_item(self):
        with pytest.raises(TracerConversionError, match=r"\.item\(\)"):
            dk.grad(lambda x: x.item() * x)(2.0)

    def test_in_place_write_of_a_slice(self):
        def f(x):
            buffer = np.zeros(3)
            buffer[:] = x
            return dnp.sum(x)

        with pytest.raises(TracerConversionError, match="derivative"):
            dk.grad(f)(X3)

    # Writing one element: NumPy calls float() on the value and would replace diffkit's error
    # by its own ValueError("setting an array element with a sequence."); diffkit raises its
    # error in the writing frame instead (tests/test_escapes.py covers the details).

    def test_in_place_write_of_an_element(self):
        def f(x):
            buffer = np.zeros(3)
            buffer[0] = x[0]
            return dnp.sum(x)

        with pytest.raises(TracerConversionError) as excinfo:
            dk.grad(f)(X3)
        assert "derivative" in message(excinfo) and "buffer[0] = x[0]" in message(excinfo)

    def test_in_place_write_under_jvp(self):
        def f(x):
            buffer = np.zeros(3)
            buffer[1] = x[1] * 2
            return x

        with pytest.raises(TracerConversionError) as excinfo:
            dk.jvp(f, (X3,), (np.ones(3),))
        assert "buffer = buffer.at[1].set(x[1] * 2)" in message(excinfo)


class TestUseAfterTransformationReturned:
    def _check(self, excinfo, transformation):
        text = message(excinfo)
        assert "after" in text and "returned" in text
        assert transformation in text

    def test_leaked_from_grad(self):
        leaked = []

        def f(x):
            leaked.append(x)
            return dnp.sum(x ** 2)

        dk.grad(f)(X3)
        for use in (lambda t: t * 2, lambda t: 2 * t, lambda t: np.ones(3) + t,
                    lambda t: dnp.sin(t), lambda t: t.sum(), lambda t: t[0], lambda t: t > 0):
            with pytest.raises(EscapedTracerError) as excinfo:
                use(leaked[0])
            self._check(excinfo, "vjp")

    def test_leaked_from_jvp(self):
        leaked = []
        dk.jvp(lambda x: leaked.append(dnp.sin(x)) or x, (X3,), (np.ones(3),))
        with pytest.raises(EscapedTracerError) as excinfo:
            leaked[0] + 1.0
        self._check(excinfo, "jvp")

    def test_leaked_from_vmap(self):
        leaked = []
        dk.vmap(lambda row: leaked.append(row) or dnp.sum(row))(np.ones((2, 3)))
        with pytest.raises(EscapedTracerError) as excinfo:
            dnp.exp(leaked[0])
        self._check(excinfo, "vmap")

    def test_leaked_value_used_in_a_later_transformation(self):
        leaked = []
        dk.grad(lambda x: leaked.append(x) or dnp.sum(x))(X3)
        with pytest.raises(EscapedTracerError) as excinfo:
            dk.grad(lambda z: dnp.sum(z * leaked[0]))(X3)
        self._check(excinfo, "vjp")
        with pytest.raises(EscapedTracerError):
            dk.vmap(lambda z: z * leaked[0])(np.ones((2, 3)))

    def test_inner_tracer_used_by_the_outer_transformation(self):
        # The inner grad has returned, but its tracer is used while the outer one runs.
        leaked = []

        def f(x):
            dk.grad(lambda y: leaked.append(y) or y * x)(1.0)
            return x * leaked[0]

        with pytest.raises(EscapedTracerError) as excinfo:
            dk.grad(f)(2.0)
        self._check(excinfo, "vjp")

    def test_leaked_and_returned_from_another_transformation(self):
        leaked = []
        dk.jvp(lambda x: leaked.append(x) or x, (X3,), (np.ones(3),))
        with pytest.raises(EscapedTracerError):
            dk.grad(lambda z: dnp.sum(leaked[0]) + dnp.sum(z))(X3)


# --- the error classes ------------------------------------------------------------------


def test_error_classes_are_also_builtin_exceptions():
    assert issubclass(NonScalarOutputError, TypeError)
    assert issubclass(InputTypeError, TypeError)
    assert issubclass(TracerConversionError, TypeError)
    assert issubclass(ShapeMismatchError, ValueError)
    assert issubclass(ArgnumsError, ValueError)
    assert issubclass(BatchingError, ValueError)
    assert issubclass(EscapedTracerError, RuntimeError)
    for cls in (NonScalarOutputError, InputTypeError, TracerConversionError,
                ShapeMismatchError, ArgnumsError, BatchingError, EscapedTracerError):
        assert issubclass(cls, DiffkitError)
