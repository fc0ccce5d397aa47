"""The error function family and the normal distribution as primitives: ``erf``,
``erfc``, ``erfinv``, ``erfcinv``, ``erfcx``, ``erfi``, ``dawsn``, ``ndtr``, ``ndtri``,
``log_ndtr``, ``ndtri_exp``, Owen's ``owens_t`` and the Fresnel integrals ``fresnel``.

Conventions at special points (the same in both engines)
--------------------------------------------------------
=====================  =====================================================================
function               convention
=====================  =====================================================================
ndtri_exp              derivative 0 at y = -inf (via erfcx), +inf at y = 0
=====================  =====================================================================
erfinv at +-1 and ndtri at 0 and 1 have infinite derivatives: the rules give the limit.
"""

import math

from ..core.primitive import Primitive
from ..core.zeros import Zero
from . import elementwise as ew
from . import sparsity_rules as sr
from . import taylor_arithmetic as ta
from .exact_phase import cos_half_pi_square_p, sin_half_pi_square_p
from .special_helpers import (
    _LOG_SQRT_2PI,
    _SQRT_PI,
    _poly,
    _typed,
    on_first_call,
    public,
    sc,
    special_function,
)

__all__ = [
    "erf", "erfc", "erfinv", "erfcinv", "erfcx", "erfi", "dawsn", "ndtr", "ndtri",
    "log_ndtr", "ndtri_exp", "owens_t", "fresnel",
]

# --- error function and the normal distribution --------------------------------------------



def _erf_slope(x):
    return (2 / _SQRT_PI) * ew.exp_p(-ew.square_p(x))


def _erfc_slope(x):
    return (-2 / _SQRT_PI) * ew.exp_p(-ew.square_p(x))


def _erfi_slope(x):
    return (2 / _SQRT_PI) * ew.exp_p(ew.square_p(x))


# Taylor mode: each slope g is a multiple of exp(-+x**2), so g' = g (-+x**2)'
erf_p, erf = special_function(
    "erf", sc.erf, {"x": _erf_slope}, "The error function, as ``scipy.special.erf``.")
erf_p.jet = ta.gaussian_slope(_erf_slope, -1)(erf_p)
erfc_p, erfc = special_function(
    "erfc", sc.erfc, {"x": _erfc_slope}, "The complementary error function ``1 - erf(x)``.")
erfc_p.jet = ta.gaussian_slope(_erfc_slope, -1)(erfc_p)
erfinv_p, erfinv = special_function(
    "erfinv", sc.erfinv,
    {"y": lambda out: (_SQRT_PI / 2) * ew.exp_p(ew.square_p(out))},
    "The inverse of ``erf`` on (-1, 1).")
erfcinv_p, erfcinv = special_function(
    "erfcinv", sc.erfcinv,
    {"y": lambda out: (-_SQRT_PI / 2) * ew.exp_p(ew.square_p(out))},
    "The inverse of ``erfc`` on (0, 2).")
# erfcx'(x) = 2 x erfcx(x) - 2/sqrt(pi) -> 0 as x -> inf. Far right the two terms cancel:
# there the asymptotic series (2/sqrt(pi)) sum_n>=1 (-1)^n (2n-1)!! / (2 x^2)^n replaces them
# (exact to rounding from x = 50, and 0 at +inf instead of inf * 0).
_ERFCX_SLOPE_FAR = [0.0] + [(-1) ** n * math.prod(range(1, 2 * n, 2)) / 2 ** n * 2 / _SQRT_PI
                            for n in range(1, 7)]


def _erfcx_slope(x, out):
    far = ew.greater_p(x, 50.0)
    near_x = ew.where_p(far, 0.0, x)
    inverse_square = 1 / ew.square_p(ew.where_p(far, x, 50.0))
    return ew.where_p(far, _poly(inverse_square, _ERFCX_SLOPE_FAR),
                    2 * near_x * ew.where_p(far, 0.0, out) - 2 / _SQRT_PI)


erfcx_p, erfcx = special_function(
    "erfcx", sc.erfcx,
    {"x": lambda x, out: _erfcx_slope(x, out)},
    "The scaled complementary error function ``exp(x**2) erfc(x)``.")
erfi_p, erfi = special_function(
    "erfi", sc.erfi, {"x": _erfi_slope}, "The imaginary error function ``-i erf(i x)``.")
erfi_p.jet = ta.gaussian_slope(_erfi_slope, 1)(erfi_p)
dawsn_p, dawsn = special_function(
    "dawsn", sc.dawsn,
    {"x": lambda x, out: 1 - 2 * x * out},
    "Dawson's integral ``exp(-x**2) int_0^x exp(t**2) dt``.")
ndtr_p, ndtr = special_function(
    "ndtr", sc.ndtr,
    {"x": lambda x: ew.exp_p(-0.5 * ew.square_p(x) - _LOG_SQRT_2PI)},
    "The standard normal cumulative distribution function.")
ndtri_p, ndtri = special_function(
    "ndtri", sc.ndtri,
    {"y": lambda out: ew.exp_p(0.5 * ew.square_p(out) + _LOG_SQRT_2PI)},
    "The inverse of ``ndtr`` (the standard normal quantile).")


def _log_ndtr_slope(x, out):
    """pdf / cdf. Below 0 as sqrt(2/pi) / erfcx(-x/sqrt 2) (the Gaussian factors cancel
    exactly), accurate however far in the tail pdf and cdf both underflow (about -x there);
    above 0 as exp(log pdf - log cdf)."""
    lower = ew.less_p(x, 0)
    negative = ew.where_p(lower, x, -1.0)
    return ew.where_p(lower, math.sqrt(2 / math.pi) / erfcx_p(negative * -math.sqrt(0.5)),
                    ew.exp_p(-0.5 * ew.square_p(x) - _LOG_SQRT_2PI - out))


log_ndtr_p, log_ndtr = special_function(
    "log_ndtr", sc.log_ndtr,
    {"x": lambda x, out: _log_ndtr_slope(x, out)},
    "``log(ndtr(x))``, accurate far in both tails; so is its "
    "derivative (about ``-x`` for x << 0).")


def _ndtri_exp_slope(y, out):
    """d/dy ndtri(exp(y)) = cdf / pdf at x = out, the reciprocal of log_ndtr's slope. Below 0
    as sqrt(pi/2) erfcx(-x/sqrt 2): no cancellation between y and x**2/2 far in the tail, and
    the limit 0 at y = -inf; above 0 as exp(y + x**2/2) sqrt(2 pi) (+inf at y = 0)."""
    lower, pole = ew.less_p(out, 0), ew.equal_p(y, 0)
    tail = ew.where_p(lower, out, -1.0)
    upper = ew.logical_not_p(ew.logical_or_p(lower, pole))
    x_upper, y_upper = ew.where_p(upper, out, 0.0), ew.where_p(upper, y, -1.0)
    # At y = 0 (x = +inf) the pole: 1 / (0 - y), +inf with +inf derivatives (its singular
    # part up to a logarithm), not the overflow of exp(x**2/2).
    return ew.where_p(lower, math.sqrt(math.pi / 2) * erfcx_p(tail * -math.sqrt(0.5)),
                    ew.where_p(pole, 1 / (0.0 - y),
                             ew.exp_p(y_upper + 0.5 * ew.square_p(x_upper) + _LOG_SQRT_2PI)))


ndtri_exp_p, ndtri_exp = special_function(
    "ndtri_exp", sc.ndtri_exp,
    {"y": lambda y, out: _ndtri_exp_slope(y, out)},
    "The inverse of ``log_ndtr``: ``ndtri(exp(y))``.")


def _owens_t_h(h, a):
    # dT/dh = -phi(h) erf(a h / sqrt 2) / 2
    return (-0.5 * ew.exp_p(-0.5 * ew.square_p(h) - _LOG_SQRT_2PI)
            * erf_p(a * h * (1 / math.sqrt(2))))


def _owens_t_a(h, a):
    # dT/da = exp(-h^2 (1 + a^2) / 2) / (2 pi (1 + a^2))
    q = 1 + ew.square_p(a)
    return ew.exp_p(-0.5 * ew.square_p(h) * q) / (2 * math.pi * q)


owens_t_p, owens_t = special_function(
    "owens_t", sc.owens_t,
    {"h": _owens_t_h, "a": _owens_t_a},
    "Owen's T function ``T(h, a)``, differentiable in both.")


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


fresnel_p = on_first_call(
    Primitive("fresnel", None, _fresnel_jvp, (_fresnel_vjp,),
              lambda axis_size, values, batch_axes: (fresnel_p(values[0]), (0, 0)),
              multiple_results=True, vjp_ignores=("out",)),
    sc.fresnel, _typed)
fresnel_p.sparsity = sr.per_output(sr.elementwise_sparsity())   # each output elementwise
fresnel = public(fresnel_p, ("z",), "The Fresnel integrals: the tuple ``(S(z), C(z))``.")
