"""Tests for diffkit.ops.indexing.At: functional updates ``At(x)[index].set(v)`` etc.

Oracles: NumPy's in-place equivalents on copies (``np.add.at`` and friends, assignment for
``set``), finite differences through check_grads, and Python loops for ``vmap``.
"""

import numpy as np
import pytest

import diffkit as dk
from diffkit.ops.indexing import At
from diffkit.testing import check_grads

# Every batching here must use the rules, never the engine's loop fallback.
pytestmark = pytest.mark.filterwarnings("error::diffkit.errors.PerformanceWarning")

rng = np.random.default_rng(0)

INDICES = [
    (np.array([0, 2, 2, 1]), (4, 1)),                 # repeated
    ((slice(None), np.array([0, 2, 0])), (3,)),      # repeated, axis 1
    ((1, slice(0, 3)), (3,)),                        # basic
    ((np.array([[0, 1], [3, 3]]), slice(1, 3)), (2, 2, 2)),
    (Ellipsis, (4, 3)),
    ((np.array([0, 3]), slice(None), None), (2, 3, 1)),
]
UFUNCS = {"add": np.add, "multiply": np.multiply, "min": np.minimum, "max": np.maximum}


def numpy_update(method, x, index, v):
    out = x.copy()
    if method == "set":
        out[index] = v
    else:
        UFUNCS[method].at(out, index, v)
    return out


@pytest.mark.parametrize("method", ["set", "add", "multiply", "min", "max"])
@pytest.mark.parametrize("index, vshape", INDICES)
def test_at_values_match_numpy(method, index, vshape):
    x = rng.normal(size=(4, 3))
    v = rng.normal(size=vshape)
    before = x.copy()
    np.testing.assert_allclose(getattr(At(x)[index], method)(v), numpy_update(method, x, index, v))
    np.testing.assert_array_equal(x, before)   # never modified


def test_at_get_and_scalar_update():
    x = rng.normal(size=(4, 3))
    np.testing.assert_array_equal(At(x)[1:3].get(), x[1:3])
    np.testing.assert_allclose(At(x)[:, 1].add(2.0), numpy_update("add", x, (slice(None), 1), 2.0))


def test_at_set_last_write_wins():
    out = At(np.zeros(3))[np.array([1, 1, 1])].set(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(out, [0.0, 3.0, 0.0])


@pytest.mark.parametrize("method", ["set", "add", "multiply", "min", "max"])
@pytest.mark.parametrize("index, vshape", INDICES[:4])
def test_at_derivatives(method, index, vshape):
    # Distinct values on a grid: min/max never tie.
    values = rng.permutation(np.arange(-40, 40) / 16.0)
    x = values[:12].reshape(4, 3)
    v = values[12:12 + int(np.prod(vshape))].reshape(vshape)
    def f(x, v):
        return getattr(At(x)[index], method)(v)
    check_grads(f, (x, v), order=2)
    jf = dk.jacfwd(f, argnums=(0, 1))(x, v)
    jr = dk.jacrev(f, argnums=(0, 1))(x, v)
    for a, b in zip(jf, jr):
        np.testing.assert_allclose(a, b, atol=1e-12)


@pytest.mark.parametrize("method", ["set", "add", "multiply", "min", "max"])
def test_at_vmap_matches_loop(method):
    b = 5
    xs = rng.normal(size=(b, 4, 3))
    vs = rng.normal(size=(b, 3))
    idx = rng.integers(0, 4, size=(b, 3))
    def f(x, i, v):
        return getattr(At(x)[i, 1:2], method)(v[:, None])
    for axes in [(0, 0, 0), (0, None, 0), (None, 0, 0), (0, 0, None), (None, 0, None)]:
        args = [a if ax is not None else a[0] for a, ax in zip((xs, idx, vs), axes)]
        got = dk.vmap(f, in_axes=axes)(*args)
        want = np.stack([f(*[a[k] if ax is not None else a for a, ax in zip(args, axes)])
                         for k in range(b)])
        np.testing.assert_allclose(got, want)


@pytest.mark.parametrize("method", ["set", "add", "multiply", "min", "max"])
def test_at_integer_array_keeps_dtype(method):
    x = np.arange(6)
    index = np.array([1, 4, 4])
    v = np.array([7, -2, 3])
    out = getattr(At(x)[index], method)(v)
    assert out.dtype == x.dtype
    np.testing.assert_array_equal(out, numpy_update(method, x, index, v))
