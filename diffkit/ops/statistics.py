"""Statistics and cumulative reductions with NumPy's signatures, differentiable.

Most of these are compositions of existing primitives (``sum``, ``max``, ``where``, slicing,
``concatenate``, ``matmul``), so they need no rules of their own: ``var``, ``std``,
``average``, ``ptp``, the nan-reductions, ``diff``, ``ediff1d``, ``gradient``,
``trapezoid``, ``cov`` and ``corrcoef``. Three things are primitives:

- ``cumsum`` and ``cumprod`` (defined in ``reductions.py``, next to ``prod`` whose rules use
  them). ``cumprod``'s derivative multiplies exclusive products and never divides by an
  entry, so it is exact where entries are zero, to every order.
- ``order_statistics``: the entries of ``x`` that would stand at given ranks if ``x`` were
  sorted along an axis. ``median``, ``quantile`` and ``percentile`` (and their nan-variants)
  interpolate between two of them, so their derivative flows to the (at most two) order
  statistics that the interpolation reads, with the interpolation weights.

Conventions at nondifferentiable points (identical in forward and reverse mode)
-------------------------------------------------------------------------------
=============================================  ===================================================
point                                          derivative
=============================================  ===================================================
an order statistic (median, quantile,          shared equally among all entries equal to it,
percentile, and their nan-variants) at a tie   as for ``max`` and ``min`` (which are the order
                                               statistics of rank n-1 and 0): the median of
                                               ``[1, 1, 3]`` has gradient ``[1/2, 1/2, 0]``
``ptp``, ``nanmax``, ``nanmin`` at a tie       those of ``max`` and ``min``: shared equally
``std``/``nanstd`` where the variance is 0     0, also at higher orders (std is a scaled norm of
(constant data)                                the centred data: 0 as for a norm at zero)
NaN (and ``where``-masked) entries of every    0, and never a NaN derivative for the other entries
nan-reduction                                  (also for an all-NaN slice, whose value is NaN)
a slice that holds NaN in ``quantile``,        the value is NaN (as NumPy's) and the derivative 0
``median``, ``percentile``
``cumprod``/``prod`` at zero entries           exact (no convention needed: no division)
=============================================  ===================================================

Probability levels ``q`` of ``quantile``/``percentile`` are static: they must be concrete
(not traced), and the result is not differentiated with respect to them. Every method of
NumPy's ``quantile`` is supported; the interpolation weights depend only on ``q``, the method
and the number of (non-NaN) entries. The derivative of an order statistic compares every
entry with it, so it costs memory proportional to (number of levels) x (entries reduced).
"""

import math
import operator
import warnings

import numpy as np

from ..core.primitive import Primitive
from ..core.trace import Tracer
from ..core.zeros import Zero, dtype_of, shape_of
from . import elementwise as ew
from . import reductions as rd
from . import shape as sh
from .control import stop_gradient
from .indexing import getitem

__all__ = [
    "cumsum", "cumprod", "cumulative_sum", "cumulative_prod", "nancumsum", "nancumprod",
    "var", "std", "nanvar", "nanstd", "average", "ptp",
    "nansum", "nanprod", "nanmean", "nanmax", "nanmin", "nanargmax", "nanargmin",
    "median", "quantile", "percentile", "nanmedian", "nanquantile", "nanpercentile",
    "diff", "ediff1d", "gradient", "trapezoid", "cov", "corrcoef",
]

# --- argument handling ------------------------------------------------------------------------


def _asarray(x):
    """A tracer as it is; anything else as a NumPy array."""
    return x if isinstance(x, (Tracer, np.ndarray)) else np.asarray(x)


def _no_out(name, out):
    rd.no_out(name, out)


def _flag(value, default=False):
    return default if value is np._NoValue else bool(value)


def _is_inexact(x):
    return dtype_of(x).kind in "fc"


def _inexact(x, dtype=None):
    """``x`` cast to ``dtype``, or integers and booleans to float64 (as NumPy's mean)."""
    if dtype is not None:
        return ew.astype(x, dtype)
    return x if _is_inexact(x) else ew.astype(x, np.float64)


def _along(x, axis, index):
    """``x[..., index, ...]`` with ``index`` (a slice or int) on ``axis``."""
    return getitem(x, (slice(None),) * axis + (index,))


def _single_axis(axis, ndim):
    return sh._normalize_axis(operator.index(axis), ndim)


def _count(dims, axes):
    return math.prod(dims[a] for a in axes)


def _keep(dims, axes):
    return tuple(1 if i in axes else d for i, d in enumerate(dims))


def _abs2(d):
    """``|d|**2``, real for complex ``d``."""
    if dtype_of(d).kind == "c":
        from .complex import real
        return real(d * ew.conj(d))
    return d * d


def _std_from_var(v, x, axes, keepdims, valid=None):
    """``sqrt(v)`` for the variance ``v`` of ``x`` over ``axes``, with derivative 0 (of every
    order) where the data are constant and no NaN derivative where ``v`` is NaN (an all-NaN
    slice). Constant data are detected as max == min (of the ``valid`` entries), since a
    rounded mean can leave a variance of 1e-34 instead of 0: their std is then exactly 0."""
    x = stop_gradient(x)
    high = x if valid is None else ew.where(valid, x, -np.inf)
    low = x if valid is None else ew.where(valid, x, np.inf)
    constant = ew.equal(rd.max_p(high, axis=axes, keepdims=keepdims),
                        rd.min_p(low, axis=axes, keepdims=keepdims))
    regular = ew.logical_and(ew.greater(v, 0), ew.logical_not(constant))
    return ew.where(regular, ew.sqrt(ew.where(regular, v, 1.0)), v * 0.0)


def _warn_where(condition, message):
    """NumPy's RuntimeWarning when a concrete ``condition`` holds anywhere."""
    if not isinstance(condition, Tracer) and np.any(condition):
        warnings.warn(message, RuntimeWarning, stacklevel=3)


def _nan_mask(x):
    """Where ``x`` is NaN (nothing for integer arrays), as a nondifferentiable boolean."""
    return ew.isnan(x) if _is_inexact(x) else np.zeros(shape_of(x), bool)


def _valid_count(mask, axes, keepdims, dtype):
    return rd.sum_p(ew.astype(ew.logical_not(mask), dtype), axis=axes, keepdims=keepdims)


# --- cumulative sums and products ---------------------------------------------------------


def _cumulative(name, prim, a, axis, dtype, fill=None):
    x = _asarray(a)
    if axis is None or not shape_of(x):  # a 0-d array counts as 1-d, as in NumPy
        x = sh.ravel(x)
    axis = _single_axis(0 if axis is None else axis, len(shape_of(x)))
    target = getattr(np, name)(np.zeros(1, dtype_of(x)), dtype=dtype).dtype
    if fill is not None and _is_inexact(x):
        x = ew.where(ew.isnan(x), fill, x)
    return prim(ew.astype(x, target), axis=axis, reverse=False)


def cumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum along ``axis`` (of the flattened array by default), as ``np.cumsum``."""
    _no_out("cumsum", out)
    return _cumulative("cumsum", rd.cumsum_p, a, axis, dtype)


def cumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product along ``axis``, as ``np.cumprod``. Its derivative is exact where
    entries are zero (exclusive products, no division)."""
    _no_out("cumprod", out)
    return _cumulative("cumprod", rd.cumprod_p, a, axis, dtype)


def nancumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum treating NaN as 0, as ``np.nancumsum``; NaN entries get derivative 0."""
    _no_out("nancumsum", out)
    return _cumulative("cumsum", rd.cumsum_p, a, axis, dtype, fill=0.0)


def nancumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product treating NaN as 1, as ``np.nancumprod``."""
    _no_out("nancumprod", out)
    return _cumulative("cumprod", rd.cumprod_p, a, axis, dtype, fill=1.0)


def _cumulative_api(name, prim, x, axis, dtype, out, include_initial, initial):
    _no_out(name, out)
    x = _asarray(x)
    ndim = len(shape_of(x))
    if ndim == 0:
        raise ValueError(f"{name} does not support 0-d arrays")
    if axis is None:
        if ndim > 1:
            raise ValueError("For arrays which have more than one dimension ``axis`` argument "
                             "is required.")
        axis = 0
    axis = _single_axis(axis, ndim)
    result = _cumulative("cumsum" if prim is rd.cumsum_p else "cumprod", prim, x, axis, dtype)
    if include_initial:
        dims = shape_of(result)
        edge = np.full(dims[:axis] + (1,) + dims[axis + 1:], initial, dtype_of(result))
        result = sh.concatenate([edge, result], axis=axis)
    return result


def cumulative_sum(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """Cumulative sum, as ``np.cumulative_sum`` (NumPy 2.1): ``axis`` is required for
    arrays of more than one dimension; ``include_initial`` starts with 0."""
    return _cumulative_api("cumulative_sum", rd.cumsum_p, x, axis, dtype, out,
                           include_initial, 0)


def cumulative_prod(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """Cumulative product, as ``np.cumulative_prod``; ``include_initial`` starts with 1."""
    return _cumulative_api("cumulative_prod", rd.cumprod_p, x, axis, dtype, out,
                           include_initial, 1)


# --- moments ------------------------------------------------------------------------------


def _ddof(ddof, correction):
    if correction is not None and correction is not np._NoValue:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        return correction
    return ddof


def _variance(name, a, axis, dtype, out, ddof, keepdims, where, mean, correction,
              std=False):
    _no_out(name, out)
    ddof = _ddof(ddof, correction)
    keepdims = _flag(keepdims)
    x = _inexact(_asarray(a), dtype)
    dims = shape_of(x)
    axes = rd.normalize_axes(axis, len(dims))
    if where is not None and where is not np._NoValue:
        mask = np.broadcast_to(where, dims) if not isinstance(where, Tracer) else \
            sh.broadcast_to(where, dims)
        real = np.zeros((), dtype_of(x)).real.dtype
        count = rd.sum_p(ew.astype(mask, real), axis=axes, keepdims=True)
        if mean is None or mean is np._NoValue:
            mean = rd.sum_p(ew.where(mask, x, 0.0), axis=axes, keepdims=True) / count
        d = ew.where(mask, x - mean, 0.0)
        total = rd.sum_p(_abs2(d), axis=axes, keepdims=keepdims)
        dof = ew.maximum(count - ddof, 0.0)
        variance = total / (dof if keepdims else sh.reshape(dof, shape_of(total)))
        return _std_from_var(variance, x, axes, keepdims, mask) if std else variance
    if mean is None or mean is np._NoValue:
        mean = rd.sum_p(x, axis=axes, keepdims=True) / _count(dims, axes)
    total = rd.sum_p(_abs2(x - mean), axis=axes, keepdims=keepdims)
    dof = max(_count(dims, axes) - ddof, 0)
    if dof == 0:
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=3)
        with np.errstate(divide="ignore", invalid="ignore"):
            variance = total / np.asarray(0.0, dtype_of(total))
    else:
        variance = total / dof
    return _std_from_var(variance, x, axes, keepdims) if std else variance


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        mean=None, correction=None):
    """Variance ``mean(|x - mean(x)|**2)`` over ``axis`` with ``ddof`` (or ``correction``)
    degrees of freedom removed, as ``np.var`` (``where`` masks and a precomputed ``mean``
    with ``keepdims=True`` shape are accepted)."""
    return _variance("var", a, axis, dtype, out, ddof, keepdims, where, mean, correction)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        mean=None, correction=None):
    """Standard deviation, the square root of ``var``, as ``np.std``. Where the variance is
    0 (constant data) the derivative is 0."""
    return _variance("std", a, axis, dtype, out, ddof, keepdims, where, mean, correction,
                     std=True)


def _nan_variance(name, a, axis, dtype, out, ddof, keepdims, where, mean, correction,
                  std=False):
    _no_out(name, out)
    ddof = _ddof(ddof, correction)
    keepdims = _flag(keepdims)
    x = _inexact(_asarray(a), dtype)
    dims = shape_of(x)
    axes = rd.normalize_axes(axis, len(dims))
    mask = _dropped(x, where)
    real = np.zeros((), dtype_of(x)).real.dtype
    count = _valid_count(mask, axes, True, real)
    filled = ew.where(mask, 0.0, x)
    if mean is None or mean is np._NoValue:
        centre = rd.sum_p(filled, axis=axes, keepdims=True) / ew.maximum(count, 1.0)
    else:
        centre = mean
    d = ew.where(mask, 0.0, filled - centre)
    total = rd.sum_p(_abs2(d), axis=axes, keepdims=keepdims)
    dof = count - ddof
    if not keepdims:
        dof = sh.reshape(dof, shape_of(total))
    positive = ew.greater(dof, 0)
    _warn_where(ew.logical_not(positive), "Degrees of freedom <= 0 for slice.")
    variance = ew.where(positive, total / ew.where(positive, dof, 1.0), np.nan)
    if std:
        return _std_from_var(variance, x, axes, keepdims, ew.logical_not(mask))
    return variance


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
           mean=None, correction=None):
    """Variance ignoring NaN entries, as ``np.nanvar``: NaN where fewer than ``ddof + 1``
    entries are not NaN (and kept by ``where``); a precomputed ``mean`` has the
    ``keepdims=True`` shape. NaN and masked entries get derivative 0."""
    return _nan_variance("nanvar", a, axis, dtype, out, ddof, keepdims, where, mean,
                         correction)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
           mean=None, correction=None):
    """Standard deviation ignoring NaN entries, as ``np.nanstd``."""
    return _nan_variance("nanstd", a, axis, dtype, out, ddof, keepdims, where, mean,
                         correction, std=True)


def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """Weighted average over ``axis``, as ``np.average``: ``weights`` has the shape of ``a``,
    or (with ``axis``) the shape of ``a`` along the axes in ``axis``, in that order.
    ``returned=True`` also returns the sum of the weights (broadcast like the average).
    Differentiable in ``a`` and in ``weights``."""
    x = _asarray(a)
    keepdims = _flag(keepdims)
    dims = shape_of(x)
    axes = rd.normalize_axes(axis, len(dims))
    if weights is None:
        avg = rd.mean(x, axis=axes, keepdims=keepdims)
        scale = np.asarray(math.prod(dims) / max(math.prod(shape_of(avg)), 1), dtype_of(avg))
    else:
        w = _asarray(weights)
        if shape_of(w) != dims:
            if axis is None:
                raise TypeError("Axis must be specified when shapes of a and weights differ.")
            given = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
            given = [sh._normalize_axis(ax, len(dims)) for ax in given]
            if shape_of(w) != tuple(dims[ax] for ax in given):
                raise ValueError("Shape of weights must be consistent with shape of a along "
                                 "specified axis.")
            w = sh.reshape(sh.transpose(w, [int(i) for i in np.argsort(given)]),
                           tuple(d if i in axes else 1 for i, d in enumerate(dims)))
        if dtype_of(x).kind in "biu":
            result = np.result_type(dtype_of(x), dtype_of(w), np.float64)
        else:
            result = np.result_type(dtype_of(x), dtype_of(w))
        w = ew.astype(w, result)
        scale = rd.sum_p(sh.broadcast_to(w, dims), axis=axes, keepdims=keepdims)
        if not isinstance(scale, Tracer) and np.any(scale == 0.0):
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        avg = rd.sum_p(ew.astype(x, result) * w, axis=axes, keepdims=keepdims) / scale
    if returned:
        if shape_of(scale) != shape_of(avg):
            scale = sh.broadcast_to(scale, shape_of(avg))
        return avg, scale
    return avg


def ptp(a, axis=None, out=None, keepdims=False):
    """Range ``max - min`` over ``axis``, as ``np.ptp``; ties share the derivative."""
    _no_out("ptp", out)
    x = _asarray(a)
    axes = rd.normalize_axes(axis, len(shape_of(x)))
    keepdims = _flag(keepdims)
    return rd.max_p(x, axis=axes, keepdims=keepdims) - rd.min_p(x, axis=axes,
                                                                 keepdims=keepdims)


# --- nan-reductions -----------------------------------------------------------------------


def _nan_filled(a, fill):
    """``a`` with NaN entries replaced by ``fill`` (so they get derivative 0)."""
    x = _asarray(a)
    return ew.where(ew.isnan(x), fill, x) if _is_inexact(x) else x


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=np._NoValue,
           where=True):
    """Sum treating NaN as 0, as ``np.nansum`` (``dtype``, ``initial`` and ``where`` as in
    ``sum``); NaN and masked entries get derivative 0."""
    _no_out("nansum", out)
    return rd.sum(_nan_filled(a, 0.0), axis=axis, dtype=dtype, keepdims=_flag(keepdims),
                  initial=_initial(initial), where=_where(where))


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=np._NoValue,
            where=True):
    """Product treating NaN as 1, as ``np.nanprod``; NaN and masked entries get derivative 0."""
    _no_out("nanprod", out)
    return rd.prod(_nan_filled(a, 1.0), axis=axis, dtype=dtype, keepdims=_flag(keepdims),
                   initial=_initial(initial), where=_where(where))


def _initial(initial):
    """NumPy's "no initial value" (older diffkit code passed None for it)."""
    return np._NoValue if initial is None else initial


def _where(where):
    """``where`` with "keep everything" as ``True`` (older diffkit code passed None)."""
    return True if where is None or where is np._NoValue else where


def _dropped(x, where):
    """Where an entry of ``x`` does not count: NaN, or masked out by ``where``."""
    mask = _nan_mask(x)
    where = _where(where)
    if where is True:
        return mask
    return ew.logical_or(mask, ew.logical_not(rd.where_mask(where, shape_of(x))))


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    """Mean of the entries that are not NaN (and kept by ``where``), as ``np.nanmean`` (NaN
    for a slice with none); the other entries get derivative 0."""
    _no_out("nanmean", out)
    x = _inexact(_asarray(a), dtype)
    keepdims = _flag(keepdims)
    axes = rd.normalize_axes(axis, len(shape_of(x)))
    mask = _dropped(x, where)
    real = np.zeros((), dtype_of(x)).real.dtype
    count = _valid_count(mask, axes, keepdims, real)
    total = rd.sum_p(ew.where(mask, 0.0, x), axis=axes, keepdims=keepdims)
    empty = ew.equal(count, 0)
    _warn_where(empty, "Mean of empty slice")
    return ew.where(empty, np.nan, total / ew.maximum(count, 1.0))


def _nan_extremum(name, prim, fill, a, axis, out, keepdims, initial, where):
    """``nanmax``/``nanmin``: NaN (and masked) entries are left out; a slice with none left
    is NaN (with NumPy's warning) unless ``initial`` is given, which is one more candidate
    that is itself ignored when NaN (as in NumPy's ``fmax.reduce``)."""
    _no_out(name, out)
    initial, where = _initial(initial), _where(where)
    masking = where is not True
    if masking and initial is np._NoValue:
        raise ValueError(f"reduction operation '{'fmax' if prim is rd.max_p else 'fmin'}' "
                         "does not have an identity, so to use a where mask one has to "
                         "specify 'initial'")
    x = _asarray(a)
    axes = rd.normalize_axes(axis, len(shape_of(x)))
    keepdims = _flag(keepdims)
    if not _is_inexact(x):
        reduce = rd.max if prim is rd.max_p else rd.min
        return reduce(x, axis=axes, keepdims=keepdims, initial=initial, where=where)
    mask = _dropped(x, where)
    empty = ew.equal(_valid_count(mask, axes, keepdims, np.intp), 0)
    if initial is not np._NoValue and not all(shape_of(x)[i] for i in axes):
        # an empty axis: nothing but initial (without it, the reduction raises NumPy's error)
        result = np.full(shape_of(empty), np.nan, dtype_of(x))
    else:
        result = ew.where(empty, np.nan, prim(ew.where(mask, fill, x), axis=axes,
                                              keepdims=keepdims))
    if initial is np._NoValue:
        _warn_where(empty, "All-NaN slice encountered")
        return result
    from .ufuncs import fmax, fmin
    pick = fmax if prim is rd.max_p else fmin  # a NaN initial is ignored too
    result = pick(result, rd.scalar_initial(initial, dtype_of(x)))
    _warn_where(ew.isnan(result), "All-NaN slice encountered")
    return result


def nanmax(a, axis=None, out=None, keepdims=False, initial=np._NoValue, where=True):
    """Maximum ignoring NaN, as ``np.nanmax`` (NaN for an all-NaN slice; ``initial`` and
    ``where`` as in ``max``); ties share the derivative, NaN and masked entries get 0."""
    return _nan_extremum("nanmax", rd.max_p, -np.inf, a, axis, out, keepdims, initial, where)


def nanmin(a, axis=None, out=None, keepdims=False, initial=np._NoValue, where=True):
    """Minimum ignoring NaN, as ``np.nanmin``."""
    return _nan_extremum("nanmin", rd.min_p, np.inf, a, axis, out, keepdims, initial, where)


def _nan_arg(name, reducer, fill, a, axis, out, keepdims):
    _no_out(name, out)
    x = _asarray(a)
    if not _is_inexact(x):
        return reducer(x, axis=axis, keepdims=_flag(keepdims))
    mask = ew.isnan(x)
    if axis is None:
        empty = rd.min_p(ew.astype(mask, np.int8), axis=tuple(range(len(shape_of(x)))),
                         keepdims=False)
    else:
        ax = _single_axis(axis, len(shape_of(x)))
        empty = rd.min_p(ew.astype(mask, np.int8), axis=(ax,), keepdims=False)
    if not isinstance(empty, Tracer) and np.any(empty):
        raise ValueError("All-NaN slice encountered")
    return reducer(ew.where(mask, fill, x), axis=axis, keepdims=_flag(keepdims))


def nanargmax(a, axis=None, out=None, *, keepdims=False):
    """Index of the maximum ignoring NaN, as ``np.nanargmax`` (no derivative)."""
    return _nan_arg("nanargmax", rd.argmax, -np.inf, a, axis, out, keepdims)


def nanargmin(a, axis=None, out=None, *, keepdims=False):
    """Index of the minimum ignoring NaN, as ``np.nanargmin`` (no derivative)."""
    return _nan_arg("nanargmin", rd.argmin, np.inf, a, axis, out, keepdims)


# --- order statistics ---------------------------------------------------------------------
# order_statistics(x, ranks, axis)[..., r, ...] is the entry of rank ranks[..., r, ...] along
# ``axis`` (sorted ascending, NaN last). ``ranks`` is an integer array with x's number of
# dimensions whose other axes are 1 (the same ranks for every slice) or x's (ranks per
# slice, for the nan-variants). Its derivative is that of the order statistic: the tangent
# of the entries equal to it, shared equally between them at ties (max and min's rule).


def _without(dims, axis):
    return dims[:axis] + dims[axis + 1:]


def _order_shape(x_dims, rank_dims, axis):
    other = np.broadcast_shapes(_without(x_dims, axis), _without(rank_dims, axis))
    return other[:axis] + (rank_dims[axis],) + other[axis:]


def _order_impl(x, ranks, axis, propagate_nan):
    target = _order_shape(x.shape, ranks.shape, axis)
    if all(d == 1 for d in _without(ranks.shape, axis)):
        wanted = ranks.reshape(-1)
        partitioned = np.partition(x, np.unique(wanted), axis=axis)
        out = np.take(partitioned, wanted, axis=axis)
    else:
        ordered = np.sort(x, axis=axis)
        ordered = np.broadcast_to(ordered, target[:axis] + (x.shape[axis],) + target[axis + 1:])
        out = np.take_along_axis(ordered, np.broadcast_to(ranks, target), axis=axis)
    out = np.broadcast_to(out, target)
    if propagate_nan:
        out = np.where(np.isnan(x).any(axis=axis, keepdims=True), np.nan, out)
    return np.array(out, copy=True)


def _order_weights(x, out, axis):
    """``w[..., r, i, ...]``: 1/k if entry i is one of the k entries equal to order statistic
    r, else 0 (also where the statistic is NaN)."""
    hits = ew.astype(ew.equal(sh.expand_dims(x, axis), sh.expand_dims(out, axis + 1)),
                     np.zeros((), dtype_of(x)).real.dtype)
    count = rd.sum_p(hits, axis=(axis + 1,), keepdims=True)
    return hits / ew.maximum(count, 1.0)


def _order_jvp(primals, tangents, axis, propagate_nan):
    x, ranks = primals
    out = order_statistics_p(x, ranks, axis=axis, propagate_nan=propagate_nan)
    t = tangents[0]
    if type(t) is Zero:
        return out, Zero(shape_of(out), dtype_of(out))
    weights = _order_weights(x, out, axis)
    return out, rd.sum_p(sh.expand_dims(t, axis) * weights, axis=(axis + 1,), keepdims=False)


def _order_vjp(ct, out, x, ranks, axis, propagate_nan):
    weights = _order_weights(x, out, axis)
    spread = rd.sum_p(sh.expand_dims(ct, axis + 1) * weights, axis=(axis,), keepdims=False)
    return rd.unbroadcast(spread, shape_of(x))


def _order_batch(axis_size, values, batch_axes, axis, propagate_nan):
    x, ranks = (v if ax is not None else sh.reshape(v, (1,) + shape_of(v))
                for v, ax in zip(values, batch_axes))
    return order_statistics_p(x, ranks, axis=axis + 1, propagate_nan=propagate_nan), 0


order_statistics_p = Primitive("order_statistics", _order_impl, _order_jvp, (_order_vjp,),
                               _order_batch, vjp_ignores=(1,))

# --- quantiles ----------------------------------------------------------------------------
# For n entries and a level q, every method of np.quantile reads the sorted entries y at two
# ranks lo <= hi and returns y[lo] + g * (y[hi] - y[lo]); lo, hi and g depend on n and q only.
# Hyndman & Fan's estimators: index = n q + m - 1 with m as below (methods 4-9), j = floor,
# g the fractional part; the discontinuous methods change g (and m) as NumPy documents.

_SHIFT = {  # m(q) of the continuous methods
    "interpolated_inverted_cdf": lambda q: 0.0 * q,
    "hazen": lambda q: 0.5 + 0.0 * q,
    "weibull": lambda q: q,
    "linear": lambda q: 1.0 - q,
    "median_unbiased": lambda q: q / 3.0 + 1.0 / 3.0,
    "normal_unbiased": lambda q: q / 4.0 + 3.0 / 8.0,
}
_METHODS = ("inverted_cdf", "averaged_inverted_cdf", "closest_observation",
            "interpolated_inverted_cdf", "hazen", "weibull", "linear", "median_unbiased",
            "normal_unbiased", "lower", "higher", "midpoint", "nearest")


def _positions(counts, q, method):
    """``(lo, hi, g)``, each of shape ``counts.shape + q.shape``, for samples of ``counts``
    entries (an all-NaN slice, count 0, reads rank 0: NaN)."""
    counts = np.asarray(counts)
    n = counts.astype(np.float64).reshape(counts.shape + (1,) * q.ndim)
    if method in ("linear", "lower", "higher", "midpoint", "nearest"):
        index = (n - 1) * q
    elif method in _SHIFT:
        index = n * q + _SHIFT[method](q) - 1
    elif method == "closest_observation":
        index = n * q - 1.5
    else:  # inverted_cdf, averaged_inverted_cdf
        index = n * q - 1
    j = np.floor(index)
    frac = index - j
    odd = j % 2 == 1
    if method in _SHIFT:
        g = frac
    elif method == "lower":
        g = np.zeros_like(frac)
    elif method in ("higher", "inverted_cdf"):
        g = (frac > 0) * 1.0
    elif method == "midpoint":
        g = np.where(frac > 0, 0.5, 0.0)
    elif method == "nearest":  # rounds half to even, as NumPy
        g = ((frac > 0.5) | ((frac == 0.5) & odd)) * 1.0
    elif method == "averaged_inverted_cdf":
        g = (1.0 + (frac > 0)) / 2
    else:  # closest_observation
        g = 1.0 - ((frac == 0) & odd)
    top = np.maximum(n - 1, 0)
    lo = np.clip(j, 0, top).astype(np.intp)
    hi = np.clip(j + 1, 0, top).astype(np.intp)
    g = np.where(n == 0, 0.0, np.broadcast_to(g, lo.shape))
    return lo, hi, g


def _lerp(low, high, g):
    """``low + g (high - low)``, from the nearer end as NumPy does (exact at g = 0 and 1)."""
    step = high - low
    upper = ew.greater_equal(g, 0.5)
    if not isinstance(upper, Tracer):
        if np.all(upper):
            return high - step * (1 - g)
        if not np.any(upper):
            return low + step * g
    return ew.where(upper, high - step * (1 - g), low + step * g)


def _static_levels(name, q, percent):
    if isinstance(q, Tracer):
        raise TypeError(
            f"{name}: the levels q must be concrete numbers, not a traced value: diffkit does "
            "not differentiate quantiles with respect to q (wrap q in dk.stop_gradient "
            "outside the transformation, or pass it as a constant)")
    levels = np.asarray(q)
    if levels.dtype.kind not in "biuf":
        raise TypeError(f"{name}: q must be real numbers, got dtype {levels.dtype}")
    if percent:
        levels = np.true_divide(levels, 100)
    else:
        levels = levels.astype(np.float64)
    if not np.all((levels >= 0) & (levels <= 1)):
        raise ValueError("Percentiles must be in the range [0, 100]" if percent else
                         "Quantiles must be in the range [0, 1]")
    return levels


def _quantile(name, a, q, axis, method, keepdims, nan, percent=False, weights=None):
    if weights is not None:
        raise NotImplementedError(f"diffkit.numpy.{name} does not support weights=")
    if method not in _METHODS:
        raise ValueError(f"{method!r} is not a valid method. Use one of: {list(_METHODS)}")
    x = _asarray(a)
    levels = _static_levels(name, q, percent)
    if dtype_of(x).kind == "c":
        raise TypeError("a must be an array of real numbers")
    base = dtype_of(x) if dtype_of(x).kind == "f" else np.dtype(np.float64)
    weak = isinstance(q, (int, float)) and not isinstance(q, bool)  # NumPy 2's weak scalars
    dtype = base if weak else np.result_type(base, np.asarray(q).dtype)
    x = ew.astype(x, dtype)
    dims = shape_of(x)
    axes = rd.normalize_axes(axis, len(dims))
    kept = [i for i in range(len(dims)) if i not in axes]
    size = _count(dims, axes)
    if size == 0:
        raise ValueError(f"{name} of an empty slice is not defined (axis {axis} of an array "
                         f"of shape {dims})")
    last = len(kept)
    kept_dims = tuple(dims[i] for i in kept)
    y = sh.reshape(sh.transpose(x, kept + list(axes)), kept_dims + (size,))
    flat = levels.reshape(-1)
    count = len(flat)
    if nan:
        valid = _valid_count(ew.isnan(y), (last,), False, np.intp)
        lo_table, hi_table, g_table = _positions(np.arange(size + 1), flat, method)
        lo, hi = getitem(lo_table, valid), getitem(hi_table, valid)
        g = getitem(g_table.astype(dtype), valid)
        single = False
    else:
        lo, hi, g = (np.reshape(v, (1,) * last + (count,))
                     for v in _positions(size, flat, method))
        g = g.astype(dtype)
        single = not np.any(g)
    if single:
        result = order_statistics_p(y, lo, axis=last, propagate_nan=not nan)
    else:
        ranks = sh.concatenate([lo, hi], axis=last)
        both = order_statistics_p(y, ranks, axis=last, propagate_nan=not nan)
        low = _along(both, last, slice(0, count))
        high = _along(both, last, slice(count, 2 * count))
        result = _lerp(low, high, g)
    result = sh.moveaxis(result, last, 0)
    result = sh.reshape(result, levels.shape + (_keep(dims, axes) if _flag(keepdims)
                                                else kept_dims))
    return result


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None):
    """The ``q``-th quantiles over ``axis``, as ``np.quantile`` (every ``method``; ``q`` a
    concrete scalar or array whose shape leads the result's). The derivative flows to the
    order statistics that the method interpolates between; ties share it equally."""
    _no_out("quantile", out)
    return _quantile("quantile", a, q, axis, method, keepdims, False, weights=weights)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None):
    """The ``q``-th percentiles (``q`` in [0, 100]), as ``np.percentile``."""
    _no_out("percentile", out)
    return _quantile("percentile", a, q, axis, method, keepdims, False, percent=True,
                     weights=weights)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """Median over ``axis``, as ``np.median``: the middle order statistic, or the mean of the
    two middle ones. Ties share the derivative equally (like ``max`` and ``min``)."""
    _no_out("median", out)
    return _quantile("median", a, 0.5, axis, "linear", keepdims, False)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None):
    """Quantiles ignoring NaN entries, as ``np.nanquantile`` (NaN for an all-NaN slice)."""
    _no_out("nanquantile", out)
    return _quantile("nanquantile", a, q, axis, method, keepdims, True, weights=weights)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None):
    """Percentiles ignoring NaN entries, as ``np.nanpercentile``."""
    _no_out("nanpercentile", out)
    return _quantile("nanpercentile", a, q, axis, method, keepdims, True, percent=True,
                     weights=weights)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """Median ignoring NaN entries, as ``np.nanmedian``; NaN entries get derivative 0."""
    _no_out("nanmedian", out)
    return _quantile("nanmedian", a, 0.5, axis, "linear", keepdims, True)


# --- differences, gradients, integrals -----------------------------------------------------


def _edge_value(value, x, axis):
    """``prepend``/``append`` as an array joinable to ``x`` along ``axis``."""
    value = _asarray(value)
    if len(shape_of(value)) == 0:
        dims = shape_of(x)
        value = sh.broadcast_to(value, dims[:axis] + (1,) + dims[axis + 1:])
    return value


def diff(a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue):
    """The ``n``-th discrete difference along ``axis``, as ``np.diff`` (``prepend`` and
    ``append`` join values first; scalars are broadcast)."""
    if n == 0:
        return a
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n!r}")
    x = _asarray(a)
    ndim = len(shape_of(x))
    if ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = _single_axis(axis, ndim)
    parts = []
    if prepend is not np._NoValue:
        parts.append(_edge_value(prepend, x, axis))
    parts.append(x)
    if append is not np._NoValue:
        parts.append(_edge_value(append, x, axis))
    if len(parts) > 1:
        x = sh.concatenate(parts, axis=axis)
    boolean = dtype_of(x).kind == "b"
    for _ in range(n):
        length = shape_of(x)[axis]
        later, earlier = _along(x, axis, slice(1, None)), _along(x, axis, slice(0, length - 1))
        x = ew.not_equal(later, earlier) if boolean else later - earlier
    return x


def ediff1d(ary, to_end=None, to_begin=None):
    """Differences between consecutive entries of the flattened ``ary``, with ``to_begin``
    and ``to_end`` joined at the ends, as ``np.ediff1d``."""
    x = sh.ravel(_asarray(ary))
    n = shape_of(x)[0]
    parts = [_along(x, 0, slice(1, None)) - _along(x, 0, slice(0, max(n - 1, 0)))]
    for value, what in ((to_begin, "to_begin"), (to_end, "to_end")):
        if value is None:
            continue
        value = _asarray(value)
        if not np.can_cast(dtype_of(value), dtype_of(x), casting="same_kind"):
            raise TypeError(f"dtype of `{what}` must be compatible with input `ary` under the "
                            "`same_kind` rule.")
        value = ew.astype(sh.ravel(value), dtype_of(x))
        parts.insert(0 if what == "to_begin" else len(parts), value)
    return parts[0] if len(parts) == 1 else sh.concatenate(parts)


def _spacings(varargs, dims, axes):
    """One spacing per axis: a scalar, or a 1-D array of coordinates."""
    if not varargs:
        return [1.0] * len(axes)
    if len(varargs) == 1 and len(shape_of(varargs[0])) == 0:
        return [varargs[0]] * len(axes)
    if len(varargs) != len(axes):
        raise TypeError("invalid number of arguments")
    spacings = []
    for spacing, ax in zip(varargs, axes):
        spacing = _asarray(spacing)
        rank = len(shape_of(spacing))
        if rank == 0:
            spacings.append(spacing)
            continue
        if rank != 1:
            raise ValueError("distances must be either scalars or 1d")
        if shape_of(spacing)[0] != dims[ax]:
            raise ValueError("when 1d, distances must match the length of the corresponding "
                             "dimension")
        if dtype_of(spacing).kind in "biu":
            spacing = ew.astype(spacing, np.float64)
        steps = diff(spacing)
        if not isinstance(steps, Tracer) and steps.size and np.all(steps == steps[0]):
            spacings.append(steps[0])  # uniform, as NumPy: the simpler formula
        else:
            spacings.append(("coordinates", steps))
    return spacings


def _on_axis(values, ndim, axis):
    """A 1-D array laid along ``axis`` of an ``ndim``-dimensional array."""
    return sh.reshape(values, tuple(-1 if i == axis else 1 for i in range(ndim)))


def _gradient_along(f, spacing, axis, edge_order):
    ndim = len(shape_of(f))
    n = shape_of(f)[axis]

    def at(start, stop):
        return _along(f, axis, slice(start, stop))

    first, second, last, before = at(0, 1), at(1, 2), at(n - 1, n), at(n - 2, n - 1)
    third, before2 = (at(2, 3), at(n - 3, n - 2)) if n >= 3 else (None, None)
    if type(spacing) is tuple:
        steps = spacing[1]
        dx1 = _along(steps, 0, slice(0, n - 2))
        dx2 = _along(steps, 0, slice(1, n - 1))
        a = -dx2 / (dx1 * (dx1 + dx2))
        b = (dx2 - dx1) / (dx1 * dx2)
        c = dx1 / (dx2 * (dx1 + dx2))
        a, b, c = (_on_axis(v, ndim, axis) for v in (a, b, c))
        inner = a * at(0, n - 2) + b * at(1, n - 1) + c * at(2, n)
        h0, hl = getitem(steps, 0), getitem(steps, n - 2)
        if edge_order == 1:
            start = (second - first) / h0
            end = (last - before) / hl
        else:
            dx1, dx2 = h0, getitem(steps, 1)
            a = -(2.0 * dx1 + dx2) / (dx1 * (dx1 + dx2))
            b = (dx1 + dx2) / (dx1 * dx2)
            c = -dx1 / (dx2 * (dx1 + dx2))
            start = a * first + b * second + c * third
            dx1, dx2 = getitem(steps, n - 3), hl
            a = dx2 / (dx1 * (dx1 + dx2))
            b = -(dx2 + dx1) / (dx1 * dx2)
            c = (2.0 * dx2 + dx1) / (dx2 * (dx1 + dx2))
            end = a * before2 + b * before + c * last
    else:
        h = spacing
        inner = (at(2, n) - at(0, n - 2)) / (2.0 * h)
        if edge_order == 1:
            start = (second - first) / h
            end = (last - before) / h
        else:
            start = (-1.5 / h) * first + (2.0 / h) * second + (-0.5 / h) * third
            end = (0.5 / h) * before2 + (-2.0 / h) * before + (1.5 / h) * last
    return sh.concatenate([start, inner, end], axis=axis)


def gradient(f, *varargs, axis=None, edge_order=1):
    """The gradient of ``f`` sampled on a grid, as ``np.gradient``: second-order central
    differences inside and one-sided differences of order ``edge_order`` (1 or 2) at the
    ends. Spacings are one scalar, one per axis, or 1-D coordinate arrays (differentiable
    too). Returns one array, or a tuple with one per axis when there are several."""
    x = _asarray(f)
    dims = shape_of(x)
    ndim = len(dims)
    if axis is None:
        axes = list(range(ndim))
    else:
        given = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
        axes = [sh._normalize_axis(a, ndim) for a in given]
        if len(set(axes)) != len(axes):
            raise ValueError(f"duplicate value in 'axis': {axis}")
    spacings = _spacings(varargs, dims, axes)
    if edge_order > 2:
        raise ValueError("'edge_order' greater than 2 not supported")
    if dtype_of(x).kind in "biu":
        x = ew.astype(x, np.float64)
    outputs = []
    for ax, spacing in zip(axes, spacings):
        if dims[ax] < edge_order + 1:
            raise ValueError("Shape of array too small to calculate a numerical gradient, at "
                             "least (edge_order + 1) elements are required.")
        outputs.append(_gradient_along(x, spacing, ax, edge_order))
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of ``y`` along ``axis`` by the trapezoidal rule, as ``np.trapezoid``:
    at sample points ``x`` (1-D along ``axis``, or shaped like ``y``) or spacing ``dx``.
    Differentiable in ``y``, ``x`` and ``dx``."""
    y = _asarray(y)
    ndim = len(shape_of(y))
    axis = _single_axis(axis, ndim)
    n = shape_of(y)[axis]
    if x is None:
        d = dx
    else:
        x = _asarray(x)
        if len(shape_of(x)) == 1:
            d = _on_axis(diff(x), ndim, axis)
        else:
            d = diff(x, axis=axis)
    pairs = _along(y, axis, slice(1, None)) + _along(y, axis, slice(0, max(n - 1, 0)))
    return rd.sum(d * pairs / 2.0, axis=axis)


# --- covariance and correlation ------------------------------------------------------------


def _observations(m, rowvar, what):
    m = _asarray(m)
    rank = len(shape_of(m))
    if rank > 2:
        raise ValueError(f"{what} has more than 2 dimensions")
    if rank < 2:
        m = sh.reshape(m, (1, -1) if rank == 1 else (1, 1))
    if not rowvar and shape_of(m)[0] != 1:
        m = sh.transpose(m)
    return m


def _frequency_weights(fweights, n):
    fweights = np.asarray(fweights, dtype=float)
    if not np.all(fweights == np.around(fweights)):
        raise TypeError("fweights must be integer")
    if fweights.ndim > 1:
        raise RuntimeError("cannot handle multidimensional fweights")
    if fweights.shape[0] != n:
        raise RuntimeError("incompatible numbers of samples and fweights")
    if np.any(fweights < 0):
        raise ValueError("fweights cannot be negative")
    return fweights


def _analytic_weights(aweights, n):
    aweights = _asarray(aweights)
    if len(shape_of(aweights)) > 1:
        raise RuntimeError("cannot handle multidimensional aweights")
    if shape_of(aweights)[0] != n:
        raise RuntimeError("incompatible numbers of samples and aweights")
    if not isinstance(aweights, Tracer) and np.any(aweights < 0):
        raise ValueError("aweights cannot be negative")
    return aweights


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
        dtype=None):
    """Covariance matrix of the variables in the rows of ``m`` (columns if not ``rowvar``),
    and of ``y``'s, as ``np.cov``, with frequency and analytic weights. Differentiable in
    ``m``, ``y`` and ``aweights``."""
    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    if dtype is None:
        dtype = np.result_type(dtype_of(_asarray(m)), np.float64) if y is None else \
            np.result_type(dtype_of(_asarray(m)), dtype_of(_asarray(y)), np.float64)
    data = ew.astype(_observations(m, rowvar, "m"), dtype)
    if y is not None:
        other = ew.astype(_observations(y, rowvar, "y"), dtype)
        data = sh.concatenate([data, other], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    samples = shape_of(data)[1]
    w = None
    if fweights is not None:
        w = _frequency_weights(fweights, samples)
    if aweights is not None:
        aweights = _analytic_weights(aweights, samples)
        w = aweights if w is None else w * aweights
    avg, w_sum = average(data, axis=1, weights=w, returned=True)
    w_sum = getitem(w_sum, 0)
    if w is None:
        fact = samples - ddof
    elif ddof == 0:
        fact = w_sum
    elif aweights is None:
        fact = w_sum - ddof
    else:
        fact = w_sum - ddof * rd.sum(w * aweights) / w_sum
    if not isinstance(fact, Tracer) and fact <= 0:
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=2)
        fact = 0.0
    centred = data - sh.reshape(avg, (-1, 1))
    weighted = centred if w is None else centred * w
    if dtype_of(weighted).kind == "c":
        weighted = ew.conj(weighted)
    from .linalg import matmul
    product = matmul(centred, sh.transpose(weighted))
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = 1.0 / fact if isinstance(fact, Tracer) else np.true_divide(1.0, fact)
        return sh.squeeze(product * scale)


def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """Pearson correlation coefficients, as ``np.corrcoef``: ``cov`` normalised by the
    standard deviations, clipped to [-1, 1] (the clip passes the derivative of values
    inside, as ``clip`` does)."""
    c = cov(x, y, rowvar, dtype=dtype)
    if len(shape_of(c)) == 0:
        with np.errstate(divide="ignore", invalid="ignore"):
            return c / c
    k = shape_of(c)[0]
    diagonal = getitem(c, (np.arange(k), np.arange(k)))
    if dtype_of(diagonal).kind == "c":
        from .complex import real
        diagonal = real(diagonal)
    spread = ew.sqrt(diagonal)
    c = c / sh.reshape(spread, (k, 1))
    c = c / sh.reshape(spread, (1, k))
    if dtype_of(c).kind == "c":
        from .complex import imag, real
        return ew.clip(real(c), -1.0, 1.0) + 1j * ew.clip(imag(c), -1.0, 1.0)
    return ew.clip(c, -1.0, 1.0)
