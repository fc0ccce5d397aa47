"""``autograd.numpy.numpy_vspaces``: the vector spaces of arrays."""

from .._vspace import ArrayVSpace, ComplexArrayVSpace

__all__ = ["ArrayVSpace", "ComplexArrayVSpace"]
