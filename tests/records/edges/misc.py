"""Edge samples of the complex functions, FFTs, convolutions, integer functions, and the
linear algebra primitives whose edges are a zero right-hand side, a permutation or I
(tests/records/ops/complex_fft.py, scipy_signal.py, arrays.py, ufuncs.py, linalg.py)."""

import numpy as np
import scipy.linalg
import scipy.signal
import scipy.special

from ..edge_sample import edge, kink
from ..matrices import EIG_BASIS, PIVOTED, general_at, pivoted_at, well_at

INF, NAN = np.inf, np.nan
E = []


def _z(f):
    """A reference taking real and imaginary parts, as the complex records do."""
    def reference(re, im):
        out = f(re + 1j * im)
        return (out.real, out.imag) if np.iscomplexobj(out) else out
    return reference


# --- complex functions: z = 0 and the branch cut ------------------------------------------------
E += kink("complex_abs", [0.0, 1.0], [0.0, 0.0], ref=_z(np.abs), label="zero",
          jacobian=[[0, 0, 0, 0], [0, 1.0, 0, 0]])
E += kink("complex_sign", [0.0], [0.0], ref=_z(np.sign), label="zero", jacobian=0.0)
E += kink("complex_angle", [0.0, -1.0], [0.0, 0.0], ref=_z(np.angle), label="zero,cut",
          jacobian=[[0, 0, 0, 0], [0, 0, 0, -1.0]])
E += edge("complex_sqrt", [0.0], [0.0], ref=_z(np.sqrt), label="zero", differentiable=False)
E += edge("complex_log", [0.0], [0.0], ref=_z(np.log), label="zero", differentiable=False)
E += edge("complex_real", [0.0, -0.0], [INF, 1.0], ref=_z(np.real), differentiable=False,
          jacobian=np.hstack([np.eye(2), np.zeros((2, 2))]))
E += edge("complex_imag", [INF, 1.0], [0.0, -0.0], ref=_z(np.imag), differentiable=False,
          jacobian=np.hstack([np.zeros((2, 2)), np.eye(2)]))
E += edge("angle_of_real", [0.0, -0.0, -1.0], ref=np.angle)

# --- FFTs: zeros, an infinite entry, and irfft ignoring the imaginary DC and Nyquist parts --------
E += edge("fft", np.zeros(4), np.zeros(4), ref=_z(np.fft.fft), label="zeros")
E += edge("rfft", np.zeros(4), ref=lambda x: (np.fft.rfft(x).real, np.fft.rfft(x).imag),
          label="zeros")
E += edge("irfft", [1.0, 0.0, -1.0], [2.0, 0.0, 3.0], ref=_z(np.fft.irfft),
          label="imaginary_dc_nyquist")

# --- convolutions: length 1 and zeros -----------------------------------------------------------
E += edge("convolve_full", [0.0], [2.0], ref=lambda a, v: np.convolve(a, v, "full"))
E += edge("signal_convolve_scalar", 0.0, -0.0, ref=scipy.signal.convolve)
E += edge("signal_convolve_full_direct", np.zeros(4), np.zeros(3),
          ref=lambda a, v: scipy.signal.convolve(a, v, "full", "direct"))

E += edge("signal_lfilter", np.zeros(2), np.zeros(2), np.zeros(4),
          ref=lambda b, a, x: scipy.signal.lfilter(b, np.array([1.0, 0.0]) + 0.3 * a, x),
          label="zeros")
E += edge("signal_lfilter_fir", [1.0, 0.0, 0.0], np.zeros(5),
          ref=lambda b, x: scipy.signal.lfilter(b, [1.0], x), label="identity")

# --- shapes and indices -------------------------------------------------------------------------
E += kink("split", [INF, 0.0, -0.0, NAN], ref=lambda x: np.split(x, 2), jacobian=np.eye(4))
E += edge("take_index_argument_wrap", np.arange(6.0).reshape(2, 3), np.array([-4, 3, -1, 6]),
          ref=lambda x, i: np.take(x, i, axis=1, mode="wrap"))
E += edge("pad_integer_statistics", [0.0, 0.0], np.array([[1, 2, 3, 4], [0, 1, 0, 1],
                                                          [5, 5, 6, 6]]),
          ref=lambda x, i: (np.pad(i, 2, "mean"), np.pad(i, (1, 2), "median"),
                            np.pad(i, 2, "linear_ramp", end_values=7)))

# --- integer functions: values and batching ------------------------------------------------------
_A, _B = np.array([0, 1, 6, 7]), np.array([0, 3, 4, 1])
for _name in ("bitwise_and", "bitwise_or", "bitwise_xor", "gcd", "lcm", "left_shift",
              "right_shift", "logical_xor"):
    E += edge(_name, _A, _B)
E += edge("invert", _A)
E += edge("bitwise_count", _A)

# --- linear algebra: zero right-hand sides, identity, permutations ---------------------------
E += edge("linalg_solve", well_at(np.eye(3)), np.zeros(3), label="identity,zero_rhs",
          ref=lambda a, b: np.linalg.solve(a + 4 * np.eye(3), b))
E += edge("scipy_linalg_solve_triangular_0_u", well_at(np.eye(3)), np.zeros((3, 2)),
          label="identity,zero_rhs",
          ref=lambda a, b: scipy.linalg.solve_triangular(a + 4 * np.eye(3), b, lower=False))
E += edge("linalg_cholesky", np.zeros((3, 3)), label="identity",
          ref=lambda a: np.linalg.cholesky(a @ a.T + np.eye(3)))
E += edge("linalg_qr_r", np.zeros((4, 3)), label="base", ulps=8,
          ref=lambda a: np.linalg.qr(0.25 * a + np.eye(4, 3) * [9.0, 6.0, 3.0] + 1.0, mode="r"))
_PERMUTATION = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
E += edge("scipy_linalg_lu_factor", pivoted_at(_PERMUTATION), label="permutation",
          ref=lambda a: scipy.linalg.lu_factor(0.2 * a + PIVOTED)[0])
E += edge("scipy_linalg_lu_factor_pivots", pivoted_at(_PERMUTATION),
          label="permutation", ref=lambda a: scipy.linalg.lu_factor(0.2 * a + PIVOTED)[1])
_DOUBLE_EIG = EIG_BASIS @ np.diag([3.0, 3.0, 6.0]) @ np.linalg.inv(EIG_BASIS)
E += edge("linalg_eig_real_spectrum", general_at(_DOUBLE_EIG), ref=None,
          label="double_eigenvalue", differentiable=False, ulps=4)
# (the eigenvectors' rows are NaN in both engines at the tie; the eigenvalues' rows are
# diag(V^-1 dA V) forward and V^-T diag(c) V^T reverse: equal to the last place or two)
E += edge("special_zeta_riemann", np.array([2, 3]), [0.0, -0.0],
          ref=lambda s, y: scipy.special.zeta(s) * y)
EDGES = E
