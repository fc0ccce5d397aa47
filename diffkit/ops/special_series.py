"""Hypergeometric functions and zeta, differentiable in their parameters.

``hyp1f1(a, b, x)``, ``hyp2f1(a, b, c, z)`` and ``zeta(x, q)`` run SciPy for their values.
Their derivatives in the last argument have closed forms (a shifted function of the same
family); those in the parameters (``a``, ``b``, ``c``, and the exponent ``x`` of zeta) do not,
and come from one primitive per function, ``*_partial(..., orders=(...))``: the mixed partial
derivative of the given orders, computed by a series evaluated on jets in the parameters
(``ops/jets.py``), which carries every parameter derivative through the recurrence:

- 1F1(a; b; x) = sum_k (a)_k / (b)_k x^k / k!; for x < 0 Kummer's transformation
  e^x 1F1(b - a; b; -x), so that the terms do not cancel.
- 2F1(a, b; c; z) = sum_k (a)_k (b)_k / (c)_k z^k / k! for 0 <= z < 1; for z < 0 Pfaff's
  transformation (1 - z)^-a 2F1(a, c - b; c; z / (z - 1)), whose argument lies in [0, 1).
  The series runs to z = 0.995 (about 8000 terms there; below -199 z / (z - 1) passes
  0.995); at z = 1 Gauss's theorem Gamma(c) Gamma(c - a - b) / (Gamma(c - a) Gamma(c - b))
  on jets (c - a - b > 0, else SciPy's value is inf and the derivatives NaN; the m-th
  derivative in z needs c - a - b > m). In (0.995, 1) and below -199 the series is too slow:
  the parameter derivatives there are NaN, and so are those of a series that has not
  converged in 20000 terms (large a + b - c near z = 0.995).
- zeta(x, q) = sum_{k<N} (q+k)^-x + (q+N)^(1-x) / (x-1) + (q+N)^-x / 2
  + sum_j B_2j / (2j)! (x)_(2j-1) (q+N)^(-x-2j+1)  (Euler-Maclaurin, N >= |x| + 10, twelve
  Bernoulli terms), for x >= 0 and q > 0. Riemann's zeta below 0 uses the reflection
  zeta(x) = 2^x pi^(x-1) sin(pi x / 2) gamma(1 - x) zeta(1 - x), differentiated with
  diffkit's operations. The Hurwitz zeta is NaN below x = 1 (as SciPy's); so is its
  derivative in x.

Derivatives in the last argument multiply the partial by a shifted Pochhammer ratio
(d^m/dx^m 1F1(a; b; x) = (a)_m / (b)_m 1F1(a + m; b + m; x), and likewise for 2F1 and for q
in zeta: d^m/dq^m zeta(x, q) = (-1)^m (x)_m zeta(x + m, q)), which is part of the jet too, so
each partial's own derivatives are the same primitive with one order raised: derivatives of
any order in the last argument, and up to the third in the parameters (the fourth raises
``NoRuleError``), in both engines and under ``vmap``. Accuracy: about 1e-13 relative
against 40-digit references away from cancellation (large negative parameters, b or c
near a non-positive integer).
"""

import math
from fractions import Fraction

import numpy as np
import scipy  # scipy.special on first use (special_helpers)

from ..core.primitive import Primitive
from ..core.zeros import Zero, shape_of
from ..errors import NoRuleError
from . import elementwise as ew
from . import reductions
from . import sparsity_rules as sr
from .families import broadcasting_batch, no_derivative, sum_tangents
from .jets import Jets
from .special_gamma import digamma_p, gamma_p
from .special_helpers import _typed, sc, special_function

__all__ = ["hyp1f1", "hyp2f1", "zeta", "zetac", "hyp0f1", "hyperu", "wright_bessel",
           "log_wright_bessel"]


def _bernoulli_numbers(n):
    """The Bernoulli numbers B_0 ... B_n (B_1 = -1/2, SciPy's ``bernoulli(n)``) as floats,
    exact to rounding: the recurrence ``sum_k binom(m + 1, k) B_k = 0`` in fractions."""
    numbers = [Fraction(1)]
    for m in range(1, n + 1):
        numbers.append(-sum(math.comb(m + 1, k) * numbers[k] for k in range(m)) / (m + 1))
    return np.array([float(b) for b in numbers])


PARAMETER_ORDER = 3          # derivatives in the parameters up to the third
_MAX_TERMS = 20000
_SERIES_LIMIT = 0.995        # 2F1's series argument (after Pfaff) beyond which: NaN
_BERNOULLI = _bernoulli_numbers(24)
_EM_TERMS = 12               # Bernoulli terms of the Euler-Maclaurin tail


# --- the primitive family: mixed partial derivatives of given orders ------------------------


def _raised(orders, i):
    return orders[:i] + (orders[i] + 1,) + orders[i + 1:]


def _partial_primitive(name, impl, fname, argnames):
    """A broadcasting primitive ``prim(*args, orders=...)``: the partial derivative of the
    function ``fname`` of the given orders in each argument (the last argument is the
    variable; the others are parameters, differentiable to ``PARAMETER_ORDER`` in total).
    Its derivative in argument i is the same primitive with ``orders[i]`` raised by one."""
    prim = Primitive(name, _typed(impl), vjp_ignores=("out",),
                     sparsity=sr.elementwise_sparsity())

    def rule(i, t, args, orders):
        if i < len(args) - 1 and sum(orders[:-1]) >= PARAMETER_ORDER:
            raise NoRuleError(
                f"derivatives of {fname} in {', '.join(argnames[:-1])} are implemented to "
                f"order {PARAMETER_ORDER}; order {sum(orders[:-1]) + 1} was asked for")
        return t * prim(*args, orders=_raised(orders, i))

    def jvp(primals, tangents, orders):
        out = prim(*primals, orders=orders)
        parts = [rule(i, t, primals, orders) for i, t in enumerate(tangents)
                 if type(t) is not Zero]
        return out, sum_tangents(parts, out)

    def vjp(i):
        def pullback(ct, out, *args, orders):
            return reductions.unbroadcast(rule(i, ct, args, orders), shape_of(args[i]))
        return pullback

    prim.jvp = jvp
    prim.vjp = tuple(vjp(i) for i in range(len(argnames)))
    prim.batch = broadcasting_batch(prim)
    return prim


def _flat(*args):
    """The arguments broadcast, as flat float64 arrays, and the broadcast shape."""
    arrays = np.broadcast_arrays(*(np.asarray(a, np.float64) for a in args))
    return [a.ravel() for a in arrays], arrays[0].shape


def _unit(nvars, v):
    return tuple(int(i == v) for i in range(nvars))


def _converged(term, total):
    """Every coefficient of the latest term is negligible against the sum (or tiny)."""
    return np.all((np.abs(term) <= 1e-17 * np.abs(total)) | (np.abs(term) < 1e-300))


def _hypergeometric_series(jets, uppers, lowers, w):
    """sum_k prod (u)_k / prod (l)_k w^k / k! as a jet, with ``uppers``/``lowers`` lists of
    (value, slopes) for parameters linear in the jet variables. Terms past the largest
    ``|w| k`` are checked for convergence; entries that do not converge are NaN."""
    term = jets.constant(np.ones_like(w))
    total = term.copy()
    start = int(np.max(np.abs(w), initial=0.0)) + 2
    for k in range(_MAX_TERMS):
        for value, slopes in uppers:
            term = jets.mul_linear(term, value + k, slopes)
        for value, slopes in lowers:
            term = jets.mul(term, jets.reciprocal_linear(value + k, slopes))
        term = term * (w / (k + 1))
        total = total + term
        if k > start and _converged(term, total):
            return total
    return np.full_like(total, np.nan)


def _pochhammer_ratio(jets, uppers, lowers, m):
    """prod_i (u)_m / prod_i (l)_m as a jet (the factor of the m-th derivative in the
    variable); ``uppers``/``lowers`` as in ``_hypergeometric_series``."""
    size = np.shape(uppers[0][0])
    ratio = jets.constant(np.ones(size))
    for i in range(m):
        for value, slopes in uppers:
            ratio = jets.mul_linear(ratio, value + i, slopes)
        for value, slopes in lowers:
            ratio = jets.mul(ratio, jets.reciprocal_linear(value + i, slopes))
    return ratio


# --- 1F1 ------------------------------------------------------------------------------------


def _hyp1f1_partial_impl(a, b, x, orders):
    (a, b, x), shape = _flat(a, b, x)
    da, db, m = orders
    jets = Jets(2, da + db)
    ea, eb = _unit(2, 0), _unit(2, 1)
    factor = _pochhammer_ratio(jets, [(a, ea)], [(b, eb)], m)
    a, b = a + m, b + m
    result = np.full((len(jets.terms),) + a.shape, np.nan)
    with np.errstate(all="ignore"):
        up = x >= 0
        if up.any():
            result[:, up] = _hypergeometric_series(jets, [(a[up], ea)], [(b[up], eb)], x[up])
        down = ~up & ~np.isnan(x)
        if down.any():  # Kummer: e^x 1F1(b - a; b; -x)
            series = _hypergeometric_series(jets, [(b[down] - a[down], (-1, 1))],
                                            [(b[down], eb)], -x[down])
            result[:, down] = np.exp(x[down]) * series
        result = jets.mul(factor, result)
    return jets.derivative(result, (da, db)).reshape(shape)


hyp1f1_partial_p = _partial_primitive("hyp1f1_partial", _hyp1f1_partial_impl, "hyp1f1",
                                      ("a", "b", "x"))
# d/dx 1F1(a; b; x) = a/b 1F1(a+1; b+1; x): a closed form that stays on SciPy's values.
# The function value comes first in the product, so integer a, b (a / b is float64) do not
# widen a float32 x.
hyp1f1_p, hyp1f1 = special_function(
    "hyp1f1", sc.hyp1f1,
    {"a": lambda a, b, x: hyp1f1_partial_p(a, b, x, orders=(1, 0, 0)),
     "b": lambda a, b, x: hyp1f1_partial_p(a, b, x, orders=(0, 1, 0)),
     "x": lambda a, b, x: hyp1f1_p(a + 1, b + 1, x) * a / b},
    "Kummer's confluent hypergeometric function 1F1(a; b; x), "
    "differentiable in ``x`` (closed form) and in ``a`` and ``b`` (series on "
    "jets, to third order).")


# --- 2F1 ------------------------------------------------------------------------------------


def _log_gamma_jet(jets, x, slopes):
    """log|Gamma(x + sum_v slopes[v] e_v)| as a jet: its Taylor series, the polygammas."""
    step = jets.linear(np.zeros_like(x), slopes)
    jet, power = jets.constant(scipy.special.gammaln(x)), jets.constant(np.ones_like(x))
    for n in range(1, jets.order + 1):
        power = jets.mul(power, step)
        jet = jet + scipy.special.polygamma(n - 1, x) / math.factorial(n) * power
    return jet


def _gauss_jet(jets, a, b, c):
    """2F1(a, b; c; 1) = Gamma(c) Gamma(c - a - b) / (Gamma(c - a) Gamma(c - b)) (Gauss's
    theorem, c - a - b > 0) as a jet in the three parameters."""
    factors = [(c, (0, 0, 1), 1), (c - a - b, (-1, -1, 1), 1), (c - a, (-1, 0, 1), -1),
               (c - b, (0, -1, 1), -1)]
    log_value = sum(power * _log_gamma_jet(jets, x, slopes) for x, slopes, power in factors)
    sign = np.prod([scipy.special.gammasgn(x) for x, _, _ in factors], axis=0)
    return sign * jets.exp(log_value)


def _hyp2f1_jet(jets, a, b, c, z):
    """2F1(a, b; c; z) as a jet in its three parameters: the series for 0 <= z <=
    _SERIES_LIMIT, Pfaff's transformation for z < 0, Gauss's theorem at z = 1 (where
    c - a - b > 0); NaN elsewhere (the series argument past _SERIES_LIMIT)."""
    ea, eb, ec = _unit(3, 0), _unit(3, 1), _unit(3, 2)
    result = np.full((len(jets.terms),) + z.shape, np.nan)
    up = (z >= 0) & (z <= _SERIES_LIMIT)
    if up.any():
        result[:, up] = _hypergeometric_series(jets, [(a[up], ea), (b[up], eb)],
                                               [(c[up], ec)], z[up])
    at_one = (z == 1) & (c - a - b > 0)
    if at_one.any():
        result[:, at_one] = _gauss_jet(jets, a[at_one], b[at_one], c[at_one])
    down = (z < 0) & (z / (z - 1) <= _SERIES_LIMIT)
    if down.any():  # (1 - z)^-a 2F1(a, c - b; c; z / (z - 1))
        a, b, c, z = a[down], b[down], c[down], z[down]
        log_scale = np.log1p(-z)
        prefactor = jets.exp(jets.linear(-a * log_scale, (-log_scale, 0, 0)))
        series = _hypergeometric_series(jets, [(a, ea), (c - b, (0, -1, 1))], [(c, ec)],
                                        z / (z - 1))
        result[:, down] = jets.mul(prefactor, series)
    return result


def _hyp2f1_partial_impl(a, b, c, z, orders):
    (a, b, c, z), shape = _flat(a, b, c, z)
    *parameter_orders, m = orders
    jets = Jets(3, sum(parameter_orders))
    ea, eb, ec = _unit(3, 0), _unit(3, 1), _unit(3, 2)
    with np.errstate(all="ignore"):
        factor = _pochhammer_ratio(jets, [(a, ea), (b, eb)], [(c, ec)], m)
        result = jets.mul(factor, _hyp2f1_jet(jets, a + m, b + m, c + m, z))
    return jets.derivative(result, parameter_orders).reshape(shape)


hyp2f1_partial_p = _partial_primitive("hyp2f1_partial", _hyp2f1_partial_impl, "hyp2f1",
                                      ("a", "b", "c", "z"))


def _hyp2f1_parameter(i):
    orders = _unit(4, i)
    return lambda a, b, c, z: hyp2f1_partial_p(a, b, c, z, orders=orders)


# d/dz 2F1(a, b; c; z) = ab/c 2F1(a+1, b+1; c+1; z), the value first to keep float32 z
hyp2f1_p, hyp2f1 = special_function(
    "hyp2f1", sc.hyp2f1,
    {"a": _hyp2f1_parameter(0), "b": _hyp2f1_parameter(1), "c": _hyp2f1_parameter(2),
     "z": lambda a, b, c, z: hyp2f1_p(a + 1, b + 1, c + 1, z) * a * b / c},
    "The Gauss hypergeometric function 2F1(a, b; c; z), "
    "differentiable in ``z`` (closed form) and in ``a``, ``b``, ``c`` (series on "
    "jets, to third order, for -199 <= z <= 0.995 and at z = 1; NaN elsewhere).")


# --- zeta -----------------------------------------------------------------------------------


def _power_jet(jets, base_log, exponent):
    """base^(exponent - e) as a jet in e (one variable): base^exponent (-log base)^n / n!."""
    value = np.exp(exponent * base_log)
    return np.stack([value * (-base_log) ** n / math.factorial(n)
                     for n in range(jets.order + 1)])


def _hurwitz_jet(jets, x, q):
    """zeta(x + e, q) as a jet in e, by Euler-Maclaurin (x >= 0, x != 1, q > 0)."""
    count = 10 + int(np.ceil(np.max(np.abs(x), initial=0.0)))
    logs = np.log(q + np.arange(count)[:, None])  # (count, points)
    powers = np.exp(-x * logs)
    jet = np.stack([np.sum(powers * (-logs) ** n, axis=0) / math.factorial(n)
                    for n in range(jets.order + 1)])
    tail_log = np.log(q + count)
    jet = jet + jets.mul(_power_jet(jets, tail_log, 1 - x), jets.reciprocal_linear(x - 1, (1,)))
    jet = jet + 0.5 * _power_jet(jets, tail_log, -x)
    rising = jets.linear(x, (1,))  # (x + e)_(2j-1), starting at j = 1
    for j in range(1, _EM_TERMS + 1):
        weight = _BERNOULLI[2 * j] / math.factorial(2 * j)
        jet = jet + weight * jets.mul(rising, _power_jet(jets, tail_log, -x - 2 * j + 1))
        rising = jets.mul_linear(jets.mul_linear(rising, x + 2 * j - 1, (1,)), x + 2 * j, (1,))
    return jet


def _zeta_partial_impl(x, q, orders):
    """d^n/dx^n d^m/dq^m zeta(x, q) = d^n/dx^n [(-1)^m (x)_m zeta(x + m, q)]."""
    (x, q), shape = _flat(x, q)
    n, m = orders
    jets = Jets(1, n)
    result = np.full((n + 1,) + x.shape, np.nan)
    valid = (x >= 0) & (x + m != 1) & (q > 0) & np.isfinite(x) & np.isfinite(q)
    with np.errstate(all="ignore"):
        if valid.any():
            factor = _pochhammer_ratio(jets, [(x[valid], (1,))], [], m) * (-1) ** m
            result[:, valid] = jets.mul(factor, _hurwitz_jet(jets, x[valid] + m, q[valid]))
    return jets.derivative(result, (n,)).reshape(shape)


zeta_partial_p = _partial_primitive("zeta_partial", _zeta_partial_impl, "zeta", ("x", "q"))


def _hurwitz_x(x, q):
    # NaN below x = 1, where SciPy's Hurwitz zeta is NaN too
    return ew.where_p(ew.less_p(x, 1), np.nan, zeta_partial_p(x, q, orders=(1, 0)))


def _riemann_x(x):
    """zeta'(x): Euler-Maclaurin for x >= 0; below, the derivative of the reflection
    zeta(x) = chi(x) zeta(1 - x) with chi(x) = 2^x pi^(x-1) sin(pi x / 2) gamma(1 - x):
    chi' = 2^x pi^(x-1) gamma(1 - x) ((log 2 pi - psi(1 - x)) sin(pi x / 2)
    + pi/2 cos(pi x / 2)) (no cot, so no pole at the negative even integers)."""
    negative = ew.less_p(x, 0)
    right = ew.where_p(negative, 0.5, x)
    left = ew.where_p(negative, x, -1.0)
    scale = ew.exp_p(left * math.log(2 * math.pi) - math.log(math.pi)) * gamma_p(1 - left)
    angle = (math.pi / 2) * left
    sine, cosine = ew.sin_p(angle), ew.cos_p(angle)
    chi = scale * sine
    chi_slope = scale * ((math.log(2 * math.pi) - digamma_p(1 - left)) * sine
                         + (math.pi / 2) * cosine)
    reflected = chi_slope * riemann_zeta_p(1 - left) \
        - chi * zeta_partial_p(1 - left, 1.0, orders=(1, 0))
    return ew.where_p(negative, reflected, zeta_partial_p(right, 1.0, orders=(1, 0)))


# (``zeta`` below chooses between the two by its argument q)
riemann_zeta_p, _riemann_zeta = special_function(
    "riemann_zeta", sc.zeta, {"x": _riemann_x}, "Riemann's zeta function.")
hurwitz_zeta_p, _hurwitz_zeta = special_function(
    "zeta", sc.zeta, {"x": _hurwitz_x, "q": lambda x, q: -x * hurwitz_zeta_p(x + 1, q)},
    "The Hurwitz zeta function.")


def zeta(x, q=None, out=None):
    """The Hurwitz zeta function ``sum_k (k + q)**-x`` (Riemann's for ``q=None``),
    differentiable in ``q`` (``d/dq = -x zeta(x + 1, q)``) and in ``x`` (Euler-Maclaurin on
    jets; Riemann's below 0 by the reflection formula)."""
    if out is not None:
        raise TypeError("zeta(): out= is not supported (diffkit returns new arrays)")
    if q is None:
        return _riemann_zeta(x)
    return _hurwitz_zeta(x, q)


zetac_p, zetac = special_function(
    "zetac", sc.zetac, {"x": _riemann_x},
    "``zeta(x) - 1``, accurate for large x; its derivative is Riemann zeta's.")

# --- functions whose derivative in the argument is a shifted function (DLMF 16.3.1, 13.3.22,
# 10.46's Wright function); their parameters have no closed-form derivative -------------------


def _held(name, what):
    return no_derivative(f"scipy.special.{name} has no closed-form derivative in {what}")


hyp0f1_p, hyp0f1 = special_function(
    "hyp0f1", sc.hyp0f1,
    {"v": _held("hyp0f1", "v"), "z": lambda v, z: hyp0f1_p(v + 1, z) / v},
    "The confluent hypergeometric limit function 0F1(; v; z), differentiable in ``z`` "
    "(``d/dz = 0F1(; v + 1; z) / v``; ``v`` held fixed).", orders=(0,))
hyperu_p, hyperu = special_function(
    "hyperu", sc.hyperu,
    {"a": _held("hyperu", "a"), "b": _held("hyperu", "b"),
     "x": lambda a, b, x: -a * hyperu_p(a + 1, b + 1, x)},
    "Tricomi's confluent hypergeometric function U(a, b, x), differentiable in ``x`` "
    "(``d/dx = -a U(a + 1, b + 1, x)``; ``a``, ``b`` held fixed).", orders=(0, 1))
wright_bessel_p, wright_bessel = special_function(
    "wright_bessel", sc.wright_bessel,
    {"a": _held("wright_bessel", "a"), "b": _held("wright_bessel", "b"),
     "x": lambda a, b, x: wright_bessel_p(a, a + b, x)},
    "Wright's generalized Bessel function Phi(a, b; x), differentiable in ``x`` "
    "(``d/dx = Phi(a, a + b; x)``; ``a``, ``b`` held fixed).", orders=(0, 1))
log_wright_bessel_p, log_wright_bessel = special_function(
    "log_wright_bessel", sc.log_wright_bessel,
    {"a": _held("log_wright_bessel", "a"), "b": _held("log_wright_bessel", "b"),
     "x": lambda a, b, x, out: ew.exp_p(log_wright_bessel_p(a, a + b, x) - out)},
    "The logarithm of ``wright_bessel``, differentiable in ``x`` (``a``, ``b`` held "
    "fixed).", orders=(0, 1))
