"""The continuous univariate distributions: standardized functions and closed forms.

Each class gives, for ``loc = 0`` and ``scale = 1``, the log density, cdf, sf, their logs
and inverses, and the closed forms of the mean, variance, skewness and excess kurtosis
(``_stats``, nan or inf where SciPy's are), the raw moments of order ``n >= 5``
(``_munp``), the entropy and the support, all written with diffkit's operations.
"""

import math

import scipy.special as _sc

from ... import numpy as dnp
from .. import special as sp
from ._common import _INF, _LOG_2, _LOG_PI, _LOG_SQRT_2PI, _NAN, _and, _log
from ._continuous import _Continuous

__all__ = ["norm", "t", "gamma", "chi2", "beta", "expon", "laplace", "logistic", "cauchy",
           "uniform", "lognorm"]

_HALF_LOG_2PI_E = 0.5 * (math.log(2.0 * math.pi) + 1.0)


def _even(n, value):
    """``value`` for even ``n``, 0 for odd (moments of a symmetric distribution)."""
    return value if n % 2 == 0 else 0.0


def _rising(a, n):
    """``a (a + 1) ... (a + n - 1)`` (``n`` a plain int)."""
    out = 1.0
    for i in range(n):
        out = out * (a + i)
    return out


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

    def _stats(self):
        return 0.0, 1.0, 0.0, 0.0

    def _munp(self, n):
        return _even(n, float(_sc.factorial2(n - 1, exact=True)))

    def _entropy(self):
        return _HALF_LOG_2PI_E


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

    def _stats(self, df):
        # SciPy's conventions: the mean is inf for df <= 1, the variance inf for
        # 1 < df <= 2, the kurtosis inf for 2 < df <= 4, nan below
        mu = dnp.where(df > 1, 0.0, _INF)
        d2 = dnp.where(df > 2, df, 3.0)
        mu2 = dnp.where(df > 2, d2 / (d2 - 2), dnp.where(df > 1, _INF, _NAN))
        g1 = dnp.where(df > 3, 0.0, _NAN)
        d4 = dnp.where(df > 4, df, 5.0)
        g2 = dnp.where(df > 4, 6.0 / (d4 - 4), dnp.where(df > 2, _INF, _NAN))
        return mu, mu2, g1, g2

    def _munp(self, n, df):
        """``df^(n/2) Gamma((n+1)/2) Gamma((df-n)/2) / (sqrt(pi) Gamma(df/2))`` for even
        ``n < df``, 0 for odd ``n < df``; inf (even) or nan (odd) for ``n >= df``."""
        finite = df > n
        if n % 2:
            return dnp.where(finite, 0.0, _NAN)
        d = dnp.where(finite, df, n + 1.0)
        log_m = (0.5 * n * dnp.log(d) + math.lgamma(0.5 * (n + 1)) + sp.gammaln(0.5 * (d - n))
                 - 0.5 * _LOG_PI - sp.gammaln(0.5 * d))
        return dnp.where(finite, dnp.exp(log_m), _INF)

    def _entropy(self, df):
        half, half1 = 0.5 * df, 0.5 * (df + 1)
        return (half1 * (sp.digamma(half1) - sp.digamma(half)) + 0.5 * dnp.log(df)
                + sp.betaln(half, 0.5))


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

    def _support(self, *shapes):
        return 0.0, _INF

    def _stats(self, a):
        return a, a, 2.0 / dnp.sqrt(a), 6.0 / a

    def _munp(self, n, a):
        return _rising(a, n)

    def _entropy(self, a):
        return a + sp.gammaln(a) + (1.0 - a) * sp.digamma(a)


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

    def _stats(self, df):
        return df, 2.0 * df, dnp.sqrt(8.0 / df), 12.0 / df

    def _munp(self, n, df):
        return 2.0 ** n * _rising(0.5 * df, n)

    def _entropy(self, df):
        return super()._entropy(0.5 * df) + _LOG_2


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

    def _support(self, *shapes):
        return 0.0, 1.0

    def _stats(self, a, b):
        ab, s = a * b, a + b
        mu = a / s
        mu2 = ab / (s + 1.0) / (s * s)
        g1 = 2.0 * (b - a) * dnp.sqrt((s + 1.0) / ab) / (s + 2.0)
        g2 = 6.0 * ((a - b) ** 2 * (s + 1.0) - ab * (s + 2.0)) / (ab * (s + 2.0) * (s + 3.0))
        return mu, mu2, g1, g2

    def _munp(self, n, a, b):
        return _rising(a, n) / _rising(a + b, n)

    def _entropy(self, a, b):
        return (sp.betaln(a, b) - (a - 1.0) * sp.digamma(a) - (b - 1.0) * sp.digamma(b)
                + (a + b - 2.0) * sp.digamma(a + b))


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

    def _support(self, *shapes):
        return 0.0, _INF

    def _stats(self):
        return 1.0, 1.0, 2.0, 6.0

    def _munp(self, n):
        return float(math.factorial(n))

    def _entropy(self):
        return 1.0


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

    def _stats(self):
        return 0.0, 2.0, 0.0, 3.0

    def _munp(self, n):
        return _even(n, float(math.factorial(n)))

    def _entropy(self):
        return _LOG_2 + 1.0


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

    def _stats(self):
        return 0.0, math.pi ** 2 / 3.0, 0.0, 1.2

    def _munp(self, n):
        """``(2^n - 2) pi^n |B_n|`` for even ``n`` (``B_n`` a Bernoulli number)."""
        return _even(n, (2.0 ** n - 2.0) * math.pi ** n * abs(float(_sc.bernoulli(n)[n])))

    def _entropy(self):
        return 2.0


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

    def _stats(self):
        return _NAN, _NAN, _NAN, _NAN

    def _munp(self, n):
        return _NAN

    def _entropy(self):
        return math.log(4.0 * math.pi)


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

    def _support(self, *shapes):
        return 0.0, 1.0

    def _stats(self):
        return 0.5, 1.0 / 12.0, 0.0, -1.2

    def _munp(self, n):
        return 1.0 / (n + 1)

    def _entropy(self):
        return 0.0


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

    def _support(self, *shapes):
        return 0.0, _INF

    def _stats(self, s):
        em1 = dnp.expm1(s * s)     # p - 1 for p = exp(s^2), accurate for small s
        p = em1 + 1.0
        mu = dnp.exp(0.5 * s * s)
        return mu, p * em1, dnp.sqrt(em1) * (2.0 + p), ((p + 2.0) * p + 3.0) * p * p - 6.0

    def _munp(self, n, s):
        return dnp.exp(0.5 * n * n * s * s)

    def _entropy(self, s):
        return _HALF_LOG_2PI_E + dnp.log(s)

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
