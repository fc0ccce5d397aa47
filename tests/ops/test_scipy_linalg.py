"""Tests for diffkit.scipy.linalg beyond the generic records: values against SciPy,
closed-form derivatives (analytic tolerances), complex inputs, second derivatives of the
matrix functions, vmap of gradients, and SciPy's errors."""

import numpy as np
import pytest
import scipy.linalg as sl

import diffkit as dk
import diffkit.scipy.linalg as S

RTOL = 1e-7
ATOL = 1e-10


def rand(*shape, seed=0):
    return np.random.default_rng(seed + 7 * sum(shape)).normal(size=shape)


def well(n, seed=0):
    return 0.3 * rand(n, n, seed=seed) + 2 * np.eye(n)


def spd(n, seed=0):
    a = rand(n, n, seed=seed)
    return a @ a.T + np.eye(n)


def close(x, y, rtol=RTOL, atol=ATOL):
    np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=atol)


# --- values against SciPy --------------------------------------------------------------------


@pytest.mark.parametrize("assume_a", [None, "gen", "sym", "her", "pos", "diagonal",
                                      "upper triangular", "lower triangular"])
@pytest.mark.parametrize("lower", [False, True])
def test_solve_matches_scipy(assume_a, lower):
    a = spd(4) + 0.2 * np.triu(rand(4, 4, seed=1))   # not symmetric: one triangle is read
    b = rand(4, 2, seed=2)
    close(S.solve(a, b, assume_a=assume_a, lower=lower),
          sl.solve(a, b, assume_a=assume_a, lower=lower))
    close(S.solve(a, b[:, 0], assume_a=assume_a, lower=lower),
          sl.solve(a, b[:, 0], assume_a=assume_a, lower=lower))


@pytest.mark.parametrize("trans", [0, 1, 2, "N", "T", "C"])
@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("unit", [False, True])
def test_solve_triangular_matches_scipy(trans, lower, unit):
    a, b = well(4) + 1j * rand(4, 4, seed=3), rand(4, 3, seed=4)
    close(S.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit),
          sl.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit))


def test_factorisations_match_scipy():
    a, s, b = well(4), spd(4), rand(4, 2, seed=5)
    for lower in (False, True):
        c = S.cho_factor(s, lower=lower)
        assert c[1] is lower
        close(S.cho_solve(c, b), sl.cho_solve(sl.cho_factor(s, lower=lower), b))
        close(S.cholesky(s, lower=lower), sl.cholesky(s, lower=lower))
    lu, piv = S.lu_factor(rand(4, 4, seed=6))
    slu, spiv = sl.lu_factor(rand(4, 4, seed=6))
    close(lu, slu)
    np.testing.assert_array_equal(piv, spiv)
    for trans in (0, 1, 2):
        close(S.lu_solve((lu, piv), b, trans=trans), sl.lu_solve((slu, spiv), b, trans=trans))
    close(S.inv(a), sl.inv(a))
    close(S.det(a), sl.det(a))
    close(S.eigh(s)[0], sl.eigh(s)[0])
    close(S.eigvalsh(s, lower=False), sl.eigvalsh(s, lower=False))
    close(S.eigh(s, subset_by_index=(1, 2), eigvals_only=True),
          sl.eigh(s, subset_by_index=(1, 2), eigvals_only=True))
    close(S.svd(a, compute_uv=False), sl.svd(a, compute_uv=False))
    m = rand(5, 3, seed=7)
    assert [x.shape for x in S.qr(m)] == [x.shape for x in sl.qr(m)]
    assert [x.shape for x in S.qr(m, mode="economic")] == [(5, 3), (3, 3)]
    assert isinstance(S.qr(m, mode="r"), tuple)
    close(np.abs(S.qr(m, mode="r")[0]), np.abs(sl.qr(m, mode="r")[0]))
    x, res, rank, sv = S.lstsq(m, rand(5, seed=8))
    sx, sres, srank, ssv = sl.lstsq(m, rand(5, seed=8))
    close(x, sx)
    close(res, sres)
    assert int(rank) == srank
    close(S.pinv(m), sl.pinv(m))
    close(S.norm(m), sl.norm(m))
    close(S.block_diag(1.0, [2.0, 3.0], a), sl.block_diag(1.0, [2.0, 3.0], a))
    assert S.block_diag().shape == (1, 0)


def test_matrix_functions_match_scipy():
    a, e, s = 0.5 * rand(3, 3, seed=9), rand(3, 3, seed=10), spd(3)
    close(S.expm(a), sl.expm(a))
    for x, y in zip(S.expm_frechet(a, e), sl.expm_frechet(a, e)):
        close(x, y)
    close(S.expm_frechet(a, e, compute_expm=False), sl.expm_frechet(a, e, compute_expm=False))
    close(S.sqrtm(s), sl.sqrtm(s))
    close(S.logm(s), sl.logm(s))
    q = rand(3, 2, seed=11)
    close(S.solve_sylvester(well(3), well(2), q), sl.solve_sylvester(well(3), well(2), q))
    stack = 0.5 * rand(2, 3, 3, seed=12)
    close(S.expm(stack), sl.expm(stack))


# --- closed-form derivatives -----------------------------------------------------------------


def test_matrix_function_derivatives_along_the_matrix_itself():
    # d/dt f((1 + t) A) at t = 0: A expm(A), I for logm, sqrtm(A) / 2
    a, s = 0.5 * rand(3, 3, seed=13), spd(3)
    close(dk.jvp(S.expm, (a,), (a,))[1], a @ sl.expm(a))
    close(dk.jvp(S.logm, (s,), (s,))[1], np.eye(3), atol=1e-9)
    close(dk.jvp(S.sqrtm, (s,), (s,))[1], sl.sqrtm(s) / 2)


def test_expm_derivatives_are_frechet_derivatives():
    a, e = 0.5 * rand(3, 3, seed=14), rand(3, 3, seed=15)
    close(dk.jvp(S.expm, (a,), (e,))[1], sl.expm_frechet(a, e, compute_expm=False))
    # the VJP is the Fréchet derivative at the transpose
    ct = rand(3, 3, seed=16)
    _, pullback = dk.vjp(S.expm, a)
    close(pullback(ct)[0], sl.expm_frechet(a.T, ct, compute_expm=False))


def test_complex_expm_and_triangular_solve():
    a = 0.4 * (rand(3, 3, seed=17) + 1j * rand(3, 3, seed=18))
    e = rand(3, 3, seed=19) + 1j * rand(3, 3, seed=20)
    close(dk.jvp(S.expm, (a,), (e,))[1], sl.expm_frechet(a, e, compute_expm=False))
    t = well(3) + 1j * rand(3, 3, seed=21)
    b = rand(3, 2, seed=22) + 0j
    x = sl.solve_triangular(t, b, trans=2, lower=True)
    dt = rand(3, 3, seed=23) + 1j * rand(3, 3, seed=24)
    expected = -np.linalg.solve(np.tril(t).conj().T, np.tril(dt).conj().T @ x)
    close(dk.jvp(lambda m: S.solve_triangular(m, b, trans=2, lower=True), (t,), (dt,))[1],
          expected)


def test_gradients_of_solves_and_factors():
    a, b = well(4), rand(4, seed=25)
    inv_t = np.linalg.inv(a).T
    close(dk.grad(lambda x: S.det(x))(a), np.linalg.det(a) * inv_t)
    # sum(inv(a) b) in b: inv(a)^T 1
    close(dk.grad(lambda y: S.lu_solve(S.lu_factor(a), y).sum())(b), inv_t @ np.ones(4))
    close(dk.grad(lambda y: S.cho_solve(S.cho_factor(spd(4)), y).sum())(b),
          np.linalg.inv(spd(4)) @ np.ones(4))
    # solve_triangular reads one triangle: the gradient is zero in the other
    g = dk.grad(lambda x: S.solve_triangular(x, b, lower=True).sum())(a)
    tri = np.tril(a)
    x = np.linalg.solve(tri, b)
    close(g, np.tril(-np.outer(np.linalg.solve(tri.T, np.ones(4)), x)))
    # cho_solve in the factor: a = c c^T, x = a^-1 b, dx = -a^-1 (dc c^T + c dc^T) x
    c = np.linalg.cholesky(spd(4))
    dc = np.tril(rand(4, 4, seed=26))
    ainv = np.linalg.inv(c @ c.T)
    expected = -ainv @ (dc @ c.T + c @ dc.T) @ ainv @ b
    close(dk.jvp(lambda m: S.cho_solve((m, True), b), (c,), (dc,))[1], expected)


def test_sylvester_derivatives():
    a, b, q = well(3), well(2, seed=1), rand(3, 2, seed=27)
    dq = rand(3, 2, seed=28)
    close(dk.jvp(lambda y: S.solve_sylvester(a, b, y), (q,), (dq,))[1],
          sl.solve_sylvester(a, b, dq))
    da = rand(3, 3, seed=29)
    x = sl.solve_sylvester(a, b, q)
    close(dk.jvp(lambda m: S.solve_sylvester(m, b, q), (a,), (da,))[1],
          sl.solve_sylvester(a, b, -da @ x))


def test_second_derivatives_and_vmap_of_grad():
    a = 0.5 * rand(3, 3, seed=30)

    def f(m):
        return (S.expm(m)[0, 1] + S.sqrtm(m @ m.T + np.eye(3)).sum()
                + S.logm(m + 3 * np.eye(3))[2, 0])

    h_fwd, h_rev = dk.jacfwd(dk.grad(f))(a), dk.jacrev(dk.grad(f))(a)
    close(h_fwd, h_rev, rtol=1e-6, atol=1e-9)
    eps, direction = 1e-5, rand(3, 3, seed=31)
    fd = (dk.grad(f)(a + eps * direction) - dk.grad(f)(a - eps * direction)) / (2 * eps)
    close(np.einsum("ijkl,kl->ij", h_fwd, direction), fd, rtol=1e-5, atol=1e-6)
    stack = 0.5 * rand(5, 3, 3, seed=32)
    close(dk.vmap(dk.grad(f))(stack), np.stack([dk.grad(f)(m) for m in stack]))


# --- errors ----------------------------------------------------------------------------------


def test_errors_follow_scipy():
    a, b = well(3), rand(3)
    with pytest.raises(ValueError, match="not a recognized matrix structure"):
        S.solve(a, b, assume_a="foo")
    with pytest.raises(NotImplementedError, match="complex matrices"):
        S.solve(a + 0j, b, transposed=True)
    with pytest.raises(ValueError, match="incompatible"):
        S.solve_triangular(a, rand(4))
    with pytest.raises(ValueError, match="square"):
        S.solve_triangular(rand(2, 3), rand(2))
    with pytest.raises(ValueError, match="Mode argument"):
        S.qr(a, mode="bad")
    with pytest.raises(ValueError, match="same shape"):
        S.expm_frechet(a, np.eye(2))
    with pytest.raises(np.linalg.LinAlgError):
        S.cholesky(-np.eye(2))
    with pytest.raises(np.linalg.LinAlgError):
        S.solve(-np.eye(2), np.ones(2), assume_a="pos")
    with pytest.raises(ValueError, match="square"):
        S.inv(rand(2, 3))
    with pytest.raises(ValueError, match="square"):
        S.det(rand(2, 3))
    with pytest.raises(np.linalg.LinAlgError):
        S.expm(np.ones(3))
    with pytest.raises(ValueError, match="dimension greater than 2"):
        S.block_diag(np.ones((2, 2, 2)))
    with pytest.raises(NotImplementedError):
        S.eigh(a, np.eye(3))
