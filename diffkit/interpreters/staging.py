"""Staging: run a function once on concrete values and record every primitive it applies.

A ``StagingTracer`` holds the concrete value it stands for (its ``primal``: an array, a
Python scalar, or a tracer of an enclosing transformation) and the number of its variable
in the recording. Because the value is there, the user's Python control flow on values
still runs while recording; ``StagingTrace.process`` applies the primitive to the primals
(lower levels do the work) and appends one equation to the trace's ``Recording``.

Every place where Python reads a staged value concretely (a truth test, ``int``, ``float``,
an index, a rule choosing its formula from its operand's values) goes through
``diffkit.core.concrete``, which calls ``read_concretely``: the read is kept as a *guard*,
to be checked on replay at the same place, because the recording is only valid while the
value read is the same.

``stage_flat(fun, args)`` is the entry point: it returns the outputs (computed while
recording) and the ``Recording``. ``diffkit.jit`` turns a recording into a ``Graph`` that
lists and replays it.

``stage_linear(fun, primals)`` records the tangent computation of forward mode at
``primals`` (the primals are plain values to the staging trace, the tangents its inputs):
the linear map of ``linearize``. ``linearize_flat`` replays it by binding its equations
(``ir.Replay``); ``diffkit.jit`` compiles the same recording into a graph for a jitted
function. Both fall back on ``LinearMap.recompute`` where a guard fails.
"""

import warnings

import numpy as np

from ..config import config
from ..core.concrete import underlying
from ..core.source_info import user_location
from ..core.trace import (
    PrimalTracer,
    Trace,
    Tracer,
    bind_custom,
    check_custom_outputs,
    new_trace,
    slot_names,
)
from ..core.zeros import Zero, dtype_of, shape_of, tangent_dtype, zero_like
from ..errors import EscapedTracerError, StaleLinearMapError
from ..ops.families import holds_nan, holds_nonfinite
from .forward import jvp_flat
from .ir import (
    Const,
    Equation,
    Guard,
    ReadDiffers,
    Recording,
    Replay,
    custom_call_p,
    keep_constants,
    same_value,
)


class StagingTracer(PrimalTracer):
    """A staged value: ``primal`` is its concrete value, ``var`` its variable number."""

    __slots__ = ("var",)

    def __init__(self, trace, primal, var):
        self._trace = trace
        self.primal = primal
        self.var = var


class StagingTrace(Trace):
    __slots__ = ("recording", "errstate", "raises", "filters", "lines")
    name = "jit (staging)"
    escape_hint = ("It was stored outside the jitted function (an outer list, a global, an "
                   "attribute) while jit traced it. Return it from the jitted function "
                   "instead; code that stores values outside runs only when jit traces.")

    def __init__(self, level, recording):
        super().__init__(level)
        self.recording = recording
        self.errstate = _errstate()   # the caller's: a replay runs under its caller's
        self.raises = _raises(self.errstate)
        self.filters = warnings.filters   # the caller's warning filters (the list itself)
        self.lines = config.source_info == "all"   # keep each equation's line

    def process(self, prim, args, params):
        recording = self.recording
        refs = []
        primals = []
        for x in args:
            if type(x) is StagingTracer and x._trace is self:
                refs.append(x.var)
                primals.append(x.primal)
            else:   # recording.input_ref, inlined: this runs for every staged operation
                if isinstance(x, Tracer):   # a traced value of an enclosing transformation
                    recording.holds_tracers = True
                refs.append(Const(x))
                primals.append(x)
        try:
            out = prim(*primals, **params)
        except Exception as err:
            self.recording.raised.append(f"{type(err).__name__} from {prim.name}")
            raise
        outs = out if prim.multiple_results else (out,)
        return self._record(prim, params, refs, outs, prim.multiple_results)

    def process_custom(self, call, args):
        # The call is one equation that binds it again on replay, so that transformations
        # of the replayed graph still use its rules.
        refs = [x.var if type(x) is StagingTracer and x._trace is self
                else self.recording.input_ref(x, self) for x in args]
        primals = [x.primal if type(x) is StagingTracer and x._trace is self else x
                   for x in args]
        try:
            outs = tuple(bind_custom(call, primals))
        except Exception as err:
            self.recording.raised.append(f"{type(err).__name__} from {call.name}")
            raise
        check_custom_outputs(self, call, outs)
        return self._record(custom_call_p, {"call": call}, refs, outs, True)

    def _record(self, prim, params, refs, outs, multiple):
        recording = self.recording
        if multiple:
            out_vars = recording.new_vars(outs)
            avals = tuple(recording.avals[v] for v in out_vars)
        else:   # the common case, without the generators
            var = recording.new_var(outs[0])
            out_vars, avals = (var,), (recording.avals[var],)
        errstate = _errstate()
        if errstate is self.errstate:   # the common case: the caller's handling
            own, raises = None, self.raises
        else:
            own = None if errstate == self.errstate else errstate
            raises = _raises(errstate)
        recording.equations.append(Equation(
            prim, params, tuple(refs), out_vars, avals, own,
            user_location() if self.lines else None))
        if raises or prim.traits.must_run:
            recording.effects.extend(out_vars)
        if warnings.filters is not self.filters and _warnings_raise() \
                and not recording.raised:
            # inside warnings.catch_warnings() with an "error" filter: a warning would be an
            # exception here, but a replay runs under the caller's filters
            recording.raised.append(f"warnings made errors around {prim.name}")
        if not multiple:
            return StagingTracer(self, outs[0], out_vars[0])
        return tuple(StagingTracer(self, o, v) for o, v in zip(outs, out_vars))

    def read_concretely(self, tracer, value, test):
        """Keep a concrete read of ``tracer`` as a guard (``value`` is the value read, or
        ``test``'s answer on it)."""
        if not self.active:
            raise EscapedTracerError(
                f"A value staged by jit (shape {tracer.shape}) was read after the jitted "
                f"function returned. {self.escape_hint}")
        expected = value if test is not None else np.array(value, copy=True)
        self.recording.guards.append(
            Guard(tracer.var, test, expected, len(self.recording.equations), user_location()))


# --- the entry point ---------------------------------------------------------------------


def stage_flat(fun, args, *, name="jit"):
    """Run ``fun`` on the flat list ``args`` while recording it.

    ``fun(*inputs)`` takes one value per argument and returns a list (or tuple) of outputs.
    ``args`` are arrays, Python scalars or tracers of enclosing transformations; each gets
    an input variable. Returns ``(outputs, recording)``: the outputs as computed now
    (plain values, or tracers of enclosing transformations) and the ``Recording``.
    """
    recording = Recording(args)
    with new_trace(StagingTrace, recording) as trace:
        inputs = [StagingTracer(trace, x, i) for i, x in enumerate(args)]
        values = []
        for o in fun(*inputs):
            if type(o) is StagingTracer and o._trace is trace:
                recording.outputs.append(o.var)
                values.append(o.primal)
            else:
                if isinstance(o, StagingTracer) and not o._trace.active:
                    raise EscapedTracerError(
                        f"{name} would return a value (shape {o.shape}) staged by an earlier "
                        "jit trace that has already returned: it was kept outside the "
                        "function. Return values computed from this call's arguments.")
                recording.outputs.append(recording.input_ref(o, trace))
                values.append(o)
        written = [(i, x) for i, x in enumerate(inputs) if x._trace is trace and x.var != i]
        recording.writes = [(i, x.var) for i, x in written]
        recording.written = [x.primal for _, x in written]   # for the caller: see write_back
    return values, recording


# --- linear maps (linearize) ----------------------------------------------------------------


class LinearMap:
    """The tangent map of ``fun`` at ``primals``, recorded once (``stage_linear``).

    ``recording`` has one input variable per primal (its tangent: recorded as ones of the
    primal's derivative dtype) and one output per output of ``fun`` (its tangent; an array
    of zeros where ``zero_out`` says the tangent is a symbolic zero). Its constants are
    copies taken at the call (``ir.keep_constants``). ``primals_out`` are ``fun``'s
    outputs at ``primals``.

    The tangents were recorded as ones: where a rule reads a tangent's values (the 0 x inf
    rule's "does the product hold a NaN"), the read is a guard, and a tangent that reads
    differently (a zero meeting an infinite derivative, a NaN) is answered by
    ``recompute``, which runs ``fun`` again at the primals of the call."""

    def __init__(self, fun, kept, primals_out, recording, zero_out, name):
        self.fun = fun
        self.primals = kept            # the primals' values at the call
        self.primals_out = primals_out
        self.recording = recording
        self.zero_out = zero_out
        self.name = name
        self._expected = [np.array(underlying(o)) for o in primals_out]   # copies
        self._replay = None

    def __call__(self, tangents):
        """One tangent per output (a symbolic ``Zero`` where ``zero_out``) for ``tangents``,
        one per primal: the recording replayed, or ``recompute`` where it does not apply."""
        if self.recording.raised:   # a path chosen by a caught exception: not replayable
            return self.recompute(tangents)
        replay = self._replay
        if replay is None:
            replay = self._replay = Replay(self.recording, (holds_nan, holds_nonfinite))
        try:
            values = replay(tangents)
        except ReadDiffers:
            return self.recompute(tangents)
        return [zero_like(p) if zero else _owned(v)
                for p, zero, v in zip(self.primals_out, self.zero_out, values)]

    def recompute(self, tangents):
        """The tangents of the outputs computed by forward mode, ``fun`` running again at the
        primals of the call (on copies: a function that writes into its arguments does not
        change them for the next call). ``StaleLinearMapError`` if ``fun`` no longer gives
        the outputs it gave then (it reads an array written since, or draws randomness)."""
        primals = [p.copy() if type(p) is np.ndarray else p for p in self.primals]
        outs, tangents_out = jvp_flat(self.fun, primals, list(tangents), name=self.name)
        for now, then in zip(outs, self._expected):
            if not same_value(np.asarray(underlying(now)), then):
                raise StaleLinearMapError(
                    f"the linear map made by {self.name} had to run the function again for "
                    "these tangents (they read differently from the recorded ones: a zero tangent "
                    "meeting an infinite derivative, or a NaN), and the function no longer "
                    "computes the outputs it computed at the call: it reads an array written "
                    "in place since, or draws random numbers. Call linearize again at the "
                    "new values, or pass such arrays as arguments.")
        return tangents_out


def _owned(value):
    """``value``, copied if it is a read-only constant of the recording (the caller owns
    what it receives)."""
    if type(value) is np.ndarray and not value.flags.writeable:
        return value.copy()
    return value


def stage_linear(fun, primals, *, name="linearize"):
    """Evaluate ``fun`` at ``primals`` and record its tangent map: a ``LinearMap``.

    ``fun`` takes one value per primal and returns a list (or tuple) of outputs; the
    primals are plain values or tracers of enclosing transformations (then the recording
    holds them as constants, and the map is valid while they are). Forward mode runs with
    staged tangents: the primal computation happens now, and only the operations on
    tangents (nondifferentiable ones such as masks included, so a replay computes them
    from its own tangents) are recorded.
    """
    # This replaced the reverse tape's own recorder (NaN tangents, every mask recorded),
    # measured by A/B in one process: a 40-operation chain on 10^4 entries records in 4.9
    # instead of 15 ms and replays in 1.3 instead of 7.9 ms; a 64x64 4-layer MLP 1.0/0.4
    # instead of 2.8/1.4 ms; a 1,000-operation scalar loop records 12% slower (10.5
    # against 9.4 ms: an Equation per operation) but replays in 1.2 against 1.8 ms, ahead
    # from the third replay on; how often a map is replayed is not known when recording.
    kept = [p.copy() if type(p) is np.ndarray else p for p in primals]
    primals_out, zero_out = [], []

    def tangents_of(*tangents):
        outs, tangents_out = jvp_flat(fun, primals, list(tangents), name=name)
        primals_out.extend(outs)
        zero_out.extend(type(t) is Zero for t in tangents_out)
        return [_zeros(t) if type(t) is Zero else t for t in tangents_out]

    ones = [np.ones(shape_of(p), tangent_dtype(dtype_of(p))) for p in primals]
    _, recording = stage_flat(tangents_of, ones, name=name)
    keep_constants(recording)
    return LinearMap(fun, kept, primals_out, recording, zero_out, name)


def _zeros(zero):
    """A symbolic zero as a read-only array (a constant output nothing writes into)."""
    value = np.zeros(zero.shape, zero.dtype)
    value.flags.writeable = False
    return value


def linearize_flat(fun, primals, *, name="linearize"):
    """Evaluate ``fun`` at ``primals`` and record the linear map from input tangents to
    output tangents once; return ``(primals_out, jvp_fn)``.

    ``fun`` takes one value per primal and returns a list (or tuple) of outputs.
    ``jvp_fn(tangents)`` takes one tangent per primal, of its shape and derivative dtype,
    and returns one tangent per output (a symbolic ``Zero`` where the output does not depend
    on the primals) by replaying the recording (``LinearMap``): ``fun`` runs again only for
    tangents the recording does not fit. The recording keeps copies of the arrays it shares
    with the caller, so later writes into them do not change the map.
    """
    linear = stage_linear(fun, primals, name=name)
    return linear.primals_out, linear


# NumPy 2 keeps its floating-point error handling in a context variable whose value is
# replaced, never changed, when the handling changes: one identity test per equation
# instead of np.geterr() (which builds a dict). NumPy 1.x: np.geterr() every time.
_ERRSTATE_VAR = getattr(getattr(getattr(np, "_core", None), "_ufunc_config", None),
                        "_extobj_contextvar", None)
_last_errstate = (None, None)   # (the context variable's value, np.geterr() under it)


def _errstate():
    """``np.geterr()``, cheaply where the handling has not changed since the last call
    (the pair is replaced as a whole, so threads never see one half of another's)."""
    global _last_errstate
    if _ERRSTATE_VAR is None:
        return np.geterr()
    token = _ERRSTATE_VAR.get()
    last = _last_errstate
    if token is not last[0]:
        last = _last_errstate = (token, np.geterr())
    return last[1]


_last_raises = (None, False)   # (an errstate dict, whether it raises): one look per dict


def _raises(errstate):
    """Whether NumPy's error handling ``errstate`` (``_errstate()``'s dict) raises."""
    global _last_raises
    seen, raises = _last_raises
    if seen is not errstate:
        raises = "raise" in errstate.values()
        _last_raises = (errstate, raises)
    return raises


def _warnings_raise():
    return any(f[0] == "error" for f in warnings.filters)


# --- writes into arguments ---------------------------------------------------------------


def write_back(target, value):
    """NumPy's semantics for an argument the function wrote into in place (``x /= n``): the
    caller's ``target`` takes the final ``value``. An array is written (a read-only one
    raises NumPy's error, as the write in the function would); a traced value of an
    enclosing transformation takes over the new value's state, as the in-place write does
    without staging; a Python or NumPy scalar is immutable and stays as it is."""
    if type(target) is np.ndarray:
        target[...] = value
    elif isinstance(target, Tracer):
        trace = target._trace
        if not (isinstance(value, Tracer) and value._trace is trace):
            value = trace.lift(value)
        for name in slot_names(type(target)):
            object.__setattr__(target, name, getattr(value, name))


def aliased_write(leaves, writes):
    """The pair ``(i, j)`` of argument leaves where ``i`` is written into (``writes``:
    ``(i, variable)``) and shares memory with another array ``j``, or None. A recording
    sees its arguments as separate values, so it cannot replay NumPy's result there."""
    for i, _ in writes:
        target = leaves[i]
        if type(target) is not np.ndarray:
            continue
        for j, other in enumerate(leaves):
            if j != i and isinstance(other, np.ndarray) and np.may_share_memory(target, other):
                return i, j
    return None
