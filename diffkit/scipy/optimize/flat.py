"""The parameter pytree of ``diffkit.scipy.optimize`` as SciPy's one float64 vector, the checks
of what the user's functions return, the cache of the last point, and results and callbacks
given back as pytrees. Shared by ``minimize``, ``least_squares`` and ``root``."""

import inspect

import numpy as np
import scipy  # scipy.optimize is imported on first use (SciPy's lazy submodules)

from ... import tree_util
from ...api_checks import describe
from ...core.trace import Tracer
from ...core.zeros import dtype_of
from ...errors import InputTypeError, ShapeMismatchError
from ...flatten_util import ravel_pytree


class _Params:
    """The pytree ``x0`` seen as a flat float64 vector: ``x0`` (shape ``(n,)``), ``unravel``
    (vector -> pytree), and the leaves' shapes for bounds."""

    def __init__(self, x0, name):
        leaves, self.treedef = tree_util.tree_flatten(x0)
        leaves = [_real_leaf(x, i, name) for i, x in enumerate(leaves)]
        self.shapes = [x.shape for x in leaves]
        flat, self.unravel = ravel_pytree(tree_util.tree_unflatten(self.treedef, leaves))
        self.x0 = np.asarray(flat, dtype=np.float64)
        self.n = self.x0.size

    def tree(self, x):
        """The pytree at the flat point ``x`` (plain arrays or traced values)."""
        return self.unravel(x)

    def flat(self, tree, what):
        """A pytree with ``x0``'s sizes (or a vector of shape ``(n,)``) as a float64 vector."""
        flat = np.asarray(ravel_pytree(tree)[0], dtype=np.float64)
        if flat.shape != (self.n,):
            raise ShapeMismatchError(f"{what} has {flat.size} elements in all, but the "
                                     f"parameters x0 have {self.n}")
        return flat


def _real_leaf(x, i, name):
    """Leaf ``i`` of ``x0`` as a NumPy array; integers become float64, as SciPy does."""
    try:
        x = np.asarray(x)
    except Exception as e:
        raise InputTypeError(f"{name}: x0 leaf {i} cannot be converted to an array: {e}. "
                             "x0 must be a pytree of arrays or numbers.") from None
    if x.dtype.kind == "b":
        raise InputTypeError(f"{name}: x0 leaf {i} is boolean; x0 must be a pytree of float "
                             "arrays or numbers (e.g. x.astype(float)).")
    if x.dtype.kind in "iu":
        return x.astype(np.float64)
    if x.dtype.kind == "c":
        raise InputTypeError(f"{name}: x0 leaf {i} is complex ({x.dtype}); SciPy optimizes "
                             "real parameters. Split it into real and imaginary parts, e.g. "
                             "{'re': z.real, 'im': z.imag}.")
    if x.dtype.kind != "f":
        raise InputTypeError(f"{name}: x0 leaf {i} has dtype {x.dtype}; x0 must be a pytree "
                             "of float arrays or numbers.")
    return x


def _flat_output(out, name, what="fun"):
    """An output pytree (traced or not) as one 1-D vector, differentiably, after checking
    that it holds real numbers (``name`` is the adapter, ``what`` the user's function)."""
    return ravel_pytree(_real_output(out, name, what))[0]


_NUMBERS = (np.ndarray, Tracer, np.generic, int, float, complex)


def _real_output(out, name, what="fun"):
    """``out``, the value the user's ``what`` returned, checked to be real numbers: None, a
    value that is not a number or an array (a string, an object), a complex value and a
    boolean are errors that say so."""
    if out is None:
        raise InputTypeError(f"{name}: {what} returned None; it must return its value (check "
                             "that it ends with a return statement).")
    for leaf in tree_util.tree_leaves(out):
        if not isinstance(leaf, _NUMBERS) or isinstance(leaf, bool):
            within = "" if leaf is out else f" (in {describe(out)})"
            raise InputTypeError(f"{name}: {what} returned {describe(leaf)}{within}; it must "
                                 "return real numbers or arrays.")
        dtype = dtype_of(leaf)
        if dtype.kind == "c":
            raise InputTypeError(
                f"{name}: {what} returned a complex value ({dtype}); SciPy's optimizers work "
                "with real values. Return abs(z) ** 2 or split the real and imaginary parts.")
        if dtype.kind not in "iuf":
            raise InputTypeError(f"{name}: {what} returned an array of dtype {dtype}; it "
                                 "must return real numbers.")
    return out


class _Cache:
    """The last point and what was computed there: SciPy asks for the value, the gradient
    and the Hessian products at one point in separate calls."""

    def __init__(self):
        self.x, self.items = None, {}

    def get(self, x, key, compute):
        if self.x is None or self.x.shape != x.shape or not np.array_equal(self.x, x):
            self.x, self.items = np.array(x, copy=True), {}
        if key not in self.items:
            self.items.update(compute())
        return self.items[key]


def _as_trees(result, params, fields):
    """``result``'s fields that are flat vectors of the parameters, as pytrees."""
    for field in fields:
        value = result.get(field)
        if isinstance(value, np.ndarray) and value.shape == (params.n,):
            result[field] = params.tree(value)
    return result


def _wraps_intermediate_result(callback):
    try:
        return set(inspect.signature(callback).parameters) == {"intermediate_result"}
    except (TypeError, ValueError):
        return False


def _tree_callback(callback, params):
    """The user's callback, given the pytree instead of the flat vector."""
    if callback is None:
        return None
    if _wraps_intermediate_result(callback):
        def tree_callback(intermediate_result):
            shown = scipy.optimize.OptimizeResult(intermediate_result)
            return callback(intermediate_result=_as_trees(shown, params, ("x", "jac")))
        return tree_callback

    def tree_callback_x(xk, *rest):
        return callback(params.tree(xk), *rest)
    return tree_callback_x
