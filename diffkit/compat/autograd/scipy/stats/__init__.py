"""``autograd.scipy.stats``: one module per distribution, as autograd has them
(``autograd.scipy.stats.norm.logpdf``), each holding diffkit's differentiable methods."""

from . import beta, chi2, dirichlet, gamma, multivariate_normal, norm, poisson, t  # noqa: F401
