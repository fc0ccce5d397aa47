"""Tests for diffkit.ops.shape beyond the generic records: regressions found by the plain-NumPy
corpus (tests/corpus/)."""

import numpy as np
import pytest

import diffkit as dk
import diffkit.numpy as dnp


@pytest.mark.parametrize("join", [np.concatenate, dnp.concatenate])
def test_concatenate_reads_python_lists_between_traced_arrays(join):
    """``np.concatenate([[a], x, (b,)])`` (boundary values as Python lists/tuples) is
    ``[a, x..., b]``, with derivative the identity on the middle block."""
    x = np.array([0.5, -1.0, 2.0])

    def pad(x):
        return join([[1.0], x, (3.0,)])

    expected_jacobian = np.eye(5, 3, k=-1)
    np.testing.assert_array_equal(dnp.concatenate([[1.0], x, (3.0,)]), [1.0, 0.5, -1.0, 2.0, 3.0])
    for jacobian in (dk.jacfwd(pad), dk.jacrev(pad)):
        np.testing.assert_array_equal(jacobian(x), expected_jacobian)
    np.testing.assert_array_equal(dk.vmap(pad)(np.stack([x, 2 * x])),
                                  [[1.0, *x, 3.0], [1.0, *(2 * x), 3.0]])


@pytest.mark.parametrize("stack", [np.stack, dnp.stack])
def test_stack_reads_python_lists_beside_traced_arrays(stack):
    """``np.stack([[1, 2], x])`` is a (2, 2) array whose second row is ``x``."""
    x = np.array([0.5, -1.0])

    def rows(x):
        return stack([[1.0, 2.0], x])

    np.testing.assert_array_equal(dnp.stack([[1.0, 2.0], x]), [[1.0, 2.0], [0.5, -1.0]])
    expected_jacobian = np.zeros((2, 2, 2))
    expected_jacobian[1] = np.eye(2)
    for jacobian in (dk.jacfwd(rows), dk.jacrev(rows)):
        np.testing.assert_array_equal(jacobian(x), expected_jacobian)
