"""User-defined derivatives: ``custom_jvp``, ``custom_vjp``, and ``checkpoint``.

How one rule serves every engine
--------------------------------
Calling a decorated function flattens its differentiable arguments to a list of arrays and
hands a *call record* to ``bind_custom``. The innermost trace among the arguments then
interprets the call through four methods of the record:

- ``fun(*primals) -> outs``: the plain function, once nothing is traced any more;
- ``jvp(primals, tangents) -> (outs, tangents_out)``: forward mode;
- ``forward(primals) -> (outs, saved)`` and ``pullback(saved, primals, cotangents)``:
  reverse mode (the reverse engine puts one tape entry for the whole call);
- ``batched(axis_size, batch_axes)``: the record of the vmapped function, whose rules are
  the vmapped rules, so transformations outside ``vmap`` still use them.

The engine a rule was not written for gets it by transposition, which is exact because
both rules are linear in what they propagate:

- reverse mode through a ``custom_jvp`` function pulls a cotangent back through the linear
  map ``tangents -> rule(primals, tangents)[1]`` (a VJP of it);
- forward mode through a ``custom_vjp`` function pushes a tangent through the transpose of
  ``cotangents -> bwd(residuals, cotangents)`` (again a VJP, of ``bwd`` in its cotangents).

Values a decorated function closes over are differentiated through the function itself,
not through its rule; pass them as arguments to have the rule apply to them.

The transpositions run the engines through their flat entry points (``vjp_flat`` and
``jvp_flat`` in ``diffkit.interpreters``), on the flat lists of arrays the call records
hold; the batched records use ``api.vmap``, whose pytree handling the rules' nested
arguments need. This module therefore sits above ``api``, which is why it is not among the
primitive families in ``diffkit.ops``.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any, Generic

import numpy as np

from . import api, tree_util
from ._types import F, P, R
from .api_checks import check_callable, structured_leaves
from .core.trace import Tracer, bind_custom
from .core.zeros import as_array, dtype_of, instantiate, is_zero, shape_of, tangent_dtype
from .errors import NoRuleError, ShapeMismatchError
from .interpreters.forward import jvp_flat
from .interpreters.reverse import vjp_flat
from .ops.elementwise import astype
from .ops.reductions import sum as _sum

__all__ = ["custom_jvp", "custom_vjp", "checkpoint"]


# --- the user-facing decorators ---------------------------------------------------------


class custom_jvp(Generic[P, R]):
    """A function whose forward-mode derivative is given by a rule, as JAX's ``custom_jvp``.

    ::

        @dk.custom_jvp
        def log1pexp(x):
            return dnp.log1p(dnp.exp(x))

        @log1pexp.defjvp
        def log1pexp_jvp(primals, tangents):
            (x,), (x_dot,) = primals, tangents
            return log1pexp(x), x_dot * dk.scipy.special.expit(x)

    The rule receives ``primals`` and ``tangents``, tuples with one entry per argument
    (pytrees of the arguments' structure; tangents of arguments that are not being
    differentiated are zeros), and returns ``(primal_out, tangent_out)`` of the function's
    output structure and shapes. ``tangent_out`` must be linear in ``tangents``: reverse
    mode transposes it. Higher derivatives differentiate the rule itself, so write it with
    ``diffkit.numpy`` operations (or NumPy functions on the traced values).

    ``nondiff_argnums``: positional arguments that are never differentiated (callables,
    flags, sizes); the rule receives them first: ``rule(*nondiff_args, primals, tangents)``.

    Examples:
        >>> @dk.custom_jvp
        ... def log1pexp(x):
        ...     return dnp.log1p(dnp.exp(x))
        >>> @log1pexp.defjvp
        ... def log1pexp_jvp(primals, tangents):
        ...     (x,), (x_dot,) = primals, tangents
        ...     return log1pexp(x), x_dot / (1 + dnp.exp(-x))
        >>> [float(v) for v in dk.jvp(log1pexp, (0.0,), (2.0,))]    # log 2, 2 / 2
        [0.6931471805599453, 1.0]

        Reverse mode transposes the rule, and higher derivatives differentiate it:

        >>> float(dk.grad(log1pexp)(0.0)), float(dk.hessian(log1pexp)(0.0))
        (0.5, 0.25)

        ``defjvps``: one tangent function per argument; ``nondiff_argnums``:

        >>> product = dk.custom_jvp(lambda x, y: x * y)
        >>> product.defjvps(lambda t, out, x, y: t * y, lambda t, out, x, y: t * x)
        >>> [float(g) for g in dk.grad(product, argnums=(0, 1))(2.0, 3.0)]
        [3.0, 2.0]
        >>> power = dk.custom_jvp(lambda n, x: x ** n, nondiff_argnums=(0,))
        >>> @power.defjvp
        ... def power_jvp(n, primals, tangents):
        ...     (x,), (x_dot,) = primals, tangents
        ...     return x ** n, n * x ** (n - 1) * x_dot
        >>> float(dk.grad(power, argnums=1)(3, 2.0))
        12.0

        Calling the function before its rule is defined is an error:

        >>> dk.custom_jvp(lambda x: x)(1.0)
        Traceback (most recent call last):
            ...
        diffkit.errors.NoRuleError: custom_jvp function '<lambda>' has no JVP rule yet: ...
    """

    def __init__(self, fun: Callable[P, R], nondiff_argnums: Sequence[int] = ()) -> None:
        functools.update_wrapper(self, check_callable(fun, "custom_jvp"))
        self.fun = fun
        self.nondiff_argnums = _check_nondiff_argnums(fun, nondiff_argnums)
        self.jvp: Callable[..., tuple[Any, Any]] | None = None

    def defjvp(self, jvp: F) -> F:
        """Set the JVP rule ``jvp(*nondiff_args, primals, tangents) -> (out, tangent_out)``;
        returns it, so it can be used as a decorator."""
        self.jvp = check_callable(jvp, f"{_name(self.fun)}.defjvp", "the JVP rule")
        return jvp

    def defjvps(self, *tangent_fns: Callable[..., Any] | None) -> None:
        """Set the rule from one function per argument: ``tangent_fn(t, out, *args)`` is the
        tangent contributed by that argument's tangent ``t`` (``None``: no contribution)."""
        if self.nondiff_argnums:
            raise TypeError("defjvps does not support nondiff_argnums; use defjvp")
        for fn in tangent_fns:
            if fn is not None:
                check_callable(fn, f"{_name(self.fun)}.defjvps", "a tangent function")

        def jvp(primals, tangents):
            out = self(*primals)
            parts = [fn(t, out, *primals) for fn, t in zip(tangent_fns, tangents)
                     if fn is not None]
            if not parts:
                return out, tree_util.tree_map(lambda o: o * 0, out)
            return out, functools.reduce(
                lambda a, b: tree_util.tree_map(lambda x, y: x + y, a, b), parts)

        self.jvp = jvp

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        name = _name(self.fun)
        if self.jvp is None:
            raise NoRuleError(f"custom_jvp function {name!r} has no JVP rule yet: define one "
                              f"with @{name}.defjvp before calling it")
        flat = _FlatCall(self.fun, self.nondiff_argnums, args, kwargs)
        rule = functools.partial(self.jvp, *flat.static)
        call = CustomJVPCall(flat.fun, flat.flat_jvp_rule(rule, name), name)
        return flat.unflatten(bind_custom(call, flat.leaves))


class custom_vjp(Generic[P, R]):
    """A function whose reverse-mode derivative is given by a rule, as JAX's ``custom_vjp``.

    ::

        @dk.custom_vjp
        def clip_gradient(x):
            return x

        def fwd(x):
            return x, None                      # (output, residuals)

        def bwd(residuals, g):
            return (dnp.clip(g, -1.0, 1.0),)    # one cotangent per argument

        clip_gradient.defvjp(fwd, bwd)

    ``fwd(*args)`` returns ``(output, residuals)``: the function's output and whatever
    ``bwd`` needs (a pytree of arrays). ``bwd(residuals, g)`` receives the cotangent ``g``
    of the output's structure and returns a tuple with one cotangent per differentiable
    argument (``None`` for zero). ``bwd`` must be linear in ``g``: forward mode transposes
    it. Higher derivatives differentiate ``fwd`` and ``bwd`` themselves, so write them with
    ``diffkit.numpy`` operations.

    ``nondiff_argnums``: positional arguments that are never differentiated; ``fwd``
    receives every argument in place, ``bwd`` receives the non-differentiable ones first:
    ``bwd(*nondiff_args, residuals, g)``, and returns cotangents for the others only.

    Examples:
        >>> @dk.custom_vjp
        ... def clip_gradient(x):
        ...     return x
        >>> clip_gradient.defvjp(lambda x: (x, None),
        ...                      lambda residuals, g: (dnp.clip(g, -1.0, 1.0),))
        >>> float(dk.grad(lambda x: 5 * clip_gradient(x))(2.0))    # 5 clipped to 1
        1.0

        Forward mode transposes ``bwd`` (linear in ``g``):

        >>> out, tangent = dk.jvp(lambda x: 5 * clip_gradient(x), (2.0,), (0.1,))
        >>> print(float(out), float(tangent))
        10.0 0.5

        ``None`` for a zero cotangent:

        >>> scale = dk.custom_vjp(lambda x, y: x * y)
        >>> scale.defvjp(lambda x, y: (x * y, y), lambda y, g: (g * y, None))
        >>> [float(g) for g in dk.grad(scale, argnums=(0, 1))(2.0, 3.0)]
        [3.0, 0.0]

        Residuals, and a cotangent of the wrong shape:

        >>> @dk.custom_vjp
        ... def square(x):
        ...     return x ** 2
        >>> square.defvjp(lambda x: (x ** 2, x), lambda x, g: (2 * x * g,))
        >>> dk.grad(lambda x: dnp.sum(square(x)))(np.array([1.0, 3.0])).tolist()
        [2.0, 6.0]
        >>> square.defvjp(lambda x: (x ** 2, x), lambda x, g: (np.ones(3),))
        >>> dk.grad(lambda x: dnp.sum(square(x)))(np.array([1.0, 3.0]))
        Traceback (most recent call last):
            ...
        diffkit.errors.ShapeMismatchError: the bwd rule of 'square' returned ... of shape (3,)...
    """

    def __init__(self, fun: Callable[P, R], nondiff_argnums: Sequence[int] = ()) -> None:
        functools.update_wrapper(self, check_callable(fun, "custom_vjp"))
        self.fun = fun
        self.nondiff_argnums = _check_nondiff_argnums(fun, nondiff_argnums)
        self.fwd: Callable[..., tuple[R, Any]] | None = None
        self.bwd: Callable[..., Any] | None = None

    def defvjp(self, fwd: Callable[..., tuple[R, Any]], bwd: Callable[..., Any]) -> None:
        """Set the rule: ``fwd(*args) -> (out, residuals)`` and
        ``bwd(*nondiff_args, residuals, g) -> tuple of cotangents``."""
        name = f"{_name(self.fun)}.defvjp"
        self.fwd = check_callable(fwd, name, "the fwd rule")
        self.bwd = check_callable(bwd, name, "the bwd rule")

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        name = _name(self.fun)
        if self.fwd is None:
            raise NoRuleError(f"custom_vjp function {name!r} has no VJP rule yet: define one "
                              f"with {name}.defvjp(fwd, bwd) before calling it")
        flat = _FlatCall(self.fun, self.nondiff_argnums, args, kwargs)
        call = CustomVJPCall(flat.fun, flat.flat_fwd(self.fwd, name),
                             flat.flat_bwd(functools.partial(self.bwd, *flat.static), name),
                             name)
        return flat.unflatten(bind_custom(call, flat.leaves))


def checkpoint(fun: Callable[P, R], *, static_argnums: int | Sequence[int] = ()
               ) -> Callable[P, R]:
    """``fun`` with the same values and derivatives, whose reverse mode stores only its
    inputs and recomputes the rest when the backward sweep reaches it.

    Memory of a long chain ``f_k(... f_1(x))`` in reverse mode drops from every
    intermediate value to the inputs of the checkpointed pieces plus one piece's
    intermediates at a time, for the price of evaluating each piece twice. Forward mode and
    ``vmap`` are unaffected. ``static_argnums``: positional arguments that are not arrays
    (sizes, flags, callables).

    Examples:
        >>> calls = []
        >>> def piece(x):
        ...     calls.append(x)
        ...     return dnp.sin(x) ** 2
        >>> float(dk.grad(dk.checkpoint(piece))(1.0)) == float(dk.grad(piece)(1.0))
        True
        >>> len(calls)    # twice for the checkpointed piece (forward, then backward), once
        3
        >>> float(dk.grad(dk.checkpoint(lambda x, n: x ** n, static_argnums=1))(2.0, 3))
        12.0
    """
    check_callable(fun, "checkpoint")

    @functools.wraps(fun)
    def checkpointed(*args, **kwargs):
        flat = _FlatCall(fun, _check_nondiff_argnums(fun, static_argnums), args, kwargs)
        call = CheckpointCall(flat.fun, None, None, _name(fun))
        return flat.unflatten(bind_custom(call, flat.leaves))

    return checkpointed


# --- call records: what the engines see --------------------------------------------------


class CustomJVPCall:
    """A call of a ``custom_jvp`` function on flat arrays (see the module docstring)."""

    pullback_reads_primals = True

    def __init__(self, fun, rule, name):
        self.fun = fun      # (*primals) -> tuple of outputs
        self.rule = rule    # (primals, tangents) -> (outputs, tangents of the outputs)
        self.name = name

    def jvp(self, primals, tangents):
        return self.rule(tuple(primals), tuple(tangents))

    def forward(self, primals):
        return bind_custom(self, primals), None  # outer levels still see the rule

    def pullback(self, saved, primals, cotangents):
        """Transpose the tangent map at ``primals``: a VJP of it in the tangents."""
        primals = tuple(primals)
        diff = _differentiable(primals)
        zeros = [_zeros(p) for p in primals]

        def tangent_map(*diff_tangents):
            return self.rule(primals, _fill(zeros, diff, diff_tangents))[1]

        tangents_out, pull = vjp_flat(tangent_map, [zeros[i] for i in diff], retain=False)
        return _spread(pull(_seeds(cotangents, tangents_out)), diff, len(primals))

    def batched(self, axis_size, batch_axes):
        axes = tuple(batch_axes)
        return CustomJVPCall(api.vmap(self.fun, axes, axis_size=axis_size),
                             api.vmap(self.rule, (axes, axes), axis_size=axis_size),
                             self.name)


class CustomVJPCall:
    """A call of a ``custom_vjp`` function on flat arrays (see the module docstring)."""

    pullback_reads_primals = False

    def __init__(self, fun, fwd, bwd, name):
        self.fun = fun      # (*primals) -> tuple of outputs
        self.fwd = fwd      # (*primals) -> (tuple of outputs, residuals)
        self.bwd = bwd      # (residuals, cotangents of the outputs) -> one per primal
        self.name = name

    def residuals(self, *primals):
        return self.fwd(*primals)[1]

    def forward(self, primals):
        if any(isinstance(p, Tracer) for p in primals):
            # outer transformations must see the call too, so its output comes from a fresh
            # bind; the residuals are differentiated through fwd by those transformations
            return bind_custom(self, primals), self.residuals(*primals)
        return self.fwd(*primals)

    def pullback(self, residuals, primals, cotangents):
        in_cts = self.bwd(residuals, tuple(map(instantiate, cotangents)))
        for k, (ct, p) in enumerate(zip(in_cts, primals)):
            if ct is not None and shape_of(ct) != shape_of(p):
                raise ShapeMismatchError(
                    f"the bwd rule of {self.name!r} returned a cotangent of shape "
                    f"{shape_of(ct)} for (flat) argument {k}, which has shape {shape_of(p)}")
        return in_cts

    def jvp(self, primals, tangents):
        """Push ``tangents`` through the transpose of ``bwd`` (linear in the cotangents)."""
        outs, residuals = self.forward(primals)
        diff_in, diff_out = _differentiable(primals), _differentiable(outs)
        zero_cts = [_zeros(o) for o in outs]

        def cotangent_map(*diff_cts):
            in_cts = self.bwd(residuals, _fill(zero_cts, diff_out, diff_cts))
            return tuple(_zeros(primals[i]) if in_cts[i] is None else in_cts[i]
                         for i in diff_in)

        in_cts, transpose = vjp_flat(cotangent_map, [zero_cts[j] for j in diff_out],
                                     retain=False)
        tangents_out = transpose(_seeds([tangents[i] for i in diff_in], in_cts))
        return outs, _spread(tangents_out, diff_out, len(outs))

    def batched(self, axis_size, batch_axes):
        axes = tuple(batch_axes)
        vmap = functools.partial(api.vmap, axis_size=axis_size)
        bwd = vmap(self.bwd, (0, 0))

        def batched_bwd(residuals, cotangents):
            # an argument shared by the whole batch gets the sum of its cotangents
            return [ct if ct is None or axis == 0 else _sum(ct, axis=0)
                    for ct, axis in zip(bwd(residuals, cotangents), axes)]

        fwd = None if self.fwd is None else vmap(self.fwd, axes)
        call = type(self)(vmap(self.fun, axes), fwd, batched_bwd, self.name)
        call.residuals = vmap(self.residuals, axes)
        return call


class CheckpointCall(CustomVJPCall):
    """A call of a ``checkpoint`` function: the residuals are the inputs, ``bwd`` recomputes
    the function under reverse mode, and forward mode differentiates the function itself."""

    def residuals(self, *primals):
        return primals

    def forward(self, primals):
        if any(isinstance(p, Tracer) for p in primals):
            return bind_custom(self, primals), primals
        return self.fun(*primals), primals

    def pullback(self, residuals, primals, cotangents):
        diff = _differentiable(residuals)

        def restricted(*diff_inputs):
            return self.fun(*_fill(residuals, diff, diff_inputs))

        outs, pull = vjp_flat(restricted, [residuals[i] for i in diff], retain=False)
        return _spread(pull(_seeds(cotangents, outs)), diff, len(residuals))

    def jvp(self, primals, tangents):
        diff = _differentiable(primals)

        def restricted(*diff_inputs):
            return self.fun(*_fill(primals, diff, diff_inputs))

        return jvp_flat(restricted, [primals[i] for i in diff],
                        [tangents[i] for i in diff])

    def batched(self, axis_size, batch_axes):
        call = CheckpointCall(api.vmap(self.fun, tuple(batch_axes), axis_size=axis_size),
                              None, None, self.name)
        return call


# --- flattening the user's pytrees --------------------------------------------------------


class _FlatCall:
    """One call of a decorated function, with its arguments split into the static ones
    (``nondiff_argnums``) and the flat list of array ``leaves``, and adapters that give the
    user's functions and rules flat signatures. The output structure is learnt from
    whichever of them runs first."""

    def __init__(self, fun, static_argnums, args, kwargs):
        args = _positional(fun, args, kwargs)
        for i in static_argnums:
            if i >= len(args):
                raise TypeError(f"{_name(fun)} was called with {len(args)} positional "
                                f"arguments, but argument {i} is marked non-differentiable")
        self.user_fun = fun
        self.num_args = len(args)
        self.static_argnums = static_argnums
        self.static = [args[i] for i in static_argnums]
        dynamic = tuple(a for i, a in enumerate(args) if i not in static_argnums)
        leaves, self.in_tree = tree_util.tree_flatten(dynamic)
        self.leaves = [as_array(x) for x in leaves]
        self.out_tree = None

    def arguments(self, leaves):
        """The full positional arguments rebuilt from flat ``leaves``."""
        dynamic = iter(self.in_tree.unflatten(leaves))
        static = iter(self.static)
        return [next(static) if i in self.static_argnums else next(dynamic)
                for i in range(self.num_args)]

    def flat_output(self, out, what):
        """The leaves of ``out``, returned by ``what`` (the function or a rule), which must
        match the first output seen in structure, shapes and real or complex kind: the
        function and its rules give the same primal output (engines use either)."""
        leaves, treedef = tree_util.tree_flatten(out)
        leaves = tuple(as_array(x) for x in leaves)
        if self.out_tree is None:
            self.out_tree, self.out_types = treedef, [_type(x) for x in leaves]
            return leaves
        if treedef != self.out_tree:
            raise ShapeMismatchError(f"{what} returned an output of structure {treedef}, but "
                                     f"the function's output has structure {self.out_tree}")
        for k, (x, first) in enumerate(zip(leaves, self.out_types)):
            if _type(x)[:2] != first[:2]:
                raise ShapeMismatchError(
                    f"{what} returned an output of shape {shape_of(x)} and dtype {dtype_of(x)} "
                    f"at leaf {k}, but the function's output there has shape {first[0]} and "
                    f"dtype {first[2]}: the function and its rules must agree")
        return leaves

    def unflatten(self, outs):
        return self.out_tree.unflatten(outs)

    def fun(self, *leaves):
        return self.flat_output(self.user_fun(*self.arguments(leaves)), _name(self.user_fun))

    def flat_jvp_rule(self, rule, name):
        def flat_rule(primals, tangents):
            result = rule(self.in_tree.unflatten(primals), self.in_tree.unflatten(tangents))
            if not (isinstance(result, (tuple, list)) and len(result) == 2):
                raise TypeError(f"the JVP rule of {name!r} must return a pair "
                                f"(primal_out, tangent_out), got {type(result).__name__}")
            outs = self.flat_output(result[0], f"the JVP rule of {name!r}")
            what = f"the JVP rule of {name!r}"
            tangents = structured_leaves(result[1], self.out_tree,
                                         f"the tangent returned by {what}", none_ok=True)
            return outs, tuple(_derivative(t, o, f"{what} returned", "a tangent",
                                           f"output leaf {k}", zero_ok=False)
                               for k, (t, o) in enumerate(zip(tangents, outs)))
        return flat_rule

    def flat_fwd(self, fwd, name):
        def flat_fwd(*leaves):
            result = fwd(*self.arguments(leaves))
            if not (isinstance(result, (tuple, list)) and len(result) == 2):
                raise TypeError(f"the fwd rule of {name!r} must return a pair "
                                f"(output, residuals), got {type(result).__name__}")
            return self.flat_output(result[0], f"the fwd rule of {name!r}"), result[1]
        return flat_fwd

    def flat_bwd(self, bwd, name):
        arg_trees = self.in_tree.children()
        leaves = self.leaves  # the primals: each cotangent must match its leaf
        positions = [i for i in range(self.num_args) if i not in self.static_argnums]
        where = [f"argument {i}" + (f" (leaf {j} of its pytree)" if tree.num_leaves > 1 else "")
                 for i, tree in zip(positions, arg_trees) for j in range(tree.num_leaves)]

        def flat_bwd(residuals, cotangents):
            in_cts = bwd(residuals, self.out_tree.unflatten(cotangents))
            if not (isinstance(in_cts, (tuple, list)) and len(in_cts) == len(arg_trees)):
                raise ShapeMismatchError(
                    f"the bwd rule of {name!r} must return a tuple with one cotangent per "
                    f"differentiable argument ({len(arg_trees)}), got {_describe(in_cts)}")
            flat = []
            for k, (ct, tree) in enumerate(zip(in_cts, arg_trees)):
                if ct is None:
                    flat += [None] * tree.num_leaves
                else:
                    flat += structured_leaves(ct, tree, f"cotangent {k} returned by the bwd "
                                              f"rule of {name!r}", none_ok=True)
            return [_derivative(ct, p, f"the bwd rule of {name!r} returned", "a cotangent", w)
                    for ct, p, w in zip(flat, leaves, where)]
        return flat_bwd


def _derivative(value, ref, rule, kind, where, zero_ok=True):
    """A rule's tangent or cotangent ``value`` for the primal ``ref`` (at ``where``), checked
    as JAX does: an array of ``ref``'s shape, real for a real ``ref`` and complex allowed
    only for a complex one, cast to ``ref``'s derivative dtype (float32 stays float32).
    ``None`` (a zero) is allowed where ``zero_ok``."""
    expected = f"{where}, which has shape {shape_of(ref)} and dtype {dtype_of(ref)}"
    if value is None:
        if zero_ok:
            return None
        raise ShapeMismatchError(f"{rule} None as {kind} for {expected}; return an array "
                                 "(zeros for a zero derivative, e.g. dnp.zeros_like(out))")
    try:
        value = as_array(value)
    except (TypeError, ValueError) as error:
        raise ShapeMismatchError(f"{rule} {kind} for {expected} that is not an array: "
                                 f"{error}") from None
    if shape_of(value) != shape_of(ref):
        raise ShapeMismatchError(f"{rule} {kind} of shape {shape_of(value)} for {expected}")
    want = tangent_dtype(dtype_of(ref))
    if dtype_of(value).kind not in ("biufc" if want.kind == "c" else "biuf"):
        what = "a real" if want.kind != "c" else "a numeric"
        raise ShapeMismatchError(
            f"{rule} {kind} of dtype {dtype_of(value)} for {expected}: the derivative of a "
            f"{'complex' if want.kind == 'c' else 'real'} value is {what} array ({want})")
    return astype(value, want)


# --- small helpers -------------------------------------------------------------------------


def _check_nondiff_argnums(fun, argnums):
    argnums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for i in argnums:
        if not isinstance(i, int) or i < 0:
            raise TypeError(f"nondiff_argnums/static_argnums of {_name(fun)} must be "
                            f"non-negative ints, got {argnums!r}")
    return tuple(sorted(set(argnums)))


def _positional(fun, args, kwargs):
    """``args`` with ``kwargs`` bound to their positions by ``fun``'s signature."""
    if not kwargs:
        return tuple(args)
    try:
        bound = inspect.signature(fun).bind(*args, **kwargs)
    except TypeError as error:
        raise TypeError(f"{_name(fun)}: {error}") from None
    if bound.kwargs:
        raise TypeError(f"{_name(fun)}: keyword-only arguments {sorted(bound.kwargs)} cannot "
                        "be passed to a function with custom derivative rules; make them "
                        "positional")
    return tuple(bound.args)


def _name(fun):
    return getattr(fun, "__name__", type(fun).__name__)


def _describe(value):
    return f"a {type(value).__name__} of length {len(value)}" \
        if isinstance(value, (tuple, list)) else f"a {type(value).__name__}"


def _type(x):
    """What a primal output must keep between the function and its rules: its shape and
    whether it is complex (precision may differ; the derivative keeps the primal's)."""
    dtype = dtype_of(x)
    return shape_of(x), dtype.kind == "c", dtype


def _differentiable(values):
    """Positions of the float and complex values among ``values``."""
    return [i for i, v in enumerate(values) if dtype_of(v).kind in "fc"]


def _zeros(x):
    return np.zeros(shape_of(x), dtype_of(x))


def _seeds(cotangents, refs):
    """``cotangents`` for a pullback of ``refs``: zeros stay symbolic, the others take
    their reference's derivative dtype (float32 stays float32)."""
    return [ct if is_zero(ct) else astype(ct, tangent_dtype(dtype_of(r)))
            for ct, r in zip(cotangents, refs)]


def _fill(base, positions, values):
    """``base`` as a tuple with ``values`` put at ``positions``."""
    out = list(base)
    for i, v in zip(positions, values):
        out[i] = v
    return tuple(out)


def _spread(values, positions, n):
    """A list of length ``n`` with ``values`` at ``positions`` and ``None`` elsewhere."""
    out = [None] * n
    for i, v in zip(positions, values):
        out[i] = v
    return out
