"""Comparisons of traced values are traced bools, and constants array-API code makes with
its namespace are values of the running transformation (JAX's semantics: ``x > 0`` of a
traced ``x`` is traced, ``jnp.asarray(1.0)`` is a JAX array). So SciPy's array-API code,
which refuses NumPy arrays next to traced ones, sees one namespace."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy._lib.array_api_compat import array_namespace

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.core.trace import Tracer, new_trace
from diffkit.core.zeros import Zero
from diffkit.interpreters.forward import JVPTrace, JVPTracer
from diffkit.interpreters.reverse import ReverseTracer

X = np.array([0.7, -1.3, 2.1, -0.4])

# (transformation of f: R^4 -> R returning the gradient, its name)
ENGINES = [(dk.grad, "grad"), (dk.jacfwd, "jacfwd"),
           (lambda f: (lambda x: dk.vjp(f, x)[1](1.0)[0]), "vjp"),
           (lambda f: (lambda x: dk.jvp(f, (x,), (np.eye(4)[2],))[1]), "jvp")]


def relu_sum(seen):
    def f(x):
        mask = x > 0
        seen.append(mask)
        return dnp.sum(dnp.where(mask, x ** 2, 0.1 * x))
    return f


@pytest.mark.parametrize("engine,name", ENGINES)
def test_a_comparison_is_a_traced_bool_with_the_right_values(engine, name):
    seen = []
    got = engine(relu_sum(seen))(X)
    expected = np.where(X > 0, 2 * X, 0.1)
    assert_allclose(got, expected[2] if name == "jvp" else expected, rtol=1e-12)
    (mask,) = seen
    assert isinstance(mask, Tracer) and mask.dtype == bool and mask.shape == (4,)
    assert_array_equal(mask.primal, X > 0)


def test_forward_and_reverse_agree_through_comparisons():
    f = relu_sum([])
    assert_array_equal(dk.grad(f)(X), dk.jacfwd(f)(X))


def test_a_comparison_carries_no_derivative():
    with_tangent = []

    def f(x):
        above = x > 0
        with_tangent.append(above)
        return dnp.sum(x * above)   # the bool multiplies: no derivative flows into it
    assert_array_equal(dk.grad(f)(X), (X > 0).astype(float))
    assert_array_equal(dk.jacfwd(f)(X), (X > 0).astype(float))
    reverse, forward = with_tangent
    assert type(reverse) is ReverseTracer and reverse.slot is None
    assert type(forward) is JVPTracer and type(forward.tangent) is Zero


def test_traced_bools_work_where_numpy_bools_do():
    """bool(), a traced mask indexing, np.where, .any(), int(mask.sum()) under both engines."""
    def f(x):
        mask = x > 0
        assert bool(mask[2]) is True and bool((x > 5).any()) is False
        count = int(mask.sum())
        assert count == 2
        positive = x[mask]
        assert positive.shape == (2,)
        chosen = np.where(mask, x, -x)
        return dnp.sum(positive ** 3) + dnp.sum(chosen) * count
    expected = np.where(X > 0, 3 * X ** 2, 0.0) + np.where(X > 0, 1.0, -1.0) * 2
    assert_allclose(dk.grad(f)(X), expected, rtol=1e-12)
    assert_allclose(dk.jacfwd(f)(X), expected, rtol=1e-12)


def test_comparisons_under_vmap_and_jit():
    batch = np.stack([X, -X])
    f = relu_sum([])
    expected = np.where(batch > 0, 2 * batch, 0.1)
    assert_allclose(dk.vmap(dk.grad(f))(batch), expected, rtol=1e-12)
    assert_allclose(dk.jit(dk.grad(f))(X), expected[0], rtol=1e-12)
    assert_allclose(dk.jit(dk.grad(f))(-X), expected[1], rtol=1e-12)   # the mask is replayed
    assert_allclose(dk.jit(f)(X), np.sum(np.where(X > 0, X ** 2, 0.1 * X)), rtol=1e-12)


def test_a_comparison_of_an_input_with_a_zero_tangent_stays_traced():
    with new_trace(JVPTrace) as trace:
        x = JVPTracer(trace, X, Zero(X.shape, X.dtype))
        above = x > 0
        assert type(above) is JVPTracer and type(above.tangent) is Zero
        assert_array_equal(above.primal, X > 0)


# --- constants made by array-API code -----------------------------------------------------


def test_the_namespace_of_a_traced_value_makes_constants_of_the_transformation():
    made = []

    def f(x):
        xp = x.__array_namespace__()
        n = xp.asarray(4.0)
        made.extend([n, xp.zeros(2), xp.ones_like(x), xp.arange(3.0), xp.full((2,), 0.5),
                     xp.linspace(0.0, 1.0, 3), xp.eye(2)])
        assert dnp.asarray(4.0).__class__ is np.ndarray   # diffkit.numpy itself: unchanged
        assert array_namespace(x, n) is xp                  # one namespace, no error
        return dnp.sum(x ** 2) / n

    for engine in (dk.grad, dk.jacfwd):
        made.clear()
        assert_allclose(engine(f)(X), X / 2, rtol=1e-12)
        assert all(isinstance(c, Tracer) for c in made)
        assert_array_equal(made[0].primal, 4.0)
        assert_array_equal(made[6].primal, np.eye(2))


def test_the_namespace_makes_plain_arrays_outside_transformations():
    seen = []
    dk.grad(lambda x: seen.append(x.__array_namespace__()) or dnp.sum(x))(X)
    (xp,) = seen
    assert type(xp.asarray(1.0)) is np.ndarray
    assert xp.sum is dnp.sum and xp.special is dnp.special   # the same functions


def test_a_scipy_style_condition_on_a_constant_stays_in_the_namespace():
    """variation's pattern: n = xp.asarray(len), ddof == n, where(..., traced, ...)."""
    def variation_like(x, ddof=0):
        xp = array_namespace(x)
        n = xp.asarray(x.shape[0], dtype=x.dtype)
        cond = ddof == n
        assert array_namespace(cond, x) is xp
        correction = (n / (n - ddof)) ** 0.5
        return xp.where(cond, xp.nan, xp.std(x) * correction / xp.mean(x))

    def plain(x):
        return np.std(x) / np.mean(x)
    y = X + 3.0
    h = 1e-6
    fd = np.array([(plain(y + h * e) - plain(y - h * e)) / (2 * h) for e in np.eye(4)])
    assert_allclose(dk.grad(variation_like)(y), fd, rtol=1e-6)
    assert_allclose(dk.grad(variation_like)(y), dk.jacfwd(variation_like)(y), rtol=1e-12)
    batch = np.stack([y, y[::-1] + 0.5])
    rows = np.stack([dk.grad(variation_like)(b) for b in batch])
    assert_allclose(dk.vmap(dk.grad(variation_like))(batch), rows, rtol=1e-12)
