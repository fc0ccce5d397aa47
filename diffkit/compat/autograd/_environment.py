"""What a function reads besides its arguments, and a cheap check that it is still the same.

autograd runs the differentiated function's Python at every call; a staged recording
(``diffkit.jit``) holds what the function read outside its arguments as constants. The
compatibility layer replays a recording only while those values are the same, and
``Environment`` is how it knows. ``Environment.of(fun, data)`` follows ``fun`` as its
code reaches things:

- the closure cells, the default values and the globals its code names (nested functions,
  lambdas and comprehensions included) of every Python function found, so the helpers
  it calls are followed too;
- a bound method's function and instance, a ``functools.partial``'s function and
  arguments, an autograd primitive's raw function and derivative makers, a wrapper's
  ``__wrapped__``;
- the attributes of instances, classes and modules that some code found names
  (``self.scale``, ``config.beta``, ``mymodule.table``; string constants count, for
  ``getattr(self, "scale")``), and the special methods of user classes that operators
  call without naming them (``__getitem__``, ``__call__``, ``__add__``...);
- the items of lists, tuples, sets and dicts; every attribute of the objects in ``data``
  (the non-differentiated arguments the function closes over when staged).

Each place a value was found is a *slot*, remembered with the object it held (which keeps
that object alive, so its identity cannot be reused). An array is remembered by its bytes
too, a list, dict or set by its items, and a pandas object by its values, index, columns
and name. ``unchanged()`` checks every slot: a rebound name or attribute, an array
changed in place, an item appended. Its cost grows with the number of slots (a few
microseconds for a typical objective).

Not entered: the modules, classes and functions of NumPy, SciPy, pandas, diffkit and
Python's standard library (their own state is not the user's; their objects met as data,
arrays and frames, are checked by value). Not seen: attributes read under a name computed
at run time, and the inner state of objects without ``__dict__`` (C extension objects
other than arrays), which are checked by identity only. A function whose code calls
``print``, ``open``, ``input`` or ``breakpoint``, or that can reach a random generator
(a NumPy ``Generator`` or ``RandomState``, a ``random.Random``), is refused
(``Unfollowable``): those effects belong to every call. ``of`` also refuses past
``MAX_OBJECTS`` objects or ``MAX_BYTES`` of arrays, where checking would cost more than
it saves.
"""

import functools
import operator
import random
import sys
import types

import numpy as np

from ._primitives import _Rules

__all__ = ["Environment", "Unfollowable", "MAX_OBJECTS", "MAX_BYTES"]

MAX_OBJECTS = 4000          # objects followed at most (a check visits each slot)
MAX_BYTES = 16 * 2 ** 20    # bytes of arrays compared on each check at most

_LIBRARIES = frozenset({"numpy", "scipy", "pandas", "diffkit"})
_STANDARD = frozenset(getattr(sys, "stdlib_module_names", ())) | {"builtins"}
_IMMUTABLE = (str, bytes, int, float, complex, bool, type(None), range, slice,
              type(Ellipsis), np.dtype, np.generic, types.CodeType)
# calls whose effect a replay would skip: output, input, a debugger
_EFFECTS = frozenset({"print", "open", "input", "breakpoint"})
# special methods operators call without naming them; construction and finalisation are
# not called on an existing object by the function
_NOT_CALLED = frozenset({"__init__", "__new__", "__del__", "__init_subclass__",
                         "__class_getitem__", "__set_name__", "__subclasshook__"})
_MISSING = object()
_GENERATORS = (np.random.Generator, np.random.RandomState, random.Random)


class Unfollowable(Exception):
    """The function cannot be followed (an effect, or too much to check); the message says
    why."""


def _top_module(name):
    return (name or "").partition(".")[0]


def _is_library_name(module_name):
    top = _top_module(module_name)
    return top in _LIBRARIES or top in _STANDARD


def _is_library(value):
    """Whether a module, class or function belongs to a library whose state is not the
    user's."""
    if isinstance(value, types.ModuleType):
        return _is_library_name(value.__name__)
    return _is_library_name(getattr(value, "__module__", None))


def _is_pandas(value):
    return _top_module(type(value).__module__) == "pandas"


# --- the checks of one slot -----------------------------------------------------------------
# Each check is a small object with ``holds()``; the environment keeps a list of them.


class _Names:
    """The entries ``names`` of the mapping ``holder`` (globals, an instance's or a class's
    ``__dict__``) held ``values`` (``_MISSING`` where absent)."""

    __slots__ = ("holder", "names", "values", "present", "getter")

    def __init__(self, holder, names, values):
        self.holder, self.names, self.values = holder, tuple(names), tuple(values)
        # the entries that were there, read together by one itemgetter (the fast path)
        self.present = tuple(v for v in self.values if v is not _MISSING)
        names = [n for n, v in zip(self.names, self.values) if v is not _MISSING]
        self.getter = operator.itemgetter(*names) if len(names) > 1 else (
            (lambda h, n=names[0]: (h[n],)) if names else (lambda h: ()))

    def holds(self):
        try:
            now = self.getter(self.holder)
        except KeyError:   # an entry removed
            return False
        if not all(map(operator.is_, now, self.present)):
            return False
        if len(self.present) == len(self.values):
            return True
        holder = self.holder   # names that must still be absent (they would shadow)
        return all(n not in holder for n, v in zip(self.names, self.values) if v is _MISSING)


class _Cell:
    __slots__ = ("cell", "value")

    def __init__(self, cell, value):
        self.cell, self.value = cell, value

    def holds(self):
        try:
            return self.cell.cell_contents is self.value
        except ValueError:   # emptied
            return self.value is _MISSING


class _Attribute:
    """An attribute read through ``getattr`` (a slot of ``__slots__``, a function's
    ``__defaults__``)."""

    __slots__ = ("owner", "name", "value")

    def __init__(self, owner, name, value):
        self.owner, self.name, self.value = owner, name, value

    def holds(self):
        return getattr(self.owner, self.name, _MISSING) is self.value


class _Items:
    """A list's or a dict's items, or a set's members, as they were."""

    __slots__ = ("container", "items")

    def __init__(self, container):
        self.container, self.items = container, self._items(container)

    @staticmethod
    def _items(container):
        if isinstance(container, dict):
            return tuple(container.items())
        if isinstance(container, (set, frozenset)):
            return frozenset(container)
        return tuple(container)

    def holds(self):
        now = self._items(self.container)
        if isinstance(now, frozenset):
            return now == self.items
        return len(now) == len(self.items) and all(
            _same_entry(a, b) for a, b in zip(now, self.items))


def _same_entry(a, b):
    if type(a) is tuple and type(b) is tuple:   # a dict's (key, value)
        return a[0] == b[0] and a[1] is b[1]
    return a is b


class _Bytes:
    """An array's shape, dtype and bytes."""

    __slots__ = ("array", "shape", "dtype", "data")

    def __init__(self, array):
        self.array, self.shape, self.dtype = array, array.shape, array.dtype
        self.data = array.tobytes()

    def holds(self):
        a = self.array
        return a.shape == self.shape and a.dtype == self.dtype and a.tobytes() == self.data


class _Frame:
    """A pandas object's stored arrays (each by identity and bytes), index, columns and
    name."""

    __slots__ = ("frame", "arrays", "axis_names", "axes")

    def __init__(self, frame):
        self.frame = frame
        self.arrays = [_Bytes(a) for a in self._arrays(frame)]
        # looked up on the class: a missing attribute costs microseconds on the object
        self.axis_names = [a for a in ("index", "columns", "name") if hasattr(type(frame), a)]
        self.axes = self._axes()

    @staticmethod
    def _arrays(frame):
        """The arrays that store ``frame``'s values: its blocks where pandas exposes them
        (a microsecond, where converting a frame of several dtypes to one array copies it),
        else its values as one array."""
        stored = getattr(getattr(frame, "_mgr", None), "arrays", None)
        if isinstance(stored, list) and all(type(a) is np.ndarray for a in stored):
            return stored
        to_numpy = getattr(frame, "to_numpy", None)
        return [np.asarray(frame) if to_numpy is None else to_numpy()]

    def _axes(self):
        return tuple(getattr(self.frame, a, None) for a in self.axis_names)

    @property
    def nbytes(self):
        return sum(a.array.nbytes for a in self.arrays)

    def holds(self):
        arrays = self._arrays(self.frame)
        if len(arrays) != len(self.arrays):
            return False
        for now, then in zip(arrays, self.arrays):
            if now.shape != then.shape or now.dtype != then.dtype or \
                    now.tobytes() != then.data:
                return False
        return all(_same_axis(a, b) for a, b in zip(self._axes(), self.axes))


def _same_axis(now, then):
    if now is then:
        return True
    return isinstance(now, str) and now == then   # a Series' name


# --- following a function --------------------------------------------------------------------


class _Follower:
    """One walk from a function: the slots found, the attribute names code reads, and the
    scopes (user modules, classes, instances) entered by those names."""

    def __init__(self):
        self.checks = []
        self.seen = set()
        self.names = set()
        self.scopes = []         # [(scope, every attribute?, names already entered)]
        self.stack = []
        self.bytes = 0
        self.proxies = {}        # class -> the mapping proxy of its __dict__ checks read

    # the walk: every object on the stack first, then the scopes by the names found so
    # far, again until no scope has a name left to enter

    def run(self, roots, data):
        self.stack.extend(roots)
        for value in data:
            self._data(value)
        while self.stack:
            while self.stack:
                self._visit(self.stack.pop())
            for entry in self.scopes:
                self._enter(entry)
        return _merged(self.checks)

    def _visit(self, value):
        if isinstance(value, _IMMUTABLE) or id(value) in self.seen:
            return
        self.seen.add(id(value))
        if len(self.seen) > MAX_OBJECTS:
            raise Unfollowable(f"it reaches more than {MAX_OBJECTS} objects")
        if isinstance(value, _GENERATORS):
            raise Unfollowable(f"it can reach a random generator (a "
                               f"{type(value).__name__}): its draws belong to every call")
        for kind, visit in _VISITORS:
            if isinstance(value, kind):
                visit(self, value)
                return
        self._instance(value, every=False)

    def _data(self, value):
        """An object used as data (a closed-over argument): every attribute is followed."""
        if isinstance(value, _IMMUTABLE) or id(value) in self.seen:
            return
        if isinstance(value, (np.ndarray, list, tuple, dict, set, frozenset)) or \
                _is_pandas(value) or not hasattr(value, "__dict__"):
            self.stack.append(value)
            return
        self.seen.add(id(value))
        self._instance(value, every=True)

    def _array(self, value):
        self.bytes += value.nbytes
        if self.bytes > MAX_BYTES:
            raise Unfollowable(f"it reads more than {MAX_BYTES} bytes of arrays")
        self.checks.append(_Bytes(value))
        if value.dtype == object:
            self.stack.extend(value.ravel().tolist())

    def _container(self, value):
        if isinstance(value, (list, dict, set)):   # mutable: its items are checked
            self.checks.append(_Items(value))
        self.stack.extend(value.values() if isinstance(value, dict) else value)

    def _module_or_class(self, value):
        if not _is_library(value):
            self.scopes.append((value, False, set()))
            if isinstance(value, type):
                self._special_methods(value)

    def _function(self, value):
        self._function_attributes(value)
        if value.__closure__:
            for cell in value.__closure__:
                try:
                    contents = cell.cell_contents
                except ValueError:
                    contents = _MISSING
                self.checks.append(_Cell(cell, contents))
                if contents is not _MISSING:
                    self.stack.append(contents)
        if _is_library_name(value.__globals__.get("__name__")):
            return   # a library's globals are its own (judged by where the code lives:
            #          functools.wraps gives a library's wrapper the user's __module__)
        self._read_code(value.__code__)
        names = [n for n in self._code_names(value.__code__) if n in value.__globals__]
        self.checks.append(_Names(value.__globals__, names,
                                  [value.__globals__[n] for n in names]))
        self.stack.extend(value.__globals__[n] for n in names)

    def _function_attributes(self, value):
        # default values are followed (a mutable default is checked by its items); the
        # attributes holding them are not checked (rebinding a function's defaults is not
        # something a function does between two of its calls)
        for held in (value.__defaults__, value.__kwdefaults__):
            if held:
                self.stack.extend(held.values() if isinstance(held, dict) else held)
        for name in ("__wrapped__", "fun", "_autograd_rules"):
            held = vars(value).get(name, _MISSING)
            if held is not _MISSING:
                self.checks.append(_Names(vars(value), (name,), (held,)))
                self.stack.append(held)

    def _read_code(self, code):
        """Add the attribute names ``code`` reads to ``names``; refuse an effect."""
        names = self._code_names(code)
        effects = _EFFECTS.intersection(names)
        if effects:
            raise Unfollowable(f"its code calls {sorted(effects)[0]}, an effect that "
                               "belongs to every call")
        self.names.update(names)

    @staticmethod
    def _code_names(code):
        """The names ``code`` reads (nested code included), and its string constants that
        could be attribute names (``getattr(self, "scale")``)."""
        names, codes = set(), [code]
        while codes:
            code = codes.pop()
            names.update(code.co_names)
            for const in code.co_consts:
                if isinstance(const, types.CodeType):
                    codes.append(const)
                elif isinstance(const, str) and const.isidentifier():
                    names.add(const)
        return names

    def _method(self, value):
        self.stack.extend((value.__func__, value.__self__))

    def _builtin(self, value):
        owner = getattr(value, "__self__", None)
        if owner is not None and not isinstance(owner, types.ModuleType):
            self.stack.append(owner)

    def _partial(self, value):
        self.checks.append(_Items(value.keywords))
        self.stack.extend((value.func, *value.args, *value.keywords.values()))

    def _rules(self, value):
        """An autograd primitive's rules: its raw function and derivative makers."""
        parts = [value.raw, value.vjp_argnums, value.jvp_argnums]
        self.checks.append(_Names(vars(value), ("raw", "vjp_argnums", "jvp_argnums"), parts))
        self.stack.extend(p for p in parts if p is not None)

    def _frame(self, value):
        frame = _Frame(value)
        self.bytes += frame.nbytes
        if self.bytes > MAX_BYTES:
            raise Unfollowable(f"it reads more than {MAX_BYTES} bytes of arrays")
        self.checks.append(frame)

    def _instance(self, value, every):
        """An object: its class's code, and its attributes: every one for data and the
        objects of other libraries (their code is not followed), those some code names
        for the user's own objects (their code says which it reads)."""
        if _is_pandas(value):
            self._frame(value)
            return
        cls = type(value)
        top = _top_module(cls.__module__)
        if top == "diffkit":   # diffkit's objects (a jitted function): what they wrap
            self.stack.extend(getattr(value, n) for n in ("fun", "__wrapped__")
                              if hasattr(value, n))
            return
        if id(cls) not in self.seen:
            self.stack.append(cls)
        if hasattr(value, "__dict__") or _slot_names(cls):
            self.scopes.append((value, every or _is_library(cls), set()))

    def _special_methods(self, cls):
        for klass in cls.__mro__:
            if _is_library(klass):
                continue
            for name, member in vars(klass).items():
                if name.startswith("__") and name.endswith("__") and name not in _NOT_CALLED \
                        and callable(member):
                    self.names.add(name)

    def _enter(self, entry):
        """Follow the attributes of a scope that were not entered yet: every one, or those
        some code names."""
        scope, every, entered = entry
        if every:
            names = set(_own_names(scope)) - entered
        else:
            names = {n for n in self.names - entered if _reads(scope, n)}
        if not names:
            return
        entered.update(names)
        if isinstance(scope, type):
            self._enter_class(scope, names)
            return
        slots = set() if isinstance(scope, types.ModuleType) else set(_slot_names(type(scope)))
        held = getattr(scope, "__dict__", None)
        if held is not None:
            # a name the class provides is checked absent from the instance too: setting
            # it there later would shadow what the recording read
            in_dict = [n for n in names if n not in slots]
            values = [held.get(n, _MISSING) for n in in_dict]
            self.checks.append(_Names(held, in_dict, values))
            self.stack.extend(v for v in values if v is not _MISSING)
        for n in names & slots:
            value = getattr(scope, n, _MISSING)
            self.checks.append(_Attribute(scope, n, value))
            if value is not _MISSING:
                self.stack.append(value)

    def _enter_class(self, cls, names):
        """Each name along the user classes of ``cls``'s method resolution order, up to the
        class that defines it (checked absent from those before it, which could shadow
        it)."""
        found = {}   # class -> {name: member or _MISSING}
        for name in names:
            for klass in cls.__mro__:
                if _is_library(klass):
                    continue
                member = vars(klass).get(name, _MISSING)
                found.setdefault(klass, {})[name] = member
                if member is not _MISSING:
                    self._member(member)
                    break
        for klass, members in found.items():
            # one mapping proxy per class, so that _merged merges its checks into one
            proxy = self.proxies.setdefault(klass, vars(klass))
            self.checks.append(_Names(proxy, members, members.values()))

    def _member(self, member):
        if isinstance(member, (staticmethod, classmethod)):
            self.stack.append(member.__func__)
        elif isinstance(member, property):
            self.stack.extend(f for f in (member.fget,) if f is not None)
        else:
            self.stack.append(member)


def _merged(checks):
    """``checks`` with the name checks of one mapping merged into one (a module's globals
    are named by each of its functions), each name once."""
    by_holder, merged = {}, []
    for check in checks:
        if type(check) is not _Names:
            merged.append(check)
            continue
        names = by_holder.get(id(check.holder))
        if names is None:
            names = by_holder[id(check.holder)] = (check.holder, {})
            merged.append(names)
        for name, value in zip(check.names, check.values):
            names[1].setdefault(name, value)
    return [_Names(c[0], c[1], c[1].values()) if type(c) is tuple else c for c in merged]


def _slot_names(cls):
    return [n for klass in cls.__mro__ for n in getattr(klass, "__slots__", ())
            if isinstance(n, str) and n not in ("__dict__", "__weakref__")]


def _own_names(scope):
    names = list(getattr(scope, "__dict__", {}))
    if not isinstance(scope, (type, types.ModuleType)):
        names += _slot_names(type(scope))
    return names


def _provides(cls, name):
    return any(name in vars(k) for k in cls.__mro__ if not _is_library(k))


def _reads(scope, name):
    """Whether code reading ``scope.name`` could read something of the user's: an entry of
    a module's globals, an attribute a user class (or the instance itself) holds."""
    if isinstance(scope, type):
        return _provides(scope, name)
    held = getattr(scope, "__dict__", None)
    if held is not None and name in held:
        return True
    if isinstance(scope, types.ModuleType):
        return False
    return name in _slot_names(type(scope)) or _provides(type(scope), name)


_VISITORS = (
    (np.ndarray, _Follower._array),
    (types.FunctionType, _Follower._function),
    (types.MethodType, _Follower._method),
    ((types.BuiltinFunctionType, types.BuiltinMethodType), _Follower._builtin),
    (functools.partial, _Follower._partial),
    (_Rules, _Follower._rules),
    ((list, tuple, dict, set, frozenset), _Follower._container),
    ((types.ModuleType, type), _Follower._module_or_class),
)


class Environment:
    """The slots a function reads outside its arguments, with what they held when
    ``of`` looked."""

    __slots__ = ("checks", "names", "others")

    def __init__(self, checks):
        self.checks = checks
        # the name checks without an absent name, as (read, mapping, objects) for the loop
        # of ``unchanged`` (no method call per check: most checks are these)
        self.names = [(c.getter, c.holder, c.present) for c in checks
                      if type(c) is _Names and len(c.present) == len(c.values)]
        plain = {id(c) for c in checks if type(c) is _Names and len(c.present) == len(c.values)}
        self.others = [c for c in checks if id(c) not in plain]

    @classmethod
    def of(cls, fun, data=()):
        """The environment of ``fun``, with every attribute of the objects in ``data``
        followed too. Raises ``Unfollowable`` naming why it cannot be checked."""
        return cls(_Follower().run([fun], data))

    def unchanged(self):
        """Whether every slot still holds what it held (and every array its bytes)."""
        is_ = operator.is_
        try:
            for read, mapping, objects in self.names:
                if not all(map(is_, read(mapping), objects)):
                    return False
        except KeyError:   # an entry removed
            return False
        for check in self.others:
            if not check.holds():
                return False
        return True

    def __len__(self):
        return len(self.checks)
