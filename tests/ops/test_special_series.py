"""Special functions whose derivatives come from exact reductions and series: the Fresnel
integrals' derivatives at large arguments (exact reduction of the phase), the parameter
derivatives of hyp1f1 and hyp2f1 and the derivative of zeta in its exponent (series on
jets). References are mpmath at 40 digits or more, and central finite differences of
SciPy's own functions."""

import math

import mpmath
import numpy as np
import pytest
import scipy.special as sc

import diffkit as dk
import diffkit.numpy as dnp
import diffkit.scipy.special as sp

RTOL = 1e-7


def _mp_phase(x, digits=60):
    with mpmath.workdps(digits):
        z = mpmath.mpf(x)
        phase = mpmath.pi * z * z / 2
        return float(mpmath.sin(phase)), float(mpmath.cos(phase))


# --- fresnel: S'(x) = sin(pi x^2 / 2), C'(x) = cos(pi x^2 / 2) with x^2 reduced exactly ----


def test_fresnel_derivative_at_1e5_is_exact():
    # pi x^2 / 2 = 5e9 pi: the sine is exactly 0 and the cosine exactly 1
    assert dk.grad(lambda x: sp.fresnel(x)[0])(1e5) == 0.0
    assert dk.grad(lambda x: sp.fresnel(x)[1])(1e5) == 1.0
    assert dk.jacfwd(lambda x: sp.fresnel(x)[0])(1e5) == 0.0


@pytest.mark.parametrize("x", [0.3, -1.7, 123.456, 1e5 + 0.123, 3e7 / 7, 2.0 ** 40 / 3,
                               -987654.321])
def test_fresnel_derivatives_match_mpmath(x):
    s, c = _mp_phase(x)
    for mode in (dk.grad, dk.jacfwd):
        assert math.isclose(mode(lambda v: sp.fresnel(v)[0])(x), s, rel_tol=1e-12,
                            abs_tol=1e-13)
        assert math.isclose(mode(lambda v: sp.fresnel(v)[1])(x), c, rel_tol=1e-12,
                            abs_tol=1e-13)


def test_fresnel_second_derivatives_keep_the_reduction():
    x = 1e5 + 0.25
    s, c = _mp_phase(x)
    # S'' = pi x cos(pi x^2 / 2), C'' = -pi x sin(pi x^2 / 2)
    for hessian in (dk.hessian, lambda f: dk.jacrev(dk.jacrev(f))):
        np.testing.assert_allclose(hessian(lambda v: sp.fresnel(v)[0])(x), math.pi * x * c,
                                   rtol=1e-11)
        np.testing.assert_allclose(hessian(lambda v: sp.fresnel(v)[1])(x), -math.pi * x * s,
                                   rtol=1e-11)


def test_fresnel_derivative_vmap_float32_and_huge():
    x = np.array([0.5, 1e5, 2.0 ** 61, -3.25])
    got = dk.vmap(dk.grad(lambda v: sp.fresnel(v)[0]))(x)
    expected = [_mp_phase(0.5)[0], 0.0, 0.0, _mp_phase(-3.25)[0]]  # 2**61 squared = 0 mod 4
    np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-15)
    x32 = np.float32(3.3)
    g = dk.grad(lambda v: sp.fresnel(v)[1])(x32)
    assert g.dtype == np.float32
    assert math.isclose(float(g), _mp_phase(float(x32))[1], rel_tol=1e-6)
    assert np.isnan(dk.grad(lambda v: sp.fresnel(v)[0])(np.inf))
