"""NumPy's keywords on the reductions and the differentiable sample spacings: values and
dtypes equal NumPy's (plain and traced inputs, masks that empty a slice), derivatives in
closed form, and the errors for ``out=`` and for a ``where`` mask without ``initial``.

The generic derivative, Jacobian and vmap checks of these keywords are the records of
tests/records/ops/keywords.py.
"""

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.ops import reductions

RNG = np.random.default_rng(20261121)
X = RNG.normal(size=(3, 4, 5))
# Slices [0, 1, :] (axis 2), [:, 2, 3] (axis 0) and everything along axis 1 at [2, :, 4]
# keep nothing.
MASK = RNG.random((3, 4, 5)) < 0.6
MASK[0, 1, :] = False
MASK[:, 2, 3] = False
MASK[2, :, 4] = False
XN = np.where(RNG.random(X.shape) < 0.2, np.nan, X)   # NaN entries for the nan-reductions
AXES = [None, 0, 1, 2, (0, 2), -1]


def _quiet(fn, *args, **kwargs):
    """``fn(...)`` without its RuntimeWarnings (empty slices, NaN), which NumPy also gives."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(*args, **kwargs)


def _rtol(dtype):
    """Rounding allowed against NumPy: a few units in the last place of the result's dtype
    (NumPy adds ``initial`` and sums several axes in another order)."""
    dtype = np.dtype(dtype)
    return max(1e-12, 8 * float(np.finfo(dtype).eps)) if dtype.kind in "fc" else 0.0


def assert_same_as_numpy(name, x, **kwargs):
    """diffkit.numpy's ``name`` equals NumPy's in value (NaN where NumPy's is NaN) and dtype,
    on a plain array and on traced ones (called as plain NumPy): the primal of a jvp (float
    inputs) and one example of a vmap (any input)."""
    expected = _quiet(getattr(np, name), x, **kwargs)

    def call(v):
        return getattr(np, name)(v, **kwargs)
    results = [_quiet(getattr(dnp, name), x, **kwargs),
               _quiet(dk.vmap(call), np.stack([x, x]))[1]]
    if x.dtype.kind in "fc":
        results.append(_quiet(dk.jvp, call, (x,), (np.ones_like(x),))[0])
    for result in results:
        assert np.shape(result) == np.shape(expected)
        assert np.asarray(result).dtype == np.asarray(expected).dtype, (name, kwargs)
        assert_allclose(result, expected, rtol=_rtol(np.asarray(expected).dtype), atol=1e-14,
                        equal_nan=True)


# --- values and dtypes equal NumPy's ---------------------------------------------------------


@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_sum_and_prod_keywords(axis, keepdims):
    for name in ("sum", "prod"):
        for kwargs in ({"where": MASK}, {"initial": 1.5}, {"initial": -2.0, "where": MASK},
                       {"dtype": np.float32}, {"dtype": np.float64, "where": MASK[0]}):
            assert_same_as_numpy(name, X, axis=axis, keepdims=keepdims, **kwargs)


@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_max_and_min_keywords(axis, keepdims):
    for name in ("max", "min", "amax", "amin"):
        for kwargs in ({"initial": 0.5}, {"initial": -np.inf, "where": MASK},
                       {"initial": np.inf, "where": MASK}, {"initial": 0.1, "where": MASK}):
            assert_same_as_numpy(name, X, axis=axis, keepdims=keepdims, **kwargs)


@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_mean_keywords(axis, keepdims):
    for kwargs in ({"where": MASK}, {"dtype": np.float32}, {"where": MASK[:, :, 0:1]},
                   {"dtype": np.float32, "where": MASK}):
        assert_same_as_numpy("mean", X, axis=axis, keepdims=keepdims, **kwargs)


@pytest.mark.parametrize("axis", AXES)
def test_nan_reductions_with_where(axis):
    for name, extra in (("nansum", {}), ("nanprod", {}), ("nanmean", {}), ("nanvar", {}),
                        ("nanstd", {}), ("nanvar", {"ddof": 1}), ("nansum", {"initial": 2.0}),
                        ("nanmax", {"initial": -0.5}), ("nanmin", {"initial": 0.5}),
                        ("nanmax", {"initial": -np.inf}), ("nanmin", {"initial": np.nan})):
        assert_same_as_numpy(name, XN, axis=axis, where=MASK, **extra)
    assert_same_as_numpy("nanmax", XN, axis=axis, initial=0.25)
    assert_same_as_numpy("nanvar", XN, axis=axis, keepdims=True,
                         mean=_quiet(np.nanmean, XN, axis=axis, keepdims=True))


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint8, np.int64, np.bool_,
                                   np.float16, np.float32, np.complex64])
def test_result_dtypes_follow_numpy(dtype):
    """Small integers and booleans are upcast by sum and prod, mean gives float64 for
    integers and float16 for float16; an explicit dtype is the result's dtype."""
    x = (RNG.integers(0, 3, (3, 4)) if np.dtype(dtype).kind in "iub"
         else RNG.normal(size=(3, 4))).astype(dtype)
    for name in ("sum", "prod", "mean"):
        for requested in (None, np.int8, np.int64, np.float32, np.float64):
            assert_same_as_numpy(name, x, axis=1, dtype=requested)
    for name in ("sum", "prod"):
        assert_same_as_numpy(name, x, axis=0, initial=2.5)   # initial cast like NumPy
        assert_same_as_numpy(name, x, where=[True, False, True, True], dtype=np.float32)
    assert_same_as_numpy("max", x, axis=0, initial=1.5, where=[True, False, True, False])


def test_empty_axes_with_initial():
    empty = np.zeros((3, 0))
    for name in ("sum", "prod", "max", "min", "nanmax", "nanmin"):
        assert_same_as_numpy(name, empty, axis=1, initial=2.0)
        assert_same_as_numpy(name, empty, axis=1, initial=2.0, keepdims=True)


def test_where_is_cast_to_bool_and_broadcast():
    assert_same_as_numpy("sum", X, axis=2, where=[1, 0, 1, 1, 0])
    assert_same_as_numpy("mean", X, axis=0, where=MASK[0])
    with pytest.raises(ValueError):
        dnp.sum(X[0], where=MASK)   # more dimensions than the input: NumPy raises too


# --- derivatives ---------------------------------------------------------------------------


def test_masked_entries_get_derivative_zero_and_empty_means_no_nan():
    """d mean / dx = mask / count for the kept entries, 0 for the others; a slice with
    nothing kept is NaN and passes no derivative (never NaN) in both engines."""
    x, mask = X[0], MASK[0]                 # row 1 keeps nothing
    count = mask.sum(axis=1, keepdims=True)
    expected = np.zeros((4, 4, 5))
    for i in range(4):
        if count[i, 0]:
            expected[i, i] = mask[i] / count[i, 0]

    def masked_mean(v):
        return np.mean(v, axis=1, where=mask)
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        value = dnp.mean(x, axis=1, where=mask)
    assert np.isnan(value[1]) and not np.isnan(np.delete(value, 1)).any()
    for jacobian in (dk.jacfwd(masked_mean), dk.jacrev(masked_mean)):
        assert_allclose(_quiet(jacobian, x), expected, rtol=1e-15, atol=0)


def test_sum_max_gradients_in_closed_form():
    x, mask = X[1], MASK[1]
    assert_array_equal(dk.grad(lambda v: np.sum(v, initial=3.0, where=mask))(x), mask * 1.0)
    assert_array_equal(dk.grad(lambda v: np.sum(v * v, dtype=np.float64, where=mask))(x),
                       np.where(mask, 2 * x, 0.0))
    # max per row with initial 10 above everything: the derivative goes to initial only
    grad_x, grad_init = dk.grad(lambda v, s: np.sum(np.max(v, axis=1, initial=s,
                                                           where=mask)), (0, 1))(x, 10.0)
    assert_array_equal(grad_x, np.zeros_like(x))
    assert grad_init == 4.0
    kept_max = np.where(mask, x, -np.inf)
    hits = (kept_max == kept_max.max(axis=1, keepdims=True)) & mask
    grad = dk.grad(lambda v: np.sum(np.max(v, axis=1, initial=-np.inf, where=mask)))(x)
    assert_array_equal(grad, hits * 1.0)


def test_prod_where_gradient():
    x, mask = X[2], MASK[2]
    kept = np.where(mask, x, 1.0)
    expected = np.where(mask, kept.prod(axis=1, keepdims=True) / kept, 0.0) * 0.5
    grad = dk.grad(lambda v: np.sum(np.prod(v, axis=1, initial=0.5, where=mask)))(x)
    assert_allclose(grad, expected, rtol=1e-12)


def test_float32_stays_float32_through_dtype():
    x = X[0].astype(np.float32)
    grad = dk.grad(lambda v: np.sum(v, dtype=np.float64))(x)
    assert grad.dtype == np.float32
    assert_array_equal(grad, np.ones_like(x))


def test_traced_mask_under_vmap():
    means = dk.vmap(lambda v: np.mean(v, where=v > 0))(X[0])
    assert_allclose(means, [row[row > 0].mean() for row in X[0]], rtol=1e-13)
    grads = dk.vmap(dk.grad(lambda v: np.nanmax(v, initial=0.0, where=v < 0.5)))(X[0])
    for row, grad in zip(X[0], grads):
        kept = np.where(row < 0.5, row, 0.0)
        assert_array_equal(grad, (row == kept.max()) & (row < 0.5) & (kept.max() > 0.0))


# --- errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean", "nansum", "nanprod",
                                  "nanmean", "nanmax", "nanmin", "nanvar", "nanstd"])
def test_out_is_refused_with_what_to_do_instead(name):
    with pytest.raises(TypeError, match=rf"diffkit\.numpy\.{name} does not support out=.*"
                                        r"Use the returned value instead"):
        getattr(dnp, name)(X, axis=0, out=np.empty((4, 5)))


@pytest.mark.parametrize("name", ["max", "min", "amax", "amin", "nanmax", "nanmin"])
@pytest.mark.parametrize("where", [MASK, np.ones(X.shape, bool), np.True_])
def test_where_without_initial_is_numpy_error(name, where):
    """NumPy's max/min have no identity, so any where mask needs initial: same error, same
    text, for plain and traced inputs."""
    with pytest.raises(ValueError) as numpy_error:
        getattr(np, name)(X, axis=1, where=where)
    with pytest.raises(ValueError) as ours:
        getattr(dnp, name)(X, axis=1, where=where)
    assert str(ours.value) == str(numpy_error.value)
    with pytest.raises(ValueError, match="to use a where mask one has to specify 'initial'"):
        dk.grad(lambda v: np.sum(getattr(np, name)(v, axis=1, where=where)))(X)


def test_initial_must_be_a_scalar():
    with pytest.raises(ValueError, match=r"initial must be a scalar, got an array of shape"):
        dnp.sum(X, initial=np.ones(2))
    with pytest.raises(ValueError, match=r"initial must be a scalar, got a traced value"):
        dk.grad(lambda s: dnp.sum(dnp.max(X, axis=0, initial=s)))(np.ones(5))


def test_common_call_takes_the_fast_path(monkeypatch):
    """``sum(x, axis)`` and friends bind the primitive directly: the keyword machinery is
    reached only when a keyword asks for it."""
    def refuse(*args, **kwargs):
        raise AssertionError("the keyword path was taken for a plain call")
    monkeypatch.setattr(reductions, "_accumulate", refuse)
    monkeypatch.setattr(reductions, "_extreme", refuse)
    monkeypatch.setattr(reductions, "_masked_mean", refuse)
    x = X[0]
    assert_allclose(dnp.sum(x, 1) + dnp.prod(x, 1) + dnp.max(x, 1) + dnp.min(x, 1)
                    + dnp.mean(x, 1), x.sum(1) + x.prod(1) + x.max(1) + x.min(1) + x.mean(1),
                    rtol=1e-13)
    with pytest.raises(AssertionError, match="keyword path"):
        dnp.sum(x, 1, where=MASK[0])


# --- sample spacings ------------------------------------------------------------------------


SPACING_CASES = [
    ("linspace", (0.5, 3.0), {}), ("linspace", (0.5, 3.0), {"num": 7, "endpoint": False}),
    ("linspace", (np.array([0.0, 1.0, -2.0]), np.array([[3.0], [5.0]])), {"num": 4}),
    ("linspace", (np.array([0.0, 1.0]), 2.0), {"num": 3, "axis": -1}),
    ("linspace", (-1.0, 4.0), {"num": 6, "dtype": np.int64}),
    ("linspace", (1.0, 2.0), {"num": 1}), ("linspace", (1.0, 2.0), {"num": 0}),
    ("logspace", (0.5, 2.0), {"num": 5}),
    ("logspace", (np.array([0.0, 1.0]), 2.0), {"num": 4, "base": np.array([2.0, 3.0]),
                                               "axis": 1}),
    ("geomspace", (1.0, 1000.0), {"num": 4}), ("geomspace", (-2.0, -50.0), {"num": 5}),
    ("geomspace", (np.array([1.0, -1.0]), np.array([8.0, -27.0])),
     {"num": 4, "axis": -1, "endpoint": False}),
]


@pytest.mark.parametrize(("name", "ends", "kwargs"), SPACING_CASES)
def test_spacings_equal_numpy_when_traced(name, ends, kwargs):
    expected = getattr(np, name)(*ends, **kwargs)
    start, stop = (np.asarray(e, float) for e in ends)
    traced, _ = dk.jvp(lambda a, b: getattr(np, name)(a, b, **kwargs), (start, stop),
                       (np.ones_like(start), np.ones_like(stop)))
    assert traced.shape == expected.shape and traced.dtype == expected.dtype
    assert_allclose(traced, expected, rtol=1e-13)
    assert_array_equal(getattr(dnp, name)(*ends, **kwargs), expected)   # concrete: NumPy's


def test_linspace_derivatives_and_step():
    k = np.arange(5) / 4.0
    jac_start, jac_stop = dk.jacfwd(lambda a, b: np.linspace(a, b, 5), (0, 1))(1.0, 3.0)
    assert_allclose(jac_start, 1.0 - k, rtol=1e-15)
    assert_allclose(jac_stop, k, rtol=1e-15)
    step_grad = dk.grad(lambda a, b: np.linspace(a, b, 5, retstep=True)[1], (0, 1))(1.0, 3.0)
    assert step_grad == (-0.25, 0.25)
    jac = dk.jacrev(lambda a: np.linspace(a, 1.0, 4, endpoint=False))(np.array([0.0, 2.0]))
    assert_allclose(jac, np.einsum("k,ij->kij", 1.0 - np.arange(4) / 4.0, np.eye(2)),
                    rtol=1e-15)


def test_logspace_and_geomspace_derivatives():
    exponents = np.linspace(0.5, 2.0, 4)
    grad = dk.jacfwd(lambda a: np.logspace(a, 2.0, 4))(0.5)
    assert_allclose(grad, np.log(10.0) * 10.0 ** exponents * (1.0 - np.arange(4) / 3.0),
                    rtol=1e-13)
    # geomspace(a, b)[k] = a ** (1 - k/3) * b ** (k/3): its derivative in a at a = 2, b = 54
    a, b, frac = 2.0, 54.0, np.arange(4) / 3.0
    grad = dk.jacrev(lambda s: np.geomspace(s, b, 4))(a)
    assert_allclose(grad, (1.0 - frac) * a ** (-frac) * b ** frac, rtol=1e-12)


def test_spacing_errors_match_numpy():
    with pytest.raises(ValueError, match="Number of samples, -1, must be non-negative"):
        dk.grad(lambda a: np.sum(np.linspace(a, 1.0, -1)))(0.0)
    with pytest.raises(ValueError, match="Geometric sequence cannot include zero"):
        dk.grad(lambda a: np.sum(np.geomspace(a, 0.0, 3)))(1.0)
