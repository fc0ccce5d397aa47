"""SciPy's special functions (``scipy.special``) as differentiable primitives.

Each primitive runs the ``scipy.special`` function itself and writes its derivative with
diffkit's operations, usually in terms of other functions of this module (``gammaln`` ->
``digamma`` -> ``polygamma(1, .)`` -> ``polygamma(2, .)`` ...; a Bessel function -> its
neighbours of order ``v - 1`` and ``v + 1``), so every derivative can be differentiated
and batched again. Functions that are naturally compositions (``softmax``, ``logsumexp``
with ``b``, ``multigammaln``) are written as compositions and need no rules of their own.

Arguments, broadcasting and dtypes follow SciPy, except that float32 stays float32 and
the order of a Bessel function (``v``) or of ``polygamma``/``expn`` (``n``) does not
change the result's dtype. Python scalars adapt to the arrays they meet (NumPy 2's rule).

Arguments without a derivative
------------------------------
Some arguments have no derivative rule: integer orders (``n`` of ``polygamma``, ``expn``)
and the order ``v`` of Bessel functions. Differentiating with respect to one of them raises
:class:`diffkit.errors.NoRuleError` naming the function and the argument; holding it fixed
(a constant, or ``stop_gradient``) is always fine, and ``vmap`` batches every argument.

The shape parameters of the incomplete gamma and beta functions (``a`` of ``gammainc``,
``gammaincc`` and their inverses; ``a`` and ``b`` of ``betainc``, ``betaincc`` and their
inverses) have no closed-form derivative either, but they are differentiable here, to third
order: their series and continued fractions are evaluated on truncated Taylor series in
the parameters ("jets"), which carry the derivatives through the recurrences (relative
accuracy about 1e-12 against 40-digit references). The fourth derivative raises. The
same holds for the parameters of ``hyp1f1`` and ``hyp2f1`` and the exponent ``x`` of
``zeta``, which live in :mod:`diffkit.ops.special_series`.

Conventions at special points (the same in both engines)
--------------------------------------------------------
=====================  =====================================================================
function               convention
=====================  =====================================================================
xlogy(x, y)            at x == 0: d/dx = log(y) (JAX's), d/dy = x / y = 0, also at y == 0
xlog1py(x, y)          at x == 0: d/dx = log1p(y), d/dy = 0, also at y == -1
huber(delta, r)        at |r| == delta: d/dr = r, d/d delta = 0 (both sides agree: C^1)
entr, rel_entr,        at x == 0 the derivative in x is the one-sided limit, -inf (+inf for
kl_div                 entr); rel_entr/kl_div have d/dy = 0 / 1 there; entr' = 0 for x < 0
                       (entr is the constant -inf there)
spence                 at 0: -inf, and spence''(0) = +inf (one-sided limits)
exprel, boxcox,        at 0 (u = lmbda log x, lmbda y, z - 1) a Taylor series replaces the
inv_boxcox, spence     0/0 formula, so derivatives of every order are exact there
ellipk, ellipe,        near m == 0 the derivatives' series (exact at every order there);
ellipkm1               ellipk'(1) = +inf, ellipkm1'(0) = -inf (one-sided limits)
rgamma                 at the poles of gamma, (-1)^n n! (derivative of the reflection formula)
Bessel y, k (and j, i  at x == 0 where the value is infinite: -value (the one-sided limit),
of negative order)     with alternating infinite higher derivatives
lambertw'              +inf at the float nearest -1/e (where SciPy's value is nan)
exprel                 derivatives of every order as one primitive; +inf where e^x overflows
ndtri_exp              derivative 0 at y = -inf (via erfcx), +inf at y = 0
gammainc, gammaincc    at x == 0 the one-sided limits (d2/da dx = -inf for a <= 1, 0 above)
sici, shichi           Si'(0) = Shi'(0) = 1 (the limit); Ci'(0) = Chi'(0) = +inf
logsumexp              without return_sign a negative sum gives nan, as in SciPy
lambertw               real branch k=0 only; nan below -1/e (SciPy gives complex values)
loggamma               real inputs; nan for x < 0, as SciPy's real loggamma
=====================  =====================================================================
Elsewhere where a derivative is infinite (logit at 0 and 1, erfinv at +-1, ndtri at 0 and
1, gammainc at x == 0 for a < 1) the rules give the infinite limit, and every derivative
product follows the 0 x inf rule (a zero factor gives 0; docs/conventions.md).
"""

import inspect
import math
from collections import OrderedDict

import numpy as np
import scipy.special as sc

from ..core.primitive import Primitive
from ..core.zeros import Zero, dtype_of, shape_of
from ..errors import NoRuleError
from . import elementwise as ew
from . import reductions, shape
from .control import stop_gradient
from .exact_phase import cos_half_pi_square_p, sin_half_pi_square_p
from .families import broadcasting_batch, sum_tangents, times, zero_safe
from .jets import Jets

__all__ = [
    # error function and normal distribution
    "erf", "erfc", "erfinv", "erfcinv", "erfcx", "erfi", "dawsn", "ndtr", "ndtri", "log_ndtr",
    "ndtri_exp", "owens_t", "fresnel",
    # gamma and beta functions
    "gamma", "gammaln", "loggamma", "rgamma", "digamma", "psi", "polygamma", "multigammaln",
    "beta", "betaln", "poch", "binom", "gammainc", "gammaincc", "gammaincinv",
    "gammainccinv", "betainc", "betaincc", "betaincinv", "betainccinv",
    # logistic, softmax, information theory
    "expit", "logit", "log_expit", "logsumexp", "softmax", "log_softmax", "xlogy", "xlog1py",
    "entr", "rel_entr", "kl_div", "huber", "pseudo_huber",
    # Bessel functions
    "i0", "i0e", "i1", "i1e", "iv", "ive", "j0", "j1", "jv", "jn", "y0", "y1", "yv", "yn",
    "k0", "k0e", "k1", "k1e", "kv", "kve", "kn",
    # exponential integrals and others
    "expn", "exp1", "expi", "exprel", "spence", "ellipk", "ellipkm1", "ellipe", "lambertw",
    "wrightomega", "boxcox", "boxcox1p", "inv_boxcox", "inv_boxcox1p",
    "sici", "shichi", "cosm1", "exp10", "log1p", "expm1",
]

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


def _exprel_derivative_impl(x, order):
    """The ``order``-th derivative of exprel, M_k(x) = int_0^1 t^k e^(x t) dt (k >= 1): by
    its series sum_j x^j / (j! (k + j + 1)) for |x| <= 2, else by the closed form
    e^x sum_{j<=k} (-1)^j k!/(k-j)! x^-(j+1) - (-1)^k k! x^-(k+1), which overflows to +inf
    where e^x does (as exprel itself); +inf at +inf, 0 at -inf."""
    x = np.asarray(x, np.float64)
    small = np.abs(x) <= 2
    with np.errstate(all="ignore"):
        xs = np.where(small, x, 0.0)
        term, series = np.ones_like(xs), np.zeros_like(xs)
        for j in range(32):
            series = series + term / (order + j + 1)
            term = term * xs / (j + 1)
        u = 1 / np.where(small, 1.0, x)
        total = np.zeros_like(u)
        for j in range(order, -1, -1):   # Horner in u for sum_j (-1)^j k!/(k-j)! u^(j+1)
            total = (total + (-1) ** j * math.perm(order, j)) * u
        closed = np.exp(np.where(small, 0.0, x)) * total \
            - (-1) ** order * math.factorial(order) * u ** (order + 1)
        result = np.where(small, series, np.where(np.isposinf(x), np.inf, closed))
    return result[()] if result.ndim == 0 else result


exprel_derivative_p = Primitive("exprel_derivative", _typed(_exprel_derivative_impl),
                                vjp_ignores=("out",))
_exprel_next = zero_safe(lambda t, x, order: t * exprel_derivative_p(x, order=order + 1))
exprel_derivative_p.jvp = lambda primals, tangents, order: (
    exprel_derivative_p(primals[0], order=order), _exprel_next(tangents[0], primals[0], order))
exprel_derivative_p.vjp = (lambda ct, out, x, order: _exprel_next(ct, x, order),)
exprel_derivative_p.batch = lambda axis_size, values, batch_axes, order: (
    exprel_derivative_p(values[0], order=order), batch_axes[0])


def _exprel_slope(u):
    """exprel'(u) = (u e^u - expm1(u)) / u**2 (1/2 at 0, +inf where e^u overflows)."""
    return exprel_derivative_p(u, order=1)


# log1p(v) / v and its derivative; series sum (-v)^k / (k+1) and its term-by-term derivative.
_LOG1P_RATIO = [(-1) ** k / (k + 1) for k in range(9)]
_LOG1P_RATIO_SLOPE = [(-1) ** (k + 1) * (k + 1) / (k + 2) for k in range(10)]


def _log1p_ratio(v):
    return _series_where(v, 0.01, lambda w: _poly(w, _LOG1P_RATIO),
                         lambda w: ew.log1p(w) / w)


def _log1p_ratio_slope(v):
    return _series_where(v, 0.01, lambda w: _poly(w, _LOG1P_RATIO_SLOPE),
                         lambda w: (w / (1 + w) - ew.log1p(w)) / ew.square(w))


# --- error function and the normal distribution --------------------------------------------

erf_p = _ufunc("erf", sc.erf, ("x",),
               lambda t, out, x: t * ((2 / _SQRT_PI) * ew.exp(-ew.square(x))),
               reads=((0,),))
erfc_p = _ufunc("erfc", sc.erfc, ("x",),
                lambda t, out, x: t * ((-2 / _SQRT_PI) * ew.exp(-ew.square(x))),
                reads=((0,),))
erfinv_p = _ufunc("erfinv", sc.erfinv, ("y",),
                  lambda t, out, y: t * ((_SQRT_PI / 2) * ew.exp(ew.square(out))),
                  reads=(("out",),))
erfcinv_p = _ufunc("erfcinv", sc.erfcinv, ("y",),
                   lambda t, out, y: t * ((-_SQRT_PI / 2) * ew.exp(ew.square(out))),
                   reads=(("out",),))
# erfcx'(x) = 2 x erfcx(x) - 2/sqrt(pi) -> 0 as x -> inf. Far right the two terms cancel:
# there the asymptotic series (2/sqrt(pi)) sum_n>=1 (-1)^n (2n-1)!! / (2 x^2)^n replaces them
# (exact to rounding from x = 50, and 0 at +inf instead of inf * 0).
_ERFCX_SLOPE_FAR = [0.0] + [(-1) ** n * math.prod(range(1, 2 * n, 2)) / 2 ** n * 2 / _SQRT_PI
                            for n in range(1, 7)]


def _erfcx_slope(x, out):
    far = ew.greater(x, 50.0)
    near_x = ew.where(far, 0.0, x)
    inverse_square = 1 / ew.square(ew.where(far, x, 50.0))
    return ew.where(far, _poly(inverse_square, _ERFCX_SLOPE_FAR),
                    2 * near_x * ew.where(far, 0.0, out) - 2 / _SQRT_PI)


erfcx_p = _ufunc("erfcx", sc.erfcx, ("x",), lambda t, out, x: t * _erfcx_slope(x, out))
erfi_p = _ufunc("erfi", sc.erfi, ("x",),
                lambda t, out, x: t * ((2 / _SQRT_PI) * ew.exp(ew.square(x))),
                reads=((0,),))
dawsn_p = _ufunc("dawsn", sc.dawsn, ("x",), lambda t, out, x: t * (1 - 2 * x * out))
ndtr_p = _ufunc("ndtr", sc.ndtr, ("x",),
                lambda t, out, x: t * ew.exp(-0.5 * ew.square(x) - _LOG_SQRT_2PI),
                reads=((0,),))
ndtri_p = _ufunc("ndtri", sc.ndtri, ("y",),
                 lambda t, out, y: t * ew.exp(0.5 * ew.square(out) + _LOG_SQRT_2PI),
                 reads=(("out",),))


def _log_ndtr_slope(x, out):
    """pdf / cdf. Below 0 as sqrt(2/pi) / erfcx(-x/sqrt 2) (the Gaussian factors cancel
    exactly), accurate however far in the tail pdf and cdf both underflow (about -x there);
    above 0 as exp(log pdf - log cdf)."""
    lower = ew.less(x, 0)
    negative = ew.where(lower, x, -1.0)
    return ew.where(lower, math.sqrt(2 / math.pi) / erfcx_p(negative * -math.sqrt(0.5)),
                    ew.exp(-0.5 * ew.square(x) - _LOG_SQRT_2PI - out))


log_ndtr_p = _ufunc("log_ndtr", sc.log_ndtr, ("x",),
                    lambda t, out, x: t * _log_ndtr_slope(x, out))


def _ndtri_exp_slope(y, out):
    """d/dy ndtri(exp(y)) = cdf / pdf at x = out, the reciprocal of log_ndtr's slope. Below 0
    as sqrt(pi/2) erfcx(-x/sqrt 2): no cancellation between y and x**2/2 far in the tail, and
    the limit 0 at y = -inf; above 0 as exp(y + x**2/2) sqrt(2 pi) (+inf at y = 0)."""
    lower, pole = ew.less(out, 0), ew.equal(y, 0)
    tail = ew.where(lower, out, -1.0)
    upper = ew.logical_not(ew.logical_or(lower, pole))
    x_upper, y_upper = ew.where(upper, out, 0.0), ew.where(upper, y, -1.0)
    # At y = 0 (x = +inf) the pole: 1 / (0 - y), +inf with +inf derivatives (its singular
    # part up to a logarithm), not the overflow of exp(x**2/2).
    return ew.where(lower, math.sqrt(math.pi / 2) * erfcx_p(tail * -math.sqrt(0.5)),
                    ew.where(pole, 1 / (0.0 - y),
                             ew.exp(y_upper + 0.5 * ew.square(x_upper) + _LOG_SQRT_2PI)))


ndtri_exp_p = _ufunc("ndtri_exp", sc.ndtri_exp, ("y",),
                     lambda t, out, y: t * _ndtri_exp_slope(y, out))


def _owens_t_h(t, out, h, a):
    # dT/dh = -phi(h) erf(a h / sqrt 2) / 2
    return t * (-0.5 * ew.exp(-0.5 * ew.square(h) - _LOG_SQRT_2PI)
                * erf_p(a * h * (1 / math.sqrt(2))))


def _owens_t_a(t, out, h, a):
    # dT/da = exp(-h^2 (1 + a^2) / 2) / (2 pi (1 + a^2))
    q = 1 + ew.square(a)
    return t * (ew.exp(-0.5 * ew.square(h) * q) / (2 * math.pi * q))


owens_t_p = _ufunc("owens_t", sc.owens_t, ("h", "a"), _owens_t_h, _owens_t_a,
                   reads=((0, 1), (0, 1)))


# S'(z) = sin(pi z^2 / 2), C'(z) = cos(pi z^2 / 2), with z^2 reduced exactly (exact_phase):
# at z = 1e5 the derivative of S is exactly 0, not the rounding error of the phase.
_FRESNEL_SLOPES = (sin_half_pi_square_p, cos_half_pi_square_p)


def _fresnel_jvp(primals, tangents):
    (z,), (t,) = primals, tangents
    s, c = fresnel_p(z)
    return (s, c), (t * sin_half_pi_square_p(z), t * cos_half_pi_square_p(z))


def _fresnel_vjp(cts, out, z):
    parts = [ct * slope(z) for ct, slope in zip(cts, _FRESNEL_SLOPES) if type(ct) is not Zero]
    return parts[0] if len(parts) == 1 else parts[0] + parts[1]


fresnel_p = Primitive("fresnel", _typed(sc.fresnel), _fresnel_jvp, (_fresnel_vjp,),
                      lambda axis_size, values, batch_axes: (fresnel_p(values[0]), (0, 0)),
                      multiple_results=True, vjp_ignores=("out",))
_ARGNAMES["fresnel"] = ("z",)


def _pair_jvp(prim, derivatives):
    def jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        first, second = derivatives(x)
        return prim(x), (times(t, first), times(t, second))
    return jvp


def _pair_vjp(derivatives):
    def vjp(cts, out, x):
        parts = [times(ct, d) for ct, d in zip(cts, derivatives(x)) if type(ct) is not Zero]
        return parts[0] if len(parts) == 1 else parts[0] + parts[1]
    return vjp


def _sinc_like(x, f, limit_at_0):
    """``f(x) / x``, with ``limit_at_0`` (the value at 0) where x == 0."""
    zero = ew.equal(x, 0)
    safe = ew.where(zero, 1.0, x)
    return ew.where(zero, limit_at_0, f(safe) / safe)


def _sici_derivatives(x):  # Ci' = cos(x) / x: +inf at 0, where Ci has its log singularity
    return _sinc_like(x, ew.sin, 1.0), _sinc_like(x, ew.cos, np.inf)


def _shichi_derivatives(x):
    return _sinc_like(x, ew.sinh, 1.0), _sinc_like(x, ew.cosh, np.inf)


sici_p = Primitive("sici", _typed(sc.sici), vjp_ignores=("out",), multiple_results=True)
sici_p.jvp = _pair_jvp(sici_p, _sici_derivatives)
sici_p.vjp = (_pair_vjp(_sici_derivatives),)
sici_p.batch = lambda axis_size, values, batch_axes: (sici_p(values[0]), (0, 0))
shichi_p = Primitive("shichi", _typed(sc.shichi), vjp_ignores=("out",), multiple_results=True)
shichi_p.jvp = _pair_jvp(shichi_p, _shichi_derivatives)
shichi_p.vjp = (_pair_vjp(_shichi_derivatives),)
shichi_p.batch = lambda axis_size, values, batch_axes: (shichi_p(values[0]), (0, 0))
_ARGNAMES["sici"] = _ARGNAMES["shichi"] = ("x",)

# --- gamma, beta and related ----------------------------------------------------------------

_INTEGER_ORDER = _Fixed("an integer order")

polygamma_p = _ufunc("polygamma", sc.polygamma, ("n", "x"), _INTEGER_ORDER,
                     lambda t, out, n, x: t * polygamma_p(n + 1, x),
                     reads=((), (0, 1)), orders=(0,))
digamma_p = _ufunc("digamma", sc.digamma, ("x",),
                   lambda t, out, x: t * polygamma_p(1, x), reads=((0,),))
gammaln_p = _ufunc("gammaln", sc.gammaln, ("x",),
                   lambda t, out, x: t * digamma_p(x), reads=((0,),))
loggamma_p = _ufunc("loggamma", sc.loggamma, ("x",),
                    lambda t, out, x: t * digamma_p(x), reads=((0,),))
gamma_p = _ufunc("gamma", sc.gamma, ("x",), lambda t, out, x: t * (out * digamma_p(x)))


def _rgamma_slope(x, out):
    """(1/Gamma)'(x) = -digamma(x) / Gamma(x). At the poles of Gamma (x = 0, -1, ...: there
    and only there 1/Gamma is 0 for x <= 0) that is 0 x inf; there the derivative of the
    reflection 1/Gamma(x) = Gamma(1 - x) sin(pi x) / pi is used instead,
    Gamma(1 - x) (cos(pi x) - digamma(1 - x) sin(pi x) / pi): (-1)^n n! at x = -n, and its
    own derivatives are those of 1/Gamma too (a formula valid around the pole)."""
    pole = ew.logical_and(ew.equal(out, 0), ew.less_equal(x, 0))
    near = ew.where(pole, x, 0.5)
    far = ew.where(pole, 1.0, x)
    reflected = gamma_p(1 - near) * (ew.cos(math.pi * near) - digamma_p(1 - near)
                                     * ew.sin(math.pi * near) / math.pi)
    return ew.where(pole, reflected, -(ew.where(pole, 1.0, out) * digamma_p(far)))


rgamma_p = _ufunc("rgamma", sc.rgamma, ("x",), lambda t, out, x: t * _rgamma_slope(x, out))


def _beta_partial(t, out, a, b):
    return t * (out * (digamma_p(a) - digamma_p(a + b)))


beta_p = _ufunc("beta", sc.beta, ("a", "b"), _beta_partial,
                lambda t, out, a, b: _beta_partial(t, out, b, a))
betaln_p = _ufunc("betaln", sc.betaln, ("a", "b"),
                  lambda t, out, a, b: t * (digamma_p(a) - digamma_p(a + b)),
                  lambda t, out, a, b: t * (digamma_p(b) - digamma_p(a + b)),
                  reads=((0, 1), (0, 1)))
poch_p = _ufunc("poch", sc.poch, ("z", "m"),
                lambda t, out, z, m: t * (out * (digamma_p(z + m) - digamma_p(z))),
                lambda t, out, z, m: t * (out * digamma_p(z + m)))
binom_p = _ufunc("binom", sc.binom, ("x", "y"),
                 lambda t, out, x, y: t * (out * (digamma_p(x + 1) - digamma_p(x - y + 1))),
                 lambda t, out, x, y: t * (out * (digamma_p(x - y + 1) - digamma_p(y + 1))))

# --- incomplete gamma and beta functions: derivatives in the shape parameters ------------
#
# d/da of P(a, x) = gammainc(a, x), and d/da, d/db of I_x(a, b) = betainc(a, b, x), have no
# closed form. They come from the series and continued fractions that compute the functions,
# evaluated on truncated Taylor series in the parameters ("jets"), which carry every
# derivative up to _JET_ORDER through the recurrences:
#
# - P(a, x) = x^a e^-x / Gamma(a+1) sum_n x^n / ((a+1)...(a+n))              (x < a + 1)
# - Q(a, x) = x^a e^-x / Gamma(a) / (x+1-a- 1(1-a)/(x+3-a- 2(2-a)/(x+5-a- ...)))  (else)
# - I_x(a, b) = x^a (1-x)^b / (a B(a, b)) / (1+ d1/(1+ d2/(1+ ...))) with
#   d_{2m+1} = -(a+m)(a+b+m) x / ((a+2m)(a+2m+1)), d_{2m} = m(b-m) x / ((a+2m-1)(a+2m)),
#   for x < (a+1)/(a+b+2), else I_x(a, b) = 1 - I_{1-x}(b, a).
#
# The fractions are evaluated from their tail backwards as a ratio of two jets (stable, and
# only multiplications by linear functions of the parameters), to a depth set by the
# convergence of the values alone.

_JET_ORDER = 3  # derivatives in the parameters up to the third


def _fraction_depth(coefficients, x):
    """Terms needed by the continued fraction b_0 + a_1/(b_1 + a_2/(b_2 + ...)) for its
    values, with ``coefficients(k) = (a_k, b_k)`` (forward convergents, rescaled), plus a
    margin for the derivatives (which then agree with 40-digit references to ~1e-12)."""
    _, b0 = coefficients(0)
    a_prev, a_cur, b_prev, b_cur = np.ones_like(x), b0 + 0 * x, np.zeros_like(x), \
        np.ones_like(x)
    previous = a_cur / b_cur
    for k in range(1, 20000):
        numerator, denominator = coefficients(k)
        a_prev, a_cur = a_cur, denominator * a_cur + numerator * a_prev
        b_prev, b_cur = b_cur, denominator * b_cur + numerator * b_prev
        scale = 1 / np.abs(b_cur)
        a_prev, a_cur, b_prev, b_cur = (v * scale for v in (a_prev, a_cur, b_prev, b_cur))
        value = a_cur / b_cur
        if np.all(np.abs(value - previous) <= 4e-16 * np.abs(value)):
            break
        previous = value
    return k + 10


def _gammainc_log_prefactor(jets, a, x, shift):
    """a log x - x - gammaln(a + shift), as a jet in a."""
    f = jets.constant(sc.xlogy(a, x) - x - sc.gammaln(a + shift))
    if jets.order:
        f[1] = np.log(x) - sc.digamma(a + shift)
    for k in range(2, jets.order + 1):
        f[k] = -sc.polygamma(k - 1, a + shift) / math.factorial(k)
    return f


def _gammainc_series(jets, a, x):
    """P(a, x) as a jet in a, by the series."""
    term = jets.constant(np.ones_like(x))
    total = term.copy()
    for n in range(1, 100000):
        inverse = 1 / (a + n)  # x / (a + n) has Taylor coefficients x (-1)^k / (a + n)^(k+1)
        term = jets.mul(term, np.stack([x * inverse * (-inverse) ** k
                                        for k in range(jets.order + 1)]))
        total = total + term
        if np.all((np.abs(term) <= 1e-17 * np.abs(total)) | (np.abs(term) < 1e-300)):
            break
    return jets.mul(jets.exp(_gammainc_log_prefactor(jets, a, x, 1)), total)


def _gammaincc_fraction(jets, a, x):
    """Q(a, x) as a jet in a, by the continued fraction: prefactor / (top / bottom)."""
    def coefficients(k):  # 1 / (b_0 + a_1/(b_1 + ...)): a_k = -k(k-a), b_k = x + 2k + 1 - a
        return -k * (k - a), x + 2 * k + 1 - a

    one = jets.constant(np.ones_like(x))
    depth = _fraction_depth(coefficients, x)
    top, bottom = jets.mul_linear(one, x + 2 * depth + 1 - a, (-1,)), one  # the tail b_depth
    for k in range(depth, 0, -1):  # t_{k-1} = b_{k-1} + a_k / t_k, t = top / bottom
        top, bottom = (jets.mul_linear(top, x + 2 * k - 1 - a, (-1,))
                       + jets.mul_linear(bottom, k * (a - k), (k,))), top
        scale = 1 / np.abs(top[0])
        top, bottom = top * scale, bottom * scale
    return jets.div(jets.mul(jets.exp(_gammainc_log_prefactor(jets, a, x, 0)), bottom), top)


def _gammainc_da_impl(a, x, order):
    """The ``order``-th derivative in ``a`` of the regularized lower incomplete gamma
    function P(a, x) (that of Q is its negative)."""
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    shape_ = a.shape
    a, x = a.ravel(), x.ravel()
    result = np.full(a.shape, np.nan)
    valid = (a > 0) & (x >= 0)
    result[valid & ((x == 0) | np.isinf(x))] = 0.0
    series = valid & (x > 0) & np.isfinite(x) & (x < a + 1)
    fraction = valid & (x > 0) & np.isfinite(x) & ~series
    jets = Jets(1, order)
    with np.errstate(all="ignore"):
        if series.any():
            result[series] = _gammainc_series(jets, a[series], x[series])[order]
        if fraction.any():
            result[fraction] = -_gammaincc_fraction(jets, a[fraction], x[fraction])[order]
    return (result * math.factorial(order)).reshape(shape_)


def _betainc_log_prefactor(jets, a, b, x):
    """a log x + b log(1-x) - log a - betaln(a, b), as a jet in (a, b)."""
    f = jets.constant(sc.xlogy(a, x) + sc.xlog1py(b, -x) - np.log(a) - sc.betaln(a, b))
    for k, (i, j) in enumerate(jets.terms[1:], 1):
        # -betaln = gammaln(a + b) - gammaln(a) - gammaln(b)
        value = sc.polygamma(i + j - 1, a + b) / (math.factorial(i) * math.factorial(j))
        if j == 0:  # and -log a = -log a - sum_k (-e)^k / (k a^k)
            value = value - sc.polygamma(i - 1, a) / math.factorial(i) + (-1) ** i / (i * a ** i)
            if i == 1:
                value = value + np.log(x)
        if i == 0:
            value = value - sc.polygamma(j - 1, b) / math.factorial(j)
            if j == 1:
                value = value + np.log1p(-x)
        f[k] = value
    return f


def _betainc_fraction(jets, a, b, x):
    """I_x(a, b) as a jet in (a, b), by the continued fraction (for x < (a+1)/(a+b+2))."""
    def numerator(k, a, b):
        m = k // 2
        if k % 2:
            return -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
        return m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))

    def coefficients(k):
        return (numerator(k, a, b) if k else 0.0), 1.0

    one = jets.constant(np.ones_like(x))
    top, bottom = one, one  # the tail t = 1
    for k in range(_fraction_depth(coefficients, x), 0, -1):
        # t_{k-1} = 1 + num_k / (den_k t_k), with t = top / bottom: no division
        m = k // 2
        if k % 2:   # num = -x (a + m)(a + b + m), den = (a + 2m)(a + 2m + 1)
            scaled = jets.mul_linear(jets.mul_linear(top, a + 2 * m, (1, 0)), a + 2 * m + 1,
                                     (1, 0))
            added = -x * jets.mul_linear(jets.mul_linear(bottom, a + m, (1, 0)), a + b + m,
                                         (1, 1))
        else:       # num = m x (b - m), den = (a + 2m - 1)(a + 2m)
            scaled = jets.mul_linear(jets.mul_linear(top, a + 2 * m - 1, (1, 0)), a + 2 * m,
                                     (1, 0))
            added = m * x * jets.mul_linear(bottom, b - m, (0, 1))
        top, bottom = scaled + added, scaled
        scale = 1 / np.abs(top[0])
        top, bottom = top * scale, bottom * scale
    prefactor = jets.exp(_betainc_log_prefactor(jets, a, b, x))
    return jets.div(jets.mul(prefactor, bottom), top)


_RECENT_PARTIALS = OrderedDict()  # the last few jets: a Hessian asks for (2,0), (1,1), (0,2)


def _betainc_partials(a, b, x, order):
    """Every derivative of I_x(a, b) in (a, b) up to ``order``, as a jet over the raveled
    broadcast arguments (remembered for the next few calls at the same point)."""
    key = (order, a.tobytes(), b.tobytes(), x.tobytes())
    if key in _RECENT_PARTIALS:
        return _RECENT_PARTIALS[key]
    jets = Jets(2, order)
    result = np.full((len(jets.terms),) + a.shape, np.nan)
    valid = (a > 0) & (b > 0) & (x >= 0) & (x <= 1)
    result[:, valid & ((x == 0) | (x == 1))] = 0.0
    inside = valid & (x > 0) & (x < 1)
    direct = inside & (x < (a + 1) / (a + b + 2))
    mirrored = inside & ~direct
    with np.errstate(all="ignore"):
        if direct.any():
            result[:, direct] = _betainc_fraction(jets, a[direct], b[direct], x[direct])
        if mirrored.any():  # I_x(a, b) = 1 - I_{1-x}(b, a): the roles of a and b swap
            swapped = [jets.index[j, i] for i, j in jets.terms]
            result[:, mirrored] = -_betainc_fraction(jets, b[mirrored], a[mirrored],
                                                     1 - x[mirrored])[swapped]
    for k, (i, j) in enumerate(jets.terms):
        result[k] *= math.factorial(i) * math.factorial(j)
    partials = dict(zip(jets.terms, result))
    _RECENT_PARTIALS[key] = partials
    while len(_RECENT_PARTIALS) > 8:
        _RECENT_PARTIALS.popitem(last=False)
    return partials


def _betainc_partial_impl(a, b, x, da, db):
    """d^(da+db) I_x(a, b) / da^da db^db (da + db >= 1)."""
    a, b, x = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (a, b, x)))
    shape_ = a.shape
    partial = _betainc_partials(a.ravel(), b.ravel(), x.ravel(), da + db)[da, db]
    return partial.reshape(shape_).copy()  # not a view of the remembered jet


def _power_times_exp(x, p, log_factor):
    """x**p exp(log_factor) with the one-sided limits of its derivatives at x = 0: for
    p > 0 through ``power`` (d/dx p x^(p-1): 1 at p = 1, 0 above; d/dp x^p log x -> 0),
    else as one exp(p log x + log_factor) (d/dp -> -inf, d/dx 0 at p = 0)."""
    positive = ew.logical_and(ew.equal(x, 0), ew.greater(p, 0))
    return ew.where(positive, ew.power(x, ew.where(positive, p, 1.0)) * ew.exp(log_factor),
                    ew.exp(xlogy_p(ew.where(positive, 0.0, p), x) + log_factor))


def _gamma_density_da(a, x, order):
    """d^order / da^order of the gamma density x^(a-1) e^-x / Gamma(a), in diffkit ops. At
    x = 0 for a > 1 the a-derivatives (x^(a-1) log^k x) are their limit 0."""
    if order == 0:
        return _power_times_exp(x, a - 1, -x - gammaln_p(a))
    vanish = ew.logical_and(ew.equal(x, 0), ew.greater(a, 1))
    return ew.where(vanish, 0.0, _gamma_density_da_inside(a, ew.where(vanish, 1.0, x), order))


def _gamma_density_da_inside(a, x, order):
    density = ew.exp(xlogy_p(a - 1, x) - x - gammaln_p(a))
    slope = ew.log(x) - digamma_p(a)
    if order == 1:
        return density * slope
    curvature = polygamma_p(1, a)
    if order == 2:
        return density * (ew.square(slope) - curvature)
    return density * (slope * ew.square(slope) - 3 * slope * curvature - polygamma_p(2, a))


@zero_safe
def _gammainc_da_partial_x(t, a, x, order):
    return t * _gamma_density_da(a, x, order)


@zero_safe
def _gammainc_da_partial_a(t, out, a, x, order):
    if order >= _JET_ORDER:
        raise NoRuleError(
            f"derivatives of gammainc/gammaincc in 'a' are implemented to order {_JET_ORDER}; "
            f"order {order + 1} was asked for")
    return t * gammainc_da_p(a, x, order=order + 1)


gammainc_da_p = Primitive("gammainc_da", _typed(_gammainc_da_impl),
                          vjp_ignores=("out",), vjp_reads=(frozenset({0, 1}),) * 2)


def _gammainc_da_jvp(primals, tangents, order):
    a, x = primals
    ta, tx = tangents
    out = gammainc_da_p(a, x, order=order)
    parts = []
    if type(ta) is not Zero:
        parts.append(_gammainc_da_partial_a(ta, out, a, x, order))
    if type(tx) is not Zero:
        parts.append(_gammainc_da_partial_x(tx, a, x, order))
    total = parts[0] if len(parts) == 1 else parts[0] + parts[1]
    if shape_of(total) != shape_of(out):
        total = shape.broadcast_to(total, shape_of(out))
    return out, total


gammainc_da_p.jvp = _gammainc_da_jvp
gammainc_da_p.vjp = (
    lambda ct, out, a, x, order: reductions.unbroadcast(
        _gammainc_da_partial_a(ct, out, a, x, order), shape_of(a)),
    lambda ct, out, a, x, order: reductions.unbroadcast(
        _gammainc_da_partial_x(ct, a, x, order), shape_of(x)),
)
gammainc_da_p.batch = broadcasting_batch(gammainc_da_p)

gammainc_p = _ufunc("gammainc", sc.gammainc, ("a", "x"),
                    lambda t, out, a, x: t * gammainc_da_p(a, x, order=1),
                    lambda t, out, a, x: t * _gamma_density_da(a, x, 0),
                    reads=((0, 1), (0, 1)))
gammaincc_p = _ufunc("gammaincc", sc.gammaincc, ("a", "x"),
                     lambda t, out, a, x: t * -gammainc_da_p(a, x, order=1),
                     lambda t, out, a, x: t * -_gamma_density_da(a, x, 0),
                     reads=((0, 1), (0, 1)))
# Inverses in y: the reciprocal of the density at the result. In a: implicit differentiation
# of P(a, out) = y, d out/da = -(dP/da) / density.


def _gamma_shape_ratio(a, x):
    """(dP/da) / density at (a, x). At x = 0 both vanish (0/0 for a > 1); there the ratio
    is its expansion (x / a) (log x - 1/a - digamma(a)) + O(x^2) (from P ~ x^a / Gamma(a + 1)),
    whose value 0, a-derivative 0 and x-derivative -inf are the one-sided limits: the
    inverse's d out/da is 0 at y = 0 (out stays 0), d2 out/da2 0, d2 out/da dy +inf."""
    at_zero = ew.equal(x, 0)
    inner = ew.where(at_zero, 1.0, x)
    inside = gammainc_da_p(a, inner, order=1) / _gamma_density_da(a, inner, 0)
    # x log(x e^-c) / a: one product, so an infinite tangent of x meets the whole slope
    near_zero = xlogy_p(x, x * ew.exp(-(1 / a + digamma_p(a)))) / a
    return ew.where(at_zero, near_zero, inside)


# The logarithms of the gamma and beta densities as primitives: each partial is one
# expression (log x - digamma(a), (a-1)/x - 1, ...), so a reverse pass multiplies an infinite
# cotangent by the whole partial (-inf) instead of by its terms (-inf + finite * inf = NaN).
gamma_log_density_p = _ufunc(
    "gamma_log_density", lambda a, x: sc.xlogy(a - 1, x) - x - sc.gammaln(a), ("a", "x"),
    lambda t, out, a, x: t * (ew.log(x) - digamma_p(a)),
    lambda t, out, a, x: t * (xdivy_p(a - 1, x) - 1),
    reads=((0, 1), (0, 1)))
beta_log_density_p = _ufunc(
    "beta_log_density",
    lambda a, b, x: sc.xlogy(a - 1, x) + sc.xlog1py(b - 1, -x) - sc.betaln(a, b),
    ("a", "b", "x"),
    lambda t, out, a, b, x: t * (ew.log(x) - digamma_p(a) + digamma_p(a + b)),
    lambda t, out, a, b, x: t * (ew.log1p(-x) - digamma_p(b) + digamma_p(a + b)),
    lambda t, out, a, b, x: t * (xdivy_p(a - 1, x) - xdivy_p(b - 1, 1 - x)),
    reads=((0, 1, 2),) * 3)


def _gamma_inverse_density(a, x):
    """1 / density = x^(1-a) e^x Gamma(a), as exp(-log density): +inf at x = 0 for a > 1
    with the one-sided derivatives (-log(x) / density = +inf in a; a quotient would give
    0 * inf there)."""
    return ew.exp(-gamma_log_density_p(a, x))


gammaincinv_p = _ufunc("gammaincinv", sc.gammaincinv, ("a", "y"),
                       lambda t, out, a, y: t * -_gamma_shape_ratio(a, out),
                       lambda t, out, a, y: t * _gamma_inverse_density(a, out),
                       reads=((0, "out"), (0, "out")))
gammainccinv_p = _ufunc("gammainccinv", sc.gammainccinv, ("a", "y"),
                        lambda t, out, a, y: t * -_gamma_shape_ratio(a, out),
                        lambda t, out, a, y: t * -_gamma_inverse_density(a, out),
                        reads=((0, "out"), (0, "out")))


def _beta_density(a, b, x, da=0, db=0):
    """d^(da+db)/da^da db^db of the beta density x^(a-1) (1-x)^(b-1) / B(a, b), in diffkit
    ops: the density times a polynomial in the derivatives of its logarithm L.

    At the ends of [0, 1] the one-sided limits, as for the gamma density: the density goes
    through ``power`` at x = 0 for a > 1 (at x = 1 for b > 1), so that its x-derivative is
    that of x^(a-1) there; its a- and b-derivatives (x^(a-1) log^k x) are their limit 0."""
    if da + db == 0:
        at_one = ew.equal(x, 1)
        return ew.where(
            at_one,
            _power_times_exp(1 - x, b - 1, xlogy_p(a - 1, x) - betaln_p(a, b)),
            _power_times_exp(x, a - 1, xlog1py_p(b - 1, -x) - betaln_p(a, b)))
    vanish = ew.logical_or(ew.logical_and(ew.equal(x, 0), ew.greater(a, 1)),
                           ew.logical_and(ew.equal(x, 1), ew.greater(b, 1)))
    return ew.where(vanish, 0.0,
                    _beta_density_inside(a, b, ew.where(vanish, 0.5, x), da, db))


def _beta_density_inside(a, b, x, da, db):
    """``_beta_density``'s (da, db) derivative (da + db >= 1) by the formula."""
    density = ew.exp(xlogy_p(a - 1, x) + xlog1py_p(b - 1, -x) - betaln_p(a, b))
    if da < db:  # the expressions are symmetric under a <-> b, x <-> 1 - x
        a, b, x, da, db = b, a, 1 - x, db, da
    both = a + b
    la = ew.log(x) - digamma_p(a) + digamma_p(both)
    lb = ew.log1p(-x) - digamma_p(b) + digamma_p(both)
    if (da, db) == (1, 0):
        return density * la
    laa = polygamma_p(1, both) - polygamma_p(1, a)
    lab = polygamma_p(1, both)
    if (da, db) == (2, 0):
        return density * (ew.square(la) + laa)
    if (da, db) == (1, 1):
        return density * (la * lb + lab)
    laaa = polygamma_p(2, both) - polygamma_p(2, a)
    laab = polygamma_p(2, both)
    if (da, db) == (3, 0):
        return density * (la * ew.square(la) + 3 * la * laa + laaa)
    # (2, 1)
    return density * (ew.square(la) * lb + 2 * la * lab + laa * lb + laab)


def _betainc_partial_rule(which):
    """``t * d/d(argument which)`` of betainc_partial(a, b, x, da, db), under the 0 x inf
    rule (the x-partial is infinite at x = 0 for a <= 1)."""

    @zero_safe
    def rule(t, a, b, x, da, db):
        if which == 2:
            return t * _beta_density(a, b, x, da, db)
        if da + db >= _JET_ORDER:
            raise NoRuleError(
                f"derivatives of betainc in 'a' and 'b' are implemented to order {_JET_ORDER}; "
                f"order {da + db + 1} was asked for")
        return t * betainc_partial_p(a, b, x, da=da + (which == 0), db=db + (which == 1))
    return rule


_BETAINC_RULES = tuple(_betainc_partial_rule(i) for i in range(3))


def _betainc_partial_jvp(primals, tangents, da, db):
    out = betainc_partial_p(*primals, da=da, db=db)
    parts = [_BETAINC_RULES[i](t, *primals, da, db)
             for i, t in enumerate(tangents) if type(t) is not Zero]
    return out, sum_tangents(parts, out)


def _betainc_partial_vjp(i):
    def vjp(ct, out, a, b, x, da, db):
        return reductions.unbroadcast(_BETAINC_RULES[i](ct, a, b, x, da, db),
                                      shape_of((a, b, x)[i]))
    return vjp


betainc_partial_p = Primitive("betainc_partial", _typed(_betainc_partial_impl),
                              _betainc_partial_jvp,
                              tuple(_betainc_partial_vjp(i) for i in range(3)),
                              vjp_ignores=("out",))
betainc_partial_p.batch = broadcasting_batch(betainc_partial_p)


def _betainc_a(t, out, a, b, x):
    return t * betainc_partial_p(a, b, x, da=1, db=0)


def _betainc_b(t, out, a, b, x):
    return t * betainc_partial_p(a, b, x, da=0, db=1)


betainc_p = _ufunc("betainc", sc.betainc, ("a", "b", "x"), _betainc_a, _betainc_b,
                   lambda t, out, a, b, x: t * _beta_density(a, b, x),
                   reads=((0, 1, 2),) * 3)
betaincc_p = _ufunc("betaincc", sc.betaincc, ("a", "b", "x"),
                    lambda t, out, a, b, x: -_betainc_a(t, out, a, b, x),
                    lambda t, out, a, b, x: -_betainc_b(t, out, a, b, x),
                    lambda t, out, a, b, x: t * -_beta_density(a, b, x),
                    reads=((0, 1, 2),) * 3)
# Inverses: d out/dy = 1 / density(out); in a and b by implicit differentiation of
# I(a, b, out) = y: d out/da = -(dI/da) / density (the same for the complement's inverse,
# where both signs flip).


def _beta_ratios_near_zero(a, b, x):
    """(dI/da, dI/db) / density near x = 0 to first order: from I ~ x^a / (a B(a, b)),
    (x / a) (log x - 1/a - digamma(a) + digamma(a + b)) and (x / a) (digamma(a + b) -
    digamma(b)); their values (0), shape derivatives (0) and x-derivatives (-inf and a finite
    slope) at x = 0 are the one-sided limits of the ratios."""
    psi_both = digamma_p(a + b)
    # x log(x e^-c) / a, one product (see _gamma_shape_ratio)
    ratio_a = xlogy_p(x, x * ew.exp(psi_both - 1 / a - digamma_p(a))) / a
    ratio_b = x * (psi_both - digamma_p(b)) / a
    return ratio_a, ratio_b


def _beta_shape_ratio(which, a, b, x):
    """(dI/da) / density (``which`` = 0) or (dI/db) / density (1) at (a, b, x): both vanish at
    x = 0 and x = 1 (0/0 where the density does), so there the expansion of
    ``_beta_ratios_near_zero``, mirrored at x = 1 by I_x(a, b) = 1 - I_{1-x}(b, a)."""
    at_zero, at_one = ew.equal(x, 0), ew.equal(x, 1)
    inner = ew.where(ew.logical_or(at_zero, at_one), 0.5, x)
    da, db = (1, 0) if which == 0 else (0, 1)
    inside = betainc_partial_p(a, b, inner, da=da, db=db) / _beta_density(a, b, inner)
    near_zero = _beta_ratios_near_zero(a, b, x)[which]
    near_one = -_beta_ratios_near_zero(b, a, 1 - x)[1 - which]
    return ew.where(at_zero, near_zero, ew.where(at_one, near_one, inside))


def _betaincinv_shape(which):
    def partial(t, out, a, b, y):
        return t * -_beta_shape_ratio(which, a, b, out)
    return partial


def _beta_inverse_density(a, b, x):
    """1 / density = x^(1-a) (1-x)^(1-b) B(a, b), as one exp (see _gamma_inverse_density)."""
    return ew.exp(-beta_log_density_p(a, b, x))


betaincinv_p = _ufunc("betaincinv", sc.betaincinv, ("a", "b", "y"), _betaincinv_shape(0),
                      _betaincinv_shape(1),
                      lambda t, out, a, b, y: t * _beta_inverse_density(a, b, out),
                      reads=((0, 1, "out"),) * 3)
betainccinv_p = _ufunc("betainccinv", sc.betainccinv, ("a", "b", "y"), _betaincinv_shape(0),
                       _betaincinv_shape(1),
                       lambda t, out, a, b, y: t * -_beta_inverse_density(a, b, out),
                       reads=((0, 1, "out"),) * 3)

# --- logistic and information-theoretic functions -----------------------------------------

expit_p = _ufunc("expit", sc.expit, ("x",),
                 lambda t, out, x: t * (out * expit_p(-x)))   # not 1 - out: exact for x >> 0
logit_p = _ufunc("logit", sc.logit, ("x",),
                 lambda t, out, x: t / (x * (1 - x)), reads=((0,),))
log_expit_p = _ufunc("log_expit", sc.log_expit, ("x",),
                     lambda t, out, x: t * expit_p(-x), reads=((0,),))


def _xdivy_impl(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.equal(x, 0), 0.0, np.true_divide(x, y))


# xdivy(x, y) = x / y, and 0 where x == 0 (also at y == 0: the 0 x inf rule for x * (1/y)).
# The partial in x is 1/y everywhere (+inf at y = 0, the one-sided limit), so it is the
# derivative in y of log(y): the Hessians of xlogy and its relatives are symmetric at x = 0.
# The partial in y, -x / y**2, is -xdivy(out, y): 0 at x == 0, to every order.
xdivy_p = _ufunc("xdivy", _xdivy_impl, ("x", "y"),
                 lambda t, out, x, y: t / y,
                 lambda t, out, x, y: t * -xdivy_p(out, y),
                 reads=((1,), (1, "out")))

# At x == 0 the partial in y is 0 and the partial in x is log(y) (-inf at y == 0); the mixed
# derivative is 1/y in both orders. y + 0.0: at y == -0.0 the slope of log is +inf (as at
# +0.0), and so is the partial in x of x / y.
xlogy_p = _ufunc("xlogy", sc.xlogy, ("x", "y"),
                 lambda t, out, x, y: t * ew.log(y),
                 lambda t, out, x, y: t * xdivy_p(x, y + 0.0),
                 reads=((1,), (0, 1)))
xlog1py_p = _ufunc("xlog1py", sc.xlog1py, ("x", "y"),
                   lambda t, out, x, y: t * ew.log1p(y),
                   lambda t, out, x, y: t * xdivy_p(x, 1 + y),
                   reads=((1,), (0, 1)))


def _entr_slope(x):
    """``-(log x + 1)`` for ``x >= 0`` (+inf at 0, the one-sided limit); 0 for ``x < 0``,
    where ``entr`` is the constant ``-inf``."""
    negative = ew.less(x, 0)
    return ew.where(negative, 0.0, -(ew.log(ew.where(negative, 1.0, x)) + 1))


# rel_entr = x log(x / y), kl_div = rel_entr - x + y. Their partial in x is written
# log(x) - log(y) (not log(x / y)) so that its derivative in y is -1/y also at x == 0 (through
# x / y it would be log'(0) * 0 = 0 there), matching the derivative in x of -xdivy(x, y).
entr_p = _ufunc("entr", sc.entr, ("x",), lambda t, out, x: t * _entr_slope(x), reads=((0,),))
rel_entr_p = _ufunc("rel_entr", sc.rel_entr, ("x", "y"),
                    lambda t, out, x, y: t * (ew.log(x) - ew.log(y) + 1),
                    lambda t, out, x, y: t * -xdivy_p(x, y),
                    reads=((0, 1), (0, 1)))
kl_div_p = _ufunc("kl_div", sc.kl_div, ("x", "y"),
                  lambda t, out, x, y: t * (ew.log(x) - ew.log(y)),
                  lambda t, out, x, y: t * (1 - xdivy_p(x, y)),
                  reads=((0, 1), (0, 1)))


def _huber_inside(delta, r):
    return ew.less_equal(ew.abs(r), delta)


huber_p = _ufunc("huber", sc.huber, ("delta", "r"),
                 lambda t, out, delta, r: t * ew.where(_huber_inside(delta, r), 0.0,
                                                       ew.abs(r) - delta),
                 lambda t, out, delta, r: t * ew.where(_huber_inside(delta, r), r,
                                                       delta * ew.sign(r)),
                 reads=((0, 1), (0, 1)))


def _pseudo_huber_delta(t, out, delta, r):
    # d/d delta [delta^2 (s - 1)] = delta (s - 1)^2 / s with s = sqrt(1 + (r/delta)^2),
    # written without the cancellation in s - 1: r^4 / (q (q + |delta|)^2), q = hypot.
    q = ew.sqrt(ew.square(delta) + ew.square(r))
    return t * (ew.sign(delta) * ew.square(ew.square(r)) / (q * ew.square(q + ew.abs(delta))))


pseudo_huber_p = _ufunc(
    "pseudo_huber", sc.pseudo_huber, ("delta", "r"), _pseudo_huber_delta,
    lambda t, out, delta, r: t * (r * ew.abs(delta) / ew.sqrt(ew.square(delta) + ew.square(r))),
    reads=((0, 1), (0, 1)))

# --- Bessel functions -------------------------------------------------------------------------
# Derivatives in x by the recurrences: J'_v = (J_{v-1} - J_{v+1}) / 2, Y likewise,
# I'_v = (I_{v-1} + I_{v+1}) / 2, K'_v = -(K_{v-1} + K_{v+1}) / 2; the exponentially scaled
# ones (ive = iv e^-|x|, kve = kv e^x) add the derivative of their scale factor.

_BESSEL_ORDER = _Fixed("the order of a Bessel function is held fixed")


def _at_pole(x, out, slope):
    """``slope(x, out)`` away from the pole at x == 0 (of Y_v, K_v and their scaled forms,
    and of J_v, I_v of negative non-integer order); there, where the value is infinite,
    ``-out``. The one-sided limit of the derivative of c x^p (p < 0) or of c log x is
    infinite with the sign opposite to the value's, and the derivatives of ``-out`` keep
    alternating in sign as those of the singular part do (Y_0''(0+) = -inf). The recurrences
    would give inf - inf there."""
    pole = ew.logical_and(ew.equal(x, 0), ew.isinf(out))
    return ew.where(pole, -out, slope(ew.where(pole, 1.0, x), ew.where(pole, 0.0, out)))


def _bessel(name, fn, combine):
    return _ufunc(name, fn, ("v", "x"), _BESSEL_ORDER,
                  lambda t, out, v, x: t * _at_pole(x, out, lambda s, o: combine(v, s, o)),
                  reads=((), (0, 1, "out")), orders=(0,))


jv_p = _bessel("jv", sc.jv, lambda v, x, out: 0.5 * (jv_p(v - 1, x) - jv_p(v + 1, x)))
yv_p = _bessel("yv", sc.yv, lambda v, x, out: 0.5 * (yv_p(v - 1, x) - yv_p(v + 1, x)))
iv_p = _bessel("iv", sc.iv, lambda v, x, out: 0.5 * (iv_p(v - 1, x) + iv_p(v + 1, x)))
kv_p = _bessel("kv", sc.kv, lambda v, x, out: -0.5 * (kv_p(v - 1, x) + kv_p(v + 1, x)))
ive_p = _bessel("ive", sc.ive, lambda v, x, out: 0.5 * (ive_p(v - 1, x) + ive_p(v + 1, x))
                - ew.sign(x) * out)
kve_p = _bessel("kve", sc.kve, lambda v, x, out: out - 0.5 * (kve_p(v - 1, x)
                                                              + kve_p(v + 1, x)))

j0_p = _ufunc("j0", sc.j0, ("x",), lambda t, out, x: t * -j1_p(x), reads=((0,),))
j1_p = _ufunc("j1", sc.j1, ("x",), lambda t, out, x: t * (0.5 * (j0_p(x) - jv_p(2, x))),
              reads=((0,),))
y0_p = _ufunc("y0", sc.y0, ("x",), lambda t, out, x: t * -y1_p(x), reads=((0,),))
y1_p = _ufunc("y1", sc.y1, ("x",), lambda t, out, x: t * _at_pole(
    x, out, lambda s, o: 0.5 * (y0_p(s) - yv_p(2, s))))
i0_p = _ufunc("i0", sc.i0, ("x",), lambda t, out, x: t * i1_p(x), reads=((0,),))
i1_p = _ufunc("i1", sc.i1, ("x",), lambda t, out, x: t * (0.5 * (i0_p(x) + iv_p(2, x))),
              reads=((0,),))
i0e_p = _ufunc("i0e", sc.i0e, ("x",), lambda t, out, x: t * (i1e_p(x) - ew.sign(x) * out))
i1e_p = _ufunc("i1e", sc.i1e, ("x",),
               lambda t, out, x: t * (0.5 * (i0e_p(x) + ive_p(2, x)) - ew.sign(x) * out))
k0_p = _ufunc("k0", sc.k0, ("x",), lambda t, out, x: t * -k1_p(x), reads=((0,),))
k1_p = _ufunc("k1", sc.k1, ("x",), lambda t, out, x: t * (-0.5 * (k0_p(x) + kv_p(2, x))),
              reads=((0,),))
k0e_p = _ufunc("k0e", sc.k0e, ("x",),
               lambda t, out, x: t * _at_pole(x, out, lambda s, o: o - k1e_p(s)))
k1e_p = _ufunc("k1e", sc.k1e, ("x",), lambda t, out, x: t * _at_pole(
    x, out, lambda s, o: o - 0.5 * (k0e_p(s) + kve_p(2, s))))

# --- exponential integrals, elliptic integrals and others ------------------------------------


def _expn_x(t, out, n, x):
    # E_n' = -E_{n-1} for n >= 1; E_0 = e^-x / x, so E_0' = -E_0 (1 + 1/x).
    previous = expn_p(ew.maximum(n - 1, 0), x)
    return t * ew.where(ew.greater_equal(n, 1), -previous, -out * (1 + 1 / x))


expn_p = _ufunc("expn", sc.expn, ("n", "x"), _INTEGER_ORDER, _expn_x,
                reads=((), (0, 1, "out")), orders=(0,))
exp1_p = _ufunc("exp1", sc.exp1, ("x",), lambda t, out, x: t * -(ew.exp(-x) / x),
                reads=((0,),))
expi_p = _ufunc("expi", sc.expi, ("x",), lambda t, out, x: t * (ew.exp(x) / x), reads=((0,),))
exprel_p = _ufunc("exprel", sc.exprel, ("x",), lambda t, out, x: t * _exprel_slope(x),
                  reads=((0,),))


def _spence_slope(z):
    """``spence'(z) = log(z) / (1 - z) = -log1p(w) / w`` with ``w = z - 1``. At ``z = 0`` it
    is ``log(z)`` itself, the singular part: -inf with the one-sided limits of every higher
    derivative (``spence''(0+) = +inf``), where the quotient would give inf - inf."""
    zero = ew.equal(z, 0)
    return ew.where(zero, ew.log(z), -_log1p_ratio(ew.where(zero, 0.5, z) - 1))


# spence(z) = int_1^z log t / (1 - t) dt (z >= 0).
spence_p = _ufunc("spence", sc.spence, ("z",), lambda t, out, z: t * _spence_slope(z),
                  reads=((0,),))
cosm1_p = _ufunc("cosm1", sc.cosm1, ("x",), lambda t, out, x: t * -ew.sin(x), reads=((0,),))
exp10_p = _ufunc("exp10", sc.exp10, ("x",), lambda t, out, x: t * (math.log(10) * out),
                 reads=(("out",),))


# K(m) = pi/2 sum_n c_n m^n and E(m) = pi/2 sum_n c_n m^n / (1 - 2n), c_n = (binom(2n, n)/4^n)^2:
# their derivatives' series, used for |m| < 0.1 where the closed forms below cancel (and are
# 0/0 at m = 0); so every derivative at 0 is exact (K'(0) = pi/8, K''(0) = 9 pi/64).
_ELLIP_TERMS = 24
_ELLIP_C = [(math.comb(2 * n, n) / 4 ** n) ** 2 for n in range(_ELLIP_TERMS + 1)]
_ELLIPK_SLOPE = [math.pi / 2 * (n + 1) * _ELLIP_C[n + 1] for n in range(_ELLIP_TERMS)]
_ELLIPE_SLOPE = [-math.pi / 2 * (n + 1) * _ELLIP_C[n + 1] / (2 * n + 1)
                 for n in range(_ELLIP_TERMS)]


def _ellipk_slope(m):
    """K'(m) = (E - (1 - m) K) / (2 m (1 - m)); at m = 1 its singular part 1 / (2 (1 - m)),
    +inf with the one-sided limits of every higher derivative (not 0 x inf)."""
    def direct(s):
        one = ew.equal(s, 1)
        u = ew.where(one, 0.5, s)
        return ew.where(one, 0.5 / (1 - s),
                        (ellipe_p(u) - (1 - u) * ellipk_p(u)) / (2 * u * (1 - u)))
    return _series_where(m, 0.1, lambda u: _poly(u, _ELLIPK_SLOPE), direct)


def _ellipe_slope(m):
    """E'(m) = (E - K) / (2 m) (-inf at m = 1, where K is)."""
    return _series_where(m, 0.1, lambda u: _poly(u, _ELLIPE_SLOPE),
                         lambda s: (ellipe_p(s) - ellipk_p(s)) / (2 * s))


ellipk_p = _ufunc("ellipk", sc.ellipk, ("m",), lambda t, out, m: t * _ellipk_slope(m),
                  reads=((0,),))
ellipe_p = _ufunc("ellipe", sc.ellipe, ("m",), lambda t, out, m: t * _ellipe_slope(m),
                  reads=((0,),))


def _ellipkm1_slope(p):
    """ellipkm1(p) = K(1 - p), accurate near p = 0: derivative -K'(1 - p), computed from p
    itself (1 - p would round away small p). Near p = 1 K's series in 1 - p (exact there);
    at p = 0 the singular part -1 / (2 p), -inf with the one-sided limits of every higher
    derivative."""
    near_one = ew.less(ew.abs(1 - p), 0.1)
    zero = ew.equal(p, 0)
    s = ew.where(ew.logical_or(near_one, zero), 0.5, p)
    series = -_poly(1 - ew.where(near_one, p, 1.0), _ELLIPK_SLOPE)
    direct = (s * ellipkm1_p(s) - ellipe_p(1 - s)) / (2 * s * (1 - s))
    return ew.where(near_one, series, ew.where(zero, -0.5 / p, direct))


ellipkm1_p = _ufunc("ellipkm1", sc.ellipkm1, ("p",),
                    lambda t, out, p: t * _ellipkm1_slope(p), reads=((0,),))


def _lambertw_impl(x, tol):
    w = sc.lambertw(x, 0, tol)
    with np.errstate(invalid="ignore"):
        return np.where(w.imag == 0, w.real, np.nan)


def _lambertw_jvp(primals, tangents, tol):
    (x,), (t,) = primals, tangents
    out = lambertw_p(x, tol=tol)
    return out, _lambertw_times_slope(t, out, x)


# The float nearest -1/e lies just below it, where SciPy's W is NaN; it stands for the
# branch point, where W' is +inf.
_BRANCH_POINT = -math.exp(-1.0)


def _lambertw_slope(w, x):
    """W' = W / (x (1 + W)) = e^-W / (1 + W): no 0/0 at x = 0. At the branch point x = -1/e
    (W = -1) the singular part e / sqrt(2 e (x + 1/e)): +inf, and the one-sided limits of
    every higher derivative."""
    branch = ew.equal(x, _BRANCH_POINT)
    safe = ew.where(branch, 0.0, w)
    return ew.where(branch, math.e / ew.sqrt(2 * math.e * (x - _BRANCH_POINT)),
                    ew.exp(-safe) / (1 + safe))


_lambertw_times_slope = zero_safe(lambda t, w, x: t * _lambertw_slope(w, x))
lambertw_p = Primitive("lambertw", _typed(_lambertw_impl), _lambertw_jvp,
                       (lambda ct, out, x, tol: _lambertw_times_slope(ct, out, x),),
                       lambda axis_size, values, batch_axes, tol: (
                           lambertw_p(values[0], tol=tol), batch_axes[0]))
wrightomega_p = _ufunc("wrightomega", sc.wrightomega, ("z",),
                       lambda t, out, z: t * (out / (1 + out)), reads=(("out",),))


def _boxcox_lmbda(t, log_x, lmbda):
    # d/d lmbda (x^lmbda - 1) / lmbda = log(x)^2 g(lmbda log x), g = exprel's derivative.
    return t * (ew.square(log_x) * _exprel_slope(lmbda * log_x))


boxcox_p = _ufunc("boxcox", sc.boxcox, ("x", "lmbda"),
                  lambda t, out, x, lmbda: t * ew.power(x, lmbda - 1),
                  lambda t, out, x, lmbda: _boxcox_lmbda(t, ew.log(x), lmbda),
                  reads=((0, 1), (0, 1)))
boxcox1p_p = _ufunc("boxcox1p", sc.boxcox1p, ("x", "lmbda"),
                    lambda t, out, x, lmbda: t * ew.power(1 + x, lmbda - 1),
                    lambda t, out, x, lmbda: _boxcox_lmbda(t, ew.log1p(x), lmbda),
                    reads=((0, 1), (0, 1)))
# inv_boxcox(y, l) = exp(log1p(l y) / l) = exp(y * r(l y)) with r(v) = log1p(v) / v; so
# d/dy = out / (1 + l y) and d/dl = out * y^2 r'(l y).
inv_boxcox_p = _ufunc("inv_boxcox", sc.inv_boxcox, ("y", "lmbda"),
                      lambda t, out, y, lmbda: t * (out / (1 + lmbda * y)),
                      lambda t, out, y, lmbda: t * (out * ew.square(y)
                                                    * _log1p_ratio_slope(lmbda * y)))


def _inv_boxcox1p_impl(y, lmbda):
    # SciPy 1.17 returns y instead of expm1(y) for 0 < |lmbda| < ~1e-150; below 1e-19 the
    # lmbda = 0 value expm1(y) is exact to rounding.
    with np.errstate(all="ignore"):
        return np.where(np.abs(lmbda) < 1e-19, np.expm1(y), sc.inv_boxcox1p(y, lmbda))[()]


inv_boxcox1p_p = _ufunc("inv_boxcox1p", _inv_boxcox1p_impl, ("y", "lmbda"),
                        lambda t, out, y, lmbda: t * ((1 + out) / (1 + lmbda * y)),
                        lambda t, out, y, lmbda: t * ((1 + out) * ew.square(y)
                                                      * _log1p_ratio_slope(lmbda * y)))

# --- the public functions --------------------------------------------------------------------

erf = _public(erf_p, "The error function, as ``scipy.special.erf``.")
erfc = _public(erfc_p, "The complementary error function ``1 - erf(x)``.")
erfinv = _public(erfinv_p, "The inverse of ``erf`` on (-1, 1).")
erfcinv = _public(erfcinv_p, "The inverse of ``erfc`` on (0, 2).")
erfcx = _public(erfcx_p, "The scaled complementary error function ``exp(x**2) erfc(x)``.")
erfi = _public(erfi_p, "The imaginary error function ``-i erf(i x)``.")
dawsn = _public(dawsn_p, "Dawson's integral ``exp(-x**2) int_0^x exp(t**2) dt``.")
ndtr = _public(ndtr_p, "The standard normal cumulative distribution function.")
ndtri = _public(ndtri_p, "The inverse of ``ndtr`` (the standard normal quantile).")
log_ndtr = _public(log_ndtr_p, "``log(ndtr(x))``, accurate far in both tails; so is its "
                   "derivative (about ``-x`` for x << 0).")
ndtri_exp = _public(ndtri_exp_p, "The inverse of ``log_ndtr``: ``ndtri(exp(y))``.")
owens_t = _public(owens_t_p, "Owen's T function ``T(h, a)``, differentiable in both.")
fresnel = _public(fresnel_p, "The Fresnel integrals: the tuple ``(S(z), C(z))``.")
sici = _public(sici_p, "The sine and cosine integrals: the tuple ``(Si(x), Ci(x))``.")
shichi = _public(shichi_p, "The hyperbolic sine and cosine integrals ``(Shi(x), Chi(x))``.")

gamma = _public(gamma_p, "The gamma function.")
gammaln = _public(gammaln_p, "``log(abs(gamma(x)))``; its derivative is ``digamma``.")
loggamma = _public(loggamma_p, "The principal branch of log-gamma, for real inputs (nan "
                   "for x < 0, as SciPy's).")
rgamma = _public(rgamma_p, "The reciprocal of the gamma function, ``1 / gamma(x)``.")
digamma = _public(digamma_p, "The digamma function ``d/dx gammaln(x)``.")
psi = digamma
polygamma = _public(polygamma_p, "``polygamma(n, x)``: the n-th derivative of digamma, "
                    "differentiable in ``x`` (the integer order ``n`` is fixed).",
                    orders=(0,), integers=(0,))
beta = _public(beta_p, "The beta function ``gamma(a) gamma(b) / gamma(a + b)``.")
betaln = _public(betaln_p, "``log(abs(beta(a, b)))``.")
poch = _public(poch_p, "The Pochhammer symbol ``gamma(z + m) / gamma(z)``.")
binom = _public(binom_p, "The binomial coefficient as a function of two real arguments.")
gammainc = _public(gammainc_p, "The regularized lower incomplete gamma function P(a, x), "
                   "differentiable in ``x`` and ``a``.")
gammaincc = _public(gammaincc_p, "The regularized upper incomplete gamma function "
                    "Q(a, x) = 1 - P(a, x), differentiable in ``x`` and ``a``.")
gammaincinv = _public(gammaincinv_p, "The inverse of ``gammainc`` in ``x``, differentiable "
                      "in ``a`` and ``y``.")
gammainccinv = _public(gammainccinv_p, "The inverse of ``gammaincc`` in ``x``.")
betainc = _public(betainc_p, "The regularized incomplete beta function I_x(a, b), "
                  "differentiable in ``x``, ``a`` and ``b``.")
betaincc = _public(betaincc_p, "``1 - betainc(a, b, x)``, differentiable in all three.")
betaincinv = _public(betaincinv_p, "The inverse of ``betainc`` in ``x``.")
betainccinv = _public(betainccinv_p, "The inverse of ``betaincc`` in ``x``.")
expit = _public(expit_p, "The logistic sigmoid ``1 / (1 + exp(-x))``.")
logit = _public(logit_p, "The inverse of ``expit``: ``log(p / (1 - p))``.")
log_expit = _public(log_expit_p, "``log(expit(x))``, accurate for large ``|x|``.")
xlogy = _public(xlogy_p, "``x * log(y)``, 0 where x == 0. Derivatives at x == 0 follow "
                "JAX: ``log(y)`` in x, 0 in y.")
xlog1py = _public(xlog1py_p, "``x * log1p(y)``, 0 where x == 0 (derivatives as ``xlogy``).")
entr = _public(entr_p, "Elementwise entropy ``-x log x`` (0 at 0, -inf for x < 0).")
rel_entr = _public(rel_entr_p, "Elementwise relative entropy ``x log(x / y)``.")
kl_div = _public(kl_div_p, "Elementwise ``x log(x / y) - x + y``.")
huber = _public(huber_p, "Huber loss ``huber(delta, r)``, differentiable in both.")
pseudo_huber = _public(pseudo_huber_p, "Pseudo-Huber loss "
                       "``delta**2 (sqrt(1 + (r / delta)**2) - 1)``.")

_ORDER_DOC = " Differentiable in ``x``; the order ``v`` is held fixed."
jv = _public(jv_p, "Bessel function of the first kind of real order." + _ORDER_DOC,
             orders=(0,))
jn = _public(jv_p, "Bessel function of the first kind of integer order (``jv``)."
             + _ORDER_DOC.replace("``v``", "``n``"), orders=(0,), name="jn",
             argnames=("n", "x"))
yv = _public(yv_p, "Bessel function of the second kind of real order." + _ORDER_DOC,
             orders=(0,))
yn = _public(yv_p, "Bessel function of the second kind of integer order (``yv``)."
             + _ORDER_DOC.replace("``v``", "``n``"), orders=(0,), name="yn",
             argnames=("n", "x"))
iv = _public(iv_p, "Modified Bessel function of the first kind." + _ORDER_DOC, orders=(0,))
ive = _public(ive_p, "``iv(v, x) * exp(-abs(x))``." + _ORDER_DOC, orders=(0,))
kv = _public(kv_p, "Modified Bessel function of the second kind." + _ORDER_DOC, orders=(0,))
kn = _public(kv_p, "Modified Bessel function of the second kind of integer order (``kv``)."
             + _ORDER_DOC.replace("``v``", "``n``"), orders=(0,), name="kn",
             argnames=("n", "x"))
kve = _public(kve_p, "``kv(v, x) * exp(x)``." + _ORDER_DOC, orders=(0,))
j0 = _public(j0_p, "Bessel function of the first kind of order 0.")
j1 = _public(j1_p, "Bessel function of the first kind of order 1.")
y0 = _public(y0_p, "Bessel function of the second kind of order 0.")
y1 = _public(y1_p, "Bessel function of the second kind of order 1.")
i0 = _public(i0_p, "Modified Bessel function of the first kind of order 0.")
i0e = _public(i0e_p, "``i0(x) * exp(-abs(x))``.")
i1 = _public(i1_p, "Modified Bessel function of the first kind of order 1.")
i1e = _public(i1e_p, "``i1(x) * exp(-abs(x))``.")
k0 = _public(k0_p, "Modified Bessel function of the second kind of order 0.")
k0e = _public(k0e_p, "``k0(x) * exp(x)``.")
k1 = _public(k1_p, "Modified Bessel function of the second kind of order 1.")
k1e = _public(k1e_p, "``k1(x) * exp(x)``.")

expn = _public(expn_p, "The generalized exponential integral E_n(x), differentiable in "
               "``x`` (the integer ``n`` is fixed).", orders=(0,), integers=(0,))
exp1 = _public(exp1_p, "The exponential integral E_1(x).")
expi = _public(expi_p, "The exponential integral Ei(x).")
exprel = _public(exprel_p, "``(exp(x) - 1) / x``, 1 at 0.")
spence = _public(spence_p, "Spence's function ``int_1^z log(t) / (1 - t) dt`` (z >= 0).")
cosm1 = _public(cosm1_p, "``cos(x) - 1``, accurate near 0.")
exp10 = _public(exp10_p, "``10**x``.")
ellipk = _public(ellipk_p, "The complete elliptic integral of the first kind K(m).")
ellipkm1 = _public(ellipkm1_p, "``ellipk(1 - p)``, accurate near p = 0.")
ellipe = _public(ellipe_p, "The complete elliptic integral of the second kind E(m).")
wrightomega = _public(wrightomega_p, "The Wright omega function (real inputs).")
boxcox = _public(boxcox_p, "The Box-Cox transform, differentiable in ``x`` and ``lmbda``.")
boxcox1p = _public(boxcox1p_p, "The Box-Cox transform of ``1 + x``.")
inv_boxcox = _public(inv_boxcox_p, "The inverse of ``boxcox`` in ``x``.")
inv_boxcox1p = _public(inv_boxcox1p_p, "The inverse of ``boxcox1p`` in ``x``.")
log1p = ew.log1p
expm1 = ew.expm1


def lambertw(z, k=0, tol=1e-8):
    """The Lambert W function on its real principal branch (``k=0``, ``z >= -1/e``), as a
    real array: SciPy's values' real part, nan below -1/e where the branch is complex.
    Derivative ``W / (z (1 + W)) = exp(-W) / (1 + W)``."""
    if k != 0:
        raise ValueError(f"lambertw: only the principal branch k=0 is supported, got k={k!r}")
    if dtype_of(z).kind == "c":
        raise TypeError("lambertw: diffkit supports real z only (the real branch k=0)")
    return lambertw_p(*_weak((z,), (), ()), tol=float(tol))


def multigammaln(a, d):
    """The log of the multivariate gamma function of dimension ``d``:
    ``d (d - 1) / 4 log(pi) + sum_j gammaln(a - j / 2)`` for j in 0..d-1 (a composition)."""
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d <= 0:
        raise ValueError(f"multigammaln: d should be a positive integer (dimension), got {d!r}")
    (a,) = _weak((a,), (), ())
    d = int(d)
    total = gammaln_p(a)
    for j in range(1, d):
        total = total + gammaln_p(a - 0.5 * j)
    return total + d * (d - 1) / 4 * math.log(math.pi)


# --- softmax and logsumexp: compositions over axes ----------------------------------------------


def _axes(x, axis):
    return reductions.normalize_axes(axis, len(shape_of(x)))


def softmax(x, axis=None):
    """``exp(x) / sum(exp(x), axis)``, computed stably (all axes for ``axis=None``)."""
    (x,) = _weak((x,), (), ())
    lse = reductions.logsumexp_p(x, axis=_axes(x, axis), keepdims=True)
    return ew.exp(x - lse)


def log_softmax(x, axis=None):
    """``x - logsumexp(x, axis, keepdims=True)``: the log of ``softmax``."""
    (x,) = _weak((x,), (), ())
    return x - reductions.logsumexp_p(x, axis=_axes(x, axis), keepdims=True)


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """``log(sum(b * exp(a), axis))`` computed stably, as ``scipy.special.logsumexp``:
    differentiable in ``a`` and in the scale factors ``b``. With ``return_sign=True`` the
    result is ``(log(abs(s)), sign(s))``; otherwise a negative sum gives nan."""
    if b is None:
        (a,) = _weak((a,), (), ())
    else:
        a, b = _weak((a, b), (), ())
        out_shape = np.broadcast_shapes(shape_of(a), shape_of(b))
        a = shape.broadcast_to(a, out_shape)
    axes = _axes(a, axis)
    if b is None and not return_sign:
        return reductions.logsumexp_p(a, axis=axes, keepdims=bool(keepdims))
    # log|sum(b exp(a - peak))| + peak; the peak shifts values only (no derivative).
    peak = reductions.max_p(stop_gradient(a), axis=axes, keepdims=True)
    peak = ew.where(ew.isfinite(peak), peak, 0.0)
    scaled = ew.exp(a - peak)
    total = reductions.sum_p(scaled if b is None else b * scaled, axis=axes, keepdims=True)
    sign = ew.sign(total)
    nonzero = ew.not_equal(total, 0)
    out = ew.where(nonzero, ew.log(ew.abs(ew.where(nonzero, total, 1.0))), -np.inf) + peak
    if not keepdims:
        kept = tuple(d for i, d in enumerate(shape_of(out)) if i not in axes)
        out = shape.reshape(out, kept)
        sign = shape.reshape(sign, kept)
    if return_sign:
        return out, sign
    return ew.where(ew.less(sign, 0), np.nan, out)
