"""The rest of NumPy's ufuncs: inverse trigonometric and hyperbolic functions, base-2 and
base-10 exponentials and logarithms, ``logaddexp``, ``hypot``, ``arctan2``, remainders,
sign manipulation, ``sinc``, NaN-aware extrema, rounding, and the integer (bitwise) ufuncs.

Each primitive is NumPy's ufunc for its value and one formula for its derivative, written
in diffkit operations so that it can be differentiated and batched again. Functions that
are naturally compositions (``float_power``, ``divmod``, ``frexp``, ``modf``, ``vecdot``,
``matvec``, ``vecmat``) reuse other primitives and need no rules of their own.

Derivative formulas are kept exact to rounding where the obvious one is not:
``arcsin' = 1/sqrt((1 - x)(1 + x))`` (no cancellation in ``1 - x*x`` near 1), the weights of
``logaddexp`` are a logistic function of ``x - y`` (not ``exp(x - out)``, which loses digits
when ``|out|`` is large), and ``sinc`` has one primitive for all its derivatives, evaluated
by a power series near 0 and by a recurrence elsewhere, so that every derivative is right at
and near 0 (``sinc'(0) = 0``, ``sinc''(0) = -pi**2/3``).

Conventions where a function is not differentiable (the same in forward and reverse mode):

==============================  ===================================================
function, point                 derivative
==============================  ===================================================
``fabs(x)``, ``x = 0``          0 (as ``abs``: ``sign(0) = 0``)
``copysign(x, y)``              ``sign(x) * sign(out)`` in ``x`` (0 at ``x = 0``);
                                0 in ``y`` everywhere
``hypot(x, y)``, ``(0, 0)``     0 in both
``arctan2(y, x)``, ``(0, 0)``   0 in both
``fmod(x, y)``                  1 in ``x``, ``-trunc(x / y)`` in ``y`` (away from jumps)
``remainder(x, y)``, ``mod``    1 in ``x``, ``-floor(x / y)`` in ``y`` (away from jumps)
``fmax``/``fmin``, ``x == y``   shared equally (1/2 each), like ``maximum``
``fmax``/``fmin``, one NaN      all to the non-NaN argument; both NaN: all to ``x``
``nan_to_num(x)``               1 where ``x`` is finite, 0 where it is replaced
``heaviside(x1, x2)``           0 in ``x1``; 1 in ``x2`` where ``x1 == 0``, else 0
``nextafter(x, y)``             1 in ``x``, 0 in ``y``
``ldexp(x, i)``                 ``2**i`` in ``x`` (``i`` is an integer)
``frexp(x)``, ``modf(x)``       mantissa / fractional part: as ``x / 2**e`` and
                                ``x - trunc(x)``; exponent / integral part: 0
``floor ceil trunc fix rint``   0 everywhere (piecewise constant, no derivative
``round around floor_divide``   at the jumps either)
``spacing signbit``
==============================  ===================================================
"""

import math
import operator

import numpy as np

from ..core.primitive import Primitive, Traits
from ..core.trace import Tracer
from ..core.zeros import dtype_of, shape_of
from . import linalg, reductions, shape
from . import sparsity_rules as sr
from . import taylor_arithmetic as ta
from .elementwise import (  # _numpy and _nondiff: the same builders of NumPy's ufuncs
    _NUMPY,
    _nondiff,
    _numpy,
    arctan,
    astype,
    conj,
    equal_p,
    exp_p,
    greater_equal_p,
    greater_p,
    isfinite_p,
    isinf_p,
    isnan_p,
    larger_select,
    less_p,
    logical_and_p,
    logical_not_p,
    logical_or_p,
    multiply,
    negative_p,
    power,
    sign,
    smaller_select,
    sqrt_p,
    square_p,
    where_p,
)
from .families import (
    ZERO,
    elementwise,
    no_derivative,
    nondiff_elementwise,
    tangent_rule,
    times,
)

__all__ = [
    # inverse trigonometric and hyperbolic
    "arcsin", "arccos", "arcsinh", "arccosh", "arctanh", "arctan2",
    "asin", "acos", "atan", "asinh", "acosh", "atanh", "atan2",
    # exponentials, logarithms, powers
    "exp2", "log2", "log10", "logaddexp", "logaddexp2", "reciprocal", "cbrt", "float_power",
    "hypot", "ldexp", "frexp",
    # angles, sinc
    "deg2rad", "rad2deg", "radians", "degrees", "sinc",
    # remainders and signs
    "fmod", "remainder", "mod", "divmod", "modf", "copysign", "fabs", "positive",
    "nextafter", "heaviside",
    # selections and cleaning
    "fmax", "fmin", "nan_to_num",
    # piecewise constant
    "floor", "ceil", "trunc", "fix", "rint", "round", "around", "floor_divide", "spacing",
    "signbit",
    # logical and integer ufuncs (no derivative)
    "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "invert", "bitwise_not",
    "bitwise_invert", "left_shift", "right_shift", "bitwise_left_shift",
    "bitwise_right_shift", "bitwise_count", "gcd", "lcm",
    # vector and matrix gufuncs
    "vecdot", "matvec", "vecmat",
]

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)


_NO_DERIVATIVE = "NumPy's function of this name; no derivative (integer or boolean results)."


# --- inverse trigonometric and hyperbolic ----------------------------------------------------
# (1 - x)(1 + x) instead of 1 - x*x: exact near |x| = 1, where 1 - x*x cancels.



def _one_minus_square(x):
    return (1 - x) * (1 + x)


def _arcsin_slope(x):
    return 1 / sqrt_p(_one_minus_square(x))


def _arccos_slope(x):
    return -1 / sqrt_p(_one_minus_square(x))


# Taylor mode: the slope is a power of the quadratic, (1 - x**2)**(-1/2) (its sign for arccos)
arcsin_p, arcsin = _numpy("arcsin", np.arcsin, {"x": _arcsin_slope}, "The inverse sine.",
                          jet=ta.algebraic_slope(_arcsin_slope, _one_minus_square, -1, -0.5))
arccos_p, arccos = _numpy("arccos", np.arccos, {"x": _arccos_slope}, "The inverse cosine.",
                          jet=ta.algebraic_slope(_arccos_slope, _one_minus_square, -1, -0.5,
                                                 factor=-1))


def _arcsinh_slope(x):
    # 1 / sqrt(1 + x**2); for real x as 1 / hypot(1, x), which cannot overflow.
    if dtype_of(x).kind == "c":
        return 1 / sqrt_p(1 + square_p(x))
    return 1 / hypot_p(x, 1.0)


arcsinh_p, arcsinh = _numpy("arcsinh", np.arcsinh, {"x": _arcsinh_slope},
                            "The inverse hyperbolic sine.",
                            jet=ta.algebraic_slope(_arcsinh_slope, lambda x: 1 + square_p(x),
                                                   1, -0.5))
# sqrt(x - 1) sqrt(x + 1), not sqrt((x - 1)(x + 1)): they differ off the real axis, and only
# the first is the derivative of NumPy's (principal) complex arccosh.
# (Taylor mode: any branch of the slope solves u g' = -g u' / 2 with u = x**2 - 1, so the
# power recurrence from the slope's value follows NumPy's branch.)


def _arccosh_slope(x):
    return 1 / (sqrt_p(x - 1) * sqrt_p(x + 1))


arccosh_p, arccosh = _numpy("arccosh", np.arccosh, {"x": _arccosh_slope},
                            "The inverse hyperbolic cosine.",
                            jet=ta.algebraic_slope(_arccosh_slope, lambda x: (x - 1) * (x + 1),
                                                   1, -0.5))


def _arctanh_slope(x):
    return 1 / _one_minus_square(x)


arctanh_p, arctanh = _numpy("arctanh", np.arctanh, {"x": _arctanh_slope},
                            "The inverse hyperbolic tangent.",
                            jet=ta.algebraic_slope(_arctanh_slope, _one_minus_square, -1, -1))


def _safe(r):
    """``r`` with its zeros replaced by 1, to divide by where the quotient is 0 anyway."""
    return where_p(equal_p(r, 0), 1.0, r)


# hypot: x / out in x, y / out in y; 0 at the origin (the quotient's numerator is 0 there).
hypot_p, hypot = _numpy("hypot", np.hypot,
                        {"x": lambda x, out: x / _safe(out), "y": lambda y, out: y / _safe(out)},
                        "``sqrt(x**2 + y**2)``, without overflow.")


def _arctan2_partial(numerator, x1, x2):
    # numerator / (x1**2 + x2**2), as (numerator / r) / r with r = hypot: no overflow or
    # underflow of the squares. At the origin the partial is the constant 0 (selected, not
    # computed), so every higher derivative there is 0 too and the Hessian is symmetric.
    r = hypot_p(x1, x2)
    origin = equal_p(r, 0)
    r = where_p(origin, 1.0, r)
    return where_p(origin, 0.0, numerator / r / r)


arctan2_p, arctan2 = _numpy("arctan2", np.arctan2,
                            {"x": lambda x, y: _arctan2_partial(y, x, y),
                             "y": lambda x, y: _arctan2_partial(negative_p(x), x, y)},
                            "The angle of the point ``(y, x)`` (the arguments ``x1, x2``).")

asin, acos, atan, atan2 = arcsin, arccos, arctan, arctan2
asinh, acosh, atanh = arcsinh, arccosh, arctanh

# --- exponentials, logarithms, powers --------------------------------------------------------

exp2_p, exp2 = _numpy("exp2", np.exp2, {"x": lambda out: out * _LN2}, "``2 ** x``.",
                      jet=ta.exponential(rate=_LN2))


def _log2_slope(x):
    return 1 / (x * _LN2)


def _log10_slope(x):
    return 1 / (x * _LN10)


log2_p, log2 = _numpy("log2", np.log2, {"x": _log2_slope}, "The base-2 logarithm.",
                      jet=ta.logarithm(_log2_slope, scale=1 / _LN2))
log10_p, log10 = _numpy("log10", np.log10, {"x": _log10_slope}, "The base-10 logarithm.",
                        jet=ta.logarithm(_log10_slope, scale=1 / _LN10))
reciprocal_p, reciprocal = _numpy("reciprocal", np.reciprocal,
                                  {"x": lambda out: negative_p(square_p(out))}, "``1 / x``.",
                                  jet=ta.reciprocal)
# cbrt' = out**-2 / 3, as a power of out (not a quotient) so that its derivative at 0 is
# the one-sided limit -inf (0**-3 times the infinite cbrt'(0)), not 0 * inf / 0.
cbrt_p, cbrt = _numpy("cbrt", np.cbrt, {"x": lambda out: power(out, -2) / 3},
                      "The real cube root.", jet=ta.cube_root(lambda x: cbrt_p(x)))


def _expit(d):
    """The logistic function ``1 / (1 + exp(-d))``: each branch of the ``where`` is finite
    for every ``d`` (``exp`` only of non-positive numbers), and each is the exact formula on
    its side, so its derivatives are exact too (also at ``d = 0``)."""
    nonnegative = greater_equal_p(d, 0)
    e = exp_p(where_p(nonnegative, negative_p(d), d))
    return where_p(nonnegative, 1 / (1 + e), e / (1 + e))


def _logaddexp_weight(x, y, scale, out):
    """``d logaddexp(x, y) / dx``: the logistic function of ``scale * (x - y)``; 1/2 when
    ``x`` and ``y`` are the same infinity (where ``x - y`` is NaN). In the output's dtype: a
    Python number beside a float32 array (``softplus``: ``logaddexp(0, x)``) reaches the
    partial as a float64 value, which must not make the float32 tangent float64."""
    same_infinity = logical_and_p(equal_p(x, y), isinf_p(x))
    d = where_p(same_infinity, 0.0, x) - where_p(same_infinity, 0.0, y)   # no inf - inf
    if dtype_of(d) != dtype_of(out):
        d = astype(d, dtype_of(out))
    return _expit(d if scale == 1 else d * scale)


logaddexp_p, logaddexp = _numpy(
    "logaddexp", np.logaddexp, {"x": lambda x, y, out: _logaddexp_weight(x, y, 1, out),
                                "y": lambda x, y, out: _logaddexp_weight(y, x, 1, out)},
    "``log(exp(x) + exp(y))``, without overflow.")
logaddexp2_p, logaddexp2 = _numpy(
    "logaddexp2", np.logaddexp2,
    {"x": lambda x, y, out: _logaddexp_weight(x, y, _LN2, out),
     "y": lambda x, y, out: _logaddexp_weight(y, x, _LN2, out)},
    "``log2(2**x + 2**y)``, without overflow.")


def float_power(x1, x2):
    """``x1 ** x2`` computed in float64 (complex128 for complex arguments), as
    ``np.float_power``: a float32 argument gets a float64 result, and float32 cotangents."""
    dtype = np.result_type(dtype_of(x1), dtype_of(x2), np.float64)
    if dtype.kind not in "fc":
        raise TypeError(f"float_power does not support arguments of dtypes {dtype_of(x1)} "
                        f"and {dtype_of(x2)}")
    dtype = np.dtype(np.complex128 if dtype.kind == "c" else np.float64)
    if isinstance(x2, (int, float, complex, np.number)) and not isinstance(x2, bool):
        x2 = complex(x2) if dtype.kind == "c" else float(x2)
    elif not isinstance(x2, bool):
        x2 = astype(x2, dtype)
    else:
        x2 = float(x2)
    return power(astype(x1, dtype), x2)


# ldexp(x, i) = x * 2**i, exactly; linear in x, i is an integer.
ldexp_p, ldexp = _numpy(
    "ldexp", np.ldexp,
    {"x": tangent_rule(lambda t, i: ldexp_p(t, i)), "i": no_derivative("an integer exponent")},
    "``x * 2**i`` (``i`` an integer).")

_frexp_exponent_p = nondiff_elementwise("frexp_exponent", lambda x: np.frexp(x)[1])


def frexp(x):
    """``(mantissa, exponent)`` with ``x = mantissa * 2**exponent``, as ``np.frexp``. The
    mantissa is ``ldexp(x, -exponent)``, differentiable in ``x``; the exponent is an
    integer array with no derivative."""
    exponent = _frexp_exponent_p(x)
    return ldexp_p(x, negative_p(exponent)), exponent


# --- angles and sinc -------------------------------------------------------------------------

deg2rad_p, deg2rad = _numpy("deg2rad", np.deg2rad, {"x": np.pi / 180},
                            "Degrees to radians.")
rad2deg_p, rad2deg = _numpy("rad2deg", np.rad2deg, {"x": 180 / np.pi},
                            "Radians to degrees.")
radians = deg2rad
degrees = rad2deg

_SINC_SERIES_BELOW = 0.5   # |x| under which the power series is used


def _sinc_derivative(x, order):
    """The ``order``-th derivative of ``sinc(x) = sin(pi x) / (pi x)`` in NumPy.

    Near 0 (``|x| < 1/2``) by the power series ``sum (-1)**n (pi x)**(2n) / (2n + 1)!``
    differentiated term by term; elsewhere by the recurrence that follows from
    differentiating ``x sinc(x) = sin(pi x) / pi`` ``k`` times:
    ``x f_k + k f_(k-1) = pi**(k-1) sin(pi x + k pi / 2)``.
    """
    x = np.asarray(x)
    out_dtype = np.sinc(np.zeros((), x.dtype)).dtype
    if order == 0:
        return np.sinc(x)
    work = x.astype(np.complex128 if out_dtype.kind == "c" else np.float64)
    small = np.abs(work) < _SINC_SERIES_BELOW
    xs = np.where(small, work, 0)
    series = np.zeros_like(work)
    first = (order + 1) // 2
    for n in range(first + 15, first - 1, -1):   # smallest terms first
        coefficient = (-1) ** n * math.pi ** (2 * n) / ((2 * n + 1)
                                                         * math.factorial(2 * n - order))
        series = series + coefficient * xs ** (2 * n - order)
    xl = np.where(small, 1, work)
    angle = math.pi * xl
    s, c = np.sin(angle), np.cos(angle)
    cycle = (s, c, -s, -c)
    f = s / angle
    for k in range(1, order + 1):
        f = (math.pi ** (k - 1) * cycle[k % 4] - k * f) / xl
    return np.where(small, series, f).astype(out_dtype, copy=False)


def _sinc_jvp(primals, tangents, order):
    (x,), (t,) = primals, tangents
    return _sinc_p(x, order=order), times(t, _sinc_p(x, order=order + 1))


_sinc_p = Primitive(
    "sinc", _sinc_derivative, _sinc_jvp,
    (lambda ct, out, x, order: times(ct, _sinc_p(x, order=order + 1)),),
    lambda axis_size, values, batch_axes, order: (_sinc_p(values[0], order=order),
                                                  batch_axes[0]),
    vjp_ignores=("out",), traits=Traits(elementwise=True, curvature="unary"))
_sinc_p.sparsity = sr.elementwise_sparsity()


def sinc(x):
    """The normalized sinc ``sin(pi x) / (pi x)`` (1 at 0), as ``np.sinc``. Its derivatives
    of every order are exact at and near 0 (``sinc'(0) = 0``)."""
    return _sinc_p(x, order=0)


# --- remainders and signs --------------------------------------------------------------------


def _quotient(x, y, out):
    """The integer ``n`` with ``out = x - n * y`` (as a float): ``trunc(x / y)`` for ``fmod``,
    ``floor(x / y)`` for ``remainder``, recovered from the result itself so that it agrees
    with NumPy's even where ``x / y`` rounds to an integer."""
    return rint_p((x - out) / y)


fmod_p, fmod = _numpy("fmod", np.fmod,
                      {"x": 1, "y": lambda x, y, out: negative_p(_quotient(x, y, out))},
                      "The remainder of ``x / y`` with the sign of ``x`` (C's fmod).")
remainder_p, remainder = _numpy(
    "remainder", np.remainder,
    {"x": 1, "y": lambda x, y, out: negative_p(_quotient(x, y, out))},
    "The remainder of ``x / y`` with the sign of ``y`` (Python's %).")
mod = remainder


def divmod(x1, x2):  # noqa: A001 (NumPy's name)
    """``(floor_divide(x1, x2), remainder(x1, x2))``, as ``np.divmod``."""
    return floor_divide(x1, x2), remainder(x1, x2)


_modf_fraction_p, _modf_fraction = elementwise(
    "modf_fraction", lambda x: np.modf(x)[0], {"x": 1},
    doc="The fractional part of ``x``, with its sign.", module=_NUMPY)
_modf_integral_p = nondiff_elementwise("modf_integral", lambda x: np.modf(x)[1])


def modf(x):
    """``(fractional part, integral part)`` of ``x``, both with its sign, as ``np.modf``.
    The fractional part has derivative 1, the integral part 0."""
    return _modf_fraction_p(x), _modf_integral_p(x)


# copysign(x, y) = |x| with the sign of y: derivative sign(x) * sign(out) in x (0 at x = 0,
# as abs), none in y (the result depends on y only through its sign bit).
copysign_p, copysign = _numpy("copysign", np.copysign,
                              {"x": lambda x, out: sign(x) * sign(out), "y": ZERO},
                              "``|x|`` with the sign of ``y``.")
fabs_p, fabs = _numpy("fabs", np.fabs, {"x": lambda x: sign(x)},
                      "The absolute value of a real ``x``.")
nextafter_p, nextafter = _numpy("nextafter", np.nextafter, {"x": 1, "y": ZERO},
                                "The next float after ``x`` towards ``y``.")
# heaviside(x1, x2) is 0 for x1 < 0, x2 at x1 == 0, 1 for x1 > 0.


def _heaviside_select(args, out, **params):   # the value at 0 matters only at 0
    x, _ = sr.selection_values(args)
    return [False, x == 0]


heaviside_p, heaviside = _numpy(
    "heaviside", np.heaviside,
    {"x": ZERO, "y": tangent_rule(lambda t, x: where_p(equal_p(x, 0), t, 0.0))},
    "The step function: 0 for ``x < 0``, ``y`` at ``x == 0``, 1 for ``x > 0``.",
    select=_heaviside_select, deciding=(0,))


def positive(x):
    """``+x``, as ``np.positive``: the identity (a traced value is returned as it is)."""
    return x if isinstance(x, Tracer) else np.positive(x)


# --- NaN-aware extrema ---------------------------------------------------------------------


def _nan_aware_share(t, x, y, wins):
    """``t`` where ``x`` is chosen (``wins``, or ``y`` is NaN), half of it at a tie, else 0.
    ``wins`` is ``greater`` for ``fmax`` and ``less`` for ``fmin``."""
    chosen = logical_or_p(wins(x, y), isnan_p(y))
    return where_p(chosen, t, where_p(equal_p(x, y), 0.5 * t, 0.0))


def _nan_aware_other(t, x, y, wins):
    """The same for ``y``: chosen where it wins or only ``x`` is NaN."""
    chosen = logical_or_p(wins(y, x), logical_and_p(isnan_p(x), logical_not_p(isnan_p(y))))
    return where_p(chosen, t, where_p(equal_p(x, y), 0.5 * t, 0.0))


fmax_p, fmax = _numpy(
    "fmax", np.fmax,
    {"x": tangent_rule(lambda t, x, y: _nan_aware_share(t, x, y, greater_p)),
     "y": tangent_rule(lambda t, x, y: _nan_aware_other(t, x, y, greater_p))},
    "The larger of ``x`` and ``y``, ignoring a NaN.", select=larger_select)
fmin_p, fmin = _numpy(
    "fmin", np.fmin,
    {"x": tangent_rule(lambda t, x, y: _nan_aware_share(t, x, y, less_p)),
     "y": tangent_rule(lambda t, x, y: _nan_aware_other(t, x, y, less_p))},
    "The smaller of ``x`` and ``y``, ignoring a NaN.", select=smaller_select)


def _nan_to_num_rule(t, x):
    return where_p(isfinite_p(x), t, 0.0)


def _nan_to_num_impl(x, nan, posinf, neginf):
    return np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


_nan_to_num_p = Primitive(
    "nan_to_num", _nan_to_num_impl,
    lambda primals, tangents, **params: (_nan_to_num_p(primals[0], **params),
                                         _nan_to_num_rule(tangents[0], primals[0])),
    (lambda ct, out, x, **params: _nan_to_num_rule(ct, x),),
    lambda axis_size, values, batch_axes, **params: (_nan_to_num_p(values[0], **params),
                                                     batch_axes[0]),
    vjp_ignores=("out",),   # piecewise: the entry, or a constant in its place
    traits=Traits(elementwise=True, curvature="linear"))
_nan_to_num_p.sparsity = sr.elementwise_sparsity()


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """``x`` with NaN replaced by ``nan`` and infinities by ``posinf``/``neginf`` (default:
    the largest finite numbers), as ``np.nan_to_num``. The derivative is 1 where ``x`` is
    finite and 0 where an entry was replaced. ``copy=False`` modifies a plain ndarray in
    place, as NumPy does; a traced value is never modified."""
    params = {}
    for key, value in (("nan", nan), ("posinf", posinf), ("neginf", neginf)):
        if value is not None and not isinstance(value, (int, float, np.number)):
            raise TypeError(f"nan_to_num: {key} must be a number or None, not "
                            f"{type(value).__name__}")
        params[key] = value
    if not copy and isinstance(x, np.ndarray):
        return np.nan_to_num(x, copy=False, **params)
    return _nan_to_num_p(x, **params)


# --- piecewise constant: no derivative -----------------------------------------------------

floor_p, floor = _nondiff("floor", np.floor, ("x",), _NO_DERIVATIVE)
ceil_p, ceil = _nondiff("ceil", np.ceil, ("x",), _NO_DERIVATIVE)
trunc_p, trunc = _nondiff("trunc", np.trunc, ("x",), _NO_DERIVATIVE)
rint_p, rint = _nondiff("rint", np.rint, ("x",), _NO_DERIVATIVE)
fix = trunc
floor_divide_p, floor_divide = _nondiff("floor_divide", np.floor_divide, ("x", "y"), _NO_DERIVATIVE)
spacing_p, spacing = _nondiff("spacing", np.spacing, ("x",), _NO_DERIVATIVE)
signbit_p, signbit = _nondiff("signbit", np.signbit, ("x",), _NO_DERIVATIVE)
_round_p = nondiff_elementwise("round", lambda x, decimals: np.round(x, decimals))


def round(a, decimals=0, out=None):  # noqa: A001 (NumPy's name)
    """``a`` rounded to ``decimals`` decimals (halves to even), as ``np.round``. Piecewise
    constant: its derivative is 0."""
    if out is not None:
        raise TypeError("round: out= is not supported (diffkit never writes into arrays); "
                        "use the returned value")
    try:
        decimals = operator.index(decimals)
    except TypeError:
        raise TypeError(f"round: decimals must be an integer, not "
                        f"{type(decimals).__name__}") from None
    return _round_p(a, decimals=decimals)


around = round

# --- logical and integer ufuncs: no derivative ---------------------------------------------

logical_xor_p, logical_xor = _nondiff("logical_xor", np.logical_xor, ("x", "y"), _NO_DERIVATIVE)
bitwise_and_p, bitwise_and = _nondiff("bitwise_and", np.bitwise_and, ("x", "y"), _NO_DERIVATIVE)
bitwise_or_p, bitwise_or = _nondiff("bitwise_or", np.bitwise_or, ("x", "y"), _NO_DERIVATIVE)
bitwise_xor_p, bitwise_xor = _nondiff("bitwise_xor", np.bitwise_xor, ("x", "y"), _NO_DERIVATIVE)
invert_p, invert = _nondiff("invert", np.invert, ("x",), _NO_DERIVATIVE)
left_shift_p, left_shift = _nondiff("left_shift", np.left_shift, ("x", "y"), _NO_DERIVATIVE)
right_shift_p, right_shift = _nondiff("right_shift", np.right_shift, ("x", "y"), _NO_DERIVATIVE)
bitwise_count_p, bitwise_count = _nondiff("bitwise_count", np.bitwise_count, ("x",), _NO_DERIVATIVE)
gcd_p, gcd = _nondiff("gcd", np.gcd, ("x", "y"), _NO_DERIVATIVE)
lcm_p, lcm = _nondiff("lcm", np.lcm, ("x", "y"), _NO_DERIVATIVE)
bitwise_not = bitwise_invert = invert
bitwise_left_shift, bitwise_right_shift = left_shift, right_shift

# --- vector and matrix gufuncs (NumPy 2): compositions ---------------------------------------


def _as_array(x):
    return x if isinstance(x, Tracer) else np.asarray(x)


def vecdot(x1, x2, axis=-1):
    """Vector dot product ``sum(conj(x1) * x2)`` over ``axis`` (of each argument),
    broadcasting the other axes, as ``np.vecdot``."""
    x1, x2 = _as_array(x1), _as_array(x2)
    s1, s2 = shape_of(x1), shape_of(x2)
    if not s1 or not s2:
        raise ValueError(f"vecdot: both arguments must have at least 1 dimension, got "
                         f"shapes {s1} and {s2}")
    a1 = shape._normalize_axis(axis, len(s1))
    a2 = shape._normalize_axis(axis, len(s2))
    if s1[a1] != s2[a2]:
        raise ValueError(f"vecdot: the vector axes differ in length ({s1[a1]} and {s2[a2]}; "
                         f"shapes {s1} and {s2}, axis {axis})")
    product = multiply(conj(shape.moveaxis(x1, a1, -1)), shape.moveaxis(x2, a2, -1))
    return reductions.sum(product, axis=-1)


def matvec(x1, x2):
    """Matrix-vector product over the last axes, broadcasting the others, as
    ``np.matvec``: ``x1[..., i, j] x2[..., j] -> [..., i]``."""
    x1, x2 = _as_array(x1), _as_array(x2)
    s1, s2 = shape_of(x1), shape_of(x2)
    if len(s1) < 2 or len(s2) < 1:
        raise ValueError(f"matvec: needs a matrix (at least 2-d) and a vector (at least "
                         f"1-d), got shapes {s1} and {s2}")
    if s1[-1] != s2[-1]:
        raise ValueError(f"matvec: matrix of shape {s1} and vector of shape {s2}: the last "
                         f"axes differ in length ({s1[-1]} and {s2[-1]})")
    return shape.squeeze(linalg.matmul(x1, shape.expand_dims(x2, -1)), axis=-1)


def vecmat(x1, x2):
    """Vector-matrix product ``conj(x1[..., j]) x2[..., j, i] -> [..., i]`` over the last
    axes, broadcasting the others, as ``np.vecmat``."""
    x1, x2 = _as_array(x1), _as_array(x2)
    s1, s2 = shape_of(x1), shape_of(x2)
    if len(s1) < 1 or len(s2) < 2:
        raise ValueError(f"vecmat: needs a vector (at least 1-d) and a matrix (at least "
                         f"2-d), got shapes {s1} and {s2}")
    if s1[-1] != s2[-2]:
        raise ValueError(f"vecmat: vector of shape {s1} and matrix of shape {s2}: the "
                         f"lengths {s1[-1]} and {s2[-2]} differ")
    return shape.squeeze(linalg.matmul(shape.expand_dims(conj(x1), -2), x2), axis=-2)

