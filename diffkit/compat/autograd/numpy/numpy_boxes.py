"""``autograd.numpy.numpy_boxes``: ``ArrayBox``, the class of traced arrays, for
``isinstance`` checks and annotations (diffkit's traced values are its instances)."""

from ..tracer import Box

__all__ = ["ArrayBox"]


class ArrayBox(Box):
    """A traced array: ``isinstance(x, ArrayBox)`` is true for every diffkit traced value
    (diffkit traces arrays and scalars only)."""
