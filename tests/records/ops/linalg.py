"""Records for ``diffkit.numpy.linalg`` (diffkit/ops/decompositions.py).

Each function is checked on well-conditioned matrices built from the drawn values: a small
perturbation (entries in [-1, 1], scaled) of a fixed matrix with well-separated eigen- or
singular values, so no draw (Hypothesis likes zeros and repeated values) reaches a singular
matrix, a tie or a kink. Eigen- and singular vectors enter only through functions that do
not depend on their signs or phases (squares of entries, ``U @ Vh``, projectors).
"""

import numpy as np

import diffkit as dk
import diffkit.numpy as dnp

from ..domains import NONZERO, REAL, SMALL, Domain
from ..matrices import dense, general, rect, rotation, spd, spread, well
from ..op_record import one, records

L = dnp.linalg

# |x| distinct: the grid 1/32 + k/8 never holds both x and -x
ABS_DISTINCT = Domain("distinct |x|", grid=0.125, offset=0.03125, distinct=True)
SMALL_NONZERO = Domain("small, away from 0", -1.0, 1.0, avoid=(0.0,), margin=0.1)


def _real(z):
    real = getattr(dnp, "real", None)
    return real(z) if real is not None else dnp.astype(z, np.float64)


def _imag(z):
    imag = getattr(dnp, "imag", None)
    return imag(z) if imag is not None else _real(z * -1j)


def _abs2(z):
    return _real(z * dnp.conj(z))


R = []

# --- solves and inverses -------------------------------------------------------------------
R += records("linalg_solve", lambda a, b: L.solve(well(a), b),
             [((3, 3), (3,)), ((3, 3), (3, 2)), ((2, 3, 3), (3,)), ((2, 1, 3, 3), (4, 3, 2)),
              ((3, 3), (2, 3, 4))], (SMALL, REAL))
R += records("linalg_inv", lambda a: L.inv(well(a)), [((3, 3),), ((2, 4, 4),), ((1, 1),)],
             (SMALL,))
R += records("linalg_pinv", lambda a: L.pinv(rect(a)), [((4, 3),), ((3, 4),), ((2, 3, 3),)],
             (SMALL,))
R += one("linalg_pinv_rank_deficient", lambda b, c: L.pinv(rect(b) @ rect(c)), (4, 2), (2, 3),
         domains=(SMALL,))
R += one("linalg_pinv_hermitian",
         lambda a: L.pinv(spread(a, 2.0) + np.eye(3), hermitian=True), (3, 3),
         domains=(SMALL,))
R += records("linalg_lstsq", lambda a, b: L.lstsq(rect(a), b)[:2],
             [((4, 3), (4,)), ((4, 2), (4, 3))], (SMALL, REAL))
R += one("linalg_lstsq_square_and_s",
         lambda a, b: (L.lstsq(well(a), b)[0], L.lstsq(rect(a), b)[3]),
         (3, 3), (3, 2), domains=(SMALL, REAL))
R += one("linalg_tensorsolve",
         lambda a, b: L.tensorsolve(a + np.eye(6).reshape(2, 3, 6) * 7, b), (2, 3, 6), (2, 3),
         domains=(SMALL, REAL))
R += one("linalg_tensorsolve_axes",
         lambda a, b: L.tensorsolve(a + np.eye(6).reshape(6, 2, 3) * 7, b, axes=(0,)),
         (6, 2, 3), (2, 3), domains=(SMALL, REAL))
R += one("linalg_tensorinv", lambda a: L.tensorinv(a + np.eye(6).reshape(2, 3, 6) * 7), (2, 3, 6),
         domains=(SMALL,))
for _n in (0, 1, 2, 3, 5, -1, -2):
    R += records(f"linalg_matrix_power_{_n}", lambda a, n=_n: L.matrix_power(well(a), n),
                 [((3, 3),), ((2, 3, 3),)] if _n in (3, -2) else [((3, 3),)], (SMALL,))

# --- determinants ----------------------------------------------------------------------------
R += records("linalg_det", lambda a: L.det(well(a)), [((3, 3),), ((2, 3, 3),), ((1, 1),)],
             (SMALL,))
# rank 2 of 3 (singular), and the gradient of det (the rules' own rules: the Hessian; the
# third derivative at a singular matrix is not finite, see diffkit/ops/determinant.py)
R += one("linalg_det_rank_deficient", lambda b, c: L.det(b @ c), (3, 2), (2, 3))
R += one("linalg_det_gradient", lambda a: dk.grad(L.det)(well(a)), (3, 3), domains=(SMALL,))
R += one("linalg_det_hessian", lambda a: dk.hessian(L.det)(well(a)), (3, 3), domains=(SMALL,),
         order=1)
R += one("linalg_det_gradient_rank_deficient", lambda b, c: dk.grad(L.det)(b @ c), (3, 2),
         (2, 3), order=1)
_FLIP = np.array([[-1.0], [1.0], [1.0]])  # a negative determinant
R += records("linalg_slogdet", lambda a: tuple(L.slogdet(well(a) * _FLIP)),
             [((3, 3),), ((2, 3, 3),)], (SMALL,))

# --- decompositions --------------------------------------------------------------------------
R += records("linalg_cholesky", lambda a: L.cholesky(spd(a)), [((3, 3),), ((2, 3, 3),)],
             (SMALL,))
R += one("linalg_cholesky_upper", lambda a: L.cholesky(spd(a), upper=True), (3, 3),
         domains=(SMALL,))
R += records("linalg_qr", lambda a: tuple(L.qr(dense(a))), [((4, 3),), ((3, 3),), ((3, 4),),
                                                     ((2, 4, 2),)], (SMALL,))
R += one("linalg_qr_r", lambda a: L.qr(dense(a), mode="r"), (4, 3), domains=(SMALL,))


def _qr_complete(a):
    q, r = L.qr(dense(a), mode="complete")
    k = a.shape[-1]
    q2 = q[..., k:]
    return q[..., :k], r, q2 @ dnp.swapaxes(q2, -1, -2)


R += records("linalg_qr_complete", _qr_complete, [((4, 2),), ((2, 3, 2),)], (SMALL,))
R += one("linalg_qr_complete_square", lambda a: tuple(L.qr(dense(a), mode="complete")), (3, 3),
         domains=(SMALL,))


def _eigh(a, UPLO="L"):
    w, v = L.eigh(spread(a), UPLO=UPLO)
    return w, v * v


R += records("linalg_eigh", _eigh, [((3, 3),), ((2, 3, 3),), ((1, 1),)], (SMALL,))
R += one("linalg_eigh_upper", lambda a: _eigh(a, "U"), (4, 4), domains=(SMALL,))


def _eigh_projector(a):
    v = L.eigh(spread(a))[1][..., :2]
    return v @ dnp.swapaxes(v, -1, -2)


R += one("linalg_eigh_projector", _eigh_projector, (3, 3), domains=(SMALL,))


def _doubled(s):
    """``[[s, 0], [0, s]]``: every eigenvalue of ``s`` twice (ties, for any sample)."""
    zero = 0.0 * s
    return dnp.concatenate([dnp.concatenate([s, zero], axis=1),
                            dnp.concatenate([zero, s], axis=1)], axis=0)


# a function symmetric in the tied values is exact at ties (first order here; its Hessian
# is exact forward over reverse, NaN reverse over reverse: tests/ops/test_ties.py)
R += one("linalg_eigvalsh_at_ties", lambda a: dnp.sum(L.eigvalsh(_doubled(spread(a))) ** 2),
         (3, 3), domains=(SMALL,), order=1)
R += records("linalg_eigvalsh", lambda a: L.eigvalsh(spread(a)), [((3, 3),), ((2, 4, 4),)],
             (SMALL,))


def _eig_real(a):
    w, v = L.eig(general(a))
    return w, v * v


def _eig_complex(a):
    w, v = L.eig(rotation(a))
    return _real(w), _imag(w), _abs2(v)


R += records("linalg_eig_real_spectrum", _eig_real, [((3, 3),), ((2, 3, 3),)], (SMALL,))
R += one("linalg_eig_complex_spectrum", _eig_complex, (3, 3), domains=(SMALL,))
R += one("linalg_eigvals", lambda a: _real(dnp.sum(L.eigvals(rotation(a)) ** 2, axis=-1)), (3, 3),
         domains=(SMALL,))
R += one("linalg_eigvals_real", lambda a: L.eigvals(general(a)), (2, 3, 3), domains=(SMALL,))


def _svd(a, full=False):
    u, s, vh = L.svd(rect(a), full_matrices=full)
    k = min(a.shape[-2:])
    uv = u[..., :k] @ vh[..., :k, :]
    if not full:
        return s, uv, u * u, vh * vh
    u2, v2h = u[..., k:], vh[..., k:, :]
    return (s, uv, u2 @ dnp.swapaxes(u2, -1, -2), dnp.swapaxes(v2h, -1, -2) @ v2h)


R += records("linalg_svd", _svd, [((4, 3),), ((3, 4),), ((3, 3),), ((2, 4, 2),)], (SMALL,))
R += records("linalg_svd_full_matrices", lambda a: _svd(a, True), [((4, 2),), ((2, 4),),
                                                             ((2, 3, 2),)], (SMALL,))
R += records("linalg_svd_compute_uv_false", lambda a: L.svd(rect(a), compute_uv=False),
             [((4, 3),), ((2, 3, 4),)], (SMALL,))
R += one("linalg_svdvals", lambda a: L.svdvals(rect(a)), (3, 4), domains=(SMALL,))
R += one("linalg_svd_hermitian", lambda a: L.svd(spread(a) + np.eye(3), hermitian=True)[1], (3, 3),
         domains=(SMALL,))

# --- norms -----------------------------------------------------------------------------------
VECTOR_SHAPES = [((4,),), ((2, 3),)]
# (the zero vector is a kink of every norm, and 0 one of |x| for the others)
for _ord, _domain in [(None, NONZERO), (2, NONZERO), (1, NONZERO), (np.inf, ABS_DISTINCT),
                      (-np.inf, ABS_DISTINCT), (3, NONZERO), (0.5, NONZERO), (-1.5, NONZERO)]:
    R += records(f"linalg_norm_vector_ord{_ord}", lambda x, o=_ord: L.norm(x, o, axis=-1),
                 VECTOR_SHAPES, (_domain,))
R += one("linalg_norm_vector_ord0", lambda x: L.norm(x, 0, axis=0), (3, 2), domains=(NONZERO,),
         zero_derivative=True)
R += records("linalg_norm_default", L.norm, [((4,),), ((2, 3),), ((2, 3, 2),)], (NONZERO,))
R += one("linalg_norm_keepdims", lambda x: L.norm(x, keepdims=True), (2, 3),
         domains=(NONZERO,))
R += one("linalg_norm_axis0_keepdims", lambda x: L.norm(x, 3, axis=0, keepdims=True), (2, 3),
         domains=(NONZERO,))
R += one("linalg_norm_1d_ord_inf", lambda x: L.norm(x, np.inf), (4,), domains=(ABS_DISTINCT,))
_COLUMN_WEIGHTS = np.array([1.0, 12.0, 144.0])   # column sums of |x| in disjoint ranges
for _ord in (1, -1, np.inf, -np.inf):
    _rows = _ord in (np.inf, -np.inf)   # weight the rows for the inf norms
    R += one(f"linalg_norm_matrix_ord{_ord}",
             lambda x, o=_ord, t=_rows: L.norm((x * _COLUMN_WEIGHTS).T if t else
                                               x * _COLUMN_WEIGHTS, o),
             (3, 3), domains=(SMALL_NONZERO,))
R += one("linalg_norm_matrix_ord1_axes", lambda x: L.norm(x * _COLUMN_WEIGHTS, 1, axis=(1, 2)),
         (2, 3, 3), domains=(SMALL_NONZERO,))
R += one("linalg_norm_matrix_ordinf_keepdims",
         lambda x: L.norm(x * _COLUMN_WEIGHTS, np.inf, axis=(2, 1), keepdims=True),
         (2, 4, 3), domains=(SMALL_NONZERO,))
for _ord in ("fro", "nuc", 2, -2):
    R += records(f"linalg_norm_matrix_{_ord}", lambda x, o=_ord: L.norm(rect(x), o),
                 [((3, 4),)], (SMALL,))
R += one("linalg_norm_matrix_nuc_axes",
         lambda x: L.norm(dnp.moveaxis(rect(x), 0, 1), "nuc", axis=(0, 2)), (4, 2, 3),
         domains=(SMALL,))
R += one("linalg_matrix_norm", lambda x: L.matrix_norm(rect(x), ord=2), (2, 3, 3),
         domains=(SMALL,))
R += one("linalg_vector_norm", lambda x: L.vector_norm(x, axis=(0, 2), ord=3), (2, 3, 2),
         domains=(NONZERO,))
R += one("linalg_vector_norm_all", lambda x: L.vector_norm(x, ord=1, keepdims=True), (2, 3),
         domains=(NONZERO,))
for _p in (None, -2, "fro", "nuc"):
    R += one(f"linalg_cond_{_p}", lambda a, p=_p: L.cond(rect(a), p), (3, 3), domains=(SMALL,))
_SPREAD = np.diag([1.0, 3.0, 9.0])
for _p in (1, -np.inf):
    R += one(f"linalg_cond_{_p}", lambda a, p=_p: L.cond(0.02 * a + _SPREAD, p), (3, 3),
             domains=(SMALL_NONZERO,))
R += one("linalg_matrix_rank", lambda a: L.matrix_rank(rect(a)), (4, 3), domains=(SMALL,),
         zero_derivative=True)
R += one("linalg_matrix_rank_stack_rtol", lambda a: L.matrix_rank(rect(a), rtol=0.5), (2, 3, 3),
         domains=(SMALL,), zero_derivative=True)

# --- products and the array-API names -----------------------------------------------------
R += one("linalg_multi_dot", lambda a, b, c: L.multi_dot([a, b, c]), (3,), (3, 4), (4, 2))
R += one("linalg_multi_dot_four", lambda a, b, c, d: L.multi_dot([a, b, c, d]), (2, 6), (6, 3),
         (3, 4), (4,))
R += one("linalg_outer", L.outer, (3,), (4,))
R += records("linalg_vecdot", L.vecdot, [((3,), (3,)), ((2, 3), (3,)), ((4, 1, 3), (2, 3))])
R += one("linalg_vecdot_axis0", lambda a, b: L.vecdot(a, b, axis=0), (3, 2), (3, 1))
R += one("linalg_matrix_transpose", L.matrix_transpose, (2, 3, 4))
R += records("linalg_diagonal", L.diagonal, [((3, 3),), ((2, 3, 4),)])
R += one("linalg_diagonal_offset", lambda x: L.diagonal(x, offset=-1), (2, 3, 4))
R += records("linalg_trace", L.trace, [((3, 3),), ((2, 3, 4),)])
R += one("linalg_trace_offset", lambda x: L.trace(x, offset=2), (3, 4))
R += records("linalg_cross", L.cross, [((3,), (3,)), ((2, 3), (3,)), ((4, 1, 3), (2, 3))])
R += one("linalg_cross_axis0", lambda a, b: L.cross(a, b, axis=0), (3, 2), (3, 1))

RECORDS = R
