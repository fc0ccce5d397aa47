"""Functions defined by second-order differential equations, whose derivative rules close
on the functions themselves: the Kelvin functions ``ber``, ``bei``, ``ker``, ``kei`` and
their derivatives ``berp``, ``beip``, ``kerp``, ``keip``; the parabolic cylinder functions
``pbdv``, ``pbvv``, ``pbwa``; the Mathieu functions ``mathieu_cem``, ``mathieu_sem``; the
Jacobi elliptic functions ``ellipj``.

- Kelvin (DLMF 10.61): ``ber + i bei = J0(x e^(3 pi i / 4))`` solves
  ``w'' + w'/x - i w = 0``, so ``ber'' = -bei - ber'/x`` and ``bei'' = ber - bei'/x``, and
  the same for ``ker``, ``kei``.
- parabolic cylinder (DLMF 12.2): ``pbdv(v, x)`` and ``pbvv(v, x)`` return ``(D, D')`` with
  ``D'' = (x^2/4 - v - 1/2) D``; ``pbwa(a, x)`` returns ``(W, W')`` with
  ``W'' = (a - x^2/4) W``.
- Mathieu (DLMF 28.2): ``mathieu_cem(m, q, x)`` returns ``(ce_m, ce_m')`` with ``x`` in
  degrees, and ``ce'' = -(a - 2 q cos 2x) ce`` (``a = mathieu_a(m, q)``; ``mathieu_sem``
  with ``mathieu_b``); the slopes carry the factor pi/180 of the degrees.
- Jacobi elliptic (DLMF 22.13): ``ellipj(u, m) = (sn, cn, dn, ph)`` with ``sn' = cn dn``,
  ``cn' = -sn dn``, ``dn' = -m sn cn``, ``ph' = dn``, in ``u``.

The orders and parameters (``v``, ``a``, ``m``, ``q`` of these functions, ``m`` of
``ellipj``) are held fixed: differentiating with respect to one raises an error naming
the function.

Conventions at special points (the same in both engines)
--------------------------------------------------------
=====================  =====================================================================
function               convention
=====================  =====================================================================
berp, beip             for |x| < 1 ``berp(x)/x`` and ``beip(x)/x`` by their power series, so
                       every derivative at 0 is exact (``beip'(0) = 1/2``)
ker, kerp (x == 0)     the one-sided limits: ``ker'(0) = -inf``, ``kerp'(0) = +inf``
keip (x == 0)          ``keip'(0) = +inf`` (the limit; the rule is inf - inf there)
=====================  =====================================================================
"""

import math

import numpy as np

from . import elementwise as ew
from .families import no_derivative, nondiff_elementwise
from .special_helpers import multiple_outputs, on_first_call, sc, special_function

__all__ = [
    "ber", "bei", "berp", "beip", "ker", "kei", "kerp", "keip", "pbdv", "pbvv", "pbwa",
    "mathieu_cem", "mathieu_sem", "ellipj",
]

# --- Kelvin functions ------------------------------------------------------------------------

_SERIES = 1.0
# berp(x)/x = sum_k>=1 (-1)^k k (x/2)^(4k-2) / (2k)!^2, in powers of x;
# beip(x)/x = sum_k>=0 (-1)^k (2k+1)/2 (x/2)^(4k) / (2k+1)!^2.
_BERP_RATIO = [0.0] * 31
_BEIP_RATIO = [0.0] * 31
for _k in range(1, 8):
    _BERP_RATIO[4 * _k - 2] = (-1) ** _k * _k / math.factorial(2 * _k) ** 2 / 2 ** (4 * _k - 2)
for _k in range(8):
    _BEIP_RATIO[4 * _k] = (-1) ** _k * (2 * _k + 1) / 2 / math.factorial(2 * _k + 1) ** 2 \
        / 2 ** (4 * _k)


def _series_ratio(x, coefficients, direct):
    """``direct(x)`` (a ratio ``f(x)/x``) for |x| >= 1, its power series below."""
    small = ew.less_p(ew.abs_p(x), _SERIES)
    near = ew.where_p(small, x, 0.0)
    far = ew.where_p(small, 2 * _SERIES, x)
    series = 0.0
    for c in reversed(coefficients):
        series = series * near + c
    return ew.where_p(small, series, direct(far))


def _kelvin(name, fn, slope, doc):
    return special_function(name, fn, {"x": slope}, doc)


ber_p, ber = _kelvin("ber", sc.ber, lambda x: berp_p(x), "The Kelvin function ber(x).")
bei_p, bei = _kelvin("bei", sc.bei, lambda x: beip_p(x), "The Kelvin function bei(x).")
ker_p, ker = _kelvin("ker", sc.ker, lambda x: kerp_p(x), "The Kelvin function ker(x).")
kei_p, kei = _kelvin("kei", sc.kei, lambda x: keip_p(x), "The Kelvin function kei(x).")
berp_p, berp = _kelvin(
    "berp", sc.berp,
    lambda x: -bei_p(x) - _series_ratio(x, _BERP_RATIO, lambda s: berp_p(s) / s),
    "The derivative of the Kelvin function ber.")
beip_p, beip = _kelvin(
    "beip", sc.beip,
    lambda x: ber_p(x) - _series_ratio(x, _BEIP_RATIO, lambda s: beip_p(s) / s),
    "The derivative of the Kelvin function bei.")
kerp_p, kerp = _kelvin(
    "kerp", sc.kerp, lambda x, out: -kei_p(x) - out / x,
    "The derivative of the Kelvin function ker.")


def _keip_slope(x, out):
    zero = ew.equal_p(x, 0)
    safe = ew.where_p(zero, 1.0, x)
    return ew.where_p(zero, np.inf, ker_p(safe) - ew.where_p(zero, 0.0, out) / safe)


keip_p, keip = _kelvin("keip", sc.keip, _keip_slope,
                       "The derivative of the Kelvin function kei.")

# --- parabolic cylinder functions ------------------------------------------------------------

_PARABOLIC = no_derivative(
    "the parabolic cylinder functions of scipy.special have no closed-form derivative in "
    "their order")



def _weber_slopes(value_and_slope, coefficient):
    """``(y', y'') = (y', coefficient y)`` from ``(y, y')``."""
    y, yp = value_and_slope
    return yp, coefficient * y


pbdv_p, pbdv = multiple_outputs(
    "pbdv", sc.pbdv,
    lambda v, x: _weber_slopes(pbdv_p(v, x), 0.25 * ew.square_p(x) - v - 0.5),
    "The parabolic cylinder function D_v(x) and its derivative ``(d, dp)``; "
    "differentiable in ``x`` (``v`` held fixed).", argnames=("v", "x"), fixed=_PARABOLIC)
pbvv_p, pbvv = multiple_outputs(
    "pbvv", sc.pbvv,
    lambda v, x: _weber_slopes(pbvv_p(v, x), 0.25 * ew.square_p(x) - v - 0.5),
    "The parabolic cylinder function V_v(x) and its derivative ``(v, vp)``; "
    "differentiable in ``x`` (``v`` held fixed).", argnames=("v", "x"), fixed=_PARABOLIC)
pbwa_p, pbwa = multiple_outputs(
    "pbwa", sc.pbwa,
    lambda a, x: _weber_slopes(pbwa_p(a, x), a - 0.25 * ew.square_p(x)),
    "The parabolic cylinder function W(a, x) and its derivative ``(w, wp)``; "
    "differentiable in ``x`` (``a`` held fixed).", argnames=("a", "x"), fixed=_PARABOLIC)

# --- Mathieu functions -----------------------------------------------------------------------

# The characteristic values enter the rules with m and q held fixed (no derivative is
# taken through them).
_mathieu_a_p = on_first_call(nondiff_elementwise("mathieu_characteristic_a", None),
                             sc.mathieu_a)
_mathieu_b_p = on_first_call(nondiff_elementwise("mathieu_characteristic_b", None),
                             sc.mathieu_b)
_DEGREE = math.pi / 180
_MATHIEU = no_derivative(
    "scipy.special's Mathieu functions have no closed-form derivative in m or q")


def _mathieu_slopes(prim, characteristic):
    def slopes(m, q, x):
        y, yp = prim(m, q, x)
        curvature = characteristic(m, q) - 2 * q * ew.cos_p((2 * _DEGREE) * x)
        return _DEGREE * yp, -_DEGREE * curvature * y
    return slopes


mathieu_cem_p, mathieu_cem = multiple_outputs(
    "mathieu_cem", sc.mathieu_cem,
    lambda m, q, x: _mathieu_slopes(mathieu_cem_p, _mathieu_a_p)(m, q, x),
    "The even Mathieu function ce_m(x, q) and its derivative ``(y, yp)`` (x in degrees); "
    "differentiable in ``x`` (``m``, ``q`` held fixed).", argnames=("m", "q", "x"),
    fixed=_MATHIEU)
mathieu_sem_p, mathieu_sem = multiple_outputs(
    "mathieu_sem", sc.mathieu_sem,
    lambda m, q, x: _mathieu_slopes(mathieu_sem_p, _mathieu_b_p)(m, q, x),
    "The odd Mathieu function se_m(x, q) and its derivative ``(y, yp)`` (x in degrees); "
    "differentiable in ``x`` (``m``, ``q`` held fixed).", argnames=("m", "q", "x"),
    fixed=_MATHIEU)

# --- Jacobi elliptic functions ---------------------------------------------------------------


def _ellipj_slopes(u, m):
    sn, cn, dn, _ = ellipj_p(u, m)
    return cn * dn, -(sn * dn), -(m * sn * cn), dn


ellipj_p, ellipj = multiple_outputs(
    "ellipj", sc.ellipj, _ellipj_slopes,
    "The Jacobi elliptic functions ``(sn, cn, dn, ph)`` of ``u``; differentiable in ``u`` "
    "(``m`` held fixed).", argnames=("u", "m"),
    fixed=no_derivative("diffkit gives scipy.special.ellipj's derivatives in u only"),
    wrt=0, orders=())
