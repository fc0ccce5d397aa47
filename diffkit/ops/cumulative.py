"""Cumulative sums and products with NumPy's signatures: ``cumsum``, ``cumprod``,
``nancumsum``, ``nancumprod``, ``cumulative_sum`` and ``cumulative_prod``.

The primitives ``cumsum`` and ``cumprod`` are defined in ``reductions.py``, next to ``prod``
whose rules use them. ``cumprod``'s derivative multiplies exclusive products and never
divides by an entry, so it is exact where entries are zero, to every order (as ``prod``'s):
no convention is needed there.
"""

import numpy as np

from ..core.zeros import as_array, dtype_of, shape_of
from . import elementwise as ew
from . import reductions as rd
from . import shape as sh
from .statistics_helpers import _is_inexact, _no_out, _single_axis

__all__ = ["cumsum", "cumprod", "cumulative_sum", "cumulative_prod", "nancumsum", "nancumprod"]


# --- cumulative sums and products ---------------------------------------------------------


def _cumulative(name, prim, a, axis, dtype, fill=None):
    x = as_array(a)
    if axis is None or not shape_of(x):  # a 0-d array counts as 1-d, as in NumPy
        x = sh.ravel(x)
    axis = _single_axis(0 if axis is None else axis, len(shape_of(x)))
    target = getattr(np, name)(np.zeros(1, dtype_of(x)), dtype=dtype).dtype
    if fill is not None and _is_inexact(x):
        x = ew.where_p(ew.isnan_p(x), fill, x)
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
    x = as_array(x)
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
