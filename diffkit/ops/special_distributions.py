"""Distribution functions of ``scipy.special``: ``kolmogorov`` and its inverse ``kolmogi``,
Tukey's lambda ``tklmbda``, Student's ``stdtr``, and the cumulative distribution functions
that are incomplete gamma or beta functions (``chdtr``, ``chdtrc``, ``gdtr``, ``gdtrc``,
``pdtr``, ``pdtrc``, ``bdtr``, ``bdtrc``, ``nbdtr``, ``nbdtrc``, ``fdtr``, ``fdtrc``) and
their inverses (``chdtri``, ``gdtrix``, ``pdtri``, ``bdtri``, ``nbdtri``, ``fdtri``,
``stdtrit``).

- ``kolmogorov(y) = 2 sum_k>=1 (-1)^(k-1) exp(-2 k^2 y^2)``, the Kolmogorov distribution's
  survival function; its derivative (minus the density) by this series for y >= 1 and by
  the Jacobi theta form ``1 - sqrt(2 pi)/y sum_k exp(-(2k-1)^2 pi^2 / (8 y^2))`` below,
  each to full precision with a dozen terms. ``kolmogi(p)``: ``1 / kolmogorov'(kolmogi(p))``.
- ``tklmbda(x, lmbda)``: the CDF ``p`` of Tukey's lambda distribution is the inverse of the
  quantile function ``Q(p) = (p^lmbda - (1 - p)^lmbda) / lmbda``, so ``dp/dx = 1 / Q'(p) =
  1 / (p^(lmbda-1) + (1 - p)^(lmbda-1))``.
- ``stdtr(df, t)``: derivative in ``t`` the density of Student's t.
- the others are compositions of ``gammainc``, ``gammaincc``, ``betainc``, ``betaincc``
  (SciPy computes them so), differentiable in every continuous argument through those
  functions' rules, shape parameters included; integer counts (``k``, ``n`` of ``bdtr``,
  ``nbdtr``, ``pdtr``) are truncated as SciPy truncates them, so their derivative is 0.

``kolmogi``'s, ``tklmbda``'s and ``stdtr``'s parameters without a closed-form derivative
(``lmbda``, ``df``) are held fixed.

Conventions at special points (the same in both engines)
--------------------------------------------------------
=====================  =====================================================================
function               convention
=====================  =====================================================================
kolmogorov             derivative 0 for y <= 0.05 (the density is below 1e-200 there) and
                       at +inf
kolmogi                derivative -inf at p == 0 and p == 1 (the one-sided limits)
tklmbda                derivative 0 where the CDF is exactly 0 or 1 (outside the bounded
                       support of lmbda > 0)
=====================  =====================================================================
"""

import math

import numpy as np

from ..core.zeros import dtype_of
from . import elementwise as ew
from . import ufuncs
from .families import no_derivative
from .special_gamma import gammaln_p
from .special_helpers import sc, special_function
from .special_incomplete import (
    betainc,
    betaincc,
    betaincinv,
    gammainc,
    gammaincc,
    gammainccinv,
    gammaincinv,
)

__all__ = [
    "kolmogorov", "kolmogi", "tklmbda", "stdtr", "chdtr", "chdtrc", "gdtr", "gdtrc", "pdtr",
    "pdtrc", "bdtr", "bdtrc", "nbdtr", "nbdtrc", "fdtr", "fdtrc", "chdtri", "gdtrix", "pdtri",
    "bdtri", "nbdtri", "fdtri", "stdtrit",
]

# --- Kolmogorov's distribution ---------------------------------------------------------------

_TERMS = 12
_THETA = [(2 * k - 1) ** 2 * math.pi ** 2 / 8 for k in range(1, _TERMS + 1)]
_SQRT_2PI = math.sqrt(2 * math.pi)


def _kolmogorov_slope(y):
    """``kolmogorov'(y)``, minus the density of Kolmogorov's distribution."""
    tiny = ew.less_equal_p(y, 0.05)
    large = ew.greater_equal_p(y, 1.0)
    # y >= 1: -8 y sum (-1)^(k-1) k^2 exp(-2 k^2 y^2) (y capped at 40, where it is 0)
    big = ew.where_p(large, ew.minimum_p(y, 40.0), 1.0)
    alternating = 0.0
    for k in range(1, _TERMS + 1):
        alternating = alternating + ((-1) ** (k - 1) * k * k) * ew.exp_p(
            (-2.0 * k * k) * ew.square_p(big))
    alternating = -8 * big * alternating
    # 0.05 < y < 1: minus d/dy of sqrt(2 pi)/y sum exp(-a_k / y^2)
    small = ew.where_p(ew.logical_or_p(tiny, large), 0.5, y)
    inverse_square = 1 / ew.square_p(small)
    theta = 0.0
    for a in _THETA:
        theta = theta + ew.exp_p(-a * inverse_square) * (2 * a * inverse_square - 1)
    theta = -_SQRT_2PI * inverse_square * theta
    return ew.where_p(tiny, 0.0, ew.where_p(large, alternating, theta))


kolmogorov_p, kolmogorov = special_function(
    "kolmogorov", sc.kolmogorov, {"y": lambda y: _kolmogorov_slope(y)},
    "The complementary CDF of Kolmogorov's limiting distribution.")


def _kolmogi_slope(out):
    slope = _kolmogorov_slope(out)
    flat = ew.equal_p(slope, 0)
    return ew.where_p(flat, -np.inf, 1 / ew.where_p(flat, 1.0, slope))


kolmogi_p, kolmogi = special_function(
    "kolmogi", sc.kolmogi, {"p": lambda out: _kolmogi_slope(out)},
    "The inverse of ``kolmogorov``.")

# --- Tukey's lambda and Student's t ----------------------------------------------------------


def _tklmbda_x(lmbda, out):
    """``1 / Q'(p)``; 0 where ``p`` is 0 or 1 (outside the bounded support of lmbda > 0)."""
    outside = ew.logical_or_p(ew.equal_p(out, 0), ew.equal_p(out, 1))
    p = ew.where_p(outside, 0.5, out)
    return ew.where_p(outside, 0.0, 1 / (ew.power(p, lmbda - 1) + ew.power(1 - p, lmbda - 1)))


tklmbda_p, tklmbda = special_function(
    "tklmbda", sc.tklmbda,
    {"x": _tklmbda_x,
     "lmbda": no_derivative("scipy.special.tklmbda has no closed-form derivative in lmbda")},
    "The CDF of Tukey's lambda distribution, differentiable in ``x`` (``lmbda`` held "
    "fixed).")


def _student_density(df, t):
    df = ew.astype(df, dtype_of(t))   # an integer df must not make a float32 slope float64
    log_scale = (gammaln_p(0.5 * (df + 1)) - gammaln_p(0.5 * df)
                 - 0.5 * ew.log_p(math.pi * df))
    return ew.exp_p(log_scale - 0.5 * (df + 1) * ew.log1p_p(ew.square_p(t) / df))


stdtr_p, stdtr = special_function(
    "stdtr", sc.stdtr,
    {"df": no_derivative("scipy.special.stdtr has no closed-form derivative in df"),
     "t": _student_density},
    "The CDF of Student's t distribution, differentiable in ``t`` (``df`` held fixed).")

# --- CDFs that are incomplete gamma and beta functions ---------------------------------------


def chdtr(v, x):
    """The chi-squared CDF ``gammainc(v/2, x/2)``, differentiable in ``v`` and ``x``."""
    return gammainc(0.5 * v, 0.5 * x)


def chdtrc(v, x):
    """The chi-squared survival function ``gammaincc(v/2, x/2)``."""
    return gammaincc(0.5 * v, 0.5 * x)


def gdtr(a, b, x):
    """The gamma CDF ``gammainc(b, a x)`` (rate ``a``, shape ``b``)."""
    return gammainc(b, a * x)


def gdtrc(a, b, x):
    """The gamma survival function ``gammaincc(b, a x)``."""
    return gammaincc(b, a * x)


def pdtr(k, m):
    """The Poisson CDF ``gammaincc(floor(k) + 1, m)`` (``k`` truncated, as SciPy does)."""
    return gammaincc(ufuncs.floor(k) + 1, m)


def pdtrc(k, m):
    """The Poisson survival function ``gammainc(floor(k) + 1, m)``."""
    return gammainc(ufuncs.floor(k) + 1, m)


def bdtr(k, n, p):
    """The binomial CDF ``betainc(n - k, k + 1, 1 - p)`` (``k``, ``n`` truncated, as SciPy
    does), differentiable in ``p``."""
    k, n = ufuncs.trunc(k), ufuncs.trunc(n)
    return betainc(n - k, k + 1, 1 - p)


def bdtrc(k, n, p):
    """The binomial survival function ``betainc(k + 1, n - k, p)``."""
    k, n = ufuncs.trunc(k), ufuncs.trunc(n)
    return betainc(k + 1, n - k, p)


def nbdtr(k, n, p):
    """The negative binomial CDF ``betainc(n, k + 1, p)`` (``k``, ``n`` truncated)."""
    return betainc(ufuncs.trunc(n), ufuncs.trunc(k) + 1, p)


def nbdtrc(k, n, p):
    """The negative binomial survival function ``betaincc(n, k + 1, p)``."""
    return betaincc(ufuncs.trunc(n), ufuncs.trunc(k) + 1, p)


def fdtr(dfn, dfd, x):
    """The F CDF ``betainc(dfn/2, dfd/2, dfn x / (dfd + dfn x))``, differentiable in all
    three."""
    return betainc(0.5 * dfn, 0.5 * dfd, dfn * x / (dfd + dfn * x))


def fdtrc(dfn, dfd, x):
    """The F survival function ``betainc(dfd/2, dfn/2, dfd / (dfd + dfn x))``."""
    return betainc(0.5 * dfd, 0.5 * dfn, dfd / (dfd + dfn * x))


# --- their inverses: the inverse incomplete gamma and beta functions -------------------------


def chdtri(v, p):
    """The inverse of ``chdtrc`` in ``x``: ``2 gammainccinv(v/2, p)``, differentiable in
    ``v`` and ``p``."""
    return 2 * gammainccinv(0.5 * v, p)


def gdtrix(a, b, p):
    """The inverse of ``gdtr`` in ``x``: ``gammaincinv(b, p) / a``."""
    return gammaincinv(b, p) / a


def pdtri(k, y):
    """The inverse of ``pdtr`` in ``m``: ``gammainccinv(floor(k) + 1, y)``."""
    return gammainccinv(ufuncs.floor(k) + 1, y)


def bdtri(k, n, y):
    """The inverse of ``bdtr`` in ``p``: ``1 - betaincinv(n - k, k + 1, y)`` (``k``, ``n``
    truncated)."""
    k, n = ufuncs.trunc(k), ufuncs.trunc(n)
    return 1 - betaincinv(n - k, k + 1, y)


def nbdtri(k, n, y):
    """The inverse of ``nbdtr`` in ``p``: ``betaincinv(n, k + 1, y)``."""
    return betaincinv(ufuncs.trunc(n), ufuncs.trunc(k) + 1, y)


def fdtri(dfn, dfd, p):
    """The inverse of ``fdtr`` in ``x``: ``dfd u / (dfn (1 - u))`` with
    ``u = betaincinv(dfn/2, dfd/2, p)``, differentiable in all three."""
    u = betaincinv(0.5 * dfn, 0.5 * dfd, p)
    return dfd * u / (dfn * (1 - u))


stdtrit_p, stdtrit = special_function(
    "stdtrit", sc.stdtrit,
    {"df": no_derivative("scipy.special.stdtrit has no closed-form derivative in df"),
     "p": lambda df, out: 1 / _student_density(df, out)},
    "The inverse of ``stdtr`` in ``t``, differentiable in ``p`` (``1 / density``; ``df`` "
    "held fixed).")
