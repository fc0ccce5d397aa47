"""Airy and Struve functions and the integrals of Bessel and Struve functions as
primitives: ``airy``, ``airye``, ``itairy``, ``struve``, ``modstruve``, ``itstruve0``,
``it2struve0``, ``itmodstruve0``, ``iti0k0``, ``it2i0k0``, ``itj0y0``, ``it2j0y0``.

Derivatives (DLMF 9.2, 11.4, 10.22 and 6.2's fundamental theorem for the integrals):

- ``airy`` returns ``(Ai, Ai', Bi, Bi')``; Airy's equation closes the rules on the outputs
  themselves: ``Ai'' = x Ai``, ``Bi'' = x Bi``.
- ``airye`` scales them by ``exp(zeta)`` (``Ai``, ``Ai'``) and ``exp(-zeta)`` (``Bi``,
  ``Bi'``), ``zeta = 2/3 x^(3/2)`` for ``x >= 0``; for ``x < 0`` SciPy's ``eAi`` and ``eAi'``
  are nan and ``eBi``, ``eBi'`` are unscaled. So ``d eAi = eAi' + sqrt(x) eAi`` and
  ``d eBi = eBi' - sqrt(x) eBi`` with ``sqrt(max(x, 0))``.
- ``struve``: ``H_v' = (H_{v-1} - H_{v+1}) / 2 + (x/2)^v / (2 sqrt(pi) Gamma(v + 3/2))``
  (DLMF 11.4.24); ``modstruve``: ``L_v' = (L_{v-1} + L_{v+1}) / 2`` plus the same term
  (DLMF 11.4.28). Their order ``v`` has no closed-form derivative: it is held fixed.
- the integrals: the integrand at ``x`` (``itairy``: ``Ai(x), Bi(x), Ai(-x), Bi(-x)``;
  ``iti0k0``: ``I0, K0``; ``itj0y0``: ``J0, Y0``; ``itstruve0``: ``H0``; ``itmodstruve0``:
  ``L0``), or minus it for the integrals from ``x`` to infinity (``it2i0k0``'s second,
  ``-K0(x)/x``; ``it2j0y0``'s second, ``-Y0(x)/x``; ``it2struve0``, ``-H0(x)/x``).

Conventions at special points (the same in both engines)
--------------------------------------------------------
=====================  =====================================================================
function               convention
=====================  =====================================================================
it2i0k0, it2j0y0       first output's slope ``(I0 - 1)/x``, ``(1 - J0)/x``: its Taylor
                       series near 0, so 0 at x == 0 and every higher derivative exact there
it2struve0             slope ``-H0(x)/x``: its Taylor series near 0 (``-2/pi`` at 0)
it2i0k0, it2j0y0       second output's slope at x == 0: ``-K0/x = -inf``, ``-Y0/x = +inf``
iti0k0, itj0y0         second output's slope at x == 0: ``K0(0) = +inf``, ``Y0(0) = -inf``
airye                  at x == 0 the second derivative meets ``d sqrt(x)``: infinite
struve, modstruve      for |x| < 1 the derivative's power series (the recurrences would meet
                       inf - inf at 0 through negative orders): H_0'(0) = L_0'(0) = 2/pi,
                       H_v'(0) = 0 for v > 0, +inf for -1 < v < 0
struve, modstruve      x < 0 with a non-integer order: nan (SciPy's value is nan)
=====================  =====================================================================
"""

import math

from ..core.zeros import dtype_of
from . import elementwise as ew
from .families import no_derivative
from .special_bessel import i0_p, j0_p, k0_p, y0_p
from .special_gamma import rgamma_p
from .special_helpers import _poly, _series_where, multiple_outputs, sc, special_function

__all__ = [
    "airy", "airye", "itairy", "struve", "modstruve", "itstruve0", "it2struve0",
    "itmodstruve0", "iti0k0", "it2i0k0", "itj0y0", "it2j0y0",
]

_SQRT_PI = math.sqrt(math.pi)

# --- Airy functions ----------------------------------------------------------------------


def _airy_slopes(x):
    ai, aip, bi, bip = airy_p(x)
    return aip, x * ai, bip, x * bi


def _airye_slopes(x):
    eai, eaip, ebi, ebip = airye_p(x)
    r = ew.sqrt_p(ew.maximum_p(x, 0.0))
    return eaip + r * eai, x * eai + r * eaip, ebip - r * ebi, x * ebi - r * ebip


def _itairy_slopes(x):
    ai, _, bi, _ = airy_p(x)
    ai_neg, _, bi_neg, _ = airy_p(-x)
    return ai, bi, ai_neg, bi_neg


airy_p, airy = multiple_outputs(
    "airy", sc.airy, _airy_slopes,
    "The Airy functions and their derivatives: the tuple ``(Ai, Ai', Bi, Bi')`` (real x); "
    "``Ai'' = x Ai``, ``Bi'' = x Bi``.", argnames=("z",))
airye_p, airye = multiple_outputs(
    "airye", sc.airye, _airye_slopes,
    "The exponentially scaled Airy functions ``(eAi, eAi', eBi, eBi')`` (real x).",
    argnames=("z",))
itairy_p, itairy = multiple_outputs(
    "itairy", sc.itairy, _itairy_slopes,
    "The integrals of the Airy functions from 0 to x: ``(int Ai(t), int Bi(t), "
    "int Ai(-t), int Bi(-t))``.")

# --- Struve functions --------------------------------------------------------------------

_STRUVE_ORDER = no_derivative(
    "scipy.special.struve and modstruve have no closed-form derivative in the order v")


def _struve_term(v, x):
    """``(x/2)^v / (2 sqrt(pi) Gamma(v + 3/2))``, the term the recurrences add."""
    return ew.power(0.5 * x, v) * rgamma_p(v + 1.5) * (0.5 / _SQRT_PI)


_STRUVE_SERIES = 1.0   # |x| below which the derivative's power series is used
_STRUVE_TERMS = 14


def _struve_series_slope(v, x, sign):
    """The derivative of H_v (sign -1) or L_v (sign +1) by its power series,
    ``sum_k sign^k (2k + v + 1)/2 (x/2)^(2k+v) / (Gamma(k + 3/2) Gamma(k + v + 3/2))``:
    near 0 the recurrences reach negative orders, whose terms cancel as inf - inf."""
    half = 0.5 * x
    total = 0.0
    for k in range(_STRUVE_TERMS):
        coefficient = sign ** k / math.gamma(k + 1.5)
        total = total + (coefficient * 0.5) * (2 * k + 1 + v) * rgamma_p(v + (k + 1.5)) \
            * ew.power(half, v + 2 * k)
    return total


def _struve_slope(v, x, sign, neighbours):
    v = ew.astype(v, dtype_of(x))   # an integer order must not make a float32 slope float64
    small = ew.less_p(ew.abs_p(x), _STRUVE_SERIES)
    # each branch at a point where it is finite: the other's entries are dropped, and a
    # power of 0 there would only put inf and NaN (and NumPy's warnings) into the derivatives
    far = ew.where_p(small, 2 * _STRUVE_SERIES, x)
    near = ew.where_p(small, x, 0.5 * _STRUVE_SERIES)
    return ew.where_p(small, _struve_series_slope(v, near, sign),
                      neighbours(v, far) + _struve_term(v, far))


struve_p, struve = special_function(
    "struve", sc.struve,
    {"v": _STRUVE_ORDER,
     "x": lambda v, x: _struve_slope(
         v, x, -1, lambda v, s: 0.5 * (struve_p(v - 1, s) - struve_p(v + 1, s)))},
    "The Struve function H_v(x). Differentiable in ``x``; the order ``v`` is held fixed.",
    orders=(0,))
modstruve_p, modstruve = special_function(
    "modstruve", sc.modstruve,
    {"v": _STRUVE_ORDER,
     "x": lambda v, x: _struve_slope(
         v, x, 1, lambda v, s: 0.5 * (modstruve_p(v - 1, s) + modstruve_p(v + 1, s)))},
    "The modified Struve function L_v(x). Differentiable in ``x``; the order ``v`` is "
    "held fixed.", orders=(0,))

# --- integrals of Bessel and Struve functions --------------------------------------------

_SERIES = 0.1
# (I0(x) - 1)/x = sum_k>=1 x^(2k-1) / (4^k k!^2); (1 - J0(x))/x the same with (-1)^(k+1).
_I0_RATIO = [0.0] * 12
_J0_RATIO = [0.0] * 12
for _k in range(1, 6):
    _I0_RATIO[2 * _k - 1] = 1 / (4 ** _k * math.factorial(_k) ** 2)
    _J0_RATIO[2 * _k - 1] = (-1) ** (_k + 1) / (4 ** _k * math.factorial(_k) ** 2)
# H0(x)/x = sum_k (-1)^k x^(2k) / (2^(2k+1) Gamma(k + 3/2)^2).
_H0_RATIO = [0.0] * 12
for _k in range(6):
    _H0_RATIO[2 * _k] = (-1) ** _k / (2 ** (2 * _k + 1) * math.gamma(_k + 1.5) ** 2)


def _ratio(x, coefficients, direct):
    return _series_where(x, _SERIES, lambda u: _poly(u, coefficients), direct)


def _it2i0k0_slopes(x):
    return (_ratio(x, _I0_RATIO, lambda s: (i0_p(s) - 1) / s), -(k0_p(x) / x))


def _it2j0y0_slopes(x):
    return (_ratio(x, _J0_RATIO, lambda s: (1 - j0_p(s)) / s), -(y0_p(x) / x))


iti0k0_p, iti0k0 = multiple_outputs(
    "iti0k0", sc.iti0k0, lambda x: (i0_p(x), k0_p(x)),
    "The integrals of I0 and K0 from 0 to x: ``(int I0(t), int K0(t))``.")
itj0y0_p, itj0y0 = multiple_outputs(
    "itj0y0", sc.itj0y0, lambda x: (j0_p(x), y0_p(x)),
    "The integrals of J0 and Y0 from 0 to x: ``(int J0(t), int Y0(t))``.")
it2i0k0_p, it2i0k0 = multiple_outputs(
    "it2i0k0", sc.it2i0k0, _it2i0k0_slopes,
    "``(int_0^x (I0(t) - 1)/t dt, int_x^inf K0(t)/t dt)``.")
it2j0y0_p, it2j0y0 = multiple_outputs(
    "it2j0y0", sc.it2j0y0, _it2j0y0_slopes,
    "``(int_0^x (1 - J0(t))/t dt, int_x^inf Y0(t)/t dt)``.")
itstruve0_p, itstruve0 = special_function(
    "itstruve0", sc.itstruve0,
    {"x": lambda x: struve_p(0.0, x)},
    "The integral of the Struve function H0 from 0 to x.")
it2struve0_p, it2struve0 = special_function(
    "it2struve0", sc.it2struve0,
    {"x": lambda x: -_ratio(x, _H0_RATIO, lambda s: struve_p(0.0, s) / s)},
    "``int_x^inf H0(t)/t dt``.")
itmodstruve0_p, itmodstruve0 = special_function(
    "itmodstruve0", sc.itmodstruve0,
    {"x": lambda x: modstruve_p(0.0, x)},
    "The integral of the modified Struve function L0 from 0 to x.")
