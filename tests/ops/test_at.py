"""Functional index updates ``x.at[index]``: values match NumPy's in-place ``ufunc.at`` and
assignment for repeated indices, with concrete and with batched (traced) indices, and the
derivatives match those of the equivalent explicit formula."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.ops.indexing import At

RTOL = 1e-12

_NUMPY = {"add": np.add.at, "multiply": np.multiply.at, "min": np.minimum.at,
          "max": np.maximum.at}


def _numpy_update(method, x, index, v):
    out = x.copy()
    if method == "set":
        out[index] = v   # NumPy assignment: the last write of a repeated index wins
    else:
        _NUMPY[method](out, index, v)
    return out


updates = st.tuples(
    st.sampled_from(["set", "add", "multiply", "min", "max"]),
    st.lists(st.integers(0, 5), min_size=1, max_size=12),
    st.integers(0, 2**32 - 1),
)


@settings(max_examples=60, deadline=None)
@given(updates)
def test_values_match_numpy_with_repeats(update):
    method, index, seed = update
    rng = np.random.default_rng(seed)
    x, v = rng.normal(size=6), rng.normal(size=len(index))
    index = np.array(index)
    expected = _numpy_update(method, x, index, v)
    np.testing.assert_allclose(getattr(At(x)[index], method)(v), expected, rtol=RTOL)
    # batched indices take the pairwise path: same values
    batched = dk.vmap(lambda i: getattr(At(x)[i], method)(v))(np.stack([index, index[::-1]]))
    np.testing.assert_allclose(batched[0], expected, rtol=RTOL)
    np.testing.assert_allclose(batched[1], _numpy_update(method, x, index[::-1], v),
                               rtol=RTOL)


def test_set_gradient_only_reaches_the_last_write():
    index = np.array([1, 3, 1, 1])
    x, v = np.arange(5.0), np.array([10.0, 20.0, 30.0, 40.0])

    def loss(x, v):
        return dnp.sum(At(x)[index].set(v) * np.arange(1.0, 6.0))

    gx, gv = dk.grad(loss, argnums=(0, 1))(x, v)
    np.testing.assert_allclose(gx, [1.0, 0.0, 3.0, 0.0, 5.0], rtol=RTOL)
    np.testing.assert_allclose(gv, [0.0, 4.0, 0.0, 2.0], rtol=RTOL)


@pytest.mark.parametrize("method", ["multiply", "min", "max"])
def test_combining_updates_derivatives_match_the_explicit_formula(method):
    index = np.array([2, 0, 2, 2, 4])
    x = np.array([0.5, -1.0, 2.0, 0.25, -0.75])
    v = np.array([1.5, -0.5, 0.75, -2.5, 3.0])
    combine = {"multiply": lambda a, b: a * b, "min": dnp.minimum, "max": dnp.maximum}[method]

    def explicit(x, v):
        parts = [x[i] for i in range(5)]
        for k, i in enumerate(index):
            parts[i] = combine(parts[i], v[k])
        return dnp.stack(parts)

    for transform in (dk.jacfwd, dk.jacrev):
        got = transform(lambda x, v: getattr(At(x)[index], method)(v), argnums=(0, 1))(x, v)
        want = transform(explicit, argnums=(0, 1))(x, v)
        np.testing.assert_allclose(got[0], want[0], rtol=RTOL)
        np.testing.assert_allclose(got[1], want[1], rtol=RTOL)
