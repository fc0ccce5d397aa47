"""Moments and spreads, compositions of existing primitives with NumPy's signatures:
``var``, ``std``, ``nanvar``, ``nanstd``, ``average`` and ``ptp``.

Conventions at nondifferentiable points (identical in forward and reverse mode):

- ``std``/``nanstd`` where the variance is 0 (constant data): derivative 0, also at higher
  orders (std is a scaled norm of the centred data: 0 as for a norm at zero);
- ``ptp`` at a tie: that of ``max`` and ``min`` (shared equally between tied entries);
- NaN (and ``where``-masked) entries of ``nanvar``/``nanstd``: as for every nan-reduction
  (``nan_reductions.py``).
"""

import math
import warnings

import numpy as np

from ..core.trace import Tracer
from ..core.zeros import as_array, dtype_of, shape_of
from . import elementwise as ew
from . import reductions as rd
from . import shape as sh
from .statistics_helpers import (
    _abs2,
    _count,
    _dropped,
    _flag,
    _inexact,
    _no_out,
    _std_from_var,
    _valid_count,
    _warn_where,
)

__all__ = ["var", "std", "nanvar", "nanstd", "average", "ptp"]


# --- moments ------------------------------------------------------------------------------


def _ddof(ddof, correction):
    if correction is not None and correction is not np._NoValue:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        return correction
    return ddof


def _variance_arguments(name, a, axis, dtype, out, ddof, keepdims, correction):
    """The arguments every variance checks and reads, in NumPy's order of complaints:
    ``(x, dims, axes, ddof, keepdims)`` with ``x`` inexact (in ``dtype`` if given), ``dims``
    its shape and ``axes`` the normalised reduction axes."""
    _no_out(name, out)
    ddof = _ddof(ddof, correction)
    keepdims = _flag(keepdims)
    x = _inexact(as_array(a), dtype)
    dims = shape_of(x)
    return x, dims, rd.normalize_axes(axis, len(dims)), ddof, keepdims


def _variance(name, a, axis, dtype, out, ddof, keepdims, where, mean, correction,
              std=False):
    x, dims, axes, ddof, keepdims = _variance_arguments(name, a, axis, dtype, out, ddof,
                                                        keepdims, correction)
    if where is not None and where is not np._NoValue:
        mask = np.broadcast_to(where, dims) if not isinstance(where, Tracer) else \
            sh.broadcast_to(where, dims)
        real = np.zeros((), dtype_of(x)).real.dtype
        count = rd.sum_p(ew.astype(mask, real), axis=axes, keepdims=True)
        if mean is None or mean is np._NoValue:
            mean = rd.sum_p(ew.where_p(mask, x, 0.0), axis=axes, keepdims=True) / count
        d = ew.where_p(mask, x - mean, 0.0)
        total = rd.sum_p(_abs2(d), axis=axes, keepdims=keepdims)
        dof = ew.maximum_p(count - ddof, 0.0)
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
    x, dims, axes, ddof, keepdims = _variance_arguments(name, a, axis, dtype, out, ddof,
                                                        keepdims, correction)
    mask = _dropped(x, where)
    real = np.zeros((), dtype_of(x)).real.dtype
    count = _valid_count(mask, axes, True, real)
    filled = ew.where_p(mask, 0.0, x)
    if mean is None or mean is np._NoValue:
        centre = rd.sum_p(filled, axis=axes, keepdims=True) / ew.maximum_p(count, 1.0)
    else:
        centre = mean
    d = ew.where_p(mask, 0.0, filled - centre)
    total = rd.sum_p(_abs2(d), axis=axes, keepdims=keepdims)
    dof = count - ddof
    if not keepdims:
        dof = sh.reshape(dof, shape_of(total))
    positive = ew.greater_p(dof, 0)
    _warn_where(ew.logical_not_p(positive), "Degrees of freedom <= 0 for slice.")
    variance = ew.where_p(positive, total / ew.where_p(positive, dof, 1.0), np.nan)
    if std:
        return _std_from_var(variance, x, axes, keepdims, ew.logical_not_p(mask))
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
    x = as_array(a)
    keepdims = _flag(keepdims)
    dims = shape_of(x)
    axes = rd.normalize_axes(axis, len(dims))
    if weights is None:
        avg = rd.mean(x, axis=axes, keepdims=keepdims)
        scale = np.asarray(math.prod(dims) / max(math.prod(shape_of(avg)), 1), dtype_of(avg))
    else:
        w = as_array(weights)
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
    x = as_array(a)
    axes = rd.normalize_axes(axis, len(shape_of(x)))
    keepdims = _flag(keepdims)
    return rd.max_p(x, axis=axes, keepdims=keepdims) - rd.min_p(x, axis=axes,
                                                                 keepdims=keepdims)
