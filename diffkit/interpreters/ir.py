"""The staged program: what jit and ``make_graph`` record, optimise, list and replay.

A ``Recording`` is what one staging run saw (``interpreters/staging.py`` makes it): the
``Equation``s in execution order over numbered variables (0 .. n-1 are the arguments),
with ``Const`` inputs for values that are not variables, the ``Guard``s (values Python read
while recording, to be read the same on replay), and the ``avals`` (shape, dtype) of
every variable. A ``Program`` is the recording as the passes change it
(``diffkit/jit/passes.py``); it keeps the def-use index the passes ask: ``maker(v)``, the
equation computing ``v``, and ``readers(v)``, the equations reading it, in order, built on
first use after the equations change.

Each equation knows its primitive (whose ``traits`` say what a pass may assume), its
parameters, and, when kept, the user's line that applied it (``where``); each guard the
line that read its value.

``Replay`` evaluates a recording on new inputs by binding each equation's primitive (so a
transformation of the replay interprets it), checking each guard as its value is computed.
"""

import numpy as np

from ..core.concrete import concrete_test, concrete_value
from ..core.primitive import JointVjp, Primitive, Traits
from ..core.trace import Tracer, bind_custom, read_watchers
from ..core.zeros import dtype_of, shape_of


def _custom_call_impl(*args, call, **_):
    return tuple(call.fun(*args))


def _custom_pullback(cotangents, outs, *primals, wanted, call, saved):
    """The cotangents of a custom call's arguments: the user's pullback, run once per sweep
    for all of them (a joint rule: the engine hands every traced argument its own)."""
    return tuple(call.pullback(saved, primals, cotangents))


#: A function with user-defined rules (``custom_jvp``, ``custom_vjp``, ``checkpoint``) as one
#: operation. A staged program records it as an equation (``params``: the ``call``): a plain
#: replay calls the function, a replay under a transformation binds the call again
#: (``bind_equation``) so that the transformation uses its rules. The reverse tape
#: records it as an entry (``params``: the ``call`` and what its forward pass ``saved``)
#: whose pullback is the user's.
custom_call_p = Primitive("custom_call", _custom_call_impl, vjp=JointVjp(_custom_pullback),
                          multiple_results=True, vjp_ignores=("out",), register=False,
                          traits=Traits(user_function=lambda params: params["call"]))


def bind_equation(prim, args, params):
    """An equation's primitive applied to ``args`` through the transformations in force:
    a primitive that runs the user's function with its own rules (``traits.
    user_function``) binds that function, so its rules, not the primitive's, apply."""
    user_function = prim.traits.user_function
    if user_function is not None:
        return tuple(bind_custom(user_function(params), list(args)))
    return prim(*args, **params)


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
        if isinstance(x, Tracer) and x._trace is trace:   # a variable of this recording
            return x.var
        if isinstance(x, Tracer):
            self.holds_tracers = True
        return Const(x)

    def new_var(self, value):
        """A new variable holding ``value``'s shape and dtype: its number."""
        if type(value) is np.ndarray or isinstance(value, np.generic):
            self.avals.append((value.shape, value.dtype))   # as shape_of/dtype_of, sooner
            self.numpy.append(True)
        else:
            self.avals.append((shape_of(value), dtype_of(value)))
            self.numpy.append(False)
        return len(self.avals) - 1

    def new_vars(self, values):
        return tuple(self.new_var(v) for v in values)


class Program:
    """What a replay runs: ``equations`` over variables (ints; 0 .. num_inputs-1 are the
    arguments), ``outputs`` (variables or ``Const``s), ``guards``, and the recording's
    ``avals`` and ``numpy`` (see ``Recording``)."""

    def __init__(self, recording):
        self.num_inputs = recording.num_inputs
        self.equations = list(recording.equations)
        self.outputs = list(recording.outputs)
        self.guards = list(recording.guards)
        self.avals = recording.avals
        self.numpy = recording.numpy

    def def_use(self):
        """The def-use index of the equations as they are now (``DefUse``)."""
        return DefUse(self.equations)


class DefUse:
    """Who makes and who reads each variable of a list of equations, from one sweep.

    ``maker(v)``: the index of the equation computing ``v`` (None for an argument);
    ``readers(v)``: the indices of the equations reading ``v``, ascending, one entry per
    read (an equation reading ``v`` twice appears twice); ``reads(v)``: how many reads;
    ``next_reader(v, i)``: the first reader after equation ``i`` (None if none). The index
    describes the equations it was made from: a pass that changes them makes a new one."""

    __slots__ = ("_maker", "_readers")

    def __init__(self, equations):
        maker, readers = {}, {}
        for i, eqn in enumerate(equations):
            for ref in eqn.inputs:
                if type(ref) is int:
                    found = readers.get(ref)
                    if found is None:
                        readers[ref] = [i]
                    else:
                        found.append(i)
            for v in eqn.outs:
                maker[v] = i
        self._maker, self._readers = maker, readers

    def maker(self, v):
        return self._maker.get(v)

    def readers(self, v):
        return self._readers.get(v, ())

    def reads(self, v):
        return len(self._readers.get(v, ()))

    def next_reader(self, v, i):
        for j in self._readers.get(v, ()):
            if j > i:
                return j
        return None


# --- replaying a recording by binding its primitives ----------------------------------------


class ReadDiffers(Exception):
    """A value a recording read (its ``guard``) reads differently on a replay: the recording
    does not apply to these inputs. ``unverifiable``: the value could not be read at all
    (batched under vmap, it stands for many values)."""

    def __init__(self, guard, unverifiable=False):
        super().__init__(guard.describe() + guard.read_at())
        self.guard = guard
        self.unverifiable = unverifiable


def check_guards(guards, value):
    """Raise ``ReadDiffers`` unless each of ``guards`` (all on one variable) holds on
    ``value``: a plain value, or a tracer of an enclosing transformation, whose read goes
    through ``diffkit.core.concrete`` (an enclosing recording keeps it as its own guard)."""
    for guard in guards:
        if not isinstance(value, Tracer):
            ok = guard.holds(value)
        elif guard.test is not None:
            ok = concrete_test(value, guard.test) == guard.expected
        else:
            concrete = concrete_value(value)
            if concrete is None:
                raise ReadDiffers(guard, unverifiable=True)
            ok = guard.holds(concrete)
        if not ok:
            raise ReadDiffers(guard)


def guards_by_var(guards):
    """``{variable: [its guards, in order]}``."""
    found = {}
    for guard in guards:
        found.setdefault(guard.var, []).append(guard)
    return found


class Replay:
    """``Replay(recording)(inputs)``: the recording's outputs (a list) on new ``inputs``, one
    per input variable, plain values or tracers of enclosing transformations.

    Each equation binds its primitive (a custom call binds the call, so a transformation
    uses its rules) under the NumPy error handling it was recorded with, and each guard is
    checked as soon as its variable is computed (``ReadDiffers`` when one fails; nothing is
    returned then). Only the equations that reach an output, a guard or an effect run: a
    value the function computed and dropped is not computed again. ``Const`` outputs are
    returned as they are (a caller handing them out copies them).

    ``local_tests``: tests of guards that decide only how a rule computes its own result
    from the value read (the 0 x inf rule's NaN checks, ``ops.families``): such a guard on
    a value that reaches no output and no other guard cannot change what the replay
    returns, and is dropped with the value. Every other guard is kept (a branch of the
    user's code decides which operations follow it)."""

    __slots__ = ("steps", "outputs", "size", "checks", "holds_tracers")

    def __init__(self, recording, local_tests=()):
        needed = {v for v in recording.outputs if type(v) is int}
        needed.update(g.var for g in recording.guards if g.test not in local_tests)
        needed.update(recording.effects)
        live = live_equations(recording.equations, needed)
        checks = self.checks = guards_by_var(
            [g for g in recording.guards if g.var in needed])
        # one tuple per equation, read by position in the loop: (primitive, inputs,
        # parameters, output variable or None for several, outputs, errstate, checked)
        self.steps = [
            (eqn.prim, eqn.inputs, eqn.params,
             None if eqn.prim.multiple_results else eqn.outs[0], eqn.outs, eqn.errstate,
             any(v in checks for v in eqn.outs))
            for eqn in live]
        self.outputs = list(recording.outputs)
        self.size = len(recording.avals)
        self.holds_tracers = recording.holds_tracers

    def __call__(self, inputs):
        checks = self.checks
        env = list(inputs)
        env.extend([None] * (self.size - len(env)))
        if checks:
            for var in range(len(inputs)):
                if var in checks:
                    check_guards(checks[var], env[var])
        # nothing traced (inputs or constants): every value is plain, and a primitive's
        # implementation runs directly, as bind would run it
        plain = not self.holds_tracers and not any(isinstance(x, Tracer) for x in inputs)
        prim = None
        try:
            for prim, refs, params, out, outs, errstate, checked in self.steps:
                args = [env[r] if type(r) is int else r.value for r in refs]
                if errstate is not None:
                    with np.errstate(**errstate):
                        value = bind_equation(prim, args, params)
                elif plain and prim.traits.user_function is None:
                    value = prim.impl(*args, **params)
                else:
                    value = bind_equation(prim, args, params)
                if out is not None:
                    env[out] = value
                    if checked:
                        check_guards(checks[out], value)
                else:
                    for var, v in zip(outs, value):
                        env[var] = v
                        if checked and var in checks:
                            check_guards(checks[var], v)
        except Exception as error:
            if plain and type(error) is not ReadDiffers:   # as bind reports one
                for watcher in read_watchers.active:
                    watcher(None, error, prim)
            raise
        return [env[r] if type(r) is int else r.value for r in self.outputs]


def live_equations(equations, needed):
    """The equations (in order) that compute a variable of ``needed`` (a set, extended in
    place with every variable they read) or a value one of them reads."""
    live = []
    for eqn in reversed(equations):
        outs = eqn.outs
        if outs[0] in needed if len(outs) == 1 else any(v in needed for v in outs):
            live.append(eqn)
            for r in eqn.inputs:
                if type(r) is int:
                    needed.add(r)
    live.reverse()
    return live


def keep_constants(recording):
    """Make ``recording`` independent of arrays its caller can still write into.

    Every constant array (an equation's input, an output, an array among the parameters)
    that could change after this call (a writeable array, or a view of another array) is
    replaced by a read-only copy taken now, one copy per array. A recording cannot tell an
    array its function computed from one the caller holds (a closed-over weight, an input,
    an output the caller received), so all are copied, as a tape that outlives its call
    keeps them. Read-only arrays that own their memory (shared constants) are kept as they
    are. The recording is changed in place."""
    copies = {}

    def kept(value):
        if type(value) is not np.ndarray or \
                (value.base is None and not value.flags.writeable):
            return value
        pair = copies.get(id(value))
        if pair is None:   # the original stays referenced with its copy: ids stay unique
            copy = value.copy()
            copy.flags.writeable = False
            pair = copies[id(value)] = (value, copy)
        return pair[1]

    def kept_ref(ref):
        if type(ref) is int or type(ref.value) is not np.ndarray:
            return ref
        value = kept(ref.value)
        return ref if value is ref.value else Const(value)

    for eqn in recording.equations:
        for ref in eqn.inputs:   # most equations read no constant array: left as they are
            if type(ref) is Const and type(ref.value) is np.ndarray:
                eqn.inputs = tuple(map(kept_ref, eqn.inputs))
                break
        if eqn.params:
            eqn.params = _kept_params(eqn.params, kept)
    recording.outputs = [kept_ref(ref) for ref in recording.outputs]


def _kept_params(params, kept):
    """``params`` with its arrays (also inside tuples and lists) passed through ``kept``,
    copied only when something changes."""
    changed = {}
    for name, value in params.items():
        if type(value) is np.ndarray:
            new = kept(value)
        elif isinstance(value, (tuple, list)) and any(type(v) is np.ndarray for v in value):
            new = type(value)(kept(v) for v in value)
        else:
            continue
        if new is not value:
            changed[name] = new
    return {**params, **changed} if changed else params
