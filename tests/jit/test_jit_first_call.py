"""What jit's first two calls do with a long program, checked by structure (no timing):
the replay's code generation leaves a program of small values as it is, and the block
loop's buffer assignment is the rule it documents, in one look-up per value."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.jit import blocks, buffers, products, rowblocks, scalars


def chain(steps):
    def f(x):
        for _ in range(steps):
            x = dnp.sin(x) * 0.9 + x * 0.1
        return dnp.sum(x)
    return f


def test_a_program_of_small_values_is_left_as_it_is_by_the_replay_rewrites():
    """Merged products, row blocks, elementwise blocks, scalars and buffer reuse all apply
    to large arrays or to particular shapes: on a long chain of small vectors each gives
    the program back unchanged, and the replay equals the eager gradient."""
    grad = dk.grad(chain(300))
    x = np.linspace(0.1, 1.0, 8)
    graph = dk.make_graph(grad)(x)
    program = graph.program
    assert products.merge(program) is program
    assert rowblocks.fuse(program) is program
    fused, guards_after = blocks.fuse(program, graph._guards_after, RuntimeError)
    assert fused is program and guards_after == graph._guards_after
    assert scalars.narrow(program, graph._guards_after) is program
    assert buffers.plan(program) == ({}, {})
    jitted = dk.jit(grad)
    for y in (x, x + 0.25, x):
        np.testing.assert_array_equal(jitted(y), grad(y))


def _list_rule(events):
    """The slots a stretch's values take, by the rule ``blocks`` documents: a new value
    takes the first freed buffer of its dtype still free, else a new one. ``events``:
    ``("take", dtype)`` or ``("free", slot)`` (ignored unless the slot is in use)."""
    slots, free, in_use, taken = [], [], set(), []
    for kind, arg in events:
        if kind == "free":
            if arg in in_use:
                in_use.discard(arg)
                free.append(arg)
            continue
        for j in free:
            if slots[j] == arg:
                free.remove(j)
                break
        else:
            slots.append(arg)
            j = len(slots) - 1
        in_use.add(j)
        taken.append(j)
    return taken, slots


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(
    st.tuples(st.just("take"), st.sampled_from([np.dtype(np.float64), np.dtype(np.float32),
                                                np.dtype(np.complex128)])),
    st.tuples(st.just("free"), st.integers(0, 12))), max_size=60))
def test_block_buffers_are_assigned_by_the_documented_rule(events):
    expected, expected_slots = _list_rule(events)
    slots, free, in_use, taken = [], blocks._FreeSlots(), set(), []
    for kind, arg in events:
        if kind == "free":
            if arg in in_use:
                in_use.discard(arg)
                free.append(arg, slots)
            continue
        j = free.take(slots, arg)
        in_use.add(j)
        taken.append(j)
    assert taken == expected and slots == expected_slots
