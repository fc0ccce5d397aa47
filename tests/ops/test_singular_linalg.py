"""Linear algebra where the textbook derivative fails: functions that read one triangle of
their input, symmetric Hessians of ``pinv(hermitian=True)``, and determinants at singular
matrices.

The judge is the NumPy/SciPy function itself: central finite differences on raw inputs
(non-symmetric, non-triangular), closed forms (the adjugate), and the two engines against
each other (bit for bit at singular points).
"""

import numpy as np
import pytest
import scipy.linalg as sl

import diffkit as dk
import diffkit.numpy as dnp
import diffkit.scipy.linalg as dsl
from diffkit.testing import check_grads, check_vmap

RTOL = 1e-7


def rand(*shape, seed=0, complex_=False):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=shape)
    return x + 1j * rng.normal(size=shape) if complex_ else x


def messy_spd(n=3, seed=0, complex_=False, stack=()):
    """A Hermitian positive-definite matrix (eigenvalues >= 2) plus junk in both strict
    triangles and, for complex, an imaginary diagonal: none of it symmetric."""
    z = rand(*stack, n, n, seed=seed, complex_=complex_)
    h = z @ np.conj(np.swapaxes(z, -1, -2)) + 2 * n * np.eye(n)
    return h + 0.5 * rand(*stack, n, n, seed=seed + 1, complex_=complex_)


def assert_bitwise_jacobians(f, x):
    forward, reverse = dk.jacfwd(f)(x), dk.jacrev(f)(x)
    np.testing.assert_array_equal(forward, reverse)
    return forward


# === one triangle read =====================================================================


@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("upper", [False, True])
def test_numpy_cholesky_reads_one_triangle(upper, complex_):
    a = messy_spd(complex_=complex_)
    np.testing.assert_allclose(dnp.linalg.cholesky(a, upper=upper),
                               np.linalg.cholesky(a, upper=upper), rtol=1e-13, atol=1e-14)
    check_grads(lambda x: dnp.linalg.cholesky(x, upper=upper), (a,), order=2)


def test_cholesky_entries_not_read_have_derivative_zero():
    a = messy_spd()
    for upper, unread in ((False, np.triu_indices(3, 1)), (True, np.tril_indices(3, -1))):
        def chol(x, upper=upper):
            return dnp.linalg.cholesky(x, upper=upper)

        jac = dk.jacrev(chol)(a)
        np.testing.assert_array_equal(jac[..., unread[0], unread[1]], 0.0)
        np.testing.assert_allclose(jac, dk.jacfwd(chol)(a), rtol=RTOL, atol=1e-12)


def test_cholesky_ignores_the_imaginary_part_of_the_diagonal():
    a = messy_spd(complex_=True)
    f = lambda x: dnp.linalg.cholesky(x)   # noqa: E731
    t = np.diag([1j, 2j, -1j])
    np.testing.assert_array_equal(dk.jvp(f, (a,), (t,))[1], 0.0)


@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("lower", [False, True])
def test_scipy_cholesky_and_cho_factor_read_one_triangle(lower, complex_):
    a = messy_spd(complex_=complex_, seed=3)
    b = rand(3, 2, seed=4)
    np.testing.assert_allclose(dsl.cholesky(a, lower=lower), sl.cholesky(a, lower=lower),
                               rtol=1e-13, atol=1e-14)
    check_grads(lambda x: dsl.cholesky(x, lower=lower), (a,), order=2)
    check_grads(lambda x, y: dsl.cho_solve(dsl.cho_factor(x, lower=lower), y), (a, b),
                order=2)
    np.testing.assert_allclose(dsl.cho_solve(dsl.cho_factor(a, lower=lower), b),
                               sl.cho_solve(sl.cho_factor(a, lower=lower), b), rtol=1e-12)
    check_grads(lambda x, y: dsl.solve(x, y, assume_a="pos", lower=lower), (a, b), order=2)


@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("trans", [0, 1, 2])
@pytest.mark.parametrize("unit_diagonal", [False, True])
@pytest.mark.parametrize("lower", [False, True])
def test_solve_triangular_reads_one_triangle(lower, unit_diagonal, trans, complex_):
    a = rand(3, 3, seed=5, complex_=complex_) + 4 * np.eye(3)   # not triangular
    b = rand(3, 2, seed=6, complex_=complex_)
    kw = dict(lower=lower, unit_diagonal=unit_diagonal, trans=trans)
    np.testing.assert_allclose(dsl.solve_triangular(a, b, **kw),
                               sl.solve_triangular(a, b, **kw), rtol=1e-13)
    check_grads(lambda x, y: dsl.solve_triangular(x, y, **kw), (a, b), order=2)
    if not complex_:
        jac = dk.jacrev(lambda x: dsl.solve_triangular(x, b, **kw))(a)
        read = np.tril(np.ones((3, 3)), -unit_diagonal) if lower else \
            np.triu(np.ones((3, 3)), unit_diagonal)
        np.testing.assert_array_equal(jac[..., read == 0], 0.0)


def test_one_triangle_functions_under_vmap():
    stack = messy_spd(stack=(4,), seed=8)
    check_vmap(lambda x: dnp.linalg.cholesky(x, upper=True), (stack,))
    check_vmap(dk.grad(lambda x: dnp.sum(dnp.linalg.cholesky(x) ** 2)), (stack,))
    check_vmap(dk.grad(lambda x: dnp.sum(dnp.linalg.pinv(x, hermitian=True) ** 2)), (stack,))


# === pinv(hermitian=True) ==================================================================


@pytest.mark.parametrize("complex_", [False, True])
def test_pinv_hermitian_is_differentiated_as_numpy_computes_it(complex_):
    """NumPy's pinv(hermitian=True) takes eigh of the lower triangle: finite differences of
    that function on a non-symmetric input are the judge."""
    a = messy_spd(complex_=complex_, seed=9)
    np.testing.assert_allclose(dnp.linalg.pinv(a, hermitian=True),
                               np.linalg.pinv(a, hermitian=True), rtol=1e-12)
    check_grads(lambda x: dnp.linalg.pinv(x, hermitian=True), (a,), order=2)


@pytest.mark.parametrize("point", ["spd", "messy", "indefinite"])
def test_pinv_hermitian_hessian_is_symmetric(point):
    w = rand(3, 3, seed=11)
    s = messy_spd(seed=12) if point == "messy" else \
        (lambda z: z @ z.T + 3 * np.eye(3))(rand(3, 3, seed=13))
    if point == "indefinite":
        s = s - 6 * np.eye(3)
    f = lambda x: dnp.sum(dnp.linalg.pinv(x, hermitian=True) * w)   # noqa: E731
    h = dk.hessian(f)(s).reshape(9, 9)
    assert np.max(np.abs(h - h.T)) <= 1e-13 * np.max(np.abs(h))
    np.testing.assert_allclose(dk.jacrev(dk.jacrev(f))(s).reshape(9, 9), h, rtol=1e-9,
                               atol=1e-12)


# === det at singular matrices ==============================================================


def _minor(a, rows, cols):
    return np.delete(np.delete(a, rows, axis=0), cols, axis=1)


def _det(m):
    return 1.0 if m.shape[0] == 0 else np.linalg.det(m)


def cofactors_by_minors(a):
    """The gradient of det, ``adj(a)^T``: signed (n-1)-minors, each a NumPy det."""
    n = a.shape[0]
    return np.array([[(-1) ** (i + j) * _det(_minor(a, i, j)) for j in range(n)]
                     for i in range(n)])


def det_hessian_by_minors(a):
    """``d^2 det / da_ij da_kl``: signed (n-2)-minors (0 when i == k or j == l)."""
    n = a.shape[0]
    h = np.zeros((n,) * 4, dtype=a.dtype)
    for i, j, k, m in np.ndindex(n, n, n, n):
        if i != k and j != m:
            h[i, j, k, m] = ((-1) ** (i + j + k + m) * np.sign(k - i) * np.sign(m - j)
                             * _det(_minor(a, [i, k], [j, m])))
    return h


SINGULAR = {
    "rank 2 of 3": np.arange(1.0, 10.0).reshape(3, 3),
    "rank 3 of 4": rand(4, 3, seed=20) @ rand(3, 4, seed=21),
    "rank 2 of 4": rand(4, 2, seed=22) @ rand(2, 4, seed=23),
    "diag(1, 2, 0, 0)": np.diag([1.0, 2.0, 0.0, 0.0]),
    "zero 2x2": np.zeros((2, 2)),
    "zero 3x3": np.zeros((3, 3)),
    "rank 1 of 3, integer-valued": np.outer([1.0, 2.0, 3.0], [1.0, -1.0, 2.0]),
}


def _scale(a):
    return max(1.0, np.max(np.abs(a))) ** (a.shape[0] - 1)


@pytest.mark.parametrize("name", SINGULAR)
def test_det_gradient_at_singular_matrices_is_the_adjugate_transpose(name):
    a = SINGULAR[name]
    expected = cofactors_by_minors(a)
    got = assert_bitwise_jacobians(dnp.linalg.det, a)
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=1e-13 * _scale(a))
    np.testing.assert_array_equal(dk.grad(dnp.linalg.det)(a), got)


@pytest.mark.parametrize("name", SINGULAR)
def test_det_hessian_at_singular_matrices(name):
    """Nonzero at rank <= n - 2 too, where the adjugate is 0."""
    a = SINGULAR[name]
    expected = det_hessian_by_minors(a)
    gradient = dk.grad(dnp.linalg.det)
    forward, reverse = dk.jacfwd(gradient)(a), dk.jacrev(gradient)(a)
    np.testing.assert_array_equal(forward, reverse)
    np.testing.assert_array_equal(dk.hessian(dnp.linalg.det)(a), forward)
    np.testing.assert_allclose(forward, expected, rtol=RTOL, atol=1e-13 * _scale(a))
    assert np.any(forward != 0) or a.shape[0] > 2 and not np.any(a)


@pytest.mark.parametrize("name", ["rank 2 of 3", "rank 3 of 4", "rank 2 of 4"])
def test_det_derivatives_at_singular_matrices_against_finite_differences(name):
    check_grads(dnp.linalg.det, (SINGULAR[name],), order=2)


def test_det_hessian_of_a_2x2_zero_matrix_is_not_zero():
    h = dk.hessian(dnp.linalg.det)(np.zeros((2, 2)))
    np.testing.assert_array_equal(h.reshape(4, 4), [[0, 0, 0, 1], [0, 0, -1, 0],
                                                    [0, -1, 0, 0], [1, 0, 0, 0]])


def test_det_gradient_keeps_the_inverse_formula_when_well_conditioned():
    a = rand(4, 4, seed=30) + 4 * np.eye(4)
    np.testing.assert_allclose(dk.grad(dnp.linalg.det)(a),
                               np.linalg.det(a) * np.linalg.inv(a).T, rtol=1e-13)
    check_grads(dnp.linalg.det, (a,), order=3)


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning",
                            "ignore:invalid value:RuntimeWarning")
@pytest.mark.parametrize("name", ["rank 2 of 3", "rank 3 of 4"])   # det 0, det ~1e-16
def test_det_third_derivative_at_a_singular_matrix_is_nan(name):
    third = dk.hessian(dk.grad(dnp.linalg.det))
    for engine in (dk.jacfwd, dk.jacrev):
        assert np.all(np.isnan(engine(dk.hessian(dnp.linalg.det))(SINGULAR[name])))
    assert np.all(np.isnan(third(SINGULAR[name])))


def test_det_of_stacks_and_vmap_at_singular_matrices():
    """Each matrix gets the same numbers alone, in a stack and under vmap (the choice of
    formula is made per matrix)."""
    stack = np.stack([SINGULAR["rank 3 of 4"], SINGULAR["rank 2 of 4"],
                      rand(4, 4, seed=31) + 4 * np.eye(4), np.zeros((4, 4))])
    grad = dk.grad(dnp.linalg.det)
    alone = np.stack([grad(m) for m in stack])
    np.testing.assert_array_equal(dk.vmap(grad)(stack), alone)
    np.testing.assert_array_equal(dk.grad(lambda s: dnp.sum(dnp.linalg.det(s)))(stack), alone)
    hessians = np.stack([dk.hessian(dnp.linalg.det)(m) for m in stack])
    np.testing.assert_array_equal(dk.vmap(dk.hessian(dnp.linalg.det))(stack), hessians)
    for m, h in zip(stack[:2], hessians[:2]):
        np.testing.assert_allclose(h, det_hessian_by_minors(m), rtol=RTOL, atol=1e-13)
    check_vmap(dk.hessian(dnp.linalg.det), (stack,))


def test_det_of_complex_singular_matrices():
    a = rand(3, 2, seed=32, complex_=True) @ rand(2, 3, seed=33, complex_=True)
    jac = lambda f: dk.jacrev(f, holomorphic=True)   # noqa: E731
    got = jac(dnp.linalg.det)(a)
    np.testing.assert_array_equal(dk.jacfwd(dnp.linalg.det, holomorphic=True)(a), got)
    np.testing.assert_allclose(got, cofactors_by_minors(a), rtol=RTOL, atol=1e-13)
    hessian = dk.jacfwd(jac(dnp.linalg.det), holomorphic=True)(a)
    np.testing.assert_array_equal(jac(jac(dnp.linalg.det))(a), hessian)
    np.testing.assert_allclose(hessian, det_hessian_by_minors(a), rtol=RTOL, atol=1e-13)
    check_grads(dnp.linalg.det, (a,), order=2)


def test_det_float32_at_a_singular_matrix_stays_float32():
    a = SINGULAR["rank 2 of 3"].astype(np.float32)
    g = dk.grad(dnp.linalg.det)(a)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, cofactors_by_minors(SINGULAR["rank 2 of 3"]), rtol=1e-4,
                               atol=1e-4)
    assert dk.hessian(dnp.linalg.det)(a).dtype == np.float32


# === slogdet, inv and solve at singular matrices ===========================================


@pytest.mark.parametrize("a", [np.zeros((3, 3)), np.array([[1.0, 2.0], [2.0, 4.0]]),
                               np.diag([1.0, 0.0, 2.0])])
def test_slogdet_derivatives_at_a_singular_matrix_are_nan(a):
    assert np.linalg.slogdet(a)[1] == -np.inf
    f = lambda x: dnp.linalg.slogdet(x)[1]   # noqa: E731
    assert np.all(np.isnan(dk.jacfwd(f)(a))) and np.all(np.isnan(dk.jacrev(f)(a)))
    assert np.all(np.isnan(dk.hessian(f)(a)))
    assert np.all(np.isnan(dk.jacrev(dk.jacrev(f))(a)))


def test_slogdet_nan_is_per_matrix_in_a_stack():
    stack = np.stack([np.zeros((2, 2)), np.array([[2.0, 1.0], [1.0, 3.0]])])
    g = dk.grad(lambda s: dnp.sum(dnp.linalg.slogdet(s)[1]))(stack)
    assert np.all(np.isnan(g[0]))
    np.testing.assert_allclose(g[1], np.linalg.inv(stack[1]).T, rtol=1e-13)


@pytest.mark.parametrize("call", [
    lambda a: dnp.linalg.inv(a), lambda a: dnp.linalg.solve(a, np.ones(3)),
    lambda a: dk.grad(lambda x: dnp.sum(dnp.linalg.inv(x)))(a),
    lambda a: dk.jacfwd(lambda x: dnp.linalg.solve(x, np.ones(3)))(a),
    lambda a: dsl.inv(a)])
def test_inv_and_solve_at_a_singular_matrix_raise_a_clear_error(call):
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix.*pinv"):
        call(np.zeros((3, 3)))


def test_singular_matrix_in_a_stack_is_named():
    stack = np.stack([np.eye(2), np.zeros((2, 2))])
    with pytest.raises(np.linalg.LinAlgError, match=r"stack index \(1,\)"):
        dnp.linalg.inv(stack)


# === LU at a singular matrix (rank n - 1: only the last pivot is zero) =====================


@pytest.mark.filterwarnings("ignore::scipy.linalg.LinAlgWarning")
@pytest.mark.parametrize("complex_", [False, True])
def test_lu_factor_is_differentiable_where_only_the_last_pivot_is_zero(complex_):
    """The packed LU is smooth there (no division by the last pivot); the textbook JVP
    through U^-1 gave NaN."""
    a = np.arange(1.0, 10.0).reshape(3, 3)
    if complex_:
        a = a * (1 + 0.5j)
    assert sl.lu_factor(a)[0][2, 2] == 0
    f = lambda x: dsl.lu_factor(x)[0]   # noqa: E731
    forward, reverse = dk.jacfwd(f, holomorphic=complex_)(a), dk.jacrev(f, holomorphic=complex_)(a)
    assert np.all(np.isfinite(forward))
    np.testing.assert_allclose(forward, reverse, rtol=RTOL, atol=1e-14)
    check_grads(f, (a,), order=2)
    check_grads(f, (rand(4, 4, seed=40, complex_=complex_),), order=2)   # and elsewhere
