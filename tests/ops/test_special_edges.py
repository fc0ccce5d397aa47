"""Special functions at poles, branch points and the ends of their domains: derivatives are
the one-sided limits (+-inf at a pole), exact where the function has a finite limit of its
derivative, the same in both engines; checked against mpmath and closed forms."""

import math

import mpmath as mp
import numpy as np
import pytest

import diffkit as dk
import diffkit.scipy.special as dsp

mp.mp.dps = 40
INF = np.inf


def both_engines(fun, x):
    """d fun / dx elementwise from jacfwd and jacrev (identical bit for bit)."""
    x = np.asarray(x, np.float64)
    with np.errstate(all="ignore"):
        forward = np.diag(np.atleast_2d(dk.jacfwd(fun)(x)))
        reverse = np.diag(np.atleast_2d(dk.jacrev(fun)(x)))
    np.testing.assert_array_equal(forward, reverse)
    return forward


def second(fun, x):
    """d^2 fun / dx^2 of a scalar function by forward over reverse and reverse over forward
    (equal to rounding: the chain rule multiplies in opposite orders; infinities identical)."""
    with np.errstate(all="ignore"):
        a = dk.jacfwd(dk.grad(fun))(float(x))
        b = dk.jacrev(dk.jacfwd(fun))(float(x))
    np.testing.assert_allclose(a, b, rtol=1e-14)
    return float(a)


def mp_diff(f, x, n=1):
    return float(mp.diff(f, mp.mpf(x), n))


# --- rgamma at the poles of gamma ----------------------------------------------------------


def test_rgamma_derivative_at_the_poles_is_minus_one_to_the_n_times_n_factorial():
    n = np.arange(6)
    expected = (-1.0) ** n * np.array([math.factorial(k) for k in n])
    np.testing.assert_allclose(both_engines(dsp.rgamma, -n.astype(float)), expected,
                               rtol=1e-13)


@pytest.mark.parametrize("n", [0, 1, 2, 3])
def test_rgamma_second_derivative_at_the_poles(n):
    # 1/Gamma(x) = Gamma(1 - x) sin(pi x) / pi: at x = -n, -2 (-1)^n n! digamma(n + 1).
    closed = -2 * (-1) ** n * math.factorial(n) * float(mp.digamma(n + 1))
    assert second(dsp.rgamma, -float(n)) == pytest.approx(closed, rel=1e-12)
    assert closed == pytest.approx(mp_diff(mp.rgamma, -n, 2), rel=1e-20)


# --- elliptic integrals at m = 0 and m = 1 --------------------------------------------------


@pytest.mark.parametrize("order", [2, 3])
def test_ellipk_and_ellipe_derivatives_at_zero(order):
    def deriv(fun, at=0.0):
        g = fun
        for _ in range(order):
            g = dk.grad(g)
        return float(g(at))

    assert deriv(dsp.ellipk) == pytest.approx(mp_diff(mp.ellipk, 0, order), rel=1e-13)
    assert deriv(dsp.ellipe) == pytest.approx(mp_diff(mp.ellipe, 0, order), rel=1e-13)
    # ellipkm1(p) = K(1 - p): at p = 1 the derivatives of K at 0, signs alternating
    assert deriv(dsp.ellipkm1, 1.0) == pytest.approx((-1) ** order * mp_diff(mp.ellipk, 0, order),
                                                rel=1e-13)


def test_ellipk_and_ellipe_derivatives_near_zero_match_mpmath():
    m = np.array([-0.3, -0.05, 1e-8, 0.02, 0.0999, 0.1001, 0.5, 0.9, 0.999999])
    for fun, ref in ((dsp.ellipk, mp.ellipk), (dsp.ellipe, mp.ellipe)):
        expected = [mp_diff(ref, v) for v in m]
        np.testing.assert_allclose(both_engines(fun, m), expected, rtol=1e-12)
    p = np.array([1e-12, 1e-3, 0.5, 0.95, 1.0, 1.05])
    expected = [-mp_diff(mp.ellipk, 1 - mp.mpf(v)) for v in p]
    np.testing.assert_allclose(both_engines(dsp.ellipkm1, p), expected, rtol=1e-10)


def test_elliptic_poles_are_infinite_with_one_sided_limits():
    # K'(m) ~ 1 / (2 (1 - m)) as m -> 1-: K' and K'' are +inf at 1
    np.testing.assert_array_equal(both_engines(dsp.ellipk, [1.0]), [INF])
    assert second(dsp.ellipk, 1.0) == INF
    # ellipkm1(p) = K(1 - p) ~ -log(p) / 2: -inf, then +inf
    np.testing.assert_array_equal(both_engines(dsp.ellipkm1, [0.0]), [-INF])
    assert second(dsp.ellipkm1, 0.0) == INF


# --- Bessel functions at their pole x = 0 ----------------------------------------------------


@pytest.mark.parametrize("name, sign", [("y0", 1), ("y1", 1), ("k0e", -1), ("k1e", -1)])
def test_bessel_derivative_at_zero_is_the_one_sided_limit(name, sign):
    fun = getattr(dsp, name)
    np.testing.assert_array_equal(both_engines(fun, [0.0]), [sign * INF])
    # Y ~ (2/pi) log x or -c / x^n: Y'' -> -inf; K ~ -log x or c / x^n: K'' -> +inf
    assert second(fun, 0.0) == -sign * INF


@pytest.mark.parametrize("v", [0.0, 1.0, 2.0, 0.5, 2.5])
def test_bessel_of_order_v_derivative_at_zero(v):
    x = np.zeros(1)
    np.testing.assert_array_equal(both_engines(lambda s: dsp.yv(v, s), x), [INF])
    np.testing.assert_array_equal(both_engines(lambda s: dsp.kv(v, s), x), [-INF])
    np.testing.assert_array_equal(both_engines(lambda s: dsp.kve(v, s), x), [-INF])


def test_bessel_of_negative_non_integer_order_at_zero():
    # J_{-3/2}(x) = -sqrt(2 / (pi x)) (cos x / x + sin x) -> -inf: J' -> +inf;
    # J_{-5/2} -> +inf, J' -> -inf (the recurrence would give inf - inf)
    for v, expected in ((-1.5, INF), (-2.5, -INF)):
        np.testing.assert_array_equal(both_engines(lambda s, v=v: dsp.jv(v, s), [0.0]),
                                      [expected])
    # and next to the pole the recurrences agree with mpmath
    x = np.array([1e-6, 1e-3, 0.5])
    np.testing.assert_allclose(both_engines(dsp.k0e, x),
                               [mp_diff(lambda s: mp.besselk(0, s) * mp.exp(s), v) for v in x],
                               rtol=1e-10)
    np.testing.assert_allclose(both_engines(lambda s: dsp.yv(1.0, s), x),
                               [mp_diff(lambda s: mp.bessely(1, s), v) for v in x], rtol=1e-10)


# --- lambertw at its branch point -------------------------------------------------------------


def test_lambertw_at_the_branch_point():
    branch = -math.exp(-1.0)  # the float nearest -1/e, where SciPy's W is nan
    real_w = lambda v: dk.numpy.real(dsp.lambertw(v))  # noqa: E731 (complex128, as SciPy)
    np.testing.assert_array_equal(both_engines(real_w, [branch]), [INF])
    # W ~ -1 + sqrt(2 (e x + 1)): W'' -> -inf
    assert second(real_w, branch) == -INF
    x = np.array([-0.367, -0.2, 0.0, 3.0])
    np.testing.assert_allclose(both_engines(real_w, x),
                               [mp_diff(mp.lambertw, v) for v in x], rtol=1e-10)


# --- exprel: every derivative, and overflow --------------------------------------------------


@pytest.mark.parametrize("order", [1, 2, 3])
def test_exprel_derivatives_match_mpmath(order):
    def exprel(s):
        return mp.expm1(s) / s if s != 0 else mp.mpf(1)

    g = dsp.exprel
    for _ in range(order):
        g = dk.grad(g)
    for x in (-40.0, -2.5, -1.0, -1e-3, 0.0, 1e-9, 1.5, 2.5, 30.0, 300.0, 750.0):
        expected = float(mp.quad(lambda t, x=x: t ** order * mp.exp(x * t), [0, 1]))
        assert float(g(x)) == pytest.approx(expected, rel=1e-12), (order, x)
    assert float(dk.grad(dsp.exprel)(2.5)) == pytest.approx(mp_diff(exprel, 2.5), rel=1e-12)


def test_exprel_at_overflow_is_infinite_and_the_hessian_has_no_nan():
    np.testing.assert_array_equal(both_engines(dsp.exprel, [1000.0]), [INF])
    assert second(dsp.exprel, 1000.0) == INF
    u = np.array([1.0, -1.0])
    with np.errstate(all="ignore"):
        h = np.asarray(dk.hessian(lambda x: (dsp.exprel(x) * u).sum())(np.array([1000.0,
                                                                                  -1000.0])))
    assert h[0, 0] == INF and h[0, 1] == 0 and h[1, 0] == 0
    assert h[1, 1] == pytest.approx(-2 / 1000 ** 3 * (1 - 1 / 1000 + 0.0), rel=1e-2)


# --- ndtri_exp and erfcx in the tails ---------------------------------------------------------


def test_ndtri_exp_derivative_at_the_ends_and_far_in_the_tail():
    np.testing.assert_array_equal(both_engines(dsp.ndtri_exp, [-INF, 0.0]), [0.0, INF])
    y = np.array([-1e4, -50.0, -1.0, -1e-3])
    # d/dy ndtri(exp(y)) = exp(y) / pdf(x), x = ndtri(exp(y)), in 40 digits
    expected = []
    for v in y:
        x = -mp.sqrt(2) * mp.erfinv(1 - 2 * mp.exp(v)) if v > -5 else \
            mp.findroot(lambda s, v=v: mp.log(mp.ncdf(s)) - v, float(-np.sqrt(-2 * v)))
        expected.append(float(mp.exp(v) / mp.npdf(x)))
    np.testing.assert_allclose(both_engines(dsp.ndtri_exp, y), expected, rtol=1e-10)


def test_erfcx_derivative_far_right():
    x = np.array([10.0, 49.0, 51.0, 1e3, 1e8])
    expected = [float(2 * v * mp.exp(mp.mpf(v) ** 2) * mp.erfc(v) - 2 / mp.sqrt(mp.pi))
                for v in x]
    np.testing.assert_allclose(both_engines(dsp.erfcx, x), expected, rtol=1e-12)
    np.testing.assert_array_equal(both_engines(dsp.erfcx, [INF]), [0.0])


# --- the incomplete gamma function at x = 0 ---------------------------------------------------


@pytest.mark.parametrize("fun, sign", [(dsp.gammainc, 1.0), (dsp.gammaincc, -1.0)])
def test_gammainc_hessian_at_x_zero(fun, sign):
    # P(1, x) = 1 - e^-x, P(2, x) = 1 - (1 + x) e^-x: d2P/dx2 = -1 and 1 at 0; d2P/da2 = 0
    # (P = 0 at x = 0 for every a); d2P/da dx = x^(a-1) e^-x (log x - digamma(a)) / Gamma(a)
    # -> -inf for a = 1, 0 for a = 2.
    def both(v):
        return fun(v[0], v[2]) + fun(v[1], v[3])

    with np.errstate(all="ignore"):
        h = np.asarray(dk.hessian(both)(np.array([1.0, 2.0, 0.0, 0.0])))
        h2 = np.asarray(dk.jacrev(dk.jacfwd(both))(np.array([1.0, 2.0, 0.0, 0.0])))
    expected = sign * np.array([[0, 0, -INF, 0], [0, 0, 0, 0], [-INF, 0, -1, 0], [0, 0, 0, 1]])
    np.testing.assert_array_equal(h, expected)
    np.testing.assert_array_equal(h2, expected)
    # a < 1: the density itself is +inf at 0, its a-derivative -inf
    with np.errstate(all="ignore"):
        g = dk.jacfwd(dk.grad(lambda a, x: fun(a, x), argnums=1), argnums=0)(0.5, 0.0)
    assert float(g) == -sign * INF
