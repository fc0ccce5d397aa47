"""Traced values as NumPy arrays: operators (``+ - * / ** @``, comparisons, indexing), array
methods (``.sum``, ``.reshape``, ``.T`` ...) and ``.at[idx]`` functional updates.

``install(dnp)`` attaches them to ``Tracer``, each routed to the differentiable function of
the same name in ``diffkit.numpy`` (``dnp``). Operators and methods get the functions
underneath the namespace's wrappers (a primitive called as ``Tracer.__mul__(a, b)`` binds
directly): no extra Python frame on the hottest path. The products ``y @ b``, ``b @ y`` and
``y.dot(b)`` read a foreign array-like ``b`` (a pandas ``DataFrame``) as NumPy does, through
``np.asarray``. Indexing reads any array-like index as NumPy does (``diffkit.ops.indexing``).
"""

import sys

import numpy as np

from ..core.trace import Tracer
from ..errors import NoRuleError
from ..ops.indexing import At, read_array_like, reads_as_array
from . import conversions, in_place
from .dispatch import accepted_keywords, array_function, array_ufunc, is_harmless
from .escapes import in_place_call_error

# ndarray methods that are diffkit.numpy functions of the same name (installed when present)
# (not "sort": ndarray.sort sorts in place; it is among the in-place methods below)
_METHODS = ("sum", "mean", "prod", "max", "min", "argmax", "argmin", "squeeze", "ravel",
            "astype", "dot", "clip", "swapaxes", "round", "var", "std", "cumsum", "cumprod",
            "ptp", "argsort", "diagonal", "trace", "repeat", "take", "conj",
            "conjugate", "nonzero", "all", "any", "copy", "searchsorted", "compress")
_REDUCTIONS = ("sum", "mean", "prod", "max", "min")


def _plain(fn):
    """The diffkit function under a namespace wrapper (the wrapper reads array-likes and
    NumPy's keywords, which a traced operand does not need)."""
    return getattr(fn, "diffkit_function", fn)


def _reading_other(fn, swap=False):
    """``fn(self, other)`` (``fn(other, self)`` with ``swap``) with a foreign array-like
    ``other`` (a pandas ``DataFrame``, a ``range``) read as NumPy reads it: ``y @ df`` is a
    traced array, as ``np.matmul`` of the DataFrame's values."""
    def method(self, other, *args, **kwargs):
        if reads_as_array(type(other)):
            other = read_array_like(other)
        return fn(other, self) if swap else fn(self, other, *args, **kwargs)
    method.__name__ = getattr(fn, "__name__", "method")
    return method


def _reshape_method(reshape):
    def method(self, *shape, order="C"):
        if order != "C":
            raise NotImplementedError("only order='C' reshapes are supported")
        return reshape(self, shape[0] if len(shape) == 1 else shape)
    return method


def _transpose_method(transpose):
    def method(self, *axes):
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        return transpose(self, axes or None)
    return method


def _reduction_method(fn, name):
    """``Tracer.sum`` and friends, accepting NumPy's ``dtype=None``/``out=None`` keywords."""
    accepted = accepted_keywords(fn)
    numpy_method = getattr(np.ndarray, name)

    def method(self, *args, **kwargs):
        out = kwargs.pop("out", None) if kwargs else None
        if out is not None:      # y.sum(axis=0, out=z): the result written into z
            return _into(out, method(self, *args, **kwargs), f"y.{name}")
        if kwargs and accepted is not None:
            kwargs = {k: v for k, v in kwargs.items()
                      if k in accepted or not is_harmless(k, v, {})}
            extra = sorted(set(kwargs) - accepted)
            if extra:
                raise NoRuleError(
                    f".{name} with keywords {extra} has no diffkit rule, so it cannot be "
                    "applied to a traced value. Drop them, or define the derivative "
                    "yourself with dk.custom_vjp/dk.custom_jvp.")
        return fn(self, *args, **kwargs)

    method.__name__ = name
    method.__doc__ = getattr(numpy_method, "__doc__", None)
    return method


# --- in-place methods ------------------------------------------------------------------------
# ndarray methods that change the array they are called on. The traced value takes the new
# value computed functionally (``in_place.write``: the sort and partition primitives,
# ``.at[].set``), so every name bound to it sees the change, and the derivative flows through
# that computation. Views are refused as for ``y[idx] = v`` (see in_place.py).


def _sort_method(sort, name, axis_position):
    """``y.sort()``/``y.partition(kth)``: ``y`` takes ``sort``'s result (``axis`` is its
    positional argument number ``axis_position``)."""
    def method(self, *args, **kwargs):
        axis = args[axis_position] if len(args) > axis_position else kwargs.get("axis", -1)
        if axis is None:
            raise TypeError(f"y.{name}: axis=None is np.{name}'s (a flattened copy); the "
                            "method sorts in place along one axis")
        in_place.write(self, sort(self, *args, **kwargs), f"y.{name}()")
    method.__name__ = name
    method.__doc__ = getattr(np.ndarray, name).__doc__
    return method


def _fill(self, value):
    """``y.fill(value)``: every entry of ``y`` becomes the scalar ``value`` (traced or not)."""
    if np.ndim(value) != 0:
        raise ValueError("y.fill(value): value must be a scalar (NumPy: setting an array "
                         "element with a sequence); write y[...] = value to broadcast an "
                         "array")
    in_place.write(self, value, "y.fill(v)", casting="unsafe")


def _put(self, indices, values, mode="raise"):
    """``y.put(indices, values, mode)``: ``y.flat[indices] = values`` with NumPy's cycling
    of ``values`` and its index modes."""
    indices = in_place.static_index(indices, "y.put(indices, values)")
    in_place.write_cycled(self, values, lambda marker, v: marker.put(indices, v, mode=mode),
                          "y.put(indices, values)")


class FlatIter:
    """``y.flat`` of a traced ``y``. Reads give copies, as NumPy's flat iterator does
    (``y.flat[i]``, ``y.flat[1:3]``, iteration); ``y.flat[i] = v`` and ``y.flat = v`` write
    into ``y`` with NumPy's rules: positions in C order, ``v`` cycled, the last write to a
    position wins."""

    __slots__ = ("base",)

    def __init__(self, base):
        self.base = base

    def __len__(self):
        return int(np.prod(self.base.shape))

    def __iter__(self):
        flat = _FLAT_HELPERS["ravel"](self.base)
        return (flat[i] for i in range(len(self)))

    def __getitem__(self, index):
        index = in_place.static_index(index, "y.flat[index]")
        positions = np.arange(len(self)).reshape(_shape(self.base)).flat[index]
        return _FLAT_HELPERS["getitem"](_FLAT_HELPERS["ravel"](self.base), positions)

    def __setitem__(self, index, value):
        index = in_place.static_index(index, "y.flat[index] = v")
        in_place.write_cycled(self.base, value,
                              lambda marker, v: marker.flat.__setitem__(index, v),
                              "y.flat[index] = v")

    def copy(self):
        """A copy of the flattened array."""
        return _FLAT_HELPERS["copy"](_FLAT_HELPERS["ravel"](self.base))


def _shape(y):
    return tuple(int(d) for d in y.shape)


_FLAT_HELPERS = {}


def _set_flat(self, value):
    in_place.write_cycled(self, value, lambda marker, v: setattr(marker, "flat", v),
                          "y.flat = v")


def _resize(self, *new_shape, refcheck=True):
    """``y.resize(new_shape)``: ``y`` takes the new shape, keeping its first entries in C
    order and filling with zeros (``np.resize`` repeats instead)."""
    if len(new_shape) == 1 and (new_shape[0] is None or isinstance(new_shape[0], (tuple, list))):
        new_shape = () if new_shape[0] is None else tuple(new_shape[0])
    if new_shape == ():
        return None
    shape = tuple(int(d) for d in new_shape)
    if any(d < 0 for d in shape):
        raise ValueError("negative dimensions not allowed")
    flat = _FLAT_HELPERS["ravel"](self)
    size, target = int(np.prod(self.shape)), int(np.prod(shape))
    if target > size:
        flat = _FLAT_HELPERS["concatenate"]([flat, np.zeros(target - size, np.dtype(self.dtype))])
    new = _FLAT_HELPERS["reshape"](_FLAT_HELPERS["getitem"](flat, slice(0, target)), shape)
    in_place.write(self, new, "y.resize(new_shape)", reshape=True)
    return None


def _setfield(self, *args, **kwargs):
    raise NoRuleError(
        "y.setfield writes raw bytes of another dtype into the array in place, which has no "
        "diffkit rule. For a field of the array's own dtype at offset 0 (its whole value), "
        "write y[...] = value; keep the fields of structured data in separate arrays.")


def _itemset(self, *args):
    """``y.itemset(i, v)`` (NumPy before 2.0): ``y.flat[i] = v`` for one integer, else
    ``y[index] = v``."""
    if not args:
        raise ValueError("itemset must have at least one argument")
    *index, value = args
    if len(index) == 1 and isinstance(index[0], (int, np.integer)):
        FlatIter(self)[index[0]] = value
    else:
        self[tuple(index[0]) if len(index) == 1 else tuple(index)] = value


def _into(out, result, what, depth=2):
    """NumPy's ``out=``: ``result`` itself without a buffer; into a traced buffer, written
    in place (and the buffer returned, as NumPy returns it); a NumPy array cannot hold a
    traced result: the escape error of ``out=`` buffers, naming the user's line."""
    if out is None:
        return result
    if isinstance(out, Tracer):
        in_place.write(out, result, f"{what}(..., out=y)")
        return out
    raise in_place_call_error(result, sys._getframe(depth), what)


def _clip_method(clip):
    def method(self, *args, out=None, **kwargs):
        if len(args) > 2:          # ndarray.clip(min, max, out)
            args, out = args[:2], args[2]
        return _into(out, clip(self, *args, **kwargs), "y.clip")
    method.__name__ = "clip"
    method.__doc__ = np.ndarray.clip.__doc__
    return method


def _out_method(fn, name):
    """An ndarray method with ``out=`` (``y.cumsum(out=y)``): ``fn``'s result written into
    a traced ``out``."""
    def method(self, *args, out=None, **kwargs):
        return _into(out, fn(self, *args, **kwargs), f"y.{name}")
    method.__name__ = name
    method.__doc__ = getattr(np.ndarray, name).__doc__
    return method


def _install_in_place_methods(dnp):
    for key in ("ravel", "reshape", "getitem", "copy", "concatenate"):
        _FLAT_HELPERS[key] = _plain(getattr(dnp, key))   # before in_place follows views
    Tracer.sort = _sort_method(_plain(dnp.sort), "sort", 0)
    Tracer.partition = _sort_method(_plain(dnp.partition), "partition", 1)
    Tracer.fill = _fill
    Tracer.put = _put
    Tracer.flat = property(FlatIter, _set_flat, doc="A flat iterator over the array.")
    Tracer.resize = _resize
    Tracer.setfield = _setfield
    if hasattr(np.ndarray, "itemset"):   # removed in NumPy 2.0
        Tracer.itemset = _itemset
    Tracer.clip = _clip_method(_plain(dnp.clip))
    for name in ("round", "cumsum", "cumprod"):
        setattr(Tracer, name, _out_method(_plain(getattr(dnp, name)), name))


def install(dnp):
    """Attach NumPy's array methods, dispatch protocols and conversion guards to ``Tracer``,
    routed to the namespace ``dnp`` (the operators are the ops floor's:
    ``diffkit/ops/operators.py``)."""
    _install_methods(dnp)
    transpose, swapaxes = _plain(dnp.transpose), _plain(dnp.swapaxes)
    Tracer.T = property(lambda self: transpose(self))
    Tracer.mT = property(lambda self: swapaxes(self, -1, -2))
    # x.at[idx].set(v) / .add / .multiply / .min / .max: functional updates, as in JAX.
    Tracer.at = property(At)
    Tracer.__array_ufunc__ = array_ufunc
    Tracer.__array_function__ = array_function
    # Escape guards: conversions to plain NumPy or Python numbers would lose derivatives.
    Tracer.__array__ = conversions.array
    Tracer.__float__ = conversions.scalar("float")
    Tracer.__int__ = conversions.integer
    Tracer.__complex__ = conversions.scalar("complex")
    Tracer.__index__ = conversions.scalar("operator.index")
    Tracer.item = conversions.scalar(".item")
    Tracer.tolist = conversions.scalar(".tolist")
    Tracer.__bool__ = conversions.truth


def _install_methods(dnp):
    Tracer.reshape = _reshape_method(_plain(dnp.reshape))
    Tracer.transpose = _transpose_method(_plain(dnp.transpose))
    for name in _METHODS:
        if hasattr(dnp, name):
            setattr(Tracer, name, _plain(getattr(dnp, name)))
    for name in _REDUCTIONS:
        if hasattr(dnp, name):
            setattr(Tracer, name, _reduction_method(_plain(getattr(dnp, name)), name))
    Tracer.flatten = _plain(dnp.ravel)
    Tracer.dot = _reading_other(_plain(dnp.dot))
    for name in ("real", "imag"):
        if hasattr(dnp, name):
            setattr(Tracer, name, property(_plain(getattr(dnp, name))))
    _install_in_place_methods(dnp)
