"""Building blocks of the special-function primitives (``diffkit.scipy.special``).

Each primitive runs the ``scipy.special`` function itself and writes its derivative with
diffkit's operations, usually in terms of other special functions (``gammaln`` ->
``digamma`` -> ``polygamma(1, .)`` -> ``polygamma(2, .)`` ...; a Bessel function -> its
neighbours of order ``v - 1`` and ``v + 1``), so every derivative can be differentiated
and batched again. ``_ufunc`` builds such an elementwise, broadcasting primitive from its
partial derivatives (impl, jvp, vjp and batch in one call); ``_public`` builds the function
users call, with SciPy's name and argument names.

Arguments, broadcasting and dtypes follow SciPy, except that float32 stays float32 and
the order of a Bessel function (``v``) or of ``polygamma``/``expn`` (``n``) does not
change the result's dtype. Python scalars adapt to the arrays they meet (NumPy 2's rule).

Arguments without a derivative
------------------------------
Some arguments have no derivative rule (a ``_Fixed`` partial): integer orders (``n`` of
``polygamma``, ``expn``) and the order ``v`` of Bessel functions. Differentiating with
respect to one of them raises :class:`diffkit.errors.NoRuleError` naming the function and
the argument; holding it fixed (a constant, or ``stop_gradient``) is always fine, and
``vmap`` batches every argument.

Where a derivative is infinite (logit at 0 and 1, erfinv at +-1, ndtri at 0 and 1,
gammainc at x == 0 for a < 1) the rules give the infinite limit, and every derivative
product follows the 0 x inf rule (a zero factor gives 0; docs/conventions.md). The
conventions at other special points are listed in each family's module docstring.
"""

import inspect
import math

import numpy as np

from ..core.primitive import Primitive
from ..core.zeros import Zero, dtype_of, shape_of
from ..errors import NoRuleError
from . import elementwise as ew
from . import reductions, shape
from .families import broadcasting_batch, zero_safe

_SQRT_PI = math.sqrt(math.pi)
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


# --- building blocks ------------------------------------------------------------------------


class _Fixed:
    """An argument with no derivative rule: differentiating with respect to it raises."""

    __slots__ = ("why",)

    def __init__(self, why):
        self.why = why


def _float_dtype(args, orders):
    """The dtype of a result: that of the floating-point arguments (not the orders), as
    NumPy promotes them; Python scalars are weak and do not count."""
    dtypes = [a.dtype for i, a in enumerate(args)
              if i not in orders and hasattr(a, "dtype") and a.dtype.kind in "fc"]
    return np.result_type(*dtypes) if dtypes else np.dtype(np.float64)


def _typed(fn, orders=()):
    """``fn`` with its floating-point results cast to the arguments' float dtype (SciPy
    computes some functions in float64 for float32 arguments)."""

    def cast(out, dtype):
        if out.dtype.kind == "f" and dtype.kind == "f" and out.dtype != dtype:
            return out.astype(dtype)
        return out

    def impl(*args, **params):
        out = fn(*args, **params)
        dtype = _float_dtype(args, orders)
        if isinstance(out, tuple):
            return tuple(cast(np.asarray(o) if np.ndim(o) else o, dtype) for o in out)
        return cast(out, dtype)

    return impl


_ARGNAMES = {}  # primitive name -> its arguments' names (SciPy's)


def _no_rule(fname, argname, why):
    return NoRuleError(
        f"diffkit.scipy.special.{fname} has no derivative with respect to its argument "
        f"{argname!r} ({why}). Differentiate with respect to the other arguments only and "
        f"hold {argname!r} fixed: pass it as a constant, or as dk.stop_gradient({argname}) "
        "when it is computed from differentiated values.")


def _ufunc(name, fn, argnames, *partials, reads=None, orders=()):
    """An elementwise, broadcasting primitive of ``len(argnames)`` arrays.

    ``partials[i](t, out, *args)`` is ``t * d out / d args[i]`` written with diffkit's
    operations, or a ``_Fixed`` for an argument without derivative. ``reads[i]`` lists
    what partial ``i`` reads (argument positions and ``"out"``); by default everything.
    ``orders``: argument positions that do not take part in the result's dtype.
    """
    n = len(argnames)
    # Special functions have poles and branch points: a zero tangent gives 0 there (no NaN
    # from the branch a where did not take), as families.zero_safe explains.
    partials = tuple(p if isinstance(p, _Fixed) else zero_safe(p) for p in partials)
    everything = frozenset(range(n)) | {"out"}
    if reads is None:
        reads = tuple(frozenset() if isinstance(p, _Fixed) else everything for p in partials)
    else:
        reads = tuple(frozenset(r) for r in reads)
    ignores = everything - frozenset().union(*reads)
    prim = Primitive(name, _typed(fn, orders), vjp_ignores=ignores, vjp_reads=reads)
    _ARGNAMES[name] = argnames

    def jvp(primals, tangents):
        out = prim(*primals)
        total = None
        for i, (partial, t) in enumerate(zip(partials, tangents)):
            if type(t) is Zero:
                continue
            if isinstance(partial, _Fixed):
                if dtype_of(primals[i]).kind not in "fc":
                    continue
                raise _no_rule(name, argnames[i], partial.why)
            part = partial(t, out, *primals)
            total = part if total is None else total + part
        if total is None:
            return out, Zero(shape_of(out), dtype_of(out))
        if shape_of(total) != shape_of(out):
            total = shape.broadcast_to(total, shape_of(out))
        return out, total

    def vjp_rule(i):
        partial = partials[i]
        if isinstance(partial, _Fixed):
            def fixed(ct, out, *primals):
                if dtype_of(primals[i]).kind not in "fc":
                    return None  # an integer order carries no derivative
                raise _no_rule(name, argnames[i], partial.why)
            return fixed

        def rule(ct, out, *primals):
            return reductions.unbroadcast(partial(ct, out, *primals), shape_of(primals[i]))
        return rule

    prim.jvp = jvp
    prim.vjp = tuple(vjp_rule(i) for i in range(n))
    if n == 1:
        prim.batch = lambda axis_size, values, batch_axes, **params: (
            prim(values[0], **params), batch_axes[0])
    else:
        prim.batch = broadcasting_batch(prim)
    return prim


def _weak(args, orders, integers):
    """Python scalars and lists as arrays: floats take the dtype of the float arrays among
    ``args`` (NumPy 2's weak scalars), integer orders stay integers."""
    if all(hasattr(a, "dtype") for a in args):
        return args
    strong = [a.dtype for i, a in enumerate(args)
              if i not in orders and hasattr(a, "dtype") and a.dtype.kind == "f"]
    dtype = np.result_type(*strong) if strong else np.dtype(np.float64)
    converted = []
    for i, a in enumerate(args):
        if not hasattr(a, "dtype"):
            if i in integers or i in orders or isinstance(a, (list, tuple)) or \
                    isinstance(a, complex):
                a = np.asarray(a)
            else:
                a = np.asarray(a, dtype)
        converted.append(a)
    return tuple(converted)


def _public(prim, doc, orders=(), integers=(), name=None, argnames=None):
    """The function users call: SciPy's name and argument names, binding ``prim``."""
    name = name or prim.name
    argnames = argnames or _ARGNAMES[prim.name]
    signature = inspect.Signature([inspect.Parameter(a, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                                   for a in argnames])
    count = len(argnames)

    def function(*args, **kwargs):
        if kwargs or len(args) != count:
            try:
                args = signature.bind(*args, **kwargs).args
            except TypeError as error:
                raise TypeError(f"{name}() {error}") from None
        return prim(*_weak(args, orders, integers))

    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    function.__signature__ = signature
    function.__module__ = "diffkit.scipy.special"
    return function


_INTEGER_ORDER = _Fixed("an integer order")


def _poly(x, coefficients):
    """``sum(c_k x**k)`` by Horner's rule, in diffkit operations."""
    result = coefficients[-1]
    for c in coefficients[-2::-1]:
        result = result * x + c
    return result


def _series_where(u, limit, series, direct):
    """``series(u)`` where ``|u| < limit``, else ``direct(u)``, with ``direct`` evaluated
    only at safe points so that neither branch leaks inf or nan into derivatives."""
    small = ew.less(ew.abs(u), limit)
    safe = ew.where(small, 2 * limit, u)
    return ew.where(small, series(u), direct(safe))
