"""``autograd.scipy.stats.poisson``: the methods of ``diffkit.scipy.stats.poisson``
(``logpdf``, ``cdf`` ...) as functions."""

from .....scipy.stats import poisson as _distribution
from ... import _namespaces

__all__ = _namespaces.copy_methods(_distribution, globals())
