"""A SciPy solver as one call that every engine differentiates by a rule: the shared record of
``diffkit.scipy.integrate.quad`` and of the implicit derivatives of
``diffkit.scipy.optimize`` (solutions of ``root``, ``minimize``, ``least_squares``,
``fixed_point`` and the linear systems of their derivatives).

A ``SolverCall`` is handed to ``bind_custom`` with a flat list of array arguments (the traced
parameters). It has three functions:

- ``fun(*primals) -> outputs``: the solver itself, run by SciPy on plain arrays (it is
  reached only once no transformation is left to interpret the call);
- ``rule(primals, tangents) -> (outputs, tangents of the outputs)``: forward mode, written
  with diffkit's operations and binding the call itself for its outputs, so outer
  transformations see the call again and the rule differentiates once more;
- ``back(outputs, primals, cotangents) -> one cotangent per primal``: reverse mode, also made
  of diffkit operations (a backward linear solve or integral is itself such a call).

Under ``vmap`` the batched call solves one problem per example (SciPy's solvers take one
problem at a time) and its rules are the vmapped rules. A solver's concrete results beyond
its outputs (SciPy's ``OptimizeResult``, the error estimate of an integral) are collected in
``state``, shared by the call and its batched copies.

Values the user's function closes over are not seen by the call: the solver runs on plain
arrays, and a traced value met there is reported (``check_plain``), asking to pass it
through ``args``.
"""

import numpy as np

from .. import api
from .. import numpy as dnp
from ..core.trace import Tracer, bind_custom
from ..core.zeros import dtype_of, instantiate, is_zero, shape_of, tangent_dtype
from ..errors import EscapedTracerError
from ..tree_util import tree_flatten, tree_leaves


class SolverCall:
    """A solver with derivative rules (see the module docstring)."""

    pullback_reads_primals = True

    def __init__(self, fun, rule, back, name, state=None):
        self.fun = fun
        self.rule = rule
        self.back = back
        self.name = name
        self.state = [] if state is None else state

    def jvp(self, primals, tangents):
        return self.rule(tuple(primals), tuple(tangents))

    def forward(self, primals):
        outs = tuple(bind_custom(self, list(primals)))   # outer levels see the call too
        return outs, outs

    def pullback(self, saved, primals, cotangents):
        cts = [_zeros_for(c, o) for c, o in zip(cotangents, saved)]
        in_cts = self.back(tuple(saved), tuple(primals), cts)
        return [None if c is None else dnp.astype(c, tangent_dtype(dtype_of(p)))
                for c, p in zip(in_cts, primals)]

    def batched(self, axis_size, batch_axes):
        axes = tuple(batch_axes)
        fun = self.fun

        def looped(*primals):
            results = [fun(*[p if a is None else p[i] for p, a in zip(primals, axes)])
                       for i in range(axis_size)]
            return tuple(np.stack([np.asarray(r[k]) for r in results])
                         for k in range(len(results[0])))

        def rule(primals, tangents):
            return api.vmap(self.rule, (axes, axes), axis_size=axis_size)(primals, tangents)

        def back(saved, primals, cotangents):
            zeros = tuple(0 for _ in saved)
            cts = api.vmap(lambda s, p, c: list(_instantiated(self.back(s, p, c), p)),
                           (zeros, axes, zeros), axis_size=axis_size)(
                saved, primals, tuple(cotangents))
            return [ct if axis == 0 else dnp.sum(ct, axis=0) for ct, axis in zip(cts, axes)]

        return SolverCall(looped, rule, back, self.name, self.state)


def _zeros_for(cotangent, out):
    if is_zero(cotangent) or cotangent is None:
        return dnp.zeros(shape_of(out), tangent_dtype(dtype_of(out)))
    return instantiate(cotangent)


def _instantiated(cts, primals):
    return [dnp.zeros(shape_of(p), tangent_dtype(dtype_of(p))) if c is None else c
            for c, p in zip(cts, primals)]


def call(solver, primals):
    """The outputs of ``solver`` (a ``SolverCall``) at ``primals``, a tuple."""
    return tuple(bind_custom(solver, list(primals)))


# --- the user's arguments: traced leaves become the call's parameters ------------------------


class TracedArgs:
    """``args`` (any pytree) split into the traced float leaves, which the call takes as
    parameters, and the rest, kept as they are. ``rebuild(params)`` gives ``args`` with the
    parameters in place of the traced leaves."""

    def __init__(self, args):
        leaves, self.treedef = tree_flatten(args)
        self.leaves = leaves
        self.positions = [i for i, x in enumerate(leaves)
                          if isinstance(x, Tracer) and dtype_of(x).kind in "fc"]
        self.params = [leaves[i] for i in self.positions]

    def rebuild(self, params):
        leaves = list(self.leaves)
        for i, p in zip(self.positions, params):
            leaves[i] = p
        return self.treedef.unflatten(leaves)


def check_plain(value, name, level=0):
    """``value``, a result of the user's function evaluated while the transformations up to
    ``level`` wait for a solver working on plain arrays; raise if it holds a value traced
    by one of them: the function closes over it, and the solver cannot see it."""
    for leaf in tree_leaves(value):
        while isinstance(leaf, Tracer):
            if leaf._trace.level <= level:
                raise EscapedTracerError(
                    f"{name}: the function uses a value traced by an enclosing "
                    f"{leaf._trace.name} transformation that it did not receive through args "
                    "(a closure or a global). Pass that value through "
                    f"{name}'s args=(...), so that the derivative of the result with "
                    "respect to it is computed.")
            leaf = getattr(leaf, "primal", None) if hasattr(leaf, "primal") else leaf.value
    return value


def plain(value):
    """The plain array under ``value``: a tracer's primal (all of a batch under ``vmap``)."""
    while isinstance(value, Tracer):
        value = getattr(value, "primal", None) if hasattr(value, "primal") else value.value
    return np.asarray(value)
