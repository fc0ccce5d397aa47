"""Tests for diffkit.ops.arrays beyond the generic records: values, dtypes and containers
against NumPy, closed-form derivatives (permutations at ties, Toeplitz matrices, skew
matrices, polynomial derivatives), the conventions at kinks, keyword variants, nested vmap
of the batching rules, and the errors users get.
"""

import warnings

import numpy as np
import pytest

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.errors import TracerConversionError
from diffkit.ops import array_helpers, array_products

pytestmark = pytest.mark.filterwarnings("error::diffkit.errors.PerformanceWarning")

RTOL = 1e-7
rng = np.random.default_rng(0)


def traced(fun, *args):
    """``fun(*args)`` evaluated on traced values (forward mode), and its tangent along the
    arguments themselves (the functions are linear in most of them)."""
    return dk.jvp(fun, tuple(args), tuple(args))


def assert_same(got, expected):
    """Same container type, shapes, dtypes and values (to rounding)."""
    if isinstance(expected, (list, tuple)):
        assert type(got) is type(expected)
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            assert_same(g, e)
        return
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.shape == expected.shape
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=1e-12)


X = rng.normal(size=(3, 4, 6))
M = rng.normal(size=(4, 6))
V = rng.normal(size=7)
XP = np.array([-1.5, -0.4, 0.3, 1.1])
FP = rng.normal(size=4)

# (name, function of the arrays, arrays): the traced value must equal NumPy's.
VALUE_CASES = [
    ("split", lambda x: dnp.split(x, 3, axis=2), lambda x: np.split(x, 3, axis=2), (X,)),
    ("split_points", lambda x: dnp.split(x, [1, 4], 2), lambda x: np.split(x, [1, 4], 2), (X,)),
    ("array_split", lambda x: dnp.array_split(x, 4, 2), lambda x: np.array_split(x, 4, 2), (X,)),
    ("array_split_unordered", lambda x: dnp.array_split(x, [4, 1, -2], 2),
     lambda x: np.array_split(x, [4, 1, -2], 2), (X,)),
    ("hsplit", lambda x: dnp.hsplit(x, 2), lambda x: np.hsplit(x, 2), (X,)),
    ("vsplit", lambda x: dnp.vsplit(x, [1]), lambda x: np.vsplit(x, [1]), (X,)),
    ("dsplit", lambda x: dnp.dsplit(x, 3), lambda x: np.dsplit(x, 3), (X,)),
    ("tile", lambda x: dnp.tile(x, (2, 1, 1, 3)), lambda x: np.tile(x, (2, 1, 1, 3)), (X,)),
    ("tile_short_reps", lambda x: dnp.tile(x, 2), lambda x: np.tile(x, 2), (X,)),
    ("repeat_flat", lambda x: dnp.repeat(x, 2), lambda x: np.repeat(x, 2), (X,)),
    ("repeat_zero", lambda x: dnp.repeat(x, 0, 1), lambda x: np.repeat(x, 0, 1), (X,)),
    ("repeat_counts", lambda x: dnp.repeat(x, [2, 0, 1, 3], 1),
     lambda x: np.repeat(x, [2, 0, 1, 3], 1), (X,)),
    ("roll_flat", lambda x: dnp.roll(x, 5), lambda x: np.roll(x, 5), (X,)),
    ("roll_axes", lambda x: dnp.roll(x, (1, -8, 2), (0, 2, 0)),
     lambda x: np.roll(x, (1, -8, 2), (0, 2, 0)), (X,)),
    ("roll_shift_tuple_axis_int", lambda x: dnp.roll(x, (1, 2), 1),
     lambda x: np.roll(x, (1, 2), 1), (X,)),
    ("flip", dnp.flip, np.flip, (X,)),
    ("flip_axes", lambda x: dnp.flip(x, (0, -1)), lambda x: np.flip(x, (0, -1)), (X,)),
    ("fliplr", dnp.fliplr, np.fliplr, (M,)),
    ("flipud", dnp.flipud, np.flipud, (V,)),
    ("rollaxis", lambda x: dnp.rollaxis(x, 2, 1), lambda x: np.rollaxis(x, 2, 1), (X,)),
    ("rollaxis_end", lambda x: dnp.rollaxis(x, 0, 3), lambda x: np.rollaxis(x, 0, 3), (X,)),
    ("diag_matrix", lambda x: dnp.diag(x, -2), lambda x: np.diag(x, -2), (M,)),
    ("diag_vector", lambda v: dnp.diag(v, 3), lambda v: np.diag(v, 3), (V,)),
    ("diag_far_offset", lambda x: dnp.diag(x, 9), lambda x: np.diag(x, 9), (M,)),
    ("diagflat", lambda x: dnp.diagflat(x, 1), lambda x: np.diagflat(x, 1), (M[:2, :2],)),
    ("diagonal", lambda x: dnp.diagonal(x, 2, 2, 1), lambda x: np.diagonal(x, 2, 2, 1), (X,)),
    ("trace", lambda x: dnp.trace(x, -1, 0, 2), lambda x: np.trace(x, -1, 0, 2), (X,)),
    ("trace_dtype", lambda x: dnp.trace(x, dtype=np.float32),
     lambda x: np.trace(x, dtype=np.float32), (M,)),
    ("tril", lambda x: dnp.tril(x, 1), lambda x: np.tril(x, 1), (X,)),
    ("triu_vector", lambda v: dnp.triu(v, -1), lambda v: np.triu(v, -1), (V,)),
    ("kron", dnp.kron, np.kron, (M[:2, :3], V[:4].reshape(2, 1, 2))),
    ("take", lambda x: dnp.take(x, [[0, -1], [2, 2]], axis=2),
     lambda x: np.take(x, [[0, -1], [2, 2]], axis=2), (X,)),
    ("take_wrap", lambda x: dnp.take(x, [7, -9, 3], 1, mode="wrap"),
     lambda x: np.take(x, [7, -9, 3], 1, mode="wrap"), (X,)),
    ("take_clip", lambda x: dnp.take(x, [70, -9], mode="clip"),
     lambda x: np.take(x, [70, -9], mode="clip"), (X,)),
    ("take_along_axis", lambda x: dnp.take_along_axis(x, np.argsort(M)[None, :, :2], 2),
     lambda x: np.take_along_axis(x, np.argsort(M)[None, :, :2], 2), (X,)),
    ("compress", lambda x: dnp.compress([False, True, True], x, axis=0),
     lambda x: np.compress([False, True, True], x, axis=0), (X,)),
    ("compress_flat", lambda x: dnp.compress([True, False, True], x),
     lambda x: np.compress([True, False, True], x), (X,)),
    ("select", lambda x: dnp.select([x > 1, x < 0], [x, -x], default=5.0),
     lambda x: np.select([x > 1, x < 0], [x, -x], default=5.0), (X,)),
    ("append", dnp.append, np.append, (M, V)),
    ("append_axis", lambda x: dnp.append(x, x, axis=1), lambda x: np.append(x, x, axis=1), (M,)),
    ("delete_mask", lambda x: dnp.delete(x, np.arange(6) % 2 == 0, axis=-1),
     lambda x: np.delete(x, np.arange(6) % 2 == 0, axis=-1), (X,)),
    ("delete_flat", lambda x: dnp.delete(x, [0, 5, -1]), lambda x: np.delete(x, [0, 5, -1]),
     (X,)),
    ("insert_scalar", lambda x: dnp.insert(x, 2, 9.0, axis=1),
     lambda x: np.insert(x, 2, 9.0, axis=1), (M,)),
    ("insert_block", lambda x, v: dnp.insert(x, -1, v, axis=0),
     lambda x, v: np.insert(x, -1, v, axis=0), (M, V[:6])),
    ("insert_list_of_one", lambda x, v: dnp.insert(x, [1], v[:, None], axis=1),
     lambda x, v: np.insert(x, [1], v[:, None], axis=1), (M, V[:4])),
    ("insert_many", lambda x, v: dnp.insert(x, [4, 0, 2], v),
     lambda x, v: np.insert(x, [4, 0, 2], v), (V, V[:3])),
    ("insert_slice", lambda x: dnp.insert(x, slice(1, 4), [1.0, 2.0, 3.0]),
     lambda x: np.insert(x, slice(1, 4), [1.0, 2.0, 3.0]), (V,)),
    ("sort_flat", lambda x: dnp.sort(x, axis=None), lambda x: np.sort(x, axis=None), (X,)),
    ("sort_axis1", lambda x: dnp.sort(x, 1), lambda x: np.sort(x, 1), (X,)),
    ("partition", lambda x: dnp.partition(x, (1, 4), axis=-1),
     lambda x: np.partition(x, (1, 4), axis=-1), (X,)),
    ("partition_flat", lambda x: dnp.partition(x, -3, axis=None),
     lambda x: np.partition(x, -3, axis=None), (X,)),
    ("interp", lambda x: dnp.interp(x, XP, FP), lambda x: np.interp(x, XP, FP), (X,)),
    ("interp_left_right", lambda x, lo: dnp.interp(x, XP, FP, lo, 2.0),
     lambda x, lo: np.interp(x, XP, FP, lo, 2.0), (X, np.float64(-3.0))),
    ("interp_period", lambda x: dnp.interp(x, XP, FP, period=-2.5),
     lambda x: np.interp(x, XP, FP, period=-2.5), (X,)),
    ("interp_float32", lambda x: dnp.interp(x, XP, FP),
     lambda x: np.interp(x, XP, FP), (X.astype(np.float32),)),
    ("cross", lambda a, b: dnp.cross(a, b, axisa=0, axisb=1, axisc=1),
     lambda a, b: np.cross(a, b, axisa=0, axisb=1, axisc=1), (X[:, :, :1], M[:1, :3])),
    ("polyval", dnp.polyval, np.polyval, (V[:4], M)),
    ("polyval_poly1d", lambda x: dnp.polyval(np.poly1d([1.0, 2.0, 3.0]), x),
     lambda x: np.polyval(np.poly1d([1.0, 2.0, 3.0]), x), (M,)),
    ("meshgrid", dnp.meshgrid, np.meshgrid, (V[:2], V[:3], V[:4])),
    ("meshgrid_sparse_2d_input", lambda a, b: dnp.meshgrid(a, b, sparse=True),
     lambda a, b: np.meshgrid(a, b, sparse=True), (M[:2, :2], V)),
    ("meshgrid_one", dnp.meshgrid, np.meshgrid, (V,)),
    ("block", lambda a, b: dnp.block([[[a, b]], [[b, a]]]),
     lambda a, b: np.block([[[a, b]], [[b, a]]]), (M[:2, :2], M[2:, 2:4])),
    ("block_scalars", lambda a: dnp.block([[a, 1.0], [2.0, a]]),
     lambda a: np.block([[a, 1.0], [2.0, a]]), (np.float64(3.0),)),
    ("hstack_scalars", lambda a, b: dnp.hstack([a, b]), lambda a, b: np.hstack([a, b]),
     (np.float64(1.0), V)),
    ("vstack_dtype", lambda a, b: dnp.vstack([a, b], dtype=np.float32),
     lambda a, b: np.vstack([a, b], dtype=np.float32), (V[:6], M)),
    ("dstack", lambda a, b: dnp.dstack((a, b)), lambda a, b: np.dstack((a, b)), (M, M)),
    ("column_stack", lambda a, b: dnp.column_stack((a, b)),
     lambda a, b: np.column_stack((a, b)), (V[:4], M)),
    ("broadcast_arrays", dnp.broadcast_arrays, np.broadcast_arrays, (M[:, :1], V[:6])),
    ("atleast_3d_many", dnp.atleast_3d, np.atleast_3d, (np.float64(1.0), V, M, X)),
    ("copy", dnp.copy, np.copy, (M,)),
]


@pytest.mark.parametrize(("fun", "reference", "args"), [c[1:] for c in VALUE_CASES],
                         ids=[c[0] for c in VALUE_CASES])
def test_values_match_numpy(fun, reference, args):
    """Traced values, containers and dtypes are NumPy's; plain arrays go to NumPy itself."""
    expected = reference(*args)
    assert_same(traced(fun, *args)[0], expected)
    assert_same(fun(*args), expected)


PAD_WIDTHS = [1, (2, 3), ((1, 0), (0, 2), (3, 1)), ((7, 9),), {1: (2, 1), -1: 3}]
PAD_MODES = ["constant", "edge", "reflect", "symmetric", "wrap", "linear_ramp", "maximum",
             "minimum", "mean", "median", "empty"]


@pytest.mark.parametrize("mode", PAD_MODES)
def test_pad_values_match_numpy(mode):
    for width in PAD_WIDTHS:
        expected = np.pad(X, width, mode)
        got = traced(lambda x, w=width: dnp.pad(x, w, mode), X)[0]
        if mode != "empty":  # NumPy leaves the padding uninitialised
            assert_same(got, expected)
        assert got.shape == expected.shape


@pytest.mark.parametrize(("mode", "kwargs"), [
    ("constant", {"constant_values": ((1, 2), (3, 4), (5, 6))}),
    ("constant", {"constant_values": (-1.5,)}),
    ("linear_ramp", {"end_values": ((1, 2), (3, 4), (5, 6))}),
    ("maximum", {"stat_length": ((1, 2), (3, 1), (2, 2))}),
    ("median", {"stat_length": 2}),
    ("mean", {"stat_length": (1, 3)}),
    ("reflect", {"reflect_type": "odd"}),
    ("symmetric", {"reflect_type": "odd"}),
])
def test_pad_keywords_match_numpy(mode, kwargs):
    for width in [(2, 3), (9, 14)]:
        assert_same(traced(lambda x, w=width: dnp.pad(x, w, mode, **kwargs), X)[0],
                    np.pad(X, width, mode, **kwargs))


def test_pad_size_one_axis_reflects_as_edge():
    x = rng.normal(size=(1, 3))
    for mode in ("reflect", "symmetric"):
        for kind in ("even", "odd"):
            assert_same(traced(lambda x, m=mode, k=kind: dnp.pad(x, 3, m, reflect_type=k), x)[0],
                        np.pad(x, 3, mode, reflect_type=kind))


def test_pad_constant_values_derivative():
    """d/dc of the padded array: one for each padded entry (traced constant values)."""
    x = rng.normal(size=(2, 3))
    grad = dk.grad(lambda c: dnp.sum(dnp.pad(x, ((1, 0), (2, 1)), constant_values=c)))
    np.testing.assert_allclose(grad(0.5), 3 * 6 - 6, rtol=RTOL)
    per_side = dk.jacfwd(lambda c: dnp.pad(x, 1, constant_values=c))(np.array([0.1, 0.2]))
    assert per_side.shape == (4, 5, 2)
    # The last axis is padded last, so the corners take its values, as in NumPy.
    np.testing.assert_array_equal(per_side[0, :-1, 0], 1.0)  # top row: "before" value
    np.testing.assert_array_equal(per_side[:, -1, 1], 1.0)   # right column: "after" value
    np.testing.assert_array_equal(per_side[:, -1, 0], 0.0)
    assert per_side[1:-1, 1:-1].sum() == 0.0


def test_pad_odd_is_linear_in_x():
    """The odd reflection's Jacobian is NumPy's pad of the identity, in both modes."""
    x = rng.normal(size=4)
    expected = np.pad(np.eye(4), ((9, 14), (0, 0)), "reflect", reflect_type="odd")
    for jac in (dk.jacfwd, dk.jacrev):
        np.testing.assert_allclose(
            jac(lambda x: dnp.pad(x, (9, 14), "reflect", reflect_type="odd"))(x),
            expected, rtol=RTOL)


# --- static gathers ------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_gather_runs_match_take_and_add_at(seed):
    """``_gather`` (slices for few runs, an index array otherwise) equals ``np.take``, and
    its VJP equals ``np.add.at``."""
    r = np.random.default_rng(seed)
    x = r.normal(size=(3, 7))
    pieces = [np.arange(7), np.arange(6, -1, -1), np.full(3, 2), r.integers(0, 7, 4),
              np.arange(2, 5), np.zeros(1, int)]
    index = np.concatenate([pieces[i] for i in r.permutation(6)[:3 + seed % 3]])
    if seed == 5:
        index = r.integers(0, 7, 40)  # many runs: the index-array path
    out, pullback = dk.vjp(lambda x: array_helpers._gather(x, 1, index), x)
    np.testing.assert_array_equal(out, np.take(x, index, axis=1))
    ct = r.normal(size=out.shape)
    expected = np.zeros_like(x)
    np.add.at(expected, (slice(None), index), ct)
    np.testing.assert_allclose(pullback(ct)[0], expected, rtol=RTOL)


# --- sort and partition: permutations, ties ------------------------------------------------


def test_sort_ties_follow_the_stable_order_in_both_engines():
    """At ties, output k takes the derivative of the k-th tied input in index order."""
    x = np.array([1.0, 0.0, 1.0, 0.0, 0.5])
    expected = np.eye(5)[[1, 3, 4, 0, 2]]
    for jac in (dk.jacfwd, dk.jacrev):
        np.testing.assert_array_equal(jac(dnp.sort)(x), expected)
    np.testing.assert_array_equal(dk.jacfwd(lambda x: dnp.sort(x, axis=0))(x[:, None])[:, 0, :, 0],
                                  expected)


def test_sort_jacobian_is_the_permutation():
    x = rng.normal(size=(3, 6))
    identity = np.eye(x.size).reshape(x.shape + x.shape)
    for axis in (0, 1, None):
        perm = np.argsort(x, axis=axis, kind="stable")
        if axis is None:
            expected = np.eye(x.size)[perm].reshape((x.size,) + x.shape)
        else:
            expected = np.take_along_axis(identity, perm.reshape(perm.shape + (1, 1)), axis)
        for jac in (dk.jacfwd, dk.jacrev):
            np.testing.assert_array_equal(jac(lambda x, a=axis: dnp.sort(x, axis=a))(x), expected)


def test_partition_derivative_follows_argpartition():
    x = rng.normal(size=7)
    perm = np.argpartition(x, 3)
    for jac in (dk.jacfwd, dk.jacrev):
        np.testing.assert_array_equal(jac(lambda x: dnp.partition(x, 3))(x), np.eye(7)[perm])
    kth_value = dk.grad(lambda x: dnp.partition(x, 3)[3])(x)
    np.testing.assert_array_equal(kth_value, np.eye(7)[np.argsort(x)[3]])


def test_sort_keywords():
    x = np.array([3.0, 1.0, 2.0, 1.0])
    for kwargs in ({"kind": "stable"}, {"stable": True}, {"kind": "heapsort"}):
        np.testing.assert_array_equal(traced(lambda x, kw=kwargs: dnp.sort(x, **kw), x)[0],
                                      np.sort(x, **kwargs))
        np.testing.assert_array_equal(dnp.argsort(x, **kwargs), np.argsort(x, **kwargs))
    np.testing.assert_array_equal(dnp.argsort(X, axis=None), np.argsort(X, axis=None))
    np.testing.assert_array_equal(dnp.argpartition(X, 2, axis=None),
                                  np.argpartition(X, 2, axis=None))
    with pytest.raises(ValueError, match="order"):
        dk.grad(lambda x: dnp.sum(dnp.sort(x, order="f")))(x)


def test_searchsorted_matches_numpy_and_sorter():
    a = np.array([3.0, 1.0, 2.0, 5.0])
    sorter = np.argsort(a)
    q = np.array([[0.5, 2.0], [2.5, 9.0]])
    for side in ("left", "right"):
        np.testing.assert_array_equal(dnp.searchsorted(a, q, side=side, sorter=sorter),
                                      np.searchsorted(a, q, side=side, sorter=sorter))
        got = dk.vmap(lambda v, s=side: dnp.searchsorted(np.sort(a), v, side=s))(q)
        np.testing.assert_array_equal(got, np.searchsorted(np.sort(a), q, side=side))


# --- nested vmap of the batching rules -------------------------------------------------------


def test_nested_vmap_of_searchsorted_and_sort():
    """Sorted arrays batched by the outer vmap and queries by the inner one (and the other
    way round): every batch_dims path of the searchsorted rule."""
    r = np.random.default_rng(3)
    sorted_rows = np.sort(r.normal(size=(3, 6)), axis=-1)
    queries = r.normal(size=(4, 2))
    expected = np.stack([np.stack([np.searchsorted(a, q) for q in queries])
                         for a in sorted_rows])
    f = dk.vmap(dk.vmap(dnp.searchsorted, in_axes=(None, 0)), in_axes=(0, None))
    np.testing.assert_array_equal(f(sorted_rows, queries), expected)
    g = dk.vmap(dk.vmap(dnp.searchsorted, in_axes=(0, None)), in_axes=(None, 0))
    np.testing.assert_array_equal(g(sorted_rows, queries), np.moveaxis(expected, 0, 1))
    both = dk.vmap(dk.vmap(dnp.searchsorted))(np.broadcast_to(sorted_rows, (4, 3, 6)),
                                              np.broadcast_to(queries[:, None], (4, 3, 2)))
    np.testing.assert_array_equal(both, np.moveaxis(expected, 0, 1))
    xs = r.normal(size=(2, 3, 4))
    np.testing.assert_array_equal(dk.vmap(dk.vmap(dnp.sort))(xs), np.sort(xs, axis=-1))


def test_nested_vmap_of_convolve():
    r = np.random.default_rng(4)
    a, v = r.normal(size=(2, 6)), r.normal(size=(3, 4))
    for mode in ("full", "same", "valid"):
        expected = np.stack([np.stack([np.convolve(x, y, mode) for x in a]) for y in v])
        f = dk.vmap(dk.vmap(lambda x, y, m=mode: dnp.convolve(x, y, m), in_axes=(0, None)),
                    in_axes=(None, 0))
        np.testing.assert_allclose(f(a, v), expected, rtol=RTOL)


def test_vmap_of_grad_of_sort_and_interp():
    r = np.random.default_rng(5)
    xs, w = r.normal(size=(4, 6)), r.normal(size=6)
    got = dk.vmap(dk.grad(lambda x: dnp.sum(dnp.sort(x) * w)))(xs)
    expected = np.stack([w[np.argsort(np.argsort(x, kind="stable"))] for x in xs])
    np.testing.assert_allclose(got, expected, rtol=RTOL)
    fps = r.normal(size=(3, 4))
    q = np.array([-1.0, 0.0, 0.5])
    got = dk.vmap(dk.grad(lambda fp: dnp.sum(dnp.interp(q, XP, fp))))(fps)
    expected = dk.jacrev(lambda fp: dnp.interp(q, XP, fp))(fps[0]).sum(axis=0)
    np.testing.assert_allclose(got, np.broadcast_to(expected, got.shape), rtol=RTOL)


# --- convolve and correlate: Toeplitz Jacobians ---------------------------------------------


def toeplitz_full(v, n):
    """The Jacobian of ``np.convolve(a, v)`` in ``a`` (of length n): ``J[i, j] = v[i - j]``."""
    m = len(v)
    jac = np.zeros((n + m - 1, n), dtype=np.result_type(v))
    for j in range(n):
        jac[j:j + m, j] = v
    return jac


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize(("n", "m"), [(6, 3), (3, 6), (4, 4), (1, 3), (7, 1), (2, 7)])
def test_convolve_jacobians_are_toeplitz(mode, n, m):
    r = np.random.default_rng(n * 10 + m)
    a, v = r.normal(size=n), r.normal(size=m)
    full_a, full_v = toeplitz_full(v, n), toeplitz_full(a, m)
    start = {"full": 0, "same": (min(n, m) - 1) // 2, "valid": min(n, m) - 1}[mode]
    length = len(np.convolve(a, v, mode))
    for jac in (dk.jacfwd, dk.jacrev):
        ja, jv = jac(lambda a, v: dnp.convolve(a, v, mode), argnums=(0, 1))(a, v)
        np.testing.assert_allclose(ja, full_a[start:start + length], rtol=RTOL, atol=1e-15)
        np.testing.assert_allclose(jv, full_v[start:start + length], rtol=RTOL, atol=1e-15)


def test_correlate_is_convolution_with_the_conjugate_reversed_kernel():
    """Complex values flow through: the tangent of correlate is bilinear with v conjugated,
    and its VJP is the transpose (JAX's convention, no conjugation of the cotangent)."""
    r = np.random.default_rng(6)
    a = r.normal(size=5) + 1j * r.normal(size=5)
    v = r.normal(size=3) + 1j * r.normal(size=3)
    ta, tv = r.normal(size=5) + 1j * r.normal(size=5), r.normal(size=3) + 0j
    for mode in ("full", "same", "valid"):
        out, tangent = dk.jvp(lambda a, v, m=mode: dnp.correlate(a, v, m), (a, v), (ta, tv))
        np.testing.assert_allclose(out, np.correlate(a, v, mode), rtol=RTOL)
        np.testing.assert_allclose(
            tangent, np.correlate(ta, v, mode) + np.correlate(a, tv, mode), rtol=RTOL)
    out, pullback = dk.vjp(lambda a: dnp.convolve(a, v), a)
    ct = r.normal(size=out.shape) + 1j * r.normal(size=out.shape)
    np.testing.assert_allclose(pullback(ct)[0], toeplitz_full(v, 5).T @ ct, rtol=RTOL)


def test_convolve_long_signals_gradient_closed_form():
    """Lengths around 1000: the gradients are correlations (np.correlate, 'valid')."""
    r = np.random.default_rng(7)
    a, v = r.normal(size=1200), r.normal(size=900)
    w = r.normal(size=2099)
    ga, gv = dk.grad(lambda a, v: dnp.sum(dnp.convolve(a, v) * w), argnums=(0, 1))(a, v)
    np.testing.assert_allclose(ga, np.correlate(w, v, "valid"), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(gv, np.correlate(w, a, "valid"), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize(("lead_a", "lead_v", "n", "m"), [
    ((2,), (), 9, 4),        # few long rows: NumPy's kernel per row
    ((6,), (6,), 3, 4),      # many short rows, full: shifted products
    ((3, 1), (4,), 5, 2),    # valid, kernel shorter than the output
    ((7,), (1,), 4, 3),      # valid, output shorter than the kernel
])
def test_convolve_batched_kernels(lead_a, lead_v, n, m):
    """Every branch of the batched implementation equals a loop of np.convolve."""
    r = np.random.default_rng(8)
    a, v = r.normal(size=lead_a + (n,)), r.normal(size=lead_v + (m,))
    lead = np.broadcast_shapes(lead_a, lead_v)
    ab, vb = np.broadcast_to(a, lead + (n,)), np.broadcast_to(v, lead + (m,))
    for mode in ("full", "valid") if n >= m else ("full",):
        expected = np.stack([np.convolve(ab[i], vb[i], mode) for i in np.ndindex(*lead)])
        got = array_products._convolve_impl(a, v, mode)
        np.testing.assert_allclose(got.reshape(expected.shape), expected, rtol=1e-12)


# --- interp: knots and outside ------------------------------------------------------------


def test_interp_derivative_at_knots_is_the_right_slope():
    slopes = np.diff(FP) / np.diff(XP)
    x = np.array([XP[0], XP[1], XP[2], XP[3], -3.0, 3.0])
    expected = np.array([slopes[0], slopes[1], slopes[2], slopes[2], 0.0, 0.0])
    for jac in (dk.jacfwd, dk.jacrev):
        np.testing.assert_allclose(np.diag(jac(lambda x: dnp.interp(x, XP, FP))(x)), expected,
                                   rtol=RTOL)
    fp_jac = dk.jacrev(lambda fp: dnp.interp(np.array([0.0, -2.0]), XP, fp, right=9.0))(FP)
    w = (0.0 - XP[1]) / (XP[2] - XP[1])
    np.testing.assert_allclose(fp_jac, [[0, 1 - w, w, 0], [1, 0, 0, 0]], rtol=RTOL)


def test_interp_knot_derivative():
    """d interp / d xp[j] for x inside segment j: -slope * (1 - t)."""
    x = np.array([0.0])
    t = (0.0 - XP[1]) / (XP[2] - XP[1])
    slope = (FP[2] - FP[1]) / (XP[2] - XP[1])
    for jac in (dk.jacfwd, dk.jacrev):
        got = jac(lambda xp: dnp.interp(x, xp, FP))(XP)
        np.testing.assert_allclose(got, [[0, -slope * (1 - t), -slope * t, 0]], rtol=RTOL)


# --- closed forms ---------------------------------------------------------------------------


def skew(v):
    """The matrix of ``u -> v x u``."""
    return np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])


def test_cross_jacobians_are_skew_matrices():
    a, b = rng.normal(size=3), rng.normal(size=3)
    for jac in (dk.jacfwd, dk.jacrev):
        ja, jb = jac(dnp.cross, argnums=(0, 1))(a, b)
        np.testing.assert_allclose(ja, -skew(b), rtol=RTOL)
        np.testing.assert_allclose(jb, skew(a), rtol=RTOL)


def test_cross_of_2_vectors_warns_like_numpy():
    a, b = rng.normal(size=(4, 2)), rng.normal(size=(4, 3))
    with pytest.warns(DeprecationWarning):
        got = traced(dnp.cross, a, b)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        np.testing.assert_allclose(got, np.cross(a, b), rtol=RTOL)
        np.testing.assert_allclose(traced(dnp.cross, b, a)[0], np.cross(b, a), rtol=RTOL)
        np.testing.assert_allclose(traced(dnp.cross, a, a)[0], np.cross(a, a), rtol=RTOL)


def test_polyval_derivatives():
    p, x = rng.normal(size=5), rng.normal(size=4)
    for jac in (dk.jacfwd, dk.jacrev):
        jp, jx = jac(dnp.polyval, argnums=(0, 1))(p, x)
        np.testing.assert_allclose(jx, np.diag(np.polyval(np.polyder(p), x)), rtol=RTOL)
        np.testing.assert_allclose(jp, x[:, None] ** np.arange(4, -1, -1), rtol=RTOL)
    hess = dk.hessian(lambda x: dnp.polyval(p, x))(np.float64(0.3))
    np.testing.assert_allclose(hess, np.polyval(np.polyder(p, 2), 0.3), rtol=RTOL)


def test_diag_trace_kron_jacobians():
    v = rng.normal(size=3)
    for jac in (dk.jacfwd, dk.jacrev):
        j = jac(lambda v: dnp.diag(v, 1))(v)
        expected = np.zeros((4, 4, 3))
        expected[[0, 1, 2], [1, 2, 3], [0, 1, 2]] = 1.0
        np.testing.assert_array_equal(j, expected)
        np.testing.assert_array_equal(jac(dnp.trace)(np.ones((3, 3))), np.eye(3))
    a, b = rng.normal(size=(2, 2)), rng.normal(size=(3,))
    jb = dk.jacrev(dnp.kron, argnums=1)(a, b)
    np.testing.assert_allclose(jb, np.stack([np.kron(a, e) for e in np.eye(3)], -1),
                               rtol=RTOL)


def test_float32_stays_float32():
    x = rng.normal(size=(3, 4)).astype(np.float32)
    funs = [lambda x: dnp.pad(x, 1, "reflect"), lambda x: dnp.pad(x, 2, constant_values=1.0),
            lambda x: dnp.pad(x, 1, "linear_ramp"), lambda x: dnp.pad(x, 1, "mean"),
            lambda x: dnp.roll(x, 1), dnp.sort, lambda x: dnp.tile(x, 2), dnp.tril,
            lambda x: dnp.diag(x[0]), dnp.trace, lambda x: dnp.convolve(x[0], x[1]),
            lambda x: dnp.cross(x[:, :3], x[:, 1:]), lambda x: dnp.polyval(x[0], x),
            lambda x: dnp.split(x, 2, axis=1)[1], lambda x: dnp.insert(x, 1, 2.0)]
    for f in funs:
        out, tangent = dk.jvp(f, (x,), (x,))
        assert out.dtype == tangent.dtype == np.float32
        cotangent = dk.vjp(f, x)[1](np.ones_like(out))[0]
        assert cotangent.dtype == np.float32


def test_containers_follow_numpy():
    x = rng.normal(size=(4, 3))
    assert type(traced(lambda x: dnp.split(x, 2), x)[0]) is list
    assert type(traced(lambda x: dnp.atleast_2d(x, x), x)[0]) is type(np.atleast_2d(x, x))
    assert type(traced(lambda x: dnp.meshgrid(x[0], x[1]), x)[0]) is \
        type(np.meshgrid(x[0], x[1]))
    assert isinstance(traced(dnp.atleast_1d, x)[0], np.ndarray)


@pytest.mark.skipif(not hasattr(np, "row_stack"), reason="NumPy without row_stack")
def test_row_stack_is_vstack():
    a = rng.normal(size=(2, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        np.testing.assert_array_equal(traced(lambda a: dnp.row_stack([a, a]), a)[0],
                                      np.vstack([a, a]))


# --- errors ---------------------------------------------------------------------------------


def raises_traced(error, match, fun, *args):
    """``fun`` raises ``error`` (matching ``match``) on traced arguments."""
    with pytest.raises(error, match=match):
        dk.jvp(fun, tuple(args), tuple(np.ones_like(a) for a in args))


@pytest.mark.parametrize(("error", "match", "fun"), [
    (ValueError, "equal division", lambda x: dnp.split(x, 4)),
    (ValueError, "larger than 0", lambda x: dnp.array_split(x, 0)),
    (ValueError, "2 or more dimensions", lambda x: dnp.vsplit(x[0], 2)),
    (ValueError, "3 or more dimensions", lambda x: dnp.dsplit(x, 2)),
    (ValueError, "negative", lambda x: dnp.tile(x, -1)),
    (ValueError, "negative", lambda x: dnp.repeat(x, -1)),
    (ValueError, "cannot be broadcast", lambda x: dnp.repeat(x, [1, 2, 3], axis=0)),
    (TypeError, "integers", lambda x: dnp.repeat(x, 1.5)),
    (ValueError, "not supported", lambda x: dnp.pad(x, 1, "nearest")),
    (ValueError, "unsupported keyword", lambda x: dnp.pad(x, 1, "edge", constant_values=1)),
    (ValueError, "negative", lambda x: dnp.pad(x, -1)),
    (TypeError, "integral", lambda x: dnp.pad(x, 1.5)),
    (ValueError, "cannot be broadcast", lambda x: dnp.pad(x, ((1, 2), (3, 4), (5, 6)))),
    (ValueError, "reflect_type", lambda x: dnp.pad(x, 1, "reflect", reflect_type="even!")),
    (TypeError, "callable", lambda x: dnp.pad(x, 1, lambda *a: None)),
    (ValueError, "stat_length of 0", lambda x: dnp.pad(x, 1, "maximum", stat_length=0)),
    (ValueError, "1D sequences", lambda x: dnp.roll(x, [[1]], [[0]])),
    (np.exceptions.AxisError, "out of bounds", lambda x: dnp.roll(x, 1, 2)),
    (np.exceptions.AxisError, "out of bounds", lambda x: dnp.flip(x, 3)),
    (ValueError, ">= 2-d", lambda x: dnp.fliplr(x[0])),
    (ValueError, "len\\(axes\\) must be 2", lambda x: dnp.rot90(x, 1, (0,))),
    (ValueError, "Axes must be different", lambda x: dnp.rot90(x, 1, (1, -1))),
    (ValueError, "out of range", lambda x: dnp.rot90(x, 1, (0, 3))),
    (ValueError, "1- or 2-d", lambda x: dnp.diag(x[None])),
    (ValueError, "at least two dimensions", lambda x: dnp.diagonal(x[0])),
    (ValueError, "cannot be the same", lambda x: dnp.diagonal(x, 0, 1, -1)),
    (TypeError, "out=", lambda x: dnp.trace(x, out=np.zeros(()))),
    (ValueError, "clipmode", lambda x: dnp.take(x, [0], mode="bounce")),
    (IndexError, "out of bounds", lambda x: dnp.take(x, [9])),
    (TypeError, "integers", lambda x: dnp.take(x, [0.5])),
    (ValueError, "same number of dimensions",
     lambda x: dnp.take_along_axis(x, np.zeros(2, int), 0)),
    (IndexError, "integer", lambda x: dnp.take_along_axis(x, np.zeros((1, 1)), 0)),
    (ValueError, "same length", lambda x: dnp.select([x > 0], [x, x])),
    (ValueError, "empty condition list", lambda x: dnp.select([], [])),
    (TypeError, "invalid entry 0", lambda x: dnp.select([x], [x])),
    (IndexError, "out of bounds", lambda x: dnp.insert(x, 9, 1.0)),
    (ValueError, "one dimensional", lambda x: dnp.insert(x, [[1]], 1.0)),
    (IndexError, "out of bounds", lambda x: dnp.delete(x, 9)),
    (ValueError, "a cannot be empty", lambda x: dnp.convolve(x[:0, 0], x[0])),
    (ValueError, "v cannot be empty", lambda x: dnp.convolve(x[0], x[:0, 0])),
    (ValueError, "mode must be one of", lambda x: dnp.convolve(x[0], x[1], "middle")),
    (ValueError, "too deep", lambda x: dnp.convolve(x, x)),
    (ValueError, "too small depth", lambda x: dnp.correlate(x[0, 0], x[0])),
    (ValueError, "dimension must be 2 or 3", lambda x: dnp.cross(x, x)),
    (ValueError, "1D sequences", lambda x: dnp.interp(x[0], x, x)),
    (ValueError, "same length", lambda x: dnp.interp(x[0], x[0], x[1, :2])),
    (ValueError, "empty", lambda x: dnp.interp(x[0], x[0, :0], x[1, :0])),
    (ValueError, "non-zero", lambda x: dnp.interp(x[0], x[0], x[1], period=0)),
    (ValueError, "side", lambda x: dnp.searchsorted(x[0], x[1], side="middle")),
    (ValueError, "1-dimensional", lambda x: dnp.searchsorted(x, x)),
    (ValueError, "indexing", lambda x: dnp.meshgrid(x, indexing="yx")),
    (TypeError, "tuple", lambda x: dnp.block([(x, x)])),
    (ValueError, "depths are mismatched", lambda x: dnp.block([[x], x])),
    (ValueError, "cannot be empty", lambda x: dnp.block([[], [x]])),
    (TypeError, "0-d", lambda x: dnp.hstack(dnp.sum(x))),  # one array: iterated, if not 0-d
    (ValueError, "at least one array", lambda x: dnp.vstack([])),
])
def test_errors_name_the_problem(error, match, fun):
    x = rng.normal(size=(2, 4))
    raises_traced(error, match, fun, x)


def test_shape_arguments_must_be_concrete_under_vmap():
    x = rng.normal(size=(3, 4))
    for fun in (lambda x, r: dnp.tile(x, r), lambda x, r: dnp.repeat(x, r),
                lambda x, r: dnp.roll(x, r), lambda x, r: dnp.pad(x, r),
                lambda x, r: dnp.split(x, r)):
        with pytest.raises(TracerConversionError, match="concrete"):
            dk.vmap(fun, in_axes=(None, 0))(x[0], np.array([1, 2, 2]))
