"""The flat view of a function that sparse derivatives work on: the inputs named by
``argnums`` as one vector, the output as one vector (``ravel_pytree``'s order)."""

import numpy as np

from .. import tree_util
from ..api_checks import argnum_positions, describe
from ..core.trace import Tracer
from ..core.zeros import dtype_of, shape_of
from ..errors import InputTypeError
from ..flatten_util import ravel_pytree


def flat_problem(fun, args, kwargs, argnums, name):
    """``(g, x)``: ``g(vector)`` is ``fun`` at the call's arguments with those named by
    ``argnums`` taken from the flat ``vector``, returning its output flattened to a
    vector; ``x`` is the flat vector of the named arguments."""
    is_tuple = isinstance(argnums, (tuple, list))
    nums = argnum_positions(argnums, is_tuple, len(args), name)
    dyn = tuple(args[i] for i in nums) if is_tuple else args[nums[0]]
    for i, leaf in enumerate(tree_util.tree_leaves(dyn)):
        kind = getattr(dtype_of(leaf), "kind", None) if array_like(leaf) else None
        if kind not in ("f",):
            raise InputTypeError(
                f"{name}: input leaf {i} is {describe(leaf)}"
                + (f" of dtype {dtype_of(leaf)}" if kind else "")
                + "; sparse derivatives take real floating-point arrays (or pytrees of "
                  "them) as the inputs named by argnums.")
    if type(dyn) is np.ndarray and dyn.ndim == 1:   # already a vector: nothing to flatten
        x, unravel = dyn, _same
    else:
        x, unravel = ravel_pytree(dyn)

    def g(vector):
        full = list(args)
        values = unravel(vector)
        for n, value in zip(nums, values if is_tuple else (values,)):
            full[n] = value
        return _flat_output(fun(*full, **kwargs), name)

    return g, x


def _same(vector):
    return vector


def array_like(x):
    return isinstance(x, (np.ndarray, Tracer, float, int, np.generic))


def _flat_output(out, name):
    leaves = tree_util.tree_leaves(out)
    for leaf in leaves:
        if not array_like(leaf) or dtype_of(leaf).kind not in "fiub":
            raise InputTypeError(
                f"{name}: the function returned {describe(leaf)} among its outputs"
                + (f" (dtype {dtype_of(leaf)})" if array_like(leaf) else "")
                + "; it must return a real array, or a pytree of real arrays, of numbers.")
    if len(leaves) == 1 and len(shape_of(leaves[0])) == 1 and leaves[0] is out:
        return out   # one vector: already flat
    return ravel_pytree(out)[0]


def signature(args, kwargs):
    leaves, treedef = tree_util.tree_flatten((args, kwargs))
    return treedef, tuple((type(x).__name__, shape_of(x), str(dtype_of(x)))
                          if array_like(x) else ("static", x) for x in leaves)
