"""Reordering the entries of an array without sorting: ``roll``, ``flip``,
``fliplr``, ``flipud``, ``rot90`` and ``rollaxis``, as compositions of slices,
``concatenate`` and ``transpose``.
"""


import numpy as np

from ..core.concrete import holds_tracer
from ..core.zeros import shape_of
from . import reductions as red
from . import shape as sh
from .array_helpers import _ndim, _static, _take_range
from .indexing import getitem

__all__ = ["roll", "flip", "fliplr", "flipud", "rot90", "rollaxis"]

# === roll, flip, rot90, rollaxis ========================================================


def roll(a, shift, axis=None):
    """``a`` shifted cyclically by ``shift`` along ``axis`` (the flattened array for
    ``None``), as ``np.roll``; ``shift`` and ``axis`` may be matching tuples."""
    shift = _static(shift, "shift")
    if not holds_tracer(a):
        return np.roll(a, shift, axis)
    if axis is None:
        return sh.reshape(roll(sh.ravel(a), shift, 0), shape_of(a))
    dims = shape_of(a)
    try:
        pairs = np.broadcast(shift, axis)
    except ValueError:
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences") from None
    if pairs.nd > 1:
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences")
    totals = {}
    for s, ax in pairs:
        ax = sh._normalize_axis(int(ax), len(dims))
        totals[ax] = totals.get(ax, 0) + int(s)
    out = a
    for ax, s in totals.items():
        n = dims[ax]
        if n == 0 or s % n == 0:
            continue
        s %= n
        out = sh.concatenate([_take_range(out, ax, n - s, n), _take_range(out, ax, 0, n - s)],
                             axis=ax)
    return out


def flip(m, axis=None):
    """``m`` with the order of entries reversed along ``axis`` (all axes for ``None``), as
    ``np.flip``: one basic-indexing ``getitem``."""
    if not holds_tracer(m):
        return np.flip(m, axis)
    axes = red.normalize_axes(_static(axis, "axis"), _ndim(m))
    index = tuple(slice(None, None, -1) if i in axes else slice(None)
                  for i in range(_ndim(m)))
    return getitem(m, index) if axes else m


def fliplr(m):
    """Reverse the second axis (columns), as ``np.fliplr``."""
    if _ndim(m) < 2:
        raise ValueError("Input must be >= 2-d.")
    return flip(m, 1)


def flipud(m):
    """Reverse the first axis (rows), as ``np.flipud``."""
    if _ndim(m) < 1:
        raise ValueError("Input must be >= 1-d.")
    return flip(m, 0)


def rot90(m, k=1, axes=(0, 1)):
    """``m`` rotated by 90 degrees ``k`` times in the plane of ``axes``, from the first axis
    towards the second, as ``np.rot90``."""
    if not holds_tracer(m):
        return np.rot90(m, k, axes)
    axes = tuple(axes)
    ndim = _ndim(m)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == ndim:
        raise ValueError("Axes must be different.")
    if not all(-ndim <= a < ndim for a in axes):
        raise ValueError(f"Axes={axes} out of range for array of ndim={ndim}.")
    k = int(k) % 4
    if k == 0:
        return m
    if k == 2:
        return flip(m, axes)
    order = list(range(ndim))
    first, second = axes[0] % ndim, axes[1] % ndim
    order[first], order[second] = order[second], order[first]
    if k == 1:
        return sh.transpose(flip(m, second), order)
    return flip(sh.transpose(m, order), second)


def rollaxis(a, axis, start=0):
    """Move ``axis`` to just before position ``start``, as ``np.rollaxis``."""
    ndim = _ndim(a)
    axis = sh._normalize_axis(axis, ndim)
    if not -ndim <= start <= ndim:
        raise np.exceptions.AxisError(
            f"start {start} is out of bounds for an array of dimension {ndim} "
            f"(it must be in [{-ndim}, {ndim}])")
    start = start + ndim if start < 0 else start
    if axis < start:
        start -= 1
    return sh.moveaxis(a, axis, start) if axis != start else a
