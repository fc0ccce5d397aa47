"""Order statistics and quantiles: ``median``, ``quantile``, ``percentile`` and their
nan-variants.

One primitive, ``order_statistics_p``: the entries of ``x`` that would stand at given ranks
if ``x`` were sorted along an axis. ``median``, ``quantile`` and ``percentile`` interpolate
between two of them, so their derivative flows to the (at most two) order statistics that
the interpolation reads, with the interpolation weights.

Conventions (identical in forward and reverse mode):

- an order statistic at a tie: the derivative is shared equally among all entries equal to
  it, as for ``max`` and ``min`` (which are the order statistics of rank n-1 and 0): the
  median of ``[1, 1, 3]`` has gradient ``[1/2, 1/2, 0]``;
- a slice that holds NaN in ``quantile``, ``median``, ``percentile``: the value is NaN (as
  NumPy's) and the derivative 0.

Probability levels ``q`` of ``quantile``/``percentile`` are static: they must be concrete
(not traced), and the result is not differentiated with respect to them. Every method of
NumPy's ``quantile`` is supported; the interpolation weights depend only on ``q``, the method
and the number of (non-NaN) entries. The derivative of an order statistic compares every
entry with it, so it costs memory proportional to (number of levels) x (entries reduced).
"""

import numpy as np

from ..core.primitive import Primitive
from ..core.trace import Tracer
from ..core.zeros import Zero, as_array, dtype_of, shape_of
from . import elementwise as ew
from . import reductions as rd
from . import shape as sh
from . import sparsity_rules as sr
from .indexing import getitem
from .statistics_helpers import _along, _count, _flag, _keep, _no_out, _valid_count

__all__ = ["median", "quantile", "percentile", "nanmedian", "nanquantile", "nanpercentile"]


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
    hits = ew.astype(ew.equal_p(sh.expand_dims(x, axis), sh.expand_dims(out, axis + 1)),
                     np.zeros((), dtype_of(x)).real.dtype)
    count = rd.sum_p(hits, axis=(axis + 1,), keepdims=True)
    return hits / ew.maximum_p(count, 1.0)


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
    upper = ew.greater_equal_p(g, 0.5)
    if not isinstance(upper, Tracer):
        if np.all(upper):
            return high - step * (1 - g)
        if not np.any(upper):
            return low + step * g
    return ew.where_p(upper, high - step * (1 - g), low + step * g)


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


def _quantile(name, a, q, axis, out, method, keepdims, weights=None):
    """The quantiles of ``np.<name>``: the ``nan`` functions skip NaN entries, the
    ``percentile`` ones read ``q`` in percent."""
    _no_out(name, out)
    nan, percent = name.startswith("nan"), name.endswith("percentile")
    if weights is not None:
        raise NotImplementedError(f"diffkit.numpy.{name} does not support weights=")
    if method not in _METHODS:
        raise ValueError(f"{method!r} is not a valid method. Use one of: {list(_METHODS)}")
    x = as_array(a)
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
        valid = _valid_count(ew.isnan_p(y), (last,), False, np.intp)
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
    return _quantile("quantile", a, q, axis, out, method, keepdims, weights)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None):
    """The ``q``-th percentiles (``q`` in [0, 100]), as ``np.percentile``."""
    return _quantile("percentile", a, q, axis, out, method, keepdims, weights)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """Median over ``axis``, as ``np.median``: the middle order statistic, or the mean of the
    two middle ones. Ties share the derivative equally (like ``max`` and ``min``)."""
    return _quantile("median", a, 0.5, axis, out, "linear", keepdims)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None):
    """Quantiles ignoring NaN entries, as ``np.nanquantile`` (NaN for an all-NaN slice)."""
    return _quantile("nanquantile", a, q, axis, out, method, keepdims, weights)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None):
    """Percentiles ignoring NaN entries, as ``np.nanpercentile``."""
    return _quantile("nanpercentile", a, q, axis, out, method, keepdims, weights)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """Median ignoring NaN entries, as ``np.nanmedian``; NaN entries get derivative 0."""
    return _quantile("nanmedian", a, 0.5, axis, out, "linear", keepdims)

# Sparsity detection: which entry lands at a rank depends on the values, so globally each
# order statistic depends on its whole line along ``axis``.
order_statistics_p.sparsity = sr.along_axes_sparsity(lambda params: params["axis"])
