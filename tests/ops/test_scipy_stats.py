"""Tests for diffkit.scipy.stats beyond the generic records (tests/records/ops/scipy_stats.py):
values of every method against scipy.stats (rtol 1e-10), including the tails, the boundaries
of the supports and invalid parameters (nan, as SciPy); derivatives against closed forms and
finite differences (check_grads) in both engines, at the special points (t's cdf at its
centre, binom at p = 0 and 1, poisson at mu = 0); multivariate shapes; vmap; errors."""

import math

import numpy as np
import pytest
import scipy.special as sc
import scipy.stats as ss

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.scipy import stats
from diffkit.testing import check_grads

RTOL = 1e-10
X = np.array([-35.0, -3.5, -1.2, -0.3, 0.0, 0.4, 0.9, 1.0, 1.7, 6.0, 40.0])
Q = np.array([0.0, 1e-8, 0.1, 0.5, 0.73, 0.99, 1.0])
CONTINUOUS_METHODS = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]

CONTINUOUS = [
    ("norm", (), {}), ("norm", (), dict(loc=0.5, scale=2.0)),
    ("t", (2.5,), {}), ("t", (0.7,), dict(loc=0.1, scale=1.5)), ("t", (30.0,), {}),
    ("gamma", (2.5,), {}), ("gamma", (0.6,), dict(scale=1.3)), ("gamma", (1.0,), {}),
    ("chi2", (3.0,), {}), ("chi2", (1.5,), dict(loc=-0.2)),
    ("beta", (2.0, 3.5), dict(scale=2.0)), ("beta", (0.5, 0.7), {}),
    ("expon", (), dict(scale=1.5)), ("laplace", (), dict(loc=0.2)), ("logistic", (), {}),
    ("cauchy", (), dict(scale=0.5)), ("uniform", (), dict(loc=-1.0, scale=2.5)),
    ("lognorm", (0.8,), {}), ("lognorm", (1.5,), dict(loc=0.3, scale=2.0)),
    # invalid parameters: nan everywhere
    ("norm", (), dict(scale=-1.0)), ("gamma", (-1.0,), {}), ("t", (0.0,), {}),
    ("beta", (1.0, -2.0), {}), ("uniform", (), dict(scale=0.0)),
]


def _both(fn, *args, **kwargs):
    with np.errstate(all="ignore"):
        return fn(*args, **kwargs)


@pytest.mark.parametrize("method", CONTINUOUS_METHODS)
@pytest.mark.parametrize("name,args,kwargs", CONTINUOUS,
                         ids=[f"{n}{a}{k}" for n, a, k in CONTINUOUS])
def test_continuous_values_match_scipy(name, args, kwargs, method):
    x = Q if method in ("ppf", "isf") else X
    want = _both(getattr(getattr(ss, name), method), x, *args, **kwargs)
    got = _both(getattr(getattr(stats, name), method), x, *args, **kwargs)
    np.testing.assert_allclose(np.asarray(got), want, rtol=RTOL, atol=0)


def test_shape_parameters_by_keyword_and_broadcasting():
    x = np.linspace(0.1, 3.0, 4)
    a = np.array([[0.5], [2.0]])
    np.testing.assert_allclose(stats.gamma.logpdf(x, a=a, scale=1.5),
                               ss.gamma.logpdf(x, a=a, scale=1.5), rtol=RTOL)
    np.testing.assert_allclose(stats.beta.cdf(x / 3.1, 2.0, b=a),
                               ss.beta.cdf(x / 3.1, 2.0, b=a), rtol=RTOL)
    assert stats.norm.logpdf(x, 0.0, 1.0).shape == (4,)
    assert np.ndim(stats.norm.logpdf(0.3)) == 0


K = np.array([-1, 0, 1, 2, 3, 5, 8, 20])
DISCRETE = [
    ("poisson", (2.5,), {}), ("poisson", (0.0,), {}), ("poisson", (0.3,), dict(loc=1)),
    ("poisson", (40.0,), {}), ("poisson", (-1.0,), {}),
    ("binom", (8, 0.3), {}), ("binom", (8, 0.0), {}), ("binom", (8, 1.0), {}),
    ("binom", (20, 0.77), dict(loc=-1)), ("binom", (8, 1.2), {}), ("binom", (8.5, 0.3), {}),
]


@pytest.mark.parametrize("method", ["logpmf", "pmf", "cdf", "logcdf", "sf", "logsf"])
@pytest.mark.parametrize("name,args,kwargs", DISCRETE,
                         ids=[f"{n}{a}{k}" for n, a, k in DISCRETE])
@pytest.mark.parametrize("k", [K, K.astype(float) + np.array([0, 0, 0.5, 0, 0, 0, 0, 0])],
                         ids=["int", "float"])
def test_discrete_values_match_scipy(name, args, kwargs, method, k):
    want = _both(getattr(getattr(ss, name), method), k, *args, **kwargs)
    got = np.asarray(_both(getattr(getattr(stats, name), method), k, *args, **kwargs))
    if name == "binom" and method == "logcdf" and not (0 <= args[1] <= 1 and args[0] % 1 == 0):
        # SciPy's quirk: logcdf is 0 (not nan) for k past the support even for invalid
        # parameters, where its cdf is nan. diffkit gives nan, consistently with cdf.
        assert np.isnan(got).all()
        return
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=0)


# --- derivatives ---------------------------------------------------------------------------


def test_norm_logpdf_gradient_closed_form():
    x, m, s = 0.7, -0.2, 1.3
    g = dk.grad(stats.norm.logpdf, argnums=(0, 1, 2))(x, m, s)
    z = (x - m) / s
    np.testing.assert_allclose(g, (-z / s, z / s, (z * z - 1) / s), rtol=1e-12)


def test_norm_logcdf_far_tail_gradient():
    # d/dx log ndtr(x) ~ -x for x -> -inf: finite where the naive log(ndtr(x)) gives -inf
    x = np.array([-40.0, -10.0, 0.0, 5.0])
    g = dk.grad(lambda v: dnp.sum(stats.norm.logcdf(v)))(x)
    want = np.exp(ss.norm.logpdf(x) - ss.norm.logcdf(x))
    np.testing.assert_allclose(g, want, rtol=1e-10)


@pytest.mark.parametrize("df", [0.8, 3.0, 25.0])
def test_t_cdf_at_its_centre(df):
    """At x == loc both betainc forms have 0 * inf derivatives; the Taylor branch gives
    pdf(0) and the exact higher derivatives, in both engines."""
    pdf0 = ss.t.pdf(0.0, df)
    for g in (dk.grad(stats.t.cdf)(0.0, df), dk.jacfwd(stats.t.cdf)(0.0, df)):
        np.testing.assert_allclose(g, pdf0, rtol=1e-12)
    second = dk.hessian(stats.t.cdf)(0.0, df)
    np.testing.assert_allclose(second, 0.0, atol=1e-15)
    third = dk.jacfwd(dk.jacrev(dk.grad(stats.t.cdf)))(0.0, df)
    np.testing.assert_allclose(third, -pdf0 * (df + 1) / df, rtol=1e-10)
    # in df: the cdf at the centre is 1/2 for every df
    np.testing.assert_allclose(dk.grad(stats.t.cdf, argnums=1)(0.0, df), 0.0, atol=1e-15)
    check_grads(lambda x, d: stats.t.cdf(x, d), (np.array([0.0, 1e-9, -2.0, 7.0]), df),
                order=2)


@pytest.mark.parametrize("df", [0.3, 0.7, 4.0, 30.0, 1e4])
@pytest.mark.parametrize("method", ["cdf", "logcdf", "sf", "logsf"])
def test_t_near_its_centre(df, method):
    """Around the switch between the Taylor polynomial and the incomplete beta function."""
    x = np.array([1e-9, 1e-6, 1e-4, 3e-3, 3.2e-3, 1e-2, 0.1]) * math.sqrt(min(df, 1.0))
    x = np.concatenate([x, -x])
    np.testing.assert_allclose(getattr(stats.t, method)(x, df), getattr(ss.t, method)(x, df),
                               rtol=RTOL)
    g = dk.grad(lambda v: dnp.sum(stats.t.cdf(v, df)))(x)
    np.testing.assert_allclose(g, ss.t.pdf(x, df), rtol=1e-9)


@pytest.mark.parametrize("df", [0.3, 4.0, 1e4])
def test_t_ppf_near_one_half(df):
    """Around the switch between the inverted Taylor polynomial and betaincinv."""
    d = np.array([0.0, 1e-9, 1e-6, 1e-4, 1e-3, 3e-3, 1e-2])
    q = np.concatenate([0.5 + d, 0.5 - d])
    far = np.abs(q - 0.5) >= 1e-3   # nearer 1/2 SciPy's own ppf loses digits (df < 1)
    np.testing.assert_allclose(stats.t.ppf(q, df)[far], ss.t.ppf(q, df)[far], rtol=RTOL)
    np.testing.assert_allclose(stats.t.isf(q, df)[far], ss.t.isf(q, df)[far], rtol=RTOL)
    # everywhere: the inverse of the cdf (itself checked against SciPy's near 0 above)
    np.testing.assert_allclose(stats.t.cdf(stats.t.ppf(q, df), df) - 0.5, q - 0.5,
                               rtol=1e-10, atol=1e-17)
    for g in (dk.grad(lambda v: dnp.sum(stats.t.ppf(v, df)))(q),
              np.diag(dk.jacfwd(lambda v: stats.t.ppf(v, df))(q))):
        np.testing.assert_allclose(g, 1 / ss.t.pdf(ss.t.ppf(q, df), df), rtol=1e-9)
    check_grads(stats.t.ppf, (np.array([0.5, 0.5 + 1e-7, 0.2]), df), order=2)


def test_t_cdf_derivative_is_pdf():
    x = np.array([-50.0, -3.0, -0.5, 1e-6, 0.8, 2.0, 30.0])
    for df in (0.6, 2.0, 9.0):
        g = dk.grad(lambda v, d=df: dnp.sum(stats.t.cdf(v, d)))(x)
        np.testing.assert_allclose(g, ss.t.pdf(x, df), rtol=1e-9)


@pytest.mark.parametrize("name,method,args", [
    ("t", "logcdf", (np.array([-4.0, -0.5, 0.3, 6.0]), 3.5, 0.2, 1.4)),
    ("t", "logsf", (np.array([-4.0, -0.5, 0.3, 6.0]), 1.5)),
    ("t", "ppf", (np.array([0.02, 0.3, 0.7, 0.97]), 2.5, 0.1, 0.8)),
    ("gamma", "logcdf", (np.array([0.3, 1.2, 4.0]), 1.7, 0.1, 1.1)),
    ("gamma", "ppf", (np.array([0.1, 0.5, 0.9]), 2.2)),
    ("chi2", "logpdf", (np.array([0.3, 1.2, 4.0]), 3.3)),
    ("chi2", "cdf", (np.array([0.3, 1.2, 4.0]), 3.3)),
    ("beta", "logsf", (np.array([0.1, 0.5, 0.8]), 1.4, 2.6)),
    ("beta", "ppf", (np.array([0.1, 0.5, 0.8]), 1.4, 2.6)),
    ("expon", "logpdf", (np.array([0.1, 0.5, 3.0]), 0.0, 1.3)),
    ("expon", "ppf", (np.array([0.1, 0.5, 0.8]), 0.2, 1.3)),
    ("laplace", "logpdf", (np.array([-1.0, 0.3, 2.0]), 0.1, 0.7)),
    ("laplace", "ppf", (np.array([0.1, 0.4, 0.8]), 0.1, 0.7)),
    ("logistic", "logpdf", (np.array([-3.0, 0.3, 2.0]), 0.1, 0.7)),
    ("logistic", "ppf", (np.array([0.1, 0.4, 0.8]), 0.1, 0.7)),
    ("cauchy", "logcdf", (np.array([-3.0, 0.3, 2.0]), 0.1, 0.7)),
    ("uniform", "logpdf", (np.array([0.2, 0.5]), -0.1, 1.3)),
    ("uniform", "ppf", (np.array([0.2, 0.5]), -0.1, 1.3)),
    ("lognorm", "logsf", (np.array([0.3, 1.0, 3.0]), 0.7, 0.1, 1.2)),
    ("lognorm", "ppf", (np.array([0.1, 0.5, 0.9]), 0.7)),
])
def test_derivatives_match_finite_differences(name, method, args):
    check_grads(getattr(getattr(stats, name), method), args, order=2)


def test_derivatives_in_parameters_closed_forms():
    # gamma: d/da logpdf = log x - digamma(a); d/dscale logpdf = (x/scale - a) / scale
    x, a, s = 1.7, 2.3, 1.4
    ga, gs = dk.grad(lambda a, s: stats.gamma.logpdf(x, a, scale=s), argnums=(0, 1))(a, s)
    np.testing.assert_allclose(ga, math.log(x / s) - sc.digamma(a), rtol=1e-12)
    np.testing.assert_allclose(gs, (x / s - a) / s, rtol=1e-12)
    # beta: d/da logpdf = log x - digamma(a) + digamma(a + b)
    g = dk.grad(stats.beta.logpdf, argnums=1)(0.3, 1.5, 2.5)
    np.testing.assert_allclose(g, math.log(0.3) - sc.digamma(1.5) + sc.digamma(4.0),
                               rtol=1e-12)
    # poisson: d/dmu logpmf = k / mu - 1; binom: d/dp logpmf = k / p - (n - k) / (1 - p)
    np.testing.assert_allclose(dk.grad(stats.poisson.logpmf, argnums=1)(3, 2.0), 0.5)
    np.testing.assert_allclose(dk.grad(stats.binom.logpmf, argnums=2)(3, 8, 0.25),
                               3 / 0.25 - 5 / 0.75, rtol=1e-12)
    # poisson.cdf in mu: -pmf(k, mu)
    np.testing.assert_allclose(dk.grad(stats.poisson.cdf, argnums=1)(3, 2.0),
                               -ss.poisson.pmf(3, 2.0), rtol=1e-10)
    # binom.sf in p: n pmf(k; n - 1, p)
    np.testing.assert_allclose(dk.grad(stats.binom.sf, argnums=2)(3, 8, 0.4),
                               8 * ss.binom.pmf(3, 7, 0.4), rtol=1e-10)


def test_discrete_boundaries_are_finite_in_both_engines():
    # binom at p = 0 and 1 (k at the matching end of the support), poisson at mu = 0
    for k, p, want in [(0, 0.0, -8.0), (8, 1.0, 8.0)]:
        f = lambda q, k=k: stats.binom.logpmf(k, 8, q)  # noqa: E731
        np.testing.assert_allclose(dk.grad(f)(p), want)
        np.testing.assert_allclose(dk.jacfwd(f)(p), want)
    f = lambda mu: stats.poisson.logpmf(0, mu)  # noqa: E731
    np.testing.assert_allclose(dk.grad(f)(0.0), -1.0)
    np.testing.assert_allclose(dk.jacfwd(f)(0.0), -1.0)
    check_grads(lambda p: stats.binom.pmf(np.arange(5), 4, p), (0.35,), order=2)
    check_grads(lambda mu: stats.poisson.logsf(np.arange(5), mu), (1.7,), order=2)


def test_invalid_parameters_give_nan_in_all_engines():
    f = lambda s: stats.norm.logpdf(0.3, 0.0, s)  # noqa: E731
    assert np.isnan(f(-1.0))
    assert np.isnan(stats.binom.pmf(2, 5, 1.5))
    assert np.isnan(stats.poisson.cdf(2, -0.5))
    # the invalid branch is never computed with: no nan leaks into valid derivatives
    g = dk.grad(lambda x: dnp.sum(stats.gamma.logpdf(x, 2.0)))(np.array([-1.0, 0.5, 2.0]))
    np.testing.assert_allclose(g, [0.0, 1 / 0.5 - 1, 1 / 2.0 - 1])
    g = dk.jacfwd(lambda x: stats.beta.cdf(x, 2.0, 3.0))(np.array([-0.5, 0.5, 1.5]))
    np.testing.assert_allclose(np.diag(g), [0.0, ss.beta.pdf(0.5, 2.0, 3.0), 0.0])


# --- multivariate --------------------------------------------------------------------------


def _spd(rng, n):
    a = rng.normal(size=(n, n))
    return a @ a.T + n * np.eye(n)


def test_multivariate_normal_values_and_shapes():
    rng = np.random.default_rng(0)
    cov, mean = _spd(rng, 3), rng.normal(size=3)
    for x in (rng.normal(size=3), rng.normal(size=(4, 3)), rng.normal(size=(2, 4, 3)),
              rng.normal(size=(1, 3))):
        got = stats.multivariate_normal.logpdf(x, mean, cov)
        want = ss.multivariate_normal.logpdf(x, mean, cov)
        assert np.shape(got) == np.shape(want)
        np.testing.assert_allclose(got, want, rtol=RTOL)
        np.testing.assert_allclose(stats.multivariate_normal.pdf(x, mean, cov),
                                   ss.multivariate_normal.pdf(x, mean, cov), rtol=RTOL)
    # scalar and diagonal covariances, default mean, one dimension
    for args in [([0.0, 1.0], [0.5, 0.0], 2.0), ([0.0, 1.0], [0.5, 0.0], [1.0, 3.0]),
                 ([0.0, 1.0, 2.5], None, 2.0), (0.3,), ([[0.3, 0.1]], None, np.eye(2))]:
        np.testing.assert_allclose(stats.multivariate_normal.logpdf(*args),
                                   ss.multivariate_normal.logpdf(*args), rtol=RTOL)


def test_multivariate_normal_gradients_closed_form():
    rng = np.random.default_rng(1)
    cov, mean, x = _spd(rng, 3), rng.normal(size=3), rng.normal(size=3)
    gx, gm, gc = dk.grad(stats.multivariate_normal.logpdf, argnums=(0, 1, 2))(x, mean, cov)
    inv = np.linalg.inv(cov)
    r = inv @ (x - mean)
    np.testing.assert_allclose(gx, -r, rtol=1e-10)
    np.testing.assert_allclose(gm, r, rtol=1e-10)
    # only cov's lower triangle is read (as SciPy's eigh reads it): the symmetric gradient
    # (inv r r^T inv - inv) / 2 folded onto that triangle
    sym = 0.5 * (np.outer(r, r) - inv)
    np.testing.assert_allclose(gc, 2 * np.tril(sym, -1) + np.diag(np.diag(sym)), rtol=1e-10,
                               atol=1e-14)
    jf = dk.jacfwd(stats.multivariate_normal.logpdf, argnums=2)(x, mean, cov)
    np.testing.assert_allclose(jf, gc, rtol=1e-10, atol=1e-14)
    # second order, through a symmetric parametrization
    check_grads(lambda x, m, a: stats.multivariate_normal.logpdf(x, m, a @ a.T + np.eye(3)),
                (rng.normal(size=(2, 3)), mean, rng.normal(size=(3, 3))), order=2)


def test_dirichlet_values_and_gradients():
    rng = np.random.default_rng(2)
    alpha = np.array([1.5, 2.0, 3.0])
    x = rng.dirichlet(alpha, size=4).T          # components on the first axis, as SciPy
    np.testing.assert_allclose(stats.dirichlet.logpdf(x, alpha),
                               ss.dirichlet.logpdf(x, alpha), rtol=RTOL)
    np.testing.assert_allclose(stats.dirichlet.pdf(x[:, 0], alpha),
                               ss.dirichlet.pdf(x[:, 0], alpha), rtol=RTOL)
    np.testing.assert_allclose(stats.dirichlet.logpdf(x[:2], alpha),
                               ss.dirichlet.logpdf(x, alpha), rtol=RTOL)
    g = dk.grad(stats.dirichlet.logpdf, argnums=1)(x[:, 0], alpha)
    want = np.log(x[:, 0]) + sc.digamma(alpha.sum()) - sc.digamma(alpha)
    np.testing.assert_allclose(g, want, rtol=1e-12)
    assert np.isnan(stats.dirichlet.logpdf(x, [1.0, -1.0, 2.0])).all()


def test_vmap_over_parameters():
    mus = np.array([0.5, 1.0, 3.0])
    got = dk.vmap(lambda mu: stats.poisson.logpmf(np.arange(4), mu))(mus)
    np.testing.assert_allclose(got, ss.poisson.logpmf(np.arange(4), mus[:, None]), rtol=RTOL)
    rng = np.random.default_rng(3)
    covs = np.stack([_spd(rng, 2) for _ in range(4)])
    got = dk.vmap(lambda c: stats.multivariate_normal.logpdf([0.3, -0.2], cov=c))(covs)
    want = [ss.multivariate_normal.logpdf([0.3, -0.2], cov=c) for c in covs]
    np.testing.assert_allclose(got, want, rtol=RTOL)
    per_df = dk.vmap(dk.grad(stats.t.logpdf, argnums=1), in_axes=(None, 0))(0.7, mus)
    loop = [dk.grad(stats.t.logpdf, argnums=1)(0.7, d) for d in mus]
    np.testing.assert_allclose(per_df, loop, rtol=1e-12)


def test_errors():
    with pytest.raises(TypeError, match="missing required argument"):
        stats.gamma.logpdf(1.0)
    with pytest.raises(TypeError, match="unexpected keyword"):
        stats.norm.cdf(1.0, sigma=2.0)
    with pytest.raises(TypeError, match="multiple values"):
        stats.t.pdf(1.0, 2.0, df=3.0)
    with pytest.raises(ValueError, match="last axis"):
        stats.multivariate_normal.logpdf(np.zeros((2, 4)), np.zeros(3))
    with pytest.raises(ValueError, match="first axis"):
        stats.dirichlet.logpdf(np.full(5, 0.2), np.ones(3))
    with pytest.raises(np.linalg.LinAlgError):
        stats.multivariate_normal.logpdf(np.zeros(2), cov=np.array([[1.0, 2.0], [2.0, 1.0]]))
