"""``autograd.misc``: ``flatten`` (nested containers to one vector and back),
``const_graph``, and the ``optimizers`` submodule (sgd, rmsprop, adam)."""

from .flatten import flatten
from .tracers import const_graph

__all__ = ["flatten", "const_graph"]
