"""Shared helpers of the statistics families: argument handling (``out``, flags, dtypes,
axes), counts of the entries a reduction reads, and the masks of NaN and ``where``-dropped
entries of the nan-reductions.
"""

import math
import operator
import warnings

import numpy as np

from ..core.trace import Tracer
from ..core.zeros import dtype_of, shape_of
from . import complex as cx
from . import elementwise as ew
from . import reductions as rd
from . import shape as sh
from .control import stop_gradient
from .indexing import getitem

# --- argument handling ------------------------------------------------------------------------


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
        return cx.real(d * ew.conj_p(d))
    return d * d


def _std_from_var(v, x, axes, keepdims, valid=None):
    """``sqrt(v)`` for the variance ``v`` of ``x`` over ``axes``, with derivative 0 (of every
    order) where the data are constant and no NaN derivative where ``v`` is NaN (an all-NaN
    slice). Constant data are detected as max == min (of the ``valid`` entries), since a
    rounded mean can leave a variance of 1e-34 instead of 0: their std is then exactly 0."""
    x = stop_gradient(x)
    high = x if valid is None else ew.where_p(valid, x, -np.inf)
    low = x if valid is None else ew.where_p(valid, x, np.inf)
    constant = ew.equal_p(rd.max_p(high, axis=axes, keepdims=keepdims),
                        rd.min_p(low, axis=axes, keepdims=keepdims))
    regular = ew.logical_and_p(ew.greater_p(v, 0), ew.logical_not_p(constant))
    return ew.where_p(regular, ew.sqrt_p(ew.where_p(regular, v, 1.0)), v * 0.0)


def _warn_where(condition, message):
    """NumPy's RuntimeWarning when a concrete ``condition`` holds anywhere."""
    if not isinstance(condition, Tracer) and np.any(condition):
        warnings.warn(message, RuntimeWarning, stacklevel=3)


def _nan_mask(x):
    """Where ``x`` is NaN (nothing for integer arrays), as a nondifferentiable boolean."""
    return ew.isnan_p(x) if _is_inexact(x) else np.zeros(shape_of(x), bool)


def _valid_count(mask, axes, keepdims, dtype):
    return rd.sum_p(ew.astype(ew.logical_not_p(mask), dtype), axis=axes, keepdims=keepdims)


def _where(where):
    """``where`` with "keep everything" as ``True`` (older diffkit code passed None)."""
    return True if where is None or where is np._NoValue else where


def _dropped(x, where):
    """Where an entry of ``x`` does not count: NaN, or masked out by ``where``."""
    mask = _nan_mask(x)
    where = _where(where)
    if where is True:
        return mask
    return ew.logical_or_p(mask, ew.logical_not_p(rd.where_mask(where, shape_of(x))))
