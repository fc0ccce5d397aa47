"""The generated plain replay: NumPy's operators where they give what the implementations
give (values, types, warnings), inline guards, error handling, and the cache's fast path."""

import warnings

import numpy as np
import pytest

import diffkit as dk
import diffkit.numpy as dnp


def chain(x):
    for _ in range(10):
        x = dnp.sin(x) * 0.9 + x * 0.1
    return x


def same(a, b):
    """Equal bit for bit and of the same type (a NumPy scalar stays one)."""
    assert type(a) is type(b), (type(a), type(b))
    np.testing.assert_array_equal(a, b)
    assert np.asarray(a).dtype == np.asarray(b).dtype


def test_chain_gradient_replays_with_operators_and_equals_eager_bit_for_bit():
    grad = dk.grad(chain)
    jitted = dk.jit(grad)
    for x in (0.3, -1.2, 7.0):
        x = np.array(x)
        same(jitted(x), grad(x))
    (graph,) = jitted.graphs()
    source = graph._plain.source
    assert " * " in source and " + " in source
    assert jitted.cache_info().traces == 1


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_operators_keep_the_dtype_and_type(dtype):
    def f(x, y):
        return [x * y - y / x, -x + 2.0 * y, x * 3, 0.5 - x, (x + y) * 1]

    x, y = np.array(1.5, dtype=dtype), np.array(-0.25, dtype=dtype)
    jitted = dk.jit(f)
    jitted(x, y)
    for a, b in zip(jitted(x, y), f(x, y)):
        same(a, b)
    xs, ys = np.linspace(1, 2, 5).astype(dtype), np.linspace(-1, 0, 5).astype(dtype)
    for a, b in zip(dk.jit(f)(xs, ys), f(xs, ys)):
        same(a, b)


def test_python_numbers_keep_numpys_result_type():
    """Two Python numbers (a traced float argument and a constant) go through the
    implementation, which gives a NumPy scalar as eagerly; a complex constant on the left
    of a NumPy scalar too (Python's complex would win the operator)."""
    def f(a, x):
        s = dnp.sin(x)
        return [dnp.multiply(a, 2.0), dnp.multiply(1 + 2j, s), dnp.multiply(3, s),
                dnp.subtract(a, x)]

    jitted = dk.jit(f)
    jitted(1.5, np.array(0.3))
    for a, b in zip(jitted(2.5, np.array(0.7)), f(2.5, np.array(0.7))):
        same(a, b)
    assert jitted.cache_info().traces == 1


def test_integer_products_warn_as_eagerly():
    f = lambda x: x * x + x   # noqa: E731
    x = np.array(2 ** 62)
    jitted = dk.jit(f)
    jitted(np.array(3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        same(jitted(x), f(x))   # wraps around without a warning, as np.multiply does


def test_the_callers_error_handling_applies_to_the_replay():
    f = lambda x: 1.0 / x + dnp.log(x)   # noqa: E731
    jitted = dk.jit(f)
    jitted(np.array(2.0))
    with np.errstate(all="raise"), pytest.raises(FloatingPointError):
        jitted(np.array(0.0))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("error")
        same(jitted(np.array(0.0)), f(np.array(0.0)))
    def kinds(caught):
        return {str(w.message).split(" encountered")[0] for w in caught}

    with pytest.warns(RuntimeWarning) as replayed:   # NumPy's warnings, as the eager call's
        jitted(np.array(0.0))
    with pytest.warns(RuntimeWarning) as eager:
        f(np.array(0.0))
    assert kinds(replayed) == kinds(eager) == {"divide by zero", "invalid value"}


def test_scalar_nan_guard_is_checked_inline():
    """The 0 x inf rule reads whether a scalar product is NaN: inline ``v != v``. A replay
    at the singular point (sqrt at 0 times a zero cotangent) traces again."""
    f = lambda x: dnp.sqrt(x) * 0.0 + x * x   # noqa: E731
    grad = dk.grad(f)
    jitted = dk.jit(grad)
    same(jitted(np.array(4.0)), grad(np.array(4.0)))
    same(jitted(np.array(1.0)), grad(np.array(1.0)))
    source = jitted.graphs()[0]._plain.source
    assert "!= v" in source
    with np.errstate(all="ignore"):
        same(jitted(np.array(0.0)), grad(np.array(0.0)))
        same(jitted(np.array(9.0)), grad(np.array(9.0)))
    info = jitted.cache_info()
    assert info.traces == 2 and info.guard_failures >= 1


def test_fast_path_of_positional_arrays_retraces_for_new_shapes_and_dtypes():
    f = lambda x, y: dnp.sum(x * y)   # noqa: E731
    jitted = dk.jit(f)
    for shape, dtype in [((3,), np.float64), ((3,), np.float64), ((4,), np.float64),
                         ((3,), np.float32), ((4,), np.float64), ((3,), np.float32)]:
        x, y = np.ones(shape, dtype), np.full(shape, 2.0, dtype)
        same(jitted(x, y), f(x, y))
    assert jitted.cache_info().traces == 3 and jitted.cache_info().hits == 3
    # the same arrays by keyword or as a NumPy scalar share the key of the positional call
    same(jitted(x=np.ones(3), y=np.ones(3)), np.float64(3.0))
    same(jitted(np.float64(2.0), np.array(3.0)), np.float64(6.0))
    assert jitted.cache_info().traces == 5


def test_fast_path_keeps_trying_specialisations_once():
    jitted = dk.jit(lambda x: x * 2.0 if x.sum() > 0 else x * 3.0)
    signs = [1.0, -1.0, 1.0, -1.0]
    for s in signs:
        same(jitted(np.full(2, s)), np.full(2, s) * (2.0 if s > 0 else 3.0))
    info = jitted.cache_info()
    assert info.traces == 2 and info.hits == 2
    assert info.guard_failures == 2   # each call after the first two: at most one miss


def test_direct_graph_call_with_other_kinds_of_argument():
    """A graph recorded on NumPy values called with Python numbers (or the other way)
    gives what the function gives."""
    f = lambda x, a: x * a - a / x   # noqa: E731
    graph = dk.make_graph(f)(np.array(2.0), 3.0)
    same(graph(np.array(1.5), 0.5), f(np.array(1.5), 0.5))
    same(graph(1.5, 0.5), np.float64(f(1.5, 0.5)))   # the implementations' type


def test_gradient_of_elementwise_reads_adds_into_one_array():
    """The reverse pass of a function reading its argument element by element sums one
    scatter per read; the replay adds them into one array and gives the same gradient."""
    def f(x):
        return x[0] * x[1] - x[2] * x[1] + x[3] * x[0] * x[2] + dnp.sin(x[3])

    g = dk.grad(f)
    x = np.array([0.5, -1.5, 2.0, 0.25])
    graph = dk.make_graph(g)(x)
    expected = np.array([x[1] + x[3] * x[2], x[0] - x[2], -x[1] + x[3] * x[0],
                         x[0] * x[2] + np.cos(x[3])])
    for point in (x, np.array([1.0, 2.0, -3.0, 0.0])):
        out = graph(point)
        same(out, g(point))
        e = np.array([point[1] + point[3] * point[2], point[0] - point[2],
                      -point[1] + point[3] * point[0], point[0] * point[2] + np.cos(point[3])])
        np.testing.assert_allclose(out, e, rtol=1e-12)
    assert "+=" in graph._plain.source
    np.testing.assert_allclose(graph(x), expected, rtol=1e-12)
