"""diffkit.scipy.signal.lfilter and welch beyond the generic records: SciPy's values, every
derivative against finite differences of SciPy's own function (a[0] != 1 included), vmap
over the coefficients, the median average, and errors."""

import numpy as np
import pytest
import scipy.signal as ss

import diffkit as dk
import diffkit.scipy.signal as ds

RNG = np.random.default_rng(7)
X = RNG.normal(size=24)
B = np.array([0.4, 0.25, -0.1])
A = np.array([1.5, -0.45, 0.2])   # a[0] != 1: SciPy normalizes by it


def differences(f, x, h=1e-6):
    return np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(x.size)])


@pytest.mark.parametrize("argnum", [0, 1, 2])
def test_lfilter_derivatives_in_b_a_and_x(argnum):
    args = [B, A, X]

    def scipy_f(v):
        return ss.lfilter(*[v if i == argnum else a for i, a in enumerate(args)]) @ X

    def f(v):
        return ds.lfilter(*[v if i == argnum else a for i, a in enumerate(args)]) @ X

    expected = differences(scipy_f, args[argnum])
    np.testing.assert_allclose(dk.grad(f)(args[argnum]), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(dk.jacfwd(f)(args[argnum]), dk.grad(f)(args[argnum]),
                               rtol=1e-12, atol=1e-14)


def test_lfilter_values_and_second_derivatives():
    np.testing.assert_allclose(dk.jvp(lambda x: ds.lfilter(B, A, x), (X,), (X,))[0],
                               ss.lfilter(B, A, X), rtol=1e-14)
    hessian = dk.hessian(lambda a: ds.lfilter(B, a, X)[-1])(A)
    expected = differences(lambda a: differences(lambda c: ss.lfilter(B, c, X)[-1], a, 1e-4),
                           A, 1e-4)
    np.testing.assert_allclose(hessian, expected, rtol=1e-4, atol=1e-6)


def test_lfilter_vmap_over_coefficients_and_signals():
    bs = np.stack([B, 2 * B, B[::-1]])
    xs = np.stack([X, X[::-1], 0.5 * X])
    batched = dk.vmap(lambda b, x: ds.lfilter(b, A, x))(bs, xs)
    np.testing.assert_allclose(batched, [ss.lfilter(b, A, x) for b, x in zip(bs, xs)],
                               rtol=1e-14)
    grads = dk.vmap(dk.grad(lambda a, x: ds.lfilter(B, a, x)[-1]), (None, 0))(A, xs)
    for x, g in zip(xs, grads):
        np.testing.assert_allclose(g, differences(lambda a, x=x: ss.lfilter(B, a, x)[-1], A),
                                   rtol=1e-6)


def test_lfilter_refuses_matrix_coefficients_and_initial_conditions():
    with pytest.raises(ValueError, match="1-D"):
        dk.grad(lambda x: ds.lfilter(np.ones((2, 2)), A, x).sum())(X)
    with pytest.raises(Exception, match="zi"):
        dk.grad(lambda x: ds.lfilter(B, A, x, zi=np.zeros(2)).sum())(X)


@pytest.mark.parametrize("options", [
    {"nperseg": 8},
    {"nperseg": 8, "noverlap": 5, "nfft": 12, "detrend": "linear", "window": "hamming"},
    {"nperseg": 6, "scaling": "spectrum", "return_onesided": False, "detrend": False},
    {"nperseg": 8, "average": "median"},
    {"window": np.hanning(10), "fs": 3.0},
])
def test_welch_matches_scipy_and_its_differences(options):
    traced = dk.jvp(lambda x: ds.welch(x, **options)[1], (X,), (X,))[0]   # traced path
    f_scipy, p_scipy = ss.welch(X, **options)
    np.testing.assert_allclose(traced, p_scipy, rtol=1e-13)
    freqs = dk.jvp(lambda x: ds.welch(x, **options)[0] + 0 * x[0], (X,), (X,))[0]
    np.testing.assert_allclose(freqs, f_scipy)
    weights = np.linspace(1.0, 2.0, p_scipy.size)
    gradient = dk.grad(lambda x: ds.welch(x, **options)[1] @ weights)(X)
    np.testing.assert_allclose(gradient, differences(lambda x: ss.welch(x, **options)[1]
                                                     @ weights, X), rtol=1e-6, atol=1e-9)
