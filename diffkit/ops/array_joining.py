"""Splitting and joining arrays: ``split``, ``array_split``, ``hsplit``, ``vsplit``,
``dsplit``; ``hstack``, ``vstack``, ``dstack``, ``column_stack``, ``row_stack``, ``block``;
``atleast_1d/2d/3d``, ``meshgrid``, ``broadcast_arrays`` and ``copy``.

``split`` is a primitive with several outputs at once; its VJP is one ``concatenate`` of
the pieces' cotangents (slicing each piece out separately would scatter every cotangent into
a full-size array of zeros). The rest are compositions.
"""

import warnings

import numpy as np

from ..core.concrete import holds_tracer
from ..core.primitive import Primitive
from ..core.trace import Tracer
from ..core.zeros import Zero, as_array, shape_of
from . import elementwise as ew
from . import shape as sh
from . import sparsity_rules as sr
from . import taylor_arithmetic as ta
from .array_helpers import _NUMPY2, _axis, _ndim, _several, _static, _take_range

__all__ = [
    "split", "array_split", "hsplit", "vsplit", "dsplit", "atleast_1d", "atleast_2d",
    "atleast_3d", "meshgrid", "block", "column_stack", "hstack", "vstack", "dstack",
    "broadcast_arrays", "copy",
]
if hasattr(np, "row_stack"):
    __all__.append("row_stack")

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
    return [as_array(a) for a in tup]


def _unstack(x):
    """The slices ``x[0], x[1], ...`` of a traced array, cut by one ``split``."""
    dims = shape_of(x)
    if not dims:
        raise TypeError("iteration over a 0-d array")
    if dims[0] <= 1:
        return [sh.reshape(x, dims[1:])] if dims[0] else []
    return [sh.reshape(piece, dims[1:]) for piece in split_p(x, sizes=(1,) * dims[0], axis=0)]


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
split_p.sparsity = sr.index_map_sparsity(split_p.impl)
split_p.jet = ta.linear(split_p, multiple_results=True)


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
    if not holds_tracer(ary):
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


# === atleast_nd ============================================================================


def _at_least(x, ndim):
    x = as_array(x)
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


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate arrays from coordinate vectors, as ``np.meshgrid`` (``indexing`` ``'xy'``
    or ``'ij'``, ``sparse`` for broadcastable outputs)."""
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    if not holds_tracer(*xi):
        return np.meshgrid(*xi, copy=copy, sparse=sparse, indexing=indexing)
    ndim = len(xi)
    out = []
    for i, x in enumerate(xi):
        dims = [1] * ndim
        dims[i] = -1
        if indexing == "xy" and ndim > 1 and i < 2:
            dims[0], dims[1] = dims[1], dims[0]
        out.append(sh.reshape(as_array(x), tuple(dims)))
    if not sparse:
        out = list(broadcast_arrays(*out))
    return tuple(out) if _NUMPY2 else out


# === joining ===============================================================================


def broadcast_arrays(*args, subok=False):
    """The arguments broadcast to their common shape, as ``np.broadcast_arrays``."""
    if not holds_tracer(*args):
        return np.broadcast_arrays(*args, subok=subok)
    args = [as_array(a) for a in args]
    target = np.broadcast_shapes(*(shape_of(a) for a in args))
    out = [sh.broadcast_to(a, target) for a in args]
    return tuple(out) if _NUMPY2 else out


def _cast_all(arrays, dtype):
    return arrays if dtype is None else [ew.astype(a, dtype) for a in arrays]


def hstack(tup, *, dtype=None, casting="same_kind"):
    """Join along the second axis (the first for 1-D arrays), as ``np.hstack``."""
    if not holds_tracer(tup):
        return np.hstack(tup, dtype=dtype, casting=casting)
    arrays = _cast_all([_at_least(a, 1) for a in _sequence(tup, "hstack")], dtype)
    return sh.concatenate(arrays, axis=0 if _ndim(arrays[0]) == 1 else 1)


def vstack(tup, *, dtype=None, casting="same_kind"):
    """Join along the first axis, 1-D arrays as rows, as ``np.vstack``."""
    if not holds_tracer(tup):
        return np.vstack(tup, dtype=dtype, casting=casting)
    arrays = _cast_all([_at_least(a, 2) for a in _sequence(tup, "vstack")], dtype)
    return sh.concatenate(arrays, axis=0)


def dstack(tup):
    """Join along the third axis, as ``np.dstack``."""
    if not holds_tracer(tup):
        return np.dstack(tup)
    return sh.concatenate([_at_least(a, 3) for a in _sequence(tup, "dstack")], axis=2)


def column_stack(tup):
    """Join 1-D arrays as columns (and 2-D arrays as they are) into a 2-D array, as
    ``np.column_stack``."""
    if not holds_tracer(tup):
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
        return 0, _ndim(as_array(arrays))
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
        return _at_least_nd(as_array(arrays), ndim)
    parts = [_assemble(a, depth - 1, ndim) for a in arrays]
    return sh.concatenate(parts, axis=-depth) if len(parts) > 1 else parts[0]


def _at_least_nd(x, ndim):
    dims = shape_of(x)
    return x if len(dims) >= ndim else sh.reshape(x, (1,) * (ndim - len(dims)) + dims)


def block(arrays):
    """An array assembled from nested lists of blocks, as ``np.block``: the innermost lists
    join along the last axis, the next ones along the second-to-last, and so on."""
    if not holds_tracer(arrays):
        return np.block(arrays)
    depth, ndim = _block_structure(arrays)
    return _assemble(arrays, depth, max(depth, ndim))


def copy(a, order="K", subok=False):
    """A copy of ``a``, as ``np.copy``; a traced value is immutable and returned as is."""
    if not holds_tracer(a):
        return np.copy(a, order=order, subok=subok)
    return a
