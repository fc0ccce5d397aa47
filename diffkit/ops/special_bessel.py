"""Bessel functions as primitives: ``jv`` (``jn``), ``yv`` (``yn``), ``iv``, ``ive``,
``kv`` (``kn``), ``kve`` and the fixed orders ``j0``, ``j1``, ``y0``, ``y1``, ``i0``,
``i0e``, ``i1``, ``i1e``, ``k0``, ``k0e``, ``k1``, ``k1e``.

Differentiable in ``x``; the order ``v`` has no derivative (it is held fixed) and does not
change the result's dtype.

Conventions at special points (the same in both engines)
--------------------------------------------------------
=====================  =====================================================================
function               convention
=====================  =====================================================================
Bessel y, k (and j, i  at x == 0 where the value is infinite: -value (the one-sided limit),
of negative order)     with alternating infinite higher derivatives
=====================  =====================================================================
"""

import math

from . import elementwise as ew
from .families import no_derivative
from .special_helpers import public, sc, special_function

__all__ = [
    "i0", "i0e", "i1", "i1e", "iv", "ive", "j0", "j1", "jv", "jn", "y0", "y1", "yv", "yn",
    "k0", "k0e", "k1", "k1e", "kv", "kve", "kn", "jve", "yve", "jvp", "yvp", "ivp", "kvp",
]

# --- Bessel functions -------------------------------------------------------------------------
# Derivatives in x by the recurrences: J'_v = (J_{v-1} - J_{v+1}) / 2, Y likewise,
# I'_v = (I_{v-1} + I_{v+1}) / 2, K'_v = -(K_{v-1} + K_{v+1}) / 2; the exponentially scaled
# ones (ive = iv e^-|x|, kve = kv e^x) add the derivative of their scale factor.

_BESSEL_ORDER = no_derivative("the order of a Bessel function is held fixed")


def _at_pole(x, out, slope):
    """``slope(x, out)`` away from the pole at x == 0 (of Y_v, K_v and their scaled forms,
    and of J_v, I_v of negative non-integer order); there, where the value is infinite,
    ``-out``. The one-sided limit of the derivative of c x^p (p < 0) or of c log x is
    infinite with the sign opposite to the value's, and the derivatives of ``-out`` keep
    alternating in sign as those of the singular part do (Y_0''(0+) = -inf). The recurrences
    would give inf - inf there."""
    pole = ew.logical_and_p(ew.equal_p(x, 0), ew.isinf_p(out))
    return ew.where_p(pole, -out, slope(ew.where_p(pole, 1.0, x), ew.where_p(pole, 0.0, out)))


_ORDER_DOC = " Differentiable in ``x``; the order ``v`` is held fixed."
_INTEGER_ORDER_DOC = _ORDER_DOC.replace("``v``", "``n``")


def _bessel(name, fn, combine, doc):
    return special_function(
        name, fn,
        {"v": _BESSEL_ORDER,
         "x": lambda v, x, out: _at_pole(x, out, lambda s, o: combine(v, s, o))},
        doc + _ORDER_DOC, orders=(0,))


jv_p, jv = _bessel("jv", sc.jv, lambda v, x, out: 0.5 * (jv_p(v - 1, x) - jv_p(v + 1, x)),
                   "Bessel function of the first kind of real order.")
yv_p, yv = _bessel("yv", sc.yv, lambda v, x, out: 0.5 * (yv_p(v - 1, x) - yv_p(v + 1, x)),
                   "Bessel function of the second kind of real order.")
iv_p, iv = _bessel("iv", sc.iv, lambda v, x, out: 0.5 * (iv_p(v - 1, x) + iv_p(v + 1, x)),
                   "Modified Bessel function of the first kind.")
kv_p, kv = _bessel("kv", sc.kv, lambda v, x, out: -0.5 * (kv_p(v - 1, x) + kv_p(v + 1, x)),
                   "Modified Bessel function of the second kind.")
ive_p, ive = _bessel("ive", sc.ive, lambda v, x, out: 0.5 * (ive_p(v - 1, x) + ive_p(v + 1, x))
                     - ew.sign(x) * out, "``iv(v, x) * exp(-abs(x))``.")
kve_p, kve = _bessel("kve", sc.kve, lambda v, x, out: out - 0.5 * (kve_p(v - 1, x)
                                                                   + kve_p(v + 1, x)),
                     "``kv(v, x) * exp(x)``.")
# For real x, exp(-|Im x|) = 1: jve and yve are jv and yv, with their recurrences.
jve_p, jve = _bessel("jve", sc.jve, lambda v, x, out: 0.5 * (jve_p(v - 1, x) - jve_p(v + 1, x)),
                     "``jv(v, x) * exp(-abs(x.imag))`` (real x: ``jv``).")
yve_p, yve = _bessel("yve", sc.yve, lambda v, x, out: 0.5 * (yve_p(v - 1, x) - yve_p(v + 1, x)),
                     "``yv(v, x) * exp(-abs(x.imag))`` (real x: ``yv``).")
# the integer orders: the same primitives, with SciPy's name n for the order
jn = public(jv_p, ("n", "x"), "Bessel function of the first kind of integer order (``jv``)."
            + _INTEGER_ORDER_DOC, orders=(0,), name="jn")
yn = public(yv_p, ("n", "x"), "Bessel function of the second kind of integer order (``yv``)."
            + _INTEGER_ORDER_DOC, orders=(0,), name="yn")
kn = public(kv_p, ("n", "x"), "Modified Bessel function of the second kind of integer order "
            "(``kv``)." + _INTEGER_ORDER_DOC, orders=(0,), name="kn")

j0_p, j0 = special_function(
    "j0", sc.j0,
    {"x": lambda x: -j1_p(x)},
    "Bessel function of the first kind of order 0.")
j1_p, j1 = special_function(
    "j1", sc.j1,
    {"x": lambda x: 0.5 * (j0_p(x) - jv_p(2, x))},
    "Bessel function of the first kind of order 1.")
y0_p, y0 = special_function(
    "y0", sc.y0,
    {"x": lambda x: -y1_p(x)},
    "Bessel function of the second kind of order 0.")
y1_p, y1 = special_function(
    "y1", sc.y1,
    {"x": lambda x, out: _at_pole(x, out, lambda s, o: 0.5 * (y0_p(s) - yv_p(2, s)))},
    "Bessel function of the second kind of order 1.")
i0_p, i0 = special_function(
    "i0", sc.i0,
    {"x": lambda x: i1_p(x)},
    "Modified Bessel function of the first kind of order 0.")
i1_p, i1 = special_function(
    "i1", sc.i1,
    {"x": lambda x: 0.5 * (i0_p(x) + iv_p(2, x))},
    "Modified Bessel function of the first kind of order 1.")
i0e_p, i0e = special_function(
    "i0e", sc.i0e,
    {"x": lambda x, out: i1e_p(x) - ew.sign(x) * out},
    "``i0(x) * exp(-abs(x))``.")
i1e_p, i1e = special_function(
    "i1e", sc.i1e,
    {"x": lambda x, out: 0.5 * (i0e_p(x) + ive_p(2, x)) - ew.sign(x) * out},
    "``i1(x) * exp(-abs(x))``.")
k0_p, k0 = special_function(
    "k0", sc.k0,
    {"x": lambda x: -k1_p(x)},
    "Modified Bessel function of the second kind of order 0.")
k1_p, k1 = special_function(
    "k1", sc.k1,
    {"x": lambda x: -0.5 * (k0_p(x) + kv_p(2, x))},
    "Modified Bessel function of the second kind of order 1.")
k0e_p, k0e = special_function(
    "k0e", sc.k0e,
    {"x": lambda x, out: _at_pole(x, out, lambda s, o: o - k1e_p(s))},
    "``k0(x) * exp(x)``.")
k1e_p, k1e = special_function(
    "k1e", sc.k1e,
    {"x": lambda x, out: _at_pole(x, out,
                                  lambda s, o: o - 0.5 * (k0e_p(s) + kve_p(2, s)))},
    "``k1(x) * exp(x)``.")


# --- derivatives of Bessel functions: sums of shifted orders (DLMF 10.6.7, 10.29.5) ----------


def _order_sum(fn, v, z, n, sign):
    """``2^-n sum_k sign^k binom(n, k) fn(v - n + 2k, z)``: the n-th derivative of a Bessel
    function, as SciPy computes it; built from diffkit's primitives, it differentiates and
    batches again."""
    n = int(n)
    if n < 0:
        raise ValueError(f"n must be a non-negative integer, got {n}")
    if n == 0:
        return fn(v, z)
    total = 0.0
    for k in range(n + 1):
        total = total + (sign ** k * math.comb(n, k) / 2 ** n) * fn(v - n + 2 * k, z)
    return total


def jvp(v, z, n=1):
    """The n-th derivative of ``jv(v, z)`` in ``z``, differentiable in ``z``."""
    return _order_sum(jv, v, z, n, -1)


def yvp(v, z, n=1):
    """The n-th derivative of ``yv(v, z)`` in ``z``, differentiable in ``z``."""
    return _order_sum(yv, v, z, n, -1)


def ivp(v, z, n=1):
    """The n-th derivative of ``iv(v, z)`` in ``z``, differentiable in ``z``."""
    return _order_sum(iv, v, z, n, 1)


def kvp(v, z, n=1):
    """The n-th derivative of ``kv(v, z)`` in ``z``, differentiable in ``z``."""
    return (-1) ** int(n) * _order_sum(kv, v, z, n, 1)
