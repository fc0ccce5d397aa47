"""The discrete distributions, ``poisson`` and ``binom``, with SciPy's ``rv_discrete``
interface. ``k`` (shifted by the integer ``loc``) and the integer parameters (``n``) are held
fixed; the continuous ones (``mu``, ``p``) are differentiable. The quantiles (``ppf``,
``isf``, ``median``, ``interval``) are piecewise constant and ``entropy`` is a sum over the
support: those are computed by SciPy, for plain arguments.
"""

from ... import numpy as dnp
from .. import special as sp
from ._common import (
    _INF,
    _NAN,
    _and,
    _bind,
    _broadcast,
    _float,
    _int,
    _log,
    _order,
    _raw_moment,
    _shifted_moment,
    _Univariate,
)
from ._continuous import _Frozen

__all__ = ["poisson", "binom"]


def _stirling2(n):
    """Stirling numbers of the second kind ``S(n, k)`` for ``k = 0..n`` (plain ints)."""
    row = [1]
    for m in range(1, n + 1):
        row = [0] + [k * (row[k] if k < m else 0) + row[k - 1] for k in range(1, m + 1)]
    return row


class _Discrete(_Univariate):
    """Shared parsing and summaries of a discrete distribution. Subclasses give
    ``_checked(*shapes) -> (shapes, ok)`` (invalid values replaced by valid ones), ``_stats``,
    ``_munp`` and ``_support``."""

    _shapes = ()
    _ATTRIBUTES = ("a", "b", "badvalue", "numargs", "shapes", "inc", "moment_tol")
    _SCIPY_METHODS = {
        "rvs": ("*params", "size", "random_state"), "ppf": ("q", "*params"),
        "isf": ("q", "*params"), "median": ("*params",),
        "interval": ("confidence", "*params"), "entropy": ("*params",),
        "expect": ("func", "args", "loc", "lb", "ub", "conditional"),
        "generic_moment": (), "vecentropy": (),
    }

    def _support(self, *shapes):
        return 0.0, _INF

    def _param_names(self):
        return (*self._shapes, "loc")

    def _parse(self, method, args, kwds, extra=()):
        """``(shapes, loc, ok, given)`` of a call: ``loc`` held fixed, the shape parameters
        checked (``ok``), ``given`` holding the ``extra`` keywords."""
        names = (*self._shapes, "loc", *extra)
        given = _bind(f"{self.name}.{method}", names, self._shapes, args, kwds)
        shapes, ok = self._checked(*(given[n] for n in self._shapes))
        return shapes, _int(given.get("loc", 0)), ok, given

    def pmf(self, k, *args, **kwds):
        """Probability mass at ``k``."""
        return dnp.exp(self.logpmf(k, *args, **kwds))

    def logcdf(self, k, *args, **kwds):
        """Log of the cdf at ``k``."""
        return _log(self.cdf(k, *args, **kwds))

    def logsf(self, k, *args, **kwds):
        """Log of the survival function at ``k``."""
        return _log(self.sf(k, *args, **kwds))

    def nnlf(self, theta, x):
        """Negative log-likelihood ``-sum(logpmf(x, *theta), axis=0)``, ``theta = (*shapes,
        loc)``; inf for invalid parameters."""
        theta = tuple(theta)
        _, _, ok, _ = self._parse("nnlf", theta, {})
        return dnp.where(ok, -dnp.sum(self.logpmf(x, *theta), axis=0), _INF)

    def _summaries(self, method, args, kwds):
        s, loc, ok, given = self._parse(method, args, kwds, extra=("moments",))
        mu, mu2, g1, g2 = self._stats(*s)
        values = {"m": mu + loc, "v": mu2, "s": g1, "k": g2}
        return {c: _broadcast(dnp.where(ok, v, _NAN), loc, *s) for c, v in values.items()}, given

    def moment(self, order, *args, **kwds):
        """The non-central moment ``E[X**order]`` (``order`` a plain int >= 0)."""
        n = _order(order)
        s, loc, ok, _ = self._parse("moment", args, kwds)
        stats = self._stats(*s)

        def raw(k):
            return _raw_moment(k, *stats, lambda m: self._munp(m, *s))

        return _broadcast(dnp.where(ok, _shifted_moment(n, loc, 1.0, raw), _NAN), loc, *s)

    def support(self, *args, **kwargs):
        """The ends ``(loc + a, loc + b)`` of the support (nan for invalid parameters)."""
        s, loc, ok, _ = self._parse("support", args, kwargs)
        return tuple(_broadcast(dnp.where(ok, loc + end, _NAN), *s)
                     for end in self._support(*s))

    def freeze(self, *args, **kwds):
        """The distribution with its parameters fixed: ``poisson.freeze(mu).logpmf(k)``."""
        return _FrozenDiscrete(type(self)(), *args, **kwds)


class _FrozenDiscrete(_Frozen):
    def pmf(self, k):
        return self._call("pmf", k)

    def logpmf(self, k):
        return self._call("logpmf", k)

    @staticmethod
    def _location(given):
        return (given.get("loc", 0),)


class _Poisson(_Discrete):
    """``logpmf = k log(mu) - mu - log(k!)`` (``xlogy``: exact at ``mu = 0``);
    ``cdf = gammaincc(floor(k) + 1, mu)``, ``sf = gammainc(floor(k) + 1, mu)``."""

    name = "poisson"
    _shapes = ("mu",)

    def _checked(self, mu):
        mu = _float(mu)
        ok = mu >= 0
        return [dnp.where(ok, mu, 1.0)], ok

    def _args(self, method, k, args, kwds):
        (mu,), loc, ok, _ = self._parse(method, args, kwds)
        return _int(k) - loc, mu, ok

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

    def _stats(self, mu):
        return mu, mu, 1.0 / dnp.sqrt(mu), 1.0 / mu

    def _munp(self, n, mu):
        """Touchard's polynomial ``sum_k S(n, k) mu^k``."""
        return sum(c * mu ** k for k, c in enumerate(_stirling2(n)) if c)


class _Binom(_Discrete):
    """``logpmf = log C(n, k) + k log(p) + (n - k) log1p(-p)`` (``xlogy``/``xlog1py``:
    exact at ``p = 0`` and ``p = 1``); ``cdf = betainc(n - k, k + 1, 1 - p)`` and
    ``sf = betainc(k + 1, n - k, p)`` for ``0 <= k < n`` (``k`` floored)."""

    name = "binom"
    _shapes = ("n", "p")

    def _checked(self, n, p):
        n, p = _int(n), _float(p)
        ok = _and(n >= 0, n == dnp.floor(n), p >= 0, p <= 1)
        return [dnp.where(ok, n, 1.0), dnp.where(ok, p, 0.5)], ok

    def _args(self, method, k, args, kwds):
        (n, p), loc, ok, _ = self._parse(method, args, kwds)
        return _int(k) - loc, n, p, ok

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

    def _support(self, n, p):
        return 0.0, n

    def _stats(self, n, p):
        q = 1.0 - p
        var = n * p * q
        return n * p, var, (q - p) / dnp.sqrt(var), (1.0 - 6.0 * p * q) / var

    def _munp(self, m, n, p):
        """``sum_k S(m, k) n (n - 1) ... (n - k + 1) p^k``."""
        out, falling = 0.0, 1.0
        for k, c in enumerate(_stirling2(m)):
            if k:
                falling = falling * (n - (k - 1))
            if c:
                out = out + c * falling * p ** k
        return out


poisson = _Poisson()
binom = _Binom()

