"""Elementwise primitives: arithmetic, powers, exponentials, trigonometry, comparisons.

Each line pairs NumPy's function with its partial derivatives, written in diffkit
operations so that the derivative can itself be differentiated and batched
(``families.elementwise``): ``sin_p, sin = ...`` gives the primitive and the function of
NumPy's name. Rules call the primitives (``cos_p``); the public functions are for the
namespaces, which bind their primitives directly.

Complex inputs follow JAX's convention (see ``diffkit.ops.complex``): for the holomorphic
functions (arithmetic, powers, ``sqrt``, ``exp``, ``log``, trigonometric and hyperbolic
functions) the same ``f'(z)`` serves the JVP and the VJP; ``abs``, ``sign``,
``conj`` and ``angle`` are not holomorphic and have their own rules; a real operand
combined with a complex one gets a real cotangent.
"""

import numpy as np

from ..core.concrete import concrete_test
from ..core.primitive import Primitive, Traits
from ..core.trace import Tracer
from ..core.zeros import Zero, dtype_of, shape_of
from . import complex as cx
from . import reductions, shape
from . import sparsity_rules as sr
from . import taylor_arithmetic as ta
from .control import stop_gradient
from .families import (
    broadcasting_batch,
    elementwise,
    nondiff_elementwise,
    public_function,
    real_cotangent,
    sum_tangents,
    tangent_rule,
    times,
    zero_safe,
)


def _is_complex(x):
    return dtype_of(x).kind == "c"


def _real(x):
    return cx.real_p(x)


def _real_part(ct):
    return cx.real_part(ct)


_NUMPY = "diffkit.numpy"


def _numpy(name, fn, partials, doc, **options):
    """A differentiable NumPy ufunc: its primitive and its function (``options``: the
    builder's ``select``, ``deciding`` and ``traits``)."""
    return elementwise(name, fn, partials, doc=doc, module=_NUMPY, **options)


def _nondiff(name, fn, argnames, doc):
    """A NumPy ufunc without derivative: its primitive and its function."""
    prim = nondiff_elementwise(name, fn)
    return prim, public_function(prim, name, argnames, doc, _NUMPY)


# --- comparisons and other maps with no derivative -------------------------------------
equal_p, equal = _nondiff("equal", np.equal, ("x", "y"), "``x == y`` (no derivative).")
not_equal_p, not_equal = _nondiff("not_equal", np.not_equal, ("x", "y"),
                                  "``x != y`` (no derivative).")
less_p, less = _nondiff("less", np.less, ("x", "y"), "``x < y`` (no derivative).")
less_equal_p, less_equal = _nondiff("less_equal", np.less_equal, ("x", "y"),
                                    "``x <= y`` (no derivative).")
greater_p, greater = _nondiff("greater", np.greater, ("x", "y"),
                              "``x > y`` (no derivative).")
greater_equal_p, greater_equal = _nondiff("greater_equal", np.greater_equal, ("x", "y"),
                                          "``x >= y`` (no derivative).")
sign_p = nondiff_elementwise("sign", np.sign)
isfinite_p, isfinite = _nondiff("isfinite", np.isfinite, ("x",),
                                "Whether ``x`` is finite (no derivative).")
isnan_p, isnan = _nondiff("isnan", np.isnan, ("x",), "Whether ``x`` is NaN (no derivative).")
isinf_p, isinf = _nondiff("isinf", np.isinf, ("x",),
                          "Whether ``x`` is infinite (no derivative).")
logical_not_p, logical_not = _nondiff("logical_not", np.logical_not, ("x",),
                                      "Logical not (no derivative).")
logical_and_p, logical_and = _nondiff("logical_and", np.logical_and, ("x", "y"),
                                      "Logical and (no derivative).")
logical_or_p, logical_or = _nondiff("logical_or", np.logical_or, ("x", "y"),
                                    "Logical or (no derivative).")


def _zero_factor_nan(product, *factors):
    mask = np.equal(factors[0], 0)
    for factor in factors[1:]:
        mask = mask | np.equal(factor, 0)
    return np.logical_and(np.isnan(product), mask)


# Where a derivative product is NaN because one of its factors is 0 (0 x inf, 0 x nan): the
# entries the 0 x inf rule (families.zero_safe) sets to 0.
zero_factor_nan_p = nondiff_elementwise("zero_factor_nan", _zero_factor_nan)


def zero_factor_nan(product, *factors):
    """Where ``product`` is NaN and one of ``factors`` is 0 (no derivative)."""
    return zero_factor_nan_p(product, *factors)


# --- arithmetic ------------------------------------------------------------------------
# Real arithmetic: NaN in, NaN out at the same entry; computed by Python's operators too.
def _arithmetic(operator):
    return {"operator": operator, "nan_propagating": True}


add_p, add = _numpy("add", np.add, {"x": 1, "y": 1}, "``x + y``, elementwise.",
                    traits=_arithmetic("+"))
subtract_p, subtract = _numpy("subtract", np.subtract, {"x": 1, "y": -1},
                              "``x - y``, elementwise.", traits=_arithmetic("-"))
multiply_p, multiply = _numpy("multiply", np.multiply, {"x": "y", "y": "x"},
                              "``x * y``, elementwise.", traits=_arithmetic("*"),
                              jet=ta.product)


def _divide_numerator(x, y):
    # 1 / y; NaN at x = y = 0, where the value is 0 / 0 = NaN and no one-sided limit exists
    # (x / y is +-inf on both sides of x = 0 along y = 0). Elsewhere on y = 0 it is the
    # one-sided +-inf of the poles (the side NumPy's value comes from, as 1 / x). A zero
    # tangent or cotangent still gives 0 (the 0 x inf rule). The NaN is slope * NaN, so its
    # own derivative in y is NaN too (a constant NaN would have a zero one).
    slope = 1 / y
    if not holds_zero(y):   # a divisor without zeros (the common case): nothing to mask
        return slope
    return where_p(logical_and_p(equal_p(y, 0), equal_p(x, 0)), slope * np.nan, slope)


def holds_zero(x):
    """Whether the array, scalar or tracer ``x`` has a zero entry (read without a
    derivative; a recording trace, jit, keeps the answer as a guard)."""
    if isinstance(x, Tracer):
        return concrete_test(x, holds_zero)
    return not np.all(x)


divide_p, divide = _numpy("divide", np.true_divide,
                          {"x": _divide_numerator, "y": lambda y, out: negative_p(out / y)},
                          "``x / y``, elementwise.",
                          traits={**_arithmetic("/"), "curvature": "quotient"},
                          jet=ta.quotient)
negative_p, negative = _numpy("negative", np.negative, {"x": -1}, "``-x``, elementwise.",
                              traits=_arithmetic("neg"))


def _power_base(x, y, out):
    # y * x**(y-1), kept at 0 for y == 0 where x**(-1) would be inf at x == 0.
    if isinstance(y, (int, float)):
        return y * power(x, y - 1) if y != 0 else 0.0
    # Guard only x == y == 0: elsewhere keep y * x**(y-1) so its derivative in y survives.
    # Where x <= 0 (complex: x == 0) the partial in y is 0 (_power_exponent), and so is its
    # derivative in x; the factor y is held constant there so that the mixed second
    # derivative is 0 in both orders (x**(y-1) has no y-derivative there either).
    both_zero = logical_and_p(equal_p(x, 0), equal_p(y, 0))
    has_log = not_equal_p(x, 0) if _is_complex(out) else greater_p(x, 0)
    factor = where_p(has_log, y, stop_gradient(y))
    return where_p(both_zero, 0.0, factor * power(where_p(both_zero, 1.0, x), y - 1))


def _power_exponent(x, out):
    # x**y * log(x); log only of positive bases, so 0**y (y > 0) gets the right 0.
    if isinstance(x, (int, float, complex)):  # a weak Python scalar takes the output's dtype
        x = np.asarray(x, dtype=dtype_of(out))  # (2.0 ** y with y float32 stays float32)
    if _is_complex(out):  # complex logarithm of any nonzero base (principal branch)
        nonzero = not_equal_p(x, 0)
        base = where_p(nonzero, x, 1.0)
        if not _is_complex(base):
            base = astype(base, dtype_of(out))
        return where_p(nonzero, out * log_p(base), 0.0)
    positive = greater_p(x, 0)
    return where_p(positive, out * log_p(where_p(positive, x, 1.0)), 0.0)


# (its public function is ``power`` below, which picks scalar_power_p for a constant exponent)
power_p, _power = _numpy("power", np.power, {"x": _power_base, "y": _power_exponent},
                    "``x ** y``, elementwise.", jet=ta.power)


def _scalar_power_derivative(t, x, exponent):
    if exponent == 0:
        return times(t, 0.0)
    if exponent == 2:
        return times(t, 2 * x)
    return times(t, exponent * scalar_power_p(x, exponent=exponent - 1))


def _scalar_power(x, exponent, out=None):
    return np.power(x, exponent, out=out)


def _power_curvature(params):
    """``x ** 1`` is linear, ``x ** e`` curves; ``x ** 0`` (a constant) is left unknown."""
    exponent = params.get("exponent")
    if exponent is None or np.ndim(exponent) != 0 or exponent == 0:
        return None
    return "linear" if exponent == 1 else "unary"


scalar_power_p = Primitive(
    "scalar_power", _scalar_power,
    lambda primals, tangents, exponent: (
        scalar_power_p(primals[0], exponent=exponent),
        _scalar_power_derivative(tangents[0], primals[0], exponent)),
    (lambda ct, out, x, exponent: _scalar_power_derivative(ct, x, exponent),),
    lambda axis_size, values, batch_axes, exponent: (
        scalar_power_p(values[0], exponent=exponent), 0),
    vjp_ignores=("out",),
    traits=Traits(elementwise=True, out_argument=True, curvature=_power_curvature))
scalar_power_p.sparsity = sr.elementwise_sparsity()
scalar_power_p.jet = ta.scalar_power(scalar_power_p)


def power(x, y):
    """``x ** y`` elementwise, as ``np.power``. A constant scalar exponent (``x ** 2``) takes
    a cheaper primitive whose reverse pass keeps only ``x``."""
    if isinstance(y, (int, float, np.integer, np.floating)) and not isinstance(y, bool):
        return scalar_power_p(x, exponent=y)  # a NumPy scalar keeps its dtype (NEP 50)
    return power_p(x, y)


square_p, square = _numpy("square", np.square, {"x": lambda x: 2 * x}, "``x ** 2``.",
                          jet=ta.square)
# sqrt'(0) is +inf; a zero tangent or cotangent still gives 0 there (the 0 x inf rule), so
# the Jacobian at 0 is the same from jacfwd and jacrev, and where(x > 0, sqrt(x), 0) is
# NaN-free.


def _sqrt_slope(out):
    if _is_complex(out):
        # At z = 0 the complex derivative is infinite in a direction that depends on the
        # direction of approach: undefined, NaN in every real coordinate and both engines
        # (IEEE's 1 / 0j would be inf + nan j, whose NaN the engines place differently).
        return 0.5 / where_p(equal_p(out, 0), np.nan, out)
    # + 0.0 turns sqrt(-0.0) = -0.0 into +0.0: sqrt'(-0.0) is +inf, as at +0.0.
    return 0.5 / (out + 0.0)


sqrt_p, sqrt = _numpy("sqrt", np.sqrt, {"x": _sqrt_slope}, "The non-negative square root.",
                      jet=ta.square_root)
# conj is linear and its own transpose: the conjugate of the tangent, not a product
conj_p, conj = _numpy("conj", np.conj, {"x": tangent_rule(lambda t: conj_p(t))},
                      "The complex conjugate.", traits={"curvature": "linear"},
                      jet=ta.linear)

# abs and sign of a complex z are not holomorphic. With u = z / |z| (0 at z = 0):
# d|z| = Re(conj(u) t), whose transpose is w -> Re(w) conj(u); sign(z) = z / |z| is composed
# from abs and division, so its derivative follows (0 at z = 0, like abs's).


def _complex_sign(z):
    """``z / |z|``, and 0 where ``z == 0``: NumPy's ``sign`` of complex numbers."""
    size = abs_p(z)
    zero = equal_p(size, 0)
    return where_p(zero, 0.0, z / where_p(zero, 1.0, size))


def _abs_tangent(t, x):
    if _is_complex(x):
        return _real(conj_p(_complex_sign(x)) * t)
    return t * sign_p(x)


def _abs_cotangent(ct, x):
    if _is_complex(x):
        return _real_part(ct) * conj_p(_complex_sign(x))
    return ct * sign_p(x)


# (the 0 x inf rule applies to these products too: zero_safe)
abs_p, abs = _numpy(  # noqa: A001
    "abs", np.abs, {"x": tangent_rule(zero_safe(_abs_tangent), zero_safe(_abs_cotangent))},
    "The absolute value (the modulus of a complex number).")


def sign(x):
    """The sign of ``x``, as ``np.sign``: -1, 0 or 1 with zero derivative for real ``x``;
    ``x / |x|`` (0 at 0) for complex ``x``, whose derivative is that of the quotient (0 at 0).
    """
    return _complex_sign(x) if _is_complex(x) else sign_p(x)

# --- exponentials and logarithms -------------------------------------------------------
exp_p, exp = _numpy("exp", np.exp, {"x": lambda out: out}, "The exponential.",
                    jet=ta.exponential())


def _log_slope(x):
    if _is_complex(x):
        # At z = 0 the complex derivative 1 / z is infinite in a direction that depends on the
        # approach: NaN in every real coordinate and both engines, as for complex sqrt.
        return 1 / where_p(equal_p(x, 0), np.nan, x)
    # + 0.0: log'(-0.0) is +inf, as at +0.0 (log(-0.0) == log(0.0) == -inf); 1 / -0.0 is -inf.
    return 1 / (x + 0.0)


log_p, log = _numpy("log", np.log, {"x": _log_slope}, "The natural logarithm.",
                    jet=ta.logarithm(_log_slope))


def _log1p_slope(x):
    return 1 / (1 + x)


log1p_p, log1p = _numpy("log1p", np.log1p, {"x": _log1p_slope},
                        "``log(1 + x)``, accurate for small ``x``.",
                        jet=ta.logarithm(_log1p_slope, shift=1))
expm1_p, expm1 = _numpy("expm1", np.expm1, {"x": lambda out: out + 1},
                        "``exp(x) - 1``, accurate for small ``x``.",
                        jet=ta.exponential(shift=1))

# --- trigonometric and hyperbolic ------------------------------------------------------
sin_p, sin = _numpy("sin", np.sin, {"x": lambda x: cos_p(x)}, "The sine.", jet=ta.sine)
cos_p, cos = _numpy("cos", np.cos, {"x": lambda x: negative_p(sin_p(x))}, "The cosine.",
                    jet=ta.cosine)
tan_p, tan = _numpy("tan", np.tan, {"x": lambda out: 1 + square_p(out)}, "The tangent.",
                    jet=ta.output_slope(lambda x, out: 1 + square_p(out), 0, 1))


def _arctan_base(x):
    return 1 + square_p(x)


arctan_p, arctan = _numpy("arctan", np.arctan, {"x": lambda x: 1 / _arctan_base(x)},
                          "The inverse tangent.",
                          jet=ta.algebraic_slope(lambda x: 1 / _arctan_base(x), _arctan_base,
                                                 1, -1))
sinh_p, sinh = _numpy("sinh", np.sinh, {"x": lambda x: cosh_p(x)}, "The hyperbolic sine.",
                      jet=ta.hyperbolic_sine)
cosh_p, cosh = _numpy("cosh", np.cosh, {"x": lambda x: sinh_p(x)}, "The hyperbolic cosine.",
                      jet=ta.hyperbolic_cosine)
tanh_p, tanh = _numpy("tanh", np.tanh, {"x": lambda out: 1 - square_p(out)},
                      "The hyperbolic tangent.",
                      jet=ta.output_slope(lambda x, out: 1 - square_p(out), 0, -1))

# --- selections ------------------------------------------------------------------------
# maximum/minimum split the derivative equally between tied arguments, so that
# maximum(x, x) has derivative 1 and jacfwd and jacrev agree at ties.


def _share(t, wins, ties):
    """``t`` where this argument wins, half of it at a tie, 0 where it loses."""
    return where_p(wins, t, where_p(ties, 0.5 * t, 0.0))


def larger_select(args, out, **params):
    """Sparsity at given values of ``maximum`` and ``fmax``: the output depends on the
    winner, on both at a tie (and, for ``fmax``, on both where one is NaN)."""
    x, y = sr.selection_values(args)
    return [~(x < y), ~(y < x)]


def smaller_select(args, out, **params):
    """The same for ``minimum`` and ``fmin``."""
    x, y = sr.selection_values(args)
    return [~(x > y), ~(y > x)]


maximum_p, maximum = _numpy(
    "maximum", np.maximum,
    {"x": tangent_rule(lambda t, x, y: _share(t, greater_p(x, y), equal_p(x, y))),
     "y": tangent_rule(lambda t, x, y: _share(t, less_p(x, y), equal_p(x, y)))},
    "The larger of ``x`` and ``y``, elementwise.", select=larger_select)
minimum_p, minimum = _numpy(
    "minimum", np.minimum,
    {"x": tangent_rule(lambda t, x, y: _share(t, less_p(x, y), equal_p(x, y))),
     "y": tangent_rule(lambda t, x, y: _share(t, greater_p(x, y), equal_p(x, y)))},
    "The smaller of ``x`` and ``y``, elementwise.", select=smaller_select)


def _where_jvp(primals, tangents):
    condition, x, y = primals
    _, tx, ty = tangents
    out = where_p(condition, x, y)
    t = where_p(condition, 0.0 if type(tx) is Zero else tx, 0.0 if type(ty) is Zero else ty)
    if shape_of(t) != shape_of(out):
        t = shape.broadcast_to(t, shape_of(out))
    return out, t


where_p = Primitive(
    "where", np.where, _where_jvp,
    (None,
     lambda ct, out, c, x, y: reductions.unbroadcast(
         real_cotangent(where_p(c, ct, 0.0), x), shape_of(x)),
     lambda ct, out, c, x, y: reductions.unbroadcast(
         real_cotangent(where_p(c, 0.0, ct), y), shape_of(y))),
    vjp_ignores=(1, 2, "out"), traits=Traits(elementwise=True, curvature="linear"))
where_p.batch = broadcasting_batch(where_p)
where_p.jet = ta.where(where_p)   # the condition is a value; x and y enter linearly


def _where_select(args, out, **params):
    condition = sr.selection_values(args[:1])[0].astype(bool)
    return [True, condition, ~condition]


# the condition alone decides the branch: a constant one holds for every input
where_p.sparsity = sr.elementwise_sparsity(_where_select, deciding=(0,))


def where(condition, x, y):
    """``x`` where ``condition`` holds, else ``y``; the derivative follows the choice."""
    return where_p(condition, x, y)


def _clip_jvp(primals, tangents):
    x, low, high = primals
    tx, tlow, thigh = tangents
    out = clip_p(x, low, high)
    parts = [_clip_part(i, t, x, low, high)
             for i, t in enumerate(tangents) if type(t) is not Zero]
    return out, sum_tangents(parts, out)


def _clip_part(argnum, t, x, low, high):
    """``t`` times the derivative of clip = min(max(x, low), high) in argument ``argnum``.
    At a bound the derivative goes to ``x`` (the output equals ``x`` there), none to the
    bound; when ``low > high`` the output is ``high``, as in NumPy."""
    above = greater_p(maximum_p(x, low), high)
    if argnum == 2:
        return where_p(above, t, 0.0)
    inside = greater_equal_p(x, low)
    chosen = logical_and_p(inside, logical_not_p(above)) if argnum == 0 else \
        logical_and_p(logical_not_p(inside), logical_not_p(above))
    return where_p(chosen, t, 0.0)


def _clip_vjp(argnum):
    def rule(cotangent, out, x, low, high):
        part = _clip_part(argnum, cotangent, x, low, high)
        arg = (x, low, high)[argnum]
        return reductions.unbroadcast(real_cotangent(part, arg), shape_of(arg))
    return rule


def _clip_impl(x, low, high):
    return np.minimum(np.maximum(x, low), high)


clip_p = Primitive("clip", _clip_impl, _clip_jvp, tuple(_clip_vjp(i) for i in range(3)),
                   vjp_ignores=("out",),   # piecewise: one of its arguments' entries
                   traits=Traits(elementwise=True, curvature="linear"))
clip_p.batch = broadcasting_batch(clip_p)


def _clip_select(args, out, **params):   # the argument the output is at these values
    x, low, high = sr.selection_values(args)
    above = np.maximum(x, low) > high
    inside = x >= low
    return [inside & ~above, ~inside & ~above, above]


clip_p.sparsity = sr.elementwise_sparsity(_clip_select)


def clip(x, low, high):
    """``x`` limited to ``[low, high]``; at a bound the derivative goes to ``x``."""
    return clip_p(x, low, high)


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
    vjp_ignores=(0, "out"), traits=Traits(elementwise=True, curvature="linear"))
astype_p.sparsity = sr.elementwise_sparsity()
astype_p.jet = ta.astype(astype_p)


def astype(x, dtype):
    """``x`` converted to ``dtype``; a conversion to an integer type has zero derivative."""
    dtype = np.dtype(dtype)
    return x if dtype_of(x) == dtype else astype_p(x, dtype=dtype)
