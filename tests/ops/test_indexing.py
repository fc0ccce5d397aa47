"""Tests for diffkit.ops.indexing: getitem (NumPy's x[index]) and its adjoint scatter_add.

Oracles: NumPy's own indexing for values, the exact 0/1 selection matrix for Jacobians,
``np.add.at`` and closed forms for gradients and Hessians, Python loops for ``vmap``.
"""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.errors import DiffkitError, PerformanceWarning
from diffkit.ops.indexing import getitem, getitem_p, parse_index, scatter_add_p

# Every batching here must use the rules, never the engine's loop fallback.
pytestmark = pytest.mark.filterwarnings("error::diffkit.errors.PerformanceWarning")

RTOL = 1e-7
rng = np.random.default_rng(0)


def traced_getitem(x, index):
    """``x[index]`` through the primitive (forward mode), with its tangent along 2*x."""
    return dk.jvp(lambda x: getitem(x, index), (x,), (2.0 * x,))


def selection_matrix(shape, index):
    """The exact Jacobian of ``x -> x[index]``: a 1 where an output reads an input."""
    size = int(np.prod(shape))
    read = np.arange(size).reshape(shape)[index]
    jac = np.zeros((read.size, size))
    jac[np.arange(read.size), read.ravel()] = 1.0
    return jac.reshape(read.shape + tuple(shape))


def loop_stack(fun, *args):
    return np.stack([fun(*example) for example in zip(*args)])


# --- a catalogue of index kinds --------------------------------------------------------------

SHAPE = (3, 4, 5)
CASES = {
    "int": 1,
    "negative int": -1,
    "ints": (2, -3),
    "all ints": (0, 1, 2),
    "slice": slice(1, 3),
    "slice with step": slice(None, None, 2),
    "negative step": slice(None, None, -1),
    "negative step bounds": (slice(2, 0, -1), slice(-1, None, -2)),
    "negative step past start": (slice(None), slice(3, None, -2)),
    "empty slice": slice(2, 2),
    "clipped slice": slice(-10, 10),
    "newaxis": None,
    "newaxes": (None, 0, None, slice(None), None),
    "ellipsis": (Ellipsis, 1),
    "ellipsis middle": (0, Ellipsis, slice(1, 3)),
    "ellipsis and newaxis": (Ellipsis, None),
    "empty tuple": (),
    "int array": np.array([2, 0, 0, 1]),
    "negative int array": np.array([-1, -3]),
    "2-d int array": np.array([[0, 1], [2, 2], [1, 0]]),
    "0-d int array": np.array(2),
    "list": [0, 2, 2],
    "nested list": [[0], [2]],
    "empty list": [],
    "array on middle axis": (slice(None), [3, 0, 3]),
    "array after slice": (slice(1, None), np.array([[1, 2]])),
    "broadcast arrays": (np.array([[0], [2]]), np.array([1, 3, 3])),
    "adjacent arrays in middle": (slice(None), [0, 1], [4, 2]),
    "separated arrays": ([0, 2], slice(None), [1, 4]),
    "separated by newaxis": (slice(None), [0, 1], None, [2, 3]),
    "separated by empty ellipsis": (slice(None), [1], Ellipsis, [0]),
    "separated int and array": (1, slice(None), [0, 4, 4]),
    "int and array adjacent": (slice(None), 2, [0, 4]),
    "array, int, array": ([2, 1], 0, [3, 3]),
    "array with negative-step slice": (slice(None, None, -1), [1, 1], slice(None, None, -2)),
    "boolean mask": np.array([True, False, True]),
    "boolean mask on last axis": (Ellipsis, np.array([False, True, True, False, True])),
    "2-d boolean mask": (slice(None), rng.random((4, 5)) > 0.5),
    "3-d boolean mask": np.arange(60).reshape(SHAPE) % 7 == 0,
    "boolean mask and array": (np.array([True, False, True]), slice(None), [1, 3]),
    "boolean list": [True, True, False],
    "0-d True": True,
    "0-d False": False,
    "0-d True with array": (slice(None), [0, 3], True),
    "numpy integer": np.int64(2),
}
CASE_IDS = list(CASES)


@pytest.mark.parametrize("name", CASE_IDS)
def test_getitem_matches_numpy_on_plain_arrays(name):
    x = rng.standard_normal(SHAPE)
    index = CASES[name]
    out = getitem(x, index)
    np.testing.assert_array_equal(out, x[index])
    assert np.shape(out) == x[index].shape


@pytest.mark.parametrize("name", CASE_IDS)
def test_traced_getitem_matches_numpy(name):
    x = rng.standard_normal(SHAPE)
    index = CASES[name]
    out, tangent = traced_getitem(x, index)
    expected = x[index]
    assert np.shape(out) == expected.shape and np.shape(tangent) == expected.shape
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(tangent, 2.0 * expected)


@pytest.mark.parametrize("name", CASE_IDS)
def test_jacobians_are_the_selection_matrix(name):
    x = rng.standard_normal(SHAPE)
    index = CASES[name]
    expected = selection_matrix(SHAPE, index)
    f = lambda x: getitem(x, index)  # noqa: E731
    np.testing.assert_array_equal(dk.jacfwd(f)(x), expected)
    np.testing.assert_array_equal(dk.jacrev(f)(x), expected)


@pytest.mark.parametrize("name", CASE_IDS)
def test_vmap_over_x_matches_loop(name):
    index = CASES[name]
    for in_axis in (0, 1, 3):
        xs = rng.standard_normal(SHAPE[:in_axis] + (2,) + SHAPE[in_axis:])
        out = dk.vmap(lambda x: getitem(x, index), in_axes=in_axis)(xs)
        expected = loop_stack(lambda x: x[index], np.moveaxis(xs, in_axis, 0))
        np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("name", CASE_IDS)
def test_vmap_of_vjp_matches_loop(name):
    """Batched cotangents through scatter_add (jacrev's pattern), for every index kind."""
    index = CASES[name]
    x = rng.standard_normal(SHAPE)
    out, pullback = dk.vjp(lambda x: getitem(x, index), x)
    cts = rng.standard_normal((3,) + np.shape(out))
    batched = dk.vmap(lambda ct: pullback(ct)[0])(cts)
    expected = np.stack([_scatter_reference(SHAPE, index, ct) for ct in cts])
    np.testing.assert_allclose(batched, expected, rtol=RTOL)


def _scatter_reference(shape, index, values):
    out = np.zeros(shape)
    np.add.at(out, index, values)
    return out


def test_plain_getitem_is_numpy_fast_path():
    x = np.arange(12.0).reshape(3, 4)
    view = getitem(x, (slice(None), 1))
    assert np.shares_memory(view, x)  # exactly NumPy's basic indexing, a view
    assert getitem(x, (1, 2)) == x[1, 2]
    assert getitem([1.0, 2.0, 3.0], 1) == 2.0


def test_tracer_indexing_operator_and_dnp_getitem():
    x = rng.standard_normal((4, 3))
    g = dk.grad(lambda x: dnp.sum(x[1:, ::-1][[0, 0, 2], 1] ** 2))(x)
    expected = np.zeros_like(x)
    for r in (1, 1, 3):
        expected[r, 1] += 2 * x[r, 1]
    np.testing.assert_allclose(g, expected, rtol=RTOL)
    np.testing.assert_array_equal(dk.grad(lambda x: dnp.getitem(x, (2, 0)))(x),
                                  selection_matrix((4, 3), (2, 0)))


# --- random indices (hypothesis) ---------------------------------------------------------------


class _Slot:
    """Where an integer index array goes in a template (so examples can swap arrays)."""

    def __init__(self, array, size):
        self.array, self.size = array, size


def _fill(template, arrays):
    arrays = iter(arrays)
    return tuple(next(arrays) if isinstance(e, _Slot) else e for e in template)


@st.composite
def shapes_and_templates(draw):
    """A shape and an index for it mixing every kind, with integer arrays as ``_Slot``s."""
    ndim = draw(st.integers(1, 4))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim)))
    common = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=2)))
    template = []
    for size in shape:
        kind = draw(st.sampled_from(["int", "slice", "full", "array", "array"]))
        if kind == "int":
            template.append(draw(st.integers(-size, size - 1)))
        elif kind == "slice":
            bound = st.none() | st.integers(-size - 2, size + 2)
            step = st.none() | st.sampled_from([-3, -2, -1, 1, 2, 3])
            template.append(slice(draw(bound), draw(bound), draw(step)))
        elif kind == "full":
            template.append(slice(None))
        else:
            # a shape broadcasting to `common`: a suffix of it with some axes set to 1
            suffix = common[draw(st.integers(0, len(common))):]
            arr_shape = tuple(1 if draw(st.booleans()) else d for d in suffix)
            seed = draw(st.integers(0, 2**32 - 1))
            values = np.random.default_rng(seed).integers(-size, size, arr_shape)
            template.append(_Slot(values, size))
    # an Ellipsis standing for a run of full slices (possibly none at all), or else
    # implicit trailing full slices
    if draw(st.booleans()):
        template = template[:draw(st.integers(0, ndim))]
    elif draw(st.booleans()):
        start = draw(st.integers(0, len(template)))
        stop = draw(st.integers(start, len(template)))
        if all(e == slice(None) for e in template[start:stop] if not isinstance(e, _Slot)) \
                and not any(isinstance(e, _Slot) for e in template[start:stop]):
            template[start:stop] = [Ellipsis]
    # new axes and 0-d True, anywhere
    for extra in draw(st.lists(st.sampled_from([None, True]), max_size=2)):
        template.insert(draw(st.integers(0, len(template))), extra)
    return shape, template


def _slots(template):
    return [e for e in template if isinstance(e, _Slot)]


@settings(max_examples=150, deadline=None)
@given(shapes_and_templates())
def test_random_indices_against_numpy_and_selection_matrix(case):
    shape, template = case
    index = _fill(template, [s.array for s in _slots(template)])
    x = rng.standard_normal(shape)
    expected = x[index]
    out, tangent = traced_getitem(x, index)
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(tangent, 2.0 * expected)
    jac = selection_matrix(shape, index)
    f = lambda x: getitem(x, index)  # noqa: E731
    np.testing.assert_array_equal(dk.jacfwd(f)(x), jac)
    np.testing.assert_array_equal(dk.jacrev(f)(x), jac)


@settings(max_examples=150, deadline=None)
@given(shapes_and_templates(), st.integers(0, 2**32 - 1))
def test_random_indices_under_vmap(case, seed):
    """x batched, index arrays batched, and both; getitem and its adjoint; vs loops."""
    shape, template = case
    slots = _slots(template)
    gen = np.random.default_rng(seed)
    batch = 3
    xs = gen.standard_normal((batch,) + shape)
    idxs = [gen.integers(-s.size, s.size, (batch,) + s.array.shape) for s in slots]

    def f(x, *arrays):
        return getitem(x, _fill(template, arrays))

    def f_np(x, *arrays):
        return x[_fill(template, arrays)]

    fixed = [s.array for s in slots]
    np.testing.assert_array_equal(dk.vmap(f, in_axes=(0,) + (None,) * len(slots))(xs, *fixed),
                                  loop_stack(lambda x: f_np(x, *fixed), xs))
    if not slots:
        return
    np.testing.assert_array_equal(dk.vmap(f)(xs, *idxs), loop_stack(f_np, xs, *idxs))
    x0 = xs[0]
    np.testing.assert_array_equal(dk.vmap(lambda *a: f(x0, *a))(*idxs),
                                  loop_stack(lambda *a: f_np(x0, *a), *idxs))
    # The adjoint with batched index arrays: gradients of a weighted sum, per example.
    weights = gen.standard_normal(f_np(x0, *fixed).shape)

    def loss(x, *arrays):
        return dnp.sum(f(x, *arrays) ** 2 * weights)

    def loss_grad_reference(x, *arrays):
        return _scatter_reference(shape, _fill(template, arrays), 2 * f_np(x, *arrays) * weights)

    np.testing.assert_allclose(dk.vmap(dk.grad(loss))(xs, *idxs),
                               loop_stack(loss_grad_reference, xs, *idxs), rtol=RTOL)
    np.testing.assert_allclose(dk.vmap(lambda *a: dk.grad(loss)(x0, *a))(*idxs),
                               loop_stack(lambda *a: loss_grad_reference(x0, *a), *idxs),
                               rtol=RTOL)


# --- gradients: repeated indices accumulate ------------------------------------------------------


def test_gradient_accumulates_repeated_indices():
    x = rng.standard_normal(6)
    idx = np.array([0, 3, 3, 5, 0, 0, 3])
    w = rng.standard_normal(idx.shape)
    g = dk.grad(lambda x: dnp.sum(w * x[idx]))(x)
    expected = np.zeros(6)
    np.add.at(expected, idx, w)
    np.testing.assert_allclose(g, expected, rtol=RTOL)
    assert g[1] == 0.0 and g[2] == 0.0 and g[4] == 0.0


def test_gradient_accumulates_in_two_dimensions():
    x = rng.standard_normal((3, 4))
    rows, cols = np.array([[0, 2], [0, 2]]), np.array([1, 1])
    w = rng.standard_normal((2, 2))
    g = dk.grad(lambda x: dnp.sum(w * x[rows, cols]))(x)
    expected = np.zeros((3, 4))
    np.add.at(expected, (rows, cols), w)
    np.testing.assert_allclose(g, expected, rtol=RTOL)


def test_reverse_mode_scatter_is_the_adjoint_of_forward_gather():
    """<u, J v> from jvp equals <J^T u, v> from vjp for a mixed index."""
    x = rng.standard_normal((4, 3, 5))
    index = ([3, 0, 3], slice(None, None, -1), np.array([[1], [4]]))
    f = lambda x: getitem(x, index)  # noqa: E731
    v = rng.standard_normal(x.shape)
    out, jv = dk.jvp(f, (x,), (v,))
    u = rng.standard_normal(out.shape)
    (jtu,) = dk.vjp(f, x)[1](u)
    np.testing.assert_allclose(np.vdot(u, jv), np.vdot(jtu, v), rtol=RTOL)


# --- second order --------------------------------------------------------------------------


def test_hessian_through_repeated_indices_closed_form():
    x = rng.standard_normal(5)
    idx = np.array([4, 1, 1, 0, 4, 4])
    w = rng.standard_normal(idx.shape)
    f = lambda x: dnp.sum(w * x[idx] ** 3)  # noqa: E731
    counts = np.zeros(5)
    np.add.at(counts, idx, w)
    expected = np.diag(6 * counts * x)
    np.testing.assert_allclose(dk.hessian(f)(x), expected, rtol=RTOL, atol=1e-14)
    np.testing.assert_allclose(dk.jacrev(dk.jacrev(f))(x), expected, rtol=RTOL, atol=1e-14)
    np.testing.assert_allclose(dk.jacfwd(dk.jacfwd(f))(x), expected, rtol=RTOL, atol=1e-14)
    np.testing.assert_allclose(dk.jacrev(dk.jacfwd(f))(x), expected, rtol=RTOL, atol=1e-14)


def test_hessian_of_products_of_gathers():
    """f(x) = sum_k x[a_k] x[b_k] has H = P + P^T with P counting the pairs (a_k, b_k)."""
    x = rng.standard_normal((3, 2))
    a = (np.array([0, 2, 2, 1]), np.array([1, 0, 0, 1]))
    b = (np.array([2, 2, 0, 1]), np.array([1, 1, 0, 1]))
    f = lambda x: dnp.sum(x[a] * x[b])  # noqa: E731
    pairs = np.zeros((6, 6))
    np.add.at(pairs, (np.ravel_multi_index(a, (3, 2)), np.ravel_multi_index(b, (3, 2))), 1.0)
    expected = (pairs + pairs.T).reshape(3, 2, 3, 2)
    np.testing.assert_allclose(dk.hessian(f)(x), expected, rtol=RTOL)
    np.testing.assert_allclose(dk.jacrev(dk.jacrev(f))(x), expected, rtol=RTOL)


def test_hessian_with_slices_and_separated_advanced_indices_vs_finite_differences():
    x = rng.standard_normal((3, 4, 2))
    index = ([0, 2, 2], slice(None, None, -1), [1, 0, 1])

    def f(x):
        y = getitem(x, index)
        return dnp.sum(dnp.sin(y[:, 1:]) * y[::-1, :-1] ** 2) + dnp.sum(y[:, None, 0] ** 3)

    def f_np(x):
        y = x[index]
        return np.sum(np.sin(y[:, 1:]) * y[::-1, :-1] ** 2) + np.sum(y[:, None, 0] ** 3)

    h = dk.hessian(f)(x)
    g = dk.grad(f)
    eps = 1e-5
    fd = np.zeros(x.shape + x.shape)
    for i in np.ndindex(x.shape):
        e = np.zeros(x.shape)
        e[i] = eps
        fd[(...,) + i] = (g(x + e) - g(x - e)) / (2 * eps)
    np.testing.assert_allclose(h, fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(h, dk.jacrev(dk.jacrev(f))(x), rtol=RTOL, atol=1e-12)
    # the gradient itself against central differences of the NumPy function
    fd_grad = np.zeros(x.shape)
    for i in np.ndindex(x.shape):
        e = np.zeros(x.shape)
        e[i] = eps
        fd_grad[i] = (f_np(x + e) - f_np(x - e)) / (2 * eps)
    np.testing.assert_allclose(g(x), fd_grad, rtol=1e-6, atol=1e-8)


def test_scatter_add_differentiates_twice():
    """scatter_add is linear with getitem as its transpose: its own Jacobians are exact."""
    idx = np.array([1, 1, 0])

    def f(v):
        return scatter_add_p(v, idx, shape=(3,), spec=parse_index((3,), idx)[0])

    v = rng.standard_normal(3)
    expected = selection_matrix((3,), idx).T
    np.testing.assert_array_equal(f(v), expected @ v)
    np.testing.assert_array_equal(dk.jacfwd(f)(v), expected)
    np.testing.assert_array_equal(dk.jacrev(f)(v), expected)
    np.testing.assert_array_equal(dk.jacfwd(dk.jacrev(lambda v: dnp.sum(f(v) ** 2)))(v),
                                  2 * expected.T @ expected)


def test_linearize_through_indexing():
    x = rng.standard_normal((4, 3))
    f = lambda x: x[[3, 3, 0], ::-1] * x[1:, 0, None][[2, 2, 0]]  # noqa: E731
    out, f_jvp = dk.linearize(f, x)
    v = rng.standard_normal(x.shape)
    np.testing.assert_allclose(f_jvp(v), dk.jvp(f, (x,), (v,))[1], rtol=RTOL)
    np.testing.assert_array_equal(out, f(x))


# --- vmap with traced (batched) index arrays ------------------------------------------------------


def test_vmap_batched_integer_labels():
    xs = rng.standard_normal((5, 4))
    labels = np.array([0, 3, 1, 1, 2])
    np.testing.assert_array_equal(dk.vmap(lambda x, i: x[i])(xs, labels),
                                  xs[np.arange(5), labels])
    table = rng.standard_normal((4, 3))
    np.testing.assert_array_equal(dk.vmap(lambda i: dnp.getitem(table, i))(labels),
                                  table[labels])
    reversed_rows = dk.vmap(lambda i: dnp.getitem(table, (i, slice(None, None, -1))))(labels)
    np.testing.assert_array_equal(reversed_rows, table[labels, ::-1])


def test_vmap_batched_index_with_in_axes_and_nesting():
    xs = rng.standard_normal((3, 6, 2))  # batch on axis 1
    idx = rng.integers(0, 3, (2, 6, 4))  # batch on axis 1 too
    out = dk.vmap(lambda x, i: x[i, 1], in_axes=(1, 1))(xs, idx)
    expected = np.stack([xs[:, b][idx[:, b], 1] for b in range(6)])
    np.testing.assert_array_equal(out, expected)
    # nested vmap: outer over x rows, inner over index rows
    xs2 = rng.standard_normal((3, 5))
    idx2 = rng.integers(-5, 5, (4, 2))
    nested = dk.vmap(lambda x: dk.vmap(lambda i: x[i])(idx2))(xs2)
    np.testing.assert_array_equal(nested, xs2[:, idx2])
    both = dk.vmap(dk.vmap(lambda x, i: x[i], in_axes=(None, 0)), in_axes=(0, None))(xs2, idx2)
    np.testing.assert_array_equal(both, xs2[:, idx2])


def test_vmap_of_grad_cross_entropy_with_per_example_labels():
    logits = rng.standard_normal((6, 5))
    labels = np.array([4, 0, 2, 2, 1, 3])

    def cross_entropy(z, label):
        logp = z - dnp.logsumexp(z)
        return -logp[label]

    grads = dk.vmap(dk.grad(cross_entropy))(logits, labels)
    softmax = np.exp(logits - logits.max(1, keepdims=True))
    softmax /= softmax.sum(1, keepdims=True)
    expected = softmax - np.eye(5)[labels]
    np.testing.assert_allclose(grads, expected, rtol=RTOL, atol=1e-15)
    # the batched loss itself, and the Hessian per example: diag(p) - p p^T
    losses = dk.vmap(cross_entropy)(logits, labels)
    np.testing.assert_allclose(losses, -np.log(softmax[np.arange(6), labels]), rtol=RTOL)
    hessians = dk.vmap(dk.hessian(cross_entropy))(logits, labels)
    expected_h = np.stack([np.diag(p) - np.outer(p, p) for p in softmax])
    np.testing.assert_allclose(hessians, expected_h, rtol=RTOL, atol=1e-15)


def test_vmap_of_grad_with_unbatched_x_and_batched_index():
    x = rng.standard_normal(5)
    idx = np.array([[0, 0], [4, 1], [2, 2]])
    # a cotangent that does not depend on the batch reaches scatter_add unbatched
    grads = dk.vmap(lambda i: dk.grad(lambda x: dnp.sum(x[i]))(x))(idx)
    expected = np.stack([_scatter_reference((5,), i, np.ones(2)) for i in idx])
    np.testing.assert_array_equal(grads, expected)


def test_jacrev_of_jacrev_with_batched_index_inside():
    idx = np.array([[2, 0], [1, 1]])

    def f(x):
        return dk.vmap(lambda i: dnp.sum(x[i] ** 3))(idx)

    x = rng.standard_normal(3)
    expected = np.zeros((2, 3, 3))
    for b, row in enumerate(idx):
        for j in row:
            expected[b, j, j] += 6 * x[j]
    np.testing.assert_allclose(dk.jacrev(dk.jacrev(f))(x), expected, rtol=RTOL)
    np.testing.assert_allclose(dk.jacfwd(dk.jacrev(f))(x), expected, rtol=RTOL)


def test_traced_integer_list_index():
    xs = rng.standard_normal((3, 4))
    i, j = np.array([0, 1, 3]), np.array([2, 2, 0])
    out = dk.vmap(lambda x, i, j: x[[i, j, 0]])(xs, i, j)
    np.testing.assert_array_equal(out, np.stack([x[[a, b, 0]] for x, a, b in zip(xs, i, j)]))


def test_concrete_boolean_mask_under_vmap_and_grad():
    mask = np.array([True, False, True, True])
    xs = rng.standard_normal((3, 4))
    np.testing.assert_array_equal(dk.vmap(lambda x: x[mask])(xs), xs[:, mask])
    g = dk.grad(lambda x: dnp.sum(x[mask] ** 2))(xs[0])
    np.testing.assert_allclose(g, 2 * xs[0] * mask, rtol=RTOL)


def test_getitem_batch_rules_are_used_not_the_fallback():
    assert getitem_p.batch is not None and scatter_add_p.batch is not None
    with warnings.catch_warnings():
        warnings.simplefilter("error", PerformanceWarning)
        dk.vmap(lambda x, i: x[i, ::2, [0, 1]])(rng.standard_normal((2, 3, 4, 2)),
                                                   np.array([[0], [2]]))


# --- errors --------------------------------------------------------------------------------


def _numpy_error(x, index):
    with pytest.raises(IndexError) as info:
        x[index]
    return str(info.value)


@pytest.mark.parametrize("index", [
    5, -4, (0, 4), np.array([0, 3]), [1, -4], (slice(None), np.array([[4]])),
])
def test_out_of_bounds_is_numpy_index_error(index):
    x = rng.standard_normal((3, 4))
    message = _numpy_error(x, index)
    with pytest.raises(IndexError) as info:
        traced_getitem(x, index)
    assert str(info.value) == message
    with pytest.raises(IndexError):
        dk.grad(lambda x: dnp.sum(x[index]))(x)


def test_out_of_bounds_traced_index_under_vmap_is_index_error():
    with pytest.raises(IndexError, match="out of bounds"):
        dk.vmap(lambda x, i: x[i])(rng.standard_normal((2, 3)), np.array([0, 3]))


@pytest.mark.parametrize("index, match", [
    ((0, 0, 0), "too many indices"),
    ((Ellipsis, 0, Ellipsis), "single ellipsis"),
    (np.array([0.5]), "integer \\(or boolean\\) type"),
    (1.5, "only integers"),
    ("a", "only integers"),
    (np.array([True, False]), "boolean index did not match"),
    (([0, 1], [0, 1, 2]), "shape mismatch"),
])
def test_invalid_indices_raise_index_error(index, match):
    x = rng.standard_normal((3, 4))
    with pytest.raises(IndexError, match=match):
        traced_getitem(x, index)
    with pytest.raises(IndexError):
        x[index]


def test_batched_boolean_mask_is_a_clear_diffkit_error():
    xs = rng.standard_normal((3, 4))
    with pytest.raises(DiffkitError, match="dnp.where") as info:
        dk.vmap(lambda x: dnp.sum(x[x > 0]))(xs)
    assert "different length" in str(info.value)
    # the suggested fix works
    np.testing.assert_allclose(dk.vmap(lambda x: dnp.sum(dnp.where(x > 0, x, 0.0)))(xs),
                               np.where(xs > 0, xs, 0).sum(1), rtol=RTOL)


def test_batched_slice_bound_is_a_clear_diffkit_error():
    xs = rng.standard_normal((3, 4))
    with pytest.raises(DiffkitError, match="arange"):
        dk.vmap(lambda x, s: dnp.getitem(x, slice(s, None)))(xs, np.array([0, 1, 2]))


def test_float_traced_index_is_rejected():
    with pytest.raises(IndexError, match="integer"):
        dk.vmap(lambda x, i: dnp.getitem(x, i))(rng.standard_normal((2, 3)),
                                                 np.array([0.0, 1.0]))


# --- index values traced by the differentiating transformation ------------------------------


def test_index_computed_from_the_differentiated_input_has_no_derivative():
    """In reverse mode an index derived from x is a traced integer array: it selects, and
    the engine asks no cotangent of it."""
    x = np.array([2.25, 0.5, 1.75, 0.25])
    w = rng.standard_normal(4)
    g = dk.grad(lambda x: dnp.sum(w * x[dnp.astype(x, int)]))(x)
    expected = np.zeros(4)
    np.add.at(expected, x.astype(int), w)
    np.testing.assert_allclose(g, expected, rtol=RTOL)
    # a traced boolean mask with a concrete value, and a traced slice bound
    g = dk.grad(lambda x: dnp.sum(x[dnp.astype(x - 0.5, bool)] ** 2))(x)
    np.testing.assert_allclose(g, 2 * x * (x != 0.5), rtol=RTOL)
    g = dk.grad(lambda x: dnp.sum(x[:dnp.astype(x[0], int)]))(x)
    np.testing.assert_array_equal(g, [1.0, 1.0, 0.0, 0.0])
    # and the bounds check sees the concrete value
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 0 with size 4"):
        dk.grad(lambda x: dnp.sum(x[dnp.astype(x + 2, int)]))(x)


def test_traced_index_into_plain_array():
    table = rng.standard_normal((4, 3))
    labels = np.array([3, 0, 2])
    out = dk.vmap(lambda i: dnp.getitem(table, [i, 0]))(labels)
    np.testing.assert_array_equal(out, np.stack([table[[i, 0]] for i in labels]))


def test_jvp_rules_give_symbolic_zero_when_only_the_index_has_a_tangent():
    from diffkit.core.zeros import Zero
    x = rng.standard_normal((3, 2))
    idx = np.array([2, 0])
    spec = parse_index(x.shape, idx)[0]
    out, tangent = getitem_p.jvp((x, idx), (Zero(x.shape, x.dtype), np.ones(2)), spec=spec)
    np.testing.assert_array_equal(out, x[idx])
    assert type(tangent) is Zero and tangent.shape == (2, 2)
    out, tangent = scatter_add_p.jvp((x[idx], idx), (Zero((2, 2), x.dtype), np.ones(2)),
                                     shape=x.shape, spec=spec)
    assert type(tangent) is Zero and tangent.shape == x.shape


def test_parse_index_spec_is_static_and_hashable():
    spec, arrays, new_axes = parse_index((3, 4, 5), (None, slice(None, None, -1), [0, 2], ...))
    hash(spec)
    assert spec == (None, (2, None, -1), parse_index((1,), [0])[0][0], (0, 5, 1))
    assert len(arrays) == 1 and new_axes == ()
    assert repr(spec[2]) == "ARRAY"
