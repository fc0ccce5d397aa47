"""``autograd.numpy.random``: NumPy's own ``numpy.random`` (random draws carry no
derivative; ``seed`` seeds NumPy's global generator)."""

import numpy.random as _source

from .. import _namespaces

__all__ = _namespaces.copy_public(_source, globals())
