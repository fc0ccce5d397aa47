"""Tests for diffkit.ops.statistics and the cumulative primitives of diffkit.ops.reductions.

What the generic checker (tests/records/ops/statistics.py) cannot express: values, dtypes
and keywords against NumPy itself, the conventions at nondifferentiable points (ties, zero
variance, NaN entries, zeros in products) in both engines, closed-form derivatives, and the
errors. Oracles: NumPy, closed forms, products computed entry by entry, Python loops.
"""

import warnings

import numpy as np
import pytest

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.core.primitive import PRIMITIVES
from diffkit.ops.reductions import cumprod_p, cumsum_p, recurrence_p
from diffkit.testing import check_grads, check_vmap

pytestmark = pytest.mark.filterwarnings("error::diffkit.errors.PerformanceWarning")

RTOL = 1e-7
rng = np.random.default_rng(0)
X = rng.normal(size=(3, 4, 6))
XN = X.copy()
XN[0, 1, 2] = np.nan
XN[1, :, 3] = np.nan     # an all-NaN slice along axis 1
XN[2, 2, :] = np.nan     # an all-NaN slice along axis 2
METHODS = ["inverted_cdf", "averaged_inverted_cdf", "closest_observation",
           "interpolated_inverted_cdf", "hazen", "weibull", "linear", "median_unbiased",
           "normal_unbiased", "lower", "higher", "midpoint", "nearest"]


def both_jacobians(f, x, exact=False):
    """jacfwd and jacrev of ``f`` at ``x``, asserted equal: identical with ``exact`` (the
    conventions at nondifferentiable points), else to rounding."""
    forward, reverse = dk.jacfwd(f)(x), dk.jacrev(f)(x)
    if exact:
        np.testing.assert_array_equal(forward, reverse)
    else:
        np.testing.assert_allclose(forward, reverse, rtol=1e-12, atol=1e-15)
    return forward


def assert_like_numpy(got, expected, rtol=1e-12):
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol, equal_nan=True)


# --- values, shapes and dtypes against NumPy ------------------------------------------------

VALUE_CASES = {
    "cumsum": lambda m: m.cumsum(X, axis=1),
    "cumsum flat": lambda m: m.cumsum(X),
    "cumsum int": lambda m: m.cumsum(np.arange(5, dtype=np.int32)),
    "cumsum bool": lambda m: m.cumsum(np.array([True, False, True])),
    "cumsum dtype": lambda m: m.cumsum(np.arange(4), dtype=np.float32),
    "cumprod": lambda m: m.cumprod(X, axis=-1),
    "cumprod float32": lambda m: m.cumprod(X[0].astype(np.float32), axis=0),
    "cumulative_sum": lambda m: m.cumulative_sum(X, axis=1, include_initial=True),
    "cumulative_prod": lambda m: m.cumulative_prod(X[0, 0], include_initial=True),
    "nancumsum": lambda m: m.nancumsum(XN, axis=2),
    "nancumprod": lambda m: m.nancumprod(XN, axis=0),
    "var": lambda m: m.var(X), "var axes ddof": lambda m: m.var(X, axis=(0, 2), ddof=1),
    "var keepdims": lambda m: m.var(X, axis=-2, keepdims=True),
    "var where": lambda m: m.var(X, axis=2, where=X > 0),
    "var correction": lambda m: m.var(X, axis=0, correction=1),
    "var mean": lambda m: m.var(X, axis=1, mean=np.mean(X, axis=1, keepdims=True)),
    "var float32": lambda m: m.var(X.astype(np.float32), axis=0),
    "var int": lambda m: m.var(np.arange(6)),
    "std": lambda m: m.std(X, axis=2, ddof=2), "std float32": lambda m: m.std(np.float32(X)),
    "nanvar": lambda m: m.nanvar(XN, axis=2, ddof=1),
    "nanstd": lambda m: m.nanstd(XN, axis=(0, 1), keepdims=True),
    "average": lambda m: m.average(X, axis=1),
    "average weights": lambda m: m.average(X, axis=1, weights=np.arange(1.0, 5)),
    "average axes weights": lambda m: m.average(X, axis=(2, 0), weights=np.outer(
        np.arange(1.0, 7), [1.0, 2.0, 0.5]), returned=True),
    "average full weights": lambda m: m.average(X, weights=np.abs(X), returned=True),
    "average returned": lambda m: m.average(X, axis=0, returned=True),
    "average int": lambda m: m.average(np.arange(4), weights=np.arange(1, 5), returned=True),
    "average keepdims": lambda m: m.average(X, axis=1, keepdims=True),
    "ptp": lambda m: m.ptp(X, axis=1), "ptp keepdims": lambda m: m.ptp(X, keepdims=True),
    "nansum": lambda m: m.nansum(XN, axis=1), "nansum int": lambda m: m.nansum(np.arange(3)),
    "nansum initial": lambda m: m.nansum(XN, axis=1, initial=2.0),
    "nanprod": lambda m: m.nanprod(XN, axis=2), "nanmean": lambda m: m.nanmean(XN, axis=2),
    "nanmean float32": lambda m: m.nanmean(XN.astype(np.float32), axis=0),
    "nanmax": lambda m: m.nanmax(XN, axis=2), "nanmin": lambda m: m.nanmin(XN, axis=(0, 2)),
    "nanmax int": lambda m: m.nanmax(np.arange(4)),
    "nanargmax": lambda m: m.nanargmax(XN[0], axis=1), "nanargmin": lambda m: m.nanargmin(XN),
    "median": lambda m: m.median(X, axis=1), "median all": lambda m: m.median(X),
    "median odd keepdims": lambda m: m.median(X[:, :3], axis=(1,), keepdims=True),
    "median int": lambda m: m.median(np.arange(6, dtype=np.int32)),
    "median float32": lambda m: m.median(X.astype(np.float32), axis=0),
    "median with NaN": lambda m: m.median(XN, axis=2),
    "quantile levels": lambda m: m.quantile(X, [[0.1, 0.5], [0.9, 1.0]], axis=(0, 2)),
    "quantile keepdims": lambda m: m.quantile(X, [0.2, 0.3], axis=1, keepdims=True),
    "percentile": lambda m: m.percentile(X, 37, axis=2, method="hazen"),
    "percentile float32": lambda m: m.percentile(X.astype(np.float32), 50),
    "nanmedian": lambda m: m.nanmedian(XN, axis=2), "nanmedian all": lambda m: m.nanmedian(XN),
    "nanquantile": lambda m: m.nanquantile(XN, [0.2, 0.7], axis=1, method="weibull"),
    "nanpercentile": lambda m: m.nanpercentile(XN, 90, axis=0, keepdims=True),
    "diff": lambda m: m.diff(X, n=2, axis=1), "diff n=0": lambda m: m.diff(X, n=0),
    "diff prepend append": lambda m: m.diff(X, axis=0, prepend=1.0, append=X[:1]),
    "diff bool": lambda m: m.diff(np.array([True, True, False])),
    "ediff1d": lambda m: m.ediff1d(X[0], to_begin=[1.0, 2.0], to_end=3.0),
    "gradient": lambda m: m.gradient(X),
    "gradient edge 2": lambda m: m.gradient(X, 0.5, axis=(2, 0), edge_order=2),
    "gradient coordinates": lambda m: m.gradient(X, np.array([0.0, 0.5, 1.7, 2.0]), axis=1,
                                                 edge_order=2),
    "gradient uniform coordinates": lambda m: m.gradient(X[0], np.arange(4.0), axis=0),
    "gradient mixed spacings": lambda m: m.gradient(X, np.array([0.0, 1, 1.5]),
                                                    np.array([0.0, 0.5, 1.7, 2.0]), 2.0),
    "gradient int": lambda m: m.gradient(np.arange(5) ** 2),
    "trapezoid": lambda m: m.trapezoid(X),
    "trapezoid x": lambda m: m.trapezoid(X, x=np.array([0.0, 1, 3]), axis=0),
    "trapezoid x full": lambda m: m.trapezoid(X, x=np.cumsum(np.abs(X), axis=1), axis=1),
    "trapezoid dx": lambda m: m.trapezoid(X, dx=0.3, axis=1),
    "cov": lambda m: m.cov(X[0]),
    "cov y": lambda m: m.cov(X[0], X[1], rowvar=False, bias=True),
    "cov weights": lambda m: m.cov(X[0], fweights=np.arange(1, 7),
                                   aweights=np.linspace(0.1, 1, 6), ddof=2),
    "cov 1-d": lambda m: m.cov(X[0, 0]),
    "cov no degrees of freedom": lambda m: m.cov(X[0], ddof=6),
    "corrcoef": lambda m: m.corrcoef(X[0]), "corrcoef y": lambda m: m.corrcoef(X[0, 0], X[0, 1]),
}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name", list(VALUE_CASES))
def test_values_shapes_and_dtypes_match_numpy(name):
    got, expected = VALUE_CASES[name](dnp), VALUE_CASES[name](np)
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected)
        for g, e in zip(got, expected):
            assert_like_numpy(g, e)
    else:
        assert_like_numpy(got, expected, rtol=1e-6 if np.asarray(expected).dtype ==
                          np.float32 else 1e-12)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("method", METHODS)
def test_every_quantile_method_matches_numpy(method):
    """Every size 1..24 and levels that hit sample points exactly (where the discontinuous
    methods jump) as well as levels between them."""
    for n in range(1, 25):
        y = rng.normal(size=(2, n))
        levels = np.unique(np.concatenate([np.linspace(0, 1, 4 * n + 1), np.arange(n + 1) / n,
                                           (np.arange(n) + 0.5) / n, rng.uniform(size=7)]))
        assert_like_numpy(dnp.quantile(y, levels, axis=1, method=method),
                          np.quantile(y, levels, axis=1, method=method))
        y[0, n // 2] = np.nan
        assert_like_numpy(dnp.nanquantile(y, levels, axis=1, method=method),
                          np.nanquantile(y, levels, axis=1, method=method))


def test_nan_reductions_warn_like_numpy_on_empty_slices():
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        dnp.nanmean(XN, axis=1)
    with pytest.warns(RuntimeWarning, match="All-NaN slice encountered"):
        dnp.nanmax(XN, axis=2)
    with pytest.warns(RuntimeWarning, match="Degrees of freedom"):
        dnp.nanvar(XN, axis=2, ddof=5)


# --- conventions at nondifferentiable points --------------------------------------------------


def test_median_ties_share_the_derivative_equally():
    x = np.array([1.0, 3.0, 1.0])
    np.testing.assert_array_equal(both_jacobians(dnp.median, x, exact=True), [0.5, 0.0, 0.5])
    np.testing.assert_array_equal(dk.grad(dnp.median)(x), [0.5, 0.0, 0.5])
    x = np.array([2.0, 2.0, 2.0, 5.0])  # even length: both middle statistics are tied
    np.testing.assert_allclose(both_jacobians(dnp.median, x, exact=True),
                               [1 / 3, 1 / 3, 1 / 3, 0.0], rtol=RTOL)


def test_order_statistics_at_ties_agree_with_max_and_min():
    """max and min are the quantiles 1 and 0: the same sharing at ties."""
    x = np.array([[0.5, 2.0, 2.0, -1.0], [-1.0, 0.0, -1.0, -1.0]])
    for q, reduce in ((1.0, dnp.max), (0.0, dnp.min)):
        by_quantile = both_jacobians(lambda x, q=q: dnp.quantile(x, q, axis=1), x, exact=True)
        by_reduction = both_jacobians(lambda x, r=reduce: r(x, axis=1), x, exact=True)
        np.testing.assert_array_equal(by_quantile, by_reduction)
    np.testing.assert_array_equal(both_jacobians(lambda x: dnp.ptp(x, axis=1), x, exact=True)[0, 0],
                                  [0.0, 0.5, 0.5, -1.0])


def test_quantile_derivative_is_the_interpolation_weights():
    x = np.array([4.0, -1.0, 2.0, 0.5, 3.0])  # sorted: -1, 0.5, 2, 3, 4
    # linear, q = 0.3: index 1.2 -> 0.8 * y[1] + 0.2 * y[2] = 0.8 * x[3] + 0.2 * x[2]
    np.testing.assert_allclose(both_jacobians(lambda x: dnp.quantile(x, 0.3), x),
                               [0.0, 0.0, 0.2, 0.8, 0.0], rtol=RTOL)
    # nearest: all weight on one order statistic; midpoint: half on each
    np.testing.assert_array_equal(
        both_jacobians(lambda x: dnp.quantile(x, 0.3, method="nearest"), x, exact=True),
        [0, 0, 0, 1, 0])
    np.testing.assert_array_equal(
        both_jacobians(lambda x: dnp.quantile(x, 0.3, method="midpoint"), x, exact=True),
        [0, 0, 0.5, 0.5, 0])
    # the Hessian of a piecewise-linear function is zero, in every engine combination
    f = lambda x: dnp.percentile(x, 30.0)  # noqa: E731
    np.testing.assert_array_equal(dk.hessian(f)(x), np.zeros((5, 5)))
    np.testing.assert_array_equal(dk.jacrev(dk.jacrev(f))(x), np.zeros((5, 5)))


@pytest.mark.parametrize("value", [1.5, 0.1])  # the mean of 0.1s rounds: variance 1e-34
def test_std_at_constant_data_is_zero_with_zero_derivative(value):
    x = np.full((2, 3), value)
    for f in (dnp.std, lambda x: dnp.std(x, axis=1, ddof=1),
              lambda x: dnp.std(x, axis=1, where=np.array([True, False, True])),
              lambda x: dnp.nanstd(dnp.where(np.eye(2, 3, dtype=bool), np.nan, x), axis=1)):
        assert np.all(f(x) == 0)
        jac = both_jacobians(f, x, exact=True)
        assert np.all(jac == 0) and np.all(np.isfinite(jac))
    np.testing.assert_array_equal(dk.hessian(dnp.std)(x[0]), np.zeros((3, 3)))
    # nearby, non-constant data: the ordinary derivative
    y = x[0] + np.array([0.0, 0.0, 1e-3])
    np.testing.assert_allclose(dk.grad(dnp.std)(y), (y - y.mean()) / (3 * np.std(y)),
                               rtol=1e-6)


NAN_FUNCTIONS = {
    "nansum": lambda x: dnp.nansum(x, axis=1),
    "nanprod": lambda x: dnp.nanprod(x, axis=1),
    "nanmean": lambda x: dnp.nanmean(x, axis=1),
    "nanvar": lambda x: dnp.nanvar(x, axis=1),
    "nanstd": lambda x: dnp.nanstd(x, axis=1),
    "nanmax": lambda x: dnp.nanmax(x, axis=1),
    "nanmin": lambda x: dnp.nanmin(x, axis=1),
    "nanmedian": lambda x: dnp.nanmedian(x, axis=1),
    "nanquantile": lambda x: dnp.nanquantile(x, [0.1, 0.6], axis=1),
    "nanpercentile": lambda x: dnp.nanpercentile(x, 75.0, axis=1),
    "nancumsum": lambda x: dnp.nancumsum(x, axis=1),
    "nancumprod": lambda x: dnp.nancumprod(x, axis=1),
}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name", list(NAN_FUNCTIONS))
def test_nan_entries_get_zero_derivative_and_others_stay_finite(name):
    """Row 0 has one NaN, row 1 none, row 2 only NaN: the derivative is 0 at NaN entries,
    finite everywhere, and where no NaN is involved equals the plain reduction's."""
    f = NAN_FUNCTIONS[name]
    x = np.array([[0.3, np.nan, -1.2, 2.0], [1.0, -0.5, 0.25, 3.0], [np.nan] * 4])
    jac = both_jacobians(f, x)
    assert np.all(np.isfinite(jac))
    nan_entries = np.broadcast_to(np.isnan(x), jac.shape)
    assert np.all(jac[nan_entries] == 0)
    clean = x[1:2]
    plain = getattr(dnp, name[3:]) if name not in ("nanquantile", "nanpercentile") else None
    if plain is not None:
        expected = dk.jacfwd(lambda x: plain(x, axis=1))(clean)
        got = dk.jacfwd(f)(clean)
        np.testing.assert_allclose(got, expected, rtol=RTOL, atol=1e-15)
    # the values: NumPy's own
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        name_np = {"nanquantile": lambda x: np.nanquantile(x, [0.1, 0.6], axis=1),
                   "nanpercentile": lambda x: np.nanpercentile(x, 75.0, axis=1)}
        expected = name_np.get(name, lambda x: getattr(np, name)(x, axis=1))(x)
    assert_like_numpy(f(x), expected)


def test_grad_of_nan_reduction_of_masked_data():
    """The usual pattern: gradient of a nan-reduction over data with missing values."""
    x = np.array([1.0, np.nan, 3.0, 4.0])
    np.testing.assert_allclose(dk.grad(dnp.nanmean)(x), [1 / 3, 0, 1 / 3, 1 / 3], rtol=RTOL)
    np.testing.assert_array_equal(dk.grad(dnp.nansum)(x), [1, 0, 1, 1])
    np.testing.assert_array_equal(dk.grad(dnp.nanmax)(x), [0, 0, 0, 1])
    np.testing.assert_array_equal(dk.grad(dnp.nanmedian)(x), [0, 0, 1, 0])


def test_quantile_of_a_slice_with_nan_is_nan_with_zero_derivative():
    x = np.array([[1.0, np.nan, 2.0], [0.5, 0.25, 2.0]])
    out = dnp.median(x, axis=1)
    assert np.isnan(out[0]) and out[1] == 0.5
    jac = both_jacobians(lambda x: dnp.median(x, axis=1), x, exact=True)
    np.testing.assert_array_equal(jac[0], np.zeros((2, 3)))
    np.testing.assert_array_equal(jac[1], [[0, 0, 0], [1, 0, 0]])


# --- zeros in products: exact, no division ----------------------------------------------------


def products_of_others(x):
    return np.array([np.prod(np.delete(x, i)) for i in range(x.size)])


def products_without_two(x):
    n = x.size
    hess = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if i != j:
                hess[i, j] = np.prod(np.delete(x, [i, j]))
    return hess


@pytest.mark.parametrize("x", [[2.0, 0.0, 3.0, -1.5], [0.0, 2.0, 0.0, 5.0, 3.0],
                               [0.0, 0.0, 0.0], [1.5, -2.0, 0.5]])
def test_prod_gradient_and_hessian_are_exact_at_zeros(x):
    x = np.array(x)
    np.testing.assert_allclose(dk.grad(dnp.prod)(x), products_of_others(x), rtol=RTOL)
    np.testing.assert_allclose(both_jacobians(dnp.prod, x), products_of_others(x), rtol=RTOL)
    expected = products_without_two(x)
    np.testing.assert_allclose(dk.hessian(dnp.prod)(x), expected, rtol=RTOL)
    np.testing.assert_allclose(dk.jacrev(dk.jacrev(dnp.prod))(x), expected, rtol=RTOL)
    np.testing.assert_allclose(dk.jacfwd(dk.jacfwd(dnp.prod))(x), expected, rtol=RTOL)


def test_prod_over_axes_with_zeros():
    x = rng.normal(size=(2, 3, 4))
    x[0, 1, 2] = x[1, 1, 0] = x[1, 2, 0] = 0.0
    jac = both_jacobians(lambda x: dnp.prod(x, axis=(0, 2)), x)
    for j in range(3):
        column = x[:, j, :].ravel()
        np.testing.assert_allclose(jac[j][:, j, :].ravel(), products_of_others(column),
                                   rtol=RTOL)
    # the plain-array fast path (no zeros) and the exclusive products give the same numbers
    y = rng.normal(size=(3, 4))
    fast = dk.grad(lambda y: dnp.prod(y, axis=1).sum())(y)
    traced = dk.jacfwd(dk.grad(lambda y: dnp.prod(y, axis=1).sum()))(y)  # rule on tracers
    np.testing.assert_allclose(fast, np.prod(y, axis=1, keepdims=True) / y, rtol=RTOL)
    assert np.all(np.isfinite(traced))


def cumprod_jacobian(x):
    n = x.size
    jac = np.zeros((n, n))
    for k in range(n):
        for j in range(k + 1):
            jac[k, j] = np.prod(np.delete(x[:k + 1], j))
    return jac


@pytest.mark.parametrize("x", [[2.0, 0.0, 3.0, 0.0, -1.5], [0.0, 0.0, 1.0], [1.5, 2.0, -0.5]])
def test_cumprod_jacobian_and_second_derivatives_are_exact_at_zeros(x):
    x = np.array(x)
    np.testing.assert_allclose(both_jacobians(dnp.cumprod, x), cumprod_jacobian(x),
                               rtol=RTOL)
    # d2 cumprod[k] / dx_i dx_j = product of x[:k+1] without i and j
    f = lambda x: dnp.cumprod(x)[-1]  # noqa: E731
    np.testing.assert_allclose(dk.hessian(f)(x), products_without_two(x), rtol=RTOL)
    np.testing.assert_allclose(dk.jacrev(dk.jacrev(f))(x), products_without_two(x),
                               rtol=RTOL)


def test_cumulative_primitives_in_both_directions():
    x = rng.normal(size=(3, 4))
    for reverse in (False, True):
        flip = (lambda a: a[:, ::-1]) if reverse else (lambda a: a)
        np.testing.assert_allclose(cumsum_p(x, axis=1, reverse=reverse),
                                   flip(np.cumsum(flip(x), axis=1)), rtol=1e-12)
        np.testing.assert_allclose(cumprod_p(x, axis=1, reverse=reverse),
                                   flip(np.cumprod(flip(x), axis=1)), rtol=1e-12)
        for prim in (cumsum_p, cumprod_p):
            check_grads(lambda x, p=prim, r=reverse: p(x, axis=0, reverse=r), (x,), order=2)
            check_vmap(lambda x, p=prim, r=reverse: p(x, axis=0, reverse=r), (x,), in_axes=1)


def test_linear_recurrence_matches_a_loop_and_its_rules():
    a, b = rng.normal(size=(2, 3, 9))
    for reverse in (False, True):
        expected = np.zeros_like(b)
        order = range(8, -1, -1) if reverse else range(9)
        previous = np.zeros(3)
        for k in order:
            expected[:, k] = a[:, k] * previous + b[:, k]
            previous = expected[:, k]
        got = recurrence_p(a, b, axis=1, reverse=reverse)
        np.testing.assert_allclose(got, expected, rtol=1e-12)
        f = lambda a, b, r=reverse: recurrence_p(a, b, axis=1, reverse=r)  # noqa: E731
        check_grads(f, (a, b), order=2)
        check_vmap(f, (np.stack([a, 2 * a]), b), in_axes=(0, None))
        check_vmap(f, (a, np.stack([b, 2 * b], axis=-1)), in_axes=(None, 2))
    assert "linear_recurrence" in PRIMITIVES


# --- closed-form derivatives ------------------------------------------------------------------


def test_var_and_std_gradients_are_the_centred_data():
    x = rng.normal(size=7)
    centred = x - x.mean()
    for ddof in (0, 1, 3):
        np.testing.assert_allclose(dk.grad(lambda x, d=ddof: dnp.var(x, ddof=d))(x),
                                   2 * centred / (7 - ddof), rtol=RTOL)
        std = np.std(x, ddof=ddof)
        np.testing.assert_allclose(both_jacobians(lambda x, d=ddof: dnp.std(x, ddof=d), x),
                                   centred / ((7 - ddof) * std), rtol=RTOL)


def test_average_derivatives_in_values_and_weights():
    a, w = rng.normal(size=5), rng.uniform(0.5, 2.0, size=5)
    avg = np.average(a, weights=w)
    grad_a, grad_w = dk.grad(lambda a, w: dnp.average(a, weights=w), argnums=(0, 1))(a, w)
    np.testing.assert_allclose(grad_a, w / w.sum(), rtol=RTOL)
    np.testing.assert_allclose(grad_w, (a - avg) / w.sum(), rtol=RTOL)


def test_trapezoid_derivatives_in_y_and_x():
    y, x = rng.normal(size=5), np.cumsum(rng.uniform(0.2, 1.0, size=5))
    grad_y, grad_x = dk.grad(dnp.trapezoid, argnums=(0, 1))(y, x)
    d = np.diff(x)
    np.testing.assert_allclose(grad_y, np.concatenate([[0], d]) / 2 +
                               np.concatenate([d, [0]]) / 2, rtol=RTOL)
    # d/dx_i of sum (x_{k+1} - x_k)(y_k + y_{k+1}) / 2
    pairs = (y[1:] + y[:-1]) / 2
    np.testing.assert_allclose(grad_x, np.concatenate([[0], pairs]) -
                               np.concatenate([pairs, [0]]), rtol=RTOL)
    assert dk.grad(lambda dx: dnp.trapezoid(y, dx=dx))(0.5) == pytest.approx(
        np.trapezoid(y), rel=RTOL)


def test_gradient_is_linear_and_its_jacobian_is_the_stencil():
    coordinates = np.array([0.0, 0.4, 1.1, 1.5, 2.6])
    for edge_order in (1, 2):
        f = lambda y, e=edge_order: dnp.gradient(y, coordinates, edge_order=e)  # noqa: E731
        stencil = np.stack([np.gradient(e, coordinates, edge_order=edge_order)
                            for e in np.eye(5)], axis=1)
        np.testing.assert_allclose(both_jacobians(f, rng.normal(size=5)), stencil,
                                   rtol=RTOL, atol=1e-13)
    # several axes: a tuple, one array per axis, as NumPy
    out = dnp.gradient(X[0], 2.0)
    assert isinstance(out, tuple) and len(out) == 2
    grads = dk.jacrev(lambda y: dnp.gradient(y, axis=(1, 0)))(X[0])
    assert isinstance(grads, tuple) and grads[0].shape == (4, 6, 4, 6)


def test_cov_and_corrcoef_derivatives_against_closed_forms():
    x = rng.normal(size=(2, 6))
    # d cov[0, 1] / d x[0] = (x[1] - mean x[1]) / (n - 1)
    jac = both_jacobians(dnp.cov, x)
    centred = x - x.mean(axis=1, keepdims=True)
    np.testing.assert_allclose(jac[0, 1, 0], centred[1] / 5, rtol=RTOL, atol=1e-15)
    np.testing.assert_allclose(jac[0, 1, 1], centred[0] / 5, rtol=RTOL, atol=1e-15)
    # corrcoef is invariant under shifting and scaling each variable
    jac = both_jacobians(dnp.corrcoef, x)
    assert np.allclose(np.einsum("ijkl,kl->ij", jac, x), 0.0, atol=1e-12)
    assert np.allclose(jac.sum(axis=-1), 0.0, atol=1e-12)


def test_float32_stays_float32():
    x = rng.normal(size=(3, 4)).astype(np.float32)
    for f in (dnp.var, dnp.std, dnp.median, lambda x: dnp.quantile(x, 0.3),
              lambda x: dnp.cumprod(x).sum(), lambda x: dnp.cumsum(x, axis=1).sum(),
              lambda x: dnp.trapezoid(x).sum(), lambda x: dnp.nanmean(x),
              lambda x: dnp.average(x, weights=np.float32([1, 2, 3, 4]), axis=1).sum()):
        out, grad = dk.value_and_grad(f)(x)
        assert np.asarray(out).dtype == np.float32 and grad.dtype == np.float32


# --- vmap of derivatives ----------------------------------------------------------------------


def test_vmap_of_grad_of_nan_median_batches_the_counts():
    """Per-example NaN counts make per-example ranks: the batched path of the primitive."""
    xs = rng.normal(size=(5, 4, 6))
    xs[0, 1, :3] = np.nan
    xs[3, :, 2] = np.nan
    f = lambda x: dnp.nanmedian(x, axis=1).sum()  # noqa: E731
    check_vmap(dk.grad(f), (xs,))
    check_vmap(dk.grad(lambda x: dnp.nanquantile(x, [0.3, 0.9], axis=0).sum()), (xs,),
               in_axes=2)


# --- errors --------------------------------------------------------------------------------


@pytest.mark.parametrize(("call", "error", "match"), [
    (lambda: dnp.var(X, out=np.empty(())), TypeError, "does not support out="),
    (lambda: dnp.var(X, ddof=1, correction=1), ValueError, "ddof and correction"),
    (lambda: dnp.quantile(X, 1.5), ValueError, r"Quantiles must be in the range \[0, 1\]"),
    (lambda: dnp.percentile(X, -1), ValueError, r"Percentiles must be in the range"),
    (lambda: dnp.quantile(X, 0.5, method="foo"), ValueError, "'foo' is not a valid method"),
    (lambda: dnp.quantile(X + 1j, 0.5), TypeError, "real numbers"),
    (lambda: dnp.quantile(X, 0.5, weights=np.ones(X.shape)), NotImplementedError, "weights"),
    (lambda: dnp.median(np.zeros((0, 3)), axis=0), ValueError, "empty"),
    (lambda: dnp.nanargmax(XN, axis=1), ValueError, "All-NaN slice"),
    (lambda: dnp.average(X, weights=np.ones(4)), TypeError, "Axis must be specified"),
    (lambda: dnp.average(X, axis=1, weights=np.ones(3)), ValueError, "Shape of weights"),
    (lambda: dnp.average(X, axis=1, weights=np.zeros(4)), ZeroDivisionError, "sum to zero"),
    (lambda: dnp.diff(X, n=-1), ValueError, "order must be non-negative"),
    (lambda: dnp.diff(np.float64(1.0)), ValueError, "at least one dimensional"),
    (lambda: dnp.ediff1d(np.arange(3), to_end=[1.5]), TypeError, "same_kind"),
    (lambda: dnp.gradient(X[0], np.ones((2, 2)), 1.0), ValueError, "scalars or 1d"),
    (lambda: dnp.gradient(X[0], np.ones(3), 1.0), ValueError, "must match the length"),
    (lambda: dnp.gradient(X[0], 1.0, 2.0, 3.0), TypeError, "invalid number of arguments"),
    (lambda: dnp.gradient(X[:, :2, 0], edge_order=2), ValueError, "too small"),
    (lambda: dnp.gradient(X, edge_order=3), ValueError, "'edge_order' greater than 2"),
    (lambda: dnp.cumsum(X, axis=3), np.exceptions.AxisError, "out of bounds"),
    (lambda: dnp.cumulative_sum(X), ValueError, "``axis`` argument is required"),
    (lambda: dnp.cov(X), ValueError, "more than 2 dimensions"),
    (lambda: dnp.cov(X[0], fweights=[1.5] * 6), TypeError, "fweights must be integer"),
    (lambda: dnp.cov(X[0], fweights=[1] * 5), RuntimeError, "incompatible numbers"),
    (lambda: dnp.cov(X[0], aweights=-np.ones(6)), ValueError, "aweights cannot be negative"),
])
def test_errors_name_the_problem(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_traced_quantile_levels_are_rejected_clearly():
    with pytest.raises(TypeError, match="levels q must be concrete"):
        dk.grad(lambda q: dnp.quantile(X, q))(0.5)
