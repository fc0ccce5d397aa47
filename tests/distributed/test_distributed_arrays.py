"""``vmap`` over dask arrays: a lazy dask array, computed block by block (out of core),
equal to the local result computed with the same blocks."""

import tracemalloc

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.errors import BatchingError, OptionError

da = pytest.importorskip("dask.array", reason="pip install 'diffkit[distributed]'")

RNG = np.random.default_rng(5)
W = RNG.normal(size=8)


def loss(w, x, y):
    return dnp.log1p(dnp.exp(-y * dnp.dot(x, w)))


def test_lazy_until_compute():
    calls = []

    def counted(w, x, y):
        calls.append(1)
        return loss(w, x, y)

    xs = da.from_array(RNG.normal(size=(100, 8)), chunks=(25, 8))
    ys = da.from_array(np.sign(RNG.normal(size=100)), chunks=25)
    grads = dk.vmap(dk.grad(counted), in_axes=(None, 0, 0))(W, xs, ys)
    assert isinstance(grads, da.Array)
    assert grads.shape == (100, 8) and grads.chunks == ((25,) * 4, (8,))
    assert len(calls) == 1   # one trace over a batch of no examples: shapes and dtypes
    result = grads.compute(scheduler="synchronous")
    assert len(calls) == 1 + 4   # one batched call per block
    local = dk.vmap(dk.grad(loss), in_axes=(None, 0, 0), chunk_size=25)(
        W, xs.compute(), ys.compute())
    assert_array_equal(result, local)
    margin = ys.compute() * (xs.compute() @ W)
    np.testing.assert_allclose(result, (-ys.compute() / (1 + np.exp(margin)))[:, None]
                               * xs.compute(), rtol=1e-7)


def test_out_of_core_peak_memory_is_a_few_blocks():
    rows, features, block = 40_000, 100, 1_000   # 32 MB of examples, 0.8 MB a block
    xs = da.random.default_rng(1).normal(size=(rows, features), chunks=(block, features))
    ys = da.sign(da.random.default_rng(2).normal(size=rows, chunks=block))
    w = RNG.normal(size=features) * 0.1
    grads = dk.vmap(dk.grad(loss), in_axes=(None, 0, 0))(w, xs, ys)
    total = grads.sum(axis=0)
    tracemalloc.start()
    try:
        value = total.compute(scheduler="synchronous")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    whole = rows * features * 8
    assert peak < whole / 4, f"peak {peak / 1e6:.1f} MB for {whole / 1e6:.0f} MB of input"
    x, y = xs.compute(), ys.compute()
    expected = ((-y / (1 + np.exp(y * (x @ w))))[:, None] * x).sum(axis=0)
    np.testing.assert_allclose(value, expected, rtol=1e-9)


def test_axes_pytrees_and_chunk_size():
    xs = RNG.normal(size=(6, 40))                     # batch on axis 1
    lazy = da.from_array(xs, chunks=(6, 16))

    def f(x, scale):
        return {"s": dnp.sum(x ** 2) * scale, "v": dnp.cumsum(x) * scale}

    out = dk.vmap(f, in_axes=(1, None), out_axes={"s": 0, "v": 1})(lazy, 3.0)
    assert out["v"].shape == (6, 40) and out["s"].shape == (40,)
    local = dk.vmap(f, in_axes=(1, None), out_axes={"s": 0, "v": 1})(xs, 3.0)
    np.testing.assert_allclose(out["v"].compute(), local["v"], rtol=1e-15)
    np.testing.assert_allclose(out["s"].compute(), local["s"], rtol=1e-15)
    # chunk_size: passes of at most 10 examples inside each block; the blocks stay
    passes = dk.vmap(f, in_axes=(1, None), out_axes={"s": 0, "v": 1}, chunk_size=10)(lazy, 3.0)
    assert passes["v"].chunks[1] == (16, 16, 8) and passes["s"].chunks[0] == (16, 16, 8)
    np.testing.assert_allclose(passes["v"].compute(), local["v"], rtol=1e-15)
    np.testing.assert_allclose(passes["s"].compute(), local["s"], rtol=1e-15)
    # a mapped NumPy array alongside a dask array is cut into the same blocks
    both = dk.vmap(lambda a, b: a * b, in_axes=(1, 0))(lazy, np.arange(40.0))
    np.testing.assert_allclose(both.compute(), xs.T * np.arange(40.0)[:, None], rtol=1e-15)


def test_unbatched_outputs_and_errors():
    lazy = da.from_array(RNG.normal(size=(10, 3)), chunks=(5, 3))
    const = dk.vmap(lambda x: (dnp.sum(x), np.ones(2)))(lazy)
    assert_array_equal(const[1].compute(), np.ones((10, 2)))
    with pytest.raises(BatchingError, match="out_axes=None"):
        dk.vmap(lambda x: (dnp.sum(x), np.ones(2)), out_axes=(0, None))(lazy)
    with pytest.raises(OptionError, match="lazy"):
        dk.vmap(dnp.sin, executor=map)(lazy)
    with pytest.raises(BatchingError, match="batch sizes"):
        dk.vmap(lambda a, b: a * b)(lazy, da.ones(4))


def test_chunk_size_bounds_the_memory_of_a_block():
    """One block of 20,000 examples whose passes each make a 200-wide hidden layer per
    example (32 MB for the block at once): in passes of 500 examples the peak is a small
    part of that, and the per-example values are the same."""
    rng = np.random.default_rng(11)
    weights = rng.normal(size=(50, 200)) / 7.0
    lazy = da.from_array(rng.normal(size=(20_000, 50)), chunks=(20_000, 50))

    def f(x):
        return dnp.sum(dnp.tanh(x @ weights) ** 2)

    def peak(chunk_size):
        values = dk.vmap(dk.grad(f), chunk_size=chunk_size)(lazy)
        tracemalloc.start()
        try:
            result = values.sum(axis=0).compute(scheduler="sync")
            return tracemalloc.get_traced_memory()[1], result
        finally:
            tracemalloc.stop()

    whole, expected = peak(None)
    passes, result = peak(500)
    np.testing.assert_allclose(result, expected, rtol=1e-12)
    hidden = 20_000 * 200 * 8
    assert whole > hidden and passes < whole / 3, (whole, passes)
