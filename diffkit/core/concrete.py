"""Concrete values: the plain value a tracer stands for, where it has one.

A forward or reverse tracer carries its plain value (its ``primal``), possibly under further
tracers of outer transformations; a batched value under ``vmap`` stands for many values at
once and has none. Functions without derivative (shape queries from values, truth tests,
integer casts) read the value through ``concrete_value``.
"""

from ..errors import TracerConversionError
from .trace import Tracer


def concrete_value(tracer):
    """The plain value under ``tracer`` (for truth tests), or None when it has none (a
    batched value stands for many values at once)."""
    value = tracer
    while isinstance(value, Tracer):
        value = getattr(value, "primal", None)
    return value


def holds_tracer(*values):
    """Whether any of ``values`` is a traced value, or a list, tuple, dict or slice holding
    one at any depth (an index such as ``x[i:j]`` or ``[[t, 1.0]]`` for ``np.array``)."""
    for value in values:
        if isinstance(value, Tracer):
            return True
        if isinstance(value, (list, tuple)):
            if holds_tracer(*value):
                return True
        elif type(value) is slice:
            if holds_tracer(value.start, value.stop, value.step):
                return True
        elif isinstance(value, dict) and holds_tracer(*value.values()):
            return True
    return False


def static_value(value, why):
    """The plain value of ``value`` where Python needs one (a shape, a count, an index):
    ``value`` itself when it is not traced, a tracer's concrete value, and for a value
    batched by ``vmap`` (which has none) a ``TracerConversionError`` whose message is
    ``why(tracer)``: what needed the value and what to do instead."""
    if not isinstance(value, Tracer):
        return value
    concrete = concrete_value(value)
    if concrete is None:
        raise TracerConversionError(why(value))
    return concrete
