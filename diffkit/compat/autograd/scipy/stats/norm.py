"""``autograd.scipy.stats.norm``: the methods of ``diffkit.scipy.stats.norm``
(``logpdf``, ``cdf`` ...) as functions."""

from .....scipy.stats import norm as _distribution
from ... import _namespaces

__all__ = _namespaces.copy_methods(_distribution, globals())
