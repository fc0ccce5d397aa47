"""Forward mode: dual numbers.

A ``JVPTracer`` carries a primal value and its tangent (the directional derivative along
the direction the user chose). ``JVPTrace.process`` maps ``(primals, tangents)`` to
``(out, tangent_out)`` with the primitive's ``jvp`` rule; when every tangent is zero, or
the primitive has no derivative (a comparison), the primitive just runs on the primals and
the result is a tracer whose tangent is the symbolic ``Zero`` (as in JAX, a comparison of
traced values is a traced bool), so a tangent is never an array of zeros made for nothing.

``jvp_flat`` is the engine's one entry point: it runs a function of flat lists of values on
dual numbers and hands back flat lists of primals and tangents. ``diffkit.api`` adds the
pytrees, argument checks and zero materialisation on top; ``custom`` and ``linearize``
call it directly.
"""

import numpy as np

from ..core.trace import (
    PrimalTracer,
    Trace,
    bind_custom,
    check_custom_outputs,
    check_not_escaped,
    new_trace,
)
from ..core.zeros import Zero, dtype_of, shape_of, zero_like
from ..errors import NoRuleError
from ..tree_util import tree_map


class JVPTracer(PrimalTracer):
    __slots__ = ("tangent",)

    def __init__(self, trace, primal, tangent):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent


class JVPTrace(Trace):
    __slots__ = ()
    name = "forward-mode (jvp/jacfwd)"
    pushes_forward = True

    def lift(self, value):
        return JVPTracer(self, value, zero_like(value))

    def constant(self, out, prim):
        """The result of ``prim`` run on primals alone (no tangent reached it, or it has no
        derivative): still a value of this trace, with a zero tangent, as in JAX; a
        comparison of traced values is a traced bool."""
        if prim.multiple_results:
            return tuple(JVPTracer(self, o, zero_like(o)) for o in out)
        return JVPTracer(self, out, zero_like(out))

    def process(self, prim, args, params):
        primals = []
        tangents = []
        nonzero = False
        constants = False  # some argument is not ours: its zero tangent is made below
        for x in args:
            if type(x) is JVPTracer and x._trace is self:
                primals.append(x.primal)
                tangent = x.tangent
                tangents.append(tangent)
                if type(tangent) is not Zero:
                    nonzero = True
            else:
                primals.append(x)
                tangents.append(None)
                constants = True
        if not nonzero or prim.nondiff:
            return self.constant(prim(*primals, **params), prim)
        if prim.jvp is None:
            raise NoRuleError(f"primitive {prim.name!r} has no forward-mode (jvp) rule")
        if constants:
            tangents = [zero_like(p) if t is None else t for p, t in zip(primals, tangents)]
        out, tangent_out = prim.jvp(primals, tangents, **params)
        if prim.multiple_results:
            return tuple(self.wrap(o, t) for o, t in zip(out, tangent_out))
        return self.wrap(out, tangent_out)

    def process_custom(self, call, args):
        primals = [x.primal if type(x) is JVPTracer and x._trace is self else x for x in args]
        tangents = [x.tangent if type(x) is JVPTracer and x._trace is self else None
                    for x in args]
        if all(t is None or type(t) is Zero for t in tangents):
            outs = bind_custom(call, primals)
            if any(t is not None for t in tangents):   # a value of this trace: one too
                return tuple(JVPTracer(self, o, zero_like(o)) for o in outs)
            return outs
        # user rules see concrete zeros, as in JAX
        tangents = [np.zeros(shape_of(p), dtype_of(p)) if t is None or type(t) is Zero else t
                    for p, t in zip(primals, tangents)]
        outs, tangents_out = call.jvp(primals, tangents)
        check_custom_outputs(self, call, (*outs, *tangents_out))
        return tuple(self.wrap(o, t) for o, t in zip(outs, tangents_out))

    def wrap(self, primal, tangent):
        if tangent is None or type(tangent) is Zero:
            return primal
        return JVPTracer(self, primal, tangent)


# --- the entry point ---------------------------------------------------------------------


def jvp_flat(fun, primals, tangents, *, has_aux=False, name="jvp"):
    """Evaluate ``fun`` at ``primals`` with the directional derivative along ``tangents``.

    ``fun(*inputs)`` takes one value per primal and returns a list (or tuple) of output
    values, or ``(outputs, aux)`` with ``has_aux``. ``tangents`` holds one tangent per primal,
    of its shape: an array, or a symbolic ``Zero``.

    Returns ``(primals_out, tangents_out)``, one entry per output, and ``aux`` third with
    ``has_aux`` (its traced values replaced by their primals). The tangent of an output that
    does not depend on the primals is a symbolic ``Zero`` (callers materialise it where they
    need an array). ``name``, the transformation the user called, is named in the error for
    a traced value of a finished transformation among the outputs.
    """
    with new_trace(JVPTrace) as trace:
        inputs = [JVPTracer(trace, p, t) for p, t in zip(primals, tangents)]
        outs, aux = fun(*inputs) if has_aux else (fun(*inputs), None)
        primals_out, tangents_out = [], []
        for o in outs:
            if type(o) is JVPTracer and o._trace is trace:
                primals_out.append(o.primal)
                tangents_out.append(o.tangent)
            else:  # does not depend on the primals: a zero tangent
                o = check_not_escaped(o, name)
                primals_out.append(o)
                tangents_out.append(zero_like(o))
        if has_aux:
            return primals_out, tangents_out, lower_aux(aux, trace, name)
    return primals_out, tangents_out


def lower_aux(aux, trace, name):
    """``aux`` (any pytree) with ``trace``'s tracers (forward or reverse: both hold a
    ``primal``) replaced by their primals; an error for a traced value of a transformation
    that has finished (it would escape to the caller)."""
    if aux is None:  # the usual aux (none at all): nothing to unwrap
        return aux

    def lower(x):
        if isinstance(x, PrimalTracer) and x._trace is trace:
            x = x.primal
        return check_not_escaped(x, name)

    return tree_map(lower, aux)
