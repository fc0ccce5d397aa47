"""Edge samples of the reductions, order statistics and statistics (tests/records/ops/reductions.py,
statistics.py, arrays.py): ties, infinities, zeros in products, NaN
entries and all-NaN slices for the nan-reductions, constant data for the moments."""

import numpy as np
import scipy.special

from ..edge_sample import edge, kink
from ..masks import NAN_MASKS

INF, NAN = np.inf, np.nan
E = []


def _nan(x):
    """The NaN mask the nan-records put on an argument of this shape."""
    return np.where(NAN_MASKS[np.shape(x)], NAN, x)


def _with_masked_nan(reference):
    return lambda x: reference(_nan(x))


# --- sums, means, products ------------------------------------------------------------------
E += kink("sum_all", [INF, 1.0, -INF], jacobian=1.0, ref=np.sum)
E += edge("sum_all", [0.0, -0.0], ref=np.sum, label="signed_zeros")
E += kink("mean_all", [INF, 1.0], jacobian=0.5, ref=np.mean)
E += kink("mean_axis0", [[INF, 1.0, NAN], [1.0, 2.0, 3.0]], ref=lambda x: np.mean(x, axis=0),
          jacobian=np.hstack([0.5 * np.eye(3), 0.5 * np.eye(3)]))
E += edge("prod_all", [0.0, 2.0, 3.0], ref=np.prod, label="one_zero")
E += edge("prod_all", [0.0, -0.0, 3.0], ref=np.prod, label="two_zeros")
E += edge("prod_all", [[0.0, 2.0, 0.0], [1.5, 0.0, 3.0]], ref=np.prod, label="three_zeros")
E += edge("prod_axis0", [[0.0, 2.0, 0.0], [1.5, 0.0, 0.0]], ref=lambda x: np.prod(x, axis=0))
E += kink("prod_all", [INF, 0.0, 2.0], ref=np.prod, label="inf*0",
          jacobian=[[0.0, INF, NAN]])
E += edge("prod_one_zero", [0.0, 2.0, 3.0, 4.0], differentiable=True,
          ref=lambda x: np.prod(x * [1.0, 0.0, 1.0, 1.0], axis=-1))
E += edge("cumprod_flat", [[2.0, 0.0, 3.0], [0.0, 4.0, 5.0]], ref=np.cumprod)
E += edge("cumprod_axis0", [[2.0, 0.0, 3.0], [0.0, 4.0, 0.0]],
          ref=lambda x: np.cumprod(x, axis=0))
E += kink("cumsum_flat", [[INF, 1.0, -INF], [1.0, 2.0, 3.0]], ref=np.cumsum,
          jacobian=np.tril(np.ones((6, 6))))

# --- max, min, logsumexp: ties and infinities -----------------------------------------------
E += kink("max_all", [1.0, 3.0, 3.0], ref=np.max, jacobian=[[0.0, 0.5, 0.5]])
E += kink("max_all", [2.0, 2.0, 2.0], ref=np.max, jacobian=1 / 3, label="all_equal")
E += kink("max_all", [-INF, -INF], ref=np.max, jacobian=0.5, label="-inf")
E += kink("max_axis0", [[1.0, 2.0, 0.0], [1.0, -2.0, -0.0]], ref=lambda x: np.max(x, axis=0),
          jacobian=np.hstack([np.diag([0.5, 1.0, 0.5]), np.diag([0.5, 0.0, 0.5])]))
E += kink("min_all", [3.0, 1.0, 1.0, 1.0], ref=np.min, jacobian=[[0.0, 1 / 3, 1 / 3, 1 / 3]])
E += kink("min_axis-1_keepdims", [[INF, INF, 1.0], [0.0, -0.0, 1.0]],
          ref=lambda x: np.min(x, axis=-1, keepdims=True),
          jacobian=[[0, 0, 1.0, 0, 0, 0], [0, 0, 0, 0.5, 0.5, 0]])
E += edge("max_all", [NAN, 1.0, 2.0], ref=np.max, label="nan", differentiable=False)
E += kink("max_ties", [0.0, -6.0], ref=lambda x: np.max(np.stack([x, x, 0.5 * x - 3.0]),
                                                        axis=0),
          jacobian=np.diag([1.0, 2.5 / 3]))   # at -6 all three tie: (1 + 1 + 1/2) / 3
E += kink("min_ties", [0.0, 6.0], ref=lambda x: np.min(np.stack([x, x, 0.5 * x + 3.0]),
                                                       axis=0),
          jacobian=np.diag([1.0, 2.5 / 3]))
E += edge("logsumexp_all", [1000.0, 1000.0, -1000.0], ref=scipy.special.logsumexp)
E += kink("logsumexp_all", [0.0, -INF], ref=scipy.special.logsumexp, jacobian=[[1.0, 0.0]])
E += kink("logsumexp_all", [-INF, -INF], ref=scipy.special.logsumexp, label="all_-inf",
          jacobian=0.5)
E += kink("logsumexp_all", [INF, 1.0], ref=scipy.special.logsumexp, label="inf",
          jacobian=[[1.0, 0.0]])
E += kink("logsumexp_all", [INF, INF], ref=scipy.special.logsumexp, label="two_inf",
          jacobian=0.5)
E += edge("argmax", [1.0, 3.0, 3.0, NAN], label="ties,nan")
E += edge("argmin_axis1", np.array([[[1.0, 1.0, 2.0, 3.0]] * 3] * 2),
          ref=lambda x: np.argmin(x, axis=1))

# --- moments ---------------------------------------------------------------------------------
E += edge("var", [2.0, 2.0, 2.0, 2.0], label="constant")
E += edge("var_axis_ddof", [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]],
          ref=lambda x: np.var(x, axis=0, ddof=1))
E += kink("std", [2.0, 2.0, 2.0, 2.0], label="constant", jacobian=0.0, hessian=0.0)
E += kink("std_axis_ddof", [[1.0, 1.0, 1.0], [0.0, 3.0, 0.0]], ulps=2, jacobian=np.vstack(
    [np.zeros(6), [0, 0, 0, -1 / np.sqrt(3) / 2, 1 / np.sqrt(3), -1 / np.sqrt(3) / 2]]),
    ref=lambda x: np.std(x, axis=-1, ddof=1))
# second order: finite differences of a gradient of size 1e150 cannot resolve the O(1) part
E += edge("var", [1e150, -1e150, 0.0, 1.0], label="huge", second_order=False)
E += kink("ptp", [1.0, 1.0, 3.0, 3.0], jacobian=[[-0.5, -0.5, 0.5, 0.5]])
E += edge("average_weights_axis", [[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]], [0.0, 1.0, 1.0],
          ref=lambda a, w: np.average(a, axis=1, weights=w), label="zero_weight")

# --- nan-reductions: NaN entries get derivative 0, an all-NaN slice derivative 0 ---------------
_ALL_NAN_4 = [NAN, 1.0, NAN, NAN]          # the record's mask adds NaN at index 1
E += edge("nansum", [NAN, 1.0, 2.0, -0.0], ref=_with_masked_nan(np.nansum))
E += edge("nansum", _ALL_NAN_4, ref=_with_masked_nan(np.nansum), label="all_nan")
E += edge("nanprod", [NAN, 1.0, 0.0, 3.0], ref=_with_masked_nan(lambda x: np.nanprod(x, -1)))
E += kink("nanmean", [[NAN, 1.0, 2.0], [NAN, 3.0, 4.0]], jacobian=[
    [0, 0, 0, 0, 0, 0], [0, 0.5, 0, 0, 0.5, 0], [0, 0, 1.0, 0, 0, 0]],
    ref=_with_masked_nan(lambda x: np.nanmean(x, axis=0)), label="all_nan_column")
E += kink("nanmax", [[NAN, 1.0, 1.0], [NAN, 3.0, 2.0]], jacobian=[
    [0, 0.5, 0.5, 0, 0, 0], [0, 0, 0, 0, 1.0, 0]],
    ref=_with_masked_nan(lambda x: np.nanmax(x, axis=-1)), label="tie,nan")
E += kink("nanmax", _ALL_NAN_4, jacobian=0.0, label="all_nan",
          ref=_with_masked_nan(lambda x: np.nanmax(x, axis=-1)))
E += kink("nanmin", [[NAN, 1.0, 1.0], [1.0, 3.0, NAN]], jacobian=[[0, 1 / 3, 1 / 3, 1 / 3, 0, 0]],
          ref=_with_masked_nan(np.nanmin), label="ties,nan")
E += kink("nanvar", _ALL_NAN_4, jacobian=0.0, label="all_nan",
          ref=_with_masked_nan(lambda x: np.nanvar(x, axis=-1)))
E += edge("nanvar", [[2.0, 1.0, 1.0], [NAN, 3.0, 5.0]],
          ref=_with_masked_nan(lambda x: np.nanvar(x, axis=-1)))
E += kink("nanstd", [[2.0, 1.0, 1.0], [2.0, 1.0, 5.0]], jacobian=0.0, label="constant_columns",
          ref=_with_masked_nan(lambda x: np.nanstd(x, axis=0)))
E += edge("nanargmax", [1.0, 2.0, 2.0, NAN], ref=_with_masked_nan(np.nanargmax))
E += kink("nancumsum", [[NAN, 1.0, INF], [1.0, 2.0, NAN]], jacobian=np.kron(
    np.eye(2), np.tril(np.ones((3, 3)))) * np.array([0, 1, 1, 1, 1, 0]),
    ref=_with_masked_nan(lambda x: np.nancumsum(x, axis=1)))
E += edge("nancumprod", [NAN, 1.0, 0.0, 2.0], ref=_with_masked_nan(np.nancumprod))

# --- order statistics: ties are shared as max's are -------------------------------------------
E += kink("median", [1.0, 1.0, 3.0], jacobian=[[0.5, 0.5, 0.0]])
E += kink("median", [2.0, 2.0, 2.0], jacobian=1 / 3, label="all_equal")
E += kink("median", [1.0, 2.0, 2.0, 3.0], jacobian=[[0.0, 0.5, 0.5, 0.0]], label="even")
E += edge("median", [1.0, 2.0, 4.0, 3.0], label="even_distinct")
E += edge("median", [1.0, NAN, 3.0], label="nan", differentiable=False)
E += kink("median_axis", [[1.0, 1.0, 1.0], [0.0, 5.0, 0.0]],
          ref=lambda x: np.median(x, axis=-1), jacobian=np.vstack(
              [[1 / 3] * 3 + [0] * 3, [0] * 3 + [0.5, 0, 0.5]]))
E += kink("quantile_scalar", [[1.0, 0.0, 2.0], [1.0, 0.0, 5.0], [1.0, 3.0, 2.0],
                              [0.0, 3.0, 2.0]],
          ref=lambda x: np.quantile(x, 0.3, axis=0), jacobian=None)
E += kink("median_ties", [0.0, -1.0], ref=lambda x: np.median(np.stack([x, x, x + 3.0]),
                                                              axis=0),
          jacobian=np.eye(2))
E += kink("nanmedian", [[NAN, 1.0, 1.0], [NAN, 3.0, 2.0]], jacobian=[
    [0, 0.5, 0.5, 0, 0, 0], [0, 0, 0, 0, 1.0, 0]],
    ref=_with_masked_nan(lambda x: np.nanmedian(x, axis=-1)))
E += kink("nanmedian", _ALL_NAN_4, jacobian=0.0, label="all_nan",
          ref=_with_masked_nan(lambda x: np.nanmedian(x, axis=-1)))
E += kink("sort", [1.0, 1.0, 0.0, 1.0], jacobian=np.eye(4)[[2, 0, 1, 3]])
E += kink("sort", [NAN, 1.0, -INF, 1.0], jacobian=np.eye(4)[[2, 1, 3, 0]], label="nan,inf")
E += kink("sort_ties", [1.0, 1.0, 0.0], ref=lambda x: np.sort(np.concatenate([x, x, x[:1]])),
          jacobian=np.array([[0, 0, 1], [0, 0, 1], [1, 0, 0], [0, 1, 0], [1, 0, 0],
                             [0, 1, 0], [1, 0, 0]], float))
E += kink("partition", [1.0, 1.0, 1.0, 0.0, 2.0, 1.0], ref=lambda x: np.partition(x, 2),
          jacobian=None)
E += edge("argsort", [1.0, 1.0, 0.0, NAN])
E += edge("searchsorted", [0.0, 1.0, 1.0, 2.0], [1.0, 1.0, NAN],
          ref=lambda a, v: np.searchsorted(np.sort(a), v))
E += edge("searchsorted_right", [0.0, 1.0, 1.0, 2.0, 2.0, 3.0], [1.0, 2.0, 3.0],
          ref=lambda a, v: np.searchsorted(np.sort(a), v, side="right"))

# --- interp at the knots: the slope of the segment to the right -----------------------------
_XP = np.array([-1.5, -0.4, 0.3, 1.1])
_FP = [0.0, 1.1, 0.4, 2.0]
E += kink("interp", [-0.4, 0.3, 1.1], _FP, ref=lambda x, fp: np.interp(x, _XP, fp),
          jacobian=np.hstack([np.diag([-1.0, 2.0, 2.0]), np.array(
              [[0, 1.0, 0, 0], [0, 0, 1.0, 0], [0, 0, 0, 1.0]])]), label="knots")
E += kink("interp", [-3.0, 5.0], _FP, ref=lambda x, fp: np.interp(x, _XP, fp),
          jacobian=np.hstack([np.zeros((2, 2)), np.array([[1.0, 0, 0, 0], [0, 0, 0, 1.0]])]),
          label="outside")

# --- statistics of differences and covariances ------------------------------------------------
E += kink("cov", [1.0, 1.0, 1.0, 1.0], jacobian=0.0, label="constant")
E += edge("corrcoef", np.zeros((3, 4)), label="patterned", ulps=4,
          ref=lambda x: np.corrcoef(x + np.array([[0.0, 1.0, 2.0, 3.0], [3.0, 1.0, 0.0, 2.0],
                                                  [1.0, 3.0, 2.0, 0.0]])))
E += edge("diff", [INF, 1.0, 2.0, 2.0], differentiable=False,
          jacobian=[[-1, 1, 0, 0], [0, -1, 1, 0], [0, 0, -1, 1]])
E += edge("gradient", [0.0, 0.0, 0.0, 0.0], label="zeros")
E += edge("trapezoid", [0.0, -0.0, 0.0, 0.0], label="zeros")
EDGES = E
