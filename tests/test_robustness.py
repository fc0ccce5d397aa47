"""Transformations never return nonsense: copies and pickles of traced values, diffkit
objects escaping a transformation, functions checked when a transformation is built,
``has_aux`` and ``vmap`` argument errors that name what the user wrote.

Values are checked against closed forms (rtol 1e-12: the derivatives here are exact
polynomial arithmetic).
"""

import copy
import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.core.trace import Tracer
from diffkit.errors import (
    BatchingError,
    EscapedTracerError,
    InputTypeError,
    NonScalarOutputError,
    TracerConversionError,
)

X3 = np.array([1.0, 2.0, 3.0])
RTOL = 1e-12


def no_tracers(tree):
    """Whether no leaf of ``tree`` (a transformation's result) is a diffkit tracer."""
    return not any(isinstance(leaf, Tracer) for leaf in dk.tree_util.tree_leaves(tree))


# --- copies keep the derivative ------------------------------------------------------------


COPIES = [copy.copy, copy.deepcopy]


@pytest.mark.parametrize("copier", COPIES, ids=lambda c: c.__name__)
class TestCopies:
    def test_value_and_grad_of_a_copy(self, copier):
        value, gradient = dk.value_and_grad(lambda x: copier(x * x))(3.0)
        assert no_tracers((value, gradient))
        assert_allclose(value, 9.0, rtol=RTOL)
        assert_allclose(gradient, 6.0, rtol=RTOL)

    def test_copy_used_in_further_operations(self, copier):
        # d/dx (x^2 * x) = 3 x^2
        assert_allclose(dk.grad(lambda x: copier(x * x) * x)(3.0), 27.0, rtol=RTOL)

    def test_copy_of_a_pytree_of_traced_and_plain_values(self, copier):
        def f(x):
            tree = copier({"traced": x * 2.0, "plain": np.ones(3), "list": [x]})
            return dnp.sum(tree["traced"] * tree["plain"] + tree["list"][0] ** 2)

        assert_allclose(dk.grad(f)(X3), 2.0 + 2.0 * X3, rtol=RTOL)

    def test_jvp(self, copier):
        out, tangent = dk.jvp(lambda x: copier(dnp.sin(x)), (X3,), (np.ones(3),))
        assert no_tracers((out, tangent))
        assert_allclose(out, np.sin(X3), rtol=RTOL)
        assert_allclose(tangent, np.cos(X3), rtol=RTOL)

    def test_vjp(self, copier):
        out, pullback = dk.vjp(lambda x: copier(x ** 3), X3)
        assert_allclose(pullback(np.ones(3))[0], 3 * X3 ** 2, rtol=RTOL)

    def test_vmap(self, copier):
        out = dk.vmap(lambda x: copier(x * x))(X3)
        assert type(out) is np.ndarray
        assert_allclose(out, X3 ** 2, rtol=RTOL)

    def test_hessian(self, copier):
        # f = sum(x^3): Hessian diag(6 x)
        hess = dk.hessian(lambda x: dnp.sum(copier(x ** 2) * x))(X3)
        assert_allclose(hess, np.diag(6 * X3), rtol=RTOL)

    def test_nested_grad_copies_the_outer_tracer(self, copier):
        # grad over x of grad over y of (copy(x) * y^2) = 2 y at y = x: 2
        def inner(x):
            return dk.grad(lambda y: copier(x) * y ** 2)(x)

        assert_allclose(dk.grad(inner)(1.5), 2 * 1.5 * 2, rtol=RTOL)

    def test_a_copy_is_a_new_object(self, copier):
        seen = []

        def f(x):
            y = x * 2.0
            z = copier(y)
            seen.append((z is not y, z.shape == y.shape, z.dtype == y.dtype))
            return dnp.sum(z)

        dk.grad(f)(X3)
        assert seen == [(True, True, True)]


# --- pickling a traced value ----------------------------------------------------------------


@pytest.mark.parametrize("transform", [
    lambda f: dk.grad(f)(X3),
    lambda f: dk.jvp(f, (X3,), (X3,)),
    lambda f: dk.vmap(f)(np.ones((2, 3))),
], ids=["grad", "jvp", "vmap"])
def test_pickling_a_traced_value_names_traced_values(transform):
    def f(x):
        pickle.dumps(x * x)
        return dnp.sum(x)

    with pytest.raises(TracerConversionError) as excinfo:
        transform(f)
    text = str(excinfo.value)
    assert "traced value" in text and "pickle" in text
    assert "Return it from the function" in text


# --- nothing escapes a transformation -------------------------------------------------------


def leaked_tracer():
    """A traced value kept from a finished grad call."""
    kept = []

    def f(x):
        kept.append(x * 2.0)
        return dnp.sum(x)

    dk.grad(f)(X3)
    return kept[0]


ESCAPE_ROUTES = {
    "grad": lambda stale: dk.grad(lambda x: stale)(X3),
    "value_and_grad": lambda stale: dk.value_and_grad(lambda x: stale)(X3),
    "vjp": lambda stale: dk.vjp(lambda x: stale, X3),
    "vjp aux": lambda stale: dk.vjp(lambda x: (x, stale), X3, has_aux=True),
    "jvp": lambda stale: dk.jvp(lambda x: stale, (X3,), (X3,)),
    "jvp aux": lambda stale: dk.jvp(lambda x: (x, stale), (X3,), (X3,), has_aux=True),
    "linearize": lambda stale: dk.linearize(lambda x: stale, X3),
    "vmap": lambda stale: dk.vmap(lambda x: stale)(np.ones((2, 3))),
    "jacfwd": lambda stale: dk.jacfwd(lambda x: stale)(X3),
    "jacrev": lambda stale: dk.jacrev(lambda x: stale)(X3),
    "grad aux": lambda stale: dk.grad(lambda x: (dnp.sum(x), stale), has_aux=True)(X3),
}


@pytest.mark.parametrize("route", list(ESCAPE_ROUTES))
def test_a_stale_traced_value_never_leaves_a_transformation(route):
    stale = leaked_tracer()
    with pytest.raises(EscapedTracerError) as excinfo:
        ESCAPE_ROUTES[route](stale)
    text = str(excinfo.value)
    assert "already returned" in text
    assert "(3,)" in text  # the shape of the escaping value


def test_an_enclosing_transformation_s_tracer_is_an_ordinary_output():
    # the inner jvp returns x (outer tracer) unchanged: not an escape
    def f(x):
        out, tangent = dk.jvp(lambda y: x * 1.0, (x,), (1.0,))
        return out * x

    assert_allclose(dk.grad(f)(2.0), 4.0, rtol=RTOL)


# --- transformations check fun when they are built ------------------------------------------


BUILDERS = [dk.grad, dk.value_and_grad, dk.jacfwd, dk.jacrev, dk.jacobian, dk.hessian,
            dk.vmap, dk.custom_jvp, dk.custom_vjp, dk.checkpoint]


@pytest.mark.parametrize("build", BUILDERS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("not_a_function,described", [
    (3, "int"), ("f", "str"), (np.ones(2), "array of shape (2,)"), (None, "None")])
def test_a_non_callable_is_refused_at_construction(build, not_a_function, described):
    with pytest.raises(InputTypeError) as excinfo:
        build(not_a_function)
    text = str(excinfo.value)
    assert build.__name__ in text and "callable" in text
    assert described in text


@pytest.mark.parametrize("call", [
    lambda: dk.vjp(3, X3),
    lambda: dk.jvp(3, (X3,), (X3,)),
    lambda: dk.linearize(3, X3),
    lambda: dk.hvp(3, (X3,), (X3,)),
], ids=["vjp", "jvp", "linearize", "hvp"])
def test_the_direct_transformations_check_fun_first(call):
    with pytest.raises(InputTypeError, match="callable.*int"):
        call()


def test_rules_must_be_callable():
    f = dk.custom_jvp(lambda x: x)
    with pytest.raises(InputTypeError, match="defjvp.*JVP rule"):
        f.defjvp(2.0)
    g = dk.custom_vjp(lambda x: x)
    with pytest.raises(InputTypeError, match="defvjp.*bwd rule"):
        g.defvjp(lambda x: (x, None), "bwd")


# --- has_aux names the transformation called ------------------------------------------------


@pytest.mark.parametrize("name,call", [
    ("grad", lambda f: dk.grad(f, has_aux=True)(X3)),
    ("value_and_grad", lambda f: dk.value_and_grad(f, has_aux=True)(X3)),
    ("jacfwd", lambda f: dk.jacfwd(f, has_aux=True)(X3)),
    ("jacrev", lambda f: dk.jacrev(f, has_aux=True)(X3)),
    ("jacobian", lambda f: dk.jacobian(f, has_aux=True)(X3)),
    ("hessian", lambda f: dk.hessian(f, has_aux=True)(X3)),
    ("vjp", lambda f: dk.vjp(f, X3, has_aux=True)),
    ("jvp", lambda f: dk.jvp(f, (X3,), (X3,), has_aux=True)),
])
def test_has_aux_error_names_the_transformation(name, call):
    with pytest.raises(InputTypeError) as excinfo:
        call(lambda x: dnp.sum(x))
    text = str(excinfo.value)
    assert text.startswith(f"{name} with has_aux=True")
    assert "array of shape ()" in text          # what came back instead of a pair
    assert "Tracer" not in text


# --- grad of a function returning None -------------------------------------------------------


@pytest.mark.parametrize("make", [dk.grad, dk.value_and_grad], ids=lambda f: f.__name__)
def test_grad_of_none_says_the_function_returned_none(make):
    with pytest.raises(NonScalarOutputError) as excinfo:
        make(lambda x: None)(1.0)
    text = str(excinfo.value)
    assert "returned None" in text and "real scalar" in text
    assert "PyTreeDef" not in text


def test_grad_of_a_string_output_names_grad():
    with pytest.raises(InputTypeError, match="^grad: an output of the function is a str"):
        dk.grad(lambda x: "loss")(1.0)


# --- vmap's own arguments -------------------------------------------------------------------


@pytest.mark.parametrize("axis_size", [2.5, "3", 0, -1, True, np.float64(2.0)])
def test_vmap_axis_size_must_be_a_positive_int(axis_size):
    with pytest.raises(BatchingError) as excinfo:
        dk.vmap(lambda: np.ones(2), axis_size=axis_size)
    assert "axis_size" in str(excinfo.value) and "positive int" in str(excinfo.value)


def test_vmap_axis_size_as_a_numpy_int():
    out = dk.vmap(lambda: np.arange(2.0), axis_size=np.int64(3))()
    assert_allclose(out, np.tile(np.arange(2.0), (3, 1)), rtol=RTOL)


@pytest.mark.parametrize("name,kwargs", [
    ("in_axes", {"in_axes": True}),
    ("in_axes", {"in_axes": (0, False)}),
    ("in_axes", {"in_axes": 1.0}),
    ("in_axes", {"in_axes": "0"}),
    ("out_axes", {"out_axes": True}),
    ("out_axes", {"out_axes": 0.5}),
])
def test_vmap_axes_must_be_ints_or_none(name, kwargs):
    with pytest.raises(BatchingError) as excinfo:
        dk.vmap(lambda x, y=None: x, **kwargs)
    assert f"{name}=" in str(excinfo.value)
    assert "over axis" not in str(excinfo.value)


# --- pullbacks and linearized functions use the values at the call ------------------------
#
# NumPy arrays are mutable; writing into the caller's arrays after vjp/linearize returned
# must not change the derivative (the reference values below are those at the call).


def fresh():
    return np.array([1.0, 2.0, 3.0])


def test_vjp_after_the_input_is_written_in_place():
    x = fresh()
    _, pullback = dk.vjp(lambda x: x * x, x)
    x[:] = 10.0
    assert_allclose(pullback(np.ones(3))[0], [2.0, 4.0, 6.0], rtol=RTOL)


def test_vjp_after_a_closed_over_array_is_written_in_place():
    x, w = fresh(), np.array([4.0, 5.0, 6.0])
    _, pullback = dk.vjp(lambda x: x * w, x)
    w[:] = 7.0
    assert_allclose(pullback(np.ones(3))[0], [4.0, 5.0, 6.0], rtol=RTOL)


def test_vjp_through_a_view_of_the_input():
    x = fresh()
    _, pullback = dk.vjp(lambda x: dnp.sin(x[1:]) + dnp.reshape(x, (3,))[:2] ** 2, x)
    x[:] = 10.0
    expected = np.array([0.0, np.cos(2.0), np.cos(3.0)]) + np.array([2.0, 4.0, 0.0])
    assert_allclose(pullback(np.ones(2))[0], expected, rtol=RTOL)


def test_vjp_after_the_output_is_written_in_place():
    x = fresh()
    y, pullback = dk.vjp(dnp.exp, x)   # exp's rule reads its output
    y[:] = 0.0
    assert_allclose(pullback(np.ones(3))[0], np.exp(fresh()), rtol=RTOL)


def test_vjp_after_aux_is_written_in_place():
    x = fresh()

    def f(x):
        t = dnp.exp(x)
        return dnp.sin(t), t

    _, pullback, aux = dk.vjp(f, x, has_aux=True)
    aux[:] = 0.0
    x0 = fresh()
    assert_allclose(pullback(np.ones(3))[0], np.cos(np.exp(x0)) * np.exp(x0), rtol=RTOL)


def test_vjp_after_an_index_array_is_written_in_place():
    x, index = fresh(), np.array([0, 0, 2])
    _, pullback = dk.vjp(lambda x: x[index] * x[index], x)
    index[:] = 1
    # d/dx sum(x[idx]^2) with idx = (0, 0, 2): (4 x0, 0, 2 x2)
    assert_allclose(pullback(np.ones(3))[0], [4.0, 0.0, 6.0], rtol=RTOL)


def test_vjp_of_a_pytree_of_parameters_in_an_optimiser_loop():
    params = {"w": np.array([0.5, -1.0]), "b": np.array(0.25)}
    data = np.array([1.0, 2.0])

    def loss(p):
        return dnp.sum(p["w"] * p["w"] * data) + p["b"] ** 2 * dnp.sum(p["w"])

    pullbacks, expected = [], []
    for _ in range(3):
        w, b = params["w"].copy(), float(params["b"])
        expected.append({"w": 2 * w * data + b ** 2, "b": 2 * b * np.sum(w)})
        _, pullback = dk.vjp(loss, params)
        pullbacks.append(pullback)
        params["w"] -= 0.1      # in place, as optimisers do
        params["b"] -= 0.1
    for pullback, want in zip(pullbacks, expected):
        (got,) = pullback(1.0)
        assert_allclose(got["w"], want["w"], rtol=RTOL)
        assert_allclose(got["b"], want["b"], rtol=RTOL)


def test_custom_vjp_residual_that_is_the_input():
    @dk.custom_vjp
    def square(x):
        return x * x

    square.defvjp(lambda x: (x * x, x), lambda x, g: (2.0 * x * g,))
    x = fresh()
    _, pullback = dk.vjp(square, x)
    x[:] = 10.0
    assert_allclose(pullback(np.ones(3))[0], [2.0, 4.0, 6.0], rtol=RTOL)


def test_linearize_after_the_input_is_written_in_place():
    x = fresh()
    _, jvp_fn = dk.linearize(lambda x: x * x, x)
    x[:] = 10.0
    assert_allclose(jvp_fn(np.ones(3)), [2.0, 4.0, 6.0], rtol=RTOL)


def test_linearize_after_a_closed_over_array_is_written_in_place():
    x, w = fresh(), np.array([4.0, 5.0, 6.0])
    _, jvp_fn = dk.linearize(lambda x: dnp.sin(x) * w, x)
    w[:] = 0.0
    x[:] = 0.0
    assert_allclose(jvp_fn(np.ones(3)), np.cos(fresh()) * [4.0, 5.0, 6.0], rtol=RTOL)



# --- linearize replays what jvp computes, at singular points too -----------------------------


SINGULAR = [
    ("sqrt at 0", dnp.sqrt, np.array([0.0, 4.0])),
    ("log at 0", dnp.log, np.array([0.0, 2.0])),
    ("x * sqrt(x) at 0", lambda x: x * dnp.sqrt(x), np.array([0.0, 1.0])),
    ("untaken branch", lambda x: dnp.where(x > 0, dnp.sqrt(dnp.abs(x)), 0.0),
     np.array([0.0, 2.0])),
]


@pytest.mark.parametrize("fun,x", [case[1:] for case in SINGULAR],
                         ids=[case[0] for case in SINGULAR])
@pytest.mark.parametrize("tangent", [[1.0, 1.0], [0.0, 1.0], [2.0, 0.0]])
def test_linearize_equals_jvp_at_singular_points(fun, x, tangent):
    # the recorded tangent map must not keep masks computed from the placeholder tangent
    tangent = np.array(tangent)
    with np.errstate(all="ignore"):
        expected = dk.jvp(fun, (x,), (tangent,))[1]
        got = dk.linearize(fun, x)[1](tangent)
    np.testing.assert_array_equal(got, expected)


def test_linearize_of_sqrt_at_zero_is_infinite():
    with np.errstate(all="ignore"):
        slope = dk.linearize(dnp.sqrt, np.array([0.0, 4.0]))[1](np.ones(2))
    np.testing.assert_array_equal(slope, [np.inf, 0.25])   # d sqrt(x) = 1 / (2 sqrt(x))


