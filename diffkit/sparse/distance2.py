"""Partial distance-2 colouring of a bipartite graph (``graphs.Nets``): a colour for every
vertex (column) such that the vertices of one net (row) all differ, i.e. no two columns
with a nonzero in the same row share a colour (Gebremedhin, Manne & Pothen, "What color
is your Jacobian?", SIAM Review 2005, and its greedy algorithm for partial distance-2
colouring).

The greedy colouring takes the vertices in an order and gives each the smallest colour
that no net of it holds yet. Each net keeps the colours it holds as one bit set (a Python
integer), so a vertex costs one union over its nets: O(nnz) for the whole colouring,
where scanning each vertex's distance-2 neighbours, as the textbook algorithm does, costs
the sum of the squared row lengths (quadratic in a dense row).

The greedy colouring is then improved by *iterated greedy* (Culberson, "Iterated greedy
graph coloring and the difficulty landscape", tech. report TR 92-07, University of
Alberta, 1992): greedy again, taking the vertices class by class (all vertices of one
colour together, the classes in reverse order, largest first, or shuffled). Every vertex
of the ``t``-th class taken gets a colour below ``t`` (its class's colour is free when it
is reached), so the number of colours never grows, and often falls. The members of one
class share no net, so a class is coloured at once, vectorised: the union of its nets'
bit sets (``uint64`` words) with one ``bitwise_or.reduceat``. The result is the greedy
colouring of that order, exactly.

``color(graph, order)``: ``"natural"``, ``"largest_first"``, ``"smallest_last"``
(``graphs.order_of``), ``"dsatur"`` (Brélaz, "New methods to color the vertices of a
graph", CACM 22(4), 1979: next, the vertex whose conflicting vertices hold the most
colours; it scans distance-2 neighbourhoods, so ``"best"`` tries it only where their
total size is below ``DSATUR_WORK``), or ``"best"``: the greedy colourings of those that
fit the work limits, each improved by iterated greedy (on large graphs the two with the
fewest colours), the fewest kept, stopping early at the lower bound (the longest net).
"""

import heapq

import numpy as np

from .graphs import EXACT_WORK, order_of

__all__ = ["color", "greedy", "iterated_greedy", "recolor_by_classes", "lower_bound"]

DSATUR_WORK = 5e5          # at most this many distance-2 visits for DSATUR in "best"
SMALLEST_LAST_NNZ = 5e5    # smallest-last in "best" up to this many nonzeros
VECTOR_NNZ = 20_000        # from this many nonzeros, classes are recoloured vectorised
MAX_VECTOR_COLORS = 512    # bit sets of at most 8 words; more colours: no iterated greedy


def lower_bound(graph):
    """No colouring needs fewer colours than the longest net has vertices (1 for a graph
    with vertices but no edges, 0 for none)."""
    if graph.n == 0:
        return 0
    return max(int(graph.net_lengths().max(initial=0)), 1)


def _lowest_free(mask):
    """The smallest colour absent from the bit set ``mask`` (a Python integer)."""
    return (~mask & (mask + 1)).bit_length() - 1


def greedy(graph, order):
    """The greedy colouring of ``graph``'s vertices taken in ``order``: each gets the
    smallest colour none of its nets holds yet."""
    ptr, nets = graph.ptr.tolist(), graph.nets.tolist()
    held = [0] * graph.m
    colors = [0] * graph.n
    for v in order.tolist():
        mine = nets[ptr[v]:ptr[v + 1]]
        mask = 0
        for r in mine:
            mask |= held[r]
        c = (~mask & (mask + 1)).bit_length() - 1   # the lowest colour not held
        bit = 1 << c
        for r in mine:
            held[r] |= bit
        colors[v] = c
    return np.array(colors, dtype=np.intp)


def _dsatur(graph):
    """Brélaz's order, built while colouring: next, the uncoloured vertex whose
    conflicting vertices hold the most distinct colours (ties: the larger distance-2
    degree, exact on small graphs, else its bound; then the lower number). A heap with lazy
    deletion. The distance-2 neighbourhoods are scanned through the nets: O(sum of the
    squared net lengths), so ``"best"`` tries it on small graphs only."""
    ptr, nets = graph.ptr.tolist(), graph.nets.tolist()
    net_ptr, members = graph.net_ptr.tolist(), graph.members.tolist()
    small = graph.conflict_work() <= EXACT_WORK
    degree = (graph.conflicts().degree() if small else graph.degree_bound()).tolist()
    n = graph.n
    seen, saturation, colors = [0] * n, [0] * n, [-1] * n
    heap = [(0, -degree[v], v) for v in range(n)]
    heapq.heapify(heap)
    while heap:
        negsat, _, v = heapq.heappop(heap)
        if colors[v] >= 0 or -negsat != saturation[v]:
            continue   # coloured already, or a stale entry
        c = _lowest_free(seen[v])
        colors[v] = c
        bit = 1 << c
        for r in nets[ptr[v]:ptr[v + 1]]:
            for w in members[net_ptr[r]:net_ptr[r + 1]]:
                if colors[w] < 0 and not seen[w] & bit:
                    seen[w] |= bit
                    saturation[w] += 1
                    heapq.heappush(heap, (-saturation[w], -degree[w], w))
    return np.array(colors, dtype=np.intp)


# --- iterated greedy ----------------------------------------------------------------------


def _classes(colors, class_order):
    """The vertices of each colour of ``class_order``, one array per class."""
    keys = colors.astype(np.int16) if colors.max() < 2**15 else colors   # radix sort
    by_color = np.argsort(keys, kind="stable")
    bounds = np.searchsorted(colors[by_color], np.arange(int(colors.max()) + 2))
    return [by_color[bounds[c]:bounds[c + 1]] for c in class_order]


def _segments(ptr, idx, vertices):
    """The concatenated ``idx`` slices of ``vertices`` and each one's length."""
    starts = ptr[vertices]
    lengths = ptr[vertices + 1] - starts
    offsets = np.zeros(len(vertices) + 1, np.intp)
    np.cumsum(lengths, out=offsets[1:])
    positions = np.repeat(starts - offsets[:-1], lengths) + np.arange(offsets[-1])
    return idx[positions], lengths, offsets[:-1]


def _lowest_free_words(masks):
    """Per row of the ``(g, words)`` uint64 bit sets, the smallest colour absent."""
    full = masks == np.uint64(np.iinfo(np.uint64).max)
    word = np.argmin(full, axis=1)           # the first word with a free bit
    free = ~masks[np.arange(len(masks)), word]
    lowest = free & (~free + np.uint64(1))  # its lowest free bit alone
    return word * 64 + (np.frexp(lowest.astype(np.float64))[1] - 1)


def recolor_by_classes(graph, colors, class_order):
    """The greedy colouring of the vertices taken class by class (the classes of
    ``colors`` in ``class_order``), each class at once: its members share no net, so
    none of them constrains another. Bit sets of ``uint64`` words, one row per net (one
    word, a flat array, up to 64 colours)."""
    words = (int(colors.max()) + 64) // 64
    held = np.zeros((graph.m, words) if words > 1 else graph.m, np.uint64)
    new = np.empty_like(colors)
    one = np.uint64(1)
    for members in _classes(colors, class_order):
        if not len(members):
            continue
        nets, lengths, offsets = _segments(graph.ptr, graph.nets, members)
        some = lengths > 0
        masks = np.zeros((len(members), words), np.uint64)
        if nets.size:
            gathered = held[nets] if words > 1 else held[nets][:, None]
            masks[some] = np.bitwise_or.reduceat(gathered, offsets[some], axis=0)
        chosen = _lowest_free_words(masks)
        new[members] = chosen
        per_entry = np.repeat(chosen, lengths)
        bits = np.left_shift(one, (per_entry % 64).astype(np.uint64))
        if words > 1:
            held[nets, per_entry // 64] |= bits
        else:
            held[nets] |= bits
    return new


def _class_order(colors, round_number, rng):
    """Culberson's class orders, in turn: reverse, largest class first, smallest class
    first (a class of a few vertices, taken first, often disappears), shuffled."""
    k = int(colors.max()) + 1
    kind = round_number % 4
    if kind == 0:
        return np.arange(k)[::-1]
    sizes = np.bincount(colors, minlength=k)
    if kind == 1:
        return np.argsort(-sizes, kind="stable")
    if kind == 2:
        return np.argsort(sizes, kind="stable")
    return rng.permutation(k)


def iterated_greedy(graph, colors, floor, rounds=None, patience=None):
    """``colors`` improved by iterated greedy until ``floor`` colours (a lower bound),
    ``patience`` rounds in a row without a gain (by default 8, 4 on small graphs), or
    ``rounds`` rounds (by default as many as about 6e7 entry visits allow, 8 to 30)."""
    k = int(colors.max(initial=-1)) + 1
    if k <= max(floor, 1) or k > MAX_VECTOR_COLORS:
        return colors
    nnz = len(graph.nets)
    if rounds is None:
        rounds = int(min(30, max(8, 6e7 / max(nnz, 1))))
    if patience is None:   # a large graph's next gain may take a few rounds
        patience = 8 if nnz >= VECTOR_NNZ else 4
    rng = np.random.default_rng(0)   # fixed: the same pattern gets the same colouring
    best, idle = colors, 0
    for round_number in range(rounds):
        class_order = _class_order(colors, round_number, rng)
        if nnz >= VECTOR_NNZ:
            colors = recolor_by_classes(graph, colors, class_order)
        else:
            colors = greedy(graph, np.concatenate(_classes(colors, class_order)))
        if colors.max() < best.max():
            best, idle = colors, 0
        else:
            idle += 1
        if best.max() + 1 <= floor or idle >= patience:
            break
    return best


# --- the entry point -----------------------------------------------------------------------


def _candidates(graph):
    """The orders ``"best"`` tries on ``graph``, cheapest first."""
    names = ["natural", "largest_first"]
    if len(graph.nets) <= SMALLEST_LAST_NNZ:
        names.append("smallest_last")
    if graph.conflict_work() <= DSATUR_WORK:
        names.append("dsatur")
    return names


def _initial(graph, name, tried):
    """The greedy colouring of the order ``name``; None when that order is one already
    ``tried`` (a list of orders, appended to): a regular pattern's largest-first order is
    its natural one."""
    if name == "dsatur":
        return _dsatur(graph)
    order = order_of(name, graph)
    if any(np.array_equal(order, seen) for seen in tried):
        return None
    tried.append(order)
    return greedy(graph, order)


def color(graph, order="best"):
    """A partial distance-2 colouring of ``graph`` (a ``Nets``): one colour (from 0) per
    vertex, the greedy colouring of ``order`` improved by iterated greedy; ``"best"``: the
    greedy colourings of the orders that fit the work limits, improved (on large graphs
    only the two with the fewest colours), the fewest kept."""
    if graph.n == 0:
        return np.zeros(0, np.intp)
    floor = lower_bound(graph)
    names = _candidates(graph) if order == "best" else [order]
    starts, tried = [], []
    for name in names:
        initial = _initial(graph, name, tried)
        if initial is None:
            continue
        if initial.max() + 1 <= floor:
            return initial
        starts.append(initial)
    starts.sort(key=lambda colors: colors.max())   # stable: the earlier order on a tie
    best = None
    for initial in starts if len(graph.nets) < VECTOR_NNZ else starts[:2]:
        colors = iterated_greedy(graph, initial, floor)
        if best is None or colors.max() < best.max():
            best = colors
        if best.max() + 1 <= floor:
            break
    return best
