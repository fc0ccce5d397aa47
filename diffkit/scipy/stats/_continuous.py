"""The location-scale base of the continuous distributions and their frozen form.

A distribution gives the standardized functions of ``z = (x - loc) / scale`` and of its
(valid) shape parameters: ``_logpdf``, ``_cdf``, ``_sf``, ``_logcdf``, ``_logsf``, ``_ppf``,
``_isf``, and the closed forms ``_stats`` (mean, variance, skewness, excess kurtosis),
``_munp(n)`` (raw moments of order ``n >= 5``), ``_entropy`` and ``_support``. Everything
public is composed from those with diffkit's operations, so it differentiates in the values,
``loc``, ``scale`` and the shape parameters, and batches under ``vmap``.
"""

import numpy as np

from ... import numpy as dnp
from ...core.concrete import holds_tracer
from ._common import (
    _INF,
    _NAN,
    _and,
    _bind,
    _broadcast,
    _float,
    _log,
    _order,
    _plain_only,
    _random_state_property,
    _raw_moment,
    _shifted_moment,
    _Univariate,
)


class _Continuous(_Univariate):
    """SciPy's ``rv_continuous`` interface over the standardized functions of a subclass.
    ``_shapes`` names the shape parameters, ``_valid`` says which values are allowed and
    ``_fill`` gives a valid value standing in for invalid ones (no branch computes with
    them; the result there is nan, as SciPy's)."""

    _shapes = ()
    _fill = ()
    _ATTRIBUTES = ("a", "b", "badvalue", "numargs", "shapes", "xtol", "moment_type")
    _SCIPY_METHODS = {
        "rvs": ("*params", "size", "random_state"), "fit": ("data",),
        "fit_loc_scale": ("data",),
        "expect": ("func", "args", "loc", "scale", "lb", "ub", "conditional"),
        "generic_moment": (), "vecentropy": (),
    }

    def _valid(self, *shapes):
        return True

    def _param_names(self):
        return (*self._shapes, "loc", "scale")

    def _support(self, *shapes):
        """The support of the standardized distribution, as plain floats."""
        return -_INF, _INF

    # defaults in terms of the others
    def _logcdf(self, z, *s):
        cdf = self._cdf(z, *s)   # log1p(-sf) where the cdf is close to 1
        return dnp.where(cdf < 0.5, _log(cdf), dnp.log1p(-dnp.minimum(self._sf(z, *s), 0.5)))

    def _logsf(self, z, *s):
        sf = self._sf(z, *s)
        return dnp.where(sf < 0.5, _log(sf), dnp.log1p(-dnp.minimum(self._cdf(z, *s), 0.5)))

    def _isf(self, q, *s):
        return self._ppf(1.0 - q, *s)

    # --- argument parsing ---------------------------------------------------------------------

    def _parse(self, method, args, kwds, extra=()):
        """``(shapes, loc, scale, ok, given)``: the parameters of a call, invalid ones replaced
        by ``_fill`` and 1 (``ok`` says where they were valid); ``given`` holds ``extra``."""
        names = (*self._shapes, "loc", "scale", *extra)
        given = _bind(f"{self.name}.{method}", names, self._shapes, args, kwds)
        shapes = [_float(given[n]) for n in self._shapes]
        loc = _float(given.get("loc", 0.0))
        scale = _float(given.get("scale", 1.0))
        ok = _and(scale > 0, self._valid(*shapes)) if self._shapes else scale > 0
        shapes = [dnp.where(ok, s, f) for s, f in zip(shapes, self._fill)]
        scale = dnp.where(ok, scale, 1.0)
        return shapes, loc, scale, ok, given

    def _density(self, method, x, args, kwds, log):
        s, loc, scale, ok, _ = self._parse(method, args, kwds)
        out = self._logpdf((_float(x) - loc) / scale, *s) - dnp.log(scale)
        return dnp.where(ok, out if log else dnp.exp(out), _NAN)

    def _probability(self, method, x, args, kwds, fn):
        s, loc, scale, ok, _ = self._parse(method, args, kwds)
        return dnp.where(ok, fn((_float(x) - loc) / scale, *s), _NAN)

    def _quantile(self, method, q, args, kwds, fn):
        s, loc, scale, ok, _ = self._parse(method, args, kwds)
        q = _float(q)
        inside = _and(q >= 0, q <= 1)
        out = loc + scale * fn(dnp.where(inside, q, 0.5), *s)
        return dnp.where(_and(ok, inside), out, _NAN)

    # --- functions of x -----------------------------------------------------------------------

    def logpdf(self, x, *args, **kwds):
        """Log of the probability density at ``x``."""
        return self._density("logpdf", x, args, kwds, log=True)

    def pdf(self, x, *args, **kwds):
        """Probability density at ``x``."""
        return self._density("pdf", x, args, kwds, log=False)

    def cdf(self, x, *args, **kwds):
        """Cumulative distribution function at ``x``."""
        return self._probability("cdf", x, args, kwds, self._cdf)

    def logcdf(self, x, *args, **kwds):
        """Log of the cdf at ``x`` (accurate in the lower tail)."""
        return self._probability("logcdf", x, args, kwds, self._logcdf)

    def sf(self, x, *args, **kwds):
        """Survival function ``1 - cdf`` at ``x`` (accurate in the upper tail)."""
        return self._probability("sf", x, args, kwds, self._sf)

    def logsf(self, x, *args, **kwds):
        """Log of the survival function at ``x``."""
        return self._probability("logsf", x, args, kwds, self._logsf)

    def ppf(self, q, *args, **kwds):
        """Quantile function (inverse of the cdf) at ``q``; nan outside [0, 1]."""
        return self._quantile("ppf", q, args, kwds, self._ppf)

    def isf(self, q, *args, **kwds):
        """Inverse of the survival function at ``q``; nan outside [0, 1]."""
        return self._quantile("isf", q, args, kwds, self._isf)

    def nnlf(self, theta, x):
        """Negative log-likelihood ``-sum(logpdf(x, *theta), axis=0)``, ``theta = (*shapes,
        loc, scale)``; inf for invalid parameters or data outside the support (as SciPy)."""
        theta = tuple(theta)
        s, loc, scale, ok, _ = self._parse("nnlf", theta, {})
        out = -dnp.sum(self._logpdf((_float(x) - loc) / scale, *s) - dnp.log(scale), axis=0)
        return dnp.where(ok, out, _INF)

    # --- summaries ----------------------------------------------------------------------------

    def _summaries(self, method, args, kwds):
        """The mean, variance, skewness and excess kurtosis of a call (nan if invalid), and
        the remaining keyword values (``moments``)."""
        s, loc, scale, ok, given = self._parse(method, args, kwds, extra=("moments",))
        mu, mu2, g1, g2 = self._stats(*s)
        values = {"m": mu * scale + loc, "v": mu2 * scale * scale, "s": g1, "k": g2}
        return {c: _broadcast(dnp.where(ok, v, _NAN), loc, *s)
                for c, v in values.items()}, given

    def moment(self, order, *args, **kwds):
        """The non-central moment ``E[X**order]`` (``order`` a plain int >= 0), from the
        standardized raw moments by the binomial expansion in ``loc`` and ``scale``."""
        n = _order(order)
        s, loc, scale, ok, _ = self._parse("moment", args, kwds)
        stats = self._stats(*s)

        def raw(k):
            return _raw_moment(k, *stats, lambda m: self._munp(m, *s))

        return _broadcast(dnp.where(ok, _shifted_moment(n, loc, scale, raw), _NAN), loc, *s)

    def entropy(self, *args, **kwds):
        """Differential entropy ``entropy of the standardized distribution + log(scale)``."""
        s, loc, scale, ok, _ = self._parse("entropy", args, kwds)
        return _broadcast(dnp.where(ok, self._entropy(*s) + dnp.log(scale), _NAN), loc, *s)

    def median(self, *args, **kwds):
        """The median ``ppf(0.5)``."""
        return self._quantile("median", 0.5, args, kwds, self._ppf)

    def interval(self, confidence, *args, **kwds):
        """The interval ``(ppf((1 - c) / 2), ppf((1 + c) / 2))`` holding probability
        ``c = confidence`` around the median; differentiable in ``confidence`` too."""
        c = _float(confidence)
        if not holds_tracer(c) and np.any((np.asarray(c) > 1) | (np.asarray(c) < 0)):
            raise ValueError("confidence must be between 0 and 1 inclusive")
        return (self._quantile("interval", (1.0 - c) / 2, args, kwds, self._ppf),
                self._quantile("interval", (1.0 + c) / 2, args, kwds, self._ppf))

    def support(self, *args, **kwargs):
        """The ends ``(loc + scale * a, loc + scale * b)`` of the support (infinite ends stay
        infinite; nan for invalid parameters)."""
        s, loc, scale, ok, _ = self._parse("support", args, kwargs)
        return tuple(_broadcast(dnp.where(ok, loc + scale * end if np.isfinite(end) else end,
                                          _NAN), loc, *s)
                     for end in self._support(*s))

    # --- frozen distributions -----------------------------------------------------------------

    def freeze(self, *args, **kwds):
        """The distribution with its parameters fixed: ``norm.freeze(loc, scale).logpdf(x)``."""
        return _FrozenContinuous(type(self)(), *args, **kwds)


class _Frozen:
    """SciPy's ``rv_frozen``: ``dist``, ``args``, ``kwds``, ``a``, ``b`` and the methods
    of ``dist`` with the parameters filled in (differentiable as ``dist``'s)."""

    def __init__(self, dist, *args, **kwds):
        self.dist = dist
        self.args = args
        self.kwds = kwds
        shapes, *_ = self._parse_shapes()
        self.a, self.b = dist._support(*shapes)

    def _parse_shapes(self):
        return self.dist._parse("freeze", self.args, self.kwds)

    random_state = _random_state_property("dist")

    def _call(self, method, *leading, **extra):
        return getattr(self.dist, method)(*leading, *self.args, **self.kwds, **extra)

    def cdf(self, x):
        return self._call("cdf", x)

    def logcdf(self, x):
        return self._call("logcdf", x)

    def sf(self, x):
        return self._call("sf", x)

    def logsf(self, x):
        return self._call("logsf", x)

    def ppf(self, q):
        return self._call("ppf", q)

    def isf(self, q):
        return self._call("isf", q)

    def rvs(self, size=None, random_state=None):
        return self._call("rvs", size=size, random_state=random_state)

    def stats(self, moments="mv"):
        return self._call("stats", moments=moments)

    def median(self):
        return self._call("median")

    def mean(self):
        return self._call("mean")

    def var(self):
        return self._call("var")

    def std(self):
        return self._call("std")

    def moment(self, order=None):
        return self._call("moment", order)

    def entropy(self):
        return self._call("entropy")

    def interval(self, confidence=None):
        return self._call("interval", confidence)

    def support(self):
        return self._call("support")

    def expect(self, func=None, lb=None, ub=None, conditional=False, **kwds):
        """SciPy's ``expect`` (plain parameters only: SciPy integrates ``func``)."""
        _plain_only(f"{self.dist.name}(...).expect", self.args, self.kwds,
                    self.dist._param_names())
        given = self._parse_shapes()[-1]
        args = tuple(given[n] for n in self.dist._shapes)
        return self.dist.expect(func, args, *self._location(given), lb, ub, conditional,
                                **kwds)

    def __repr__(self):
        return f"<frozen diffkit.scipy.stats.{self.dist.name}{self.args}{self.kwds}>"


class _FrozenContinuous(_Frozen):
    def pdf(self, x):
        return self._call("pdf", x)

    def logpdf(self, x):
        return self._call("logpdf", x)

    @staticmethod
    def _location(given):
        return given.get("loc", 0.0), given.get("scale", 1.0)
