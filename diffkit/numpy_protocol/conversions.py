"""Conversion guards: ``np.asarray(t)``, ``float(t)``, ``int(t)``, ``bool(t)``, ``t.item()``
on a traced value. A conversion that would drop the derivative raises
``TracerConversionError`` (the message comes from ``escapes.py``); integer casts and truth
tests of a value that has one plain value return it, as in JAX.
"""

import operator
import sys

import numpy as np

from ..core.concrete import concrete_value, staged_value
from ..errors import TracerConversionError
from .escapes import STORES, Site, array_escape, escape_error, instruction, scalar_escape


def array(self, dtype=None, copy=None):
    value = staged_value(self)   # under jit only: a guarded read that drops no derivative
    if value is not None:
        return np.asarray(value, dtype)
    direct = sys._getframe(1)
    if dtype is not None and np.dtype(dtype).kind in "iub":   # np.int64(t), np.intp(t) ...
        value = concrete_value(self)
        if value is not None and instruction(direct)[0] not in STORES:
            return _integer_cast(value, dtype)
    site = Site(direct)
    raise escape_error(self, site, *array_escape(site))


def _integer_cast(value, dtype):
    """An integer (or boolean) cast of a traced value: its plain value, as in JAX. Its
    derivative is zero, so nothing is lost (float casts keep raising)."""
    return np.asarray(value).astype(dtype)


# A write ``y[i] = t`` into an ndarray calls float(t); NumPy replaces any error raised there
# (of any type) by ValueError("setting an array element with a sequence.") because a traced
# value supports indexing. So that the user sees diffkit's error, the conversion returns a
# placeholder and a one-shot trace hook raises the error in the writing frame at its next
# instruction. Python turns tracing off when a trace function raises, so this is done only
# when no tracer (debugger, coverage) is running; under one, NumPy's ValueError is raised
# with diffkit's error as its cause.
_PLACEHOLDER = {"float": float("nan"), "int": 0, "complex": complex("nan")}


def _raise_after_store(frame, error):
    """Raise ``error`` in ``frame`` before its next instruction; False if tracing is in use."""
    if sys.gettrace() is not None or frame.f_trace is not None:
        return False

    def hook(hooked, event, arg):
        hooked.f_trace = None
        hooked.f_trace_opcodes = False
        sys.settrace(None)
        raise error

    sys.settrace(_no_trace)   # tracing must be on for a frame's hook to run
    frame.f_trace_opcodes = True
    frame.f_trace = hook
    return True


def _no_trace(frame, event, arg):
    return None


def scalar(kind):
    def convert(self):
        value = staged_value(self)   # under jit only: a guarded read that drops no derivative
        if value is not None:
            return _STAGED[kind](value)
        return _refuse_scalar(self, sys._getframe(1), kind)
    return convert


_STAGED = {"float": float, "complex": complex, "operator.index": operator.index,
           ".item": lambda v: np.asarray(v).item(), ".tolist": lambda v: np.asarray(v).tolist()}


def integer(self):
    """``int(t)`` of a 0-d traced value: the plain integer under it (an integer cast, as in
    JAX: its derivative is zero). Under ``vmap`` there is no one value, so it raises."""
    direct = sys._getframe(1)
    value = concrete_value(self)
    if value is None or instruction(direct)[0] in STORES:
        return _refuse_scalar(self, direct, "int")
    return int(np.asarray(value))


def _refuse_scalar(self, direct, kind):
    """Raise the escape error for ``float(t)``, ``t.item()`` ... called from ``direct``
    (a store ``y[i] = t`` gets a placeholder now and the error at its next instruction)."""
    site = Site(direct)
    error = escape_error(self, site, *scalar_escape(site, kind))
    try:
        if (site.opname in STORES and kind in _PLACEHOLDER
                and _raise_after_store(site.direct, error)):
            return _PLACEHOLDER[kind]
        raise error
    finally:
        del error, site   # no cycle through the traceback's frames


def truth(self):
    value = concrete_value(self)
    if value is None:
        site = Site(sys._getframe(1))
        raise TracerConversionError(
            f"The truth value of a batched traced value (shape {self.shape}) under vmap is "
            f"different for each example, at\n{site.location()}\nUse "
            "dnp.where(condition, a, b) instead of if/else.")
    return bool(value)
