"""Records for ``diffkit.scipy.linalg`` (diffkit/scipy/linalg.py and the primitives of
diffkit/ops/scipy_linalg.py), on well-conditioned matrices built as in ``linalg.py``:
diagonally dominant for solves and matrix functions (eigenvalues near ``n + 1``, away from
the negative real axis, for ``sqrtm``/``logm``), symmetric positive definite for Cholesky,
well-separated spectra for ``eigh``/``svd`` (vectors only through sign-invariant
functions)."""

import numpy as np

import diffkit.scipy.linalg as S

from ..domains import NONZERO, REAL, SMALL
from ..matrices import dense, pivoted, rect, spd, spread, well
from ..op_record import one, records

R = []

# --- solves ----------------------------------------------------------------------------------
R += records("scipy_linalg_solve", lambda a, b: S.solve(well(a), b),
             [((3, 3), (3,)), ((3, 3), (3, 2))], (SMALL, REAL))
R += one("scipy_linalg_solve_transposed", lambda a, b: S.solve(well(a), b, transposed=True),
         (3, 3), (3, 2), domains=(SMALL, REAL))
for _assume in ("sym", "her", "pos"):
    for _lower in (False, True):
        R += one(f"scipy_linalg_solve_{_assume}_{'lower' if _lower else 'upper'}",
                 lambda a, b, s=_assume, lw=_lower: S.solve(well(a), b, assume_a=s, lower=lw),
                 (3, 3), (3, 2), domains=(SMALL, REAL))
for _assume in ("diagonal", "upper triangular", "lower triangular"):
    R += one(f"scipy_linalg_solve_{_assume.replace(' ', '_')}",
             lambda a, b, s=_assume: S.solve(well(a), b, assume_a=s), (3, 3), (3,),
             domains=(SMALL, REAL))

for _trans in (0, 1, 2):
    for _lower in (False, True):
        for _unit in (False, True):
            R += records(
                f"scipy_linalg_solve_triangular_{_trans}_{'l' if _lower else 'u'}"
                f"{'_unit' if _unit else ''}",
                lambda a, b, t=_trans, lw=_lower, u=_unit: S.solve_triangular(
                    well(a), b, trans=t, lower=lw, unit_diagonal=u),
                [((3, 3), (3,)), ((3, 3), (3, 2))] if (_trans, _lower, _unit) == (0, True, False)
                else [((3, 3), (3, 2))], (SMALL, REAL))
R += one("scipy_linalg_solve_triangular_stack", lambda a, b: S.solve_triangular(well(a), b),
         (2, 3, 3), (3, 2), domains=(SMALL, REAL))

# --- Cholesky --------------------------------------------------------------------------------
for _lower in (False, True):
    _tag = "lower" if _lower else "upper"
    R += one(f"scipy_linalg_cholesky_{_tag}", lambda a, lw=_lower: S.cholesky(spd(a), lower=lw),
             (3, 3), domains=(SMALL,))
    R += one(f"scipy_linalg_cho_factor_solve_{_tag}",
             lambda a, b, lw=_lower: S.cho_solve(S.cho_factor(spd(a), lower=lw), b),
             (3, 3), (3, 2), domains=(SMALL, REAL))
    # differentiable in the factor itself (a triangular matrix with a dominant diagonal)
    R += records(f"scipy_linalg_cho_solve_factor_{_tag}",
                 lambda c, b, lw=_lower: S.cho_solve((well(c), lw), b),
                 [((3, 3), (3,)), ((3, 3), (3, 2))], (SMALL, REAL))

# --- inverse, determinant, least squares, pseudo-inverse, norm -------------------------------
R += records("scipy_linalg_inv", lambda a: S.inv(well(a)), [((3, 3),), ((2, 3, 3),)], (SMALL,))
R += one("scipy_linalg_inv_pos", lambda a: S.inv(spd(a), assume_a="pos"), (3, 3),
         domains=(SMALL,))
R += records("scipy_linalg_det", lambda a: S.det(well(a)), [((3, 3),), ((2, 3, 3),)], (SMALL,))
R += records("scipy_linalg_lstsq", lambda a, b: S.lstsq(rect(a), b)[:2],
             [((4, 3), (4,)), ((4, 2), (4, 3))], (SMALL, REAL))
R += records("scipy_linalg_pinv", lambda a: S.pinv(rect(a)), [((4, 3),), ((3, 4),)], (SMALL,))
R += records("scipy_linalg_norm", S.norm, [((3,),), ((2, 3),)], (NONZERO,))
# entries away from 0 (no kink of abs), column sums apart (no tie in the maximum)
R += one("scipy_linalg_norm_ord1",
         lambda a: S.norm(well(a) + np.diag([0.0, 8.0, 16.0]) + 2.0, 1), (3, 3),
         domains=(SMALL,))

# --- decompositions --------------------------------------------------------------------------


def _eigh(a, lower=True):
    w, v = S.eigh(spread(a), lower=lower)
    return w, v * v


R += records("scipy_linalg_eigh", _eigh, [((3, 3),), ((2, 3, 3),)], (SMALL,))
R += one("scipy_linalg_eigh_upper", lambda a: _eigh(a, lower=False), (3, 3), domains=(SMALL,))
R += one("scipy_linalg_eigh_subset",
         lambda a: S.eigh(spread(a), subset_by_index=(1, 2), eigvals_only=True), (4, 4),
         domains=(SMALL,))
R += one("scipy_linalg_eigvalsh", lambda a: S.eigvalsh(spread(a), lower=False), (3, 3),
         domains=(SMALL,))


def _svd(a, full_matrices=True):
    u, s, vh = S.svd(rect(a), full_matrices=full_matrices)
    k = min(a.shape[-2:])
    return s, u[..., :k] @ vh[..., :k, :]


R += records("scipy_linalg_svd", _svd, [((4, 3),), ((3, 3),)], (SMALL,))
R += one("scipy_linalg_svd_economic", lambda a: _svd(a, False), (3, 4), domains=(SMALL,))
R += one("scipy_linalg_svd_values", lambda a: S.svd(rect(a), compute_uv=False), (4, 3),
         domains=(SMALL,))
R += one("scipy_linalg_qr_economic", lambda a: S.qr(dense(a), mode="economic"), (4, 3),
         domains=(SMALL,))
R += one("scipy_linalg_qr_r", lambda a: S.qr(dense(a), mode="r")[0], (4, 3), domains=(SMALL,))
R += one("scipy_linalg_qr_full_square", lambda a: S.qr(dense(a)), (3, 3), domains=(SMALL,))

# --- block_diag ------------------------------------------------------------------------------
R += one("scipy_linalg_block_diag", S.block_diag, (2, 2), (3,), (), domains=(REAL,))
R += one("scipy_linalg_block_diag_one", S.block_diag, (2, 3), domains=(REAL,))

# --- Sylvester equation and matrix functions -------------------------------------------------
R += records("scipy_linalg_solve_sylvester",
             lambda a, b, q: S.solve_sylvester(well(a), well(b), q),
             [((3, 3), (2, 2), (3, 2)), ((2, 3, 3), (2, 2), (3, 2))], (SMALL, SMALL, REAL))
R += records("scipy_linalg_expm", S.expm, [((3, 3),), ((2, 2, 2),), ((1, 1),)], (SMALL,))
R += one("scipy_linalg_expm_frechet", S.expm_frechet, (3, 3), (3, 3), domains=(SMALL, REAL))
R += one("scipy_linalg_expm_frechet_only",
         lambda a, e: S.expm_frechet(a, e, compute_expm=False), (2, 2), (2, 2),
         domains=(SMALL, REAL))
R += records("scipy_linalg_sqrtm", lambda a: S.sqrtm(well(a)), [((3, 3),), ((2, 2, 2),)],
             (SMALL,))
R += one("scipy_linalg_sqrtm_spd", lambda a: S.sqrtm(spd(a)), (3, 3), domains=(SMALL,))
R += records("scipy_linalg_logm", lambda a: S.logm(well(a)), [((3, 3),), ((2, 2, 2),)],
             (SMALL,))



# --- LU --------------------------------------------------------------------------------------
R += records("scipy_linalg_lu_factor", lambda a: S.lu_factor(pivoted(a))[0],
             [((3, 3),), ((2, 3, 3),)], (SMALL,))
R += records("scipy_linalg_lu_factor_pivots", lambda a: S.lu_factor(pivoted(a))[1],
             [((3, 3),), ((2, 3, 3),)], (SMALL,), zero_derivative=True)
for _trans in (0, 1, 2):
    R += records(f"scipy_linalg_lu_solve_{_trans}",
                 lambda a, b, t=_trans: S.lu_solve(S.lu_factor(pivoted(a)), b, trans=t),
                 [((3, 3), (3,)), ((3, 3), (3, 2))] if _trans == 0 else [((3, 3), (3, 2))],
                 (SMALL, REAL))
# differentiable in the packed factor itself, with fixed pivots
R += one("scipy_linalg_lu_solve_factor",
         lambda c, b: S.lu_solve((well(c), np.array([1, 2, 2], np.int32)), b), (3, 3), (3, 2),
         domains=(SMALL, REAL))

RECORDS = R

# --- functions of symmetric matrices (funm: Daleckii-Krein) and trigonometry through expm ----
R += records("scipy_linalg_funm_sin", lambda a: S.funm(spread(a, 1.0), np.sin),
             [((3, 3),), ((2, 2, 2),)], (SMALL,))
R += one("scipy_linalg_funm_exp", lambda a: S.funm(spread(a, 0.5), lambda w: w * np.exp(w)),
         (3, 3), domains=(SMALL,))
R += one("scipy_linalg_cosm", lambda a: S.cosm(well(a)), (3, 3), domains=(SMALL,))
R += one("scipy_linalg_sinm", lambda a: S.sinm(well(a)), (3, 3), domains=(SMALL,))
# eigenvalues of well(a) lie in [1, 7] (Gershgorin), so those of 0.15 well(a) stay in
# [0.15, 1.05], clear of tan's pole at pi/2 (0.3 well(a) could reach it)
R += one("scipy_linalg_tanm", lambda a: S.tanm(0.15 * well(a)), (3, 3), domains=(SMALL,))
R += one("scipy_linalg_fractional_matrix_power",
         lambda a: S.fractional_matrix_power(well(a), 0.4), (3, 3), domains=(SMALL,))
