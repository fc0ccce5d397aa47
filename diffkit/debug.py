"""Seeing values while a transformed or staged function runs.

``dk.debug.print(fmt, *args, **kwargs)`` prints ``fmt.format(*args, **kwargs)`` with the
plain values of the arguments, and ``dk.debug.callback(fn, *args, **kwargs)`` calls ``fn``
with them. Both run where the function runs: eagerly; under ``grad``, ``jvp`` and their
relatives, with the values (not the derivatives); under ``vmap``, once per example, in
order; and inside ``jit``, at every call, replays included, in the order of the program
(a Python ``print`` inside a jitted function runs only when jit traces it).

``print(x)``, ``repr(x)`` and ``f"{x:.3f}"`` of a traced value show its value too, wherever
it is known (every eager transformation); under ``jit`` they run only while tracing.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import numpy as np

from .core.trace import Tracer, _stack
from .interpreters.staging import StagingTrace
from .ops.debugging import debug_callback_p
from .tree_util import tree_flatten, tree_unflatten

__all__ = ["print", "callback"]


class _Call:
    """``fn`` called with the pytree ``(args, kwargs)`` rebuilt from the values of the
    array leaves (the other leaves kept as given)."""

    def __init__(self, fn, tree, leaves, positions):
        self.fn, self.tree, self.leaves, self.positions = fn, tree, leaves, positions
        self.__name__ = getattr(fn, "__name__", "callback")

    def __call__(self, *values):
        leaves = list(self.leaves)
        for i, value in zip(self.positions, values):
            leaves[i] = value
        args, kwargs = tree_unflatten(self.tree, leaves)
        self.fn(*args, **kwargs)


def _is_array(leaf):
    return isinstance(leaf, (Tracer, np.ndarray, np.generic))


def callback(fn: Callable[..., object], *args: Any, **kwargs: Any) -> None:
    """Call ``fn(*args, **kwargs)`` with the plain values of the array arguments (pytrees of
    them), wherever the function runs: eagerly, under every transformation (the values,
    never the derivatives; one call per example under ``vmap``) and at every replay of a
    ``jit`` recording, in order. Returns None; ``fn``'s result is ignored.

    Examples:
        >>> seen = []
        >>> def f(x):
        ...     dk.debug.callback(seen.append, x)
        ...     return dnp.sum(x ** 2)
        >>> dk.grad(f)(np.array([1.0, 2.0])).tolist()
        [2.0, 4.0]
        >>> [type(value).__name__ for value in seen], seen[0].tolist()    # the plain values
        (['ndarray'], [1.0, 2.0])
        >>> seen.clear()
        >>> dk.vmap(f)(np.array([[1.0], [2.0]])).tolist()    # one call per example
        [1.0, 4.0]
        >>> [value.tolist() for value in seen]
        [[1.0], [2.0]]
        >>> print(dk.debug.callback(print, np.array([1.0, 2.0]), "and a string"))
        [1. 2.] and a string
        None
    """
    if not callable(fn):
        raise TypeError(f"dk.debug.callback: fn must be callable, got {type(fn).__name__}")
    leaves, tree = tree_flatten((args, kwargs))
    positions = [i for i, leaf in enumerate(leaves) if _is_array(leaf)]
    call = _Call(fn, tree, leaves, positions)
    arrays = [leaves[i] for i in positions]
    if not any(isinstance(a, Tracer) for a in arrays):
        staging = _innermost_staging()
        if staging is not None:   # constants only, inside jit: staged, so replays call it
            staging.process(debug_callback_p, arrays, {"callback": call})
            return None
    debug_callback_p(*arrays, callback=call)
    return None


def print(fmt: str, *args: Any, **kwargs: Any) -> None:   # noqa: A001 (as jax.debug.print)
    """Print ``fmt.format(*args, **kwargs)`` with the plain values of the arguments,
    wherever the function runs (see ``callback``): ``dk.debug.print("x = {}", x)``.

    Examples:
        >>> def f(x):
        ...     dk.debug.print("x = {}", x)
        ...     return x ** 2
        >>> float(dk.grad(f)(3.0))
        x = 3.0
        6.0
        >>> dk.vmap(f)(np.array([1.0, 2.0])).tolist()
        x = 1.0
        x = 2.0
        [1.0, 4.0]

        Under ``jit`` it prints at every call, where Python's ``print`` runs only when jit
        traces:

        >>> def g(x):
        ...     dk.debug.print("dk.debug.print: {}", x)
        ...     print("print")
        ...     return x ** 2
        >>> staged = dk.jit(g)
        >>> for value in (2.0, 3.0):
        ...     _ = staged(np.array(value))
        dk.debug.print: 2.0
        print
        dk.debug.print: 3.0
        >>> dk.debug.print(3)
        Traceback (most recent call last):
            ...
        TypeError: dk.debug.print: the first argument is the format string (str.format syntax), ...
    """
    if not isinstance(fmt, str):
        raise TypeError(f"dk.debug.print: the first argument is the format string "
                        f"(str.format syntax), got {type(fmt).__name__}")
    callback(lambda *a, **k: builtins.print(fmt.format(*a, **k)), *args, **kwargs)


def _innermost_staging():
    for trace in reversed(_stack.traces):
        if isinstance(trace, StagingTrace) and trace.active:
            return trace
    return None
