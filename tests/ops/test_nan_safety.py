"""No NaN leaks from the branch a ``where`` does not take (issue 4, item 5).

In ``where(x > 0, sqrt(x), 0)`` at ``x = -1`` forward mode never mixes the untaken branch in,
but reverse mode multiplies the zero cotangent by ``sqrt'(-1) = NaN``. Functions whose
derivative can be infinite or undefined make a zero tangent or cotangent give 0, so both
engines agree (the 0 x inf rule of docs/conventions.md: a zero factor on either side of a
derivative product gives 0).
"""

import numpy as np
import pytest

import diffkit as dk
import diffkit.numpy as dnp
import diffkit.scipy.special as dsp

CASES = {
    "sqrt": (lambda x: dnp.where(x > 0, dnp.sqrt(x), 0.0), [-1.0, 4.0], [0.0, 0.25]),
    "log": (lambda x: dnp.where(x > 0, dnp.log(x), 0.0), [0.0, 4.0], [0.0, 0.25]),
    "log_negative": (lambda x: dnp.where(x > 0, dnp.log(x), 0.0), [-2.0, 4.0], [0.0, 0.25]),
    "divide": (lambda x: dnp.where(x != 0, 1.0 / x, 0.0), [0.0, 4.0], [0.0, -1 / 16]),
    "arcsin": (lambda x: dnp.where(dnp.abs(x) < 1, dnp.arcsin(x), 0.0), [2.0, 0.5],
               [0.0, 1 / np.sqrt(0.75)]),
    "fractional_power": (lambda x: dnp.where(x > 0, x ** 0.5, 0.0), [-1.0, 4.0], [0.0, 0.25]),
    "array_power": (lambda x: dnp.where(x > 0, dnp.power(x, np.array(0.5)), 0.0),
                    [-1.0, 4.0], [0.0, 0.25]),
    "log10": (lambda x: dnp.where(x > 0, dnp.log10(x), 0.0), [0.0, 4.0],
              [0.0, 1 / (4 * np.log(10))]),
    "arctanh": (lambda x: dnp.where(dnp.abs(x) < 1, dnp.arctanh(x), 0.0), [1.0, 0.5],
                [0.0, 1 / 0.75]),
    # the untaken branch overflows: 0 times exp(1000) = inf
    "exp_overflow": (lambda x: dnp.where(x < 10, dnp.sin(x), dnp.exp(1000 * x)), [1.0, 0.5],
                     [np.cos(1.0), np.cos(0.5)]),
    # multiply's partial log(-1) = NaN meets the zero cotangent (0 x nan)
    "product_log": (lambda x: dnp.where(x > 0, x * dnp.log(x), 0.0), [-1.0, 1.0], [0.0, 1.0]),
    # forward mode: multiply's zero partial x = 0 meets sqrt's infinite tangent
    "product_sqrt": (lambda x: x * dnp.sqrt(x), [0.0, 4.0], [0.0, 3.0]),
    "sici_ci_untaken": (lambda x: dnp.where(x > 0, dnp.stack(dsp.sici(x))[1], x),
                        [0.0, 1.0], [1.0, np.cos(1.0)]),
}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name", sorted(CASES))
def test_both_engines_give_the_taken_branch_derivative(name):
    f, x, diagonal = CASES[name]
    expected = np.diag(diagonal)
    x = np.array(x)
    np.testing.assert_allclose(dk.jacfwd(f)(x), expected, rtol=1e-12, atol=0)
    np.testing.assert_allclose(dk.jacrev(f)(x), expected, rtol=1e-12, atol=0)
    np.testing.assert_allclose(dk.vmap(dk.grad(lambda v: f(v).sum()))(x[:, None])[:, 0],
                               diagonal, rtol=1e-12, atol=0)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_second_order_stays_nan_free():
    f = CASES["sqrt"][0]
    x = np.array([-1.0, 4.0])
    hessian = dk.hessian(lambda v: f(v).sum())(x)
    np.testing.assert_allclose(hessian, np.diag([0.0, -1 / 32]), rtol=1e-12, atol=0)


@pytest.mark.parametrize("name, f", [
    ("divide", lambda x: dnp.sum(x * x) / 3.0),
    ("log1p", lambda x: dnp.log1p(dnp.sum(x * x))),
    ("sqrt", lambda x: dnp.sqrt(1.0 + dnp.sum(x * x))),
    ("fractional_power", lambda x: (1.0 + dnp.sum(x * x)) ** 0.5),
])
def test_the_guard_keeps_higher_derivatives_where_the_tangent_is_zero(name, f):
    # At x = 0 the inner derivative is 0 but depends on x: masking it must not cut off
    # the second derivative (here 2/3 I, or 2 I times the outer function's slope at 1).
    x = np.zeros(3)
    slope = {"divide": 1 / 3, "log1p": 1.0, "sqrt": 0.5, "fractional_power": 0.5}[name]
    expected = 2 * slope * np.eye(3)
    for hessian in (dk.jacfwd(dk.jacfwd(f)), dk.jacfwd(dk.jacrev(f)), dk.jacrev(dk.jacrev(f)),
                    dk.jacrev(dk.jacfwd(f))):
        np.testing.assert_allclose(hessian(x), expected, rtol=1e-12, atol=1e-15)


# --- products inside matrix rules follow the 0 x inf rule too ----------------------------------


@pytest.mark.parametrize("product", [
    lambda a, b: a @ b, lambda a, b: dnp.einsum("i,ij->j", a, b),
    lambda a, b: dnp.einsum("i,ij,j->j", a, b, np.array([1.0, 1.0])), dnp.dot],
    ids=["matmul", "einsum", "einsum3", "dot"])
def test_matrix_product_rules_follow_the_zero_rule_in_both_engines(product):
    """A NaN derivative (here sqrt's at -1, made NaN by a NaN input tangent of log at -1)
    meeting an exact zero of the other factor of a matmul gives 0, in both engines; where the
    partner is nonzero the NaN stays."""
    B = np.array([[0.0, 2.0], [0.0, 3.0]])   # column 0 is a structural zero

    def f(x):
        return product(dnp.log(x), B)   # log(-1) is NaN, log'(-1) = -1 finite

    def g(x):
        return product(dnp.sqrt(x), B)  # sqrt'(-1) is NaN

    x = np.array([-1.0, 4.0])
    forward, reverse = dk.jacfwd(g)(x), dk.jacrev(g)(x)
    np.testing.assert_array_equal(forward, reverse)
    np.testing.assert_array_equal(forward[0], [0.0, 0.0])          # zero partner: 0
    assert np.isnan(forward[1, 0]) and forward[1, 1] == 0.25 * 3.0   # d out_1 / dx_0 NaN
    np.testing.assert_array_equal(dk.jacfwd(f)(x), dk.jacrev(f)(x))


def test_matrix_product_rule_keeps_infinite_terms_with_a_nonzero_partner():
    """``1 / x`` at 0 has an infinite derivative: times a nonzero entry of the other factor
    it stays infinite, times a zero entry it is 0, the same in both engines and under vmap."""
    B = np.array([[0.0, 2.0], [1.0, 0.0]])

    def f(x):
        return (1.0 / x) @ B

    x = np.array([0.0, 2.0])
    forward, reverse = dk.jacfwd(f)(x), dk.jacrev(f)(x)
    np.testing.assert_array_equal(forward, reverse)
    np.testing.assert_array_equal(forward, [[0.0, -0.25], [-np.inf, 0.0]])
    looped = np.stack([dk.jacrev(f)(row) for row in np.stack([x, x[::-1]])])
    np.testing.assert_array_equal(dk.vmap(dk.jacrev(f))(np.stack([x, x[::-1]])), looped)
