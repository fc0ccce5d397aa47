"""``autograd.scipy.stats.chi2``: the methods of ``diffkit.scipy.stats.chi2``
(``logpdf``, ``cdf`` ...) as functions."""

from .....scipy.stats import chi2 as _distribution
from ... import _namespaces

__all__ = _namespaces.copy_methods(_distribution, globals())
