"""Flatten a pytree of arrays into one 1-D vector and back: ``ravel_pytree``, as JAX's
``jax.flatten_util.ravel_pytree``.

This is what adapters to vector-based solvers (``scipy.optimize``, ``scipy.integrate``) need:
the solver sees one float vector, the user's function sees the pytree. Both directions are
written with diffkit operations, so they can be differentiated, batched and nested inside
any transformation.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import numpy as dnp
from . import tree_util
from ._types import PyTree
from .core.trace import Tracer
from .core.zeros import dtype_of, shape_of
from .errors import InputTypeError, ShapeMismatchError

__all__ = ["ravel_pytree"]


def _as_leaf(x, i):
    if isinstance(x, (np.ndarray, Tracer)):
        return x
    if isinstance(x, (bool, int, float, complex, np.generic)):
        return np.asarray(x)
    raise InputTypeError(f"ravel_pytree: leaf {i} is a {type(x).__name__}, not an array or a "
                         "scalar. Pass a pytree of NumPy arrays (or register the container "
                         "type with diffkit.tree_util.register_pytree_node).")


def _flat_dtype(dtypes):
    # An empty tree has no leaves to promote; float64 is NumPy's default float.
    return np.result_type(*dtypes) if dtypes else np.dtype(np.float64)


def ravel_pytree(tree: PyTree) -> tuple[NDArray[Any], Callable[[ArrayLike], PyTree]]:
    """Concatenate the leaves of ``tree`` into one 1-D array.

    Returns ``(flat, unravel)``. ``flat`` has shape ``(n,)`` where ``n`` is the total number
    of elements of the leaves, taken in ``diffkit.tree_util.tree_leaves`` order, each leaf
    flattened in C order. Its dtype is the NumPy promotion (``np.result_type``) of the leaf
    dtypes, so a float32 and a float64 leaf give float64; an empty tree gives a float64
    array of shape ``(0,)``.

    ``unravel(flat)`` takes a 1-D array of shape ``(n,)`` and rebuilds a pytree with the
    structure of ``tree``, each leaf with its original shape and dtype (values are cast back,
    so a float32 leaf comes back float32). ``flat`` may be a traced value (inside ``grad``,
    ``jacfwd``, ``vmap``...): unravel is made of diffkit operations and is differentiable.
    Unlike JAX, ``unravel`` also accepts a vector of another float dtype than ``flat``'s (a
    float64 vector from SciPy for a float32 tree); a complex vector for a real tree, or a
    vector of the wrong length, is an error.

    ``tree`` may itself hold traced values; then ``flat`` is traced as well.

    Examples:
        >>> from diffkit.flatten_util import ravel_pytree
        >>> tree = {"w": np.ones((2, 2), np.float32), "b": np.array([5.0, 6.0])}
        >>> flat, unravel = ravel_pytree(tree)
        >>> flat.tolist(), flat.dtype    # "b" first (sorted keys); float32 and float64 promote
        ([5.0, 6.0, 1.0, 1.0, 1.0, 1.0], dtype('float64'))
        >>> rebuilt = unravel(np.arange(6.0))
        >>> rebuilt["w"].dtype, rebuilt["w"].tolist(), rebuilt["b"].tolist()
        (dtype('float32'), [[2.0, 3.0], [4.0, 5.0]], [0.0, 1.0])
        >>> ravel_pytree(())[0].shape, ravel_pytree(())[0].dtype
        ((0,), dtype('float64'))

        ``unravel`` is differentiable:

        >>> dk.grad(lambda v: dnp.sum(unravel(v)["w"]))(flat).tolist()
        [0.0, 0.0, 1.0, 1.0, 1.0, 1.0]

        A vector of the wrong length, or a complex one for real leaves, is an error:

        >>> unravel(np.ones(5))
        Traceback (most recent call last):
            ...
        diffkit.errors.ShapeMismatchError: unravel expects a 1-D array of shape (6,), ...
        >>> unravel(np.ones(6, complex))
        Traceback (most recent call last):
            ...
        diffkit.errors.ShapeMismatchError: unravel got a complex vector (dtype complex128) ...
    """
    leaves, treedef = tree_util.tree_flatten(tree)
    leaves = [_as_leaf(x, i) for i, x in enumerate(leaves)]
    shapes = [shape_of(x) for x in leaves]
    dtypes = [dtype_of(x) for x in leaves]
    flat_dtype = _flat_dtype(dtypes)
    flat = _concatenate(leaves, flat_dtype)
    sizes = [math.prod(s) for s in shapes]
    split_points = list(np.cumsum(sizes)[:-1]) if sizes else []

    def unravel(flat_vector: ArrayLike) -> PyTree:
        """Rebuild the pytree from a 1-D array of shape ``(n,)``; see ``ravel_pytree``."""
        flat_vector = _check_flat(flat_vector, sum(sizes), flat_dtype, treedef)
        pieces = dnp.split(flat_vector, [int(p) for p in split_points]) if len(leaves) > 1 \
            else [flat_vector] * len(leaves)
        rebuilt = [dnp.astype(dnp.reshape(piece, shape), dtype)
                   for piece, shape, dtype in zip(pieces, shapes, dtypes)]
        return tree_util.tree_unflatten(treedef, rebuilt)

    return flat, unravel


def _concatenate(leaves, dtype):
    if not leaves:
        return np.zeros((0,), dtype)
    if not any(isinstance(x, Tracer) for x in leaves):
        return np.concatenate([np.ravel(x).astype(dtype, copy=False) for x in leaves])
    return dnp.concatenate([dnp.astype(dnp.ravel(x), dtype) for x in leaves])


def _check_flat(flat_vector, size, flat_dtype, treedef):
    """``flat_vector`` as an array or tracer of shape ``(size,)``, or a clear error."""
    if not isinstance(flat_vector, Tracer):
        flat_vector = np.asarray(flat_vector)
    shape = shape_of(flat_vector)
    if shape != (size,):
        raise ShapeMismatchError(
            f"unravel expects a 1-D array of shape ({size},), the total number of elements of "
            f"the leaves of {treedef}, but got shape {shape}. Pass a vector made by "
            "ravel_pytree of a tree with this structure and these shapes.")
    got = dtype_of(flat_vector)
    if got.kind == "c" and flat_dtype.kind != "c":
        raise ShapeMismatchError(
            f"unravel got a complex vector (dtype {got}) for a tree of real leaves "
            f"(flattened dtype {flat_dtype}); take the real part first if that is what you "
            "mean.")
    if got.kind not in "biufc":
        raise InputTypeError(f"unravel expects a numeric vector, got dtype {got}")
    return flat_vector
