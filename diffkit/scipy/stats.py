"""``diffkit.scipy.stats``: SciPy's probability distributions, differentiable.

One object per distribution, with SciPy's method names, signatures and values:
``stats.norm.logpdf(x, loc=0, scale=1)``, ``stats.gamma.cdf(x, a, loc=0, scale=1)``,
``stats.poisson.logpmf(k, mu, loc=0)``, ``stats.multivariate_normal.logpdf(x, mean, cov)``.
Every method is a composition of differentiable functions (``diffkit.numpy`` and
``diffkit.scipy.special``), so it is differentiable in the values and in every continuous
parameter, in both engines and to any order the special functions support (the shape
parameters of ``gammainc``/``betainc``, used by the cdfs of ``gamma``, ``chi2``, ``beta``
and ``t``, to third order), and it batches under ``vmap``.

Conventions (as SciPy):

- invalid parameters (``scale <= 0``, a shape parameter out of its range, ``p`` outside
  [0, 1], a probability outside [0, 1] given to ``ppf``/``isf``) give nan, not an error;
- outside the support ``logpdf`` is ``-inf``, ``pdf`` 0, ``cdf`` 0 or 1 (their derivatives
  there are 0);
- discrete distributions take integer ``k`` (and ``n`` for ``binom``), held fixed: a
  non-integer ``k`` gives pmf 0, and ``cdf``/``sf`` use ``floor(k)``;
- ``multivariate_normal`` factors ``cov`` by Cholesky (it must be positive definite; the
  derivative in ``cov`` is the symmetric one, that of ``(cov + cov.T) / 2``);
  ``dirichlet`` takes the components along the first axis of ``x``, as SciPy, and does not
  validate ``x`` (SciPy raises for ``x`` off the simplex).
"""

import math

import numpy as np

from .. import numpy as dnp
from . import special as sp

__all__ = [
    "norm", "t", "gamma", "beta", "expon", "laplace", "logistic", "cauchy", "chi2",
    "uniform", "lognorm", "poisson", "binom", "dirichlet", "multivariate_normal",
]

_LOG_2 = math.log(2.0)
_LOG_PI = math.log(math.pi)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_NAN = float("nan")
_INF = float("inf")


def _float(x):
    """Plain inputs as float arrays (integers promoted); traced values as they are."""
    if isinstance(x, (bool, int, float, complex, list, tuple, np.ndarray, np.generic)):
        a = np.asarray(x)
        return a.astype(np.float64) if a.dtype.kind in "biu" else a
    return x


def _int(x):
    """Integer-valued arguments (``k``, ``n``): no derivative, as float arrays."""
    return dnp.stop_gradient(_float(x))


def _and(*conditions):
    out = conditions[0]
    for c in conditions[1:]:
        out = dnp.logical_and(out, c)
    return out


def _log(x):
    """``log`` with ``log(0) = -inf``, nan for negative or nan ``x``, and no warning."""
    positive = x > 0
    return dnp.where(positive, dnp.log(dnp.where(positive, x, 1.0)),
                     dnp.where(x == 0, -_INF, _NAN))


# --- continuous univariate distributions -----------------------------------------------------



def _bind(where, names, required, args, kwds):
    """SciPy's argument binding: positional then keyword arguments named ``names``, with
    ``required`` ones (the shape parameters) mandatory. Returns a dict name -> value."""
    if len(args) > len(names):
        raise TypeError(f"{where}() takes at most {len(names) + 1} positional arguments "
                        f"({len(args) + 1} given)")
    given = dict(zip(names, args))
    for key, value in kwds.items():
        if key not in names:
            raise TypeError(f"{where}() got an unexpected keyword argument {key!r}")
        if key in given:
            raise TypeError(f"{where}() got multiple values for {key!r}")
        given[key] = value
    missing = [n for n in required if n not in given]
    if missing:
        raise TypeError(f"{where}() missing required argument(s): "
                        f"{', '.join(map(repr, missing))}")
    return given

class _Continuous:
    """A location-scale family. Subclasses give the standardized functions of
    ``z = (x - loc) / scale`` and of the (valid) shape parameters, named ``_logpdf``,
    ``_cdf``, ``_sf``, ``_logcdf``, ``_logsf``, ``_ppf``, ``_isf``; ``_shapes`` names the
    shape parameters and ``_valid`` says which values are allowed (``_fill``: a valid value
    standing in for invalid ones, so no branch computes with them)."""

    name = ""
    _shapes = ()
    _fill = ()

    def _valid(self, *shapes):
        return True

    # defaults in terms of the others
    def _logcdf(self, z, *s):
        cdf = self._cdf(z, *s)   # log1p(-sf) where the cdf is close to 1
        return dnp.where(cdf < 0.5, _log(cdf), dnp.log1p(-dnp.minimum(self._sf(z, *s), 0.5)))

    def _logsf(self, z, *s):
        sf = self._sf(z, *s)
        return dnp.where(sf < 0.5, _log(sf), dnp.log1p(-dnp.minimum(self._cdf(z, *s), 0.5)))

    def _isf(self, q, *s):
        return self._ppf(1.0 - q, *s)

    def _parse(self, method, value, args, kwds):
        names = (*self._shapes, "loc", "scale")
        given = _bind(f"{self.name}.{method}", names, self._shapes, args, kwds)
        shapes = [_float(given[n]) for n in self._shapes]
        loc = _float(given.get("loc", 0.0))
        scale = _float(given.get("scale", 1.0))
        ok = _and(scale > 0, self._valid(*shapes)) if self._shapes else scale > 0
        shapes = [dnp.where(ok, s, f) for s, f in zip(shapes, self._fill)]
        scale = dnp.where(ok, scale, 1.0)
        return _float(value), shapes, loc, scale, ok

    def _density(self, method, x, args, kwds, log):
        x, s, loc, scale, ok = self._parse(method, x, args, kwds)
        out = self._logpdf((x - loc) / scale, *s) - dnp.log(scale)
        return dnp.where(ok, out if log else dnp.exp(out), _NAN)

    def _probability(self, method, x, args, kwds, fn):
        x, s, loc, scale, ok = self._parse(method, x, args, kwds)
        return dnp.where(ok, fn((x - loc) / scale, *s), _NAN)

    def _quantile(self, method, q, args, kwds, fn):
        q, s, loc, scale, ok = self._parse(method, q, args, kwds)
        inside = _and(q >= 0, q <= 1)
        out = loc + scale * fn(dnp.where(inside, q, 0.5), *s)
        return dnp.where(_and(ok, inside), out, _NAN)

    def logpdf(self, x, *args, **kwds):
        return self._density("logpdf", x, args, kwds, log=True)

    def pdf(self, x, *args, **kwds):
        return self._density("pdf", x, args, kwds, log=False)

    def cdf(self, x, *args, **kwds):
        return self._probability("cdf", x, args, kwds, self._cdf)

    def logcdf(self, x, *args, **kwds):
        return self._probability("logcdf", x, args, kwds, self._logcdf)

    def sf(self, x, *args, **kwds):
        return self._probability("sf", x, args, kwds, self._sf)

    def logsf(self, x, *args, **kwds):
        return self._probability("logsf", x, args, kwds, self._logsf)

    def ppf(self, q, *args, **kwds):
        return self._quantile("ppf", q, args, kwds, self._ppf)

    def isf(self, q, *args, **kwds):
        return self._quantile("isf", q, args, kwds, self._isf)

    def __repr__(self):
        return f"<diffkit.scipy.stats.{self.name}>"


class _Norm(_Continuous):
    name = "norm"

    def _logpdf(self, z):
        return -0.5 * z * z - _LOG_SQRT_2PI

    def _cdf(self, z):
        return sp.ndtr(z)

    def _sf(self, z):
        return sp.ndtr(-z)

    def _logcdf(self, z):
        return sp.log_ndtr(z)

    def _logsf(self, z):
        return sp.log_ndtr(-z)

    def _ppf(self, q):
        return sp.ndtri(q)

    def _isf(self, q):
        return -sp.ndtri(q)


class _T(_Continuous):
    """Student's t. The cdf is ``I_t(1/2, df/2)`` of ``t = z^2 / (df + z^2)`` near the
    centre and ``I_x(df/2, 1/2)`` of ``x = df / (df + z^2)`` in the tails; very near the
    centre (``z^2 < 1e-5 min(df, 1)``, where the composition has 0 * inf derivatives at ``z == 0``
    and loses accuracy around it) its Taylor polynomial of degree 5 in ``z``, whose
    coefficients are exact in ``df``: values to rounding and derivatives exact at 0."""

    name = "t"
    _shapes = ("df",)
    _fill = (1.0,)

    def _valid(self, df):
        return df > 0

    def _log_norm(self, df):
        return sp.gammaln(0.5 * (df + 1)) - sp.gammaln(0.5 * df) - 0.5 * (dnp.log(df) + _LOG_PI)

    def _logpdf(self, z, df):
        return self._log_norm(df) - 0.5 * (df + 1) * dnp.log1p(z * z / df)

    def _tail(self, z, df, near):
        """P(T > |z|) (any value where ``near``: the caller uses the Taylor polynomial)."""
        z2 = z * z
        centre = z2 < df
        t = z2 / (df + z2)
        use = _and(centre, dnp.logical_not(near))
        inner = 0.5 - 0.5 * sp.betainc(0.5, 0.5 * df, dnp.where(use, t, 0.5))
        outer = 0.5 * sp.betainc(0.5 * df, 0.5, dnp.where(centre, 0.5, df / (df + z2)))
        return dnp.where(centre, inner, outer)

    def _near_zero(self, z, df):
        """Whether to use the Taylor polynomial, and the polynomial:
        ``0.5 + c z (1 - (df+1)/(6 df) z^2 + (df+1)(df+3)/(40 df^2) z^4)``."""
        near = z * z < 1e-5 * dnp.minimum(df, 1.0)
        u = dnp.where(near, z, 0.0)
        u2 = u * u / df
        series = 1 - (df + 1) / 6 * u2 + (df + 1) * (df + 3) / 40 * u2 * u2
        return near, 0.5 + dnp.exp(self._log_norm(df)) * u * series

    def _cdf(self, z, df):
        near, series = self._near_zero(z, df)
        tail = self._tail(z, df, near)
        return dnp.where(near, series, dnp.where(z < 0, tail, 1.0 - tail))

    def _sf(self, z, df):
        return self._cdf(-z, df)

    def _logcdf(self, z, df):
        near, series = self._near_zero(z, df)
        tail = self._tail(z, df, near)
        return dnp.where(near, dnp.log(series),
                         dnp.where(z < 0, _log(tail), dnp.log1p(-tail)))

    def _logsf(self, z, df):
        return self._logcdf(-z, df)

    def _ppf(self, q, df):
        # Near q = 1/2 (where sqrt(1 - x) below has a 0 * inf derivative) the inverse of
        # the cdf's Taylor polynomial (see _near_zero): z = w + A w^3 + (3 A^2 - B) w^5.
        w = (q - 0.5) / dnp.exp(self._log_norm(df))
        near = w * w < 1e-5 * dnp.minimum(df, 1.0)
        ws = dnp.where(near, w, 0.0)
        a3 = (df + 1) / (6 * df)
        a5 = (df + 1) * (df + 3) / (40 * df * df)
        series = ws * (1 + a3 * ws * ws + (3 * a3 * a3 - a5) * ws ** 4)
        # |z| from the tail probability p = min(q, 1 - q): in the tails from
        # x = df / (df + z^2) = I^-1_{2p}(df/2, 1/2), in the centre (x > 1/2, where 1 - x
        # would cancel) from t = z^2 / (df + z^2) = I^-1_{|2q - 1|}(1/2, df/2).
        p = dnp.where(near, 0.25, dnp.minimum(q, 1.0 - q))
        x = sp.betaincinv(0.5 * df, 0.5, 2.0 * p)
        centre = _and(x > 0.5, dnp.logical_not(near))
        xs = dnp.where(_and(x > 0, dnp.logical_not(centre)), x, 0.5)
        tails = dnp.where(x > 0, dnp.sqrt(df * (1.0 - xs) / xs), _INF)
        t = sp.betaincinv(0.5, 0.5 * df, dnp.where(centre, dnp.abs(2.0 * q - 1.0), 0.5))
        middle = dnp.sqrt(df * t / (1.0 - t))
        size = dnp.where(centre, middle, tails)
        return dnp.where(near, series, dnp.where(q < 0.5, -size, size))

    def _isf(self, q, df):
        return -self._ppf(q, df)


class _Gamma(_Continuous):
    name = "gamma"
    _shapes = ("a",)
    _fill = (1.0,)

    def _valid(self, a):
        return a > 0

    def _logpdf(self, z, a):
        zs = dnp.where(z >= 0, z, 1.0)
        return dnp.where(z >= 0, sp.xlogy(a - 1, zs) - zs - sp.gammaln(a), -_INF)

    def _cdf(self, z, a):
        positive = z > 0
        return dnp.where(positive, sp.gammainc(a, dnp.where(positive, z, 1.0)), 0.0)

    def _sf(self, z, a):
        positive = z > 0
        return dnp.where(positive, sp.gammaincc(a, dnp.where(positive, z, 1.0)), 1.0)

    def _ppf(self, q, a):
        return sp.gammaincinv(a, q)

    def _isf(self, q, a):
        return sp.gammainccinv(a, q)


class _Chi2(_Gamma):
    """``chi2(df) = gamma(df / 2, scale=2)``."""

    name = "chi2"
    _shapes = ("df",)

    def _logpdf(self, z, df):
        return super()._logpdf(0.5 * z, 0.5 * df) - _LOG_2

    def _cdf(self, z, df):
        return super()._cdf(0.5 * z, 0.5 * df)

    def _sf(self, z, df):
        return super()._sf(0.5 * z, 0.5 * df)

    def _ppf(self, q, df):
        return 2.0 * sp.gammaincinv(0.5 * df, q)

    def _isf(self, q, df):
        return 2.0 * sp.gammainccinv(0.5 * df, q)


class _Beta(_Continuous):
    name = "beta"
    _shapes = ("a", "b")
    _fill = (1.0, 1.0)

    def _valid(self, a, b):
        return _and(a > 0, b > 0)

    def _inside(self, z):
        inside = _and(z >= 0, z <= 1)
        return inside, dnp.where(inside, z, 0.5)

    def _logpdf(self, z, a, b):
        inside, zs = self._inside(z)
        out = sp.xlogy(a - 1, zs) + sp.xlog1py(b - 1, -zs) - sp.betaln(a, b)
        return dnp.where(inside, out, -_INF)

    def _cdf(self, z, a, b):
        inside, zs = self._inside(z)
        return dnp.where(inside, sp.betainc(a, b, zs), dnp.where(z < 0, 0.0, 1.0))

    def _sf(self, z, a, b):
        inside, zs = self._inside(z)
        return dnp.where(inside, sp.betaincc(a, b, zs), dnp.where(z < 0, 1.0, 0.0))

    def _ppf(self, q, a, b):
        return sp.betaincinv(a, b, q)

    def _isf(self, q, a, b):
        return sp.betainccinv(a, b, q)


class _Expon(_Continuous):
    name = "expon"

    def _logpdf(self, z):
        return dnp.where(z >= 0, -z, -_INF)

    def _cdf(self, z):
        return dnp.where(z > 0, -dnp.expm1(-dnp.maximum(z, 0.0)), 0.0)

    def _sf(self, z):
        return dnp.where(z > 0, dnp.exp(-dnp.maximum(z, 0.0)), 1.0)

    def _logcdf(self, z):
        positive = z > 0
        zs = dnp.where(positive, z, 1.0)
        far = zs > _LOG_2
        out = dnp.where(far, dnp.log1p(-dnp.exp(-dnp.maximum(zs, _LOG_2))),
                        dnp.log(-dnp.expm1(-dnp.minimum(zs, _LOG_2))))
        return dnp.where(positive, out, -_INF)

    def _logsf(self, z):
        return dnp.where(z > 0, -z, 0.0)

    def _ppf(self, q):
        return -dnp.log1p(-q)

    def _isf(self, q):
        return -_log(q)


class _Laplace(_Continuous):
    name = "laplace"

    def _logpdf(self, z):
        return -dnp.abs(z) - _LOG_2

    def _half_tail(self, z):
        """0.5 exp(-|z|): the smaller of cdf and sf."""
        return 0.5 * dnp.exp(-dnp.abs(z))

    def _cdf(self, z):
        h = self._half_tail(z)
        return dnp.where(z < 0, h, 1.0 - h)

    def _sf(self, z):
        return self._cdf(-z)

    def _logcdf(self, z):
        return dnp.where(z < 0, -dnp.abs(z) - _LOG_2, dnp.log1p(-self._half_tail(z)))

    def _logsf(self, z):
        return self._logcdf(-z)

    def _ppf(self, q):
        lower = q < 0.5
        return dnp.where(lower, _log(2.0 * dnp.where(lower, q, 0.25)),
                         -_log(2.0 - 2.0 * dnp.where(lower, 0.75, q)))

    def _isf(self, q):
        return -self._ppf(q)


class _Logistic(_Continuous):
    name = "logistic"

    def _logpdf(self, z):
        return sp.log_expit(z) + sp.log_expit(-z)

    def _cdf(self, z):
        return sp.expit(z)

    def _sf(self, z):
        return sp.expit(-z)

    def _logcdf(self, z):
        return sp.log_expit(z)

    def _logsf(self, z):
        return sp.log_expit(-z)

    def _ppf(self, q):
        return sp.logit(q)

    def _isf(self, q):
        return -sp.logit(q)


class _Cauchy(_Continuous):
    name = "cauchy"

    def _logpdf(self, z):
        return -_LOG_PI - dnp.log1p(z * z)

    def _cdf(self, z):
        return 0.5 + dnp.arctan(z) / math.pi

    def _sf(self, z):
        return 0.5 - dnp.arctan(z) / math.pi

    def _ppf(self, q):
        # tan(pi (q - 1/2)) in the middle; -cot(pi q) from the nearer tail (accurate there)
        middle = dnp.abs(q - 0.5) < 0.25
        centre = dnp.tan(math.pi * (dnp.where(middle, q, 0.5) - 0.5))
        lower = q < 0.5
        p = dnp.where(middle, 0.25, dnp.where(lower, q, 1.0 - q))
        inner = p > 0
        size = dnp.where(inner, 1.0 / dnp.tan(math.pi * dnp.where(inner, p, 0.25)), _INF)
        return dnp.where(middle, centre, dnp.where(lower, -size, size))

    def _isf(self, q):
        return -self._ppf(q)


class _Uniform(_Continuous):
    name = "uniform"

    def _logpdf(self, z):
        return dnp.where(_and(z >= 0, z <= 1), 0.0 * z, -_INF)

    def _cdf(self, z):
        return dnp.where(z < 0, 0.0, dnp.where(z > 1, 1.0, z))

    def _sf(self, z):
        return 1.0 - self._cdf(z)

    def _ppf(self, q):
        return q

    def _isf(self, q):
        return 1.0 - q


class _Lognorm(_Continuous):
    name = "lognorm"
    _shapes = ("s",)
    _fill = (1.0,)

    def _valid(self, s):
        return s > 0

    def _log_z(self, z):
        positive = z > 0
        return positive, dnp.log(dnp.where(positive, z, 1.0))

    def _logpdf(self, z, s):
        positive, lz = self._log_z(z)
        u = lz / s
        return dnp.where(positive, -0.5 * u * u - _LOG_SQRT_2PI - dnp.log(s) - lz, -_INF)

    def _cdf(self, z, s):
        positive, lz = self._log_z(z)
        return dnp.where(positive, sp.ndtr(lz / s), 0.0)

    def _sf(self, z, s):
        positive, lz = self._log_z(z)
        return dnp.where(positive, sp.ndtr(-lz / s), 1.0)

    def _logcdf(self, z, s):
        positive, lz = self._log_z(z)
        return dnp.where(positive, sp.log_ndtr(lz / s), -_INF)

    def _logsf(self, z, s):
        positive, lz = self._log_z(z)
        return dnp.where(positive, sp.log_ndtr(-lz / s), 0.0)

    def _ppf(self, q, s):
        return dnp.exp(s * sp.ndtri(q))

    def _isf(self, q, s):
        return dnp.exp(-s * sp.ndtri(q))


norm = _Norm()
t = _T()
gamma = _Gamma()
chi2 = _Chi2()
beta = _Beta()
expon = _Expon()
laplace = _Laplace()
logistic = _Logistic()
cauchy = _Cauchy()
uniform = _Uniform()
lognorm = _Lognorm()


# --- discrete distributions ------------------------------------------------------------------


class _Discrete:
    """Shared parsing of a discrete distribution: ``k`` (shifted by the integer ``loc``) and
    the integer parameters are held fixed; the continuous ones are differentiable."""

    name = ""
    _shapes = ()

    def _parse(self, method, k, args, kwds):
        names = (*self._shapes, "loc")
        given = _bind(f"{self.name}.{method}", names, self._shapes, args, kwds)
        k = _int(k) - _int(given.get("loc", 0))
        return k, [given[n] for n in self._shapes]

    def pmf(self, k, *args, **kwds):
        return dnp.exp(self.logpmf(k, *args, **kwds))

    def logcdf(self, k, *args, **kwds):
        return _log(self.cdf(k, *args, **kwds))

    def logsf(self, k, *args, **kwds):
        return _log(self.sf(k, *args, **kwds))

    def __repr__(self):
        return f"<diffkit.scipy.stats.{self.name}>"


class _Poisson(_Discrete):
    """``logpmf = k log(mu) - mu - log(k!)`` (``xlogy``: exact at ``mu = 0``);
    ``cdf = gammaincc(floor(k) + 1, mu)``, ``sf = gammainc(floor(k) + 1, mu)``."""

    name = "poisson"
    _shapes = ("mu",)

    def _args(self, method, k, args, kwds):
        k, (mu,) = self._parse(method, k, args, kwds)
        mu = _float(mu)
        ok = mu >= 0
        return k, dnp.where(ok, mu, 1.0), ok

    def logpmf(self, k, *args, **kwds):
        k, mu, ok = self._args("logpmf", k, args, kwds)
        support = _and(k >= 0, k == dnp.floor(k))
        ks = dnp.where(support, k, 0.0)
        out = dnp.where(support, sp.xlogy(ks, mu) - mu - sp.gammaln(ks + 1), -_INF)
        return dnp.where(ok, out, _NAN)

    def _tails(self, method, k, args, kwds):
        k, mu, ok = self._args(method, k, args, kwds)
        support = k >= 0
        a = dnp.floor(dnp.where(support, k, 0.0)) + 1
        positive = mu > 0
        mus = dnp.where(positive, mu, 1.0)
        cdf = dnp.where(positive, sp.gammaincc(a, mus), 1.0)
        sf = dnp.where(positive, sp.gammainc(a, mus), 0.0)
        return (dnp.where(ok, dnp.where(support, cdf, 0.0), _NAN),
                dnp.where(ok, dnp.where(support, sf, 1.0), _NAN))

    def cdf(self, k, *args, **kwds):
        return self._tails("cdf", k, args, kwds)[0]

    def sf(self, k, *args, **kwds):
        return self._tails("sf", k, args, kwds)[1]


class _Binom(_Discrete):
    """``logpmf = log C(n, k) + k log(p) + (n - k) log1p(-p)`` (``xlogy``/``xlog1py``:
    exact at ``p = 0`` and ``p = 1``); ``cdf = betainc(n - k, k + 1, 1 - p)`` and
    ``sf = betainc(k + 1, n - k, p)`` for ``0 <= k < n`` (``k`` floored)."""

    name = "binom"
    _shapes = ("n", "p")

    def _args(self, method, k, args, kwds):
        k, (n, p) = self._parse(method, k, args, kwds)
        n, p = _int(n), _float(p)
        ok = _and(n >= 0, n == dnp.floor(n), p >= 0, p <= 1)
        return k, dnp.where(ok, n, 1.0), dnp.where(ok, p, 0.5), ok

    def logpmf(self, k, *args, **kwds):
        k, n, p, ok = self._args("logpmf", k, args, kwds)
        support = _and(k >= 0, k <= n, k == dnp.floor(k))
        ks = dnp.where(support, k, 0.0)
        comb = sp.gammaln(n + 1) - sp.gammaln(ks + 1) - sp.gammaln(n - ks + 1)
        out = comb + sp.xlogy(ks, p) + sp.xlog1py(n - ks, -p)
        return dnp.where(ok, dnp.where(support, out, -_INF), _NAN)

    def _tails(self, method, k, args, kwds):
        k, n, p, ok = self._args(method, k, args, kwds)
        k = dnp.floor(k)
        inside = _and(k >= 0, k < n)
        ks = dnp.where(inside, k, 0.0)
        ns = dnp.where(inside, n, 1.0)
        # betainc at x = 0 or 1 has no derivative trouble in x only inside (0, 1)
        interior = _and(p > 0, p < 1)
        ps = dnp.where(interior, p, 0.5)
        sf = dnp.where(interior, sp.betainc(ks + 1, ns - ks, ps), dnp.where(p > 0.5, 1.0, 0.0))
        sf = dnp.where(inside, sf, dnp.where(k < 0, 1.0, 0.0))
        cdf = dnp.where(interior, sp.betainc(ns - ks, ks + 1, 1.0 - ps),
                        dnp.where(p > 0.5, 0.0, 1.0))
        cdf = dnp.where(inside, cdf, dnp.where(k < 0, 0.0, 1.0))
        return dnp.where(ok, cdf, _NAN), dnp.where(ok, sf, _NAN)

    def cdf(self, k, *args, **kwds):
        return self._tails("cdf", k, args, kwds)[0]

    def sf(self, k, *args, **kwds):
        return self._tails("sf", k, args, kwds)[1]


poisson = _Poisson()
binom = _Binom()


# --- multivariate distributions --------------------------------------------------------------


def _squeeze(out):
    """SciPy's ``_squeeze_output``: drop length-1 axes."""
    return dnp.squeeze(out) if 1 in dnp.shape(out) else out


class _Dirichlet:
    """``logpdf(x, alpha) = lgamma(sum alpha) - sum lgamma(alpha) + sum (alpha - 1) log x``,
    the components along the first axis of ``x`` (as SciPy: ``x`` of shape ``(K, ...)``, or
    ``(K - 1, ...)`` with the last component ``1 - sum(x, axis=0)``). ``alpha <= 0`` gives
    nan."""

    name = "dirichlet"

    def _args(self, x, alpha):
        x, alpha = _float(x), _float(alpha)
        if dnp.ndim(alpha) != 1:
            raise ValueError(f"dirichlet: alpha must be one-dimensional, got shape "
                             f"{dnp.shape(alpha)}")
        size = dnp.shape(alpha)[0]
        rows = dnp.shape(x)[0] if dnp.ndim(x) else 0
        if rows == size - 1:
            last = 1.0 - dnp.sum(x, axis=0, keepdims=True)
            x = dnp.concatenate([x, last], axis=0)
        elif rows != size:
            raise ValueError(f"dirichlet: x's first axis must have length {size} or "
                             f"{size - 1} (the number of components), got shape "
                             f"{dnp.shape(x)}")
        ok = dnp.all(alpha > 0)
        alpha = dnp.where(alpha > 0, alpha, 1.0)
        return x, dnp.reshape(alpha, (size,) + (1,) * (dnp.ndim(x) - 1)), ok

    def logpdf(self, x, alpha):
        x, alpha, ok = self._args(x, alpha)
        norm = sp.gammaln(dnp.sum(alpha, axis=0)) - dnp.sum(sp.gammaln(alpha), axis=0)
        out = norm + dnp.sum(sp.xlogy(alpha - 1.0, x), axis=0)
        return _squeeze(dnp.where(ok, out, _NAN))

    def pdf(self, x, alpha):
        return dnp.exp(self.logpdf(x, alpha))

    def __repr__(self):
        return "<diffkit.scipy.stats.dirichlet>"


class _MultivariateNormal:
    """``logpdf(x, mean=None, cov=1)``: ``-(k log(2 pi) + log det cov + r^T cov^-1 r) / 2``
    with ``r = x - mean``, through the Cholesky factor ``L`` of ``cov`` (``log det cov =
    2 sum log diag L``, ``r^T cov^-1 r = |L^-1 r|^2``). As SciPy: ``x`` has the components
    on its last axis (a 1-D ``x`` is one point, or for ``k == 1`` a set of points), ``cov``
    may be a scalar (``cov * I``), a vector (a diagonal) or a matrix, and length-1 axes of
    the result are dropped."""

    name = "multivariate_normal"

    def _args(self, x, mean, cov):
        cov = _float(cov)
        if mean is None:
            mean = np.zeros(dnp.shape(cov)[0] if dnp.ndim(cov) == 2 else 1)   # SciPy's rule
        mean = _float(mean)
        if dnp.ndim(mean) == 0:
            mean = dnp.reshape(mean, (1,))
        if dnp.ndim(mean) != 1:
            raise ValueError(f"multivariate_normal: mean must be one-dimensional, got shape "
                             f"{dnp.shape(mean)}")
        dim = dnp.shape(mean)[0]
        if dnp.ndim(cov) == 0:
            cov = cov * np.eye(dim)
        elif dnp.ndim(cov) == 1:
            cov = cov * np.eye(dim)   # the diagonal (row vector times the identity)
        if dnp.shape(cov) != (dim, dim):
            raise ValueError(f"multivariate_normal: cov must be a scalar, a vector of length "
                             f"{dim} or a {dim}x{dim} matrix, got shape {dnp.shape(cov)}")
        x = _float(x)
        if dnp.ndim(x) == 0:
            x = dnp.reshape(x, (1, 1))
        elif dnp.ndim(x) == 1:
            x = dnp.reshape(x, (-1, 1) if dim == 1 else (1, -1))
        if dnp.shape(x)[-1] != dim:
            raise ValueError(f"multivariate_normal: x's last axis must have length {dim}, "
                             f"got shape {dnp.shape(x)}")
        return x, mean, cov, dim

    def logpdf(self, x, mean=None, cov=1, allow_singular=False):
        if allow_singular:
            raise NotImplementedError("multivariate_normal: allow_singular=True is not "
                                      "supported (cov must be positive definite)")
        x, mean, cov, dim = self._args(x, mean, cov)
        lower = dnp.linalg.cholesky(cov)
        r = dnp.expand_dims(x - mean, -1)                      # (..., k, 1)
        w = dnp.linalg.solve(lower, r)                         # L^-1 r
        maha = dnp.sum(w * w, axis=(-2, -1))
        logdet = 2.0 * dnp.sum(dnp.log(dnp.diagonal(lower)))
        return _squeeze(-0.5 * (dim * math.log(2 * math.pi) + logdet + maha))

    def pdf(self, x, mean=None, cov=1, allow_singular=False):
        return dnp.exp(self.logpdf(x, mean, cov, allow_singular))

    def __repr__(self):
        return "<diffkit.scipy.stats.multivariate_normal>"


dirichlet = _Dirichlet()
multivariate_normal = _MultivariateNormal()
