"""diffkit.scipy.stats as a drop-in for scipy.stats: every public name of SciPy's
distributions (and of their frozen forms) exists, with SciPy's signature; the closed-form
summaries (mean, var, std, stats, moment, entropy, median, interval, support, nnlf) equal
SciPy's values (rtol 1e-12) and differentiate, checked against central finite differences of
SciPy's own functions (rtol 1e-6) in both engines and to second order; frozen distributions
differentiate in their parameters and batch; the methods SciPy computes (rvs, fit, expect,
...) return SciPy's exact results for plain values and raise NoRuleError for traced ones."""

import inspect

import numpy as np
import pytest
import scipy.integrate
import scipy.stats as ss

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.errors import NoRuleError
from diffkit.scipy import stats
from diffkit.testing import check_grads

RTOL = 1e-12
FD_RTOL = 1e-6   # central finite differences with step 1e-6 (truncation ~1e-12, rounding)
NAMES = stats.__all__
UNIVARIATE = [n for n in NAMES if n not in ("dirichlet", "multivariate_normal")]


def _frozen_pair(name):
    """SciPy's and diffkit's frozen forms of ``name`` with the same parameters."""
    params = {"t": (3.0,), "gamma": (2.0,), "chi2": (3.0,), "beta": (2.0, 3.0),
              "lognorm": (0.5,), "poisson": (2.0,), "binom": (5, 0.3),
              "dirichlet": ([1.0, 2.0],), "multivariate_normal": ([0.0, 0.0],)}
    args = params.get(name, ())
    return getattr(ss, name)(*args), getattr(stats, name)(*args)


def _public(obj):
    return [m for m in dir(obj) if not m.startswith("_")]


# --- every public name, with SciPy's signature ----------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_every_public_name_of_scipy_exists(name):
    ours, theirs = getattr(stats, name), getattr(ss, name)
    missing = [m for m in _public(theirs) if not hasattr(ours, m)]
    assert not missing, f"{name} lacks {missing}"
    assert callable(ours)
    frozen_theirs, frozen_ours = _frozen_pair(name)
    missing = [m for m in _public(frozen_theirs) if not hasattr(frozen_ours, m)]
    assert not missing, f"frozen {name} lacks {missing}"


def _signature(obj):
    try:
        return inspect.signature(obj)
    except (TypeError, ValueError):
        return None


@pytest.mark.parametrize("name", NAMES)
def test_signatures_are_scipys(name):
    ours, theirs = getattr(stats, name), getattr(ss, name)
    pairs = [(m, getattr(ours, m), getattr(theirs, m)) for m in _public(theirs)
             if callable(getattr(theirs, m))]
    frozen_theirs, frozen_ours = _frozen_pair(name)
    pairs += [(f"frozen.{m}", getattr(frozen_ours, m), getattr(frozen_theirs, m))
              for m in _public(frozen_theirs)
              if callable(getattr(frozen_theirs, m)) and m != "dist"]
    if name in ("dirichlet", "multivariate_normal"):
        pairs.append(("__call__", ours, theirs))
    compared = 0
    for method, mine, scipys in pairs:
        want = _signature(scipys)
        if want is None:
            continue
        assert _signature(mine) == want, (name, method, _signature(mine), want)
        compared += 1
    assert compared >= 5


def test_frozen_attributes_are_scipys():
    frozen = stats.gamma(2.5, loc=0.5, scale=2.0)
    twin = ss.gamma(2.5, loc=0.5, scale=2.0)
    assert frozen.args == twin.args and frozen.kwds == twin.kwds
    assert (frozen.a, frozen.b) == (twin.a, twin.b)
    assert frozen.dist.name == "gamma" and frozen.dist is not stats.gamma
    b = stats.binom(7, 0.4)
    assert (b.a, b.b) == (ss.binom(7, 0.4).a, ss.binom(7, 0.4).b)
    for attr in ("a", "b", "numargs", "shapes", "xtol", "moment_type"):
        assert getattr(stats.beta, attr) == getattr(ss.beta, attr), attr
    assert np.isnan(stats.beta.badvalue) and np.isnan(ss.beta.badvalue)
    for attr in ("inc", "moment_tol", "shapes", "numargs"):
        assert getattr(stats.poisson, attr) == getattr(ss.poisson, attr), attr
    mvn = stats.multivariate_normal([1.0, 2.0], [2.0, 3.0])
    twin = ss.multivariate_normal([1.0, 2.0], [2.0, 3.0])
    np.testing.assert_array_equal(mvn.mean, twin.mean)
    np.testing.assert_array_equal(mvn.cov, twin.cov)
    assert (mvn.dim, mvn.allow_singular, mvn.maxpts, mvn.abseps, mvn.releps) == \
        (twin.dim, twin.allow_singular, twin.maxpts, twin.abseps, twin.releps)
    np.testing.assert_array_equal(mvn.cov_object.covariance, twin.cov_object.covariance)
    np.testing.assert_array_equal(stats.dirichlet([1.0, 2.5]).alpha, [1.0, 2.5])


def test_wrong_arguments_are_named():
    with pytest.raises(TypeError, match="missing required argument.*'a'"):
        stats.gamma()
    with pytest.raises(TypeError, match="unexpected keyword argument 'sigma'"):
        stats.norm(sigma=2.0)
    with pytest.raises(ValueError, match="Moment must be an integer"):
        stats.norm.moment(1.5)
    with pytest.raises(ValueError, match="between 0 and 1"):
        stats.norm.interval(1.5)
    with pytest.raises(ValueError, match="moments must be"):
        stats.norm.stats(moments="x")
    with pytest.raises(ValueError, match="unique"):
        stats.multivariate_normal.marginal([0, 0], np.zeros(3), np.eye(3))
    with pytest.raises(ValueError, match="out of range"):
        stats.multivariate_normal.marginal([3], np.zeros(3), np.eye(3))


# --- closed-form summaries equal SciPy's -------------------------------------------------------

CONTINUOUS = [
    ("norm", (), dict(loc=0.5, scale=2.0)),
    ("t", (0.5,), {}), ("t", (1.5,), {}), ("t", (2.5,), dict(loc=0.3, scale=1.5)),
    ("t", (3.5,), {}), ("t", (6.0,), dict(loc=-1.0)),
    ("gamma", (2.5,), dict(loc=0.5, scale=2.0)), ("gamma", (0.4,), {}),
    ("chi2", (3.0,), dict(scale=1.5)), ("beta", (2.0, 3.5), dict(loc=-1.0, scale=2.0)),
    ("beta", (0.5, 0.7), {}), ("expon", (), dict(loc=0.2, scale=1.5)),
    ("laplace", (), dict(loc=0.2, scale=0.7)), ("logistic", (), dict(scale=1.3)),
    ("cauchy", (), dict(loc=1.0)), ("uniform", (), dict(loc=-1.0, scale=2.5)),
    ("lognorm", (0.8,), dict(loc=0.3, scale=2.0)), ("lognorm", (0.05,), {}),
    # invalid parameters: nan
    ("norm", (), dict(scale=-1.0)), ("gamma", (-1.0,), {}), ("beta", (1.0, 0.0), {}),
]
IDS = [f"{n}{a}{k}" for n, a, k in CONTINUOUS]


def _quiet(fn, *args, **kwargs):
    with np.errstate(all="ignore"):
        return fn(*args, **kwargs)


def _assert_same(got, want, rtol=RTOL, atol=0.0):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _assert_same(g, w, rtol, atol)
        return
    np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(want, dtype=float),
                               rtol=rtol, atol=atol)


@pytest.mark.parametrize("name,args,kwargs", CONTINUOUS, ids=IDS)
def test_continuous_summaries_equal_scipy(name, args, kwargs):
    ours, theirs = getattr(stats, name), getattr(ss, name)
    calls = [("mean", ()), ("var", ()), ("std", ()), ("median", ()), ("entropy", ()),
             ("support", ()), ("interval", (0.9,)), ("interval", (0.0,)),
             ("interval", (1.0,)), *[("moment", (n,)) for n in range(5)]]
    for moments in ("m", "v", "s", "k", "mv", "mvsk", "sk"):
        got = ours.stats(*args, moments=moments, **kwargs)
        _assert_same(got, _quiet(theirs.stats, *args, moments=moments, **kwargs))
    for method, lead in calls:
        got = _quiet(getattr(ours, method), *lead, *args, **kwargs)
        want = _quiet(getattr(theirs, method), *lead, *args, **kwargs)
        _assert_same(got, want, atol=1e-14 if method == "moment" else 0.0)
        frozen = getattr(ours(*args, **kwargs), method)
        _assert_same(_quiet(frozen, *lead), want, atol=1e-14 if method == "moment" else 0.0)


@pytest.mark.parametrize("name,args,kwargs", [c for c in CONTINUOUS if c[0] != "t"],
                         ids=[i for c, i in zip(CONTINUOUS, IDS) if c[0] != "t"])
def test_continuous_nnlf_equals_scipy(name, args, kwargs):
    theta = (*args, kwargs.get("loc", 0.0), kwargs.get("scale", 1.0))
    ours, theirs = getattr(stats, name), getattr(ss, name)
    lo, hi = theirs.support(*theta)
    inside = np.linspace(max(lo, -5.0), min(hi, 5.0), 9)[1:-1]
    for x in (inside, inside.reshape(7, 1) * np.ones(2), np.append(inside, hi + 1.0)):
        _assert_same(_quiet(ours.nnlf, theta, x), _quiet(theirs.nnlf, theta, x))


def test_summaries_broadcast_as_scipys():
    a, b = np.array([[1.5], [2.5]]), np.array([2.0, 3.0, 4.0])
    for loc in (np.zeros(3), np.array([0.0, 0.5, -1.0])):
        fifth = [("moment", (5,))] if not loc.any() else []   # see below for loc != 0
        for method, lead in fifth + [("moment", (2,)), ("mean", ()), ("entropy", ()),
                                     ("support", ()), ("median", ()), ("interval", (0.7,))]:
            got = getattr(stats.beta, method)(*lead, a, b, loc=loc, scale=2.0)
            want = getattr(ss.beta, method)(*lead, a, b, loc=loc, scale=2.0)
            for g, w in zip(got if isinstance(want, tuple) else (got,),
                            want if isinstance(want, tuple) else (want,)):
                assert np.shape(g) == np.shape(w), (method, np.shape(g), np.shape(w))
                np.testing.assert_allclose(g, w, rtol=1e-11)
    # SciPy's fifth moment with loc != 0 loses digits (1e-8 here); the integral does not
    want, _ = scipy.integrate.quad(lambda x: x ** 5 * ss.beta.pdf(x, 2.5, 4.0, -1.0, 2.0),
                                   -1.0, 1.0, epsabs=0, epsrel=1e-13)
    np.testing.assert_allclose(stats.beta.moment(5, a, b, loc=loc, scale=2.0)[1, 2], want,
                               rtol=1e-12)
    mu, k_loc = np.array([1.0, 2.5]), np.array([[0], [2]])
    for got, want in [(stats.poisson.stats(mu, loc=k_loc, moments="mvsk"),
                       ss.poisson.stats(mu, loc=k_loc, moments="mvsk")),
                      (stats.poisson.support(mu, loc=k_loc), ss.poisson.support(mu, loc=k_loc)),
                      (stats.norm.stats(loc=[0.0, 1.0], moments="mvsk"),
                       ss.norm.stats(loc=[0.0, 1.0], moments="mvsk")),
                      (stats.norm.entropy(loc=[0.0, 1.0]), ss.norm.entropy(loc=[0.0, 1.0]))]:
        for g, w in zip(got if isinstance(want, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            assert np.shape(g) == np.shape(w)
            _assert_same(g, w)


def _quad_moment(name, n, *args):
    pdf = getattr(ss, name).pdf
    lo, hi = getattr(ss, name).support(*args)
    value, _ = scipy.integrate.quad(lambda x: x ** n * pdf(x, *args), lo, hi,
                                    epsabs=0, epsrel=1e-12, limit=400)
    return value


@pytest.mark.parametrize("name,args", [
    ("norm", ()), ("t", (9.0,)), ("gamma", (2.5,)), ("chi2", (3.0,)), ("beta", (2.0, 3.5)),
    ("expon", ()), ("laplace", ()), ("logistic", ()), ("uniform", ()), ("lognorm", (0.4,)),
])
@pytest.mark.parametrize("n", [5, 6])
def test_higher_moments_are_the_integrals(name, args, n):
    """Orders >= 5 come from closed forms; the integral of x^n pdf (quad, rtol 1e-9)."""
    got = getattr(stats, name).moment(n, *args)
    np.testing.assert_allclose(got, _quad_moment(name, n, *args), rtol=1e-9, atol=1e-12)


def test_moments_that_do_not_exist():
    # t: even orders >= df are inf, odd orders >= df nan; cauchy: nan
    assert stats.t.moment(6, 5.0) == np.inf
    assert np.isnan(stats.t.moment(5, 5.0))
    assert stats.t.moment(5, 5.5) == 0.0
    assert np.isnan(stats.cauchy.moment(6))


DISCRETE = [("poisson", (2.5,), {}), ("poisson", (0.7,), dict(loc=2)),
            ("binom", (8, 0.3), {}), ("binom", (20, 0.77), dict(loc=-1)),
            ("binom", (8, 1.2), {}), ("poisson", (-1.0,), {})]


@pytest.mark.parametrize("name,args,kwargs", DISCRETE,
                         ids=[f"{n}{a}{k}" for n, a, k in DISCRETE])
def test_discrete_summaries_equal_scipy(name, args, kwargs):
    ours, theirs = getattr(stats, name), getattr(ss, name)
    for moments in ("m", "v", "s", "k", "mvsk"):
        _assert_same(ours.stats(*args, moments=moments, **kwargs),
                     _quiet(theirs.stats, *args, moments=moments, **kwargs))
    for method, lead in [("mean", ()), ("var", ()), ("std", ()), ("support", ()),
                         *[("moment", (n,)) for n in range(5)]]:
        want = _quiet(getattr(theirs, method), *lead, *args, **kwargs)
        _assert_same(getattr(ours, method)(*lead, *args, **kwargs), want)
        _assert_same(getattr(ours(*args, **kwargs), method)(*lead), want)
    theta = (*args, kwargs.get("loc", 0))
    k = np.array([0, 1, 3, 4]) + kwargs.get("loc", 0)
    _assert_same(ours.nnlf(theta, k), _quiet(theirs.nnlf, theta, k))


@pytest.mark.parametrize("name,args", [("poisson", (2.5,)), ("binom", (8, 0.3))])
@pytest.mark.parametrize("n", [5, 7])
def test_discrete_higher_moments_are_the_sums(name, args, n):
    k = np.arange(80.0)
    want = np.sum(k ** n * getattr(ss, name).pmf(k, *args))
    np.testing.assert_allclose(getattr(stats, name).moment(n, *args), want, rtol=1e-12)


def test_multivariate_summaries_equal_scipy():
    alpha = np.array([1.5, 2.0, 3.5])
    for method in ("mean", "var", "cov", "entropy"):
        want = getattr(ss.dirichlet, method)(alpha)
        _assert_same(getattr(stats.dirichlet, method)(alpha), want)
        _assert_same(getattr(stats.dirichlet(alpha), method)(), want)
    cov = np.array([[2.0, 0.5, 0.1], [0.5, 1.0, 0.3], [0.1, 0.3, 1.5]])
    mean = np.array([0.2, -1.0, 0.5])
    for args in [(mean, cov), (None, 2.5), (mean, [1.0, 2.0, 0.5])]:
        _assert_same(stats.multivariate_normal.entropy(*args),
                     ss.multivariate_normal.entropy(*args))
        _assert_same(stats.multivariate_normal(*args).entropy(),
                     ss.multivariate_normal(*args).entropy())
    x = np.array([[0.1, 0.3], [-1.0, 2.0]])
    for dims in ([0, 2], [-1], 1):
        got = stats.multivariate_normal.marginal(dims, mean, cov)
        want = ss.multivariate_normal.marginal(dims, mean, cov)
        _assert_same(got.mean, want.mean)
        _assert_same(got.cov, want.cov)
        xs = x[:, : want.dim]
        _assert_same(got.logpdf(xs), want.logpdf(xs))
        _assert_same(stats.multivariate_normal(mean, cov).marginal(dims).logpdf(xs),
                     want.logpdf(xs))


# --- derivatives against finite differences of SciPy's functions ------------------------------


def _fd(fn, args, i, eps=1e-6):
    up, down = list(args), list(args)
    up[i] = args[i] + eps
    down[i] = args[i] - eps
    return (np.asarray(_quiet(fn, *up), float) - np.asarray(_quiet(fn, *down), float)) / (2 * eps)


def _check_against_scipy(ours, theirs, args, argnums, order2=True):
    """jacfwd and jacrev of ``ours`` in each of ``argnums`` (scalar arguments) equal each other
    to rounding and the central differences of ``theirs``; then check_grads to order 2."""
    for i in argnums:
        fwd = dk.jacfwd(ours, argnums=i)(*args)
        rev = dk.jacrev(ours, argnums=i)(*args)
        np.testing.assert_allclose(fwd, rev, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(fwd, _fd(theirs, args, i), rtol=FD_RTOL, atol=1e-9)
    if order2:
        check_grads(ours, args, order=2)


SUMMARY_DERIVATIVES = [
    # (description, diffkit function, SciPy function, args, argnums)
    ("norm.std", lambda m, s: stats.norm.std(m, s), lambda m, s: ss.norm.std(m, s),
     (0.3, 1.7), (0, 1)),
    ("t.var", lambda d, s: stats.t.var(d, scale=s), lambda d, s: ss.t.var(d, scale=s),
     (3.5, 1.3), (0, 1)),
    ("t.moment(4)", lambda d, m: stats.t.moment(4, d, m), lambda d, m: ss.t.moment(4, d, m),
     (6.5, 0.4), (0, 1)),
    ("t.entropy", lambda d, s: stats.t.entropy(d, scale=s),
     lambda d, s: ss.t.entropy(d, scale=s), (2.7, 0.8), (0, 1)),
    ("t.interval", lambda c, d, m, s: dnp.stack(stats.t.interval(c, d, m, s)),
     lambda c, d, m, s: np.stack(ss.t.interval(c, d, m, s)), (0.8, 4.5, 0.3, 1.6),
     (0, 1, 2, 3)),
    ("gamma.stats", lambda a, m, s: dnp.stack(stats.gamma.stats(a, m, s, moments="mvsk")),
     lambda a, m, s: np.stack(ss.gamma.stats(a, m, s, moments="mvsk")), (2.3, 0.4, 1.7),
     (0, 1, 2)),
    ("gamma.entropy", lambda a, s: stats.gamma.entropy(a, scale=s),
     lambda a, s: ss.gamma.entropy(a, scale=s), (1.8, 2.5), (0, 1)),
    ("gamma.median", lambda a, s: stats.gamma.median(a, scale=s),
     lambda a, s: ss.gamma.median(a, scale=s), (1.8, 2.5), (0, 1)),
    ("chi2.moment(5)", lambda d: stats.chi2.moment(5, d), lambda d: ss.chi2.moment(5, d),
     (3.3,), (0,)),
    ("beta.stats", lambda a, b: dnp.stack(stats.beta.stats(a, b, moments="mvsk")),
     lambda a, b: np.stack(ss.beta.stats(a, b, moments="mvsk")), (2.2, 3.1), (0, 1)),
    ("beta.entropy", stats.beta.entropy, ss.beta.entropy, (2.2, 3.1), (0, 1)),
    ("beta.median", stats.beta.median, ss.beta.median, (2.2, 3.1), (0, 1)),
    ("expon.moment(3)", lambda m, s: stats.expon.moment(3, m, s),
     lambda m, s: ss.expon.moment(3, m, s), (0.5, 1.5), (0, 1)),
    ("laplace.entropy", lambda s: stats.laplace.entropy(scale=s),
     lambda s: ss.laplace.entropy(scale=s), (0.7,), (0,)),
    ("logistic.moment(4)", lambda m, s: stats.logistic.moment(4, m, s),
     lambda m, s: ss.logistic.moment(4, m, s), (0.5, 1.5), (0, 1)),
    ("cauchy.interval", lambda c, m, s: dnp.stack(stats.cauchy.interval(c, m, s)),
     lambda c, m, s: np.stack(ss.cauchy.interval(c, m, s)), (0.6, 0.2, 2.0), (0, 1, 2)),
    ("uniform.support", lambda m, s: dnp.stack(stats.uniform.support(m, s)),
     lambda m, s: np.stack(ss.uniform.support(m, s)), (0.5, 1.5), (0, 1)),
    ("lognorm.stats", lambda s, sc: dnp.stack(stats.lognorm.stats(s, scale=sc, moments="mvsk")),
     lambda s, sc: np.stack(ss.lognorm.stats(s, scale=sc, moments="mvsk")), (0.6, 1.4),
     (0, 1)),
    ("lognorm.entropy", stats.lognorm.entropy, ss.lognorm.entropy, (0.6,), (0,)),
    ("norm.nnlf", lambda m, s: stats.norm.nnlf((m, s), np.array([0.1, 1.5, -0.4])),
     lambda m, s: ss.norm.nnlf((m, s), np.array([0.1, 1.5, -0.4])), (0.2, 1.1), (0, 1)),
    ("gamma.nnlf", lambda a, s: stats.gamma.nnlf((a, 0.0, s), np.array([0.1, 1.5, 2.4])),
     lambda a, s: ss.gamma.nnlf((a, 0.0, s), np.array([0.1, 1.5, 2.4])), (1.7, 1.1), (0, 1)),
    ("poisson.stats", lambda mu: dnp.stack(stats.poisson.stats(mu, moments="mvsk")),
     lambda mu: np.stack(ss.poisson.stats(mu, moments="mvsk")), (2.5,), (0,)),
    ("poisson.moment(3)", lambda mu: stats.poisson.moment(3, mu, loc=1),
     lambda mu: ss.poisson.moment(3, mu, loc=1), (2.5,), (0,)),
    ("binom.stats", lambda p: dnp.stack(stats.binom.stats(8, p, moments="mvsk")),
     lambda p: np.stack(ss.binom.stats(8, p, moments="mvsk")), (0.35,), (0,)),
    ("binom.nnlf", lambda p: stats.binom.nnlf((8, p, 0), np.array([1, 3, 4])),
     lambda p: ss.binom.nnlf((8, p, 0), np.array([1, 3, 4])), (0.35,), (0,)),
]


@pytest.mark.parametrize("what,ours,theirs,args,argnums", SUMMARY_DERIVATIVES,
                         ids=[c[0] for c in SUMMARY_DERIVATIVES])
def test_summary_derivatives_match_scipy(what, ours, theirs, args, argnums):
    _check_against_scipy(ours, theirs, args, argnums)


def test_higher_discrete_moment_derivative_closed_form():
    # d/dmu E[X^5] for poisson: the derivative of Touchard's polynomial
    # mu^5 + 10 mu^4 + 25 mu^3 + 15 mu^2 + mu
    mu = 1.3
    want = 5 * mu ** 4 + 40 * mu ** 3 + 75 * mu ** 2 + 30 * mu + 1
    np.testing.assert_allclose(dk.grad(lambda m: stats.poisson.moment(5, m))(mu), want,
                               rtol=RTOL)


def test_multivariate_summary_derivatives_match_scipy():
    alpha = (1.5, 2.0, 3.5)
    for method in ("entropy", "var", "mean"):
        _check_against_scipy(
            lambda a, b, c, method=method: getattr(stats.dirichlet, method)(dnp.stack([a, b, c])),
            lambda a, b, c, method=method: getattr(ss.dirichlet, method)(np.array([a, b, c])),
            alpha, (0, 1, 2))
    _check_against_scipy(lambda a, b: stats.dirichlet.cov(dnp.stack([a, b, 1.0])),
                         lambda a, b: ss.dirichlet.cov(np.array([a, b, 1.0])), alpha[:2],
                         (0, 1))
    # entropy in a symmetric covariance [[a, c], [c, b]]: d/da = inv[0, 0] / 2, etc.
    def ours(a, b, c):
        return stats.multivariate_normal.entropy(None, dnp.stack([dnp.stack([a, c]),
                                                                  dnp.stack([c, b])]))

    def theirs(a, b, c):
        return ss.multivariate_normal.entropy(None, np.array([[a, c], [c, b]]))

    _check_against_scipy(ours, theirs, (2.0, 1.5, 0.4), (0, 1, 2))
    # a marginal's logpdf in the full mean and covariance
    mean, cov = np.array([0.2, -1.0, 0.5]), np.array([[2.0, 0.5, 0.1], [0.5, 1.0, 0.3],
                                                      [0.1, 0.3, 1.5]])
    g = dk.grad(lambda m: stats.multivariate_normal.marginal([0, 2], m, cov).logpdf(
        [0.4, 0.1]))(mean)
    sub = cov[np.ix_([0, 2], [0, 2])]
    r = np.linalg.solve(sub, np.array([0.4, 0.1]) - mean[[0, 2]])
    np.testing.assert_allclose(g, [r[0], 0.0, r[1]], rtol=1e-10)


# --- frozen distributions ------------------------------------------------------------------


@pytest.mark.parametrize("method", ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"])
def test_frozen_norm_differentiates_in_loc_scale_and_x(method):
    def ours(x, m, s):
        return getattr(stats.norm(m, s), method)(x)

    def theirs(x, m, s):
        return getattr(ss.norm(m, s), method)(x)

    _check_against_scipy(ours, theirs, (0.7, -0.2, 1.3), (0, 1, 2))
    _check_against_scipy(lambda x, m, s: getattr(stats.norm(loc=m, scale=s), method)(x),
                         theirs, (0.7, -0.2, 1.3), (0, 1, 2), order2=False)


def test_frozen_shape_parameters_and_quantiles_differentiate():
    _check_against_scipy(lambda q, d, s: stats.t(d, scale=s).ppf(q),
                         lambda q, d, s: ss.t(d, scale=s).ppf(q), (0.3, 4.5, 1.2), (0, 1, 2))
    _check_against_scipy(lambda a, b: stats.beta(a, b).mean(),
                         lambda a, b: ss.beta(a, b).mean(), (2.0, 3.0), (0, 1))
    _check_against_scipy(lambda mu: stats.poisson(mu).logpmf(3),
                         lambda mu: ss.poisson(mu).logpmf(3), (2.0,), (0,))
    _check_against_scipy(lambda p: stats.binom(6, p, loc=1).sf(3),
                         lambda p: ss.binom(6, p, loc=1).sf(3), (0.4,), (0,))


def test_frozen_multivariate_differentiate():
    x = np.array([0.3, -0.4])

    def ours(m0, c01):
        cov = dnp.stack([dnp.stack([2.0, c01]), dnp.stack([c01, 1.0])])
        return stats.multivariate_normal(dnp.stack([m0, 0.5]), cov).logpdf(x)

    def theirs(m0, c01):
        return ss.multivariate_normal([m0, 0.5], [[2.0, c01], [c01, 1.0]]).logpdf(x)

    _check_against_scipy(ours, theirs, (0.1, 0.3), (0, 1))
    _check_against_scipy(lambda a: stats.dirichlet(dnp.stack([a, 2.0, 3.0])).logpdf(
                             [0.2, 0.3, 0.5]),
                         lambda a: ss.dirichlet([a, 2.0, 3.0]).logpdf([0.2, 0.3, 0.5]),
                         (1.5,), (0,))


def test_vmap_over_frozen_parameters():
    locs, scales = np.array([-1.0, 0.0, 2.5]), np.array([0.5, 1.0, 3.0])
    x = np.array([0.3, 1.1])
    got = dk.vmap(lambda m, s: stats.norm(m, s).logpdf(x))(locs, scales)
    want = np.stack([ss.norm(m, s).logpdf(x) for m, s in zip(locs, scales)])
    np.testing.assert_allclose(got, want, rtol=RTOL)
    # per-(loc, scale) gradients of the entropy, median and interval
    grads = dk.vmap(dk.grad(lambda m, s: stats.norm(m, s).std() + stats.norm(m, s).median(),
                            argnums=(0, 1)))(locs, scales)
    np.testing.assert_allclose(grads[0], np.ones(3), rtol=RTOL)
    np.testing.assert_allclose(grads[1], np.ones(3), rtol=RTOL)
    got = dk.vmap(lambda m, s: dnp.stack(stats.logistic(m, s).interval(0.5)))(locs, scales)
    want = np.stack([np.stack(ss.logistic(m, s).interval(0.5)) for m, s in zip(locs, scales)])
    np.testing.assert_allclose(got, want, rtol=RTOL)
    dfs = np.array([2.5, 5.0, 9.0])
    got = dk.vmap(lambda d: dnp.stack(stats.t(d).stats(moments="mvsk")))(dfs)
    np.testing.assert_allclose(got, [np.stack(ss.t(d).stats(moments="mvsk")) for d in dfs],
                               rtol=RTOL)


# --- methods computed by SciPy ---------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_rvs_gives_scipys_numbers(name):
    ours, theirs = getattr(stats, name), getattr(ss, name)
    args = {"t": (3.0,), "gamma": (2.0,), "chi2": (3.0,), "beta": (2.0, 3.0),
            "lognorm": (0.5,), "poisson": (2.0,), "binom": (5, 0.3),
            "dirichlet": ([1.0, 2.0],), "multivariate_normal": ([0.0, 1.0], 2.0)}.get(name, ())
    for seed in (0, 12345):
        np.testing.assert_array_equal(ours.rvs(*args, size=4, random_state=seed),
                                      theirs.rvs(*args, size=4, random_state=seed))
        np.testing.assert_array_equal(ours(*args).rvs(size=3, random_state=seed),
                                      theirs(*args).rvs(size=3, random_state=seed))
        np.testing.assert_array_equal(
            ours.rvs(*args, size=3, random_state=np.random.default_rng(seed)),
            theirs.rvs(*args, size=3, random_state=np.random.default_rng(seed)))
    # a distribution's own random_state, as SciPy's
    frozen, twin = ours(*args), theirs(*args)
    frozen.random_state, twin.random_state = 7, 7
    np.testing.assert_array_equal(frozen.rvs(size=2), twin.rvs(size=2))


def test_norm_rvs_without_size_is_a_scalar_draw():
    assert np.shape(stats.norm.rvs(random_state=1)) == np.shape(ss.norm.rvs(random_state=1))
    np.testing.assert_array_equal(stats.norm.rvs(loc=[0.0, 5.0], random_state=3),
                                  ss.norm.rvs(loc=[0.0, 5.0], random_state=3))


def test_scipy_computed_methods_with_plain_values():
    data = ss.gamma.rvs(2.5, scale=1.5, size=200, random_state=0)
    np.testing.assert_array_equal(stats.gamma.fit(data, floc=0), ss.gamma.fit(data, floc=0))
    np.testing.assert_array_equal(stats.norm.fit(data), ss.norm.fit(data))
    np.testing.assert_array_equal(stats.norm.fit_loc_scale(data), ss.norm.fit_loc_scale(data))
    np.testing.assert_allclose(stats.norm.expect(lambda x: x * x, loc=1.0, scale=2.0),
                               ss.norm.expect(lambda x: x * x, loc=1.0, scale=2.0), rtol=RTOL)
    np.testing.assert_allclose(stats.norm(1.0, 2.0).expect(lambda x: x * x), 5.0, rtol=1e-10)
    np.testing.assert_allclose(stats.poisson(2.0).expect(lambda k: k), 2.0, rtol=1e-10)
    assert stats.poisson.median(2.5) == ss.poisson.median(2.5)
    assert stats.binom.ppf(0.3, 8, 0.4) == ss.binom.ppf(0.3, 8, 0.4)
    assert stats.binom.isf(0.3, 8, 0.4) == ss.binom.isf(0.3, 8, 0.4)
    assert stats.poisson.interval(0.9, 3.0) == ss.poisson.interval(0.9, 3.0)
    np.testing.assert_allclose(stats.binom.entropy(8, 0.4), ss.binom.entropy(8, 0.4), rtol=RTOL)
    np.testing.assert_allclose(stats.binom(8, 0.4).entropy(), ss.binom.entropy(8, 0.4),
                               rtol=RTOL)
    x = np.array([0.3, -0.2])
    np.testing.assert_allclose(
        stats.multivariate_normal.cdf(x, [0.0, 0.1], [[1.0, 0.3], [0.3, 2.0]], rng=1),
        ss.multivariate_normal.cdf(x, [0.0, 0.1], [[1.0, 0.3], [0.3, 2.0]], rng=1),
        rtol=RTOL)
    np.testing.assert_allclose(stats.multivariate_normal([0.0, 0.1]).logcdf(x, rng=2),
                               ss.multivariate_normal([0.0, 0.1]).logcdf(x, rng=2), rtol=RTOL)
    pts = ss.multivariate_normal.rvs([0.0, 1.0], [[1.0, 0.3], [0.3, 2.0]], size=50,
                                     random_state=0)
    for got, want in zip(stats.multivariate_normal.fit(pts), ss.multivariate_normal.fit(pts)):
        np.testing.assert_array_equal(got, want)
    covariance = ss.Covariance.from_diagonal([1.0, 2.0])
    np.testing.assert_allclose(stats.multivariate_normal.logpdf(x, [0.0, 0.1], covariance),
                               ss.multivariate_normal.logpdf(x, [0.0, 0.1], covariance),
                               rtol=RTOL)
    np.testing.assert_allclose(stats.multivariate_normal(cov=covariance).entropy(),
                               ss.multivariate_normal(cov=covariance).entropy(), rtol=RTOL)
    singular = np.array([[1.0, 1.0], [1.0, 1.0]])
    np.testing.assert_allclose(
        stats.multivariate_normal.logpdf([0.5, 0.5], cov=singular, allow_singular=True),
        ss.multivariate_normal.logpdf([0.5, 0.5], cov=singular, allow_singular=True),
        rtol=RTOL)


@pytest.mark.parametrize("call,pattern", [
    (lambda v: stats.norm.rvs(loc=v, size=2), r"norm\.rvs .* argument 'loc'"),
    (lambda v: stats.norm(v, 1.0).rvs(size=2), r"norm\.rvs .* argument 'loc'"),
    (lambda v: stats.gamma.rvs(v), r"gamma\.rvs .* argument 'a'"),
    (lambda v: stats.norm.fit(dnp.stack([v, 2.0, 3.0])), r"norm\.fit .* argument 'data'"),
    (lambda v: stats.norm.expect(lambda x: x, loc=v), r"norm\.expect .* argument 'loc'"),
    (lambda v: stats.norm(v).expect(lambda x: x), r"norm\(\.\.\.\)\.expect .* 'loc'"),
    (lambda v: stats.poisson.ppf(0.5, v), r"poisson\.ppf .* argument 'mu'"),
    (lambda v: stats.binom.median(8, v), r"binom\.median .* argument 'p'"),
    (lambda v: stats.poisson(v).entropy(), r"poisson\.entropy .* argument 'mu'"),
    (lambda v: stats.dirichlet.rvs(dnp.stack([v, 1.0])), r"dirichlet\.rvs .* 'alpha'"),
    (lambda v: stats.multivariate_normal.cdf(dnp.stack([v, 0.0])),
     r"multivariate_normal\.cdf .* argument 'x'"),
    (lambda v: stats.multivariate_normal(dnp.stack([v, 0.0])).rvs(),
     r"multivariate_normal\(\.\.\.\)\.rvs .* argument 'mean'"),
])
@pytest.mark.parametrize("transform", ["grad", "vmap"])
def test_traced_arguments_to_scipy_methods_are_named(call, pattern, transform):
    def scalar(v):
        return dnp.sum(dnp.asarray(call(v), dtype=float))

    with pytest.raises(NoRuleError, match=pattern) as info:
        if transform == "grad":
            dk.grad(scalar)(0.5)
        else:
            dk.vmap(scalar)(np.array([0.5, 0.7]))
    assert "Call it with plain values" in str(info.value)
    assert "diffkit.scipy.stats." in str(info.value)


def test_module_level_distribution_keeps_its_own_random_state():
    before = ss.norm.random_state
    stats.norm.random_state = 5
    try:
        assert ss.norm.random_state is before
        np.testing.assert_array_equal(stats.norm.rvs(size=3),
                                      np.random.RandomState(5).standard_normal(3))
    finally:
        stats.norm.random_state = None
