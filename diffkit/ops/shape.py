"""Shape primitives: reshape, broadcast_to, transpose, concatenate, and what composes them.

All of these are linear, so each JVP applies the primitive to the tangent and each VJP is
the adjoint shape operation (reshape back, sum over broadcast axes, inverse permutation,
slice apart). Wrappers with NumPy's signatures normalise the static parameters.
"""

import math

import numpy as np

from ..core.primitive import EachArgument, Primitive, Traits
from ..core.zeros import Zero, as_array, dtype_of, shape_of
from . import indexing, reductions
from . import sparsity_rules as sr
from . import taylor_arithmetic as ta


def _normalize_axis(axis, ndim, what="axis"):
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(
            f"{what} {axis} is out of bounds for an array of dimension {ndim}")
    return int(axis) % ndim


# --- reshape ---------------------------------------------------------------------------


def _same_shape(params, shape):
    """Whether reshaping or broadcasting to ``params["shape"]`` leaves ``shape`` as it is."""
    return tuple(params["shape"]) == tuple(shape)


reshape_p = Primitive(
    "reshape",
    lambda x, shape: np.reshape(x, shape),
    lambda primals, tangents, shape: (reshape_p(primals[0], shape=shape),
                                      reshape_p(tangents[0], shape=shape)),
    (lambda ct, out, x, shape: reshape_p(ct, shape=shape_of(x)),),
    lambda axis_size, values, batch_axes, shape: (
        reshape_p(values[0], shape=(axis_size,) + shape), 0),
    vjp_ignores=(0, "out"),
    # a reshape of a reshape is the outer reshape of the first input
    traits=Traits(curvature="linear", shape_only=True, compose=lambda outer, inner: outer,
                  is_identity=_same_shape, reshapes_to=lambda params: params["shape"]),
)
reshape_p.sparsity = sr.index_map_sparsity(reshape_p.impl)
reshape_p.jet = ta.linear(reshape_p)


def reshape(x, shape):
    """``x`` with a new shape (one entry may be -1), as ``np.reshape``."""
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    if type(shape) is not tuple or not all(type(d) is int for d in shape):
        shape = tuple(int(d) for d in shape)
    old = shape_of(x)
    if shape == old:
        return x
    if -1 in shape:
        known = math.prod([d for d in shape if d != -1])
        size = math.prod(old)
        if known == 0 or size % known:
            raise ValueError(f"cannot reshape an array of shape {old} into shape {shape}")
        shape = tuple(size // known if d == -1 else d for d in shape)
    if math.prod(shape) != math.prod(old):
        raise ValueError(f"cannot reshape an array of shape {old} into shape {shape}")
    return reshape_p(x, shape=shape)


def expand_dims(x, axis):
    """Insert size-1 axes at the positions ``axis`` (int or tuple), as ``np.expand_dims``."""
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    ndim = len(shape_of(x)) + len(axes)
    axes = {_normalize_axis(a, ndim) for a in axes}
    dims = iter(shape_of(x))
    return reshape(x, tuple(1 if i in axes else next(dims) for i in range(ndim)))


def squeeze(x, axis=None):
    """Remove size-1 axes (all of them, or those named by ``axis``), as ``np.squeeze``."""
    dims = shape_of(x)
    if axis is None:
        axes = {i for i, d in enumerate(dims) if d == 1}
    else:
        axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
        axes = {_normalize_axis(a, len(dims)) for a in axes}
        for a in axes:
            if dims[a] != 1:
                raise ValueError(f"cannot squeeze axis {a} of size {dims[a]} (shape {dims})")
    return reshape(x, tuple(d for i, d in enumerate(dims) if i not in axes))


def ravel(x):
    return reshape(x, (-1,))


# --- broadcast_to ----------------------------------------------------------------------


def _broadcast_batch(axis_size, values, batch_axes, shape):
    (x,) = values
    dims = shape_of(x)
    x = reshape_p(x, shape=dims[:1] + (1,) * (len(shape) - len(dims) + 1) + dims[1:])
    return broadcast_to_p(x, shape=(axis_size,) + shape), 0


def _unbroadcast(ct, out, x, shape):
    return reductions.unbroadcast(ct, shape_of(x))


broadcast_to_p = Primitive(
    "broadcast_to",
    lambda x, shape: np.broadcast_to(x, shape),
    lambda primals, tangents, shape: (broadcast_to_p(primals[0], shape=shape),
                                      broadcast_to_p(tangents[0], shape=shape)),
    (_unbroadcast,),
    _broadcast_batch,
    vjp_ignores=(0, "out"),
    traits=Traits(curvature="linear", shape_only=True, is_identity=_same_shape),
)
broadcast_to_p.sparsity = sr.index_map_sparsity(broadcast_to_p.impl)
broadcast_to_p.jet = ta.linear(broadcast_to_p)


def broadcast_to(x, shape):
    """``x`` broadcast to ``shape``, as ``np.broadcast_to`` (read-only result)."""
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)
    if shape_of(x) == shape:
        return x
    np.broadcast_shapes(shape_of(x), shape)  # raises NumPy's error for incompatible shapes
    return broadcast_to_p(x, shape=shape)


# --- transpose -------------------------------------------------------------------------

transpose_p = Primitive(
    "transpose",
    lambda x, axes: np.transpose(x, axes),
    lambda primals, tangents, axes: (transpose_p(primals[0], axes=axes),
                                     transpose_p(tangents[0], axes=axes)),
    (lambda ct, out, x, axes: transpose_p(ct, axes=tuple(int(i) for i in np.argsort(axes))),),
    lambda axis_size, values, batch_axes, axes: (
        transpose_p(values[0], axes=(0,) + tuple(a + 1 for a in axes)), 0),
    vjp_ignores=(0, "out"),
    traits=Traits(curvature="linear", shape_only=True,
                  compose=lambda outer, inner: {
                      "axes": tuple(inner["axes"][i] for i in outer["axes"])},
                  is_identity=lambda params, shape: tuple(params["axes"]) == tuple(
                      range(len(shape)))),
)
transpose_p.sparsity = sr.index_map_sparsity(transpose_p.impl)
transpose_p.jet = ta.linear(transpose_p)


def transpose(x, axes=None):
    """Permute the axes of ``x`` (reverse them by default), as ``np.transpose``."""
    ndim = len(shape_of(x))
    if axes is None:
        axes = tuple(range(ndim))[::-1]
    axes = tuple(_normalize_axis(a, ndim) for a in axes)
    if sorted(axes) != list(range(ndim)):
        raise ValueError(f"axes {axes} are not a permutation of the {ndim} axes")
    if axes == tuple(range(ndim)):
        return x
    return transpose_p(x, axes=axes)


def moveaxis(x, source, destination):
    """Move axes of ``x`` to new positions, as ``np.moveaxis``."""
    ndim = len(shape_of(x))
    source = [source] if isinstance(source, (int, np.integer)) else list(source)
    destination = [destination] if isinstance(destination, (int, np.integer)) \
        else list(destination)
    source = [_normalize_axis(a, ndim, "source") for a in source]
    destination = [_normalize_axis(a, ndim, "destination") for a in destination]
    order = [a for a in range(ndim) if a not in source]
    for dest, src in sorted(zip(destination, source)):
        order.insert(dest, src)
    return transpose(x, order)


def swapaxes(x, axis1, axis2):
    ndim = len(shape_of(x))
    if ndim == 2 and {axis1, axis2} in ({0, 1}, {-1, -2}):  # the matrix transpose
        return transpose_p(x, axes=(1, 0))
    order = list(range(ndim))
    a, b = _normalize_axis(axis1, ndim), _normalize_axis(axis2, ndim)
    order[a], order[b] = order[b], order[a]
    return transpose(x, order)


# --- concatenate -----------------------------------------------------------------------


def _concatenate_jvp(primals, tangents, axis):
    tangents = [np.zeros(t.shape, t.dtype) if type(t) is Zero else t for t in tangents]
    return concatenate_p(*primals, axis=axis), concatenate_p(*tangents, axis=axis)


def _concatenate_vjp(i):
    """The rule of argument ``i``: its slice of the cotangent."""
    def rule(ct, out, *xs, axis):
        start = sum(shape_of(x)[axis] for x in xs[:i])
        stop = start + shape_of(xs[i])[axis]
        return indexing.getitem(ct, (slice(None),) * axis + (slice(start, stop),))
    return rule


def _concatenate_batch(axis_size, values, batch_axes, axis):
    values = [v if a is not None else broadcast_to(v, (axis_size,) + shape_of(v))
              for v, a in zip(values, batch_axes)]
    return concatenate_p(*values, axis=axis + 1), 0


concatenate_p = Primitive("concatenate", lambda *xs, axis: np.concatenate(xs, axis=axis),
                          _concatenate_jvp, EachArgument(_concatenate_vjp), _concatenate_batch,
                          vjp_ignores=("args", "out"),
                          traits=Traits(curvature="linear",
                                        joins_along=lambda params: params["axis"]))


def _concatenate_sparsity(args, out, local, axis):
    return sr.index_map_sparsity(concatenate_p.impl, tuple(range(len(args))))(
        args, out, local, axis=axis)


concatenate_p.sparsity = _concatenate_sparsity
concatenate_p.jet = ta.concatenate(concatenate_p)


def concatenate(arrays, axis=0):
    """Join arrays along an existing axis, as ``np.concatenate`` (``axis=None`` flattens)."""
    arrays = [as_array(a) for a in arrays]  # np.concatenate([[0.0], x])
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    if axis is None:
        arrays = [ravel(a) for a in arrays]
        axis = 0
    ndim = len(shape_of(arrays[0]))
    if ndim == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    axis = _normalize_axis(axis, ndim)
    if len(arrays) == 1:
        return arrays[0]
    return concatenate_p(*arrays, axis=axis)


def stack(arrays, axis=0):
    """Join arrays along a new axis, as ``np.stack``."""
    arrays = [as_array(a) for a in arrays]
    if not arrays:
        raise ValueError("need at least one array to stack")
    shapes = {shape_of(a) for a in arrays}
    if len(shapes) > 1:
        raise ValueError(f"all input arrays must have the same shape, got {sorted(shapes)}")
    axis = _normalize_axis(axis, len(shape_of(arrays[0])) + 1)
    return concatenate_p(*[expand_dims(a, axis) for a in arrays], axis=axis) \
        if len(arrays) > 1 else expand_dims(arrays[0], axis)


def zeros_like_value(x):
    """Plain zeros shaped like ``x`` (a tracer or an array): no derivative."""
    return np.zeros(shape_of(x), dtype_of(x))
