"""autograd's tracing vocabulary on diffkit: a *box* is a diffkit traced value.

diffkit's transformations hand the differentiated function traced values (``Tracer``);
``Box`` and ``isbox`` recognise them, ``getval`` reads the plain value under one, and
``primitive``/``notrace_primitive`` make functions that run on plain values.
"""

from ...core.trace import Tracer
from ._primitives import notrace_primitive, primitive
from ._values import plain_value

__all__ = ["Box", "isbox", "getval", "primitive", "notrace_primitive", "register_notrace"]


class _TracedValueType(type):
    """``isinstance(x, Box)`` is true for diffkit's traced values: they play autograd's
    boxes (diffkit never boxes containers, so a list of traced values is a plain list)."""

    def __instancecheck__(cls, instance):
        return cls._traced and isinstance(instance, Tracer)

    def __subclasscheck__(cls, subclass):
        return type.__subclasscheck__(cls, subclass) or (
            cls._traced and isinstance(subclass, type) and issubclass(subclass, Tracer))


class Box(metaclass=_TracedValueType):
    """A traced value, for ``isinstance`` checks (never instantiated: diffkit makes its
    traced values itself)."""

    _traced = True   # diffkit's traced values are instances (containers never are)
    types = set()
    type_mappings = {}

    def __new__(cls, *args, **kwargs):
        raise TypeError("diffkit makes its traced values itself; Box exists for isinstance "
                        "checks only")

    @classmethod
    def register(cls, value_type):
        """autograd registers the type each box class wraps; diffkit traces arrays and
        scalars itself, so registering another type has no effect."""
        cls.types.add(cls)
        cls.type_mappings[value_type] = cls


def isbox(x):
    """Whether ``x`` is a traced value."""
    return isinstance(x, Tracer)


def getval(x):
    """The plain value under a traced value (itself for a plain value). A value batched
    by ``jacobian``/``hessian`` has none (a ``TracerConversionError``)."""
    return plain_value(x, "getval")


def register_notrace(trace_type, primitive_fun):
    """autograd's per-trace exemption of a primitive; diffkit's ``notrace_primitive``
    already runs on plain values under every transformation, so this records nothing."""
    return primitive_fun
