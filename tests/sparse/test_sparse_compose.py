"""sparse_jacobian and sparse_hessian under vmap and jit: a batch of derivatives is an n-D
scipy.sparse.coo_array (batch axes first), a jitted one a CSR array replayed without
retracing, and every slice equals the dense derivative."""

import numpy as np
import pytest
import scipy.sparse as sps
from hypothesis import given, settings
from hypothesis import strategies as st

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.errors import ShapeMismatchError


def banded(x):
    return dnp.concatenate([dnp.sin(x[1:] * x[:-1]), x[:1] ** 3])


def objective(x):
    return dnp.sum(x[1:] ** 2 * x[:-1] ** 3) + dnp.sum(dnp.cos(x))


XS = np.random.default_rng(0).uniform(-1, 1, (4, 7))


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_vmap_of_sparse_jacobian_is_a_batch_of_exact_jacobians(mode):
    jac = dk.sparse_jacobian(banded, mode=mode)
    batch = dk.vmap(jac)(XS)
    assert isinstance(batch, sps.coo_array) and batch.shape == (4, 7, 7)
    pattern = jac.coloring(XS[0]).pattern.toarray()
    for i, x in enumerate(XS):
        dense = np.asarray(dk.jacfwd(banded)(x))
        np.testing.assert_allclose(batch.toarray()[i], dense, rtol=1e-12, atol=0)
        np.testing.assert_array_equal(jac(x).toarray(), batch.toarray()[i])
    assert batch.nnz == 4 * pattern.sum()   # every slice stores the pattern


def test_vmap_of_sparse_hessian_and_nested_vmap():
    hess = dk.sparse_hessian(objective)
    batch = dk.vmap(hess)(XS)
    assert batch.shape == (4, 7, 7)
    for i, x in enumerate(XS):
        np.testing.assert_allclose(batch.toarray()[i], np.asarray(dk.hessian(objective)(x)),
                                   rtol=1e-12, atol=1e-15)
    grid = XS.reshape(2, 2, 7)
    nested = dk.vmap(dk.vmap(hess))(grid)
    assert nested.shape == (2, 2, 7, 7)
    np.testing.assert_array_equal(nested.toarray()[1, 0], hess(grid[1, 0]).toarray())


def test_vmap_over_another_argument():
    def scaled(a, x):
        return a * dnp.sin(x) + x[::-1]

    jac = dk.sparse_jacobian(scaled, argnums=1)
    batch = dk.vmap(jac, in_axes=(0, None))(np.arange(3.0), XS[0])
    for i, a in enumerate(np.arange(3.0)):
        np.testing.assert_allclose(batch.toarray()[i],
                                   np.asarray(dk.jacfwd(scaled, argnums=1)(a, XS[0])),
                                   rtol=1e-12, atol=0)


def test_jit_of_sparse_derivatives_replays_without_retracing():
    jac, hess = dk.jit(dk.sparse_jacobian(banded)), dk.jit(dk.sparse_hessian(objective))
    for x in XS:
        j, h = jac(x), hess(x)
        assert isinstance(j, sps.csr_array) and isinstance(h, sps.csr_array)
        np.testing.assert_allclose(j.toarray(), np.asarray(dk.jacfwd(banded)(x)),
                                   rtol=1e-12, atol=0)
        np.testing.assert_allclose(h.toarray(), np.asarray(dk.hessian(objective)(x)),
                                   rtol=1e-12, atol=1e-15)
    assert jac.cache_info().traces == 1 and jac.cache_info().hits == 3
    assert hess.cache_info().traces == 1


def test_jit_and_vmap_in_either_order():
    hess = dk.sparse_hessian(objective)
    expected = dk.vmap(hess)(XS).toarray()
    np.testing.assert_array_equal(dk.jit(dk.vmap(hess))(XS).toarray(), expected)
    np.testing.assert_array_equal(dk.vmap(dk.jit(hess))(XS).toarray(), expected)


def test_a_derivative_without_entries_under_vmap():
    jac = dk.sparse_jacobian(lambda x: dnp.zeros(3) + 0.0 * dnp.sum(x[:0]))
    batch = dk.vmap(jac)(XS)
    assert batch.shape == (4, 3, 7) and batch.nnz == 0


def test_a_batch_axis_that_is_not_first_is_a_clear_error():
    with pytest.raises(ShapeMismatchError, match="out_axes=0"):
        dk.vmap(dk.sparse_jacobian(banded), out_axes=1)(XS)


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 6), st.integers(2, 6), st.integers(1, 3), st.integers(0, 2**32 - 1),
       st.sampled_from(["forward", "reverse", "auto"]))
def test_vmap_of_a_derivative_that_does_not_depend_on_the_input(m, n, batch, seed, mode):
    """A linear function's Jacobian (and a quadratic's Hessian) is the same for every
    member of the batch: the values do not move with the batch, yet vmap still hands
    back one slice per member, as for a nonlinear function."""
    rng = np.random.default_rng(seed)
    matrix = rng.normal(size=(m, n)) * (rng.random((m, n)) < 0.5)
    xs = rng.normal(size=(batch, n))
    jacobians = dk.vmap(dk.sparse_jacobian(lambda x: matrix @ x + 1.0, mode=mode))(xs)
    assert isinstance(jacobians, sps.coo_array) and jacobians.shape == (batch, m, n)
    for slice_ in jacobians.toarray():
        np.testing.assert_array_equal(slice_, matrix)
    quadratic = matrix.T @ matrix
    hessians = dk.vmap(dk.sparse_hessian(lambda x: x @ quadratic @ x / 2 + dnp.sum(x)))(xs)
    assert hessians.shape == (batch, n, n)
    for slice_ in hessians.toarray():
        np.testing.assert_allclose(slice_, quadratic, rtol=1e-12, atol=1e-12)
