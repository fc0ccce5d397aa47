"""Traced values as NumPy arrays: operators (``+ - * / ** @``, comparisons, indexing), array
methods (``.sum``, ``.reshape``, ``.T`` ...) and ``.at[idx]`` functional updates.

``install(dnp)`` attaches them to ``Tracer``, each routed to the differentiable function of
the same name in ``diffkit.numpy`` (``dnp``). Operators and methods get the functions
underneath the namespace's wrappers (a primitive called as ``Tracer.__mul__(a, b)`` binds
directly): no extra Python frame on the hottest path.
"""

import numpy as np

from ..core.trace import Tracer
from ..errors import NoRuleError
from ..ops.indexing import At
from . import conversions
from .dispatch import accepted_keywords, array_function, array_ufunc, is_harmless

# ndarray methods that are diffkit.numpy functions of the same name (installed when present)
# (not "sort": ndarray.sort sorts in place, which a traced value cannot do)
_METHODS = ("sum", "mean", "prod", "max", "min", "argmax", "argmin", "squeeze", "ravel",
            "astype", "dot", "clip", "swapaxes", "round", "var", "std", "cumsum", "cumprod",
            "ptp", "argsort", "diagonal", "trace", "repeat", "take", "conj",
            "conjugate", "nonzero", "all", "any", "copy", "searchsorted", "compress")
_REDUCTIONS = ("sum", "mean", "prod", "max", "min")


def _plain(fn):
    """The diffkit function under a namespace wrapper (the wrapper reads array-likes and
    NumPy's keywords, which a traced operand does not need)."""
    return getattr(fn, "diffkit_function", fn)


def _iter(self):
    if not self.shape:
        raise TypeError("iteration over a 0-d traced array")
    return (self[i] for i in range(self.shape[0]))


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


def install(dnp):
    """Attach NumPy's operators, array methods, dispatch protocols and conversion guards to
    ``Tracer``, routed to the namespace ``dnp``."""
    _install_operators(dnp)
    _install_methods(dnp)
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


def _install_operators(dnp):
    # Operators are the functions themselves (a primitive called as Tracer.__mul__(a, b)
    # binds directly): no extra Python frame on the hottest path.
    binary = {"add": dnp.add, "sub": dnp.subtract, "mul": dnp.multiply,
              "truediv": dnp.divide, "pow": dnp.power, "matmul": dnp.matmul,
              "floordiv": dnp.floor_divide, "mod": dnp.remainder, "divmod": dnp.divmod}
    for name, fn in binary.items():
        fn = _plain(fn)
        setattr(Tracer, f"__{name}__", fn)
        setattr(Tracer, f"__r{name}__", lambda self, other, fn=fn: fn(other, self))
    bitwise = {"and": dnp.bitwise_and, "or": dnp.bitwise_or, "xor": dnp.bitwise_xor,
               "lshift": dnp.left_shift, "rshift": dnp.right_shift}   # boolean masks: m & k
    for name, fn in bitwise.items():
        fn = _plain(fn)
        setattr(Tracer, f"__{name}__", fn)
        setattr(Tracer, f"__r{name}__", lambda self, other, fn=fn: fn(other, self))
    invert = _plain(dnp.invert)
    Tracer.__invert__ = lambda self: invert(self)
    Tracer.__radd__ = _plain(dnp.add)  # commutative: no need to swap
    Tracer.__rmul__ = _plain(dnp.multiply)
    comparisons = {"lt": dnp.less, "le": dnp.less_equal, "gt": dnp.greater,
                   "ge": dnp.greater_equal, "eq": dnp.equal, "ne": dnp.not_equal}
    for name, fn in comparisons.items():
        setattr(Tracer, f"__{name}__", _plain(fn))
    negative, absolute, getitem, transpose, swapaxes = map(_plain, (
        dnp.negative, dnp.abs, dnp.getitem, dnp.transpose, dnp.swapaxes))
    Tracer.__hash__ = object.__hash__
    Tracer.__neg__ = lambda self: negative(self)
    Tracer.__pos__ = lambda self: self
    Tracer.__abs__ = lambda self: absolute(self)
    Tracer.__getitem__ = lambda self, index: getitem(self, index)
    Tracer.__iter__ = _iter
    Tracer.T = property(lambda self: transpose(self))
    Tracer.mT = property(lambda self: swapaxes(self, -1, -2))


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
    for name in ("real", "imag"):
        if hasattr(dnp, name):
            setattr(Tracer, name, property(_plain(getattr(dnp, name))))
