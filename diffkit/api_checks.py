"""The argument checks of the transformations in ``diffkit.api``, and their messages.

Every check names the transformation the user called and the argument that is wrong, and
says what was expected. Checks on the transformation's own arguments (``fun``,
``argnums``, ``in_axes``, ``axis_size``...) run when the transformed function is built, as
in JAX; checks on values (inputs, outputs, tangents, cotangents) run at each call and cost
one type test per leaf in the common case.
"""

import inspect

import numpy as np

from . import tree_util
from .core.trace import Tracer, check_not_escaped
from .core.zeros import dtype_of, is_complex, shape_of, tangent_dtype
from .errors import (
    ArgnumsError,
    BatchingError,
    ComplexOutputError,
    InputTypeError,
    NonScalarOutputError,
    OptionError,
    ShapeMismatchError,
)
from .ops.elementwise import astype

SCALAR_TYPES = (float, int, complex, bool, np.generic)


# --- the transformation's own arguments (checked at construction) ------------------------


def check_callable(fun, name, what="fun"):
    """``fun`` itself, or an error saying that ``name`` needs a callable."""
    if not callable(fun):
        hint = f" Pass the function itself, e.g. {name}(f) rather than {name}(f(x))." \
            if what == "fun" else ""
        raise InputTypeError(f"{name} expects a callable as {what}, got {describe(fun)}: "
                             f"{_short_repr(fun)}.{hint}")
    return fun


def _short_repr(value, limit=60):
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _is_int(n):
    return isinstance(n, (int, np.integer)) and not isinstance(n, (bool, np.bool_))


def check_argnums(argnums, name):
    """``argnums`` must be an int or a tuple/list of ints (their range is checked per call)."""
    nums = argnums if isinstance(argnums, (tuple, list)) else (argnums,)
    if not all(_is_int(n) for n in nums):
        raise ArgnumsError(f"{name}: argnums={argnums!r}, but argnums must be an int or a "
                           "tuple of ints (the positions of the arguments to differentiate)")
    return argnums


def check_axes_spec(axes, name):
    """``in_axes``/``out_axes`` of vmap: an int, None, or a pytree (prefix) of them."""
    bad = [a for a in tree_util.tree_leaves(axes) if not _is_int(a)]
    if bad:
        raise BatchingError(
            f"vmap {name} must be an int, None, or a tuple/list/dict of them (a pytree prefix "
            f"of the {'arguments' if name == 'in_axes' else 'outputs'}), but {name}={axes!r} "
            f"holds {bad[0]!r} ({type(bad[0]).__name__}). Give the axis number to map over, "
            "or None for an argument that is not mapped.")
    return axes


def check_axis_size(axis_size):
    """``axis_size`` of vmap: None or a positive int."""
    if axis_size is not None and (not _is_int(axis_size) or axis_size < 1):
        raise BatchingError(f"vmap axis_size must be a positive int (the batch size) or "
                            f"None, got {axis_size!r}")
    return None if axis_size is None else int(axis_size)


def check_chunk_size(chunk_size, name):
    if chunk_size is not None and (not _is_int(chunk_size) or chunk_size < 1):
        raise OptionError(f"{name}: chunk_size must be a positive int or None, got "
                          f"{chunk_size!r}")
    return chunk_size


# --- inputs --------------------------------------------------------------------------------


def describe(value):
    """A few words for what ``value`` is, for messages."""
    if value is None:
        return "None"
    if isinstance(value, (np.ndarray, Tracer)):
        return f"an array of shape {shape_of(value)} and dtype {dtype_of(value)}"
    if isinstance(value, SCALAR_TYPES):
        return f"a scalar of type {type(value).__name__}"
    if isinstance(value, (tuple, list)):
        return f"a {type(value).__name__} of length {len(value)}"
    name = type(value).__name__
    return f"{'an' if name[0] in 'aeiouAEIOU' else 'a'} {name}"


def as_array(x, where):
    """``x`` as an array or tracer, or a clear error if it is not array-like."""
    if isinstance(x, (np.ndarray, Tracer)):
        return x
    if isinstance(x, SCALAR_TYPES):
        return np.asarray(x)
    raise InputTypeError(f"{where} is {describe(x)}, not an array, a scalar or a pytree "
                         "of them. Pass NumPy arrays (or register the type with "
                         "diffkit.tree_util.register_pytree_node).")


def axes_mismatch(axes, args, fun, name):
    """The message for vmap ``in_axes`` (``name``) whose structure does not match the
    positional ``args``: which argument, by name, and how."""
    if not isinstance(axes, (tuple, list)):
        return f"vmap {name}={axes!r} do not match the arguments"
    if len(axes) != len(args):
        return (f"vmap {name}={axes!r} has {len(axes)} entries but the function was called "
                f"with {len(args)} positional argument{'s' if len(args) != 1 else ''}; give "
                "one entry per positional argument "
                "(an int, None, or a pytree of them shaped like the argument)")
    for k, (ax, a) in enumerate(zip(axes, args)):
        try:
            tree_util.broadcast_prefix(ax, a)
        except ValueError as error:
            return (f"vmap {name}[{k}]={ax!r} for {argument_name(fun, k)} does not match it: "
                    f"{_plain_structure(error)}. Give an int or None for the whole argument, "
                    "or a pytree of them with the argument's structure")
    return f"vmap {name}={axes!r} do not match the arguments"


def _plain_structure(error):
    """A structure mismatch's message without the tree's internal notation."""
    text = str(error)
    return text.rsplit("): ", 1)[1] if "PyTreeDef" in text and "): " in text else text


def broadcast_axes(axes, tree, name, what):
    """One axis per leaf of ``tree`` from the pytree prefix ``axes``."""
    if axes is None or isinstance(axes, int):  # the common case, without walking prefixes
        return [axes] * len(tree_util.tree_leaves(tree))
    try:
        return tree_util.broadcast_prefix(axes, tree)
    except ValueError as error:
        raise BatchingError(f"vmap {name}={axes!r} do not match the {what}: {error}") from None


def check_in_axes(axes, args, fun):
    """One axis per leaf of the positional ``args`` from vmap's ``in_axes``; an error that
    names the argument that does not match."""
    try:
        return broadcast_axes(axes, args, "in_axes", "arguments")
    except BatchingError:
        raise BatchingError(axes_mismatch(axes, args, fun, "in_axes")) from None


def batch_input(x, where):
    """``x`` as an array or tracer of numbers (what ``vmap`` can map), or a clear error."""
    if type(x) is not np.ndarray:
        x = as_array(x, where)
    if dtype_of(x).kind not in "biufc":
        raise InputTypeError(f"{where} has dtype {dtype_of(x)}; vmap maps arrays of numbers "
                             "(bool, int, float or complex). Pass other values through a "
                             "closure or as a static argument instead.")
    return x


def differentiable_input(x, where):
    """``x`` as an array or tracer of floats or complex numbers, or a clear error. Integer
    and boolean arrays are refused, as JAX refuses them (autograd reads them as real): the
    function's NumPy code computes with them as integers, which have no tangent."""
    x = as_array(x, where)
    dtype = dtype_of(x)
    if dtype.kind not in "fc":
        kind = {"b": "a boolean", "i": "an integer", "u": "an integer"}.get(dtype.kind, "this")
        raise InputTypeError(
            f"{where} has dtype {dtype}; derivatives are defined only for float or complex "
            f"inputs, and diffkit (as JAX) does not read {kind} array as real. Convert it "
            "before the call, e.g. x.astype(float) (np.asarray(x, dtype=float) for a list "
            "or a pandas object), or, if it needs no derivative, leave it out of argnums "
            "(or pass it through a closure).")
    return x


def flat_inputs(tree, what):
    """The checked leaves of ``tree`` (float or complex arrays) and its structure."""
    leaves, treedef = tree_util.tree_flatten(tree)
    checked = []
    for i, x in enumerate(leaves):
        if type(x) is not np.ndarray or x.dtype.kind not in "fc":  # the common case is cheap
            x = differentiable_input(
                x, f"{what} leaf {i} of {treedef}" if treedef.num_leaves > 1 else what)
        checked.append(x)
    return checked, treedef


def parameter_names(fun):
    """The names of ``fun``'s positional parameters (a list), or None where Python cannot
    say (a builtin, ``*args``)."""
    try:
        params = inspect.signature(fun).parameters.values()
    except (TypeError, ValueError):
        return None
    names = []
    for p in params:
        if p.kind is p.VAR_POSITIONAL:
            return None
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            names.append(p.name)
    return names


def argument_name(fun, position):
    """``argument `x` (position 0)``: how messages name a positional argument."""
    names = parameter_names(fun) if fun is not None else None
    if names is not None and position < len(names):
        return f"argument `{names[position]}` (position {position})"
    return f"argument {position}"


def argnum_positions(argnums, is_tuple, num_args, name, fun=None):
    """The positions ``argnums`` names among ``num_args`` arguments (a tuple of ints), or
    an ArgnumsError naming the arguments the function was called with."""
    nums = tuple(argnums) if is_tuple else (argnums,)
    for n in nums:
        if not _is_int(n) or not -num_args <= n < num_args:
            given = ", ".join(argument_name(fun, k).replace("argument ", "", 1)
                              for k in range(num_args)) or "none"
            raise ArgnumsError(
                f"{name}: argnums={argnums!r} names argument {n}, but the function was called "
                f"with {num_args} positional argument{'s' if num_args != 1 else ''} "
                f"({given}). argnums counts positional arguments from 0; pass the position "
                "of the argument to differentiate.")
    nums = tuple(int(n) % num_args for n in nums)
    if len(set(nums)) != len(nums):
        raise ArgnumsError(f"{name}: argnums={argnums!r} repeats an argument")
    return nums


# --- outputs -------------------------------------------------------------------------------


def output_leaf(o, name):
    """An output leaf of the user's function as an array or tracer; an error if it is not
    array-like or is a traced value of a transformation that has finished."""
    if type(o) is not np.ndarray:
        o = check_not_escaped(as_array(o, f"{name}: an output of the function"), name)
    if dtype_of(o).kind not in "biufc":
        raise InputTypeError(f"{name}: an output of the function has dtype {dtype_of(o)}; "
                             "transformed functions return arrays of numbers (return other "
                             "values through has_aux=True where the transformation has it)")
    return o


def split_aux(result, has_aux, name):
    if not has_aux:
        return result, None
    if not (isinstance(result, (tuple, list)) and len(result) == 2):
        raise InputTypeError(f"{name} with has_aux=True expects the function to return a pair "
                             f"(output, aux), but it returned {describe(result)}")
    return result[0], result[1]


def check_scalar(out, name, holomorphic=False):
    """``out`` must be a real (complex with ``holomorphic``) scalar for ``grad``."""
    if out is None:
        raise NonScalarOutputError(
            f"{name} needs a function that returns a real scalar (a 0-d float array, NumPy "
            "float or Python float), but the function returned None. Check that it ends "
            "with a return statement.")
    if isinstance(out, (tuple, list)) and len(out) == 2 and _is_scalar(out[0]):
        raise NonScalarOutputError(
            f"{name} needs a function with a scalar output, but it returned a "
            f"{type(out).__name__} of two values ({describe(out[0])}, "
            f"{describe(out[1])}). If the second element is auxiliary data (values to return "
            f"along with the loss), pass has_aux=True: "
            f"{name}(fun, has_aux=True) then returns (gradient, aux).")
    if isinstance(out, (tuple, list, dict)) or shape_of(out) != ():
        got = f"shape {shape_of(out)}" if not isinstance(out, (tuple, list, dict)) \
            else f"a {type(out).__name__}"
        raise NonScalarOutputError(
            f"{name} needs a function with a scalar output, but it returned {got}. For a "
            "non-scalar output, use vjp(fun, x)[1](v) to get v @ J for a chosen cotangent v "
            "(PyTorch's backward(gradient=v)), or jacobian(fun) for the whole Jacobian; or "
            "reduce the output to a scalar (e.g. with .sum()).")
    kind = dtype_of(out).kind
    if holomorphic:
        if kind != "c":
            raise ComplexOutputError(
                f"{name} with holomorphic=True requires a complex output, but it returned "
                f"dtype {dtype_of(out)}. Drop holomorphic=True for a real-valued function.")
    elif kind == "c":
        raise ComplexOutputError(
            f"{name} needs a real-valued output, but it returned dtype {dtype_of(out)}. For a "
            "holomorphic function pass holomorphic=True (the result is then f'(z)); otherwise "
            "differentiate a real function of the output (e.g. dnp.abs(f(z)) ** 2, "
            "dnp.real(f(z))) or use vjp directly.")
    elif kind != "f":
        raise NonScalarOutputError(
            f"{name} needs a real floating-point output, but it returned dtype "
            f"{dtype_of(out)}.")


def _is_scalar(value):
    try:
        return not isinstance(value, (tuple, list, dict)) and shape_of(value) == ()
    except Exception:   # noqa: BLE001 (not an array: not a scalar output)
        return False


# --- tangents and cotangents ----------------------------------------------------------------


def structured_leaves(values, treedef, what, none_ok=False):
    """The leaves of ``values`` (``what``: a noun phrase naming them for messages), which
    must have the structure ``treedef`` of the value they stand for; with ``none_ok`` a
    ``None`` may stand for any leaf (a zero derivative). Otherwise a ShapeMismatchError
    giving both structures and the path where they first differ."""
    try:
        return tree_util.flatten_as(treedef, values, _is_none if none_ok else None)
    except ValueError as error:
        raise ShapeMismatchError(f"{what} does not have the structure of the value it stands "
                                 f"for: {error}") from None


def _is_none(x):
    return x is None


def matching_leaves(values, treedef, like, what):
    """Flatten ``values`` (the ``what`` given by the user: "tangent", "cotangent"), checking
    structure, shapes and dtype kinds against ``like``; each leaf is cast to its reference's
    derivative dtype (float32 stays float32)."""
    leaves = structured_leaves(values, treedef, f"the {what}")
    checked = []
    for i, (leaf, ref) in enumerate(zip(leaves, like)):
        leaf = as_array(leaf, f"{what} leaf {i}")
        if shape_of(leaf) != shape_of(ref):
            raise ShapeMismatchError(
                f"{what} leaf {i} has shape {shape_of(leaf)}, expected {shape_of(ref)}")
        ref_dtype = tangent_dtype(dtype_of(ref))
        if dtype_of(leaf).kind != ref_dtype.kind:
            kind = "complex" if ref_dtype.kind == "c" else "float"
            raise ShapeMismatchError(
                f"{what} leaf {i} has dtype {dtype_of(leaf)}, expected {ref_dtype} (the "
                f"derivative of a {kind} value is a {kind} array of the same precision)")
        checked.append(leaf if dtype_of(leaf) == ref_dtype else astype(leaf, ref_dtype))
    return checked


def require_complex(leaves, name, what):
    """With ``holomorphic=True`` every input and output must be complex (as in JAX)."""
    for x in leaves:
        if not is_complex(x):
            raise InputTypeError(
                f"{name} with holomorphic=True requires {what} with complex dtype, but got "
                f"{dtype_of(x)}. Convert real {what} to complex (e.g. x.astype(complex)), or "
                "drop holomorphic=True for a function between real values.")


# --- vmap's batch -----------------------------------------------------------------------


class LeafNames:
    """Names of the flat leaves of a call's arguments for messages: ``argument `x`
    (position 0)``, with the leaf's place in it when the argument is a pytree. Worked out
    only when a message needs one (``at(i)`` is a name that is spelled out when shown)."""

    def __init__(self, fun, args, kwargs=None):
        self.fun, self.args, self.kwargs, self.spans = fun, args, kwargs, None

    def __call__(self, i):
        if self.spans is None:
            self.spans = []
            for k, a in enumerate(self.args):
                n = len(tree_util.tree_leaves(a))
                self.spans.extend((k, j, n) for j in range(n))
            for key in sorted(self.kwargs or {}):
                n = len(tree_util.tree_leaves(self.kwargs[key]))
                self.spans.extend((f"keyword argument `{key}`", j, n) for j in range(n))
        if i >= len(self.spans):
            return f"argument leaf {i}"
        k, j, n = self.spans[i]
        named = k if isinstance(k, str) else argument_name(self.fun, k)
        return named if n == 1 else f"{named}, leaf {j} of its {n}"

    def at(self, i, prefix=""):
        return _LazyName(self, i, prefix)


class _LazyName:
    __slots__ = ("names", "i", "prefix")

    def __init__(self, names, i, prefix):
        self.names, self.i, self.prefix = names, i, prefix

    def __str__(self):
        return self.prefix + self.names(self.i)

    __format__ = lambda self, spec: format(str(self), spec)  # noqa: E731


def check_axis(x, axis, i, names=None):
    """The batch axis of argument leaf ``i`` as a non-negative int (None: not mapped)."""
    if axis is None:
        return None
    ndim = len(shape_of(x))
    if not -ndim <= axis < ndim:
        what = names(i) if names is not None else f"argument leaf {i}"
        raise BatchingError(f"vmap was asked to map {what} (shape {shape_of(x)}) over axis "
                            f"{axis} (in_axes), but it has only {ndim} axes; give in_axes "
                            "an axis it has, or None to pass it unmapped")
    return int(axis) % ndim


def batch_size(args, axes, axis_size, names=None):
    """The one size of every mapped axis (or ``axis_size`` when nothing is mapped)."""
    sizes = {shape_of(x)[a] for x, a in zip(args, axes) if a is not None}
    if len(sizes) > 1:
        names = names or (lambda i: f"argument leaf {i}")
        found = "; ".join(f"{names(i)} has {shape_of(x)[a]} along axis {a} (shape "
                          f"{shape_of(x)})"
                          for i, (x, a) in enumerate(zip(args, axes)) if a is not None)
        raise BatchingError(f"vmap got different batch sizes {sorted(sizes)}: {found}. Every "
                            "mapped axis must have the same size; pass an argument that is "
                            "the same for every example with in_axes None at its position")
    if sizes:
        size = sizes.pop()
        if axis_size is not None and axis_size != size:
            raise BatchingError(f"vmap axis_size={axis_size} but the mapped axes have size "
                                f"{size}")
        return size
    if axis_size is None:
        raise BatchingError("vmap needs at least one mapped argument (in_axes not None), or "
                            "axis_size to say how many copies to make")
    return axis_size
