"""Building blocks of the special-function primitives (``diffkit.scipy.special``).

Each primitive runs the ``scipy.special`` function itself and writes its derivative with
diffkit's operations, usually in terms of other special functions (``gammaln`` ->
``digamma`` -> ``polygamma(1, .)`` -> ``polygamma(2, .)`` ...; a Bessel function -> its
neighbours of order ``v - 1`` and ``v + 1``), so every derivative can be differentiated
and batched again. ``special_function`` builds such an elementwise, broadcasting primitive
and the function users call (SciPy's name and argument names) from its partial derivatives,
with ``families.elementwise``; ``public`` gives a primitive written by hand its function.

Arguments, broadcasting and dtypes follow SciPy, except that float32 stays float32 and
the order of a Bessel function (``v``) or of ``polygamma``/``expn`` (``n``) does not
change the result's dtype. Python scalars adapt to the arrays they meet (NumPy 2's rule).

Arguments without a derivative
------------------------------
Some arguments have no derivative rule (a ``no_derivative`` partial): integer orders (``n`` of
``polygamma``, ``expn``) and the order ``v`` of Bessel functions. Differentiating with
respect to one of them raises :class:`diffkit.errors.NoRuleError` naming the function and
the argument; holding it fixed (a constant, or ``stop_gradient``) is always fine, and
``vmap`` batches every argument.

Where a derivative is infinite (logit at 0 and 1, erfinv at +-1, ndtri at 0 and 1,
gammainc at x == 0 for a < 1) the rules give the infinite limit, and every derivative
product follows the 0 x inf rule (a zero factor gives 0; docs/conventions.md). The
conventions at other special points are listed in each family's module docstring.

SciPy's functions are looked up on first use
--------------------------------------------
Importing ``scipy.special`` takes about 0.3 s (it loads SciPy's array-API layer), about as
long as the rest of ``import diffkit``. So the families name SciPy's functions through
``sc`` below: ``sc.erf`` is a ``SciPyFunction`` that stands for ``scipy.special.erf``
without importing anything, and the builders here give such a primitive an implementation
that looks the function up on the primitive's first call (``scipy.special`` is then
imported by SciPy's own lazy submodules; ``scipy`` itself is imported anyway) and puts the
real implementation in ``prim.impl``, so every later call costs what a direct reference
costs and ``prim.impl`` is SciPy's ufunc (or its dtype wrapper) as before. A rule or an
implementation that calls SciPy at run time writes ``scipy.special.<name>`` directly.
"""

import math

import numpy as np
import scipy  # SciPy imports its submodules on first attribute access (scipy.special below)

from ..core.primitive import Primitive
from ..core.zeros import Zero, dtype_of, shape_of, tangent_dtype
from ..errors import NoRuleError
from . import elementwise as ew
from . import reductions, shape
from . import sparsity_rules as sr
from .families import broadcasting_batch, elementwise, no_derivative, public_function, times

_SQRT_PI = math.sqrt(math.pi)
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


# --- SciPy's functions, looked up on first use -----------------------------------------------


class SciPyFunction:
    """``scipy.special.<name>``, named when a primitive is registered and looked up when it
    first runs (``resolve``), so that registering the primitives imports no SciPy
    submodule. Calling it directly works (it looks the function up each time); the
    builders below use ``on_first_call`` instead, which calls SciPy's function directly."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def resolve(self):
        return getattr(scipy.special, self.name)

    def __call__(self, *args, **kwargs):
        return self.resolve()(*args, **kwargs)

    def __repr__(self):
        return f"<scipy.special.{self.name}, looked up on first use>"


class _SciPySpecialNames:
    """``scipy.special`` as the families name its functions at registration: ``sc.erf``
    is ``SciPyFunction("erf")``. tests/test_import_cost.py checks every name against
    ``scipy.special`` and that each one reaches a primitive through ``on_first_call``."""

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return SciPyFunction(name)


sc = _SciPySpecialNames()


def on_first_call(prim, fn, build=None):
    """``prim`` with an implementation that on its first call builds the real one,
    ``build(SciPy's function)`` (``fn`` itself when ``build`` is None), puts it in
    ``prim.impl`` and runs it; later calls run it directly. Nothing changes when ``fn`` is
    not a ``SciPyFunction`` (an implementation written here). Returns ``prim``."""
    if not isinstance(fn, SciPyFunction):
        return prim
    resolved = []

    def first_call(*args, **params):
        if not resolved:
            resolved.append(fn.resolve() if build is None else build(fn.resolve()))
            if prim.impl is first_call:   # not when a test has wrapped the implementation
                prim.impl = resolved[0]
        return resolved[0](*args, **params)

    first_call.__name__ = first_call.__qualname__ = prim.name
    first_call.scipy_function = fn   # what it stands for (tests/test_import_cost.py)
    prim.impl = first_call
    return prim


# --- building blocks ------------------------------------------------------------------------


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


_MODULE = "diffkit.scipy.special"

# The order of a function of an integer order (polygamma, expn): no derivative.
INTEGER_ORDER = no_derivative("an integer order")


def special_function(name, fn, partials, doc, *, orders=(), integers=()):
    """An elementwise special function: ``(name_p, name) = special_function(name, fn,
    {"x": partial, ...}, doc)``, built by ``families.elementwise`` with SciPy's argument
    names (the keys of ``partials``) and dtype rules: float results in the arguments' float
    dtype, Python scalars adapting to the arrays they meet. ``orders``: positions of
    arguments that do not take part in the result's dtype (a Bessel order); ``integers``:
    positions whose Python scalars stay integers."""
    prim, function = elementwise(name, _typed(fn, orders), partials, doc=doc,
                                 module=_MODULE, prepare=_prepare(orders, integers))
    on_first_call(prim, fn, lambda real: _typed(real, orders))
    return prim, function


def public(prim, argnames, doc, *, orders=(), integers=(), name=None):
    """The function users call for a special-function primitive written by hand (several
    outputs, a rule of its own): SciPy's name and argument names, and its scalar dtypes."""
    return public_function(prim, name or prim.name, argnames, doc, _MODULE,
                           prepare=_prepare(orders, integers))


def multiple_outputs(name, fn, slopes, doc, argnames=("x",), fixed=None, wrt=-1,
                     orders=None):
    """A special function with several outputs (``airy``'s four, the pairs of integrals
    ``iti0k0``, ``pbdv``'s value and slope ...), elementwise and broadcasting:
    ``(name_p, name) = multiple_outputs(name, fn, slopes, doc, argnames)``. It is
    differentiable in one argument, the last unless ``wrt`` says which; ``slopes(*args)``
    gives the derivative of each output with respect to it, in diffkit operations. The
    other arguments (orders, parameters) are held fixed: ``fixed`` says why (a
    ``no_derivative``), in the error that differentiating with respect to one of them
    raises. Products follow the 0 x inf rule. ``orders``: the positions of arguments that
    do not take part in the result's dtype (by default all but the differentiable one)."""
    where = f"{_MODULE}.{name}"
    last = wrt % len(argnames)
    others = tuple(i for i in range(len(argnames)) if i != last)
    orders = others if orders is None else orders

    def no_rule(argname):
        return NoRuleError(
            f"{where} has no derivative with respect to its argument {argname!r} "
            f"({fixed.why}). Differentiate with respect to {argnames[last]!r} only and hold "
            f"{argname!r} fixed: pass it as a constant, or as dk.stop_gradient({argname}).")

    def check_fixed(tangents):
        for i in others:
            t = tangents[i]
            if t is not None and type(t) is not Zero and dtype_of(t).kind in "fc":
                raise no_rule(argnames[i])

    def typed_slopes(primals):
        """The slopes in the dtype of the differentiable argument (a float64 order or
        parameter must not make a float32 slope float64)."""
        dtype = dtype_of(primals[last])
        return [ew.astype(d, dtype) if dtype.kind == "f" and dtype_of(d).kind == "f"
                and dtype_of(d) != dtype else d for d in slopes(*primals)]

    def jvp(primals, tangents):
        check_fixed(tangents)
        out, t = prim(*primals), tangents[last]
        if t is None or type(t) is Zero:
            return out, tuple(Zero(shape_of(o), tangent_dtype(dtype_of(o))) for o in out)
        parts = tuple(times(t, d) for d in typed_slopes(primals))
        return out, tuple(p if shape_of(p) == shape_of(o) else shape.broadcast_to(
            p, shape_of(o)) for p, o in zip(parts, out))

    def vjp(cts, out, *primals):
        total = None
        for ct, d in zip(cts, typed_slopes(primals)):
            if type(ct) is not Zero:
                part = times(ct, d)
                total = part if total is None else total + part
        x_shape = shape_of(primals[last])
        return total if shape_of(total) == x_shape else reductions.unbroadcast(total, x_shape)

    def fixed_vjp(i):
        def rule(cts, out, *primals):
            if dtype_of(primals[i]).kind in "fc":
                raise no_rule(argnames[i])
            return None
        return rule

    rules = [vjp if i == last else fixed_vjp(i) for i in range(len(argnames))]
    prim = Primitive(name, _typed(fn, orders), jvp, tuple(rules), multiple_results=True,
                     vjp_ignores=("out",))
    broadcast = broadcasting_batch(prim)

    def batch(axis_size, values, batch_axes):
        out, _ = broadcast(axis_size, values, batch_axes)   # the batch axis ends up in front
        return out, (0,) * len(out)

    prim.batch = batch
    prim.sparsity = sr.per_output(sr.elementwise_sparsity())
    on_first_call(prim, fn, lambda real: _typed(real, orders))
    return prim, public(prim, argnames, doc, orders=orders)


def _prepare(orders, integers):
    return lambda args: _weak(args, orders, integers)


def _poly(x, coefficients):
    """``sum(c_k x**k)`` by Horner's rule, in diffkit operations."""
    result = coefficients[-1]
    for c in coefficients[-2::-1]:
        result = result * x + c
    return result


def _series_where(u, limit, series, direct):
    """``series(u)`` where ``|u| < limit``, else ``direct(u)``, with ``direct`` evaluated
    only at safe points so that neither branch leaks inf or nan into derivatives."""
    small = ew.less_p(ew.abs_p(u), limit)
    safe = ew.where_p(small, 2 * limit, u)
    return ew.where_p(small, series(u), direct(safe))
