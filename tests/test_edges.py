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
