"""Records of diffkit.scipy.stats for the generic checker (tests/test_primitives.py).

A representative set, one or two methods per distribution, differentiated in the value and
in every continuous parameter (loc, scale, shape parameters, mu, p, alpha, mean, cov). The
methods are compositions of diffkit.numpy and diffkit.scipy.special, whose primitives have
their own records; these check the compositions' derivatives, Jacobians and batching.
Domains stay inside the supports and away from kinks (laplace's |x - loc|); integer
arguments (``k`` of poisson and binom) are held fixed by the derivative checks and batched
by the vmap checks. ``cov`` of multivariate_normal is ``a a^T + I`` of a free matrix ``a``,
so finite differences stay positive definite and symmetric.
"""

import dataclasses

import numpy as np
from op_records import POSITIVE, REAL, Domain, _records

import diffkit.numpy as dnp
from diffkit.scipy import stats

ONE = [((3,),), ((2, 3),)]
TWO = [((3,), (3,)), ((2, 1), (3,))]
THREE = [((3,), (3,), (3,)), ((2, 1), (), (3,))]
FOUR = [((3,), (3,), (3,), (3,)), ((2, 1), (), (3,), ())]

SCALE = Domain("scale", 0.5, 2.0)
SHAPE = Domain("shape", 0.7, 4.0)
DF = Domain("df", 1.5, 8.0)
UNIT = Domain("(0, 1)", 0.05, 0.95)
INSIDE = Domain("(0.1, 0.9)", 0.1, 0.9)
TAIL = Domain("lower tail", -30.0, 3.0)
SMALL = Domain("(-0.3, 0.3)", -0.3, 0.3)
WIDE = Domain("wide", -6.0, 6.0)
# laplace: x and loc on interleaved grids, so x never meets loc (the kink)
X_GRID = Domain("grid", grid=0.25)
LOC_GRID = Domain("grid + 1/8", -1.0, 1.0, grid=0.25, offset=0.125)
COUNT = Domain("k 0..6", 0, 6, kind="int")
MU = Domain("mu", 0.3, 5.0)
SIMPLEX_PART = Domain("(0.05, 0.3)", 0.05, 0.3)   # two of three components: the third >= 0.4


def _cov(a):
    return a @ dnp.swapaxes(a, -1, -2) + np.eye(3)


R = []
R += _records("norm_logpdf", lambda x, m, s: stats.norm.logpdf(x, m, s), THREE,
              (REAL, REAL, SCALE))
R += _records("norm_logcdf", stats.norm.logcdf, ONE, (TAIL,))
R += _records("norm_ppf", lambda q, m, s: stats.norm.ppf(q, loc=m, scale=s), THREE,
              (UNIT, REAL, SCALE))
R += _records("t_logpdf", lambda x, df, m, s: stats.t.logpdf(x, df, m, s), FOUR,
              (REAL, DF, SMALL, SCALE))
R += _records("t_cdf", stats.t.cdf, TWO, (WIDE, DF))
R += _records("t_cdf_at_0", lambda df: stats.t.cdf(np.zeros(3), df), ONE[:1], (DF,))
R += _records("gamma_logpdf", lambda x, a, s: stats.gamma.logpdf(x, a, scale=s), THREE,
              (POSITIVE, SHAPE, SCALE))
R += _records("gamma_cdf", stats.gamma.cdf, TWO, (POSITIVE, SHAPE))
R += _records("chi2_logsf", stats.chi2.logsf, TWO, (POSITIVE, DF))
R += _records("beta_logpdf", stats.beta.logpdf, THREE, (UNIT, SHAPE, SHAPE))
R += _records("beta_cdf", stats.beta.cdf, THREE[:1], (UNIT, SHAPE, SHAPE))
R += _records("expon_logcdf", lambda x, s: stats.expon.logcdf(x, scale=s), TWO,
              (POSITIVE, SCALE))
R += _records("laplace_cdf", lambda x, m, s: stats.laplace.cdf(x, m, s), THREE,
              (X_GRID, LOC_GRID, SCALE))
R += _records("logistic_logsf", lambda x, m, s: stats.logistic.logsf(x, m, s), THREE,
              (WIDE, REAL, SCALE))
R += _records("cauchy_ppf", lambda q, s: stats.cauchy.ppf(q, scale=s), TWO, (UNIT, SCALE))
R += _records("uniform_cdf", lambda x, m, s: stats.uniform.cdf(x, m, s), THREE,
              (Domain("(0.2, 0.8)", 0.2, 0.8), Domain("(-0.1, 0.1)", -0.1, 0.1),
               Domain("(1, 1.2)", 1.0, 1.2)))
R += _records("lognorm_logpdf", stats.lognorm.logpdf, TWO, (POSITIVE, SCALE))
R += _records("poisson_logpmf", stats.poisson.logpmf, TWO, (COUNT, MU))
R += _records("poisson_cdf", stats.poisson.cdf, TWO[:1], (COUNT, MU))
R += _records("binom_logpmf", lambda k, p: stats.binom.logpmf(k, 6, p), TWO, (COUNT, UNIT))
R += _records("binom_sf", lambda k, p: stats.binom.sf(k, 6, p), TWO[:1], (COUNT, UNIT))
R += _records("dirichlet_logpdf", stats.dirichlet.logpdf, [((2,), (3,)), ((2, 4), (3,))],
              (SIMPLEX_PART, SHAPE))
R += _records("multivariate_normal_logpdf",
              lambda x, m, a: stats.multivariate_normal.logpdf(x, m, _cov(a)),
              [((3,), (3,), (3, 3)), ((4, 3), (3,), (3, 3))], (REAL, REAL, SMALL))

# Every name gets the family's prefix (``-k stats_`` selects them).
RECORDS = [dataclasses.replace(r, name=f"stats_{r.name}") for r in R]
