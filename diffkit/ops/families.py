"""Family helpers: the elementwise builder and the pieces shared by hand-written rules.

``elementwise(name, fn, partials, doc=..., module=...)`` makes an elementwise, broadcasting
primitive and its public function, ``(name_p, name)``, from one partial derivative per
argument, keyed by the argument's name:

- a function whose parameter names say what it reads (arguments, ``out``, static
  parameters), returning ``d out / d arg`` in diffkit operations: ``lambda x: cos_p(x)``;
- a number (a constant partial: ``{"x": 1, "y": -1}`` is ``subtract``), or the name of an
  argument (``{"x": "y", "y": "x"}`` is ``multiply``);
- ``ZERO`` (derivative 0 everywhere), ``no_derivative(why)`` (none: an integer order; an
  integer value has a zero tangent, a float one raises ``NoRuleError``);
- ``tangent_rule(jvp, vjp)``: a rule that is not a product with the tangent (a ``where``
  selecting it, or a non-holomorphic function whose VJP is not its JVP).

For an elementwise map the Jacobian is diagonal, so one partial serves both engines: the
JVP multiplies it with the tangent, the VJP with the cotangent, then sums over broadcast
axes (``unbroadcast``). Every product follows the 0 x inf rule (``times``: a zero factor
gives 0, in both engines). Which values each partial reads is worked out once, when the
primitive is built: the rules call the partials positionally, and the reverse engine keeps
on its tape only what some partial reads (``vjp_reads``, ``vjp_ignores``).
The builder also sets the primitive's sparsity rule (``sparsity_rules.elementwise_sparsity``):
each output entry depends on the entry each argument broadcasts to it, not at all on an
argument whose partial is ``ZERO``; a piecewise primitive gives ``select=`` and
``deciding=`` for the local structure (the branch taken at given values).
``nondiff_elementwise`` makes comparisons and other piecewise-constant maps.

Complex numbers follow JAX's convention: a cotangent ``w`` stands for the real-linear
functional ``t -> Re(w t)`` (a bilinear pairing, no conjugation), so the VJP is the plain
transpose of the JVP. For a holomorphic ``f`` both are multiplication by ``f'(z)`` and the
same partial serves; a non-holomorphic function (``abs`` of a complex number) gives its
VJP separately (``tangent_rule``). The cotangent of a real value is real: where a real
operand meets a complex one (``x * 1j``), its cotangent keeps only the real part
(``real_cotangent``).
"""

import functools
import inspect

import numpy as np

from ..core.concrete import concrete_test
from ..core.primitive import Primitive, Traits
from ..core.trace import PrimalTracer, Tracer, bind
from ..core.zeros import Zero, dtype_of, shape_of, tangent_dtype
from ..errors import NoRuleError
from . import complex as cx
from . import elementwise as ew
from . import reductions, shape
from . import sparsity_rules as sr
from . import taylor_arithmetic as ta


def real_cotangent(ct, x):
    """``ct`` as the cotangent of ``x``: its real part when ``x`` is real and ``ct`` complex
    (the transpose of embedding the reals in the complex numbers), else ``ct`` itself."""
    dtype = getattr(ct, "dtype", None)  # arrays, tracers and NumPy scalars (the hot path)
    if dtype is None or dtype.kind != "c" or type(ct) is Zero or dtype_of(x).kind == "c":
        return ct
    return cx.real(ct)


def sum_tangents(parts, out):
    """The sum of the nonzero tangent ``parts`` of an elementwise primitive, broadcast to
    the shape of its output ``out`` (a part may be smaller than the output)."""
    total = parts[0]
    for part in parts[1:]:
        total = total + part
    return total if shape_of(total) == shape_of(out) else shape.broadcast_to(total,
                                                                             shape_of(out))


def broadcasting_batch(prim):
    """Batching rule for an elementwise primitive of any number of broadcasting arrays.

    An unbatched operand broadcasts from the right as usual; a batched one gets size-1
    axes inserted after its batch axis so that the batch axis lines up with axis 0 of the
    result instead of being broadcast against a data axis.
    """

    def batch(axis_size, values, batch_axes, **params):
        ranks = [len(shape_of(v)) - (a is not None) for v, a in zip(values, batch_axes)]
        rank = max(ranks)
        if min(ranks) == rank:  # operands of one rank (the usual case): nothing to pad
            return prim(*values, **params), 0
        aligned = values  # copied only when an operand needs padding
        for i, axis in enumerate(batch_axes):
            if axis is not None and ranks[i] < rank:
                if aligned is values:
                    aligned = list(values)
                dims = shape_of(values[i])
                aligned[i] = shape.reshape_p(values[i], shape=dims[:1] + (1,) * (rank - ranks[i])
                                             + dims[1:])
        return prim(*aligned, **params), 0

    return batch


def zero_safe(derivative):
    """``derivative(t, *args)``, a tangent or cotangent ``t`` times a partial
    derivative, made to follow the 0 x inf rule: a zero factor on either side gives 0.

    IEEE arithmetic makes ``0 * inf`` (and ``0 * nan``) NaN. Without the rule the engines
    disagree wherever a zero meets an infinity, because they meet in different products:
    in ``t * sqrt(t)`` at 0, forward mode multiplies the partial ``t = 0`` by sqrt's infinite
    tangent, reverse mode multiplies sqrt's infinite partial by a zero cotangent. With the
    rule both give 0, the true derivative where one exists, and so do overflowing values
    (``exp(1e5)`` times a zero cotangent), the branch a ``where`` did not take, and
    Hessians at poles.

    Fast path: such a product is NaN exactly where the rule applies (or a factor was NaN),
    so a result with no NaN is returned as computed; one extra read of the result, no
    allocation. Otherwise the NaN entries with a zero factor are replaced by 0 through a
    nondifferentiable mask (finite entries keep their own derivatives, for Hessians). The
    partial itself is evaluated only when the tangent has non-finite entries (as the rule
    applied to a unit tangent there)."""

    @functools.wraps(derivative)   # keeps its parameters' names (what it reads)
    def safe(t, *args):
        result = derivative(t, *args)
        kind = type(result)
        if kind is np.float64 or kind is float:  # the scalar chain's hot case
            if result == result:
                return result
        elif not holds_nan(result):
            return result
        return _zero_factors_to_zero(result, t, lambda unit: derivative(unit, *args))

    return safe


def times(t, partial):
    """``t * partial`` under the 0 x inf rule (see ``zero_safe``): for rules written by hand.

    When the partial is a plain number, or a plain array much smaller than ``t`` (the usual
    case under ``jacfwd``, ``jacrev`` and ``vmap``, where ``t`` carries a batch of tangents),
    with every entry finite and nonzero, no zero factor can meet an infinity: the product
    has a NaN only where ``t`` has one, which the rule keeps. It is then returned unchecked,
    and the check reads the small partial instead of the large product."""
    if _finite_and_nonzero(partial, t):
        return t * partial
    return _times(t, partial)


def _finite_and_nonzero(partial, t):
    kind = type(partial)
    if kind is float or kind is np.float64 or kind is int:
        return partial != 0 and partial - partial == 0   # nonzero, not inf or NaN
    if kind is not np.ndarray or partial.dtype.kind not in "fc":
        return False
    value = _concrete(t)
    if 4 * partial.size > getattr(value, "size", 1):
        return False   # as large as the product: reading it saves nothing
    return bool(np.isfinite(partial).all() and partial.all())


def _times(t, partial):
    """``t * partial`` checked for the 0 x inf rule (``zero_safe`` written out for one
    product: one call fewer on every derivative product)."""
    result = t * partial
    kind = type(result)
    if kind is np.float64 or kind is float:  # the scalar chain's hot case
        if result == result:
            return result
    elif not holds_nan(result):
        return result
    return _zero_factors_to_zero(result, t, lambda unit: unit * partial)


def _zero_factors_to_zero(result, t, product_with):
    """``result`` (``t`` times a partial, holding NaN) with 0 where a zero factor made the
    NaN; ``product_with(unit)`` is the same product with ``t``'s non-finite entries
    replaced by 1 (needed only when ``t`` has some: the partial's own zeros there)."""
    if holds_nonfinite(t):
        unit = ew.where_p(ew.isfinite_p(t), t, 1.0)
        zero = ew.zero_factor_nan(result, t, product_with(unit))
    else:
        zero = ew.zero_factor_nan(result, t)
    return ew.where_p(zero, 0.0, result)


def _concrete(x):
    """The plain value under ``x``: a tracer's primal (forward, reverse) or batched value
    (vmap), down to an array or scalar."""
    while isinstance(x, Tracer):
        x = x.primal if isinstance(x, PrimalTracer) else x.value
    return x


def holds_nan(x):
    """Whether the array, scalar or tracer ``x`` has a NaN entry (False for integers).

    One pass and no allocation. A small array: ``vdot(x, x)`` sums ``|x|**2``, terms that
    cannot cancel, so it is NaN exactly when an entry is (the cheapest call). A large one:
    ``maximum`` propagates NaN (a BLAS dot product of a large array may start threads,
    which costs milliseconds on a busy machine)."""
    if type(x) is not np.ndarray:
        if isinstance(x, Tracer):  # a recording trace (jit) keeps this answer as a guard
            return concrete_test(x, holds_nan)
        x = np.asarray(x)
    if x.dtype.kind not in "fc":
        return False
    if x.size <= _SMALL and x.flags.c_contiguous:
        total = np.vdot(x, x)
    elif x.size == 0:
        return False
    else:
        total = np.maximum.reduce(x, axis=None)
    return bool(total != total)


_SMALL = 4096  # well below the size at which BLAS libraries thread a dot product


def holds_nonfinite(x):
    """Whether the array, scalar or tracer ``x`` has an infinite or NaN entry."""
    if isinstance(x, Tracer):  # a recording trace (jit) keeps this answer as a guard
        return concrete_test(x, holds_nonfinite)
    x = np.asarray(x)
    return x.dtype.kind in "fc" and not np.isfinite(x).all()


def nondiff_elementwise(name, impl):
    """A piecewise-constant elementwise primitive (comparisons, sign): no derivative."""
    prim = Primitive(name, impl, nondiff=True, traits=Traits(elementwise=True))
    prim.batch = broadcasting_batch(prim)
    return prim


# --- the elementwise builder -----------------------------------------------------------


class _ZeroPartial:
    """The partial derivative 0 everywhere: the argument's tangent is dropped and its
    cotangent is zero."""

    __slots__ = ()

    def __repr__(self):
        return "ZERO"


ZERO = _ZeroPartial()


class no_derivative:
    """An argument without a derivative (an integer order): an integer value has a zero
    tangent; differentiating with respect to a float value raises ``NoRuleError``, saying
    ``why``."""

    __slots__ = ("why",)

    def __init__(self, why):
        self.why = why


class tangent_rule:
    """A rule that is not a product with the tangent: ``jvp(t, ...)`` is the tangent of the
    output given the argument's tangent ``t`` (a ``where`` selecting it, say), and
    ``vjp(ct, ...)`` the argument's cotangent before it is summed over broadcast axes
    (``jvp`` itself when omitted; a non-holomorphic function gives its own). The
    parameters after the first name what each reads, as for a partial."""

    __slots__ = ("jvp", "vjp")

    def __init__(self, jvp, vjp=None):
        self.jvp = jvp
        self.vjp = jvp if vjp is None else vjp


_FLOATS = (float, np.float64)
_VARIADIC = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS


def _parameter_names(fn):
    """The parameter names of ``fn``: read off a plain function's code object (builders
    run at import, for every primitive; ``inspect.signature`` costs ~30x more), else by
    ``inspect.signature``."""
    code = getattr(fn, "__code__", None)
    if code is None or not hasattr(fn, "__defaults__") or code.co_flags & _VARIADIC:
        return list(inspect.signature(fn).parameters)
    return list(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])


def _reads(fn, names, skip=0):
    """The positions (in ``names``) of the values ``fn``'s parameters name, in order."""
    params = _parameter_names(fn)[skip:]
    unknown = [p for p in params if p not in names]
    if unknown:
        raise TypeError(f"a partial reads {unknown}, which is not among {list(names)}")
    return tuple(names.index(p) for p in params)


def _product(partial, positions):
    """``part(t, values)``: the tangent ``t`` times the partial derivative under the 0 x inf
    rule (``times``). ``partial`` is evaluated on the ``values`` at ``positions``, or is
    None for the value at the one position itself (``multiply``'s partials).

    Inline fast paths: a finite nonzero float partial times a float tangent (the scalar
    chain) is multiplied at once, as no zero factor can meet an infinity there; a partial
    array as large as the tangent is checked through the product (``times`` would find that
    too, two calls later)."""
    k, m = (positions + (None, None))[:2]
    how = 0 if partial is None else {1: 1, 2: 2}.get(len(positions), 3)

    def part(t, values):
        if how == 1:
            p = partial(values[k])
        elif how == 0:
            p = values[k]
        elif how == 2:
            p = partial(values[k], values[m])
        else:
            p = partial(*[values[j] for j in positions])
        kind = type(p)
        if kind in _FLOATS:
            if type(t) in _FLOATS and p != 0 and p - p == 0:
                return t * p
        elif kind is np.ndarray and type(t) is np.ndarray and 4 * p.size > t.size:
            return _times(t, p)
        return times(t, p)
    return part


def _selection(rule, positions):
    def part(t, values):
        return rule(t, *[values[k] for k in positions])
    return part


def _constant(c):
    if c == 1:
        return lambda t, values: t
    if c == -1:
        return lambda t, values: ew.negative_p(t)
    return lambda t, values: times(t, c)


def _no_rule_error(where, argname, why):
    return NoRuleError(
        f"{where} has no derivative with respect to its argument {argname!r} ({why}). "
        f"Differentiate with respect to the other arguments only and hold {argname!r} "
        f"fixed: pass it as a constant, or as dk.stop_gradient({argname}) when it is "
        "computed from differentiated values.")


def _fixed(i, where, argname, why):
    """The part of an argument without derivative: none for an integer value."""
    def part(t, values):
        if dtype_of(values[i]).kind not in "fc":
            return None
        raise _no_rule_error(where, argname, why)
    return part


def _parts(partials, names, where):
    """For each argument: ``(jvp part, vjp part, positions read by the vjp)``; a part is
    ``part(t, values)`` with ``values = (*arguments, out, *parameters)``, or None for an
    argument whose derivative is 0."""
    made = []
    for i, (argname, partial) in enumerate(partials.items()):
        if partial is ZERO or (isinstance(partial, (int, float)) and partial == 0):
            made.append((None, None, ()))
        elif isinstance(partial, no_derivative):
            part = _fixed(i, where, argname, partial.why)
            made.append((part, part, ()))
        elif isinstance(partial, bool) or not isinstance(partial, (int, float, str,
                                                                 tangent_rule)) \
                and not callable(partial):
            raise TypeError(f"{where}: the partial of {argname!r} is {partial!r}, not a "
                            "function, a number, an argument's name, ZERO, no_derivative "
                            "or tangent_rule")
        elif isinstance(partial, (int, float)):
            part = _constant(partial)
            made.append((part, part, ()))
        elif isinstance(partial, str):
            k = names.index(partial)
            part = _product(None, (k,))
            made.append((part, part, (k,)))
        elif isinstance(partial, tangent_rule):
            forward = _reads(partial.jvp, names, skip=1)
            backward = _reads(partial.vjp, names, skip=1)
            made.append((_selection(partial.jvp, forward), _selection(partial.vjp, backward),
                         backward))
        else:
            positions = _reads(partial, names)
            part = _product(partial, positions)
            made.append((part, part, positions))
    return made


def _vjp_rule(i, part, params, unary):
    """The reverse rule of argument ``i``: its part applied to the cotangent, as the
    cotangent of a real argument when it is real, summed over the axes broadcasting
    added. (The cotangent of a unary function's argument has its shape, and a real
    argument has a real result: the part is the rule.)"""
    if unary and not params:
        def rule(ct, out, x):
            return part(ct, (x, out))
        return rule
    if params:
        def rule(ct, out, *primals, **kwargs):
            x = primals[i]
            c = part(ct, (*primals, out, *[kwargs[p] for p in params]))
            return _cotangent_of(c, x)
        return rule

    def rule(ct, out, *primals):
        x = primals[i]
        c = part(ct, (*primals, out))
        kind = type(c)
        if kind in _FLOATS and type(x) in _FLOATS:
            return c   # scalars: nothing to sum, nothing complex
        if kind is np.ndarray and type(x) is np.ndarray and c.shape == x.shape \
                and c.dtype.kind == x.dtype.kind:
            return c   # nothing to sum, and complex only for a complex argument
        return _cotangent_of(c, x)
    return rule


def _cotangent_of(c, x):
    if c is None:
        return None
    c = real_cotangent(c, x)
    x_shape = shape_of(x)
    return c if shape_of(c) == x_shape else reductions.unbroadcast(c, x_shape)


def elementwise(name, fn, partials, *, doc, module, params=(), impl=None, prepare=None,
                select=None, deciding=None, traits=None, jet=None):
    """An elementwise, broadcasting primitive and its public function:
    ``(name_p, name) = elementwise(name, fn, {"x": partial, ...}, doc=..., module=...)``.

    ``fn`` computes the value (``impl`` instead, when given, is the primitive's
    implementation). ``partials`` maps each argument, in order (they are the public
    function's parameters), to its partial derivative ``d out / d arg``:

    - a function whose parameter names say what it reads (arguments, ``out``, static
      ``params``), written with diffkit operations: ``lambda x: cos(x)``;
    - a number (a constant partial), or an argument's name (``multiply``: the other one);
    - ``ZERO`` (0 everywhere), ``no_derivative(why)`` (none: an integer order);
    - ``tangent_rule(jvp, vjp)``, for a rule that is not a product with the tangent.

    Each partial is multiplied in with ``times`` (the 0 x inf rule); tangents are summed
    and broadcast to the output's shape, cotangents summed back over broadcast axes (and
    real for a real argument). The reverse engine keeps only what some partial reads.
    ``params``: names of static keyword parameters (``order=``), passed to the
    implementation. ``prepare(args)``: how the public function converts its arguments
    before binding (``special_helpers`` uses it for SciPy's scalar dtypes).

    The primitive's sparsity rule is made here too (``sparsity_rules.elementwise_sparsity``):
    each output entry depends on the entry each argument broadcasts to it, except for an
    argument whose partial is ``ZERO``. A piecewise primitive gives ``select(args, out,
    **params)``, the mask per argument of where its branch is taken at these values (the
    winner of a ``maximum``), and ``deciding``, the positions of the arguments that mask
    reads when it reads no other (``heaviside``'s ``x``).

    The primitive's traits (``core.primitive.Traits``) are made here too: elementwise, with
    the curvature read off the partials (``_curvature``); ``traits`` (a dict) adds or
    overrides some (``operator="+"``, a ``curvature`` the partials cannot show).

    ``jet``: the maker of the primitive's Taylor-mode rule, ``jet(prim) -> rule``
    (``ops.taylor_arithmetic``). Without it a primitive whose partials are all constant
    numbers (or ``ZERO``) gets the rule of that linear combination, y_k = Σ_i c_i x_{i,k};
    any other is expanded through its JVP rule (``interpreters.taylor``'s fallback).
    """
    names = list(partials)
    n = len(names)
    params = tuple(params)
    values_names = names + ["out"] + list(params)
    where = f"{module}.{name}"
    made = _parts(partials, values_names, where)
    reads = tuple(frozenset("out" if k == n else k for k in positions if k <= n)
                  for _, _, positions in made)
    ignores = (frozenset(range(n)) | {"out"}) - frozenset().union(*reads)
    dropped = tuple(i for i, (forward, backward, _) in enumerate(made)
                    if forward is None and backward is None)   # ZERO partials
    prim = Primitive(name, fn if impl is None else impl, vjp_ignores=ignores,
                     vjp_reads=reads,
                     sparsity=sr.elementwise_sparsity(select, deciding, dropped),
                     traits=Traits(**{"elementwise": True,
                                      "curvature": _curvature(partials, select),
                                      **(traits or {})}))
    forward = [jvp_part for jvp_part, _, _ in made]
    prim.vjp = tuple(None if backward is None else _vjp_rule(i, backward, params, n == 1)
                     for i, (_, backward, _) in enumerate(made))
    prim.jvp = _jvp(prim, forward, params)
    weights = _constant_weights(partials, select)
    if jet is not None:
        prim.jet = jet(prim)
    elif weights is not None:
        prim.jet = ta.linear_combination(prim, weights)
    if n == 1 and not params:
        prim.batch = lambda axis_size, values, batch_axes: (prim(values[0]), batch_axes[0])
    elif n == 1:
        prim.batch = lambda axis_size, values, batch_axes, **kwargs: (
            prim(values[0], **kwargs), batch_axes[0])
    else:
        prim.batch = broadcasting_batch(prim)
    return prim, public_function(prim, name, names, doc, module, params, prepare)


def _constant_weights(partials, select):
    """The partials as constant numbers (0 for ``ZERO``) when every one is such a
    number and the primitive selects among nothing (a piecewise-linear ``maximum`` has
    other partials): the weights of its linear Taylor rule. Else None."""
    if select is not None:
        return None
    weights = []
    for partial in partials.values():
        if partial is ZERO:
            weights.append(0)
        elif isinstance(partial, (int, float)) and not isinstance(partial, bool):
            weights.append(partial)
        else:
            return None
    return weights


def _curvature(partials, select):
    """How an elementwise primitive with these ``partials`` curves (``Traits.curvature``):
    "linear" when every partial is a constant (or the primitive selects among its
    arguments' entries, ``select``: piecewise linear), "bilinear" for two arguments each
    the other's partial (``x * y``), "unary" for one argument, else "elementwise"."""
    values = list(partials.values())
    if select is not None or all(
            v is ZERO or isinstance(v, no_derivative)
            or isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return "linear"
    names = list(partials)
    if len(names) == 2 and values == names[::-1]:
        return "bilinear"
    return "unary" if len(values) == 1 else "elementwise"


def _jvp(prim, parts, params):
    if len(parts) == 1 and not params and parts[0] is not None:
        (part,) = parts

        def jvp(primals, tangents):
            out = prim(*primals)
            t = part(tangents[0], (*primals, out))
            return out, Zero(shape_of(out), tangent_dtype(dtype_of(out))) if t is None else t
        return jvp

    def jvp(primals, tangents, **kwargs):
        out = prim(*primals, **kwargs)
        values = (*primals, out, *[kwargs[p] for p in params]) if params else (*primals, out)
        total = None
        for part, t in zip(parts, tangents):
            if part is None or type(t) is Zero:
                continue
            t = part(t, values)
            if t is not None:
                total = t if total is None else total + t
        out_shape = shape_of(out)
        if total is None:
            return out, Zero(out_shape, tangent_dtype(dtype_of(out)))
        return out, total if shape_of(total) == out_shape else shape.broadcast_to(total,
                                                                                 out_shape)
    return jvp


def public_function(prim, name, argnames, doc, module, params=(), prepare=None):
    """The function users call: ``argnames`` as its parameters (positional or keyword),
    ``params`` keyword-only, binding ``prim``. Without ``params`` and ``prepare`` it binds
    the primitive as it is and says so (``function.primitive``), so a namespace wrapper
    can bind it directly."""
    P = inspect.Parameter
    signature = inspect.Signature([P(a, P.POSITIONAL_OR_KEYWORD) for a in argnames]
                                  + [P(p, P.KEYWORD_ONLY) for p in params])
    count = len(argnames)

    def arguments(args, kwargs):
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as error:
            raise TypeError(f"{name}() {error}") from None
        return bound.args, bound.kwargs

    if params or prepare is not None:
        convert = prepare or (lambda args: args)

        def function(*args, **kwargs):
            if kwargs or len(args) != count:
                args, kwargs = arguments(args, kwargs)
            return bind(prim, *convert(args), **kwargs)
    else:
        def function(*args, **kwargs):
            if kwargs or len(args) != count:
                args, kwargs = arguments(args, kwargs)
            return bind(prim, *args)
        function.primitive = prim

    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    function.__signature__ = signature
    function.__module__ = module
    return function
