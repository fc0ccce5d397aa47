"""Star colouring of the adjacency graph of a symmetric pattern (``graphs.Adjacency``): a
proper colouring in which every path on four vertices uses at least three colours
(Gebremedhin, Manne & Pothen, "What color is your Jacobian?", SIAM Review 2005).
Equivalently, every two colour classes induce a forest of stars: in each star one vertex,
the hub, is joined to all the others. An entry ``H[i, j]`` then has ``j`` alone in
its colour among the neighbours of ``i`` or ``i`` alone among those of ``j`` (whichever is
the star's leaf), and is read directly from one Hessian-vector product.

The greedy algorithm follows Gebremedhin, Tarafdar, Manne & Pothen, "New acyclic and
star coloring algorithms with application to computing Hessians", SIAM J. Sci. Comput.
29(3), 2007: colour the vertices in an order, each with the smallest colour that keeps
the two-coloured subgraphs stars, keeping track of the stars instead of searching paths.
Here the stars are held implicitly: every vertex ``u`` keeps, per colour, how many of its
neighbours hold it, and which one when it is one (``counts`` in ``greedy``). Giving ``v`` the colour
``b`` breaks a star exactly when, for a coloured neighbour ``w`` of ``v`` (colour ``a``)
with a neighbour ``x != v`` of colour ``b``,

- ``v`` has another neighbour of colour ``a`` (then ``x - w - v - w'`` alternates ``b, a``), or
- ``w`` has no other neighbour of colour ``b`` and ``x`` has another neighbour of colour
  ``a`` (then ``x`` is the hub of the ``{a, b}`` star holding ``w`` and ``v - w - x - y``
  alternates; when ``w`` has two neighbours of colour ``b`` it is their hub instead).

Both tests read the counts of ``v``, ``w`` and ``x``, so a vertex costs its degree times
the number of colours around it, O(edges x colours) in all, also around a hub of high
degree (a path-scanning search costs the sum of the squared degrees).

``color(graph, with_diagonal, order)``: the greedy star colouring of ``order``
(``"natural"``, ``"largest_first"``, ``"smallest_last"``) improved by recolouring class by
class (iterated greedy: kept when it has fewer colours; up to ``STAR_IMPROVE_VERTICES``
vertices), or ``"best"``: those three, then a distance-2
colouring (every path on three vertices three-coloured: also a star colouring,
``distance2``; tried only when its own lower bound, the largest degree plus one, is below
the best count so far), the first with the fewest colours improved, stopping at the lower
bound (3 once some path has four vertices, 2 with edges, 1 without).
"""

import numpy as np

from . import distance2
from .graphs import order_of

__all__ = ["color", "greedy", "lower_bound"]

STAR_IMPROVE_VERTICES = 20_000   # star colourings are recoloured class by class up to this


def lower_bound(graph):
    """3 when the graph has an edge whose two ends have other neighbours (a path on four
    vertices, or a triangle), 2 with edges, 1 with vertices, 0 without."""
    if graph.n == 0:
        return 0
    degree = graph.degree()
    if not len(graph.idx):
        return 1
    ends = np.repeat(degree, degree)   # per edge (u, w): deg(u), then deg(w)
    return 3 if np.any((ends >= 2) & (degree[graph.idx] >= 2)) else 2


def greedy(graph, order):
    """The greedy star colouring of ``graph`` taking the vertices in ``order``.

    ``counts[u]`` maps each colour held by neighbours of ``u`` to how many hold it, or to
    ``~x`` (negative) when exactly one neighbour, ``x``, does."""
    ptr, idx = graph.ptr.tolist(), graph.idx.tolist()
    colors = [-1] * graph.n
    counts = [None] * graph.n
    for v in order.tolist():
        neighbours = idx[ptr[v]:ptr[v + 1]]
        around = counts[v] or {}
        forbidden = set(around)   # proper: no neighbour's colour
        for w in neighbours:
            a = colors[w]
            at_w = counts[w]
            if a < 0 or at_w is None:
                continue
            two_of_a = around[a] > 0   # v has another neighbour coloured a
            for b, held in at_w.items():
                if b not in forbidden and (
                        two_of_a or (held < 0 and counts[~held].get(a, 0) > 0)):
                    forbidden.add(b)
        c = 0
        while c in forbidden:
            c += 1
        colors[v] = c
        for u in neighbours:
            held = counts[u]
            if held is None:
                counts[u] = {c: ~v}
            else:
                before = held.get(c)
                held[c] = ~v if before is None else (2 if before < 0 else before + 1)
    return np.array(colors, dtype=np.intp)


def _by_classes(colors, rounds):
    """Orders taking the vertices class by class: reverse, then largest class first."""
    orders = []
    for kind in range(rounds):
        k = int(colors.max()) + 1
        sizes = np.bincount(colors, minlength=k)
        classes = np.arange(k)[::-1] if kind % 2 == 0 else np.argsort(-sizes, kind="stable")
        rank = np.empty(k, np.intp)
        rank[classes] = np.arange(k)
        orders.append(np.argsort(rank[colors], kind="stable"))
    return orders


def _improve(graph, colors, floor, rounds=6):
    """``colors`` recoloured greedily class by class, keeping any recolouring with fewer
    colours (unlike a proper colouring's, a star colouring's count may also grow)."""
    if graph.n > STAR_IMPROVE_VERTICES:
        return colors
    best = colors
    for _ in range(rounds):
        if best.max() + 1 <= floor:
            break
        gained = False
        for order in _by_classes(best, 2):
            again = greedy(graph, order)
            if again.max() < best.max():
                best, gained = again, True
        if not gained:
            break
    return best


def color(graph, with_diagonal, order="best"):
    """A star colouring of ``graph`` (an ``Adjacency``); ``with_diagonal()`` makes the
    ``Nets`` of its pattern with the whole diagonal, whose distance-2 colourings are star
    colourings (made only if one is tried)."""
    if graph.n == 0:
        return np.zeros(0, np.intp)
    floor = lower_bound(graph)
    if order != "best":
        return _improve(graph, greedy(graph, order_of(order, graph)), floor)
    max_degree = int(graph.degree().max(initial=0))
    best = None
    for name in ("natural", "largest_first", "smallest_last", "distance2"):
        if name == "distance2":
            if best is not None and max_degree + 1 > best.max():
                continue   # a distance-2 colouring takes a colour per neighbour and one
            colors = distance2.color(with_diagonal(), "best")
        else:
            colors = greedy(graph, order_of(name, graph))
        if best is None or colors.max() < best.max():
            best = colors
        if best.max() + 1 <= floor:
            return best
    return _improve(graph, best, floor)
