"""Staged differential operators: a function made by ``grad``, ``value_and_grad``,
``elementwise_grad``, ``jacobian`` or ``hessian`` replays a recording of its computation
(``diffkit.jit``) once it has been called a few times the same way, instead of running the
user's Python at every call as autograd does. An optimizer calling
``value_and_grad(loss)`` hundreds of times pays for one recording and then runs
straight-line NumPy.

A replay must give what the eager call would have given, so staging is used only where
everything that decides the recording is checked on every call, and every failure of it
falls back to the eager call, whose result (or exception) is then the answer:

- **arguments.** The differentiated argument is the recording's input (``jit`` keys it
  by shape and dtype and checks every value the Python reads from it). The other
  arguments stay the plain values the function sees eagerly (an array handed to pandas
  must not become a traced value): a number, string or None is part of the context by
  value (a new iteration number is a new context), any other argument (an array, a tuple
  of arrays, a pandas object, an instance) by identity, and its contents are checked on
  every call as the environment's are (an array changed in place is seen).
- **environment.** What the function reads besides its arguments (closure cells,
  globals, attributes of the instances it uses; ``_environment``) must still hold the
  objects it held when recorded, arrays and frames their bytes; otherwise the call runs
  eagerly and the function is not staged again. A function that changes its environment
  itself (a counter, a log list, an attribute it sets) is never staged, nor is one that
  calls ``print``, ``open``, ``input`` or ``breakpoint``.
- **guards.** ``jit``'s own: branches on values, caught exceptions, writes into
  arguments, random draws. A function that can reach a random generator object is not
  staged (``_environment``); one that draws from NumPy's or Python's global generator
  while being recorded has that draw undone (the generators' states are restored) and
  runs eagerly, so it draws what it would have drawn, and is not staged again. Not
  covered: a function that draws only on a branch first taken after its recording (a
  recording made again inside ``jit`` then draws once before the eager call does).
- **when.** Only at top level (not inside another transformation or a ``jit``), from the
  ``EAGER_CALLS + 1``-th call of one function on one context (so a one-off ``grad(f)(x)``
  never pays for a recording), and not after ``MAX_TRACES`` recordings of one context
  (a function whose branches keep changing runs eagerly).

``set_staging(False)`` turns staging off (every call eager), ``set_staging(True)`` on
again; the default is on.
"""

import collections
import random
import threading

import numpy as np

from ... import tree_util
from ...core.trace import Tracer, current_level
from ...jit.jitted import jit
from ._environment import Environment
from ._values import as_real
from .wrap_util import (
    check_argnum,
    get_name,
    named_as_operator,
    select_argument,
    subvals,
    wraps,
)

__all__ = ["staged_operator", "set_staging", "staging_enabled", "EAGER_CALLS",
           "MAX_TRACES", "MAX_CONTEXTS"]

EAGER_CALLS = 1    # eager calls of one function on one context before it is recorded
MAX_TRACES = 3     # recordings of one context before its staging is given up
MAX_CONTEXTS = 8   # contexts remembered per function (the least recently used go)

_settings = {"enabled": True}


def set_staging(enabled):
    """Turn the staging of the differential operators' functions on (``True``, the
    default) or off; returns the previous setting. Off, every call runs the function's
    Python, as autograd does."""
    previous = _settings["enabled"]
    _settings["enabled"] = bool(enabled)
    return previous


def staging_enabled():
    """Whether the differential operators' functions are staged."""
    return _settings["enabled"]


# --- the arguments of one call ---------------------------------------------------------------


_BY_VALUE = (int, float, complex, bool, str, bytes, type(None))


class _Arguments:
    """The non-differentiated arguments of a call and the key of their context: numbers,
    strings and None by value, every other argument (an array, a tuple of arrays, a pandas
    object) by identity. They stay plain values in a recording, as the function sees them
    eagerly (an array handed to pandas must not become a traced value), and their contents
    are checked with the environment (``objects``). ``key`` is None where the call is not
    stageable."""

    __slots__ = ("args", "kwargs", "key", "objects")

    def __init__(self, args, kwargs, argnum):
        positions = argnum if isinstance(argnum, tuple) else (argnum,)
        self.args, self.kwargs = args, kwargs
        self.objects = []
        key = [len(args)]
        for i, arg in enumerate(args):
            key.append(None if i in positions else self._part(arg))
        for name, value in kwargs.items():
            key.append((name, self._part(value)))
        self.key = None if _UNSTAGEABLE in key else tuple(key)

    def _part(self, value):
        kind = type(value)
        if kind in _BY_VALUE or isinstance(value, np.generic):
            return (kind, repr(value))   # by value (0.0 and -0.0 apart)
        if isinstance(value, Tracer):
            return _UNSTAGEABLE          # an escaped traced value: eager says what is wrong
        self.objects.append(value)
        return id(value)


_UNSTAGEABLE = ("unstageable",)


# --- one context: a function called the same way ------------------------------------------------


class _Context:
    """The staging of one function on one context: eager calls counted, then the
    recording (a ``jit`` of the whole derivative computation) and the environment it
    depends on."""

    __slots__ = ("calls", "staged", "environment", "arguments", "scalars", "off")

    def __init__(self):
        self.calls = 0
        self.staged = None        # the jitted derivative computation
        self.environment = None   # what the function reads besides its arguments
        self.arguments = None     # the _Arguments it was recorded with (holds the objects)
        self.scalars = None       # the kinds of the 0-d results, where there are some
        self.off = False


class StagedFunction:
    """The state of one function made by a staged operator (``value_and_grad(fun)``): its
    contexts, least recently used first."""

    def __init__(self, operator, fun, argnum):
        self.operator, self.fun, self.argnum = operator, fun, argnum
        self.contexts = collections.OrderedDict()
        self.off = False   # the function changed its environment: never staged again
        self.lock = threading.Lock()

    def __call__(self, args, kwargs):
        if self.off or not _settings["enabled"] or current_level() != 0:
            return self.eager(args, kwargs)
        arguments = _Arguments(args, kwargs, self.argnum)
        context = self._context(arguments.key)
        if context is None or context.off:
            return self.eager(args, kwargs)
        if context.staged is None:
            context.calls += 1
            if context.calls <= EAGER_CALLS:
                return self.eager(args, kwargs)
            return self._record(context, arguments, args, kwargs)
        if not _unchanged(context.environment):
            self._give_up(context, everywhere=True)
            return self.eager(args, kwargs)
        return self._replay(context, arguments, args, kwargs)

    def eager(self, args, kwargs):
        """The call as without staging: the operator on the function of the argument."""
        argnum, fun = self.argnum, self.fun

        def unary_f(x):
            if isinstance(argnum, tuple):
                return fun(*subvals(args, zip(argnum, x)), **kwargs)
            return fun(*subvals(args, [(argnum, x)]), **kwargs)

        unary_f.__name__ = get_name(fun)  # named for messages (check_grads)
        x = select_argument(args, argnum, get_name(self.operator))
        return self.operator(unary_f, x)

    def _context(self, key):
        if key is None:
            return None
        with self.lock:
            context = self.contexts.get(key)
            if context is None:
                context = self.contexts[key] = _Context()
                if len(self.contexts) > MAX_CONTEXTS:
                    self.contexts.popitem(last=False)
            else:
                self.contexts.move_to_end(key)
            return context

    def _record(self, context, arguments, args, kwargs):
        """Record the derivative computation on this call's values (the call's result is
        the recording's); any failure makes this call, and the context's next ones,
        eager."""
        try:
            environment = Environment.of(self.fun, arguments.objects)
        except Exception:   # noqa: BLE001 (Unfollowable, or an object the walk cannot read)
            self._give_up(context, everywhere=True)
            return self.eager(args, kwargs)
        staged = jit(self._derivative(arguments))
        before = _global_generators()
        try:
            result = staged(self._argument(args))
        except Exception:   # noqa: BLE001 (any: the eager call gives the answer or the error)
            # a draw while recording (RandomDrawError) is undone: the eager call draws
            # what it would have drawn without staging
            _restore_generators(before)
            self._give_up(context)
            return self.eager(args, kwargs)
        if not _unchanged(environment):   # the function changed what it reads
            self._give_up(context, everywhere=True)
        elif _usable(staged):
            context.staged, context.environment = staged, environment
            context.arguments, context.scalars = arguments, _scalar_kinds(result)
        else:
            self._give_up(context)
        return result

    def _replay(self, context, arguments, args, kwargs):
        staged = context.staged
        traces = staged.cache_info().traces
        try:
            result = staged(self._argument(args))
        except Exception:   # noqa: BLE001 (any: the eager call gives the answer or the error)
            self._give_up(context)
            return self.eager(args, kwargs)
        if staged.cache_info().traces != traces:   # recorded again: the Python ran
            if not _unchanged(context.environment):
                self._give_up(context, everywhere=True)
            elif not _usable(staged):
                self._give_up(context)
        if context.scalars is not None:
            result = _as_kinds(result, context.scalars)
        return result

    def _argument(self, args):
        return as_real(select_argument(args, self.argnum, get_name(self.operator)))

    def _derivative(self, arguments):
        """The computation to record: the operator on the function, as a function of the
        differentiated argument (the other arguments are those of the recorded call, the
        same objects or numbers as in every call of the context)."""
        argnum, fun, operator = self.argnum, self.fun, self.operator
        others, kwargs = arguments.args, arguments.kwargs

        def derivative(x):
            def unary_f(x):
                if isinstance(argnum, tuple):
                    return fun(*subvals(others, zip(argnum, x)), **kwargs)
                return fun(*subvals(others, [(argnum, x)]), **kwargs)

            unary_f.__name__ = get_name(fun)
            return operator(unary_f, x)

        derivative.__name__ = get_name(fun)
        return derivative

    def _give_up(self, context, everywhere=False):
        context.off = True
        context.staged = context.environment = context.arguments = None
        if everywhere:
            self.off = True


def _global_generators():
    """The states of NumPy's and Python's global generators (about 0.1 ms: taken once per
    recording, not per replay)."""
    return np.random.get_state(), random.getstate()


def _restore_generators(states):
    np.random.set_state(states[0])
    random.setstate(states[1])


def _scalar_kinds(result):
    """``{leaf index: NumPy array or NumPy scalar}`` for the 0-d leaves of a recorded
    call's result (the eager kinds), or None where it has none."""
    kinds = {i: type(leaf) for i, leaf in enumerate(tree_util.tree_leaves(result))
             if isinstance(leaf, (np.ndarray, np.generic)) and np.ndim(leaf) == 0}
    return kinds or None


def _as_kinds(result, kinds):
    """``result`` with each 0-d leaf of the kind the eager call gives (a replay gives NumPy
    scalars, ``jacobian`` and ``hessian`` of a scalar give 0-d arrays eagerly)."""
    leaves, tree = tree_util.tree_flatten(result)
    for i, kind in kinds.items():
        leaf = leaves[i]
        if kind is np.ndarray and isinstance(leaf, np.generic):
            leaves[i] = np.asarray(leaf)
        elif kind is not np.ndarray and isinstance(leaf, np.ndarray):
            leaves[i] = leaf[()]
    return tree.unflatten(leaves)


def _unchanged(environment):
    """Whether the environment holds what it held; an object that cannot be read now
    counts as changed."""
    try:
        return environment.unchanged()
    except Exception:   # noqa: BLE001 (whatever it is, the recording is not trusted)
        return False


def _usable(staged):
    """Whether a jitted computation is worth keeping: it replays (no eager call) and has
    not been recorded more than ``MAX_TRACES`` times."""
    info = staged.cache_info()
    return info.eager_calls == 0 and info.traces <= MAX_TRACES and bool(staged.graphs())


def staged_operator(unary_operator):
    """``unary_operator(fun, x)`` as autograd's n-ary operator (``op(fun, argnum=0)`` makes
    a function of ``fun``'s arguments, as ``wrap_util.unary_to_nary``), whose functions
    are staged as this module describes."""
    op_name = get_name(unary_operator)

    def nary_operator(fun, argnum=0):
        argnum = check_argnum(argnum, op_name)
        state = StagedFunction(unary_operator, fun, argnum)

        def nary_f(*args, **kwargs):
            return state(args, kwargs)

        nary_f._staging = state   # for tests and debugging: its contexts
        return named_as_operator(nary_f, fun, op_name, argnum)

    wraps(unary_operator)(nary_operator)
    return nary_operator
