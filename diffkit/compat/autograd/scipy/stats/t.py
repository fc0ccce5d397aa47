"""``autograd.scipy.stats.t``: the methods of ``diffkit.scipy.stats.t``
(``logpdf``, ``cdf`` ...) as functions."""

from .....scipy.stats import t as _distribution
from ... import _namespaces

__all__ = _namespaces.copy_methods(_distribution, globals())
