"""Levels, tracers and ``bind``: how one primitive call finds the engine that interprets it.

Every transformation call (``jvp``, ``vjp``/``grad``, ``vmap``) creates a *trace* with the
next level and pushes it on a thread-local stack for as long as the user's function runs.
The traced values it hands to the function are *tracers* that remember their trace.

``bind(prim, *args)`` looks at the tracers among the arguments and lets the trace with the
highest level, the innermost transformation, interpret the primitive. That trace unwraps its
own tracers and binds the primitive again on the unwrapped values, so the next-outer
transformation sees it in turn, down to level 0 where ``prim.impl`` runs plain NumPy.

Why levels prevent perturbation confusion: in ``grad(lambda x: grad(lambda y: x * y)(x))``
the outer ``x`` is a level-1 tracer and ``y`` a level-2 one. The inner trace sees ``x`` as
a constant (a lower-level value it does not own), so the inner derivative is ``x``, not
``2x``; the outer trace then differentiates that.
"""

import sys
import threading

from ..errors import EscapedTracerError, TracerConversionError
from .zeros import dtype_of, shape_of


class _TraceStack(threading.local):
    def __init__(self):
        self.traces = []


_stack = _TraceStack()


class Trace:
    """One running transformation. Subclasses implement ``process``."""

    __slots__ = ("level", "active")
    name = "transformation"
    #: Whether the transformation pushes derivatives forward through the primitives'
    #: rules (forward mode, Taylor mode): a rule it runs is itself differentiated, so a
    #: primitive whose rules suffice only once (first order) must take its general route.
    pushes_forward = False
    escape_hint = ("Values computed inside a transformed function must be returned from it "
                   "(or through has_aux=True), not stored in outside variables and used later.")

    def __init__(self, level):
        self.level = level
        self.active = True

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for name in ("process", "process_custom"):
            method = cls.__dict__.get(name)
            if method is not None:
                _PROCESS_CODES.add(method.__code__)

    def process(self, prim, args, params):
        """Interpret ``prim`` on ``args`` (own tracers, lower-level values, constants)."""
        raise NotImplementedError

    def lift(self, value):
        """A tracer of this trace standing for ``value``, a constant to it (a plain value or
        a lower-level tracer): what an in-place write ``y[i] = v`` on one of this trace's
        tracers becomes when the new value carries no derivative of this trace."""
        raise NotImplementedError(
            f"an in-place write into a value traced by a {self.name} transformation is not "
            "supported here; build the new value with y.at[index].set(v) and use it instead")

    def process_custom(self, call, args):
        """Interpret a call of a function with user-defined derivative rules (a
        ``CustomJVPCall`` or ``CustomVJPCall`` from ``diffkit.ops.control``) on the flat
        array arguments ``args``; returns a tuple of outputs."""
        raise NotImplementedError

    def __repr__(self):
        return f"<{self.name} trace, level {self.level}>"


class new_trace:  # noqa: N801 (used like a function: ``with new_trace(...) as trace``)
    """Push a new trace of ``trace_type`` for the duration of the block; finish it after.

    A class rather than a ``@contextmanager`` generator: every transformation call enters
    one, and the generator machinery costs more than the work itself."""

    __slots__ = ("trace_type", "args", "trace")

    def __init__(self, trace_type, *args):
        self.trace_type = trace_type
        self.args = args

    def __enter__(self):
        stack = _stack.traces
        self.trace = self.trace_type(len(stack) + 1, *self.args)
        stack.append(self.trace)
        return self.trace

    def __exit__(self, *exc_info):
        _stack.traces.pop()
        self.trace.active = False


def current_level():
    return len(_stack.traces)


def innermost_trace():
    """The trace of the innermost transformation running now, or None."""
    traces = _stack.traces
    return traces[-1] if traces else None


def lifting_trace():
    """The trace a constant made now becomes a value of (``Trace.lift``): the innermost one
    running user code. A trace busy interpreting a primitive (its ``process`` is on the
    call stack) is skipped: its rules compute on the values below it, and a constant lifted
    into it there would carry it into a derivative it is computing (perturbation
    confusion). Reading the call stack costs microseconds; it is done only when a constant
    is made, never per operation."""
    traces = _stack.traces
    if not traces:
        return None
    busy = set()
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code in _PROCESS_CODES:
            busy.add(id(frame.f_locals.get("self")))
        frame = frame.f_back
    for i in range(len(traces) - 1, -1, -1):
        if id(traces[i]) not in busy:
            return traces[i]
    return None


_PROCESS_CODES = set()   # the code of every Trace subclass's process and process_custom


class Tracer:
    """A value traced by one transformation. Subclasses hold the value and its derivative
    information; the NumPy operators and methods are attached by ``diffkit.ops``."""

    # ``__weakref__``: the NumPy protocol floor follows which traced values are views of
    # which (weakly, so the bookkeeping never keeps a value alive), for in-place writes.
    __slots__ = ("_trace", "__weakref__")
    __array_priority__ = 1000

    @property
    def shape(self):
        raise NotImplementedError

    @property
    def dtype(self):
        raise NotImplementedError

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    def __len__(self):
        shape = self.shape
        if not shape:
            raise TypeError("len() of unsized object (a 0-d traced array)")
        return shape[0]

    # Showing a value is for the person debugging: the value under the tracers is read
    # without being reported as a concrete read (no jit guard, no sparsity branch), and a
    # failure to show it never raises.
    def __repr__(self):
        try:
            value, by, batch = shown_value(self)
        except Exception:   # noqa: BLE001 (repr must not fail while debugging)
            value = None
        if value is None:
            return f"{type(self).__name__}(shape={self.shape}, dtype={self.dtype}, " \
                   f"{self._trace})"
        what = f"batch of {batch}: " if batch else ""
        return f"{type(self).__name__}({what}{value!r}, traced by {by})"

    def __str__(self):
        try:
            value, by, batch = shown_value(self)
        except Exception:   # noqa: BLE001
            value = None
        if value is None:
            return repr(self)
        what = f"batch of {batch}: " if batch else ""
        return f"{what}{value} (traced by {by})"

    def __format__(self, spec):
        """``f"{x:.3f}"``: the value formatted as NumPy formats it (a 0-d value takes a
        number's format; an array takes only the empty format, as an ndarray)."""
        if not spec:
            return str(self)
        value, by, batch = shown_value(self)
        if value is None or batch:
            raise TypeError(
                f"format(x, {spec!r}): this traced value (shape {self.shape}, traced by "
                f"{self._trace.name}) stands for "
                f"{'a batch of values' if batch else 'no single value'}; format it with an "
                "empty format (f'{x}'), or print it with "
                "dk.debug.print, which prints each value of a batch")
        return format(value, spec)

    # ``copy.copy``/``copy.deepcopy`` keep the derivative: the copy is a new tracer of the
    # same trace holding the same (never mutated) value. The default protocol would copy
    # the trace too, leaving a tracer of a transformation nobody runs.
    def __copy__(self):
        new = object.__new__(type(self))
        for name in slot_names(type(self)):
            object.__setattr__(new, name, getattr(self, name))
        if hasattr(self, "__dict__"):  # a subclass without __slots__
            new.__dict__.update(self.__dict__)
        return new

    def __deepcopy__(self, memo):
        new = memo[id(self)] = self.__copy__()
        return new

    def __reduce_ex__(self, protocol):
        raise TracerConversionError(
            f"A traced value (shape {self.shape}, dtype {self.dtype}, inside a "
            f"{self._trace.name} transformation) cannot be pickled: it stands for a value "
            "that exists only while the transformed function runs. Return it from the "
            "function and pickle the result (a NumPy array) instead.")

    __reduce__ = __reduce_ex__


def shown_value(tracer):
    """``(value, by, batch)`` for showing ``tracer``: the plain value under it (the stacked
    values under ``vmap``, ``batch`` then their number) and the transformations that trace
    it, outermost first (``by``); ``value`` is None where there is none to show. Nothing
    is reported to recording traces: showing a value does not make a jit guard."""
    names, batch, value = [], 0, tracer
    while isinstance(value, Tracer):
        names.append(value._trace.name)
        primal = getattr(value, "primal", None)
        if primal is None:
            value = getattr(value, "value", None)
            shape = getattr(value, "shape", ())
            if value is None or not shape:
                return None, None, 0
            batch = batch or shape[0]
        else:
            value = primal
    return value, " of ".join(names), batch


def slot_names(cls):
    """Every slot of ``cls`` and its bases (what a tracer's state is made of)."""
    names = _SLOTS.get(cls)
    if names is None:
        names = _SLOTS[cls] = tuple(
            name for klass in cls.__mro__ for name in klass.__dict__.get("__slots__", ())
            if name != "__weakref__")
    return names


_SLOTS = {}


class PrimalTracer(Tracer):
    """A tracer that holds its value as ``primal`` (forward and reverse mode): its shape and
    dtype are the primal's."""

    __slots__ = ("primal",)

    @property
    def shape(self):
        return shape_of(self.primal)

    @property
    def dtype(self):
        return dtype_of(self.primal)


def check_not_escaped(value, transformation):
    """Raise if ``value``, a result leaving ``transformation`` (its name), is a tracer of a
    transformation that has finished: a transformation never returns a diffkit object.
    (Tracers of enclosing transformations still running are ordinary values to it.)"""
    if isinstance(value, Tracer) and not value._trace.active:
        raise EscapedTracerError(
            f"{transformation} would return a traced value (shape {value.shape}) of a "
            f"{value._trace.name} transformation that has already returned. A traced value "
            "was kept from an earlier call (in an outside variable, a cache or a copy) and "
            "returned now; return values computed from this call's arguments instead.")
    return value


def _escaped(tracer):
    return EscapedTracerError(
        f"A traced value of shape {tracer.shape} from a {tracer._trace.name} transformation "
        f"was used after that transformation returned. {tracer._trace.escape_hint}")


def find_top_trace(args):
    """The innermost trace among the tracers in ``args``, or None if there is none."""
    top = None
    for x in args:
        if isinstance(x, Tracer):
            trace = x._trace
            if not trace.active:
                raise _escaped(x)
            if top is None or trace.level > top.level:
                top = trace
            elif trace is not top and trace.level == top.level:
                raise EscapedTracerError(
                    f"Traced values of two different {trace.name} transformations at the same "
                    "level met in one operation; a traced value escaped its transformation."
                )
    return top


class _Watchers(threading.local):
    active = ()   # the callbacks of the enclosing ``concrete.watch_reads`` blocks


#: What code that reuses a result while the function takes the same path watches, per
#: thread (``diffkit.core.concrete.watch_reads``): every concrete read of a traced value,
#: and every exception a primitive raises (``callback(None, exception, primitive)``), since
#: the function may catch it and take another path.
read_watchers = _Watchers()


class ArrayLikes:
    """How a traced operation reads an argument that NumPy reads through ``np.asarray`` but
    that is no array (a pandas ``Series`` or ``DataFrame``, a ``range``): ``foreign(cls)``
    says whether objects of type ``cls`` are such, ``read(x)`` gives the array. The ops
    floor, which knows array-likes (``ops.indexing``), fills this slot at import; until
    then nothing is foreign."""

    def __init__(self):
        self.foreign = lambda cls: False
        self.read = lambda x: x

    def register(self, foreign, read):
        self.foreign, self.read = foreign, read
        _foreign_types.clear()


array_likes = ArrayLikes()

#: type -> whether arguments of that type are foreign array-likes (asked once per type)
_foreign_types = {}


def _is_foreign(cls):
    known = _foreign_types.get(cls)
    if known is None:
        known = _foreign_types[cls] = not issubclass(cls, Tracer) and \
            bool(array_likes.foreign(cls))
    return known


def _read_foreign(args):
    """``args`` with each foreign array-like read as NumPy reads it."""
    read = array_likes.read
    return tuple(read(x) if _is_foreign(type(x)) else x for x in args)


def bind(prim, *args, **params):
    """Apply primitive ``prim``: plain NumPy when nothing is traced, else the innermost trace.

    ``args`` are arrays (positional, possibly tracers); ``params`` are static keywords. With
    a traced argument, a foreign array-like one (a pandas ``Series``) is read as NumPy reads
    it (``np.asarray``): the result is a traced array, as NumPy's value.
    """
    for x in args:
        if isinstance(x, Tracer):
            if len(args) > 1:
                known = _foreign_types.get
                for a in args:
                    if known(type(a)) is not False and _is_foreign(type(a)):
                        args = _read_foreign(args)
                        break
            return find_top_trace(args).process(prim, args, params)
    try:
        return prim.impl(*args, **params)
    except Exception as error:
        for watcher in read_watchers.active:   # an exception may decide the user's path
            watcher(None, error, prim)
        raise


def bind_custom(call, args):
    """Apply a function with user-defined rules: plain ``call.fun`` when nothing is traced,
    else the innermost trace's ``process_custom``. ``args`` is a flat list of arrays."""
    top = find_top_trace(args)
    if top is None:
        return call.fun(*args)
    return top.process_custom(call, args)


def check_custom_outputs(trace, call, values):
    """Raise if the unwrapped results of a custom call still hold ``trace``'s own tracers:
    the user's function or rule used a traced value it did not receive as an argument."""
    for value in values:
        if isinstance(value, Tracer) and value._trace is trace:
            raise EscapedTracerError(
                f"{call.name!r}, a function with custom derivative rules, uses a value traced "
                f"by the enclosing {trace.name} transformation that it did not receive as an "
                "argument (a closure). Pass that value to the function as an argument, so "
                "its rules see it.")
