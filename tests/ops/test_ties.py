"""Repeated eigenvalues and singular values ("ties"): the 0/0 limits of spectral derivatives.

Judges: closed forms (the Hessian of tr(X^3) is 6 tr(S D D), of ||X||_F^2 is 2 I, the
Daleckii-Krein derivative of sin at a tie is cos), central finite differences of NumPy/SciPy
themselves, SciPy's values, and the other engine (bit for bit, NaN for NaN).
"""

import numpy as np
import pytest
import scipy.linalg

import diffkit as dk
import diffkit.numpy as dnp
import diffkit.scipy.linalg as dsl
from diffkit.ops import spectral_ties as ties

L = dnp.linalg
RTOL = 1e-7
FD_RTOL = 1e-5   # central differences, step 1e-6 (1e-4 for second differences)
FD_ATOL = 1e-6

S = np.diag([1.0, 1.0, 3.0])
D = np.zeros((3, 3))
D[0, 1] = D[1, 0] = 1.0
Q, _ = np.linalg.qr(np.random.default_rng(7).normal(size=(3, 3)))
S_SPLIT = Q @ S @ Q.T          # LAPACK returns its tied eigenvalues split by ~1e-16
D_SPLIT = Q @ D @ Q.T


def sin_by_eigh(x):
    w, v = L.eigh(x)
    return v @ (dnp.sin(w)[:, None] * v.T)


def cube_trace(x):
    return dnp.sum(L.eigvalsh(x) ** 3)


def assert_same(a, b):
    """Bit for bit, NaN for NaN."""
    np.testing.assert_array_equal(a, b)


def test_lapack_splits_a_repeated_eigenvalue_and_the_tolerance_joins_it():
    w = np.linalg.eigvalsh(S_SPLIT)
    assert w[0] != w[1]
    assert list(ties.tie_groups_p(w)) == [0, 0, 1]
    assert ties.tie_tolerance(np.float64) == ties.TIE_RTOL_EPS * np.finfo(np.float64).eps
    assert list(ties.tie_groups_p(np.array([3.0, 1.0 + 1e-9, 1.0]))) == [0, 1, 2]


@pytest.mark.parametrize("point", [S, S_SPLIT])
def test_eigenvectors_at_a_tie_are_nan_in_both_modes(point):
    """sin(X) through eigh's vectors needs cos(w) at the tie, which eigh's rules cannot
    know: NaN (never the silent 0 of before), the same in both modes."""
    fwd, rev = dk.jacfwd(sin_by_eigh)(point), dk.jacrev(sin_by_eigh)(point)
    assert np.all(np.isnan(np.tensordot(fwd, D, 2)))
    assert_same(fwd, rev)
    read = np.tril(np.ones((3, 3), bool))       # the unread upper triangle: exactly 0
    assert np.all(np.isnan(fwd[..., read])) and np.all(fwd[..., ~read] == 0)


def test_eigenvector_derivatives_away_from_ties_are_unchanged():
    a = np.diag([1.0, 2.0, 4.0]) + 0.1
    t = np.random.default_rng(1).normal(size=(3, 3))
    got = dk.jvp(sin_by_eigh, (a,), (t,))[1]
    tl = np.tril(t) + np.tril(t, -1).T          # eigh reads the lower triangle
    want = (scipy.linalg.funm(a + 1e-6 * tl, np.sin) - scipy.linalg.funm(a - 1e-6 * tl,
                                                                         np.sin)) / 2e-6
    np.testing.assert_allclose(got, want, rtol=FD_RTOL, atol=FD_ATOL)


@pytest.mark.parametrize("point, direction", [(S, D), (S_SPLIT, D_SPLIT)])
def test_funm_is_exact_at_a_tie(point, direction):
    f = lambda x: dsl.funm(x, dnp.sin)  # noqa: E731
    fwd, rev = dk.jacfwd(f)(point), dk.jacrev(f)(point)
    assert_same(fwd, rev) if point is S else np.testing.assert_allclose(fwd, rev, atol=1e-14)
    # Daleckii-Krein: the tied block moves with cos(1), the others with divided differences
    q = np.eye(3) if point is S else Q
    got = q.T @ np.tensordot(fwd, direction, 2) @ q
    np.testing.assert_allclose(got[0, 1], np.cos(1.0), rtol=RTOL)
    np.testing.assert_allclose(dsl.funm(point, np.sin), scipy.linalg.funm(point, np.sin),
                               atol=1e-14)


def test_funm_second_order_and_vmap_against_finite_differences():
    e = np.random.default_rng(3).normal(size=(3, 3))
    e = e + e.T
    f = lambda t: dsl.funm(S_SPLIT + t * e, dnp.exp)  # noqa: E731
    g = lambda t: scipy.linalg.expm(S_SPLIT + t * e)  # noqa: E731
    h = 1e-4
    second = (g(h) - 2 * g(0.0) + g(-h)) / h ** 2
    for d2 in (dk.jacfwd(dk.jacfwd(f))(0.0), dk.jacrev(dk.jacrev(f))(0.0),
               dk.jacfwd(dk.jacrev(f))(0.0)):
        np.testing.assert_allclose(d2, second, rtol=1e-5, atol=1e-5)
    stack = np.stack([S, S_SPLIT, np.diag([1.0, 2.0, 3.0])])
    batched = dk.vmap(dk.jacfwd(lambda x: dsl.funm(x, dnp.sin)))(stack)
    for i in range(3):
        assert_same(batched[i], dk.jacfwd(lambda x: dsl.funm(x, dnp.sin))(stack[i]))


def test_funm_of_a_nonsymmetric_traced_matrix_is_a_clear_error():
    a = np.array([[1.0, 2.0], [0.0, 3.0]])
    np.testing.assert_allclose(dsl.funm(a, np.sin), scipy.linalg.funm(a, np.sin))
    with pytest.raises(ValueError, match="symmetric"):
        dk.jacfwd(lambda x: dsl.funm(x, dnp.sin))(a)


def test_projector_onto_a_tied_eigenspace():
    """Through eigh's vectors the projector is NaN (its rule cannot tell it from sin(X));
    funm of an indicator gives the exact, finite derivative."""
    def projector(x):
        v = L.eigh(x)[1][:, :2]
        return v @ v.T
    fwd, rev = dk.jacfwd(projector)(S_SPLIT), dk.jacrev(projector)(S_SPLIT)
    read = np.tril(np.ones((3, 3), bool))
    assert np.all(np.isnan(fwd[..., read])) and np.all(np.isnan(rev[..., read]))
    indicator = lambda x: dsl.funm(x, lambda w: dnp.where(w < 2, 1.0, 0.0))  # noqa: E731
    t = np.random.default_rng(4).normal(size=(3, 3))
    t = t + t.T
    got = dk.jvp(indicator, (S_SPLIT,), (t,))[1]
    p = np.asarray(indicator(S_SPLIT))
    want = -(p @ t @ (np.eye(3) - p) + (np.eye(3) - p) @ t @ p) / 2   # gap 3 - 1
    np.testing.assert_allclose(got, want, atol=1e-12)


@pytest.mark.parametrize("point, direction", [(S, D), (S_SPLIT, D_SPLIT)])
def test_hessian_of_a_function_of_the_eigenvalues_is_exact_at_a_tie(point, direction):
    exact = 6 * np.trace(point @ direction @ direction)        # tr(X^3)'' = 6 tr(X D D)
    hess = dk.hessian(cube_trace)(point)
    np.testing.assert_allclose(np.einsum("ij,ijkl,kl->", direction, hess, direction), exact,
                               rtol=RTOL)
    hv = dk.hvp(cube_trace, (point,), (direction,))[0]
    np.testing.assert_allclose(np.sum(hv * direction), exact, rtol=RTOL)
    # the whole Hessian of tr(T(X)^3), T the symmetric matrix of the lower triangle
    grad = lambda x: 3 * _triangle_adjoint(np.linalg.matrix_power(_from_lower(x), 2))  # noqa
    numeric = np.stack([(grad(point + 1e-6 * e) - grad(point - 1e-6 * e)) / 2e-6
                        for e in np.eye(9).reshape(9, 3, 3)], -1).reshape(3, 3, 3, 3)
    np.testing.assert_allclose(hess, numeric, rtol=FD_RTOL, atol=FD_ATOL)


def _from_lower(x):
    return np.tril(x) + np.tril(x, -1).T


def _triangle_adjoint(g):
    return np.tril(g + g.T, -1) + np.diag(np.diag(g))


def test_eigenvalue_jacobians_agree_at_ties():
    """Bit for bit at exact ties; at LAPACK-split ones to rounding (the two modes multiply
    the same factors in another order)."""
    for point in (S, np.eye(3)):
        assert_same(dk.jacfwd(L.eigvalsh)(point), dk.jacrev(L.eigvalsh)(point))
    np.testing.assert_allclose(dk.jacfwd(L.eigvalsh)(S_SPLIT), dk.jacrev(L.eigvalsh)(S_SPLIT),
                               rtol=0, atol=1e-15)
    stack = np.stack([S, S_SPLIT])
    hessians = dk.vmap(dk.hessian(cube_trace))(stack)
    for i in range(2):
        np.testing.assert_allclose(hessians[i], dk.hessian(cube_trace)(stack[i]), atol=1e-12)


ROUTES = {"jacfwd(jacrev)": lambda f: dk.jacfwd(dk.jacrev(f)),
          "jacrev(jacfwd)": lambda f: dk.jacrev(dk.jacfwd(f)),
          "jacrev(jacrev)": lambda f: dk.jacrev(dk.jacrev(f))}


@pytest.mark.parametrize("point, direction", [(S, D), (S_SPLIT, D_SPLIT)])
def test_nested_jacobians_are_exact_at_a_tie_and_forward_over_forward_is_nan(point, direction):
    """Reverse over reverse reads the tie limit off the cotangent of the values (through
    eigh's channel), reverse over forward off the cotangent of the values its JVP returns:
    both exact, as hessian. Forward over forward never meets f'' and the tied couplings
    together: NaN across the tie, never 0 or a guess."""
    exact = 6 * np.trace(point @ direction @ direction)        # tr(X^3)'' = 6 tr(X D D)
    for name, route in ROUTES.items():
        got = np.einsum("ij,ijkl,kl->", direction, route(cube_trace)(point), direction)
        np.testing.assert_allclose(got, exact, rtol=RTOL, err_msg=name)
    second = dk.jacfwd(dk.jacfwd(cube_trace))(point)
    assert np.isnan(np.einsum("ij,ijkl,kl->", direction, second, direction))
    hess = dk.hessian(cube_trace)(point)
    finite = np.isfinite(second)             # the entries that do not cross the tie: exact
    assert np.any(finite)
    np.testing.assert_allclose(second[finite], hess[finite], rtol=0, atol=1e-12)


def _top_hessian(x):
    """The closed form of the Hessian of the largest eigenvalue (simple) of the matrix eigh
    reads from x's lower triangle: sum_i 2 (v_i^T E_a v) (v_i^T E_b v) / (w - w_i)."""
    w, v = np.linalg.eigh(x)
    basis = [_from_lower(e) for e in np.eye(x.size).reshape(-1, *x.shape)]
    coupling = np.array([[v[:, i] @ e @ v[:, -1] for i in range(len(w) - 1)] for e in basis])
    return 2 * (coupling / (w[-1] - w[:-1])) @ coupling.T


@pytest.mark.parametrize("point", [S, S_SPLIT, np.diag([1.0, 1.0, 1.0 + 2e-14, 3.0])])
def test_top_eigenvalue_next_to_a_tie_by_every_route(point):
    """The Hessian of eigvalsh(X)[-1], a simple maximum next to tied (or LAPACK-split)
    smaller ones, involves only gaps to the maximum: every route and hvp give the closed
    form, and finite differences of NumPy's eigvalsh agree."""
    n = point.shape[0]
    top = lambda v: L.eigvalsh(v.reshape(n, n))[-1]  # noqa: E731
    x = point.ravel()
    exact = _top_hessian(point)
    scale = np.max(np.abs(exact))
    routes = {"hessian": dk.hessian(top), "jacfwd(jacfwd)": dk.jacfwd(dk.jacfwd(top)),
              **{name: route(top) for name, route in ROUTES.items()}}
    for name, route in routes.items():
        np.testing.assert_allclose(route(x), exact, rtol=0, atol=1e-13 * scale, err_msg=name)
    direction = np.random.default_rng(6).normal(size=x.size)
    np.testing.assert_allclose(dk.hvp(top, (x,), (direction,))[0], exact @ direction, rtol=0,
                               atol=1e-13 * scale * np.abs(direction).sum())
    numpy_top = lambda v: np.linalg.eigvalsh(v.reshape(n, n))[-1]  # noqa: E731

    def second(h):   # central second differences at a smooth scale (the maximum is 2 away)
        return np.array([[(numpy_top(x + h * a + h * b) - numpy_top(x + h * a - h * b) -
                           numpy_top(x - h * a + h * b) + numpy_top(x - h * a - h * b)) /
                          (4 * h * h) for b in np.eye(x.size)] for a in np.eye(x.size)])

    richardson = (4 * second(1e-3) - second(2e-3)) / 3      # truncation ~h^4
    np.testing.assert_allclose(exact, richardson, rtol=0, atol=1e-8 * scale)


def test_functions_not_symmetric_in_tied_values_have_nan_second_derivatives():
    """w_0^2 and w_1 w_2 at a double eigenvalue (w_0 = w_1), s_1^2 at a double singular
    value: no second derivative exists; every route gives NaN across the tie."""
    split = Q @ np.diag([2.0, 2.0, 1.0]) @ Q.T
    cases = [(lambda x: L.eigvalsh(x)[0] ** 2, S_SPLIT),
             (lambda x: L.eigvalsh(x)[1] * L.eigvalsh(x)[2], S_SPLIT),
             (lambda x: L.svd(x, compute_uv=False)[1] ** 2, split)]
    for fun, point in cases:
        for name, route in {"hessian": dk.hessian, "jacfwd(jacfwd)": lambda f: dk.jacfwd(
                dk.jacfwd(f)), **ROUTES}.items():
            got = route(fun)(point)
            assert np.isnan(np.einsum("ij,ijkl,kl->", D_SPLIT, got, D_SPLIT)), name


def test_several_pullbacks_of_one_decomposition_are_nan_at_a_tie_not_wrong():
    """Two pullbacks of one eigvalsh, summed (the gradients of 1.5 sum(w^2) and sum(log w)):
    reverse over reverse cannot tell their f'' apart at a tie (the channel holds their sum),
    so the second derivative across the tie is NaN; elsewhere it is exact."""
    def gradient(x):
        w, pull = dk.vjp(L.eigvalsh, x)
        return pull(3 * w)[0] + pull(1 / w)[0]

    def smooth(x):
        t = _from_lower_traced(x)
        return 1.5 * dnp.sum(t ** 2) + L.slogdet(t)[1]

    got = dk.jacrev(gradient)(S_SPLIT)
    exact = dk.hessian(smooth)(S_SPLIT)
    assert np.isnan(np.einsum("ij,ijkl,kl->", D_SPLIT, got, D_SPLIT))
    finite = np.isfinite(got)
    np.testing.assert_allclose(got[finite], exact[finite], rtol=0, atol=1e-12)
    np.testing.assert_allclose(dk.jacfwd(gradient)(S_SPLIT), exact, rtol=0, atol=1e-12)


def _from_lower_traced(x):
    low = dnp.tril(x, -1)
    return low + low.T + dnp.diag(dnp.diag(x)) * np.eye(x.shape[0])


@pytest.mark.parametrize("point", [np.eye(3), Q])
def test_sum_of_squared_singular_values_has_hessian_2(point):
    f = lambda x: dnp.sum(L.svd(x, compute_uv=False) ** 2)  # noqa: E731   ||X||_F^2
    hess = dk.hessian(f)(point)
    np.testing.assert_allclose(hess.reshape(9, 9), 2 * np.eye(9), rtol=RTOL, atol=1e-12)
    g = lambda x: L.matrix_norm(x, ord="fro") ** 2  # noqa: E731
    np.testing.assert_allclose(dk.hessian(g)(point).reshape(9, 9), 2 * np.eye(9), rtol=RTOL,
                               atol=1e-12)


def _polar(x):
    u, _, vh = np.linalg.svd(x)
    return u @ vh


@pytest.mark.parametrize("point", [np.array([[1.0, -2, 0], [2, 1, 0], [0, 0, 1]]),
                                   np.diag([2.0, 2.0, 1.0]), Q @ np.diag([2.0, 2, 1]) @ Q,
                                   Q @ np.diag([2.0, 2, 1]) @ Q.T @ Q])
def test_nuclear_norm_hessian_at_repeated_singular_values(point):
    """The nuclear norm is smooth at full rank: its gradient is the polar factor U Vh,
    whose derivative has only 1 / (s_i + s_j). Its cotangent c = 1 is a constant, so the
    tie limit is 0 in every route that sees c (forward over forward: NaN across the tie)."""
    nuc = lambda x: L.matrix_norm(x, ord="nuc")  # noqa: E731
    np.testing.assert_allclose(dk.grad(nuc)(point), _polar(point), rtol=RTOL, atol=1e-12)
    numeric = np.stack([(_polar(point + 1e-6 * e) - _polar(point - 1e-6 * e)) / 2e-6
                        for e in np.eye(9).reshape(9, 3, 3)], -1).reshape(3, 3, 3, 3)
    for hess in (dk.hessian(nuc)(point), *(route(nuc)(point) for route in ROUTES.values())):
        np.testing.assert_allclose(hess, numeric, rtol=FD_RTOL, atol=FD_ATOL)
        np.testing.assert_allclose(hess.reshape(9, 9), hess.reshape(9, 9).T, atol=1e-12)


@pytest.mark.parametrize("name", ["cosm", "sinm", "tanm", "fractional_matrix_power"])
@pytest.mark.parametrize("point", [S_SPLIT, np.diag([1.0, 1.0, 2.0]),
                                   np.array([[1.0, 0.3, 0.0], [0.1, 0.8, 0.2],
                                             [0.0, 0.4, 1.2]])])
def test_matrix_trigonometry_and_powers_against_scipy(name, point):
    ours = getattr(dsl, name)
    theirs = getattr(scipy.linalg, name)
    if name == "fractional_matrix_power":
        ours, theirs = (lambda x: dsl.fractional_matrix_power(x, 0.7),
                        lambda x: scipy.linalg.fractional_matrix_power(x, 0.7))
    t = np.random.default_rng(2).normal(size=(3, 3))
    out, tangent = dk.jvp(ours, (point,), (t,))
    np.testing.assert_allclose(out, theirs(point), rtol=1e-10, atol=1e-12)
    numeric = (theirs(point + 1e-6 * t) - theirs(point - 1e-6 * t)) / 2e-6
    np.testing.assert_allclose(tangent, numeric, rtol=FD_RTOL, atol=FD_ATOL)
    _, pullback = dk.vjp(ours, point)
    ct = np.random.default_rng(3).normal(size=(3, 3))
    np.testing.assert_allclose(np.sum(pullback(ct)[0] * t), np.sum(ct * tangent), rtol=1e-9)


@pytest.mark.parametrize("name, f, df", [("expm", np.exp, np.exp), ("logm", np.log,
                                                                     lambda w: 1 / w),
                                         ("sqrtm", np.sqrt, lambda w: 0.5 / np.sqrt(w))])
def test_expm_logm_sqrtm_are_exact_at_repeated_eigenvalues(name, f, df):
    fun = getattr(dsl, name)
    for point, q in ((S, np.eye(3)), (S_SPLIT, Q)):
        d = q @ D @ q.T
        fwd = np.tensordot(dk.jacfwd(fun)(point), d, 2)
        rev = np.tensordot(dk.jacrev(fun)(point), d, 2)
        for got in (fwd, rev):
            np.testing.assert_allclose((q.T @ got @ q)[0, 1], df(1.0), rtol=1e-10)
        np.testing.assert_allclose(fwd, np.tensordot(dk.jacfwd(lambda x: dsl.funm(x, f))(
            point), d, 2), rtol=1e-9, atol=1e-10)


def test_scipy_eigh_lower_reads_its_triangle_at_second_order():
    a = np.diag([1.0, 2.0, 4.0]) + np.triu(np.random.default_rng(5).normal(size=(3, 3)), 1)
    for lower in (True, False):
        f = lambda x, lower=lower: dnp.sum(dsl.eigvalsh(x, lower=lower) ** 3)  # noqa: E731
        tri = (lambda x: np.tril(x) + np.tril(x, -1).T) if lower else \
            (lambda x: np.triu(x) + np.triu(x, 1).T)
        grad = lambda x, tri=tri: 3 * np.linalg.matrix_power(tri(x), 2)  # noqa: E731
        mask = np.tril(np.ones((3, 3))) if lower else np.triu(np.ones((3, 3)))
        adj = lambda g, mask=mask: mask * (g + g.T) - np.diag(np.diag(g))  # noqa: E731
        np.testing.assert_allclose(dk.grad(f)(a), adj(grad(a)), rtol=RTOL)
        numeric = np.stack([(adj(grad(a + 1e-6 * e)) - adj(grad(a - 1e-6 * e))) / 2e-6
                            for e in np.eye(9).reshape(9, 3, 3)], -1).reshape(3, 3, 3, 3)
        np.testing.assert_allclose(dk.hessian(f)(a), numeric, rtol=FD_RTOL, atol=FD_ATOL)
