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


# --- hyp1f1, hyp2f1: derivatives in the parameters (series on jets) ----------------------

mpmath.mp.dps = 40


def _mp_partial(f, point, orders):
    """A mixed partial derivative of the mpmath function ``f`` at ``point``, to 40 digits."""
    return float(mpmath.diff(f, tuple(mpmath.mpf(p) for p in point), tuple(orders)))


HYP1F1_POINTS = [(1.5, 2.0, 0.3), (0.7, 2.5, -7.5), (1.5, 2.0, 12.0), (-1.3, 0.6, 2.2),
                 (2.0, 3.0, -0.4)]


@pytest.mark.parametrize("point", HYP1F1_POINTS)
def test_hyp1f1_first_derivatives_match_mpmath(point):
    expected = [_mp_partial(mpmath.hyp1f1, point, np.eye(3, dtype=int)[i]) for i in range(3)]
    reverse = dk.grad(sp.hyp1f1, argnums=(0, 1, 2))(*point)
    forward = [dk.jacfwd(sp.hyp1f1, argnums=i)(*point) for i in range(3)]
    np.testing.assert_allclose(reverse, expected, rtol=1e-10)
    np.testing.assert_allclose(forward, reverse, rtol=1e-13)


def test_hyp1f1_second_derivatives_match_mpmath():
    point = (1.5, 2.0, -0.7)
    hessian = np.array(dk.hessian(sp.hyp1f1, argnums=(0, 1, 2))(*point), dtype=float)
    expected = [[_mp_partial(mpmath.hyp1f1, point, np.eye(3, dtype=int)[i]
                             + np.eye(3, dtype=int)[j]) for j in range(3)] for i in range(3)]
    np.testing.assert_allclose(hessian, expected, rtol=1e-9)
    np.testing.assert_allclose(hessian, hessian.T, rtol=1e-13)


def test_hyp1f1_third_order_in_parameters_and_the_fourth_raises():
    third = dk.grad(dk.grad(dk.grad(sp.hyp1f1)))(1.5, 2.0, 0.3)
    assert math.isclose(third, _mp_partial(mpmath.hyp1f1, (1.5, 2.0, 0.3), (3, 0, 0)),
                        rel_tol=1e-8)
    with pytest.raises(dk.errors.NoRuleError, match="order 3; order 4"):
        dk.grad(dk.grad(dk.grad(dk.grad(sp.hyp1f1))))(1.5, 2.0, 0.3)
    # derivatives in x stay available on top of parameter derivatives of any order
    mixed = dk.grad(dk.grad(dk.grad(dk.grad(sp.hyp1f1, argnums=2), argnums=2)), argnums=2)
    assert math.isclose(mixed(1.5, 2.0, 0.3),
                        _mp_partial(mpmath.hyp1f1, (1.5, 2.0, 0.3), (1, 0, 3)), rel_tol=1e-9)


def test_hyp1f1_parameter_derivatives_under_vmap_and_float32():
    a = np.array([0.5, 1.5, 2.5])
    got = dk.vmap(dk.grad(sp.hyp1f1, argnums=1), in_axes=(0, None, 0))(a, 1.7, -a)
    expected = [_mp_partial(mpmath.hyp1f1, (u, 1.7, -u), (0, 1, 0)) for u in a]
    np.testing.assert_allclose(got, expected, rtol=1e-10)
    a32 = np.float32(1.5)
    g = dk.grad(sp.hyp1f1)(a32, 2.0, 0.3)
    assert g.dtype == np.float32
    assert math.isclose(float(g), _mp_partial(mpmath.hyp1f1, (1.5, 2.0, 0.3), (1, 0, 0)),
                        rel_tol=1e-6)


HYP2F1_POINTS = [(1.5, 0.7, 2.3, 0.3), (1.5, 0.7, 2.3, -0.6), (0.4, 1.2, 1.9, -5.0),
                 (1.5, 0.7, 2.3, 0.9), (-0.6, 1.1, 2.7, 0.5)]


@pytest.mark.parametrize("point", HYP2F1_POINTS)
def test_hyp2f1_first_derivatives_match_mpmath(point):
    expected = [_mp_partial(mpmath.hyp2f1, point, np.eye(4, dtype=int)[i]) for i in range(4)]
    reverse = dk.grad(sp.hyp2f1, argnums=(0, 1, 2, 3))(*point)
    forward = [dk.jacfwd(sp.hyp2f1, argnums=i)(*point) for i in range(4)]
    np.testing.assert_allclose(reverse, expected, rtol=1e-10)
    np.testing.assert_allclose(forward, reverse, rtol=1e-12)


def test_hyp2f1_second_derivatives_match_mpmath_and_vmap():
    point = (1.5, 0.7, 2.3, -0.4)
    hessian = np.array(dk.hessian(sp.hyp2f1, argnums=(0, 1, 2, 3))(*point), dtype=float)
    eye = np.eye(4, dtype=int)
    expected = [[_mp_partial(mpmath.hyp2f1, point, eye[i] + eye[j]) for j in range(4)]
                for i in range(4)]
    np.testing.assert_allclose(hessian, expected, rtol=1e-9)
    c = np.array([1.9, 2.3, 3.1])
    got = dk.vmap(dk.grad(sp.hyp2f1, argnums=2), in_axes=(None, None, 0, None))(1.5, 0.7, c, 0.2)
    np.testing.assert_allclose(got, [_mp_partial(mpmath.hyp2f1, (1.5, 0.7, u, 0.2), eye[2])
                                     for u in c], rtol=1e-10)


def test_hyp2f1_parameter_derivative_beyond_the_series_range_is_nan():
    # z = 0.998 is past the series' reach (0.995, documented): NaN, never a wrong number
    assert np.isnan(dk.grad(sp.hyp2f1)(1.5, 0.7, 2.3, 0.998))
    assert np.isnan(dk.jacfwd(sp.hyp2f1)(1.5, 0.7, 2.3, 0.998))


# --- zeta: derivative in the exponent -----------------------------------------------------


@pytest.mark.parametrize(("x", "q"), [(3.0, 1.5), (1.5, 0.3), (2.0, 1.0), (40.0, 1.2),
                                      (1.0001, 2.0), (7.5, 11.0)])
def test_hurwitz_zeta_derivatives_match_mpmath(x, q):
    expected = [_mp_partial(mpmath.zeta, (x, q), (1, 0)), _mp_partial(mpmath.zeta, (x, q), (0, 1))]
    np.testing.assert_allclose(dk.grad(sp.zeta, argnums=(0, 1))(x, q), expected, rtol=1e-11)
    np.testing.assert_allclose(dk.jacfwd(sp.zeta)(x, q), expected[0], rtol=1e-11)


@pytest.mark.parametrize("x", [0.5, 0.0, -0.01, -1.5, -2.0, -7.3, 0.99, 3.0, 1.01])
def test_riemann_zeta_derivative_matches_mpmath(x):
    expected = _mp_partial(mpmath.zeta, (x,), (1,))
    assert math.isclose(dk.grad(sp.zeta)(x), expected, rel_tol=1e-11)
    assert math.isclose(dk.jacfwd(sp.zeta)(x), expected, rel_tol=1e-11)


def test_zeta_second_derivatives_and_vmap():
    for x in (-1.5, 0.4, 2.5):
        assert math.isclose(dk.hessian(sp.zeta)(x), _mp_partial(mpmath.zeta, (x,), (2,)),
                            rel_tol=1e-9)
    hessian = np.array(dk.hessian(sp.zeta, argnums=(0, 1))(2.5, 0.7), dtype=float)
    expected = [[_mp_partial(mpmath.zeta, (2.5, 0.7), (2 - i - j, i + j)) for j in range(2)]
                for i in range(2)]
    np.testing.assert_allclose(hessian, expected, rtol=1e-9)
    x = np.array([1.5, 2.5, 3.5])
    np.testing.assert_allclose(dk.vmap(dk.grad(sp.zeta))(x, np.full(3, 0.8)),
                               [_mp_partial(mpmath.zeta, (u, 0.8), (1, 0)) for u in x],
                               rtol=1e-11)


def test_zeta_derivative_against_scipy_finite_differences():
    # SciPy's own function is the judge too (central differences, step 1e-5)
    x, q, h = np.array([1.7, 2.9, 5.0]), np.array([0.4, 1.0, 2.5]), 1e-5
    numeric = (sc.zeta(x + h, q) - sc.zeta(x - h, q)) / (2 * h)
    got = dk.grad(lambda v: dnp.sum(sp.zeta(v, q)))(x)
    np.testing.assert_allclose(got, numeric, rtol=1e-7)
    # Hurwitz zeta is NaN below 1 in SciPy; so is its derivative in x
    assert np.isnan(sc.zeta(0.5, 2.0)) and np.isnan(dk.grad(sp.zeta)(0.5, 2.0))
