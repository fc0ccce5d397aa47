"""The pseudo-inverse, least squares and the rank: ``pinv``, ``lstsq``, ``matrix_rank``.

Primitives: ``pinv_p`` (with its JVP, VJP and batching rule below it) and
``matrix_rank_p`` (an integer, no derivative). ``lstsq`` is a composition.

Conventions: ``pinv``/``lstsq`` have the derivative for a constant rank (Golub and
Pereyra's formula); ``pinv(hermitian=True)`` is differentiated as NumPy computes it, as a
function of the Hermitian matrix that one triangle defines (``triangles.py``).
"""

import numpy as np

from ..core.concrete import holds_tracer
from ..core.primitive import RAISES, Primitive
from ..core.zeros import as_array, dtype_of, is_complex, shape_of
from . import elementwise as ew
from . import reductions as rd
from . import shape as sh
from . import sparsity_rules as sr
from .linalg import matmul
from .matrix_helpers import (
    _H,
    _T,
    LinAlgError,
    _common,
    _conj,
    _inexact,
    _matrix_stack,
    _mm,
    _real,
    _real_dtype,
    _single_batch,
)
from .svd import svd
from .triangles import hermitian_from_triangle, hermitian_from_triangle_adjoint

__all__ = ["pinv", "lstsq", "matrix_rank"]


# === pinv =================================================================================


def _pinv_impl(a, rcond, hermitian):
    return np.linalg.pinv(a, rcond=rcond, hermitian=hermitian)


def _pinv_jvp(primals, tangents, rcond, hermitian):
    (a,), (ta,) = primals, tangents
    x = pinv_p(a, rcond=rcond, hermitian=hermitian)
    if hermitian:   # NumPy reads the lower triangle (through eigh): pinv of E(a)
        a, ta = hermitian_from_triangle(a), hermitian_from_triangle(ta)
    # Golub & Pereyra: -X dA X + X X^H dA^H (I - A X) + (I - X A) dA^H X^H X
    dah = _H(ta)
    first = ew.negative_p(_mm(_mm(x, ta), x))
    second = _mm(_mm(x, _H(x)), dah)
    second = ew.subtract_p(second, _mm(_mm(second, a), x))
    third = _mm(dah, _mm(_H(x), x))
    third = ew.subtract_p(third, _mm(x, _mm(a, third)))
    return x, ew.add_p(first, ew.add_p(second, third))


def _pinv_vjp(ct, x, a, rcond, hermitian):
    # -X^T G X^T + conj((I - A X) G^T X X^H) + conj(X^H X G^T (I - X A)), the transpose
    # of the JVP under Re(sum(ct * t))
    if hermitian:
        a = hermitian_from_triangle(a)
    xt = _T(x)
    g = ew.negative_p(_mm(_mm(xt, ct), xt))
    cth = _H(ct)
    second = _mm(cth, _mm(_conj(x), xt))
    second = ew.subtract_p(second, _mm(_conj(a), _mm(_conj(x), second)))
    third = _mm(_mm(xt, _conj(x)), cth)
    third = ew.subtract_p(third, _mm(_mm(third, _conj(x)), _conj(a)))
    g = ew.add_p(g, ew.add_p(second, third))
    return hermitian_from_triangle_adjoint(g, lower=True) if hermitian else g


pinv_p = Primitive("pinv", _pinv_impl, _pinv_jvp, (_pinv_vjp,), traits=RAISES)
pinv_p.batch = _single_batch(pinv_p)

_NO_VALUE = object()


def pinv(a, rcond=None, hermitian=False, *, rtol=_NO_VALUE):
    """The Moore-Penrose pseudo-inverse, as ``np.linalg.pinv``: singular values at most
    ``rcond`` (or ``rtol``) times the largest are dropped (default 1e-15; ``rtol=None``:
    ``max(m, n) * eps``). Differentiable where the rank (the number of kept singular values)
    is locally constant."""
    a = _matrix_stack(a)
    if rcond is None:
        if rtol is _NO_VALUE:
            rcond = 1e-15
        elif rtol is None:
            rcond = max(shape_of(a)[-2:]) * np.finfo(dtype_of(a)).eps
        else:
            rcond = rtol
    elif rtol is not _NO_VALUE:
        raise ValueError("`rtol` and `rcond` can't be both set.")
    rcond = np.asarray(rcond)
    return pinv_p(a, rcond=float(rcond) if rcond.ndim == 0 else rcond,
                  hermitian=bool(hermitian))


# === lstsq ================================================================================


def lstsq(a, b, rcond=None):
    """Least-squares solution of ``a @ x = b``, as ``np.linalg.lstsq``: the tuple
    ``(x, residuals, rank, s)``. ``x = pinv(a, rcond) @ b`` is differentiable where the rank
    is constant, and so are the residuals (sums of squares of ``b - a @ x`` per column,
    empty when the rank is below n or m <= n) and the singular values ``s``; ``rank`` is an
    integer. ``rcond`` defaults to ``max(m, n) * eps``."""
    a, b = _common(a, b)
    vector = len(shape_of(b)) == 1
    if len(shape_of(a)) != 2 or len(shape_of(b)) not in (1, 2):
        raise LinAlgError(f"{len(shape_of(a)) if len(shape_of(a)) != 2 else len(shape_of(b))}"
                          "-dimensional array given. Array must be two-dimensional")
    m, n = shape_of(a)
    if shape_of(b)[0] != m:
        raise LinAlgError("Incompatible dimensions")
    real_dtype = _real_dtype(a)
    eps = np.finfo(real_dtype).eps
    if rcond is None:
        rcond = eps * max(m, n)
    elif rcond < 0:
        rcond = eps
    x = matmul(pinv_p(a, rcond=float(rcond), hermitian=False), b)
    s = svd(a, compute_uv=False)
    rank = matrix_rank_p(a, np.asarray(rcond, real_dtype), mode="rtol", hermitian=False)
    if not holds_tracer(rank):
        rank = int(rank)
    known = rank if isinstance(rank, int) else None
    if m > n and (known is None or known == n):
        r = ew.subtract_p(b, matmul(a, x))
        squares = _real(ew.multiply_p(_conj(r), r)) if is_complex(r) else ew.square_p(r)
        residuals = rd.sum(squares, axis=0)
        if vector:
            residuals = sh.reshape(residuals, (1,))
    else:
        residuals = np.array([], real_dtype)
    return x, residuals, rank, s


# === matrix_rank (no derivative) ===========================================================


def _matrix_rank_impl(a, *threshold, mode, hermitian):
    if mode == "tol":
        return np.asarray(np.linalg.matrix_rank(a, tol=threshold[0], hermitian=hermitian))
    if mode == "rtol":
        return np.asarray(np.linalg.matrix_rank(a, rtol=threshold[0], hermitian=hermitian))
    return np.asarray(np.linalg.matrix_rank(a, hermitian=hermitian))


def _matrix_rank_batch(axis_size, values, batch_axes, mode, hermitian):
    a, *threshold = values
    a_axis, *t_axes = batch_axes
    if not threshold:
        return matrix_rank_p(a, mode=mode, hermitian=hermitian), 0
    (t,), (t_axis,) = threshold, t_axes
    # stack shapes of one example, padded to a common rank after the batch axis
    a_stack = shape_of(a)[(a_axis is not None):-2]
    t_shape = shape_of(t)[(t_axis is not None):]
    rank = max(len(a_stack), len(t_shape))
    if a_axis is not None:
        dims = shape_of(a)
        a = sh.reshape(a, dims[:1] + (1,) * (rank - len(a_stack)) + dims[1:])
    else:
        a = sh.reshape(a, (1,) * (1 + rank - len(a_stack)) + shape_of(a))
    if t_axis is not None:
        dims = shape_of(t)
        t = sh.reshape(t, dims[:1] + (1,) * (rank - len(t_shape)) + dims[1:])
    return matrix_rank_p(a, t, mode=mode, hermitian=hermitian), 0


matrix_rank_p = Primitive("matrix_rank", _matrix_rank_impl, batch=_matrix_rank_batch,
                          nondiff=True)


def matrix_rank(A, tol=None, hermitian=False, *, rtol=None):
    """The rank (number of singular values above a threshold), as
    ``np.linalg.matrix_rank``: an integer (an integer array for a stack). No derivative."""
    A = _inexact(A)
    if not holds_tracer(A) and not holds_tracer(tol) and not holds_tracer(rtol):
        return np.linalg.matrix_rank(A, tol=tol, hermitian=hermitian, rtol=rtol)
    if len(shape_of(A)) < 2:
        return ew.astype(ew.greater_p(rd.max(ew.abs_p(A)) if shape_of(A) != (0,) else 0.0, 0),
                         np.int64)
    if tol is not None and rtol is not None:
        raise ValueError("`tol` and `rtol` can't be both set.")
    if tol is not None:
        return matrix_rank_p(A, as_array(tol), mode="tol", hermitian=bool(hermitian))
    if rtol is not None:
        return matrix_rank_p(A, as_array(rtol), mode="rtol", hermitian=bool(hermitian))
    return matrix_rank_p(A, mode="default", hermitian=bool(hermitian))

# Sparsity detection: the pseudo-inverse depends on the whole matrix (per stack index).
pinv_p.sparsity = sr.matrix_stack_sparsity()
