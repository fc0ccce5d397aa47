"""``dk.linearize`` records the tangent map once in the staged IR (``interpreters.staging.
stage_linear``) and replays it: its ``jvp_fn`` must give what ``dk.jvp`` gives at the same
point, bit for bit, for every tangent, also where a rule reads the tangent's values (the
0 x inf rule at a singular point: a zero, NaN or infinite tangent entry meeting an infinite
or zero derivative), eagerly and for a jitted function (the recording compiled into a
graph). Random programs (elementwise operations, reductions, indexing, ``where`` and
``maximum`` with ties, a branch on a comparison) and random tangents find the cases."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.core.zeros import Zero
from diffkit.errors import StaleLinearMapError
from diffkit.interpreters.staging import linearize_flat
from diffkit.testing.strategies import programs

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                      HealthCheck.data_too_large])
N = 5


def same(got, expected):
    """Equal values (NaN where NaN) of the same dtype: the replay runs the operations jvp
    runs, on the same numbers."""
    assert np.asarray(got).dtype == np.asarray(expected).dtype
    np.testing.assert_array_equal(got, expected)


# --- random programs with singular points ------------------------------------------------

# Each step maps the running value ``y`` (and the input ``x``) to a new value of shape (N,).
STEPS = {
    "sin": lambda x, y: dnp.sin(y),
    "exp": lambda x, y: dnp.exp(dnp.tanh(y)),
    "sqrt_abs": lambda x, y: dnp.sqrt(dnp.abs(y)),          # infinite derivative at 0
    "log1p_square": lambda x, y: dnp.log1p(y * y),
    "times_x": lambda x, y: y * x,
    "divide": lambda x, y: y / (1.0 + x * x),
    "maximum_x": lambda x, y: dnp.maximum(y, x),             # ties where y == x
    "maximum_self": lambda x, y: dnp.maximum(y, y[::-1]),    # ties at the middle entry
    "where": lambda x, y: dnp.where(y > 0, y * y, 2.0 * y),
    "index": lambda x, y: y[np.array([2, 0, 0, 4, 1])] + y,  # a repeated index
    "slice": lambda x, y: dnp.concatenate([y[1:], y[:1]]) * y,
    "cumsum": lambda x, y: dnp.cumsum(y),
    "sum": lambda x, y: y * dnp.sum(y),
    "max": lambda x, y: y - dnp.max(y),                      # ties among maxima
    "prod": lambda x, y: y + dnp.prod(y),                    # zero entries
    "mean_square": lambda x, y: y * dnp.mean(y * y),
    "branch": lambda x, y: dnp.sin(y) if dnp.sum(y) > 0 else y * y,  # on the primal
}

# Entries that make ties, zeros and infinite derivatives likely.
VALUES = st.sampled_from([0.0, 0.0, 1.0, -1.0, 0.5, 2.0, -0.25])
TANGENT_VALUES = st.one_of(st.sampled_from([0.0, 0.0, 1.0, -1.0, np.nan, np.inf, -np.inf]),
                           st.floats(-3, 3))


def make_program(steps):
    def f(x):
        y = x
        for name in steps:
            y = STEPS[name](x, y)
        return y
    return f


@st.composite
def cases(draw):
    steps = draw(st.lists(st.sampled_from(sorted(STEPS)), min_size=1, max_size=5))
    x = np.array(draw(st.lists(VALUES, min_size=N, max_size=N)))
    tangents = [np.array(draw(st.lists(TANGENT_VALUES, min_size=N, max_size=N)))
                for _ in range(3)]
    return steps, x, tangents


def _check(f, lin_f, x, tangents):
    with np.errstate(all="ignore"):
        out, jvp_fn = dk.linearize(lin_f, x)
        same(out, f(x))
        for t in [np.ones(N), *tangents, np.ones(N)]:   # ones again: after a fallback
            same(jvp_fn(t), dk.jvp(f, (x,), (t,))[1])


@settings(max_examples=60, **SETTINGS)
@given(cases())
def test_eager_linearize_equals_jvp_on_random_programs(case):
    steps, x, tangents = case
    f = make_program(steps)
    _check(f, f, x, tangents)


@settings(max_examples=25, **SETTINGS)
@given(cases())
def test_jitted_linearize_equals_jvp_on_random_programs(case):
    steps, x, tangents = case
    f = make_program(steps)
    _check(f, dk.jit(f), x, tangents)


@settings(max_examples=25, **SETTINGS)
@given(programs(max_inputs=2, max_steps=6), st.integers(0, 2 ** 32 - 1))
def test_linearize_equals_jvp_on_generated_programs(case, seed):
    """The library's program strategy (matrix products, einsum, shape operations,
    broadcasting, several inputs) at normal tangents. (Close rather than equal: the
    recording holds copies of the constants, and a BLAS product may sum in another order
    at another alignment.)"""
    program, args = case
    rng = np.random.default_rng(seed)
    out, jvp_fn = dk.linearize(program, *args)
    same(out, program(*args))
    for _ in range(2):
        tangents = tuple(rng.standard_normal(np.shape(a)) for a in args)
        got, expected = jvp_fn(*tangents), dk.jvp(program, args, tangents)[1]
        assert np.asarray(got).dtype == np.asarray(expected).dtype
        np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-300)


# --- what the recording keeps and replays -------------------------------------------------


def test_large_arrays_replay_their_masks():
    # arrays of 64 KiB and more: the recording keeps every constant a mask reads (the
    # reverse tape it replaces dropped them and failed here)
    x = np.linspace(-1.0, 1.0, 10_000)

    def f(x):
        return dnp.exp(-x * x) * dnp.sqrt(dnp.abs(x))

    t = np.cos(np.arange(10_000.0))
    t[::7] = 0.0
    with np.errstate(all="ignore"):
        _, jvp_fn = dk.linearize(f, x)
        for tangent in (t, np.ones_like(x), t):
            same(jvp_fn(tangent), dk.jvp(f, (x,), (tangent,))[1])


def test_only_tangent_operations_are_recorded_and_dead_ones_are_skipped():
    calls = []

    def f(x):
        calls.append(1)
        unused = dnp.cos(x) * 3.0          # its tangent is recorded, never replayed
        del unused
        return [dnp.sin(x) * 2.0]

    x = np.array([0.1, 0.2])
    primals_out, jvp_fn = linearize_flat(f, [x])
    names = [e.prim.name for e in jvp_fn.recording.equations]
    assert "sin" not in names and "cos" not in names   # the primal values are constants
    for t in (np.array([1.0, -2.0]), np.array([0.5, 3.0])):
        (got,) = jvp_fn([t])
        np.testing.assert_allclose(got, 2 * np.cos(x) * t, rtol=1e-15)
    assert len(calls) == 1
    # recorded: the two products of each tangent; replayed: those of the returned one only
    # (the dropped value's 0 x inf check, which decides only that value, goes with it)
    assert len(jvp_fn.recording.equations) == 4
    assert [step[0].name for step in jvp_fn._replay.steps] == ["multiply", "multiply"]


def test_symbolic_zero_outputs_stay_symbolic():
    x = np.array([1.0, 2.0])
    _, jvp_fn = linearize_flat(lambda x: [x * x, np.ones(3), dnp.floor(x)], [x])
    square, ones, floor = jvp_fn([np.array([1.0, 1.0])])
    np.testing.assert_allclose(square, 2 * x, rtol=1e-15)
    assert type(ones) is Zero and ones.shape == (3,)
    assert type(floor) is Zero and floor.shape == (2,)


def test_float32_stays_float32():
    x = np.array([0.5, 1.5], dtype=np.float32)
    _, jvp_fn = dk.linearize(lambda x: dnp.sin(x) * x, x)
    t = np.array([1.0, -1.0], dtype=np.float32)
    got = jvp_fn(t)
    same(got, dk.jvp(lambda x: dnp.sin(x) * x, (x,), (t,))[1])
    assert got.dtype == np.float32


def test_pytrees_in_and_out():
    def f(params, x):
        return {"y": dnp.tanh(params["w"] @ x + params["b"]), "n": dnp.sum(x * x)}

    rng = np.random.default_rng(3)
    params = {"w": rng.standard_normal((3, 2)), "b": rng.standard_normal(3)}
    x = rng.standard_normal(2)
    out, jvp_fn = dk.linearize(f, params, x)
    t = ({"w": rng.standard_normal((3, 2)), "b": rng.standard_normal(3)},
         rng.standard_normal(2))
    got, expected = jvp_fn(*t), dk.jvp(f, (params, x), t)[1]
    same(got["y"], expected["y"])
    same(got["n"], expected["n"])
    pre = params["w"] @ x + params["b"]
    np.testing.assert_allclose(got["y"], (1 - np.tanh(pre) ** 2)
                               * (t[0]["w"] @ x + params["w"] @ t[1] + t[0]["b"]), rtol=1e-13)


def test_a_rule_that_branches_on_its_tangent_is_replayed_only_where_it_reads_the_same():
    # a (non-linear) custom rule choosing its formula from the tangent's sign: the read is a
    # guard, so a tangent of the other sign is answered by running the rule again
    @dk.custom_jvp
    def f(x):
        return dnp.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        scale = 2.0 if float(dnp.sum(t)) > 0 else 3.0
        return f(x), scale * dnp.cos(x) * t

    x = np.array([0.3, 0.7])
    _, jvp_fn = dk.linearize(f, x)
    for t in (np.array([1.0, 1.0]), np.array([-1.0, -1.0]), np.array([2.0, 0.5])):
        same(jvp_fn(t), dk.jvp(f, (x,), (t,))[1])
    np.testing.assert_allclose(jvp_fn(np.array([-1.0, -1.0])), -3 * np.cos(x), rtol=1e-15)


def test_custom_vjp_and_custom_jvp_calls_are_replayed():
    @dk.custom_vjp
    def clip_scale(x):
        return dnp.sin(x)

    clip_scale.defvjp(lambda x: (dnp.sin(x), x), lambda x, g: (2.0 * dnp.cos(x) * g,))

    @dk.custom_jvp
    def smooth(x):
        return dnp.exp(x)

    smooth.defjvp(lambda p, t: (smooth(p[0]), dnp.exp(p[0]) * t[0] * 0.5))

    def f(x):
        return clip_scale(x) * smooth(x)

    x = np.array([0.2, -0.4])
    _, jvp_fn = dk.linearize(f, x)
    for t in (np.array([1.0, 0.0]), np.array([0.5, -2.0])):
        expected = (2 * np.cos(x) * np.exp(x) + np.sin(x) * 0.5 * np.exp(x)) * t
        np.testing.assert_allclose(jvp_fn(t), expected, rtol=1e-14)
        same(jvp_fn(t), dk.jvp(f, (x,), (t,))[1])


def test_linearize_at_a_traced_primal_under_grad_and_vmap():
    def f(x):
        return dnp.sin(x) * dnp.sqrt(x)

    def directional(x):
        return dk.linearize(f, x)[1](np.array([1.0, 2.0]))

    x = np.array([0.5, 1.2])
    # d/dx of f'(x) * t: f'' t
    f1 = np.cos(x) * np.sqrt(x) + np.sin(x) / (2 * np.sqrt(x))
    f2 = -np.sin(x) * np.sqrt(x) + np.cos(x) / np.sqrt(x) - np.sin(x) / (4 * x ** 1.5)
    np.testing.assert_allclose(directional(x), f1 * [1.0, 2.0], rtol=1e-14)
    np.testing.assert_allclose(dk.jacfwd(directional)(x), np.diag(f2 * [1.0, 2.0]),
                               rtol=1e-13)
    np.testing.assert_allclose(dk.jacrev(directional)(x), np.diag(f2 * [1.0, 2.0]),
                               rtol=1e-13)
    xs = np.array([[0.5, 1.2], [0.0, 2.0], [3.0, 0.1]])   # sqrt at 0: the 0 x inf rule
    with np.errstate(all="ignore"):
        batched = dk.vmap(directional)(xs)
        for row, x_row in zip(batched, xs):
            same(row, directional(x_row))
            same(row, dk.jvp(f, (x_row,), (np.array([1.0, 2.0]),))[1])


def test_a_fallback_at_changed_values_is_an_error_not_a_wrong_answer():
    w = np.array([1.0, 2.0])

    def f(x):
        return dnp.sqrt(x) * w              # infinite derivative at x = 0

    x = np.array([0.0, 4.0])
    with np.errstate(all="ignore"):
        _, jvp_fn = dk.linearize(f, x)
        np.testing.assert_array_equal(jvp_fn(np.array([0.0, 1.0])), [0.0, 0.25 * 1.0 * 2])
        w[:] = 5.0                          # the recording kept its own copy ...
        np.testing.assert_array_equal(jvp_fn(np.array([1.0, 1.0])), [np.inf, 0.5])
        with pytest.raises(StaleLinearMapError, match="no longer computes"):
            jvp_fn(np.array([0.0, 1.0]))    # ... but f, run again here, reads the new w


def test_an_input_written_after_linearize_does_not_change_a_fallback():
    x = np.array([0.0, 4.0])
    with np.errstate(all="ignore"):
        _, jvp_fn = dk.linearize(dnp.sqrt, x)
        x[:] = 9.0
        t = np.array([0.0, 1.0])          # the fallback runs sqrt at the recorded x
        np.testing.assert_array_equal(jvp_fn(t), [0.0, 0.25])
        np.testing.assert_array_equal(jvp_fn(t), [0.0, 0.25])
