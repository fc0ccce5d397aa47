"""Python's operators on traced values come from the ops floor and equal the primitives'
functions, value and derivative, in both engines."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.core.trace import Tracer
from diffkit.ops import elementwise as ew
from diffkit.ops import operators
from diffkit.testing import strategies as dks

BINARY = {"+": (lambda a, b: a + b, dnp.add), "-": (lambda a, b: a - b, dnp.subtract),
          "*": (lambda a, b: a * b, dnp.multiply), "/": (lambda a, b: a / b, dnp.divide),
          "**": (lambda a, b: a ** b, dnp.power),
          "reflected -": (lambda a, b: 2.5 - b, lambda a, b: dnp.subtract(2.5, b)),
          "reflected /": (lambda a, b: 2.5 / b, lambda a, b: dnp.divide(2.5, b))}


def test_the_operators_are_installed_by_the_ops_floor():
    # the primitives themselves: no Python frame of an operator's own on the hot path
    assert Tracer.__add__ is ew.add.primitive and Tracer.__mul__ is ew.multiply.primitive
    # (__getitem__ is wrapped again above, for the views of in-place writes)
    assert Tracer.__lt__ is ew.less.primitive
    for name in ("__neg__", "__rsub__", "__matmul__", "__iter__"):
        assert getattr(Tracer, name).__module__ == operators.__name__, name


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(sorted(BINARY)), dks.arrays((3,), np.float64, 0.5, 2.0),
       dks.arrays((3,), np.float64, 0.5, 2.0))
def test_operators_equal_the_functions_in_value_and_both_engines(name, a, b):
    by_operator, by_function = BINARY[name]

    def scalar(f):
        return lambda x, y: dnp.sum(f(x, y) * dnp.sin(x))

    for transform in (dk.jacfwd, dk.jacrev):
        for argnums in (0, 1):
            np.testing.assert_array_equal(
                transform(scalar(by_operator), argnums=argnums)(a, b),
                transform(scalar(by_function), argnums=argnums)(a, b))
    np.testing.assert_array_equal(by_operator(a, b), by_function(a, b))


def test_unary_operators_comparisons_and_indexing_under_grad():
    x = np.array([0.5, -1.5, 2.0])
    grad = dk.grad(lambda x: dnp.sum(abs(-x) * (x > 0)) + x[1] ** 2 + sum(v for v in x))(x)
    np.testing.assert_array_equal(grad, np.sign(x) * (x > 0) + np.array([0, 2 * x[1], 0]) + 1)
