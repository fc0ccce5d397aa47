"""NumPy's ufunc methods on traced values: ``np.add.reduce``, ``np.multiply.accumulate``,
``np.subtract.outer`` ... each routed to the diffkit function that computes the same thing.

``reduce`` and ``accumulate`` exist where diffkit has the matching reduction (``add`` ->
``sum``/``cumsum``, ``multiply`` -> ``prod``/``cumprod``, ``maximum`` -> ``max``, ``logaddexp``
-> ``logsumexp`` ...). ``outer`` works for every binary ufunc diffkit has, by broadcasting.
Anything else (``reduceat``, ``at`` on a traced value, ``maximum.accumulate``) raises an
error naming the method.
"""

import numpy as np

from ..core.zeros import shape_of
from ..errors import NoRuleError
from ..ops.special_logistic import logsumexp

_NO_VALUE = getattr(np, "_NoValue", object())


def _reductions(dnp):
    return {"add": dnp.sum, "multiply": dnp.prod, "maximum": dnp.max, "minimum": dnp.min,
            "fmax": dnp.nanmax, "fmin": dnp.nanmin, "logaddexp": logsumexp,
            "logical_and": dnp.all, "logical_or": dnp.any}


def _accumulations(dnp):
    return {"add": dnp.cumsum, "multiply": dnp.cumprod}


def ufunc_method(dnp, ufunc, method, inputs, kwargs):
    """``getattr(ufunc, method)(*inputs, **kwargs)`` computed with diffkit's functions."""
    name = ufunc.__name__
    where = f"np.{name}.{method}"
    if method == "outer":
        return _outer(dnp, name, where, inputs, kwargs)
    table = {"reduce": _reductions, "accumulate": _accumulations}.get(method)
    fn = table(dnp).get(name) if table else None
    if fn is None:
        raise NoRuleError(
            f"{where} has no diffkit rule, so it cannot be applied to a traced value. Write "
            "it with diffkit.numpy functions (for example np.sum, np.cumsum, np.max with "
            "axis=), or define the derivative yourself with dk.custom_vjp/dk.custom_jvp.")
    array, *rest = inputs
    options = _options(where, rest, kwargs, method)
    if method == "accumulate":
        return fn(array, axis=options["axis"])
    out = fn(array, axis=options["axis"], keepdims=options["keepdims"])
    initial = options["initial"]
    if initial is _NO_VALUE or initial is None:
        return out
    return getattr(dnp, name)(out, initial)  # the ufunc itself folds the initial value in


def _options(where, rest, kwargs, method):
    """NumPy's positional and keyword options of ``reduce``/``accumulate``, checked."""
    names = ("axis", "dtype", "out", "keepdims", "initial", "where") if method == "reduce" \
        else ("axis", "dtype", "out")
    if len(rest) > len(names):
        raise TypeError(f"{where} takes at most {len(names) + 1} positional arguments")
    options = {"axis": 0, "dtype": None, "out": None, "keepdims": False,
               "initial": _NO_VALUE, "where": True}
    options.update(zip(names, rest))
    for key, value in kwargs.items():
        if key not in names:
            raise TypeError(f"{where} got an unexpected keyword argument {key!r}")
        options[key] = value
    out = options["out"]
    if out is not None and not (isinstance(out, tuple) and all(o is None for o in out)):
        raise NoRuleError(f"{where} with out= would write a traced value into an array in "
                          "place; use the returned value instead of out=.")
    if options["where"] is not True:
        raise NoRuleError(f"{where} with where= has no diffkit rule; select the entries "
                          "first (np.where(mask, x, identity)) and reduce the result.")
    if options["dtype"] is not None:
        raise NoRuleError(f"{where} with dtype= has no diffkit rule; cast the input with "
                          ".astype(dtype) first.")
    return options


def _outer(dnp, name, where, inputs, kwargs):
    fn = getattr(dnp, name, None)
    if fn is None or len(inputs) != 2 or kwargs:
        raise NoRuleError(f"{where} has no diffkit rule for these arguments (it needs two "
                          "arrays and no keywords); broadcast explicitly: "
                          f"np.{name}(a[..., None], b).")
    a, b = inputs
    return fn(dnp.reshape(a, shape_of(a) + (1,) * len(shape_of(b))), b)
