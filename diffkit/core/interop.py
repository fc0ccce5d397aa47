"""How traced values behave as NumPy arrays: operators, methods, and escape guards.

``install(dnp)`` gives ``Tracer`` NumPy's operators (``+ - * / ** @``, comparisons, indexing)
and array methods (``.sum``, ``.reshape``, ``.T`` ...), each routed to the differentiable
function of the same name in ``diffkit.numpy``. Conversions that would silently drop the
derivative (``np.asarray``, ``float()``, ``.item()``) raise ``TracerConversionError``
instead, saying what to write.
"""


import functools
import inspect

import numpy as np

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


_NO_VALUE = getattr(np, "_NoValue", object())
_SIMPLE = (bool, int, float, complex, str, type(None))


def _accepted_keywords(fn):
    """The keyword names ``fn`` accepts, or None when it takes ``**kwargs``."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    names = set()
    for p in params:
        if p.kind is p.VAR_KEYWORD:
            return None
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            names.add(p.name)
    return frozenset(names)


def _numpy_defaults(func):
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return {}
    return {p.name: p.default for p in params if p.default is not p.empty}


def _is_harmless(name, value, defaults):
    """A keyword NumPy passes through that does not change the result: its NumPy default,
    ``np._NoValue``, ``out=None``/``dtype=None``, or ``where=True``."""
    if value is _NO_VALUE or (value is None and name in ("out", "dtype")):
        return True
    if name == "where" and value is True:
        return True
    if name not in defaults:
        return False
    default = defaults[name]
    if value is default:
        return True
    return (isinstance(value, _SIMPLE) and type(value) is type(default)
            and value == default)


@functools.cache
def _signature_info(fn, func):
    return _accepted_keywords(fn), _numpy_defaults(func)


def _filter_keywords(where, fn, func, kwargs):
    """Keep the keywords ``fn`` accepts, drop harmless NumPy-only defaults, and raise for
    NumPy-only keywords that would change the result."""
    if not kwargs:
        return kwargs
    try:
        accepted, defaults = _signature_info(fn, func)
    except TypeError:  # unhashable callables
        accepted, defaults = _accepted_keywords(fn), _numpy_defaults(func)
    if accepted is None:
        return kwargs
    kept = {}
    for name, value in kwargs.items():
        if name in accepted:
            kept[name] = value
        elif not _is_harmless(name, value, defaults):
            raise NoRuleError(
                f"{where} with keyword {name}={value!r} has no diffkit rule, so it cannot be "
                "applied to a traced value. Drop the keyword (convert the result afterwards), "
                "or define the derivative yourself with dk.custom_vjp/dk.custom_jvp.")
    return kept


def _numpy_name(func):
    module = getattr(func, "__module__", None) or "numpy"
    prefix = "np" + module[len("numpy"):] if module.startswith("numpy") else module
    return module, f"{prefix}.{func.__name__}"


def _diffkit_counterpart(func):
    """The diffkit function standing for the NumPy function ``func``, or None."""
    module, _ = _numpy_name(func)
    if module == "numpy" or (module.startswith("numpy.")
                             and module.split(".")[1] in ("core", "_core", "lib")):
        namespace = _dnp
    elif module == "numpy.linalg":
        from ..numpy import linalg as namespace
    elif module == "numpy.fft":
        from ..numpy import fft as namespace
    else:
        return None
    fn = getattr(namespace, func.__name__, None)
    if fn is None or fn is func or not callable(fn) or inspect.ismodule(fn):
        return None
    if (getattr(fn, "__module__", None) or "").startswith("numpy"):
        return None  # a re-exported NumPy function would dispatch back here
    return fn


def _array_function(self, func, types, args, kwargs):
    """Route ``np.sum(t)``, ``np.linalg.solve(t, b)``, ``np.fft.fft(t)`` ... to the diffkit
    function of the same name, with NumPy's positional arguments and keywords."""
    for t in types:
        if not issubclass(t, (np.ndarray, Tracer)):
            return NotImplemented  # a foreign array type: let its own dispatch run
    _, where = _numpy_name(func)
    fn = _diffkit_counterpart(func)
    if fn is None:
        raise NoRuleError(
            f"{where} has no diffkit rule, so it cannot be applied to a traced value. Use "
            "the diffkit.numpy function that computes the same thing, or define the "
            "derivative yourself with dk.custom_vjp or dk.custom_jvp (or apply it to "
            "dk.stop_gradient(x) if no derivative is wanted).")
    return fn(*args, **_filter_keywords(where, fn, func, kwargs))


def _reduction_method(fn, name):
    """``Tracer.sum`` and friends, accepting NumPy's ``dtype=None``/``out=None`` keywords."""
    accepted = _accepted_keywords(fn)
    numpy_method = getattr(np.ndarray, name)

    def method(self, *args, **kwargs):
        if kwargs and accepted is not None:
            kwargs = {k: v for k, v in kwargs.items()
                      if k in accepted or not _is_harmless(k, v, {})}
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
    for name in ("sum", "mean", "prod", "max", "min"):
        if hasattr(dnp, name):
            setattr(Tracer, name, _reduction_method(getattr(dnp, name), name))
    Tracer.flatten = dnp.ravel
    for name in ("real", "imag"):
        if hasattr(dnp, name):
            setattr(Tracer, name, property(getattr(dnp, name)))
    # Escape guards: conversions to plain NumPy or Python numbers would lose derivatives.
    Tracer.__array_ufunc__ = _array_ufunc
    Tracer.__array_function__ = _array_function
    Tracer.__array__ = _array
    Tracer.__float__ = _scalar("float")
    Tracer.__int__ = _scalar("int")
    Tracer.__complex__ = _scalar("complex")
    Tracer.__index__ = _scalar("operator.index")
    Tracer.item = _scalar(".item")
    Tracer.tolist = _scalar(".tolist")
    Tracer.__bool__ = _bool
