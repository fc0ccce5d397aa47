"""``autograd.scipy.stats.dirichlet``: the methods of ``diffkit.scipy.stats.dirichlet``
(``logpdf``, ``cdf`` ...) as functions."""

from .....scipy.stats import dirichlet as _distribution
from ... import _namespaces

__all__ = _namespaces.copy_methods(_distribution, globals())
