"""``autograd.numpy.fft``: ``diffkit.numpy.fft``."""

from ....numpy import fft as _source
from .. import _namespaces

__all__ = _namespaces.copy_public(_source, globals())
