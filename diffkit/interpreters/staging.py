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
from ..core.primitive import Traits
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
from ..core.zeros import dtype_of, shape_of
from ..errors import EscapedTracerError


class StagingTracer(PrimalTracer):
    """A staged value: ``primal`` is its concrete value, ``var`` its variable number."""

    __slots__ = ("var",)

    def __init__(self, trace, primal, var):
        self._trace = trace
        self.primal = primal
        self.var = var


class Const:
    """A value that is not a staged variable (an array built without the inputs, a closed-
    over array, a Python number), used as an equation's input or as an output."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


class Equation:
    """One recorded primitive application: ``outs = prim(*inputs, **params)``.

    ``inputs`` holds variable numbers (ints) and ``Const``s; ``outs`` the variable numbers
    of the results (one per result, a tuple even for one); ``avals`` their
    ``(shape, dtype)``. ``errstate`` is NumPy's floating-point error handling the
    primitive ran under when a rule set its own (``np.errstate``), else None: a replay
    sets it again, so it warns exactly where the function does. ``where`` is the user's
    line that applied the primitive (a ``core.source_info.Location``; None for an equation
    a pass made)."""

    __slots__ = ("prim", "params", "inputs", "outs", "avals", "errstate", "where")

    def __init__(self, prim, params, inputs, outs, avals, errstate=None, where=None):
        self.prim = prim
        self.params = params
        self.inputs = inputs
        self.outs = outs
        self.avals = avals
        self.errstate = errstate
        self.where = where


class Guard:
    """A concrete read made while recording: the recording is valid only while
    ``test(value of var)`` (or the whole value when ``test`` is None) equals ``expected``.
    ``at`` is the number of equations recorded before the read, ``where`` the user's line
    that read it (a ``core.source_info.Location``, or None)."""

    __slots__ = ("var", "test", "expected", "at", "where")

    def __init__(self, var, test, expected, at, where=None):
        self.var = var
        self.test = test
        self.expected = expected
        self.at = at
        self.where = where

    def holds(self, value):
        """Whether the read gives the same answer on ``value`` (a plain value)."""
        if self.test is not None:
            return self.test(value) == self.expected
        return same_value(value, self.expected)

    def describe(self):
        if self.test is not None:
            return f"{getattr(self.test, '__name__', 'test')}(v{self.var}) == {self.expected!r}"
        shown = np.array2string(self.expected, threshold=6) if self.expected.ndim else \
            repr(self.expected.item())
        return f"v{self.var} == {shown}"

    def read_at(self):
        """Where the value was read, for a message: ``" at file:line (in f): code"``, or
        '' where the line is unknown."""
        return "" if self.where is None else f" at {self.where}"


def same_value(value, expected):
    """Whether ``value`` has ``expected``'s shape, dtype and entries (NaN equal to NaN, 0.0
    and -0.0 different: Python may read the sign)."""
    value = np.asarray(value)
    if value.shape != expected.shape or value.dtype != expected.dtype:
        return False
    if value.dtype.kind not in "fc":
        return bool(np.array_equal(value, expected))
    if not np.array_equal(value, expected, equal_nan=True):
        return False
    return bool(np.array_equal(np.signbit(value.real), np.signbit(expected.real))
                and np.array_equal(np.signbit(value.imag), np.signbit(expected.imag)))


def is_numpy(x):
    """Whether ``x`` is a NumPy array (not a subclass) or a NumPy scalar."""
    return type(x) is np.ndarray or isinstance(x, np.generic)


class Recording:
    """What one staging run recorded: ``num_inputs`` input variables (0 .. n-1), the
    ``equations`` in execution order, the ``outputs`` (variable numbers or ``Const``s),
    the ``guards`` and the ``avals`` (shape, dtype) of every variable. ``numpy[v]`` says
    whether variable ``v`` held a NumPy array or scalar (not a Python number or a tracer)
    when it was recorded: a replay may then use NumPy's operators on it.

    ``holds_tracers`` is set when a constant is a traced value of an enclosing
    transformation: such a recording is valid for this one call only.

    What a replay cannot see in the equations alone:

    - ``raised``: the exceptions (``"LinAlgError from cholesky"``) that primitives raised
      while recording and the function itself caught (a ``try``/``except`` around
      ``np.linalg.cholesky``, a ``FloatingPointError`` under ``np.errstate``), or that
      operations would have raised for warnings the function made errors itself
      (``warnings.catch_warnings`` with an ``"error"`` filter). The path the function took
      depends on them, and no guard can check that an operation which did not run would
      not raise now: such a recording must not be replayed.
    - ``writes``: ``(input variable, variable)`` for each argument the function wrote into
      in place (``x /= norm``): the argument's final value. NumPy's semantics are that
      the caller's array holds it afterwards.
    - ``effects``: variables whose equation must run even where nothing reads its result,
      because running it may raise (a primitive marked ``may_raise``, such as a Cholesky
      factorisation used as a positive-definiteness test, or any operation recorded under
      an ``np.errstate`` that raises)."""

    def __init__(self, inputs):
        self.num_inputs = len(inputs)
        self.avals = [(shape_of(x), dtype_of(x)) for x in inputs]
        self.numpy = [is_numpy(x) for x in inputs]
        self.equations = []
        self.outputs = []
        self.guards = []
        self.holds_tracers = False
        self.raised = []
        self.writes = []
        self.written = []
        self.effects = []

    def input_ref(self, x, trace):
        """The reference to argument ``x`` of a primitive: its variable, or a ``Const``."""
        if type(x) is StagingTracer and x._trace is trace:
            return x.var
        if isinstance(x, Tracer):
            self.holds_tracers = True
        return Const(x)

    def new_vars(self, values):
        first = len(self.avals)
        self.avals.extend((shape_of(v), dtype_of(v)) for v in values)
        self.numpy.extend(is_numpy(v) for v in values)
        return tuple(range(first, len(self.avals)))


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
        out_vars = recording.new_vars(outs)
        errstate = _errstate()
        recording.equations.append(Equation(
            prim, params, tuple(refs), out_vars, tuple(recording.avals[v] for v in out_vars),
            None if errstate == self.errstate else errstate,
            user_location() if config.source_info == "all" else None))
        if prim.traits.may_raise or not prim.traits.pure \
                or "raise" in errstate.values():
            recording.effects.extend(out_vars)
        if warnings.filters is not self.filters and _warnings_raise() \
                and not recording.raised:
            # inside warnings.catch_warnings() with an "error" filter: a warning would be an
            # exception here, but a replay runs under the caller's filters
            recording.raised.append(f"warnings made errors around {prim.name}")
        wrapped = tuple(StagingTracer(self, o, v) for o, v in zip(outs, out_vars))
        return wrapped if multiple else wrapped[0]

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


class CustomCallPrimitive:
    """The equation of a function with user-defined rules (``custom_jvp``, ``custom_vjp``,
    ``checkpoint``): plain replay calls the function, a replay under a transformation
    binds the call so that the transformation uses its rules."""

    name = "custom_call"
    multiple_results = True
    nondiff = False
    traits = Traits()

    @staticmethod
    def impl(*args, call):
        return tuple(call.fun(*args))

    @staticmethod
    def bind(args, params):
        return tuple(bind_custom(params["call"], list(args)))


custom_call_p = CustomCallPrimitive()


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
