"""The gamma and beta functions and their relatives as primitives: ``gamma``,
``gammaln``, ``loggamma``, ``rgamma``, ``digamma`` (``psi``), ``polygamma``, ``beta``,
``betaln``, ``poch``, ``binom``, and the composition ``multigammaln``.

The derivatives climb the ladder ``gammaln`` -> ``digamma`` -> ``polygamma(1, .)`` ->
``polygamma(2, .)`` ...; the integer order ``n`` of ``polygamma`` has no derivative.

Conventions at special points (the same in both engines)
--------------------------------------------------------
=====================  =====================================================================
function               convention
=====================  =====================================================================
rgamma                 at the poles of gamma, (-1)^n n! (derivative of the reflection formula)
binom(n, k)            where n - k + 1 = 0, -1, ... (binom = 0): the product rule on
                       gamma(n + 1) rgamma(k + 1) rgamma(n - k + 1), exact at every order
loggamma               real inputs; nan for x < 0, as SciPy's real loggamma
=====================  =====================================================================
"""

import math

import numpy as np

from . import elementwise as ew
from .families import ZERO
from .special_helpers import INTEGER_ORDER, _weak, sc, special_function
from .ufuncs import floor_p

__all__ = [
    "gamma", "gammaln", "loggamma", "rgamma", "digamma", "psi", "polygamma",
    "multigammaln", "beta", "betaln", "poch", "binom", "gammasgn",
]

# --- gamma, beta and related ----------------------------------------------------------------


polygamma_p, polygamma = special_function(
    "polygamma", sc.polygamma,
    {"n": INTEGER_ORDER, "x": lambda n, x: polygamma_p(n + 1, x)},
    "``polygamma(n, x)``: the n-th derivative of digamma, "
    "differentiable in ``x`` (the integer order ``n`` is fixed).", orders=(0,), integers=(0,))
digamma_p, digamma = special_function(
    "digamma", sc.digamma,
    {"x": lambda x: polygamma_p(1, x)},
    "The digamma function ``d/dx gammaln(x)``.")
gammaln_p, gammaln = special_function(
    "gammaln", sc.gammaln,
    {"x": lambda x: digamma_p(x)},
    "``log(abs(gamma(x)))``; its derivative is ``digamma``.")
loggamma_p, loggamma = special_function(
    "loggamma", sc.loggamma,
    {"x": lambda x: digamma_p(x)},
    "The principal branch of log-gamma, for real inputs (nan "
    "for x < 0, as SciPy's).")
gamma_p, gamma = special_function(
    "gamma", sc.gamma,
    {"x": lambda x, out: out * digamma_p(x)},
    "The gamma function.")


def _rgamma_slope(x, out):
    """(1/Gamma)'(x) = -digamma(x) / Gamma(x). At the poles of Gamma (x = 0, -1, ...: there
    and only there 1/Gamma is 0 for x <= 0) that is 0 x inf; there the derivative of the
    reflection 1/Gamma(x) = Gamma(1 - x) sin(pi x) / pi is used instead,
    Gamma(1 - x) (cos(pi x) - digamma(1 - x) sin(pi x) / pi): (-1)^n n! at x = -n, and its
    own derivatives are those of 1/Gamma too (a formula valid around the pole)."""
    pole = ew.logical_and_p(ew.equal_p(out, 0), ew.less_equal_p(x, 0))
    near = ew.where_p(pole, x, 0.5)
    far = ew.where_p(pole, 1.0, x)
    reflected = gamma_p(1 - near) * (ew.cos_p(math.pi * near) - digamma_p(1 - near)
                                     * ew.sin_p(math.pi * near) / math.pi)
    return ew.where_p(pole, reflected, -(ew.where_p(pole, 1.0, out) * digamma_p(far)))


rgamma_p, rgamma = special_function(
    "rgamma", sc.rgamma,
    {"x": lambda x, out: _rgamma_slope(x, out)},
    "The reciprocal of the gamma function, ``1 / gamma(x)``.")


def _beta_partial(a, b, out):
    return out * (digamma_p(a) - digamma_p(a + b))


beta_p, beta = special_function(
    "beta", sc.beta,
    {"a": _beta_partial, "b": lambda a, b, out: _beta_partial(b, a, out)},
    "The beta function ``gamma(a) gamma(b) / gamma(a + b)``.")
betaln_p, betaln = special_function(
    "betaln", sc.betaln,
    {"a": lambda a, b: digamma_p(a) - digamma_p(a + b),
     "b": lambda a, b: digamma_p(b) - digamma_p(a + b)},
    "``log(abs(beta(a, b)))``.")
poch_p, poch = special_function(
    "poch", sc.poch,
    {"z": lambda z, m, out: out * (digamma_p(z + m) - digamma_p(z)),
     "m": lambda z, m, out: out * digamma_p(z + m)},
    "The Pochhammer symbol ``gamma(z + m) / gamma(z)``.")
def _binom_pole(x, y, out):
    """Where binom is 0 because ``x - y + 1`` is at (or, after rounding, next to) a pole of
    gamma (0, -1, ...), with ``gamma(x + 1)`` finite: there ``binom = gamma(x + 1)
    rgamma(y + 1) rgamma(x - y + 1)`` and the digamma form of its derivative is 0 x inf (or
    0 times a finite number where SciPy rounded the value to 0)."""
    integer_x = ew.logical_and_p(ew.less_equal_p(x + 1, 0), ew.equal_p(x, floor_p(x)))
    zero = ew.logical_and_p(ew.equal_p(out, 0), ew.less_equal_p(x - y + 1, 0))
    return ew.logical_and_p(zero, ew.logical_not_p(integer_x))


def _binom_partial(x, y, out, in_x):
    """d binom / dx (``in_x``) or / dy: ``out (digamma(x + 1) - digamma(x - y + 1))`` and
    ``out (digamma(x - y + 1) - digamma(y + 1))``; at the poles of ``gamma(x - y + 1)``
    (binom = 0) the product rule on ``gamma(x + 1) rgamma(y + 1) rgamma(x - y + 1)``, whose
    ``rgamma'`` is finite there ((-1)^n n! at -n), so its derivatives of every order are
    those of binom."""
    pole = _binom_pole(x, y, out)
    xs, ys = ew.where_p(pole, x, 0.5), ew.where_p(pole, y, 0.25)   # a regular point elsewhere
    xr, yr = ew.where_p(pole, 0.5, x), ew.where_p(pole, 0.25, y)   # and at the poles
    lead, first, rest = gamma_p(xs + 1), rgamma_p(ys + 1), rgamma_p(xs - ys + 1)
    rest_slope = _rgamma_slope(xs - ys + 1, rest)
    if in_x:
        product = lead * first * (digamma_p(xs + 1) * rest + rest_slope)
        regular = out * (digamma_p(xr + 1) - digamma_p(xr - yr + 1))
    else:
        product = lead * (_rgamma_slope(ys + 1, first) * rest - first * rest_slope)
        regular = out * (digamma_p(xr - yr + 1) - digamma_p(yr + 1))
    return ew.where_p(pole, product, regular)


binom_p, binom = special_function(
    "binom", sc.binom,
    {"x": lambda x, y, out: _binom_partial(x, y, out, True),
     "y": lambda x, y, out: _binom_partial(x, y, out, False)},
    "The binomial coefficient as a function of two real arguments.")


psi = digamma


def multigammaln(a, d):
    """The log of the multivariate gamma function of dimension ``d``:
    ``d (d - 1) / 4 log(pi) + sum_j gammaln(a - j / 2)`` for j in 0..d-1 (a composition)."""
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d <= 0:
        raise ValueError(f"multigammaln: d should be a positive integer (dimension), got {d!r}")
    (a,) = _weak((a,), (), ())
    d = int(d)
    total = gammaln_p(a)
    for j in range(1, d):
        total = total + gammaln_p(a - 0.5 * j)
    return total + d * (d - 1) / 4 * math.log(math.pi)

gammasgn_p, gammasgn = special_function(
    "gammasgn", sc.gammasgn, {"x": ZERO},
    "The sign of the gamma function (piecewise constant: derivative 0).")
