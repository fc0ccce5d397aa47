"""The type variables and aliases of diffkit's public signatures.

Annotations only: the modules that use these names import them for their annotations and
generic classes, nothing here runs when a transformed function is called.

Values are typed as users see them. Inside a transformed function the arguments are traced
values, but they behave as NumPy arrays and the user's code is written (and annotated) for
NumPy arrays, so every public signature speaks of arrays, scalars and pytrees, never of
diffkit's tracer types.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ParamSpec, TypeAlias, TypeVar

__all__ = ["P", "R", "Aux", "F", "PyTree", "ArgNums", "Axes", "Executor"]

P = ParamSpec("P")
"""The parameters of the function a transformation wraps (kept by ``grad``, ``jit`` ...)."""

R = TypeVar("R")
"""What the wrapped function returns."""

Aux = TypeVar("Aux")
"""The auxiliary output of a ``has_aux=True`` function, passed through as it is."""

F = TypeVar("F", bound=Callable[..., Any])
"""A function returned as it is (``defjvp`` used as a decorator)."""

PyTree: TypeAlias = Any
"""A NumPy array, a scalar, or a pytree of them (tuples, lists, dicts, namedtuples,
``None`` and registered nodes with arrays at the leaves). Python's typing cannot follow a
pytree's structure through a transformation (the gradient of a dict is a dict of the same
keys), so a pytree is ``Any``: the caller's own annotation says what it holds."""

ArgNums: TypeAlias = int | Sequence[int]
"""``argnums``: one position (one result) or a sequence of them (a tuple of results)."""

Axes: TypeAlias = Any
"""``vmap``'s ``in_axes`` and ``out_axes``: an int, ``None``, or a pytree prefix of them."""

Executor: TypeAlias = Any
"""``executor=``: a ``concurrent.futures.Executor``, a ``dask.distributed.Client`` or a
map-like ``workers(fun, iterable)`` (recognised by duck typing), or ``None``."""
