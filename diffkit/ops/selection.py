"""Selecting and placing entries: ``choose``, ``extract``, ``put_along_axis``,
``fill_diagonal``, ``histogram``, ``histogram2d`` and ``bincount`` (differentiable in their
``weights``), ``unique`` and ``union1d`` (in their values).

All are compositions of ``getitem``, the ``.at`` updates and elementwise operations, so they
inherit forward, reverse and batching rules. Integer arguments (``choose``'s ``a``, index
arrays) carry no derivative and may be batched under ``vmap``; arguments that set the
shape of the result (``extract``'s ``condition``, ``histogram``'s samples ``a``,
``histogram2d``'s ``x`` and ``y``, ``bincount``'s ``x``, ``unique``'s and ``union1d``'s
inputs) must be concrete: a value differentiated by ``grad``/``jvp`` is (its primal is
read), a value batched by ``vmap`` is not, and that is a ``TracerConversionError`` naming the
argument.

In-place functions
------------------
NumPy's ``fill_diagonal`` and ``put_along_axis`` write into their array and return None. A
plain array with plain values still is (NumPy runs). A traced array cannot be modified in
place, so, as in ``jax.numpy``, these take ``inplace=False`` and then return the new array;
with a traced value and the default ``inplace=True`` they raise a ``TracerConversionError``
saying so (rather than returning None and silently dropping the write).

Conventions: ``unique``'s value for a repeated entry is the first occurrence in the
flattened (or ``axis``-wise) order, so it gets the derivative of that occurrence
(``union1d``: ``ar1``'s entry before ``ar2``'s); ``histogram``'s and ``histogram2d``'s bins
are fixed (a function of the samples alone) and a sample on an inner edge falls in the bin
to its right, the last edge belonging to the last bin, as NumPy; ``bincount`` with weights
is float64 whatever the weights' real dtype, as NumPy.
"""

import math

import numpy as np

from ..core.concrete import holds_tracer, static_value
from ..core.trace import Tracer
from ..core.zeros import as_array, dtype_of, shape_of
from ..errors import TracerConversionError
from . import elementwise as ew
from . import reductions as red
from . import shape as sh
from .array_helpers import index_floor_divide_p
from .array_taking import take_along_axis
from .indexing import At, getitem

__all__ = ["choose", "extract", "put_along_axis", "fill_diagonal", "histogram",
           "histogram2d", "bincount", "unique", "union1d"]


def _concrete(value, what, fname):
    """``value`` as a plain array; a batched (``vmap``) value is an error naming it."""
    return np.asarray(static_value(value, lambda t: (
        f"{fname}: {what} is a value batched by vmap, but it must be concrete because it "
        "sets the shape of the result; map over the other arguments only (in_axes=None "
        "for it), or loop over the batch")))


def _not_in_place(fname):
    return TracerConversionError(
        f"{fname} modifies its array in place and returns None in NumPy, but a traced array "
        f"cannot be modified in place: call diffkit.numpy.{fname}(..., inplace=False), which "
        "returns the new array (as jax.numpy does), and use its result")


# --- choose, extract -----------------------------------------------------------------------


def choose(a, choices, out=None, mode="raise"):
    """``choices[a[i]][i]`` for each position ``i`` after broadcasting ``a`` and the choices
    together, as ``np.choose``; ``mode`` ``'raise'``, ``'wrap'`` or ``'clip'`` treats
    out-of-range indices. Differentiable in the choices; ``a`` (integers) may be batched."""
    if out is not None:
        raise TypeError("choose: out= is not supported (diffkit returns new arrays)")
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    choices = list(choices) if not isinstance(choices, (np.ndarray, Tracer)) else \
        [getitem(choices, i) for i in range(shape_of(choices)[0])]
    if not holds_tracer(a, choices):
        return np.choose(a, choices, mode=mode)
    a = as_array(a)
    if dtype_of(a).kind not in "iub":
        raise TypeError(f"choose: a must hold integers, got dtype {dtype_of(a)}")
    n = len(choices)
    choices = [as_array(c) for c in choices]
    target = np.broadcast_shapes(shape_of(a), *(shape_of(c) for c in choices))
    stacked = sh.stack([sh.broadcast_to(c, target) for c in choices])
    if not isinstance(a, Tracer):
        if mode == "raise" and a.size and (a.min() < 0 or a.max() >= n):
            raise ValueError("invalid entry in choice array")
        a = np.mod(a, n) if mode == "wrap" else np.clip(a, 0, n - 1)
    elif mode == "wrap":
        a = ew.subtract_p(a, ew.multiply_p(index_floor_divide_p(a, n), n))
    else:
        a = ew.clip_p(a, 0, n - 1)
    index = sh.expand_dims(sh.broadcast_to(a, target), 0)
    return sh.reshape(take_along_axis(stacked, index, axis=0), target)


def extract(condition, arr):
    """The entries of ``arr`` (flattened) where the concrete ``condition`` (flattened) is
    nonzero, as ``np.extract``."""
    condition = _concrete(condition, "condition", "extract")
    if not holds_tracer(arr):
        return np.extract(condition, arr)
    return getitem(sh.ravel(as_array(arr)), np.flatnonzero(condition))


# --- writes: put_along_axis, fill_diagonal --------------------------------------------------


def _along_axis_index(shape, indices, axis):
    """The index tuple that NumPy's ``*_along_axis`` functions build."""
    return tuple(indices if i == axis else
                 np.arange(d).reshape((1,) * i + (d,) + (1,) * (len(shape) - i - 1))
                 for i, d in enumerate(shape))


def put_along_axis(arr, indices, values, axis, inplace=True):
    """``arr`` with ``values`` (broadcast to ``indices``) written at ``indices`` along
    ``axis`` (the flattened array for ``None``), as ``np.put_along_axis``. Plain arrays are
    modified in place (NumPy's); with a traced value pass ``inplace=False`` to get the new
    array. Differentiable in ``arr`` and ``values``."""
    if not holds_tracer(arr, indices, values):
        if inplace:
            return np.put_along_axis(arr, indices, values, axis)
        arr = np.array(arr, copy=True)
        np.put_along_axis(arr, indices, values, axis)
        return arr
    if inplace:
        raise _not_in_place("put_along_axis")
    arr, indices = as_array(arr), as_array(indices)
    if dtype_of(indices).kind not in "iu":
        raise IndexError("`indices` must be an integer array")
    dims = shape_of(arr)
    if axis is None:
        if len(shape_of(indices)) != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        flat = At(sh.ravel(arr))[indices].set(values)
        return sh.reshape(flat, dims)
    if len(shape_of(indices)) != len(dims):
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    axis = sh._normalize_axis(axis, len(dims))
    return At(arr)[_along_axis_index(dims, indices, axis)].set(values)


def _diagonal_positions(dims, wrap):
    """The flat positions ``np.fill_diagonal`` writes."""
    if len(dims) < 2:
        raise ValueError("array must be at least 2-d")
    if len(dims) == 2:
        step = dims[1] + 1
        end = None if wrap else dims[1] * dims[1]
    else:
        if len(set(dims)) != 1:
            raise ValueError("All dimensions of input must be of equal length")
        step = 1 + int(np.cumprod(dims[:-1]).sum())
        end = None
    return np.arange(math.prod(dims))[:end:step]


def fill_diagonal(a, val, wrap=False, inplace=True):
    """``a`` with its main diagonal set to ``val`` (cycled along the diagonal when shorter),
    as ``np.fill_diagonal``; ``wrap`` continues past a tall matrix's first square block.
    Plain arrays are modified in place (NumPy's, returning None); with a traced value pass
    ``inplace=False`` to get the new array. Differentiable in ``a`` and ``val``."""
    if not holds_tracer(a, val):
        if inplace:
            return np.fill_diagonal(a, val, wrap)
        a = np.array(a, copy=True)
        np.fill_diagonal(a, val, wrap)
        return a
    if inplace:
        raise _not_in_place("fill_diagonal")
    a = as_array(a)
    dims = shape_of(a)
    positions = _diagonal_positions(dims, wrap)
    val = as_array(val)
    size = math.prod(shape_of(val))
    if size == 0:
        return a
    cycled = getitem(sh.ravel(val), np.arange(len(positions)) % size)  # NumPy's a.flat = val
    if not isinstance(cycled, Tracer):
        cycled = cycled.astype(dtype_of(a), copy=False)
    elif dtype_of(cycled) != dtype_of(a):
        cycled = ew.astype(cycled, dtype_of(a))
    return sh.reshape(At(sh.ravel(a))[positions].set(cycled), dims)


# --- histogram (weights), unique (values) ----------------------------------------------------


def _uniform_bin_indices(a, edges):
    """Each sample's bin for uniform ``edges`` (-1 outside), computed as NumPy does (the
    scaled offset, then corrected against the edges themselves)."""
    count = len(edges) - 1
    first, last = edges[0], edges[-1]
    keep = (a >= first) & (a <= last)
    with np.errstate(all="ignore"):
        scaled = (a - first) / (last - first) * count
    indices = np.where(keep, scaled, 0).astype(np.intp)
    indices[indices == count] -= 1
    indices[a < edges[indices]] -= 1
    up = (a >= edges[np.minimum(indices + 1, count)]) & (indices != count - 1)
    indices[up] += 1
    return np.where(keep, indices, -1)


def _bin_indices(a, bins, range_):
    """``(indices, edges)``: each sample's bin (-1 when outside the range) and the edges."""
    edges = np.histogram_bin_edges(a, bins, range_)
    a = a.astype(np.result_type(a.dtype, edges.dtype), copy=False)
    if np.ndim(bins) == 0:  # an int or a rule's name: uniform bins (NumPy's fast path)
        return _uniform_bin_indices(a, edges), edges
    inside = (a >= edges[0]) & (a <= edges[-1])
    indices = np.searchsorted(edges, a, side="right") - 1
    indices[a == edges[-1]] = len(edges) - 2
    return np.where(inside, indices, -1), edges


def histogram(a, bins=10, range=None, density=None, weights=None):  # noqa: A002 (NumPy's)
    """``(hist, bin_edges)`` as ``np.histogram``; differentiable in ``weights`` (the bins
    are fixed by ``a``, which carries no derivative and must be concrete). ``hist`` is the
    sum of the weights per bin, divided by the total and the bin widths for ``density``."""
    if not holds_tracer(a, weights):
        return np.histogram(a, bins, range, density, weights)
    samples = _concrete(a, "a (the samples)", "histogram").ravel()
    if weights is None:
        return np.histogram(samples, bins, range, density)
    weights = as_array(weights)
    if isinstance(bins, str):
        raise TypeError("Automated estimation of the number of bins is not supported for "
                        "weighted data")
    if shape_of(weights) != shape_of(a):
        raise ValueError("weights should have the same shape as a.")
    indices, edges = _bin_indices(samples, bins, range)
    keep = np.flatnonzero(indices >= 0)
    zeros = np.zeros(len(edges) - 1, dtype_of(weights))
    hist = At(zeros)[indices[keep]].add(getitem(sh.ravel(weights), keep))
    if density:
        hist = ew.divide_p(ew.divide_p(hist, np.diff(edges).astype(dtype_of(hist))),
                         red.sum(hist))
    return hist, edges


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           *, equal_nan=True):
    """The sorted unique values of ``ar`` (its unique slices along ``axis``), as
    ``np.unique``, differentiable in the values: each is the first occurrence's entry.
    ``return_index``/``return_inverse``/``return_counts`` add NumPy's integer arrays. The
    values of ``ar`` must be concrete (they set the result's shape)."""
    if not holds_tracer(ar):
        return np.unique(ar, return_index, return_inverse, return_counts, axis,
                         equal_nan=equal_nan)
    values = _concrete(ar, "ar", "unique")
    found = np.unique(values, True, return_inverse, return_counts, axis, equal_nan=equal_nan)
    first = found[1]
    ar = as_array(ar)
    if axis is None:
        picked = getitem(sh.ravel(ar), first)
    else:
        axis = sh._normalize_axis(axis, len(shape_of(ar)))
        picked = getitem(ar, (slice(None),) * axis + (first,))
    extras = [found[1]] if return_index else []
    extras += list(found[2:])
    return (picked, *extras) if extras else picked


def union1d(ar1, ar2):
    """The sorted distinct values of ``ar1`` and ``ar2`` (flattened), as ``np.union1d``:
    ``unique`` of their concatenation, so a value in both gets ``ar1``'s derivative (its
    first occurrence). Both inputs must be concrete."""
    if not holds_tracer(ar1, ar2):
        return np.union1d(ar1, ar2)
    return unique(sh.concatenate([sh.ravel(as_array(ar1)), sh.ravel(as_array(ar2))]))


def bincount(x, weights=None, minlength=0):
    """The sum of ``weights`` for each value of the non-negative integers ``x``, as
    ``np.bincount`` (float64, length ``max(max(x) + 1, minlength)``); differentiable in
    ``weights``. ``x`` carries no derivative and must be concrete (it sets the length)."""
    values = _concrete(x, "x (the integers)", "bincount")
    if not holds_tracer(weights):
        return np.bincount(values, weights, minlength)
    length = len(np.bincount(values, minlength=minlength))   # NumPy's checks and length
    weights = as_array(weights)
    if dtype_of(weights).kind == "c":
        raise TypeError("bincount: weights must be real (NumPy casts them to float64, which "
                        "a complex value cannot be 'safe'-cast to)")
    if shape_of(weights) != values.shape:
        raise ValueError("The weights and list don't have the same length.")
    weights = ew.astype(weights, np.float64)
    return At(np.zeros(length, np.float64))[values].add(weights)


def _bin_indices_dd(samples, edges):
    """Each sample's bin along one axis of ``histogramdd`` (-1 when outside): NumPy's
    ``searchsorted(edges, x, 'right')``, a sample on the last edge in the last bin."""
    indices = np.searchsorted(edges, samples, side="right")
    indices[samples == edges[-1]] -= 1
    return np.where((indices >= 1) & (indices <= len(edges) - 1), indices - 1, -1)


def histogram2d(x, y, bins=10, range=None, density=None, weights=None):  # noqa: A002
    """``(H, xedges, yedges)`` as ``np.histogram2d``; differentiable in ``weights`` (the
    bins are fixed by ``x`` and ``y``, which carry no derivative and must be concrete).
    ``H[i, j]`` is the sum of the weights of the samples in bin ``(i, j)``, divided by the
    total and the bin areas for ``density``."""
    if not holds_tracer(x, y, weights):
        return np.histogram2d(x, y, bins, range, density, weights)
    xs = _concrete(x, "x (the samples)", "histogram2d")
    ys = _concrete(y, "y (the samples)", "histogram2d")
    _, xedges, yedges = np.histogram2d(xs, ys, bins, range)
    if weights is None:
        return np.histogram2d(xs, ys, bins, range, density)[0], xedges, yedges
    weights = as_array(weights)
    if shape_of(weights) != xs.shape:
        raise ValueError("weights should have the same shape as x and y.")
    ix, iy = _bin_indices_dd(xs, xedges), _bin_indices_dd(ys, yedges)
    keep = np.flatnonzero((ix >= 0) & (iy >= 0))
    nx, ny = len(xedges) - 1, len(yedges) - 1
    dtype = np.result_type(dtype_of(weights), np.float64)
    flat = At(np.zeros(nx * ny, dtype))[ix[keep] * ny + iy[keep]].add(
        getitem(sh.ravel(weights), keep))
    hist = sh.reshape(flat, (nx, ny))
    if density:
        areas = np.diff(xedges)[:, None] * np.diff(yedges)[None, :]
        hist = ew.divide_p(ew.divide_p(hist, areas.astype(dtype)), red.sum(hist))
    return hist, xedges, yedges
