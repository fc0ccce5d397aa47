"""``chunk_size=`` on every Jacobian and on ``vmap``: the results equal the unchunked ones
bit for bit, and no batched pass sweeps more than ``chunk_size`` rows (``batch_flat`` is
watched: it is where every ``vmap`` runs)."""

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import diffkit as dk
import diffkit.api as api
import diffkit.numpy as dnp
from diffkit.errors import ChunkError, OptionError

RNG = np.random.default_rng(7)
X = RNG.normal(size=7)
A = RNG.normal(size=(5, 7))


def f(x):   # R^7 -> R^5, elementwise and a reduction
    return dnp.tanh(x[:5] * x[2:]) + dnp.sum(dnp.sin(x) * x)


def scalar(x):
    return dnp.sum(dnp.exp(dnp.sin(x)) * x[::-1]) + x[0] * x[3] ** 3


@pytest.fixture
def sizes(monkeypatch):
    """The batch size of every batched pass run through ``diffkit.api``."""
    seen = []
    real = api.batch_flat

    def watched(fun, args, axes, size):
        seen.append(size)
        return real(fun, args, axes, size)

    monkeypatch.setattr(api, "batch_flat", watched)
    return seen


CHUNKS = [1, 2, 3, 6, 7, 100]


@pytest.mark.parametrize("chunk", CHUNKS)
def test_jacfwd_chunks_equal_unchunked(chunk, sizes):
    whole = dk.jacfwd(f)(X)
    assert sizes == [7]
    sizes.clear()
    assert_array_equal(dk.jacfwd(f, chunk_size=chunk)(X), whole)
    assert max(sizes) <= chunk and len(sizes) == -(-7 // chunk)


@pytest.mark.parametrize("chunk", CHUNKS)
def test_jacrev_chunks_bounded(chunk, sizes):
    whole = dk.jacrev(f)(X)
    sizes.clear()
    assert_array_equal(dk.jacrev(f, chunk_size=chunk)(X), whole)
    assert max(sizes) <= chunk and len(sizes) == -(-5 // chunk)


@pytest.mark.parametrize("mode", ["fwd", "rev", "auto"])
@pytest.mark.parametrize("chunk", [1, 3, 100])
def test_jacobian_chunks(mode, chunk, sizes):
    whole = dk.jacobian(f, mode=mode)(X)
    sizes.clear()
    assert_array_equal(dk.jacobian(f, mode=mode, chunk_size=chunk)(X), whole)
    rows = 7 if mode == "fwd" else 5
    assert max(sizes) <= chunk and len(sizes) == -(-rows // chunk)


@pytest.mark.parametrize("chunk", [1, 2, 4, 7])
def test_hessian_chunks_both_passes(chunk, sizes):
    whole = dk.hessian(scalar)(X)
    sizes.clear()
    h = dk.hessian(scalar, chunk_size=chunk)(X)
    assert_array_equal(h, whole)
    assert max(sizes) <= chunk and len(sizes) == -(-7 // chunk)
    np.testing.assert_allclose(h, h.T, rtol=1e-12)


def test_hessian_pytree_and_aux_chunked():
    def g(p):
        return dnp.sum(p["a"] ** 2 * dnp.sum(p["b"])) + dnp.prod(p["b"]), p["a"].shape

    p = {"a": X[:3], "b": X[3:]}
    whole, aux = dk.hessian(g, has_aux=True)(p)
    chunked, aux2 = dk.hessian(g, has_aux=True, chunk_size=2)(p)
    assert aux == aux2 == (3,)
    for k in "ab":
        for m in "ab":
            assert_array_equal(chunked[k][m], whole[k][m])


@pytest.mark.parametrize("chunk", [2, 3, 5, 8])
def test_vmap_chunks(chunk, sizes):
    xs = RNG.normal(size=(8, 7))

    def g(x, w, scale):
        return {"y": w @ dnp.sin(x) * scale, "n": dnp.sum(x ** 2), "c": scale * 2.0}

    whole = dk.vmap(g, in_axes=(0, None, None), out_axes={"y": 1, "n": 0, "c": None})(
        xs, A, 3.0)
    sizes.clear()
    chunked = dk.vmap(g, in_axes=(0, None, None), out_axes={"y": 1, "n": 0, "c": None},
                      chunk_size=chunk)(xs, A, 3.0)
    assert max(sizes) <= chunk and len(sizes) == -(-8 // chunk)
    for k in whole:
        assert_array_equal(chunked[k], whole[k])
    assert chunked["y"].shape == (5, 8)


def test_vmap_chunks_of_one_example_with_a_matrix_product():
    # a batch of one takes NumPy's matrix-vector product: equal up to its rounding
    xs = RNG.normal(size=(4, 7))
    whole = dk.vmap(lambda x: A @ dnp.sin(x))(xs)
    np.testing.assert_allclose(dk.vmap(lambda x: A @ dnp.sin(x), chunk_size=1)(xs), whole,
                               rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(whole, np.sin(xs) @ A.T, rtol=1e-7)


def test_chunks_are_balanced():
    from diffkit.chunking import spans
    assert spans(9, 4) == [(0, 3), (3, 6), (6, 9)]
    assert spans(10, 4) == [(0, 4), (4, 7), (7, 10)]
    assert spans(7, 100) == [(0, 7)] and spans(0, 3) == [] and spans(5, 2, 3) == [(3, 5)]


def test_vmap_chunks_other_axis_and_keywords():
    xs = RNG.normal(size=(3, 10))
    whole = dk.vmap(lambda x, k: dnp.cumsum(x) * k, in_axes=1)(xs, k=np.arange(10.0))
    chunked = dk.vmap(lambda x, k: dnp.cumsum(x) * k, in_axes=1, chunk_size=4)(
        xs, k=np.arange(10.0))
    assert_array_equal(chunked, whole)


def test_vmap_of_grad_chunked_per_example_gradients():
    xs, ys = RNG.normal(size=(9, 4)), RNG.normal(size=9)
    w = RNG.normal(size=4)

    def loss(w, x, y):
        return (dnp.dot(x, w) - y) ** 2

    per_example = dk.vmap(dk.grad(loss), in_axes=(None, 0, 0), chunk_size=4)(w, xs, ys)
    assert_array_equal(per_example, dk.vmap(dk.grad(loss), in_axes=(None, 0, 0))(w, xs, ys))
    np.testing.assert_allclose(per_example, 2 * (xs @ w - ys)[:, None] * xs, rtol=1e-12)


def test_chunked_vmap_inside_grad_is_differentiable():
    # chunks are sliced and concatenated with diffkit's own operations: a gradient goes through
    def total(w):
        return dnp.sum(dk.vmap(lambda x: dnp.sin(x * w), chunk_size=3)(X) ** 2)

    expected = dk.grad(lambda w: dnp.sum(dk.vmap(lambda x: dnp.sin(x * w))(X) ** 2))(0.7)
    assert_array_equal(dk.grad(total)(0.7), expected)


def test_jacfwd_of_chunked_jacrev_is_a_hessian():
    h = dk.jacfwd(dk.jacrev(dk.grad(scalar), chunk_size=3), chunk_size=2)(X)
    assert h.shape == (7, 7, 7)
    np.testing.assert_allclose(h, dk.jacfwd(dk.jacfwd(dk.grad(scalar)))(X), rtol=1e-7,
                               atol=1e-12)


@pytest.mark.parametrize("transform", [dk.jacfwd, dk.jacrev, dk.hessian, dk.jacobian, dk.vmap])
def test_bad_chunk_size(transform):
    with pytest.raises(OptionError, match="chunk_size"):
        transform(scalar, chunk_size=0)
    with pytest.raises(OptionError, match="chunk_size"):
        transform(scalar, chunk_size=2.5)


def test_a_missing_chunk_is_an_error_never_zeros():
    from diffkit.chunking import run_chunks

    def lossy(fun, items):   # a map that drops the last chunk
        return [fun(item) for item in items][:-1]

    with pytest.raises(ChunkError, match="no result for chunk"):
        run_chunks(lambda a, b, d: np.arange(a, b), 10, 3, lossy, name="test")

    def short(fun, items):   # a map that returns a chunk with too few rows
        out = [fun(item) for item in items]
        return out[:-1] + [(out[-1][0], out[-1][1][:-1])]

    def check(result, start, stop):
        if len(result) != stop - start:
            raise ChunkError("rows")

    with pytest.raises(ChunkError, match="rows"):
        run_chunks(lambda a, b, d: np.arange(a, b), 10, 3, short, name="test", check=check)


def test_empty_work_with_chunk_size():
    assert dk.vmap(dnp.sin, chunk_size=3)(np.zeros((0, 2))).shape == (0, 2)
    assert dk.jacrev(lambda x: x[:0] * 2.0, chunk_size=3)(X).shape == (0, 7)
    assert dk.jacfwd(lambda x: x * 2.0, chunk_size=3)(np.zeros(0)).shape == (0, 0)


def test_progress_is_silent_by_default_and_a_line_without_tqdm(capsys, monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "tqdm", None)   # as if tqdm were not installed
    dk.jacrev(f, chunk_size=2)(X)
    assert capsys.readouterr().err == ""
    dk.jacrev(f, chunk_size=2, progress=True)(X)
    err = capsys.readouterr().err
    assert "jacrev: 0/3 chunks" in err and err.rstrip().endswith("jacrev: 3/3 chunks")
    dk.vmap(dnp.sin, chunk_size=4, progress=True)(np.ones((8, 2)))
    assert "vmap: 2/2 chunks" in capsys.readouterr().err
