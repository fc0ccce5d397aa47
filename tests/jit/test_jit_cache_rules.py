"""A jit recording is replayed only when everything that decided it is the same: the path
an exception sent the function down, the random draws it made, and the writes it made into
its arguments. Each test changes exactly one of these between two calls and compares the
second call with the plain function (and, for derivatives, with finite differences)."""

import random
import sys
import types

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.errors import InputTypeError
from diffkit.jit import RandomDrawError
from diffkit.jit.graph import StaleGraphError
from diffkit.scipy import optimize as dko

PD = np.array([[2.0, 0.5], [0.5, 1.0]])          # positive definite
INDEFINITE = np.array([[1.0, 2.0], [2.0, 1.0]])   # Cholesky raises LinAlgError


def logdet_or_fallback(a):
    try:
        chol = np.linalg.cholesky(a)
        return 2.0 * np.sum(np.log(np.diag(chol)))
    except np.linalg.LinAlgError:
        return np.sum(a * a) - 10.0


def pd_check_then_trace(a):
    """Cholesky only as a test: its result is never read."""
    try:
        np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        return -np.trace(a)
    return np.trace(a)


def reciprocal_or_zero(x):
    with np.errstate(divide="raise"):
        try:
            return np.sum(1.0 / x)
        except FloatingPointError:
            return np.sum(x) * 0.0


def fd_grad(f, x, eps=1e-6):
    x = np.asarray(x, float)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


# --- exceptions --------------------------------------------------------------------------------


@pytest.mark.parametrize("fun", [logdet_or_fallback, pd_check_then_trace])
@pytest.mark.parametrize("order", [(INDEFINITE, PD, INDEFINITE, PD), (PD, INDEFINITE, PD)])
def test_an_exception_path_is_never_replayed_for_another_input(fun, order):
    jitted = dk.jit(fun)
    for a in order:
        assert jitted(a) == fun(a)


@pytest.mark.parametrize("order", [([0.0, 1.0], [2.0, 4.0]), ([2.0, 4.0], [0.0, 1.0])])
def test_errstate_raise_inside_the_function(order):
    jitted = dk.jit(reciprocal_or_zero)
    for x in order:
        x = np.array(x)
        assert jitted(x) == reciprocal_or_zero(x)
        assert jitted(x) == reciprocal_or_zero(x)   # the replay too


def test_a_call_that_caught_an_exception_is_not_cached():
    jitted = dk.jit(logdet_or_fallback)
    jitted(INDEFINITE)
    jitted(INDEFINITE)
    assert jitted.cache_info().hits == 0 and jitted.graphs() == []
    jitted(PD)
    assert jitted(PD) == logdet_or_fallback(PD)
    assert jitted.cache_info().hits == 1


def test_an_uncaught_exception_of_the_replay_reaches_the_caller():
    jitted = dk.jit(lambda a: np.sum(np.linalg.cholesky(a)))
    jitted(PD)
    with pytest.raises(np.linalg.LinAlgError):
        jitted(INDEFINITE)


def test_gradients_through_the_exception_path():
    def loss(w):
        return logdet_or_fallback(np.outer(w, w) + np.diag(w))

    for outer in (lambda f: dk.jit(dk.grad(f)), lambda f: dk.grad(dk.jit(f))):
        g = outer(loss)
        for w in (np.array([1.0, 2.0]), np.array([-3.0, 0.5]), np.array([0.7, 1.1])):
            np.testing.assert_allclose(g(w), dk.grad(loss)(w), rtol=1e-12)
            np.testing.assert_allclose(g(w), fd_grad(loss, w), rtol=1e-6, atol=1e-8)


def test_make_graph_refuses_to_replay_a_path_chosen_by_an_exception():
    graph = dk.make_graph(logdet_or_fallback)(INDEFINITE)
    with pytest.raises(StaleGraphError, match="LinAlgError"):
        graph(PD)


def test_minimize_default_staging_follows_the_exception_path():
    def objective(w):
        a = np.diag(w) + 0.3 * (1.0 - np.eye(2))
        try:
            np.linalg.cholesky(a)
            penalty = 0.0
        except np.linalg.LinAlgError:
            penalty = 100.0
        return np.sum((w - 2.0) ** 2) + penalty

    x0 = np.array([-1.0, 0.5])   # not positive definite at the start
    staged = dko.minimize(objective, x0, method="Nelder-Mead")
    plain = dko.minimize(objective, x0, method="Nelder-Mead", jit=False)
    np.testing.assert_array_equal(staged.x, plain.x)
    assert staged.fun == plain.fun == objective(staged.x)
    np.testing.assert_allclose(staged.x, [2.0, 2.0], atol=1e-3)


# --- random draws ------------------------------------------------------------------------------


def _module_with_generator():
    module = types.ModuleType("user_random_holder")
    module.rng = np.random.default_rng(5)
    sys.modules[module.__name__] = module
    return module


HOLDER = _module_with_generator()


class ClassHolder:
    rng = np.random.default_rng(6)
    stdlib = random.Random(7)

    def draw(self, x):
        return x * self.rng.normal()


PY_RANDOM = random.Random(8)


def by_module(x):
    return x * HOLDER.rng.normal()


def by_class(x):
    return x * ClassHolder.rng.normal()


def by_python_random(x):
    return x * PY_RANDOM.random()


def by_class_python_random(x):
    return x + ClassHolder.stdlib.gauss(0.0, 1.0)


def fresh_generator(x):
    return x * np.random.default_rng().normal()


def fresh_random_state(x):
    return x * np.random.RandomState().normal()


def system_random(x):
    return x * random.SystemRandom().random()


def legacy_global(x):
    return x + np.random.normal()


def scipy_rvs(x):
    import scipy.stats

    return x + scipy.stats.norm.rvs()


@pytest.mark.parametrize("fun", [
    by_module, by_class, ClassHolder().draw, by_python_random, by_class_python_random,
    fresh_generator, fresh_random_state, system_random, legacy_global, scipy_rvs,
], ids=lambda f: getattr(f, "__name__", "method"))
def test_every_draw_is_seen_wherever_the_generator_lives(fun):
    with pytest.raises(RandomDrawError, match="pass them in"):
        dk.jit(fun)(np.ones(2))


def test_a_generator_seeded_inside_draws_the_same_every_call_and_is_staged():
    def fun(x):
        return x * np.random.default_rng(11).normal(size=x.shape)

    jitted = dk.jit(fun)
    for x in (np.ones(3), np.arange(3.0)):
        np.testing.assert_array_equal(jitted(x), fun(x))
    assert jitted.cache_info().hits == 1


@pytest.mark.parametrize("draw", [by_module, by_class, fresh_generator, by_python_random])
def test_minimize_never_optimises_a_frozen_sample(draw):
    values = []

    def objective(w):
        noise = draw(np.ones(1))[0]
        values.append(noise)
        return np.sum((w - 1.0) ** 2) + 1e-3 * noise

    dko.minimize(objective, np.zeros(2), method="BFGS")
    assert len(set(values)) == len(values) > 3   # a new draw at every evaluation


# --- writes into arguments ---------------------------------------------------------------------


def normalise(x):
    x /= np.linalg.norm(x)
    return x.sum()


def write_entry(x, v):
    x[0] = v * 2.0
    return x * 1.0


@pytest.mark.parametrize("fun, args", [
    (normalise, lambda: (np.array([3.0, 4.0]),)),
    (write_entry, lambda: (np.array([1.0, 2.0, 3.0]), np.array(5.0))),
])
def test_writes_into_an_argument_reach_the_caller(fun, args):
    jitted = dk.jit(fun)
    for _ in range(3):   # the trace, then replays
        plain_args, jit_args = args(), args()
        expected = fun(*plain_args)
        got = jitted(*jit_args)
        np.testing.assert_array_equal(got, expected)
        for a, b in zip(jit_args, plain_args):
            np.testing.assert_array_equal(a, b)
    assert jitted.cache_info().hits == 2


def test_a_write_into_a_read_only_argument_raises_as_numpy_does():
    x = np.array([3.0, 4.0])
    x.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        normalise(x)
    jitted = dk.jit(normalise)
    jitted(np.array([3.0, 4.0]))
    with pytest.raises(ValueError, match="read-only"):
        jitted(x)


def test_a_write_into_an_argument_that_aliases_another_is_refused():
    def fun(x, y):
        x *= 2.0
        return y.sum()

    a = np.ones(3)
    with pytest.raises(InputTypeError, match="shares memory"):
        dk.jit(fun)(a, a)
    jitted = dk.jit(fun)
    jitted(np.ones(3), np.ones(3))
    b = np.ones(4)
    with pytest.raises(InputTypeError, match="shares memory"):
        jitted(b[:3], b[1:])


def test_writes_under_an_enclosing_transformation_are_seen_as_without_jit():
    def outer(f):
        def loss(x):
            y = f(x)          # writes into x
            return y + dnp.sum(x ** 2)
        return loss

    x = np.array([3.0, 4.0])
    expected = dk.grad(outer(normalise))(x)
    jitted = dk.jit(normalise)
    for _ in range(2):
        np.testing.assert_allclose(dk.grad(outer(jitted))(x), expected, rtol=1e-12)
    np.testing.assert_allclose(expected, fd_grad(outer(normalise), x), rtol=1e-6)


# --- generated programs -----------------------------------------------------------------------

_OPS = {
    "sin": np.sin, "exp": lambda v: np.exp(-v * v), "square": np.square,
    "shift": lambda v: v[::-1] * 0.5 + v,
}


def _program(steps):
    """A function of ``x`` following ``steps``: each an operation, a branch on a value, a
    ``try`` around a Cholesky factorisation or an in-place write."""
    def fun(x):
        for kind, arg in steps:
            if kind == "op":
                x = _OPS[arg](x)
            elif kind == "branch":
                x = x * 2.0 if x[0] > arg else x - 1.0
            elif kind == "chol":
                a = np.outer(x, x) + arg * np.eye(x.size)
                try:
                    x = x + np.diag(np.linalg.cholesky(a))
                except np.linalg.LinAlgError:
                    x = x * 0.5
            elif kind == "write":
                x[0] = x[-1] * arg
            elif kind == "draw":
                x = x + arg * DRAWS.normal(size=x.shape)
        return np.sum(x)
    return fun


DRAWS = np.random.default_rng(12)


_STEP = st.one_of(
    st.tuples(st.just("op"), st.sampled_from(sorted(_OPS))),
    st.tuples(st.just("branch"), st.floats(-1, 1)),
    st.tuples(st.just("chol"), st.floats(-1, 1)),
    st.tuples(st.just("write"), st.floats(-2, 2)),
    st.tuples(st.just("draw"), st.floats(0.1, 1)),
)


@settings(max_examples=40, deadline=None)
@given(steps=st.lists(_STEP, min_size=1, max_size=6),
       inputs=st.lists(st.lists(st.floats(-2, 2), min_size=3, max_size=3), min_size=2,
                       max_size=4))
def test_random_programs_replay_as_the_plain_function(steps, inputs):
    fun = _program(steps)
    jitted = dk.jit(fun)
    grad_jitted = dk.jit(dk.grad(fun))
    if any(kind == "draw" for kind, _ in steps):   # a draw on every path: refused
        with pytest.raises(RandomDrawError):
            jitted(np.array(inputs[0]))
        with pytest.raises(RandomDrawError):
            grad_jitted(np.array(inputs[0]))
        return
    for values in inputs:
        x = np.array(values)
        with np.errstate(all="ignore"):
            expected = fun(x.copy())
            got = jitted(x.copy())
            np.testing.assert_array_equal(got, expected)
            np.testing.assert_array_equal(grad_jitted(x.copy()), dk.grad(fun)(x.copy()))


def log_or_zero(x):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            return np.sum(np.log(x))
        except RuntimeWarning:
            return np.sum(x) * 0.0


@pytest.mark.parametrize("order", [([1.0, 2.0], [0.0, 1.0]), ([0.0, 1.0], [1.0, 2.0])])
def test_warnings_made_errors_inside_the_function_follow_the_plain_path(order):
    jitted = dk.jit(log_or_zero)
    for _ in range(2):
        for x in order:
            x = np.array(x)
            assert jitted(x) == log_or_zero(x)
