"""diffkit/ops/creation.py: values equal NumPy's, and the functions without derivative."""

import numpy as np
import pytest

import diffkit as dk
import diffkit.numpy as dnp

X = np.array([0.5, -1.5, 2.0, 0.0])


@pytest.mark.parametrize("name, args", [
    ("vander", (X[:3], 4)), ("polyadd", ([1.0, 2.0], [3.0, 4.0, 5.0])),
    ("polysub", ([1.0, 2.0, 7.0], [3.0, 4.0])), ("polymul", ([1.0, 2.0], [3.0, 4.0, 5.0])),
    ("polyder", ([1.0, 2.0, 3.0, 4.0], 2)), ("polyint", ([1.0, 2.0, 3.0], 2, [1.0, 2.0])),
    ("resize", (np.arange(5.0), (2, 4))), ("unwrap", (np.array([0.0, 3.0, 6.5, 10.0]),)),
    ("trim_zeros", (np.array([0.0, 0.0, 1.0, 2.0, 0.0]),)), ("isclose", (X, X + 1e-9)),
    ("count_nonzero", (X,)), ("nonzero", (X,)), ("argwhere", (X,)), ("flatnonzero", (X,)),
])
def test_values_equal_numpy(name, args):
    got, expected = getattr(dnp, name)(*args), getattr(np, name)(*args)
    for g, e in zip(np.atleast_1d(got) if not isinstance(got, tuple) else got,
                    np.atleast_1d(expected) if not isinstance(expected, tuple) else expected):
        np.testing.assert_allclose(g, e, rtol=1e-12)


def test_array_of_traced_values_keeps_derivatives():
    f = lambda x: dnp.array([[x[0], x[1] ** 2], [3.0, x[0] * x[1]]])  # noqa: E731
    jac = dk.jacrev(f)(X[:2])
    expected = np.zeros((2, 2, 2))
    expected[0, 0, 0] = 1.0
    expected[0, 1, 1] = 2 * X[1]
    expected[1, 1] = [X[1], X[0]]
    np.testing.assert_allclose(jac, expected, rtol=1e-12)
    np.testing.assert_allclose(dk.jacfwd(f)(X[:2]), expected, rtol=1e-12)


def test_predicates_batch_and_carry_no_derivative():
    xs = np.array([[1.0, 2.0], [0.0, 2.0], [-1.0, 0.0]])
    np.testing.assert_array_equal(dk.vmap(dnp.all)(xs), np.all(xs, axis=1))
    np.testing.assert_array_equal(dk.vmap(dnp.any)(xs), np.any(xs, axis=1))
    np.testing.assert_array_equal(dk.vmap(dnp.count_nonzero)(xs), np.count_nonzero(xs, axis=1))
    grad = dk.grad(lambda x: dnp.where(dnp.all(x > -5.0), dnp.sum(x ** 2), 0.0))(X)
    np.testing.assert_allclose(grad, 2 * X, rtol=1e-12)


def test_polynomial_derivative_matches_closed_form():
    p = np.array([2.0, -1.0, 0.5, 3.0])
    # d/dp of sum(polyder(p)) = [3, 2, 1, 0]
    np.testing.assert_allclose(dk.grad(lambda p: dnp.sum(dnp.polyder(p)))(p), [3, 2, 1, 0])
    x = 0.7
    np.testing.assert_allclose(dk.grad(lambda x: dnp.polyval(dnp.polyint(p), x))(x),
                               np.polyval(p, x), rtol=1e-12)
