"""``autograd.scipy.stats.beta``: the methods of ``diffkit.scipy.stats.beta``
(``logpdf``, ``cdf`` ...) as functions."""

from .....scipy.stats import beta as _distribution
from ... import _namespaces

__all__ = _namespaces.copy_methods(_distribution, globals())
