"""Edge samples of the linear algebra records (tests/records/ops/linalg.py and
scipy_linalg.py): singular and rank-deficient matrices, exactly repeated eigenvalues and
singular values, values repeated only up to LAPACK's rounding, zero vectors and ties for
the norms.

The records build their matrices from the drawn values (``well(a) = a + (n + 1) I``,
``spread``, ``rect``): each is affine in ``a``, so the inverses in ``records.matrices``
put the record exactly at the matrix an edge sample names.
"""

import numpy as np
import scipy.linalg

from ..edge_sample import edge, kink
from ..matrices import rect_at, spread_at, well_at

E = []

_RANK2 = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
_RANK1 = np.outer([1.0, 2.0, -1.0], [0.5, 1.0, 2.0])
_Q = np.linalg.qr(np.array([[1.0, 2.0, 0.5], [0.3, -1.0, 2.0], [1.5, 0.2, 1.0]]))[0]
_DOUBLE = _Q @ np.diag([1.0, 1.0, 4.0]) @ _Q.T            # exactly repeated, in exact arithmetic
_DOUBLE = 0.5 * (_DOUBLE + _DOUBLE.T)                    # ... and LAPACK-split by rounding


# --- determinants and inverses at singular matrices -------------------------------------------
# det is a polynomial: smooth at every rank, so finite differences judge (the closed-form
# cofactors are asserted in tests/ops/test_singular_linalg.py)
E += edge("linalg_det", well_at(_RANK2), label="rank2",
          ref=lambda a: np.linalg.det(a + 4 * np.eye(3)))
E += edge("linalg_det", well_at(_RANK1), label="rank1",
          ref=lambda a: np.linalg.det(a + 4 * np.eye(3)))
E += edge("linalg_det", well_at(np.zeros((1, 1))), label="zero_1x1", jacobian=1.0,
          ref=lambda a: np.linalg.det(a + 2 * np.eye(1)))
E += edge("scipy_linalg_det", well_at(_RANK2), label="rank2",
          ref=lambda a: scipy.linalg.det(a + 4 * np.eye(3)))
# log|det| is -inf at a singular matrix: NaN derivative in both engines (the sign's row is 0)
E += edge("linalg_slogdet", well_at(_RANK2 * np.array([[-1.0], [1.0], [1.0]])),
          label="rank2", differentiable=False,
          ref=lambda a: np.linalg.slogdet((a + 4 * np.eye(3)) * np.array([[-1.0], [1.0], [1.0]])))
E += edge("linalg_matrix_power_2", well_at(_RANK1), label="rank1",
          ref=lambda a: np.linalg.matrix_power(a + 4 * np.eye(3), 2))
E += kink("linalg_pinv_rank_deficient", np.zeros((4, 2)), np.zeros((2, 3)), jacobian=None,
          label="rank2_product", ref=None)
E += edge("linalg_matrix_rank", rect_at(np.vstack([_RANK2, [1.0, 1.0, 1.0]])),
          ref=lambda a: np.linalg.matrix_rank(0.25 * a + np.eye(4, 3) * [9.0, 6.0, 3.0]))

# --- repeated eigenvalues and singular values -------------------------------------------------
E += edge("linalg_eigvalsh", spread_at(np.eye(3)), label="identity", differentiable=False,
          ref=lambda a: np.linalg.eigvalsh(0.25 * (a + a.T) + np.diag([0.0, 5.0, 10.0])))
# (the reverse rule forms V diag(c) V^T, the forward rule v_i^T dA v_i: a unit or two in the
# last place apart at a LAPACK-split tie)
E += edge("linalg_eigvalsh", spread_at(_DOUBLE), label="lapack_split", differentiable=False,
          ref=lambda a: np.linalg.eigvalsh(0.25 * (a + a.T) + np.diag([0.0, 5.0, 10.0])),
          value_rtol=1e-9, ulps=4)
# The projector onto the eigenspace of the double eigenvalue is smooth there, but eigh's
# vectors cannot know that the function does not depend on the basis of the eigenspace:
# NaN in both engines, never a finite guess (docs/conventions.md; funm gives it exactly)
# At V = I the last entry P[2, 2] is O(dA^2) (the eigenspace tilts towards e2 only to first
# order): its row is the exact 0 in both engines, as the products inside derivative rules
# follow the 0 x inf rule (the unknown vectors' tangent times V's structural zeros).
E += edge("linalg_eigh_projector", spread_at(np.diag([1.0, 1.0, 4.0])), label="double",
          ref=None, differentiable=False,
          jacobian=np.vstack([np.full((8, 9), np.nan), np.zeros((1, 9))]))
E += edge("linalg_eigh_projector", spread_at(_DOUBLE), label="lapack_split", ref=None,
          differentiable=False, jacobian=np.nan)
E += edge("linalg_svd_compute_uv_false", rect_at(np.diag([2.0, 2.0, 2.0])), label="identity",
          differentiable=False,
          ref=lambda a: np.linalg.svd(0.25 * a + np.diag([9.0, 6.0, 3.0]), compute_uv=False))
E += edge("linalg_norm_matrix_nuc", rect_at(2.0 * _Q), label="repeated_s", ulps=16,
          ref=lambda a: np.linalg.norm(0.25 * a + np.diag([9.0, 6.0, 3.0]), "nuc"))
# singular values (4, 1, 1), split by rounding: the nuclear norm is smooth there (its
# cotangent c = 1 is a constant, so the tie limit is 0 in every direction; it was NaN in
# directions whose perturbation does not separate the pair)
E += edge("linalg_norm_matrix_nuc", rect_at(_DOUBLE @ _Q), label="double_s_split", ulps=16,
          ref=lambda a: np.linalg.norm(0.25 * a + np.diag([9.0, 6.0, 3.0]), "nuc"))
E += kink("linalg_norm_matrix_2", rect_at(np.diag([2.0, 2.0, 1.0])), label="tied_top",
          jacobian=None, ref=lambda a: np.linalg.norm(0.25 * a + np.diag([9.0, 6.0, 3.0]), 2))

# --- norms at zero and at ties: 0, Hessian included; ties shared as max's ------------------------
E += kink("linalg_norm_default", np.zeros(4), label="zero", jacobian=0.0, hessian=0.0,
          ref=np.linalg.norm)
E += kink("linalg_norm_vector_ord2", np.zeros((2, 3)), label="zero", jacobian=0.0,
          hessian=0.0, ref=lambda x: np.linalg.norm(x, 2, axis=-1))
E += kink("linalg_norm_1d_ord_inf", [1.0, -1.0, 0.5, 0.0], label="tie",
          jacobian=[[0.5, -0.5, 0.0, 0.0]], ref=lambda x: np.linalg.norm(x, np.inf))

# --- matrix functions ------------------------------------------------------------------------
E += edge("scipy_linalg_expm", np.zeros((3, 3)), label="zero", jacobian=np.eye(9),
          ref=scipy.linalg.expm)
E += edge("scipy_linalg_sqrtm", well_at(np.eye(3)), label="identity",
          jacobian=0.5 * np.eye(9), ref=lambda a: scipy.linalg.sqrtm(a + 4 * np.eye(3)))
E += edge("scipy_linalg_logm", well_at(np.eye(3)), label="identity",
          jacobian=np.eye(9), ref=lambda a: scipy.linalg.logm(a + 4 * np.eye(3)))

# funm at a double eigenvalue: exact (divided differences become func' on the tie)
E += edge("scipy_linalg_funm_sin", 2.0 * (np.diag([1.0, 1.0, 3.0]) - np.diag([0.0, 1.0, 2.0])),
          label="double_eigenvalue", ref=None)

# the gradient of det at singular matrices (its Hessian rule: det_hessian, chosen per matrix by
# det_well_conditioned): rank 2 of 3 and the zero matrix, where the adjugate is 0 but the
# Hessian is not. (det's third derivative at a singular matrix is NaN, see
# diffkit/ops/determinant.py: second_order=False.)
E += edge("linalg_det_gradient", well_at(_RANK2), label="rank2", ref=None, second_order=False)
E += edge("linalg_det_gradient", well_at(np.zeros((3, 3))), label="zero", ref=None,
          second_order=False)
# the third derivative where it is finite (a well-conditioned matrix, det_well_conditioned 1)
E += edge("linalg_det_hessian", well_at(np.diag([2.0, -1.0, 0.5])), label="diagonal", ref=None,
          second_order=False)
EDGES = E
