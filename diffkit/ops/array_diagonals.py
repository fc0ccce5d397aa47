"""Diagonals and triangles: ``diagonal``, ``diag``, ``diagflat``, ``trace``, ``tril``
and ``triu``, as compositions of integer-array indexing, scatters and ``where``.
"""


import numpy as np

from ..core.concrete import holds_tracer
from ..core.zeros import shape_of
from . import elementwise as ew
from . import reductions as red
from . import shape as sh
from .array_helpers import _axis, _ndim, _static, _zeros_of
from .indexing import ARRAY, getitem, scatter_add_p

__all__ = ["diag", "diagflat", "diagonal", "trace", "tril", "triu"]

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
    if not holds_tracer(a):
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
    if not holds_tracer(v):
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
    if not holds_tracer(v):
        return np.diagflat(v, k)
    return diag(sh.ravel(v), k)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """Sum along a diagonal, as ``np.trace``."""
    if out is not None:
        raise TypeError("trace: out= is not supported (diffkit returns new arrays)")
    if not holds_tracer(a):
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
    return ew.where_p(mask if lower else ~mask, m, _zeros_of(m))


def tril(m, k=0):
    """``m`` with the entries above the ``k``-th diagonal set to zero, as ``np.tril``."""
    return np.tril(m, k) if not holds_tracer(m) else _triangle(m, k, True)


def triu(m, k=0):
    """``m`` with the entries below the ``k``-th diagonal set to zero, as ``np.triu``."""
    return np.triu(m, k) if not holds_tracer(m) else _triangle(m, k, False)
