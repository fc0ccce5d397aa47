"""Staging of ``diffkit.compat.autograd``'s operators (``_staging``, ``_environment``).

A function made by ``grad``, ``value_and_grad``, ``elementwise_grad``, ``jacobian`` or
``hessian`` is recorded on its second call made the same way and replayed after. Every
test here checks values: against closed forms, central differences and the same call with
staging off (the eager computation, autograd's semantics), and that whatever the replay
cannot see (a rebound global, an array changed in place, a counter, a print, a random
draw) makes the call eager with the eager result.
"""

import itertools

import numpy as onp
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import diffkit
import diffkit.compat.autograd as ag
import diffkit.compat.autograd.numpy as np
from diffkit.compat.autograd import extend
from diffkit.compat.autograd._environment import MAX_BYTES, Environment, Unfollowable
from diffkit.compat.autograd._staging import MAX_TRACES

RTOL = 1e-12   # a replay computes what the eager call computes, in the same order
FD_RTOL = 1e-6

X = onp.array([[1.0, 2.0], [0.5, -1.0], [0.0, 3.0]])
floats = st.floats(-2.0, 2.0, allow_nan=False, allow_infinity=False)


def loss(w, x):
    return np.sum(np.tanh(np.dot(x, w)) ** 2)


def loss_gradient(w, x):
    t = onp.tanh(x @ w)
    return x.T @ (2 * t * (1 - t ** 2))


def central_difference(f, x, eps=1e-6):
    x = onp.asarray(x, dtype=float)
    out = onp.zeros_like(x)
    for index in onp.ndindex(*x.shape):
        step = onp.zeros_like(x)
        step[index] = eps
        out[index] = (f(x + step) - f(x - step)) / (2 * eps)
    return out


def eager(function, *args, **kwargs):
    """``function(*args, **kwargs)`` with staging off: autograd's semantics."""
    previous = ag.set_staging(False)
    try:
        return function(*args, **kwargs)
    finally:
        ag.set_staging(previous)


def recordings(function):
    """The jitted recordings a staged function keeps, one per staged context."""
    return [c.staged for c in function._staging.contexts.values() if c.staged is not None]


def replays(function):
    return sum(r.cache_info().hits for r in recordings(function))


@pytest.fixture(autouse=True)
def staging_on():
    previous = ag.set_staging(True)
    yield
    ag.set_staging(previous)


# --- replays give the eager results -----------------------------------------------------------


@settings(max_examples=20, deadline=None)
@given(st.lists(arrays(onp.float64, 2, elements=floats), min_size=3, max_size=6))
def test_value_and_grad_replays_match_the_closed_form_and_the_eager_call(points):
    vg = ag.value_and_grad(loss)
    for w in points:
        value, gradient = vg(w, X)
        onp.testing.assert_allclose(value, onp.sum(onp.tanh(X @ w) ** 2), rtol=RTOL)
        onp.testing.assert_allclose(gradient, loss_gradient(w, X), rtol=1e-10, atol=1e-14)
        eager_value, eager_gradient = eager(vg, w, X)
        assert type(value) is type(eager_value) and type(gradient) is type(eager_gradient)
        onp.testing.assert_allclose(value, eager_value, rtol=RTOL)
        onp.testing.assert_allclose(gradient, eager_gradient, rtol=RTOL, atol=1e-15)
    # recorded on the second call, replayed from the third
    assert [r.cache_info().traces for r in recordings(vg)] == [1]
    assert replays(vg) == len(points) - 2


# lifelines hands Nelder-Mead value_and_grad with jac=True too; SciPy says it ignores jac
@pytest.mark.filterwarnings("ignore:Method Nelder-Mead does not use gradient:RuntimeWarning")
@pytest.mark.parametrize("method", ["BFGS", "Nelder-Mead", "SLSQP"])
def test_scipy_minimize_with_jac_true_gives_the_eager_iterates(method):
    import scipy.optimize

    rng = onp.random.default_rng(1)
    design, target = rng.normal(size=(30, 3)), rng.normal(size=30)

    def mean_square(w, design, target):
        return np.mean((np.dot(design, w) - target) ** 2)

    def fit():
        return scipy.optimize.minimize(ag.value_and_grad(mean_square), onp.zeros(3),
                                       args=(design, target), jac=True, method=method,
                                       options={"maxiter": 2000})

    staged = fit()
    expected = eager(fit)
    assert staged.nfev == expected.nfev and staged.nfev > 3
    onp.testing.assert_allclose(staged.x, expected.x, rtol=1e-10, atol=1e-12)
    least_squares = onp.linalg.lstsq(design, target, rcond=None)[0]
    onp.testing.assert_allclose(staged.x, least_squares, rtol=1e-3, atol=1e-4)


def test_a_single_call_is_not_recorded():
    vg = ag.value_and_grad(loss)
    onp.testing.assert_allclose(vg(onp.array([0.1, -0.2]), X)[1],
                                loss_gradient(onp.array([0.1, -0.2]), X), rtol=1e-12)
    assert recordings(vg) == []


@pytest.mark.parametrize("make, expected", [
    (lambda: ag.grad(lambda w, x: np.sum(np.sin(x @ w))),
     lambda w: X.T @ onp.cos(X @ w)),
    (lambda: ag.elementwise_grad(lambda w, x: np.sin(w) * x[0, 0]),
     lambda w: onp.cos(w) * X[0, 0]),
    (lambda: ag.jacobian(lambda w, x: np.sin(x @ w)),
     lambda w: onp.cos(X @ w)[:, None] * X),
    (lambda: ag.hessian(lambda w, x: np.sum(np.sin(x @ w))),
     lambda w: -(X.T * onp.sin(X @ w)) @ X),
])
def test_every_staged_operator_replays_its_closed_form(make, expected):
    function = make()
    for k in range(4):
        w = onp.array([0.3 * k - 0.4, 0.2 + 0.1 * k])
        onp.testing.assert_allclose(function(w, X), expected(w), rtol=1e-10, atol=1e-14)
        onp.testing.assert_allclose(function(w, X), eager(function, w, X), rtol=RTOL,
                                    atol=1e-15)
    assert replays(function) >= 2


POINTS = {
    "float": (lambda x: x ** 3, lambda k: 1.5 + k),
    "0-d array": (lambda x: x ** 3, lambda k: onp.array(1.5 + k)),
    "list": (lambda x: x[0] ** 2 * x[1], lambda k: [1.0 + k, 2.0]),
    "dict": (lambda x: x["a"] ** 2 * np.sum(x["b"]),
             lambda k: {"a": 1.0 + k, "b": onp.array([1.0, 2.0])}),
    "integer array": (lambda x: np.sum(x ** 2), lambda k: onp.array([1, 2]) + k),
    "float32 array": (lambda x: np.sum(x ** 2),
                      lambda k: onp.array([1, 2], dtype=onp.float32) + k),
}


def described(tree):
    leaves = diffkit.tree_util.tree_leaves(tree)
    return diffkit.tree_util.tree_structure(tree), [
        (type(leaf), getattr(leaf, "dtype", None), onp.shape(leaf)) for leaf in leaves]


@pytest.mark.parametrize("operator", [ag.grad, ag.value_and_grad, ag.elementwise_grad,
                                      ag.jacobian, ag.hessian])
@pytest.mark.parametrize("kind", sorted(POINTS))
def test_replays_give_the_eager_structure_types_and_values(operator, kind):
    f, point = POINTS[kind]
    function = operator(f)
    staged = [function(point(k)) for k in range(4)]
    expected = [eager(function, point(k)) for k in range(4)]
    for got, want in zip(staged, expected):
        assert described(got) == described(want)
        for a, b in zip(diffkit.tree_util.tree_leaves(got),
                        diffkit.tree_util.tree_leaves(want)):
            onp.testing.assert_allclose(a, b, rtol=RTOL)
    assert replays(function) == 2


def test_argnum_tuples_keywords_and_integer_points():
    def f(a, data, b, scale=1.0):
        return scale * np.sum(a ** 2 * b + data * b)

    g = ag.grad(f, (0, 2))
    data = onp.array([1.0, -2.0])
    for k in range(4):
        a, b = onp.array([1, 2]) + k, onp.array([0.5, 1.5]) * k
        ga, gb = g(a, data, b, scale=3.0)
        onp.testing.assert_allclose(ga, 3.0 * 2 * a * b, rtol=RTOL)
        onp.testing.assert_allclose(gb, 3.0 * (a ** 2 + data), rtol=RTOL)
        assert ga.dtype == onp.float64   # integer points differentiated as real
    assert replays(g) == 2


def test_a_non_scalar_output_raises_the_eager_error_every_call():
    g = ag.grad(lambda w: w * 2.0)
    for _ in range(3):
        with pytest.raises(TypeError, match="only applies to real scalar-output"):
            g(onp.ones(2))


def test_an_error_raised_by_the_function_after_recording_is_the_eager_error():
    def f(w):
        if w[0] > 10:
            raise ValueError("w[0] is too large")
        return np.sum(w ** 2)

    g = ag.grad(f)
    for w in (onp.array([1.0, 2.0]), onp.array([3.0, 1.0]), onp.array([2.0, 2.0])):
        onp.testing.assert_allclose(g(w), 2 * w, rtol=RTOL)
    with pytest.raises(ValueError, match="too large"):
        g(onp.array([11.0, 0.0]))
    onp.testing.assert_allclose(g(onp.array([0.5, 0.5])), [1.0, 1.0], rtol=RTOL)


# --- what a replay cannot see makes the call eager -----------------------------------------------

SCALE = 2.0


def scaled(w):
    return SCALE * np.sum(w ** 2)


def test_a_rebound_global_is_seen():
    global SCALE
    g = ag.grad(scaled)
    w = onp.array([1.0, -0.5])
    try:
        for _ in range(3):
            onp.testing.assert_allclose(g(w), 2 * SCALE * w, rtol=RTOL)
        assert replays(g) == 1
        SCALE = 5.0   # an annealing schedule, say: autograd reads it at every call
        onp.testing.assert_allclose(g(w), 10.0 * w, rtol=RTOL)
        assert g._staging.off
    finally:
        SCALE = 2.0


def test_a_closed_over_array_changed_in_place_is_seen():
    weights = onp.array([1.0, 2.0])
    g = ag.grad(lambda w: np.sum(weights * w ** 2))
    w = onp.array([0.5, 0.25])
    for _ in range(3):
        onp.testing.assert_allclose(g(w), 2 * weights * w, rtol=RTOL)
    weights[1] = -7.0
    onp.testing.assert_allclose(g(w), [1.0, -3.5], rtol=RTOL)


def test_an_argument_changed_in_place_is_seen():
    data = onp.array([1.0, 2.0])
    vg = ag.value_and_grad(lambda w, d: np.sum(d * w ** 2))
    w = onp.array([0.5, 0.25])
    for _ in range(3):
        onp.testing.assert_allclose(vg(w, data)[1], 2 * data * w, rtol=RTOL)
    data *= 3.0   # the same object, other contents
    value, gradient = vg(w, data)
    onp.testing.assert_allclose(value, onp.sum(data * w ** 2), rtol=RTOL)
    onp.testing.assert_allclose(gradient, 2 * data * w, rtol=RTOL)


class Model:
    def __init__(self, scale):
        self.scale = scale

    def loss(self, w, x):
        return self.scale * np.sum(np.tanh(np.dot(x, w)) ** 2)


def test_an_attribute_of_a_bound_instance_is_seen():
    model = Model(1.5)
    vg = ag.value_and_grad(model.loss)
    w = onp.array([0.1, -0.2])
    for _ in range(3):
        onp.testing.assert_allclose(vg(w, X)[1], 1.5 * loss_gradient(w, X), rtol=1e-10)
    model.scale = -4.0
    onp.testing.assert_allclose(vg(w, X)[1], -4.0 * loss_gradient(w, X), rtol=1e-10)


def test_a_pandas_argument_changed_in_place_is_seen():
    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [0.5, -1.0, 2.0]})
    g = ag.grad(lambda w, df: np.sum(np.dot(df.to_numpy(), w) ** 2))
    w = onp.array([0.3, -0.1])
    for _ in range(3):
        design = frame.to_numpy()
        onp.testing.assert_allclose(g(w, frame), 2 * design.T @ (design @ w), rtol=1e-10)
    frame.iloc[0, 1] = 9.0
    design = frame.to_numpy()
    onp.testing.assert_allclose(g(w, frame), 2 * design.T @ (design @ w), rtol=1e-10)


def test_a_function_that_counts_its_calls_runs_at_every_call():
    calls = []

    def counted(w):
        calls.append(1)
        return np.sum(w ** 3)

    g = ag.grad(counted)
    for k in range(5):
        w = onp.array([1.0, 2.0]) + k
        onp.testing.assert_allclose(g(w), 3 * w ** 2, rtol=RTOL)
    assert len(calls) == 5
    assert g._staging.off and recordings(g) == []


def test_a_function_that_prints_runs_at_every_call(capsys):
    def chatty(w):
        print("evaluated")
        return np.sum(w ** 2)

    g = ag.grad(chatty)
    for _ in range(4):
        onp.testing.assert_allclose(g(onp.array([1.0, 3.0])), [2.0, 6.0], rtol=RTOL)
    assert capsys.readouterr().out.count("evaluated") == 4


def test_a_random_draw_is_drawn_at_every_call():
    def noisy(w):
        return np.sum(w * onp.random.normal(size=3))   # the gradient is the draw

    g = ag.grad(noisy)
    onp.random.seed(7)
    gradients = [g(onp.zeros(3)) for _ in range(4)]
    onp.random.seed(7)
    draws = [onp.random.normal(size=3) for _ in range(4)]
    for gradient, draw in zip(gradients, draws):
        onp.testing.assert_allclose(gradient, draw, rtol=RTOL)


def sequence(function, points, seed):
    """The results of ``function`` at ``points`` in turn, from the global seed ``seed``."""
    onp.random.seed(seed)
    return [function(w) for w in points]


def test_a_draw_first_made_while_recording_is_undone_and_made_eagerly():
    def sometimes_noisy(w):
        if w[0] > 0:
            return np.sum(w * onp.random.normal(size=2))
        return np.sum(w ** 2)

    points = [onp.array([-1.0, 2.0]), onp.array([1.0, 2.0]), onp.array([2.0, 1.0])]
    staged = sequence(ag.grad(sometimes_noisy), points, seed=3)
    previous = ag.set_staging(False)
    try:
        expected = sequence(ag.grad(sometimes_noisy), points, seed=3)
    finally:
        ag.set_staging(previous)
    for got, want in zip(staged, expected):
        onp.testing.assert_array_equal(got, want)


def test_a_function_that_reaches_a_generator_is_not_staged():
    rng = onp.random.default_rng(0)

    def noisy(w):
        return np.sum(w * rng.normal(size=2))

    g = ag.grad(noisy)
    gradients = [g(onp.zeros(2)) for _ in range(4)]
    reference = onp.random.default_rng(0)
    for gradient in gradients:
        onp.testing.assert_array_equal(gradient, reference.normal(size=2))
    assert recordings(g) == []


def test_a_generator_passed_as_an_argument_draws_at_every_call():
    def noisy(w, rng):
        return np.sum(w * rng.normal(size=2))

    g = ag.grad(noisy)
    rng, reference = onp.random.default_rng(5), onp.random.default_rng(5)
    for _ in range(4):
        onp.testing.assert_array_equal(g(onp.zeros(2), rng), reference.normal(size=2))
    assert recordings(g) == []


def test_branches_on_values_take_the_branch_of_each_call():
    def piecewise(w):
        if np.sum(w) > 0:
            return np.sum(w ** 2)
        return np.sum(np.sin(w))

    g = ag.grad(piecewise)
    for k in range(8):
        w = onp.array([1.0, 0.5]) * (-1) ** k * (1 + k / 10)
        expected = 2 * w if w.sum() > 0 else onp.cos(w)
        onp.testing.assert_allclose(g(w), expected, rtol=RTOL)
    assert all(r.cache_info().traces <= MAX_TRACES for r in recordings(g))


def test_a_branch_that_keeps_changing_gives_up_staging():
    def stepped(w):
        return np.sum(w ** 2) * int(np.floor(w[0]))   # a new guard value each call

    g = ag.grad(stepped)
    for k in range(2 * MAX_TRACES + 2):
        w = onp.array([k + 0.5, 1.0])
        onp.testing.assert_allclose(g(w), 2 * w * k, rtol=RTOL)
    assert recordings(g) == []   # given up after MAX_TRACES recordings


def test_a_python_number_argument_is_part_of_the_context():
    data = onp.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])

    def batch_loss(w, i):
        return np.sum((data[i] * w) ** 2)

    g = ag.grad(batch_loss)
    for step in range(6):
        i = step % 3
        w = onp.array([0.5, -1.0]) * (step + 1)
        onp.testing.assert_allclose(g(w, i), 2 * data[i] ** 2 * w, rtol=RTOL)
    assert len(g._staging.contexts) == 3


def test_staging_off_records_nothing():
    ag.set_staging(False)
    vg = ag.value_and_grad(loss)
    for k in range(4):
        w = onp.array([0.1, 0.2]) * k
        onp.testing.assert_allclose(vg(w, X)[1], loss_gradient(w, X), rtol=1e-12,
                                    atol=1e-15)
    assert recordings(vg) == [] and not ag.staging_enabled()


# --- nesting ----------------------------------------------------------------------------------


def test_an_operator_inside_a_staged_function_runs_in_its_recording():
    def cumulative(params, t):   # lifelines' hazard: the derivative in t of a cumulative
        return (t / params[0]) ** params[1]

    def negative_log_likelihood(params, t):
        hazard = ag.elementwise_grad(cumulative, 1)(params, t)
        return -np.sum(np.log(hazard)) + np.sum(cumulative(params, t))

    t = onp.array([0.5, 1.0, 2.5, 4.0])
    vg = ag.value_and_grad(negative_log_likelihood)
    for k in range(4):
        params = onp.array([1.5 + 0.1 * k, 1.2 - 0.05 * k])
        value, gradient = vg(params, t)
        onp.testing.assert_allclose(
            gradient, central_difference(lambda p: negative_log_likelihood(p, t), params),
            rtol=FD_RTOL)
        onp.testing.assert_allclose(gradient, eager(vg, params, t)[1], rtol=RTOL)
    assert replays(vg) == 2


def test_inside_another_transformation_the_operator_is_not_staged():
    inner = ag.grad(lambda w: np.sum(np.sin(w)))
    outer = diffkit.jacobian(lambda w: inner(w))
    for k in range(3):
        w = onp.array([0.2, -0.7]) + k
        onp.testing.assert_allclose(outer(w), onp.diag(-onp.sin(w)), rtol=RTOL)
    assert recordings(inner) == []


# --- autograd primitives in a recording --------------------------------------------------------


def make_logsumexp():
    """A primitive whose VJP evaluates the primitive again at its own point (as
    autograd-gamma's rules do)."""
    @extend.primitive
    def logsumexp(x):
        m = onp.max(x)
        return m + onp.log(onp.sum(onp.exp(x - m)))

    extend.defvjp(logsumexp, lambda ans, x: lambda g: g * np.exp(x - logsumexp(x)))
    return logsumexp


def test_a_primitive_evaluated_again_by_its_rule_is_recorded_once():
    logsumexp = make_logsumexp()
    g = ag.grad(lambda x: 2.0 * logsumexp(x))
    for k in range(4):
        x = onp.array([1.0, 2.0, 3.0]) * (k + 1)
        softmax = onp.exp(x - x.max()) / onp.exp(x - x.max()).sum()
        onp.testing.assert_allclose(g(x), 2.0 * softmax, rtol=1e-12)
        onp.testing.assert_allclose(g(x), eager(g, x), rtol=RTOL)
    (recording,) = recordings(g)
    calls = [e for graph in recording.graphs() for e in graph.equations
             if e.prim.name == "custom_call" and e.params["call"].name == "logsumexp"]
    assert len(calls) == 1   # the rule's logsumexp(x) is the forward's


@settings(max_examples=15, deadline=None)
@given(arrays(onp.float64, 3, elements=floats))
def test_a_staged_hessian_through_a_primitive_matches_the_eager_one(x):
    logsumexp = make_logsumexp()
    h = ag.hessian(logsumexp)
    softmax = onp.exp(x - x.max()) / onp.exp(x - x.max()).sum()
    expected = onp.diag(softmax) - onp.outer(softmax, softmax)
    for shift in (0.0, 0.5, -0.5):
        onp.testing.assert_allclose(h(x + shift), expected, atol=1e-12)


# --- the environment -------------------------------------------------------------------------


TABLE = [1.0, 2.0]


def reads_table(w):
    return w * TABLE[0]


def test_environment_sees_rebinding_and_in_place_changes():
    box = {"scale": 1.0}
    array = onp.arange(3.0)

    def f(w):
        return reads_table(w) * box["scale"] + array.sum()

    environment = Environment.of(f)
    assert environment.unchanged()
    box["scale"] = 2.0
    assert not environment.unchanged()
    box["scale"] = 1.0
    assert Environment.of(f).unchanged()
    environment = Environment.of(f)
    array[0] = 5.0
    assert not environment.unchanged()
    environment = Environment.of(f)
    TABLE.append(3.0)   # a helper's global, changed in place
    try:
        assert not environment.unchanged()
    finally:
        TABLE.pop()


def test_environment_of_a_closure_cell_and_a_default():
    scale = 1.0

    def f(w, offsets=[0.0]):   # noqa: B006 (a mutable default, read)
        return w * scale + offsets[0]

    environment = Environment.of(f)
    f.__defaults__[0].append(1.0)
    assert not environment.unchanged()
    environment = Environment.of(f)
    scale = 3.0   # noqa: F841 (rebinds the cell f reads)
    assert not environment.unchanged()


class Scaled:
    scale = 2.0

    def weight(self, w):
        return self.helper(w)

    def helper(self, w):
        return self.scale * w


class Child(Scaled):
    pass


def test_environment_sees_a_name_shadowed_later():
    obj = Child()
    environment = Environment.of(obj.weight)
    obj.scale = 3.0               # an instance attribute now hides the class's
    assert not environment.unchanged()
    del obj.scale
    environment = Environment.of(obj.weight)
    Child.helper = lambda self, w: w   # a subclass now hides the method weight calls
    try:
        assert not environment.unchanged()
    finally:
        del Child.helper


def test_environment_refuses_effects_and_too_much_data():
    def chatty(w):
        print(w)
        return w

    with pytest.raises(Unfollowable, match="print"):
        Environment.of(chatty)
    big = onp.zeros(MAX_BYTES // 8 + 1)
    with pytest.raises(Unfollowable, match="bytes"):
        Environment.of(lambda w: w + big)


def test_environment_of_a_counter_in_a_c_object_is_by_identity_only():
    # documented limit: the state inside an object without __dict__ is not read
    counter = itertools.count()
    environment = Environment.of(lambda w: w + next(counter))
    next(counter)
    assert environment.unchanged()
