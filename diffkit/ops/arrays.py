"""Building, cutting and rearranging arrays: split, tile, repeat, pad, roll, flip, rot90,
diagonals and triangles, kron, take, sort and partition, interp, convolve and correlate,
cross, polyval, meshgrid, block and the ``*stack`` family.

Almost everything here is a composition of existing primitives (``getitem`` with static or
integer-array indices, ``concatenate``, ``reshape``, ``broadcast_to``, ``transpose``,
``where``, arithmetic), so it inherits their forward, reverse and batching rules and needs
none of its own. New primitives exist only where a composition would be slow or impossible:

- ``split``: several outputs at once; its VJP is one ``concatenate`` of the pieces'
  cotangents (slicing each piece out separately would scatter every cotangent into a
  full-size array of zeros).
- ``convolve``: the full 1-D convolution along the last axis (leading axes broadcast). A
  bilinear map: the JVP is two convolutions, each VJP is a convolution with the other
  operand reversed, so rules cost what the function costs.
- ``argsort``, ``argpartition``, ``searchsorted`` and ``index_floor_divide``: integer
  results without derivative (``nondiff``), needed by ``sort``, ``partition``, ``interp`` and
  ``take(mode='wrap')`` on traced values and under ``vmap``.

Conventions at nondifferentiable points (the same in both engines because the engines only
ever see the composition):

- ``sort`` / ``partition``: the output is ``take_along_axis(x, perm)`` with ``perm`` from a
  *stable* ``argsort`` (``argpartition`` for ``partition``), so among tied entries the k-th
  smallest output position gets the derivative of the k-th tied input in index order.
- ``interp`` in ``x``: at an interior knot ``xp[i]`` the derivative is the slope of the
  segment to its right (and of the last segment at ``xp[-1]``); outside ``[xp[0], xp[-1]]``
  the result is ``left``/``right`` with zero derivative in ``x``.

Functions called with no traced argument hand the work to NumPy itself, so plain arrays get
exactly NumPy's results.
"""

import functools
import math
import warnings

import numpy as np

from ..core.interop import concrete_value
from ..core.primitive import Primitive
from ..core.trace import Tracer
from ..core.zeros import Zero, dtype_of, shape_of
from ..errors import TracerConversionError
from . import elementwise as ew
from . import reductions as red
from . import shape as sh
from .families import nondiff_elementwise
from .indexing import ARRAY, getitem, scatter_add_p

__all__ = [
    "split", "array_split", "hsplit", "vsplit", "dsplit",
    "tile", "repeat", "pad", "roll", "flip", "fliplr", "flipud", "rot90", "rollaxis",
    "atleast_1d", "atleast_2d", "atleast_3d",
    "diag", "diagflat", "diagonal", "trace", "tril", "triu", "kron",
    "take", "take_along_axis", "compress", "select", "append", "delete", "insert",
    "sort", "argsort", "partition", "argpartition", "searchsorted",
    "interp", "convolve", "correlate", "cross", "polyval", "meshgrid",
    "block", "column_stack", "hstack", "vstack", "dstack",
    "broadcast_arrays", "copy",
]

_NUMPY2 = np.lib.NumpyVersion(np.__version__) >= "2.0.0"
if hasattr(np, "row_stack"):
    __all__.append("row_stack")


# === helpers ==============================================================================

# Integer arithmetic with no derivative, on traced (batched) values: take(mode='wrap') and
# interp(period=...) reduce modulo n; pad rounds integer statistics half to even.
index_floor_divide = nondiff_elementwise("index_floor_divide", np.floor_divide)
_rint = nondiff_elementwise("pad_rint", np.rint)


def _traced(*values):
    """Whether any of ``values`` (or any array in nested lists/tuples of them) is traced."""
    for v in values:
        if isinstance(v, Tracer):
            return True
        if isinstance(v, (list, tuple)) and _traced(*v):
            return True
    return False


def _array(x):
    """``x`` as something with a shape and dtype: tracers and arrays as they are."""
    return x if isinstance(x, (Tracer, np.ndarray)) else np.asarray(x)


def _ndim(x):
    return len(shape_of(x))


def _static(value, what):
    """``value`` as a plain NumPy value; a traced value is an error (it sets a shape)."""
    if isinstance(value, Tracer):
        concrete = concrete_value(value)
        if concrete is None:
            raise TracerConversionError(
                f"{what} is a value traced by {value._trace.name}, but it must be concrete "
                "because it determines the shape of the result")
        return concrete
    if isinstance(value, (list, tuple)) and _traced(*value):
        return np.asarray([_static(v, what) for v in value])
    return value


def _axis(axis, ndim):
    return sh._normalize_axis(_static(axis, "axis"), ndim)


def _along(axis, index):
    """An index applying ``index`` to axis ``axis`` (and full slices before it)."""
    return (slice(None),) * axis + (index,)


def _take_range(x, axis, start, stop):
    """``x`` sliced to ``start:stop`` along ``axis`` (basic indexing)."""
    return getitem(x, _along(axis, slice(start, stop)))


# A static gather along one axis is cut into at most this many slices (see _gather).
_MAX_RUNS = 16


def _runs(indices):
    """``indices`` cut into maximal runs of constant step -1, 0 or 1, as ``(start, step,
    length)``; None when there would be more than ``_MAX_RUNS`` of them."""
    count = len(indices)
    steps = np.diff(indices)
    changes = steps[1:] != steps[:-1]
    segment = np.concatenate([[0], np.cumsum(changes)])  # stretch of equal steps of steps[k]
    last = np.append(np.flatnonzero(changes), count - 2)   # last step of each stretch
    runs, i = [], 0
    while i < count:
        if len(runs) == _MAX_RUNS:
            return None
        if i == count - 1 or abs(steps[i]) > 1:
            runs.append((int(indices[i]), 1, 1))
            i += 1
            continue
        end = int(last[segment[i]]) + 1  # the run is indices[i:end + 1]
        runs.append((int(indices[i]), int(steps[i]), end + 1 - i))
        i = end + 1
    return runs


def _gather(x, axis, indices):
    """``x`` indexed along ``axis`` by the concrete 1-D integer array ``indices``.

    When the indices form a few runs of step 1, -1 or 0 (padding, deleting, inserting,
    repeating a few entries), the result is a concatenation of basic slices (broadcast for
    step 0): their adjoints are slice assignments instead of an accumulating scatter."""
    indices = np.asarray(indices, dtype=np.intp)
    n = shape_of(x)[axis]
    runs = _runs(indices) if indices.size else None
    if runs is None:
        return getitem(x, _along(axis, indices))
    pieces = []
    for start, step, length in runs:
        if step == 1 or length == 1:
            if start == 0 and length == n:
                piece = x
            else:
                piece = _take_range(x, axis, start, start + length)
        elif step == -1:
            stop = start - length
            piece = getitem(x, _along(axis, slice(start, None if stop < 0 else stop, -1)))
        else:
            piece = _take_range(x, axis, start, start + 1)
            piece = sh.broadcast_to(piece, _with_width(shape_of(piece), axis, length))
        pieces.append(piece)
    return sh.concatenate(pieces, axis=axis) if len(pieces) > 1 else pieces[0]


def _zeros_of(x):
    return np.zeros((), dtype_of(x))


def _sequence(tup, name):
    """The arrays of ``tup``: a list or tuple, or one (traced) array, which NumPy iterates
    over along its first axis."""
    if isinstance(tup, Tracer):
        tup = _unstack(tup)
    if not isinstance(tup, (list, tuple)):
        raise TypeError(f"arrays to {name} must be passed as a sequence type such as list "
                        f"or tuple, got {type(tup).__name__}")
    tup = list(tup)
    if not tup:
        raise ValueError("need at least one array to concatenate")
    return [_array(a) for a in tup]


def _unstack(x):
    """The slices ``x[0], x[1], ...`` of a traced array, cut by one ``split``."""
    dims = shape_of(x)
    if not dims:
        raise TypeError("iteration over a 0-d array")
    if dims[0] <= 1:
        return [sh.reshape(x, dims[1:])] if dims[0] else []
    return [sh.reshape(piece, dims[1:]) for piece in split_p(x, sizes=(1,) * dims[0], axis=0)]


def _several(arrays):
    """One array for one argument, else NumPy's container for several (tuple in NumPy 2)."""
    if len(arrays) == 1:
        return arrays[0]
    return tuple(arrays) if _NUMPY2 else list(arrays)


# === split: one primitive with several outputs ===========================================


def _split_impl(x, sizes, axis):
    return tuple(np.split(x, np.cumsum(sizes)[:-1], axis=axis))


def _split_jvp(primals, tangents, sizes, axis):
    return split_p(primals[0], sizes=sizes, axis=axis), split_p(tangents[0], sizes=sizes,
                                                               axis=axis)


def _split_vjp(cts, outs, x, sizes, axis):
    parts = [np.zeros(ct.shape, ct.dtype) if type(ct) is Zero else ct for ct in cts]
    return sh.concatenate_p(*parts, axis=axis) if len(parts) > 1 else parts[0]


split_p = Primitive(
    "split", _split_impl, _split_jvp, (_split_vjp,),
    lambda axis_size, values, batch_axes, sizes, axis: (
        split_p(values[0], sizes=sizes, axis=axis + 1), (0,) * len(sizes)),
    multiple_results=True, vjp_ignores=("args", "out"))


def _split_bounds(n, indices_or_sections):
    """``(start, stop)`` of each piece of an axis of length ``n``, as ``np.array_split``."""
    sections = _static(indices_or_sections, "indices_or_sections")
    if np.ndim(sections) == 0:
        count = int(sections)
        if count <= 0:
            raise ValueError("number sections must be larger than 0.")
        each, extra = divmod(n, count)
        sizes = [each + 1] * extra + [each] * (count - extra)
        stops = np.cumsum(sizes)
        return [(int(s - d), int(s)) for s, d in zip(stops, sizes)]
    points = [0] + [int(i) for i in np.asarray(sections).ravel()] + [n]
    bounds = []
    for start, stop in zip(points[:-1], points[1:]):
        start, stop, _ = slice(start, stop).indices(n)
        bounds.append((start, max(start, stop)))
    return bounds


def array_split(ary, indices_or_sections, axis=0):
    """Split ``ary`` into pieces along ``axis``, as ``np.array_split``: an int gives that
    many pieces of sizes differing by at most one, a sequence gives the split points."""
    if not _traced(ary):
        return np.array_split(ary, _static(indices_or_sections, "indices_or_sections"), axis)
    axis = _axis(axis, _ndim(ary))
    bounds = _split_bounds(shape_of(ary)[axis], indices_or_sections)
    contiguous = bounds[0][0] == 0 and bounds[-1][1] == shape_of(ary)[axis] and all(
        a[1] == b[0] for a, b in zip(bounds[:-1], bounds[1:]))
    if len(bounds) == 1 and contiguous:
        return [ary]
    if contiguous:
        return list(split_p(ary, sizes=tuple(b - a for a, b in bounds), axis=axis))
    return [_take_range(ary, axis, a, b) for a, b in bounds]  # overlapping split points


def split(ary, indices_or_sections, axis=0):
    """Split ``ary`` into equal pieces (an int, which must divide the axis) or at the given
    points along ``axis``, as ``np.split``; returns a list."""
    sections = _static(indices_or_sections, "indices_or_sections")
    if np.ndim(sections) == 0:
        n = shape_of(ary)[_axis(axis, _ndim(ary))]
        if int(sections) != 0 and n % int(sections):
            raise ValueError("array split does not result in an equal division")
    return array_split(ary, sections, axis)


def hsplit(ary, indices_or_sections):
    """Split along the second axis (the first for 1-D arrays), as ``np.hsplit``."""
    if _ndim(ary) == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(ary, indices_or_sections, 1 if _ndim(ary) > 1 else 0)


def vsplit(ary, indices_or_sections):
    """Split along the first axis of an array of 2 or more dimensions, as ``np.vsplit``."""
    if _ndim(ary) < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(ary, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    """Split along the third axis of an array of 3 or more dimensions, as ``np.dsplit``."""
    if _ndim(ary) < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(ary, indices_or_sections, 2)


# === tile, repeat ==========================================================================


def tile(A, reps):  # noqa: N803 (NumPy's name)
    """``A`` repeated ``reps`` times along each axis, as ``np.tile``: a reshape, a broadcast
    and a reshape (its VJP sums over the copies)."""
    reps = _static(reps, "reps")
    reps = (int(reps),) if np.ndim(reps) == 0 else tuple(int(r) for r in reps)
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: negative repetitions are not allowed, got reps={reps}")
    if not _traced(A):
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
    if not _traced(a):
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
    if isinstance(values, Tracer) or (isinstance(values, (list, tuple)) and _traced(*values)):
        values = values if isinstance(values, Tracer) else sh.stack(
            [_array(v) if not isinstance(v, (list, tuple)) else sh.stack(list(v))
             for v in values])
        size = math.prod(shape_of(values))
        if size == 2 and shape_of(values) != (2, 1):
            values = sh.reshape(values, (1, 2))
        elif size == 1:
            values = sh.reshape(values, (1, 1))
        try:
            values = sh.broadcast_to(values, (ndim, 2))
        except ValueError:
            raise ValueError(f"{what} of shape {shape_of(values)} cannot be broadcast to "
                             f"{(ndim, 2)}") from None
        return [(values[i, 0], values[i, 1]) for i in range(ndim)]
    values = np.asarray(values)
    if index and values.size and values.min() < 0:
        raise ValueError("index can't contain negative values")
    if values.size == 1:
        values = values.reshape(1, 1)
    elif values.size == 2 and values.shape != (2, 1):
        values = values.reshape(1, 2)
    try:
        values = np.broadcast_to(values, (ndim, 2))
    except ValueError:
        raise ValueError(f"{what} of shape {values.shape} cannot be broadcast to "
                         f"{(ndim, 2)}") from None
    return [(values[i, 0], values[i, 1]) for i in range(ndim)]


def _pad_block(value, dims, dtype):
    """A block of shape ``dims`` filled with ``value`` (a scalar, possibly traced)."""
    if isinstance(value, Tracer):
        return sh.broadcast_to(ew.astype(value, dtype), dims)
    return np.full(dims, value, dtype=dtype)


def _with_width(dims, axis, width):
    return dims[:axis] + (width,) + dims[axis + 1:]


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
        term = term if np.all(w == 1) else ew.multiply(term, w)
        out = term if out is None else ew.add(out, term)
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
    ramp = ew.add(ew.multiply(ew.divide(ew.subtract(edge, end), width), steps), end)
    if not exact:  # integers: rounded down (NumPy 2's linspace), or truncated (NumPy 1)
        ramp = ew.astype(index_floor_divide(ramp, 1) if _NUMPY2 else ramp, dtype)
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
        value = ew.multiply(ew.add(_take_range(ordered, axis, low, low + 1),
                                   _take_range(ordered, axis, high, high + 1)), 0.5)
    if dtype_of(value) != dtype_of(x):
        if dtype_of(x).kind not in "fc":
            value = _rint(value)
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
    if not _traced(array, *kwargs.values()):
        return np.pad(array, pad_width, mode=mode, **kwargs)
    x = _array(array)
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


# === roll, flip, rot90, rollaxis ========================================================


def roll(a, shift, axis=None):
    """``a`` shifted cyclically by ``shift`` along ``axis`` (the flattened array for
    ``None``), as ``np.roll``; ``shift`` and ``axis`` may be matching tuples."""
    shift = _static(shift, "shift")
    if not _traced(a):
        return np.roll(a, shift, axis)
    if axis is None:
        return sh.reshape(roll(sh.ravel(a), shift, 0), shape_of(a))
    dims = shape_of(a)
    try:
        pairs = np.broadcast(shift, axis)
    except ValueError:
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences") from None
    if pairs.nd > 1:
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences")
    totals = {}
    for s, ax in pairs:
        ax = sh._normalize_axis(int(ax), len(dims))
        totals[ax] = totals.get(ax, 0) + int(s)
    out = a
    for ax, s in totals.items():
        n = dims[ax]
        if n == 0 or s % n == 0:
            continue
        s %= n
        out = sh.concatenate([_take_range(out, ax, n - s, n), _take_range(out, ax, 0, n - s)],
                             axis=ax)
    return out


def flip(m, axis=None):
    """``m`` with the order of entries reversed along ``axis`` (all axes for ``None``), as
    ``np.flip``: one basic-indexing ``getitem``."""
    if not _traced(m):
        return np.flip(m, axis)
    axes = red.normalize_axes(_static(axis, "axis"), _ndim(m))
    index = tuple(slice(None, None, -1) if i in axes else slice(None)
                  for i in range(_ndim(m)))
    return getitem(m, index) if axes else m


def fliplr(m):
    """Reverse the second axis (columns), as ``np.fliplr``."""
    if _ndim(m) < 2:
        raise ValueError("Input must be >= 2-d.")
    return flip(m, 1)


def flipud(m):
    """Reverse the first axis (rows), as ``np.flipud``."""
    if _ndim(m) < 1:
        raise ValueError("Input must be >= 1-d.")
    return flip(m, 0)


def rot90(m, k=1, axes=(0, 1)):
    """``m`` rotated by 90 degrees ``k`` times in the plane of ``axes``, from the first axis
    towards the second, as ``np.rot90``."""
    if not _traced(m):
        return np.rot90(m, k, axes)
    axes = tuple(axes)
    ndim = _ndim(m)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == ndim:
        raise ValueError("Axes must be different.")
    if not all(-ndim <= a < ndim for a in axes):
        raise ValueError(f"Axes={axes} out of range for array of ndim={ndim}.")
    k = int(k) % 4
    if k == 0:
        return m
    if k == 2:
        return flip(m, axes)
    order = list(range(ndim))
    first, second = axes[0] % ndim, axes[1] % ndim
    order[first], order[second] = order[second], order[first]
    if k == 1:
        return sh.transpose(flip(m, second), order)
    return flip(sh.transpose(m, order), second)


def rollaxis(a, axis, start=0):
    """Move ``axis`` to just before position ``start``, as ``np.rollaxis``."""
    ndim = _ndim(a)
    axis = sh._normalize_axis(axis, ndim)
    if not -ndim <= start <= ndim:
        raise np.exceptions.AxisError(
            f"start {start} is out of bounds for an array of dimension {ndim} "
            f"(it must be in [{-ndim}, {ndim}])")
    start = start + ndim if start < 0 else start
    if axis < start:
        start -= 1
    return sh.moveaxis(a, axis, start) if axis != start else a


# === atleast_nd ============================================================================


def _at_least(x, ndim):
    x = _array(x)
    dims = shape_of(x)
    if len(dims) >= ndim:
        return x
    if ndim == 3:
        new = {0: (1, 1, 1), 1: (1,) + dims + (1,), 2: dims + (1,)}[len(dims)]
    else:
        new = (1,) * (ndim - len(dims)) + dims
    return sh.reshape(x, new)


def atleast_1d(*arys):
    """Each input as an array of at least one dimension, as ``np.atleast_1d``."""
    return _several([_at_least(a, 1) for a in arys])


def atleast_2d(*arys):
    """Each input as an array of at least two dimensions (1-D becomes a row)."""
    return _several([_at_least(a, 2) for a in arys])


def atleast_3d(*arys):
    """Each input with at least three dimensions, as ``np.atleast_3d``: ``(N,)`` becomes
    ``(1, N, 1)`` and ``(M, N)`` becomes ``(M, N, 1)``."""
    return _several([_at_least(a, 3) for a in arys])


# === diagonals and triangles ===============================================================


def _diagonal_positions(rows, cols, offset):
    """Row and column indices of diagonal ``offset`` of a ``rows x cols`` matrix."""
    if offset >= 0:
        length = max(0, min(rows, cols - offset))
        return np.arange(length), np.arange(length) + offset
    length = max(0, min(rows + offset, cols))
    return np.arange(length) - offset, np.arange(length)


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The diagonal ``offset`` of the planes spanned by ``axis1`` and ``axis2``, as
    ``np.diagonal``: those axes are removed and the diagonal is the last axis."""
    offset = int(_static(offset, "offset"))
    if not _traced(a):
        return np.diagonal(a, offset, axis1, axis2)
    ndim = _ndim(a)
    if ndim < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    axis1, axis2 = _axis(axis1, ndim), _axis(axis2, ndim)
    if axis1 == axis2:
        raise ValueError("axis1 and axis2 cannot be the same")
    x = sh.moveaxis(a, (axis1, axis2), (-2, -1))
    rows, cols = _diagonal_positions(*shape_of(x)[-2:], offset)
    return getitem(x, (Ellipsis, rows, cols))


def diag(v, k=0):
    """The ``k``-th diagonal of a 2-D array, or a square matrix with the 1-D ``v`` on its
    ``k``-th diagonal, as ``np.diag``."""
    k = int(_static(k, "k"))
    if not _traced(v):
        return np.diag(v, k)
    dims = shape_of(v)
    if len(dims) == 2:
        return diagonal(v, k)
    if len(dims) != 1:
        raise ValueError("Input must be 1- or 2-d.")
    size = dims[0] + abs(k)
    rows, cols = _diagonal_positions(size, size, k)
    return scatter_add_p(v, rows, cols, shape=(size, size), spec=(ARRAY, ARRAY))


def diagflat(v, k=0):
    """A 2-D array with the flattened ``v`` on its ``k``-th diagonal, as ``np.diagflat``."""
    if not _traced(v):
        return np.diagflat(v, k)
    return diag(sh.ravel(v), k)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """Sum along a diagonal, as ``np.trace``."""
    if out is not None:
        raise TypeError("trace: out= is not supported (diffkit returns new arrays)")
    if not _traced(a):
        return np.trace(a, offset, axis1, axis2, dtype)
    total = red.sum(diagonal(a, offset, axis1, axis2), axis=-1)
    return total if dtype is None else ew.astype(total, dtype)


def _triangle(m, k, lower):
    k = int(_static(k, "k"))
    dims = shape_of(m)
    if not dims:
        raise ValueError(f"{'tril' if lower else 'triu'}: the input must have at least one "
                         "dimension")
    rows, cols = dims[-2:] if len(dims) > 1 else (dims[0], dims[0])
    mask = np.tri(rows, cols, k if lower else k - 1, dtype=bool)
    return ew.where(mask if lower else ~mask, m, _zeros_of(m))


def tril(m, k=0):
    """``m`` with the entries above the ``k``-th diagonal set to zero, as ``np.tril``."""
    return np.tril(m, k) if not _traced(m) else _triangle(m, k, True)


def triu(m, k=0):
    """``m`` with the entries below the ``k``-th diagonal set to zero, as ``np.triu``."""
    return np.triu(m, k) if not _traced(m) else _triangle(m, k, False)


def kron(a, b):
    """Kronecker product, as ``np.kron``: one broadcasting product of interleaved axes."""
    if not _traced(a, b):
        return np.kron(a, b)
    a, b = _array(a), _array(b)
    sa, sb = shape_of(a), shape_of(b)
    ndim = max(len(sa), len(sb))
    sa, sb = (1,) * (ndim - len(sa)) + sa, (1,) * (ndim - len(sb)) + sb
    if ndim == 0:
        return ew.multiply(a, b)
    product = ew.multiply(sh.reshape(a, sum(((d, 1) for d in sa), ())),
                          sh.reshape(b, sum(((1, d) for d in sb), ())))
    return sh.reshape(product, tuple(x * y for x, y in zip(sa, sb)))


# === take, select, append, delete, insert ==================================================


def take(a, indices, axis=None, out=None, mode="raise"):
    """Entries of ``a`` at ``indices`` along ``axis`` (of the flattened array for ``None``),
    as ``np.take``; ``mode`` ``'raise'``, ``'wrap'`` or ``'clip'`` treats out-of-range
    indices. ``indices`` may be traced (under ``vmap``); it has no derivative."""
    if out is not None:
        raise TypeError("take: out= is not supported (diffkit returns new arrays)")
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    if not _traced(a, indices):
        return np.take(a, indices, axis, mode=mode)
    a = _array(a)
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
        indices = ew.subtract(indices, ew.multiply(index_floor_divide(indices, n), n))
    elif mode == "clip":
        indices = ew.clip(indices, 0, n - 1)
    return getitem(a, _along(axis, indices))


def take_along_axis(arr, indices, axis=-1):
    """Entries of ``arr`` at ``indices`` along ``axis`` with the other axes matched by
    broadcasting, as ``np.take_along_axis`` (``axis=None``: the flattened array)."""
    if not _traced(arr, indices):
        return np.take_along_axis(arr, indices, axis)
    arr = _array(arr)
    indices = _array(indices)
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
    if not _traced(a):
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
    if not _traced(list(condlist), list(choicelist), default):
        return np.select(condlist, choicelist, default)
    for i, cond in enumerate(condlist):
        if dtype_of(_array(cond)).kind != "b":
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    result = default
    for cond, choice in zip(reversed(list(condlist)), reversed(list(choicelist))):
        result = ew.where(_array(cond), choice, result)
    return result


def append(arr, values, axis=None):
    """``values`` appended to ``arr`` along ``axis`` (both flattened for ``None``), as
    ``np.append``."""
    if not _traced(arr, values):
        return np.append(arr, values, axis)
    arr, values = _array(arr), _array(values)
    if axis is None:
        return sh.concatenate([sh.ravel(arr), sh.ravel(values)], axis=0)
    return sh.concatenate([arr, values], axis=axis)


def delete(arr, obj, axis=None):
    """``arr`` without the entries ``obj`` (an int, slice, index array or boolean mask)
    along ``axis`` (of the flattened array for ``None``), as ``np.delete``."""
    obj = _static(obj, "obj")
    if not _traced(arr):
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
    if not _traced(arr, values):
        return np.insert(arr, obj, values, axis)
    arr, values = _array(arr), _array(values)
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
    a, axis = _flat_axis(_array(a), axis)
    return argsort_p(a, axis=axis, kind=_sort_kind(kind, stable))


def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    """``a`` sorted along ``axis`` (the flattened array for ``None``), as ``np.sort``.

    The derivative follows the permutation of a stable argsort: the derivative of the
    output at position k is that of the input entry that lands there, and tied entries
    keep their order, so both engines agree at ties."""
    if order is not None:
        raise ValueError("sort: order= (structured arrays) is not supported")
    if not _traced(a):
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
    a, axis = _flat_axis(_array(a), axis)
    return argpartition_p(a, kth=_kth(kth), axis=axis)


def partition(a, kth, axis=-1, kind="introselect", order=None):
    """``a`` rearranged so that its ``kth`` entries are in sorted position, smaller entries
    before and larger after, as ``np.partition``. The derivative follows the permutation
    of ``argpartition`` (which gives the same arrangement)."""
    if order is not None:
        raise ValueError("partition: order= (structured arrays) is not supported")
    if not _traced(a):
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
    a, v = _array(a), _array(v)
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
    return ew.subtract(x, ew.multiply(index_floor_divide(x, period), period))


def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of the points ``(xp, fp)`` at ``x``, as ``np.interp``;
    ``left``/``right`` (default ``fp[0]``/``fp[-1]``) outside, or ``period`` for periodic
    data. Differentiable in ``x``, ``fp``, ``xp``, ``left`` and ``right``.

    At a knot ``x == xp[i]`` the derivative in ``x`` is the slope of the segment to the
    right (the last segment's at ``xp[-1]``)."""
    if not _traced(x, xp, fp, left, right):
        return np.interp(x, xp, fp, left, right, period)
    x, xp, fp = (_float_like(_array(v)) for v in (x, xp, fp))
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
        xp = sh.concatenate([ew.subtract(xp[-1:], period), xp, ew.add(xp[:1], period)])
        fp = sh.concatenate([fp[-1:], fp, fp[:1]])
    n = shape_of(xp)[0]
    if n == 1:
        out = ew.add(fp[0], np.zeros(shape_of(x)))
    else:
        j = ew.subtract(searchsorted_p(xp, x, side="right", batch_dims=0), 1)
        j = ew.clip(j, 0, n - 2) if isinstance(j, Tracer) else np.clip(j, 0, n - 2)
        x0, y0 = getitem(xp, j), getitem(fp, j)
        x1, y1 = getitem(xp, ew.add(j, 1)), getitem(fp, ew.add(j, 1))
        slope = ew.divide(ew.subtract(y1, y0), ew.subtract(x1, x0))
        out = ew.add(y0, ew.multiply(slope, ew.subtract(x, x0)))
    below = fp[0] if left is None else left
    above = fp[-1] if right is None else right
    out = ew.where(ew.less(x, xp[0]), below, out)
    return ew.where(ew.greater(x, xp[-1]), above, out)


# === convolve and correlate ================================================================


def _convolve_impl(a, v, mode):
    """Convolution along the last axis, leading axes broadcasting: ``'full'`` (length
    n + m - 1) or ``'valid'`` (length n - m + 1, for n >= m)."""
    if a.ndim == 1 and v.ndim == 1:
        return np.convolve(a, v, mode)
    n, m = a.shape[-1], v.shape[-1]
    lead = np.broadcast_shapes(a.shape[:-1], v.shape[:-1])
    length = n + m - 1 if mode == "full" else n - m + 1
    out = np.zeros(lead + (length,), np.result_type(a, v))
    if math.prod(lead) <= min(n, m, length):  # few long convolutions: NumPy's kernel each
        a = np.broadcast_to(a, lead + (n,))
        v = np.broadcast_to(v, lead + (m,))
        for i in np.ndindex(*lead):
            out[i] = np.convolve(a[i], v[i], mode)
        return out
    # Many short ones: a loop over the shorter of the kernel and the output.
    if mode == "full":
        if n < m:
            a, v, n, m = v, a, m, n
        for k in range(m):
            out[..., k:k + n] += a * v[..., k:k + 1]
    elif m <= length:
        for k in range(m):
            out += a[..., m - 1 - k:m - 1 - k + length] * v[..., k:k + 1]
    else:
        kernel = v[..., ::-1]
        for k in range(length):
            out[..., k] = np.sum(a[..., k:k + m] * kernel, axis=-1)
    return out


def _reversed_last(x):
    return getitem(x, (Ellipsis, slice(None, None, -1)))


def _convolve_jvp(primals, tangents, mode):
    a, v = primals
    ta, tv = tangents
    parts = []
    if type(ta) is not Zero:
        parts.append(convolve_p(ta, v, mode=mode))
    if type(tv) is not Zero:
        parts.append(convolve_p(a, tv, mode=mode))
    out = convolve_p(a, v, mode=mode)
    return out, parts[0] if len(parts) == 1 else ew.add(parts[0], parts[1])


def _convolve_vjp_a(ct, out, a, v, mode):
    # The cotangent correlates with v: a convolution with v reversed, valid for a full
    # convolution and full for a valid one.
    g = convolve_p(ct, _reversed_last(v), mode="valid" if mode == "full" else "full")
    return red.unbroadcast(g, shape_of(a))


def _convolve_vjp_v(ct, out, a, v, mode):
    if mode == "full":
        g = convolve_p(ct, _reversed_last(a), mode="valid")
    else:
        g = convolve_p(_reversed_last(a), ct, mode="valid")
    return red.unbroadcast(g, shape_of(v))


def _convolve_batch(axis_size, values, batch_axes, mode):
    rank = max(len(shape_of(v)) - (ax is not None) for v, ax in zip(values, batch_axes))
    aligned = []
    for value, ax in zip(values, batch_axes):
        dims = shape_of(value)
        if ax is not None and len(dims) - 1 < rank:
            value = sh.reshape(value, dims[:1] + (1,) * (rank - len(dims) + 1) + dims[1:])
        aligned.append(value)
    return convolve_p(*aligned, mode=mode), 0


# Closed under differentiation: each rule is a full or valid convolution costing about what
# the function costs (a cotangent of length m is never computed from a full-length result).
convolve_p = Primitive("convolve", _convolve_impl, _convolve_jvp,
                       (_convolve_vjp_a, _convolve_vjp_v), _convolve_batch,
                       vjp_ignores=("out",), vjp_reads=(frozenset({1}), frozenset({0})))


def _signal_operands(a, v, promote):
    a, v = _array(a), _array(v)
    if not promote and (_ndim(a) == 0 or _ndim(v) == 0):
        raise ValueError(f"object of too small depth for desired array: correlate takes "
                         f"1-D arrays, got shapes {shape_of(a)} and {shape_of(v)}")
    a = sh.reshape(a, (1,)) if _ndim(a) == 0 else a
    v = sh.reshape(v, (1,)) if _ndim(v) == 0 else v
    if _ndim(a) != 1 or _ndim(v) != 1:
        raise ValueError(f"object too deep for desired array: convolve and correlate take "
                         f"1-D arrays, got shapes {shape_of(a)} and {shape_of(v)}")
    if shape_of(a)[0] == 0:
        raise ValueError("a cannot be empty")
    if shape_of(v)[0] == 0:
        raise ValueError("v cannot be empty")
    return a, v


def _mode_window(a, v, mode, same_start):
    """``mode`` of the convolution of the 1-D ``a`` and ``v``: ``'valid'`` directly (the
    longer operand first), ``'same'`` and ``'full'`` from the full convolution."""
    n, m = shape_of(a)[0], shape_of(v)[0]
    if mode == "valid":
        return convolve_p(a, v, mode="valid") if n >= m else convolve_p(v, a, mode="valid")
    if mode not in ("full", "same"):
        raise ValueError(f"mode must be one of 'full', 'same', or 'valid' (got {mode!r})")
    full = convolve_p(a, v, mode="full")
    if mode == "full" or (same_start == 0 and max(n, m) == n + m - 1):
        return full
    return getitem(full, slice(same_start, same_start + max(n, m)))


def convolve(a, v, mode="full"):
    """Discrete linear convolution of two 1-D sequences, as ``np.convolve`` (``mode``
    ``'full'``, ``'same'`` or ``'valid'``); differentiable in both."""
    if not _traced(a, v):
        return np.convolve(a, v, mode)
    a, v = _signal_operands(a, v, promote=True)
    n, m = shape_of(a)[0], shape_of(v)[0]
    return _mode_window(a, v, mode, (min(n, m) - 1) // 2)


def correlate(a, v, mode="valid"):
    """Cross-correlation ``c[k] = sum_n a[n + k] * conj(v[n])`` of two 1-D sequences, as
    ``np.correlate`` (default ``mode='valid'``); differentiable in both."""
    if not _traced(a, v):
        return np.correlate(a, v, mode)
    a, v = _signal_operands(a, v, promote=False)
    n, m = shape_of(a)[0], shape_of(v)[0]
    kernel = _reversed_last(v)
    if dtype_of(kernel).kind == "c":
        kernel = ew.conj(kernel)
    short = min(n, m)
    return _mode_window(a, kernel, mode, (short - 1) // 2 if n >= m else short // 2)


# === cross, polyval, meshgrid ==============================================================


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cross product of vectors along ``axisa``/``axisb`` (of length 3, or 2 taken as
    z = 0), placed along ``axisc``, as ``np.cross``; ``axis`` sets all three."""
    if not _traced(a, b):
        return np.cross(a, b, axisa, axisb, axisc, axis)
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = _array(a), _array(b)
    a = sh.moveaxis(a, _axis(axisa, _ndim(a)), -1)
    b = sh.moveaxis(b, _axis(axisb, _ndim(b)), -1)
    na, nb = shape_of(a)[-1], shape_of(b)[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n"
                         "(dimension must be 2 or 3)")
    if (na == 2 or nb == 2) and _NUMPY2:
        warnings.warn("Arrays of 2-dimensional vectors are deprecated. Use arrays of "
                      "3-dimensional vectors instead. (deprecated in NumPy 2.0)",
                      DeprecationWarning, stacklevel=2)
    ca = [getitem(a, (Ellipsis, i)) for i in range(na)]
    cb = [getitem(b, (Ellipsis, i)) for i in range(nb)]

    def det(i, j):  # a_i b_j - a_j b_i, with missing (z) components zero
        return ew.subtract(ew.multiply(ca[i], cb[j]), ew.multiply(ca[j], cb[i]))

    if na == 2 and nb == 2:
        return det(0, 1)
    if na == 2:
        parts = [ew.multiply(ca[1], cb[2]), ew.negative(ew.multiply(ca[0], cb[2])), det(0, 1)]
    elif nb == 2:
        parts = [ew.negative(ew.multiply(ca[2], cb[1])), ew.multiply(ca[2], cb[0]), det(0, 1)]
    else:
        parts = [det(1, 2), det(2, 0), det(0, 1)]
    out = sh.stack(parts, axis=-1)
    return sh.moveaxis(out, -1, _axis(axisc, _ndim(out)))


def polyval(p, x):
    """The polynomial with coefficients ``p`` (highest power first) at ``x``, as
    ``np.polyval``, by Horner's scheme; differentiable in ``p`` and ``x``."""
    if isinstance(p, np.poly1d):
        p = p.coeffs
    if not _traced(p, x):
        return np.polyval(p, x)
    p, x = _array(p), _array(x)
    y = np.zeros(shape_of(x), dtype_of(x))
    for i in range(shape_of(p)[0] if shape_of(p) else 0):
        y = ew.add(ew.multiply(y, x), getitem(p, i)) if i else ew.add(y, getitem(p, 0))
    return y


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate arrays from coordinate vectors, as ``np.meshgrid`` (``indexing`` ``'xy'``
    or ``'ij'``, ``sparse`` for broadcastable outputs)."""
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    if not _traced(*xi):
        return np.meshgrid(*xi, copy=copy, sparse=sparse, indexing=indexing)
    ndim = len(xi)
    out = []
    for i, x in enumerate(xi):
        dims = [1] * ndim
        dims[i] = -1
        if indexing == "xy" and ndim > 1 and i < 2:
            dims[0], dims[1] = dims[1], dims[0]
        out.append(sh.reshape(_array(x), tuple(dims)))
    if not sparse:
        out = list(broadcast_arrays(*out))
    return tuple(out) if _NUMPY2 else out


# === joining ===============================================================================


def broadcast_arrays(*args, subok=False):
    """The arguments broadcast to their common shape, as ``np.broadcast_arrays``."""
    if not _traced(*args):
        return np.broadcast_arrays(*args, subok=subok)
    args = [_array(a) for a in args]
    target = np.broadcast_shapes(*(shape_of(a) for a in args))
    out = [sh.broadcast_to(a, target) for a in args]
    return tuple(out) if _NUMPY2 else out


def _cast_all(arrays, dtype):
    return arrays if dtype is None else [ew.astype(a, dtype) for a in arrays]


def hstack(tup, *, dtype=None, casting="same_kind"):
    """Join along the second axis (the first for 1-D arrays), as ``np.hstack``."""
    if not _traced(tup):
        return np.hstack(tup, dtype=dtype, casting=casting)
    arrays = _cast_all([_at_least(a, 1) for a in _sequence(tup, "hstack")], dtype)
    return sh.concatenate(arrays, axis=0 if _ndim(arrays[0]) == 1 else 1)


def vstack(tup, *, dtype=None, casting="same_kind"):
    """Join along the first axis, 1-D arrays as rows, as ``np.vstack``."""
    if not _traced(tup):
        return np.vstack(tup, dtype=dtype, casting=casting)
    arrays = _cast_all([_at_least(a, 2) for a in _sequence(tup, "vstack")], dtype)
    return sh.concatenate(arrays, axis=0)


def dstack(tup):
    """Join along the third axis, as ``np.dstack``."""
    if not _traced(tup):
        return np.dstack(tup)
    return sh.concatenate([_at_least(a, 3) for a in _sequence(tup, "dstack")], axis=2)


def column_stack(tup):
    """Join 1-D arrays as columns (and 2-D arrays as they are) into a 2-D array, as
    ``np.column_stack``."""
    if not _traced(tup):
        return np.column_stack(tup)
    arrays = []
    for a in _sequence(tup, "column_stack"):
        if _ndim(a) < 2:
            a = sh.reshape(a, (-1, 1))
        arrays.append(a)
    return sh.concatenate(arrays, axis=1)


if "row_stack" in __all__:
    def row_stack(tup, *, dtype=None, casting="same_kind"):
        """Alias of ``vstack``, as NumPy's (deprecated in NumPy 2.0)."""
        if _NUMPY2:
            warnings.warn("`row_stack` alias is deprecated. Use `np.vstack` directly.",
                          DeprecationWarning, stacklevel=2)
        return vstack(tup, dtype=dtype, casting=casting)


def _block_structure(arrays, index=()):
    """``(depth, max_ndim)`` of a nested list of arrays, with NumPy's checks."""
    if isinstance(arrays, tuple):
        raise TypeError(f"{_block_index(index)} is a tuple. Only lists can be used to arrange "
                        "blocks, and np.block does not allow implicit conversion from tuple "
                        "to ndarray.")
    if not isinstance(arrays, list):
        return 0, _ndim(_array(arrays))
    if not arrays:
        raise ValueError(f"List at {_block_index(index)} cannot be empty")
    found = [_block_structure(a, index + (i,)) for i, a in enumerate(arrays)]
    depths = {d for d, _ in found}
    if len(depths) > 1:
        first = found[0][0]
        bad = next(i for i, (d, _) in enumerate(found) if d != first)
        raise ValueError(f"List depths are mismatched. First element was at depth "
                         f"{first + len(index) + 1}, but there is an element at depth "
                         f"{found[bad][0] + len(index) + 1} ({_block_index(index + (bad,))})")
    return found[0][0] + 1, max(n for _, n in found)


def _block_index(index):
    return "arrays" + "".join(f"[{i}]" for i in index)


def _assemble(arrays, depth, ndim):
    if not isinstance(arrays, list):
        return _at_least_nd(_array(arrays), ndim)
    parts = [_assemble(a, depth - 1, ndim) for a in arrays]
    return sh.concatenate(parts, axis=-depth) if len(parts) > 1 else parts[0]


def _at_least_nd(x, ndim):
    dims = shape_of(x)
    return x if len(dims) >= ndim else sh.reshape(x, (1,) * (ndim - len(dims)) + dims)


def block(arrays):
    """An array assembled from nested lists of blocks, as ``np.block``: the innermost lists
    join along the last axis, the next ones along the second-to-last, and so on."""
    if not _traced(arrays):
        return np.block(arrays)
    depth, ndim = _block_structure(arrays)
    return _assemble(arrays, depth, max(depth, ndim))


def copy(a, order="K", subok=False):
    """A copy of ``a``, as ``np.copy``; a traced value is immutable and returned as is."""
    if not _traced(a):
        return np.copy(a, order=order, subok=subok)
    return a
