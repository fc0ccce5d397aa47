"""Guards: every value Python reads from a staged array while jit traces is checked on each
replay, so a replay is never stale. Random draws and escaping staged values are errors."""

import warnings

import numpy as np
import pytest

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.errors import EscapedTracerError, PerformanceWarning
from diffkit.jit import MAX_SPECIALISATIONS, RandomDrawError


def branchy(x):
    if x.sum() > 0:
        return dnp.sum(dnp.sin(x) ** 2)
    return dnp.sum(dnp.cos(x) * x)


def test_branch_on_a_value_is_right_every_time_and_traces_twice():
    jitted = dk.jit(branchy)
    inputs = [np.array([0.5, 1.0, -0.2]), np.array([-0.5, -1.0, 0.2])] * 3
    for x in inputs:
        expected = np.sum(np.sin(x) ** 2) if x.sum() > 0 else np.sum(np.cos(x) * x)
        np.testing.assert_allclose(jitted(x), expected, rtol=1e-12)
    info = jitted.cache_info()
    assert info.traces == 2
    assert info.hits == 4


def test_branch_under_grad_of_jit_and_jit_of_grad():
    inner = dk.jit(branchy)
    outer = dk.jit(dk.grad(branchy))
    for x in [np.array([0.5, 1.0, -0.2]), np.array([-0.5, -1.0, 0.2])] * 2:
        if x.sum() > 0:
            expected = 2 * np.sin(x) * np.cos(x)
        else:
            expected = np.cos(x) - x * np.sin(x)
        np.testing.assert_allclose(dk.grad(inner)(x), expected, rtol=1e-12)
        np.testing.assert_allclose(outer(x), expected, rtol=1e-12)
    assert inner.cache_info().traces == 2 and outer.cache_info().traces == 2


def test_boolean_mask_whose_count_changes_retraces():
    jitted = dk.jit(lambda x: dnp.sum(x[x > 0] ** 2))
    for x in [np.array([1.0, -2.0, 3.0]), np.array([1.0, 2.0, 3.0]),
              np.array([-1.0, -2.0, 3.0]), np.array([1.0, -2.0, 3.0])]:
        np.testing.assert_allclose(jitted(x), np.sum(x[x > 0] ** 2), rtol=1e-12)
        np.testing.assert_allclose(dk.grad(jitted)(x), np.where(x > 0, 2 * x, 0.0),
                                   rtol=1e-12)
    assert jitted.cache_info().traces == 3   # one per mask; the last one replays


def test_same_mask_count_different_positions_is_not_stale():
    jitted = dk.jit(lambda x: x[x > 0])
    np.testing.assert_array_equal(jitted(np.array([1.0, -2.0, 3.0])), [1.0, 3.0])
    np.testing.assert_array_equal(jitted(np.array([-1.0, 2.0, 3.0])), [2.0, 3.0])


def test_nonzero_and_unique_are_guarded():
    jitted = dk.jit(lambda x: (dnp.nonzero(x > 0)[0], dnp.unique(dnp.round(x))))
    for x in [np.array([1.0, -2.0, 3.0, 3.2]), np.array([-1.0, 2.0, 2.1, 5.0])]:
        idx, uniq = jitted(x)
        np.testing.assert_array_equal(idx, np.nonzero(x > 0)[0])
        np.testing.assert_array_equal(uniq, np.unique(np.round(x)))


def test_conversions_to_python_numbers_are_guarded():
    def f(x, n):
        scale = float(x[0])          # a Python float read from the staged value
        k = int(n)                   # an int read from a traced Python scalar
        return x[:k] * scale + x.sum().item()

    jitted = dk.jit(f)
    for x, n in [(np.array([1.0, 2.0, 3.0]), 2), (np.array([2.0, 2.0, 3.0]), 2),
                 (np.array([2.0, 2.0, 3.0]), 3), (np.array([1.0, 2.0, 3.0]), 2)]:
        np.testing.assert_allclose(jitted(x, n), x[:n] * x[0] + x.sum(), rtol=1e-12)
    assert jitted.cache_info().traces == 3


def test_python_scalars_are_traced_not_baked_in():
    jitted = dk.jit(lambda x, a: x * a)
    for a in [2.0, 3.5, -1.0]:
        np.testing.assert_allclose(jitted(np.arange(3.0), a), np.arange(3.0) * a, rtol=1e-12)
    assert jitted.cache_info().traces == 1
    # a Python scalar stays weakly typed: float32 stays float32
    out = jitted(np.arange(3, dtype=np.float32), 2.0)
    assert out.dtype == np.float32


def test_zero_times_infinity_rule_is_guarded_at_singular_points():
    """The rules pick the 0 x inf correction from the values (has the product a NaN?):
    a replay at a singular point after a trace at a regular one is not stale."""
    f = lambda x: dnp.sum(dnp.sqrt(x) * 0.0 + x * dnp.log(x))   # noqa: E731
    jitted = dk.jit(dk.grad(f))
    regular, singular = np.array([1.0, 2.0]), np.array([0.0, 2.0])
    np.testing.assert_array_equal(jitted(regular), dk.grad(f)(regular))
    np.testing.assert_array_equal(jitted(singular), dk.grad(f)(singular))
    np.testing.assert_array_equal(jitted(regular), dk.grad(f)(regular))


def test_past_the_bound_runs_eagerly_with_a_warning():
    jitted = dk.jit(lambda x: x * float(x[0]))
    for k in range(MAX_SPECIALISATIONS):
        jitted(np.array([float(k), 1.0]))
    with pytest.warns(PerformanceWarning, match="without jit"):
        out = jitted(np.array([100.0, 1.0]))
    np.testing.assert_array_equal(out, [10000.0, 100.0])
    info = jitted.cache_info()
    assert info.traces == MAX_SPECIALISATIONS and info.eager_calls == 1


def test_vmap_of_a_value_branch_fails_as_eagerly():
    jitted = dk.jit(branchy)
    jitted(np.ones(3))      # a graph with a guard, recorded on a plain value
    with pytest.raises(dk.errors.TracerConversionError, match="dnp.where"):
        dk.vmap(jitted)(np.ones((2, 3)))


# --- random draws ----------------------------------------------------------------------------


def test_draw_from_numpys_global_generator_is_refused():
    jitted = dk.jit(lambda x: x + np.random.normal(size=x.shape))
    with pytest.raises(RandomDrawError, match="pass them in|as an argument"):
        jitted(np.ones(3))


RNG = np.random.default_rng(0)


def test_draw_from_a_global_or_closed_over_generator_is_refused():
    with pytest.raises(RandomDrawError, match="Generator"):
        dk.jit(lambda x: x + RNG.normal(size=3))(np.ones(3))
    rng = np.random.RandomState(1)
    with pytest.raises(RandomDrawError, match="RandomState"):
        dk.jit(lambda x: x * rng.uniform())(np.ones(3))


def test_generator_argument_is_refused():
    with pytest.raises(RandomDrawError, match="as an argument"):
        dk.jit(lambda x, rng: x + rng.normal())(np.ones(3), np.random.default_rng(0))


def test_random_numbers_passed_in_are_fine():
    jitted = dk.jit(lambda x, noise: x + noise)
    rng = np.random.default_rng(3)
    for _ in range(3):
        noise = rng.normal(size=3)
        np.testing.assert_array_equal(jitted(np.ones(3), noise), 1.0 + noise)
    assert jitted.cache_info().traces == 1


# --- escapes and what runs once ---------------------------------------------------------------


def test_staged_value_escaping_into_an_outer_list_is_an_error():
    kept = []

    def leaky(x):
        kept.append(x * 2)
        return x + 1

    dk.jit(leaky)(np.ones(2))
    with pytest.raises(EscapedTracerError, match="returned"):
        dnp.sin(kept[0])
    with pytest.raises(EscapedTracerError, match="Return it from the jitted function"):
        bool(kept[0][0] > 0)


def test_side_effects_run_only_when_tracing():
    """As in JAX: prints and appends run when jit traces, not on replay; closed-over arrays
    are recorded as constants."""
    calls = []
    scale = np.array(2.0)

    def f(x):
        calls.append(1)
        return x * scale

    jitted = dk.jit(f)
    np.testing.assert_array_equal(jitted(np.ones(2)), [2.0, 2.0])
    np.testing.assert_array_equal(jitted(np.ones(2)), [2.0, 2.0])
    assert len(calls) == 1
    scale = np.array(3.0)   # noqa: F841 (rebinding the closure's name after tracing)
    np.testing.assert_array_equal(jitted(np.ones(2)), [2.0, 2.0])   # the recorded constant
    jitted.clear_cache()
    np.testing.assert_array_equal(jitted(np.ones(2)), [3.0, 3.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jitted(np.ones(2))
