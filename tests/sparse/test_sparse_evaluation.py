"""Compressed evaluation: sparse_jacobian and sparse_hessian equal the dense Jacobians and
Hessians, in every mode, for given patterns; clear errors for bad patterns and outputs."""

import numpy as np
import pytest
import scipy.sparse as sp
from sparse_problems import (
    RTOL,
    band_pattern,
    banded,
    brusselator,
    brusselator_pattern,
    chained_rosenbrock,
    dense_jacobian,
)

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.errors import InputTypeError, OptionError, ShapeMismatchError
from diffkit.flatten_util import ravel_pytree


@pytest.mark.parametrize("mode", ["auto", "forward", "reverse"])
def test_banded_jacobian(mode):
    x = np.linspace(-1.0, 1.5, 11)
    jac_fn = dk.sparse_jacobian(banded, sparsity=band_pattern(11), mode=mode)
    jac = jac_fn(x)
    assert isinstance(jac, sp.csr_array) and jac.shape == (11, 11)
    np.testing.assert_allclose(jac.toarray(), dense_jacobian(banded, x), rtol=RTOL, atol=0)
    info = jac_fn.coloring(x)
    assert info.num_colors == 3
    assert info.mode == ("reverse" if mode == "reverse" else "forward")


@pytest.mark.parametrize("mode", ["auto", "forward", "reverse"])
def test_brusselator_jacobian(mode):
    n = 5
    y = np.random.default_rng(0).uniform(0.5, 2.0, 2 * n * n)
    pattern = sp.csr_array(brusselator_pattern(n))
    jac = dk.sparse_jacobian(lambda y: brusselator(y, n), sparsity=pattern, mode=mode)(y)
    dense = dense_jacobian(lambda y: brusselator(y, n), y)
    np.testing.assert_allclose(jac.toarray(), dense, rtol=RTOL, atol=0)
    assert jac.nnz == pattern.nnz


def test_chained_rosenbrock_hessian():
    x = np.random.default_rng(1).uniform(-1, 1, 20)
    hess_fn = dk.sparse_hessian(chained_rosenbrock, sparsity=band_pattern(20))
    hess = hess_fn(x)
    np.testing.assert_allclose(hess.toarray(), dk.hessian(chained_rosenbrock)(x),
                               rtol=RTOL, atol=0)
    assert hess_fn.coloring(x).num_colors <= 3
    assert (hess != hess.T).nnz == 0


def test_auto_picks_the_side_with_fewer_colours():
    # a dense first row: the columns need n colours, the rows only 2
    n = 9

    def f(x):
        return dnp.concatenate([dnp.sum(x * x, keepdims=True), x[1:] ** 3])

    pattern = np.vstack([np.ones((1, n), bool), np.eye(n, dtype=bool)[1:]])
    jac_fn = dk.sparse_jacobian(f, sparsity=pattern)
    x = np.linspace(0.5, 2.0, n)
    assert jac_fn.coloring(x).mode == "reverse"
    assert jac_fn.coloring(x).num_colors == 2
    np.testing.assert_allclose(jac_fn(x).toarray(), dense_jacobian(f, x), rtol=RTOL, atol=0)


def test_pytrees_flatten_as_ravel_pytree():
    def f(params, scale):
        a, b = params["a"], params["b"]
        return {"p": a * b[0] * scale, "q": dnp.sin(b)}

    params = {"a": np.array([1.0, 2.0, 3.0]), "b": np.array([[0.5], [1.5]])}
    flat, unravel = ravel_pytree(params)

    def flat_f(v):
        return ravel_pytree(f(unravel(v), 2.0))[0]

    dense = dense_jacobian(flat_f, flat)
    jac = dk.sparse_jacobian(f, sparsity=np.ones(dense.shape, bool))(params, 2.0)
    np.testing.assert_allclose(jac.toarray(), dense, rtol=RTOL, atol=0)
    # argnums as a tuple: the tuple of those arguments is one pytree
    x, y = np.array([1.0, 2.0]), np.array([3.0])
    jac = dk.sparse_jacobian(lambda x, y: x * y, argnums=(0, 1),
                             sparsity=np.array([[1, 0, 1], [0, 1, 1]]))(x, y)
    np.testing.assert_array_equal(jac.toarray(), [[3.0, 0.0, 1.0], [0.0, 3.0, 2.0]])


def test_pattern_entries_that_vanish_are_kept():
    jac = dk.sparse_jacobian(lambda x: x ** 2, sparsity=np.eye(3))(np.array([0.0, 1.0, 2.0]))
    assert jac.nnz == 3
    np.testing.assert_array_equal(jac.toarray(), np.diag([0.0, 2.0, 4.0]))


def test_empty_pattern_gives_zeros():
    jac = dk.sparse_jacobian(lambda x: x * 0.0, sparsity=np.zeros((3, 3)))(np.ones(3))
    assert jac.nnz == 0 and jac.shape == (3, 3)


def test_bad_sparsity_type_and_shape():
    x = np.ones(4)
    with pytest.raises(ShapeMismatchError, match="sparsity must be None"):
        dk.sparse_jacobian(dnp.sin, sparsity=[[1, 0], [0, 1]])
    with pytest.raises(ShapeMismatchError, match="sparsity must be None"):
        dk.sparse_hessian(dnp.sin, sparsity="tridiagonal")
    with pytest.raises(ShapeMismatchError, match=r"sparsity has shape \(3, 3\).*\(4, 4\)"):
        dk.sparse_jacobian(dnp.sin, sparsity=np.eye(3))(x)
    with pytest.raises(ShapeMismatchError, match=r"square, not of shape \(4, 3\)"):
        dk.sparse_hessian(lambda x: dnp.sum(x ** 3), sparsity=np.ones((4, 3)))(x)
    with pytest.raises(ShapeMismatchError, match=r"sparsity has shape \(3, 3\)"):
        dk.sparse_hessian(lambda x: dnp.sum(x ** 3), sparsity=sp.eye_array(3))(x)
    jac_fn = dk.sparse_jacobian(dnp.sin, sparsity=np.eye(4))
    jac_fn(x)
    with pytest.raises(ShapeMismatchError, match=r"sparsity has shape \(4, 4\)"):
        jac_fn(np.ones(5))   # a known pattern is checked for each new input signature
    with pytest.raises(OptionError, match="mode"):
        dk.sparse_jacobian(dnp.sin, mode="sideways")


def test_non_array_outputs_and_inputs():
    x = np.ones(3)
    with pytest.raises(InputTypeError, match="returned a str"):
        dk.sparse_jacobian(lambda x: "abc", sparsity=np.eye(3))(x)
    with pytest.raises(InputTypeError, match="returned"):
        dk.sparse_jacobian(lambda x: [x, object()], sparsity=np.eye(3))(x)
    with pytest.raises(InputTypeError, match="real floating-point"):
        dk.sparse_jacobian(dnp.sin, sparsity=np.eye(3))(np.arange(3))
    with pytest.raises(InputTypeError, match="real floating-point"):
        dk.sparse_jacobian(dnp.sin, sparsity=np.eye(3))(np.ones(3, complex))
    with pytest.raises(ShapeMismatchError, match="scalar"):
        dk.sparse_hessian(dnp.sin, sparsity=np.eye(3))(x)
