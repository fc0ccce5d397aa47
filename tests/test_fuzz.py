"""Bad and edge arguments for every public transformation and SciPy adapter.

Hypothesis draws inputs (float arrays of every rank from 0-d to 2-d including empty ones,
NaN and inf entries, float32, integers, booleans, complex numbers, strings, objects,
ragged and mixed pytrees), options (``argnums``, ``in_axes``, ``out_axes``,
``axis_size``, ``chunk_size``, ``mode``), functions that return the wrong thing, and
things that are not functions at all. Each call must either give the right value or
raise an error of diffkit's hierarchy (``DiffkitError``) whose message names the
transformation or the argument at fault -- never a bare exception from deep inside diffkit.

The right values are closed forms of ``sin`` (derivative ``cos``, second derivative
``-sin``), compared with NaN equal to NaN: rtol 1e-12 in float64 (exact elementwise
arithmetic), 1e-5 in float32, whose results must stay float32.
"""

import numpy as np
import pytest
import scipy.optimize as so
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.errors import DiffkitError
from diffkit.scipy import optimize as dko

# sin and cos of inf are NaN, as drawn on purpose
pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")

SETTINGS = dict(deadline=None, max_examples=60,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# --- what gets drawn ------------------------------------------------------------------------

SHAPES = hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3)


def float_arrays(dtype):
    return hnp.arrays(dtype, SHAPES, elements=st.floats(allow_nan=True, allow_infinity=True,
                                                        width=32))


FLOATS = st.one_of(float_arrays(np.float64), float_arrays(np.float32),
                   st.floats(allow_nan=True, allow_infinity=True))
COMPLEX = hnp.arrays(np.complex128, SHAPES, elements=st.complex_numbers(max_magnitude=10))
INTEGERS = st.one_of(hnp.arrays(st.sampled_from([np.int64, np.int32, np.uint8, np.bool_]),
                                SHAPES),
                     st.integers(-5, 5), st.booleans())
NOT_ARRAYS = st.one_of(
    st.text(max_size=3), st.just(object()), st.just(b"bytes"), st.just({1, 2}),
    st.just(np.array(["a", "b"])), st.just(np.array([None, 1.0], dtype=object)),
    st.lists(st.text(max_size=2), min_size=1, max_size=2),
    st.dictionaries(st.sampled_from("ab"), st.text(max_size=2), min_size=1),
    st.just(slice(1)), st.just(sum))
NOT_CALLABLES = st.one_of(st.integers(), st.floats(), st.text(max_size=3), st.none(),
                          st.just(np.ones(2)), st.lists(st.just(np.sin), max_size=2))


# --- the transformations, each with the value it must give for a float input -----------------


def total_sin(x):
    return dnp.sum(dnp.sin(x))


def diag(values, x):
    """The Jacobian ``x.shape + x.shape`` of an elementwise map with derivative ``values``."""
    n = np.size(x)
    jac = np.zeros((n, n), np.result_type(values))
    jac[np.arange(n), np.arange(n)] = np.ravel(values)
    return jac.reshape(np.shape(x) * 2)


ONES = np.ones_like

TRANSFORMS = {
    "grad": (lambda x: dk.grad(total_sin)(x), lambda x: np.cos(x)),
    "value_and_grad": (lambda x: dk.value_and_grad(total_sin)(x),
                       lambda x: (np.sum(np.sin(x)), np.cos(x))),
    "jacfwd": (lambda x: dk.jacfwd(dnp.sin)(x), lambda x: diag(np.cos(x), x)),
    "jacrev": (lambda x: dk.jacrev(dnp.sin)(x), lambda x: diag(np.cos(x), x)),
    "jacobian": (lambda x: dk.jacobian(dnp.sin)(x), lambda x: diag(np.cos(x), x)),
    "hessian": (lambda x: dk.hessian(total_sin)(x), lambda x: diag(-np.sin(x), x)),
    "vjp": (lambda x: dk.vjp(dnp.sin, x)[1](ONES(np.sin(x))),
            lambda x: (np.cos(x),)),
    "jvp": (lambda x: dk.jvp(dnp.sin, (x,), (ONES(np.asarray(x)),)),
            lambda x: (np.sin(x), np.cos(x))),
    "linearize": (lambda x: dk.linearize(dnp.sin, x)[1](ONES(np.asarray(x))),
                  lambda x: np.cos(x)),
    "hvp": (lambda x: dk.hvp(total_sin, (x,), (ONES(np.asarray(x)),)),
            lambda x: (-np.sin(x),)),
    "vmap": (lambda x: dk.vmap(dnp.sin)(x), lambda x: np.sin(x)),
}


def assert_same(got, expected, dtype):
    """``got`` equals ``expected`` (pytrees of the same structure); NaN equals NaN. Results
    are NumPy values of ``dtype``, never diffkit objects."""
    got_leaves, got_tree = dk.tree_util.tree_flatten(got)
    want_leaves, want_tree = dk.tree_util.tree_flatten(expected)
    assert got_tree == want_tree, (got_tree, want_tree)
    for g, w in zip(got_leaves, want_leaves):
        assert isinstance(g, (np.ndarray, np.generic, float)), type(g)
        assert np.shape(g) == np.shape(w)
        assert np.asarray(g).dtype == dtype, (np.asarray(g).dtype, dtype)
        rtol = 1e-5 if dtype == np.float32 else 1e-12
        wide = np.result_type(dtype, np.float64)   # float32 compared in float64, complex kept
        np.testing.assert_allclose(np.asarray(g, wide), np.asarray(w, wide), rtol=rtol,
                                   atol=rtol * 1e-3, equal_nan=True)


def assert_diffkit_error(call, *names):
    """``call()`` raises a DiffkitError whose message names one of ``names``."""
    with pytest.raises(DiffkitError) as excinfo:
        call()
    text = str(excinfo.value)
    assert any(name in text for name in names), text
    return text


JACOBIANS = ("jacfwd", "jacrev", "jacobian", "hessian")


@pytest.mark.parametrize("name", list(TRANSFORMS))
@settings(**SETTINGS)
@given(x=FLOATS)
def test_float_inputs_give_the_closed_form(name, x):
    call, expected = TRANSFORMS[name]
    if name == "vmap" and np.ndim(x) == 0:
        assert_diffkit_error(lambda: call(x), "vmap")  # nothing to map over
        return
    dtype = np.asarray(x).dtype
    got, want = call(x), expected(np.asarray(x))
    if name in JACOBIANS and not np.all(np.isfinite(x)):
        # off the diagonal, 0 times a NaN derivative at inf is the strong-zero convention's
        # business (docs/conventions.md); here the diagonal must be right, the rest 0 or NaN
        n = np.size(x)
        got, want = np.reshape(got, (n, n)), np.reshape(want, (n, n))
        off = ~np.eye(n, dtype=bool)
        assert np.all((got[off] == 0) | np.isnan(got[off]))
        got, want = np.ascontiguousarray(np.diagonal(got)), np.diagonal(want).copy()
    assert_same(got, want, dtype)


@pytest.mark.parametrize("name", [n for n in TRANSFORMS if n != "vmap"])
@settings(**SETTINGS)
@given(x=st.one_of(INTEGERS, NOT_ARRAYS))
def test_inputs_that_cannot_be_differentiated_are_named(name, x):
    call, _ = TRANSFORMS[name]
    text = assert_diffkit_error(lambda: call(x), name, "grad")
    assert any(word in text for word in ("argument", "primal")), text


@settings(**SETTINGS)
@given(x=NOT_ARRAYS)
def test_vmap_of_something_that_is_not_an_array_is_named(x):
    assert_diffkit_error(lambda: dk.vmap(dnp.sin)(x), "vmap argument")


@settings(**SETTINGS)
@given(x=INTEGERS.filter(lambda x: np.ndim(x) > 0))
def test_vmap_maps_integers_too(x):
    # vmap does not differentiate: integer and boolean inputs are mapped like any other
    np.testing.assert_allclose(dk.vmap(dnp.sin)(x), np.sin(x), rtol=1e-12)


# Complex inputs: the holomorphic sin has derivative cos(z) along 1 for vjp/jvp/linearize and
# vmap maps it; grad and the Jacobians of a complex output need holomorphic=True (an error
# without it).
COMPLEX_VALUES = {"vjp": lambda z: (np.cos(z),), "jvp": lambda z: (np.sin(z), np.cos(z)),
                  "linearize": np.cos, "vmap": np.sin}


@pytest.mark.parametrize("name", list(TRANSFORMS))
@settings(**SETTINGS)
@given(z=COMPLEX)
def test_complex_inputs_give_the_value_or_say_holomorphic(name, z):
    call, _ = TRANSFORMS[name]
    if name in COMPLEX_VALUES and not (name == "vmap" and z.ndim == 0):
        assert_same(call(z), COMPLEX_VALUES[name](z), np.complex128)
    else:
        assert_diffkit_error(lambda: call(z), name, "grad", "holomorphic")


# --- functions that return the wrong thing --------------------------------------------------

WRONG_OUTPUTS = st.sampled_from([
    lambda x: "loss", lambda x: object(), lambda x: [x, "tag"], lambda x: {"a": b"x"},
    lambda x: (x, np.array(["s"])),
])


@pytest.mark.parametrize("name", ["grad", "value_and_grad", "jacfwd", "jacrev", "jacobian",
                                  "hessian", "vjp", "jvp", "linearize", "hvp", "vmap"])
@settings(**SETTINGS)
@given(fun=WRONG_OUTPUTS, x=float_arrays(np.float64).filter(lambda x: x.ndim > 0))
def test_a_function_returning_no_array_is_named(name, fun, x):
    build = {
        "grad": lambda: dk.grad(fun)(x), "value_and_grad": lambda: dk.value_and_grad(fun)(x),
        "jacfwd": lambda: dk.jacfwd(fun)(x), "jacrev": lambda: dk.jacrev(fun)(x),
        "jacobian": lambda: dk.jacobian(fun)(x), "hessian": lambda: dk.hessian(fun)(x),
        "vjp": lambda: dk.vjp(fun, x), "jvp": lambda: dk.jvp(fun, (x,), (x,)),
        "linearize": lambda: dk.linearize(fun, x), "hvp": lambda: dk.hvp(fun, (x,), (x,)),
        "vmap": lambda: dk.vmap(fun)(x),
    }[name]
    assert_diffkit_error(build, name, "grad")


SCALAR_LOSS_MISTAKES = st.sampled_from([
    (lambda x: None, "None"), (lambda x: 3, "int"), (lambda x: True, "bool"),
    (lambda x: dnp.sum(x) * 1j, "complex"), (lambda x: x, "shape"),
    (lambda x: (dnp.sum(x), 1.0), "tuple"),
])


@pytest.mark.parametrize("name,run", [
    ("grad", lambda fun, x: dk.grad(fun)(x)),
    ("value_and_grad", lambda fun, x: dk.value_and_grad(fun)(x)),
    ("hvp", lambda fun, x: dk.hvp(fun, (x,), (x,))),
])
@settings(**SETTINGS)
@given(mistake=SCALAR_LOSS_MISTAKES, x=float_arrays(np.float64).filter(lambda x: x.ndim > 0))
def test_a_loss_that_is_not_a_real_scalar_is_named(name, run, mistake, x):
    fun, words = mistake
    text = assert_diffkit_error(lambda: run(fun, x), name)
    assert words in text or "scalar" in text, text


@pytest.mark.parametrize("make", [dk.jacfwd, dk.jacrev, dk.jacobian, dk.hessian],
                         ids=lambda f: f.__name__)
@settings(**SETTINGS)
@given(x=st.one_of(float_arrays(np.float64), st.none(), st.just(()), st.just({})))
def test_jacobians_with_no_arrays_on_one_side_are_empty_pytrees(make, x):
    # as in JAX: no output arrays (or no input arrays) give a Jacobian with no blocks
    assert make(lambda x: None)(x) is None
    jac = make(lambda x: 2.0)(x)  # a constant: zero derivative, in the input's structure
    if isinstance(x, np.ndarray):
        assert_same(jac, np.zeros(x.shape * (2 if make is dk.hessian else 1)), np.float64)
    else:
        assert jac == x  # None, () or {}: no blocks


# --- things that are not functions ----------------------------------------------------------

BUILDERS = [dk.grad, dk.value_and_grad, dk.jacfwd, dk.jacrev, dk.jacobian, dk.hessian,
            dk.vmap, dk.custom_jvp, dk.custom_vjp, dk.checkpoint]


@pytest.mark.parametrize("build", BUILDERS, ids=lambda f: f.__name__)
@settings(**SETTINGS)
@given(thing=NOT_CALLABLES)
def test_a_non_callable_is_refused_when_the_transformation_is_built(build, thing):
    assert_diffkit_error(lambda: build(thing), f"{build.__name__} expects a callable")


@pytest.mark.parametrize("solve", [dko.minimize, dko.least_squares, dko.root],
                         ids=lambda f: f.__name__)
@settings(**SETTINGS)
@given(thing=NOT_CALLABLES)
def test_a_non_callable_is_refused_by_the_adapters(solve, thing):
    assert_diffkit_error(lambda: solve(thing, np.ones(2)), f"{solve.__name__} expects")


# --- options ---------------------------------------------------------------------------------

OPTION_VALUES = st.one_of(st.integers(-4, 4), st.none(), st.booleans(), st.floats(-2, 2),
                          st.text(max_size=2), st.tuples(st.integers(-2, 2)),
                          st.tuples(st.integers(-2, 2), st.integers(-2, 2)),
                          st.lists(st.integers(-2, 2), max_size=2), st.just(np.int64(0)))


def is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


@settings(**SETTINGS)
@given(argnums=OPTION_VALUES)
def test_argnums(argnums):
    x, y = np.array([0.5, 1.0]), np.array([2.0, -1.0])

    def f(x, y):
        return dnp.sum(dnp.sin(x) * y)

    grads = {0: np.cos(x) * y, 1: np.sin(x)}
    nums = argnums if isinstance(argnums, (tuple, list)) else (argnums,)
    valid = all(is_int(n) and -2 <= n < 2 for n in nums) and \
        len({int(n) % 2 for n in nums}) == len(nums) and argnums is not None
    if not valid:
        assert_diffkit_error(lambda: dk.grad(f, argnums=argnums)(x, y), "argnums")
        return
    got = dk.grad(f, argnums=argnums)(x, y)
    expected = tuple(grads[int(n) % 2] for n in nums) if isinstance(argnums, (tuple, list)) \
        else grads[int(argnums) % 2]
    assert_same(tuple(got) if isinstance(got, list) else got, expected, np.float64)


@settings(**SETTINGS)
@given(in_axes=OPTION_VALUES, out_axes=OPTION_VALUES,
       x=float_arrays(np.float64).filter(lambda x: 0 not in x.shape))
def test_vmap_axes(in_axes, out_axes, x):
    def run():
        return dk.vmap(dnp.sin, in_axes=in_axes, out_axes=out_axes)(x)

    leaf_in = in_axes[0] if isinstance(in_axes, (tuple, list)) and len(in_axes) == 1 else in_axes
    valid_in = is_int(leaf_in) and -x.ndim <= leaf_in < x.ndim
    valid_out = is_int(out_axes) and -x.ndim <= out_axes < x.ndim
    if not (valid_in and valid_out):
        assert_diffkit_error(run, "in_axes", "out_axes", "vmap")
        return
    mapped = np.moveaxis(np.sin(x), leaf_in, 0)
    assert_same(run(), np.moveaxis(mapped, 0, out_axes), np.float64)


@settings(**SETTINGS)
@given(axis_size=OPTION_VALUES)
def test_vmap_axis_size(axis_size):
    def run():
        return dk.vmap(lambda: np.arange(2.0), in_axes=(), axis_size=axis_size)()

    if not (is_int(axis_size) and axis_size >= 1):
        assert_diffkit_error(run, "axis_size")
        return
    assert_same(run(), np.tile(np.arange(2.0), (int(axis_size), 1)), np.float64)


@settings(**SETTINGS)
@given(chunk_size=OPTION_VALUES, x=float_arrays(np.float64).filter(lambda x: x.ndim > 0))
def test_jacrev_chunk_size(chunk_size, x):
    def run():
        return dk.jacrev(dnp.sin, chunk_size=chunk_size)(x)

    if not (chunk_size is None or (is_int(chunk_size) and chunk_size >= 1)):
        assert_diffkit_error(run, "chunk_size")
        return
    assert_same(run(), diag(np.cos(x), x), np.float64)


@settings(**SETTINGS)
@given(mode=st.one_of(st.sampled_from(["fwd", "rev", "auto"]), OPTION_VALUES),
       x=float_arrays(np.float64))
def test_jacobian_mode(mode, x):
    if mode not in ("fwd", "rev", "auto"):
        assert_diffkit_error(lambda: dk.jacobian(dnp.sin, mode=mode), "mode")
        return
    assert_same(dk.jacobian(dnp.sin, mode=mode)(x), diag(np.cos(x), x), np.float64)


# --- tangents and cotangents ------------------------------------------------------------------

DERIVATIVE_VALUES = st.one_of(FLOATS, COMPLEX, INTEGERS, NOT_ARRAYS, st.none(),
                              st.tuples(float_arrays(np.float64)))


@settings(**SETTINGS)
@given(x=float_arrays(np.float64), v=DERIVATIVE_VALUES)
def test_tangents_and_cotangents(x, v):
    matches = isinstance(v, (np.ndarray, float, np.floating)) and np.shape(v) == x.shape \
        and np.asarray(v).dtype.kind == "f"
    # the 0 x inf rule (docs/conventions.md): a zero tangent gives 0 even where cos(x) is
    # NaN (x infinite)
    product = np.where(np.asarray(v) == 0, 0.0, np.cos(x) * v) if matches else None
    runs = {
        "jvp": (lambda: dk.jvp(dnp.sin, (x,), (v,))[1], product),
        "linearize": (lambda: dk.linearize(dnp.sin, x)[1](v), product),
        "vjp": (lambda: dk.vjp(dnp.sin, x)[1](v)[0], product),
    }
    for name, (run, expected) in runs.items():
        if expected is None:
            assert_diffkit_error(run, "tangent", "cotangent", name)
        else:
            assert_same(run(), expected, np.float64)


# --- the SciPy adapters -------------------------------------------------------------------------

# Each adapter against SciPy itself given the exact derivatives of the same problem: the
# residual p - 1 (minimum, least-squares fit and root all at ones); SciPy's own outcome from
# an awkward x0 (MINPACK stalls at x0 ~ 1e-33) is the right value.
ADAPTERS = {
    "minimize": (
        lambda x0: dko.minimize(lambda p: dnp.sum((p - 1.0) ** 2), x0, method="BFGS"),
        lambda x0: so.minimize(lambda p: np.sum((p - 1.0) ** 2), x0, method="BFGS",
                               jac=lambda p: 2.0 * (p - 1.0))),
    "least_squares": (
        lambda x0: dko.least_squares(lambda p: p - 1.0, x0),
        lambda x0: so.least_squares(lambda p: p - 1.0, x0, jac=lambda p: np.eye(p.size))),
    "root": (
        lambda x0: dko.root(lambda p: p - 1.0, x0, method="hybr"),
        lambda x0: so.root(lambda p: p - 1.0, x0, method="hybr",
                           jac=lambda p: np.eye(p.size))),
}


@pytest.mark.parametrize("name", list(ADAPTERS))
@settings(**SETTINGS)
@given(x0=st.one_of(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=1, min_side=1,
                                                             max_side=3),
                               elements=st.floats(-2, 2)),
                    hnp.arrays(np.int64, st.integers(1, 3), elements=st.integers(-3, 3)),
                    hnp.arrays(np.bool_, st.integers(1, 3)),
                    COMPLEX.filter(lambda z: np.size(z) > 0), NOT_ARRAYS))
def test_adapters_solve_or_name_the_problem_with_x0(name, x0):
    ours, scipy_itself = ADAPTERS[name]
    if isinstance(x0, np.ndarray) and x0.dtype.kind in "iuf":
        expected = scipy_itself(np.asarray(x0, np.float64))
        np.testing.assert_allclose(ours(x0).x, expected.x, rtol=1e-9, atol=1e-12)
    else:
        assert_diffkit_error(lambda: ours(x0), "x0")


# --- what custom rules return -------------------------------------------------------------------


@settings(**SETTINGS)
@given(x=float_arrays(np.float64), returned=DERIVATIVE_VALUES)
def test_custom_rule_outputs(x, returned):
    """A JVP rule's tangent and a bwd rule's cotangent: the right value when they match the
    primal (shape, real dtype), a DiffkitError naming the rule otherwise."""
    @dk.custom_jvp
    def f(x):
        return dnp.sin(x)

    f.defjvp(lambda primals, tangents: (f(primals[0]), returned))

    @dk.custom_vjp
    def g(x):
        return dnp.sin(x)

    g.defvjp(lambda x: (g(x), None), lambda residuals, ct: (returned,))

    kind = np.asarray(returned).dtype.kind if isinstance(
        returned, (np.ndarray, np.generic, float, int, bool)) else None
    matches = kind in ("f", "i", "u", "b") and np.shape(returned) == x.shape
    runs = {"JVP rule of 'f'": lambda: dk.jvp(f, (x,), (np.ones_like(x),))[1],
            "bwd rule of 'g'": lambda: dk.vjp(g, x)[1](np.ones_like(x))[0]}
    for rule, run in runs.items():
        if matches:
            assert_same(run(), np.asarray(returned, np.float64), np.float64)
        elif returned is None and rule.startswith("bwd"):
            assert_same(run(), np.zeros_like(x), np.float64)   # None: a zero cotangent
        else:
            assert_diffkit_error(run, rule)
