"""The array-API names of ``numpy.linalg`` (compositions): ``outer``, ``vecdot``,
``matrix_transpose``, ``diagonal``, ``trace`` and ``cross``, with the array API's
signatures (positional-only arrays, keyword-only axes).
"""

import operator

import numpy as np

from ..core.zeros import as_array, shape_of
from . import elementwise as ew
from . import reductions as rd
from . import shape as sh
from .indexing import getitem
from .matrix_helpers import _T, _conj, _diag

__all__ = ["outer", "vecdot", "matrix_transpose", "diagonal", "trace", "cross"]


# === the array-API names of numpy.linalg ==================================================


def outer(x1, x2, /):
    """The outer product of two vectors, as ``np.linalg.outer`` (1-D inputs only)."""
    x1, x2 = as_array(x1), as_array(x2)
    for name, x in (("x1", x1), ("x2", x2)):
        if len(shape_of(x)) != 1:
            raise ValueError(f"Input arrays must be one-dimensional, but {name} has shape "
                             f"{shape_of(x)}")
    return ew.multiply_p(sh.reshape(x1, (-1, 1)), sh.reshape(x2, (1, -1)))


def vecdot(x1, x2, /, *, axis=-1):
    """``sum(conj(x1) * x2)`` over ``axis``, broadcasting, as ``np.linalg.vecdot``."""
    x1, x2 = as_array(x1), as_array(x2)
    n1, n2 = len(shape_of(x1)), len(shape_of(x2))
    if shape_of(x1)[axis] != shape_of(x2)[axis]:
        raise ValueError(f"vecdot: x1 has shape {shape_of(x1)} and x2 {shape_of(x2)}; axis "
                         f"{axis} must have the same length")
    del n1, n2
    return rd.sum(ew.multiply_p(_conj(x1), x2), axis=axis)


def matrix_transpose(x, /):
    """The transpose of the last two axes, as ``np.linalg.matrix_transpose``."""
    x = as_array(x)
    if len(shape_of(x)) < 2:
        raise ValueError(f"Input array must be at least 2-dimensional, got shape {shape_of(x)}")
    return _T(x)


def _diagonal_index(dims, offset):
    rows, cols = dims[-2:]
    start_r, start_c = (0, offset) if offset >= 0 else (-offset, 0)
    length = max(0, min(rows - start_r, cols - start_c))
    return (Ellipsis, np.arange(start_r, start_r + length), np.arange(start_c, start_c + length))


def diagonal(x, /, *, offset=0):
    """The diagonals of the last two axes, as ``np.linalg.diagonal``."""
    x = as_array(x)
    if len(shape_of(x)) < 2:
        raise ValueError(f"diagonal requires an array of at least two dimensions, got shape "
                         f"{shape_of(x)}")
    if offset == 0 and shape_of(x)[-1] == shape_of(x)[-2]:
        return _diag(x)
    return getitem(x, _diagonal_index(shape_of(x), operator.index(offset)))


def trace(x, /, *, offset=0, dtype=None):
    """The sums of the diagonals of the last two axes, as ``np.linalg.trace``."""
    out = rd.sum(diagonal(x, offset=offset), axis=-1)
    return out if dtype is None else ew.astype(out, dtype)


def cross(x1, x2, /, *, axis=-1):
    """The cross product of 3-vectors along ``axis``, broadcasting, as
    ``np.linalg.cross``."""
    x1, x2 = as_array(x1), as_array(x2)
    if shape_of(x1)[axis] != 3 or shape_of(x2)[axis] != 3:
        raise ValueError(f"Both input arrays must be (arrays of) 3-dimensional vectors, but "
                         f"they have {shape_of(x1)[axis]} and {shape_of(x2)[axis]} dimensions")
    a = sh.moveaxis(x1, axis, -1)
    b = sh.moveaxis(x2, axis, -1)

    def part(v, i):
        return getitem(v, (Ellipsis, i))

    c = [ew.subtract_p(ew.multiply_p(part(a, (i + 1) % 3), part(b, (i + 2) % 3)),
                     ew.multiply_p(part(a, (i + 2) % 3), part(b, (i + 1) % 3))) for i in range(3)]
    shape = np.broadcast_shapes(shape_of(c[0]), shape_of(c[1]), shape_of(c[2]))
    out = sh.stack([sh.broadcast_to(ci, shape) for ci in c], axis=-1)
    return sh.moveaxis(out, -1, axis)
