"""Colourings of sparsity patterns: which columns (or rows) of a sparse Jacobian, and which
columns of a sparse symmetric Hessian, can share one derivative pass.

A *column colouring* of an ``(m, n)`` pattern gives every column a colour such that two
columns with a nonzero in the same row never share one (a distance-2 colouring of the
bipartite row/column graph, i.e. a proper colouring of the column intersection graph).
Seeding one JVP with the sum of the unit vectors of one colour then gives, in every row,
at most one unknown of that colour, read off directly: ``J[i, j] = B[i, colour[j]]`` with
``B = J @ S``. A *row colouring* is a column colouring of the transpose, for VJPs.

A *star colouring* of a symmetric pattern is a proper colouring of its adjacency graph in
which every path on four vertices uses at least three colours. Then every off-diagonal
nonzero ``H[i, j]`` is alone in its colour in row ``i`` or in row ``j``, so it is read from
one compressed column, and the diagonal always is (direct decompression).

Every colouring here is greedy: vertices are taken in an order and get the smallest colour
their constraints allow. Orders: ``"natural"``, ``"largest_first"`` (highest degree first)
and ``"smallest_last"`` (repeatedly set aside a vertex of smallest remaining degree; colour
in the reverse order of removal). Column and row colourings also take ``"dsatur"`` (Brélaz:
next, the vertex whose neighbours already use the most colours). ``"best"`` tries each and
keeps the fewest colours.
"""

import heapq

import numpy as np

from ..errors import OptionError, ShapeMismatchError
from ..ops.sparsity_rules import scipy_sparse

__all__ = ["column_coloring", "row_coloring", "star_coloring", "ORDERS",
           "seed_matrix", "decompress_columns", "decompress_rows", "decompress_star",
           "as_pattern", "gather_columns", "gather_rows", "gather_star"]

ORDERS = ("natural", "largest_first", "smallest_last")


def as_pattern(pattern, name="pattern", square=False):
    """``pattern`` (a SciPy sparse array or matrix, or a 2-D NumPy array of booleans or
    numbers) as a boolean CSR array with sorted indices and no explicit zeros."""
    sp = scipy_sparse()
    if sp.issparse(pattern):
        csr = sp.csr_array(pattern, copy=True)
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
    csr.sort_indices()
    out = sp.csr_array((np.ones(csr.nnz, dtype=bool), csr.indices.copy(), csr.indptr.copy()),
                       shape=csr.shape)
    return out


def _adjacency(graph):
    """``(indptr, indices)`` of a symmetric boolean CSR graph without its diagonal."""
    sp = scipy_sparse()
    graph = sp.csr_array(graph, dtype=bool)
    graph.setdiag(False)
    graph.eliminate_zeros()
    graph.sort_indices()
    return graph.indptr, graph.indices


def _order(indptr, indices, order):
    n = len(indptr) - 1
    degree = np.diff(indptr)
    if order == "natural":
        return np.arange(n)
    if order == "largest_first":
        return np.argsort(-degree, kind="stable")
    if order == "smallest_last":
        return _smallest_last(indptr, indices, degree)
    raise OptionError(f"unknown vertex order {order!r}; use one of {', '.join(ORDERS)}, "
                      "'dsatur' (column and row colourings) or 'best'")


def _smallest_last(indptr, indices, degree):
    """The smallest-last order (Matula and Beck) with bucket lists: O(vertices + edges)."""
    n = len(degree)
    degree = degree.tolist()
    buckets = [set() for _ in range(max(degree, default=0) + 1)]
    for v, d in enumerate(degree):
        buckets[d].add(v)
    removed = [False] * n
    removal = []
    low = 0
    ip, ix = indptr.tolist(), indices.tolist()
    for _ in range(n):
        low = max(low - 1, 0)
        while not buckets[low]:
            low += 1
        v = buckets[low].pop()
        removed[v] = True
        removal.append(v)
        for w in ix[ip[v]:ip[v + 1]]:
            if not removed[w]:
                d = degree[w]
                buckets[d].discard(w)
                degree[w] = d - 1
                buckets[d - 1].add(w)
    return np.array(removal[::-1], dtype=np.intp)


def _greedy_distance1(indptr, indices, order):
    n = len(indptr) - 1
    colors = np.full(n, -1, dtype=np.intp)
    mark = np.full(n + 1, -1, dtype=np.intp)
    for v in order:
        used = colors[indices[indptr[v]:indptr[v + 1]]]
        used = used[used >= 0]
        mark[used] = v
        c = 0
        while mark[c] == v:
            c += 1
        colors[v] = c
    return colors


def _dsatur(indptr, indices):
    """Brélaz's greedy colouring: always colour next the uncoloured vertex whose
    neighbours use the most distinct colours (ties: the higher degree, then the lower
    number). A heap with lazy deletion keeps it O((vertices + edges) log vertices)."""
    n = len(indptr) - 1
    ip, ix = indptr.tolist(), indices.tolist()
    degree = [ip[v + 1] - ip[v] for v in range(n)]
    colors = [-1] * n
    seen = [set() for _ in range(n)]
    heap = [(0, -degree[v], v) for v in range(n)]
    heapq.heapify(heap)
    while heap:
        negsat, _, v = heapq.heappop(heap)
        if colors[v] >= 0 or -negsat != len(seen[v]):
            continue   # coloured already, or a stale entry
        c = 0
        while c in seen[v]:
            c += 1
        colors[v] = c
        for w in ix[ip[v]:ip[v + 1]]:
            if colors[w] < 0 and c not in seen[w]:
                seen[w].add(c)
                heapq.heappush(heap, (-len(seen[w]), -degree[w], w))
    return np.array(colors, dtype=np.intp)


def _best(color_one, order, extra=()):
    orders = ORDERS + extra if order == "best" else (order,)
    best = None
    for name in orders:
        colors = color_one(name)
        if best is None or colors.max(initial=-1) < best.max(initial=-1):
            best = colors
    return best


def column_coloring(pattern, order="best"):
    """A colour (an int from 0) for every column of the ``(m, n)`` pattern, such that no two
    columns of one colour have a nonzero in the same row. The number of colours is
    ``colors.max() + 1`` (0 for a pattern without columns)."""
    sp = scipy_sparse()
    pattern = as_pattern(pattern)
    csc = sp.csc_array(pattern).astype(np.int32)
    intersection = (csc.T @ csc).tocsr()
    indptr, indices = _adjacency(intersection)

    def color_one(name):
        if name == "dsatur":
            return _dsatur(indptr, indices)
        return _greedy_distance1(indptr, indices, _order(indptr, indices, name))

    return _best(color_one, order, ("dsatur",))


def row_coloring(pattern, order="best"):
    """A colour for every row of the pattern such that no two rows of one colour have a
    nonzero in the same column: the column colouring of the transpose."""
    return column_coloring(as_pattern(pattern).T, order)


def _greedy_star(indptr, indices, order):
    """Greedy star colouring: each vertex gets the smallest colour that is proper and
    creates no path on four vertices coloured with two colours alone."""
    n = len(indptr) - 1
    ip, ix = indptr.tolist(), indices.tolist()
    colors = [-1] * n
    for v in order.tolist():
        forbidden = set()
        nbrs = ix[ip[v]:ip[v + 1]]
        for w in nbrs:
            cw = colors[w]
            if cw < 0:
                continue
            forbidden.add(cw)
            # v - w - x - y with colour(x) = colour(v) and colour(y) = colour(w)
            for x in ix[ip[w]:ip[w + 1]]:
                cx = colors[x]
                if x == v or cx < 0 or cx in forbidden:
                    continue
                for y in ix[ip[x]:ip[x + 1]]:
                    if y != w and colors[y] == cw:
                        forbidden.add(cx)
                        break
        # w - v - x - y with colour(w) = colour(x) and colour(y) = colour(v)
        by_color = {}
        for w in nbrs:
            if colors[w] >= 0:
                by_color.setdefault(colors[w], []).append(w)
        for same in by_color.values():
            if len(same) < 2:
                continue
            for x in same:
                for y in ix[ip[x]:ip[x + 1]]:
                    if y != v and colors[y] >= 0 and colors[y] != colors[x]:
                        forbidden.add(colors[y])
        c = 0
        while c in forbidden:
            c += 1
        colors[v] = c
    return np.array(colors, dtype=np.intp)


def star_coloring(pattern, order="best"):
    """A star colouring of the symmetric ``(n, n)`` pattern: proper (no two adjacent
    vertices share a colour), and every path on four vertices uses at least three colours.
    The diagonal is ignored; an unsymmetric pattern is symmetrised first."""
    pattern = as_pattern(pattern, square=True)
    symmetric = pattern + pattern.T
    indptr, indices = _adjacency(symmetric)
    return _best(lambda name: _greedy_star(indptr, indices, _order(indptr, indices, name)),
                 order)


def seed_matrix(colors, dtype=np.float64):
    """The dense ``(n, k)`` seed matrix: ``S[j, colors[j]] = 1``, ``k`` the number of
    colours."""
    n = len(colors)
    seeds = np.zeros((n, int(colors.max(initial=-1)) + 1), dtype=dtype)
    seeds[np.arange(n), colors] = 1
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
    return _csr(compressed.T.ravel()[take], pattern)


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


def gather_star(pattern, colors):
    """For ``B.T`` (``(k, n)``), ``B = H @ S``, a star colouring (see ``decompress_star``)."""
    sp = scipy_sparse()
    rows, cols = _coordinates(pattern)
    if not len(rows):
        return np.zeros(0, np.intp)
    n = pattern.shape[0]
    counts = (sp.csr_array(pattern, dtype=np.int32)
              @ sp.csr_array(seed_matrix(colors, np.int32))).toarray()
    direct = (counts[rows, colors[cols]] == 1) | (rows == cols)
    return np.where(direct, colors[cols] * n + rows, colors[rows] * n + cols)


def from_gather(compressed, take, pattern):
    """The CSR array with ``pattern``'s structure holding ``compressed.ravel()[take]``."""
    return _csr(np.asarray(compressed).ravel()[take], pattern)


def _coordinates(pattern):
    rows = np.repeat(np.arange(pattern.shape[0]), np.diff(pattern.indptr))
    return rows, pattern.indices


def _csr(values, pattern):
    sp = scipy_sparse()
    return sp.csr_array((values, pattern.indices.copy(), pattern.indptr.copy()),
                        shape=pattern.shape)
