"""``diffkit.scipy.linalg``: SciPy's linear algebra, differentiable in every argument that
carries values.

Compositions of ``numpy.linalg``'s primitives (``diffkit/ops/decompositions.py``): ``solve``,
``inv``, ``det``, ``cholesky``, ``cho_factor``, ``cho_solve``, ``eigh``, ``eigvalsh``,
``svd``, ``qr``, ``lstsq``, ``pinv``, ``norm``, ``block_diag``, ``expm_frechet``, ``cosm``,
``sinm``, ``tanm``, ``fractional_matrix_power``. New
primitives (``diffkit/ops/scipy_linalg.py``): ``solve_triangular``, ``solve_sylvester``,
``expm``, ``logm``, ``sqrtm``, ``lu_factor`` (``lu_solve`` is a composition).

Conventions (beyond those of ``numpy.linalg``):

- Functions that SciPy computes from one triangle of ``a`` (``solve`` with
  ``assume_a='sym'/'her'/'pos'``, ``solve_triangular``, ``cho_solve``, ``cholesky``,
  ``eigh``) read the same triangle here. ``solve``/``solve_triangular``/``cho_solve``
  differentiate the function of that triangle exactly (the other triangle has derivative
  0), and so do ``eigh``/``eigvalsh`` (``lower``), ``cholesky`` and ``cho_factor``.
- Functions of symmetric (Hermitian) matrices: ``funm`` (Daleckii-Krein, every order,
  exact at repeated eigenvalues; ``diffkit/ops/matrix_functions.py``); ``cosm``, ``sinm``,
  ``tanm`` through ``expm``, ``fractional_matrix_power`` through ``expm``/``logm``.
- ``cho_factor`` returns ``(c, lower)`` with zeros in the unused triangle of ``c`` (SciPy
  leaves arbitrary values there); ``cho_solve((c, lower), b)`` reads only ``c``'s triangle
  and is differentiable in ``c`` as a triangular factor and in ``b``.
- ``eigh``, ``svd`` and ``qr`` vectors have derivatives only for gauge-invariant uses (see
  ``ops/spectral_ties.py``). ``qr(pivoting=True)``, generalized ``eigh`` (``b``) and
  ``subset_by_value`` raise ``NotImplementedError``.
- ``sqrtm``/``logm`` take the principal branch; their derivatives need ``a`` without
  eigenvalues on the closed negative real axis. ``disp`` and ``blocksize`` are accepted and
  ignored (SciPy deprecates them).
"""

import operator

import numpy as np
import scipy.linalg

from ..core.trace import Tracer, new_trace
from ..core.zeros import Zero, as_array, dtype_of, is_complex, shape_of
from ..interpreters.forward import JVPTrace, JVPTracer
from ..numpy._wrap import wrap_namespace as _wrap_namespace
from ..ops import complex as _cx
from ..ops import decompositions as _dec
from ..ops import elementwise as _ew
from ..ops import shape as _sh
from ..ops.matrix_functions import spectral_function_p
from ..ops.matrix_helpers import _H, _T, _common, _inexact
from ..ops.scipy_linalg import (
    expm_p,
    frechet_block,
    logm_p,
    lu_p,
    lu_pivots_p,
    permutation_matrix,
    pivots_to_permutation_p,
    solve_sylvester_p,
    solve_triangular_p,
    sqrtm_p,
)

__all__ = [
    "LinAlgError", "solve", "solve_triangular", "cho_factor", "cho_solve", "inv", "det",
    "cholesky", "eigh", "eigvalsh", "svd", "qr", "lstsq", "pinv", "norm", "block_diag",
    "solve_sylvester", "expm", "expm_frechet", "sqrtm", "logm", "lu_factor", "lu_solve",
    "funm", "cosm", "sinm", "tanm", "fractional_matrix_power",
]

LinAlgError = np.linalg.LinAlgError


def _square(a, message="expected square matrix"):
    s = shape_of(a)
    if len(s) < 2 or s[-1] != s[-2]:
        raise ValueError(message)


def _mask(n, lower, strict, dtype):
    ones = np.ones((n, n), dtype=np.empty((), dtype).real.dtype)
    return np.tril(ones, -1 if strict else 0) if lower else np.triu(ones, 1 if strict else 0)


def _triangle(a, lower, strict=False):
    return _ew.multiply(a, _mask(shape_of(a)[-1], lower, strict, dtype_of(a)))


def _from_triangle(a, lower, hermitian):
    """The symmetric (Hermitian) matrix that ``a``'s ``lower`` (else upper) triangle
    defines, as LAPACK's ``sy``/``he``/``po`` routines read it."""
    strict = _triangle(a, lower, strict=True)
    return _ew.add(_triangle(a, lower), _H(strict) if hermitian else _T(strict))


def _as_column(b, n, a_shape):
    """``b`` as a matrix ``(..., n, k)`` and whether it was a vector."""
    sb = shape_of(b)
    vector = len(sb) == 1
    if len(sb) == 0 or sb[-1 if vector else -2] != n:
        raise ValueError(f"shapes of a {a_shape} and b {sb} are incompatible")
    return (_sh.reshape(b, (n, 1)) if vector else b), vector


def _trans_code(trans):
    codes = {0: 0, 1: 1, 2: 2, "N": 0, "T": 1, "C": 2, "n": 0, "t": 1, "c": 2}
    try:
        return codes[trans]
    except (KeyError, TypeError):
        raise ValueError(f"trans must be 0, 1, 2, 'N', 'T' or 'C' (got {trans!r})") from None


# --- triangular and Cholesky solves --------------------------------------------------------


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     check_finite=True):
    """``x`` with ``op(a) x = b`` for triangular ``a`` (only the triangle ``lower`` names is
    read; with ``unit_diagonal`` its diagonal is taken as 1), ``op`` given by ``trans``
    (0/'N', 1/'T', 2/'C'), as ``scipy.linalg.solve_triangular``. Stacks ``(..., n, n)``
    broadcast as in SciPy."""
    a, b = _common(a, b)
    _square(a)
    n = shape_of(a)[-1]
    b, vector = _as_column(b, n, shape_of(a))
    stack = np.broadcast_shapes(shape_of(a)[:-2], shape_of(b)[:-2])
    a = _sh.broadcast_to(a, stack + (n, n))
    b = _sh.broadcast_to(b, stack + shape_of(b)[-2:])
    x = solve_triangular_p(a, b, lower=bool(lower), trans=_trans_code(trans),
                           unit_diagonal=bool(unit_diagonal))
    return _sh.reshape(x, shape_of(x)[:-1]) if vector else x


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """The Cholesky factor of a symmetric (Hermitian) positive-definite matrix: upper ``U``
    with ``a = U^H U``, or lower ``L`` with ``a = L L^H``, as ``scipy.linalg.cholesky``
    (reading ``a``'s upper, respectively lower, triangle)."""
    a = _inexact(a)
    _square(a, "Input array is expected to be square")
    return _dec.cholesky(a, upper=not lower)


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """``(c, lower)`` for ``cho_solve``, as ``scipy.linalg.cho_factor``; ``c`` holds the
    Cholesky factor in its ``lower`` (else upper) triangle and zeros in the other."""
    return cholesky(a, lower=lower), bool(lower)


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """``x`` with ``a x = b`` from ``(c, lower) = cho_factor(a)``, as
    ``scipy.linalg.cho_solve``: two triangular solves, differentiable in ``c`` (its triangle)
    and ``b``."""
    c, lower = c_and_lower
    c, b = _common(c, b)
    if lower:   # a = L L^H
        y = solve_triangular(c, b, lower=True)
        return solve_triangular(c, y, trans=2, lower=True)
    y = solve_triangular(c, b, trans=2, lower=False)   # a = U^H U
    return solve_triangular(c, y, lower=False)


# --- LU -------------------------------------------------------------------------------------


def lu_factor(a, overwrite_a=False, check_finite=True):
    """``(lu, piv)`` as ``scipy.linalg.lu_factor`` for a square matrix (stack): ``lu`` holds
    ``U`` and the strict lower part of ``L`` (unit diagonal), ``piv`` LAPACK's 0-based row
    interchanges. ``lu`` is differentiable (the pivoting is locally constant); ``piv`` is
    an integer array without derivative."""
    a = _inexact(a)
    _square(a, "expected square matrix")
    return lu_p(a), lu_pivots_p(a)


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """``x`` with ``op(a) x = b`` from ``(lu, piv) = lu_factor(a)``, as
    ``scipy.linalg.lu_solve`` (``trans`` 0, 1, 2): triangular solves and a permutation,
    differentiable in ``lu`` (as the packed factors) and ``b``."""
    lu, piv = lu_and_piv
    lu, b = _common(lu, b)
    _square(lu, "expected square matrix")
    trans = _trans_code(trans)
    n = shape_of(lu)[-1]
    b_mat, vector = _as_column(b, n, shape_of(lu))
    pm = permutation_matrix(pivots_to_permutation_p(as_array(piv)), dtype_of(lu))
    if trans == 0:   # a = P^T L U
        y = solve_triangular(lu, _dec.matmul(pm, b_mat), lower=True, unit_diagonal=True)
        x = solve_triangular(lu, y, lower=False)
    else:            # op(a) = op(U) op(L) P
        y = solve_triangular(lu, b_mat, trans=trans, lower=False)
        x = _dec.matmul(_T(pm), solve_triangular(lu, y, trans=trans, lower=True,
                                                 unit_diagonal=True))
    return _sh.reshape(x, shape_of(x)[:-1]) if vector else x


# --- general solves, inverse, determinant --------------------------------------------------

_STRUCTURES = {
    None: "gen", "gen": "gen", "general": "gen", "sym": "sym", "symmetric": "sym",
    "her": "her", "hermitian": "her", "pos": "pos", "positive definite": "pos",
    "diagonal": "diagonal", "upper triangular": "upper", "lower triangular": "lower",
}


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True,
          assume_a=None, transposed=False):
    """``x`` with ``a x = b`` (``a^T x = b`` with ``transposed``), as ``scipy.linalg.solve``.
    ``assume_a``: ``'gen'`` (also ``None``), ``'sym'``, ``'her'``, ``'pos'`` (these read the
    triangle ``lower`` names; ``'pos'`` solves through a Cholesky factor and raises
    ``LinAlgError`` when ``a`` is not positive definite), ``'diagonal'``, ``'upper
    triangular'``, ``'lower triangular'``."""
    structure = _STRUCTURES.get(assume_a) if isinstance(assume_a, (str, type(None))) else None
    if structure is None:
        raise ValueError(f"{assume_a} is not a recognized matrix structure")
    a, b = _common(a, b)
    _square(a, f"Input a needs to be a square matrix, got shape {shape_of(a)}")
    if transposed and is_complex(a):
        raise NotImplementedError("scipy.linalg.solve can currently not solve a^T x = b or "
                                  "a^H x = b for complex matrices.")
    n = shape_of(a)[-1]
    _as_column(b, n, shape_of(a))   # SciPy's shape check
    if structure in ("upper", "lower"):
        return solve_triangular(a, b, trans=1 if transposed else 0,
                                lower=structure == "lower")
    if structure == "pos":
        # cholesky reads the same triangle (a^T = a: transposed is real here)
        return cho_solve((_dec.cholesky(a, upper=not lower), lower), b)
    if structure == "diagonal":
        a = _ew.multiply(a, np.eye(n, dtype=np.empty((), dtype_of(a)).real.dtype))
    elif structure in ("sym", "her"):
        a = _from_triangle(a, lower, hermitian=structure == "her")
    if transposed:
        a = _T(a)
    return _dec.solve(a, b)


def inv(a, overwrite_a=False, check_finite=True, *, assume_a=None, lower=False):
    """The inverse of a square matrix (stack), as ``scipy.linalg.inv``; ``assume_a`` as in
    ``solve`` (``'pos'`` through a Cholesky factor)."""
    a = _inexact(a)
    _square(a, f"Expected square matrix, got a1.shape={shape_of(a)}")
    n = shape_of(a)[-1]
    eye = np.broadcast_to(np.eye(n, dtype=dtype_of(a)), shape_of(a))
    if assume_a not in (None, "gen", "general"):
        return solve(a, eye, lower=lower, assume_a=assume_a)
    return _dec.inv(a)


def det(a, overwrite_a=False, check_finite=True):
    """The determinant of a square matrix (stack), as ``scipy.linalg.det``."""
    a = _inexact(a)
    s = shape_of(a)
    if len(s) < 2 or s[-1] != s[-2]:
        raise ValueError(f"Last 2 dimensions of the array must be square but received "
                         f"shape {s}.")
    return _dec.det(a)


def lstsq(a, b, cond=None, overwrite_a=False, overwrite_b=False, check_finite=True,
          lapack_driver=None):
    """``(x, residues, rank, s)``, the least-squares solution, as ``scipy.linalg.lstsq``
    (differentiable for a constant rank; ``rank`` has no derivative)."""
    a, b = _common(a, b)
    if len(shape_of(a)) != 2:
        raise ValueError("Input array a should be 2D")
    m, n = shape_of(a)
    if shape_of(b)[0] != m:
        raise ValueError(f"Shape mismatch: a and b should have the same number of rows "
                         f"({m} != {shape_of(b)[0]}).")
    x, residues, rank, s = _dec.lstsq(a, b, rcond=cond)
    if len(shape_of(b)) == 1 and shape_of(residues) == (1,):
        residues = residues[0]   # SciPy: a scalar for a vector b
    return x, residues, rank, s


def pinv(a, *, atol=None, rtol=None, return_rank=False, check_finite=True):
    """The pseudo-inverse, as ``scipy.linalg.pinv``: singular values at most
    ``rtol * max(s)`` are dropped (``rtol`` defaults to ``max(m, n) * eps``). Derivative for
    a constant rank. An absolute ``atol > 0`` raises ``NotImplementedError``."""
    if atol is not None and atol != 0:
        raise NotImplementedError("pinv: an absolute tolerance atol is not supported")
    a = _inexact(a)
    m, n = shape_of(a)[-2:]
    if rtol is None:
        rtol = max(m, n) * np.finfo(np.empty((), dtype_of(a)).real.dtype).eps
    out = _dec.pinv(a, rcond=rtol)
    if return_rank:
        return out, _dec.matrix_rank(a, rtol=rtol)
    return out


def norm(a, ord=None, axis=None, keepdims=False, check_finite=True):
    """``numpy.linalg.norm`` (as ``scipy.linalg.norm``; derivative 0 at the zero vector)."""
    return _dec.norm(a, ord=ord, axis=axis, keepdims=keepdims)


# --- decompositions ------------------------------------------------------------------------


def eigh(a, b=None, *, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False,
         type=1, check_finite=True, subset_by_index=None, subset_by_value=None, driver=None):
    """Eigenvalues (ascending) and eigenvectors of a symmetric (Hermitian) matrix, read from
    its ``lower`` (else upper) triangle, as ``scipy.linalg.eigh``: ``w`` with
    ``eigvals_only``, else ``(w, v)``. ``subset_by_index=(lo, hi)`` keeps eigenvalues
    ``lo..hi`` (inclusive)."""
    if b is not None:
        raise NotImplementedError("eigh: the generalized problem (b) is not supported")
    if subset_by_value is not None:
        raise NotImplementedError("eigh: subset_by_value is not supported")
    a = _inexact(a)
    _square(a, "expected square matrix")
    w, v = _dec.eigh(a, UPLO="L" if lower else "U")
    if subset_by_index is not None:
        lo, hi = (operator.index(i) for i in subset_by_index)
        n = shape_of(a)[-1]
        if not 0 <= lo <= hi < n:
            raise ValueError("Requested eigenvalue indices are not valid. Valid range is "
                             f"[0, {n - 1}] and start <= end, but start={lo}, end={hi} is "
                             "given")
        w = w[..., lo:hi + 1]
        v = v[..., lo:hi + 1]
    return w if eigvals_only else (w, v)


def eigvalsh(a, b=None, *, lower=True, overwrite_a=False, overwrite_b=False, type=1,
             check_finite=True, subset_by_index=None, subset_by_value=None, driver=None):
    """The eigenvalues of a symmetric (Hermitian) matrix, as ``scipy.linalg.eigvalsh``."""
    return eigh(a, b, lower=lower, eigvals_only=True, subset_by_index=subset_by_index,
                subset_by_value=subset_by_value)


def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True,
        lapack_driver="gesdd"):
    """``(U, s, Vh)`` (or ``s`` without ``compute_uv``), as ``scipy.linalg.svd``."""
    if lapack_driver not in ("gesdd", "gesvd"):
        raise ValueError('lapack_driver must be "gesdd" or "gesvd", not '
                         f'"{lapack_driver}"')
    a = _inexact(a)
    if len(shape_of(a)) < 2:
        raise ValueError("expected matrix")
    if not compute_uv:
        return _dec.svdvals(a)
    return tuple(_dec.svd(a, full_matrices=full_matrices))


def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    """``(Q, R)`` as ``scipy.linalg.qr``: ``mode='full'`` (``Q`` is ``m x m``),
    ``'economic'`` (``m x k``), or ``'r'``, which returns the tuple ``(R,)`` with the full
    ``R`` (``m x n``)."""
    if mode not in ("full", "r", "economic", "raw"):
        raise ValueError("Mode argument should be one of ['full', 'r', 'economic', 'raw']")
    if mode == "raw":
        raise NotImplementedError("qr: mode='raw' (LAPACK's Householder form) is not "
                                  "supported")
    if pivoting:
        raise NotImplementedError("qr: pivoting is not supported")
    a = _inexact(a)
    if len(shape_of(a)) < 2:
        raise ValueError("expected a 2-D array")
    if mode == "economic":
        return tuple(_dec.qr(a, mode="reduced"))
    q, r = _dec.qr(a, mode="complete")
    return (r,) if mode == "r" else (q, r)


# --- block_diag ----------------------------------------------------------------------------


def block_diag(*arrs):
    """The block-diagonal matrix of the arguments (scalars and 1-D arrays as one row), as
    ``scipy.linalg.block_diag``; ``block_diag()`` is an empty ``(1, 0)`` array."""
    if not arrs:
        return np.empty((1, 0))
    blocks = []
    for x in arrs:
        x = as_array(x)
        s = shape_of(x)
        blocks.append(x if len(s) == 2 else _sh.reshape(x, (1, -1) if len(s) == 1 else (1, 1))
                      if len(s) < 2 else x)
    bad = [i for i, x in enumerate(blocks) if len(shape_of(x)) > 2]
    if bad:
        raise ValueError(f"arguments in the following positions have dimension greater than "
                         f"2: {bad}")
    dtype = np.result_type(*[dtype_of(x) for x in blocks])
    width = sum(shape_of(x)[1] for x in blocks)
    rows, col = [], 0
    for x in blocks:
        r, c = shape_of(x)
        parts = []
        if col:
            parts.append(np.zeros((r, col), dtype))
        parts.append(_ew.astype(x, dtype) if dtype_of(x) != dtype else x)
        if width - col - c:
            parts.append(np.zeros((r, width - col - c), dtype))
        rows.append(parts[0] if len(parts) == 1 else _sh.concatenate(parts, axis=1))
        col += c
    return rows[0] if len(rows) == 1 else _sh.concatenate(rows, axis=0)


# --- Sylvester equation and matrix functions -----------------------------------------------


def solve_sylvester(a, b, q):
    """``x`` with ``a x + x b = q``, as ``scipy.linalg.solve_sylvester`` (Bartels-Stewart)."""
    a, b, q = _common(a, b, q)
    _square(a, "expected square matrix a")
    _square(b, "expected square matrix b")
    m, n = shape_of(a)[-1], shape_of(b)[-1]
    if shape_of(q)[-2:] != (m, n):
        raise ValueError(f"shapes {shape_of(a)}, {shape_of(b)} and {shape_of(q)} of a, b "
                         "and q are incompatible")
    stack = np.broadcast_shapes(shape_of(a)[:-2], shape_of(b)[:-2], shape_of(q)[:-2])
    return solve_sylvester_p(_sh.broadcast_to(a, stack + (m, m)),
                             _sh.broadcast_to(b, stack + (n, n)),
                             _sh.broadcast_to(q, stack + (m, n)))


def _matrix_argument(A):
    A = _inexact(A)
    if len(shape_of(A)) < 2:
        raise LinAlgError("The input array must be at least two-dimensional")
    if shape_of(A)[-1] != shape_of(A)[-2]:
        raise ValueError("Last 2 dimensions of the array must be square")
    return A


def expm(A):
    """The matrix exponential (of a stack), as ``scipy.linalg.expm``. Derivative: the
    Fréchet derivative (``expm_frechet``), at every order."""
    return expm_p(_matrix_argument(A))


def expm_frechet(A, E, method=None, compute_expm=True, check_finite=True):
    """``(expm(A), L(A, E))``, or ``L(A, E)`` without ``compute_expm``: the Fréchet
    derivative of ``expm`` at ``A`` in direction ``E``, as ``scipy.linalg.expm_frechet``,
    from ``expm([[A, E], [0, A]])`` (so it is differentiable in both arguments)."""
    if method not in (None, "SPS", "blockEnlarge"):
        raise ValueError(f"Unknown implementation {method}")
    A, E = _common(A, E)
    if len(shape_of(A)) != 2 or shape_of(A)[0] != shape_of(A)[1]:
        raise ValueError("expected A to be a square matrix")
    if len(shape_of(E)) != 2 or shape_of(E)[0] != shape_of(E)[1]:
        raise ValueError("expected E to be a square matrix")
    if shape_of(A) != shape_of(E):
        raise ValueError("expected A and E to be the same shape")
    expm_a, frechet = frechet_block(expm_p, A, E)
    return (expm_a, frechet) if compute_expm else frechet


def sqrtm(A, disp=None, blocksize=None):
    """The principal square root (of a stack), as ``scipy.linalg.sqrtm``. Derivative: the
    Sylvester equation ``X dX + dX X = dA``."""
    return sqrtm_p(_matrix_argument(A))


def logm(A, disp=None):
    """The principal logarithm (of a stack), as ``scipy.linalg.logm``. Derivative: the
    Fréchet derivative from ``logm([[A, E], [0, A]])``."""
    return logm_p(_matrix_argument(A))


# --- functions of symmetric (Hermitian) matrices -------------------------------------------


class _ScalarDerivatives:
    """``f^(m)(x)`` of a vectorized ``f``, by ``m`` nested forward-mode derivatives (so
    the derivatives of ``funm`` use diffkit's own derivative of ``f``, at every order)."""

    __slots__ = ("func",)

    def __init__(self, func):
        self.func = func

    def __call__(self, order, x):
        return np.asarray(self._nth(order, np.asarray(x)))

    def _nth(self, order, x):
        if order == 0:
            return self.func(x)
        with new_trace(JVPTrace) as trace:
            dual = JVPTracer(trace, x, np.ones(shape_of(x), dtype_of(x)))
            out = self._nth(order - 1, dual)
            tangent = out.tangent if type(out) is JVPTracer and out._trace is trace else None
        if tangent is None or type(tangent) is Zero:
            return np.zeros(shape_of(x), np.result_type(dtype_of(x), np.float64))
        return tangent

    def __repr__(self):
        return f"derivatives of {getattr(self.func, '__name__', self.func)!r}"


def funm(A, func, disp=True):
    """``func(A)`` for a vectorized scalar function ``func``, as ``scipy.linalg.funm``
    (``(F, errest)`` with ``disp=False``). Plain inputs go to SciPy (any square matrix).
    Traced inputs must be symmetric (Hermitian): ``F = V diag(func(w)) V^H`` from ``eigh``,
    differentiable at every order by the Daleckii-Krein formula with divided differences
    of ``func`` (``func^(m)`` at repeated eigenvalues, from diffkit's derivatives of
    ``func``), exact at ties. For a general matrix use ``expm``/``logm``/``sqrtm`` or
    ``cosm``/``sinm``/``tanm``. ``errest`` of a traced input is ``eps * n`` (the accuracy
    of the symmetric eigendecomposition; SciPy's estimate is for Schur-Parlett)."""
    A = _matrix_argument(A)
    if not isinstance(A, Tracer):
        return scipy.linalg.funm(A, func, disp=disp)
    out = spectral_function_p(A, derivative=_ScalarDerivatives(func))
    if disp:
        return out
    n = shape_of(A)[-1]
    return out, float(np.finfo(np.empty((), dtype_of(A)).real.dtype).eps * n)


def _expm_of_i(A):
    """``(expm(iA), expm(-iA))``."""
    iA = _ew.multiply(_ew.astype(A, np.result_type(dtype_of(A), np.complex64)), 1j)
    return expm_p(iA), expm_p(_ew.negative(iA))


def cosm(A):
    """The matrix cosine, as ``scipy.linalg.cosm``: ``(expm(iA) + expm(-iA)) / 2`` (the
    real part of ``expm(iA)`` for real ``A``), so every derivative is ``expm``'s (exact
    at repeated eigenvalues, any square matrix)."""
    A = _matrix_argument(A)
    if not isinstance(A, Tracer):
        return scipy.linalg.cosm(A)
    plus, minus = _expm_of_i(A)
    if not is_complex(A):
        return _cx.real(plus)
    return _ew.multiply(_ew.add(plus, minus), 0.5)


def sinm(A):
    """The matrix sine, as ``scipy.linalg.sinm``: ``(expm(iA) - expm(-iA)) / 2i`` (the
    imaginary part of ``expm(iA)`` for real ``A``), differentiable through ``expm``."""
    A = _matrix_argument(A)
    if not isinstance(A, Tracer):
        return scipy.linalg.sinm(A)
    plus, minus = _expm_of_i(A)
    if not is_complex(A):
        return _cx.imag(plus)
    return _ew.multiply(_ew.subtract(plus, minus), -0.5j)


def tanm(A):
    """The matrix tangent, as ``scipy.linalg.tanm``: ``solve(cosm(A), sinm(A))``."""
    A = _matrix_argument(A)
    if not isinstance(A, Tracer):
        return scipy.linalg.tanm(A)
    return _dec.solve(cosm(A), sinm(A))


def fractional_matrix_power(A, t):
    """``A`` to the real power ``t``, as ``scipy.linalg.fractional_matrix_power``: an
    integer ``t`` by ``matrix_power``, otherwise ``expm(t * logm(A))`` (principal branch;
    ``A`` without eigenvalues on the closed negative real axis), differentiable in ``A``
    (and in a traced ``t``) through ``expm`` and ``logm``, exact at repeated eigenvalues.
    A real result is returned as a real array (SciPy may give it an imaginary part of
    rounding size)."""
    A = _matrix_argument(A)
    if not isinstance(A, Tracer) and not isinstance(t, Tracer):
        out = scipy.linalg.fractional_matrix_power(A, t)
        if np.isrealobj(A) and np.iscomplexobj(out) and np.all(
                np.abs(np.imag(out)) <= 1e3 * np.finfo(float).eps * np.max(np.abs(out))):
            out = np.real(out)   # a real matrix's real power is real (traced too)
        return out
    if not isinstance(t, Tracer) and float(t) == int(t):
        return _dec.matrix_power(A, int(t))
    return expm_p(_ew.multiply(logm_p(A), t))


# SciPy's signatures, docstrings and array-like inputs (diffkit/numpy/_wrap.py)
_wrap_namespace(globals(), scipy.linalg, __name__, __all__)
