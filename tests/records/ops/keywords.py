"""Records of NumPy's keywords on the reductions (``dtype``, ``initial``, ``where``) and of
the differentiable sample spacings (``linspace``, ``logspace``, ``geomspace``).

Many records call plain NumPy (``np.sum(x, where=...)``), as unchanged NumPy code does: the
traced value routes the call, keywords included, to diffkit.numpy. Masks are fixed per shape
(under vmap the function sees one example's shape) and some empty a whole slice, so that the
identity or ``initial`` stands for it. ``mean`` records keep a slice non-empty (an empty one
is NaN, whose finite differences are NaN; tests/ops/test_keywords.py checks that case).
Initial values of ``max``/``min`` lie off the ``DISTINCT`` grid, so they never tie.
"""

import numpy as np

import diffkit.numpy as dnp

from ..domains import DISTINCT, NONZERO, POSITIVE, REAL, REAL32, Domain
from ..op_record import one, records, unary

# Masks for shapes (4,), (2, 3), (2, 3, 4): row 1 of (2, 3) and slice [1, 2, :] of (2, 3, 4)
# keep nothing.
_MASK_23 = np.array([[True, False, True], [False, False, False]])
_MASK_234 = np.arange(24).reshape(2, 3, 4) % 3 != 1
_MASK_234[1, 2, :] = False
MASKS = {(4,): np.array([True, False, True, True]), (2, 3): _MASK_23, (2, 3, 4): _MASK_234}
# Masks that keep at least one entry of every slice along the last axis (for means).
KEEPING = {(4,): MASKS[(4,)], (2, 3): np.array([[True, False, True], [False, True, False]]),
           (2, 3, 4): np.arange(24).reshape(2, 3, 4) % 3 != 1}


def masked(x):
    return MASKS[x.shape]


def keeping(x):
    return KEEPING[x.shape]


def _with_nan(x):
    """``x`` with NaN at every fifth entry (flat): every slice that ``keeping`` keeps still
    holds a number, while ``masked`` leaves some slices with NaN only or nothing."""
    nan_at = np.zeros(x.shape, bool)
    nan_at.flat[::5] = True
    return dnp.where(nan_at, np.nan, x)


MASK_SHAPES = [((4,),), ((2, 3),), ((2, 3, 4),)]
AWAY = Domain("away from 0.3", avoid=(0.3,), margin=0.1)   # for masks x > 0.3
NEGATIVE = Domain("negative", -3.0, -0.2)
SMALLISH = Domain("small", -1.0, 1.0)
OFF_GRID = Domain("between DISTINCT's grid points 0 and 1/32", 0.005, 0.025)

RECORDS = []

# --- sum and prod ---------------------------------------------------------------------------
RECORDS += one("sum_dtype_float64", lambda x: np.sum(x, axis=1, dtype=np.float64), (2, 3),
               domains=(REAL32,))
RECORDS += one("sum_dtype_float32", lambda x: dnp.sum(x, dtype=np.float32), (2, 3))
RECORDS += unary("sum_initial", lambda x: np.sum(x, axis=-1, initial=1.5),
                 shapes=MASK_SHAPES)
RECORDS += unary("sum_where", lambda x: np.sum(x, axis=-1, where=masked(x)),
                 shapes=MASK_SHAPES)
RECORDS += one("sum_where_initial_keepdims",
               lambda x: dnp.sum(x, axis=(0, 2), keepdims=True, initial=-0.5,
                                 where=masked(x)), (2, 3, 4))
RECORDS += one("sum_where_broadcast", lambda x: dnp.sum(x, axis=0, where=[True, False, True]),
               (2, 3))
RECORDS += unary("sum_where_traced", lambda x: np.sum(x * x, axis=-1, where=x > 0.3), AWAY,
                 shapes=MASK_SHAPES[1:])
RECORDS += one("sum_method_keywords", lambda x: x.sum(axis=1, initial=2.0, where=masked(x)),
               (2, 3))
RECORDS += records("sum_initial_traced", lambda x, s: dnp.sum(x, axis=0, initial=s),
                   [((2, 3), ())], (REAL, REAL))
RECORDS += unary("prod_where_initial",
                 lambda x: np.prod(x, axis=-1, initial=-1.5, where=masked(x)), NONZERO,
                 shapes=MASK_SHAPES)
RECORDS += one("prod_dtype", lambda x: np.prod(x, axis=0, dtype=np.float64), (2, 3),
               domains=(REAL32,))

# --- max and min -----------------------------------------------------------------------------
RECORDS += unary("max_where_initial",
                 lambda x: np.max(x, axis=-1, initial=-0.01, where=masked(x)), DISTINCT,
                 shapes=MASK_SHAPES)
RECORDS += unary("min_where_initial",
                 lambda x: np.min(x, axis=-1, initial=0.01, where=masked(x)), DISTINCT,
                 shapes=MASK_SHAPES)
RECORDS += one("amax_initial", lambda x: dnp.amax(x, axis=(0, 2), initial=0.51), (2, 3, 4),
               domains=(DISTINCT,))
RECORDS += one("amin_where_keepdims",
               lambda x: dnp.amin(x, axis=1, keepdims=True, initial=1.01, where=masked(x)),
               (2, 3), domains=(DISTINCT,))
RECORDS += one("max_method_keywords", lambda x: x.max(axis=0, initial=-0.01, where=x > 0.3),
               (2, 3), domains=(Domain("distinct, away from 0.3", distinct=True, margin=1 / 32,
                                       avoid=(0.3,)),))
RECORDS += records("max_initial_traced", lambda x, s: dnp.max(x, axis=1, initial=s,
                                                                 where=masked(x)),
                   [((2, 3), ())], (DISTINCT, OFF_GRID))

# --- mean -------------------------------------------------------------------------------------
RECORDS += unary("mean_where", lambda x: np.mean(x, axis=-1, where=keeping(x)),
                 shapes=MASK_SHAPES)
RECORDS += one("mean_where_all_axes", lambda x: dnp.mean(x, where=masked(x)), (2, 3, 4))
RECORDS += one("mean_where_keepdims",
               lambda x: dnp.mean(x, axis=(0, 2), keepdims=True, where=masked(x)), (2, 3, 4))
# x > 0.3 or in the first column: never an empty slice, whatever values are drawn
RECORDS += one("mean_where_traced",
               lambda x: np.mean(x, axis=1, where=(x > 0.3) | (np.arange(4) == 0)), (3, 4),
               domains=(AWAY,))
RECORDS += one("mean_dtype", lambda x: np.mean(x, axis=1, dtype=np.float64), (2, 3),
               domains=(REAL32,))
RECORDS += one("mean_method_where", lambda x: x.mean(axis=1, where=keeping(x)), (2, 3))

# --- nan-reductions ---------------------------------------------------------------------------
RECORDS += unary("nansum_where", lambda x: np.nansum(_with_nan(x), axis=-1, where=masked(x)),
                 shapes=MASK_SHAPES)
RECORDS += one("nansum_where_initial_dtype",
               lambda x: dnp.nansum(_with_nan(x), axis=0, dtype=np.float64, initial=0.5,
                                    where=masked(x)), (2, 3), domains=(REAL32,))
RECORDS += unary("nanprod_where", lambda x: np.nanprod(_with_nan(x), axis=-1, where=masked(x)),
                 NONZERO, shapes=MASK_SHAPES)
RECORDS += unary("nanmean_where",
                 lambda x: np.nanmean(_with_nan(x), axis=-1, where=keeping(x)),
                 shapes=[((4,),), ((2, 3, 4),)])
RECORDS += unary("nanmax_where_initial",
                 lambda x: np.nanmax(_with_nan(x), axis=-1, initial=-0.01, where=masked(x)),
                 DISTINCT, shapes=MASK_SHAPES)
RECORDS += unary("nanmin_where_initial",
                 lambda x: np.nanmin(_with_nan(x), axis=-1, initial=0.01, where=masked(x)),
                 DISTINCT, shapes=MASK_SHAPES)
RECORDS += one("nanvar_where", lambda x: np.nanvar(x, axis=-1, where=keeping(x)), (2, 3, 4))
RECORDS += one("nanstd_where", lambda x: np.nanstd(
    x, axis=1, where=np.array([[True, True, False], [False, True, True]])), (2, 3),
    domains=(Domain("distinct, spread", -4.0, 4.0, distinct=True, margin=0.25),))
RECORDS += records("nanvar_mean", lambda x, m: dnp.nanvar(_with_nan(x), axis=1, mean=m),
                   [((2, 3, 4), (2, 1, 4))], (REAL, REAL))

# --- sample spacings --------------------------------------------------------------------------
RECORDS += records("linspace", lambda a, b: np.linspace(a, b, 4),
                   [((), ()), ((3,), ()), ((3,), (2, 1))], (REAL, REAL))
RECORDS += records("linspace_no_endpoint_axis", lambda a, b: dnp.linspace(
    a, b, num=3, endpoint=False, axis=-1), [((2,), (2,))], (REAL, REAL))
RECORDS += records("linspace_retstep", lambda a, b: dnp.linspace(a, b, 4, retstep=True),
                   [((), ()), ((2,), ())], (REAL, REAL))
RECORDS += unary("linspace_one_sample", lambda a: dnp.linspace(a, 2.0, num=1),
                 shapes=[((),), ((3,),)])
RECORDS += unary("linspace_traced_stop", lambda b: np.linspace(np.array([0.0, 1.0]), b, 3),
                 shapes=[((),), ((2,),)])
RECORDS += records("logspace", lambda a, b: np.logspace(a, b, 4),
                   [((), ()), ((2,), ())], (SMALLISH, SMALLISH))
RECORDS += records("logspace_base", lambda a, base: dnp.logspace(a, 1.0, 3, base=base, axis=-1),
                   [((), ()), ((2,), (2,))], (SMALLISH, POSITIVE))
RECORDS += records("geomspace", lambda a, b: np.geomspace(a, b, 4),
                   [((), ()), ((3,), ())], (POSITIVE, POSITIVE))
RECORDS += records("geomspace_negative_axis",
                   lambda a, b: dnp.geomspace(a, b, 3, endpoint=False, axis=-1),
                   [((2,), (2,))], (NEGATIVE, NEGATIVE))
