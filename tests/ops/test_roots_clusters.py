"""``roots`` at numerically split multiple roots (the tie rule) and ``vmap(roots)``'s order.

NumPy splits an m-fold root by about eps^(1/m) (a double root by ~1e-8), where the simple
root formula ``-dp(r) / p'(r)`` gives finite derivatives of ~1e7 that mean nothing. Every
root of such a cluster has a NaN derivative in both engines and at every order; the other
roots keep their exact derivatives ``dr_j / dp_k = -r_j^(n-k) / p'(r_j)``.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.ops.polynomial import in_cluster_p

SETTINGS = settings(max_examples=25, deadline=None)


def _jacobians(p):
    """The Jacobians of the real and imaginary parts of ``roots(p)`` from both engines."""
    real = lambda q: dnp.real(dnp.roots(q))  # noqa: E731
    imag = lambda q: dnp.imag(dnp.roots(q))  # noqa: E731
    return [dk.jacfwd(real)(p), dk.jacrev(real)(p), dk.jacfwd(imag)(p), dk.jacrev(imag)(p)]


def _exact_jacobian(roots, p):
    """``dr_j / dp_k = -r_j^(n-k) / p'(r_j)`` at the exact roots, (n, n + 1), complex."""
    n = len(p) - 1
    slope = np.polyval(np.polyder(p), roots)
    return -(roots[:, None] ** np.arange(n, -1, -1)[None, :]) / slope[:, None]


@st.composite
def clustered(draw):
    """A polynomial with an m-fold root (m = 2 or 3) at a random place and scale, plus one
    or two simple roots well away from it; returns ``(p, centre, m, simple_roots)``."""
    m = draw(st.sampled_from([2, 3]))
    if draw(st.booleans()):
        # small integer roots: exact coefficients, often with zeros among them (a zero
        # coefficient must not hide the unknown derivatives along it)
        centre = float(draw(st.sampled_from([-2, -1, 1, 2])))
        simple = [centre + draw(st.sampled_from([-4.0, -3.0, 3.0, 4.0]))]
        return np.poly([centre] * m + simple), centre, m, np.array(simple)
    scale = 10.0 ** draw(st.floats(-2, 2))
    centre = scale * draw(st.sampled_from([-1.0, 1.0])) * draw(st.floats(0.5, 2.0))
    simple = [centre + scale * draw(st.sampled_from([-1.0, 1.0])) * draw(st.floats(1.5, 4.0))
              for _ in range(draw(st.integers(1, 2)))]
    if len(simple) == 2 and abs(simple[0] - simple[1]) < scale:
        simple = simple[:1]
    lead = 10.0 ** draw(st.floats(-1, 1))
    return lead * np.poly([centre] * m + simple), centre, m, np.array(simple)


@SETTINGS
@given(clustered())
def test_cluster_roots_nan_simple_roots_exact(case):
    p, centre, m, simple = case
    found = np.roots(p)
    near = np.argsort(np.abs(found - centre))[:m]
    assert np.all(in_cluster_p(p, found)[near])
    for jac in _jacobians(p):
        assert np.all(np.isnan(jac[near])), jac
    far = np.setdiff1d(np.arange(len(found)), near)
    exact = _exact_jacobian(simple, p)
    jf = _jacobians(p)
    for j in far:
        k = np.argmin(np.abs(simple - found[j]))
        # rtol 1e-7: the simple root is computed to about eps times its condition number
        np.testing.assert_allclose(jf[0][j] + 1j * jf[2][j], exact[k], rtol=1e-7,
                                   atol=1e-9 * np.abs(exact[k]).max())
        np.testing.assert_array_equal(jf[0][j], jf[1][j])


@SETTINGS
@given(clustered())
def test_cluster_nan_at_second_order_in_every_route(case):
    p, centre, m, _ = case
    index = int(np.argmin(np.abs(np.roots(p) - centre)))
    f = lambda q: dnp.real(dnp.roots(q))[index]  # noqa: E731
    for second in (dk.hessian(f), dk.jacfwd(dk.jacfwd(f)), dk.jacrev(dk.jacrev(f)),
                   dk.jacrev(dk.jacfwd(f))):
        assert np.all(np.isnan(second(p)))
    _, hvp = dk.jvp(dk.grad(f), (p,), (np.ones_like(p),))
    assert np.all(np.isnan(hvp))


def test_the_issue_example_double_root():
    p = np.poly([2.0, 2.0, 5.0])   # NumPy: 2 +- 2.7e-8 i, where 1 / p'(r) gave +-5e7
    for jac in _jacobians(p):
        assert np.all(np.isnan(jac[1:]))
    # the simple root 5: dr/dp_k = -5^(3-k) / p'(5), p'(5) = 9
    np.testing.assert_allclose(dk.jacrev(lambda q: dnp.real(dnp.roots(q)))(p)[0],
                               -(5.0 ** np.arange(3, -1, -1)) / 9.0, rtol=1e-12)


def test_zero_tangent_or_cotangent_gives_zero_not_nan():
    p = np.poly([1.0, 1.0, 3.0])
    _, tangent = dk.jvp(dnp.roots, (p,), (np.zeros(4),))
    np.testing.assert_array_equal(tangent, 0)
    index = int(np.argmin(np.abs(np.roots(p) - 3.0)))   # a cotangent on the simple root only
    grad = dk.grad(lambda q: dnp.real(dnp.roots(q))[index])(p)
    np.testing.assert_allclose(grad, -(3.0 ** np.arange(3, -1, -1)) / 4.0, rtol=1e-12)


def test_double_root_at_zero_from_trailing_zeros():
    p = np.array([1.0, -3.0, 2.0, 0.0, 0.0])          # x^2 (x - 1)(x - 2): 0 twice, exactly
    for jac in _jacobians(p):
        assert np.all(np.isnan(jac[2:]))
        assert np.all(np.isfinite(jac[:2]))


@pytest.mark.parametrize("gap", [1e-3, 1e-4])
def test_close_but_distinct_roots_keep_their_derivatives(gap):
    roots = np.array([1.0, 1.0 + gap, -2.0])
    p = np.poly(roots)
    found = np.roots(p)
    assert not np.any(in_cluster_p(p, found))
    jac = dk.jacfwd(lambda q: dnp.roots(q))(p)
    exact = _exact_jacobian(found, p)
    # the roots are conditioned like 1 / gap: rtol 1e-7 / gap against the exact formula
    np.testing.assert_allclose(jac, exact, rtol=1e-9 / gap)


def test_vmap_orders_roots_as_numpy_with_trailing_zeros():
    batch = np.array([[1.0, -3.0, 2.0, 0.0], [1.0, -6.0, 11.0, -6.0], [2.0, 1.0, 0.0, 0.0]])
    got = dk.vmap(dnp.roots)(batch)
    for row, p in zip(got, batch):
        np.testing.assert_allclose(row, np.roots(p).astype(complex), rtol=1e-12, atol=1e-15)
    # an order-dependent function: vmap(grad) equals the loop
    f = lambda q: dnp.real(dnp.roots(q))[0] * 2.0 + dnp.real(dnp.roots(q))[1]  # noqa: E731
    batch = batch[:2]
    np.testing.assert_allclose(dk.vmap(dk.grad(f))(batch),
                               np.stack([dk.grad(f)(p) for p in batch]), rtol=1e-12)
