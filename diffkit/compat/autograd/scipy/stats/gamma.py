"""``autograd.scipy.stats.gamma``: the methods of ``diffkit.scipy.stats.gamma``
(``logpdf``, ``cdf`` ...) as functions."""

from .....scipy.stats import gamma as _distribution
from ... import _namespaces

__all__ = _namespaces.copy_methods(_distribution, globals())
