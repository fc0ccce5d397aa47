"""The colourings of diffkit before issue 30 (greedy on the column intersection graph,
which it builds): the reference the new colourings must not need more colours than, on
small patterns. Kept as it was, for the tests only."""

import heapq

import numpy as np
import scipy.sparse as sp

ORDERS = ("natural", "largest_first", "smallest_last")


def _adjacency(graph):
    """``(indptr, indices)`` of a symmetric boolean CSR graph without its diagonal."""
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
    raise ValueError(order)


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
    pattern = sp.csr_array(pattern, dtype=bool)
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
    return column_coloring(sp.csr_array(pattern, dtype=bool).T, order)


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
    pattern = sp.csr_array(pattern, dtype=bool)
    symmetric = pattern + pattern.T
    indptr, indices = _adjacency(symmetric)
    return _best(lambda name: _greedy_star(indptr, indices, _order(indptr, indices, name)),
                 order)
