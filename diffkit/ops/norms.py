"""Vector and matrix norms and the condition number: ``norm``, ``vector_norm``,
``matrix_norm`` and ``cond``, compositions of elementwise ops, reductions and ``svd``.

Conventions: ``norm`` has derivative 0 at the zero vector (matrix), and ``ord=inf`` shares
the derivative equally between tied entries (as ``max``).
"""

import operator

import numpy as np

from ..core.concrete import holds_tracer
from ..core.zeros import is_complex, shape_of
from . import elementwise as ew
from . import reductions as rd
from . import shape as sh
from .indexing import getitem
from .matrix_helpers import (
    _assert_stacked_square,
    _conj,
    _inexact,
    _matrix_stack,
    _real,
    _real_dtype,
    _scalar_if_plain,
)
from .solves import inv_p
from .svd import svd

__all__ = ["norm", "vector_norm", "matrix_norm", "cond"]


# === norms ================================================================================


def _abs(x):
    return ew.abs_p(x)


def _abs_squared(x):
    if is_complex(x):
        return _real(ew.multiply_p(_conj(x), x))
    return ew.square_p(x)


def _root_of_sum_of_squares(x, axis, keepdims):
    """``sqrt(sum(|x|^2))`` over ``axis``, with derivative 0 where it is 0."""
    total = rd.sum(_abs_squared(x), axis=axis, keepdims=keepdims)
    nonzero = ew.greater_p(total, 0)
    return ew.where_p(nonzero, ew.sqrt_p(ew.where_p(nonzero, total, 1.0)), 0.0)


def _p_norm(x, p, axis, keepdims):
    """``sum(|x|^p)^(1/p)``, with derivative 0 at zero entries (for p < 1) and at 0."""
    ax = _abs(x)
    nonzero = ew.greater_p(ax, 0)
    if p > 0:
        powered = ew.where_p(nonzero, ew.power(ew.where_p(nonzero, ax, 1.0), p), 0.0)
    else:
        powered = ew.power(ax, p)   # NumPy gives inf at zero entries; so do we
    total = rd.sum(powered, axis=axis, keepdims=keepdims)
    positive = ew.greater_p(total, 0)
    if p > 0:
        return ew.where_p(positive, ew.power(ew.where_p(positive, total, 1.0), 1.0 / p), 0.0)
    return ew.power(total, 1.0 / p)


def _vector_norm(x, ord, axis, keepdims):
    if ord is None or (not isinstance(ord, str) and ord == 2):
        return _root_of_sum_of_squares(x, axis, keepdims)
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order '{ord}' for vectors")
    if ord == np.inf:
        return rd.max(_abs(x), axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return rd.min(_abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        return rd.sum(ew.astype(ew.not_equal_p(x, 0), _real_dtype(x)), axis=axis,
                      keepdims=keepdims)
    if ord == 1:
        return rd.sum(_abs(x), axis=axis, keepdims=keepdims)
    return _p_norm(x, float(ord), axis, keepdims)


def _zero_at_zero(value):
    """``value`` with derivative 0 where it is 0 (norms of the zero matrix)."""
    return ew.where_p(ew.greater_p(value, 0), value, 0.0)


def _svd_norm(x, row, col, reduce):
    x = sh.moveaxis(x, (row, col), (-2, -1))
    return reduce(svd(x, compute_uv=False), axis=-1)


def _matrix_norm(x, ord, row, col):
    nd = len(shape_of(x))
    if ord == 2:
        return _zero_at_zero(_svd_norm(x, row, col, rd.max))
    if ord == -2:
        return _svd_norm(x, row, col, rd.min)
    if ord == "nuc":
        return _zero_at_zero(_svd_norm(x, row, col, rd.sum))
    if ord in (None, "fro", "f"):
        return _root_of_sum_of_squares(x, (row, col), False)
    if ord in (1, -1):
        sums = rd.sum(_abs(x), axis=row)
        reduce = rd.max if ord == 1 else rd.min
        return reduce(sums, axis=col - 1 if col > row else col)
    if ord in (np.inf, -np.inf):
        sums = rd.sum(_abs(x), axis=col)
        reduce = rd.max if ord == np.inf else rd.min
        return reduce(sums, axis=row - 1 if row > col else row)
    del nd
    raise ValueError("Invalid norm order for matrices.")


def norm(x, ord=None, axis=None, keepdims=False):
    """Vector or matrix norm, as ``np.linalg.norm``: vector ``ord`` None/2, 1, inf, -inf,
    0 (count of nonzeros, no derivative) or any other p; matrix ``ord`` 'fro' (None), 'nuc',
    1, -1, 2, -2, inf, -inf; ``axis`` None, an int (vectors) or a pair (matrices).
    Derivative 0 at the zero vector or matrix; ``inf`` norms share it between tied
    entries; the spectral and nuclear norms through the SVD's."""
    x = _inexact(x)
    nd = len(shape_of(x))
    if axis is None:
        if ord is None or (ord in ("f", "fro") and nd == 2) or \
                (not isinstance(ord, str) and ord == 2 and nd == 1):
            out = _root_of_sum_of_squares(x, None, False)
            return sh.reshape(out, (1,) * nd) if keepdims else _scalar_if_plain(out)
        axis = tuple(range(nd))
    elif not isinstance(axis, tuple):
        try:
            axis = (operator.index(axis),)
        except TypeError:
            raise TypeError("'axis' must be None, an integer or a tuple of integers") from None
    if len(axis) == 1:
        return _scalar_if_plain(_vector_norm(x, ord, rd.normalize_axes(axis, nd), keepdims))
    if len(axis) == 2:
        row, col = (sh._normalize_axis(a, nd) for a in axis)
        if row == col:
            raise ValueError("Duplicate axes given.")
        out = _matrix_norm(x, ord, row, col)
        if keepdims:
            dims = list(shape_of(x))
            dims[row] = dims[col] = 1
            out = sh.reshape(out, tuple(dims))
        return _scalar_if_plain(out)
    raise ValueError("Improper number of dimensions to norm.")


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """The vector norm over ``axis`` (all axes when None; a tuple of axes is treated as one
    flattened vector), as ``np.linalg.vector_norm``."""
    x = _inexact(x)
    nd = len(shape_of(x))
    dims = shape_of(x)
    if axis is None:
        out = norm(sh.reshape(x, (-1,)), ord=ord, axis=0)
        return sh.reshape(out, (1,) * nd) if keepdims else out
    if isinstance(axis, tuple) and len(axis) > 1:
        axes = rd.normalize_axes(axis, nd)
        rest = [a for a in range(nd) if a not in axes]
        moved = sh.transpose(x, rest + list(axes))
        moved = sh.reshape(moved, tuple(dims[a] for a in rest) + (-1,))
        out = norm(moved, ord=ord, axis=-1)
        if keepdims:
            out = sh.reshape(out, tuple(1 if a in axes else d for a, d in enumerate(dims)))
        return out
    return norm(x, ord=ord, axis=axis, keepdims=keepdims)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """The matrix norm over the last two axes, as ``np.linalg.matrix_norm``."""
    x = _matrix_stack(x)
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


def cond(x, p=None):
    """The condition number in the norm ``p`` (None/2/-2: ratio of singular values; 'fro',
    'nuc', 1, -1, inf, -inf: ``norm(x, p) * norm(inv(x), p)``), as ``np.linalg.cond``."""
    x = _matrix_stack(x)
    if not holds_tracer(x):
        return np.linalg.cond(x, p)
    if p is None or p == 2 or p == -2:
        s = svd(x, compute_uv=False)
        first = getitem(s, (Ellipsis, 0))
        last = getitem(s, (Ellipsis, -1))
        return ew.divide_p(last, first) if p == -2 else ew.divide_p(first, last)
    _assert_stacked_square(x)
    return ew.multiply_p(norm(x, p, axis=(-2, -1)), norm(inv_p(x), p, axis=(-2, -1)))
