"""``autograd.scipy.stats.multivariate_normal``: the methods of
``diffkit.scipy.stats.multivariate_normal`` (``logpdf``, ``cdf`` ...) as functions."""

from .....scipy.stats import multivariate_normal as _distribution
from ... import _namespaces

__all__ = _namespaces.copy_methods(_distribution, globals())
