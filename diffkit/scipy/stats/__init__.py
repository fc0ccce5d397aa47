"""``diffkit.scipy.stats``: SciPy's probability distributions, differentiable, as a
drop-in replacement for ``scipy.stats``.

One object per distribution, with every public method and attribute of SciPy's, SciPy's
argument names and order, and SciPy's values: ``stats.norm.logpdf(x, loc=0, scale=1)``,
``stats.gamma.cdf(x, a, loc=0, scale=1)``, ``stats.poisson.logpmf(k, mu, loc=0)``,
``stats.multivariate_normal.logpdf(x, mean, cov)``. Calling a distribution freezes it, as
SciPy: ``stats.norm(loc, scale).logpdf(x)`` differentiates in ``loc``, ``scale`` and ``x``;
a frozen distribution has SciPy's ``dist``, ``args``, ``kwds`` (or ``mean``, ``cov``,
``alpha`` for the multivariate ones).

Differentiable (compositions of ``diffkit.numpy`` and ``diffkit.scipy.special``, in both
engines, to any order the special functions support, and batched by ``vmap``):

- the densities, ``cdf``, ``sf``, their logs and, for the continuous distributions, the
  quantiles ``ppf``, ``isf``, ``median`` and ``interval`` (in the values and every continuous
  parameter; the shape parameters of ``gammainc``/``betainc``, used by the cdfs of ``gamma``,
  ``chi2``, ``beta`` and ``t``, to third order);
- closed forms: ``mean``, ``var``, ``std``, ``stats`` (mean, variance, skewness, excess
  kurtosis), ``moment``, ``entropy`` (continuous and multivariate), ``support``, ``nnlf``,
  ``dirichlet.cov``, ``multivariate_normal.marginal``.

Computed by SciPy, for plain values (a traced argument raises
:class:`diffkit.errors.NoRuleError` naming the method and the argument): ``rvs`` (SciPy's
exact numbers for the same seed), ``fit``, ``fit_loc_scale``, ``expect``,
``multivariate_normal.cdf``/``logcdf``, and for ``poisson``/``binom`` the piecewise-constant
quantiles and the entropy.

Conventions (as SciPy):

- invalid parameters (``scale <= 0``, a shape parameter out of its range, ``p`` outside
  [0, 1], a probability outside [0, 1] given to ``ppf``/``isf``) give nan, not an error;
  moments that do not exist are nan or inf where SciPy's are (``t``, ``cauchy``);
- outside the support ``logpdf`` is ``-inf``, ``pdf`` 0, ``cdf`` 0 or 1 (their derivatives
  there are 0);
- discrete distributions take integer ``k`` (and ``n`` for ``binom``), held fixed: a
  non-integer ``k`` gives pmf 0, and ``cdf``/``sf`` use ``floor(k)``;
- ``multivariate_normal`` factors ``cov`` by Cholesky (it must be positive definite; the
  derivative in ``cov`` is the symmetric one, that of ``(cov + cov.T) / 2``);
  ``dirichlet`` takes the components along the first axis of ``x``, as SciPy, does not
  validate ``x`` (SciPy raises for ``x`` off the simplex) and gives nan for ``alpha <= 0``
  (SciPy raises).
"""

from ._discrete import binom, poisson
from ._multivariate import dirichlet, multivariate_normal
from ._univariate import (
    beta,
    cauchy,
    chi2,
    expon,
    gamma,
    laplace,
    logistic,
    lognorm,
    norm,
    t,
    uniform,
)

__all__ = [
    "norm", "t", "gamma", "beta", "expon", "laplace", "logistic", "cauchy", "chi2",
    "uniform", "lognorm", "poisson", "binom", "dirichlet", "multivariate_normal",
]
