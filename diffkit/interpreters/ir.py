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
"""

import numpy as np

from ..core.primitive import JointVjp, Primitive
from ..core.trace import Tracer, bind_custom
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
#: (``bind_custom_call``) so that the transformation uses its rules. The reverse tape
#: records it as an entry (``params``: the ``call`` and what its forward pass ``saved``)
#: whose pullback is the user's.
custom_call_p = Primitive("custom_call", _custom_call_impl, vjp=JointVjp(_custom_pullback),
                          multiple_results=True, vjp_ignores=("out",), register=False)


def bind_custom_call(args, params):
    """A staged custom call's outputs on ``args``, through the transformations in force."""
    return tuple(bind_custom(params["call"], list(args)))


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
        self.avals.append((shape_of(value), dtype_of(value)))
        self.numpy.append(is_numpy(value))
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
