"""NumPy's dispatch protocols on traced values: ``__array_ufunc__`` (``np.sin(t)``,
``ndarray * t``, ``scipy.special.erf(t)``) and ``__array_function__`` (``np.sum(t)``,
``np.linalg.solve(t, b)``, ``np.fft.fft(t)``), each routed to the diffkit function of the
same name, with NumPy's keywords checked: a keyword diffkit's function takes is passed on,
one that keeps NumPy's default is dropped, any other raises ``NoRuleError`` naming it.
"""

import functools
import inspect
import sys

import numpy as np

from .. import numpy as dnp
from ..core.trace import Tracer, shown_value
from ..errors import NoRuleError
from ..numpy import fft as dnp_fft
from ..numpy import linalg as dnp_linalg
from ..numpy._wrap import reads_directly
from .escapes import in_place_call_error, raise_for_scipy_wrapper, writes_out
from .ufunc_methods import ufunc_method

_UFUNC_FUNCTIONS = {}  # ufunc -> the diffkit function found for it


def array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """Route ``np.sin(t)``, ``ndarray + t``, ``scipy.special.erf(t)`` ... to the diffkit.numpy
    (or diffkit.scipy.special) function of that name."""
    if method == "__call__" and not kwargs:
        fn = _UFUNC_FUNCTIONS.get(ufunc)  # the common case, and on every ``ndarray * t``
        if fn is not None and reads_directly(inputs):
            return fn(*inputs)
    if writes_out(kwargs.get("out")) or method == "at":
        raise in_place_call_error(self, sys._getframe(1), f"np.{ufunc.__name__}", method)
    kwargs.pop("out", None)   # only all-None here
    fn = getattr(dnp, ufunc.__name__, None)
    if fn is ufunc:
        fn = None   # NumPy's own ufunc, passed through (np.isnat): it would dispatch back here
    if fn is None:
        fn = getattr(_scipy_special(), ufunc.__name__, None)
    if fn is None and method == "__call__":
        raise_for_scipy_wrapper(ufunc, sys._getframe(1))
    if method != "__call__":  # reduce, accumulate, outer, reduceat
        return ufunc_method(dnp, ufunc, method, inputs, kwargs)
    if fn is None:
        raise NoRuleError(_no_rule_message(ufunc))
    if kwargs or not reads_directly(inputs):
        # the namespace's wrapper takes NumPy's keywords (or names the one it cannot) and
        # reads a list or a foreign array-like (a pandas Series) as NumPy does
        return fn(*inputs, **kwargs)
    _UFUNC_FUNCTIONS[ufunc] = getattr(fn, "diffkit_function", fn)  # skip the wrapper next time
    return fn(*inputs)



_NO_VALUE = getattr(np, "_NoValue", object())
_SIMPLE = (bool, int, float, complex, str, type(None))


def accepted_keywords(fn):
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


def is_harmless(name, value, defaults):
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
    return accepted_keywords(fn), _numpy_defaults(func)


def _filter_keywords(where, fn, func, kwargs):
    """Keep the keywords ``fn`` accepts, drop harmless NumPy-only defaults, and raise for
    NumPy-only keywords that would change the result."""
    if not kwargs:
        return kwargs
    try:
        accepted, defaults = _signature_info(fn, func)
    except TypeError:  # unhashable callables
        accepted, defaults = accepted_keywords(fn), _numpy_defaults(func)
    if accepted is None:
        return kwargs
    kept = {}
    for name, value in kwargs.items():
        if name in accepted:
            kept[name] = value
        elif not is_harmless(name, value, defaults):
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
        namespace = dnp
    elif module == "numpy.linalg":
        namespace = dnp_linalg
    elif module == "numpy.fft":
        namespace = dnp_fft
    else:
        return None
    fn = getattr(namespace, func.__name__, None)
    if fn is None or fn is func or not callable(fn) or inspect.ismodule(fn):
        return None
    if (getattr(fn, "__module__", None) or "").startswith("numpy"):
        return None  # a re-exported NumPy function would dispatch back here
    return fn


def array_function(self, func, types, args, kwargs):
    """Route ``np.sum(t)``, ``np.linalg.solve(t, b)``, ``np.fft.fft(t)`` ... to the diffkit
    function of the same name, with NumPy's positional arguments and keywords."""
    for t in types:
        if not issubclass(t, (np.ndarray, Tracer)):
            return NotImplemented  # a foreign array type: let its own dispatch run
    if func in _SHOWING:
        return _show(func, args, kwargs)
    _, where = _numpy_name(func)
    if writes_out(kwargs.get("out")):
        raise in_place_call_error(self, sys._getframe(1), where)
    fn = _diffkit_counterpart(func)
    if fn is None:
        raise NoRuleError(
            f"{where} has no diffkit rule, so it cannot be applied to a traced value. Use "
            "the diffkit.numpy function that computes the same thing, or define the "
            "derivative yourself with dk.custom_vjp or dk.custom_jvp (or apply it to "
            "dk.stop_gradient(x) if no derivative is wanted).")
    return fn(*args, **_filter_keywords(where, fn, func, kwargs))




# NumPy's functions that turn an array into text: a traced value is shown by its value (the
# stacked values under vmap), read without a jit guard, as print(x) shows it.
_SHOWING = frozenset({np.array2string, np.array_repr, np.array_str})


def _show(func, args, kwargs):
    value, by, _ = shown_value(args[0])
    if value is None:
        raise TypeError(f"np.{func.__name__}: this traced value (shape {args[0].shape}, "
                        f"traced by {args[0]._trace.name}) has no value to show; print it "
                        "with dk.debug.print")
    return func(value, *args[1:], **kwargs)


def _no_rule_message(ufunc):
    """The error for a ufunc diffkit has no rule for, naming it where it lives: NumPy's
    (``np.<name>``) or SciPy's special functions (``scipy.special.<name>``)."""
    name = ufunc.__name__
    special = sys.modules.get("scipy.special")
    if getattr(np, name, None) is not ufunc and getattr(special, name, None) is ufunc:
        return (f"scipy.special.{name} has no diffkit rule (diffkit.scipy.special has no "
                f"{name}), so it cannot be applied to a traced value. Hold its arguments "
                "fixed (constants, or dk.stop_gradient), or define its derivative yourself "
                "with dk.custom_jvp/dk.custom_vjp; docs/scipy.md lists the special "
                "functions without rules.")
    return (f"np.{name} has no diffkit rule, so it cannot be applied to a traced value. "
            "Use the diffkit.numpy function of the same name where one exists, or define "
            "the derivative yourself with dk.custom_vjp/dk.custom_jvp.")


def _scipy_special():
    """``diffkit.scipy.special``, imported when a SciPy ufunc first meets a traced value:
    diffkit.scipy loads SciPy's integrate, signal, stats and optimize (about half a second),
    which `import diffkit` does not need."""
    import diffkit.scipy.special
    return diffkit.scipy.special
