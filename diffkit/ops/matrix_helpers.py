"""Shared helpers of the ``numpy.linalg`` families: stacked matrix algebra written with
diffkit's operations (``_T``, ``_H``, ``_mm``, ``_diag`` ...), argument checks and
conversions (``_matrix_stack``, ``_common``, ``_inexact``), and the batching rule of one-argument
primitives (``_single_batch``: the batch axis is one more stack axis).

Every function here works on stacks of matrices ``(..., m, n)``.
"""

import numpy as np

from ..core.zeros import as_array, dtype_of, is_complex, shape_of
from . import complex as cx
from . import elementwise as ew
from . import shape as sh
from .linalg import einsum, matmul_p

__all__ = ["LinAlgError"]


LinAlgError = np.linalg.LinAlgError


# === helpers: stacked matrix algebra in diffkit operations ================================


def _scalar_if_plain(x):
    """A plain 0-d array as a NumPy scalar, as NumPy's reductions return it."""
    return x[()] if type(x) is np.ndarray and x.ndim == 0 else x


def _T(x):
    """The transpose of the last two axes (of every matrix in a stack)."""
    return sh.swapaxes(x, -1, -2)




def _real(x):
    """The real part (the value itself for real ``x``)."""
    if not is_complex(x):
        return x
    real = getattr(cx, "real", None)
    if real is not None:
        return real(x)
    return ew.astype(x, np.empty((), dtype_of(x)).real.dtype)  # keeps the real part


def _conj(x):
    return ew.conj_p(x) if is_complex(x) else x


def _H(x):
    """The conjugate transpose of the last two axes."""
    return _conj(_T(x))


def _cast(x, dtype):
    return ew.astype(x, dtype)


def _diag(x):
    """The diagonals of a stack of square matrices: ``(..., n, n) -> (..., n)``."""
    return einsum("...ii->...i", x)


def _trace(x):
    return einsum("...ii->...", x)


def _diag_embed(v):
    """Diagonal matrices from a stack of vectors: ``(..., n) -> (..., n, n)``."""
    n = shape_of(v)[-1]
    return ew.multiply_p(sh.expand_dims(v, -2), np.eye(n, dtype=dtype_of(v)))


def _sym(x):
    """``(x + x^H) / 2``: the (Hermitian) symmetric part."""
    return ew.multiply_p(ew.add_p(x, _H(x)), 0.5)


def _mm(a, b):
    return matmul_p(a, b)


def _safe_reciprocal(x):
    """``1 / x`` where ``x != 0``, else 0, without dividing by zero (also in derivatives)."""
    ok = ew.not_equal_p(x, 0)
    return ew.where_p(ok, ew.divide_p(1.0, ew.where_p(ok, x, 1.0)), 0.0)


def _imaginary_part_times_i(z):
    """``i Im(z)`` for complex ``z`` (``None`` for real ``z``: it would be zero)."""
    if not is_complex(z):
        return None
    return ew.multiply_p(ew.subtract_p(z, ew.conj_p(z)), 0.5)


def _nan_where(flag, x):
    """``x``, NaN in every matrix of the stack where ``flag`` (``(..., 1, 1)``) is true."""
    return ew.where_p(flag, np.nan, x)


def _mask(n, k, dtype):
    """A constant ``(n, n)`` mask of the entries on or below diagonal ``k`` (as np.tril)."""
    return np.tril(np.ones((n, n), dtype=dtype), k)


def _single_batch(prim):
    """Batching rule of a one-argument primitive: the batch axis is one more stack axis."""
    if prim.multiple_results:
        def batch(axis_size, values, batch_axes, **params):
            out = prim(values[0], **params)
            return out, (0,) * len(out)
    else:
        def batch(axis_size, values, batch_axes, **params):
            return prim(values[0], **params), 0
    return batch


def _inexact(x):
    """``x``, converted to float64 when it is an integer or boolean array (as NumPy does)."""
    x = as_array(x)
    if dtype_of(x).kind not in "fc":
        return ew.astype(x, np.float64)
    return x


def _common(*xs):
    """The arrays converted to their common floating-point (or complex) dtype."""
    xs = [as_array(x) for x in xs]
    dtype = np.result_type(*[dtype_of(x) for x in xs])
    if dtype.kind not in "fc":
        dtype = np.dtype(np.float64)
    return [x if dtype_of(x) == dtype else ew.astype(x, dtype) for x in xs]


def _assert_stacked_2d(*arrays):
    for a in arrays:
        if len(shape_of(a)) < 2:
            raise LinAlgError(f"{len(shape_of(a))}-dimensional array given. Array must be at "
                              "least two-dimensional")


def _assert_stacked_square(*arrays):
    for a in arrays:
        m, n = shape_of(a)[-2:]
        if m != n:
            raise LinAlgError(f"Last 2 dimensions of the array must be square (got shape "
                              f"{shape_of(a)})")


def _matrix_stack(a):
    """``a`` as a stack of matrices ``(..., m, n)``: inexact (integers and booleans become
    float64, as NumPy computes them) and at least 2-D (NumPy's ``LinAlgError`` otherwise)."""
    a = _inexact(a)
    _assert_stacked_2d(a)
    return a


def _square_stack(a):
    """``a`` as a stack of square matrices ``(..., n, n)`` (see ``_matrix_stack``)."""
    a = _matrix_stack(a)
    _assert_stacked_square(a)
    return a


def _real_dtype(x):
    return np.empty((), dtype_of(x)).real.dtype
