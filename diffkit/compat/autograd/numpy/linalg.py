"""``autograd.numpy.linalg``: ``diffkit.numpy.linalg``."""

from ....numpy import linalg as _source
from ....numpy import swapaxes
from .. import _namespaces

__all__ = _namespaces.copy_public(_source, globals()) + ["T"]


def T(x):  # noqa: N802 (autograd's name)
    """``x`` with its last two axes swapped (autograd's helper for stacked matrices)."""
    return swapaxes(x, -1, -2)


def _dot(a, b):
    """Matrix products of stacks of matrices (autograd's helper)."""
    return _source.matmul(a, b)
