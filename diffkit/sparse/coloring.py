"""Colourings of sparsity patterns: which columns (or rows) of a sparse Jacobian, and which
columns of a sparse symmetric Hessian, can share one derivative pass; and how to read the
derivative back from the compressed products.

A *column colouring* of an ``(m, n)`` pattern gives every column a colour such that two
columns with a nonzero in the same row never share one: a partial distance-2 colouring of
the bipartite row/column graph (Gebremedhin, Manne & Pothen, "What color is your
Jacobian? Graph coloring for computing derivatives", SIAM Review 47(4), 2005). Seeding one
JVP with the sum of the unit vectors of one colour then gives, in every row, at most one
unknown of that colour, read off directly: ``J[i, j] = B[i, colour[j]]`` with
``B = J @ S``. A *row colouring* is a column colouring of the transpose, for VJPs.

A *star colouring* of a symmetric pattern is a proper colouring of its adjacency graph in
which every path on four vertices uses at least three colours (Gebremedhin, Tarafdar,
Manne & Pothen, SIAM J. Sci. Comput. 2007). Then every off-diagonal nonzero ``H[i, j]`` is
alone in its colour in row ``i`` or in row ``j``, so it is read from one compressed
column, and the diagonal always is (direct decompression).

A *bicolouring* colours columns and rows together (``bicoloring.py``): the entries of
dense rows are read from reverse products, the others from forward ones (or the same with
dense columns), for patterns where both one-sided colourings need many colours.

The algorithms (``distance2.py``, ``star.py``, ``bicoloring.py``) work on the pattern's
index arrays (``graphs.py``) in time near-linear in its nonzeros: no conflict graph is
built beyond small patterns. Orders: ``"natural"``, ``"largest_first"``,
``"smallest_last"`` and, for column and row colourings, ``"dsatur"``; ``"best"`` tries
each that fits the pattern's size, improves each by iterated greedy, and keeps the fewest
colours (stopping at a lower bound).
"""

import numpy as np

from ..errors import OptionError, ShapeMismatchError
from ..ops.sparsity_rules import scipy_sparse
from . import bicoloring as bi
from . import distance2, star
from .graphs import ORDERS, Adjacency, Nets, check_order

__all__ = ["column_coloring", "row_coloring", "star_coloring", "bicoloring", "ORDERS",
           "seed_matrix", "decompress_columns", "decompress_rows", "decompress_star",
           "decompress_bidirectional", "as_pattern", "gather_columns", "gather_rows",
           "gather_star", "gather_bidirectional", "jacobian_scheme"]


def as_pattern(pattern, name="pattern", square=False):
    """``pattern`` (a SciPy sparse array or matrix, or a 2-D NumPy array of booleans or
    numbers) as a boolean CSR array with sorted indices and no explicit zeros."""
    sp = scipy_sparse()
    if sp.issparse(pattern):
        csr = sp.csr_array(pattern, copy=True)
        csr.data = csr.data != 0
    elif isinstance(pattern, np.ndarray) and pattern.ndim == 2:
        csr = sp.csr_array(pattern != 0)
    else:
        raise ShapeMismatchError(
            f"{name} must be a 2-D SciPy sparse array (or a 2-D NumPy array) of booleans, "
            f"not {type(pattern).__name__}"
            + (f" of {pattern.ndim} dimensions" if isinstance(pattern, np.ndarray) else ""))
    if square and csr.shape[0] != csr.shape[1]:
        raise ShapeMismatchError(f"{name} must be square, not of shape {csr.shape}")
    csr.eliminate_zeros()
    csr.sum_duplicates()   # repeated entries merged (a logical or), indices sorted
    return sp.csr_array((np.ones(csr.nnz, dtype=bool), csr.indices.copy(), csr.indptr.copy()),
                        shape=csr.shape)


# --- the colourings -----------------------------------------------------------------------


def column_coloring(pattern, order="best"):
    """A colour (an int from 0) for every column of the ``(m, n)`` pattern, such that no two
    columns of one colour have a nonzero in the same row. The number of colours is
    ``colors.max() + 1`` (0 for a pattern without columns). ``order``: one of ``ORDERS``,
    ``"dsatur"`` or ``"best"``.

    Examples:
        >>> from diffkit.sparse import column_coloring
        >>> pattern = np.array([[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1]], bool)
        >>> column_coloring(pattern).tolist()
        [0, 1, 0, 1]
        >>> column_coloring(np.eye(3, dtype=bool)).tolist()    # one colour for a diagonal
        [0, 0, 0]
        >>> column_coloring(np.ones(3, bool))
        Traceback (most recent call last):
            ...
        diffkit.errors.ShapeMismatchError: pattern must be a 2-D SciPy sparse array ...
    """
    check_order(order, ("dsatur",))
    return distance2.color(Nets.of(as_pattern(pattern)), order)


def row_coloring(pattern, order="best"):
    """A colour for every row of the pattern such that no two rows of one colour have a
    nonzero in the same column: the column colouring of the transpose.

    Examples:
        >>> import scipy.sparse
        >>> from diffkit.sparse import row_coloring
        >>> pattern = scipy.sparse.csr_array(np.array([[1, 1, 0, 0], [0, 1, 1, 0],
        ...                                            [0, 0, 1, 1]], bool))
        >>> row_coloring(pattern).tolist()    # rows 0 and 2 share no column
        [0, 1, 0]
    """
    check_order(order, ("dsatur",))
    return distance2.color(Nets.of(as_pattern(pattern)).transpose(), order)


def star_coloring(pattern, order="best"):
    """A star colouring of the symmetric ``(n, n)`` pattern: proper (no two adjacent
    vertices share a colour), and every path on four vertices uses at least three colours.
    The diagonal is ignored; an unsymmetric pattern is symmetrised first. ``order``: one of
    ``ORDERS`` or ``"best"``.

    Examples:
        >>> from diffkit.sparse import star_coloring
        >>> tridiagonal = np.eye(4, k=-1) + np.eye(4) + np.eye(4, k=1) > 0
        >>> star_coloring(tridiagonal).tolist()
        [0, 1, 0, 2]
        >>> star_coloring(np.ones((3, 4), bool))
        Traceback (most recent call last):
            ...
        diffkit.errors.ShapeMismatchError: pattern must be square, not of shape (3, 4)
    """
    check_order(order)
    pattern = as_pattern(pattern, square=True)
    symmetric = as_pattern(pattern + pattern.T)

    def with_diagonal():
        eye = scipy_sparse().eye_array(pattern.shape[0], dtype=bool)
        return Nets.of(as_pattern(symmetric + eye))

    return star.color(Adjacency.of(symmetric), with_diagonal, order)


def bicoloring(pattern, order="best"):
    """A bidirectional colouring of the ``(m, n)`` pattern: ``(column_colors,
    row_colors)``, one colour per column and per row, -1 for a line in no seed. Entries are
    read from the forward products ``J @ S_c`` (the column colours) or the reverse ones
    ``S_r.T @ J`` (the row colours), ``gather_bidirectional`` says which; the number of
    products is the column colours plus the row colours. The split (or one-sided
    colouring) with the fewest products."""
    check_order(order, ("dsatur",))
    _, colors, rows = jacobian_scheme(pattern, ("bidirectional",), order)
    return colors, rows


def _one_sided(graph, order, side, memo):
    """A column (``"forward"``) or row colouring; a symmetric pattern's row colouring is
    its column colouring (``memo`` keeps the first one made)."""
    if graph.is_symmetric() and memo:
        return memo[0], None
    colors = distance2.color(graph if side == "forward" else graph.transpose(), order)
    memo.append(colors)
    return colors, None


def jacobian_scheme(pattern, sides=("forward", "reverse"), order="best"):
    """``(mode, colors, row_colors)``: the colouring of the Jacobian pattern with the
    fewest products among ``sides`` (``"forward"``, ``"reverse"``, ``"bidirectional"``).
    A bidirectional one must beat the one-sided ones clearly (``bicoloring.penalized``)
    when they are allowed too; on a tie forward comes first, then reverse. ``row_colors``
    is None but for ``"bidirectional"``; with ``"reverse"`` ``colors`` colour the rows.

    Candidates are taken in order of a lower bound of their products (the longest row for
    forward, the longest column for reverse, ``bicoloring.Split.bound``), and skipped when
    it cannot beat the best so far: a one-sided colouring that cannot win is never
    computed (a dense row asks a column colouring for a colour per column)."""
    csr = as_pattern(pattern)
    graph, memo = Nets.of(csr), []
    only_bidirectional = tuple(sides) == ("bidirectional",)
    worth = (lambda k: k) if only_bidirectional else bi.penalized
    candidates = []   # (bound, rank, mode, make)
    if "forward" in sides or only_bidirectional:
        candidates.append((distance2.lower_bound(graph), 0, "forward",
                           lambda: _one_sided(graph, order, "forward", memo)))
    if "reverse" in sides or only_bidirectional:
        candidates.append((distance2.lower_bound(graph.transpose()), 1, "reverse",
                           lambda: _one_sided(graph, order, "reverse", memo)))
    if "bidirectional" in sides:
        for split in bi.splits(csr):
            candidates.append((worth(split.bound), 2, "bidirectional",
                               lambda s=split: bi.evaluate(csr, s, order)))
    candidates.sort(key=lambda c: c[:2])
    best = None   # (worth, rank, mode, colors, row_colors)
    for bound, rank, mode, make in candidates:
        if best is not None and (bound, rank) >= best[:2]:
            break
        colors, rows = make()
        if mode == "bidirectional":
            worth_now = worth(bi.products(colors) + bi.products(rows))
        else:
            worth_now = int(colors.max(initial=-1)) + 1
        if best is None or (worth_now, rank) < best[:2]:
            best = (worth_now, rank, mode, colors, rows)
    _, _, mode, colors, rows = best
    if only_bidirectional and mode != "bidirectional":   # one-sided, as a bicolouring
        none = np.full(csr.shape[0 if mode == "forward" else 1], -1, np.intp)
        colors, rows = (colors, none) if mode == "forward" else (none, colors)
        mode = "bidirectional"
    return mode, colors, rows


# --- seeds and decompression --------------------------------------------------------------


def seed_matrix(colors, dtype=np.float64):
    """The dense ``(n, k)`` seed matrix: ``S[j, colors[j]] = 1``, ``k`` the number of
    colours; a negative colour puts its line in no seed."""
    colors = np.asarray(colors)
    n = len(colors)
    seeds = np.zeros((n, int(colors.max(initial=-1)) + 1), dtype=dtype)
    coloured = np.flatnonzero(colors >= 0)
    seeds[coloured, colors[coloured]] = 1
    return seeds


def decompress_columns(compressed, pattern, colors):
    """The CSR Jacobian with ``pattern``'s structure from ``compressed = J @ S``
    (``(m, k)``) for a column colouring."""
    rows, cols = _coordinates(pattern)
    values = compressed[rows, colors[cols]] if len(rows) else np.zeros(0, compressed.dtype)
    return _csr(values, pattern)


def decompress_rows(compressed, pattern, colors):
    """The CSR Jacobian with ``pattern``'s structure from ``compressed = S.T @ J``
    (``(k, n)``) for a row colouring."""
    rows, cols = _coordinates(pattern)
    values = compressed[colors[rows], cols] if len(rows) else np.zeros(0, compressed.dtype)
    return _csr(values, pattern)


def decompress_star(compressed, pattern, colors):
    """The CSR Hessian with the symmetric ``pattern``'s structure from
    ``compressed = H @ S`` (``(n, k)``) for a star colouring: each entry ``H[i, j]`` is read
    in row ``i`` when ``j`` is the only neighbour of ``i`` with its colour, else in row
    ``j`` (the star property guarantees one of the two)."""
    take = gather_star(pattern, colors)
    return _csr(np.asarray(compressed).T.ravel()[take], pattern)


def decompress_bidirectional(forward, reverse, pattern, column_colors, row_colors):
    """The CSR Jacobian with ``pattern``'s structure from ``forward = J @ S_c``
    (``(m, kc)``) and ``reverse = S_r.T @ J`` (``(kr, n)``) for a bicolouring."""
    take = gather_bidirectional(pattern, column_colors, row_colors)
    flat = np.concatenate([np.asarray(forward).T.ravel(), np.asarray(reverse).ravel()])
    return _csr(flat[take], pattern)


# Decompression as one gather: for compressed results laid out colour first (``(k, m)``
# for a batched JVP or VJP, one row per colour), the flat position of each stored entry of
# the pattern, in CSR order. Computed once per colouring.


def gather_columns(pattern, colors):
    """For ``B.T`` (``(k, m)``), ``B = J @ S``: entry ``(i, j)`` is ``B[i, colors[j]]``."""
    rows, cols = _coordinates(pattern)
    return colors[cols] * pattern.shape[0] + rows


def gather_rows(pattern, colors):
    """For ``B = S.T @ J`` (``(k, n)``): entry ``(i, j)`` is ``B[colors[i], j]``."""
    rows, cols = _coordinates(pattern)
    return colors[rows] * pattern.shape[1] + cols


def _alone(rows, keys, rows_count):
    """Per entry, whether its key (a colour, -1 for none) is held by no other entry of its
    row: counted by ``bincount`` over (row, key) when that table is small, else sorted."""
    k = int(keys.max(initial=-1)) + 1
    if k == 0:
        return np.zeros(len(keys), bool)
    coded = rows * k + keys
    valid = keys >= 0
    if rows_count * k <= 4 * len(rows) + 4096:
        counts = np.bincount(coded[valid], minlength=rows_count * k)
        return valid & (counts[np.where(valid, coded, 0)] == 1)
    by_key = np.argsort(coded, kind="stable")
    ordered = coded[by_key]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    sizes = np.diff(np.r_[starts, len(ordered)])
    alone = np.empty(len(coded), bool)
    alone[by_key] = np.repeat(sizes == 1, sizes)
    return valid & alone


def gather_star(pattern, colors):
    """For ``B.T`` (``(k, n)``), ``B = H @ S``, a star colouring (see ``decompress_star``)."""
    rows, cols = _coordinates(pattern)
    if not len(rows):
        return np.zeros(0, np.intp)
    n = pattern.shape[0]
    direct = _alone(rows, colors[cols], n) | (rows == cols)
    return np.where(direct, colors[cols] * n + rows, colors[rows] * n + cols)


def gather_bidirectional(pattern, column_colors, row_colors):
    """For ``concatenate([(J @ S_c).T.ravel(), (S_r.T @ J).ravel()])``: entry ``(i, j)`` is
    read from the forward products when column ``j`` is alone in its colour among the
    coloured columns of row ``i``, else from the reverse ones (where row ``i`` must then be
    alone in its colour among the coloured rows of column ``j``)."""
    rows, cols = _coordinates(pattern)
    m, n = pattern.shape
    forward = _alone(rows, column_colors[cols], m)
    backward = _alone(cols, row_colors[rows], n)
    if not np.all(forward | backward):
        i = int(np.flatnonzero(~(forward | backward))[0])
        raise OptionError(
            f"the bicolouring does not determine entry ({rows[i]}, {cols[i]}): column "
            f"{cols[i]} shares its colour {column_colors[cols[i]]} in row {rows[i]}, and "
            f"row {rows[i]} its colour {row_colors[rows[i]]} in column {cols[i]}")
    offset = (int(column_colors.max(initial=-1)) + 1) * m
    return np.where(forward, column_colors[cols] * m + rows,
                    offset + row_colors[rows] * n + cols)


def from_gather(compressed, take, pattern):
    """The CSR array with ``pattern``'s structure holding ``compressed.ravel()[take]``."""
    return _csr(np.asarray(compressed).ravel()[take], pattern)


def _coordinates(pattern):
    rows = np.repeat(np.arange(pattern.shape[0]), np.diff(pattern.indptr))
    return rows, pattern.indices.astype(np.intp, copy=False)


def _csr(values, pattern):
    sp = scipy_sparse()
    return sp.csr_array((values, pattern.indices.copy(), pattern.indptr.copy()),
                        shape=pattern.shape)
