"""Concrete values: the plain value a tracer stands for, where it has one.

A forward or reverse tracer carries its plain value (its ``primal``), possibly under further
tracers of outer transformations; a batched value under ``vmap`` stands for many values at
once and has none. Functions without derivative (shape queries from values, truth tests,
integer casts) read the value through ``concrete_value``.

A trace that records a program to replay it later (staging, ``diffkit.jit``) must know
every such read, because the recording is only valid while the value read is the same: its
trace has a ``read_concretely(tracer, value, test)`` method, called here for each of its
tracers on the way down (``test`` is None for a read of the whole value).

Code that reuses a result only while the function takes the same path without recording
it (the sparse derivatives' patterns) watches the reads instead: inside
``with watch_reads(callback)``, every read of a traced value made in this thread is also
passed to ``callback(tracer, value, test)`` (``value``: the value read, None for a batched
value that has none; with ``test``, its answer), and every exception a primitive raises
as ``callback(None, exception, primitive)`` (from ``bind``: the function may catch it).
"""

from ..errors import TracerConversionError
from .trace import Tracer
from .trace import read_watchers as _watchers


class watch_reads:  # noqa: N801 (used like a function: ``with watch_reads(callback):``)
    """Pass every concrete read of a traced value made in this thread inside the block to
    ``callback(tracer, value, test)``, and to those of the enclosing blocks too;
    ``callback=None`` hides the block's reads from the enclosing ones."""

    __slots__ = ("callback", "saved")

    def __init__(self, callback):
        self.callback = callback

    def __enter__(self):
        self.saved = _watchers.active
        _watchers.active = () if self.callback is None else self.saved + (self.callback,)
        return self.callback

    def __exit__(self, *exc_info):
        _watchers.active = self.saved


def concrete_value(tracer):
    """The plain value under ``tracer`` (for truth tests), or None when it has none (a
    batched value stands for many values at once)."""
    value = tracer
    readers = None
    while isinstance(value, Tracer):
        if getattr(value._trace, "read_concretely", None) is not None:
            readers = [value] if readers is None else readers + [value]
        value = getattr(value, "primal", None)
    if readers is not None and value is not None:
        for reader in readers:
            reader._trace.read_concretely(reader, value, None)
    watchers = _watchers.active
    if watchers and value is not tracer:
        for watcher in watchers:
            watcher(tracer, value, None)
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


def underlying(x):
    """The array under ``x``: a tracer's primal (forward, reverse) or batched value (vmap),
    down to an array or scalar (no read is reported: see ``concrete_test``)."""
    while isinstance(x, Tracer):
        primal = getattr(x, "primal", None)
        x = primal if primal is not None else x.value
    return x


def concrete_test(x, test):
    """``test(underlying(x))`` (a rule choosing a formula from its operand's values, such as
    "has a NaN"), reported to the recording traces on the way down as a read of that
    result, not of the whole value."""
    value = underlying(x)
    result = test(value)
    watchers = _watchers.active
    if watchers and isinstance(x, Tracer):
        for watcher in watchers:
            watcher(x, result, test)
    while isinstance(x, Tracer):
        if getattr(x._trace, "read_concretely", None) is not None:
            x._trace.read_concretely(x, result, test)
        primal = getattr(x, "primal", None)
        x = primal if primal is not None else x.value
    return result


def staged_value(tracer):
    """The plain value under ``tracer`` when only recording traces stand above it (so a
    conversion to a Python number drops no derivative and is a guarded read), else None."""
    value = tracer
    while isinstance(value, Tracer):
        if getattr(value._trace, "read_concretely", None) is None:
            return None
        value = value.primal
    return concrete_value(tracer)
