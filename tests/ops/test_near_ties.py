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
- functions of the eigen/singular values (real, and complex Hermitian / rectangular in real
  coordinates) against their smooth closed forms: first order
  1e-12; ``hessian``, ``hvp``, ``jacfwd(jacrev)``, ``jacrev(jacfwd)`` and ``jacrev(jacrev)``
  1e-7 at every gap, ties included; ``jacfwd(jacfwd)`` the stated 64 eps / gap outside the
  tie tolerance (it sees only the caller's rounded cotangents), and across a tie NaN where
  it crosses the tie, exact elsewhere;
- the largest eigenvalue (simple) next to the close pair: every route and ``hvp`` equal
  the closed form ``sum_i 2 (v_i^T E v) (v_i^T F v) / (w - w_i)`` to 1e-10 (relative to
  its largest entry) at every gap, ties included, and finite differences of NumPy's
  ``eigvalsh`` (Richardson, step ``2e-3 scale``) to 1e-7;
- a sum of two pullbacks of one decomposition, differentiated in reverse (the channel
  holds two contributions): NaN where it crosses a tie, else the quotients' 64 eps / gap;
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
def near_ties(draw, min_size=2, exact=False):
    """``(x, n, gap, basis)``: a symmetric n x n matrix with a pair of eigenvalues at the
    relative gap ``gap`` (relative to the largest eigenvalue; ``exact``: 0 may be drawn,
    an exact tie in exact arithmetic, split by LAPACK's rounding)."""
    n = draw(st.integers(min_size, 4))
    gap = 10.0 ** draw(st.floats(-13.0, -4.0))
    if exact and draw(st.booleans()):
        gap = 0.0
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


ACCURATE = ("hessian", "jacfwd(jacrev)", "jacrev(jacfwd)", "jacrev(jacrev)")


def _check_values_routes(scalar, point, expected, gap, what):
    """Every second-derivative route of a function of the eigen/singular values at a
    (near) tie against ``expected`` (see the module docstring for the tolerances)."""
    scale = max(1.0, float(np.max(np.abs(expected))))
    tied = gap <= TIE_RTOL_EPS * EPS
    # within a factor 2 of the tie tolerance, rounding the matrix decides the side: either
    # answer of forward over forward is right there
    boundary = TIE_RTOL_EPS * EPS / 2 <= gap <= 2 * TIE_RTOL_EPS * EPS
    for route, h in second_derivatives(scalar, point).items():
        if route in ACCURATE:
            np.testing.assert_allclose(h, expected, rtol=0, atol=1e-7 * scale,
                                       err_msg=f"{what}: {route}")
        elif boundary and not np.all(np.isfinite(h)):
            finite = np.isfinite(h)
            np.testing.assert_allclose(h[finite], expected[finite], rtol=0, atol=1e-7 * scale,
                                       err_msg=f"{what}: {route}")
        elif not tied:
            np.testing.assert_allclose(h, expected, rtol=0, atol=64 * EPS / gap * scale,
                                       err_msg=f"{what}: {route}")
        else:   # forward over forward: NaN across the tie, exact elsewhere
            finite = np.isfinite(h)
            assert not np.all(finite), f"{what}: {route} is finite across the tie"
            np.testing.assert_allclose(h[finite], expected[finite], rtol=0, atol=1e-7 * scale,
                                       err_msg=f"{what}: {route}")
    direction = np.random.default_rng(5).uniform(0.5, 1.5, point.size)
    np.testing.assert_allclose(dk.hvp(scalar, (point,), (direction,))[0], expected @ direction,
                               rtol=0, atol=1e-7 * scale * direction.sum(), err_msg=f"{what}: hvp")


@settings(max_examples=12, deadline=None)
@given(near_ties())
def test_functions_of_eigenvalues_near_ties(case):
    """1.5 sum(w^2) and log det through eigvalsh against the same functions of the read
    matrix (no eigendecomposition): first order to 1e-12, second order as the module
    docstring states."""
    x, n, gap, _ = case

    def through_eigvalsh(a):
        w = dnp.linalg.eigvalsh(a)
        return 1.5 * dnp.sum(w ** 2) + dnp.sum(dnp.log(w))

    def smooth(a):
        return 1.5 * dnp.sum(_read(a, n) ** 2) + dnp.linalg.slogdet(_read(a, n))[1]

    expected = _reference_hessian(smooth, x)
    gradient = np.asarray(dk.grad(_flat(smooth, x.shape))(x.ravel()))
    for engine in (dk.jacfwd, dk.jacrev):
        got = np.asarray(engine(_flat(through_eigvalsh, x.shape))(x.ravel()))
        np.testing.assert_allclose(got, gradient, rtol=0, atol=1e-12 * max(
            1.0, float(np.max(np.abs(gradient)))))
    _check_values_routes(_flat(through_eigvalsh, x.shape), x.ravel(), expected, gap,
                         "eigvalsh")


@settings(max_examples=12, deadline=None)
@given(near_ties())
def test_functions_of_singular_values_near_ties(case):
    """sum(s^2) = sum(X^2) (Hessian 2 I) and the nuclear norm (= tr sqrtm(X^T X), through
    expm/logm's Frechet derivatives, exact at every gap) of a nonsymmetric matrix with the
    same close pair of singular values: as the module docstring states."""
    x, n, gap, basis = case
    a = x @ basis

    def through_svd(v):
        s = dnp.linalg.svd(v.reshape(n, n), compute_uv=False)
        return dnp.sum(s ** 2) + dnp.linalg.matrix_norm(v.reshape(n, n), ord="nuc")

    def smooth(v):
        m = v.reshape(n, n)
        return dnp.sum(m ** 2) + dnp.trace(dsl.sqrtm(m.T @ m))

    expected = np.asarray(dk.hessian(smooth)(a.ravel()))
    _check_values_routes(through_svd, a.ravel(), expected, gap, "svdvals")


@st.composite
def complex_near_ties(draw):
    """``(h, a, gap)``: a Hermitian n x n matrix and a complex (n + 1) x n matrix (n = 2, 3) whose
    eigenvalues (singular values) are ``scale * (1, 1 + gap * top, 2, ...)``: a pair at the
    relative gap ``gap`` (relative to the largest, ``top``; 0 too)."""
    n = draw(st.integers(2, 3))
    gap = draw(st.one_of(st.just(0.0), st.floats(-13.0, -4.0).map(lambda e: 10.0 ** e)))
    scale = 10.0 ** draw(st.floats(-1.0, 1.0))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))

    def unitary(k):
        return np.linalg.qr(rng.normal(size=(k, k)) + 1j * rng.normal(size=(k, k)))[0]

    top = max(n - 1, 1.0 + gap)
    values = scale * np.array([1.0, 1.0 + gap * top] + list(range(2, n)), np.float64)[:n]
    q = unitary(n)
    h = q @ np.diag(values) @ q.conj().T
    return 0.5 * (h + h.conj().T), unitary(n + 1)[:, :n] @ np.diag(values) @ unitary(n), gap


@settings(max_examples=5, deadline=None)
@given(complex_near_ties())
def test_complex_values_near_ties(case):
    """Complex Hermitian eigvalsh (1.5 sum(w^2) = 1.5 sum(|T(A)|^2)) and a complex
    rectangular svd (sum(s^2) + nuclear norm = sum(|A|^2) + tr sqrtm(A^H A)), in real
    coordinates: as the module docstring states."""
    from diffkit.testing.edges import _Vector

    h, a, gap = case
    n = h.shape[0]

    def read(x):
        low = dnp.tril(x, -1)
        return low + dnp.conj(low).T + dnp.real(dnp.diag(dnp.diag(x))) * np.eye(n)

    for fun, smooth, point, what in (
            (lambda x: 1.5 * dnp.sum(dnp.linalg.eigvalsh(x) ** 2),
             lambda x: 1.5 * dnp.sum(dnp.abs(read(x)) ** 2), h, "complex eigvalsh"),
            (lambda x: dnp.sum(dnp.linalg.svd(x, compute_uv=False) ** 2) +
             dnp.linalg.matrix_norm(x, ord="nuc"),
             lambda x: dnp.sum(dnp.abs(x) ** 2) + dnp.real(dnp.trace(dsl.sqrtm(dnp.conj(x).T @ x))),
             a, "complex svd")):
        vec, reference = _Vector(fun, (point,)), _Vector(smooth, (point,))
        expected = np.asarray(dk.hessian(lambda v, f=reference: dnp.sum(f(v)))(reference.point))
        _check_values_routes(lambda v, f=vec: dnp.sum(f(v)), vec.point, expected, gap, what)


def _top_hessian(x):
    """The closed form of the Hessian of the largest eigenvalue (simple) of the symmetric
    matrix eigh reads from x's lower triangle, in x's flat coordinates."""
    w, v = np.linalg.eigh(x)
    n = x.shape[0]
    basis = []
    for e in np.eye(n * n).reshape(-1, n, n):
        low = np.tril(e)
        basis.append(low + np.tril(low, -1).T)
    coupling = np.array([[v[:, i] @ e @ v[:, -1] for i in range(n - 1)] for e in basis])
    return 2 * (coupling / (w[-1] - w[:-1])) @ coupling.T


@settings(max_examples=10, deadline=None)
@given(near_ties(min_size=3, exact=True))
def test_top_eigenvalue_next_to_a_close_pair(case):
    """eigvalsh(X)[-1], a simple maximum next to a close, LAPACK-split or exactly tied pair:
    its Hessian involves only gaps to the maximum; every route and hvp give the closed form,
    and finite differences of NumPy's eigvalsh agree (module docstring)."""
    x, n, gap, _ = case
    exact = _top_hessian(x)
    scale = float(np.max(np.abs(exact)))
    top = _flat(lambda a: dnp.linalg.eigvalsh(a)[-1], x.shape)
    for route, h in second_derivatives(top, x.ravel()).items():
        np.testing.assert_allclose(h, exact, rtol=0, atol=1e-10 * scale, err_msg=route)
    direction = np.random.default_rng(n).normal(size=x.size)
    np.testing.assert_allclose(dk.hvp(top, (x.ravel(),), (direction,))[0], exact @ direction,
                               rtol=0, atol=1e-10 * scale * np.abs(direction).sum())
    size = float(np.max(np.abs(np.linalg.eigvalsh(x))))
    numeric = _fd_hessian(lambda v: float(np.linalg.eigvalsh(v.reshape(n, n))[-1]), x,
                          2e-3 * size)
    np.testing.assert_allclose(exact, numeric, rtol=0, atol=1e-7 * scale)


@settings(max_examples=6, deadline=None)
@given(near_ties())
def test_summed_pullbacks_differentiated_in_reverse(case):
    """The gradients of 1.5 sum(w^2) and sum(log w) as two pullbacks of one eigvalsh,
    summed, then jacrev: the channel holds two contributions and cannot separate their
    f'': NaN across a tie (never a finite guess), the quotients' accuracy elsewhere."""
    x, n, gap, _ = case

    def gradient(v):
        w, pull = dk.vjp(dnp.linalg.eigvalsh, v.reshape(n, n))
        return dnp.ravel(pull(3 * w)[0] + pull(1 / w)[0])

    def smooth(a):
        return 1.5 * dnp.sum(_read(a, n) ** 2) + dnp.linalg.slogdet(_read(a, n))[1]

    expected = _reference_hessian(smooth, x)
    scale = max(1.0, float(np.max(np.abs(expected))))
    got = np.asarray(dk.jacrev(gradient)(x.ravel()))
    if gap <= TIE_RTOL_EPS * EPS:
        assert np.any(np.isnan(got))
        finite = np.isfinite(got)
        np.testing.assert_allclose(got[finite], expected[finite], rtol=0, atol=1e-7 * scale)
    else:
        np.testing.assert_allclose(got, expected, rtol=0, atol=64 * EPS / gap * scale)
    np.testing.assert_allclose(dk.jacfwd(gradient)(x.ravel()), expected, rtol=0,
                               atol=1e-7 * scale)


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
