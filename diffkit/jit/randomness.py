"""Random draws while tracing: a recorded draw would replay the same numbers on every call,
so tracing refuses a function that draws (``RandomDrawError``; ``minimize``'s default
staging then evaluates the function unstaged instead).

Three ways of seeing a draw, together covering every place a generator can live:

- **States before and after**: NumPy's global generator (the legacy ``np.random.*``
  functions, SciPy's ``rvs`` without ``random_state``), Python's ``random`` module, and each
  ``Generator``, ``RandomState`` or ``random.Random`` the function can reach: among the
  arguments, through closures, defaults, globals, helpers it calls, bound instances and
  their attributes, and the attributes of modules and classes that its code names
  (``mymodule.rng.normal()``, ``Holder.rng``, ``self.rng`` as a class attribute).
- **Fresh entropy**: a generator made inside the call without a seed
  (``np.random.default_rng()``, ``RandomState()``, ``random.SystemRandom``, ``secrets``)
  reads the operating system's entropy through ``random``'s ``urandom``; while a thread
  traces, those reads are counted for it. A generator made inside with a seed draws the
  same numbers on every call, so its recording is right, and it is not refused.
  ``random.Random()`` made without a seed is counted too: CPython seeds it from the
  entropy in C, so ``Random.seed`` is wrapped to count a call without a seed.
- The argument leaves themselves: a generator passed to a jitted function is refused at
  once (``_leaf_key``).

Not seen: ``os.urandom`` called directly; the jit guide says so."""

import collections
import functools
import random
import sys
import threading
import types

import numpy as np

from ..errors import DiffkitError

GENERATORS = (np.random.Generator, np.random.RandomState, random.Random)


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
    tuples, sets and dicts among them. A module or a class (an instance's own included) is
    entered only through the attributes that the code found names (``mod.rng``,
    ``Holder.rng``), and not at all for NumPy's, SciPy's, pandas', diffkit's and Python's
    own modules (a draw through NumPy's or Python's global generator is seen by its own
    snapshot), nor the globals of diffkit's, NumPy's and SciPy's own functions; a pandas
    object (data only) is not entered either. ``limit`` bounds the number of objects
    visited."""
    found, seen = {}, set()
    names = set()       # every attribute name the code found reads
    scopes = []         # the modules and classes reached, entered by those names
    stack = collections.deque([fun])   # breadth first: the nearest objects first
    while (stack or scopes) and len(seen) < limit:
        if not stack:   # every function is read: enter the scopes by the names found
            scope = scopes.pop()
            stack.extend(_named_attributes(scope, names))
            continue
        value = stack.popleft()
        if id(value) in seen or value is None or isinstance(value, _LEAVES):
            continue
        seen.add(id(value))
        if isinstance(value, GENERATORS):
            found[id(value)] = value
        elif isinstance(value, (types.ModuleType, type)):
            if not _is_library(value):
                scopes.append(value)
        elif isinstance(value, types.FunctionType):
            stack.extend(_function_parts(value, names))
        elif isinstance(value, types.MethodType):
            stack.extend((value.__func__, value.__self__))
        elif isinstance(value, functools.partial):
            stack.extend((value.func, *value.args, *value.keywords.values()))
        elif isinstance(value, (list, tuple, set, frozenset)):
            if type(value).__module__.partition(".")[0] not in _LIBRARIES:
                stack.extend(value)   # not a library's own sequence (EachArgument is endless)
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif not isinstance(value, np.ndarray) and \
                type(value).__module__.partition(".")[0] not in _DATA_ONLY:
            stack.append(getattr(value, "__wrapped__", None))
            stack.append(type(value))   # its class attributes (self.rng set on the class)
            stack.extend(_attributes(value))
    return list(found.values())


def _is_library(scope):
    """Whether ``scope`` (a module or class) belongs to NumPy, SciPy, pandas, diffkit or
    Python."""
    module = scope.__name__ if isinstance(scope, types.ModuleType) else scope.__module__
    top = (module or "").partition(".")[0]
    return top in _LIBRARIES or top in _STANDARD


def _named_attributes(scope, names):
    """The attributes of ``scope`` called by one of ``names`` (without running a property
    or a module's ``__getattr__``: only what is stored)."""
    stored = []
    for owner in (scope.__mro__ if isinstance(scope, type) else (scope,)):
        members = getattr(owner, "__dict__", {})
        stored.extend(members[n] for n in names if n in members)
    return [m.__func__ if isinstance(m, (staticmethod, classmethod)) else m for m in stored]


_LIBRARIES = {"diffkit", "numpy", "scipy", "pandas"}
#: Libraries whose objects hold data, never a user's generator: not entered at all (a
#: DataFrame's internals are thousands of objects)
_DATA_ONLY = {"pandas"}
_STANDARD = frozenset(getattr(sys, "stdlib_module_names", ())) | {"builtins"}
_LEAVES = (str, bytes, int, float, complex, bool, np.ndarray, np.generic, np.dtype)


def _function_parts(fun, names):
    """What ``fun`` can reach (closures, defaults, the globals its code names); the
    attribute names its code reads are added to ``names``."""
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
    read = set()
    codes = [fun.__code__]
    while codes:   # the names of nested functions, lambdas and comprehensions too
        code = codes.pop()
        read.update(code.co_names)
        codes.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    names.update(read)
    globals_ = fun.__globals__
    parts.extend(globals_[n] for n in read if n in globals_)
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
    """The states of the global generators and of ``generators``, and this thread's count
    of entropy reads."""
    _watch_entropy()
    return (_global_state(), random.getstate(), [_state(g) for g in generators],
            _entropy_reads())


def changed(before, generators):
    """Where a draw happened since ``before`` was taken, or None."""
    now_global, now_random, now, now_entropy = snapshot(generators)
    old_global, old_random, old, old_entropy = before
    if not _same(now_global, old_global):
        return "from numpy.random's global generator"
    if now_random != old_random:
        return "from Python's random module"
    if now_entropy != old_entropy:
        return ("from a generator made from fresh entropy, such as np.random.default_rng() "
                "without a seed")
    for g, a, b in zip(generators, old, now):
        if not _same(a, b):
            return f"from the {type(g).__name__} it uses"
    return None


def _global_state():
    return np.random.get_state(legacy=False)


def _state(generator):
    if isinstance(generator, np.random.RandomState):
        return generator.get_state(legacy=False)
    if isinstance(generator, random.Random):
        try:
            return generator.getstate()
        except NotImplementedError:   # SystemRandom has no state: its draws read entropy
            return None
    return generator.bit_generator.state


# --- entropy reads ---------------------------------------------------------------------------

_reads = threading.local()
_watch_lock = threading.Lock()


def _entropy_reads():
    return getattr(_reads, "count", 0)


def _watch_entropy():
    """Count, per thread, the reads of the operating system's entropy made through
    ``random``'s ``urandom``: where NumPy's ``SeedSequence`` (every generator made without
    a seed), ``random.SystemRandom`` and ``secrets`` take theirs. Installed once, the first
    time a trace asks; the function it wraps is called exactly as before."""
    with _watch_lock:
        current = getattr(random, "_urandom", None)
        if current is None or getattr(current, "_diffkit_counts", False):
            return

        def urandom(size, _read=current):
            _reads.count = getattr(_reads, "count", 0) + 1
            return _read(size)

        urandom._diffkit_counts = True
        random._urandom = urandom
        _watch_unseeded_random()


def _watch_unseeded_random():
    """Count ``random.Random`` (and subclasses) seeded without a seed as an entropy read:
    CPython seeds them from the operating system's entropy in C, not through ``urandom``
    above. ``Random.seed`` is wrapped once; it is called exactly as before."""
    seed = random.Random.seed
    if getattr(seed, "_diffkit_counts", False):
        return

    @functools.wraps(seed)
    def counting_seed(self, a=None, *args, **kwargs):
        if a is None:
            _reads.count = getattr(_reads, "count", 0) + 1
        return seed(self, a, *args, **kwargs)

    counting_seed._diffkit_counts = True
    random.Random.seed = counting_seed


def _same(a, b):
    """Equality of nested generator states (dicts, tuples, arrays, numbers)."""
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    return a == b
