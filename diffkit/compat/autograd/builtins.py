"""autograd's differentiable containers and type tests (``autograd.builtins``).

diffkit differentiates through plain lists, tuples and dicts of traced values, so
``tuple``, ``list`` and ``dict`` here are Python's own. ``isinstance`` and ``type`` see
through a traced value to the array it stands for, as autograd's do for its boxes:
``isinstance(x, np.ndarray)`` holds for a traced array.
"""

import builtins as _builtins

import numpy as np

from ...core.trace import Tracer
from ._values import dtype_of, shape_of
from ._vspace import (
    ContainerVSpace,
    DictVSpace,
    ListVSpace,
    NamedTupleVSpace,
    SequenceVSpace,
    TupleVSpace,
)
from .tracer import Box

__all__ = ["tuple", "list", "dict", "isinstance", "type", "SequenceBox", "DictBox",
           "ContainerVSpace", "SequenceVSpace", "ListVSpace", "TupleVSpace", "DictVSpace",
           "NamedTupleVSpace"]

tuple = _builtins.tuple
list = _builtins.list
dict = _builtins.dict
isinstance_ = _builtins.isinstance
type_ = _builtins.type


def _stand_in(x):
    """What a traced value stands for, for type tests: an ndarray of its shape and dtype
    (a batched value has no single plain value, but its type is known)."""
    return np.empty(shape_of(x), dtype_of(x))


def isinstance(obj, classinfo):  # noqa: A001 (autograd's name)
    """``builtins.isinstance`` where a traced value counts as the array it stands for
    (and still as a ``Box``)."""
    if isinstance_(obj, classinfo):
        return True
    return isinstance_(obj, Tracer) and isinstance_(_stand_in(obj), classinfo)


def type(obj, *args):  # noqa: A001 (autograd's name)
    """``builtins.type`` where a traced value's type is ``numpy.ndarray``; with three
    arguments, Python's class constructor."""
    if args:
        return type_(obj, *args)
    if isinstance_(obj, Tracer):
        return np.ndarray
    return type_(obj)


class SequenceBox(Box):
    """autograd's boxed tuple or list; diffkit never boxes containers, so nothing is an
    instance of it (it exists for annotations and ``isinstance`` checks)."""

    _traced = False


class DictBox(Box):
    """autograd's boxed dict; as ``SequenceBox``."""

    _traced = False
