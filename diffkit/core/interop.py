"""How traced values behave as NumPy arrays: operators, methods, and escape guards.

``install(dnp)`` gives ``Tracer`` NumPy's operators (``+ - * / ** @``, comparisons, indexing)
and array methods (``.sum``, ``.reshape``, ``.T`` ...), each routed to the differentiable
function of the same name in ``diffkit.numpy``. Conversions that would silently drop the
derivative (``np.asarray``, ``float()``, ``.item()``) raise ``TracerConversionError``
instead, saying what to write.
"""


from ..errors import NoRuleError, TracerConversionError
from .trace import Tracer


def concrete_value(tracer):
    """The plain value under ``tracer`` (for truth tests), or None when it has none (a
    batched value stands for many values at once)."""
    value = tracer
    while isinstance(value, Tracer):
        value = getattr(value, "primal", None)
    return value


def _conversion_error(tracer, what, fix):
    return TracerConversionError(
        f"{what} of a traced value (shape {tracer.shape}, traced by {tracer._trace.name}) "
        f"would drop its derivative. {fix}")


def _array(self, dtype=None, copy=None):
    raise _conversion_error(
        self, "np.asarray/np.array",
        "Use diffkit.numpy (import diffkit.numpy as dnp) for array operations on it, "
        "dnp.stack to build an array from traced values, or dk.stop_gradient if the "
        "derivative is not wanted. If a NumPy array was indexed by or multiplied with it "
        "(a[t], a.dot(t)), write dnp.getitem(a, t) or dnp.dot(a, t).")


def _scalar(kind):
    def convert(self):
        raise _conversion_error(
            self, f"{kind}()",
            "Keep it an array (0-d arrays work everywhere floats do); if you only need the "
            "number, not its derivative, convert dk.stop_gradient(x) outside the "
            "transformation.")
    return convert


def _bool(self):
    value = concrete_value(self)
    if value is None:
        raise TracerConversionError(
            f"The truth value of a batched traced value (shape {self.shape}) under vmap is "
            "different for each example. Use dnp.where(condition, a, b) instead of if/else.")
    return bool(value)


def _iter(self):
    if not self.shape:
        raise TypeError("iteration over a 0-d traced array")
    return (self[i] for i in range(self.shape[0]))


def _reshape_method(self, *shape, order="C"):
    if order != "C":
        raise NotImplementedError("only order='C' reshapes are supported")
    return _dnp.reshape(self, shape[0] if len(shape) == 1 else shape)


def _transpose_method(self, *axes):
    if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
        axes = axes[0]
    return _dnp.transpose(self, axes or None)


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """Route ``np.sin(t)``, ``ndarray + t``, ``scipy.special.erf(t)`` ... to the diffkit.numpy
    (or diffkit.scipy.special) function of that name."""
    fn = getattr(_dnp, ufunc.__name__, None)
    if fn is None:
        from ..scipy import special
        fn = getattr(special, ufunc.__name__, None)
    if method != "__call__" or fn is None or kwargs:
        what = f"np.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
        extra = f" with keywords {sorted(kwargs)}" if kwargs and fn is not None else ""
        raise NoRuleError(
            f"{what}{extra} has no diffkit rule, so it cannot be applied to a traced value. "
            "Use the diffkit.numpy function of the same name where one exists, or define "
            "the derivative yourself.")
    return fn(*inputs)


_dnp = None

# ndarray methods that are diffkit.numpy functions of the same name (installed when present)
# (not "sort": ndarray.sort sorts in place, which a traced value cannot do)
_METHODS = ("sum", "mean", "prod", "max", "min", "argmax", "argmin", "squeeze", "ravel",
            "astype", "dot", "clip", "swapaxes", "round", "var", "std", "cumsum", "cumprod",
            "ptp", "argsort", "diagonal", "trace", "repeat", "take", "conj",
            "conjugate", "nonzero", "all", "any", "copy", "searchsorted", "compress")


def install(dnp):
    """Attach NumPy's operators and array methods to ``Tracer``, routed to ``dnp``."""
    global _dnp
    _dnp = dnp
    # Operators are the functions themselves (a primitive called as Tracer.__mul__(a, b)
    # binds directly): no extra Python frame on the hottest path.
    binary = {"add": dnp.add, "sub": dnp.subtract, "mul": dnp.multiply,
              "truediv": dnp.divide, "pow": dnp.power, "matmul": dnp.matmul,
              "floordiv": dnp.floor_divide, "mod": dnp.remainder, "divmod": dnp.divmod}
    for name, fn in binary.items():
        setattr(Tracer, f"__{name}__", fn)
        setattr(Tracer, f"__r{name}__", lambda self, other, fn=fn: fn(other, self))
    Tracer.__radd__ = dnp.add  # commutative: no need to swap
    Tracer.__rmul__ = dnp.multiply
    comparisons = {"lt": dnp.less, "le": dnp.less_equal, "gt": dnp.greater,
                   "ge": dnp.greater_equal, "eq": dnp.equal, "ne": dnp.not_equal}
    for name, fn in comparisons.items():
        setattr(Tracer, f"__{name}__", fn)
    Tracer.__hash__ = object.__hash__
    Tracer.__neg__ = lambda self: dnp.negative(self)
    Tracer.__pos__ = lambda self: self
    Tracer.__abs__ = lambda self: dnp.abs(self)
    Tracer.__getitem__ = lambda self, index: dnp.getitem(self, index)
    Tracer.__iter__ = _iter
    Tracer.T = property(lambda self: dnp.transpose(self))
    Tracer.mT = property(lambda self: dnp.swapaxes(self, -1, -2))
    Tracer.reshape = _reshape_method
    Tracer.transpose = _transpose_method
    for name in _METHODS:
        if hasattr(dnp, name):
            setattr(Tracer, name, getattr(dnp, name))
    Tracer.flatten = dnp.ravel
    for name in ("real", "imag"):
        if hasattr(dnp, name):
            setattr(Tracer, name, property(getattr(dnp, name)))
    # Escape guards: conversions to plain NumPy or Python numbers would lose derivatives.
    Tracer.__array_ufunc__ = _array_ufunc
    Tracer.__array__ = _array
    Tracer.__float__ = _scalar("float")
    Tracer.__int__ = _scalar("int")
    Tracer.__complex__ = _scalar("complex")
    Tracer.__index__ = _scalar("operator.index")
    Tracer.item = _scalar(".item")
    Tracer.tolist = _scalar(".tolist")
    Tracer.__bool__ = _bool
