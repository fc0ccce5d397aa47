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


import scipy.special as sc

from . import elementwise as ew
from .special_helpers import _Fixed, _public, _ufunc

__all__ = [
    "i0", "i0e", "i1", "i1e", "iv", "ive", "j0", "j1", "jv", "jn", "y0", "y1", "yv", "yn",
    "k0", "k0e", "k1", "k1e", "kv", "kve", "kn",
]

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
