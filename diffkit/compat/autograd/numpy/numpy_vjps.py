"""``autograd.numpy.numpy_vjps``: the helpers autograd's VJP rules share, for rules of
your own primitives (``autograd_gamma`` uses ``unbroadcast_f``).

A cotangent computed for a broadcast result must be summed back to its argument's shape:
``unbroadcast(g, metadata(x))`` sums the leading axes the broadcast added and the axes
where ``x`` has length 1, and takes the real part for a real ``x``.
"""

from .... import numpy as dnp
from .._values import dtype_of, shape_of
from .numpy_wrapper import metadata

__all__ = ["unbroadcast", "unbroadcast_f", "unbroadcast_einsum", "match_complex",
           "replace_zero", "balanced_eq"]


def unbroadcast(x, target_meta, broadcast_idx=0):
    """``x`` summed to the shape of the value ``target_meta`` describes
    (``metadata(target)``: shape, ndim, dtype, whether complex)."""
    shape, ndim, _, iscomplex = target_meta
    while len(shape_of(x)) > ndim:
        x = dnp.sum(x, axis=broadcast_idx)
    for axis, size in enumerate(shape):
        if size == 1 and shape_of(x)[axis] != 1:
            x = dnp.sum(x, axis=axis, keepdims=True)
    if not iscomplex and dtype_of(x).kind == "c":
        x = dnp.real(x)
    return x


def unbroadcast_f(target, f):
    """``g -> unbroadcast(f(g), metadata(target))``: a VJP whose result is summed back to
    ``target``'s shape."""
    target_meta = metadata(target)
    return lambda g: unbroadcast(f(g), target_meta)


def unbroadcast_einsum(x, target_meta, subscript):
    """``x`` summed to an einsum operand's shape, given its ``subscript`` (a string with
    an ellipsis, or a list of axis labels)."""
    if Ellipsis not in subscript and "..." not in subscript:
        return x
    if isinstance(subscript, str):
        position = subscript.index("...")
        if subscript.find(".", position + 3) < 0 and position == len(subscript) - 3:
            return unbroadcast(x, target_meta, -1)
        return unbroadcast(x, target_meta, position)
    position = subscript.index(Ellipsis)
    if position == len(subscript) - 1:
        return unbroadcast(x, target_meta, -1)
    return unbroadcast(x, target_meta, position)


def match_complex(target, x):
    """``x`` as real when ``target`` is real."""
    if dnp.iscomplexobj(x) and not dnp.iscomplexobj(target):
        return dnp.real(x)
    return x


def replace_zero(x, val):
    """``x`` with its zeros replaced by ``val``."""
    return dnp.where(x, x, val)


def balanced_eq(x, z, y):
    """Where ``x == z``, the share of ``z`` credited to ``x`` when ``y`` may tie with it (1,
    or 1/2 at a tie): how ``maximum``/``minimum`` split their derivative."""
    return (x == z) / (1.0 + (x == y))
