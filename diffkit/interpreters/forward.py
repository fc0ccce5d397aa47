"""Forward mode: dual numbers.

A ``JVPTracer`` carries a primal value and its tangent (the directional derivative along
the direction the user chose). Each primitive maps ``(primals, tangents)`` to
``(out, tangent_out)`` with its ``jvp`` rule; when every tangent is zero the primitive
just runs on the primals and the result is an ordinary (lower-level) value.
"""

import numpy as np

from ..core.trace import PrimalTracer, Trace, bind_custom, check_custom_outputs
from ..core.zeros import Zero, dtype_of, shape_of, zero_like
from ..errors import NoRuleError


class JVPTracer(PrimalTracer):
    __slots__ = ("tangent",)

    def __init__(self, trace, primal, tangent):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent


class JVPTrace(Trace):
    __slots__ = ()
    name = "forward-mode (jvp/jacfwd)"

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
            return prim(*primals, **params)
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
            return bind_custom(call, primals)
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
