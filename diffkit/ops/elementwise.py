"""Elementwise primitives: arithmetic, powers, exponentials, trigonometry, comparisons.

Each line pairs NumPy's function with ``t * f'(x)`` written in diffkit operations, so the
derivative can itself be differentiated and batched.

Complex inputs follow JAX's convention (see ``diffkit.ops.complex``): for the holomorphic
functions (arithmetic, powers, ``sqrt``, ``exp``, ``log``, trigonometric and hyperbolic
functions) the same ``t * f'(z)`` is both the JVP and the VJP; ``abs``, ``sign``,
``conj`` and ``angle`` are not holomorphic and have their own rules; a real operand
combined with a complex one gets a real cotangent.
"""

import numpy as np

from ..core.primitive import Primitive
from ..core.zeros import Zero, dtype_of, shape_of
from . import complex as cx
from . import reductions, shape
from .control import stop_gradient
from .families import (
    binary,
    broadcasting_batch,
    nondiff_elementwise,
    real_cotangent,
    sum_tangents,
    times,
    unary,
)


def _is_complex(x):
    return dtype_of(x).kind == "c"


def _real(x):
    return cx.real_p(x)


def _real_part(ct):
    return cx.real_part(ct)

# --- comparisons and other maps with no derivative -------------------------------------
equal = nondiff_elementwise("equal", np.equal)
not_equal = nondiff_elementwise("not_equal", np.not_equal)
less = nondiff_elementwise("less", np.less)
less_equal = nondiff_elementwise("less_equal", np.less_equal)
greater = nondiff_elementwise("greater", np.greater)
greater_equal = nondiff_elementwise("greater_equal", np.greater_equal)
sign_p = nondiff_elementwise("sign", np.sign)
isfinite = nondiff_elementwise("isfinite", np.isfinite)
isnan = nondiff_elementwise("isnan", np.isnan)
isinf = nondiff_elementwise("isinf", np.isinf)
logical_not = nondiff_elementwise("logical_not", np.logical_not)
logical_and = nondiff_elementwise("logical_and", np.logical_and)
logical_or = nondiff_elementwise("logical_or", np.logical_or)


def _zero_factor_nan(product, *factors):
    mask = np.equal(factors[0], 0)
    for factor in factors[1:]:
        mask = mask | np.equal(factor, 0)
    return np.logical_and(np.isnan(product), mask)


# Where a derivative product is NaN because one of its factors is 0 (0 x inf, 0 x nan): the
# entries the 0 x inf rule (families.zero_safe) sets to 0.
zero_factor_nan = nondiff_elementwise("zero_factor_nan", _zero_factor_nan)

# --- arithmetic ------------------------------------------------------------------------
add = binary("add", np.add,
             lambda t, x, y, out: t,
             lambda t, x, y, out: t,
    reads=((), ()))
subtract = binary("subtract", np.subtract,
                  lambda t, x, y, out: t,
                  lambda t, x, y, out: negative(t),
    reads=((), ()))
multiply = binary("multiply", np.multiply,
                  lambda t, x, y, out: times(t, y),
                  lambda t, x, y, out: times(t, x),
    reads=(("y",), ("x",)), products=False)   # times: the 0 x inf rule with a cheap check
divide = binary("divide", np.true_divide,
                lambda t, x, y, out: t / y,
                lambda t, x, y, out: negative(t * out / y),
    reads=(("y",), ("y", "out")))
negative = unary("negative", np.negative, lambda t, x, out: negative(t), reads=())


def _power_base(t, x, y, out):
    # y * x**(y-1), kept at 0 for y == 0 where x**(-1) would be inf at x == 0.
    if isinstance(y, (int, float)):
        return t * (y * power(x, y - 1)) if y != 0 else t * 0.0
    # Guard only x == y == 0: elsewhere keep y * x**(y-1) so its derivative in y survives.
    # Where x <= 0 (complex: x == 0) the partial in y is 0 (_power_exponent), and so is its
    # derivative in x; the factor y is held constant there so that the mixed second
    # derivative is 0 in both orders (x**(y-1) has no y-derivative there either).
    both_zero = logical_and(equal(x, 0), equal(y, 0))
    has_log = not_equal(x, 0) if _is_complex(out) else greater(x, 0)
    factor = where(has_log, y, stop_gradient(y))
    return t * where(both_zero, 0.0, factor * power(where(both_zero, 1.0, x), y - 1))


def _power_exponent(t, x, y, out):
    # x**y * log(x); log only of positive bases, so 0**y (y > 0) gets the right 0.
    if isinstance(x, (int, float, complex)):  # a weak Python scalar takes the output's dtype
        x = np.asarray(x, dtype=dtype_of(out))  # (2.0 ** y with y float32 stays float32)
    if _is_complex(out):  # complex logarithm of any nonzero base (principal branch)
        nonzero = not_equal(x, 0)
        base = where(nonzero, x, 1.0)
        if not _is_complex(base):
            base = astype(base, dtype_of(out))
        return t * where(nonzero, out * log(base), 0.0)
    positive = greater(x, 0)
    return t * where(positive, out * log(where(positive, x, 1.0)), 0.0)


power_p = binary("power", np.power, _power_base, _power_exponent)


def _scalar_power_derivative(t, x, exponent):
    if exponent == 0:
        return times(t, 0.0)
    if exponent == 2:
        return times(t, 2 * x)
    return times(t, exponent * scalar_power_p(x, exponent=exponent - 1))


scalar_power_p = Primitive(
    "scalar_power", lambda x, exponent: np.power(x, exponent),
    lambda primals, tangents, exponent: (
        scalar_power_p(primals[0], exponent=exponent),
        _scalar_power_derivative(tangents[0], primals[0], exponent)),
    (lambda ct, out, x, exponent: _scalar_power_derivative(ct, x, exponent),),
    lambda axis_size, values, batch_axes, exponent: (
        scalar_power_p(values[0], exponent=exponent), 0),
    vjp_ignores=("out",))


def power(x, y):
    """``x ** y`` elementwise, as ``np.power``. A constant scalar exponent (``x ** 2``) takes
    a cheaper primitive whose reverse pass keeps only ``x``."""
    if isinstance(y, (int, float, np.integer, np.floating)) and not isinstance(y, bool):
        return scalar_power_p(x, exponent=y)  # a NumPy scalar keeps its dtype (NEP 50)
    return power_p(x, y)
square = unary("square", np.square, lambda t, x, out: t * (2 * x), reads=("x",))
# sqrt'(0) is +inf; a zero tangent or cotangent still gives 0 there (the 0 x inf rule), so
# the Jacobian at 0 is the same from jacfwd and jacrev, and where(x > 0, sqrt(x), 0) is
# NaN-free.


def _sqrt_derivative(t, x, out):
    if _is_complex(out):
        # At z = 0 the complex derivative is infinite in a direction that depends on the
        # direction of approach: undefined, NaN in every real coordinate and both engines
        # (IEEE's 1 / 0j would be inf + nan j, whose NaN the engines place differently).
        zero = equal(out, 0)
        out = where(zero, np.nan, out)
        return t / (2 * out)
    # + 0.0 turns sqrt(-0.0) = -0.0 into +0.0: sqrt'(-0.0) is +inf, as at +0.0.
    return t / (2 * out + 0.0)


sqrt = unary("sqrt", np.sqrt, _sqrt_derivative, reads=("out",))
conj = unary("conj", np.conj, lambda t, x, out: conj(t), reads=())  # linear; its own transpose

# abs and sign of a complex z are not holomorphic. With u = z / |z| (0 at z = 0):
# d|z| = Re(conj(u) t), whose transpose is w -> Re(w) conj(u); sign(z) = z / |z| is composed
# from abs and division, so its derivative follows (0 at z = 0, like abs's).


def _complex_sign(z):
    """``z / |z|``, and 0 where ``z == 0``: NumPy's ``sign`` of complex numbers."""
    size = abs(z)
    zero = equal(size, 0)
    return where(zero, 0.0, z / where(zero, 1.0, size))


def _abs_tangent(t, x, out):
    if _is_complex(x):
        return _real(conj(_complex_sign(x)) * t)
    return t * sign_p(x)


def _abs_cotangent(ct, x, out):
    if _is_complex(x):
        return _real_part(ct) * conj(_complex_sign(x))
    return ct * sign_p(x)


abs = unary("abs", np.abs, _abs_tangent, reads=("x",), transpose=_abs_cotangent)  # noqa: A001


def sign(x):
    """The sign of ``x``, as ``np.sign``: -1, 0 or 1 with zero derivative for real ``x``;
    ``x / |x|`` (0 at 0) for complex ``x``, whose derivative is that of the quotient (0 at 0).
    """
    return _complex_sign(x) if _is_complex(x) else sign_p(x)

# --- exponentials and logarithms -------------------------------------------------------
exp = unary("exp", np.exp, lambda t, x, out: t * out, reads=("out",))
def _log_derivative(t, x, out):
    if _is_complex(x):
        # At z = 0 the complex derivative 1 / z is infinite in a direction that depends on the
        # approach: NaN in every real coordinate and both engines, as for complex sqrt.
        return t / where(equal(x, 0), np.nan, x)
    # + 0.0: log'(-0.0) is +inf, as at +0.0 (log(-0.0) == log(0.0) == -inf); 1 / -0.0 is -inf.
    return t / (x + 0.0)


log = unary("log", np.log, _log_derivative, reads=("x",))
log1p = unary("log1p", np.log1p, lambda t, x, out: t / (1 + x), reads=("x",))
expm1 = unary("expm1", np.expm1, lambda t, x, out: t * (out + 1), reads=("out",))

# --- trigonometric and hyperbolic ------------------------------------------------------
sin = unary("sin", np.sin, lambda t, x, out: t * cos(x), reads=("x",))
cos = unary("cos", np.cos, lambda t, x, out: negative(t * sin(x)), reads=("x",))
tan = unary("tan", np.tan, lambda t, x, out: t * (1 + square(out)), reads=("out",))
arctan = unary("arctan", np.arctan, lambda t, x, out: t / (1 + square(x)), reads=("x",))
sinh = unary("sinh", np.sinh, lambda t, x, out: t * cosh(x), reads=("x",))
cosh = unary("cosh", np.cosh, lambda t, x, out: t * sinh(x), reads=("x",))
tanh = unary("tanh", np.tanh, lambda t, x, out: t * (1 - square(out)), reads=("out",))

# --- selections ------------------------------------------------------------------------
# maximum/minimum split the derivative equally between tied arguments, so that
# maximum(x, x) has derivative 1 and jacfwd and jacrev agree at ties.


def _share(t, wins, ties):
    """``t`` where this argument wins, half of it at a tie, 0 where it loses."""
    return where(wins, t, where(ties, 0.5 * t, 0.0))


maximum = binary("maximum", np.maximum,
                 lambda t, x, y, out: _share(t, greater(x, y), equal(x, y)),
                 lambda t, x, y, out: _share(t, less(x, y), equal(x, y)),
    reads=(("x", "y"), ("x", "y")), products=False)
minimum = binary("minimum", np.minimum,
                 lambda t, x, y, out: _share(t, less(x, y), equal(x, y)),
                 lambda t, x, y, out: _share(t, greater(x, y), equal(x, y)),
    reads=(("x", "y"), ("x", "y")), products=False)


def _where_jvp(primals, tangents):
    condition, x, y = primals
    _, tx, ty = tangents
    out = where(condition, x, y)
    t = where(condition, 0.0 if type(tx) is Zero else tx, 0.0 if type(ty) is Zero else ty)
    if shape_of(t) != shape_of(out):
        t = shape.broadcast_to(t, shape_of(out))
    return out, t


where = Primitive(
    "where", np.where, _where_jvp,
    (None,
     lambda ct, out, c, x, y: reductions.unbroadcast(
         real_cotangent(where(c, ct, 0.0), x), shape_of(x)),
     lambda ct, out, c, x, y: reductions.unbroadcast(
         real_cotangent(where(c, 0.0, ct), y), shape_of(y))),
    vjp_ignores=(1, 2, "out"))
where.batch = broadcasting_batch(where)


def _clip_jvp(primals, tangents):
    x, low, high = primals
    tx, tlow, thigh = tangents
    out = clip(x, low, high)
    parts = [_clip_part(i, t, x, low, high)
             for i, t in enumerate(tangents) if type(t) is not Zero]
    return out, sum_tangents(parts, out)


def _clip_part(argnum, t, x, low, high):
    """``t`` times the derivative of clip = min(max(x, low), high) in argument ``argnum``.
    At a bound the derivative goes to ``x`` (the output equals ``x`` there), none to the
    bound; when ``low > high`` the output is ``high``, as in NumPy."""
    above = greater(maximum(x, low), high)
    if argnum == 2:
        return where(above, t, 0.0)
    inside = greater_equal(x, low)
    chosen = logical_and(inside, logical_not(above)) if argnum == 0 else \
        logical_and(logical_not(inside), logical_not(above))
    return where(chosen, t, 0.0)


def _clip_vjp(argnum):
    def rule(cotangent, out, x, low, high):
        part = _clip_part(argnum, cotangent, x, low, high)
        arg = (x, low, high)[argnum]
        return reductions.unbroadcast(real_cotangent(part, arg), shape_of(arg))
    return rule


def _clip_impl(x, low, high):
    return np.minimum(np.maximum(x, low), high)


clip = Primitive("clip", _clip_impl, _clip_jvp, tuple(_clip_vjp(i) for i in range(3)),
                 vjp_ignores=("out",))
clip.batch = broadcasting_batch(clip)


# --- dtype conversion ------------------------------------------------------------------
# A conversion from complex to real keeps the real part (as JAX does; NumPy warns and does
# the same); its transpose embeds the real cotangent back. From real to complex the
# transpose keeps the real part of the cotangent.


def _astype_impl(x, dtype):
    x = np.asarray(x)
    if x.dtype.kind == "c" and np.dtype(dtype).kind != "c":
        x = x.real
    return x.astype(dtype)


def _astype_jvp(primals, tangents, dtype):
    out = astype_p(primals[0], dtype=dtype)
    if np.dtype(dtype).kind not in "fc":
        return out, Zero(shape_of(out), np.float64)
    return out, astype_p(tangents[0], dtype=dtype)


def _astype_vjp(ct, out, x, dtype):
    if np.dtype(dtype).kind not in "fc" or dtype_of(x).kind not in "fc":
        return None  # integer values carry no derivative
    if np.dtype(dtype).kind == "f":
        ct = _real_part(ct)
    return astype_p(ct, dtype=dtype_of(x))


astype_p = Primitive(
    "astype", _astype_impl, _astype_jvp, (_astype_vjp,),
    lambda axis_size, values, batch_axes, dtype: (astype_p(values[0], dtype=dtype), 0),
    vjp_ignores=(0, "out"))


def astype(x, dtype):
    """``x`` converted to ``dtype``; a conversion to an integer type has zero derivative."""
    dtype = np.dtype(dtype)
    return x if dtype_of(x) == dtype else astype_p(x, dtype=dtype)
