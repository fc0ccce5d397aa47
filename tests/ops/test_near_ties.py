"""Near repeated eigenvalues and singular values: the tie rule at every order and the
accuracy near a tie (docs/conventions.md, Linear algebra), over generated matrices.

Hypothesis draws the size (2..4), a relative gap of a close pair (1e-13 .. 1e-4, log-uniform,
below and above the tie tolerance 512 eps and the second-order tolerance
sqrt(512 eps) = 3.4e-7), the matrix's scale (1e-2 .. 1e2) and an orthogonal basis. The
matrices have eigenvalues ``scale * (1, 1 + gap, 2, 3, ...)`` (a close pair, the others at
least ``scale`` apart) so that finite differences of NumPy's function at a step of
``2e-3 scale`` are smooth for functions that do not separate the pair.

Tolerances (absolute, relative to the reference's largest entry, at least 1):
- ``funm(X, sin)`` against ``sinm`` (exact through ``expm``, whose own rounding grows with
  ``|X|``): ``1e-13 (1 + |X|)`` at first order, ``1e-10 (1 + |X|)`` at second, every route
  and gap;
- functions of the eigen/singular values against their smooth closed forms: first order
  1e-12; ``hessian`` (forward over reverse) 1e-7 at every gap; the other routes the stated
  64 eps / gap (they see only rounded cotangents or the vectors' couplings);
- functions of the eigenvectors (the projector onto the close pair): the stated
  8 n eps / gap at first order and 8 n eps / gap^2 at second order, plus the reference's
  1e-7 (Richardson-extrapolated central differences), and NaN in every second-order route
  where the gap is within 3.4e-7 (at first order within 512 eps);
- at exact ties, every NaN of the first derivative stays NaN at second order in every route
  (``check_nan_propagates``).
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import diffkit as dk
import diffkit.numpy as dnp
import diffkit.scipy.linalg as dsl
from diffkit.ops.spectral_ties import TIE_RTOL_EPS, order_tolerance
from diffkit.testing.edges import check_nan_propagates, second_derivatives

EPS = np.finfo(np.float64).eps
SECOND_ORDER_TIE = order_tolerance(2, np.float64)


@st.composite
def near_ties(draw):
    """``(x, n, gap, basis)``: a symmetric n x n matrix with a pair of eigenvalues at the
    relative gap ``gap`` (relative to the largest eigenvalue)."""
    n = draw(st.integers(2, 4))
    gap = 10.0 ** draw(st.floats(-13.0, -4.0))
    scale = 10.0 ** draw(st.floats(-2.0, 2.0))
    seed = draw(st.integers(0, 2 ** 16))
    basis = np.linalg.qr(np.random.default_rng(seed).normal(size=(n, n)))[0]
    top = max(n - 1, 1.0 + gap)
    values = scale * np.array([1.0, 1.0 + gap * top] + list(range(2, n)), np.float64)[:n]
    x = basis @ np.diag(values) @ basis.T
    return 0.5 * (x + x.T), n, gap, basis


def _read(x, n):
    low = dnp.tril(x, -1)
    return low + low.T + dnp.diag(dnp.diag(x)) * np.eye(n)


def _reference_hessian(fun, x):
    return np.asarray(dk.hessian(lambda v: fun(v.reshape(x.shape)))(x.ravel()))


def _flat(fun, shape):
    return lambda v: fun(v.reshape(shape))


@settings(max_examples=6, deadline=None)
@given(near_ties())
def test_funm_is_exact_at_every_gap(case):
    """Every derivative route of sum(W * funm(X, sin)) equals sinm's (see the module
    docstring for the tolerances)."""
    x, n, gap, _ = case
    weights = np.random.default_rng(n).normal(size=(n, n))

    def through_funm(a):
        return dnp.sum(weights * dsl.funm(a, dnp.sin))

    def through_sinm(a):
        return dnp.sum(weights * dsl.sinm(a))

    expected = _reference_hessian(through_sinm, x)
    scale = max(1.0, float(np.max(np.abs(expected))))
    gradient = np.asarray(dk.grad(_flat(through_sinm, x.shape))(x.ravel()))
    norm = 1.0 + float(np.max(np.abs(x)))   # sinm's (expm's) own error grows with |X|
    for engine in (dk.jacfwd, dk.jacrev):
        got = np.asarray(engine(_flat(through_funm, x.shape))(x.ravel()))
        np.testing.assert_allclose(got, gradient, rtol=0, atol=1e-13 * norm * max(
            1.0, float(np.max(np.abs(gradient)))))
    for route, h in second_derivatives(_flat(through_funm, x.shape), x.ravel()).items():
        np.testing.assert_allclose(h, expected, rtol=0, atol=1e-10 * norm * scale,
                                   err_msg=route)


@settings(max_examples=12, deadline=None)
@given(near_ties())
def test_functions_of_eigenvalues_near_ties(case):
    """1.5 sum(w^2) and log det through eigvalsh against the same functions of the read
    matrix (no eigendecomposition): hessian to 1e-7 at every gap, the other routes to the
    stated 64 eps / gap (NaN only within the tie tolerance, where they are documented
    NaN)."""
    x, n, gap, _ = case

    def through_eigvalsh(a):
        w = dnp.linalg.eigvalsh(a)
        return 1.5 * dnp.sum(w ** 2) + dnp.sum(dnp.log(w))

    def smooth(a):
        return 1.5 * dnp.sum(_read(a, n) ** 2) + dnp.linalg.slogdet(_read(a, n))[1]

    expected = _reference_hessian(smooth, x)
    scale = max(1.0, float(np.max(np.abs(expected))))
    gradient = np.asarray(dk.grad(_flat(smooth, x.shape))(x.ravel()))
    for engine in (dk.jacfwd, dk.jacrev):
        got = np.asarray(engine(_flat(through_eigvalsh, x.shape))(x.ravel()))
        np.testing.assert_allclose(got, gradient, rtol=0, atol=1e-12 * max(
            1.0, float(np.max(np.abs(gradient)))))
    tied = gap <= TIE_RTOL_EPS * EPS
    for route, h in second_derivatives(_flat(through_eigvalsh, x.shape), x.ravel()).items():
        if route in ("hessian", "jacfwd(jacrev)"):
            np.testing.assert_allclose(h, expected, rtol=0, atol=1e-7 * scale, err_msg=route)
        elif not tied:
            np.testing.assert_allclose(h, expected, rtol=0, atol=64 * EPS / gap * scale,
                                       err_msg=route)
        else:   # documented: NaN across a tie, exact elsewhere
            finite = np.isfinite(h)
            np.testing.assert_allclose(h[finite], expected[finite], rtol=0,
                                       atol=64 * EPS / gap * scale, err_msg=route)


@settings(max_examples=12, deadline=None)
@given(near_ties())
def test_sum_of_squared_singular_values_near_ties(case):
    """sum(s^2) = sum(X^2): Hessian 2 I from hessian and jacfwd(jacrev) at every gap (to
    1e-7), from the other routes to 64 eps / gap outside the tie tolerance."""
    x, n, gap, basis = case
    a = x @ basis        # the same singular values, a nonsymmetric matrix

    def through_svd(v):
        return dnp.sum(dnp.linalg.svd(v.reshape(n, n), compute_uv=False) ** 2)

    expected = 2 * np.eye(n * n)
    tied = gap <= TIE_RTOL_EPS * EPS
    for route, h in second_derivatives(through_svd, a.ravel()).items():
        if route in ("hessian", "jacfwd(jacrev)"):
            np.testing.assert_allclose(h, expected, rtol=0, atol=1e-7, err_msg=route)
        elif not tied:   # the other routes: 64 eps / gap (documented NaN across a tie)
            np.testing.assert_allclose(h, expected, rtol=0, atol=64 * EPS / gap,
                                       err_msg=route)


def _fd_hessian(pair, x, step):
    """Richardson-extrapolated central second differences of the NumPy scalar ``pair``."""
    x = x.ravel()
    size = x.size

    def second(h):
        out = np.zeros((size, size))
        for i in range(size):
            for j in range(i, size):
                ei, ej = np.eye(size)[i] * h, np.eye(size)[j] * h
                out[i, j] = out[j, i] = (pair(x + ei + ej) - pair(x + ei - ej) -
                                         pair(x - ei + ej) + pair(x - ei - ej)) / (4 * h * h)
        return out

    return (4 * second(step / 2) - second(step)) / 3


def _fd_gradient(pair, x, h):
    x = x.ravel()
    out = np.zeros(x.size)
    for j in range(x.size):
        e = np.eye(x.size)[j] * h
        out[j] = (-pair(x + 2 * e) + 8 * pair(x + e) - 8 * pair(x - e) + pair(x - 2 * e)) / (12 * h)
    return out


@settings(max_examples=10, deadline=None)
@given(near_ties())
def test_projector_onto_the_close_pair(case):
    """The projector V[:, :2] V[:, :2]^T is smooth (the pair is far from the rest), but
    eigh's vectors reach it through 1 / gap couplings: within the stated bound
    8 n eps (|w| / gap)^k of finite differences, NaN at first order within the tie
    tolerance and at second order within 3.4e-7, identically in every route."""
    x, n, gap, _ = case
    weights = np.random.default_rng(n + 1).normal(size=(n, n))
    size = np.max(np.abs(np.linalg.eigvalsh(x)))

    def projector(a):
        v = dnp.linalg.eigh(a)[1][:, :2]
        return dnp.sum(weights * (v @ v.T))

    def numpy_pair(v):
        w = np.linalg.eigh(v.reshape(n, n))[1][:, :2]
        return float(np.sum(weights * (w @ w.T)))

    flat = _flat(projector, x.shape)
    step = 2e-3 * size
    gradient = _fd_gradient(numpy_pair, x, step)
    tied = gap <= TIE_RTOL_EPS * EPS
    for engine in (dk.jacfwd, dk.jacrev):
        got = np.asarray(engine(flat)(x.ravel()))
        if tied:
            assert np.any(np.isnan(got))
            continue
        # the k-th derivative in x scales as size^-k: the bound is for relative changes
        np.testing.assert_allclose(got * size, gradient * size, rtol=0,
                                   atol=8 * n * EPS / gap + 1e-7)
    if tied:
        return
    routes = second_derivatives(flat, x.ravel())
    if gap <= SECOND_ORDER_TIE:
        for route, h in routes.items():
            assert np.any(np.isnan(h)), route
            assert np.all(np.isnan(h) | (h == 0)), route
        return
    expected = _fd_hessian(numpy_pair, x, step) * size ** 2
    for route, h in routes.items():
        np.testing.assert_allclose(h * size ** 2, expected, rtol=0,
                                   atol=8 * n * EPS / gap ** 2 + 1e-6, err_msg=route)


@settings(max_examples=6, deadline=None)
@given(st.integers(2, 4), st.integers(0, 2 ** 16))
def test_nan_at_exact_ties_propagates(n, seed):
    """At an exact double eigenvalue (and an exact double singular value) every NaN of the
    first derivative is NaN in hessian, hvp, jvp(grad) and the four nested Jacobians."""
    basis = np.linalg.qr(np.random.default_rng(seed).normal(size=(n, n)))[0]
    values = np.array([1.0, 1.0] + list(range(3, n + 1)), np.float64)
    x = basis @ np.diag(values) @ basis.T
    x = 0.5 * (x + x.T)

    def first_vector(a):
        v = dnp.linalg.eigh(a)[1][:, :1]
        return v @ v.T

    def polar(a):
        u, _, vh = dnp.linalg.svd(a)
        return u @ vh

    with np.errstate(all="ignore"):
        check_nan_propagates(first_vector, (x,))
        check_nan_propagates(polar, (x @ basis,))


def test_tie_guard_is_exact_away_from_ties():
    """The guard changes nothing where the values are well apart: the Hessian of a function
    of the vectors equals finite differences (no NaN, no lost accuracy)."""
    x = np.diag([1.0, 2.0, 4.0]) + 0.1 * np.ones((3, 3))
    weights = np.arange(9.0).reshape(3, 3)

    def pair(a):
        v = dnp.linalg.eigh(a)[1][:, :1]
        return dnp.sum(weights * (v @ v.T))

    def numpy_pair(v):
        w = np.linalg.eigh(v.reshape(3, 3))[1][:, :1]
        return float(np.sum(weights * (w @ w.T)))

    expected = _fd_hessian(numpy_pair, x, 1e-3)
    for route, h in second_derivatives(_flat(pair, x.shape), x.ravel()).items():
        np.testing.assert_allclose(h, expected, rtol=0, atol=1e-6, err_msg=route)


@pytest.mark.parametrize("order", [1, 2, 3])
def test_order_tolerances(order):
    """The tie tolerance of order k is (TIE_RTOL_EPS eps)^(1/k): the tie tolerance itself at
    first order, 3.4e-7 at second."""
    expected = (TIE_RTOL_EPS * EPS) ** (1 / order)
    assert order_tolerance(order, np.float64) == pytest.approx(expected, rel=1e-12)
    assert order_tolerance(order, np.float32) == pytest.approx(
        (TIE_RTOL_EPS * np.finfo(np.float32).eps) ** (1 / order), rel=1e-6)
