"""Records of diffkit.ops.statistics (and the cumulative primitives of reductions.py).

Domains keep order statistics apart (``DISTINCT``: no ties, so finite differences see one
smooth piece) except in the ``*_ties`` records, which build ties on purpose along a
direction where the function stays smooth. NaN entries come from fixed masks (``where``
with NaN), so the nan-reductions see NaN in the same places in every example; zeros for
the zero-safe products come from fixed 0/1 factors.
"""

import numpy as np

import diffkit.numpy as dnp

from ..domains import DISTINCT, POSITIVE, REAL, REAL32, Domain
from ..masks import with_nan
from ..op_record import one, records, unary

# Entries at least 1/4 apart: a standard deviation far enough from its kink at 0 (constant
# data) for finite differences of second derivatives, which grow like 1/std.
SPREAD = Domain("distinct, spread", -4.0, 4.0, distinct=True, margin=0.25)
SPREAD32 = Domain("distinct, spread, float32", -4.0, 4.0, distinct=True, margin=0.25,
                  dtype=np.float32)

def _zeros(x, *positions):
    """``x`` with exact zeros at the flat ``positions`` (of one example, under vmap)."""
    factor = np.ones(x.shape)
    factor.flat[list(positions)] = 0.0
    return x * factor


R = []

# --- cumulative sums and products -----------------------------------------------------------
CUM_SHAPES = [((3,),), ((2, 3),), ((2, 3, 4),)]
R += unary("cumsum_flat", dnp.cumsum, shapes=[((),), ((2, 3),)])
R += unary("cumsum_axis0", lambda x: dnp.cumsum(x, axis=0), shapes=CUM_SHAPES)
R += unary("cumsum_axis-1", lambda x: dnp.cumsum(x, axis=-1), shapes=CUM_SHAPES[1:])
R += unary("cumprod_flat", dnp.cumprod, shapes=[((),), ((2, 3),)])
R += unary("cumprod_axis0", lambda x: dnp.cumprod(x, axis=0), shapes=CUM_SHAPES)
R += unary("cumprod_axis-1", lambda x: dnp.cumprod(x, axis=-1), shapes=CUM_SHAPES[1:])
R += unary("cumprod_one_zero", lambda x: dnp.cumprod(_zeros(x, 1), axis=-1),
           shapes=[((4,),), ((2, 3),)])
R += unary("cumprod_two_zeros", lambda x: dnp.cumprod(_zeros(x, 0, 2), axis=-1),
           shapes=[((4,),), ((2, 3),)])
R += one("cumprod_reverse_zeros", lambda x: dnp.cumprod(_zeros(x, 3, 5)[::-1], axis=0),
         (4, 2))
R += unary("cumprod_float32", lambda x: dnp.cumprod(x, axis=1), REAL32, shapes=[((2, 3),)])
R += unary("cumulative_sum_initial",
           lambda x: dnp.cumulative_sum(x, axis=1, include_initial=True), shapes=[((2, 3),)])
R += unary("cumulative_prod", lambda x: dnp.cumulative_prod(x), shapes=[((4,),)])
R += unary("nancumsum", lambda x: dnp.nancumsum(with_nan(x), axis=1),
           shapes=[((2, 3),), ((2, 3, 4),)])
R += unary("nancumprod", lambda x: dnp.nancumprod(with_nan(x)), shapes=[((4,),), ((2, 3),)])

# --- products with zeros: exact without division ----------------------------------------------
R += unary("prod_one_zero", lambda x: dnp.prod(_zeros(x, 1), axis=-1),
           shapes=[((4,),), ((2, 3),)])
R += one("prod_two_zeros", lambda x: dnp.prod(_zeros(x, 1, 4)), (2, 3))
# Over axes 0 and 1 of (2, 4, 3): column 0 holds two zeros, column 1 one, column 2 none.
R += one("prod_zeros_axes", lambda x: dnp.prod(_zeros(x, 0, 15, 4), axis=(0, 1)), (2, 4, 3))
R += unary("prod_of_tracer_product", lambda x: dnp.prod(x * x, axis=1), shapes=[((2, 3),)])

# --- moments --------------------------------------------------------------------------------
MOMENT_SHAPES = [((4,),), ((2, 3),), ((2, 3, 4),)]
R += unary("var", dnp.var, shapes=MOMENT_SHAPES)
R += unary("var_axis_ddof", lambda x: dnp.var(x, axis=0, ddof=1), shapes=MOMENT_SHAPES[1:])
R += one("var_axes_keepdims", lambda x: dnp.var(x, axis=(0, 2), keepdims=True), (2, 3, 4))
R += one("var_where", lambda x: dnp.var(x, axis=1, where=np.array([True, False, True])),
         (2, 3))
R += unary("std", dnp.std, SPREAD, shapes=MOMENT_SHAPES[:2])
R += one("std_large", dnp.std, (2, 3, 4), domains=(DISTINCT,))  # 24 entries: spread anyway
R += one("std_axis_ddof", lambda x: dnp.std(x, axis=-1, ddof=1), (2, 3), domains=(SPREAD,))
R += unary("std_float32", lambda x: dnp.std(x, axis=1), SPREAD32, shapes=[((2, 3),)])
R += records("average_weights_axis", lambda a, w: dnp.average(a, axis=1, weights=w),
             [((2, 3), (3,)), ((2, 3, 4), (3,))], (REAL, POSITIVE))
R += records("average_weights_full", lambda a, w: dnp.average(a, weights=w, returned=True),
             [((3,), (3,)), ((2, 3), (2, 3))], (REAL, POSITIVE))
R += one("average_weights_axes", lambda a, w: dnp.average(a, axis=(2, 0), weights=w),
         (2, 3, 4), (4, 2), domains=(REAL, POSITIVE))
R += one("average_unweighted", lambda a: dnp.average(a, axis=0, returned=True), (2, 3))
R += unary("ptp", dnp.ptp, DISTINCT, shapes=[((4,),), ((2, 3),)])
R += one("ptp_axis", lambda x: dnp.ptp(x, axis=1, keepdims=True), (2, 3, 4),
         domains=(DISTINCT,))

# --- nan-reductions -------------------------------------------------------------------------
NAN_SHAPES = [((4,),), ((2, 3),), ((2, 3, 4),)]
R += unary("nansum", lambda x: dnp.nansum(with_nan(x)), shapes=NAN_SHAPES)
R += one("nansum_axis", lambda x: dnp.nansum(with_nan(x), axis=2), (2, 3, 4))
R += unary("nanprod", lambda x: dnp.nanprod(with_nan(x), axis=-1), shapes=NAN_SHAPES)
R += unary("nanmean", lambda x: dnp.nanmean(with_nan(x), axis=0), shapes=NAN_SHAPES)
R += one("nanmean_axis2", lambda x: dnp.nanmean(with_nan(x), axis=(0, 2)), (2, 3, 4))
R += unary("nanmax", lambda x: dnp.nanmax(with_nan(x), axis=-1), DISTINCT,
           shapes=NAN_SHAPES[:2])
R += unary("nanmin", lambda x: dnp.nanmin(with_nan(x)), DISTINCT, shapes=NAN_SHAPES)
R += unary("nanvar", lambda x: dnp.nanvar(with_nan(x), axis=-1), shapes=NAN_SHAPES[:2])
R += one("nanvar_ddof", lambda x: dnp.nanvar(with_nan(x), axis=1, ddof=1), (2, 3, 4))
R += one("nanstd", lambda x: dnp.nanstd(with_nan(x), axis=0), (2, 3), domains=(SPREAD,))
R += unary("nanargmax", lambda x: dnp.nanargmax(with_nan(x)), DISTINCT,
           zero_derivative=True, shapes=NAN_SHAPES[:2])

# --- order statistics -----------------------------------------------------------------------
ORDER_SHAPES = [((3,),), ((4,),), ((2, 3),), ((2, 3, 4),)]
R += unary("median", dnp.median, DISTINCT, shapes=ORDER_SHAPES)
R += unary("median_axis", lambda x: dnp.median(x, axis=-1), DISTINCT,
           shapes=ORDER_SHAPES[2:])
R += one("median_axes_keepdims", lambda x: dnp.median(x, axis=(0, 2), keepdims=True),
         (2, 3, 4), domains=(DISTINCT,))
R += unary("quantile_scalar", lambda x: dnp.quantile(x, 0.3, axis=0), DISTINCT,
           shapes=ORDER_SHAPES[1:3])
R += one("quantile_levels", lambda x: dnp.quantile(x, [[0.0, 0.25], [0.6, 1.0]], axis=1),
         (2, 4, 3), domains=(DISTINCT,))
for _method in ("hazen", "nearest", "midpoint", "inverted_cdf", "median_unbiased"):
    R += one(f"quantile_{_method}",
             lambda x, m=_method: dnp.quantile(x, [0.2, 0.55], axis=-1, method=m),
             (2, 4), domains=(DISTINCT,))
R += unary("percentile", lambda x: dnp.percentile(x, [10, 90], axis=0), DISTINCT,
           shapes=[((4,),), ((3, 2),)])
R += unary("quantile_float32", lambda x: dnp.quantile(x, 0.4, axis=1), SPREAD32,
           shapes=[((2, 3),)])
# Ties built on purpose, in a direction where the order statistic is still smooth: shared.
R += unary("median_ties", lambda x: dnp.median(dnp.stack([x, x, x + 3.0]), axis=0))
R += unary("quantile_ties",
           lambda x: dnp.quantile(dnp.stack([x - 1.0, x, x, x]), 0.4, axis=0),
           shapes=[((3,),), ((2, 3),)])
R += unary("nanmedian", lambda x: dnp.nanmedian(with_nan(x), axis=-1), DISTINCT,
           shapes=NAN_SHAPES[:2])
R += one("nanmedian_all", lambda x: dnp.nanmedian(with_nan(x)), (2, 3, 4),
         domains=(DISTINCT,))
R += one("nanquantile", lambda x: dnp.nanquantile(with_nan(x), [0.3, 0.8], axis=-1),
         (2, 3, 4), domains=(DISTINCT,))
R += one("nanpercentile", lambda x: dnp.nanpercentile(with_nan(x), 40, axis=1,
                                                      method="weibull"),
         (2, 3, 4), domains=(DISTINCT,))

# --- differences, gradients, integrals ------------------------------------------------------
R += unary("diff", dnp.diff, shapes=[((4,),), ((2, 3),)])
R += one("diff_n2_axis0", lambda x: dnp.diff(x, n=2, axis=0), (4, 3))
R += records("diff_prepend_append",
             lambda x, p: dnp.diff(x, axis=1, prepend=p, append=0.5),
             [((2, 3), (2, 1)), ((2, 3), ())])
R += unary("ediff1d", dnp.ediff1d, shapes=[((4,),), ((2, 3),)])
R += records("ediff1d_ends", lambda x, b: dnp.ediff1d(x, to_begin=b, to_end=[1.0, 2.0]),
             [((4,), (2,)), ((2, 3), ())])
R += unary("gradient", dnp.gradient, shapes=[((4,),), ((3, 4),)])
R += one("gradient_edge2_axis", lambda x: dnp.gradient(x, 0.5, axis=-1, edge_order=2),
         (2, 4))
R += records("gradient_coordinates",
             lambda f, h: dnp.gradient(f, dnp.cumsum(h), axis=0),
             [((4,), (4,)), ((4, 2), (4,))], (REAL, POSITIVE))
R += records("gradient_coordinates_edge2",
             lambda f, h: dnp.gradient(f, dnp.cumsum(h), edge_order=2),
             [((4,), (4,)), ((3,), (3,))], (REAL, POSITIVE))
R += one("gradient_spacing", lambda f, h: dnp.gradient(f, h, 2.0), (3, 4), (),
         domains=(REAL, POSITIVE))
R += unary("trapezoid", dnp.trapezoid, shapes=[((4,),), ((2, 3),)])
R += records("trapezoid_x", lambda y, h: dnp.trapezoid(y, dnp.cumsum(h), axis=0),
             [((4,), (4,)), ((3, 2), (3,))], (REAL, POSITIVE))
R += one("trapezoid_dx", lambda y, dx: dnp.trapezoid(y, dx=dx), (2, 3), (),
         domains=(REAL, POSITIVE))

# --- covariance and correlation -------------------------------------------------------------
R += unary("cov", dnp.cov, shapes=[((4,),), ((2, 4),)])
R += records("cov_y", lambda m, y: dnp.cov(m, y, rowvar=False),
             [((4, 2), (4,)), ((3, 2), (3, 2))])
R += one("cov_bias_fweights", lambda m: dnp.cov(m, bias=True, fweights=[1, 2, 1, 3]), (2, 4))
R += one("cov_aweights", lambda m, w: dnp.cov(m, aweights=w, fweights=[2, 1, 1, 1]),
         (2, 4), (4,), domains=(REAL, POSITIVE))
# Small values around fixed patterns: no row is nearly constant (corrcoef divides by its std)
# and no two rows are nearly proportional (correlation near the clip at +-1).
_NOISE = Domain("small noise", -0.25, 0.25)
_PATTERN = np.array([[0.0, 1.0, 2.0, 3.0], [3.0, 1.0, 0.0, 2.0], [1.0, 3.0, 2.0, 0.0]])
R += one("corrcoef", lambda x: dnp.corrcoef(x + _PATTERN), (3, 4), domains=(_NOISE,))
R += one("corrcoef_y", lambda x, y: dnp.corrcoef(x + _PATTERN[0], y + _PATTERN[1]),
         (4,), (4,), domains=(_NOISE,))

RECORDS = R
