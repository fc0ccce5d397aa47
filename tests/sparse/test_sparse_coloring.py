"""Colourings of sparsity patterns: valid (the constraint each one promises), decompression
recovers every entry, and the number of colours stays at the known bounds."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from diffkit.errors import OptionError, ShapeMismatchError
from diffkit.sparse.coloring import (
    ORDERS,
    as_pattern,
    column_coloring,
    decompress_columns,
    decompress_rows,
    decompress_star,
    row_coloring,
    seed_matrix,
    star_coloring,
)

ALL_ORDERS = (*ORDERS, "best")
DISTANCE1_ORDERS = (*ALL_ORDERS, "dsatur")   # column and row colourings


def banded(n, lower, upper):
    rows, cols = np.nonzero(np.abs(np.subtract.outer(np.arange(n), np.arange(n))) >= 0)
    keep = (cols - rows <= upper) & (rows - cols <= lower)
    return as_pattern(sp.csr_array((np.ones(keep.sum(), bool), (rows[keep], cols[keep])),
                                   shape=(n, n)))


def block_diagonal(blocks, size):
    return as_pattern(sp.block_diag([np.ones((size, size))] * blocks))


def arrow(n):
    dense = np.eye(n, dtype=bool)
    dense[0, :] = dense[:, 0] = True
    return as_pattern(dense)


def assert_column_coloring_valid(pattern, colors):
    pattern = as_pattern(pattern)
    assert colors.shape == (pattern.shape[1],)
    for row in range(pattern.shape[0]):
        cols = pattern.indices[pattern.indptr[row]:pattern.indptr[row + 1]]
        assert len(set(colors[cols].tolist())) == len(cols), f"row {row} repeats a colour"


def assert_star_coloring_valid(pattern, colors):
    pattern = as_pattern(pattern)
    graph = (pattern + pattern.T).toarray()
    np.fill_diagonal(graph, False)
    n = graph.shape[0]
    neighbours = [np.flatnonzero(graph[v]).tolist() for v in range(n)]
    for v in range(n):
        for w in neighbours[v]:
            assert colors[v] != colors[w], f"adjacent {v} and {w} share a colour"
    # every path a-b-c-d (distinct vertices) uses at least three colours
    for a in range(n):
        for b in neighbours[a]:
            for c in neighbours[b]:
                if c == a:
                    continue
                for d in neighbours[c]:
                    if d in (a, b):
                        continue
                    assert len({colors[a], colors[b], colors[c], colors[d]}) >= 3, \
                        f"path {a}-{b}-{c}-{d} has two colours"


def random_values(pattern, rng, symmetric=False):
    dense = pattern.toarray() * rng.standard_normal(pattern.shape)
    if symmetric:
        dense = np.triu(dense) + np.triu(dense, 1).T
    return dense


def assert_decompression_recovers(pattern, seed=0):
    rng = np.random.default_rng(seed)
    jac = random_values(pattern, rng)
    colors = column_coloring(pattern)
    got = decompress_columns(jac @ seed_matrix(colors), pattern, colors)
    np.testing.assert_array_equal(got.toarray(), jac)
    colors = row_coloring(pattern)
    got = decompress_rows(seed_matrix(colors).T @ jac, pattern, colors)
    np.testing.assert_array_equal(got.toarray(), jac)


def assert_star_decompression_recovers(pattern, seed=0):
    rng = np.random.default_rng(seed)
    pattern = as_pattern(pattern + pattern.T)
    hess = random_values(pattern, rng, symmetric=True)
    colors = star_coloring(pattern)
    got = decompress_star(hess @ seed_matrix(colors), pattern, colors)
    np.testing.assert_array_equal(got.toarray(), hess)


@pytest.mark.parametrize("order", ALL_ORDERS)
def test_tridiagonal_needs_three_colours(order):
    pattern = banded(12, 1, 1)
    colors = column_coloring(pattern, order)
    assert_column_coloring_valid(pattern, colors)
    assert colors.max() + 1 == 3
    assert row_coloring(pattern, order).max() + 1 == 3
    star = star_coloring(pattern, order)
    assert_star_coloring_valid(pattern, star)
    assert star.max() + 1 <= 3


@pytest.mark.parametrize("lower, upper", [(2, 2), (1, 3), (0, 4), (3, 0)])
def test_banded_patterns_take_the_bandwidth(lower, upper):
    pattern = banded(20, lower, upper)
    colors = column_coloring(pattern)
    assert_column_coloring_valid(pattern, colors)
    assert colors.max() + 1 == lower + upper + 1   # the densest row is a lower bound
    assert_decompression_recovers(pattern)
    if lower == upper:
        star = star_coloring(pattern)
        assert_star_coloring_valid(pattern, star)
        assert star.max() + 1 <= 2 * lower + 1
        assert_star_decompression_recovers(pattern)


def test_block_diagonal_takes_one_block():
    pattern = block_diagonal(6, 4)
    assert column_coloring(pattern).max() + 1 == 4
    assert row_coloring(pattern).max() + 1 == 4
    star = star_coloring(pattern)
    assert_star_coloring_valid(pattern, star)
    assert star.max() + 1 == 4
    assert_decompression_recovers(pattern)
    assert_star_decompression_recovers(pattern)


def test_arrow_pattern():
    # the dense first row joins every column: column colouring needs n colours, but the
    # rows below it are disjoint, so the row colouring needs 2; a star colouring needs 2
    n = 15
    pattern = arrow(n)
    assert column_coloring(pattern).max() + 1 == n
    assert row_coloring(pattern).max() + 1 == n
    half = as_pattern(sp.csr_array(np.vstack([np.ones((1, n)), np.eye(n)[1:]])))
    assert row_coloring(half).max() + 1 == 2
    assert column_coloring(half).max() + 1 == n
    star = star_coloring(pattern)
    assert_star_coloring_valid(pattern, star)
    assert star.max() + 1 == 2
    assert_decompression_recovers(pattern)
    assert_star_decompression_recovers(pattern)


def test_diagonal_and_empty_patterns():
    eye = as_pattern(sp.eye_array(7))
    assert column_coloring(eye).max() + 1 == 1
    assert star_coloring(eye).max() + 1 == 1
    assert_star_decompression_recovers(eye)
    empty = as_pattern(sp.csr_array((4, 5), dtype=bool))
    assert column_coloring(empty).max() + 1 == 1   # unconstrained columns share colour 0
    assert column_coloring(as_pattern(sp.csr_array((3, 0), dtype=bool))).size == 0
    assert_decompression_recovers(empty)


def test_two_dimensional_laplacian():
    n = 6
    lap = sp.kronsum(sp.diags_array([1.0, 1.0, 1.0], offsets=[-1, 0, 1], shape=(n, n)),
                     sp.diags_array([1.0, 1.0, 1.0], offsets=[-1, 0, 1], shape=(n, n)))
    pattern = as_pattern(lap)
    colors = column_coloring(pattern)
    assert_column_coloring_valid(pattern, colors)
    assert colors.max() + 1 <= 7
    star = star_coloring(pattern)
    assert_star_coloring_valid(pattern, star)
    assert star.max() + 1 <= 6
    assert_decompression_recovers(pattern)
    assert_star_decompression_recovers(pattern)


def test_bad_patterns_and_orders():
    with pytest.raises(ShapeMismatchError, match="2-D SciPy sparse array"):
        column_coloring([[1, 0], [0, 1]])
    with pytest.raises(ShapeMismatchError, match="3 dimensions"):
        column_coloring(np.ones((2, 2, 2)))
    with pytest.raises(ShapeMismatchError, match="square"):
        star_coloring(np.ones((2, 3)))
    with pytest.raises(OptionError, match="smallest_last"):
        column_coloring(np.eye(3), order="random")
    with pytest.raises(OptionError, match="dsatur"):
        star_coloring(np.eye(3), order="dsatur")   # not a star colouring


@st.composite
def patterns(draw, square=False):
    m = draw(st.integers(1, 12))
    n = m if square else draw(st.integers(1, 12))
    density = draw(st.floats(0.0, 0.6))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    dense = rng.random((m, n)) < density
    if square:
        dense = dense | dense.T
    return as_pattern(dense)


@settings(max_examples=60, deadline=None)
@given(patterns(), st.sampled_from(DISTANCE1_ORDERS))
def test_random_column_and_row_colourings_are_valid(pattern, order):
    colors = column_coloring(pattern, order)
    assert_column_coloring_valid(pattern, colors)
    rows = row_coloring(pattern, order)
    assert_column_coloring_valid(pattern.T, rows)
    # no colouring needs fewer colours than the densest row has nonzeros
    densest = int(np.diff(pattern.indptr).max(initial=0))
    assert colors.max() + 1 >= densest
    assert_decompression_recovers(pattern)


@settings(max_examples=60, deadline=None)
@given(patterns(square=True), st.sampled_from(ALL_ORDERS))
def test_random_star_colourings_are_valid(pattern, order):
    colors = star_coloring(pattern, order)
    assert_star_coloring_valid(pattern, colors)
    assert_star_decompression_recovers(pattern)


def test_best_is_no_worse_than_each_order():
    rng = np.random.default_rng(3)
    for _ in range(5):
        pattern = as_pattern(rng.random((30, 30)) < 0.1)
        best = column_coloring(pattern).max()
        assert all(best <= column_coloring(pattern, o).max() for o in DISTANCE1_ORDERS)
        best = star_coloring(pattern).max()
        assert all(best <= star_coloring(pattern, o).max() for o in ORDERS)


def test_orders_are_permutations():
    from diffkit.sparse.graphs import Adjacency, Nets, order_of
    pattern = as_pattern(np.random.default_rng(1).random((25, 25)) < 0.2)
    graphs = (Adjacency.of(as_pattern(pattern + pattern.T)), Nets.of(pattern),
              Nets.of(pattern).transpose())
    for graph in graphs:
        for order in ORDERS:
            assert sorted(order_of(order, graph).tolist()) == list(range(25))
