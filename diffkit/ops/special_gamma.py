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
loggamma               real inputs; nan for x < 0, as SciPy's real loggamma
=====================  =====================================================================
"""

import math

import numpy as np
import scipy.special as sc

from . import elementwise as ew
from .special_helpers import _INTEGER_ORDER, _public, _ufunc, _weak

__all__ = [
    "gamma", "gammaln", "loggamma", "rgamma", "digamma", "psi", "polygamma",
    "multigammaln", "beta", "betaln", "poch", "binom",
]

# --- gamma, beta and related ----------------------------------------------------------------


polygamma_p = _ufunc("polygamma", sc.polygamma, ("n", "x"), _INTEGER_ORDER,
                     lambda t, out, n, x: t * polygamma_p(n + 1, x),
                     reads=((), (0, 1)), orders=(0,))
digamma_p = _ufunc("digamma", sc.digamma, ("x",),
                   lambda t, out, x: t * polygamma_p(1, x), reads=((0,),))
gammaln_p = _ufunc("gammaln", sc.gammaln, ("x",),
                   lambda t, out, x: t * digamma_p(x), reads=((0,),))
loggamma_p = _ufunc("loggamma", sc.loggamma, ("x",),
                    lambda t, out, x: t * digamma_p(x), reads=((0,),))
gamma_p = _ufunc("gamma", sc.gamma, ("x",), lambda t, out, x: t * (out * digamma_p(x)))


def _rgamma_slope(x, out):
    """(1/Gamma)'(x) = -digamma(x) / Gamma(x). At the poles of Gamma (x = 0, -1, ...: there
    and only there 1/Gamma is 0 for x <= 0) that is 0 x inf; there the derivative of the
    reflection 1/Gamma(x) = Gamma(1 - x) sin(pi x) / pi is used instead,
    Gamma(1 - x) (cos(pi x) - digamma(1 - x) sin(pi x) / pi): (-1)^n n! at x = -n, and its
    own derivatives are those of 1/Gamma too (a formula valid around the pole)."""
    pole = ew.logical_and(ew.equal(out, 0), ew.less_equal(x, 0))
    near = ew.where(pole, x, 0.5)
    far = ew.where(pole, 1.0, x)
    reflected = gamma_p(1 - near) * (ew.cos(math.pi * near) - digamma_p(1 - near)
                                     * ew.sin(math.pi * near) / math.pi)
    return ew.where(pole, reflected, -(ew.where(pole, 1.0, out) * digamma_p(far)))


rgamma_p = _ufunc("rgamma", sc.rgamma, ("x",), lambda t, out, x: t * _rgamma_slope(x, out))


def _beta_partial(t, out, a, b):
    return t * (out * (digamma_p(a) - digamma_p(a + b)))


beta_p = _ufunc("beta", sc.beta, ("a", "b"), _beta_partial,
                lambda t, out, a, b: _beta_partial(t, out, b, a))
betaln_p = _ufunc("betaln", sc.betaln, ("a", "b"),
                  lambda t, out, a, b: t * (digamma_p(a) - digamma_p(a + b)),
                  lambda t, out, a, b: t * (digamma_p(b) - digamma_p(a + b)),
                  reads=((0, 1), (0, 1)))
poch_p = _ufunc("poch", sc.poch, ("z", "m"),
                lambda t, out, z, m: t * (out * (digamma_p(z + m) - digamma_p(z))),
                lambda t, out, z, m: t * (out * digamma_p(z + m)))
binom_p = _ufunc("binom", sc.binom, ("x", "y"),
                 lambda t, out, x, y: t * (out * (digamma_p(x + 1) - digamma_p(x - y + 1))),
                 lambda t, out, x, y: t * (out * (digamma_p(x - y + 1) - digamma_p(y + 1))))


gamma = _public(gamma_p, "The gamma function.")
gammaln = _public(gammaln_p, "``log(abs(gamma(x)))``; its derivative is ``digamma``.")
loggamma = _public(loggamma_p, "The principal branch of log-gamma, for real inputs (nan "
                   "for x < 0, as SciPy's).")
rgamma = _public(rgamma_p, "The reciprocal of the gamma function, ``1 / gamma(x)``.")
digamma = _public(digamma_p, "The digamma function ``d/dx gammaln(x)``.")
psi = digamma
polygamma = _public(polygamma_p, "``polygamma(n, x)``: the n-th derivative of digamma, "
                    "differentiable in ``x`` (the integer order ``n`` is fixed).",
                    orders=(0,), integers=(0,))
beta = _public(beta_p, "The beta function ``gamma(a) gamma(b) / gamma(a + b)``.")
betaln = _public(betaln_p, "``log(abs(beta(a, b)))``.")
poch = _public(poch_p, "The Pochhammer symbol ``gamma(z + m) / gamma(z)``.")
binom = _public(binom_p, "The binomial coefficient as a function of two real arguments.")


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
