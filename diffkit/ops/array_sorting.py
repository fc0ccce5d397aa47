"""Sorting, searching and interpolation: ``sort``, ``argsort``, ``partition``,
``argpartition``, ``searchsorted`` and ``interp``.

``argsort``, ``argpartition`` and ``searchsorted`` are primitives with integer results
without derivative (``nondiff``), needed by ``sort``, ``partition`` and ``interp`` on traced
values and under ``vmap``.

Conventions at nondifferentiable points (the same in both engines because the engines only
ever see the composition):

- ``sort`` / ``partition``: the output is ``take_along_axis(x, perm)`` with ``perm`` from a
  *stable* ``argsort`` (``argpartition`` for ``partition``), so among tied entries the k-th
  smallest output position gets the derivative of the k-th tied input in index order.
- ``interp`` in ``x``: at an interior knot ``xp[i]`` the derivative is the slope of the
  segment to its right (and of the last segment at ``xp[-1]``); outside ``[xp[0], xp[-1]]``
  the result is ``left``/``right`` with zero derivative in ``x``.
"""


import numpy as np

from ..core.concrete import holds_tracer
from ..core.primitive import Primitive
from ..core.trace import Tracer
from ..core.zeros import as_array, dtype_of, shape_of
from . import elementwise as ew
from . import shape as sh
from .array_helpers import _axis, _ndim, _static, index_floor_divide_p
from .array_taking import take, take_along_axis
from .indexing import getitem

__all__ = ["sort", "argsort", "partition", "argpartition", "searchsorted", "interp"]

# === sorting ===============================================================================


def _sort_kind(kind, stable):
    if stable is not None:
        return "stable" if stable else kind
    return kind


argsort_p = Primitive(
    "argsort", lambda x, axis, kind: np.argsort(x, axis=axis, kind=kind), nondiff=True,
    batch=lambda axis_size, values, batch_axes, axis, kind: (
        argsort_p(values[0], axis=axis + 1, kind=kind), 0))


argpartition_p = Primitive(
    "argpartition", lambda x, kth, axis: np.argpartition(x, kth, axis=axis), nondiff=True,
    batch=lambda axis_size, values, batch_axes, kth, axis: (
        argpartition_p(values[0], kth=kth, axis=axis + 1), 0))


def _flat_axis(a, axis):
    """``(a, axis)`` with ``axis=None`` meaning the flattened array, and the axis checked."""
    if axis is None:
        return sh.ravel(a), 0
    return a, _axis(axis, _ndim(a))


def argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    """Indices that sort ``a`` along ``axis`` (the flattened array for ``None``), as
    ``np.argsort``. Integer result, no derivative."""
    if order is not None:
        raise ValueError("argsort: order= (structured arrays) is not supported")
    a, axis = _flat_axis(as_array(a), axis)
    return argsort_p(a, axis=axis, kind=_sort_kind(kind, stable))


def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    """``a`` sorted along ``axis`` (the flattened array for ``None``), as ``np.sort``.

    The derivative follows the permutation of a stable argsort: the derivative of the
    output at position k is that of the input entry that lands there, and tied entries
    keep their order, so both engines agree at ties."""
    if order is not None:
        raise ValueError("sort: order= (structured arrays) is not supported")
    if not holds_tracer(a):
        extra = {} if stable is None else {"stable": stable}
        return np.sort(a, axis=axis, kind=kind, **extra)
    a, axis = _flat_axis(a, axis)
    return take_along_axis(a, argsort_p(a, axis=axis, kind="stable"), axis)


def _kth(kth):
    kth = np.asarray(_static(kth, "kth"))
    if kth.dtype.kind not in "iu":
        raise TypeError("Partition index must be integer")
    return int(kth) if kth.ndim == 0 else tuple(int(k) for k in kth.ravel())


def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    """Indices that partition ``a`` around its ``kth`` entries, as ``np.argpartition``.
    Integer result, no derivative."""
    if order is not None:
        raise ValueError("argpartition: order= (structured arrays) is not supported")
    a, axis = _flat_axis(as_array(a), axis)
    return argpartition_p(a, kth=_kth(kth), axis=axis)


def partition(a, kth, axis=-1, kind="introselect", order=None):
    """``a`` rearranged so that its ``kth`` entries are in sorted position, smaller entries
    before and larger after, as ``np.partition``. The derivative follows the permutation
    of ``argpartition`` (which gives the same arrangement)."""
    if order is not None:
        raise ValueError("partition: order= (structured arrays) is not supported")
    if not holds_tracer(a):
        return np.partition(a, kth, axis=axis, kind=kind)
    a, axis = _flat_axis(a, axis)
    return take_along_axis(a, argpartition_p(a, kth=_kth(kth), axis=axis), axis)


def _searchsorted_impl(a, v, side, batch_dims):
    if batch_dims == 0:
        return np.searchsorted(a, v, side=side)
    lead = np.broadcast_shapes(a.shape[:batch_dims], v.shape[:batch_dims])
    a = np.broadcast_to(a, lead + a.shape[batch_dims:])
    v = np.broadcast_to(v, lead + v.shape[batch_dims:])
    out = np.empty(v.shape, np.intp)
    for i in np.ndindex(*lead):
        out[i] = np.searchsorted(a[i], v[i], side=side)
    return out


def _searchsorted_batch(axis_size, values, batch_axes, side, batch_dims):
    a, v = values
    if batch_axes[0] is None:
        if batch_dims == 0:  # one sorted array, a batch of queries of any shape
            return searchsorted_p(a, v, side=side, batch_dims=0), 0
        v = sh.moveaxis(v, 0, batch_dims)
        return searchsorted_p(a, v, side=side, batch_dims=batch_dims), batch_dims
    if batch_axes[1] is None:
        v = sh.reshape(v, (1,) + shape_of(v))
    return searchsorted_p(a, v, side=side, batch_dims=batch_dims + 1), 0


# ``batch_dims`` leading axes of ``a`` (sorted along its last axis) and ``v`` broadcast
# and index independent searches; only batching creates them.
searchsorted_p = Primitive("searchsorted", _searchsorted_impl, batch=_searchsorted_batch,
                           nondiff=True)


def searchsorted(a, v, side="left", sorter=None):
    """Insertion points of ``v`` into the sorted 1-D ``a``, as ``np.searchsorted``.
    Integer result, no derivative."""
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right' (got {side!r})")
    a, v = as_array(a), as_array(v)
    if _ndim(a) != 1:
        raise ValueError(f"searchsorted: a must be 1-dimensional, got shape {shape_of(a)}")
    if sorter is not None:
        a = take(a, sorter)
    return searchsorted_p(a, v, side=side, batch_dims=0)


# === interp ================================================================================


def _float_like(x):
    """``x`` as float64 (complex128 if complex), the precision ``np.interp`` works in."""
    target = np.complex128 if dtype_of(x).kind == "c" else np.float64
    return ew.astype(x, target) if dtype_of(x) != target else x


def _mod(x, period):
    return ew.subtract_p(x, ew.multiply_p(index_floor_divide_p(x, period), period))


def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of the points ``(xp, fp)`` at ``x``, as ``np.interp``;
    ``left``/``right`` (default ``fp[0]``/``fp[-1]``) outside, or ``period`` for periodic
    data. Differentiable in ``x``, ``fp``, ``xp``, ``left`` and ``right``.

    At a knot ``x == xp[i]`` the derivative in ``x`` is the slope of the segment to the
    right (the last segment's at ``xp[-1]``)."""
    if not holds_tracer(x, xp, fp, left, right):
        return np.interp(x, xp, fp, left, right, period)
    x, xp, fp = (_float_like(as_array(v)) for v in (x, xp, fp))
    if _ndim(xp) != 1 or _ndim(fp) != 1:
        raise ValueError("Data points must be 1D sequences")
    if shape_of(xp)[0] != shape_of(fp)[0]:
        raise ValueError("fp and xp are not of the same length.")
    if shape_of(xp)[0] == 0:
        raise ValueError("array of sample points is empty")
    if period is not None:
        period = float(_static(period, "period"))
        if period == 0:
            raise ValueError("period must be a non-zero value")
        period = abs(period)
        left = right = None
        x, xp = _mod(x, period), _mod(xp, period)
        order = argsort_p(xp, axis=0, kind="stable")
        xp, fp = getitem(xp, order), getitem(fp, order)
        xp = sh.concatenate([ew.subtract_p(xp[-1:], period), xp, ew.add_p(xp[:1], period)])
        fp = sh.concatenate([fp[-1:], fp, fp[:1]])
    n = shape_of(xp)[0]
    if n == 1:
        out = ew.add_p(fp[0], np.zeros(shape_of(x)))
    else:
        j = ew.subtract_p(searchsorted_p(xp, x, side="right", batch_dims=0), 1)
        j = ew.clip_p(j, 0, n - 2) if isinstance(j, Tracer) else np.clip(j, 0, n - 2)
        x0, y0 = getitem(xp, j), getitem(fp, j)
        x1, y1 = getitem(xp, ew.add_p(j, 1)), getitem(fp, ew.add_p(j, 1))
        slope = ew.divide_p(ew.subtract_p(y1, y0), ew.subtract_p(x1, x0))
        out = ew.add_p(y0, ew.multiply_p(slope, ew.subtract_p(x, x0)))
    below = fp[0] if left is None else left
    above = fp[-1] if right is None else right
    out = ew.where_p(ew.less_p(x, xp[0]), below, out)
    return ew.where_p(ew.greater_p(x, xp[-1]), above, out)
