"""Taylor mode: truncated Taylor series pushed through a function.

A ``JetTracer`` carries a value ``x_0`` and the next K Taylor coefficients of a curve
through it, ``x(t) = x_0 + x_1 t + ... + x_K t^K``: coefficients, not derivatives
(``x_k = x^(k)(0) / k!``, the convention Taylor arithmetic works in; ``diffkit.taylor``
converts at the public boundary). A coefficient known to be zero is a symbolic ``Zero``
and is never made into an array. ``JetTrace.process`` gives the K coefficients of
``f(x(t))`` with the primitive's ``jet`` rule (the recurrences of Taylor arithmetic,
Griewank & Walther, *Evaluating Derivatives*, ch. 13) where it has one.

Every other primitive goes through ``taylor_from_jvp``, the documented fallback, which
needs only the ``jvp`` rule every differentiable primitive has. For ``y(t) = f(x(t))``,

    y'(t) = Df(x(t)) [x'(t)],

the JVP at the point ``x(t)`` along the velocity ``x'(t)``. Running the JVP rule itself in
Taylor mode of order K-1, on the series of ``x`` (cut after ``x_{K-1}``) and of ``x'``
(exactly ``x_1 + 2 x_2 t + ... + K x_K t^(K-1)``), gives ``y'`` to order K-1 as its
tangent output, so ``y_k = y'_{k-1} / k`` for k = 1..K. The rule's own primitives are
processed again at order K-1, down to order 0 (plain evaluation). The cost is the sum of
the rule's costs over the orders, where K nested ``jvp``s would double at each order.
Custom JVP rules (``custom_jvp``, and the forward rule of ``custom_vjp``) are used the
same way, so Taylor mode follows the user's rule.

``jet_flat`` is the engine's one entry point, a function of flat lists of values.
"""

from ..core.trace import PrimalTracer, Trace, bind_custom, check_not_escaped, new_trace
from ..core.zeros import Zero, instantiate, zero_like
from ..errors import NoRuleError


class JetTracer(PrimalTracer):
    __slots__ = ("series",)

    def __init__(self, trace, primal, series):
        self._trace = trace
        self.primal = primal
        self.series = series


class JetTrace(Trace):
    __slots__ = ("order",)
    name = "Taylor-mode (jet)"
    pushes_forward = True

    def __init__(self, level, order):
        super().__init__(level)
        self.order = order

    def zeros(self, value):
        """The series of a value that does not move along the curve."""
        return (zero_like(value),) * self.order

    def lift(self, value):
        return JetTracer(self, value, self.zeros(value))

    def constant(self, out, prim):
        """The result of ``prim`` on the values alone: a value of this trace with a zero
        series (a comparison of traced values is a traced bool, as in forward mode)."""
        if prim.multiple_results:
            return tuple(JetTracer(self, o, self.zeros(o)) for o in out)
        return JetTracer(self, out, self.zeros(out))

    def unwrap(self, args):
        """``(primals, series, moving)``: each argument's value and coefficients (zeros for
        a constant), and whether any coefficient is nonzero."""
        primals, series, moving = [], [], False
        for x in args:
            if type(x) is JetTracer and x._trace is self:
                primals.append(x.primal)
                series.append(x.series)
                moving = moving or any(type(c) is not Zero for c in x.series)
            else:
                primals.append(x)
                series.append(None)
        series = [self.zeros(p) if s is None else s for p, s in zip(primals, series)]
        return primals, series, moving

    def process(self, prim, args, params):
        primals, series, moving = self.unwrap(args)
        if not moving or prim.nondiff:
            return self.constant(prim(*primals, **params), prim)
        out, series_out = expand(prim, primals, series, params, self.order)
        if prim.multiple_results:
            return tuple(self.wrap(o, s) for o, s in zip(out, series_out))
        return self.wrap(out, series_out)

    def process_custom(self, call, args):
        primals, series, moving = self.unwrap(args)
        if not moving:
            outs = bind_custom(call, primals)
            return tuple(JetTracer(self, o, self.zeros(o)) for o in outs)

        outs, series_out = expand_custom(call, primals, series, self.order)
        return tuple(self.wrap(o, s) for o, s in zip(outs, series_out))

    def wrap(self, primal, series):
        return JetTracer(self, primal, tuple(series))


# --- the rules ---------------------------------------------------------------------------


def expand(prim, primals, series, params, order):
    """``(out, series_out)``: ``prim`` at ``primals`` moving along ``series`` (one tuple of
    ``order`` coefficients per argument, not all zero), by its jet rule or the fallback."""
    if prim.jet is not None:
        expanded = prim.jet(primals, series, **params)
        if expanded is not NotImplemented:   # a rule may decline a point (a zero divisor)
            return expanded
    if prim.jvp is None:
        raise NoRuleError(f"primitive {prim.name!r} has no forward-mode (jvp) rule, so "
                          "Taylor mode (jet) cannot expand it either")

    def jvp_rule(ps, ts):
        return prim.jvp(ps, ts, **params)
    return taylor_from_jvp(jvp_rule, primals, series, order, prim.multiple_results)


def expand_custom(call, primals, series, order):
    """``(outs, series_out)`` of a call with user rules, expanded through its JVP rule
    (user rules see concrete zeros, as in forward mode)."""
    def jvp_rule(ps, ts):
        ts = [instantiate(zero_like(p)) if type(t) is Zero else t for p, t in zip(ps, ts)]
        return call.jvp(list(ps), ts)
    return taylor_from_jvp(jvp_rule, primals, series, order, True)


# --- the fallback ------------------------------------------------------------------------


def scale(coefficient, factor):
    """``factor * coefficient``, a symbolic zero staying one."""
    if type(coefficient) is Zero:
        return coefficient
    return coefficient * factor


def taylor_from_jvp(jvp_rule, primals, series, order, multiple_results):
    """``(out, series_out)`` of a primitive from its JVP rule ``jvp_rule(primals,
    tangents) -> (out, tangent_out)``, at ``primals`` moving along ``series`` (one tuple
    of ``order`` coefficients per argument): see the module's docstring."""
    n = len(primals)
    velocities = [s[0] for s in series]
    velocity_series = [tuple(scale(c, k + 2) for k, c in enumerate(s[1:])) for s in series]
    point_series = [s[:order - 1] for s in series]

    def rule(*values):
        out, tangent = jvp_rule(list(values[:n]), list(values[n:]))
        outs = list(out) if multiple_results else [out]
        tangents = list(tangent) if multiple_results else [tangent]
        return outs + [zero_like(o) if t is None else t for o, t in zip(outs, tangents)]

    values, value_series = jet_flat(rule, [*primals, *velocities],
                                    [*point_series, *velocity_series], order - 1)
    m = len(values) // 2
    outs = values[:m]
    series_out = []
    for o, w0, ws in zip(outs, values[m:], value_series[m:]):
        if type(w0) is Zero and all(type(w) is Zero for w in ws):
            series_out.append(tuple(zero_like(o) for _ in range(order)))
            continue
        derivative = [w0, *ws]   # the coefficients of y'(t), to order K-1
        series_out.append(tuple(scale(_fit(w, o), 1 / (k + 1))
                                for k, w in enumerate(derivative)))
    return (outs if multiple_results else outs[0]), (series_out if multiple_results
                                                       else series_out[0])


def _fit(coefficient, out):
    """A coefficient of ``out``'s series: a zero of its shape when symbolic."""
    return zero_like(out) if type(coefficient) is Zero else coefficient


# --- the entry point ---------------------------------------------------------------------


def jet_flat(fun, primals, series, order, *, name="jet"):
    """Evaluate ``fun`` at ``primals`` moving along ``series``; return the outputs'
    values and their first ``order`` Taylor coefficients.

    ``fun(*inputs)`` takes one value per primal and returns a list (or tuple) of outputs.
    ``series[i]`` is the tuple of ``order`` coefficients of primal ``i`` (arrays of its
    shape, or symbolic ``Zero``s). Returns ``(primals_out, series_out)``: one value and one
    tuple of ``order`` coefficients per output (``Zero`` where a coefficient is zero).
    A primal whose coefficients are all zero reaches ``fun`` as the plain value (a Zero
    primal as the symbolic zero, which is how a rule receives a zero tangent).
    """
    if order == 0:
        outs = fun(*primals)
        return list(outs), [() for _ in outs]
    with new_trace(JetTrace, order) as trace:
        inputs = [_input(trace, p, s) for p, s in zip(primals, series)]
        outs = fun(*inputs)
        primals_out, series_out = [], []
        for o in outs:
            if type(o) is JetTracer and o._trace is trace:
                primals_out.append(o.primal)
                series_out.append(o.series)
            else:   # does not move with the inputs
                o = check_not_escaped(o, name)
                primals_out.append(o)
                series_out.append(trace.zeros(o) if type(o) is not Zero else (o,) * order)
    return primals_out, series_out


def _input(trace, primal, series):
    if all(type(c) is Zero for c in series):
        return primal
    if type(primal) is Zero:   # a velocity that is zero now but not later along the curve
        primal = instantiate(primal)
    return JetTracer(trace, primal, tuple(series))


__all__ = ["JetTrace", "JetTracer", "expand", "expand_custom", "jet_flat", "taylor_from_jvp"]
