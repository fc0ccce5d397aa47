"""The graphs the colourings work on, held as the index arrays of SciPy sparse arrays, and
the vertex orders of the greedy colourings.

A column colouring of an ``(m, n)`` pattern works on its *bipartite graph* (Gebremedhin,
Manne & Pothen, "What color is your Jacobian? Graph coloring for computing derivatives",
SIAM Review 47(4), 2005): a vertex per column, a *net* per row, the row's
nonzeros joining the columns it holds. Two columns conflict when they share a net, so a
net's columns all take distinct colours. ``Nets`` keeps both directions, the nets of each
vertex (CSC) and the vertices of each net (CSR), and nothing else: the column
intersection (conflict) graph, whose edges number up to the sum of the squared row lengths
(quadratic in a dense row), is built only for small patterns, where it gives exact
degrees (below). A row colouring is the column colouring of the transpose: the same
arrays, swapped.

A star colouring works on the adjacency graph of a symmetric pattern (``Adjacency``): the
pattern without its diagonal, symmetrised, as one CSR index pair.

Orders (each a permutation of the vertices, computed in near-linear time):

- ``natural``: ``0, 1, ..., n - 1``;
- ``largest_first``: by decreasing degree, ties in natural order (Welsh & Powell). For a
  column colouring the degree is the distance-2 degree counted with repetition, the sum
  over the column's rows of their other nonzeros: an upper bound of the number of
  columns it conflicts with, computed in O(nnz) where the exact count needs the sum of
  squared row lengths;
- ``smallest_last`` (Matula & Beck, "Smallest-last ordering and clustering and graph
  coloring algorithms", J. ACM 30(3), 1983): repeatedly set aside a vertex of smallest
  degree among those left, and colour in the reverse order of removal. Exact on an
  adjacency graph (a set of vertices per degree, O(vertices + edges)); on a bipartite
  graph the degree is the bound above over the rows' remaining nonzeros, refreshed when a
  vertex reaches the front of a heap (degrees only fall, so a stale key is an upper
  bound): O(nnz + n log n), where keeping every degree current would cost the sum of
  squared row lengths.

On small bipartite graphs (a sum of squared row lengths up to ``EXACT_WORK``) both orders
use the exact distance-2 degrees, on the conflict graph built from the nets
(``Nets.conflicts``); it is never built for larger ones.
"""

import heapq

import numpy as np

from ..errors import OptionError

__all__ = ["Nets", "Adjacency", "order_of", "check_order", "ORDERS", "distance1_coloring"]

ORDERS = ("natural", "largest_first", "smallest_last")
EXACT_WORK = 5e5   # distance-2 degrees are counted exactly up to this many conflict visits


class Nets:
    """The bipartite graph of a boolean pattern seen from its columns: ``ptr``/``nets``
    give the rows (nets) of each column (the CSC index arrays), ``net_ptr``/``members``
    the columns of each row (CSR). ``n`` vertices (columns), ``m`` nets (rows)."""

    __slots__ = ("ptr", "nets", "net_ptr", "members", "_conflicts")

    def __init__(self, ptr, nets, net_ptr, members):
        self.ptr, self.nets, self.net_ptr, self.members = ptr, nets, net_ptr, members
        self._conflicts = None

    @classmethod
    def of(cls, csr):
        """The columns' view of the boolean CSR array ``csr`` (sorted, no duplicates)."""
        csc = csr.tocsc()
        csc.sort_indices()
        as_int = np.intp
        return cls(csc.indptr.astype(as_int), csc.indices.astype(as_int),
                   csr.indptr.astype(as_int), csr.indices.astype(as_int))

    @property
    def n(self):
        return len(self.ptr) - 1

    @property
    def m(self):
        return len(self.net_ptr) - 1

    def is_symmetric(self):
        """Whether the pattern is square and equal to its transpose."""
        return self.n == self.m and np.array_equal(self.ptr, self.net_ptr) \
            and np.array_equal(self.nets, self.members)

    def transpose(self):
        """The rows' view: rows become the vertices, columns the nets."""
        return Nets(self.net_ptr, self.members, self.ptr, self.nets)

    def vertex_lengths(self):
        return np.diff(self.ptr)

    def net_lengths(self):
        return np.diff(self.net_ptr)

    def conflict_work(self):
        """The sum of the squared net lengths: the number of (vertex, vertex) pairs an
        exact distance-2 neighbourhood scan would visit."""
        lengths = self.net_lengths().astype(np.float64)
        return float(lengths @ lengths)

    def conflicts(self):
        """The conflict (column intersection) graph as an ``Adjacency``: vertices joined
        when they share a net. Its size is up to ``conflict_work()``: for small graphs
        (made once, kept)."""
        if self._conflicts is None:
            self._conflicts = self._make_conflicts()
        return self._conflicts

    def _make_conflicts(self):
        lengths = self.net_lengths()
        owner_net = np.repeat(np.arange(self.m), lengths)         # the net of each entry
        repeats = lengths[owner_net]                               # pairs per entry
        first = np.repeat(self.members, repeats)
        starts = np.repeat(self.net_ptr[owner_net], repeats)
        within = np.arange(int(repeats.sum())) - np.repeat(np.cumsum(repeats) - repeats,
                                                           repeats)
        second = self.members[starts + within]
        apart = first != second
        n = self.n
        first, second = np.divmod(distinct(first[apart] * n + second[apart]), n)
        ptr = np.zeros(n + 1, np.intp)
        np.cumsum(np.bincount(first, minlength=n), out=ptr[1:])
        return Adjacency(ptr, second.astype(np.intp))

    def degree_bound(self):
        """Per vertex, the sum over its nets of their other members: at least the number
        of vertices it conflicts with (equal when no two nets share two members)."""
        per_entry = self.net_lengths()[self.nets] - 1
        owners = np.repeat(np.arange(self.n), self.vertex_lengths())
        return np.bincount(owners, weights=per_entry, minlength=self.n).astype(np.intp)


def distinct(keys):
    """The sorted distinct values of the integer array ``keys`` (a sort and a comparison:
    NumPy's ``unique`` may take a slower hash table)."""
    keys = np.sort(keys)
    keep = np.ones(len(keys), bool)
    keep[1:] = keys[1:] != keys[:-1]
    return keys[keep]


class Adjacency:
    """The adjacency graph of a symmetric pattern: the neighbours of vertex ``v`` are
    ``idx[ptr[v]:ptr[v + 1]]`` (sorted; no loops)."""

    __slots__ = ("ptr", "idx")

    def __init__(self, ptr, idx):
        self.ptr, self.idx = ptr, idx

    @classmethod
    def of(cls, symmetric_csr):
        """The adjacency graph of a symmetric boolean CSR array in canonical form (sorted
        indices, no duplicates): its entries without the diagonal."""
        n = symmetric_csr.shape[0]
        lengths = np.diff(symmetric_csr.indptr)
        rows = np.repeat(np.arange(n), lengths)
        cols = symmetric_csr.indices.astype(np.intp)
        off = cols != rows
        ptr = np.zeros(n + 1, np.intp)
        np.cumsum(np.bincount(rows[off], minlength=n), out=ptr[1:])
        return cls(ptr, cols[off])

    @property
    def n(self):
        return len(self.ptr) - 1

    def degree(self):
        return np.diff(self.ptr)


def distance1_coloring(graph, order):
    """The greedy distance-1 colouring of ``graph`` (an ``Adjacency``) taking the vertices
    in ``order``: neighbours get different colours, so the vertices of one colour are
    pairwise non-adjacent (for a Hessian pattern: coordinates that never meet in a second
    derivative). Returns one colour per vertex, 0, 1, ..."""
    ptr, idx = graph.ptr.tolist(), graph.idx.tolist()
    colors = [-1] * graph.n
    for v in order.tolist():
        taken = {colors[w] for w in idx[ptr[v]:ptr[v + 1]]}
        c = 0
        while c in taken:
            c += 1
        colors[v] = c
    return np.array(colors, dtype=np.intp)


def check_order(order, extra=()):
    """An ``OptionError`` for an unknown order name (``extra``: more names allowed)."""
    if order not in ORDERS + tuple(extra) + ("best",):
        raise OptionError(f"unknown vertex order {order!r}; use one of {', '.join(ORDERS)}, "
                          "'dsatur' (column and row colourings) or 'best'")


def order_of(name, graph):
    """The vertex order ``name`` (one of ``ORDERS``) of ``graph``, an ``Adjacency`` (the
    degree) or a ``Nets``: the exact distance-2 degree (on its conflict graph) when its
    ``conflict_work()`` is at most ``EXACT_WORK``, else the bound (``degree_bound``)."""
    nets = isinstance(graph, Nets)
    if nets and name != "natural" and graph.conflict_work() <= EXACT_WORK:
        return order_of(name, graph.conflicts())
    degree = graph.degree_bound() if nets else graph.degree()
    if name == "natural":
        return np.arange(graph.n)
    if name == "largest_first":
        return np.argsort(-degree, kind="stable")
    if name == "smallest_last":
        if nets:
            return _smallest_last_nets(graph, degree)
        return _smallest_last(graph.ptr, graph.idx, degree)
    raise OptionError(f"unknown vertex order {name!r}; use one of {', '.join(ORDERS)}")


def _smallest_last(ptr, idx, degree):
    """Matula and Beck's order with a set of vertices per current degree: O(vertices +
    edges)."""
    n = len(ptr) - 1
    degree = degree.tolist()
    by_degree = [set() for _ in range(max(degree, default=0) + 1)]
    for v, d in enumerate(degree):
        by_degree[d].add(v)
    removed = [False] * n
    removal = []
    ip, ix = ptr.tolist(), idx.tolist()
    low = 0
    for _ in range(n):
        low = max(low - 1, 0)   # a removal lowers degrees by one at most
        while not by_degree[low]:
            low += 1
        v = by_degree[low].pop()
        removed[v] = True
        removal.append(v)
        for w in ix[ip[v]:ip[v + 1]]:
            if not removed[w]:
                d = degree[w]
                by_degree[d].discard(w)
                degree[w] = d - 1
                by_degree[d - 1].add(w)
    return np.array(removal[::-1], dtype=np.intp)


def _smallest_last_nets(graph, degree):
    """Smallest-last on a bipartite graph's distance-2 degree bound: the key of a vertex
    is refreshed from its nets' remaining lengths when it reaches the front of the heap,
    and it is taken only when its key is current."""
    ip, nets = graph.ptr.tolist(), graph.nets.tolist()
    remaining = graph.net_lengths().tolist()
    key = degree.tolist()
    heap = [(d, v) for v, d in enumerate(key)]
    heapq.heapify(heap)
    removed = [False] * graph.n
    removal = []
    while heap:
        stored, v = heapq.heappop(heap)
        if removed[v] or stored != key[v]:
            continue
        mine = nets[ip[v]:ip[v + 1]]
        current = sum(remaining[r] for r in mine) - len(mine)
        if current < stored:   # nets shrank since it was keyed: back in, at its degree
            key[v] = current
            heapq.heappush(heap, (current, v))
            continue
        removed[v] = True
        removal.append(v)
        for r in mine:
            remaining[r] -= 1
    return np.array(removal[::-1], dtype=np.intp)
