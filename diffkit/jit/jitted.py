"""``jit`` and ``make_graph``: stage a function once per argument signature, then replay.

The cache key of a call is the pytree structure of the non-static arguments, the shape and
dtype of each array leaf (the type of each Python scalar leaf: Python scalars are traced,
not baked in) and the values of the static arguments. Under one key the cache keeps up to
``MAX_SPECIALISATIONS`` graphs, one per outcome of the guards (``if x.sum() > 0`` gives
two); a call tries them in turn and traces again when every one has a failing guard. Past
the bound the function runs eagerly, with a ``PerformanceWarning``.
"""

from __future__ import annotations

import functools
import inspect
import threading
import warnings
from collections import namedtuple
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Generic

import numpy as np

from .._types import P, R
from ..core.trace import Tracer
from ..errors import ArgnumsError, InputTypeError, PerformanceWarning
from ..interpreters.staging import aliased_write, stage_flat, write_back
from ..tracebacks import api_boundary
from ..tree_util import tree_flatten, tree_unflatten
from . import linear, randomness
from .graph import Graph, GuardFailure, Unverifiable

MAX_SPECIALISATIONS = 8

CacheInfo = namedtuple("CacheInfo", "traces hits guard_failures eager_calls")

_SCALARS = (float, int, complex, bool)


class _Signature:
    """How one function's arguments split into static and traced ones."""

    def __init__(self, fun, static_argnums, static_argnames, what):
        self.name = getattr(fun, "__name__", type(fun).__name__)
        self.what = what
        static_argnums = _as_tuple(static_argnums, "static_argnums", what)
        static_argnames = _as_tuple(static_argnames, "static_argnames", what)
        try:
            params = list(inspect.signature(fun).parameters.values())
        except (TypeError, ValueError):   # a builtin or a callable without a signature
            params = None
        positional = None
        variadic = params is None or any(p.kind is p.VAR_POSITIONAL for p in params)
        if not variadic:
            positional = [p.name for p in params
                          if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            for n in static_argnums:
                if not -len(positional) <= n < len(positional):
                    raise ArgnumsError(_argnum_message(what, self.name, n, len(positional)))
            static_argnums = tuple(n % len(positional) for n in static_argnums)
        self.static_argnums = frozenset(static_argnums)
        names = set(static_argnames)
        self.names = {}   # position -> name of the positional parameters, where known
        if positional is not None:   # a static argument may come by position or by name
            self.names = dict(enumerate(positional))
            names.update(positional[n] for n in static_argnums)
            self.static_argnums |= {positional.index(n) for n in static_argnames
                                    if n in positional}
        self.static_argnames = frozenset(names)

    def split(self, args, kwargs):
        """``(dynamic, statics)``: the traced part as a pytree and the static values as a
        hashable tuple (an error naming an unhashable one)."""
        if not self.static_argnums and not self.static_argnames:
            return (args, kwargs), ()
        n = len(args)
        statics = []
        dynamic_args = []
        for i, a in enumerate(args):
            if i in self.static_argnums or i - n in self.static_argnums:
                statics.append((i, _hashable(a, f"static argument {i}", self)))
            else:
                dynamic_args.append(a)
        dynamic_kwargs = {}
        for key, value in kwargs.items():
            if key in self.static_argnames:
                statics.append((key, _hashable(value, f"static argument {key!r}", self)))
            else:
                dynamic_kwargs[key] = value
        for k in self.static_argnums:
            if k >= n and self.names.get(k) not in kwargs:
                raise ArgnumsError(_argnum_message(self.what, self.name, k, n))
        return (tuple(dynamic_args), dynamic_kwargs), tuple(statics)

    def merge(self, dynamic, statics):
        """The full ``(args, kwargs)`` from the traced part and the static values."""
        dynamic_args, kwargs = dynamic
        kwargs = dict(kwargs)
        fixed = {}
        for where, value in statics:
            if isinstance(where, str):
                kwargs[where] = value
            else:
                fixed[where] = value
        args, rest = [], iter(dynamic_args)
        for i in range(len(dynamic_args) + len(fixed)):
            args.append(fixed[i] if i in fixed else next(rest))
        return args, kwargs


def _as_tuple(value, what, fname):
    value = (value,) if isinstance(value, (int, str)) else tuple(value)
    kind = int if what == "static_argnums" else str
    for v in value:
        if not isinstance(v, kind) or isinstance(v, bool):
            raise TypeError(f"{fname}: {what} must hold {kind.__name__}s, got {v!r}")
    return value


def _argnum_message(what, name, n, count):
    return (f"{what}: static_argnums contains {n}, but {name} is called with {count} "
            f"positional argument{'s' if count != 1 else ''}; give the positions of "
            "arguments that exist (0 to {}).".format(count - 1))


def _hashable(value, what, signature):
    try:
        hash(value)
    except TypeError:
        raise InputTypeError(
            f"{signature.what}({signature.name}): {what} is a {type(value).__name__}, which "
            "is not hashable, so it cannot be part of the cache key. Pass a hashable value "
            "(a tuple instead of a list, a frozenset instead of a set), or make the argument "
            "non-static if it holds arrays.") from None
    return value


def _leaf_key(leaf, index, signature):
    """The part of the cache key for one argument leaf, and whether it is traced."""
    kind = type(leaf)
    if kind is np.ndarray:
        return (leaf.shape, leaf.dtype)
    if kind in _SCALARS:
        return kind
    if isinstance(leaf, Tracer):
        return (leaf.shape, leaf.dtype)
    if isinstance(leaf, np.generic):   # a NumPy scalar replays as a 0-d array would
        return ((), leaf.dtype)
    if isinstance(leaf, randomness.GENERATORS):
        raise randomness.random_draw_error(
            signature.name, f"a {kind.__name__} is argument leaf {index}")
    raise InputTypeError(
        f"{signature.what}({signature.name}): argument leaf {index} is a {kind.__name__}; "
        "jit traces arrays and numbers only. Mark the argument static (static_argnums or "
        "static_argnames) if it configures the function, or pass an array.")


class _Flat:
    """The user's function as a function of the flat traced leaves (learns the outputs'
    structure when it runs)."""

    def __init__(self, fun, signature, tree, statics):
        self.fun, self.signature, self.tree, self.statics = fun, signature, tree, statics
        self.out_tree = None

    def __call__(self, *leaves):
        args, kwargs = self.signature.merge(tree_unflatten(self.tree, leaves), self.statics)
        out_leaves, self.out_tree = tree_flatten(self.fun(*args, **kwargs))
        return out_leaves


def trace(fun, signature, tree, statics, leaves):
    """Stage ``fun`` on ``leaves``: ``(graph, flat outputs)``. Refuses a random draw; gives
    the arguments the function wrote into their final values, as NumPy does."""
    generators = randomness.reachable_generators(fun)
    before = randomness.snapshot(generators)
    flat = _Flat(fun, signature, tree, statics)
    outs, recording = stage_flat(flat, leaves, name=signature.what)
    where = randomness.changed(before, generators)
    if where is not None:
        raise randomness.random_draw_error(signature.name, where)
    _check_aliasing(leaves, recording.writes, signature)
    for (i, _), value in zip(recording.writes, recording.written):
        write_back(leaves[i], value)
    recording.written = []
    return Graph(recording, tree, flat.out_tree), outs


def _check_aliasing(leaves, writes, signature):
    """An error when the function writes into an argument that shares memory with another
    one: NumPy would change both, and a recording sees them as separate values."""
    pair = aliased_write(leaves, writes)
    if pair is not None:
        i, j = pair
        raise InputTypeError(
            f"{signature.what}({signature.name}) writes in place into argument leaf {i}, "
            f"which shares memory with argument leaf {j} (the same array passed twice, or a "
            "view of it). NumPy would change both; a staged function sees separate arrays. "
            "Pass a copy (f(a, a.copy())), or call the function without jit.")


class Jitted(Generic[P, R]):
    """``jit(fun)``: call it as ``fun``. ``clear_cache()`` empties the cache and
    ``cache_info()`` counts traces, hits (replays), guard failures and eager calls.

    Examples:
        >>> staged = dk.jit(lambda x: 2 * x)
        >>> staged
        <jit of <lambda>>
        >>> staged(np.ones(2)).tolist(), staged(np.ones(2)).tolist()
        ([2.0, 2.0], [2.0, 2.0])
        >>> info = staged.cache_info()
        >>> info
        CacheInfo(traces=1, hits=1, guard_failures=0, eager_calls=0)
        >>> info.traces, info.hits, len(staged.graphs())
        (1, 1, 1)
        >>> staged.clear_cache()
        >>> staged.cache_info(), staged.graphs()
        (CacheInfo(traces=0, hits=0, guard_failures=0, eager_calls=0), [])
    """

    def __init__(self, fun: Callable[P, R], static_argnums: int | Sequence[int] = (),
                 static_argnames: str | Iterable[str] = ()) -> None:
        if not callable(fun):
            raise TypeError(f"jit expects a callable, got {type(fun).__name__}")
        functools.update_wrapper(self, fun)
        self.fun = fun
        self._signature = _Signature(fun, static_argnums, static_argnames, "jit")
        self._cache = {}
        self._fast = {}   # (shape, dtype) of each positional array -> the cache key
        self._no_statics = not (self._signature.static_argnums
                                or self._signature.static_argnames)
        self._lock = threading.Lock()
        self._stats = [0, 0, 0, 0]   # traces, hits, guard failures, eager calls

    @api_boundary
    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        signature = self._signature
        fast = None
        if not kwargs and self._no_statics:   # the common call: positional arrays only
            fast = []
            for a in args:
                if type(a) is not np.ndarray:
                    fast = None
                    break
                fast.append((a.shape, a.dtype))
        key = None
        if fast is not None:
            fast = tuple(fast)
            key = self._fast.get(fast)
        if key is not None:   # the key those arrays had before: no pytree to flatten
            tree, statics, leaves = key[0], (), list(args)
        else:
            dynamic, statics = signature.split(args, kwargs)
            leaves, tree = tree_flatten(dynamic)
            key = (tree, tuple(_leaf_key(x, i, signature) for i, x in enumerate(leaves)),
                   statics)
            if fast is not None:
                self._fast[fast] = key
        graphs = self._cache.get(key, ())
        failed = None
        if graphs:
            done, out = self._replay(graphs, leaves, args, kwargs)
            if done:
                return out
            failed = out   # the guard that failed last, if one did
        if len(graphs) >= MAX_SPECIALISATIONS:
            where = f" (the last at {failed.where})" if failed is not None \
                and failed.where is not None else ""
            warnings.warn(
                f"jit({signature.name}): {len(graphs)} graphs for these argument shapes all "
                "have a guard that fails: a value read in Python, such as an if on an "
                f"array, keeps changing{where}; running the function without jit. Move the "
                "value-dependent branch out of the function or use dnp.where.",
                PerformanceWarning, stacklevel=2)
            return self._eager(args, kwargs)
        graph, outs = trace(self.fun, signature, tree, statics, leaves)
        self._count(0)
        if not graph.recording.holds_tracers and not graph.raised:
            with self._lock:
                kept = self._cache.setdefault(key, [])
                if len(kept) < MAX_SPECIALISATIONS:
                    kept.append(graph)
        return tree_unflatten(graph.out_tree, outs)

    def _replay(self, graphs, leaves, args, kwargs):
        """``(True, result)`` from the first graph whose guards hold, else ``(False,
        guard)`` (every graph has a failing guard, the last one that failed or None: trace
        again)."""
        failed = None
        for graph in graphs:
            if graph.write_back:
                _check_aliasing(leaves, graph.recording.writes, self._signature)
            # generated outside the try below: a failure to generate the replay is a bug
            # of diffkit's, to be seen, not an exception of the function to trace again for
            graph.replay_program  # noqa: B018
            try:
                outs = graph.run_flat(leaves)
            except GuardFailure as failure:
                failed = failure.guard
                self._count(2)
                continue
            except Unverifiable:
                return True, self._eager(args, kwargs)
            except Exception:   # noqa: BLE001 (any: the function's own code decides)
                # An operation raised on these values (a Cholesky factorisation of a matrix
                # that is not positive definite, an error under np.errstate): the function
                # may catch it and take another path, so it runs again, traced.
                self._count(2)
                continue
            self._count(1)
            out_tree = graph.out_tree
            return True, outs[0] if out_tree.node is None else tree_unflatten(out_tree, outs)
        return False, failed

    def _eager(self, args, kwargs):
        self._count(3)
        return self.fun(*args, **kwargs)

    def _count(self, which):
        with self._lock:
            self._stats[which] += 1

    def cache_info(self) -> CacheInfo:
        with self._lock:
            return CacheInfo(*self._stats)

    def clear_cache(self) -> None:
        with self._lock:
            self._cache.clear()
            self._fast.clear()
            self._stats = [0, 0, 0, 0]

    def graphs(self) -> list[Graph]:
        """Every graph in the cache (a list), for looking at what was recorded."""
        with self._lock:
            return [g for graphs in self._cache.values() for g in graphs]

    def _linearize_flat(self, leaves, in_tree):
        """``dk.linearize`` of this function: the linear map as a graph (``linear.py``)."""
        return linear.linearize_flat(self, leaves, in_tree)

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        # a jitted method binds like a function
        return self if instance is None else functools.partial(self, instance)

    def __repr__(self) -> str:
        return f"<jit of {self._signature.name}>"


def jit(fun: Callable[P, R], static_argnums: int | Sequence[int] = (),
        static_argnames: str | Iterable[str] = ()) -> Jitted[P, R]:
    """``fun`` staged: the first call with a new argument signature records its operations
    (running the Python once, on the concrete values), later calls replay the recording as
    straight-line NumPy. Composes with every transformation, in any order.

    ``static_argnums``/``static_argnames``: arguments that are part of the cache key by
    value (hashable configuration: sizes, flags, callables) instead of being traced.

    What runs only when jit traces: side effects of the Python (prints, appends to outer
    lists) and the values of closed-over arrays and globals, which are recorded as
    constants. Every value the Python reads from a traced array (``if``, ``int``,
    ``float``, an index, a boolean mask) is a guard checked on every call: a different
    answer traces again, so a replay is never stale. A random draw while tracing is an
    error (pass the random numbers in).

    Examples:
        >>> calls = []
        >>> @dk.jit
        ... def loss(x):
        ...     calls.append(x)    # Python side effects run only when jit traces
        ...     return dnp.sum(dnp.sin(x) ** 2)
        >>> float(loss(np.zeros(3))), float(loss(np.full(3, np.pi / 2))), len(calls)
        (0.0, 3.0, 1)
        >>> loss.cache_info()
        CacheInfo(traces=1, hits=1, guard_failures=0, eager_calls=0)
        >>> _ = loss(np.zeros(4))    # another shape: traced again
        >>> loss.cache_info().traces, len(calls)
        (2, 2)
        >>> dk.grad(loss)(np.zeros(3)).tolist()
        [0.0, 0.0, 0.0]

        A value read in Python is a guard; a call that answers it differently traces again:

        >>> @dk.jit
        ... def absolute_sum(x):
        ...     if x.sum() > 0:
        ...         return x.sum()
        ...     return -x.sum()
        >>> [float(absolute_sum(np.array(v))) for v in ([1.0, 2.0], [-1.0, -2.0], [3.0, 4.0])]
        [3.0, 3.0, 7.0]
        >>> absolute_sum.cache_info()
        CacheInfo(traces=2, hits=1, guard_failures=1, eager_calls=0)

        Static arguments are part of the cache key, by value; they must be hashable:

        >>> power = dk.jit(lambda x, n: x ** n, static_argnums=1)
        >>> float(power(np.array(2.0), 3)), float(power(np.array(2.0), 2))
        (8.0, 4.0)
        >>> power(np.array(2.0), [3])
        Traceback (most recent call last):
            ...
        diffkit.errors.InputTypeError: jit(<lambda>): static argument 1 is a list, which is not ...

        Closed-over arrays are constants of the recording, and a random draw is an error:

        >>> weights = np.array([1.0, 2.0])
        >>> dot = dk.jit(lambda x: dnp.sum(weights * x))
        >>> float(dot(np.ones(2)))
        3.0
        >>> weights[:] = 10.0
        >>> float(dot(np.ones(2)))    # the replay keeps the values jit traced with
        3.0
        >>> rng = np.random.default_rng(0)
        >>> dk.jit(lambda x: x + rng.normal())(np.ones(2))
        Traceback (most recent call last):
            ...
        diffkit.jit.randomness.RandomDrawError: <lambda> drew random numbers ...
    """
    return Jitted(fun, static_argnums, static_argnames)


def make_graph(fun: Callable[P, Any], static_argnums: int | Sequence[int] = ()
               ) -> Callable[P, Graph]:
    """``make_graph(fun)(*args)``: the ``Graph`` recorded for these arguments, to read
    (``print(graph)``, ``graph.num_ops``) or call (with the non-static arguments).

    Examples:
        >>> graph = dk.make_graph(lambda x: dnp.sin(x) * 2)(np.ones(2))
        >>> print(graph)
        graph(v0: f64[2]) {
          v1: f64[2] = sin v0
          v2: f64[2] = multiply v1 2
          return v2
        }
        >>> graph.num_ops, graph(np.zeros(2)).tolist()
        (2, [0.0, 0.0])
        >>> cube = dk.make_graph(lambda x, n: x ** n, static_argnums=1)(np.ones(2), 3)
        >>> cube(np.array([2.0, 3.0])).tolist()
        [8.0, 27.0]
    """
    signature = _Signature(fun, static_argnums, (), "make_graph")

    def record(*args, **kwargs):
        dynamic, statics = signature.split(args, kwargs)
        leaves, tree = tree_flatten(dynamic)
        for i, x in enumerate(leaves):
            _leaf_key(x, i, signature)
        return trace(fun, signature, tree, statics, leaves)[0]

    return record
