"""Repetition and padding: ``tile``, ``repeat`` and ``pad`` (every NumPy mode),
as compositions of static gathers, ``concatenate`` and ``broadcast_to``.

Integer statistics of ``pad`` (``mean``, ``median``) are rounded half to even and integer
ramps rounded down, as NumPy does.
"""

import functools
import math

import numpy as np

from ..core.concrete import holds_tracer
from ..core.trace import Tracer
from ..core.zeros import as_array, dtype_of, shape_of
from . import elementwise as ew
from . import reductions as red
from . import shape as sh
from .array_helpers import (
    _NUMPY2,
    _axis,
    _gather,
    _ndim,
    _static,
    _take_range,
    _with_width,
    index_floor_divide_p,
    pad_rint_p,
)
from .array_sorting import sort

__all__ = ["tile", "repeat", "pad"]

# === tile, repeat ==========================================================================


def tile(A, reps):  # noqa: N803 (NumPy's name)
    """``A`` repeated ``reps`` times along each axis, as ``np.tile``: a reshape, a broadcast
    and a reshape (its VJP sums over the copies)."""
    reps = _static(reps, "reps")
    reps = (int(reps),) if np.ndim(reps) == 0 else tuple(int(r) for r in reps)
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: negative repetitions are not allowed, got reps={reps}")
    if not holds_tracer(A):
        return np.tile(A, reps)
    dims = shape_of(A)
    if len(reps) < len(dims):
        reps = (1,) * (len(dims) - len(reps)) + reps
    dims = (1,) * (len(reps) - len(dims)) + dims
    if all(r == 1 for r in reps):
        return sh.reshape(A, dims)
    interleaved = sum(((1, d) for d in dims), ())
    expanded = sum(((r, d) for r, d in zip(reps, dims)), ())
    out = sh.broadcast_to(sh.reshape(A, interleaved), expanded)
    return sh.reshape(out, tuple(r * d for r, d in zip(reps, dims)))


def repeat(a, repeats, axis=None):
    """Each element of ``a`` repeated ``repeats`` times along ``axis`` (the flattened array
    for ``None``), as ``np.repeat``; ``repeats`` is an int or one count per element."""
    repeats = np.asarray(_static(repeats, "repeats"))
    if repeats.dtype.kind not in "iub":
        raise TypeError(f"repeat: repeats must be integers, got dtype {repeats.dtype}")
    if not holds_tracer(a):
        return np.repeat(a, repeats, axis)
    if axis is None:
        a, axis = sh.ravel(a), 0
    dims = shape_of(a)
    axis = _axis(axis, len(dims))
    n = dims[axis]
    if np.any(repeats < 0):
        raise ValueError("repeat: repeats may not contain negative values")
    if repeats.size == 1:
        count = int(repeats.ravel()[0])
        if count == 1:
            return a
        out = sh.reshape(a, dims[:axis + 1] + (1,) + dims[axis + 1:])
        out = sh.broadcast_to(out, dims[:axis + 1] + (count,) + dims[axis + 1:])
        return sh.reshape(out, dims[:axis] + (n * count,) + dims[axis + 1:])
    if repeats.ndim != 1 or repeats.size != n:
        raise ValueError(f"repeat: repeats of shape {repeats.shape} cannot be broadcast to "
                         f"the {n} elements along axis {axis}")
    return _gather(a, axis, np.repeat(np.arange(n), repeats))


# === pad ===================================================================================

_PAD_KEYWORDS = {
    "constant": {"constant_values"}, "edge": set(), "wrap": set(), "empty": set(),
    "reflect": {"reflect_type"}, "symmetric": {"reflect_type"},
    "linear_ramp": {"end_values"}, "maximum": {"stat_length"}, "minimum": {"stat_length"},
    "mean": {"stat_length"}, "median": {"stat_length"},
}


def _pad_widths(pad_width, ndim):
    """``pad_width`` in any form NumPy accepts as ``ndim`` pairs of non-negative ints."""
    if isinstance(pad_width, dict):
        pairs = [(0, 0)] * ndim
        for axis, width in pad_width.items():
            axis = sh._normalize_axis(axis, ndim)
            pairs[axis] = (width, width) if np.ndim(width) == 0 else tuple(width)
        pad_width = pairs
    widths = np.asarray(_static(pad_width, "pad_width"))
    if widths.dtype.kind not in "iu":
        raise TypeError("`pad_width` must be of integral type.")
    return [(int(b), int(a)) for b, a in _pairs(widths, ndim, "pad_width", index=True)]


def _pairs(values, ndim, what, index=False):
    """``values`` broadcast to ``ndim`` (before, after) pairs, as ``np.pad`` reads its
    per-axis arguments: a scalar, one pair for every axis, or one pair per axis."""
    if isinstance(values, (list, tuple)) and holds_tracer(*values):
        values = sh.stack([as_array(v) if not isinstance(v, (list, tuple)) else sh.stack(list(v))
                           for v in values])
    elif not isinstance(values, Tracer):
        values = np.asarray(values)
        if index and values.size and values.min() < 0:  # checkable on plain values only
            raise ValueError("index can't contain negative values")
    size = math.prod(shape_of(values))
    if size == 1:
        values = sh.reshape(values, (1, 1))
    elif size == 2 and shape_of(values) != (2, 1):
        values = sh.reshape(values, (1, 2))
    try:
        values = sh.broadcast_to(values, (ndim, 2))
    except ValueError:
        raise ValueError(f"{what} of shape {shape_of(values)} cannot be broadcast to "
                         f"{(ndim, 2)}") from None
    return [(values[i, 0], values[i, 1]) for i in range(ndim)]


def _pad_block(value, dims, dtype):
    """A block of shape ``dims`` filled with ``value`` (a scalar, possibly traced)."""
    if isinstance(value, Tracer):
        return sh.broadcast_to(ew.astype(value, dtype), dims)
    return np.full(dims, value, dtype=dtype)


def _pad_axis(x, axis, before, after, mode, options):
    """``x`` padded along one axis (the other axes already padded, as NumPy does)."""
    dims = shape_of(x)
    n = dims[axis]
    dtype = dtype_of(x)
    if mode in ("constant", "empty", "linear_ramp") or mode in _STATISTICS:
        pieces = [x]
        for side, width in ((0, before), (1, after)):
            if width == 0:
                continue
            if mode == "constant":
                block = _pad_block(options["constant_values"][axis][side],
                                   _with_width(dims, axis, width), dtype)
            elif mode == "empty":
                block = np.zeros(_with_width(dims, axis, width), dtype)
            elif mode == "linear_ramp":
                block = _ramp(x, axis, side, width, options["end_values"][axis][side])
            else:
                block = _statistic_block(x, axis, side, width, mode,
                                         options["stat_length"][axis][side])
            pieces.insert(len(pieces) if side else 0, block)
        return sh.concatenate(pieces, axis=axis) if len(pieces) > 1 else x
    # The other modes only rearrange entries along the axis: NumPy's own pad of the
    # positions 0..n-1 gives, for each output position, the entry it copies.
    if (mode in ("reflect", "symmetric") and options.get("reflect_type", "even") == "odd"
            and n > 1):
        return _pad_odd(x, axis, before, after, mode)
    source = np.pad(np.arange(n), (before, after), mode=mode)
    return _gather(x, axis, source)


@functools.lru_cache(maxsize=64)
def _odd_terms(n, before, after, mode):
    """Odd reflection as a few weighted gathers: ``(columns, weights)``, each ``(rows,
    terms)``, read off NumPy's pad of the identity matrix (it is linear)."""
    matrix = np.pad(np.eye(n), ((before, after), (0, 0)), mode=mode, reflect_type="odd")
    terms = max(int(np.count_nonzero(row)) for row in matrix)
    columns = np.argsort(matrix == 0, axis=1, kind="stable")[:, :terms]
    return columns, np.take_along_axis(matrix, columns, axis=1)


def _pad_odd(x, axis, before, after, mode):
    """Odd reflection: each padded entry is a fixed linear combination of a few entries
    (2 * edge - mirrored entry, repeated for pads longer than the axis)."""
    columns, weights = _odd_terms(shape_of(x)[axis], before, after, mode)
    ndim = len(shape_of(x))
    out = None
    for k in range(columns.shape[1]):
        w = weights[:, k].reshape((-1,) + (1,) * (ndim - axis - 1)).astype(dtype_of(x))
        term = _gather(x, axis, columns[:, k])
        term = term if np.all(w == 1) else ew.multiply_p(term, w)
        out = term if out is None else ew.add_p(out, term)
    return out


def _ramp(x, axis, side, width, end):
    """``np.pad``'s linear ramp from ``end`` (outermost) towards the edge entry of ``x``:
    ``end + i * (edge - end) / width``, computed as ``np.linspace`` does."""
    ndim = len(shape_of(x))
    n = shape_of(x)[axis]
    edge = _take_range(x, axis, 0, 1) if side == 0 else _take_range(x, axis, n - 1, n)
    dtype = dtype_of(x)
    exact = dtype.kind in "fc"
    work = dtype if exact else np.dtype(np.float64)
    steps = np.arange(width, dtype=work)[::-1 if side else 1]
    steps = steps.reshape((width,) + (1,) * (ndim - axis - 1))
    end = ew.astype(end, work) if isinstance(end, Tracer) else np.asarray(end, dtype=work)
    edge = edge if exact else ew.astype(edge, work)
    ramp = ew.add_p(ew.multiply_p(ew.divide_p(ew.subtract_p(edge, end), width), steps), end)
    if not exact:  # integers: rounded down (NumPy 2's linspace), or truncated (NumPy 1)
        ramp = ew.astype(index_floor_divide_p(ramp, 1) if _NUMPY2 else ramp, dtype)
    return sh.broadcast_to(ramp, _with_width(shape_of(x), axis, width))


_STATISTICS = ("maximum", "minimum", "mean", "median")


def _statistic_block(x, axis, side, width, mode, length):
    """A pad block of the maximum/minimum/mean/median of the first or last ``length``
    entries along ``axis`` (all of them for ``None``)."""
    n = shape_of(x)[axis]
    length = n if length is None else min(int(length), n)
    if length == 0:
        raise ValueError("stat_length of 0 yields no value for padding")
    region = _take_range(x, axis, 0, length) if side == 0 else \
        _take_range(x, axis, n - length, n)
    if mode == "maximum":
        value = red.max_p(region, axis=(axis,), keepdims=True)
    elif mode == "minimum":
        value = red.min_p(region, axis=(axis,), keepdims=True)
    elif mode == "mean":
        value = red.mean(region, axis=axis, keepdims=True)
    else:
        ordered = sort(region, axis=axis)
        low, high = (length - 1) // 2, length // 2
        value = ew.multiply_p(ew.add_p(_take_range(ordered, axis, low, low + 1),
                                   _take_range(ordered, axis, high, high + 1)), 0.5)
    if dtype_of(value) != dtype_of(x):
        if dtype_of(x).kind not in "fc":
            value = pad_rint_p(value)
        value = ew.astype(value, dtype_of(x))
    return sh.broadcast_to(value, _with_width(shape_of(x), axis, width))


def pad(array, pad_width, mode="constant", **kwargs):
    """``array`` padded along each axis, as ``np.pad``.

    ``pad_width``: an int, a ``(before, after)`` pair, one pair per axis, or a dict
    ``{axis: width or pair}``. Modes: ``'constant'`` (``constant_values``, which may be
    traced and is then differentiable too), ``'edge'``, ``'reflect'`` and ``'symmetric'``
    (``reflect_type`` ``'even'`` or ``'odd'``), ``'wrap'``, ``'linear_ramp'``
    (``end_values``), ``'maximum'``, ``'minimum'``, ``'mean'``, ``'median'``
    (``stat_length``) and ``'empty'`` (zeros here).
    """
    if callable(mode):
        raise TypeError("pad: a callable mode cannot be differentiated; use one of "
                        f"{sorted(_PAD_KEYWORDS)}")
    if mode not in _PAD_KEYWORDS:
        raise ValueError(f"mode '{mode}' is not supported")
    unsupported = set(kwargs) - _PAD_KEYWORDS[mode]
    if unsupported:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
    if not isinstance(pad_width, dict):
        pad_width = _static(pad_width, "pad_width")
    if not holds_tracer(array, *kwargs.values()):
        return np.pad(array, pad_width, mode=mode, **kwargs)
    x = as_array(array)
    ndim = _ndim(x)
    widths = _pad_widths(pad_width, ndim)
    if mode not in ("constant", "empty"):
        for axis, (b, a) in enumerate(widths):
            if shape_of(x)[axis] == 0 and (b or a):
                raise ValueError(f"can't extend empty axis {axis} using modes other than "
                                 "'constant' or 'empty'")
    options = {}
    if mode == "constant":
        options["constant_values"] = _pairs(kwargs.get("constant_values", 0), ndim,
                                            "constant_values")
    elif mode == "linear_ramp":
        options["end_values"] = _pairs(kwargs.get("end_values", 0), ndim, "end_values")
    elif mode in _STATISTICS:
        length = kwargs.get("stat_length")
        options["stat_length"] = [(None, None)] * ndim if length is None else [
            (int(b), int(a)) for b, a in _pairs(_static(length, "stat_length"), ndim,
                                                "stat_length", index=True)]
    elif mode in ("reflect", "symmetric"):
        options["reflect_type"] = kwargs.get("reflect_type", "even")
        if options["reflect_type"] not in ("even", "odd"):
            raise ValueError(f"reflect_type must be 'even' or 'odd', got "
                             f"{options['reflect_type']!r}")
    for axis, (before, after) in enumerate(widths):
        if before or after:
            x = _pad_axis(x, axis, before, after, mode, options)
    return x
