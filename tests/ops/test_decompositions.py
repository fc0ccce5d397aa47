"""Tests for diffkit.numpy.linalg (diffkit/ops/decompositions.py) beyond the generic records:
values against NumPy, closed-form derivatives, the conventions at nondifferentiable points
(ties, the zero matrix, symmetric inputs), complex inputs, batching of the rules (vmap of
grad), dtypes, and NumPy's errors.
"""

import warnings

import numpy as np
import pytest

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.ops import solves

L = dnp.linalg
RTOL = 1e-7
ATOL = 1e-10
FD_RTOL = 1e-5
FD_ATOL = 1e-6


def rand(*shape, seed=0):
    return np.random.default_rng(seed + 31 * len(shape) + sum(shape)).normal(size=shape)


def well(*shape, seed=0):
    """A well-conditioned (stack of) square matrices."""
    return 0.3 * rand(*shape, seed=seed) + 2 * np.eye(shape[-1])


def sym_spread(n, seed=0):
    """A symmetric matrix with eigenvalues near 0, 4, 8, ..."""
    a = 0.2 * rand(n, n, seed=seed)
    return a + a.T + np.diag(4.0 * np.arange(n))


def numeric_jvp(f, x, t, eps=1e-6):
    return (np.asarray(f(x + eps * t)) - np.asarray(f(x - eps * t))) / (2 * eps)


def sym(t):
    return (t + t.conj().T) / 2


@pytest.fixture(autouse=True)
def no_loop_fallback():
    with warnings.catch_warnings():
        warnings.simplefilter("error", dk.errors.PerformanceWarning)
        yield


def close(a, b, rtol=RTOL, atol=ATOL):
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


# --- values: the same as NumPy ----------------------------------------------------------------

A = well(3, 3)
STACK = well(2, 3, 3, seed=1)
TALL = rand(4, 3, seed=2) + np.eye(4, 3) * 3
WIDE = TALL.T.copy()


@pytest.mark.parametrize("name, args", [
    ("inv", (STACK,)), ("det", (STACK,)), ("pinv", (TALL,)), ("pinv", (WIDE,)),
    ("matrix_rank", (TALL,)), ("cond", (A,)), ("eigvalsh", (STACK,)), ("eigvals", (A,)),
    ("svdvals", (TALL,)), ("norm", (TALL,)), ("solve", (STACK, rand(2, 3, 2))),
    ("solve", (A, rand(3))), ("tensorinv", (np.eye(6).reshape(2, 3, 6) * 3 + 0.1,)),
    ("multi_dot", ([rand(3), rand(3, 4), rand(4, 2)],)), ("matrix_transpose", (STACK,)),
    ("vecdot", (rand(2, 3), rand(3))), ("outer", (rand(3), rand(2))),
    ("cross", (rand(2, 3), rand(3))), ("trace", (rand(2, 3, 4),)),
    ("diagonal", (rand(2, 3, 4),)), ("matrix_norm", (STACK,)), ("vector_norm", (STACK,)),
])
def test_values_match_numpy(name, args):
    got = getattr(L, name)(*args)
    expected = getattr(np.linalg, name)(*args)
    assert np.shape(got) == np.shape(expected)
    close(got, expected)


def test_decompositions_return_numpys_named_tuples():
    w, v = L.eigh(sym_spread(3))
    assert L.eigh(sym_spread(3))._fields == ("eigenvalues", "eigenvectors")
    close(w, np.linalg.eigvalsh(sym_spread(3)))
    assert L.eig(A)._fields == ("eigenvalues", "eigenvectors")
    assert L.qr(TALL)._fields == ("Q", "R")
    assert L.svd(TALL)._fields == ("U", "S", "Vh")
    sign, logabsdet = L.slogdet(STACK * np.array([[-1.0], [1.0], [1.0]]))
    assert L.slogdet(A)._fields == ("sign", "logabsdet")
    close(sign, -1.0)
    close(logabsdet, np.linalg.slogdet(STACK)[1])


@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
@pytest.mark.parametrize("a", [TALL, WIDE, A, rand(2, 4, 3)])
def test_qr_values(mode, a):
    got, expected = L.qr(a, mode=mode), np.linalg.qr(a, mode=mode)
    for g, e in zip((got,) if mode == "r" else got, (expected,) if mode == "r" else expected):
        assert g.shape == e.shape
        close(np.abs(g), np.abs(e))   # signs may differ only for the wide reduction
    if mode != "r":
        close(got[0] @ got[1], a)


@pytest.mark.parametrize("full_matrices", [True, False])
@pytest.mark.parametrize("a", [TALL, WIDE, rand(2, 3, 4)])
def test_svd_values(full_matrices, a):
    u, s, vh = L.svd(a, full_matrices=full_matrices)
    eu, es, evh = np.linalg.svd(a, full_matrices=full_matrices)
    assert (u.shape, s.shape, vh.shape) == (eu.shape, es.shape, evh.shape)
    close(s, es)
    k = s.shape[-1]
    close((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], a)


def test_cholesky_lower_and_upper():
    a = sym_spread(3) + 3 * np.eye(3)
    close(L.cholesky(a), np.linalg.cholesky(a))
    close(L.cholesky(a, upper=True), np.linalg.cholesky(a, upper=True))


def test_lstsq_returns_numpys_four_results():
    b = rand(4, 2)
    for rhs in (b, b[:, 0]):
        got, expected = L.lstsq(TALL, rhs), np.linalg.lstsq(TALL, rhs)
        for g, e in zip(got, expected):
            assert np.shape(g) == np.shape(e)
            close(g, e)
        assert got[2] == 3 and isinstance(got[2], int)
    # under-determined, and rank-deficient: no residuals, as in NumPy
    x, res, rank, _ = L.lstsq(WIDE, rand(3))
    assert res.shape == (0,) and rank == 3
    close(x, np.linalg.lstsq(WIDE, rand(3))[0])
    deficient = np.outer(rand(4), rand(3))
    x, res, rank, _ = L.lstsq(deficient, b)
    assert res.shape == (0,) and rank == 1
    close(x, np.linalg.lstsq(deficient, b)[0])


@pytest.mark.parametrize("n", [0, 1, 2, 3, 6, -1, -3])
def test_matrix_power_values(n):
    close(L.matrix_power(STACK, n), np.linalg.matrix_power(STACK, n))


def test_matrix_power_keeps_integer_dtypes():
    m = np.array([[1, 2], [3, 4]])
    assert L.matrix_power(m, 3).dtype == np.linalg.matrix_power(m, 3).dtype
    np.testing.assert_array_equal(L.matrix_power(m, 3), np.linalg.matrix_power(m, 3))


def test_tensorsolve_values():
    a = np.eye(6).reshape(6, 2, 3) * 3 + 0.1 * rand(6, 2, 3)
    b = rand(6)
    close(L.tensorsolve(a, b), np.linalg.tensorsolve(a, b))
    a2 = np.moveaxis(a.reshape(2, 3, 2, 3), 0, 2)
    close(L.tensorsolve(a2, rand(2, 3), axes=(2,)), np.linalg.tensorsolve(a2, rand(2, 3),
                                                                          axes=(2,)))


NORM_CASES = [
    (rand(4), {}), (rand(4), {"ord": np.inf}), (rand(4), {"ord": -np.inf}),
    (rand(4), {"ord": 0}), (rand(4), {"ord": 1}), (rand(4), {"ord": 3}),
    (rand(4), {"ord": -1.5}), (rand(4), {"ord": 0.5}), (rand(2, 3), {"axis": 1}),
    (rand(2, 3), {"axis": 0, "ord": 1, "keepdims": True}), (rand(2, 3, 4), {}),
    (rand(2, 3, 4), {"keepdims": True}), (rand(3, 4), {"ord": "fro"}),
    (rand(3, 4), {"ord": "nuc"}), (rand(3, 4), {"ord": 2}), (rand(3, 4), {"ord": -2}),
    (rand(3, 4), {"ord": 1}), (rand(3, 4), {"ord": -1}), (rand(3, 4), {"ord": np.inf}),
    (rand(3, 4), {"ord": -np.inf}), (rand(2, 3, 4), {"ord": 2, "axis": (2, 0)}),
    (rand(2, 3, 4), {"ord": "nuc", "axis": (-1, 1), "keepdims": True}),
    (rand(2, 3, 4), {"ord": 1, "axis": (0, 2)}), (rand(2, 3, 4), {"ord": -np.inf,
                                                                   "axis": (2, 1)}),
    (np.arange(4), {}), (rand(3, 3).astype(np.float32), {"ord": "nuc"}),
]


@pytest.mark.parametrize("x, kw", NORM_CASES)
def test_norm_values(x, kw):
    got, expected = L.norm(x, **kw), np.linalg.norm(x, **kw)
    assert np.shape(got) == np.shape(expected)
    assert np.result_type(got) == np.result_type(expected)
    close(got, expected, rtol=1e-6 if x.dtype == np.float32 else RTOL)


@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", 1, -1, np.inf, -np.inf])
def test_cond_values(p):
    close(L.cond(STACK, p), np.linalg.cond(STACK, p))
    close(dk.jvp(lambda a: L.cond(a, p), (A,), (np.ones((3, 3)),))[0], np.linalg.cond(A, p))


def test_array_api_norms():
    x = rand(2, 3, 4)
    close(L.vector_norm(x, axis=(0, 2), ord=3, keepdims=True),
          np.linalg.vector_norm(x, axis=(0, 2), ord=3, keepdims=True))
    close(L.matrix_norm(x, ord="nuc", keepdims=True),
          np.linalg.matrix_norm(x, ord="nuc", keepdims=True))


# --- closed-form derivatives ---------------------------------------------------------------


def test_det_logdet_and_inv_gradients():
    inv_t = np.linalg.inv(STACK).swapaxes(-1, -2)
    close(dk.grad(lambda a: dnp.sum(L.det(a)))(STACK), np.linalg.det(STACK)[:, None, None]
          * inv_t)
    close(dk.grad(lambda a: dnp.sum(L.slogdet(a).logabsdet))(STACK), inv_t)
    close(dk.grad(lambda a: dnp.trace(L.inv(a)) if hasattr(dnp, "trace")
                  else dnp.sum(L.inv(a) * np.eye(3)))(A), -(np.linalg.inv(A) @ np.linalg.inv(A)).T)


def test_hessian_of_logdet():
    """d^2 log det / dA_ij dA_kl = -inv(A)_jk inv(A)_li."""
    x = np.linalg.inv(A)
    expected = -np.einsum("jk,li->ijkl", x, x)
    close(dk.hessian(lambda a: L.slogdet(a)[1])(A), expected)
    close(dk.jacrev(dk.jacrev(lambda a: L.slogdet(a)[1]))(A), expected)


def test_eigenvalue_and_singular_value_gradients():
    s = sym_spread(3)
    w, v = np.linalg.eigh(s)
    jac = dk.jacrev(L.eigvalsh)(s)
    outer = np.einsum("ik,jk->kij", v, v)        # d w_k / dA = v_k v_k^T, read from the
    close(jac, np.tril(2 * outer, -1) + outer * np.eye(3))   # lower triangle
    u, sv, vh = np.linalg.svd(TALL, full_matrices=False)
    close(dk.jacfwd(lambda a: L.svd(a, compute_uv=False))(TALL), np.einsum("ik,kj->kij", u, vh))
    close(dk.grad(lambda a: L.norm(a, "nuc"))(TALL), u @ vh)
    close(dk.grad(lambda a: L.norm(a, 2))(TALL), np.outer(u[:, 0], vh[0]))
    close(dk.grad(lambda a: L.norm(a, -2))(TALL), np.outer(u[:, -1], vh[-1]))


def test_eig_derivatives_closed_form():
    """d lambda_k = w_k^T dA v_k / (w_k^T v_k), with w_k the left eigenvectors."""
    a = rand(3, 3) + np.diag([0.0, 3.0, 6.0])
    lam, v = np.linalg.eig(a)
    left = np.linalg.inv(v).T          # columns: left eigenvectors, scaled so w_k^T v_k = 1
    t = rand(3, 3, seed=5)
    _, dlam = dk.jvp(L.eigvals, (a,), (t,))
    close(dlam, np.einsum("ik,ij,jk->k", left, t, v))


def test_eig_of_complex_spectrum_against_finite_differences():
    """Through jvp/vjp directly: complex eigenvalues and phase-invariant |v|^2."""
    a = rand(3, 3) + np.array([[0.0, -2, 0], [2, 0, 0], [0, 0, 4]])
    t = rand(3, 3, seed=3)

    def f(x):
        w, v = L.eig(x)
        return w, v * dnp.conj(v)

    (w, p), (dw, dp) = dk.jvp(f, (a,), (t,))
    assert w.dtype == np.complex128
    fw, fp = zip(*(f(a + s * 1e-6 * t) for s in (1, -1)))
    close(dw, (fw[0] - fw[1]) / 2e-6, rtol=FD_RTOL, atol=FD_ATOL)
    close(dp, (fp[0] - fp[1]) / 2e-6, rtol=FD_RTOL, atol=FD_ATOL)
    # reverse mode: the transpose under Re(sum(ct * tangent)), with a real cotangent for a
    out, pullback = dk.vjp(f, a)
    rng = np.random.default_rng(0)
    cts = tuple(rng.normal(size=o.shape) + 1j * rng.normal(size=o.shape) for o in out)
    (g,) = pullback(cts)
    assert g.dtype == np.float64
    close(np.sum(g * t), np.real(np.sum(cts[0] * dw) + np.sum(cts[1] * dp)))


def test_eig_with_a_real_spectrum_stays_real():
    a = 0.2 * rand(3, 3) + np.diag([0.0, 3.0, 6.0])
    w, v = L.eig(a)
    assert w.dtype == np.float64 and v.dtype == np.float64
    g = dk.grad(lambda x: dnp.sum(L.eigvals(x) ** 2))(a)
    close(g, 2 * a.T)   # sum of squared eigenvalues = trace(A @ A)


def test_pinv_of_constant_rank_against_finite_differences():
    b, c = rand(5, 2), rand(2, 4)
    t = rand(5, 2, seed=9)
    f = lambda x: L.pinv(x @ c)  # noqa: E731
    close(dk.jvp(f, (b,), (t,))[1], numeric_jvp(f, b, t), rtol=FD_RTOL, atol=FD_ATOL)
    close(dk.jacfwd(f)(b), dk.jacrev(f)(b))


def test_pinv_cutoffs():
    a = np.diag([1.0, 1e-3, 1e-9])
    close(L.pinv(a), np.linalg.pinv(a))
    close(L.pinv(a, rcond=1e-5), np.linalg.pinv(a, rcond=1e-5))
    close(L.pinv(a, rtol=None), np.linalg.pinv(a, rtol=None))
    cutoffs = np.array([1e-5, 1e-12])
    close(L.pinv(np.stack([a, a]), rcond=cutoffs), np.linalg.pinv(np.stack([a, a]),
                                                                   rcond=cutoffs))
    with pytest.raises(ValueError, match="rtol"):
        L.pinv(a, rcond=1e-3, rtol=1e-3)


def test_lstsq_derivatives_in_solution_and_residuals():
    b = rand(4)
    # x = (A^T A)^-1 A^T b and r = |b - A x|^2, differentiated by the closed forms' own engine
    f = lambda a, y: L.lstsq(a, y)[:2]  # noqa: E731
    g = lambda a, y: (L.solve(a.T @ a, a.T @ y),  # noqa: E731
                      dnp.sum((y - a @ L.solve(a.T @ a, a.T @ y)) ** 2, axis=0, keepdims=True))
    for argnum in (0, 1):
        for got, expected in zip(dk.jacrev(f, argnum)(TALL, b), dk.jacfwd(g, argnum)(TALL, b)):
            close(got, expected, rtol=1e-6)


# --- conventions at nondifferentiable points ----------------------------------------------


@pytest.mark.parametrize("kw", [{}, {"ord": 2}, {"ord": 3}, {"ord": 0.5}, {"ord": 1},
                                {"ord": np.inf}, {"ord": -np.inf}])
def test_norm_of_the_zero_vector_has_derivative_zero(kw):
    f = lambda x: L.norm(x, **kw)  # noqa: E731
    zero = np.zeros(3)
    for jac in (dk.jacfwd(f)(zero), dk.jacrev(f)(zero)):
        np.testing.assert_array_equal(jac, np.zeros(3))
    np.testing.assert_array_equal(dk.hessian(f)(zero), np.zeros((3, 3)))


@pytest.mark.parametrize("ord", [None, "fro", "nuc", 2, 1, np.inf, -1])
def test_norm_of_the_zero_matrix_has_derivative_zero(ord):
    f = lambda x: L.norm(x, ord)  # noqa: E731
    zero = np.zeros((3, 2))
    for jac in (dk.jacfwd(f)(zero), dk.jacrev(f)(zero)):
        np.testing.assert_array_equal(jac, np.zeros((3, 2)))


def test_inf_norm_ties_share_the_derivative_equally():
    x = np.array([1.0, -3.0, 3.0, 2.0])
    for jac in (dk.jacfwd(lambda v: L.norm(v, np.inf))(x),
                dk.jacrev(lambda v: L.norm(v, np.inf))(x)):
        np.testing.assert_array_equal(jac, [0.0, -0.5, 0.5, 0.0])
    m = np.array([[1.0, -2.0], [-2.0, 1.0]])          # both columns sum to 3 (ord=1)
    for jac in (dk.jacfwd(lambda v: L.norm(v, 1))(m), dk.jacrev(lambda v: L.norm(v, 1))(m)):
        np.testing.assert_array_equal(jac, [[0.5, -0.5], [-0.5, 0.5]])


def test_repeated_eigenvalues():
    """At a tie, functions of the eigenvalues are exact and both modes agree; the
    eigenvectors' derivative is NaN in both modes (tests/ops/test_ties.py has the rest)."""
    eye = np.eye(3)
    f = lambda a: dnp.sum(L.eigvalsh(a) ** 2)  # noqa: E731   trace(A^2)
    close(dk.grad(f)(2 * eye), np.tril(8 * eye, -1) + 4 * eye)
    close(dk.jacfwd(L.eigvalsh)(eye), dk.jacrev(L.eigvalsh)(eye))
    g = lambda a: dnp.sum(L.svd(a, compute_uv=False))  # noqa: E731   nuclear norm
    close(dk.grad(g)(np.eye(3, 2)), np.eye(3, 2))
    close(dk.jacfwd(g)(np.eye(3, 2)), dk.jacrev(g)(np.eye(3, 2)))
    s = np.diag([1.0, 1.0, 5.0])

    def projector(a):
        v = L.eigh(a)[1][:, :2]
        return v @ v.T

    forward, reverse = dk.jacfwd(projector)(s), dk.jacrev(projector)(s)
    np.testing.assert_array_equal(forward, reverse)   # NaN for NaN
    # P[2, 2] is O(dA^2) at V = I: exactly 0; every other entry's tie coupling is unknown
    unknown = np.ones((3, 3), bool)
    unknown[2, 2] = False
    assert np.all(np.isnan(forward[:, :, 1, 0][unknown])) and forward[2, 2, 1, 0] == 0.0
    assert np.all(np.isnan(reverse[0, 1][np.tril(np.ones((3, 3), bool))]))


@pytest.mark.parametrize("f", [
    L.eigvalsh, lambda a: L.eigh(a)[1] ** 2, lambda a: L.cholesky(a + 4 * np.eye(3)),
    lambda a: L.pinv(a, hermitian=True), lambda a: L.svd(a, hermitian=True, compute_uv=False),
    lambda a: L.svd(a, hermitian=True)[0] ** 2])
def test_one_triangle_functions_ignore_the_other_triangle(f):
    """NumPy reads the lower triangle: a perturbation of the strict upper triangle changes
    nothing, so its derivative is exactly 0 in both engines; the read off-diagonal entries
    count for both (finite differences of NumPy along the raw direction)."""
    s = sym_spread(3)
    upper = np.triu(rand(3, 3, seed=6), 1)
    assert np.all(dk.jvp(f, (s,), (upper,))[1] == 0)
    jac = dk.jacrev(f)(s)
    assert np.all(jac[..., np.triu(np.ones((3, 3), bool), 1)] == 0)
    close(jac, dk.jacfwd(f)(s))
    t = rand(3, 3, seed=7)
    close(dk.jvp(f, (s,), (t,))[1], numeric_jvp(f, s, t), rtol=FD_RTOL, atol=FD_ATOL)


@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("f", [lambda a, uplo: L.eigvalsh(a, uplo),
                               lambda a, uplo: L.eigh(a, uplo)[1] ** 2])
def test_eigh_differentiates_the_triangle_it_reads(f, uplo):
    """On a nonsymmetric input, derivatives are those of NumPy's function, which reads one
    triangle: finite differences of NumPy itself are the judge."""
    a = sym_spread(3) + np.triu(rand(3, 3, seed=8), 1)   # not symmetric
    t = rand(3, 3, seed=6)
    fun = lambda x: f(x, uplo)  # noqa: E731
    close(dk.jvp(fun, (a,), (t,))[1], numeric_jvp(fun, a, t), rtol=FD_RTOL, atol=FD_ATOL)
    jac = dk.jacrev(fun)(a)
    close(jac, dk.jacfwd(fun)(a))
    other = np.triu(np.ones((3, 3)), 1) if uplo == "L" else np.tril(np.ones((3, 3)), -1)
    assert np.all(jac[..., other == 1] == 0)


def test_eigh_reads_only_the_uplo_triangle():
    s = sym_spread(3)
    messy = np.tril(s) + np.triu(rand(3, 3), 1)
    close(L.eigvalsh(messy), np.linalg.eigvalsh(s))
    close(L.eigh(np.triu(s) + np.tril(rand(3, 3), -1), UPLO="U")[0], np.linalg.eigvalsh(s))


def test_complete_qr_and_full_svd_complements_are_differentiable_through_projectors():
    t = rand(5, 2, seed=7)
    a = rand(5, 2) + 2

    def qr_projector(x):
        q = L.qr(x, mode="complete")[0][:, 2:]
        return q @ q.T

    def svd_projector(x):
        u = L.svd(x)[0][:, 2:]
        return u @ u.T

    for f in (qr_projector, svd_projector):
        close(dk.jvp(f, (a,), (t,))[1], numeric_jvp(f, a, t), rtol=FD_RTOL, atol=FD_ATOL)
        close(dk.jacfwd(f)(a), dk.jacrev(f)(a))


# --- batching of the rules, complex inputs, dtypes -------------------------------------------


@pytest.mark.parametrize("f", [
    lambda a: L.slogdet(a)[1], lambda a: L.det(a), lambda a: dnp.sum(L.inv(a)),
    lambda a: dnp.sum(L.eigvalsh(a + dnp.swapaxes(a, -1, -2)) ** 3),
    lambda a: dnp.sum(L.svd(a)[1] ** 3), lambda a: dnp.sum(L.qr(a)[1] ** 2),
    lambda a: dnp.sum(L.cholesky(a @ dnp.swapaxes(a, -1, -2))),
    lambda a: dnp.sum(L.pinv(a) ** 2), lambda a: dnp.sum(L.solve(a, np.ones(3)) ** 2),
])
def test_vmap_of_grad_and_of_hessian(f):
    stack = well(4, 3, 3, seed=3)
    expected = np.stack([dk.grad(f)(x) for x in stack])
    close(dk.vmap(dk.grad(f))(stack), expected)
    close(dk.vmap(dk.hessian(f))(stack[:2]), np.stack([dk.hessian(f)(x) for x in stack[:2]]))


def test_vmap_of_solve_with_a_shared_matrix_is_one_solve(monkeypatch):
    calls = []
    impl = solves.solve_p.impl
    monkeypatch.setattr(solves.solve_p, "impl", lambda a, b: calls.append(a.shape) or impl(a, b))
    bs = rand(6, 3, 2)
    close(dk.vmap(L.solve, in_axes=(None, 0))(A, bs), np.linalg.solve(A, bs))
    assert calls == [(3, 3)]


def test_vmap_of_matrix_rank_with_batched_tolerances():
    stack = np.stack([np.diag([3.0, 2.0, 1.0])] * 4)
    tols = np.array([0.5, 1.5, 2.5, 3.5])
    np.testing.assert_array_equal(dk.vmap(L.matrix_rank)(stack, tols), [3, 2, 1, 0])
    np.testing.assert_array_equal(dk.vmap(L.matrix_rank, in_axes=(None, 0))(stack[0], tols),
                                  [3, 2, 1, 0])
    assert L.matrix_rank(np.zeros(3)) == 0 and L.matrix_rank(np.ones(3)) == 1
    np.testing.assert_array_equal(dk.vmap(L.matrix_rank)(np.array([[0.0, 0.0], [0.0, 2.0]])),
                                  [0, 1])


@pytest.mark.parametrize("f", [L.inv, L.det, lambda z: L.solve(z, np.arange(3.0)),
                               lambda z: L.slogdet(z)[1], lambda z: L.slogdet(z)[0]])
def test_complex_matrices_against_finite_differences(f):
    rng = np.random.default_rng(4)
    z = rng.normal(size=(3, 3)) + 1j * rng.normal(size=(3, 3)) + 3 * np.eye(3)
    t = rng.normal(size=(3, 3)) + 1j * rng.normal(size=(3, 3))
    out, tangent = dk.jvp(f, (z,), (t,))
    close(tangent, numeric_jvp(f, z, t), rtol=FD_RTOL, atol=FD_ATOL)
    _, pullback = dk.vjp(f, z)
    ct = rng.normal(size=np.shape(out)) + 1j * rng.normal(size=np.shape(out))
    if np.isrealobj(out):
        ct = ct.real
    (g,) = pullback(ct)
    close(np.real(np.sum(g * t)), np.real(np.sum(ct * tangent)))


def _complex(*shape, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=shape) + 1j * rng.normal(size=shape)


def _svd_invariants(a):
    """Phase-invariant functions of a complex SVD."""
    u, s, vh = L.svd(a)
    k = min(a.shape)
    u2 = u[:, k:]
    return (dnp.astype(s, np.complex128), u[:, :k] @ vh[:k], u * dnp.conj(u),
            u2 @ dnp.conj(u2).T)


@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (3, 4)])
@pytest.mark.parametrize("f", [lambda a: tuple(L.qr(a)), lambda a: L.pinv(a), _svd_invariants,
                               lambda a: L.qr(a, mode="complete")[1]])
def test_complex_decompositions_against_finite_differences(f, shape):
    z = _complex(*shape) + 3 * np.eye(*shape)
    t = _complex(*shape, seed=1)
    out, tangent = dk.jvp(f, (z,), (t,))
    plus, minus = f(z + 1e-6 * t), f(z - 1e-6 * t)
    for got, p, m in zip(*(dk.tree_util.tree_leaves(v) for v in (tangent, plus, minus))):
        close(got, (p - m) / 2e-6, rtol=FD_RTOL, atol=FD_ATOL)
    _, pullback = dk.vjp(f, z)
    cts = dk.tree_util.tree_map(lambda o: _complex(*np.shape(o), seed=2), out)
    (g,) = pullback(cts)
    pairing = sum(np.sum(c * d) for c, d in zip(dk.tree_util.tree_leaves(cts),
                                                 dk.tree_util.tree_leaves(tangent)))
    close(np.real(np.sum(g * t)), np.real(pairing))


@pytest.mark.parametrize("f", [
    L.eigvalsh, L.cholesky, lambda h: L.eigh(h)[1] * dnp.conj(L.eigh(h)[1]),
    lambda h: L.pinv(h, hermitian=True), lambda h: L.svd(h, hermitian=True, compute_uv=False)])
def test_hermitian_matrices_against_finite_differences(f):
    """Functions that read one triangle are differentiated as NumPy computes them: finite
    differences along the raw (non-Hermitian) direction."""
    rng = np.random.default_rng(5)
    z = rng.normal(size=(3, 3)) + 1j * rng.normal(size=(3, 3))
    h = z @ z.conj().T + np.diag([1.0, 4.0, 8.0])
    t = rng.normal(size=(3, 3)) + 1j * rng.normal(size=(3, 3))
    out, tangent = dk.jvp(f, (h,), (t,))
    close(tangent, numeric_jvp(f, h, t), rtol=FD_RTOL,
          atol=FD_ATOL)
    _, pullback = dk.vjp(f, h)
    ct = rng.normal(size=np.shape(out)) + 1j * rng.normal(size=np.shape(out))
    if np.isrealobj(out):
        ct = ct.real
    (g,) = pullback(ct)
    close(np.real(np.sum(g * t)), np.real(np.sum(ct * tangent)))


@pytest.mark.parametrize("f", [L.inv, L.pinv, L.cholesky, lambda a: L.eigh(a)[1],
                               lambda a: L.svd(a)[0], lambda a: L.qr(a)[1],
                               lambda a: L.norm(a, "nuc"),
                               lambda a: L.solve(a, np.ones(3, np.float32))])
def test_float32_stays_float32(f):
    a = (sym_spread(3) + 8 * np.eye(3)).astype(np.float32)
    assert f(a).dtype == np.float32
    assert dk.jacfwd(f)(a).dtype == np.float32
    assert dk.jacrev(f)(a).dtype == np.float32


def test_mixed_precision_follows_numpy():
    a = A.astype(np.float32)
    assert L.solve(a, np.ones(3)).dtype == np.linalg.solve(a, np.ones(3)).dtype == np.float64
    g = dk.grad(lambda x: dnp.sum(L.solve(x, np.ones(3))))(a)
    assert g.dtype == np.float32


def test_integer_inputs_are_converted_to_float():
    m = np.array([[2, 1], [1, 3]])
    for name in ("inv", "det", "eigvalsh", "pinv", "cholesky"):
        got, expected = getattr(L, name)(m), getattr(np.linalg, name)(m)
        assert got.dtype == expected.dtype
        close(got, expected)


def test_plain_numpy_inputs_give_plain_outputs():
    for out in (L.inv(A), L.eigh(A + A.T)[1], L.svd(A)[0], L.norm(A), L.det(A)):
        assert isinstance(out, (np.ndarray, np.floating))


# --- errors --------------------------------------------------------------------------------


@pytest.mark.parametrize("call", [
    lambda: L.inv(rand(3)), lambda: L.inv(rand(2, 3)), lambda: L.det(rand(2, 3)),
    lambda: L.eigh(rand(2, 3)), lambda: L.cholesky(rand(3, 2)), lambda: L.eig(rand(3)),
    lambda: L.matrix_power(rand(2, 3), 2), lambda: L.solve(rand(2, 3), rand(2)),
    lambda: L.svd(rand(3)), lambda: L.qr(rand(3)), lambda: L.lstsq(rand(2, 2, 2), rand(2)),
    lambda: L.lstsq(rand(3, 2), rand(2)), lambda: L.inv(np.zeros((2, 2))),
    lambda: L.tensorsolve(rand(2, 3, 4), rand(2, 3)),
    lambda: dk.grad(lambda a: dnp.sum(L.inv(a)))(rand(2, 3)),
])
def test_linalg_errors(call):
    with pytest.raises(np.linalg.LinAlgError):
        call()


@pytest.mark.parametrize("call, error, fragment", [
    (lambda: L.solve(A, rand(4)), ValueError, "b's length"),
    (lambda: L.solve(A, rand(2, 4, 2)), ValueError, "second-to-last"),
    (lambda: L.solve(STACK, rand(3, 3, 1)), ValueError, "cannot be broadcast"),
    (lambda: L.eigh(A, UPLO="X"), ValueError, "UPLO"),
    (lambda: L.qr(A, mode="economic"), ValueError, "Unrecognized mode"),
    (lambda: dk.grad(lambda a: dnp.sum(L.qr(a, mode="raw")[0]))(A), ValueError, "raw"),
    (lambda: L.matrix_power(A, 1.5), TypeError, "integer"),
    (lambda: L.norm(rand(3), "fro"), ValueError, "Invalid norm order 'fro' for vectors"),
    (lambda: L.norm(A, 3), ValueError, "Invalid norm order for matrices"),
    (lambda: L.norm(rand(2, 3, 4), 1), ValueError, "Improper number of dimensions"),
    (lambda: L.norm(A, axis=(1, 1)), ValueError, "Duplicate axes"),
    (lambda: L.norm(A, axis=1.5), TypeError, "'axis' must be"),
    (lambda: L.multi_dot([A]), ValueError, "at least two"),
    (lambda: L.multi_dot([A, rand(4, 2), A]), ValueError, "not aligned"),
    (lambda: L.matrix_rank(A, tol=1.0, rtol=1.0), ValueError, "both"),
    (lambda: L.tensorinv(A, ind=0), ValueError, "Invalid ind"),
    (lambda: L.outer(A, A), ValueError, "one-dimensional"),
    (lambda: L.cross(rand(2), rand(2)), ValueError, "3-dimensional"),
])
def test_argument_errors(call, error, fragment):
    with pytest.raises(error, match=fragment):
        call()


def test_namespace_exports_numpys_linalg_names():
    missing = [n for n in dir(np.linalg) if not n.startswith("_") and n != "test"
               and not hasattr(L, n)]
    assert not missing
    assert L.LinAlgError is np.linalg.LinAlgError
