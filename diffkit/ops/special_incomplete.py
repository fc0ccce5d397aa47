"""The incomplete gamma and beta functions and their inverses as primitives:
``gammainc``, ``gammaincc``, ``gammaincinv``, ``gammainccinv``, ``betainc``, ``betaincc``,
``betaincinv``, ``betainccinv``.

The shape parameters (``a`` of ``gammainc``, ``gammaincc`` and their inverses; ``a`` and
``b`` of ``betainc``, ``betaincc`` and their inverses) have no closed-form derivative, but
they are differentiable here, to third order: the series and continued fractions are
evaluated on truncated Taylor series in the parameters ("jets"), which carry the
derivatives through the recurrences (relative accuracy about 1e-12 against 40-digit
references). The fourth derivative raises. The same holds for the parameters of
``hyp1f1`` and ``hyp2f1`` and the exponent ``x`` of ``zeta``, which live in
:mod:`diffkit.ops.special_series`.

Conventions at special points (the same in both engines)
--------------------------------------------------------
=====================  =====================================================================
function               convention
=====================  =====================================================================
gammainc, gammaincc    at x == 0 the one-sided limits (d2/da dx = -inf for a <= 1, 0 above)
=====================  =====================================================================
gammainc at x == 0 for a < 1 has an infinite derivative in x: the rules give the limit.
"""

import math
from collections import OrderedDict

import numpy as np
import scipy  # scipy.special on first use (special_helpers)

from ..core.primitive import Primitive
from ..core.zeros import Zero, shape_of
from ..errors import NoRuleError
from . import elementwise as ew
from . import reductions, shape
from . import sparsity_rules as sr
from .families import broadcasting_batch, sum_tangents, zero_safe
from .jets import Jets
from .special_gamma import betaln_p, digamma_p, gammaln_p, polygamma_p
from .special_helpers import _typed, sc, special_function
from .special_logistic import xdivy_p, xlog1py_p, xlogy_p

__all__ = [
    "gammainc", "gammaincc", "gammaincinv", "gammainccinv", "betainc", "betaincc",
    "betaincinv", "betainccinv",
]

# --- incomplete gamma and beta functions: derivatives in the shape parameters ------------
#
# d/da of P(a, x) = gammainc(a, x), and d/da, d/db of I_x(a, b) = betainc(a, b, x), have no
# closed form. They come from the series and continued fractions that compute the functions,
# evaluated on truncated Taylor series in the parameters ("jets"), which carry every
# derivative up to _JET_ORDER through the recurrences:
#
# - P(a, x) = x^a e^-x / Gamma(a+1) sum_n x^n / ((a+1)...(a+n))              (x < a + 1)
# - Q(a, x) = x^a e^-x / Gamma(a) / (x+1-a- 1(1-a)/(x+3-a- 2(2-a)/(x+5-a- ...)))  (else)
# - I_x(a, b) = x^a (1-x)^b / (a B(a, b)) / (1+ d1/(1+ d2/(1+ ...))) with
#   d_{2m+1} = -(a+m)(a+b+m) x / ((a+2m)(a+2m+1)), d_{2m} = m(b-m) x / ((a+2m-1)(a+2m)),
#   for x < (a+1)/(a+b+2), else I_x(a, b) = 1 - I_{1-x}(b, a).
#
# The fractions are evaluated from their tail backwards as a ratio of two jets (stable, and
# only multiplications by linear functions of the parameters), to a depth set by the
# convergence of the values alone.

_JET_ORDER = 3  # derivatives in the parameters up to the third


def _fraction_depth(coefficients, x):
    """Terms needed by the continued fraction b_0 + a_1/(b_1 + a_2/(b_2 + ...)) for its
    values, with ``coefficients(k) = (a_k, b_k)`` (forward convergents, rescaled), plus a
    margin for the derivatives (which then agree with 40-digit references to ~1e-12)."""
    _, b0 = coefficients(0)
    a_prev, a_cur, b_prev, b_cur = np.ones_like(x), b0 + 0 * x, np.zeros_like(x), \
        np.ones_like(x)
    previous = a_cur / b_cur
    for k in range(1, 20000):
        numerator, denominator = coefficients(k)
        a_prev, a_cur = a_cur, denominator * a_cur + numerator * a_prev
        b_prev, b_cur = b_cur, denominator * b_cur + numerator * b_prev
        scale = 1 / np.abs(b_cur)
        a_prev, a_cur, b_prev, b_cur = (v * scale for v in (a_prev, a_cur, b_prev, b_cur))
        value = a_cur / b_cur
        if np.all(np.abs(value - previous) <= 4e-16 * np.abs(value)):
            break
        previous = value
    return k + 10


def _gammainc_log_prefactor(jets, a, x, shift):
    """a log x - x - gammaln(a + shift), as a jet in a."""
    special = scipy.special
    f = jets.constant(special.xlogy(a, x) - x - special.gammaln(a + shift))
    if jets.order:
        f[1] = np.log(x) - special.digamma(a + shift)
    for k in range(2, jets.order + 1):
        f[k] = -special.polygamma(k - 1, a + shift) / math.factorial(k)
    return f


def _gammainc_series(jets, a, x):
    """P(a, x) as a jet in a, by the series."""
    term = jets.constant(np.ones_like(x))
    total = term.copy()
    for n in range(1, 100000):
        inverse = 1 / (a + n)  # x / (a + n) has Taylor coefficients x (-1)^k / (a + n)^(k+1)
        term = jets.mul(term, np.stack([x * inverse * (-inverse) ** k
                                        for k in range(jets.order + 1)]))
        total = total + term
        if np.all((np.abs(term) <= 1e-17 * np.abs(total)) | (np.abs(term) < 1e-300)):
            break
    return jets.mul(jets.exp(_gammainc_log_prefactor(jets, a, x, 1)), total)


def _gammaincc_fraction(jets, a, x):
    """Q(a, x) as a jet in a, by the continued fraction: prefactor / (top / bottom)."""
    def coefficients(k):  # 1 / (b_0 + a_1/(b_1 + ...)): a_k = -k(k-a), b_k = x + 2k + 1 - a
        return -k * (k - a), x + 2 * k + 1 - a

    one = jets.constant(np.ones_like(x))
    depth = _fraction_depth(coefficients, x)
    top, bottom = jets.mul_linear(one, x + 2 * depth + 1 - a, (-1,)), one  # the tail b_depth
    for k in range(depth, 0, -1):  # t_{k-1} = b_{k-1} + a_k / t_k, t = top / bottom
        top, bottom = (jets.mul_linear(top, x + 2 * k - 1 - a, (-1,))
                       + jets.mul_linear(bottom, k * (a - k), (k,))), top
        scale = 1 / np.abs(top[0])
        top, bottom = top * scale, bottom * scale
    return jets.div(jets.mul(jets.exp(_gammainc_log_prefactor(jets, a, x, 0)), bottom), top)


def _gammainc_da_impl(a, x, order):
    """The ``order``-th derivative in ``a`` of the regularized lower incomplete gamma
    function P(a, x) (that of Q is its negative)."""
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    shape_ = a.shape
    a, x = a.ravel(), x.ravel()
    result = np.full(a.shape, np.nan)
    valid = (a > 0) & (x >= 0)
    result[valid & ((x == 0) | np.isinf(x))] = 0.0
    series = valid & (x > 0) & np.isfinite(x) & (x < a + 1)
    fraction = valid & (x > 0) & np.isfinite(x) & ~series
    jets = Jets(1, order)
    with np.errstate(all="ignore"):
        if series.any():
            result[series] = _gammainc_series(jets, a[series], x[series])[order]
        if fraction.any():
            result[fraction] = -_gammaincc_fraction(jets, a[fraction], x[fraction])[order]
    return (result * math.factorial(order)).reshape(shape_)


def _betainc_log_prefactor(jets, a, b, x):
    """a log x + b log(1-x) - log a - betaln(a, b), as a jet in (a, b)."""
    special = scipy.special
    f = jets.constant(special.xlogy(a, x) + special.xlog1py(b, -x) - np.log(a)
                      - special.betaln(a, b))
    for k, (i, j) in enumerate(jets.terms[1:], 1):
        # -betaln = gammaln(a + b) - gammaln(a) - gammaln(b)
        value = special.polygamma(i + j - 1, a + b) / (math.factorial(i) * math.factorial(j))
        if j == 0:  # and -log a = -log a - sum_k (-e)^k / (k a^k)
            value = value - special.polygamma(i - 1, a) / math.factorial(i) \
                + (-1) ** i / (i * a ** i)
            if i == 1:
                value = value + np.log(x)
        if i == 0:
            value = value - special.polygamma(j - 1, b) / math.factorial(j)
            if j == 1:
                value = value + np.log1p(-x)
        f[k] = value
    return f


def _betainc_fraction(jets, a, b, x):
    """I_x(a, b) as a jet in (a, b), by the continued fraction (for x < (a+1)/(a+b+2))."""
    def numerator(k, a, b):
        m = k // 2
        if k % 2:
            return -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
        return m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))

    def coefficients(k):
        return (numerator(k, a, b) if k else 0.0), 1.0

    one = jets.constant(np.ones_like(x))
    top, bottom = one, one  # the tail t = 1
    for k in range(_fraction_depth(coefficients, x), 0, -1):
        # t_{k-1} = 1 + num_k / (den_k t_k), with t = top / bottom: no division
        m = k // 2
        if k % 2:   # num = -x (a + m)(a + b + m), den = (a + 2m)(a + 2m + 1)
            scaled = jets.mul_linear(jets.mul_linear(top, a + 2 * m, (1, 0)), a + 2 * m + 1,
                                     (1, 0))
            added = -x * jets.mul_linear(jets.mul_linear(bottom, a + m, (1, 0)), a + b + m,
                                         (1, 1))
        else:       # num = m x (b - m), den = (a + 2m - 1)(a + 2m)
            scaled = jets.mul_linear(jets.mul_linear(top, a + 2 * m - 1, (1, 0)), a + 2 * m,
                                     (1, 0))
            added = m * x * jets.mul_linear(bottom, b - m, (0, 1))
        top, bottom = scaled + added, scaled
        scale = 1 / np.abs(top[0])
        top, bottom = top * scale, bottom * scale
    prefactor = jets.exp(_betainc_log_prefactor(jets, a, b, x))
    return jets.div(jets.mul(prefactor, bottom), top)


_RECENT_PARTIALS = OrderedDict()  # the last few jets: a Hessian asks for (2,0), (1,1), (0,2)


def _betainc_partials(a, b, x, order):
    """Every derivative of I_x(a, b) in (a, b) up to ``order``, as a jet over the raveled
    broadcast arguments (remembered for the next few calls at the same point)."""
    key = (order, a.tobytes(), b.tobytes(), x.tobytes())
    if key in _RECENT_PARTIALS:
        return _RECENT_PARTIALS[key]
    jets = Jets(2, order)
    result = np.full((len(jets.terms),) + a.shape, np.nan)
    valid = (a > 0) & (b > 0) & (x >= 0) & (x <= 1)
    result[:, valid & ((x == 0) | (x == 1))] = 0.0
    inside = valid & (x > 0) & (x < 1)
    direct = inside & (x < (a + 1) / (a + b + 2))
    mirrored = inside & ~direct
    with np.errstate(all="ignore"):
        if direct.any():
            result[:, direct] = _betainc_fraction(jets, a[direct], b[direct], x[direct])
        if mirrored.any():  # I_x(a, b) = 1 - I_{1-x}(b, a): the roles of a and b swap
            swapped = [jets.index[j, i] for i, j in jets.terms]
            result[:, mirrored] = -_betainc_fraction(jets, b[mirrored], a[mirrored],
                                                     1 - x[mirrored])[swapped]
    for k, (i, j) in enumerate(jets.terms):
        result[k] *= math.factorial(i) * math.factorial(j)
    partials = dict(zip(jets.terms, result))
    _RECENT_PARTIALS[key] = partials
    while len(_RECENT_PARTIALS) > 8:
        _RECENT_PARTIALS.popitem(last=False)
    return partials


def _betainc_partial_impl(a, b, x, da, db):
    """d^(da+db) I_x(a, b) / da^da db^db (da + db >= 1)."""
    a, b, x = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (a, b, x)))
    shape_ = a.shape
    partial = _betainc_partials(a.ravel(), b.ravel(), x.ravel(), da + db)[da, db]
    return partial.reshape(shape_).copy()  # not a view of the remembered jet


def _power_times_exp(x, p, log_factor):
    """x**p exp(log_factor) with the one-sided limits of its derivatives at x = 0: for
    p > 0 through ``power`` (d/dx p x^(p-1): 1 at p = 1, 0 above; d/dp x^p log x -> 0),
    else as one exp(p log x + log_factor) (d/dp -> -inf, d/dx 0 at p = 0)."""
    positive = ew.logical_and_p(ew.equal_p(x, 0), ew.greater_p(p, 0))
    return ew.where_p(positive, ew.power(x, ew.where_p(positive, p, 1.0)) * ew.exp_p(log_factor),
                    ew.exp_p(xlogy_p(ew.where_p(positive, 0.0, p), x) + log_factor))


def _gamma_density_da(a, x, order):
    """d^order / da^order of the gamma density x^(a-1) e^-x / Gamma(a), in diffkit ops. At
    x = 0 for a > 1 the a-derivatives (x^(a-1) log^k x) are their limit 0."""
    if order == 0:
        return _power_times_exp(x, a - 1, -x - gammaln_p(a))
    vanish = ew.logical_and_p(ew.equal_p(x, 0), ew.greater_p(a, 1))
    return ew.where_p(vanish, 0.0, _gamma_density_da_inside(a, ew.where_p(vanish, 1.0, x), order))


def _gamma_density_da_inside(a, x, order):
    density = ew.exp_p(xlogy_p(a - 1, x) - x - gammaln_p(a))
    slope = ew.log_p(x) - digamma_p(a)
    if order == 1:
        return density * slope
    curvature = polygamma_p(1, a)
    if order == 2:
        return density * (ew.square_p(slope) - curvature)
    return density * (slope * ew.square_p(slope) - 3 * slope * curvature - polygamma_p(2, a))


@zero_safe
def _gammainc_da_partial_x(t, a, x, order):
    return t * _gamma_density_da(a, x, order)


@zero_safe
def _gammainc_da_partial_a(t, out, a, x, order):
    if order >= _JET_ORDER:
        raise NoRuleError(
            f"derivatives of gammainc/gammaincc in 'a' are implemented to order {_JET_ORDER}; "
            f"order {order + 1} was asked for")
    return t * gammainc_da_p(a, x, order=order + 1)


gammainc_da_p = Primitive("gammainc_da", _typed(_gammainc_da_impl),
                          vjp_ignores=("out",), vjp_reads=(frozenset({0, 1}),) * 2)
gammainc_da_p.sparsity = sr.elementwise_sparsity()


def _gammainc_da_jvp(primals, tangents, order):
    a, x = primals
    ta, tx = tangents
    out = gammainc_da_p(a, x, order=order)
    parts = []
    if type(ta) is not Zero:
        parts.append(_gammainc_da_partial_a(ta, out, a, x, order))
    if type(tx) is not Zero:
        parts.append(_gammainc_da_partial_x(tx, a, x, order))
    total = parts[0] if len(parts) == 1 else parts[0] + parts[1]
    if shape_of(total) != shape_of(out):
        total = shape.broadcast_to(total, shape_of(out))
    return out, total


gammainc_da_p.jvp = _gammainc_da_jvp
gammainc_da_p.vjp = (
    lambda ct, out, a, x, order: reductions.unbroadcast(
        _gammainc_da_partial_a(ct, out, a, x, order), shape_of(a)),
    lambda ct, out, a, x, order: reductions.unbroadcast(
        _gammainc_da_partial_x(ct, a, x, order), shape_of(x)),
)
gammainc_da_p.batch = broadcasting_batch(gammainc_da_p)

gammainc_p, gammainc = special_function(
    "gammainc", sc.gammainc,
    {"a": lambda a, x: gammainc_da_p(a, x, order=1),
     "x": lambda a, x: _gamma_density_da(a, x, 0)},
    "The regularized lower incomplete gamma function P(a, x), "
    "differentiable in ``x`` and ``a``.")
gammaincc_p, gammaincc = special_function(
    "gammaincc", sc.gammaincc,
    {"a": lambda a, x: -gammainc_da_p(a, x, order=1),
     "x": lambda a, x: -_gamma_density_da(a, x, 0)},
    "The regularized upper incomplete gamma function "
    "Q(a, x) = 1 - P(a, x), differentiable in ``x`` and ``a``.")
# Inverses in y: the reciprocal of the density at the result. In a: implicit differentiation
# of P(a, out) = y, d out/da = -(dP/da) / density.


def _gamma_shape_ratio(a, x):
    """(dP/da) / density at (a, x). At x = 0 both vanish (0/0 for a > 1); there the ratio
    is its expansion (x / a) (log x - 1/a - digamma(a)) + O(x^2) (from P ~ x^a / Gamma(a + 1)),
    whose value 0, a-derivative 0 and x-derivative -inf are the one-sided limits: the
    inverse's d out/da is 0 at y = 0 (out stays 0), d2 out/da2 0, d2 out/da dy +inf."""
    at_zero = ew.equal_p(x, 0)
    inner = ew.where_p(at_zero, 1.0, x)
    inside = gammainc_da_p(a, inner, order=1) / _gamma_density_da(a, inner, 0)
    # x log(x e^-c) / a: one product, so an infinite tangent of x meets the whole slope
    near_zero = xlogy_p(x, x * ew.exp_p(-(1 / a + digamma_p(a)))) / a
    return ew.where_p(at_zero, near_zero, inside)


# The logarithms of the gamma and beta densities as primitives: each partial is one
# expression (log x - digamma(a), (a-1)/x - 1, ...), so a reverse pass multiplies an infinite
# cotangent by the whole partial (-inf) instead of by its terms (-inf + finite * inf = NaN).
gamma_log_density_p, _gamma_log_density = special_function(
    "gamma_log_density",
    lambda a, x: scipy.special.xlogy(a - 1, x) - x - scipy.special.gammaln(a),
    {"a": lambda a, x: ew.log_p(x) - digamma_p(a),
     "x": lambda a, x: xdivy_p(a - 1, x) - 1},
    "The log of the gamma density ``x**(a-1) exp(-x) / gamma(a)``.")
beta_log_density_p, _beta_log_density = special_function(
    "beta_log_density",
    lambda a, b, x: scipy.special.xlogy(a - 1, x) + scipy.special.xlog1py(b - 1, -x)
    - scipy.special.betaln(a, b),
    {"a": lambda a, b, x: ew.log_p(x) - digamma_p(a) + digamma_p(a + b),
     "b": lambda a, b, x: ew.log1p_p(-x) - digamma_p(b) + digamma_p(a + b),
     "x": lambda a, b, x: xdivy_p(a - 1, x) - xdivy_p(b - 1, 1 - x)},
    "The log of the beta density ``x**(a-1) (1-x)**(b-1) / beta(a, b)``.")


def _gamma_inverse_density(a, x):
    """1 / density = x^(1-a) e^x Gamma(a), as exp(-log density): +inf at x = 0 for a > 1
    with the one-sided derivatives (-log(x) / density = +inf in a; a quotient would give
    0 * inf there)."""
    return ew.exp_p(-gamma_log_density_p(a, x))


gammaincinv_p, gammaincinv = special_function(
    "gammaincinv", sc.gammaincinv,
    {"a": lambda a, out: -_gamma_shape_ratio(a, out),
     "y": lambda a, out: _gamma_inverse_density(a, out)},
    "The inverse of ``gammainc`` in ``x``, differentiable "
    "in ``a`` and ``y``.")
gammainccinv_p, gammainccinv = special_function(
    "gammainccinv", sc.gammainccinv,
    {"a": lambda a, out: -_gamma_shape_ratio(a, out),
     "y": lambda a, out: -_gamma_inverse_density(a, out)},
    "The inverse of ``gammaincc`` in ``x``.")


def _beta_density(a, b, x, da=0, db=0):
    """d^(da+db)/da^da db^db of the beta density x^(a-1) (1-x)^(b-1) / B(a, b), in diffkit
    ops: the density times a polynomial in the derivatives of its logarithm L.

    At the ends of [0, 1] the one-sided limits, as for the gamma density: the density goes
    through ``power`` at x = 0 for a > 1 (at x = 1 for b > 1), so that its x-derivative is
    that of x^(a-1) there; its a- and b-derivatives (x^(a-1) log^k x) are their limit 0."""
    if da + db == 0:
        at_one = ew.equal_p(x, 1)
        return ew.where_p(
            at_one,
            _power_times_exp(1 - x, b - 1, xlogy_p(a - 1, x) - betaln_p(a, b)),
            _power_times_exp(x, a - 1, xlog1py_p(b - 1, -x) - betaln_p(a, b)))
    vanish = ew.logical_or_p(ew.logical_and_p(ew.equal_p(x, 0), ew.greater_p(a, 1)),
                           ew.logical_and_p(ew.equal_p(x, 1), ew.greater_p(b, 1)))
    return ew.where_p(vanish, 0.0,
                    _beta_density_inside(a, b, ew.where_p(vanish, 0.5, x), da, db))


def _beta_density_inside(a, b, x, da, db):
    """``_beta_density``'s (da, db) derivative (da + db >= 1) by the formula."""
    density = ew.exp_p(xlogy_p(a - 1, x) + xlog1py_p(b - 1, -x) - betaln_p(a, b))
    if da < db:  # the expressions are symmetric under a <-> b, x <-> 1 - x
        a, b, x, da, db = b, a, 1 - x, db, da
    both = a + b
    la = ew.log_p(x) - digamma_p(a) + digamma_p(both)
    lb = ew.log1p_p(-x) - digamma_p(b) + digamma_p(both)
    if (da, db) == (1, 0):
        return density * la
    laa = polygamma_p(1, both) - polygamma_p(1, a)
    lab = polygamma_p(1, both)
    if (da, db) == (2, 0):
        return density * (ew.square_p(la) + laa)
    if (da, db) == (1, 1):
        return density * (la * lb + lab)
    laaa = polygamma_p(2, both) - polygamma_p(2, a)
    laab = polygamma_p(2, both)
    if (da, db) == (3, 0):
        return density * (la * ew.square_p(la) + 3 * la * laa + laaa)
    # (2, 1)
    return density * (ew.square_p(la) * lb + 2 * la * lab + laa * lb + laab)


def _betainc_partial_rule(which):
    """``t * d/d(argument which)`` of betainc_partial(a, b, x, da, db), under the 0 x inf
    rule (the x-partial is infinite at x = 0 for a <= 1)."""

    @zero_safe
    def rule(t, a, b, x, da, db):
        if which == 2:
            return t * _beta_density(a, b, x, da, db)
        if da + db >= _JET_ORDER:
            raise NoRuleError(
                f"derivatives of betainc in 'a' and 'b' are implemented to order {_JET_ORDER}; "
                f"order {da + db + 1} was asked for")
        return t * betainc_partial_p(a, b, x, da=da + (which == 0), db=db + (which == 1))
    return rule


_BETAINC_RULES = tuple(_betainc_partial_rule(i) for i in range(3))


def _betainc_partial_jvp(primals, tangents, da, db):
    out = betainc_partial_p(*primals, da=da, db=db)
    parts = [_BETAINC_RULES[i](t, *primals, da, db)
             for i, t in enumerate(tangents) if type(t) is not Zero]
    return out, sum_tangents(parts, out)


def _betainc_partial_vjp(i):
    def vjp(ct, out, a, b, x, da, db):
        return reductions.unbroadcast(_BETAINC_RULES[i](ct, a, b, x, da, db),
                                      shape_of((a, b, x)[i]))
    return vjp


betainc_partial_p = Primitive("betainc_partial", _typed(_betainc_partial_impl),
                              _betainc_partial_jvp,
                              tuple(_betainc_partial_vjp(i) for i in range(3)),
                              vjp_ignores=("out",))
betainc_partial_p.batch = broadcasting_batch(betainc_partial_p)
betainc_partial_p.sparsity = sr.elementwise_sparsity()


def _betainc_a(a, b, x):
    return betainc_partial_p(a, b, x, da=1, db=0)


def _betainc_b(a, b, x):
    return betainc_partial_p(a, b, x, da=0, db=1)


betainc_p, betainc = special_function(
    "betainc", sc.betainc,
    {"a": _betainc_a, "b": _betainc_b, "x": lambda a, b, x: _beta_density(a, b, x)},
    "The regularized incomplete beta function I_x(a, b), "
    "differentiable in ``x``, ``a`` and ``b``.")
betaincc_p, betaincc = special_function(
    "betaincc", sc.betaincc,
    {"a": lambda a, b, x: -_betainc_a(a, b, x),
     "b": lambda a, b, x: -_betainc_b(a, b, x),
     "x": lambda a, b, x: -_beta_density(a, b, x)},
    "``1 - betainc(a, b, x)``, differentiable in all three.")
# Inverses: d out/dy = 1 / density(out); in a and b by implicit differentiation of
# I(a, b, out) = y: d out/da = -(dI/da) / density (the same for the complement's inverse,
# where both signs flip).


def _beta_ratios_near_zero(a, b, x):
    """(dI/da, dI/db) / density near x = 0 to first order: from I ~ x^a / (a B(a, b)),
    (x / a) (log x - 1/a - digamma(a) + digamma(a + b)) and (x / a) (digamma(a + b) -
    digamma(b)); their values (0), shape derivatives (0) and x-derivatives (-inf and a finite
    slope) at x = 0 are the one-sided limits of the ratios."""
    psi_both = digamma_p(a + b)
    # x log(x e^-c) / a, one product (see _gamma_shape_ratio)
    ratio_a = xlogy_p(x, x * ew.exp_p(psi_both - 1 / a - digamma_p(a))) / a
    ratio_b = x * (psi_both - digamma_p(b)) / a
    return ratio_a, ratio_b


def _beta_shape_ratio(which, a, b, x):
    """(dI/da) / density (``which`` = 0) or (dI/db) / density (1) at (a, b, x): both vanish at
    x = 0 and x = 1 (0/0 where the density does), so there the expansion of
    ``_beta_ratios_near_zero``, mirrored at x = 1 by I_x(a, b) = 1 - I_{1-x}(b, a)."""
    at_zero, at_one = ew.equal_p(x, 0), ew.equal_p(x, 1)
    inner = ew.where_p(ew.logical_or_p(at_zero, at_one), 0.5, x)
    da, db = (1, 0) if which == 0 else (0, 1)
    inside = betainc_partial_p(a, b, inner, da=da, db=db) / _beta_density(a, b, inner)
    near_zero = _beta_ratios_near_zero(a, b, x)[which]
    near_one = -_beta_ratios_near_zero(b, a, 1 - x)[1 - which]
    return ew.where_p(at_zero, near_zero, ew.where_p(at_one, near_one, inside))


def _betaincinv_shape(which):
    def partial(a, b, out):
        return -_beta_shape_ratio(which, a, b, out)
    return partial


def _beta_inverse_density(a, b, x):
    """1 / density = x^(1-a) (1-x)^(1-b) B(a, b), as one exp (see _gamma_inverse_density)."""
    return ew.exp_p(-beta_log_density_p(a, b, x))


betaincinv_p, betaincinv = special_function(
    "betaincinv", sc.betaincinv,
    {"a": _betaincinv_shape(0), "b": _betaincinv_shape(1),
     "y": lambda a, b, out: _beta_inverse_density(a, b, out)},
    "The inverse of ``betainc`` in ``x``.")
betainccinv_p, betainccinv = special_function(
    "betainccinv", sc.betainccinv,
    {"a": _betaincinv_shape(0), "b": _betaincinv_shape(1),
     "y": lambda a, b, out: -_beta_inverse_density(a, b, out)},
    "The inverse of ``betaincc`` in ``x``.")


