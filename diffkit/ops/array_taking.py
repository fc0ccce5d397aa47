"""Taking and editing entries: ``take``, ``take_along_axis``, ``compress``,
``select``, ``append``, ``delete`` and ``insert``, as compositions of indexing
(``getitem`` with static or integer-array indices) and ``concatenate``.
"""


import numpy as np

from ..core.concrete import holds_tracer
from ..core.trace import Tracer
from ..core.zeros import as_array, dtype_of, shape_of
from . import elementwise as ew
from . import shape as sh
from .array_helpers import (
    _along,
    _axis,
    _gather,
    _ndim,
    _static,
    _take_range,
    _with_width,
    index_floor_divide_p,
)
from .indexing import getitem

__all__ = ["take", "take_along_axis", "compress", "select", "append", "delete", "insert"]

# === take, select, append, delete, insert ==================================================


def take(a, indices, axis=None, out=None, mode="raise"):
    """Entries of ``a`` at ``indices`` along ``axis`` (of the flattened array for ``None``),
    as ``np.take``; ``mode`` ``'raise'``, ``'wrap'`` or ``'clip'`` treats out-of-range
    indices. ``indices`` may be traced (under ``vmap``); it has no derivative."""
    if out is not None:
        raise TypeError("take: out= is not supported (diffkit returns new arrays)")
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    if not holds_tracer(a, indices):
        return np.take(a, indices, axis, mode=mode)
    a = as_array(a)
    if axis is None:
        a, axis = sh.ravel(a), 0
    axis = _axis(axis, _ndim(a))
    n = shape_of(a)[axis]
    if not isinstance(indices, Tracer):
        indices = np.asarray(indices)
        if indices.dtype.kind not in "iu":
            raise TypeError(f"take: indices must be integers, got dtype {indices.dtype}")
        if mode != "raise" and n == 0 and indices.size:
            raise IndexError("cannot do a non-empty take from an empty axes.")
        if mode == "wrap":
            indices = np.mod(indices, n) if n else indices
        elif mode == "clip":
            indices = np.clip(indices, 0, max(n - 1, 0))
        if indices.ndim == 0:
            indices = int(indices)
    elif mode == "wrap":
        indices = ew.subtract_p(indices, ew.multiply_p(index_floor_divide_p(indices, n), n))
    elif mode == "clip":
        indices = ew.clip_p(indices, 0, n - 1)
    return getitem(a, _along(axis, indices))


def take_along_axis(arr, indices, axis=-1):
    """Entries of ``arr`` at ``indices`` along ``axis`` with the other axes matched by
    broadcasting, as ``np.take_along_axis`` (``axis=None``: the flattened array)."""
    if not holds_tracer(arr, indices):
        return np.take_along_axis(arr, indices, axis)
    arr = as_array(arr)
    indices = as_array(indices)
    if axis is None:
        if _ndim(indices) != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        arr, axis = sh.ravel(arr), 0
    dims = shape_of(arr)
    if _ndim(indices) != len(dims):
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    if dtype_of(indices).kind not in "iu":
        raise IndexError("`indices` must be an integer array")
    axis = _axis(axis, len(dims))
    index = tuple(indices if i == axis else
                  np.arange(d).reshape((1,) * i + (d,) + (1,) * (len(dims) - i - 1))
                  for i, d in enumerate(dims))
    return getitem(arr, index)


def compress(condition, a, axis=None):
    """The slices of ``a`` along ``axis`` where the concrete boolean ``condition`` holds,
    as ``np.compress``."""
    condition = np.asarray(_static(condition, "condition"))
    if not holds_tracer(a):
        return np.compress(condition, a, axis)
    if axis is None:
        a, axis = sh.ravel(a), 0
    axis = _axis(axis, _ndim(a))
    n = shape_of(a)[axis]
    if condition.ndim != 1:
        raise ValueError("condition must be a 1-d array")
    if condition.size > n:
        raise IndexError(f"index {n} is out of bounds for axis {axis} with size {n}")
    return _gather(a, axis, np.flatnonzero(condition))


def select(condlist, choicelist, default=0):
    """For each entry, the choice of the first true condition (``default`` if none), as
    ``np.select``; conditions and choices broadcast."""
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if len(condlist) == 0:
        raise ValueError("select with an empty condition list is not possible")
    if not holds_tracer(list(condlist), list(choicelist), default):
        return np.select(condlist, choicelist, default)
    for i, cond in enumerate(condlist):
        if dtype_of(as_array(cond)).kind != "b":
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    result = default
    for cond, choice in zip(reversed(list(condlist)), reversed(list(choicelist))):
        result = ew.where_p(as_array(cond), choice, result)
    return result


def append(arr, values, axis=None):
    """``values`` appended to ``arr`` along ``axis`` (both flattened for ``None``), as
    ``np.append``."""
    if not holds_tracer(arr, values):
        return np.append(arr, values, axis)
    arr, values = as_array(arr), as_array(values)
    if axis is None:
        return sh.concatenate([sh.ravel(arr), sh.ravel(values)], axis=0)
    return sh.concatenate([arr, values], axis=axis)


def delete(arr, obj, axis=None):
    """``arr`` without the entries ``obj`` (an int, slice, index array or boolean mask)
    along ``axis`` (of the flattened array for ``None``), as ``np.delete``."""
    obj = _static(obj, "obj")
    if not holds_tracer(arr):
        return np.delete(arr, obj, axis)
    if axis is None:
        arr, axis = sh.ravel(arr), 0
    axis = _axis(axis, _ndim(arr))
    keep = np.delete(np.arange(shape_of(arr)[axis]), obj)
    return _gather(arr, axis, keep)


def insert(arr, obj, values, axis=None):
    """``values`` inserted into ``arr`` before the positions ``obj`` along ``axis`` (of the
    flattened array for ``None``), as ``np.insert``; differentiable in both."""
    obj = _static(obj, "obj")
    if not holds_tracer(arr, values):
        return np.insert(arr, obj, values, axis)
    arr, values = as_array(arr), as_array(values)
    if axis is None:
        arr, axis = sh.ravel(arr), 0
    dims = shape_of(arr)
    axis = _axis(axis, len(dims))
    n = dims[axis]
    if isinstance(obj, slice):
        indices = np.arange(*obj.indices(n))
    else:
        indices = np.asarray(obj)
        if indices.dtype.kind == "b":
            if indices.ndim != 1:
                raise ValueError("boolean array argument obj to insert must be one "
                                 "dimensional")
            indices = np.flatnonzero(indices)
        elif indices.ndim > 1:
            raise ValueError("index array argument obj to insert must be one dimensional "
                             "or scalar")
        elif indices.size == 0:
            indices = indices.astype(np.intp)
    if dtype_of(values) != dtype_of(arr):
        values = ew.astype(values, dtype_of(arr))
    if indices.size == 1:
        # One position: ``values`` is a block of any length there (NumPy's rules: at least
        # arr.ndim dimensions, and for a scalar ``obj`` its first axis is moved to ``axis``).
        index = int(indices.item())
        if not -n <= index <= n:
            raise IndexError(f"index {obj} is out of bounds for axis {axis} with size {n}")
        index = index + n if index < 0 else index
        vdims = shape_of(values)
        values = sh.reshape(values, (1,) * (len(dims) - len(vdims)) + vdims)
        if indices.ndim == 0:
            values = sh.moveaxis(values, 0, axis)
        block = _with_width(dims, axis, shape_of(values)[axis])
        values = sh.broadcast_to(values, block)
        pieces = [_take_range(arr, axis, 0, index), values, _take_range(arr, axis, index, n)]
        return sh.concatenate([p for p in pieces if shape_of(p)[axis]] or [values],
                              axis=axis)
    count = len(indices)
    values = sh.broadcast_to(values, _with_width(dims, axis, count))
    source = np.insert(np.arange(n), indices, np.arange(n, n + count))
    return _gather(sh.concatenate([arr, values], axis=axis), axis, source)
