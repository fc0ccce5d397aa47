"""Functions that apply a user's function: ``piecewise``, ``apply_along_axis``,
``apply_over_axes`` and ``vectorize``.

They are compositions: the user's function runs on diffkit's traced values, so every
transformation sees through it and no rule of their own is needed. Design (and layering):
``ops`` sits below the interpreters, so these cannot call ``vmap``; like NumPy's own
implementations they loop in Python over slices (``apply_along_axis``) or elements
(``vectorize``) and stack the results. Under ``vmap`` each slice is itself batched, so the
batch dimension stays vectorised; the function may use Python control flow on values
wherever NumPy's loop would allow it (a value batched by ``vmap`` has no single value).

``piecewise`` with concrete conditions (plain arrays, or values differentiated by
``grad``/``jvp``) evaluates each function only on the entries its condition selects, as
NumPy, so a branch never sees (or leaks NaN from) the other branches' entries. Conditions
batched by ``vmap`` select per example: then each function runs on all of ``x`` and
``where`` picks the entries.
"""

import re

import numpy as np

from ..core.concrete import concrete_value, holds_tracer
from ..core.trace import Tracer
from ..core.zeros import as_array, dtype_of, shape_of
from . import elementwise as ew
from . import shape as sh
from .indexing import At, getitem

__all__ = ["piecewise", "apply_along_axis", "apply_over_axes", "vectorize"]


# --- piecewise ------------------------------------------------------------------------------


def _conditions(x, condlist):
    """``condlist`` as a list of boolean conditions, each broadcastable to ``x``: a list or
    tuple of conditions as given (one condition when its entries are scalars and ``x`` is
    not), an array of ``x``'s rank as one condition, of one more rank as its rows."""
    ndim = len(shape_of(x))
    if isinstance(condlist, (list, tuple)):
        if condlist and ndim and len(shape_of(as_array(condlist[0]))) == 0:
            condlist = [condlist]
    else:
        condlist = as_array(condlist)
        if len(shape_of(condlist)) == ndim + 1 and ndim:
            condlist = [getitem(condlist, i) for i in range(shape_of(condlist)[0])]
        else:
            condlist = [condlist]
    return [c if isinstance(c, Tracer) else np.asarray(c, bool) for c in condlist]


def _branch(func, values, args, kw, dtype):
    """``func`` applied to ``values`` (a scalar func is its value), in ``dtype``."""
    out = func(values, *args, **kw) if callable(func) else func
    if isinstance(out, Tracer):
        return out if dtype_of(out) == dtype else ew.astype(out, dtype)
    return np.asarray(out).astype(dtype)


def piecewise(x, condlist, funclist, *args, **kw):
    """``funclist[i](x)`` where ``condlist[i]`` holds (later conditions win), 0 elsewhere or
    the extra last function's value where no condition holds, as ``np.piecewise``."""
    if not holds_tracer(x, condlist, list(args), list(kw.values())):
        return np.piecewise(x, condlist, funclist, *args, **kw)
    x = as_array(x)
    conditions = _conditions(x, condlist)
    n = len(conditions)
    if len(funclist) not in (n, n + 1):
        raise ValueError(f"with {n} condition(s), either {n} or {n + 1} functions are "
                         f"expected, got {len(funclist)}")
    if len(funclist) == n + 1:  # the "otherwise" function
        anything = conditions[0]
        for c in conditions[1:]:
            anything = ew.logical_or_p(anything, c)
        conditions = conditions + [ew.logical_not_p(anything)]
    dtype = dtype_of(x)
    concrete = [c if not isinstance(c, Tracer) else concrete_value(c) for c in conditions]
    if any(c is None for c in concrete):
        return _piecewise_where(x, conditions, funclist, args, kw, dtype)
    y = np.zeros(shape_of(x), dtype)
    for condition, func in zip(concrete, funclist):
        condition = np.broadcast_to(np.asarray(condition, bool), shape_of(x))
        if not condition.any():
            continue
        y = At(y)[condition].set(_branch(func, getitem(x, condition), args, kw, dtype))
    return y


def _piecewise_where(x, conditions, funclist, args, kw, dtype):
    """``piecewise`` for conditions batched by ``vmap``: every function on all of ``x``."""
    y = np.zeros(shape_of(x), dtype)
    for condition, func in zip(conditions, funclist):
        y = ew.where_p(condition, _branch(func, x, args, kw, dtype), y)
    return y


# --- apply_along_axis, apply_over_axes ------------------------------------------------------


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """``func1d`` applied to every 1-D slice of ``arr`` along ``axis``, as
    ``np.apply_along_axis``: the result's axes from ``func1d`` take the place of ``axis``."""
    if not holds_tracer(arr, list(args), list(kwargs.values())):
        return np.apply_along_axis(func1d, axis, arr, *args, **kwargs)
    arr = as_array(arr)
    ndim = len(shape_of(arr))
    axis = sh._normalize_axis(axis, ndim)
    moved = sh.moveaxis(arr, axis, -1) if axis != ndim - 1 else arr
    outer = shape_of(moved)[:-1]
    if 0 in outer:
        raise ValueError("Cannot apply_along_axis when any iteration dimensions are 0")
    results = [as_array(func1d(getitem(moved, index), *args, **kwargs))
               for index in np.ndindex(*outer)]
    stacked = sh.stack(results)
    res_ndim = len(shape_of(results[0]))
    buff = sh.reshape(stacked, outer + shape_of(results[0]))
    dims = list(range(len(shape_of(buff))))
    perm = dims[:axis] + dims[len(dims) - res_ndim:] + dims[axis:len(dims) - res_ndim]
    return sh.transpose(buff, tuple(perm)) if perm != dims else buff


def apply_over_axes(func, a, axes):
    """``func(a, axis)`` applied repeatedly over ``axes``, keeping the number of dimensions
    (a reduced axis is re-inserted), as ``np.apply_over_axes``."""
    if not holds_tracer(a):
        return np.apply_over_axes(func, a, axes)
    val = as_array(a)
    ndim = len(shape_of(val))
    for axis in np.atleast_1d(np.asarray(axes)).tolist():
        axis = axis + ndim if axis < 0 else axis
        res = as_array(func(val, axis))
        if len(shape_of(res)) != ndim:
            res = sh.expand_dims(res, axis)
            if len(shape_of(res)) != ndim:
                raise ValueError("function is not returning an array of the correct shape")
        val = res
    return val


# --- vectorize ------------------------------------------------------------------------------

_DIMENSIONS = re.compile(r"\(([^()]*)\)")


def _parse_signature(signature):
    """``'(n),(n)->()'`` as ``([('n',), ('n',)], [()])``."""
    try:
        inputs, outputs = signature.replace(" ", "").split("->")
        parse = lambda part: [tuple(d for d in group.split(",") if d)  # noqa: E731
                              for group in _DIMENSIONS.findall(part)]
        return parse(inputs), parse(outputs)
    except ValueError:
        raise ValueError(f"not a valid gufunc signature: {signature}") from None


class vectorize:  # noqa: N801 (NumPy's name)
    """``np.vectorize`` for diffkit: ``pyfunc`` applied to each element (or, with a
    ``signature``, each core sub-array) of the broadcast arguments, results stacked.
    Arguments named in ``excluded`` (positions or keywords) are passed unchanged; ``otypes``
    casts the outputs. Differentiable through ``pyfunc``."""

    def __init__(self, pyfunc=None, otypes=None, doc=None, excluded=None, cache=False,
                 signature=None):
        if pyfunc is not None and not callable(pyfunc):
            raise TypeError(f"vectorize: pyfunc must be callable, got {type(pyfunc).__name__}")
        self.pyfunc = pyfunc
        self.otypes = otypes
        self.excluded = set(excluded or ())
        self.signature = signature
        self._core = None if signature is None else _parse_signature(signature)
        self._numpy = None if pyfunc is None else np.vectorize(
            pyfunc, otypes=otypes, doc=doc, excluded=excluded, cache=cache, signature=signature)
        self.__doc__ = doc if doc is not None else getattr(pyfunc, "__doc__", None)

    def __call__(self, *args, **kwargs):
        if self.pyfunc is None:  # used as a decorator with arguments
            return vectorize(args[0], self.otypes, None, self.excluded, False, self.signature)
        if not holds_tracer(list(args), list(kwargs.values())):
            return self._numpy(*args, **kwargs)
        mapped = [i for i in range(len(args)) if i not in self.excluded]
        names = [k for k in kwargs if k not in self.excluded]
        values = [as_array(args[i]) for i in mapped] + [as_array(kwargs[k]) for k in names]
        cores = self._core[0] if self._core else [()] * len(values)
        if len(cores) != len(values):
            raise TypeError(f"wrong number of positional arguments: expected {len(cores)}, "
                            f"got {len(values)}")
        loop = _loop_shape(values, cores)
        outputs = []
        for index in np.ndindex(*loop):
            call_args, call_kwargs = list(args), dict(kwargs)
            for value, core, slot in zip(values, cores, mapped + names):
                piece = _element(value, core, loop, index)
                if isinstance(slot, int):
                    call_args[slot] = piece
                else:
                    call_kwargs[slot] = piece
            outputs.append(self.pyfunc(*call_args, **call_kwargs))
        return self._assemble(outputs, loop)

    def _assemble(self, outputs, loop):
        several = isinstance(outputs[0], tuple) if outputs else False
        columns = list(zip(*outputs)) if several else [outputs]
        results = []
        for k, column in enumerate(columns):
            stacked = sh.stack([as_array(o) for o in column])
            out = sh.reshape(stacked, loop + shape_of(stacked)[1:])
            if self.otypes:
                dtype = np.dtype(self.otypes[k] if len(self.otypes) > k else self.otypes[0])
                if dtype != dtype_of(out):
                    out = ew.astype(out, dtype) if isinstance(out, Tracer) else \
                        out.astype(dtype)
            results.append(out)
        return tuple(results) if several else results[0]


def _loop_shape(values, cores):
    """The broadcast loop shape of the arguments (their shapes without the core dims);
    each core dimension name must have one size."""
    sizes, loops = {}, []
    for value, core in zip(values, cores):
        dims = shape_of(value)
        if len(dims) < len(core):
            raise ValueError(f"an input has {len(dims)} dimension(s), fewer than its core "
                             f"dimensions {core}")
        for name, size in zip(core, dims[len(dims) - len(core):]):
            if sizes.setdefault(name, size) != size:
                raise ValueError(f"inconsistent size for core dimension {name!r}: "
                                 f"{sizes[name]} vs {size}")
        loops.append(dims[:len(dims) - len(core)])
    return np.broadcast_shapes(*loops)


def _element(value, core, loop, index):
    """The core sub-array of ``value`` at loop position ``index`` (broadcasting)."""
    dims = shape_of(value)
    own = dims[:len(dims) - len(core)]
    offset = len(loop) - len(own)
    position = tuple(0 if size == 1 else i for i, size in zip(index[offset:], own))
    if not position:
        return value
    return getitem(value, position)

