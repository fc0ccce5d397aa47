"""In-place writes on traced values: ``y[idx] = v``, ``y[idx] += v``, ``y += v`` ...

NumPy code (scikit-learn, SciPy's array-API code) writes into arrays it has just made:
``K[mask] = 0``, ``X /= norms[:, None]``. A traced value is never modified: the write
computes the new value functionally, ``y.at[idx].set(v)`` (one rule, every engine), and the
Python object ``y`` then takes over the new value's state (its trace's slots: primal,
tangent, tape slot, batched value). So every name bound to that object sees the write, as in
NumPy, and the derivative flows through ``at[...].set``.

Views. In NumPy a view made earlier (``z = y[:2]``, ``y.T``, ``y.reshape(...)``, a basic
slice) shares memory with ``y``, so it sees a later write, and a write into the view changes
``y``. Whether an operation returns a view or a copy depends in NumPy on memory layout
(``reshape`` of a transposed array copies), which traced values do not track under every
transformation (a ``vmap``'d value has no layout of its own). So diffkit refuses, with an
error saying what to write instead, a write into a value that shares memory in NumPy's sense
with another value still alive: a view of it, or the array it is a view of. Such a write
would otherwise give a silently different value. A write into a fresh value (what
array-API code makes: ``xp.asarray(x, copy=True)``, the result of arithmetic) works. The
views are followed with weak references, so a view nobody holds any more blocks nothing.

Overlap idioms. ``y[1:3] = y[1:3][::-1]``, ``y += y[::-1]``, ``A += A.T``: the operand is a
view of ``y`` held only by the statement running, so it dies with the statement. NumPy
buffers such an operand, so its result is the one computed from the old values, which is
what the functional write computes: the write is allowed (see "temporaries" below). A view a
name holds is refused as above.

In-place methods and functions (``y.sort()``, ``y.fill(v)``, ``y.flat[i] = v``, ``y.put``,
``out=y`` of the methods, ``np.fill_diagonal(y, v)``) write through ``write`` and
``write_cycled``, with the same checks.

Levels. A value of an enclosing transformation (a closed-over traced value) is written only
while no inner transformation runs: an inner tape may hold that very object as a constant,
and the inner value written into it would escape its transformation. Both are refused. A
copy made inside the inner transformation belongs to it (``Trace.lift``: a constant to it,
whose value still carries the enclosing derivatives), so code that copies before it writes
(scikit-learn's ``check_array(X, copy=True)``) works at any depth.
"""

import copy as _copy
import dis
import sys
import weakref

import numpy as np

from ..core.concrete import concrete_value, holds_tracer
from ..core.trace import Tracer, current_level, innermost_trace, lifting_trace, slot_names
from ..errors import TracerConversionError
from ..ops.creation import asarray as dnp_asarray
from ..ops.elementwise import where
from ..ops.indexing import At, getitem, read_array_like
from ..ops.shape import ravel, reshape
from .escapes import STORES

# --- views --------------------------------------------------------------------------------

# The functions of diffkit.numpy whose NumPy counterparts return views of their first array
# argument (or of each argument, for the ones taking several arrays).
VIEW_FUNCTIONS = (
    "reshape", "ravel", "transpose", "permute_dims", "matrix_transpose", "swapaxes",
    "moveaxis", "rollaxis", "squeeze", "expand_dims", "broadcast_to", "diagonal", "real",
    "imag", "flip", "fliplr", "flipud", "rot90", "split", "array_split", "hsplit", "vsplit",
    "dsplit", "unstack", "trim_zeros")
EACH_ARGUMENT = ("atleast_1d", "atleast_2d", "atleast_3d", "broadcast_arrays")
LINALG_VIEW_FUNCTIONS = ("diagonal", "matrix_transpose")
VIEW_METHODS = ("reshape", "ravel", "transpose", "swapaxes", "squeeze", "diagonal")
VIEW_PROPERTIES = ("T", "mT", "real", "imag")

# id(tracer) -> its family: {id(member): weakref(member)}, the live values sharing memory
# in NumPy's sense. A value is in a family only once a view of it (or it of another) exists.
_families = {}


def _forget(key):
    def callback(_ref):
        family = _families.pop(key, None)
        if family is not None:
            family.pop(key, None)
    return callback


def _join(family, member):
    key = id(member)
    if _families.get(key) is family:
        return
    old = _families.get(key)
    if old is not None:   # a value made a view of two arrays (broadcast_arrays twice): merge
        for other_key, ref in list(old.items()):
            if ref() is not None:
                family[other_key] = ref
                _families[other_key] = family
        return
    family[key] = weakref.ref(member, _forget(key))
    _families[key] = family


def note_view(view, base):
    """Record that ``view`` (a result, or a tuple or list of results) shares memory with
    ``base`` in NumPy. Values that are not tracers, or the same object, are ignored."""
    if isinstance(view, (tuple, list)):
        for v in view:
            note_view(v, base)
        return
    if view is base or not isinstance(view, Tracer) or not isinstance(base, Tracer):
        return
    family = _families.get(id(base))
    if family is None:
        family = {}
        _join(family, base)
    _join(family, view)


def _is_view_index(index, ndim):
    """Whether ``y[index]`` is a view in NumPy: basic indexing (integers, slices, ``None``,
    ``...``) that does not pick one element with an integer per axis (that gives a scalar,
    a copy)."""
    items = index if isinstance(index, tuple) else (index,)
    integers = 0
    for item in items:
        if item is None or item is Ellipsis or isinstance(item, slice):
            continue
        if isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_)):
            integers += 1
            continue
        return False
    return integers != len(items) or integers != ndim


def _first_tracer(args, kwargs):
    for a in args:
        if isinstance(a, Tracer):
            return a
    for a in kwargs.values():
        if isinstance(a, Tracer):
            return a
    return None


def viewing(fn, each_argument=False):
    """``fn`` recording its result as a view of its (first traced) array argument."""
    def wrapper(*args, **kwargs):
        out = fn(*args, **kwargs)
        if each_argument and isinstance(out, (tuple, list)) and len(out) == len(args):
            for o, a in zip(out, args):
                note_view(o, a)
        elif each_argument:
            note_view(out, args[0] if len(args) == 1 else None)
        else:
            note_view(out, _first_tracer(args, kwargs))
        return out

    for name in ("__module__", "__name__", "__qualname__", "__doc__"):
        setattr(wrapper, name, getattr(fn, name, None))
    wrapper.__wrapped__ = fn
    inner = getattr(fn, "diffkit_function", None)
    if inner is not None:   # what the protocol floor calls to skip the namespace's wrapper
        wrapper.diffkit_function = viewing(inner, each_argument)
    return wrapper


# Functions NumPy documents as returning a new array that diffkit's return their argument
# itself when nothing changes (a traced value used to be immutable): they now return a new
# tracer object holding the same value, so a write into the copy leaves the original alone.
COPY_FUNCTIONS = ("copy", "array", "asfortranarray", "block", "concatenate", "concat",
                  "hstack", "tile", "pad", "positive")


def _own(value):
    """``value``, a fresh copy, as a value of the innermost transformation running (a
    constant to it, carrying the enclosing ones' derivatives in its value): code writes
    into the copies it makes (scikit-learn's ``check_array(X, copy=True)``), and a value of
    an enclosing transformation cannot be written while an inner one runs."""
    if value._trace is innermost_trace():   # the common case, without reading the stack
        return value
    trace = lifting_trace()
    if trace is None or value._trace is trace:
        return value
    try:
        return trace.lift(value)
    except NotImplementedError:   # a transformation without constants of its own (jit)
        return value


def _arguments(args, kwargs):
    for a in (*args, *kwargs.values()):
        if isinstance(a, (list, tuple)):
            yield from a
        else:
            yield a


def copying(fn, when=None):
    """``fn`` returning a new object where it would return one of its traced arguments
    (``when(kwargs)`` says whether the call asks for a copy; always, without it). A copy of
    an enclosing transformation's value belongs to the innermost one (``_own``)."""
    def wrapper(*args, **kwargs):
        out = fn(*args, **kwargs)
        if isinstance(out, Tracer) and (when is None or when(kwargs)):
            for a in _arguments(args, kwargs):
                if a is out:
                    out = _copy.copy(out)
                    break
            return _own(out)
        return out

    for name in ("__module__", "__name__", "__qualname__", "__doc__"):
        setattr(wrapper, name, getattr(fn, name, None))
    wrapper.__wrapped__ = fn
    inner = getattr(fn, "diffkit_function", None)
    if inner is not None:
        wrapper.diffkit_function = copying(inner, when)
    return wrapper


def _copy_asked(kwargs):
    return kwargs.get("copy") is True


def _copy_not_refused(kwargs):
    return kwargs.get("copy", True) is not False


def _astype_function(astype):
    """The array API's ``astype(x, dtype, copy=False)``: the same array where the dtype
    already matches (the namespace's function underneath takes only the default)."""
    def wrapper(x, dtype, /, *, copy=True, device=None):
        if copy is False:
            return astype(x, dtype, device=device)   # no copy made: x itself when same dtype
        return astype(x, dtype, copy=copy, device=device)
    for name in ("__module__", "__name__", "__qualname__", "__doc__"):
        setattr(wrapper, name, getattr(astype, name, None))
    wrapper.__wrapped__ = astype
    return wrapper


def _astype_method(astype):
    def method(self, dtype, *args, copy=True, **kwargs):   # ndarray.astype copies by default
        out = astype(self, dtype, *args, **kwargs)
        if copy and out is self:
            out = _own(_copy.copy(out))
        return out
    method.__name__ = "astype"
    method.__doc__ = np.ndarray.astype.__doc__
    return method


def _viewing_if(fn, makes_view):
    """``fn`` recording its result as a view of its first traced argument when
    ``makes_view(args)`` says NumPy returns a view for these arguments."""
    viewing_fn = viewing(fn)

    def wrapper(*args, **kwargs):
        return (viewing_fn if makes_view(args) else fn)(*args, **kwargs)

    for name in ("__module__", "__name__", "__qualname__", "__doc__"):
        setattr(wrapper, name, getattr(fn, name, None))
    wrapper.__wrapped__ = fn
    inner = getattr(fn, "diffkit_function", None)
    if inner is not None:
        wrapper.diffkit_function = _viewing_if(inner, makes_view)
    return wrapper


def _getitem(getitem):
    def __getitem__(self, index):
        out = getitem(self, index)
        if _is_view_index(index, len(self.shape)):
            note_view(out, self)
        return out
    return __getitem__


# --- temporaries: the overlap idioms ------------------------------------------------------
# ``y[1:3] = y[1:3][::-1]`` and ``y += y[::-1]`` write into y while a view of it is alive: the
# right-hand side, held only by the statement running. NumPy buffers such an operand (the
# result is the one computed from the old values), which is what the functional write gives
# anyway, and the view dies when the statement ends, so no stale value can be seen. A view a
# name (or a container, an attribute, a closure) also holds outlives the statement: the write
# is refused. What tells them apart is the operand's reference count on entry to
# ``__setitem__``/``__iadd__``, measured here against a probe called the same way.


class _Probe:
    """Records the reference count of the operand ``__setitem__`` and ``__iadd__`` receive,
    at the same depth as ``setitem`` and ``_augmented``'s method measure theirs."""

    counts = []

    def __setitem__(self, index, value):
        _Probe.counts.append(sys.getrefcount(value))

    def __iadd__(self, other):
        _Probe.counts.append(sys.getrefcount(other))
        return self


def _calibrate():
    """``{"setitem": n, "augmented": n}``: the most references an operand held only by the
    running statement has on entry; None where this Python cannot tell such an operand from
    one a local name holds too (an interpreter whose stack borrows references), in which
    case every write with a live view is refused as before."""
    probe, named = _Probe(), _Probe()
    _Probe.counts = []
    probe[0] = _Probe()           # the statements measured, in this order
    probe[0:1] = _Probe()
    probe[0] = named
    probe[0:1] = named
    probe += _Probe()
    probe += named
    counts, _Probe.counts = _Probe.counts, []
    set_temporary, set_named = max(counts[0:2]), min(counts[2:4])
    add_temporary, add_named = counts[4], counts[5]
    if set_named <= set_temporary or add_named <= add_temporary:
        return None
    return {"setitem": set_temporary, "augmented": add_temporary}


_TEMPORARY_REFERENCES = _calibrate()


def _temporary(operand, references, kind, frame):
    """``(operand,)`` when it is a traced value only the running statement holds (its
    reference count on entry to the write was ``references``), else ``()``. Only a write
    made by the statement itself counts (``frame``, the caller, runs the store or the
    augmented operator): an explicit ``y.__setitem__(i, z)`` hands ``z`` over without the
    reference the statement's stack holds, so its count says nothing."""
    if _TEMPORARY_REFERENCES is None or not isinstance(operand, Tracer) or \
            id(operand) not in _families or references > _TEMPORARY_REFERENCES[kind]:
        return ()
    return (operand,) if _opname(frame) in _STATEMENT_OPS[kind] else ()


def _opname(frame):
    """The name of the instruction ``frame`` is running."""
    opcodes, offset = frame.f_code.co_code, frame.f_lasti
    while offset > 0 and dis.opname[opcodes[offset]] == "CACHE":
        offset -= 2
    return dis.opname[opcodes[offset]] if offset >= 0 else None


_STATEMENT_OPS = {
    "setitem": STORES,
    "augmented": frozenset({"BINARY_OP"} | {name for name in dis.opname  # INPLACE_*: 3.10
                                             if name.startswith("INPLACE_")})}


def _check_writable(y, what, temporaries=()):
    """Raise unless ``y`` may be written in place (see the module docstring). The values in
    ``temporaries`` (operands of this write that die with the statement) may share memory
    with ``y``: the write reads them first, as NumPy's buffering does."""
    trace = y._trace
    if not trace.active or trace.level != current_level():
        raise TracerConversionError(
            f"{what}: the array written into is a value traced by an enclosing {trace.name} "
            "transformation (a value from outside the function being transformed now). An "
            "inner transformation may hold it, and its values must not leave it, so it "
            "cannot be changed in place here. Make a new array instead: "
            "y2 = y.at[index].set(v) (or y2 = y + v), and use y2.")
    family = _families.get(id(y))
    if family is None:
        return
    for key, ref in family.items():
        other = ref()
        if key != id(y) and other is not None and not any(other is t for t in temporaries):
            raise TracerConversionError(
                f"{what}: the traced array written into (shape {y.shape}) shares memory in "
                f"NumPy with another array still in use (shape {other.shape}): a view made "
                "of it (y[:2], y.T, y.reshape(...)), or the array it is a view of. NumPy "
                "would change both; diffkit changes only one value at a time, so it refuses "
                "rather than give the other a stale value. Write into a copy "
                "(y = y.copy() before taking views, or z = y[:2].copy()), or make the write "
                "before taking the view, or use the functional form y2 = y.at[index].set(v).")


def _assume(y, new):
    """The tracer object ``y`` takes over the state of ``new`` (same shape and dtype)."""
    trace = y._trace
    if not (isinstance(new, Tracer) and new._trace is trace):
        new = trace.lift(new)   # a value carrying no derivative of this trace
    if type(new) is not type(y):
        raise TypeError(f"cannot write a {type(new).__name__} into a {type(y).__name__}")
    for name in slot_names(type(y)):
        object.__setattr__(y, name, getattr(new, name))


def _cast(y, new, what, casting):
    dtype = np.dtype(y.dtype)
    if np.dtype(new.dtype) != dtype:
        if not np.can_cast(new.dtype, dtype, casting):
            raise TypeError(f"{what}: cannot cast the new value from {np.dtype(new.dtype)} "
                            f"to the array's {dtype} with casting rule {casting!r}")
        new = new.astype(dtype)
    return new


def write(y, new, what, casting="same_kind", reshape=False):
    """The traced ``y`` takes the value ``new`` (broadcast to ``y``'s shape, cast to its
    dtype under NumPy's rule ``casting``; with ``reshape``, ``new``'s own shape, as
    ``y.resize``): the write of the in-place methods (``y.sort()``, ``y.fill(v)``) and of
    ``out=y``. Refused as ``y[...] = new`` is (views, levels)."""
    _check_writable(y, what)
    shape = tuple(y.shape)
    if tuple(np.shape(new)) != shape and not reshape:
        if np.broadcast_shapes(np.shape(new), shape) != shape:
            raise ValueError(f"{what}: non-broadcastable output operand with shape {shape} "
                             f"doesn't match the broadcast shape {tuple(np.shape(new))}")
        new = At(y)[...].set(new)
    if np.dtype(y.dtype).kind != "c" and np.dtype(getattr(new, "dtype", float)).kind == "c":
        raise TypeError(f"{what}: the new value is complex and the array is real; NumPy "
                        "would drop the imaginary part. Take np.real(...) of it, or make the "
                        "array complex first.")
    _assume(y, _cast(y, dnp_asarray(new), what, casting))


def _shape_tuple(shape):
    return tuple(int(d) for d in shape)


def write_cycled(y, values, numpy_write, what):
    """The traced ``y`` written by one of NumPy's flat writes (``y.flat[i] = v``,
    ``y.put``, ``np.place``, ``np.putmask``): ``numpy_write(marker, stand_in)`` runs NumPy's
    own write on an integer array ``marker`` of ``y``'s shape with ``stand_in`` the indices
    of ``values``' entries (in ``values``' shape), so NumPy's rules (values cycled, the last
    write to a position wins, index modes, its errors) decide which entry of ``values`` lands
    where. ``y`` then takes ``y.at[positions].set(values[which])``, NumPy's unsafe cast."""
    values = dnp_asarray(values)
    marker = np.full(_shape_tuple(y.shape), -1, np.intp)
    numpy_write(marker, np.arange(int(np.prod(values.shape)), dtype=np.intp)
                .reshape(values.shape))
    positions = np.flatnonzero(marker >= 0)
    taken = getitem(ravel(values), marker.ravel()[positions])
    new = reshape(At(ravel(y))[positions].set(taken), marker.shape)
    write(y, new, what, casting="unsafe")


def _is_mask_of(index, y):
    """Whether ``index`` is a boolean array of ``y``'s shape (``y[mask] = value``)."""
    if not isinstance(index, (np.ndarray, Tracer)):
        return False
    return np.dtype(index.dtype) == np.bool_ and tuple(index.shape) == tuple(y.shape)


def setitem(self, index, value):
    """``y[index] = value`` on a traced ``y``: ``y`` becomes ``y.at[index].set(value)``."""
    references = sys.getrefcount(value)   # first: measured as _Probe measures it
    _check_writable(self, "y[index] = v",
                    _temporary(value, references, "setitem", sys._getframe(1)))
    if isinstance(value, (list, tuple)) and holds_tracer(value):
        value = dnp_asarray(value)   # y[:2] = [t0, 1.0]: one traced array, as NumPy reads it
    index = read_array_like(index)   # y[series] = v: a pandas mask read as NumPy reads it
    if _is_mask_of(index, self) and np.ndim(value) == 0:
        new = where(index, value, self)   # K[mask] = 0: also with a mask batched by vmap
    else:
        new = At(self)[index].set(value)
    if np.dtype(self.dtype).kind != "c" and np.dtype(getattr(new, "dtype", float)).kind == "c":
        raise TypeError("y[index] = v: v is complex and y is real; NumPy would drop the "
                        "imaginary part. Write np.real(v), or make y complex first.")
    _assume(self, _cast(self, new, "y[index] = v", "unsafe"))


def _written_back(frame):
    """Whether ``frame`` is executing ``y[idx] op= v``: Python computes ``t = y[idx]``, then
    ``t op= v``, then stores ``y[idx] = t``. When the temporary ``t`` is a view of ``y`` it
    is not written in place: ``t op v`` is returned and the store writes it into ``y``. (A
    ``t`` that is no view, an element of a list, is written in place as usual, so other
    names bound to it see the change, as in NumPy.)"""
    code = frame.f_code
    opcodes = code.co_code
    offset = frame.f_lasti + 2
    while offset < len(opcodes):
        opname = dis.opname[opcodes[offset]]
        if opname not in _SKIPPED:
            return opname in STORES
        offset += 2
    return False


_SKIPPED = frozenset({"CACHE", "SWAP", "ROT_TWO", "ROT_THREE", "ROT_FOUR", "EXTENDED_ARG"})


def _augmented(name, operator, symbol):
    def method(self, other):
        references = sys.getrefcount(other)   # first: measured as _Probe measures it
        what = f"y {symbol}= v"
        if id(self) in _families and _written_back(sys._getframe(1)):
            return _cast(self, operator(self, other), f"y[index] {symbol}= v", "same_kind")
        _check_writable(self, what,
                        _temporary(other, references, "augmented", sys._getframe(1)))
        new = operator(self, other)
        if new is NotImplemented:
            return NotImplemented
        if tuple(new.shape) != tuple(self.shape):
            raise ValueError(f"{what}: non-broadcastable output operand with shape "
                             f"{tuple(self.shape)} doesn't match the broadcast shape "
                             f"{tuple(new.shape)}")
        _assume(self, _cast(self, new, what, "same_kind"))
        return self
    method.__name__ = f"__i{name}__"
    return method


_AUGMENTED = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//",
              "mod": "%", "pow": "**", "matmul": "@", "and": "&", "or": "|", "xor": "^",
              "lshift": "<<", "rshift": ">>"}


# --- NumPy's functions that write into their first argument -------------------------------
# np.fill_diagonal(y, v) and np.put_along_axis(y, ...) reach diffkit.numpy's functions of
# the same name (through __array_function__), which return the new array with
# inplace=False; with the default a traced target takes the new value, as NumPy's would.


def _writing_into_target(fn):
    """``fn(a, ..., inplace=True)`` writing its result into a traced ``a`` (NumPy's in-place
    function); ``inplace=False`` and plain arrays are ``fn``'s own."""
    def wrapper(a, *args, inplace=True, **kwargs):
        if not (inplace and isinstance(a, Tracer)):
            return fn(a, *args, inplace=inplace, **kwargs)
        write(a, fn(a, *args, inplace=False, **kwargs), f"np.{fn.__name__}(a, ...)",
              casting="unsafe")
        return None

    for name in ("__module__", "__name__", "__qualname__", "__doc__"):
        setattr(wrapper, name, getattr(fn, name, None))
    wrapper.__wrapped__ = fn
    inner = getattr(fn, "diffkit_function", None)
    if inner is not None:
        wrapper.diffkit_function = _writing_into_target(inner)
    return wrapper


def static_index(value, what):
    """A mask or index NumPy reads itself (``y.put``'s indices, ``y.flat``'s index): a
    traced one gives its plain value (it has no derivative); a batched one cannot."""
    if not isinstance(value, Tracer):
        return value
    concrete = concrete_value(value)
    if concrete is None:
        raise TracerConversionError(
            f"{what}: the index is batched by vmap, so it has no one value; use "
            "np.where(mask, v, y) or y.at[index].set(v), whose rules batch.")
    return concrete


def _einsum_operands(args):
    """How many operands an ``einsum`` call has (whatever their type: a list or a pandas
    object is an operand too): ``("ij,jk", a, b)`` or interleaved ``(a, [0, 1], b, [1, 2])``
    with an optional output sublist."""
    if args and isinstance(args[0], str):
        return len(args) - 1
    return len(args) // 2


def install(dnp):
    """Install ``__setitem__`` and the augmented assignments on ``Tracer``, and follow the
    views that ``dnp``'s functions and the array methods make."""
    for name in ("fill_diagonal", "put_along_axis"):
        setattr(dnp, name, _writing_into_target(getattr(dnp, name)))
    for name in VIEW_FUNCTIONS:
        if hasattr(dnp, name):
            setattr(dnp, name, viewing(getattr(dnp, name)))
    for name in EACH_ARGUMENT:
        if hasattr(dnp, name):
            setattr(dnp, name, viewing(getattr(dnp, name), each_argument=True))
    # views for some inputs only: einsum of one operand ("ij->ji", "ii->i") and diag of a
    # matrix (a read-only view of its diagonal; of a vector it builds a new matrix)
    dnp.einsum = _viewing_if(dnp.einsum, lambda args: _einsum_operands(args) == 1)
    dnp.diag = _viewing_if(dnp.diag, lambda args: bool(args) and np.ndim(args[0]) == 2)
    for name in LINALG_VIEW_FUNCTIONS:
        if hasattr(dnp.linalg, name):
            setattr(dnp.linalg, name, viewing(getattr(dnp.linalg, name)))
    for name in COPY_FUNCTIONS:
        if hasattr(dnp, name):
            setattr(dnp, name, copying(getattr(dnp, name)))
    dnp.asarray = copying(dnp.asarray, _copy_asked)
    dnp.astype = _astype_function(copying(dnp.astype, _copy_not_refused))
    Tracer.astype = _astype_method(Tracer.astype)
    Tracer.copy = copying(Tracer.copy)
    Tracer.__pos__ = copying(Tracer.__pos__)
    for name in VIEW_METHODS:
        setattr(Tracer, name, viewing(getattr(Tracer, name)))
    for name in VIEW_PROPERTIES:
        prop = getattr(Tracer, name)
        setattr(Tracer, name, property(viewing(prop.fget), doc=prop.__doc__))
    Tracer.__getitem__ = _getitem(Tracer.__getitem__)
    Tracer.__setitem__ = setitem
    for name, symbol in _AUGMENTED.items():
        operator = Tracer.__dict__.get(f"__{name}__")   # not type's __or__ (X | None)
        if operator is not None:
            setattr(Tracer, f"__i{name}__", _augmented(name, operator, symbol))
