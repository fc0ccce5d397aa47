"""Vector fields whose Python reads values: their branches, followed through the solves.

A field such as ``-a * y if y[0] > 0.5 else -2 * a * y`` is a different function on each
side of its switching surface. Its solution is right whatever the branches do (the solver
calls the function itself, which takes the branch of each point). Its derivative is not,
where the branch taken changes during the solve at a time that moves with the initial state
or the parameters: the derivative then has a jump term at the switching time (the jump of
the field times the switching time's sensitivity), which the sensitivity and adjoint
equations, integrated with the Jacobian of whichever branch each point takes, do not have.
They would give a finite, wrong number, so diffkit refuses that derivative
(``BranchSwitchError``). A switch at a fixed time (a branch on ``t`` alone) has no jump
term: it is allowed.

How the branches are followed:

- every staged function of such a field (``ode_field.Staged``) replays a graph recorded on
  one branch; the graph's guards are the branch's Python reads, checked on every call
  (a failing guard records or picks the graph of the other branch). The *branch signature*
  of a graph (``branch_signature``) is the outcome of its guards that read values computed
  from the state or the parameters (not from the time alone) and are Python's own reads
  (not a rule's check for NaN);
- ``BranchWatch`` (one per field, shared by the fields of its derivative systems) keeps, per
  thread and per staged function, the signature of the last call in the current solve
  (``solving`` starts one); a call with another signature is a switch. In a solve made for
  a derivative (``solving(strict=True)``: the sensitivity and adjoint systems, the adjoint
  sweep) it raises ``BranchSwitchError`` with the time; in the solve of the solution itself
  nothing is raised (its value is right);
- the derivative rules evaluate such a field at single points (the initial state, the output
  times) with ``field_call_p``, a primitive whose implementation calls the function on
  plain values, one batch member at a time under ``vmap``: its Python reads then never meet a
  batched value, and its rules are again such calls.
"""

import contextlib
import threading

import numpy as np

from ... import api
from ...core.concrete import underlying
from ...core.primitive import EachArgument, Primitive
from ...core.trace import Tracer
from ...core.zeros import instantiate, is_zero, shape_of
from ...errors import DiffkitError
from ...numpy import stack, zeros
from ...ops import sparsity_rules as sr

GUIDE = "docs/guide/ode.md, section 'Fields that switch'"


class ClosureError(DiffkitError, ValueError):
    """A vector field closing over traced values takes another Python branch than it took
    when it was recorded."""


class BranchSwitchError(DiffkitError, ValueError):
    """The vector field's Python branch on the state or the parameters changed during a
    solve whose derivative was asked for: the derivative would miss the switch's jump
    term."""


class ClosureBranchError(ClosureError, BranchSwitchError):
    """Both at once: a field closing over traced values left the branch it was recorded
    on, at a point whose branch depends on the state or the parameters."""


def switch_message(name, t):
    """The refusal of a derivative across a switch at time ``t`` (None: unknown)."""
    return (
        f"{name}: the vector field's Python branch on the state or the parameters changed "
        f"{_at(t)} (an `if`, a comparison or a conversion of a value computed from y or the "
        "parameters read differently there), and a derivative of the solution was asked "
        "for. It would ignore that switch: the switching time moves with y0 and the "
        "parameters, and the jump of the field there adds a term that the sensitivity and "
        "adjoint equations, solved branch by branch, do not have. The solution itself is "
        f"right (without a derivative the solve works as SciPy's). {REMEDY}")


def closure_message(name, t):
    """A field closing over traced values left its recorded branch at time ``t``."""
    return (
        f"{name}: the function closes over traced values and its Python branch on the state "
        f"or the parameters changed {_at(t)} since it was recorded at the initial point; "
        "with those values as parameters it can only be replayed on that branch. Pass them "
        "through args: the solve then follows the branches. A derivative of the solution "
        "would still be refused: it would ignore the switch (its time moves with y0 and the "
        f"parameters, and the jump of the field there adds a term). {REMEDY}")


REMEDY = (
    "For a derivative, write the field smoothly: blend the branches with a smooth step such "
    "as 0.5 * (1 + dnp.tanh((y[0] - 0.5) / width)) (dnp.where(y[0] > 0.5, f1, f2) has the "
    "same jump unless f1 and f2 agree at the switch). Or take the events route: find the "
    "switching time with diffkit.scipy.optimize.root on the solution (SciPy's events give a "
    "first guess), solve up to it with one branch and restart from it with the other. "
    f"See {GUIDE}.")


def _at(t):
    return "during the solve" if t is None else f"at t = {t:.6g}"


# --- branch signatures ------------------------------------------------------------------


class PathTest:
    """The test of a guard of a recording replayed with other values in place of the ones
    it closed over (``ode_field.ReplayField``): whether the recorded read gives the same
    answer, on every example of a batch. Checked through ``concrete_test``, so a staged
    function of the replay keeps it as a guard of its own."""

    __slots__ = ("guard",)

    def __init__(self, guard):
        self.guard = guard

    def __call__(self, value):
        guard = self.guard
        value = np.asarray(value)
        if guard.test is None:
            shape = np.shape(guard.expected)
            if value.shape != shape and value.shape[value.ndim - len(shape):] == shape:
                return all(guard.holds(v) for v in value.reshape((-1,) + shape))
        return bool(guard.holds(value))


def is_branch(guard):
    """Whether ``guard`` is a Python read of a value (``if``, ``int``, an index) or the
    replayed check of one, rather than a rule's check of a value (has it a NaN)."""
    return guard.test is None or isinstance(guard.test, PathTest)


def state_dependent(program, time_inputs=(0,), closed=()):
    """The variables of ``program`` (a ``Recording`` or a ``jit`` graph's program: its
    ``num_inputs`` and ``equations``) computed from an input other than ``time_inputs`` or
    from one of the traced values ``closed`` (constants of a recording, parameters of its
    replay)."""
    depends = {i for i in range(program.num_inputs) if i not in time_inputs}
    closed_ids = {id(v) for v in closed}
    for eqn in program.equations:
        if any(r in depends if type(r) is int else id(r.value) in closed_ids
               for r in eqn.inputs):
            depends.update(eqn.outs)
    return depends


def branch_signature(program, time_inputs=(0,)):
    """The outcomes of ``program``'s branch guards on values computed from the state or the
    parameters (a branch on the time alone switches at a fixed time: no jump term). Two
    calls of a field with different signatures took different branches."""
    depends = state_dependent(program, time_inputs)
    outcome = []
    for guard in program.guards:
        if is_branch(guard) and guard.var in depends:
            expected = guard.expected
            if guard.test is None:
                expected = np.asarray(expected)
                outcome.append((expected.dtype.str, expected.shape, expected.tobytes()))
            else:
                outcome.append(bool(expected))
    return tuple(outcome)


# --- the watch ------------------------------------------------------------------------------


class BranchWatch:
    """The branches a field's staged functions take, per thread: ``solving`` starts a solve
    (forgetting the last calls), optionally ``strict`` (a derivative's solve); ``note``
    receives each call's signature and raises ``BranchSwitchError`` on a change in a strict
    solve."""

    def __init__(self, name):
        self.name = name
        self._local = threading.local()

    def _state(self):
        state = self._local
        if not hasattr(state, "last"):
            state.last, state.strict = {}, 0
        return state

    @contextlib.contextmanager
    def solving(self, strict):
        state = self._state()
        state.last = {}
        state.strict += bool(strict)
        try:
            yield
        finally:
            state.strict -= bool(strict)
            state.last = {}

    @property
    def strict(self):
        return self._state().strict > 0

    def note(self, staged, signature, args):
        """A call of ``staged`` with ``args`` took a branch of ``signature`` (called for
        every call of a watched staged function: kept short)."""
        try:
            last = self._local.last
        except AttributeError:
            last = self._state().last
        seen = last.get(id(staged))
        if seen is signature:
            return
        last[id(staged)] = signature
        if seen is not None and seen != signature and self.strict:
            raise BranchSwitchError(switch_message(self.name, time_of(args)))


def solving(field, strict=False):
    """A context for one solve with ``field`` (a no-op for a field without branches)."""
    watch = getattr(field, "watch", None)
    return contextlib.nullcontext() if watch is None else watch.solving(strict)


def time_of(args):
    """The time of a staged function's call (its first argument), or None for several."""
    t = args[0] if args else None
    return float(t) if t is not None and np.ndim(t) == 0 else None


# --- evaluating a field with branches under transformations -------------------------------


class _Tangents:
    """``fn``'s directional derivative: ``(*primals, *tangents of those at which)``."""

    def __init__(self, fn, num, which):
        self.fn, self.num, self.which = fn, num, tuple(which)

    def __call__(self, *args):
        primals, tangents = list(args[:self.num]), args[self.num:]

        def of_chosen(*chosen):
            return self.fn(*_with(primals, self.which, chosen))

        _, out = api.jvp(of_chosen, tuple(primals[i] for i in self.which), tuple(tangents))
        return out


class _Cotangent:
    """The cotangent of ``fn``'s argument ``i``: ``(*primals, cotangent of the output)``."""

    def __init__(self, fn, i):
        self.fn, self.i = fn, i

    def __call__(self, *args):
        primals, ct = list(args[:-1]), args[-1]

        def of_one(x):
            return self.fn(*_with(primals, (self.i,), (x,)))

        _, pull = api.vjp(of_one, primals[self.i])
        return pull(ct)[0]


def _with(values, which, chosen):
    values = list(values)
    for i, v in zip(which, chosen):
        values[i] = v
    return values


def _differentiable(x):
    return np.dtype(getattr(underlying(x), "dtype", np.float64)).kind in "fc"


def _call_impl(*args, fn):
    out = fn(*args)
    if isinstance(out, Tracer):   # a value of a transformation the recording did not see
        raise ClosureError(
            "the vector field uses a traced value it does not receive as an argument (a "
            "closure) and reads values in Python (branches), so it cannot be recorded with "
            "that value as a parameter. Pass the traced value through args.")
    return np.asarray(out, float)


def _call_jvp(primals, tangents, *, fn):
    out = field_call_p(*primals, fn=fn)
    which = [i for i, (p, d) in enumerate(zip(primals, tangents))
             if not is_zero(d) and _differentiable(p)]
    if not which:
        return out, zeros(shape_of(out))
    tangent = field_call_p(*primals, *[instantiate(tangents[i]) for i in which],
                           fn=_Tangents(fn, len(primals), which))
    return out, tangent


def _call_vjp(i):
    def rule(ct, out, *primals, fn):
        if not _differentiable(primals[i]):
            return None
        return field_call_p(*primals, instantiate(ct), fn=_Cotangent(fn, i))
    return rule


def _call_batch(axis_size, values, batch_axes, *, fn):
    outs = [field_call_p(*[v[b] if ax is not None else v for v, ax in zip(values, batch_axes)],
                         fn=fn) for b in range(axis_size)]
    return stack(outs), 0


def _call_sparsity(args, out, local, **params):
    size = int(np.prod(shape_of(out)))
    return tuple(sr.dense(size, int(np.prod(shape_of(x)))) if sr.differentiable(x) else None
                 for x in args)


# ``field_call_p(*args, fn)`` is ``fn(*args)`` (a float array) computed on plain values: under
# vmap one batch member at a time, its derivatives again calls of ``fn``'s derivatives. Like
# staging's custom_call, it is private to the solvers (not in the registry of primitives:
# its function is the field of one solve); tests/scipy/test_ode_cache.py checks its rules.
field_call_p = Primitive("odefield_call", _call_impl, _call_jvp, EachArgument(_call_vjp),
                         _call_batch, sparsity=_call_sparsity, register=False)


def call_plainly(fn, *args):
    """``fn(*args)`` through ``field_call_p`` when an argument is traced, else directly."""
    if any(isinstance(a, Tracer) for a in args):
        return field_call_p(*args, fn=fn)
    return fn(*args)


_native = threading.local()


@contextlib.contextmanager
def native():
    """While a staged function records a field with branches: the field runs its own
    Python on the staged values (its reads become the graph's guards)."""
    before = getattr(_native, "depth", 0)
    _native.depth = before + 1
    try:
        yield
    finally:
        _native.depth = before


def in_native():
    return getattr(_native, "depth", 0) > 0
