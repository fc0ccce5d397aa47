"""Random draws while tracing: a recorded draw would replay the same numbers on every call,
so tracing refuses a function that draws. It compares the state of every random generator
it can reach (NumPy's global generator, Python's ``random``, and each ``Generator`` or
``RandomState`` among the arguments, or reachable from the function through closures,
globals, helpers it calls, bound instances and their attributes) before and after the
trace. A generator created inside the function from fresh entropy
(``np.random.default_rng()`` without a seed) cannot be seen; the jit guide says so."""

import collections
import functools
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


def reachable_generators(fun, limit=10_000):
    """The generators ``fun`` can reach through Python objects: the closures, defaults and
    the globals named by the code of ``fun`` and of every function found that way (helpers
    it calls, nested functions and lambdas), the instance and attributes of a bound method
    or a callable object, the parts of a ``functools.partial`` and the items of lists,
    tuples, sets and dicts among them. Modules and classes are not entered (a draw through
    NumPy's or Python's global generator is seen by its own snapshot), nor the globals of
    diffkit's, NumPy's and SciPy's own functions. ``limit`` bounds the number of objects
    visited."""
    found, seen = {}, set()
    stack = collections.deque([fun])   # breadth first: the nearest objects first
    while stack and len(seen) < limit:
        value = stack.popleft()
        if id(value) in seen or value is None or isinstance(value, _LEAVES):
            continue
        seen.add(id(value))
        if isinstance(value, GENERATORS):
            found[id(value)] = value
        elif isinstance(value, (types.ModuleType, type)):
            continue
        elif isinstance(value, types.FunctionType):
            stack.extend(_function_parts(value))
        elif isinstance(value, types.MethodType):
            stack.extend((value.__func__, value.__self__))
        elif isinstance(value, functools.partial):
            stack.extend((value.func, *value.args, *value.keywords.values()))
        elif isinstance(value, (list, tuple, set, frozenset)):
            if type(value).__module__.partition(".")[0] not in _LIBRARIES:
                stack.extend(value)   # not a library's own sequence (EachArgument is endless)
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif not isinstance(value, np.ndarray):
            stack.append(getattr(value, "__wrapped__", None))
            stack.extend(_attributes(value))
    return list(found.values())


_LIBRARIES = {"diffkit", "numpy", "scipy"}
_LEAVES = (str, bytes, int, float, complex, bool, np.ndarray, np.generic, np.dtype)


def _function_parts(fun):
    parts = []
    for cell in fun.__closure__ or ():
        try:
            parts.append(cell.cell_contents)
        except ValueError:   # an empty cell
            pass
    parts.extend(fun.__defaults__ or ())
    parts.extend((fun.__kwdefaults__ or {}).values())
    parts.append(getattr(fun, "__wrapped__", None))
    if (fun.__module__ or "").split(".")[0] in _LIBRARIES:
        return parts   # a library's globals hold no generator of the user's
    names = set()
    codes = [fun.__code__]
    while codes:   # the names of nested functions, lambdas and comprehensions too
        code = codes.pop()
        names.update(code.co_names)
        codes.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    globals_ = fun.__globals__
    parts.extend(globals_[n] for n in names if n in globals_)
    return parts


def _attributes(value):
    """The attributes of an object (its ``__dict__`` and slots), where it has them."""
    try:
        attributes = list(vars(value).values())
    except TypeError:
        attributes = []
    for cls in type(value).__mro__:
        for name in getattr(cls, "__slots__", ()):
            if isinstance(name, str) and hasattr(value, name):
                try:
                    attributes.append(getattr(value, name))
                except AttributeError:
                    pass
    return attributes


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
