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
        jac = dk.jacrev(lambda x: dnp.linalg.cholesky(x, upper=upper))(a)
        np.testing.assert_array_equal(jac[..., unread[0], unread[1]], 0.0)
        np.testing.assert_allclose(jac, dk.jacfwd(lambda x: dnp.linalg.cholesky(x, upper=upper))(a),
                                   rtol=RTOL, atol=1e-12)


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
