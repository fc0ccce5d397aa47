"""Colourings at scale (issue 30, item 4): partial distance-2, star and bidirectional
colourings on generated patterns (dense rows and columns, empty lines, rectangular) are
valid, decompress to the derivatives dense AD computes, never need more colours than the
greedy colourings diffkit had before (``old_coloring.py``), and never build the
column intersection graph of a large pattern."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from old_coloring import column_coloring as old_column_coloring
from old_coloring import row_coloring as old_row_coloring
from old_coloring import star_coloring as old_star_coloring
from test_sparse_coloring import (
    assert_column_coloring_valid,
    assert_star_coloring_valid,
    random_values,
)

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.errors import OptionError
from diffkit.sparse import distance2, graphs
from diffkit.sparse.coloring import (
    ORDERS,
    as_pattern,
    bicoloring,
    column_coloring,
    decompress_bidirectional,
    decompress_columns,
    decompress_rows,
    decompress_star,
    gather_bidirectional,
    gather_columns,
    gather_rows,
    gather_star,
    jacobian_scheme,
    row_coloring,
    seed_matrix,
    star_coloring,
)
from diffkit.sparse.graphs import Nets

DISTANCE1_ORDERS = (*ORDERS, "dsatur", "best")
RTOL = 1e-12


@st.composite
def patterns(draw, square=False, max_size=14):
    """Random boolean patterns: a density, then optionally dense rows and columns and
    empty ones (all drawn from a seed)."""
    m = draw(st.integers(1, max_size))
    n = m if square else draw(st.integers(1, max_size))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    dense = rng.random((m, n)) < draw(st.floats(0.0, 0.5))
    for _ in range(draw(st.integers(0, 2))):
        dense[rng.integers(m)] = True
    for _ in range(draw(st.integers(0, 2))):
        dense[:, rng.integers(n)] = True
    if draw(st.booleans()):
        dense[rng.integers(m)] = False
        dense[:, rng.integers(n)] = False
    if square:
        dense = dense | dense.T
    return as_pattern(dense)


def arrow(n, column=True):
    """A dense first row, the diagonal, and (``column``) a dense first column."""
    rows = [np.zeros(n, int), np.arange(1, n)]
    cols = [np.arange(n), np.arange(1, n)]
    if column:
        rows.append(np.arange(1, n))
        cols.append(np.zeros(n - 1, int))
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    return as_pattern(sp.csr_array((np.ones(rows.size, bool), (rows, cols)), shape=(n, n)))


def assert_bicoloring_recovers(pattern, columns, rows, seed=0):
    """Every entry of a random matrix with ``pattern`` (sparse: no dense copy) comes back
    from the forward products ``J @ S_c`` and the reverse ones ``S_r.T @ J``."""
    values = np.random.default_rng(seed).standard_normal(pattern.nnz)
    jac = sp.csr_array((values, pattern.indices, pattern.indptr), shape=pattern.shape)
    forward = jac @ seed_matrix(columns)
    reverse = (jac.T @ seed_matrix(rows)).T
    got = decompress_bidirectional(forward, reverse, pattern, columns, rows)
    np.testing.assert_array_equal(got.indices, pattern.indices)
    np.testing.assert_array_equal(got.data, values)   # each read alone: exact


# --- validity and colour counts -----------------------------------------------------------


@settings(max_examples=80, deadline=None)
@given(patterns(), st.sampled_from(DISTANCE1_ORDERS))
def test_distance2_colourings_are_valid_and_no_worse(pattern, order):
    colors = column_coloring(pattern, order)
    assert_column_coloring_valid(pattern, colors)
    rows = row_coloring(pattern, order)
    assert_column_coloring_valid(pattern.T, rows)
    longest_row = int(np.diff(pattern.indptr).max(initial=0))
    assert colors.max() + 1 >= max(longest_row, 1)
    if order == "best":
        assert colors.max() <= old_column_coloring(pattern).max()
        assert rows.max() <= old_row_coloring(pattern).max()
    jac = random_values(pattern, np.random.default_rng(1))
    got = decompress_columns(jac @ seed_matrix(colors), pattern, colors)
    np.testing.assert_array_equal(got.toarray(), jac)
    got = decompress_rows(seed_matrix(rows).T @ jac, pattern, rows)
    np.testing.assert_array_equal(got.toarray(), jac)


@settings(max_examples=60, deadline=None)
@given(patterns(square=True, max_size=12), st.sampled_from((*ORDERS, "best")))
def test_star_colourings_are_valid_and_no_worse(pattern, order):
    colors = star_coloring(pattern, order)
    assert_star_coloring_valid(pattern, colors)
    if order == "best":
        assert colors.max() <= old_star_coloring(pattern).max()
    hess = random_values(pattern, np.random.default_rng(2), symmetric=True)
    got = decompress_star(hess @ seed_matrix(colors), pattern, colors)
    np.testing.assert_array_equal(got.toarray(), hess)


@settings(max_examples=80, deadline=None)
@given(patterns())
def test_bicolourings_recover_every_entry(pattern):
    columns, rows = bicoloring(pattern)
    assert columns.shape == (pattern.shape[1],) and rows.shape == (pattern.shape[0],)
    assert_bicoloring_recovers(pattern, columns, rows)
    products = columns.max(initial=-1) + 1 + rows.max(initial=-1) + 1
    # one-sided colourings are candidates too: never more products than the better one
    assert products <= min(column_coloring(pattern).max(), row_coloring(pattern).max()) + 1


@settings(max_examples=60, deadline=None)
@given(patterns())
def test_auto_scheme_is_the_cheapest_allowed(pattern):
    one_sided = jacobian_scheme(pattern)
    forward, reverse = column_coloring(pattern).max() + 1, row_coloring(pattern).max() + 1
    assert one_sided[0] == ("forward" if forward <= reverse else "reverse")
    mode, colors, rows = jacobian_scheme(pattern, ("forward", "reverse", "bidirectional"))
    if mode == "bidirectional":
        products = colors.max(initial=-1) + rows.max(initial=-1) + 2
        assert products + 2 <= min(forward, reverse)          # clearly fewer
        assert 4 * products <= 3 * min(forward, reverse)
        assert_bicoloring_recovers(pattern, colors, rows)
    else:
        assert mode == one_sided[0]
        assert colors.max() + 1 == one_sided[1].max() + 1 == min(forward, reverse)


def test_arrow_patterns_take_few_products():
    n = 10_000
    full, half = arrow(n), arrow(n, column=False)
    mode, columns, rows = jacobian_scheme(full, ("forward", "reverse", "bidirectional"))
    assert mode == "bidirectional"
    assert columns.max() + 1 + rows.max() + 1 <= 3
    assert_bicoloring_recovers(full, columns, rows)
    mode, colors, _ = jacobian_scheme(half, ("forward", "reverse", "bidirectional"))
    assert (mode, colors.max() + 1) == ("reverse", 2)   # the dense row alone: two row colours
    assert star_coloring(full).max() + 1 == 2


def test_large_patterns_never_build_the_conflict_graph(monkeypatch):
    def refuse(self):
        raise AssertionError("the conflict graph of a large pattern was built")

    monkeypatch.setattr(Nets, "conflicts", refuse)
    pattern = arrow(3000)   # a dense row: 9e6 conflict visits, above graphs.EXACT_WORK
    assert Nets.of(pattern).conflict_work() > graphs.EXACT_WORK
    for order in DISTANCE1_ORDERS[:-2] + ("best",):
        colors = column_coloring(pattern, order)
        assert colors.max() + 1 == 3000   # the dense row needs them all
    assert_column_coloring_valid(pattern[:50, :50], column_coloring(pattern[:50, :50]))
    columns, rows = bicoloring(pattern)
    assert_bicoloring_recovers(pattern, columns, rows)


def test_grid_colourings_match_the_old_ones_or_better():
    n = 12
    lap = sp.kronsum(sp.diags_array([1.0, 1.0, 1.0], offsets=[-1, 0, 1], shape=(n, n)),
                     sp.diags_array([1.0, 1.0, 1.0], offsets=[-1, 0, 1], shape=(n, n)))
    pattern = as_pattern(lap)
    colors = column_coloring(pattern)
    assert_column_coloring_valid(pattern, colors)
    assert colors.max() <= old_column_coloring(pattern).max()
    star = star_coloring(pattern)
    assert_star_coloring_valid(pattern, star)
    assert star.max() <= old_star_coloring(pattern).max()


# --- the vectorised recolouring is the sequential greedy ----------------------------------


@pytest.mark.parametrize("extra_dense", [0, 90])
def test_class_recolouring_equals_sequential_greedy(extra_dense):
    """Iterated greedy's vectorised step (each colour class at once, bit sets in uint64
    words) gives the greedy colouring of the class-by-class order, also past 64 colours."""
    rng = np.random.default_rng(4)
    dense = rng.random((300, 200)) < 0.03
    dense[:3, :extra_dense] = True
    graph = Nets.of(as_pattern(dense))
    start = distance2.greedy(graph, rng.permutation(200))
    k = start.max() + 1
    for class_order in (np.arange(k)[::-1], rng.permutation(k)):
        fast = distance2.recolor_by_classes(graph, start, class_order)
        by_class = np.concatenate([np.flatnonzero(start == c) for c in class_order])
        np.testing.assert_array_equal(fast, distance2.greedy(graph, by_class))
        assert fast.max() <= start.max()


def test_smallest_last_orders_are_permutations_at_scale():
    pattern = arrow(2000)
    graph = Nets.of(pattern)
    assert graph.conflict_work() > graphs.EXACT_WORK   # the bound, not the exact degree
    for name in ORDERS:
        order = graphs.order_of(name, graph)
        assert np.array_equal(np.sort(order), np.arange(2000))


# --- decompression against dense AD ------------------------------------------------------


def _matrix(pattern, rng):
    return pattern.toarray() * rng.uniform(0.5, 1.5, pattern.shape)


@settings(max_examples=25, deadline=None)
@given(patterns(max_size=10), st.sampled_from(("auto", "forward", "reverse",
                                                 "bidirectional")))
def test_sparse_jacobians_equal_dense_ones(pattern, mode):
    rng = np.random.default_rng(pattern.nnz)
    a = _matrix(pattern, rng)

    def residual(x):   # Jacobian pattern: a's
        return (a @ dnp.sin(x)) * (1.0 + 0.1 * (a @ x))

    x = rng.uniform(-1, 1, pattern.shape[1])
    jac_fn = dk.sparse_jacobian(residual, mode=mode)
    got = jac_fn(x)
    np.testing.assert_allclose(got.toarray(), dk.jacfwd(residual)(x), rtol=RTOL, atol=1e-15)
    info = jac_fn.coloring(x)
    assert info.mode == mode or mode == "auto"
    given_fn = dk.sparse_jacobian(residual, sparsity=pattern, mode=mode)
    np.testing.assert_allclose(given_fn(x).toarray(), got.toarray(), rtol=RTOL, atol=1e-15)


@settings(max_examples=25, deadline=None)
@given(patterns(square=True, max_size=10))
def test_sparse_hessians_equal_dense_ones(pattern):
    rng = np.random.default_rng(pattern.nnz)
    a = _matrix(pattern, rng)
    a = a + a.T

    def energy(x):   # Hessian pattern: a's, and the diagonal
        return 0.5 * dnp.sum(dnp.sin(x) * (a @ dnp.sin(x))) + dnp.sum(dnp.cos(x))

    x = rng.uniform(-1, 1, pattern.shape[0])
    got = dk.sparse_hessian(energy)(x)
    np.testing.assert_allclose(got.toarray(), dk.hessian(energy)(x), rtol=RTOL, atol=1e-14)


def arrow_residual(x):
    """``f_0 = sum(x**2)``, ``f_i = x_i**2 + x_0 x_i``: a dense row and a dense column."""
    return dnp.concatenate([dnp.sum(x ** 2)[None], x[1:] ** 2 + x[0] * x[1:]])


def test_arrow_jacobian_is_bidirectional_and_exact():
    n = 10_000
    x = np.linspace(0.1, 1.0, n)
    jac_fn = dk.sparse_jacobian(arrow_residual)
    jac = jac_fn(x)
    info = jac_fn.coloring(x)
    assert info.mode == "bidirectional" and info.num_colors <= 3
    assert info.num_colors == len(info.seeds) + len(info.row_seeds)
    assert info.seeds.shape[1] == n and info.row_seeds.shape[1] == n
    inner = np.arange(1, n)
    rows = np.concatenate([np.zeros(n, int), inner, inner])
    cols = np.concatenate([np.arange(n), inner, np.zeros(n - 1, int)])
    values = np.concatenate([2 * x, 2 * x[1:] + x[0], x[1:]])
    expected = sp.csr_array((values, (rows, cols)), shape=(n, n))   # sums (0, 0) twice
    expected.sum_duplicates()
    np.testing.assert_array_equal(jac.indptr, expected.indptr)
    np.testing.assert_array_equal(jac.indices, expected.indices)
    np.testing.assert_allclose(jac.data, expected.data, rtol=RTOL, atol=0)


def test_bidirectional_composes_with_jit_vmap_and_chunks():
    x = np.linspace(-1.0, 1.0, 9)
    dense = dk.jacfwd(arrow_residual)(x)
    staged = dk.jit(dk.sparse_jacobian(arrow_residual, mode="bidirectional"))
    for _ in range(2):
        np.testing.assert_allclose(staged(x).toarray(), dense, rtol=RTOL)
    assert staged.cache_info().traces == 1
    xs = np.stack([x, 0.5 * x, x ** 2])
    batch = dk.vmap(dk.sparse_jacobian(arrow_residual, mode="bidirectional"))(xs)
    for k in range(3):
        np.testing.assert_allclose(batch.toarray()[k], dk.jacfwd(arrow_residual)(xs[k]),
                                   rtol=RTOL, atol=1e-15)
    chunked = dk.sparse_jacobian(arrow_residual, chunk_size=1)
    np.testing.assert_allclose(chunked(x).toarray(), dense, rtol=RTOL)


def test_gathers_index_the_flat_products():
    rng = np.random.default_rng(5)
    pattern = as_pattern(rng.random((9, 7)) < 0.4)
    jac = random_values(pattern, rng)
    colors = column_coloring(pattern)
    flat = (jac @ seed_matrix(colors)).T.ravel()
    np.testing.assert_array_equal(flat[gather_columns(pattern, colors)], jac[pattern.nonzero()])
    rows = row_coloring(pattern)
    flat = (seed_matrix(rows).T @ jac).ravel()
    np.testing.assert_array_equal(flat[gather_rows(pattern, rows)], jac[pattern.nonzero()])
    sym = as_pattern(pattern[:7] + pattern[:7].T)
    hess = random_values(sym, rng, symmetric=True)
    star = star_coloring(sym)
    flat = (hess @ seed_matrix(star)).T.ravel()
    np.testing.assert_array_equal(flat[gather_star(sym, star)], hess[sym.nonzero()])


def test_a_bicolouring_that_misses_an_entry_is_an_error():
    pattern = as_pattern(np.ones((2, 2), bool))
    with pytest.raises(OptionError, match="does not determine entry"):
        gather_bidirectional(pattern, np.array([0, 0]), np.array([-1, -1]))


def test_unknown_mode_names_bidirectional():
    with pytest.raises(OptionError, match="bidirectional"):
        dk.sparse_jacobian(arrow_residual, mode="both")
