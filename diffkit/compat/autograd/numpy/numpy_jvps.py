"""``autograd.numpy.numpy_jvps``: the helper autograd's JVP rules share, ``broadcast``
(a tangent broadcast to the output it belongs to)."""

from .... import numpy as dnp
from .._values import shape_of

__all__ = ["broadcast"]


def broadcast(x, target):
    """``x`` broadcast to ``target``'s shape (its dtype kept)."""
    return dnp.broadcast_to(x, shape_of(target))
