"""Tests for diffkit.scipy.special beyond the generic records (tests/records/ops/special.py):
values against SciPy, dtypes, derivatives against closed forms and SciPy's own derivative
functions, the conventions at special points in both engines, the far tail of log_ndtr,
the derivatives of gammainc in its shape parameter, errors, and large arrays (the reverse
engine then keeps only what each rule reads)."""

import math

import numpy as np
import pytest
import scipy.special as sc

import diffkit as dk
import diffkit.numpy as dnp
import diffkit.scipy.special as sp
from diffkit.errors import NoRuleError

RTOL = 1e-7
# the high-precision references of a few tests
_MPMATH = "mpmath is in the test extra: pip install -e '.[test]'"

X = np.array([0.3, 0.7, 1.3, 2.2])      # inside every unary domain below
UNIT = np.array([0.1, 0.35, 0.6, 0.85])


def diagonal_derivative(f, x):
    """The derivative of an elementwise function, by both engines (they must agree)."""
    forward = dk.jvp(f, (x,), (np.ones_like(x),))[1]
    reverse = dk.grad(lambda v: dnp.sum(f(v)))(x)
    np.testing.assert_allclose(forward, reverse, rtol=1e-12, atol=1e-300)
    return reverse


# --- values and dtypes -------------------------------------------------------------------

UNARY_VALUES = [
    ("erf", X), ("erfc", X), ("erfinv", UNIT), ("erfcinv", UNIT), ("erfcx", X), ("erfi", X),
    ("dawsn", X), ("ndtr", X), ("ndtri", UNIT), ("log_ndtr", X), ("ndtri_exp", -X),
    ("gamma", X), ("gammaln", X), ("loggamma", X), ("rgamma", X), ("digamma", X), ("psi", X),
    ("expit", X), ("logit", UNIT), ("log_expit", X), ("entr", X), ("i0", X), ("i0e", X),
    ("i1", X), ("i1e", X), ("j0", X), ("j1", X), ("y0", X), ("y1", X), ("k0", X),
    ("k0e", X), ("k1", X), ("k1e", X), ("exp1", X), ("expi", X), ("exprel", X),
    ("spence", X), ("cosm1", X), ("exp10", X), ("ellipk", UNIT), ("ellipkm1", UNIT),
    ("ellipe", UNIT), ("wrightomega", X),
]
BINARY_VALUES = [
    ("owens_t", X, UNIT), ("polygamma", np.array([0, 1, 2, 3]), X), ("beta", X, UNIT),
    ("betaln", X, UNIT), ("poch", X, UNIT), ("binom", X + 3, UNIT), ("gammainc", X, UNIT),
    ("gammaincc", X, UNIT), ("gammaincinv", X, UNIT), ("gammainccinv", X, UNIT),
    ("zeta", X + 1.5, X), ("xlogy", X, UNIT), ("xlog1py", X, UNIT), ("rel_entr", X, UNIT),
    ("kl_div", X, UNIT), ("huber", UNIT, X), ("pseudo_huber", UNIT, X),
    ("jv", np.array([0.0, 1.5, 2.0, 3.5]), X), ("yv", X, X), ("iv", X, X), ("ive", X, X),
    ("kv", X, X), ("kve", X, X), ("jn", np.array([0, 1, 2, 3]), X),
    ("yn", np.array([0, 1, 2, 3]), X), ("kn", np.array([0, 1, 2, 3]), X),
    ("expn", np.array([0, 1, 2, 3]), X), ("boxcox", X, UNIT - 0.5),
    ("boxcox1p", X, UNIT - 0.5), ("inv_boxcox", X, UNIT - 0.5),
    ("inv_boxcox1p", X, UNIT - 0.5),
]
TERNARY_VALUES = [
    ("betainc", X, X + 1, UNIT), ("betaincc", X, X + 1, UNIT), ("betaincinv", X, X + 1, UNIT),
    ("betainccinv", X, X + 1, UNIT), ("hyp1f1", X, X + 1, UNIT),
]


@pytest.mark.parametrize(("name", "args"), [(n, a) for n, *a in
                                            UNARY_VALUES + BINARY_VALUES + TERNARY_VALUES],
                         ids=[v[0] for v in UNARY_VALUES + BINARY_VALUES + TERNARY_VALUES])
def test_values_match_scipy(name, args):
    np.testing.assert_allclose(getattr(sp, name)(*args), getattr(sc, name)(*args),
                               rtol=1e-14, atol=0)


def test_other_values_match_scipy():
    np.testing.assert_allclose(sp.hyp2f1(1.0, 2.0, 3.0, UNIT - 0.5),
                               sc.hyp2f1(1.0, 2.0, 3.0, UNIT - 0.5), rtol=1e-14)
    for ours, theirs in zip(sp.fresnel(X), sc.fresnel(X)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-14)
    for ours, theirs in zip(sp.sici(X), sc.sici(X)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-14)
    for ours, theirs in zip(sp.shichi(X), sc.shichi(X)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-14)
    np.testing.assert_allclose(sp.zeta(X + 1.5), sc.zeta(X + 1.5), rtol=1e-14)
    np.testing.assert_allclose(sp.zeta(0.5), sc.zeta(0.5), rtol=1e-14)  # Riemann's, x < 1
    np.testing.assert_allclose(sp.multigammaln(X + 2, 3), sc.multigammaln(X + 2, 3),
                               rtol=1e-14)
    np.testing.assert_allclose(sp.lambertw(X), sc.lambertw(X), rtol=1e-14)
    np.testing.assert_allclose(sp.lambertw(-0.5), sc.lambertw(-0.5), rtol=1e-14)  # complex
    assert sp.lambertw(X).dtype == sc.lambertw(X).dtype == np.complex128
    np.testing.assert_allclose(sp.softmax(X), sc.softmax(X), rtol=1e-14)
    np.testing.assert_allclose(sp.log_softmax(X), sc.log_softmax(X), rtol=1e-14)
    if hasattr(dk.numpy, "sinc"):  # SciPy's sinc is NumPy's
        assert sp.sinc is dk.numpy.sinc


def test_float32_stays_float32():
    x32 = X.astype(np.float32)
    for f in (sp.erf, sp.gammaln, sp.log_ndtr, sp.i1e, sp.expit):
        assert f(x32).dtype == np.float32, f.__name__
        assert dk.grad(lambda v, f=f: dnp.sum(f(v)))(x32).dtype == np.float32, f.__name__
    # orders and Python scalars do not promote
    assert sp.jv(2.5, x32).dtype == np.float32
    assert sp.jv(np.array([0.0, 1.0, 2.0, 3.0]), x32).dtype == np.float32
    assert sp.polygamma(1, x32).dtype == np.float32
    assert sp.gammainc(1.5, x32).dtype == np.float32
    assert sp.xlogy(2.0, x32).dtype == np.float32
    assert sp.fresnel(x32)[1].dtype == np.float32
    assert dk.grad(lambda a: dnp.sum(sp.gammainc(a, 2.0)))(x32).dtype == np.float32
    # integers become float64, as in SciPy
    assert sp.gamma(np.array([1, 2, 3])).dtype == np.float64
    assert sp.gamma(3) == 2.0


# --- derivatives against closed forms -----------------------------------------------------


def test_gamma_family_closed_forms():
    np.testing.assert_allclose(diagonal_derivative(sp.gammaln, X), sc.digamma(X), rtol=RTOL)
    np.testing.assert_allclose(diagonal_derivative(sp.digamma, X), sc.polygamma(1, X),
                               rtol=RTOL)
    np.testing.assert_allclose(diagonal_derivative(sp.gamma, X), sc.gamma(X) * sc.digamma(X),
                               rtol=RTOL)
    # higher orders: gammaln''' = polygamma(2)
    third = dk.grad(dk.grad(dk.grad(sp.gammaln)))
    for x in X:
        np.testing.assert_allclose(third(x), sc.polygamma(2, x), rtol=RTOL)
    hessian = dk.hessian(lambda v: dnp.sum(sp.gammaln(v)))(X)
    np.testing.assert_allclose(hessian, np.diag(sc.polygamma(1, X)), rtol=RTOL, atol=1e-300)
    np.testing.assert_allclose(dk.grad(lambda a: sp.betaln(a, 2.5))(1.5),
                               sc.digamma(1.5) - sc.digamma(4.0), rtol=RTOL)


def test_error_function_closed_forms():
    np.testing.assert_allclose(diagonal_derivative(sp.erf, X),
                               2 / np.sqrt(np.pi) * np.exp(-X ** 2), rtol=RTOL)
    np.testing.assert_allclose(diagonal_derivative(sp.erfinv, UNIT),
                               np.sqrt(np.pi) / 2 * np.exp(sc.erfinv(UNIT) ** 2), rtol=RTOL)
    np.testing.assert_allclose(diagonal_derivative(sp.ndtri, UNIT),
                               1 / (np.exp(-sc.ndtri(UNIT) ** 2 / 2) / np.sqrt(2 * np.pi)),
                               rtol=RTOL)
    # erfinv'' = 2 erfinv * erfinv'^2
    second = dk.grad(dk.grad(sp.erfinv))(0.4)
    first = np.sqrt(np.pi) / 2 * np.exp(sc.erfinv(0.4) ** 2)
    np.testing.assert_allclose(second, 2 * sc.erfinv(0.4) * first ** 2, rtol=RTOL)


def test_log_ndtr_far_tail():
    mpmath = pytest.importorskip("mpmath", reason=_MPMATH)
    mpmath.mp.dps = 50
    for x in (-30.0, -100.0, -1000.0, 8.0, 30.0):
        cdf = mpmath.ncdf(x)
        pdf = mpmath.npdf(x)
        slope = float(pdf / cdf)
        curvature = float(-x * pdf / cdf - (pdf / cdf) ** 2)
        np.testing.assert_allclose(dk.grad(sp.log_ndtr)(x), slope, rtol=RTOL)
        np.testing.assert_allclose(dk.jvp(sp.log_ndtr, (x,), (1.0,))[1], slope, rtol=RTOL)
        if x < 0:  # -1 + 1/x^2 + ...: the slope's own derivative, no cancellation of pdf/cdf
            np.testing.assert_allclose(dk.grad(dk.grad(sp.log_ndtr))(x), curvature,
                                       rtol=RTOL)
    assert np.isfinite(dk.grad(sp.log_ndtr)(-1e4))


def test_bessel_derivatives_match_scipy():
    v = np.array([0.0, 0.5, 1.0, 2.5])
    for ours, derivative in ((sp.jv, sc.jvp), (sp.yv, sc.yvp), (sp.iv, sc.ivp),
                             (sp.kv, sc.kvp)):
        first = dk.vmap(dk.grad(ours, argnums=1))(v, X)   # vmap of grad with batched orders
        np.testing.assert_allclose(first, derivative(v, X, 1), rtol=RTOL)
        second = dk.vmap(dk.grad(dk.grad(ours, argnums=1), argnums=1))(v, X)
        np.testing.assert_allclose(second, derivative(v, X, 2), rtol=1e-6)
    np.testing.assert_allclose(diagonal_derivative(sp.j0, X), -sc.j1(X), rtol=RTOL)
    np.testing.assert_allclose(diagonal_derivative(sp.k1, X), sc.kvp(1, X), rtol=RTOL)
    np.testing.assert_allclose(diagonal_derivative(sp.i1e, -X),
                               sc.ivp(1, -X) * np.exp(-X) + sc.i1e(-X), rtol=RTOL)
    np.testing.assert_allclose(diagonal_derivative(lambda x: sp.kve(1.5, x), X),
                               (sc.kvp(1.5, X) + sc.kv(1.5, X)) * np.exp(X), rtol=RTOL)


def test_owens_t_partials():
    h, a = 0.7, 1.3
    dh, da = dk.grad(sp.owens_t, argnums=(0, 1))(h, a)
    phi = np.exp(-h * h / 2) / np.sqrt(2 * np.pi)
    np.testing.assert_allclose(dh, -phi * sc.erf(a * h / np.sqrt(2)) / 2, rtol=RTOL)
    np.testing.assert_allclose(da, np.exp(-h * h * (1 + a * a) / 2) / (2 * np.pi * (1 + a * a)),
                               rtol=RTOL)


def test_incomplete_functions_in_x():
    a, b, x = 2.5, 1.5, 0.3
    np.testing.assert_allclose(dk.grad(sp.gammainc, argnums=1)(a, x),
                               x ** (a - 1) * np.exp(-x) / sc.gamma(a), rtol=RTOL)
    np.testing.assert_allclose(dk.grad(sp.betainc, argnums=2)(a, b, x),
                               x ** (a - 1) * (1 - x) ** (b - 1) / sc.beta(a, b), rtol=RTOL)
    y = sc.gammainc(a, x)
    np.testing.assert_allclose(dk.grad(sp.gammaincinv, argnums=1)(a, y) *
                               dk.grad(sp.gammainc, argnums=1)(a, x), 1.0, rtol=RTOL)
    np.testing.assert_allclose(dk.grad(sp.zeta, argnums=1)(3.0, 1.7),
                               -3.0 * sc.zeta(4.0, 1.7), rtol=RTOL)
    np.testing.assert_allclose(dk.grad(sp.expn, argnums=1)(3, 0.8), -sc.expn(2, 0.8), rtol=RTOL)
    np.testing.assert_allclose(dk.grad(sp.expn, argnums=1)(0, 0.8),
                               -np.exp(-0.8) / 0.8 * (1 + 1 / 0.8), rtol=RTOL)


def test_gammainc_derivatives_in_a():
    mpmath = pytest.importorskip("mpmath", reason=_MPMATH)
    mpmath.mp.dps = 40
    points = [(0.3, 0.01), (0.5, 2.0), (2.5, 1.0), (4.0, 30.0), (50.0, 45.0), (150.0, 160.0),
              (1.5, 200.0)]
    for a, x in points:
        def lower(s, x=x):
            return mpmath.gammainc(s, 0, x, regularized=True)

        def upper(s, x=x):
            return mpmath.gammainc(s, x, mpmath.inf, regularized=True)

        # the tail that is small keeps its relative accuracy
        small, sign = (lower, 1) if lower(a) < 0.5 else (upper, -1)
        expected = [sign * float(mpmath.diff(small, a, k)) for k in (1, 2, 3)]
        first = dk.grad(sp.gammainc)(a, x)
        np.testing.assert_allclose(first, expected[0], rtol=1e-9)
        np.testing.assert_allclose(dk.jvp(lambda s, x=x: sp.gammaincc(s, x), (a,), (1.0,))[1],
                                   -expected[0], rtol=1e-9)
        np.testing.assert_allclose(dk.hessian(sp.gammainc)(a, x), expected[1], rtol=1e-8)
        third = dk.grad(dk.grad(dk.grad(sp.gammainc)))(a, x)
        np.testing.assert_allclose(third, expected[2], rtol=1e-7, atol=1e-300)
    # the mixed second derivative is the a-derivative of the density
    a, x = 2.5, 1.7
    mixed = dk.jacfwd(dk.grad(sp.gammainc, argnums=1), argnums=0)(a, x)
    density = x ** (a - 1) * np.exp(-x) / sc.gamma(a)
    np.testing.assert_allclose(mixed, density * (np.log(x) - sc.digamma(a)), rtol=RTOL)
    # beyond the third derivative in a: a clear error
    with pytest.raises(NoRuleError, match="order 4"):
        dk.grad(dk.grad(dk.grad(dk.grad(sp.gammainc))))(a, x)


def test_betainc_derivatives_in_a_and_b():
    mpmath = pytest.importorskip("mpmath", reason=_MPMATH)
    mpmath.mp.dps = 40
    orders = [(1, 0), (0, 1), (2, 0), (1, 1), (0, 2), (2, 1), (0, 3)]
    for a, b, x in [(0.4, 2.5, 0.1), (2.5, 1.5, 0.6), (30.0, 4.0, 0.95), (1.0, 7.0, 0.02)]:
        def lower(s, u, x=x):
            return mpmath.betainc(s, u, 0, x, regularized=True)

        def upper(s, u, x=x):
            return mpmath.betainc(s, u, x, 1, regularized=True)

        small, sign = (lower, 1) if lower(a, b) < 0.5 else (upper, -1)
        gradient = dk.grad(sp.betainc, argnums=(0, 1))(a, b, x)
        hessian = dk.hessian(sp.betainc, argnums=(0, 1))(a, b, x)
        third_aab = dk.grad(dk.grad(dk.grad(sp.betainc, argnums=1), argnums=0), argnums=0)
        third_bbb = dk.grad(dk.grad(dk.grad(sp.betainc, argnums=1), argnums=1), argnums=1)
        got = {(1, 0): gradient[0], (0, 1): gradient[1], (2, 0): hessian[0][0],
               (1, 1): hessian[0][1], (0, 2): hessian[1][1], (2, 1): third_aab(a, b, x),
               (0, 3): third_bbb(a, b, x)}
        for order in orders:
            expected = sign * float(mpmath.diff(small, (a, b), order))
            np.testing.assert_allclose(got[order], expected, rtol=1e-9, err_msg=str(order))
        np.testing.assert_allclose(hessian[1][0], hessian[0][1], rtol=RTOL)
        np.testing.assert_allclose(dk.grad(sp.betaincc, argnums=(0, 1))(a, b, x),
                                   [-g for g in gradient], rtol=RTOL)
    # implicit differentiation of the inverse: I(a, b, betaincinv(a, b, y)) = y
    a, b, y = 2.5, 1.5, 0.3
    for argnum in (0, 1):
        np.testing.assert_allclose(
            dk.grad(lambda *ab: sp.betainc(*ab, sp.betaincinv(*ab, y)), argnums=argnum)(a, b),
            0.0, atol=1e-12)
    with pytest.raises(NoRuleError, match="order 4"):
        dk.grad(dk.grad(dk.grad(dk.grad(sp.betainc))))(a, b, 0.4)


def test_gammaincinv_in_a_by_implicit_differentiation():
    a, y = 2.5, 0.4
    x = sc.gammaincinv(a, y)
    eps = 1e-6
    expected = (sc.gammaincinv(a + eps, y) - sc.gammaincinv(a - eps, y)) / (2 * eps)
    np.testing.assert_allclose(dk.grad(sp.gammaincinv)(a, y), expected, rtol=1e-7)
    # d/da P(a, gammaincinv(a, y)) = 0
    np.testing.assert_allclose(dk.grad(lambda s: sp.gammainc(s, sp.gammaincinv(s, y)))(a), 0.0,
                               atol=1e-12)
    assert np.isclose(sp.gammainc(a, x), y)


def test_softmax_and_logsumexp():
    a = np.array([[0.3, -1.2, 2.0], [0.5, 0.1, -0.4]])
    b = np.array([[1.0, 2.0, 0.5], [0.3, 1.5, 2.5]])
    s = sc.softmax(a[0])
    np.testing.assert_allclose(dk.jacrev(sp.softmax)(a[0]), np.diag(s) - np.outer(s, s),
                               rtol=RTOL, atol=1e-15)
    np.testing.assert_allclose(dk.jacfwd(sp.log_softmax)(a[0]), np.eye(3) - s, rtol=RTOL)
    for kwargs in ({}, {"axis": 0}, {"axis": (0, 1)}, {"axis": -1, "keepdims": True},
                   {"b": b}, {"b": b, "axis": 1}, {"b": b[0], "axis": 1, "keepdims": True},
                   {"return_sign": True, "axis": 1}, {"b": -b, "return_sign": True}):
        ours, theirs = sp.logsumexp(a, **kwargs), sc.logsumexp(a, **kwargs)
        np.testing.assert_allclose(ours, theirs, rtol=1e-14)
        assert np.shape(ours[0] if isinstance(ours, tuple) else ours) == \
            np.shape(theirs[0] if isinstance(theirs, tuple) else theirs)
    # d/da and d/db in closed form
    total = dnp.sum(b * np.exp(a), axis=1, keepdims=True)
    grad_a, grad_b = dk.grad(lambda a, b: dnp.sum(sp.logsumexp(a, axis=1, b=b)),
                             argnums=(0, 1))(a, b)
    np.testing.assert_allclose(grad_a, b * np.exp(a) / total, rtol=RTOL)
    np.testing.assert_allclose(grad_b, np.exp(a) / total, rtol=RTOL)
    # a negative sum: nan without return_sign (as SciPy), sign -1 with it
    assert np.isnan(sp.logsumexp([1.0, 2.0], b=[1.0, -2.0]))
    value, sign = sp.logsumexp(np.array([1.0, 2.0]), b=np.array([1.0, -2.0]), return_sign=True)
    assert sign == -1 and np.isclose(value, np.log(2 * np.e ** 2 - np.e))


# --- conventions at special points, both engines -----------------------------------------


def both_engines(f, x):
    forward, reverse = dk.jacfwd(f)(x), dk.jacrev(f)(x)
    np.testing.assert_array_equal(forward, reverse)
    return forward


@pytest.mark.parametrize(("xlog", "log", "singular"), [(sp.xlogy, np.log, 0.0),
                                                       (sp.xlog1py, np.log1p, -1.0)])
def test_xlogy_convention_at_x_zero(xlog, log, singular):
    y = np.array([0.5, 2.0])
    dx = both_engines(lambda x: xlog(x, y), np.zeros(2))
    np.testing.assert_allclose(np.diag(dx), log(y), rtol=RTOL)
    dy = both_engines(lambda v: xlog(np.zeros(2), v), y)
    np.testing.assert_array_equal(dy, np.zeros((2, 2)))
    # at the singular point of the log too: d/dy is 0, no nan
    dy = both_engines(lambda v: xlog(np.zeros(2), v), np.array([singular, 1.0]))
    np.testing.assert_array_equal(dy, np.zeros((2, 2)))
    # the mixed second derivative survives at x == 0: d/dx d/dy = d/dy log(y)
    mixed = dk.grad(dk.grad(xlog, argnums=1), argnums=0)(0.0, 0.5)
    np.testing.assert_allclose(mixed, 1 / (0.5 - singular), rtol=RTOL)


def test_huber_at_the_kink():
    delta, r = np.array([1.0, 1.0]), np.array([1.0, -1.0])
    np.testing.assert_array_equal(np.diag(both_engines(lambda v: sp.huber(delta, v), r)), r)
    np.testing.assert_array_equal(both_engines(lambda d: sp.huber(d, r), delta),
                                  np.zeros((2, 2)))


def test_series_at_removable_singularities():
    # exprel at 0: 1/2 and 1/3 (exprel = sum x^k / (k+1)!)
    np.testing.assert_allclose(dk.grad(sp.exprel)(0.0), 0.5, rtol=RTOL)
    np.testing.assert_allclose(dk.grad(dk.grad(sp.exprel))(0.0), 1 / 3, rtol=RTOL)
    # boxcox at lmbda = 0: d/dl = log(x)^2 / 2, d2/dl2 = log(x)^3 / 3
    x = 2.5
    np.testing.assert_allclose(dk.grad(sp.boxcox, argnums=1)(x, 0.0), np.log(x) ** 2 / 2,
                               rtol=RTOL)
    np.testing.assert_allclose(dk.grad(dk.grad(sp.boxcox, argnums=1), argnums=1)(x, 0.0),
                               np.log(x) ** 3 / 3, rtol=RTOL)
    np.testing.assert_allclose(dk.grad(sp.boxcox, argnums=0)(x, 0.0), 1 / x, rtol=RTOL)
    # inv_boxcox at lmbda = 0: exp(y), d/dl = -exp(y) y^2 / 2
    y = 0.7
    np.testing.assert_allclose(dk.grad(sp.inv_boxcox, argnums=1)(y, 0.0),
                               -np.exp(y) * y ** 2 / 2, rtol=RTOL)
    np.testing.assert_allclose(dk.grad(sp.inv_boxcox1p, argnums=1)(y, 0.0),
                               -np.exp(y) * y ** 2 / 2, rtol=RTOL)
    # spence at 1: -1, then 1/2
    np.testing.assert_allclose(dk.grad(sp.spence)(1.0), -1.0, rtol=RTOL)
    np.testing.assert_allclose(dk.grad(dk.grad(sp.spence))(1.0), 0.5, rtol=RTOL)
    # complete elliptic integrals at m = 0: the limits pi/8 and -pi/8
    np.testing.assert_allclose(both_engines(sp.ellipk, np.array([0.0])), [[np.pi / 8]],
                               rtol=RTOL)
    np.testing.assert_allclose(both_engines(sp.ellipe, np.array([0.0])), [[-np.pi / 8]],
                               rtol=RTOL)
    np.testing.assert_allclose(dk.grad(sp.ellipkm1)(1.0), -np.pi / 8, rtol=RTOL)
    # Si'(0) = 1, Lambert W'(0) = 1
    np.testing.assert_allclose(dk.grad(lambda x: sp.sici(x)[0])(0.0), 1.0, rtol=RTOL)
    np.testing.assert_allclose(dk.grad(lambda x: dnp.real(sp.lambertw(x)))(0.0), 1.0,
                               rtol=RTOL)


def test_expit_keeps_accuracy_in_the_tails():
    for x in (-40.0, 40.0):
        np.testing.assert_allclose(dk.grad(sp.expit)(x), np.exp(-40.0) / (1 + np.exp(-40.0)) ** 2,
                                   rtol=RTOL)
    np.testing.assert_allclose(dk.grad(sp.log_expit)(-40.0), 1.0, rtol=RTOL)


# --- arguments without a derivative ------------------------------------------------------


@pytest.mark.parametrize(("name", "fun", "args", "argnum", "argname"), [
    ("jv", sp.jv, (1.5, 2.0), 0, "v"),
    ("kve", sp.kve, (1.5, 2.0), 0, "v"),
    ("polygamma", sp.polygamma, (1.0, 2.0), 0, "n"),
])
def test_no_derivative_raises_naming_the_argument(name, fun, args, argnum, argname):
    message = f"{name} has no derivative with respect to its argument '{argname}'"
    with pytest.raises(NoRuleError, match=message):
        dk.grad(fun, argnums=argnum)(*args)
    with pytest.raises(NoRuleError, match=message):
        dk.jacfwd(fun, argnums=argnum)(*args)
    # held fixed, it is fine, and vmap batches it
    others = [i for i in range(len(args)) if i != argnum]
    if others:
        dk.grad(fun, argnums=others[-1])(*args)
    batched = [np.stack([np.asarray(a), np.asarray(a)]) for a in args]
    np.testing.assert_allclose(dk.vmap(fun)(*batched), [fun(*args)] * 2, rtol=1e-14)


def test_integer_orders_pass_through_reverse_mode():
    n = np.array([0, 1, 2])
    np.testing.assert_allclose(dk.grad(lambda x: dnp.sum(sp.polygamma(n, x)))(np.full(3, 1.5)),
                               sc.polygamma(n + 1, 1.5), rtol=RTOL)


def test_argument_errors():
    with pytest.raises(TypeError, match=r"erf\(\)"):
        sp.erf(1.0, 2.0)
    with pytest.raises(TypeError, match=r"gammainc\(\)"):
        sp.gammainc(1.0)
    with pytest.raises(TypeError, match=r"erf\(\)"):
        sp.erf(1.0, out=np.zeros(()))
    assert sp.gammainc(a=2.0, x=1.0) == sc.gammainc(2.0, 1.0)
    with pytest.raises(TypeError, match="must be an integer"):
        sp.lambertw(1.0, k=0.5)
    with pytest.raises(ValueError, match="positive integer"):
        sp.multigammaln(3.0, 0)
    with pytest.raises(TypeError, match="out="):
        sp.zeta(2.0, 1.0, out=np.zeros(()))


# --- large arrays: the reverse engine frees what the rules do not read --------------------

_BIG = 9000  # 72 kB of float64: above the size from which the tape keeps placeholders

_UNARY_BIG = {name: domain for name, domain in UNARY_VALUES}
_BINARY_BIG = {name: (a, b) for name, a, b in BINARY_VALUES}


def _tile(values):
    return np.resize(values, _BIG)


@pytest.mark.parametrize("name", sorted(_UNARY_BIG))
def test_large_unary_gradients(name):
    f = getattr(sp, name)
    x = _tile(_UNARY_BIG[name])
    got = dk.grad(lambda v: dnp.sum(f(v)))(x)
    expected = dk.jvp(f, (x[:4],), (np.ones(4),))[1]
    np.testing.assert_allclose(got[:4], expected, rtol=1e-12)


@pytest.mark.parametrize("name", sorted(set(_BINARY_BIG) - {"zeta", "polygamma", "jv", "yv",
                                                            "iv", "ive", "kv", "kve", "jn",
                                                            "yn", "kn", "expn"}))
def test_large_binary_gradients(name):
    f = getattr(sp, name)
    a, b = (_tile(v) for v in _BINARY_BIG[name])
    got = dk.grad(lambda u, v: dnp.sum(f(u, v)), argnums=(0, 1))(a, b)
    for i in range(2):
        tangents = (np.ones(4) * (i == 0), np.ones(4) * (i == 1))
        expected = dk.jvp(f, (a[:4], b[:4]), tangents)[1]
        np.testing.assert_allclose(got[i][:4], expected, rtol=1e-12)


@pytest.mark.parametrize("name", ["zeta", "jv", "yv", "iv", "ive", "kv", "kve", "expn",
                                  "polygamma", "betainc", "betaincinv", "hyp1f1"])
def test_large_gradients_in_the_last_argument(name):
    f = getattr(sp, name)
    rows = {n: a for n, *a in BINARY_VALUES + TERNARY_VALUES}[name]
    fixed, x = [_tile(v) for v in rows[:-1]], _tile(rows[-1])
    got = dk.grad(lambda v: dnp.sum(f(*fixed, v)))(x)
    expected = dk.jvp(lambda v: f(*[u[:4] for u in fixed], v), (x[:4],), (np.ones(4),))[1]
    np.testing.assert_allclose(got[:4], expected, rtol=1e-12)


def test_large_lambertw_and_sici():
    x = _tile(X)
    w = sc.lambertw(x).real
    np.testing.assert_allclose(dk.grad(lambda v: dnp.sum(dnp.real(sp.lambertw(v))))(x),
                               w / (x * (1 + w)), rtol=1e-12)
    np.testing.assert_allclose(dk.grad(lambda v: dnp.sum(sp.sici(v)[1]))(x), np.cos(x) / x,
                               rtol=1e-12)


def test_multiple_results_large():
    x = _tile(X)
    got = dk.grad(lambda v: dnp.sum(sp.fresnel(v)[0] + 2 * sp.fresnel(v)[1]))(x)
    np.testing.assert_allclose(got, np.sin(np.pi * x ** 2 / 2) + 2 * np.cos(np.pi * x ** 2 / 2),
                               rtol=1e-12)
    assert math.isclose(dk.grad(lambda v: sp.shichi(v)[1])(0.5), math.cosh(0.5) / 0.5,
                        rel_tol=1e-12)


# --- the functions added for the rest of scipy.special ------------------------------------


def test_airy_and_struve_closed_forms_at_zero():
    ai_slope = dk.grad(lambda x: sp.airy(x)[0])(0.0)
    assert ai_slope == sc.airy(0.0)[1]
    assert dk.grad(lambda x: sp.airy(x)[1])(0.0) == 0.0          # Ai'' = x Ai
    np.testing.assert_allclose(dk.grad(lambda x: sp.airy(x)[3])(2.0),
                               2.0 * sc.airy(2.0)[2], rtol=1e-14)
    np.testing.assert_allclose(dk.grad(lambda x: sp.struve(0, x))(0.0), 2 / np.pi, rtol=1e-14)
    np.testing.assert_allclose(dk.grad(lambda x: sp.modstruve(0, x))(0.0), 2 / np.pi,
                               rtol=1e-14)
    # H_1(x) = 2 x^2 / (3 pi) + O(x^4)
    np.testing.assert_allclose(dk.grad(dk.grad(lambda x: sp.struve(1, x)))(0.0),
                               4 / (3 * np.pi), rtol=1e-14)
    assert dk.grad(lambda x: sp.struve(2.5, x))(0.0) == 0.0


def test_incomplete_elliptic_integrals_in_m():
    phi = np.array([0.3, 1.2, 2.5])
    # at m = 0: F = E = phi and dF/dm = -dE/dm = (phi - sin(phi) cos(phi)) / 4
    expected = (phi - np.sin(phi) * np.cos(phi)) / 4
    np.testing.assert_allclose(dk.vmap(dk.grad(sp.ellipkinc, argnums=1))(phi, np.zeros(3)),
                               expected, rtol=1e-14)
    np.testing.assert_allclose(dk.vmap(dk.grad(sp.ellipeinc, argnums=1))(phi, np.zeros(3)),
                               -expected, rtol=1e-14)
    # at m = 1 (|phi| < pi/2): dF/dm = (sec(phi) tan(phi) - asinh(tan(phi))) / 4
    phi = np.array([0.3, 1.2])
    limit = (np.tan(phi) / np.cos(phi) - np.arcsinh(np.tan(phi))) / 4
    np.testing.assert_allclose(dk.vmap(dk.grad(sp.ellipkinc, argnums=1))(phi, np.ones(2)),
                               limit, rtol=1e-12)
    # in phi: 1 / sqrt(1 - m sin^2) and sqrt(1 - m sin^2), for every phi
    np.testing.assert_allclose(dk.grad(sp.ellipkinc)(4.0, 0.5),
                               1 / np.sqrt(1 - 0.5 * np.sin(4.0) ** 2), rtol=1e-14)


def test_orthogonal_polynomial_slopes():
    theta = np.array([0.3, 1.1, 2.0])
    for n in (1, 2, 5):
        slope = dk.vmap(dk.grad(lambda x, n=n: sp.eval_chebyt(n, x)))(np.cos(theta))
        np.testing.assert_allclose(slope, n * np.sin(n * theta) / np.sin(theta), rtol=1e-12)
    assert dk.grad(lambda x: sp.eval_legendre(0, x))(0.3) == 0.0
    np.testing.assert_allclose(dk.grad(lambda x: sp.eval_hermite(3, x))(0.5),
                               24 * 0.25 - 12, rtol=1e-14)   # H_3 = 8x^3 - 12x


def test_kolmogorov_slope_is_minus_the_density():
    y = np.array([0.2, 0.6, 1.0, 1.7])
    k = np.arange(1, 40)[:, None]
    # the CDF 1 - 2 sum (-1)^(k-1) exp(-2 k^2 y^2), and for small y its theta form
    # sqrt(2 pi)/y sum exp(-a_k / y^2), a_k = (2k - 1)^2 pi^2 / 8, differentiated by hand
    alternating = 8 * y * np.sum((-1.0) ** (k - 1) * k ** 2 * np.exp(-2 * k ** 2 * y ** 2),
                                 axis=0)
    a = (2 * k - 1) ** 2 * np.pi ** 2 / 8
    theta = np.sqrt(2 * np.pi) * np.sum(np.exp(-a / y ** 2) * (2 * a / y ** 4 - 1 / y ** 2),
                                        axis=0)
    density = np.where(y < 1, theta, alternating)
    np.testing.assert_allclose(dk.vmap(dk.grad(sp.kolmogorov))(y), -density, rtol=1e-9)
    p = sp.kolmogorov(y[1:])   # (at 0.2, p rounds to within 1e-11 of 1)
    np.testing.assert_allclose(dk.vmap(dk.grad(sp.kolmogi))(p), -1 / density[1:], rtol=1e-9)


def test_multiple_outputs_batch_a_fixed_order():
    v = np.array([0.0, 1.0, 2.5])
    d, dp = dk.vmap(lambda v: sp.pbdv(v, 0.7))(v)
    expected = sc.pbdv(v, 0.7)
    np.testing.assert_allclose(d, expected[0], rtol=1e-14)
    np.testing.assert_allclose(dp, expected[1], rtol=1e-14)
    slopes = dk.vmap(dk.grad(lambda v, x: sp.pbdv(v, x)[0], argnums=1), (0, None))(v, 0.7)
    np.testing.assert_allclose(slopes, expected[1], rtol=1e-14)


@pytest.mark.parametrize(("name", "fun", "args", "argnum", "argname"), [
    ("struve", sp.struve, (1.5, 2.0), 0, "v"),
    ("pbdv", lambda v, x: sp.pbdv(v, x)[0], (1.5, 0.5), 0, "v"),
    ("ellipj", lambda u, m: sp.ellipj(u, m)[0], (0.5, 0.3), 1, "m"),
    ("mathieu_cem", lambda q, x: sp.mathieu_cem(1, q, x)[0], (1.5, 30.0), 0, "q"),
    ("eval_jacobi", lambda a, x: sp.eval_jacobi(2, a, 1.0, x), (0.5, 0.3), 0, "alpha"),
])
def test_parameters_without_a_closed_form_name_the_scipy_function(name, fun, args, argnum,
                                                                  argname):
    for transform in (dk.grad, dk.jacfwd):
        with pytest.raises(NoRuleError, match=f"scipy.special.*{argname}") as info:
            transform(fun, argnums=argnum)(*args)
        assert f"{name} has no derivative with respect to its argument '{argname}'" \
            in str(info.value)


def test_an_unsupported_scipy_ufunc_is_named_as_scipy_special():
    with pytest.raises(NoRuleError, match=r"^scipy\.special\.mathieu_a has no diffkit rule"):
        dk.grad(lambda q: sc.mathieu_a(2, q))(1.0)
    with pytest.raises(NoRuleError, match=r"^scipy\.special\.sindg has no diffkit rule"):
        dk.grad(sc.sindg)(30.0)
