"""autograd's ``primitive`` and its rule definitions, on diffkit's custom rules.

autograd lets a user make any function a *primitive* (``f = primitive(f_raw)``): the raw
function always runs on plain values, and ``defvjp``/``defjvp`` give its derivatives as
*makers*, ``maker(ans, *args, **kwargs) -> (g -> cotangent)`` (VJP) or
``maker(g, ans, *args, **kwargs) -> tangent`` (JVP).

How that maps onto diffkit
--------------------------
Each primitive owns one ``_Rules`` record: its raw function, its makers in autograd's
normal form (``vjp_argnums``/``jvp_argnums``), and the flat rules built from them **once**
per definition (``_build``): a VJP rule when a VJP is defined (forward mode then
transposes it, exact because a VJP is linear in its cotangent), else a JVP rule. Each
call on traced values is then one call record of ``diffkit.custom`` (``CustomVJPCall``
or ``CustomJVPCall``, the records a ``custom_vjp``/``custom_jvp`` function hands the
engines) over the flat list of traced leaves, interpreted by ``bind_custom``. Nothing is
rebuilt per call: a fit that evaluates a primitive thousands of times builds its rules
once, and skips the per-call pytree re-flattening of ``custom_vjp`` (the makers'
results are checked here instead, with the primitive's name in the message).

Two things save calls of the raw function. On traced arguments (a Hessian's
forward-over-reverse, a ``jit`` recording) the call record's forward pass keeps its
outputs as the residual ``ans`` (``_PrimitiveVJPCall``; the base record binds the
primitive a second time for the residuals). And in a ``jit`` recording (the staged
operators' recordings, ``_staging``), a call on the very staged values an earlier call of
the primitive received reuses that call's outputs (``_bind``): autograd-gamma's VJPs
evaluate their primitive again at its own point, which then costs nothing on a replay.

Which arguments are differentiated: as in autograd, the positional arguments that hold a
traced value (a traced array, or a list/tuple/dict holding one). Keyword arguments are
passed through unchanged and must not be traced.

The raw function must never see a traced value, and under ``vmap`` (which diffkit's
``jacobian`` and ``hessian`` use to compute all rows at once) no plain value exists for a
batched argument. The raw function is therefore called through a small diffkit
``Primitive`` (one per autograd primitive, unregistered) whose batching rule runs the raw
function once per example. That primitive has no derivative rules of its own: a
primitive without ``defvjp``/``defjvp`` called on differentiated values raises
``NoRuleError`` (a ``NotImplementedError``, as autograd's message for a missing VJP).
"""

import collections
import functools
import warnings
import weakref
from collections.abc import MutableMapping

import numpy as np

from ... import numpy as dnp
from ... import tree_util
from ...core.primitive import Primitive
from ...core.trace import Tracer, bind_custom
from ...core.zeros import dtype_of, shape_of, tangent_dtype
from ...custom import CustomJVPCall, CustomVJPCall
from ...errors import InputTypeError, NoRuleError, ShapeMismatchError
from ...interpreters.staging import StagingTracer
from ._values import holds_tracer, plain_value
from ._vspace import vspace

__all__ = ["primitive", "notrace_primitive", "defvjp", "defvjp_argnum", "defvjp_argnums",
           "defjvp", "defjvp_argnum", "defjvp_argnums", "def_linear", "primitive_vjps",
           "primitive_jvps", "is_primitive"]

# every primitive made here, for the rule tables (autograd.core.primitive_vjps)
_ALL_RULES = weakref.WeakKeyDictionary()


# --- one call of a primitive on traced values --------------------------------------------


class _Call:
    """The non-differentiable part of one call: the plain arguments, the positions of the
    traced (dynamic) ones, and the pytree structures of the dynamic arguments and of the
    output (learnt from the first evaluation)."""

    __slots__ = ("rules", "args", "kwargs", "positions", "in_tree", "out_tree")

    def __init__(self, rules, args, kwargs, positions):
        self.rules = rules
        self.args = args
        self.kwargs = kwargs
        self.positions = positions
        self.in_tree = self.out_tree = None

    def arguments(self, dynamic):
        """The positional arguments with ``dynamic`` put back at ``positions``."""
        args = list(self.args)
        for position, value in zip(self.positions, dynamic):
            args[position] = value
        return args

    def flatten(self, dynamic):
        """The leaves of the dynamic arguments (remembering their structure)."""
        leaves, self.in_tree = tree_util.tree_flatten(tuple(dynamic))
        return leaves

    def dynamic(self, leaves):
        return self.in_tree.unflatten(list(leaves))

    def output_leaves(self, out):
        leaves, self.out_tree = tree_util.tree_flatten(out)
        return tuple(leaves)

    def raw_leaves(self, leaves):
        """The raw function on plain ``leaves``: the leaves of its output."""
        out = self.rules.raw(*self.arguments(self.dynamic(leaves)), **self.kwargs)
        return self.output_leaves(out)

    def evaluate(self, leaves):
        """The output leaves through the evaluation primitive (so a ``vmap``-batched
        argument is evaluated one example at a time)."""
        return self.rules.evaluate_p(*leaves, call=self)

    def __repr__(self):
        return f"<call of autograd primitive {self.rules.name}>"


def _evaluate_impl(*leaves, call):
    return call.raw_leaves(leaves)


def _evaluate_batched(axis_size, values, batch_axes, call):
    """One raw call per example (a batched value has its batch axis at 0), stacked."""
    rows = [call.rules.evaluate_p(*[v if axis is None else v[i]
                                    for v, axis in zip(values, batch_axes)], call=call)
            for i in range(axis_size)]
    outs = tuple(dnp.stack(list(column)) for column in zip(*rows))
    return outs, (0,) * len(outs)


# --- the rules of one primitive ----------------------------------------------------------


class _Rules:
    """Everything known about one primitive: its raw function, its derivative makers in
    autograd's normal form, and the flat rules built from them (once per definition)."""

    def __init__(self, raw, name):
        self.raw = raw
        self.name = name
        self.wrapped = None  # the primitive itself (set by ``primitive``)
        # (argnums, ans, args, kwargs) -> (g -> iterable of cotangents, one per argnum)
        self.vjp_argnums = None
        # (argnums, tangents, ans, args, kwargs) -> tangent of ans
        self.jvp_argnums = None
        self.record = None  # (call) -> a diffkit call record, made by ``_build``
        self.builds = 0     # how many times the rules were built (once per definition)
        self.shared = collections.OrderedDict()   # recorded calls to reuse (``_bind``)
        self.evaluate_p = Primitive(
            f"{name} (an autograd primitive: give its derivatives with "
            "autograd.extend.defvjp or defjvp)",
            _evaluate_impl, batch=_evaluate_batched, multiple_results=True, register=False)

    def set_vjp(self, vjp_argnums):
        self.vjp_argnums = vjp_argnums
        self.record = None  # rebuilt on the next traced call

    def set_jvp(self, jvp_argnums):
        self.jvp_argnums = jvp_argnums
        self.record = None

    def call(self, args, kwargs, positions):
        """The primitive on ``args`` whose entries at ``positions`` hold traced values."""
        for key, value in kwargs.items():
            if holds_tracer(value):
                raise InputTypeError(
                    f"autograd primitive {self.name!r} got a traced value as keyword argument "
                    f"{key!r}; primitives differentiate positional arguments only, so pass "
                    "it positionally")
        call = _Call(self, args, kwargs, positions)
        leaves = call.flatten([args[i] for i in positions])
        record = self.record if self.record is not None else self._build()
        outs = call.evaluate(leaves) if record is None else self._bind(call, leaves)
        return call.out_tree.unflatten(list(outs))

    def _bind(self, call, leaves):
        """The outputs of ``call`` on the traced ``leaves`` (through its call record).

        While ``jit`` records, a call on the very values an earlier call of this primitive
        received (the same staged values, the same other arguments by identity) reuses
        that call's outputs: a derivative maker that evaluates the primitive again at
        its own point (``lambda ans, a, x: ... f(a, x)``) then adds nothing to the
        recording, and each replay calls the raw function once fewer. Only there: a
        recording is refused when the function draws random numbers, and a raw function
        is assumed to give the same values for the same arguments."""
        key = _shared_key(call, leaves)
        if key is not None:
            hit = self.shared.get(key)
            if hit is not None:
                call.out_tree = hit[1]
                return hit[0]
        outs = tuple(bind_custom(self.record(call), list(leaves)))
        if key is not None:
            # the entry holds the leaves and arguments, so their identities stay theirs
            self.shared[key] = (outs, call.out_tree, tuple(leaves), call.args, call.kwargs)
            if len(self.shared) > _SHARED_CALLS:
                self.shared.popitem(last=False)
        return outs

    def _build(self):
        """The maker of this primitive's call records: built here, once per definition."""
        if self.vjp_argnums is not None:
            def record(call):
                return _PrimitiveVJPCall(functools.partial(self._fun, call),
                                         functools.partial(self._fwd, call),
                                         functools.partial(self._bwd, call), self.name,
                                         (self, call))
        elif self.jvp_argnums is not None:
            def record(call):
                return CustomJVPCall(functools.partial(self._fun, call),
                                     functools.partial(self._jvp, call), self.name)
        else:
            return None
        self.builds += 1
        self.record = record
        return record

    def _fun(self, call, *leaves):
        return call.evaluate(leaves)

    def _output(self, call, leaves):
        """The output leaves on ``leaves``: the raw function on plain values, the primitive
        again on values of outer transformations (so they see its rule)."""
        if any(isinstance(leaf, Tracer) for leaf in leaves):
            return self._bind(call, leaves)
        return call.raw_leaves(leaves)

    def _fwd(self, call, *leaves):
        outs = self._output(call, leaves)
        return outs, (outs, leaves)

    def _bwd(self, call, residuals, cotangents):
        outs, leaves = residuals
        dynamic = call.dynamic(leaves)
        which = [i for i, value in enumerate(dynamic) if _differentiable(value)]
        per_argument = [None] * len(dynamic)
        if which:
            ans = call.out_tree.unflatten(list(outs))
            g = call.out_tree.unflatten(list(cotangents))
            argnums = tuple(call.positions[i] for i in which)
            vjp = self.vjp_argnums(argnums, ans, call.arguments(dynamic), call.kwargs)
            for i, ct in zip(which, vjp(g)):
                per_argument[i] = ct
        flat = []
        for i, (value, ct) in enumerate(zip(dynamic, per_argument)):
            flat += _matching_leaves(ct, value, f"the VJP of {self.name!r} for argument "
                                     f"{call.positions[i]}")
        return flat

    def _jvp(self, call, primals, tangents):
        outs = self._output(call, primals)
        ans = call.out_tree.unflatten(list(outs))
        dynamic = call.dynamic(primals)
        which = [i for i, value in enumerate(dynamic) if _differentiable(value)]
        if not which:
            return outs, tuple(dnp.zeros_like(o) for o in outs)
        dynamic_tangents = call.dynamic(tangents)
        argnums = tuple(call.positions[i] for i in which)
        tangent = self.jvp_argnums(argnums, [dynamic_tangents[i] for i in which], ans,
                                   call.arguments(dynamic), call.kwargs)
        return outs, tuple(_matching_leaves(tangent, ans, f"the JVP of {self.name!r}"))


_SHARED_CALLS = 16   # recorded calls remembered per primitive for reuse


def _shared_key(call, leaves):
    """The key under which a call on ``leaves`` may reuse an earlier one: only when every
    leaf is a value ``jit`` is recording now (else None)."""
    for leaf in leaves:
        if type(leaf) is not StagingTracer or not leaf._trace.active:
            return None
    if not leaves:
        return None
    positions = call.positions
    statics = tuple(None if i in positions else id(a) for i, a in enumerate(call.args))
    keywords = tuple((k, id(v)) for k, v in call.kwargs.items())
    return (tuple(map(id, leaves)), call.in_tree, tuple(positions), statics, keywords)


class _PrimitiveVJPCall(CustomVJPCall):
    """The call record of a primitive with a VJP. On traced arguments its forward pass
    binds the primitive once and keeps those outputs as the residual ``ans`` (the base
    record binds it for the output, then runs ``fwd`` again for the residuals: two
    evaluations of the raw function, where autograd makes one)."""

    def __init__(self, fun, fwd, bwd, name, primitive_call=None):
        super().__init__(fun, fwd, bwd, name)
        # (rules, call) of the primitive's call; None for a record derived from this one
        # (vmap's batched record, made with the base signature), which acts as the base
        self.primitive_call = primitive_call

    def forward(self, primals):
        if self.primitive_call is not None and any(isinstance(p, Tracer) for p in primals):
            rules, call = self.primitive_call
            outs = rules._bind(call, primals)
            return outs, (outs, tuple(primals))
        return super().forward(primals)


def _differentiable(value):
    return any(dtype_of(leaf).kind in "fc" for leaf in tree_util.tree_leaves(value))


def _matching_leaves(derivative, like, what):
    """The leaves of a maker's tangent or cotangent ``derivative`` for the value ``like``,
    as autograd would accumulate them: ``None`` (zero) for each leaf when it is ``None``,
    the real part for a real leaf, broadcast when it has fewer dimensions (a scalar for an
    array), in the leaf's derivative dtype. Anything else is a ShapeMismatchError naming
    ``what``."""
    like_leaves, like_tree = tree_util.tree_flatten(like)
    if derivative is None:
        return [None] * len(like_leaves)
    if like_tree.num_leaves == 1 and like_tree.node is None:
        return [_fit(derivative, like_leaves[0], what)]
    leaves, tree = tree_util.tree_flatten(derivative, is_leaf=lambda x: x is None)
    if len(leaves) != len(like_leaves):
        raise ShapeMismatchError(f"{what} returned a value of structure {tree}, but the "
                                 f"value it belongs to has structure {like_tree}")
    return [_fit(d, leaf, what) for d, leaf in zip(leaves, like_leaves)]


def _fit(derivative, like, what):
    if derivative is None:
        return None
    if not hasattr(type(derivative), "shape"):
        derivative = np.asarray(derivative)
    want = tangent_dtype(dtype_of(like))
    have = dtype_of(derivative)
    if have.kind == "c" and want.kind != "c":
        derivative, have = dnp.real(derivative), np.dtype(have.char.lower())
    shape, got = shape_of(like), shape_of(derivative)
    if got != shape:
        try:
            broadcastable = np.broadcast_shapes(got, shape) == shape
        except ValueError:
            broadcastable = False
        if not broadcastable:
            raise ShapeMismatchError(f"{what} returned a value of shape {got} for a value of "
                                     f"shape {shape}; sum it back to that shape (for example "
                                     "with autograd.numpy.numpy_vjps.unbroadcast_f)")
        derivative = dnp.broadcast_to(derivative, shape)
    if have != want:
        if have.kind not in "biufc":
            raise ShapeMismatchError(f"{what} returned a value of dtype {have}")
        derivative = dnp.astype(derivative, want)
    return derivative


# --- making primitives -------------------------------------------------------------------


_MAY_HOLD_TRACERS = (Tracer, list, tuple, dict)


def _traced_positions(args):
    return [i for i, a in enumerate(args)
            if isinstance(a, Tracer) or (isinstance(a, (list, tuple, dict)) and holds_tracer(a))]


def primitive(f_raw):
    """``f_raw`` as an autograd primitive: called on plain values it is ``f_raw`` itself;
    called on traced values it computes ``f_raw`` on their plain values and differentiates
    with the rules given by ``defvjp``/``defjvp`` (or their ``_argnum(s)`` forms)."""
    name = getattr(f_raw, "__name__", type(f_raw).__name__)
    rules = _Rules(f_raw, name)

    @functools.wraps(f_raw)
    def f_wrapped(*args, **kwargs):
        for arg in args:  # the common case first: plain arguments run the raw function
            if isinstance(arg, _MAY_HOLD_TRACERS):
                positions = _traced_positions(args)
                if positions:
                    return rules.call(args, kwargs, positions)
                break
        return f_raw(*args, **kwargs)

    f_wrapped.fun = f_raw
    f_wrapped._autograd_rules = rules
    rules.wrapped = f_wrapped
    _ALL_RULES[f_wrapped] = rules
    _add_legacy_methods(f_wrapped)
    return f_wrapped


def is_primitive(fun):
    return getattr(fun, "_autograd_rules", None) is not None


def _rules_of(fun, what):
    rules = getattr(fun, "_autograd_rules", None)
    if rules is None:
        raise InputTypeError(
            f"{what} needs a function made by autograd.extend.primitive, got "
            f"{getattr(fun, '__name__', type(fun).__name__)!r}. Wrap the raw function first: "
            "f = primitive(f_raw). (Functions of autograd.numpy/scipy are diffkit's and "
            "already have their derivatives.)")
    return rules


def notrace_primitive(f_raw):
    """``f_raw`` called on the plain values of its arguments: its result carries no
    derivative (shape queries, type tests, random draws)."""
    name = getattr(f_raw, "__name__", type(f_raw).__name__)

    @functools.wraps(f_raw)
    def f_wrapped(*args, **kwargs):
        return f_raw(*[plain_value(a, name) for a in args], **kwargs)

    f_wrapped._is_primitive = True
    return f_wrapped


# --- defining the rules ------------------------------------------------------------------


def _missing(rules, kind, argnums):
    return NoRuleError(
        f"{kind} of autograd primitive {rules.name!r} with respect to argument(s) "
        f"{list(argnums)} is not defined; define it with autograd.extend.def{kind.lower()}")


def _positions(makers, argnums, what):
    positions = range(len(makers)) if argnums is None else tuple(argnums)
    if argnums is not None and len(positions) != len(makers):
        raise TypeError(f"{what}: {len(makers)} rules for argnums={tuple(argnums)}")
    return positions


def defvjp_argnums(fun, vjpmaker):
    """The VJP of primitive ``fun`` for all its differentiated arguments at once:
    ``vjpmaker(argnums, ans, args, kwargs)`` returns ``g -> cotangents`` (one per argnum)."""
    _rules_of(fun, "defvjp_argnums").set_vjp(vjpmaker)


def defvjp_argnum(fun, vjpmaker):
    """The VJP of primitive ``fun`` one argument at a time:
    ``vjpmaker(argnum, ans, args, kwargs)`` returns ``g -> cotangent``."""
    rules = _rules_of(fun, "defvjp_argnum")

    def vjp_argnums(argnums, ans, args, kwargs):
        vjps = [vjpmaker(argnum, ans, args, kwargs) for argnum in argnums]
        return lambda g: [vjp(g) for vjp in vjps]

    rules.set_vjp(vjp_argnums)


def defvjp(fun, *vjpmakers, argnums=None):
    """The VJP of primitive ``fun``, one maker per positional argument (``argnums`` says
    which, by default 0, 1, ...): ``maker(ans, *args, **kwargs)`` returns ``g ->
    cotangent``; ``None`` declares a zero derivative."""
    rules = _rules_of(fun, "defvjp")
    makers = {}
    for position, maker in zip(_positions(vjpmakers, argnums, "defvjp"), vjpmakers):
        if maker is not None and not callable(maker):
            raise TypeError(f"defvjp of {rules.name!r}: the VJP for argument {position} must "
                            f"be a callable or None, got {maker!r}")
        makers[position] = maker

    def vjp_argnums(argnums, ans, args, kwargs):
        missing = [p for p in argnums if p not in makers]
        if missing:
            raise _missing(rules, "VJP", missing)
        vjps = [None if makers[p] is None else makers[p](ans, *args, **kwargs)
                for p in argnums]
        return lambda g: [None if vjp is None else vjp(g) for vjp in vjps]

    rules.set_vjp(vjp_argnums)


def defjvp_argnums(fun, jvpmaker):
    """The JVP of primitive ``fun`` for all its differentiated arguments at once:
    ``jvpmaker(argnums, tangents, ans, args, kwargs)`` returns the tangent of ``ans``."""
    _rules_of(fun, "defjvp_argnums").set_jvp(jvpmaker)


def _sum_tangents(parts, ans):
    parts = [t for t in parts if t is not None]
    if not parts:
        return tree_util.tree_map(dnp.zeros_like, ans)
    return functools.reduce(lambda a, b: tree_util.tree_map(lambda x, y: x + y, a, b), parts)


def defjvp_argnum(fun, jvpmaker):
    """The JVP of primitive ``fun`` one argument at a time:
    ``jvpmaker(argnum, g, ans, args, kwargs)`` returns that argument's tangent contribution."""
    rules = _rules_of(fun, "defjvp_argnum")

    def jvp_argnums(argnums, tangents, ans, args, kwargs):
        return _sum_tangents([jvpmaker(p, g, ans, args, kwargs)
                              for p, g in zip(argnums, tangents)], ans)

    rules.set_jvp(jvp_argnums)


def defjvp(fun, *jvpfuns, argnums=None):
    """The JVP of primitive ``fun``, one function per positional argument:
    ``jvpfun(g, ans, *args, **kwargs)`` is the tangent contributed by that argument's
    tangent ``g``; ``None`` declares a zero derivative and ``"same"`` says the primitive is
    linear in that argument (its tangent is ``fun`` applied to ``g`` in its place)."""
    rules = _rules_of(fun, "defjvp")
    makers = {}
    for position, jvpfun in zip(_positions(jvpfuns, argnums, "defjvp"), jvpfuns):
        if jvpfun == "same":
            jvpfun = _linear_in(fun, position)
        elif jvpfun is not None and not callable(jvpfun):
            raise TypeError(f"defjvp of {rules.name!r}: the JVP for argument {position} must "
                            f"be a callable, 'same' or None, got {jvpfun!r}")
        makers[position] = jvpfun

    def jvp_argnums(argnums, tangents, ans, args, kwargs):
        missing = [p for p in argnums if p not in makers]
        if missing:
            raise _missing(rules, "JVP", missing)
        return _sum_tangents([None if makers[p] is None else makers[p](g, ans, *args, **kwargs)
                              for p, g in zip(argnums, tangents)], ans)

    rules.set_jvp(jvp_argnums)


def _linear_in(fun, position):
    def tangent(g, ans, *args, **kwargs):
        args = list(args)
        args[position] = g
        return fun(*args, **kwargs)
    return tangent


def def_linear(fun):
    """Declare primitive ``fun`` linear in each argument: its JVP applies ``fun`` to the
    tangent in place of the argument."""
    defjvp_argnum(fun, lambda p, g, ans, args, kwargs: _linear_in(fun, p)(g, ans, *args,
                                                                        **kwargs))


# --- autograd's deprecated per-primitive methods -------------------------------------------

_LEGACY = ("primitive.{} is deprecated (as in autograd): use "
           "autograd.extend.defvjp(fun, vjpmaker, ...) instead")


def _add_legacy_methods(fun):
    """``fun.defvjp(maker, argnum)`` (``maker(g, ans, vs, gvs, *args)``),
    ``fun.defgrad(maker, argnum)`` and ``fun.defvjp_is_zero(argnums)``: autograd 1.1's way
    of giving a VJP one argument at a time, still accepted with a DeprecationWarning."""
    makers = {}

    def define(argnum, maker, name):
        warnings.warn(_LEGACY.format(name), DeprecationWarning, stacklevel=3)
        makers[argnum] = maker
        argnums = sorted(makers)
        defvjp(fun, *[makers[p] for p in argnums], argnums=argnums)

    def staged(vjpmaker, argnum=0):
        def maker(ans, *args, **kwargs):
            return lambda g: vjpmaker(g, ans, vspace(args[argnum]), vspace(g), *args,
                                      **kwargs)
        define(argnum, maker, "defvjp")

    def defgrad(gradmaker, argnum=0):
        define(argnum, gradmaker, "defgrad")

    def defvjp_is_zero(argnums=(0,)):
        for argnum in argnums:
            define(argnum, None, "defvjp_is_zero")

    fun.defvjp, fun.defgrad, fun.defvjp_is_zero = staged, defgrad, defvjp_is_zero


# --- autograd.core's rule tables -----------------------------------------------------------


class _RuleTable(MutableMapping):
    """``autograd.core.primitive_vjps``/``primitive_jvps``: the rules in normal form, keyed
    by primitive; setting or popping an entry defines or removes that rule."""

    def __init__(self, attribute):
        self.attribute = attribute

    def __getitem__(self, fun):
        rules = getattr(fun, "_autograd_rules", None)
        rule = None if rules is None else getattr(rules, self.attribute)
        if rule is None:
            raise KeyError(fun)
        return rule

    def __setitem__(self, fun, rule):
        rules = _rules_of(fun, f"primitive_{self.attribute[:3]}s")
        (rules.set_vjp if self.attribute == "vjp_argnums" else rules.set_jvp)(rule)

    def __delitem__(self, fun):
        self[fun]  # KeyError when there is none
        self.__setitem__(fun, None)

    def __iter__(self):
        return iter([f for f, r in list(_ALL_RULES.items())
                     if getattr(r, self.attribute) is not None])

    def __len__(self):
        return len(list(iter(self)))


primitive_vjps = _RuleTable("vjp_argnums")
primitive_jvps = _RuleTable("jvp_argnums")
