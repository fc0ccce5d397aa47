"""Primitives of ``scipy.linalg`` that ``numpy.linalg`` lacks, with all their rules.

- ``solve_triangular_p(a, b, lower, trans, unit_diagonal)``: ``x = op(T)^-1 b`` with ``T``
  the triangle of ``a`` that ``lower`` names (its diagonal taken as 1 when
  ``unit_diagonal``) and ``op`` the identity, the transpose or the conjugate transpose
  (``trans`` 0, 1, 2). The other triangle of ``a`` is never read, so its derivative is 0.
  The JVP and VJP are triangular solves.
- ``solve_sylvester_p(a, b, q)``: ``x`` with ``a x + x b = q``. JVP: the Sylvester solve
  with right-hand side ``dq - da x - x db``; VJP: ``y`` from the transposed equation
  ``a^T y + y b^T = xbar``, then ``qbar = y``, ``abar = -y x^T``, ``bbar = -x^T y``.
- ``expm_p(a)``, ``logm_p(a)``: the derivative is the Fréchet derivative ``L(a, e)``, taken
  from the block-triangular identity ``f([[a, e], [0, a]]) = [[f(a), L(a, e)], [0, f(a)]]``
  (Mathias's theorem), i.e. ``f`` of a matrix twice as large. The VJP is ``L(a^T, xbar)``
  (for a primary matrix function the Fréchet derivative's adjoint is that of the transpose).
  Both rules call the primitive itself, so every order of derivative is available.
- ``lu_p(a)``: SciPy's packed LU factor (``lu_factor``'s ``lu``), with the nondifferentiable
  ``lu_pivots_p`` and ``pivots_to_permutation_p`` for the row permutation (see below).
- ``sqrtm_p(a)``: ``x = sqrtm(a)``; from ``x dx + dx x = da`` the JVP is
  ``solve_sylvester(x, x, da)`` and the VJP ``solve_sylvester(x^T, x^T, xbar)``.

Complex values use the bilinear pairing ``Re(sum(cotangent * tangent))`` (JAX's
convention, as in ``decompositions.py``): adjoints are transposes, not conjugate transposes.

Stacks and batching. SciPy (>= 1.15) applies these functions to stacks ``(..., n, n)``; the
impls hand whole stacks to SciPy, which loops over them in compiled code, so each batching
rule only adds one leading stack axis (broadcasting the unbatched arguments). There is no
fused batched LAPACK call for the Schur-based ``sqrtm``/``logm``/``solve_sylvester``, so a
batch costs one factorisation per matrix.
"""

import numpy as np
import scipy.linalg

from ..core.primitive import RAISES, Primitive
from ..core.zeros import Zero, dtype_of, shape_of
from . import elementwise as ew
from . import shape as sh
from . import sparsity_rules as sr
from .indexing import getitem
from .linalg import matmul_p
from .matrix_helpers import _H, _T, _conj

__all__ = ["solve_triangular_p", "solve_sylvester_p", "expm_p", "logm_p", "sqrtm_p",
           "frechet_block", "lu_p", "lu_pivots_p", "pivots_to_permutation_p",
           "permutation_matrix"]


def _mm(a, b):
    return matmul_p(a, b)


def _broadcast_all(axis_size, values, batch_axes):
    """Every value with the batch axis at 0 (unbatched ones broadcast)."""
    return [v if ax is not None else sh.broadcast_to(v, (axis_size,) + shape_of(v))
            for v, ax in zip(values, batch_axes)]


def _cast(x, dtype):
    return x if dtype_of(x) == dtype else ew.astype(x, dtype)


# === solve_triangular =====================================================================


def _triangle_mask(n, lower, unit_diagonal, dtype):
    """The constant mask of the entries of ``a`` that a triangular solve reads."""
    ones = np.ones((n, n), dtype=dtype)
    if lower:
        return np.tril(ones, -1 if unit_diagonal else 0)
    return np.triu(ones, 1 if unit_diagonal else 0)


def _apply_op(m, trans):
    return m if trans == 0 else (_T(m) if trans == 1 else _H(m))


def _solve_triangular_impl(a, b, lower, trans, unit_diagonal):
    return scipy.linalg.solve_triangular(a, b, trans=trans, lower=lower,
                                         unit_diagonal=unit_diagonal)


def _solve_triangular_jvp(primals, tangents, lower, trans, unit_diagonal):
    a, b = primals
    ta, tb = tangents
    params = dict(lower=lower, trans=trans, unit_diagonal=unit_diagonal)
    x = solve_triangular_p(a, b, **params)
    rhs = None if type(tb) is Zero else _cast(tb, dtype_of(x))
    if type(ta) is not Zero:
        n = shape_of(a)[-1]
        da = ew.multiply_p(ta, _triangle_mask(n, lower, unit_diagonal,
                                            np.empty((), dtype_of(ta)).real.dtype))
        term = _mm(_apply_op(da, trans), x)
        rhs = ew.negative_p(term) if rhs is None else ew.subtract_p(rhs, term)
    return x, solve_triangular_p(a, rhs, **params)


def _adjoint_solve(a, ct, lower, trans, unit_diagonal):
    """``op(T)^-T ct``: the transpose (not the conjugate transpose) of the solve."""
    if trans == 0:
        return solve_triangular_p(a, ct, lower=lower, trans=1, unit_diagonal=unit_diagonal)
    if trans == 1:
        return solve_triangular_p(a, ct, lower=lower, trans=0, unit_diagonal=unit_diagonal)
    return solve_triangular_p(_conj(a), ct, lower=lower, trans=0, unit_diagonal=unit_diagonal)


def _solve_triangular_vjp_a(ct, x, a, b, lower, trans, unit_diagonal):
    b_bar = _adjoint_solve(a, ct, lower, trans, unit_diagonal)
    g = ew.negative_p(_mm(b_bar, _T(x)))
    g = g if trans == 0 else (_T(g) if trans == 1 else _H(g))
    n = shape_of(a)[-1]
    return ew.multiply_p(g, _triangle_mask(n, lower, unit_diagonal,
                                         np.empty((), dtype_of(g)).real.dtype))


def _solve_triangular_vjp_b(ct, x, a, b, lower, trans, unit_diagonal):
    return _adjoint_solve(a, ct, lower, trans, unit_diagonal)


def _solve_triangular_batch(axis_size, values, batch_axes, lower, trans, unit_diagonal):
    a, b = _broadcast_all(axis_size, values, batch_axes)
    return solve_triangular_p(a, b, lower=lower, trans=trans, unit_diagonal=unit_diagonal), 0


solve_triangular_p = Primitive(
    "scipy_solve_triangular", _solve_triangular_impl, _solve_triangular_jvp,
    (_solve_triangular_vjp_a, _solve_triangular_vjp_b), _solve_triangular_batch,
    vjp_ignores=(1,), vjp_reads=(frozenset({0, "out"}), frozenset({0})), traits=RAISES)


# === solve_sylvester ======================================================================


def _solve_sylvester_jvp(primals, tangents):
    a, b, q = primals
    ta, tb, tq = tangents
    x = solve_sylvester_p(a, b, q)
    rhs = None if type(tq) is Zero else _cast(tq, dtype_of(x))
    for term in (None if type(ta) is Zero else _mm(ta, x),
                 None if type(tb) is Zero else _mm(x, tb)):
        if term is not None:
            rhs = ew.negative_p(term) if rhs is None else ew.subtract_p(rhs, term)
    return x, solve_sylvester_p(a, b, rhs)


# A X + X B = Q: with Y solving A^T Y + Y B^T = ct, the cotangents are -Y X^T (of a),
# -X^T Y (of b) and Y (of q); each rule solves for Y.


def _sylvester_adjoint(ct, a, b):
    return solve_sylvester_p(_T(a), _T(b), ct)


_solve_sylvester_vjp = (
    lambda ct, x, a, b, q: ew.negative_p(_mm(_sylvester_adjoint(ct, a, b), _T(x))),
    lambda ct, x, a, b, q: ew.negative_p(_mm(_T(x), _sylvester_adjoint(ct, a, b))),
    lambda ct, x, a, b, q: _sylvester_adjoint(ct, a, b),
)


def _solve_sylvester_batch(axis_size, values, batch_axes):
    return solve_sylvester_p(*_broadcast_all(axis_size, values, batch_axes)), 0


solve_sylvester_p = Primitive("scipy_solve_sylvester", scipy.linalg.solve_sylvester,
                              _solve_sylvester_jvp, _solve_sylvester_vjp,
                              _solve_sylvester_batch, vjp_ignores=(2,), traits=RAISES)


# === matrix functions: expm, logm (block-triangular Fréchet derivative), sqrtm ============


def frechet_block(prim, a, e):
    """``(f(a), L_f(a, e))`` from ``f([[a, e], [0, a]])``, for stacks of matrices."""
    n = shape_of(a)[-1]
    zeros = np.zeros(shape_of(a), dtype_of(a))
    top = sh.concatenate([a, e], axis=-1)
    bottom = sh.concatenate([sh.broadcast_to(zeros, shape_of(e)), a], axis=-1)
    big = prim(sh.concatenate([top, bottom], axis=-2))
    return (getitem(big, (Ellipsis, slice(0, n), slice(0, n))),
            getitem(big, (Ellipsis, slice(0, n), slice(n, None))))


def _matrix_function(name, impl):
    def jvp(primals, tangents):
        (a,), (ta,) = primals, tangents
        out = prim(a)
        ta = _cast(ta, dtype_of(out))
        _, deriv = frechet_block(prim, _cast(a, dtype_of(out)), ta)
        return out, deriv

    def vjp(ct, out, a):
        at = _cast(_T(a), dtype_of(out))
        return frechet_block(prim, at, _cast(ct, dtype_of(out)))[1]

    def batch(axis_size, values, batch_axes):
        return prim(values[0]), 0

    prim = Primitive(name, impl, jvp, (vjp,), batch, vjp_ignores=("out",))
    return prim


def _expm_impl(a):
    return scipy.linalg.expm(a)


def _logm_impl(a):
    out = scipy.linalg.logm(a)
    if np.isrealobj(a) and np.iscomplexobj(out) and not np.any(np.imag(out)):
        out = np.real(out)
    return out


expm_p = _matrix_function("scipy_expm", _expm_impl)
logm_p = _matrix_function("scipy_logm", _logm_impl)


def _sqrtm_impl(a):
    out = scipy.linalg.sqrtm(a)
    return out[0] if isinstance(out, tuple) else out


def _sqrtm_jvp(primals, tangents):
    (a,), (ta,) = primals, tangents
    x = sqrtm_p(a)
    return x, solve_sylvester_p(x, x, _cast(ta, dtype_of(x)))


def _sqrtm_vjp(ct, x, a):
    xt = _T(x)
    return solve_sylvester_p(xt, xt, _cast(ct, dtype_of(x)))


def _sqrtm_batch(axis_size, values, batch_axes):
    return sqrtm_p(values[0]), 0


sqrtm_p = Primitive("scipy_sqrtm", _sqrtm_impl, _sqrtm_jvp, (_sqrtm_vjp,), _sqrtm_batch,
                    vjp_ignores=(0,))


# === LU factorisation =====================================================================
# lu_p(a): SciPy's packed factor of a (stack of) square matrices, ``a[perm] = L U`` with
# ``L = tril(lu, -1) + I`` and ``U = triu(lu)``. The row permutation is piecewise constant:
# ``lu_pivots_p`` (LAPACK's pivots, as lu_factor returns them) and
# ``pivots_to_permutation_p`` have no derivative. With ``F = L^-1 P da U^-1`` the tangent is
# ``L tril(F, -1) + triu(F) U`` (packed), computed as ``triu(L^-1 P da - tril(F, -1) U)`` for
# the upper part so the last pivot is never divided by (a matrix of rank n - 1 whose last
# pivot is 0 has a smooth LU); the VJP is its transpose.


def _lu_pivots_impl(a):
    return scipy.linalg.lu_factor(a)[1]


def _pivots_to_permutation_impl(piv):
    piv = np.asarray(piv)
    n = piv.shape[-1]
    perm = np.broadcast_to(np.arange(n), piv.shape).copy()
    for index in np.ndindex(piv.shape[:-1]):
        row = perm[index]
        for i, p in enumerate(piv[index]):
            row[i], row[p] = row[p], row[i]
    return perm


def _nondiff_stack_batch(prim):
    def batch(axis_size, values, batch_axes):
        return prim(values[0]), 0
    return batch


lu_pivots_p = Primitive("scipy_lu_pivots", _lu_pivots_impl, nondiff=True)
lu_pivots_p.batch = _nondiff_stack_batch(lu_pivots_p)
pivots_to_permutation_p = Primitive("scipy_pivots_to_permutation",
                                    _pivots_to_permutation_impl, nondiff=True)
pivots_to_permutation_p.batch = _nondiff_stack_batch(pivots_to_permutation_p)


def permutation_matrix(perm, dtype):
    """``P`` with ``P @ x == x[..., perm, :]`` (for stacks of permutations)."""
    n = shape_of(perm)[-1]
    return ew.astype(ew.equal_p(sh.expand_dims(perm, -1), np.arange(n)), dtype)


def _real_mask(n, k, lower, dtype):
    ones = np.ones((n, n), np.empty((), dtype).real.dtype)
    return np.tril(ones, k) if lower else np.triu(ones, k)


def _lu_impl(a):
    return scipy.linalg.lu_factor(a)[0]


def _last_pivot_one(lu):
    """``lu`` with its last diagonal entry (the last pivot of U) replaced by 1. The
    derivative never needs the last column of ``F = L^-1 P da U^-1``, the only one that
    divides by that pivot, so this keeps it finite where ``a`` is singular with only the
    last pivot zero (rank n - 1 without a pivoting tie), where the LU is smooth."""
    n = shape_of(lu)[-1]
    corner = np.zeros((n, n), np.empty((), dtype_of(lu)).real.dtype)
    corner[-1, -1] = 1
    return ew.add_p(ew.multiply_p(lu, 1 - corner), corner)


def _lu_factors(lu):
    n = shape_of(lu)[-1]
    l_mat = ew.add_p(ew.multiply_p(lu, _real_mask(n, -1, True, dtype_of(lu))),
                   np.eye(n, dtype=dtype_of(lu)))
    return l_mat, ew.multiply_p(lu, _real_mask(n, 0, False, dtype_of(lu)))


def _lu_jvp(primals, tangents):
    # Y = L^-1 P da, F = Y U^-1: dL = L tril(F, -1) and dU = triu(F) U = triu(Y - tril(F, -1) U)
    (a,), (ta,) = primals, tangents
    lu = lu_p(a)
    n = shape_of(a)[-1]
    pm = permutation_matrix(pivots_to_permutation_p(lu_pivots_p(a)), dtype_of(lu))
    ta = _cast(ta, dtype_of(lu))
    y = solve_triangular_p(lu, _mm(pm, ta), lower=True, trans=0, unit_diagonal=True)
    f = _T(solve_triangular_p(_last_pivot_one(lu), _T(y), lower=False, trans=1,
                              unit_diagonal=False))
    f_low = ew.multiply_p(f, _real_mask(n, -1, True, dtype_of(f)))
    l_mat, u_mat = _lu_factors(lu)
    d_upper = ew.multiply_p(ew.subtract_p(y, _mm(f_low, u_mat)),
                            _real_mask(n, 0, False, dtype_of(f)))
    return lu, ew.add_p(_mm(l_mat, f_low), d_upper)


def _lu_vjp(ct, lu, a):
    # the transpose of the JVP: Fbar = tril(L^T ct_low - ct_up U^T, -1),
    # Ybar = ct_up + Fbar U^-T, abar = P^T L^-T Ybar
    n = shape_of(lu)[-1]
    low, up = _real_mask(n, -1, True, dtype_of(lu)), _real_mask(n, 0, False, dtype_of(lu))
    l_mat, u_mat = _lu_factors(lu)
    ct_up = ew.multiply_p(ct, up)
    f_bar = ew.multiply_p(
        ew.subtract_p(_mm(_T(l_mat), ew.multiply_p(ct, low)), _mm(ct_up, _T(u_mat))), low)
    y_bar = ew.add_p(ct_up, _T(solve_triangular_p(_last_pivot_one(lu), _T(f_bar), lower=False,
                                                trans=0, unit_diagonal=False)))
    z = solve_triangular_p(lu, y_bar, lower=True, trans=1, unit_diagonal=True)   # L^-T Ybar
    pm = permutation_matrix(pivots_to_permutation_p(lu_pivots_p(a)), dtype_of(lu))
    return _mm(_T(pm), z)


def _lu_batch(axis_size, values, batch_axes):
    return lu_p(values[0]), 0


lu_p = Primitive("scipy_lu", _lu_impl, _lu_jvp, (_lu_vjp,), _lu_batch)

# Sparsity detection: per stack index, the result depends on the whole matrices.
expm_p.sparsity = logm_p.sparsity = sqrtm_p.sparsity = lu_p.sparsity = \
    sr.matrix_stack_sparsity()
solve_sylvester_p.sparsity = sr.matrix_stack_sparsity((2, 2, 2))


def _solve_triangular_sparsity(args, out, local, **params):
    counts = (2, 1 if len(shape_of(args[1])) == 1 else 2)
    return sr.matrix_stack_sparsity(counts)(args, out, local)


solve_triangular_p.sparsity = _solve_triangular_sparsity
