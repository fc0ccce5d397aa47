"""Exponential, trigonometric and elliptic integrals and other functions as
primitives: ``expn``, ``exp1``, ``expi``, ``exprel``, ``sici``, ``shichi``, ``spence``,
``ellipk``, ``ellipkm1``, ``ellipe``, ``ellipkinc``, ``ellipeinc``, ``lambertw``,
``wrightomega``, the Box-Cox transforms
(``boxcox``, ``boxcox1p``, ``inv_boxcox``, ``inv_boxcox1p``), ``cosm1``, ``exp10``, and
NumPy's ``log1p`` and ``expm1`` under their SciPy names.

The integer order ``n`` of ``expn`` has no derivative.

Conventions at special points (the same in both engines)
--------------------------------------------------------
=====================  =====================================================================
function               convention
=====================  =====================================================================
spence                 at 0: -inf, and spence''(0) = +inf (one-sided limits)
exprel, boxcox,        at 0 (u = lmbda log x, lmbda y, z - 1) a Taylor series replaces the
inv_boxcox, spence     0/0 formula, so derivatives of every order are exact there
ellipk, ellipe,        near m == 0 the derivatives' series (exact at every order there);
ellipkm1               ellipk'(1) = +inf, ellipkm1'(0) = -inf (one-sided limits)
ellipkinc, ellipeinc   near m == 0 the m-derivatives' series (exact at every order there); at
                       m == 1 dF/dm by its Taylor polynomial of degree 1 in m - 1 (the closed
                       form is 0/0 there): exact to second order; for m > 1 SciPy's value is
                       NaN (the real continuation is not computed), and so are both partials
lambertw'              +inf (k = 0) and -inf (k = -1) at the float nearest -1/e (where SciPy's
                       value is nan); -inf on k = -1 at z = 0 (W = -inf)
exprel                 derivatives of every order as one primitive; +inf where e^x overflows
sici, shichi           Si'(0) = Shi'(0) = 1 (the limit); Ci'(0) = Chi'(0) = +inf
lambertw               every branch k, complex128 as SciPy (real input too)
=====================  =====================================================================
"""

import math

import numpy as np
import scipy  # scipy.special on first use (special_helpers)

from ..core.primitive import Primitive
from ..core.zeros import Zero
from . import elementwise as ew
from . import sparsity_rules as sr
from . import ufuncs
from .families import real_cotangent, times, zero_safe
from .special_helpers import (
    INTEGER_ORDER,
    _poly,
    _series_where,
    _typed,
    _weak,
    on_first_call,
    public,
    sc,
    special_function,
)

__all__ = [
    "expn", "exp1", "expi", "exprel", "spence", "ellipk", "ellipkm1", "ellipe", "lambertw",
    "ellipkinc", "ellipeinc", "wrightomega", "boxcox", "boxcox1p", "inv_boxcox",
    "inv_boxcox1p", "sici", "shichi",
    "cosm1", "exp10", "log1p", "expm1", "cbrt", "exp2", "radian", "powm1", "agm",
]

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
exprel_derivative_p.sparsity = sr.elementwise_sparsity()
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
                         lambda w: ew.log1p_p(w) / w)


def _log1p_ratio_slope(v):
    return _series_where(v, 0.01, lambda w: _poly(w, _LOG1P_RATIO_SLOPE),
                         lambda w: (w / (1 + w) - ew.log1p_p(w)) / ew.square_p(w))


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
    zero = ew.equal_p(x, 0)
    safe = ew.where_p(zero, 1.0, x)
    return ew.where_p(zero, limit_at_0, f(safe) / safe)


def _sici_derivatives(x):  # Ci' = cos(x) / x: +inf at 0, where Ci has its log singularity
    return _sinc_like(x, ew.sin, 1.0), _sinc_like(x, ew.cos, np.inf)


def _shichi_derivatives(x):
    return _sinc_like(x, ew.sinh, 1.0), _sinc_like(x, ew.cosh, np.inf)


sici_p = on_first_call(Primitive("sici", None, vjp_ignores=("out",), multiple_results=True),
                       sc.sici, _typed)
sici_p.sparsity = sr.per_output(sr.elementwise_sparsity())   # each output elementwise
sici_p.jvp = _pair_jvp(sici_p, _sici_derivatives)
sici_p.vjp = (_pair_vjp(_sici_derivatives),)
sici_p.batch = lambda axis_size, values, batch_axes: (sici_p(values[0]), (0, 0))
shichi_p = on_first_call(
    Primitive("shichi", None, vjp_ignores=("out",), multiple_results=True), sc.shichi, _typed)
shichi_p.sparsity = sr.per_output(sr.elementwise_sparsity())
shichi_p.jvp = _pair_jvp(shichi_p, _shichi_derivatives)
shichi_p.vjp = (_pair_vjp(_shichi_derivatives),)
shichi_p.batch = lambda axis_size, values, batch_axes: (shichi_p(values[0]), (0, 0))
sici = public(sici_p, ("x",), "The sine and cosine integrals: the tuple ``(Si(x), Ci(x))``.")
shichi = public(shichi_p, ("x",),
                "The hyperbolic sine and cosine integrals ``(Shi(x), Chi(x))``.")


# --- exponential integrals, elliptic integrals and others ------------------------------------


def _expn_x(n, x, out):
    # E_n' = -E_{n-1} for n >= 1; E_0 = e^-x / x, so E_0' = -E_0 (1 + 1/x).
    previous = expn_p(ew.maximum_p(n - 1, 0), x)
    return ew.where_p(ew.greater_equal_p(n, 1), -previous, -out * (1 + 1 / x))


expn_p, expn = special_function(
    "expn", sc.expn,
    {"n": INTEGER_ORDER, "x": _expn_x},
    "The generalized exponential integral E_n(x), differentiable in "
    "``x`` (the integer ``n`` is fixed).", orders=(0,), integers=(0,))
exp1_p, exp1 = special_function(
    "exp1", sc.exp1,
    {"x": lambda x: -(ew.exp_p(-x) / x)},
    "The exponential integral E_1(x).")
expi_p, expi = special_function(
    "expi", sc.expi,
    {"x": lambda x: ew.exp_p(x) / x},
    "The exponential integral Ei(x).")
exprel_p, exprel = special_function(
    "exprel", sc.exprel,
    {"x": lambda x: _exprel_slope(x)},
    "``(exp(x) - 1) / x``, 1 at 0.")


def _spence_slope(z):
    """``spence'(z) = log(z) / (1 - z) = -log1p(w) / w`` with ``w = z - 1``. At ``z = 0`` it
    is ``log(z)`` itself, the singular part: -inf with the one-sided limits of every higher
    derivative (``spence''(0+) = +inf``), where the quotient would give inf - inf."""
    zero = ew.equal_p(z, 0)
    return ew.where_p(zero, ew.log_p(z), -_log1p_ratio(ew.where_p(zero, 0.5, z) - 1))


# spence(z) = int_1^z log t / (1 - t) dt (z >= 0).
spence_p, spence = special_function(
    "spence", sc.spence,
    {"z": lambda z: _spence_slope(z)},
    "Spence's function ``int_1^z log(t) / (1 - t) dt`` (z >= 0).")
cosm1_p, cosm1 = special_function(
    "cosm1", sc.cosm1,
    {"x": lambda x: -ew.sin_p(x)},
    "``cos(x) - 1``, accurate near 0.")
exp10_p, exp10 = special_function(
    "exp10", sc.exp10,
    {"x": lambda out: math.log(10) * out},
    "``10**x``.")


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
        one = ew.equal_p(s, 1)
        u = ew.where_p(one, 0.5, s)
        return ew.where_p(one, 0.5 / (1 - s),
                        (ellipe_p(u) - (1 - u) * ellipk_p(u)) / (2 * u * (1 - u)))
    return _series_where(m, 0.1, lambda u: _poly(u, _ELLIPK_SLOPE), direct)


def _ellipe_slope(m):
    """E'(m) = (E - K) / (2 m) (-inf at m = 1, where K is)."""
    return _series_where(m, 0.1, lambda u: _poly(u, _ELLIPE_SLOPE),
                         lambda s: (ellipe_p(s) - ellipk_p(s)) / (2 * s))


ellipk_p, ellipk = special_function(
    "ellipk", sc.ellipk,
    {"m": lambda m: _ellipk_slope(m)},
    "The complete elliptic integral of the first kind K(m).")
ellipe_p, ellipe = special_function(
    "ellipe", sc.ellipe,
    {"m": lambda m: _ellipe_slope(m)},
    "The complete elliptic integral of the second kind E(m).")


def _ellipkm1_slope(p):
    """ellipkm1(p) = K(1 - p), accurate near p = 0: derivative -K'(1 - p), computed from p
    itself (1 - p would round away small p). Near p = 1 K's series in 1 - p (exact there);
    at p = 0 the singular part -1 / (2 p), -inf with the one-sided limits of every higher
    derivative."""
    near_one = ew.less_p(ew.abs_p(1 - p), 0.1)
    zero = ew.equal_p(p, 0)
    s = ew.where_p(ew.logical_or_p(near_one, zero), 0.5, p)
    series = -_poly(1 - ew.where_p(near_one, p, 1.0), _ELLIPK_SLOPE)
    direct = (s * ellipkm1_p(s) - ellipe_p(1 - s)) / (2 * s * (1 - s))
    return ew.where_p(near_one, series, ew.where_p(zero, -0.5 / p, direct))


ellipkm1_p, ellipkm1 = special_function(
    "ellipkm1", sc.ellipkm1,
    {"p": lambda p: _ellipkm1_slope(p)},
    "``ellipk(1 - p)``, accurate near p = 0.")


# The incomplete integrals F(phi, m) = int_0^phi dt / D(t), E(phi, m) = int_0^phi D(t) dt,
# D(t) = sqrt(1 - m sin(t)^2) (DLMF 19.2.4-5): d/dphi is 1/D(phi) and D(phi); in m
# (DLMF 19.4.1-2 in m instead of k)
#   dF/dm = (E - (1 - m) F) / (2 m (1 - m)) - sin(phi) cos(phi) / (2 (1 - m) D(phi)),
#   dE/dm = (E - F) / (2 m),
# both 0/0 at m = 0: for |m| < 0.1 the series of the integrands in m, term by term,
# dF/dm = sum_n>=1 n c_n m^(n-1) S_n, dE/dm = -sum_n>=1 n c_n m^(n-1) S_n / (2n - 1), with
# c_n = binom(2n, n) / 4^n and S_n = int_0^phi sin^2n, S_n = ((2n-1) S_(n-1) - sin^(2n-1)
# cos) / (2n), S_0 = phi. At m = 1 dF/dm is 0/0 as well; there its Taylor polynomial in
# m - 1 of degree 1, from (1/2) int sin^2 / D^3 and (3/4) int sin^4 / D^5 at m = 1.
_INCOMPLETE_TERMS = 16
_BINOMIAL_C = [math.comb(2 * n, n) / 4 ** n for n in range(_INCOMPLETE_TERMS + 1)]


def _incomplete_series(phi, m, second_kind):
    s, c = ew.sin_p(phi), ew.cos_p(phi)
    s2 = ew.square_p(s)
    integral, odd_power = phi, s      # S_0, sin^(2n-1) for n = 1
    total, m_power = 0.0, 1.0
    for n in range(1, _INCOMPLETE_TERMS + 1):
        integral = ((2 * n - 1) * integral - odd_power * c) / (2 * n)
        weight = n * _BINOMIAL_C[n] / (1 - 2 * n if second_kind else 1)
        total = total + weight * m_power * integral
        odd_power, m_power = odd_power * s2, m_power * m
    return total


def _ellipkinc_at_1(phi, m):
    """dF/dm near m = 1 to first order in m - 1 (exact value and m-slope at m = 1)."""
    sec, tan = 1 / ew.cos_p(phi), ew.tan_p(phi)
    gd = ufuncs.arcsinh(tan)
    first = 0.25 * (sec * tan - gd)
    second = 0.75 * (0.25 * sec ** 3 * tan - 0.625 * sec * tan + 0.375 * gd)
    return first + second * (m - 1)


def _ellipkinc_m(phi, m):
    small = ew.less_p(ew.abs_p(m), 0.1)
    one = ew.equal_p(m, 1)
    u = ew.where_p(ew.logical_or_p(small, one), 0.5, m)
    s, c = ew.sin_p(phi), ew.cos_p(phi)
    delta = ew.sqrt_p(1 - u * ew.square_p(s))
    direct = ((ellipeinc_p(phi, u) - (1 - u) * ellipkinc_p(phi, u)) / (2 * u * (1 - u))
              - s * c / (2 * (1 - u) * delta))
    series = _incomplete_series(phi, ew.where_p(small, m, 0.0), second_kind=False)
    at_one = _ellipkinc_at_1(phi, ew.where_p(one, m, 1.0))
    return ew.where_p(small, series, ew.where_p(one, at_one, direct))


def _ellipeinc_m(phi, m):
    small = ew.less_p(ew.abs_p(m), 0.1)
    u = ew.where_p(small, 0.5, m)
    direct = (ellipeinc_p(phi, u) - ellipkinc_p(phi, u)) / (2 * u)
    return ew.where_p(small, _incomplete_series(phi, ew.where_p(small, m, 0.0), True), direct)


def _nan_where_nan(out, partial):
    """``partial``, NaN where SciPy's value ``out`` is NaN (``ellipkinc``/``ellipeinc`` for
    m > 1, where SciPy gives NaN although the integrals are real for m sin^2 phi <= 1): no
    finite derivative of a NaN value. The NaN is ``out`` itself, so its own derivatives
    are NaN too."""
    return ew.where_p(ew.isnan_p(out), out, partial)


ellipkinc_p, ellipkinc = special_function(
    "ellipkinc", sc.ellipkinc,
    {"phi": lambda phi, m, out: _nan_where_nan(out, 1 / ew.sqrt_p(
        1 - m * ew.square_p(ew.sin_p(phi)))),
     "m": lambda phi, m: _ellipkinc_m(phi, m)},
    "The incomplete elliptic integral of the first kind F(phi, m), differentiable in "
    "``phi`` and ``m``.")
ellipeinc_p, ellipeinc = special_function(
    "ellipeinc", sc.ellipeinc,
    {"phi": lambda phi, m, out: _nan_where_nan(out, ew.sqrt_p(
        1 - m * ew.square_p(ew.sin_p(phi)))),
     "m": lambda phi, m: _ellipeinc_m(phi, m)},
    "The incomplete elliptic integral of the second kind E(phi, m), differentiable in "
    "``phi`` and ``m``.")


def _lambertw_impl(z, k, tol):
    """SciPy's ``lambertw(z, k, tol)``: complex128 (as SciPy, for real input too)."""
    return scipy.special.lambertw(z, k, tol)


def _lambertw_jvp(primals, tangents, k, tol):
    (z,), (t,) = primals, tangents
    out = lambertw_p(z, k=k, tol=tol)
    return out, _lambertw_times_slope(t, out, z, k)


def _lambertw_vjp(ct, out, z, k, tol):
    # holomorphic: the cotangent times W' (as every complex rule here), real for a real z
    return real_cotangent(_lambertw_times_slope(ct, out, z, k), z)


# The float nearest -1/e, where SciPy's W is NaN on both real branches; it stands for the
# branch point, where W' is +inf on k = 0 and -inf on k = -1 (the real one-sided limits).
_BRANCH_POINT = -math.exp(-1.0)


def _lambertw_special(z, k):
    """``(mask, value)``: the real one-sided limits of W' where the formula cannot give
    them, or None. At the branch point (the float nearest -1/e) the singular part
    +-e / sqrt(2 e (z + 1/e)) of the real branches k = 0 (+) and k = -1 (-): +-inf there,
    and the one-sided limits of every higher derivative. On k = -1 at z = 0 (W = -inf) the
    limit from z < 0, -inf (W' ~ 1/z)."""
    if k not in (0, -1):
        return None
    branch = ew.equal_p(z, _BRANCH_POINT)
    side = 1.0 if k == 0 else -1.0
    with np.errstate(divide="ignore"):   # the limit itself: e / sqrt(0) = inf at the branch
        value = side * math.e / ew.sqrt_p(2 * math.e * (z - _BRANCH_POINT))
    if k == 0:
        return branch, value
    at_zero = ew.equal_p(z, 0)
    return ew.logical_or_p(branch, at_zero), ew.where_p(at_zero, -np.inf, value)


def _lambertw_times(t, w, z, k):
    """``t W'`` with W' = W / (z (1 + W)) = e^-W / (1 + W) (no 0/0 at z = 0 on k = 0),
    complex; a real ``t`` times the real limits at the special points (no inf * 0j)."""
    special = _lambertw_special(z, k)
    if special is None:
        return t * (ew.exp_p(-w) / (1 + w))
    mask, value = special
    safe = ew.where_p(mask, 0.0, w)
    return ew.where_p(mask, t * value, t * (ew.exp_p(-safe) / (1 + safe)))


_lambertw_times_slope = zero_safe(_lambertw_times)
lambertw_p = Primitive("lambertw", _lambertw_impl, _lambertw_jvp, (_lambertw_vjp,),
                       lambda axis_size, values, batch_axes, k, tol: (
                           lambertw_p(values[0], k=k, tol=tol), batch_axes[0]))
lambertw_p.sparsity = sr.elementwise_sparsity()
wrightomega_p, wrightomega = special_function(
    "wrightomega", sc.wrightomega,
    {"z": lambda out: out / (1 + out)},
    "The Wright omega function (real inputs).")


def _boxcox_lmbda(log_x, lmbda):
    # d/d lmbda (x^lmbda - 1) / lmbda = log(x)^2 g(lmbda log x), g = exprel's derivative.
    return ew.square_p(log_x) * _exprel_slope(lmbda * log_x)


boxcox_p, boxcox = special_function(
    "boxcox", sc.boxcox,
    {"x": lambda x, lmbda: ew.power(x, lmbda - 1),
     "lmbda": lambda x, lmbda: _boxcox_lmbda(ew.log_p(x), lmbda)},
    "The Box-Cox transform, differentiable in ``x`` and ``lmbda``.")
boxcox1p_p, boxcox1p = special_function(
    "boxcox1p", sc.boxcox1p,
    {"x": lambda x, lmbda: ew.power(1 + x, lmbda - 1),
     "lmbda": lambda x, lmbda: _boxcox_lmbda(ew.log1p_p(x), lmbda)},
    "The Box-Cox transform of ``1 + x``.")
# inv_boxcox(y, l) = exp(log1p(l y) / l) = exp(y * r(l y)) with r(v) = log1p(v) / v; so
# d/dy = out / (1 + l y) and d/dl = out * y^2 r'(l y).
inv_boxcox_p, inv_boxcox = special_function(
    "inv_boxcox", sc.inv_boxcox,
    {"y": lambda y, lmbda, out: out / (1 + lmbda * y),
     "lmbda": lambda y, lmbda, out: out * ew.square_p(y) * _log1p_ratio_slope(lmbda * y)},
    "The inverse of ``boxcox`` in ``x``.")


def _inv_boxcox1p_impl(y, lmbda):
    # SciPy 1.17 returns y instead of expm1(y) for 0 < |lmbda| < ~1e-150; below 1e-19 the
    # lmbda = 0 value expm1(y) is exact to rounding.
    with np.errstate(all="ignore"):
        return np.where(np.abs(lmbda) < 1e-19, np.expm1(y),
                        scipy.special.inv_boxcox1p(y, lmbda))[()]


inv_boxcox1p_p, inv_boxcox1p = special_function(
    "inv_boxcox1p", _inv_boxcox1p_impl,
    {"y": lambda y, lmbda, out: (1 + out) / (1 + lmbda * y),
     "lmbda": lambda y, lmbda, out: ((1 + out) * ew.square_p(y)
                                     * _log1p_ratio_slope(lmbda * y))},
    "The inverse of ``boxcox1p`` in ``x``.")


log1p = ew.log1p
expm1 = ew.expm1
cbrt = ufuncs.cbrt
exp2 = ufuncs.exp2

radian_p, radian = special_function(
    "radian", sc.radian,
    {"d": math.pi / 180, "m": math.pi / (180 * 60), "s": math.pi / (180 * 3600)},
    "An angle in degrees, minutes and seconds, in radians.")


def _powm1_y(x, y, out):
    # (out + 1) log x = x^y log x, 0 where x^y == 0 (x == 0 with y > 0: the limit)
    power = out + 1
    vanishes = ew.equal_p(power, 0)
    return ew.where_p(vanishes, 0.0, power * ew.log_p(ew.where_p(vanishes, 1.0, x)))


powm1_p, powm1 = special_function(
    "powm1", sc.powm1,
    {"x": lambda x, y: y * ew.power(x, y - 1), "y": _powm1_y},
    "``x**y - 1``, accurate where x**y is near 1.")


def _agm_partial(a, b, out, first):
    """The partials of M = agm(a, b) = pi (a + b) / (4 K(m)), m = ((a - b)/(a + b))^2:
    dM/da = M/s - M K'(m)/K(m) 4 t b / s^2, dM/db = M/s + M K'(m)/K(m) 4 t a / s^2, with
    s = a + b, t = (a - b)/s (Euler's relation a dM/da + b dM/db = M holds)."""
    s = a + b
    t = (a - b) / s
    m = ew.square_p(t)
    log_slope = _ellipk_slope(m) / ellipk_p(m)
    other = b if first else -a
    return out / s - out * log_slope * 4 * t * other / ew.square_p(s)


agm_p, agm = special_function(
    "agm", sc.agm,
    {"a": lambda a, b, out: _agm_partial(a, b, out, True),
     "b": lambda a, b, out: _agm_partial(a, b, out, False)},
    "The arithmetic-geometric mean of ``a`` and ``b`` (of one sign), differentiable in "
    "both.")


def lambertw(z, k=0, tol=1e-8):
    """The Lambert W function on branch ``k`` (an integer), as ``scipy.special.lambertw``:
    complex128 for real and complex ``z`` alike (the real branches are ``k = 0`` on
    ``z >= -1/e`` and ``k = -1`` on ``-1/e <= z < 0``, where the imaginary part is 0).
    Differentiable in ``z``: ``W' = W / (z (1 + W)) = exp(-W) / (1 + W)`` (holomorphic;
    a real ``z`` gets the real part of the cotangent)."""
    if isinstance(k, (bool, np.bool_)) or int(k) != k:
        raise TypeError(f"lambertw: the branch k must be an integer, got {k!r}")
    return lambertw_p(*_weak((z,), (), ()), k=int(k), tol=float(tol))
