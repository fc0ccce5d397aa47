"""What a dask graph built by diffkit is keyed on, beyond what dask's ``tokenize`` sees.

``vmap`` over dask arrays names its tasks with a token of the task (the user's function,
its constants, the structure of its arguments), the chunk size and the input arrays' names
(``arrays.py``). Dask's ``tokenize`` pickles a function: a lambda, a local function or one
defined in ``__main__`` by value (its code, its closure and the globals it reads), but a
function importable from a module only by its module and name. Two graphs of such a
function built before and after its module's constant ``W`` was reassigned would then
share their keys, and a cluster holding the first graph's results would hand them to the
second. So ``walk_task`` finds, from the task, the user's Python functions (through
closures, wrappers, partials, bound methods and callable objects, and on into the
functions of the same module that their globals hold) and gives

- ``reads``: the current values of the module globals those functions read, for the token;
- ``draws``: whether they draw random numbers: they read ``random``, ``default_rng``,
  ``rvs``... or hold a NumPy generator, a ``RandomState`` or a ``random.Random``. Two
  graphs of such a function must not share their draws, and nothing can check that the
  draws are the same, so such a graph gets a random token (a graph of its own).

Not walked: diffkit's own code (its globals are its machinery, the same for every call;
its closures are walked, which is where the user's function sits), and functions of other
modules than the one that refers to them (a library's functions are keyed by name, as dask
keys them). At most ``MAX_FUNCTIONS`` functions are read; past that the rest are keyed by
name only. Nothing here imports dask.
"""

import functools
import random
import types

__all__ = ["walk_task", "TaskWalk", "MAX_FUNCTIONS"]

MAX_FUNCTIONS = 64   # functions whose globals are read, per graph: a bound on the walk
_MAX_OBJECTS = 4096  # objects visited in all (containers included)

# Names whose lookup in the user's code means a random draw (module or method names: an
# attribute named so elsewhere only costs the graph its sharing, never a wrong value).
DRAW_NAMES = frozenset({"random", "default_rng", "RandomState", "Generator", "rvs",
                        "SeedSequence", "randn", "rand", "randint"})


def _names_read(code):
    """Every name the code object (and the code nested in it: lambdas, comprehensions,
    inner functions) looks up; attribute names too, a harmless excess."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names_read(const)
    return names


def _is_diffkit(module):
    return module == "diffkit" or (module or "").startswith("diffkit.")


def _is_generator(obj):
    """A source of random draws: NumPy's generators, bit generators and ``RandomState``,
    or Python's ``random.Random``."""
    return isinstance(obj, random.Random) or \
        (type(obj).__module__ or "").startswith("numpy.random")


def _closure_values(fun):
    values = []
    for cell in fun.__closure__ or ():
        try:
            values.append(cell.cell_contents)
        except ValueError:   # a cell not filled yet
            pass
    return values


class TaskWalk:
    """One walk from a task: ``found`` maps ``(module, name)`` to a global's value,
    ``draws`` says whether a random draw was seen."""

    def __init__(self):
        self.found = {}
        self.draws = False
        self.seen = set()
        self.functions = 0

    @property
    def reads(self):
        """``[((module, name), value), ...]`` in a fixed order."""
        return sorted(self.found.items(), key=lambda item: item[0])

    def run(self, root):
        stack = [root]
        while stack and len(self.seen) < _MAX_OBJECTS:
            obj = stack.pop()
            if id(obj) in self.seen:
                continue
            self.seen.add(id(obj))
            if _is_generator(obj):
                self.draws = True
                continue
            stack.extend(self._inside(obj))
        return self

    def _held(self, value):
        """A global's value: only looked at, not walked (a library's objects are keyed by
        what dask sees), but for the generator behind a bound method like
        ``np.random.normal`` (a method of NumPy's global ``RandomState``)."""
        if _is_generator(value) or _is_generator(getattr(value, "__self__", None)):
            self.draws = True

    def _inside(self, obj):
        """The objects reached from ``obj`` that may hold more of the user's code."""
        if isinstance(obj, types.FunctionType):
            return self._function(obj)
        if isinstance(obj, functools.partial):
            return [obj.func, *obj.args, *obj.keywords.values()]
        if isinstance(obj, (types.MethodType, types.BuiltinMethodType)):
            # np.random.normal is a method of the global RandomState: its __self__ says so
            return [getattr(obj, "__func__", None), obj.__self__]
        if isinstance(obj, (list, tuple)):
            return list(obj)
        if isinstance(obj, dict):
            return list(obj.values())
        if _is_diffkit(type(obj).__module__):   # diffkit's wrappers: their attributes
            names = getattr(type(obj), "__slots__", ())
            names = (names,) if isinstance(names, str) else names
            slots = [getattr(obj, s) for s in names if hasattr(obj, s)]
            return slots + list(getattr(obj, "__dict__", {}).values())
        if not callable(obj):
            return []
        # a callable object of the user's: its state is pickled by dask, its method is code
        call = type(obj).__call__
        return [call] if isinstance(call, types.FunctionType) else []

    def _function(self, fun):
        inner = _closure_values(fun) + list(fun.__defaults__ or ()) + \
            list((fun.__kwdefaults__ or {}).values())
        wrapped = getattr(fun, "__wrapped__", None)
        if wrapped is not None:
            inner.append(wrapped)
        module = fun.__module__
        if _is_diffkit(module) or self.functions >= MAX_FUNCTIONS:
            return inner
        self.functions += 1
        names = _names_read(fun.__code__)
        if names & DRAW_NAMES:
            self.draws = True
        space = fun.__globals__
        for name in sorted(names):
            if name not in space or isinstance(space[name], types.ModuleType):
                continue
            value = space[name]
            self.found[(module, name)] = value
            if isinstance(value, types.FunctionType) and value.__module__ == module:
                inner.append(value)   # the same module's code: walked like the first
            else:
                self._held(value)
        return inner


def walk_task(root):
    """The ``TaskWalk`` from ``root`` (see the module notes)."""
    return TaskWalk().run(root)
