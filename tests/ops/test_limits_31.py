"""One-sided limits, documented NaN and SciPy's dtypes/branches (issue 31, item 4):
``pseudo_huber`` at ``delta = 0``, ``divide`` at ``0 / 0``, ``hyp2f1``'s parameter
derivatives at z = 0.99 and z = 1, ``ellipkinc``/``ellipeinc`` for m > 1, ``binom`` where
``n - k + 1`` is a non-positive integer, ``lambertw``'s branches and dtype, ``softplus`` in
float32 and ``multivariate_normal.logpdf(allow_singular=True)``.

Oracles: closed forms, mpmath, central finite differences of SciPy (tolerances stated),
and the two engines against each other.
"""

import math

import mpmath as mp
import numpy as np
import pytest
import scipy.special as sc
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

import diffkit as dk
import diffkit.numpy as dnp
import diffkit.scipy.special as dsp
from diffkit.scipy import stats as dst

SETTINGS = settings(max_examples=20, deadline=None)


def both(f, x):
    """``jacfwd`` and ``jacrev`` of ``f`` at ``x``, asserted equal to rounding (NaN and
    infinities in the same places); returns one."""
    fwd, rev = dk.jacfwd(f)(x), dk.jacrev(f)(x)
    np.testing.assert_allclose(fwd, rev, rtol=1e-14, atol=1e-15)
    return fwd


# --- pseudo_huber at delta = 0 ---------------------------------------------------------------


@SETTINGS
@given(st.floats(-5, 5).filter(lambda r: abs(r) > 1e-3))
def test_pseudo_huber_delta_derivative_at_zero_is_abs_r(r):
    f = lambda v: dsp.pseudo_huber(v[0], v[1])  # noqa: E731
    point = np.array([0.0, r])
    np.testing.assert_allclose(both(f, point), [abs(r), 0.0], rtol=1e-14)
    # the one-sided second derivatives: pseudo_huber = delta |r| - delta^2 + O(delta^3)
    hessian = dk.hessian(f)(point)
    np.testing.assert_allclose(hessian, [[-2.0, np.sign(r)], [np.sign(r), 0.0]], rtol=1e-12)
    np.testing.assert_allclose(hessian, dk.jacrev(dk.jacrev(f))(point), rtol=1e-14)
    # matches the one-sided finite difference of SciPy (h = 1e-7: error ~ 2 h)
    h = 1e-7
    np.testing.assert_allclose((sc.pseudo_huber(h, r) - sc.pseudo_huber(0.0, r)) / h, abs(r),
                               rtol=1e-6, atol=1e-6)


def test_pseudo_huber_at_the_origin_and_near_zero():
    f = lambda v: dsp.pseudo_huber(v[0], v[1])  # noqa: E731
    np.testing.assert_array_equal(both(f, np.array([0.0, 0.0])), [0.0, 0.0])
    for delta in (1e-6, 1e-3, 0.5):   # continuous at delta -> 0+: the limit |r| is approached
        r = 1.7
        exact = delta * (math.sqrt(1 + (r / delta) ** 2) - 1) ** 2 / math.sqrt(1 + (r / delta) ** 2)
        np.testing.assert_allclose(both(f, np.array([delta, r]))[0], exact, rtol=1e-12)


# --- divide at 0 / 0 ------------------------------------------------------------------------


def test_divide_by_zero_numerator_derivative():
    for name in ("divide", "true_divide"):
        div = getattr(dnp, name)
        f = lambda v, div=div: div(v[0], v[1])  # noqa: E731
        # 0 / 0 is NaN, and so is its derivative in both arguments
        assert np.all(np.isnan(both(f, np.array([0.0, 0.0]))))
        assert np.all(np.isnan(dk.hessian(f)(np.array([0.0, 0.0]))[1]))
        # x / 0 with x != 0: the one-sided infinities of the pole (as 1 / 0 = inf)
        np.testing.assert_array_equal(both(f, np.array([2.0, 0.0])), [np.inf, -np.inf])
        np.testing.assert_array_equal(both(f, np.array([-2.0, -0.0])), [-np.inf, np.inf])
        # the 0 x inf rule: a zero tangent or cotangent still gives 0
        _, tangent = dk.jvp(f, (np.array([0.0, 0.0]),), (np.array([0.0, 1.0]),))
        assert np.isnan(tangent)
        _, tangent = dk.jvp(f, (np.array([0.0, 0.0]),), (np.array([0.0, 0.0]),))
        assert tangent == 0.0
    # elementwise: only the 0 / 0 entry is NaN
    x, y = np.array([0.0, 1.0, 0.0]), np.array([0.0, 0.0, 2.0])
    jac = dk.jacrev(lambda a: dnp.divide(a, y))(x)
    assert np.isnan(jac[0, 0]) and jac[1, 1] == np.inf and jac[2, 2] == 0.5


def test_divide_float32_keeps_its_dtype():
    v = np.array([1.0, 0.0], np.float32)
    assert dk.jacfwd(lambda a: a[0] / a[1])(v).dtype == np.float32


# --- hyp2f1 in its parameters at z = 0.99 and z = 1 ------------------------------------------


def _mp_partials(a, b, c, z):
    mp.mp.dps = 30
    f = lambda *v: mp.hyp2f1(*v, z)  # noqa: E731
    return [float(mp.diff(f, (a, b, c), tuple(int(i == j) for i in range(3))))
            for j in range(3)]


@pytest.mark.parametrize("z", [0.99, 1.0])
def test_hyp2f1_parameter_derivatives_near_and_at_one(z):
    v = np.array([0.5, 0.3, 1.5])
    f = lambda p: dsp.hyp2f1(p[0], p[1], p[2], z)  # noqa: E731
    # against 30-digit mpmath: rtol 1e-12 (the series at 0.99 sums ~4000 terms)
    np.testing.assert_allclose(both(f, v), _mp_partials(*v, z), rtol=1e-12)


def test_hyp2f1_gauss_theorem_second_derivatives():
    v = np.array([0.2, 0.4, 2.1])
    f = lambda p: dsp.hyp2f1(p[0], p[1], p[2], 1.0)  # noqa: E731
    mp.mp.dps = 30
    g = lambda a, b, c: mp.gamma(c) * mp.gamma(c - a - b) / (mp.gamma(c - a) * mp.gamma(c - b))  # noqa: E731,E501
    exact = [[float(mp.diff(g, tuple(v), tuple(int(k == i) + int(k == j) for k in range(3))))
              for j in range(3)] for i in range(3)]
    np.testing.assert_allclose(dk.hessian(f)(v), exact, rtol=1e-11)
    # c - a - b <= 0: SciPy's value is inf, the derivatives NaN (documented)
    assert np.all(np.isnan(dk.grad(f)(np.array([1.0, 1.0, 1.5]))))


# --- ellipkinc, ellipeinc for m > 1 ---------------------------------------------------------


@pytest.mark.parametrize("fn", [dsp.ellipkinc, dsp.ellipeinc])
def test_elliptic_incomplete_beyond_m_1_is_nan_as_scipy(fn):
    f = lambda v: fn(v[0], v[1])  # noqa: E731
    for m in (1.01, 2.0):
        point = np.array([0.3, m])
        assert np.isnan(getattr(sc, fn.__name__)(0.3, m))   # SciPy's value
        assert np.all(np.isnan(both(f, point)))
        assert np.all(np.isnan(dk.hessian(f)(point)))
    # below: finite and equal to finite differences of SciPy (h = 1e-6, rtol 1e-6)
    point, h = np.array([0.3, 0.9]), 1e-6
    scipy_f = getattr(sc, fn.__name__)
    fd = [(scipy_f(0.3 + h, 0.9) - scipy_f(0.3 - h, 0.9)) / (2 * h),
          (scipy_f(0.3, 0.9 + h) - scipy_f(0.3, 0.9 - h)) / (2 * h)]
    np.testing.assert_allclose(both(f, point), fd, rtol=1e-6)


# --- binom at the poles of gamma(n - k + 1) -------------------------------------------------


@SETTINGS
@given(st.integers(1, 256).map(lambda i: i / 64), st.integers(0, 3))
def test_binom_where_n_minus_k_plus_1_is_a_nonpositive_integer(n, j):
    k = n + 1 + j    # n - k + 1 = -j exactly (n a multiple of 1/64)
    assert abs(sc.binom(n, k)) < 1e-12
    f = lambda v: dsp.binom(v[0], v[1])  # noqa: E731
    # d/dn = gamma(n + 1) / gamma(k + 1) * (1/gamma)'(-j), (1/gamma)'(-j) = (-1)^j j!
    slope = math.gamma(n + 1) / math.gamma(k + 1) * (-1) ** j * math.factorial(j)
    np.testing.assert_allclose(both(f, np.array([n, k])), [slope, -slope], rtol=1e-10)
    # second derivatives against mpmath's binomial (30 digits)
    mp.mp.dps = 30
    hessian = dk.hessian(f)(np.array([n, k]))
    exact = [[float(mp.diff(mp.binomial, (n, k),
                            (int(i == 0) + int(col == 0), int(i == 1) + int(col == 1))))
              for col in range(2)] for i in range(2)]
    np.testing.assert_allclose(hessian, exact, rtol=1e-8, atol=1e-12)


# --- lambertw: branches and SciPy's dtype ---------------------------------------------------


@pytest.mark.parametrize("k", [0, -1, 1, -2])
def test_lambertw_branches_values_dtype_and_derivative(k):
    x = np.array([-0.3, -0.1, 0.5, 2.0]) if k != -1 else np.array([-0.3, -0.2, -0.05])
    out = dsp.lambertw(dk.jvp(lambda v: v, (x,), (x,))[0], k=k)
    assert out.dtype == sc.lambertw(x, k).dtype == np.complex128
    np.testing.assert_allclose(out, sc.lambertw(x, k), rtol=1e-14)
    w = sc.lambertw(x, k)
    exact = w / (x * (1 + w))
    _, tangent = dk.jvp(lambda v: dsp.lambertw(v, k=k), (x,), (np.ones_like(x),))
    np.testing.assert_allclose(tangent, exact, rtol=1e-12)
    # reverse mode: the real and imaginary parts separately
    for part, expected in ((dnp.real, exact.real), (dnp.imag, exact.imag)):
        grad = dk.grad(lambda v, part=part: dnp.sum(part(dsp.lambertw(v, k=k))))(x)
        np.testing.assert_allclose(grad, expected, rtol=1e-12, atol=1e-15)


def test_lambertw_lower_branch_limits_and_complex_input():
    branch = -math.exp(-1.0)
    _, down = dk.jvp(lambda v: dsp.lambertw(v, k=-1), (branch,), (1.0,))
    _, up = dk.jvp(lambda v: dsp.lambertw(v, k=0), (branch,), (1.0,))
    assert down == -np.inf and up == np.inf
    _, at_zero = dk.jvp(lambda v: dsp.lambertw(v, k=-1), (0.0,), (1.0,))
    assert at_zero == -np.inf
    z = np.array([1.0 + 1.0j, -2.0 + 0.5j])
    _, tangent = dk.jvp(dsp.lambertw, (z,), (np.ones(2, complex),))
    w = sc.lambertw(z)
    np.testing.assert_allclose(tangent, w / (z * (1 + w)), rtol=1e-12)
    with pytest.raises(TypeError, match="integer"):
        dsp.lambertw(1.0, k=0.5)


# --- softplus in float32 ----------------------------------------------------------------------


def test_softplus_float32_jacobians_stay_float32():
    x = np.array([-2.0, 0.5, 3.0], np.float32)
    for jac in (dk.jacfwd(dsp.softplus)(x), dk.jacrev(dsp.softplus)(x),
                dk.jacfwd(lambda v: dnp.logaddexp(v, 0.0))(x)):
        assert jac.dtype == np.float32
        np.testing.assert_allclose(np.diag(jac), sc.expit(x.astype(np.float64)), rtol=1e-6)
    assert dk.hessian(lambda v: dnp.sum(dsp.softplus(v)))(x).dtype == np.float32


# --- multivariate_normal.logpdf(allow_singular=True) ------------------------------------------


def _singular_case():
    basis = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 2.0]])
    return basis @ np.diag([2.0, 0.5]) @ basis.T, np.array([0.1, -0.2, 0.3]), basis


def test_mvn_allow_singular_values_and_gradients():
    cov, mean, basis = _singular_case()
    inside = mean[:, None] + basis @ np.array([[0.3, 1.0], [-0.4, 0.2]])  # in the support
    points = np.concatenate([inside.T, [[1.0, 0.0, 0.0]]])          # the last one outside
    f = lambda x: dst.multivariate_normal.logpdf(x, mean, cov, allow_singular=True)  # noqa: E731
    reference = scipy.stats.multivariate_normal.logpdf(points, mean, cov, allow_singular=True)
    np.testing.assert_allclose(f(dk.jvp(lambda v: v, (points,), (points,))[0]), reference,
                               rtol=1e-12)
    assert reference[-1] == -np.inf
    jac = both(f, points)
    pinv = np.linalg.pinv(cov)
    for i in range(2):   # -pinv(cov) (x - mean) at points in the support (rtol 1e-10)
        np.testing.assert_allclose(jac[i, i], -pinv @ (points[i] - mean), rtol=1e-10,
                                   atol=1e-12)
    np.testing.assert_array_equal(jac[2], 0.0)   # -inf outside: constant
    # in the covariance, along a perturbation that keeps the rank: FD of SciPy (h = 1e-6)
    direction = basis @ np.array([[0.3, 0.1], [0.1, -0.2]]) @ basis.T
    g = lambda c: dst.multivariate_normal.logpdf(points[0], mean, c, allow_singular=True)  # noqa: E731,E501
    h = 1e-6
    fd = (scipy.stats.multivariate_normal.logpdf(points[0], mean, cov + h * direction,
                                                 allow_singular=True)
          - scipy.stats.multivariate_normal.logpdf(points[0], mean, cov - h * direction,
                                                   allow_singular=True)) / (2 * h)
    np.testing.assert_allclose(np.sum(dk.grad(g)(cov) * direction), fd, rtol=1e-6)
    # vmap over points equals the loop
    np.testing.assert_allclose(dk.vmap(dk.grad(f))(points[:2]),
                               np.stack([dk.grad(f)(p) for p in points[:2]]), rtol=1e-12)


def test_mvn_allow_singular_rejects_an_indefinite_matrix():
    cov = np.array([[1.0, 0.0], [0.0, -1.0]])
    with pytest.raises(ValueError, match="positive semidefinite"):
        dk.grad(lambda x: dst.multivariate_normal.logpdf(x, np.zeros(2), cov,
                                                         allow_singular=True))(np.ones(2))
