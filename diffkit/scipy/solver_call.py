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

Values the user's function closes over are found by ``Closure``: it records the function
once (``diffkit.interpreters.staging``) and takes the traced values of enclosing
transformations that the recording uses as constants; the solvers pass them to the call as
parameters and evaluate the recording with the call's values in their place (closure
conversion). A traced value met by a solver working on plain arrays anyway (a function
that could not be recorded) is reported by ``check_plain``, asking to pass it through
``args``.
"""

import numpy as np

from .. import api
from .. import numpy as dnp
from ..core.trace import Tracer, bind_custom
from ..core.zeros import dtype_of, instantiate, is_zero, shape_of, tangent_dtype
from ..errors import EscapedTracerError
from ..interpreters.ir import Const, bind_equation
from ..interpreters.staging import stage_flat
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


# --- closure conversion ------------------------------------------------------------------------


class Closure:
    """The traced values ``fun`` closes over, found by recording ``fun(*inputs)`` once, and
    ``fun`` evaluated with other values in their place.

    ``found`` tells whether the recording uses traced values of enclosing transformations as
    constants; then ``values`` lists them and ``closure(inputs, values)`` evaluates the
    recording on new ``inputs`` with ``values`` in their place (diffkit operations: it
    differentiates, batches and stages like ``fun``). A function whose recording reads its
    inputs' values (Python control flow on them) cannot be replayed at other inputs: with
    captured values that is an error asking for ``args``. A function that cannot be recorded
    at all is left alone (``found`` False)."""

    def __init__(self, fun, inputs, name):
        self.found, self.values = False, []
        self.name = name

        def flat(*staged):
            leaves, self.out_tree = tree_flatten(fun(*staged))
            return leaves

        try:
            _, recording = stage_flat(flat, list(inputs), name=name)
        except Exception:   # noqa: BLE001 (not recordable: the plain solve reports closures)
            return
        values = captured(recording)
        if not values:
            return
        if recording.guards or recording.raised or recording.writes \
                or any(dtype_of(v).kind not in "fc" for v in values):
            what = ("reads the values of its inputs (Python control flow on them)"
                    if recording.guards else
                    f"catches an exception ({recording.raised[0]}) that decides its path"
                    if recording.raised else
                    "writes into its arguments in place" if recording.writes else
                    "closes over a traced integer or boolean value")
            raise EscapedTracerError(
                f"{name}: the function closes over values traced by an enclosing "
                f"{values[0]._trace.name} transformation and {what}, so it cannot be "
                f"replayed with them as parameters. Pass those values through {name}'s "
                "args=(...) instead.")
        self.found, self.values, self.recording = True, values, recording

    def __call__(self, inputs, values):
        outs, _ = replay(self.recording, inputs, self.values, values)
        return self.out_tree.unflatten(outs)


def captured(recording):
    """The traced values of enclosing transformations that ``recording`` uses as constants,
    each once, in the order of first use."""
    found = {}
    refs = [r for eqn in recording.equations for r in eqn.inputs] + list(recording.outputs)
    for ref in refs:
        if type(ref) is Const and isinstance(ref.value, Tracer):
            found.setdefault(id(ref.value), ref.value)
    return list(found.values())


def replay(recording, inputs, old, new):
    """``recording`` evaluated with diffkit's operations on ``inputs``, the constants among
    ``old`` (the captured values) replaced by those of ``new`` at the same positions:
    ``(outputs, env)``, ``env`` holding every variable's value (for the caller's guards)."""
    swap = {id(o): n for o, n in zip(old, new)}

    def value(ref):
        if type(ref) is int:
            return env[ref]
        return swap.get(id(ref.value), ref.value)

    env = list(inputs) + [None] * (len(recording.avals) - len(inputs))
    for eqn in recording.equations:
        args = [value(r) for r in eqn.inputs]
        with np.errstate(**(eqn.errstate or np.geterr())):
            out = bind_equation(eqn.prim, args, eqn.params)
        outs = out if eqn.prim.multiple_results else (out,)
        for var, out in zip(eqn.outs, outs):
            env[var] = out
    return [value(r) for r in recording.outputs], env
