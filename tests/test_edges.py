"""The generic checker at the edges: every sample of tests/records/edges/ through
``diffkit.testing.edges.check_edge`` (value against NumPy/SciPy, jacfwd == jacrev bit for
bit, finite differences or the documented convention, vmap against loops, a symmetric Hessian
equal to finite differences of the gradient, float32 and complex64 kept).

A sample marked ``known`` fails today because of a bug another line of work is fixing: it is a
strict xfail, so the fix turning it green fails this test until the mark is removed.
"""

from __future__ import annotations

import numpy as np
import pytest
from records import EDGES, EXEMPT

from diffkit.testing.edges import check_edge


def _param(sample):
    marks = [pytest.mark.xfail(strict=True, reason=sample.known)] if sample.known else []
    return pytest.param(sample, id=sample.id, marks=marks)


@pytest.mark.filterwarnings("error::diffkit.errors.PerformanceWarning")
@pytest.mark.parametrize("sample", [_param(s) for s in EDGES])
def test_edge(sample):
    with np.errstate(all="ignore"):
        check_edge(sample.fun, sample.args, reference=sample.reference,
                   differentiable=bool(sample.differentiable), fd_side=sample.fd_side,
                   jacobian=sample.jacobian, hessian=sample.hessian,
                   second_order=sample.second_order,
                   batching=sample.batching, dtypes=sample.dtypes,
                   value_rtol=sample.value_rtol, ulps=sample.ulps, fd_rtol=sample.fd_rtol)


def test_prod_with_an_infinite_entry_first_order():
    """The partials of prod([inf, 0, 2]) are (0 * 2, inf * 2, inf * 0): both engines give
    them, with no NaN leaking from the zero tangents of the other entries."""
    import diffkit as dk
    import diffkit.numpy as dnp

    x = np.array([np.inf, 0.0, 2.0])
    expected = np.array([0.0, np.inf, np.nan])
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(dk.jacfwd(dnp.prod)(x), expected)
        np.testing.assert_array_equal(dk.jacrev(dnp.prod)(x), expected)


# --- completeness: every primitive is visited at an edge -----------------------------------------


def _reached_by_edges():
    """The primitives whose implementation runs when each edge sample's function is
    evaluated, batched, pushed forward and pulled back at its point (rules included)."""
    from test_primitives import primitives_reached

    import diffkit as dk
    from diffkit.testing.edges import _Vector

    with primitives_reached() as reached:
        for sample in EDGES:
            with np.errstate(all="ignore"):
                try:
                    sample.fun(*sample.args)
                    dk.vmap(sample.fun)(*(np.stack([a, a]) for a in sample.args))
                    vec = _Vector(sample.fun, sample.args)
                    out, pullback = dk.vjp(vec, vec.point)
                    pullback(np.ones_like(out))
                    dk.jvp(vec, (vec.point,), (np.ones_like(vec.point),))
                except Exception:  # no float input or output; the sample's own test reports
                    pass           # anything else
    return reached


def test_every_primitive_has_an_edge_sample():
    """Every registered primitive is reached by some edge sample, or is in EXEMPT with the
    reason it has no edge of its own."""
    import test_primitives

    from diffkit.core.primitive import PRIMITIVES

    test_primitives._import_all_of_diffkit()
    missing = sorted(set(PRIMITIVES) - _reached_by_edges() - set(EXEMPT))
    assert not missing, f"primitives with no edge sample in tests/records/edges/: {missing}"
    stale = sorted(set(EXEMPT) - set(PRIMITIVES))
    assert not stale, f"EXEMPT names primitives that no longer exist: {stale}"


# --- cases where diffkit beats JAX: kept as tests so that they stay won ------------------------


def _spd(n, seed):
    a = np.random.default_rng(seed).normal(size=(n, n))
    return a @ a.T + n * np.eye(n)


def test_sqrtm_derivative_solves_the_sylvester_equation():
    """d sqrtm(A)[E] = Y with X Y + Y X = E (X = sqrtm(A)); at A = I it is E / 2. JAX has no
    derivative for sqrtm."""
    import scipy.linalg

    import diffkit as dk
    import diffkit.scipy.linalg as dsl

    a, e = _spd(3, 0), np.random.default_rng(1).normal(size=(3, 3))
    x = scipy.linalg.sqrtm(a).real
    expected = scipy.linalg.solve_sylvester(x, x, e)
    _, forward = dk.jvp(dsl.sqrtm, (a,), (e,))
    np.testing.assert_allclose(forward, expected, rtol=1e-7, atol=1e-10)
    reverse = np.einsum("ijkl,kl->ij", dk.jacrev(dsl.sqrtm)(a), e)
    np.testing.assert_allclose(reverse, expected, rtol=1e-7, atol=1e-10)
    _, at_identity = dk.jvp(dsl.sqrtm, (np.eye(3),), (e,))
    np.testing.assert_allclose(at_identity, e / 2, rtol=1e-7, atol=1e-12)


def test_logm_derivative_is_the_divided_difference_frechet_derivative():
    """For symmetric A = V diag(w) V^T: d logm(A)[E] = V (L * (V^T E V)) V^T with
    L_ij = (log w_i - log w_j) / (w_i - w_j) and L_ii = 1 / w_i. JAX has no logm derivative."""
    import diffkit as dk
    import diffkit.scipy.linalg as dsl

    a, e = _spd(3, 2), np.random.default_rng(3).normal(size=(3, 3))
    w, v = np.linalg.eigh(a)
    dw = w[:, None] - w[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        divided = np.where(np.eye(3, dtype=bool), 1 / w[:, None],
                           (np.log(w)[:, None] - np.log(w)[None, :]) / dw)
    expected = v @ (divided * (v.T @ e @ v)) @ v.T
    _, forward = dk.jvp(dsl.logm, (a,), (e,))
    np.testing.assert_allclose(forward, expected, rtol=1e-7, atol=1e-10)
    reverse = np.einsum("ijkl,kl->ij", dk.jacrev(dsl.logm)(a), e)
    np.testing.assert_allclose(reverse, expected, rtol=1e-7, atol=1e-10)


def test_solve_sylvester_derivative():
    """X = solve_sylvester(A, B, Q) solves AX + XB = Q, so its tangent solves
    A dX + dX B = dQ - dA X - X dB, in all three arguments at once."""
    import scipy.linalg

    import diffkit as dk
    import diffkit.scipy.linalg as dsl

    rng = np.random.default_rng(4)
    a, b = _spd(3, 5), _spd(2, 6)
    q = rng.normal(size=(3, 2))
    da, db, dq = rng.normal(size=(3, 3)), rng.normal(size=(2, 2)), rng.normal(size=(3, 2))
    x = scipy.linalg.solve_sylvester(a, b, q)
    expected = scipy.linalg.solve_sylvester(a, b, dq - da @ x - x @ db)
    _, forward = dk.jvp(dsl.solve_sylvester, (a, b, q), (da, db, dq))
    np.testing.assert_allclose(forward, expected, rtol=1e-7, atol=1e-10)
    u = rng.normal(size=(3, 2))
    _, pullback = dk.vjp(dsl.solve_sylvester, a, b, q)
    pulled = sum(np.sum(c * t) for c, t in zip(pullback(u), (da, db, dq)))
    np.testing.assert_allclose(pulled, np.sum(u * expected), rtol=1e-7)


def test_custom_vjp_under_jacfwd():
    """JAX refuses forward mode through a custom_vjp function; diffkit differentiates it,
    and jacfwd equals jacrev and the true derivative."""
    import diffkit as dk
    import diffkit.numpy as dnp

    @dk.custom_vjp
    def f(x):
        return dnp.sin(x) * x

    def f_fwd(x):
        return f(x), x

    def f_bwd(x, g):
        return (g * (dnp.cos(x) * x + dnp.sin(x)),)

    f.defvjp(f_fwd, f_bwd)
    x = np.array([0.0, 0.5, -1.3])
    expected = np.diag(np.cos(x) * x + np.sin(x))
    np.testing.assert_allclose(dk.jacfwd(f)(x), expected, rtol=1e-7, atol=1e-15)
    np.testing.assert_allclose(dk.jacrev(f)(x), expected, rtol=1e-7, atol=1e-15)


def test_hessian_of_i0_at_zero_is_one_half():
    """i0(x) = 1 + x**2 / 4 + ..., so i0''(0) = 1/2 (JAX's rule gives NaN there)."""
    import diffkit as dk
    import diffkit.scipy.special as dsp

    assert dk.hessian(dsp.i0)(0.0) == pytest.approx(0.5, rel=1e-7)
    assert dk.grad(dsp.i0)(0.0) == 0.0


def test_hypot_at_1e200_does_not_overflow():
    """hypot(1e200, 1e200) = sqrt(2) 1e200 with gradient (1, 1) / sqrt(2); a rule through
    x**2 + y**2 overflows to inf and gives NaN or 0."""
    import diffkit as dk
    import diffkit.numpy as dnp

    value, grads = dk.value_and_grad(dnp.hypot, argnums=(0, 1))(1e200, 1e200)
    assert value == pytest.approx(np.sqrt(2) * 1e200, rel=1e-12)
    np.testing.assert_allclose(grads, [1 / np.sqrt(2)] * 2, rtol=1e-12)


# --- near ties: repeated eigenvalues and singular values split by 1e-6, 1e-9, 1e-12 ---------------
# (docs/conventions.md, the tie rule at every order.) Each sample is checked at first and second
# order, in both engines and every route (hessian, the four nested Jacobians), against an
# exact formula (functions of the eigen/singular values alone, funm against sinm) or finite
# differences of NumPy's function at a step of 2e-3, where the function is smooth (the
# projector onto a cluster of close eigenvalues, the polar factor). Stated bounds, absolute,
# relative to the reference's largest entry: functions of the vectors lose about
# n eps (|w| / gap)^k at order k (8 n eps (|w| / gap)^k allowed) and are NaN at second order
# where the relative gap is within sqrt(TIE_RTOL_EPS eps) = 3.4e-7; funm and functions of the
# values are accurate to 1e-8 at every gap by hessian, jacfwd(jacrev), jacrev(jacfwd) and
# jacrev(jacrev); jacfwd(jacfwd) of functions of the values loses eps |w| / gap (64 eps |w| /
# gap allowed); the largest eigenvalue next to the close pair is exact (1e-10) by every route,
# at a LAPACK-split tie too. A hook for roots' clusters: NEAR_TIES takes any (name, builder)
# whose builder returns the check_near_tie arguments.

NEAR_GAPS = (1e-6, 1e-9, 1e-12)
_EPS = np.finfo(np.float64).eps
_QN = np.linalg.qr(np.array([[1.0, 2.0, 0.5], [0.3, -1.0, 2.0], [1.5, 0.2, 1.0]]))[0]
_QS = np.linalg.qr(np.array([[0.2, 1.0, -0.7], [1.1, 0.4, 0.3], [-0.5, 0.9, 1.3]]))[0]
_FD_ERROR = 1e-8          # Richardson-extrapolated central differences at h = 2e-3


def _near(gap):
    """Symmetric 3x3 with eigenvalues (1, 1 + 3 gap, 3): the relative gap is ``gap``."""
    x = _QN @ np.diag([1.0, 1.0 + 3 * gap, 3.0]) @ _QN.T
    return 0.5 * (x + x.T)


def _near_svd(gap):
    """3x3 with singular values (3, 1 + 3 gap, 1)."""
    return _QN @ np.diag([3.0, 1.0 + 3 * gap, 1.0]) @ _QS.T


def _read(x):
    """The symmetric matrix eigh reads from the lower triangle of x."""
    import diffkit.numpy as dnp
    low = dnp.tril(x, -1)
    return low + low.T + dnp.diag(dnp.diag(x)) * np.eye(3)


def _fd_jacobian(f, x, h=2e-3):
    """Fourth-order central differences of the flat NumPy function f at x."""
    x = np.asarray(x, np.float64)
    cols = []
    for j in range(x.size):
        e = np.zeros(x.size)
        e[j] = h
        at = [np.ravel(f((x.ravel() + k * e).reshape(x.shape))) for k in (-2, -1, 1, 2)]
        cols.append((at[0] - 8 * at[1] + 8 * at[2] - at[3]) / (12 * h))
    return np.stack(cols, axis=-1)


def _fd_hessian(f, x, u, h=2e-3):
    """Richardson-extrapolated central second differences of <u, f> (NumPy f) at x."""
    x = np.asarray(x, np.float64).ravel()
    n = x.size

    def pair(v):
        return float(np.sum(u * np.ravel(f(v.reshape(3, 3)))))

    def second(step):
        out = np.zeros((n, n))
        for i in range(n):
            for j in range(i, n):
                ei, ej = np.eye(n)[i] * step, np.eye(n)[j] * step
                out[i, j] = out[j, i] = (pair(x + ei + ej) - pair(x + ei - ej) -
                                         pair(x - ei + ej) + pair(x - ei - ej)) / (4 * step ** 2)
        return out

    return (4 * second(h / 2) - second(h)) / 3


def _exact(fun_dk, x):
    """Jacobian and Hessian-of-<u, f> references from a smooth formula, by diffkit."""
    import diffkit as dk
    import diffkit.numpy as dnp
    jac = np.asarray(dk.jacfwd(lambda v: dnp.ravel(fun_dk(v.reshape(3, 3))))(x.ravel()))
    return jac, lambda u: np.asarray(dk.hessian(
        lambda v: dnp.sum(u * dnp.ravel(fun_dk(v.reshape(3, 3)))))(x.ravel()))


def _vector_bounds(gap):
    first = 8 * 3 * _EPS / gap
    tol2 = np.sqrt(512 * _EPS)
    return dict(first_error=first, second_error=8 * 3 * _EPS / gap ** 2, second_nan=gap <= tol2,
                fd_error=_FD_ERROR)


def _values_bounds(gap):
    return dict(first_error=1e-12, second_error={"hessian": 1e-8, "jacfwd(jacrev)": 1e-8,
                                                 "jacrev(jacrev)": 1e-8, "jacrev(jacfwd)": 1e-8,
                                                 "jacfwd(jacfwd)": 64 * _EPS / gap})


def _eigvalsh_sample(gap):
    import diffkit.numpy as dnp
    x = _near(gap)
    jac, hess = _exact(lambda a: dnp.stack([1.5 * dnp.sum(_read(a) ** 2),
                                           dnp.linalg.slogdet(_read(a))[1]]), x)
    fun = lambda a: dnp.stack([1.5 * dnp.sum(dnp.linalg.eigvalsh(a) ** 2),  # noqa: E731
                               dnp.sum(dnp.log(dnp.linalg.eigvalsh(a)))])
    return fun, (x,), dict(jacobian=jac, hessian=hess, **_values_bounds(gap))


def _svdvals_sample(gap):
    import diffkit.numpy as dnp
    import diffkit.scipy.linalg as dsl
    x = _near_svd(gap)
    jac, hess = _exact(lambda a: dnp.stack([dnp.sum(a ** 2), dnp.trace(dsl.sqrtm(a.T @ a))]), x)
    fun = lambda a: dnp.stack([dnp.sum(dnp.linalg.svd(a, compute_uv=False) ** 2),  # noqa: E731
                               dnp.linalg.norm(a, "nuc")])
    return fun, (x,), dict(jacobian=jac, hessian=hess, **_values_bounds(gap))


def _read_basis(x):
    """The symmetric matrices eigh reads from the unit vectors of x's flat coordinates."""
    basis = []
    for e in np.eye(x.size).reshape(-1, *x.shape):
        low = np.tril(e)
        basis.append(low + np.tril(low, -1).T)
    return basis


def _top_sample(gap):
    """eigvalsh(X)[-1], the largest eigenvalue (simple) next to the close pair: the gradient
    v^T E v and the Hessian sum_i 2 (v_i^T E v)(v_i^T F v) / (w - w_i) in closed form."""
    import diffkit.numpy as dnp
    x = _near(gap)
    w, v = np.linalg.eigh(x)
    basis = _read_basis(x)
    jac = np.array([[v[:, -1] @ e @ v[:, -1] for e in basis]])
    coupling = np.array([[v[:, i] @ e @ v[:, -1] for i in range(2)] for e in basis])
    hess = 2 * (coupling / (w[-1] - w[:-1])) @ coupling.T
    return (lambda a: dnp.linalg.eigvalsh(a)[-1:]), (x,), dict(
        jacobian=jac, hessian=lambda u: u[0] * hess, first_error=1e-12, second_error=1e-10)


def _funm_sample(gap):
    import diffkit.numpy as dnp
    import diffkit.scipy.linalg as dsl
    x = _near(gap)
    jac, hess = _exact(dsl.sinm, x)
    return (lambda a: dsl.funm(a, dnp.sin)), (x,), dict(jacobian=jac, hessian=hess,
                                                         first_error=1e-12, second_error=1e-9)


def _projector(cols):
    def sample(gap):
        import diffkit.numpy as dnp
        x = _near(gap)

        def numpy_fun(a):
            v = np.linalg.eigh(a)[1][:, cols]
            return v @ v.T

        def fun(a):
            v = dnp.linalg.eigh(a)[1][:, cols]
            return v @ v.T

        return fun, (x,), dict(jacobian=_fd_jacobian(numpy_fun, x),
                               hessian=lambda u: _fd_hessian(numpy_fun, x, u),
                               **_vector_bounds(gap))
    return sample


def _polar_sample(gap):
    import diffkit.numpy as dnp
    x = _near_svd(gap)

    def numpy_fun(a):
        u, _, vh = np.linalg.svd(a)
        return u @ vh

    def fun(a):
        u, _, vh = dnp.linalg.svd(a)
        return u @ vh

    return fun, (x,), dict(jacobian=_fd_jacobian(numpy_fun, x),
                           hessian=lambda u: _fd_hessian(numpy_fun, x, u), **_vector_bounds(gap))


NEAR_TIES = [("eigvalsh", _eigvalsh_sample), ("svdvals", _svdvals_sample),
             ("eigvalsh_top", _top_sample),
             ("funm_sin", _funm_sample), ("eigh_cluster_projector", _projector([0, 1])),
             ("eigh_simple_projector", _projector([2])), ("svd_polar", _polar_sample)]


@pytest.mark.parametrize("gap", NEAR_GAPS, ids=lambda g: f"gap{g:g}")
@pytest.mark.parametrize("name,build", NEAR_TIES, ids=[n for n, _ in NEAR_TIES])
def test_near_tie(name, build, gap):
    from diffkit.testing.edges import check_near_tie

    fun, args, expected = build(gap)
    with np.errstate(all="ignore"):
        check_near_tie(fun, args, **expected)


def test_top_eigenvalue_next_to_a_split_tie():
    """The largest eigenvalue next to a pair within the tie tolerance (LAPACK-split): every
    route exact, as near the tie."""
    from diffkit.testing.edges import check_near_tie

    fun, args, expected = _top_sample(1e-14)
    with np.errstate(all="ignore"):
        check_near_tie(fun, args, **expected)


# --- every NaN the tie rule puts in stays NaN at second order, in every route -------------------


def _tie_nan_samples():
    import diffkit.numpy as dnp

    def projector(cols):
        return lambda a: (lambda v: v @ v.T)(dnp.linalg.eigh(a)[1][:, cols])

    def polar(a):
        u, _, vh = dnp.linalg.svd(a)
        return u @ vh

    def left_projector(a):
        u = dnp.linalg.svd(a)[0][:, :1]
        return u @ u.T

    def eig_projector(a):
        v = dnp.linalg.eig(a)[1][:, :1]
        return dnp.real(v @ dnp.conj(v).T)

    double = np.diag([1.0, 1.0, 3.0])
    split = _near(1e-14)          # within the tie tolerance, split by rounding
    return [("eigh_tied_projector", projector([0, 1]), double),
            ("eigh_simple_projector_next_to_tie", projector([2]), double),
            ("eigh_tied_projector_split", projector([0, 1]), split),
            ("svd_polar_identity", polar, np.eye(3)),
            ("svd_left_projector_tie", left_projector, np.diag([2.0, 2.0, 1.0])),
            ("eig_projector_tie", eig_projector, np.diag([1.0, 1.0, 3.0]) + np.triu(
                np.ones((3, 3)), 1) * [[0, 0, 0.5], [0, 0, 0.2], [0, 0, 0]])]


@pytest.mark.parametrize("name,fun,point", _tie_nan_samples(),
                         ids=[s[0] for s in _tie_nan_samples()])
def test_tie_nan_propagates(name, fun, point):
    from diffkit.testing.edges import check_nan_propagates

    with np.errstate(all="ignore"):
        check_nan_propagates(fun, (point,))
