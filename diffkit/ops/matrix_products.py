"""Products, powers and tensor equations (compositions): ``matrix_power``, ``multi_dot``
(in the cheapest order of the chain), ``tensorsolve`` and ``tensorinv``.
"""

import math
import operator

import numpy as np

from ..core.concrete import holds_tracer
from ..core.zeros import as_array, dtype_of, shape_of
from . import elementwise as ew
from . import shape as sh
from .linalg import matmul, matmul_p
from .matrix_helpers import (
    LinAlgError,
    _assert_stacked_2d,
    _assert_stacked_square,
    _common,
    _inexact,
)
from .solves import inv, solve

__all__ = ["matrix_power", "multi_dot", "tensorsolve", "tensorinv"]


# === products, powers and tensor equations (compositions) =================================


def matrix_power(a, n):
    """``a`` to the integer power ``n`` (negative: powers of the inverse), as
    ``np.linalg.matrix_power``, by repeated squaring."""
    a = as_array(a)
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError("exponent must be an integer") from None
    _assert_stacked_2d(a)
    _assert_stacked_square(a)
    if n == 0:
        m = shape_of(a)[-1]
        eye = np.broadcast_to(np.eye(m, dtype=dtype_of(a)), shape_of(a)).copy()
        if holds_tracer(a):  # keep it a value of the trace (vmap: one identity per example)
            return ew.add_p(ew.multiply_p(a, 0), eye)
        return eye
    if n < 0:
        a = inv(a)
        n = -n
    result = None
    square = a
    while n:
        if n & 1:
            result = square if result is None else matmul_p(result, square)
        n >>= 1
        if n:
            square = matmul_p(square, square)
    return result


def _chain_order(dims):
    """NumPy's dynamic programme for the cheapest multiplication order: ``s[i][j]`` is
    where to split the product of matrices ``i..j``."""
    count = len(dims) - 1
    cost = [[0] * count for _ in range(count)]
    split = [[0] * count for _ in range(count)]
    for length in range(1, count):
        for i in range(count - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def multi_dot(arrays, *, out=None):
    """The product of two or more matrices in the cheapest order, as
    ``np.linalg.multi_dot``: the first array may be 1-D (a row), the last 1-D (a column)."""
    if out is not None:
        raise TypeError("multi_dot: out= is not supported (diffkit functions return new "
                        "arrays)")
    arrays = [as_array(x) for x in arrays]
    if len(arrays) < 2:
        raise ValueError("Expecting at least two arrays.")
    if len(arrays) == 2:
        return matmul(arrays[0], arrays[1])
    first, last = shape_of(arrays[0]), shape_of(arrays[-1])
    if len(first) == 1:
        arrays[0] = sh.reshape(arrays[0], (1, first[0]))
    if len(last) == 1:
        arrays[-1] = sh.reshape(arrays[-1], (last[0], 1))
    for x in arrays:
        if len(shape_of(x)) != 2:
            raise LinAlgError(f"{len(shape_of(x))}-dimensional array given. Array must be "
                              "two-dimensional")
    dims = [shape_of(x)[0] for x in arrays] + [shape_of(arrays[-1])[1]]
    for i in range(len(arrays) - 1):
        if shape_of(arrays[i])[1] != shape_of(arrays[i + 1])[0]:
            raise ValueError(f"multi_dot: shapes {shape_of(arrays[i])} and "
                             f"{shape_of(arrays[i + 1])} (arrays {i} and {i + 1}) not aligned")
    split = _chain_order(dims)

    def product(i, j):
        if i == j:
            return arrays[i]
        k = split[i][j]
        return matmul_p(product(i, k), product(k + 1, j))

    result = product(0, len(arrays) - 1)
    if len(first) == 1 and len(last) == 1:
        return sh.reshape(result, ())
    if len(first) == 1:
        return sh.reshape(result, shape_of(result)[1:])
    if len(last) == 1:
        return sh.reshape(result, shape_of(result)[:1])
    return result


def tensorsolve(a, b, axes=None):
    """The ``x`` with ``tensordot(a, x, axes=x.ndim) = b``, as ``np.linalg.tensorsolve``:
    ``a`` is reshaped to a square matrix and solved."""
    a, b = _common(a, b)
    an = len(shape_of(a))
    if axes is not None:
        order = list(range(an))
        for k in axes:
            order.remove(k)
            order.insert(an, k)
        a = sh.transpose(a, order)
    bn = len(shape_of(b))
    old = shape_of(a)[-(an - bn):]
    size = math.prod(old)
    if math.prod(shape_of(a)) != size ** 2:
        raise LinAlgError("Input arrays must satisfy the requirement "
                          "prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])")
    x = solve(sh.reshape(a, (size, size)), sh.reshape(b, (-1,)))
    return sh.reshape(x, old)


def tensorinv(a, ind=2):
    """The inverse of ``a`` for ``tensordot`` over ``ind`` axes, as
    ``np.linalg.tensorinv``: shape ``a.shape[ind:] + a.shape[:ind]``."""
    a = _inexact(a)
    if ind <= 0:
        raise ValueError("Invalid ind argument.")
    dims = shape_of(a)
    size = math.prod(dims[ind:])
    return sh.reshape(inv(sh.reshape(a, (size, -1))), dims[ind:] + dims[:ind])
