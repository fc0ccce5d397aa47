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
"""

import warnings

import numpy as np

from ..config import config
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
from ..errors import EscapedTracerError
from .ir import Equation, Guard, Recording, custom_call_p


class StagingTracer(PrimalTracer):
    """A staged value: ``primal`` is its concrete value, ``var`` its variable number."""

    __slots__ = ("var",)

    def __init__(self, trace, primal, var):
        self._trace = trace
        self.primal = primal
        self.var = var


class StagingTrace(Trace):
    __slots__ = ("recording", "errstate", "filters")
    name = "jit (staging)"
    escape_hint = ("It was stored outside the jitted function (an outer list, a global, an "
                   "attribute) while jit traced it. Return it from the jitted function "
                   "instead; code that stores values outside runs only when jit traces.")

    def __init__(self, level, recording):
        super().__init__(level)
        self.recording = recording
        self.errstate = np.geterr()   # the caller's: a replay runs under its caller's
        self.filters = warnings.filters   # the caller's warning filters (the list itself)

    def process(self, prim, args, params):
        recording = self.recording
        refs = []
        primals = []
        for x in args:
            if type(x) is StagingTracer and x._trace is self:
                refs.append(x.var)
                primals.append(x.primal)
            else:
                refs.append(recording.input_ref(x, self))
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
        recording.equations.append(Equation(
            prim, params, tuple(refs), out_vars, avals,
            None if errstate == self.errstate else errstate,
            user_location() if config.source_info == "all" else None))
        if prim.traits.must_run or _raises(errstate):
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
