"""Random draws while tracing: a recorded draw would replay the same numbers on every call,
so tracing refuses a function that draws. It compares the state of every random generator
it can reach (NumPy's global generator, Python's ``random``, and each ``Generator`` or
``RandomState`` among the arguments, the closure and the globals the function names)
before and after the trace."""

import random
import types

import numpy as np

from ..errors import DiffkitError

GENERATORS = (np.random.Generator, np.random.RandomState)


class RandomDrawError(DiffkitError, RuntimeError):
    """A jitted function drew random numbers while it was traced."""


def random_draw_error(fun_name, where):
    return RandomDrawError(
        f"{fun_name} drew random numbers ({where}) while jit traced it. A staged function "
        "replays its recorded operations, so a draw would give the same numbers on every "
        "call. Draw the random numbers outside and pass them in as an argument "
        "(x = rng.normal(size=n); f(params, x)), or do not jit this function.")


def reachable_generators(fun):
    """The generators ``fun`` can reach: in its closure, its defaults and the globals its
    code names (one level: functions it calls are not searched)."""
    found = {}
    fun = getattr(fun, "__wrapped__", fun)
    if isinstance(fun, types.MethodType):
        fun = fun.__func__
    values = []
    for cell in getattr(fun, "__closure__", None) or ():
        try:
            values.append(cell.cell_contents)
        except ValueError:   # an empty cell
            pass
    values.extend(getattr(fun, "__defaults__", None) or ())
    code = getattr(fun, "__code__", None)
    globals_ = getattr(fun, "__globals__", {})
    if code is not None:
        values.extend(globals_[n] for n in code.co_names if n in globals_)
    for value in values:
        if isinstance(value, GENERATORS):
            found[id(value)] = value
    return list(found.values())


def snapshot(generators):
    """The states of the global generators and of ``generators``."""
    return (_global_state(), random.getstate(), [_state(g) for g in generators])


def changed(before, generators):
    """Where a draw happened since ``before`` was taken, or None."""
    now_global, now_random, now = snapshot(generators)
    old_global, old_random, old = before
    if not _same(now_global, old_global):
        return "from numpy.random's global generator"
    if now_random != old_random:
        return "from Python's random module"
    for g, a, b in zip(generators, old, now):
        if not _same(a, b):
            return f"from the {type(g).__name__} it uses"
    return None


def _global_state():
    return np.random.get_state(legacy=False)


def _state(generator):
    if isinstance(generator, np.random.RandomState):
        return generator.get_state(legacy=False)
    return generator.bit_generator.state


def _same(a, b):
    """Equality of nested generator states (dicts, tuples, arrays, numbers)."""
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    return a == b
