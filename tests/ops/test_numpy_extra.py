"""Differentiable NumPy functions beyond the core families: ``piecewise``, ``polyfit``,
``roots``, ``polydiv``, ``apply_along_axis``, ``apply_over_axes``, ``vectorize``,
``put_along_axis``, ``choose``, ``extract``, ``histogram`` (weights), ``unique`` (values),
``fill_diagonal``, and float32 ``logspace``. Values against NumPy itself, derivatives
against central finite differences of the NumPy function (step 1e-6, rtol 1e-6) or closed
forms (rtol 1e-7), in both engines and under ``vmap``; plain NumPy calls on traced values
route here."""

import numpy as np
import pytest

import diffkit as dk
import diffkit.numpy as dnp

RTOL = 1e-7
FD_RTOL = 1e-6


def central_jacobian(f, x, eps=1e-6):
    """The Jacobian of ``f`` (plain NumPy in, plain NumPy out) by central differences."""
    x = np.asarray(x, float)
    columns = []
    for i in range(x.size):
        step = np.zeros(x.size)
        step[i] = eps
        step = step.reshape(x.shape)
        columns.append((np.asarray(f(x + step)) - np.asarray(f(x - step))) / (2 * eps))
    return np.stack(columns, axis=-1).reshape(np.shape(f(x)) + x.shape)


def both_jacobians(f, x):
    """jacfwd and jacrev of ``f`` at ``x``; they must agree to rounding."""
    forward, reverse = dk.jacfwd(f)(x), dk.jacrev(f)(x)
    np.testing.assert_allclose(forward, reverse, rtol=1e-12, atol=1e-14)
    return forward


# --- logspace keeps float32 ----------------------------------------------------------------


@pytest.mark.parametrize("start", [np.float32(1.5), np.array([0.5, 1.5], np.float32)])
def test_logspace_float32_in_both_engines(start):
    f = lambda s: dnp.logspace(s, 2.0, 4)  # noqa: E731
    assert np.logspace(start, 2.0, 4).dtype == np.float32
    assert f(start).dtype == np.float32
    assert dk.jacfwd(f)(start).dtype == np.float32
    assert dk.jacrev(f)(start).dtype == np.float32
    expected = central_jacobian(lambda s: np.logspace(s, 2.0, 4), start.astype(np.float64))
    np.testing.assert_allclose(dk.jacfwd(f)(start), expected, rtol=1e-5)
    # float64 stays float64, and linspace keeps float32 likewise
    assert dk.jacfwd(f)(start.astype(np.float64)).dtype == np.float64
    assert dk.jacfwd(lambda s: dnp.linspace(s, 2.0, 3))(start).dtype == np.float32
