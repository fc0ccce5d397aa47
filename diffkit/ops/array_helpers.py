"""Helpers shared by the array-manipulation families (``array_*`` modules): whether
arguments are traced, static (concrete) arguments that set shapes, axes, and ``_gather``,
a static gather along one axis cut into basic slices where it can be.

Almost every function of the families is a composition of existing primitives (``getitem``
with static or integer-array indices, ``concatenate``, ``reshape``, ``broadcast_to``,
``transpose``, ``where``, arithmetic), so it inherits their forward, reverse and batching
rules and needs none of its own; the few primitives are listed in each module. Functions
called with no traced argument hand the work to NumPy itself, so plain arrays get exactly
NumPy's results.

``index_floor_divide_p`` and ``pad_rint_p`` (integer arithmetic without derivative, on
traced and batched values) serve ``take(mode='wrap')``, ``interp(period=...)`` and ``pad``'s integer
statistics.
"""


import numpy as np

from ..core.concrete import holds_tracer, static_value
from ..core.trace import Tracer
from ..core.zeros import dtype_of, shape_of
from . import shape as sh
from .families import nondiff_elementwise
from .indexing import getitem

_NUMPY2 = np.lib.NumpyVersion(np.__version__) >= "2.0.0"


# === helpers ==============================================================================

# Integer arithmetic with no derivative, on traced (batched) values: take(mode='wrap') and
# interp(period=...) reduce modulo n; pad rounds integer statistics half to even.
index_floor_divide_p = nondiff_elementwise("index_floor_divide", np.floor_divide)
pad_rint_p = nondiff_elementwise("pad_rint", np.rint)


def _ndim(x):
    return len(shape_of(x))


def _static(value, what):
    """``value`` as a plain NumPy value; a traced value is an error (it sets a shape)."""
    if isinstance(value, Tracer):
        return static_value(value, lambda t: (
            f"{what} is a value traced by {t._trace.name}, but it must be concrete "
            "because it determines the shape of the result"))
    if isinstance(value, (list, tuple)) and holds_tracer(*value):
        return np.asarray([_static(v, what) for v in value])
    return value


def _axis(axis, ndim):
    return sh._normalize_axis(_static(axis, "axis"), ndim)


def _along(axis, index):
    """An index applying ``index`` to axis ``axis`` (and full slices before it)."""
    return (slice(None),) * axis + (index,)


def _take_range(x, axis, start, stop):
    """``x`` sliced to ``start:stop`` along ``axis`` (basic indexing)."""
    return getitem(x, _along(axis, slice(start, stop)))


# A static gather along one axis is cut into at most this many slices (see _gather).
_MAX_RUNS = 16


def _runs(indices):
    """``indices`` cut into maximal runs of constant step -1, 0 or 1, as ``(start, step,
    length)``; None when there would be more than ``_MAX_RUNS`` of them."""
    count = len(indices)
    steps = np.diff(indices)
    changes = steps[1:] != steps[:-1]
    segment = np.concatenate([[0], np.cumsum(changes)])  # stretch of equal steps of steps[k]
    last = np.append(np.flatnonzero(changes), count - 2)   # last step of each stretch
    runs, i = [], 0
    while i < count:
        if len(runs) == _MAX_RUNS:
            return None
        if i == count - 1 or abs(steps[i]) > 1:
            runs.append((int(indices[i]), 1, 1))
            i += 1
            continue
        end = int(last[segment[i]]) + 1  # the run is indices[i:end + 1]
        runs.append((int(indices[i]), int(steps[i]), end + 1 - i))
        i = end + 1
    return runs


def _gather(x, axis, indices):
    """``x`` indexed along ``axis`` by the concrete 1-D integer array ``indices``.

    When the indices form a few runs of step 1, -1 or 0 (padding, deleting, inserting,
    repeating a few entries), the result is a concatenation of basic slices (broadcast for
    step 0): their adjoints are slice assignments instead of an accumulating scatter."""
    indices = np.asarray(indices, dtype=np.intp)
    n = shape_of(x)[axis]
    runs = _runs(indices) if indices.size else None
    if runs is None:
        return getitem(x, _along(axis, indices))
    pieces = []
    for start, step, length in runs:
        if step == 1 or length == 1:
            if start == 0 and length == n:
                piece = x
            else:
                piece = _take_range(x, axis, start, start + length)
        elif step == -1:
            stop = start - length
            piece = getitem(x, _along(axis, slice(start, None if stop < 0 else stop, -1)))
        else:
            piece = _take_range(x, axis, start, start + 1)
            piece = sh.broadcast_to(piece, _with_width(shape_of(piece), axis, length))
        pieces.append(piece)
    return sh.concatenate(pieces, axis=axis) if len(pieces) > 1 else pieces[0]


def _zeros_of(x):
    return np.zeros((), dtype_of(x))


def _several(arrays):
    """One array for one argument, else NumPy's container for several (tuple in NumPy 2)."""
    if len(arrays) == 1:
        return arrays[0]
    return tuple(arrays) if _NUMPY2 else list(arrays)


def _with_width(dims, axis, width):
    return dims[:axis] + (width,) + dims[axis + 1:]
