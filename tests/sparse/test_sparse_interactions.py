"""The forward route of Hessian detection (nonlinear interactions, one pass) against the
general one (the Jacobian pattern of the gradient program) and the dense Hessian."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from sparse_problems import band_pattern, chained_rosenbrock, flat_args

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.api import grad
from diffkit.interpreters.interactions import interaction_pattern
from diffkit.interpreters.sparsity import sparsity_flat
from diffkit.testing import strategies as dks


def gradient_route(fun, x):
    pattern = sparsity_flat(grad(fun), x)[1]
    return (pattern + pattern.T).toarray().astype(bool)


def dense_hessian_pattern(fun, x):
    return np.asarray(dk.hessian(fun)(x)) != 0


PROGRAMS = {
    "rosenbrock": chained_rosenbrock,
    # rows of different lengths meet in one product
    "ragged_rows": lambda x: dnp.sum(dnp.concatenate([x[:2], x[1:4] + x[2:5] + x[3:6]])
                                     * dnp.concatenate([x[6:], x[:3] - x[4:7]])),
    # a row with itself: sin of sums of one, two and three entries
    "ragged_self": lambda x: dnp.sum(dnp.sin(dnp.concatenate([x[:1], x[1:3] + x[2:4],
                                                               x[:2] + x[3:5] + x[5:7]]))),
    # nonlinear values that never reach the output, or only some of their entries do
    "dead_entries": lambda x: dnp.sum((dnp.exp(x[:-1] * x[1:]))[::3]) + 0.0 * dnp.sum(x),
    "dead_value": lambda x: (dnp.tanh(x) * x, dnp.sum(x ** 3))[1],
    "one_entry": lambda x: (dnp.cos(x[1:] * x[:-1]) + x[:-1])[2],
    "quotient": lambda x: dnp.sum(x[:-1] / x[1:]) + dnp.sum(3.0 / x) + dnp.sum(x / 4.0),
    "linear_powers": lambda x: dnp.sum(x ** 1) + dnp.sum(2.0 * x) - x[0] * 5.0,
    "square_by_product": lambda x: dnp.sum(x * x) + x[0] * x[-1],
    "reductions": lambda x: dnp.sum(dnp.log(dnp.sum(x[:4] ** 2) + dnp.cumsum(x ** 2))),
    "transpose": lambda x: dnp.sum(dnp.transpose(dnp.reshape(x, (2, 4)))[:, 0] ** 3),
    # piecewise linear (a selection among its arguments' entries): no interaction itself
    "piecewise": lambda x: dnp.sum(dnp.maximum(x, 0.5) ** 2) + dnp.sum(dnp.minimum(x[1:],
                                                                                   x[:-1])),
    # a general elementwise function of two arguments: everything meets at each entry
    "two_arguments": lambda x: dnp.sum(dnp.arctan2(x[:4], x[4:])) + dnp.sum(dnp.hypot(x, 1.0)),
}


# The gradient program is coarser here: its cotangents are scattered constants (entries
# that never reach the output still get a derivative value, zero) and x ** 1 differentiates
# to 1 * x ** 0, which reads x. The forward route keeps only what reaches the output.
FINER = {"dead_entries", "one_entry", "linear_powers"}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_forward_route_equals_gradient_route(name):
    fun = PROGRAMS[name]
    x = np.random.default_rng(3).uniform(0.5, 1.5, 8)
    forward = interaction_pattern(fun, x)
    assert forward is not None, "the program should take the forward route"
    assert forward.has_canonical_format and forward.dtype == bool
    forward = forward.toarray()
    general = gradient_route(fun, x)
    if name in FINER:
        assert not (forward & ~general).any() and (general & ~forward).any()
    else:
        np.testing.assert_array_equal(forward, general)
    np.testing.assert_array_equal(forward, forward.T)
    dense = dense_hessian_pattern(fun, x)
    assert not (dense & ~forward).any()
    np.testing.assert_array_equal(dk.hessian_sparsity(fun)(x).toarray(), forward)


def test_unknown_primitives_take_the_gradient_route():
    a = np.arange(16.0).reshape(4, 4) % 3
    for fun in (lambda x: x @ (a @ x), lambda x: dnp.sum(x ** 0 * x)):
        x = np.random.default_rng(4).uniform(0, 1, 4)
        assert interaction_pattern(fun, x) is None
        np.testing.assert_array_equal(dk.hessian_sparsity(fun)(x).toarray(),
                                      gradient_route(fun, x))


def test_a_swallowed_stop_still_takes_the_gradient_route():
    a = np.eye(3)

    def fun(x):
        try:
            y = a @ x
        except Exception:   # the user's code catches everything: detection must not care
            y = x
        return dnp.sum(y ** 2)

    x = np.ones(3)
    assert interaction_pattern(fun, x) is None
    np.testing.assert_array_equal(dk.hessian_sparsity(fun)(x).toarray(), np.eye(3, dtype=bool))


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(dks.programs(max_inputs=2, max_steps=6))
def test_random_programs_both_routes_agree(drawn):
    program, args = drawn
    flat = flat_args(program, args)

    def scalar(v):
        return dnp.sum(dnp.sin(flat(v)))

    v = np.concatenate([np.ravel(np.asarray(a, float)) for a in args])
    forward = interaction_pattern(scalar, v)
    general = gradient_route(scalar, v)
    dense = dense_hessian_pattern(scalar, v)
    assert not (dense & ~general).any()
    if forward is not None:   # never coarser than the gradient route, never missing a nonzero
        forward = forward.toarray()
        assert not (forward & ~general).any()
        assert not (dense & ~forward).any()


def test_one_entry_vectors_are_read_and_longer_outputs_left_to_the_caller():
    x = np.random.default_rng(5).uniform(0.5, 1.5, 5)
    as_vector = interaction_pattern(lambda v: dnp.reshape(dnp.sum(v[1:] * v[:-1]), (1,)), x)
    as_scalar = interaction_pattern(lambda v: dnp.sum(v[1:] * v[:-1]), x)
    np.testing.assert_array_equal(as_vector.toarray(), as_scalar.toarray())
    np.testing.assert_array_equal(as_scalar.toarray(), band_pattern(5) & ~np.eye(5, dtype=bool))
    assert interaction_pattern(lambda v: v[1:] * v[:-1], x) is None


@settings(max_examples=40, deadline=None)
@given(dks.programs(max_inputs=1, max_steps=5, max_size=12,
                    ops=("add", "multiply", "sin", "square", "sum", "reshape", "getitem")))
def test_a_pair_budget_gives_the_pattern_or_nothing(drawn):
    """``max_pairs`` never changes a pattern: below the pairs the interactions list it is
    None (a caller that wants a sparse pattern stops before building a dense one), from
    there on it is the pattern without a budget."""
    program, (x, *held) = drawn

    def scalar(v):
        return dnp.reshape(dnp.sum(program(dnp.reshape(v, x.shape), *held)), (1,))
    full = interaction_pattern(scalar, x.ravel())
    if full is None:
        return
    assert interaction_pattern(scalar, x.ravel(), max_pairs=10**9).toarray().tolist() \
        == full.toarray().tolist()
    if full.nnz > 0:   # each pair is listed once at least: a budget of none runs out
        assert interaction_pattern(scalar, x.ravel(), max_pairs=0) is None
