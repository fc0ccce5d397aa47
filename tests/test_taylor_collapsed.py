"""Collapsed Taylor mode on random programs: every route through
``diffkit.interpreters.collapsed`` (a primitive linear in its one moving argument, an
elementwise primitive at order 2 with one moving argument, the general expansion batched over
the directions) gives the operator the nested route gives.

The programs are the library's random straight-line programs (elementwise maps, reductions,
reshapes and slices, matrix products, einsum), with the first input the point and the
others held: the Laplacian equals the trace of the Hessian, the Hessian's diagonal its
diagonal, and the weighted Laplacian tr(S Sᵀ H), to rtol 1e-7.
"""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.testing import strategies as dks

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def scalar_program(program, held):
    def f(x):
        return dnp.sum(program(x, *held))
    return f


def close(got, want):
    scale = max(1.0, float(np.max(np.abs(want))))
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9 * scale)


@SETTINGS
@given(dks.programs(max_inputs=2, max_steps=6, max_size=12), st.data())
def test_operators_on_random_programs_equal_the_hessian_route(drawn, data):
    program, args = drawn
    x, held = args[0], args[1:]
    f = scalar_program(program, held)
    hessian = np.asarray(dk.hessian(f)(x)).reshape(x.size, x.size)
    close(dk.laplacian(f, sparsity=False)(x), np.trace(hessian))
    close(dk.hessian_diagonal(f, sparsity=False)(x), np.diag(hessian).reshape(x.shape))
    columns = data.draw(st.integers(1, 3))
    sigma = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))).normal(
        size=(*x.shape, columns))
    s = sigma.reshape(x.size, columns)
    close(dk.weighted_laplacian(f, sigma)(x), np.trace(s @ s.T @ hessian))


@SETTINGS
@given(dks.programs(max_inputs=2, max_steps=5, max_size=6))
def test_the_laplacian_of_a_vector_program_is_taken_entry_by_entry(drawn):
    program, args = drawn
    x, held = args[0], args[1:]

    def g(y):
        return dnp.ravel(program(y, *held))
    jacobian_of_gradients = np.asarray(dk.jacfwd(dk.jacrev(g))(x))
    out_size = jacobian_of_gradients.shape[0]
    hessians = jacobian_of_gradients.reshape(out_size, x.size, x.size)
    close(dk.laplacian(g, sparsity=False)(x), np.trace(hessians, axis1=1, axis2=2))


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(dks.programs(max_inputs=2, max_steps=4, max_size=4))
def test_the_biharmonic_of_random_programs_equals_the_nested_route(drawn):
    program, args = drawn
    x, held = args[0], args[1:]
    f = scalar_program(program, held)

    def laplacian_by_hessian(y):
        return dnp.trace(dnp.reshape(dk.hessian(f)(y), (y.size, y.size)))
    nested = np.trace(np.asarray(dk.hessian(laplacian_by_hessian)(x)).reshape(x.size, x.size))
    close(dk.biharmonic(f, sparsity=False)(x), nested)


def test_a_held_matrix_with_an_infinity_takes_the_jvp_route():
    """A linear map whose held operand is not finite goes through the JVP's 0 x inf rule:
    the Laplacian equals the Hessian route's, infinities and all."""
    weights = np.array([[1.0, np.inf], [2.0, 0.0]])

    def f(x):
        return dnp.sum(dnp.tanh(x) @ weights * 0.0 + dnp.sin(x))
    x = np.array([0.3, -0.4])
    with np.errstate(all="ignore"):
        got = dk.laplacian(f)(x)
        want = np.trace(np.asarray(dk.hessian(f)(x)))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
