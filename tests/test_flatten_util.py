"""ravel_pytree: one vector for a pytree of arrays, and back, differentiably."""

import numpy as np
import pytest

import diffkit as dk
import diffkit.numpy as dnp
from diffkit import tree_util
from diffkit.errors import InputTypeError, ShapeMismatchError
from diffkit.flatten_util import ravel_pytree


def _tree():
    return {"w": np.arange(6.0).reshape(2, 3), "b": np.array([0.5, -1.5], np.float32),
            "s": (np.float64(2.0), None), "k": [np.array(3)]}


def test_flat_vector_holds_the_leaves_in_tree_leaves_order():
    tree = _tree()
    flat, _ = ravel_pytree(tree)
    expected = np.concatenate([np.ravel(x) for x in tree_util.tree_leaves(tree)])
    assert flat.shape == (10,)
    assert flat.dtype == np.float64  # float32, float64 and int64 promote to float64
    np.testing.assert_array_equal(flat, expected)


def test_unravel_restores_structure_shapes_and_dtypes():
    tree = _tree()
    flat, unravel = ravel_pytree(tree)
    back = unravel(flat)
    assert tree_util.tree_structure(back) == tree_util.tree_structure(tree)
    for got, want in zip(tree_util.tree_leaves(back), tree_util.tree_leaves(tree)):
        assert np.shape(got) == np.shape(want)
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_array_equal(got, want)


def test_unravel_of_new_values_casts_back_to_each_leaf_dtype():
    _, unravel = ravel_pytree({"a": np.zeros(2, np.float32), "b": np.zeros(1)})
    back = unravel(np.array([1.25, 2.5, 1 / 3]))
    assert back["a"].dtype == np.float32 and back["b"].dtype == np.float64
    np.testing.assert_array_equal(back["a"], np.array([1.25, 2.5], np.float32))
    assert back["b"][0] == 1 / 3


@pytest.mark.parametrize("leaves, dtype", [
    ([np.zeros(2, np.float32)], np.float32),
    ([np.zeros(2, np.float32), np.zeros(1, np.float64)], np.float64),
    ([np.zeros(2, np.float32), np.zeros(1, np.complex64)], np.complex64),
    ([np.zeros(2, np.int32), np.zeros(1, np.int64)], np.int64),
])
def test_flat_dtype_is_the_promotion_of_the_leaf_dtypes(leaves, dtype):
    flat, unravel = ravel_pytree(leaves)
    assert flat.dtype == dtype
    assert [x.dtype for x in unravel(flat)] == [x.dtype for x in leaves]


def test_python_scalars_are_leaves():
    flat, unravel = ravel_pytree((1.5, [2.0, 3]))
    np.testing.assert_array_equal(flat, [1.5, 2.0, 3.0])
    back = unravel(np.array([4.0, 5.0, 6.0]))
    assert back[0] == 4.0 and back[1][0] == 5.0 and back[1][1] == 6
    assert np.asarray(back[1][1]).dtype.kind == "i"


def test_empty_trees():
    for tree in ({}, [], None, ((), {})):
        flat, unravel = ravel_pytree(tree)
        assert flat.shape == (0,) and flat.dtype == np.float64
        assert unravel(np.zeros(0)) == tree


def test_wrong_length_is_a_clear_error():
    _, unravel = ravel_pytree({"a": np.zeros(3), "b": np.zeros((2, 2))})
    with pytest.raises(ShapeMismatchError, match=r"shape \(7,\).*got shape \(6,\)"):
        unravel(np.zeros(6))
    with pytest.raises(ShapeMismatchError, match=r"shape \(7,\).*got shape \(7, 1\)"):
        unravel(np.zeros((7, 1)))


def test_complex_vector_for_real_tree_is_an_error():
    _, unravel = ravel_pytree([np.zeros(2)])
    with pytest.raises(ShapeMismatchError, match="complex"):
        unravel(np.zeros(2, complex))


def test_non_array_leaf_is_an_error():
    with pytest.raises(InputTypeError, match="leaf 1 is a str"):
        ravel_pytree([1.0, "x"])


def _loss(tree):
    return (dnp.sum(dnp.sin(tree["w"]) * tree["s"][0])
            + dnp.sum(tree["b"] ** 3) + tree["s"][0] ** 2)


def _float_tree():
    return {"w": np.linspace(-1.0, 1.0, 6).reshape(2, 3), "b": np.array([0.5, -1.5]),
            "s": (np.float64(2.0), None)}


def test_grad_through_unravel_equals_the_grad_on_the_tree():
    tree = _float_tree()
    flat, unravel = ravel_pytree(tree)
    grad_flat = dk.grad(lambda x: _loss(unravel(x)))(flat)
    grad_tree = dk.grad(_loss)(tree)
    np.testing.assert_allclose(grad_flat, ravel_pytree(grad_tree)[0], rtol=1e-13)
    # the closed form, leaf by leaf
    w, b, s = tree["w"], tree["b"], tree["s"][0]
    expected = np.concatenate([3 * b ** 2, [np.sum(np.sin(w)) + 2 * s], (np.cos(w) * s).ravel()])
    np.testing.assert_allclose(grad_flat, expected, rtol=1e-13)


def test_grad_through_ravel_of_a_traced_tree():
    tree = _float_tree()
    gradient = dk.grad(lambda t: dnp.sum(ravel_pytree(t)[0] ** 2))(tree)
    for got, want in zip(tree_util.tree_leaves(gradient), tree_util.tree_leaves(tree)):
        np.testing.assert_allclose(got, 2 * np.asarray(want), rtol=1e-15)


def test_unravel_is_the_identity_map_under_jacfwd_and_jacrev():
    flat, unravel = ravel_pytree(_float_tree())

    def to_flat(x):
        return ravel_pytree(unravel(x))[0]
    for jac in (dk.jacfwd, dk.jacrev):
        np.testing.assert_array_equal(jac(to_flat)(flat), np.eye(flat.size))


def test_hessian_and_vmap_through_unravel():
    tree = _float_tree()
    flat, unravel = ravel_pytree(tree)
    hess = dk.hessian(lambda x: _loss(unravel(x)))(flat)
    # d2/ds2 = -sum(sin(w)) * 0 + 2; d2/ds dw = cos(w); d2/dw2 = -sin(w) * s; d2/db2 = 6 b
    w, b, s = tree["w"], tree["b"], tree["s"][0]
    expected = np.zeros((9, 9))
    expected[[0, 1], [0, 1]] = 6 * b
    expected[2, 2] = 2.0
    expected[2, 3:] = expected[3:, 2] = np.cos(w).ravel()
    expected[3:, 3:] = np.diag((-np.sin(w) * s).ravel())
    np.testing.assert_allclose(hess, expected, rtol=1e-13, atol=1e-15)
    batch = np.stack([flat, 2 * flat])
    values = dk.vmap(lambda x: _loss(unravel(x)))(batch)
    np.testing.assert_allclose(values, [_loss(unravel(flat)), _loss(unravel(2 * flat))],
                               rtol=1e-15)


def test_float32_leaf_gets_a_float64_gradient_through_a_float64_vector():
    flat, unravel = ravel_pytree({"a": np.array([1.0, 2.0], np.float32), "b": np.ones(1)})
    gradient = dk.grad(lambda x: dnp.sum(unravel(x)["a"] ** 2) + unravel(x)["b"][0])(flat)
    assert gradient.dtype == np.float64
    np.testing.assert_allclose(gradient, [2.0, 4.0, 1.0], rtol=1e-7)
