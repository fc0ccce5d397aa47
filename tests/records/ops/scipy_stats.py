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

import diffkit.numpy as dnp
from diffkit.scipy import stats

from ..domains import POSITIVE, REAL, Domain
from ..op_record import records

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
SIMPLEX_PART = Domain("(0.15, 0.3)", 0.15, 0.3)   # two of three components: the third >= 0.4
# (above 0.15: at smaller components the order-2 finite differences of (a - 1) log x, a < 1,
# step 1e-4, are off by more than their 1e-5 tolerance)


def _cov(a):
    return a @ dnp.swapaxes(a, -1, -2) + np.eye(3)


R = []
R += records("norm_logpdf", lambda x, m, s: stats.norm.logpdf(x, m, s), THREE,
             (REAL, REAL, SCALE))
R += records("norm_logcdf", stats.norm.logcdf, ONE, (TAIL,))
R += records("norm_ppf", lambda q, m, s: stats.norm.ppf(q, loc=m, scale=s), THREE,
             (UNIT, REAL, SCALE))
R += records("t_logpdf", lambda x, df, m, s: stats.t.logpdf(x, df, m, s), FOUR,
             (REAL, DF, SMALL, SCALE))
R += records("t_cdf", stats.t.cdf, TWO, (WIDE, DF))
R += records("t_cdf_at_0", lambda df: stats.t.cdf(np.zeros(3), df), ONE[:1], (DF,))
R += records("gamma_logpdf", lambda x, a, s: stats.gamma.logpdf(x, a, scale=s), THREE,
             (POSITIVE, SHAPE, SCALE))
R += records("gamma_cdf", stats.gamma.cdf, TWO, (POSITIVE, SHAPE))
R += records("chi2_logsf", stats.chi2.logsf, TWO, (POSITIVE, DF))
R += records("beta_logpdf", stats.beta.logpdf, THREE, (UNIT, SHAPE, SHAPE))
R += records("beta_cdf", stats.beta.cdf, THREE[:1], (UNIT, SHAPE, SHAPE))
R += records("expon_logcdf", lambda x, s: stats.expon.logcdf(x, scale=s), TWO,
             (POSITIVE, SCALE))
R += records("laplace_cdf", lambda x, m, s: stats.laplace.cdf(x, m, s), THREE,
             (X_GRID, LOC_GRID, SCALE))
R += records("logistic_logsf", lambda x, m, s: stats.logistic.logsf(x, m, s), THREE,
             (WIDE, REAL, SCALE))
R += records("cauchy_ppf", lambda q, s: stats.cauchy.ppf(q, scale=s), TWO, (UNIT, SCALE))
R += records("uniform_cdf", lambda x, m, s: stats.uniform.cdf(x, m, s), THREE,
             (Domain("(0.2, 0.8)", 0.2, 0.8), Domain("(-0.1, 0.1)", -0.1, 0.1),
              Domain("(1, 1.2)", 1.0, 1.2)))
R += records("lognorm_logpdf", stats.lognorm.logpdf, TWO, (POSITIVE, SCALE))
R += records("poisson_logpmf", stats.poisson.logpmf, TWO, (COUNT, MU))
R += records("poisson_cdf", stats.poisson.cdf, TWO[:1], (COUNT, MU))
R += records("binom_logpmf", lambda k, p: stats.binom.logpmf(k, 6, p), TWO, (COUNT, UNIT))
R += records("binom_sf", lambda k, p: stats.binom.sf(k, 6, p), TWO[:1], (COUNT, UNIT))
R += records("dirichlet_logpdf", stats.dirichlet.logpdf, [((2,), (3,)), ((2, 4), (3,))],
             (SIMPLEX_PART, SHAPE))
R += records("multivariate_normal_logpdf",
             lambda x, m, a: stats.multivariate_normal.logpdf(x, m, _cov(a)),
             [((3,), (3,), (3, 3)), ((4, 3), (3,), (3, 3))], (REAL, REAL, SMALL))

# Closed-form summaries and frozen distributions (the drop-in methods): derivatives in every
# continuous parameter, batched over them. ``t`` with df > 4 (its kurtosis exists).
DF4 = Domain("df > 4", 4.5, 9.0)
SHAPE_POSITIVE = Domain("(0.5, 3)", 0.5, 3.0)
R += records("frozen_norm_logpdf", lambda x, m, s: stats.norm(m, s).logpdf(x), THREE,
             (REAL, REAL, SCALE))
R += records("frozen_gamma_cdf", lambda x, a, s: stats.gamma(a, scale=s).cdf(x), THREE,
             (POSITIVE, SHAPE, SCALE))
R += records("t_stats", lambda df, m, s: dnp.stack(stats.t.stats(df, m, s, moments="mvsk")),
             [((3,), (3,), (3,)), ((2, 1), (), (3,))], (DF4, REAL, SCALE))
R += records("t_interval", lambda c, df, s: dnp.stack(stats.t.interval(c, df, scale=s)),
             THREE, (INSIDE, DF, SCALE))
R += records("gamma_entropy", lambda a, s: stats.gamma.entropy(a, scale=s), TWO,
             (SHAPE, SCALE))
R += records("beta_moment5", lambda a, b, m: stats.beta.moment(5, a, b, m), THREE,
             (SHAPE, SHAPE, SMALL))
R += records("beta_median", stats.beta.median, TWO, (SHAPE, SHAPE))
R += records("lognorm_stats", lambda s, sc: dnp.stack(stats.lognorm.stats(s, scale=sc,
                                                                          moments="mvsk")),
             TWO, (SHAPE_POSITIVE, SCALE))
R += records("logistic_moment4", lambda m, s: stats.logistic.moment(4, m, s), TWO,
             (SMALL, SCALE))
R += records("norm_nnlf", lambda x, m, s: stats.norm.nnlf((m, s), x), [((4,), (), ())],
             (REAL, REAL, SCALE))
R += records("poisson_moment5", lambda mu: stats.poisson.moment(5, mu, loc=1), ONE, (MU,))
R += records("frozen_binom_stats", lambda p: dnp.stack(stats.binom(6, p).stats("mvsk")), ONE,
             (UNIT,))
R += records("dirichlet_cov", stats.dirichlet.cov, [((3,),)], (SHAPE,))
R += records("dirichlet_entropy", lambda a: stats.dirichlet(a).entropy(), [((3,),)], (SHAPE,))
R += records("multivariate_normal_entropy",
             lambda a: stats.multivariate_normal.entropy(None, _cov(a)), [((3, 3),)], (SMALL,))
R += records("frozen_multivariate_normal_marginal",
             lambda x, m, a: stats.multivariate_normal(m, _cov(a)).marginal([0, 2]).logpdf(x),
             [((2,), (3,), (3, 3)), ((4, 2), (3,), (3, 3))], (REAL, REAL, SMALL))

# Every name gets the family's prefix (``-k stats_`` selects them).
RECORDS = [dataclasses.replace(r, name=f"stats_{r.name}") for r in R]
