"""Elementwise stretches on large arrays replayed block by block (``diffkit.jit.blocks``):
the same values bit for bit, guards still checked on every entry, peak memory down to the
values needed whole."""

import tracemalloc

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.jit import blocks
from diffkit.testing.strategies import programs

N = max(blocks.MIN_ENTRIES, 3 * blocks.BLOCK) + 1234   # several blocks, a ragged last one


def replayed(fun, *args):
    """``fun`` jitted and called twice (the second call replays), and the jitted function."""
    jitted = dk.jit(fun)
    jitted(*args)
    return jitted(*args), jitted


def same(a, b):
    np.testing.assert_array_equal(a, b)
    assert np.asarray(a).dtype == np.asarray(b).dtype


def loss(x):
    return dnp.sum(dnp.sin(x) * dnp.exp(-x ** 2))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gradient_in_blocks_equals_the_eager_gradient_bit_for_bit(dtype):
    x = np.random.default_rng(0).standard_normal(N).astype(dtype)
    grad = dk.grad(loss)
    out, _ = replayed(grad, x)
    same(out, grad(x))
    assert out.dtype == dtype


def test_the_replay_calls_one_loop_and_keeps_only_the_result_whole():
    x = np.random.default_rng(1).standard_normal(N)
    jitted = dk.jit(dk.grad(loss))
    jitted(x)
    jitted(x)
    (graph,) = jitted.graphs()
    fused = [e for e in graph.replay_program.equations
             if e.prim.name == "elementwise_blocks"]
    assert len(fused) == 1
    assert len(fused[0].outs) == 1   # the gradient itself; every intermediate is a block
    tracemalloc.start()
    try:
        jitted(x)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # the result, plus the block buffers (a few times BLOCK entries)
    assert peak <= x.nbytes + 16 * blocks.BLOCK * x.itemsize


def test_values_read_after_the_stretch_are_whole_and_right():
    """Intermediate values returned or reduced later are kept whole; the others are not."""
    def f(x, y):
        s = dnp.sin(x) * y
        t = dnp.exp(-s) + 1.5
        u = t * t - y
        return s, dnp.sum(u), dnp.cos(u)

    rng = np.random.default_rng(2)
    x, y = rng.standard_normal(N), rng.standard_normal(N)
    out, _ = replayed(f, x, y)
    for a, b in zip(out, f(x, y)):
        same(a, b)


def test_scalars_traced_and_constant_mix_with_the_blocks():
    def f(x, a):
        return dnp.sum(a * dnp.tanh(x) + dnp.exp(x * 0.25) / a)

    x = np.random.default_rng(3).standard_normal(N)
    for a in (0.5, 2.0):   # a traced Python float: no retrace
        out, jitted = replayed(dk.grad(f, argnums=(0, 1)), x, a)
        for got, want in zip(out, dk.grad(f, argnums=(0, 1))(x, a)):
            same(got, want)
    assert jitted.cache_info().traces == 1


def test_non_contiguous_and_two_dimensional_inputs():
    rng = np.random.default_rng(4)
    wide = rng.standard_normal((2 * N,))[::2]            # a strided view
    square = np.asfortranarray(rng.standard_normal((300, 300)))   # 90,000 entries
    for x in (wide, square):
        grad = dk.grad(loss)
        out, _ = replayed(grad, x)
        same(out, grad(x))
        assert out.shape == x.shape


def test_a_nan_in_a_late_block_fails_the_guard_and_retraces():
    """The 0 x inf rule's check runs block by block: an infinity in the last block makes
    the check fail there, and the call traces again with the right derivative."""
    x = np.random.default_rng(5).standard_normal(N)
    jitted = dk.jit(dk.grad(loss))
    jitted(x)
    jitted(x)
    bad = x.copy()
    bad[-7] = np.inf     # sin(inf) is NaN; exp(-inf) is 0: the product rule's 0 x NaN
    with np.errstate(invalid="ignore"):
        got = jitted(bad)
        want = dk.grad(loss)(bad)
    same(got, want)
    assert jitted.cache_info().guard_failures >= 1
    same(jitted(x), dk.grad(loss)(x))   # the first specialisation still serves


def test_complex_values_stay_exact():
    def f(z):
        return dnp.real(dnp.sum(dnp.exp(1j * z) * dnp.conj(z)))

    z = np.random.default_rng(6).standard_normal(N)
    out, _ = replayed(dk.grad(f), z)
    same(out, dk.grad(f)(z))


def test_small_arrays_are_not_blocked():
    x = np.random.default_rng(7).standard_normal(blocks.MIN_ENTRIES // 2)
    jitted = dk.jit(dk.grad(loss))
    jitted(x)
    jitted(x)
    (graph,) = jitted.graphs()
    assert all(e.prim.name != "elementwise_blocks" for e in graph.replay_program.equations)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs(max_steps=6, max_outputs=2))
def test_random_programs_in_tiny_blocks_equal_the_plain_replay_bit_for_bit(case):
    """Blocks of 3 entries from arrays of 2 entries up: every stretch of every random
    program is blocked, ragged ends included, and the values and gradients equal those of
    the replay without blocks exactly."""
    program, args = case

    def scalar(*a):
        return dnp.sum(dnp.sin(dk.tree_util.tree_leaves(program(*a))[0]))

    def run(fun):
        jitted = dk.jit(fun)
        jitted(*args)
        return jitted(*args)

    for fun in (program, dk.grad(scalar, tuple(range(program.num_inputs)))):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(blocks, "MIN_ENTRIES", 1 << 60)
            plain = run(fun)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(blocks, "MIN_ENTRIES", 2)
            patch.setattr(blocks, "BLOCK", 3)
            blocked = run(fun)
        plain_leaves, blocked_leaves = (dk.tree_util.tree_leaves(t) for t in (plain, blocked))
        assert len(plain_leaves) == len(blocked_leaves)
        for a, b in zip(plain_leaves, blocked_leaves):
            same(b, a)
