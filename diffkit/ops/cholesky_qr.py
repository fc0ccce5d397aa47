"""``cholesky`` and ``qr``, differentiable: primitives ``cholesky_p`` and ``qr_p`` (two
outputs), each with its JVP, VJP and batching rule below it.

Conventions: ``cholesky`` reads one triangle of its input, as NumPy, and is differentiated
as a function of the Hermitian matrix that triangle defines (``triangles.py``), so the
entries not read have derivative 0. The extra columns of ``Q`` (``qr(mode='complete')``) of
a non-square matrix span the orthogonal complement, which is defined but whose basis is
not: their derivative moves them with the complement (it is exact for functions of the
projector ``Q2 @ Q2.T``).
"""

from collections import namedtuple

import numpy as np

from ..core.concrete import holds_tracer
from ..core.primitive import RAISES, Primitive
from ..core.zeros import Zero, dtype_of, is_complex, shape_of
from . import elementwise as ew
from . import shape as sh
from . import sparsity_rules as sr
from .indexing import getitem
from .matrix_helpers import (
    _H,
    _T,
    _cast,
    _conj,
    _diag,
    _diag_embed,
    _imaginary_part_times_i,
    _mask,
    _matrix_stack,
    _mm,
    _real,
    _real_dtype,
    _single_batch,
    _square_stack,
)
from .solves import solve_p
from .triangles import hermitian_from_triangle, hermitian_from_triangle_adjoint

__all__ = ["cholesky", "qr", "QRResult"]


QRResult = namedtuple("QRResult", ["Q", "R"])
def _solve_right(x, r):
    """``x @ inv(r)`` for stacks, as a solve."""
    return _T(solve_p(_T(r), _T(x)))


# === cholesky =============================================================================


def _phi(x):
    """The lower triangle of ``x`` with its diagonal halved."""
    n = shape_of(x)[-1]
    return ew.multiply_p(x, (_mask(n, 0, np.float64) - 0.5 * np.eye(n)).astype(_real_dtype(x)))


def _cholesky_jvp(primals, tangents, upper):
    (a,), (ta,) = primals, tangents
    out = cholesky_p(a, upper=upper)
    lower = _H(out) if upper else out
    # dL = L Phi(L^-1 dH L^-H), dH the perturbation of the Hermitian matrix actually read
    dh = hermitian_from_triangle(ta, lower=not upper)
    x = solve_p(lower, _H(solve_p(lower, dh)))
    d_lower = _mm(lower, _phi(x))
    return out, _H(d_lower) if upper else d_lower


def _cholesky_vjp(ct, out, a, upper):
    lower = _H(out) if upper else out
    if upper:   # out = L^H, so the cotangent of L is ct^H
        ct = _H(ct)
    # the adjoint of dH -> dL is L^-T Phi(L^T Lbar) conj(L)^-1; then that of the triangle
    y = solve_p(_T(lower), _phi(_mm(_T(lower), ct)))
    return hermitian_from_triangle_adjoint(_T(solve_p(_H(lower), _T(y))), lower=not upper)


def _cholesky_impl(a, upper):
    return np.linalg.cholesky(a, upper=upper)


cholesky_p = Primitive("cholesky", _cholesky_impl, _cholesky_jvp, (_cholesky_vjp,),
                       vjp_ignores=(0,), traits=RAISES)
cholesky_p.batch = _single_batch(cholesky_p)


def cholesky(a, /, *, upper=False):
    """The Cholesky factor of a (stack of) symmetric (Hermitian) positive-definite matrices:
    lower triangular ``L`` with ``a = L @ L^H``, or upper ``U = L^H`` with ``upper=True``,
    as ``np.linalg.cholesky``. Like NumPy, only the lower (``upper=True``: the upper)
    triangle of ``a`` and the real part of its diagonal are read; the derivative is that of
    this function of ``a``, so the entries not read have derivative 0."""
    return cholesky_p(_square_stack(a), upper=bool(upper))


# === qr ===================================================================================
# qr_p(a, complete): a (..., m, n) with m >= n (the wrapper reduces the wide case to a square
# one). Outputs Q (..., m, n) and R (..., n, n), or with complete=True Q (..., m, m) and
# R (..., m, n).


def _qr_impl(a, complete):
    q, r = np.linalg.qr(a, mode="complete" if complete else "reduced")
    return q, r


def _tril_strict(x):
    n = shape_of(x)[-1]
    return ew.multiply_p(x, _mask(n, -1, _real_dtype(x)))


def _qr_split(q, r, m, n, complete):
    """The leading n columns of Q and rows of R, and the extra columns of Q (or None)."""
    if not (complete and m > n):
        return q, r, None
    return (getitem(q, (Ellipsis, slice(None), slice(0, n))),
            getitem(r, (Ellipsis, slice(0, n), slice(None))),
            getitem(q, (Ellipsis, slice(None), slice(n, None))))


def _qr_jvp(primals, tangents, complete):
    (a,), (ta,) = primals, tangents
    q, r = qr_p(a, complete=complete)
    m, n = shape_of(a)[-2:]
    q1, r1, q2 = _qr_split(q, r, m, n, complete)
    ta = _cast(ta, dtype_of(q))
    da_rinv = _solve_right(ta, r1)                  # dA R^-1
    c = _mm(_H(q1), da_rinv)                        # C = Q^H dA R^-1 = Q^H dQ + dR R^-1
    low = _tril_strict(c)
    omega = ew.subtract_p(low, _H(low))               # Q^H dQ: skew-Hermitian, from C's lower
    phase = _imaginary_part_times_i(_diag(c))       # part; its diagonal is i Im(diag C) (the
    if phase is not None:                           # diagonal of R stays real)
        omega = ew.add_p(omega, _diag_embed(phase))
    upper = ew.subtract_p(c, omega)                   # dR R^-1, upper triangular
    dr = _mm(upper, r1)
    dq = ew.subtract_p(da_rinv, _mm(q1, upper))
    if q2 is not None:  # the complement moves with span Q: dQ2 = -Q1 dQ1^H Q2
        dq = sh.concatenate([dq, ew.negative_p(_mm(q1, _mm(_H(dq), q2)))], axis=-1)
        dr = sh.concatenate([dr, np.zeros(shape_of(dr)[:-2] + (m - n, n), dtype_of(dr))],
                            axis=-2)
    return (q, r), (dq, dr)


def _qr_vjp(cts, out, a, complete):
    q_bar, r_bar = cts
    q, r = out
    m, n = shape_of(a)[-2:]
    q1, r1, q2 = _qr_split(q, r, m, n, complete)
    if type(q_bar) is not Zero and q2 is not None:
        q2_bar = getitem(q_bar, (Ellipsis, slice(None), slice(n, None)))
        q_bar = ew.subtract_p(getitem(q_bar, (Ellipsis, slice(None), slice(0, n))),
                            _conj(_mm(q2, _mm(_T(q2_bar), q1))))
    if type(r_bar) is not Zero and q2 is not None:
        r_bar = getitem(r_bar, (Ellipsis, slice(0, n), slice(None)))
    # M = Rbar R^T - Q^T Qbar pairs with X = dR R^-1; its adjoint through X = C - Omega(C)
    # is N = triu(M) + strict lower part of M^H, with the imaginary diagonal dropped
    parts = []
    if type(r_bar) is not Zero:
        parts.append(_mm(_cast(r_bar, dtype_of(r)), _T(r1)))
    if type(q_bar) is not Zero:
        parts.append(ew.negative_p(_mm(_T(q1), _cast(q_bar, dtype_of(q)))))
    mm = parts[0] if len(parts) == 1 else ew.add_p(parts[0], parts[1])
    nn = ew.add_p(ew.multiply_p(mm, _mask(n, 0, _real_dtype(mm)).T), _tril_strict(_H(mm)))
    phase = _imaginary_part_times_i(_diag(mm))
    if phase is not None:
        nn = ew.subtract_p(nn, _diag_embed(phase))
    g = _mm(_conj(q1), nn)
    if type(q_bar) is not Zero:
        g = ew.add_p(g, q_bar)
    g = _T(solve_p(r1, _T(g)))                    # (Qbar + conj(Q) N) R^-T
    return g if is_complex(a) else _real(g)


qr_p = Primitive("qr", _qr_impl, _qr_jvp, (_qr_vjp,), multiple_results=True,
                 vjp_ignores=(0,))
qr_p.batch = _single_batch(qr_p)


def qr(a, mode="reduced"):
    """The QR decomposition, as ``np.linalg.qr``: ``mode`` 'reduced' (``QRResult(Q, R)``
    with ``Q`` of shape ``(..., m, k)``, k = min(m, n)), 'complete' (``Q`` square), 'r' (``R``
    only) or 'raw' (LAPACK's reflectors; no derivative). Differentiable where the leading
    ``k`` columns of ``a`` are linearly independent. The extra columns of a complete ``Q``
    (m > n) follow the orthogonal complement of the others (see the module docstring)."""
    if mode not in ("reduced", "complete", "r", "raw"):
        raise ValueError(f"Unrecognized mode '{mode}'")
    a = _matrix_stack(a)
    if mode == "raw":
        if holds_tracer(a):
            raise ValueError("qr(mode='raw') returns LAPACK's Householder reflectors, which "
                             "have no derivative here; use mode='reduced' or 'complete'")
        return np.linalg.qr(a, mode="raw")
    m, n = shape_of(a)[-2:]
    if m >= n:
        q, r = qr_p(a, complete=(mode == "complete" and m > n))
    else:
        # wide: a = [X Y] with X square, so Q is X's and R = [R_X, Q^T Y]
        x = getitem(a, (Ellipsis, slice(None), slice(0, m)))
        y = getitem(a, (Ellipsis, slice(None), slice(m, None)))
        q, r_x = qr_p(x, complete=False)
        r = sh.concatenate([r_x, _mm(_H(q), y)], axis=-1)
    if mode == "r":
        return r
    return QRResult(q, r)

# Sparsity detection: each factor of a matrix depends on the whole matrix (per stack index).
cholesky_p.sparsity = qr_p.sparsity = sr.matrix_stack_sparsity()
