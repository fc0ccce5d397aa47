"""Reductions that skip NaN, with NumPy's signatures: ``nansum``, ``nanprod``, ``nanmean``,
``nanmax``, ``nanmin``, ``nanargmax`` and ``nanargmin`` (compositions of ``sum``, ``max``,
``where`` ...).

Conventions (identical in forward and reverse mode): NaN (and ``where``-masked) entries of
every nan-reduction get derivative 0, and never cause a NaN derivative for the other entries
(also for an all-NaN slice, whose value is NaN); ``nanmax``/``nanmin`` at a tie share the
derivative equally between tied entries, as ``max`` and ``min``.
"""

import numpy as np

from ..core.trace import Tracer
from ..core.zeros import as_array, dtype_of, shape_of
from . import elementwise as ew
from . import reductions as rd
from . import ufuncs
from .statistics_helpers import (
    _dropped,
    _flag,
    _inexact,
    _is_inexact,
    _no_out,
    _single_axis,
    _valid_count,
    _warn_where,
    _where,
)

__all__ = ["nansum", "nanprod", "nanmean", "nanmax", "nanmin", "nanargmax", "nanargmin"]


# --- nan-reductions -----------------------------------------------------------------------


def _nan_filled(a, fill):
    """``a`` with NaN entries replaced by ``fill`` (so they get derivative 0)."""
    x = as_array(a)
    return ew.where_p(ew.isnan_p(x), fill, x) if _is_inexact(x) else x


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


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    """Mean of the entries that are not NaN (and kept by ``where``), as ``np.nanmean`` (NaN
    for a slice with none); the other entries get derivative 0."""
    _no_out("nanmean", out)
    x = _inexact(as_array(a), dtype)
    keepdims = _flag(keepdims)
    axes = rd.normalize_axes(axis, len(shape_of(x)))
    mask = _dropped(x, where)
    real = np.zeros((), dtype_of(x)).real.dtype
    count = _valid_count(mask, axes, keepdims, real)
    total = rd.sum_p(ew.where_p(mask, 0.0, x), axis=axes, keepdims=keepdims)
    empty = ew.equal_p(count, 0)
    _warn_where(empty, "Mean of empty slice")
    return ew.where_p(empty, np.nan, total / ew.maximum_p(count, 1.0))


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
    x = as_array(a)
    axes = rd.normalize_axes(axis, len(shape_of(x)))
    keepdims = _flag(keepdims)
    if not _is_inexact(x):
        reduce = rd.max if prim is rd.max_p else rd.min
        return reduce(x, axis=axes, keepdims=keepdims, initial=initial, where=where)
    mask = _dropped(x, where)
    empty = ew.equal_p(_valid_count(mask, axes, keepdims, np.intp), 0)
    if initial is not np._NoValue and not all(shape_of(x)[i] for i in axes):
        # an empty axis: nothing but initial (without it, the reduction raises NumPy's error)
        result = np.full(shape_of(empty), np.nan, dtype_of(x))
    else:
        result = ew.where_p(empty, np.nan, prim(ew.where_p(mask, fill, x), axis=axes,
                                              keepdims=keepdims))
    if initial is np._NoValue:
        _warn_where(empty, "All-NaN slice encountered")
        return result
    pick = ufuncs.fmax if prim is rd.max_p else ufuncs.fmin  # a NaN initial is ignored too
    result = pick(result, rd.scalar_initial(initial, dtype_of(x)))
    _warn_where(ew.isnan_p(result), "All-NaN slice encountered")
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
    x = as_array(a)
    if not _is_inexact(x):
        return reducer(x, axis=axis, keepdims=_flag(keepdims))
    mask = ew.isnan_p(x)
    if axis is None:
        empty = rd.min_p(ew.astype(mask, np.int8), axis=tuple(range(len(shape_of(x)))),
                         keepdims=False)
    else:
        ax = _single_axis(axis, len(shape_of(x)))
        empty = rd.min_p(ew.astype(mask, np.int8), axis=(ax,), keepdims=False)
    if not isinstance(empty, Tracer) and np.any(empty):
        raise ValueError("All-NaN slice encountered")
    return reducer(ew.where_p(mask, fill, x), axis=axis, keepdims=_flag(keepdims))


def nanargmax(a, axis=None, out=None, *, keepdims=False):
    """Index of the maximum ignoring NaN, as ``np.nanargmax`` (no derivative)."""
    return _nan_arg("nanargmax", rd.argmax, -np.inf, a, axis, out, keepdims)


def nanargmin(a, axis=None, out=None, *, keepdims=False):
    """Index of the minimum ignoring NaN, as ``np.nanargmin`` (no derivative)."""
    return _nan_arg("nanargmin", rd.argmin, np.inf, a, axis, out, keepdims)
