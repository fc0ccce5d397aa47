"""Bidirectional colourings of a Jacobian pattern: some entries read from forward products
``J @ S_c`` (columns coloured), the others from reverse products ``S_r.T @ J`` (rows
coloured), the number of products being the column colours plus the row colours.

One dense row forces a column colouring to give each of its columns its own colour, one
dense column does the same to a row colouring; together they leave no good one-sided
colouring. Read from the other side, a dense line costs one product. Coleman & Verma
("The efficient computation of sparse Jacobian matrices using automatic differentiation",
SIAM J. Sci. Comput. 19(4), 1998) take the dense rows by reverse products and the rest by
forward ones; Gebremedhin, Manne & Pothen ("What color is your Jacobian?", SIAM Review
2005) state the condition for reading every entry directly (their star bicolouring):
an entry ``(i, j)`` is read from the column side when ``j`` is alone in its colour among
the coloured columns of row ``i``, from the row side when ``i`` is alone among the
coloured rows of column ``j``, and each entry needs one of the two. Uncoloured lines
(colour -1) are in no seed.

The splits here meet that condition by construction, each as two partial distance-2
colourings (``distance2``) of submatrices, no graph beyond the pattern's index arrays:

- *dense rows reversed*: the rows longer than a threshold ``t`` are coloured as a row
  colouring of their submatrix (all their entries read from the row side), the columns
  as a column colouring of the other rows (their entries read from the column side);
- *dense columns forward*: the same on the transpose.

Thresholds: the distinct line lengths, thinned to a geometric sequence. A split costs at
least ``t`` products on the sparse side (a line of length ``t`` is left there) plus, on
the dense side, the largest number of dense lines meeting one line across; splits are
evaluated in order of that bound and skipped once it cannot beat the best so far.
"""

import math

import numpy as np

from . import distance2
from .graphs import Nets, distinct

__all__ = ["Split", "splits", "evaluate"]

MAX_THRESHOLDS = 12   # per side


class Split:
    """One candidate: ``side`` ``"rows"`` (dense rows reversed) or ``"columns"`` (dense
    columns forward), the dense lines (``dense``, a boolean mask over that side's lines)
    and ``bound``, a lower bound of its number of products."""

    __slots__ = ("side", "dense", "bound")

    def __init__(self, side, dense, bound):
        self.side, self.dense, self.bound = side, dense, bound


def _thresholds(lengths):
    """Thresholds ``t``: each distinct length below the longest, thinned so that each
    kept one is at most 4/5 of the previous (at most ``MAX_THRESHOLDS``)."""
    lengths_seen = distinct(lengths)[::-1]
    kept = []
    for t in lengths_seen[1:].tolist():
        if not kept or t <= 0.8 * kept[-1]:
            kept.append(t)
        if len(kept) == MAX_THRESHOLDS:
            break
    return kept


def _dense_side_bound(csr, dense_rows):
    """The longest column of the dense rows' submatrix: its rows all need distinct row
    colours."""
    picked = _rows(csr, dense_rows)
    if picked.nnz == 0:
        return 1 if dense_rows.any() else 0
    return int(np.bincount(picked.indices, minlength=csr.shape[1]).max())


def splits(csr):
    """The candidate splits of the boolean CSR pattern, each with its lower bound."""
    found = []
    for side, lines in (("rows", csr), ("columns", csr.T.tocsr())):
        lengths = np.diff(lines.indptr)
        for t in _thresholds(lengths):
            dense = lengths > t
            found.append(Split(side, dense, t + _dense_side_bound(lines, dense)))
    found.sort(key=lambda s: s.bound)
    return found


def _rows(csr, mask):
    """The submatrix of the rows selected by ``mask`` (a CSR array, columns kept)."""
    sp_type = type(csr)
    keep = np.flatnonzero(mask)
    starts, ends = csr.indptr[keep], csr.indptr[keep + 1]
    lengths = ends - starts
    indptr = np.zeros(len(keep) + 1, dtype=csr.indptr.dtype)
    np.cumsum(lengths, out=indptr[1:])
    positions = np.repeat(starts - indptr[:-1], lengths) + np.arange(indptr[-1])
    return sp_type((np.ones(len(positions), bool), csr.indices[positions], indptr),
                   shape=(len(keep), csr.shape[1]))


def _column_colors(csr, order):
    """Partial distance-2 colours of the columns of ``csr``; -1 for empty columns."""
    colors = distance2.color(Nets.of(csr), order)
    colors[np.diff(csr.tocsc().indptr) == 0] = -1
    return _compact(colors)


def _compact(colors):
    """Colours renumbered 0, 1, ... in order of first use, -1 kept."""
    used = distinct(colors[colors >= 0])
    renumber = np.full(int(colors.max(initial=-1)) + 2, -1, np.intp)   # [-1] stays -1
    renumber[used] = np.arange(len(used))
    return renumber[colors]


def evaluate(csr, split, order="best"):
    """``(column_colors, row_colors)`` of ``split`` on the boolean CSR pattern ``csr``
    (-1: in no seed)."""
    lines = csr if split.side == "rows" else csr.T.tocsr()
    dense_lines = _rows(lines, split.dense)
    sparse_lines = _rows(lines, ~split.dense)
    across = _column_colors(sparse_lines, order)          # the other side, forward
    along = np.full(lines.shape[0], -1, np.intp)          # the dense lines, reversed
    along[split.dense] = _column_colors(dense_lines.T.tocsr(), order)
    if split.side == "rows":
        return across, along
    return along, across


def products(colors):
    """The number of products a colouring's colours ask for (-1 asks for none)."""
    return int(colors.max(initial=-1)) + 1


def penalized(count):
    """What a bidirectional colouring of ``count`` products is worth against a one-sided
    one: it is chosen only when it needs at least two products and a quarter fewer (it
    runs the function once more, and the reverse pass keeps a tape)."""
    return max(count + 2, math.ceil(4 * count / 3))
