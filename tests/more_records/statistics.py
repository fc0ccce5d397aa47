"""Records of diffkit.ops.statistics (and the cumulative primitives of reductions.py).

Domains keep order statistics apart (``DISTINCT``: no ties, so finite differences see one
smooth piece) except in the ``*_ties`` records, which build ties on purpose along a
direction where the function stays smooth. NaN entries come from fixed masks (``where``
with NaN), so the nan-reductions see NaN in the same places in every example; zeros for
the zero-safe products come from fixed 0/1 factors.
"""

import numpy as np
from op_records import DISTINCT, POSITIVE, REAL, REAL32, Domain, _one, _records, unary

import diffkit.numpy as dnp

# Entries at least 1/4 apart: a standard deviation far enough from its kink at 0 (constant
# data) for finite differences of second derivatives, which grow like 1/std.
SPREAD = Domain("distinct, spread", -4.0, 4.0, distinct=True, margin=0.25)
SPREAD32 = Domain("distinct, spread, float32", -4.0, 4.0, distinct=True, margin=0.25,
                  dtype=np.float32)

# NaN masks for shapes (4,), (2, 3), (2, 3, 4); the last has an all-NaN row along axis 2.
_MASK_4 = np.array([False, True, False, False])
_MASK_23 = np.array([[True, False, False], [False, False, True]])
_MASK_234 = np.zeros((2, 3, 4), bool)
_MASK_234[0, 1, 2] = _MASK_234[1, 0, 0] = _MASK_234[1, 2, 1] = _MASK_234[1, 2, 3] = True
_MASKS = {(4,): _MASK_4, (2, 3): _MASK_23, (2, 3, 4): _MASK_234}


def _with_nan(x):
    """``x`` with NaN at the mask for its (example) shape: vmap passes one example's shape."""
    return dnp.where(_MASKS[x.shape], np.nan, x)


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
R += _one("cumprod_reverse_zeros", lambda x: dnp.cumprod(_zeros(x, 3, 5)[::-1], axis=0),
          (4, 2))
R += unary("cumprod_float32", lambda x: dnp.cumprod(x, axis=1), REAL32, shapes=[((2, 3),)])
R += unary("cumulative_sum_initial",
           lambda x: dnp.cumulative_sum(x, axis=1, include_initial=True), shapes=[((2, 3),)])
R += unary("cumulative_prod", lambda x: dnp.cumulative_prod(x), shapes=[((4,),)])
R += unary("nancumsum", lambda x: dnp.nancumsum(_with_nan(x), axis=1),
           shapes=[((2, 3),), ((2, 3, 4),)])
R += unary("nancumprod", lambda x: dnp.nancumprod(_with_nan(x)), shapes=[((4,),), ((2, 3),)])

# --- products with zeros: exact without division ----------------------------------------------
R += unary("prod_one_zero", lambda x: dnp.prod(_zeros(x, 1), axis=-1),
           shapes=[((4,),), ((2, 3),)])
R += _one("prod_two_zeros", lambda x: dnp.prod(_zeros(x, 1, 4)), (2, 3))
# Over axes 0 and 1 of (2, 4, 3): column 0 holds two zeros, column 1 one, column 2 none.
R += _one("prod_zeros_axes", lambda x: dnp.prod(_zeros(x, 0, 15, 4), axis=(0, 1)), (2, 4, 3))
R += unary("prod_of_tracer_product", lambda x: dnp.prod(x * x, axis=1), shapes=[((2, 3),)])

# --- moments --------------------------------------------------------------------------------
MOMENT_SHAPES = [((4,),), ((2, 3),), ((2, 3, 4),)]
R += unary("var", dnp.var, shapes=MOMENT_SHAPES)
R += unary("var_axis_ddof", lambda x: dnp.var(x, axis=0, ddof=1), shapes=MOMENT_SHAPES[1:])
R += _one("var_axes_keepdims", lambda x: dnp.var(x, axis=(0, 2), keepdims=True), (2, 3, 4))
R += _one("var_where", lambda x: dnp.var(x, axis=1, where=np.array([True, False, True])),
          (2, 3))
R += unary("std", dnp.std, SPREAD, shapes=MOMENT_SHAPES[:2])
R += _one("std_large", dnp.std, (2, 3, 4), domains=(DISTINCT,))  # 24 entries: spread anyway
R += _one("std_axis_ddof", lambda x: dnp.std(x, axis=-1, ddof=1), (2, 3), domains=(SPREAD,))
R += unary("std_float32", lambda x: dnp.std(x, axis=1), SPREAD32, shapes=[((2, 3),)])
R += _records("average_weights_axis", lambda a, w: dnp.average(a, axis=1, weights=w),
              [((2, 3), (3,)), ((2, 3, 4), (3,))], (REAL, POSITIVE))
R += _records("average_weights_full", lambda a, w: dnp.average(a, weights=w, returned=True),
              [((3,), (3,)), ((2, 3), (2, 3))], (REAL, POSITIVE))
R += _one("average_weights_axes", lambda a, w: dnp.average(a, axis=(2, 0), weights=w),
          (2, 3, 4), (4, 2), domains=(REAL, POSITIVE))
R += _one("average_unweighted", lambda a: dnp.average(a, axis=0, returned=True), (2, 3))
R += unary("ptp", dnp.ptp, DISTINCT, shapes=[((4,),), ((2, 3),)])
R += _one("ptp_axis", lambda x: dnp.ptp(x, axis=1, keepdims=True), (2, 3, 4),
          domains=(DISTINCT,))

# --- nan-reductions -------------------------------------------------------------------------
NAN_SHAPES = [((4,),), ((2, 3),), ((2, 3, 4),)]
R += unary("nansum", lambda x: dnp.nansum(_with_nan(x)), shapes=NAN_SHAPES)
R += _one("nansum_axis", lambda x: dnp.nansum(_with_nan(x), axis=2), (2, 3, 4))
R += unary("nanprod", lambda x: dnp.nanprod(_with_nan(x), axis=-1), shapes=NAN_SHAPES)
R += unary("nanmean", lambda x: dnp.nanmean(_with_nan(x), axis=0), shapes=NAN_SHAPES)
R += _one("nanmean_axis2", lambda x: dnp.nanmean(_with_nan(x), axis=(0, 2)), (2, 3, 4))
R += unary("nanmax", lambda x: dnp.nanmax(_with_nan(x), axis=-1), DISTINCT,
           shapes=NAN_SHAPES[:2])
R += unary("nanmin", lambda x: dnp.nanmin(_with_nan(x)), DISTINCT, shapes=NAN_SHAPES)
R += unary("nanvar", lambda x: dnp.nanvar(_with_nan(x), axis=-1), shapes=NAN_SHAPES[:2])
R += _one("nanvar_ddof", lambda x: dnp.nanvar(_with_nan(x), axis=1, ddof=1), (2, 3, 4))
R += _one("nanstd", lambda x: dnp.nanstd(_with_nan(x), axis=0), (2, 3), domains=(SPREAD,))
R += unary("nanargmax", lambda x: dnp.nanargmax(_with_nan(x)), DISTINCT,
           zero_derivative=True, shapes=NAN_SHAPES[:2])

# --- order statistics -----------------------------------------------------------------------
ORDER_SHAPES = [((3,),), ((4,),), ((2, 3),), ((2, 3, 4),)]
R += unary("median", dnp.median, DISTINCT, shapes=ORDER_SHAPES)
R += unary("median_axis", lambda x: dnp.median(x, axis=-1), DISTINCT,
           shapes=ORDER_SHAPES[2:])
R += _one("median_axes_keepdims", lambda x: dnp.median(x, axis=(0, 2), keepdims=True),
          (2, 3, 4), domains=(DISTINCT,))
R += unary("quantile_scalar", lambda x: dnp.quantile(x, 0.3, axis=0), DISTINCT,
           shapes=ORDER_SHAPES[1:3])
R += _one("quantile_levels", lambda x: dnp.quantile(x, [[0.0, 0.25], [0.6, 1.0]], axis=1),
          (2, 4, 3), domains=(DISTINCT,))
for _method in ("hazen", "nearest", "midpoint", "inverted_cdf", "median_unbiased"):
    R += _one(f"quantile_{_method}",
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
R += unary("nanmedian", lambda x: dnp.nanmedian(_with_nan(x), axis=-1), DISTINCT,
           shapes=NAN_SHAPES[:2])
R += _one("nanmedian_all", lambda x: dnp.nanmedian(_with_nan(x)), (2, 3, 4),
          domains=(DISTINCT,))
R += _one("nanquantile", lambda x: dnp.nanquantile(_with_nan(x), [0.3, 0.8], axis=-1),
          (2, 3, 4), domains=(DISTINCT,))
R += _one("nanpercentile", lambda x: dnp.nanpercentile(_with_nan(x), 40, axis=1,
                                                        method="weibull"),
          (2, 3, 4), domains=(DISTINCT,))

# --- differences, gradients, integrals ------------------------------------------------------
R += unary("diff", dnp.diff, shapes=[((4,),), ((2, 3),)])
R += _one("diff_n2_axis0", lambda x: dnp.diff(x, n=2, axis=0), (4, 3))
R += _records("diff_prepend_append",
              lambda x, p: dnp.diff(x, axis=1, prepend=p, append=0.5),
              [((2, 3), (2, 1)), ((2, 3), ())])
R += unary("ediff1d", dnp.ediff1d, shapes=[((4,),), ((2, 3),)])
R += _records("ediff1d_ends", lambda x, b: dnp.ediff1d(x, to_begin=b, to_end=[1.0, 2.0]),
              [((4,), (2,)), ((2, 3), ())])
R += unary("gradient", dnp.gradient, shapes=[((4,),), ((3, 4),)])
R += _one("gradient_edge2_axis", lambda x: dnp.gradient(x, 0.5, axis=-1, edge_order=2),
          (2, 4))
R += _records("gradient_coordinates",
              lambda f, h: dnp.gradient(f, dnp.cumsum(h), axis=0),
              [((4,), (4,)), ((4, 2), (4,))], (REAL, POSITIVE))
R += _records("gradient_coordinates_edge2",
              lambda f, h: dnp.gradient(f, dnp.cumsum(h), edge_order=2),
              [((4,), (4,)), ((3,), (3,))], (REAL, POSITIVE))
R += _one("gradient_spacing", lambda f, h: dnp.gradient(f, h, 2.0), (3, 4), (),
          domains=(REAL, POSITIVE))
R += unary("trapezoid", dnp.trapezoid, shapes=[((4,),), ((2, 3),)])
R += _records("trapezoid_x", lambda y, h: dnp.trapezoid(y, dnp.cumsum(h), axis=0),
              [((4,), (4,)), ((3, 2), (3,))], (REAL, POSITIVE))
R += _one("trapezoid_dx", lambda y, dx: dnp.trapezoid(y, dx=dx), (2, 3), (),
          domains=(REAL, POSITIVE))

# --- covariance and correlation -------------------------------------------------------------
R += unary("cov", dnp.cov, shapes=[((4,),), ((2, 4),)])
R += _records("cov_y", lambda m, y: dnp.cov(m, y, rowvar=False),
              [((4, 2), (4,)), ((3, 2), (3, 2))])
R += _one("cov_bias_fweights", lambda m: dnp.cov(m, bias=True, fweights=[1, 2, 1, 3]), (2, 4))
R += _one("cov_aweights", lambda m, w: dnp.cov(m, aweights=w, fweights=[2, 1, 1, 1]),
          (2, 4), (4,), domains=(REAL, POSITIVE))
# Small values around fixed patterns: no row is nearly constant (corrcoef divides by its std)
# and no two rows are nearly proportional (correlation near the clip at +-1).
_NOISE = Domain("small noise", -0.25, 0.25)
_PATTERN = np.array([[0.0, 1.0, 2.0, 3.0], [3.0, 1.0, 0.0, 2.0], [1.0, 3.0, 2.0, 0.0]])
R += _one("corrcoef", lambda x: dnp.corrcoef(x + _PATTERN), (3, 4), domains=(_NOISE,))
R += _one("corrcoef_y", lambda x, y: dnp.corrcoef(x + _PATTERN[0], y + _PATTERN[1]),
          (4,), (4,), domains=(_NOISE,))

RECORDS = R
