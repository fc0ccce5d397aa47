"""The multivariate distributions, ``dirichlet`` and ``multivariate_normal``, with SciPy's
methods and frozen forms. Densities, moments, entropies and marginals are differentiable;
``rvs``, ``fit`` and the (numerically integrated) ``cdf``/``logcdf`` are computed by SciPy,
for plain arguments.
"""

import math

import numpy as np
import scipy.stats

from ... import numpy as dnp
from ...core.concrete import concrete_value, holds_tracer
from .. import special as sp
from ._common import (
    _NAN,
    _Distribution,
    _float,
    _plain_only,
    _random_state_property,
)

__all__ = ["dirichlet", "multivariate_normal"]

_LOG_2PI = math.log(2 * math.pi)


def _squeeze(out):
    """SciPy's ``_squeeze_output``: drop length-1 axes."""
    return dnp.squeeze(out) if 1 in dnp.shape(out) else out


class _Dirichlet(_Distribution):
    """``logpdf(x, alpha) = lgamma(sum alpha) - sum lgamma(alpha) + sum (alpha - 1) log x``,
    the components along the first axis of ``x`` (as SciPy: ``x`` of shape ``(K, ...)``, or
    ``(K - 1, ...)`` with the last component ``1 - sum(x, axis=0)``). ``alpha <= 0`` gives
    nan (SciPy raises)."""

    name = "dirichlet"
    _SCIPY_METHODS = {"rvs": ("alpha", "size", "random_state")}

    def _alpha(self, alpha):
        """``(alpha, ok)``: a one-dimensional ``alpha``, entries <= 0 replaced by 1, and
        whether all were positive."""
        alpha = _float(alpha)
        if dnp.ndim(alpha) != 1:
            raise ValueError(f"dirichlet: alpha must be one-dimensional, got shape "
                             f"{dnp.shape(alpha)}")
        return dnp.where(alpha > 0, alpha, 1.0), dnp.all(alpha > 0)

    def _args(self, x, alpha):
        x = _float(x)
        alpha, ok = self._alpha(alpha)
        size = dnp.shape(alpha)[0]
        rows = dnp.shape(x)[0] if dnp.ndim(x) else 0
        if rows == size - 1:
            last = 1.0 - dnp.sum(x, axis=0, keepdims=True)
            x = dnp.concatenate([x, last], axis=0)
        elif rows != size:
            raise ValueError(f"dirichlet: x's first axis must have length {size} or "
                             f"{size - 1} (the number of components), got shape "
                             f"{dnp.shape(x)}")
        return x, dnp.reshape(alpha, (size,) + (1,) * (dnp.ndim(x) - 1)), ok

    def logpdf(self, x, alpha):
        """Log density at ``x`` (components on the first axis)."""
        x, alpha, ok = self._args(x, alpha)
        norm = sp.gammaln(dnp.sum(alpha, axis=0)) - dnp.sum(sp.gammaln(alpha), axis=0)
        out = norm + dnp.sum(sp.xlogy(alpha - 1.0, x), axis=0)
        return _squeeze(dnp.where(ok, out, _NAN))

    def pdf(self, x, alpha):
        """Density at ``x``."""
        return dnp.exp(self.logpdf(x, alpha))

    def mean(self, alpha):
        """``alpha / sum(alpha)``."""
        alpha, ok = self._alpha(alpha)
        return dnp.where(ok, alpha / dnp.sum(alpha), _NAN)

    def var(self, alpha):
        """``alpha (a0 - alpha) / (a0^2 (a0 + 1))`` with ``a0 = sum(alpha)``."""
        alpha, ok = self._alpha(alpha)
        a0 = dnp.sum(alpha)
        return dnp.where(ok, alpha * (a0 - alpha) / (a0 * a0 * (a0 + 1)), _NAN)

    def cov(self, alpha):
        """``(a0 diag(alpha) - alpha alpha^T) / (a0^2 (a0 + 1))``."""
        alpha, ok = self._alpha(alpha)
        a0 = dnp.sum(alpha)
        inner = a0 * dnp.diag(alpha) - alpha[:, None] * alpha[None, :]
        return dnp.where(ok, inner / (a0 * a0 * (a0 + 1)), _NAN)

    def entropy(self, alpha):
        """``log B(alpha) + (a0 - K) digamma(a0) - sum (alpha - 1) digamma(alpha)``."""
        alpha, ok = self._alpha(alpha)
        a0 = dnp.sum(alpha)
        log_b = dnp.sum(sp.gammaln(alpha)) - sp.gammaln(a0)
        out = (log_b + (a0 - dnp.shape(alpha)[0]) * sp.digamma(a0)
               - dnp.sum((alpha - 1.0) * sp.digamma(alpha)))
        return dnp.where(ok, out, _NAN)

    def __call__(self, alpha, seed=None):
        """The distribution with ``alpha`` fixed (SciPy's ``dirichlet_frozen``)."""
        return _FrozenDirichlet(alpha, seed)


class _FrozenDirichlet:
    def __init__(self, alpha, seed=None):
        self._dist = _Dirichlet(seed)
        self._dist._alpha(alpha)   # SciPy checks alpha when freezing
        self.alpha = _float(alpha)

    random_state = _random_state_property("_dist")

    def logpdf(self, x):
        return self._dist.logpdf(x, self.alpha)

    def pdf(self, x):
        return self._dist.pdf(x, self.alpha)

    def mean(self):
        return self._dist.mean(self.alpha)

    def var(self):
        return self._dist.var(self.alpha)

    def cov(self):
        return self._dist.cov(self.alpha)

    def entropy(self):
        return self._dist.entropy(self.alpha)

    def rvs(self, size=1, random_state=None):
        return self._dist.rvs(self.alpha, size, random_state)


class _MultivariateNormal(_Distribution):
    """``logpdf(x, mean=None, cov=1)``: ``-(k log(2 pi) + log det cov + r^T cov^-1 r) / 2``
    with ``r = x - mean``, through the Cholesky factor ``L`` of ``cov`` (``log det cov =
    2 sum log diag L``, ``r^T cov^-1 r = |L^-1 r|^2``). As SciPy: ``x`` has the components
    on its last axis (a 1-D ``x`` is one point, or for ``k == 1`` a set of points), ``cov``
    may be a scalar (``cov * I``), a vector (a diagonal) or a matrix, and length-1 axes of
    the result are dropped. ``allow_singular=True`` follows SciPy's ``_PSD`` (eigenvalues
    below its cutoff dropped: pseudo-inverse, pseudo-determinant, ``-inf`` off the support)."""

    name = "multivariate_normal"
    _SCIPY_METHODS = {
        "rvs": ("mean", "cov", "size", "random_state"),
        "cdf": ("x", "mean", "cov", "allow_singular", "maxpts", "abseps", "releps"),
        "logcdf": ("x", "mean", "cov", "allow_singular", "maxpts", "abseps", "releps"),
        "fit": ("x", "fix_mean", "fix_cov"),
    }

    def _params(self, mean, cov):
        """``(mean, cov, dim)``: a 1-D mean and a 2-D covariance, by SciPy's rules (``cov``
        may be a scalar, a diagonal, a matrix or SciPy's ``Covariance`` object)."""
        if isinstance(cov, scipy.stats.Covariance):
            cov = cov.covariance
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
        if dnp.ndim(cov) in (0, 1):
            cov = cov * np.eye(dim)   # a scalar times I, or a row vector times I: a diagonal
        if dnp.shape(cov) != (dim, dim):
            raise ValueError(f"multivariate_normal: cov must be a scalar, a vector of length "
                             f"{dim} or a {dim}x{dim} matrix, got shape {dnp.shape(cov)}")
        return mean, cov, dim

    def _args(self, x, mean, cov):
        mean, cov, dim = self._params(mean, cov)
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
        """Log density at ``x`` (components on the last axis)."""
        if allow_singular:
            if not holds_tracer(x, mean, cov):
                return self._scipy.logpdf(x, mean, cov, allow_singular=True)
            return self._singular_logpdf(x, mean, cov)
        x, mean, cov, dim = self._args(x, mean, cov)
        lower = dnp.linalg.cholesky(cov)
        r = dnp.expand_dims(x - mean, -1)                      # (..., k, 1)
        w = dnp.linalg.solve(lower, r)                         # L^-1 r
        maha = dnp.sum(w * w, axis=(-2, -1))
        logdet = 2.0 * dnp.sum(dnp.log(dnp.diagonal(lower)))
        return _squeeze(-0.5 * (dim * _LOG_2PI + logdet + maha))

    def _singular_logpdf(self, x, mean, cov):
        """SciPy's ``allow_singular=True`` density (its ``_PSD``), with diffkit's operations:
        ``cov = u diag(s) u^T`` (``eigh``, lower triangle); eigenvalues above ``eps = cond
        max|s|`` (``cond`` 1e6 eps for float64, 1e3 eps for float32) are kept: ``rank``
        of them, the pseudo-determinant ``sum log s``, the Mahalanobis term
        ``|r @ u diag(s^-1/2)|^2`` over them; a point whose component ``r @ V`` along the
        dropped eigenvectors has norm ``>= 1e3 eps`` is outside the support: ``-inf``. The
        derivative in ``x`` and ``mean`` is ``-pinv(cov) r`` (0 outside the support); in
        ``cov`` that of the pseudo-inverse and pseudo-determinant where the rank is constant
        (through ``eigh``: NaN where kept eigenvalues tie, the tie rule)."""
        x, mean, cov, dim = self._args(x, mean, cov)
        s, u = dnp.linalg.eigh(cov)
        single = np.dtype(dnp.result_type(s)) == np.float32
        cond = 1e3 * np.finfo(np.float32).eps if single else 1e6 * np.finfo(np.float64).eps
        eps = cond * dnp.max(dnp.abs(s))
        values = concrete_value(s)
        if values is not None and np.min(values) < -cond * np.max(np.abs(values)):
            raise ValueError("The input matrix must be symmetric positive semidefinite.")
        kept = s > eps
        safe = dnp.where(kept, s, 1.0)
        whiten = u * dnp.where(kept, 1.0 / dnp.sqrt(safe), 0.0)
        log_pdet = dnp.sum(dnp.where(kept, dnp.log(safe), 0.0))
        rank = dnp.sum(dnp.where(kept, 1.0, 0.0))
        dev = x - mean
        maha = dnp.sum(dnp.square(dev @ whiten), axis=-1)
        out = -0.5 * (rank * _LOG_2PI + log_pdet + maha)
        residual = dnp.sqrt(dnp.sum(dnp.square(dev @ (u * dnp.where(kept, 0.0, 1.0))),
                                    axis=-1))
        return _squeeze(dnp.where(residual < 1e3 * eps, out, -np.inf))

    def pdf(self, x, mean=None, cov=1, allow_singular=False):
        """Density at ``x``."""
        return dnp.exp(self.logpdf(x, mean, cov, allow_singular))

    def entropy(self, mean=None, cov=1):
        """``(k (1 + log(2 pi)) + log det cov) / 2`` (``cov`` positive definite)."""
        _, cov, dim = self._params(mean, cov)
        logdet = 2.0 * dnp.sum(dnp.log(dnp.diagonal(dnp.linalg.cholesky(cov))))
        return 0.5 * (dim * (_LOG_2PI + 1.0) + logdet)

    def marginal(self, dimensions, mean=None, cov=1, allow_singular=False):
        """The frozen distribution of the components ``dimensions`` (plain ints, negative
        ones counted from the end): ``mean[dims]`` and ``cov[dims][:, dims]``."""
        mean, cov, dim = self._params(mean, cov)
        dims = np.atleast_1d(dimensions)
        if holds_tracer(dimensions) or not np.issubdtype(dims.dtype, np.integer):
            raise ValueError("multivariate_normal.marginal: dimensions must be plain integers, "
                             f"the indices of the components kept; got {dimensions!r}")
        if np.any((dims < -dim) | (dims >= dim)):
            raise ValueError(f"multivariate_normal.marginal: dimensions {dims.tolist()} out of "
                             f"range for a {dim}-dimensional distribution")
        dims = np.where(dims < 0, dims + dim, dims)
        if len(np.unique(dims)) != len(dims):
            raise ValueError("multivariate_normal.marginal: the elements of dimensions must be "
                             f"unique, got {dims.tolist()}")
        return _FrozenMultivariateNormal(mean[dims], cov[dims[:, None], dims[None, :]],
                                         allow_singular)

    def __call__(self, mean=None, cov=1, allow_singular=False, seed=None, **kwds):
        """The distribution with ``mean`` and ``cov`` fixed (SciPy's frozen form)."""
        return _FrozenMultivariateNormal(mean, cov, allow_singular, seed, **kwds)


class _FrozenMultivariateNormal:
    """SciPy's ``multivariate_normal_frozen``: ``mean``, ``cov`` (processed: 1-D and 2-D),
    ``dim``, ``allow_singular``, ``maxpts``, ``abseps``, ``releps``; the methods of
    ``multivariate_normal`` with these filled in."""

    def __init__(self, mean=None, cov=1, allow_singular=False, seed=None, maxpts=None,
                 abseps=1e-5, releps=1e-5):
        self._dist = _MultivariateNormal(seed)
        self.mean, self.cov, self.dim = self._dist._params(mean, cov)
        self.allow_singular = allow_singular
        self.maxpts = 1000000 * self.dim if maxpts is None else maxpts
        self.abseps, self.releps = abseps, releps
        self._scipy_frozen = None

    def _scipy(self, method):
        """SciPy's frozen distribution of the same parameters (plain ones only)."""
        _plain_only(f"multivariate_normal(...).{method}", (self.mean, self.cov), {},
                    ("mean", "cov"))
        if self._scipy_frozen is None:
            self._scipy_frozen = scipy.stats.multivariate_normal(
                self.mean, self.cov, allow_singular=self.allow_singular, maxpts=self.maxpts,
                abseps=self.abseps, releps=self.releps)
        return self._scipy_frozen

    @property
    def cov_object(self):
        """SciPy's ``Covariance`` object of ``cov`` (plain values only)."""
        return self._scipy("cov_object").cov_object

    random_state = _random_state_property("_dist")

    def logpdf(self, x):
        return self._dist.logpdf(x, self.mean, self.cov, self.allow_singular)

    def pdf(self, x):
        return self._dist.pdf(x, self.mean, self.cov, self.allow_singular)

    def cdf(self, x, *, lower_limit=None, rng=None):
        _plain_only("multivariate_normal(...).cdf", (x,), {}, ("x",))
        return self._scipy("cdf").cdf(x, lower_limit=lower_limit, rng=rng)

    def logcdf(self, x, *, lower_limit=None, rng=None):
        _plain_only("multivariate_normal(...).logcdf", (x,), {}, ("x",))
        return self._scipy("logcdf").logcdf(x, lower_limit=lower_limit, rng=rng)

    def rvs(self, size=1, random_state=None):
        frozen = self._scipy("rvs")
        return frozen.rvs(size, self.random_state if random_state is None else random_state)

    def entropy(self):
        return self._dist.entropy(self.mean, self.cov)

    def marginal(self, dimensions):
        return self._dist.marginal(dimensions, self.mean, self.cov, self.allow_singular)


dirichlet = _Dirichlet()
multivariate_normal = _MultivariateNormal()
