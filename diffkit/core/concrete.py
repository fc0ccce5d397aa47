"""Concrete values: the plain value a tracer stands for, where it has one.

A forward or reverse tracer carries its plain value (its ``primal``), possibly under further
tracers of outer transformations; a batched value under ``vmap`` stands for many values at
once and has none. Functions without derivative (shape queries from values, truth tests,
integer casts) read the value through ``concrete_value``.
"""

from .trace import Tracer


def concrete_value(tracer):
    """The plain value under ``tracer`` (for truth tests), or None when it has none (a
    batched value stands for many values at once)."""
    value = tracer
    while isinstance(value, Tracer):
        value = getattr(value, "primal", None)
    return value
