"""Every fast path of the engines: a test that it is taken, and one that the slow path it
replaces gives the same answer.

Fast paths are observed by counting calls (a primitive's ``impl``/``jvp``/``vjp``, a trace's
``process``, the reverse engine's helpers), by looking at what the reverse tape holds, and
with ``tracemalloc`` for memory. Slow paths are forced by monkeypatching (no tape trimming
with a huge ``BIG_ARRAY_BYTES``, trimming of every array with 0, a purely functional
cotangent accumulation) or reached through the other engine. Values are checked against
closed forms; ``rtol=1e-12`` wherever the two paths do the same arithmetic. No timings.
"""

import math
import tracemalloc
from types import SimpleNamespace

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from records import case_id, cases

import diffkit as dk
import diffkit.numpy as dnp
from diffkit import api
from diffkit.core import trace as trace_module
from diffkit.core.trace import new_trace
from diffkit.core.zeros import Placeholder, Zero
from diffkit.interpreters import reverse
from diffkit.interpreters.batching import BatchTrace, BatchTracer
from diffkit.interpreters.forward import JVPTrace, JVPTracer
from diffkit.interpreters.reverse import ReverseTrace, ReverseTracer
from diffkit.ops import elementwise as ew
from diffkit.ops import shape as shape_ops

HUGE = 1 << 62                               # BIG_ARRAY_BYTES that switches trimming off
BIG_N = 2 * reverse.BIG_ARRAY_BYTES // 8     # float64 elements: twice the trimming threshold
RNG = np.random.default_rng(20261121)


def big(low=-2.0, high=2.0):
    return RNG.uniform(low, high, BIG_N)


def small(low=-2.0, high=2.0, n=7):
    return RNG.uniform(low, high, n)


# --- spies -----------------------------------------------------------------------------


def spy(monkeypatch, owner, attr, note=None):
    """Replace ``owner.attr`` by a wrapper that records ``note(*args)`` (or ``None``) per
    call and then calls the original; returns the list of records."""
    calls = []
    original = getattr(owner, attr)

    def wrapper(*args, **kwargs):
        calls.append(note(*args, **kwargs) if note else None)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, attr, wrapper)
    return calls


def processed(monkeypatch, trace_type):
    """Names of the primitives a trace type interprets, in order."""
    return spy(monkeypatch, trace_type, "process", lambda self, prim, args, params: prim.name)


def capture_sweeps(monkeypatch):
    """Every backward sweep: its tape (the list itself), a copy of its entries taken before
    the sweep, and whether it consumes the tape."""
    sweeps = []
    original = reverse.backward_pass

    def backward_pass(tape, seeds, input_slots, consume=False):
        sweeps.append(SimpleNamespace(tape=tape, entries=list(tape), consume=consume))
        return original(tape, seeds, input_slots, consume=consume)

    monkeypatch.setattr(reverse, "backward_pass", backward_pass)
    return sweeps


def summary(entries):
    """``(name, primal types, output type)`` per tape entry."""
    return [(prim.name, [type(p) for p in primals], type(out))
            for prim, _, primals, out, _, _ in entries]


def spy_in_place(monkeypatch):
    """Count cotangent accumulations done in place (the slot keeps the same array)."""
    events = []
    original = reverse._add_to

    def add_to(cotangents, owned, slot, ct):
        old = cotangents.get(slot)
        original(cotangents, owned, slot, ct)
        if old is not None and ct is not None and type(ct) is not Zero:
            events.append("in place" if cotangents[slot] is old else "new")

    monkeypatch.setattr(reverse, "_add_to", add_to)
    return events


def functional_add_to(cotangents, owned, slot, ct):
    """The slow path of ``reverse._add_to``: every sum is a new array, nothing in place."""
    if ct is None or type(ct) is Zero:
        return
    old = cotangents.get(slot)
    cotangents[slot] = ct if old is None else old + ct


def peak_bytes(fun, *args):
    """Peak traced allocation while running ``fun(*args)``, and its result."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        result = fun(*args)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak, result


# --- bind: nothing traced, nothing looked up ---------------------------------------------


def test_bind_on_plain_values_never_looks_for_a_trace(monkeypatch):
    def no_lookup(args):
        raise AssertionError("find_top_trace called with no traced argument")

    monkeypatch.setattr(trace_module, "find_top_trace", no_lookup)
    impls = spy(monkeypatch, ew.sin_p, "impl")
    x, y = small(), small(0.5, 2.0)
    assert_array_equal(dnp.sin(x), np.sin(x))
    assert_array_equal(x * dnp.exp(y) / y, x * np.exp(y) / y)
    assert_array_equal(dnp.sum(dnp.maximum(x, y) ** 2), np.sum(np.maximum(x, y) ** 2))
    assert len(impls) == 1  # straight to the implementation
    assert type(dnp.tanh(x)) is np.ndarray


def test_constants_inside_a_transformation_create_no_tracer(monkeypatch):
    c = small()
    names = processed(monkeypatch, ReverseTrace)
    created = spy(monkeypatch, ReverseTracer, "__init__")
    lookups = spy(monkeypatch, trace_module, "find_top_trace")

    def f(x):
        return dnp.sum(x * (dnp.sin(c) ** 2 + dnp.exp(c)))  # sin, power, exp, add: constants

    g = dk.grad(f)(small())
    assert names == ["multiply", "sum"]
    assert len(created) == 1 + 2  # the input, then one output per traced operation
    assert len(lookups) == 2
    assert_allclose(g, np.sin(c) ** 2 + np.exp(c), rtol=1e-12)


def test_bind_through_each_engine_gives_the_plain_answer():
    """The slow path (an engine unwrapping and re-binding) computes the same primal."""
    x, v = small(0.1, 2.0), small()

    def f(x):
        return dnp.tanh(x) * x ** 3 / (1.0 + x) + dnp.log(x)

    plain = f(x)
    assert_array_equal(dk.jvp(f, (x,), (v,))[0], plain)
    assert_array_equal(dk.vjp(f, x)[0], plain)
    assert_array_equal(dk.vmap(f)(np.stack([x, 2 * x]))[0], plain)


# --- forward mode: zero tangents -----------------------------------------------------------


def test_all_zero_tangents_skip_the_jvp_rule(monkeypatch):
    x = small()
    rules = spy(monkeypatch, ew.sin_p, "jvp")
    with new_trace(JVPTrace) as trace:
        out = ew.sin(JVPTracer(trace, x, Zero(x.shape, x.dtype)))
        assert rules == []
        # still a value of the trace (as in JAX), its tangent the symbolic zero: no array
        assert type(out) is JVPTracer and type(out.tangent) is Zero
        assert_array_equal(out.primal, np.sin(x))
        # slow path: the same zero tangent as an array runs the rule, same answer
        slow = ew.sin(JVPTracer(trace, x, np.zeros_like(x)))
        assert len(rules) == 1
        assert type(slow) is JVPTracer
        assert_array_equal(slow.primal, np.sin(x))
        assert_array_equal(slow.tangent, np.zeros_like(x))
        # a primitive without derivative never reaches a rule either: a traced bool
        above = ew.greater(JVPTracer(trace, x, np.ones_like(x)), 0.0)
        assert type(above) is JVPTracer and type(above.tangent) is Zero
        assert type(above.primal) is np.ndarray and above.primal.dtype == bool
        assert_array_equal(above.primal, x > 0.0)


def test_zero_tangent_outputs_unwrap_to_plain_values(monkeypatch):
    names = processed(monkeypatch, JVPTrace)
    created = spy(monkeypatch, JVPTracer, "__init__")
    x, v = small(), small()

    def f(x):
        # the integer cast has a zero tangent: its output is plain, so the sin and the
        # multiply after it never see the forward trace
        return x * 2.0 + dnp.sin(dnp.astype(x, np.int64) * 1.0)

    out, tangent = dk.jvp(f, (x,), (v,))
    assert names == ["multiply", "astype", "add"]
    assert len(created) == 1 + 2  # the input, multiply, add
    assert_array_equal(out, x * 2.0 + np.sin(x.astype(np.int64) * 1.0))
    assert_array_equal(tangent, 2.0 * v)
    # the reverse engine agrees
    assert_allclose(dk.vjp(f, x)[1](v)[0], 2.0 * v, rtol=1e-12)


# --- reverse mode: what the tape keeps ---------------------------------------------------


def bump(x):
    return dnp.sum(dnp.sin(x) * dnp.exp(-x ** 2))


def d_bump(x):
    return (np.cos(x) - 2 * x * np.sin(x)) * np.exp(-x ** 2)


def test_big_arrays_leave_placeholders_on_the_tape(monkeypatch):
    sweeps = capture_sweeps(monkeypatch)
    x = big()
    dk.vjp(bump, x)[1](1.0)
    nd, ph = np.ndarray, Placeholder
    assert summary(sweeps[0].entries)[:5] == [
        ("sin", [nd], ph),             # reads x, not its output
        ("scalar_power", [nd], ph),    # reads x, not x ** 2
        ("negative", [ph], ph),        # linear: reads neither
        ("exp", [ph], nd),             # reads its output only
        ("multiply", [nd, nd], ph),    # reads both factors, not the product
    ]
    kept = sweeps[0].entries[0][2][0]
    # vjp's pullback goes to the caller, who may write into x: one copy, read by sin and power
    assert kept is not x and kept is sweeps[0].entries[1][2][0]
    assert_array_equal(kept, x)


def test_small_arrays_keep_real_arrays_on_the_tape(monkeypatch):
    sweeps = capture_sweeps(monkeypatch)
    dk.vjp(bump, small())[1](1.0)
    for name, primal_types, out_type in summary(sweeps[0].entries):
        assert Placeholder not in primal_types + [out_type], name


def test_a_reduction_of_a_big_array_drops_its_input(monkeypatch):
    sweeps = capture_sweeps(monkeypatch)
    dk.vjp(bump, big())[1](1.0)
    name, primal_types, _ = summary(sweeps[0].entries)[-1]
    assert name == "sum"
    assert primal_types == [Placeholder]  # sum's VJP needs only the input's shape


def test_trimmed_and_untrimmed_tapes_give_the_same_gradient(monkeypatch):
    x = big()
    trimmed_grad = dk.grad(bump)(x)
    _, pullback = dk.vjp(bump, x)
    trimmed_vjp = pullback(1.0)[0]

    monkeypatch.setattr(reverse, "BIG_ARRAY_BYTES", HUGE)
    sweeps = capture_sweeps(monkeypatch)
    untrimmed_grad = dk.grad(bump)(x)
    untrimmed_vjp = dk.vjp(bump, x)[1](1.0)[0]
    assert all(Placeholder not in types + [out] for _, types, out in summary(sweeps[0].entries))

    for g in (trimmed_grad, trimmed_vjp, untrimmed_vjp):
        assert_allclose(g, untrimmed_grad, rtol=1e-12, atol=0)
    assert_allclose(trimmed_grad, d_bump(x), rtol=1e-12, atol=1e-15)


def _float_args(record, shapes, rng):
    args = tuple(record.domain(i).sample(s, rng) for i, s in enumerate(shapes))
    floats = [i for i, a in enumerate(args) if np.asarray(a).dtype.kind == "f"]

    def of_floats(*xs):
        full = list(args)
        for i, x in zip(floats, xs):
            full[i] = x
        return record.fun(*full)

    return of_floats, tuple(args[i] for i in floats)


FLOAT_CASES = [(r, s) for r, s in cases() if not r.zero_derivative]


@pytest.mark.parametrize("record,shapes", FLOAT_CASES,
                         ids=[case_id(r, s) for r, s in FLOAT_CASES])
def test_trimming_every_array_changes_no_gradient(record, shapes, monkeypatch):
    """With BIG_ARRAY_BYTES = 0 every small array is trimmed and every one-shot sweep frees
    as it goes, so a vjp_ignores/vjp_reads entry naming a value its rule does read fails
    here; the answer must equal the untrimmed one, in retained and consuming sweeps."""
    rng = np.random.default_rng(0)
    fun, xs = _float_args(record, shapes, rng)
    if not xs:
        pytest.skip("no float argument: nothing to trim in a backward sweep (the record's "
                    "values are checked by tests/test_primitives.py)")
    out, pullback = dk.vjp(fun, *xs)
    ct = dk.tree_util.tree_map(lambda o: rng.standard_normal(np.shape(o)), out)
    expected = pullback(ct)

    monkeypatch.setattr(reverse, "BIG_ARRAY_BYTES", 0)
    _, retained = dk.vjp(fun, *xs)
    _, consuming = api._vjp(fun, xs, False, retain=False)
    for got in (retained(ct), retained(ct), consuming(ct)):
        for g, e in zip(got, expected):
            assert_allclose(g, e, rtol=1e-12, atol=1e-14)


# --- reverse mode: one-shot sweeps --------------------------------------------------------


def test_grad_consumes_its_tape_and_vjp_keeps_it(monkeypatch):
    sweeps = capture_sweeps(monkeypatch)
    x = small()
    g = dk.grad(bump)(x)
    assert sweeps[-1].consume and sweeps[-1].entries and sweeps[-1].tape == []

    _, pullback = dk.vjp(bump, x)
    first = pullback(1.0)[0]
    kept = list(sweeps[-1].tape)
    assert not sweeps[-1].consume and len(kept) == len(sweeps[-1].entries) > 0
    first_copy = first.copy()
    second = pullback(1.0)[0]
    assert sweeps[-1].tape == kept  # untouched by two sweeps
    assert_array_equal(first, first_copy)  # the second sweep wrote nothing into the first
    for r in (first, second):
        assert_allclose(r, g, rtol=1e-12, atol=0)
    assert_allclose(g, d_bump(x), rtol=1e-12, atol=1e-15)


def test_consuming_sweep_frees_each_factor_once_no_rule_reads_it(monkeypatch):
    seen = []
    rule_x, rule_y = ew.multiply_p.vjp
    monkeypatch.setattr(ew.multiply_p, "vjp", (
        lambda ct, out, x, y: seen.append(("x", type(x), type(y))) or rule_x(ct, out, x, y),
        lambda ct, out, x, y: seen.append(("y", type(x), type(y))) or rule_y(ct, out, x, y)))
    freeing = spy(monkeypatch, reverse, "_pull_freeing")
    x, y = big(), big()

    def f(x, y):
        return dnp.sum(x * y)

    gx, gy = dk.grad(f, argnums=(0, 1))(x, y)
    assert len(freeing) == 1
    # y's cotangent first, reading x; then x is dropped before x's cotangent is made
    assert seen == [("y", np.ndarray, np.ndarray), ("x", Placeholder, np.ndarray)]
    assert_array_equal(gx, y)
    assert_array_equal(gy, x)

    seen.clear()
    rx, ry = dk.vjp(f, x, y)[1](1.0)  # retained: nothing freed
    assert len(freeing) == 1
    assert seen == [("x", np.ndarray, np.ndarray), ("y", np.ndarray, np.ndarray)]
    assert_array_equal(rx, gx)
    assert_array_equal(ry, gy)

    seen.clear()
    dk.grad(f, argnums=(0, 1))(small(), small())  # small: the plain path
    assert len(freeing) == 1
    assert [s[0] for s in seen] == ["x", "y"]


@pytest.mark.parametrize("size", ["small", "big"])
def test_consuming_and_retained_sweeps_agree(size, monkeypatch):
    make = big if size == "big" else small
    x, y = make(), make(0.5, 2.0)

    def f(x, y):
        # x * x: one entry, two cotangents to one slot; x / y reads its output
        return dnp.sum(x * x / y + dnp.tanh(x) * y - dnp.cos(x * y))

    gx, gy = dk.grad(f, argnums=(0, 1))(x, y)
    rx, ry = dk.vjp(f, x, y)[1](1.0)
    assert_allclose(rx, gx, rtol=1e-12, atol=0)
    assert_allclose(ry, gy, rtol=1e-12, atol=0)
    assert_allclose(gx, 2 * x / y + (1 - np.tanh(x) ** 2) * y + np.sin(x * y) * y,
                    rtol=1e-12, atol=1e-14)
    assert_allclose(gy, -x * x / y ** 2 + np.tanh(x) + np.sin(x * y) * x,
                    rtol=1e-12, atol=1e-14)


# --- reverse mode: cotangents accumulated in place ---------------------------------------


def both_paths(monkeypatch, compute):
    """``compute()`` with in-place accumulation (counting in-place adds), then with the
    functional slow path; returns both results and the number of in-place adds."""
    with monkeypatch.context() as m:
        events = spy_in_place(m)
        fast = compute()
    with monkeypatch.context() as m:
        m.setattr(reverse, "_add_to", functional_add_to)
        slow = compute()
    return fast, slow, events.count("in place")


@pytest.mark.parametrize("size", ["small", "big"])
def test_three_contributions_accumulate_in_place(size, monkeypatch):
    x = big() if size == "big" else small()
    fast, slow, in_place = both_paths(
        monkeypatch, lambda: dk.grad(lambda x: dnp.sum(x * 2.0 + x * 3.0 + x * 5.0))(x))
    assert in_place == 1  # the third contribution to x lands in the sum of the first two
    assert_array_equal(fast, slow)
    assert_array_equal(fast, np.full_like(x, 10.0))


@pytest.mark.parametrize("size", ["small", "big"])
def test_one_cotangent_passed_to_two_slots_is_never_written_into(size, monkeypatch):
    """``x + x`` hands the same array to both of its slots, and ``y`` (used three times)
    gets the same array twice from the two adds; only sums made by the sweep itself may be
    added into."""
    make = big if size == "big" else small
    x, w = make(), make()

    def z(x):
        y = x + x
        return y * 2.0 + y + y

    fast, slow, in_place = both_paths(monkeypatch, lambda: dk.grad(lambda x: dnp.sum(z(x) * w))(x))
    assert in_place >= 1
    assert_array_equal(fast, slow)
    assert_allclose(fast, 8.0 * w, rtol=1e-12)

    # vjp: the seed is the caller's array; it passes through both adds untouched
    ct = make()
    ct_copy = ct.copy()
    _, pullback = dk.vjp(z, x)
    first = pullback(ct)[0]
    first_copy = first.copy()
    second = pullback(ct)[0]
    assert_array_equal(ct, ct_copy)
    assert_array_equal(first, first_copy)
    assert_array_equal(second, first)
    assert_allclose(first, 8.0 * ct, rtol=1e-12)


@pytest.mark.parametrize("size", ["small", "big"])
def test_shared_cotangent_of_two_arguments_then_more_contributions(size, monkeypatch):
    make = big if size == "big" else small
    x, w, c = make(), make(), make()

    def f(x, w):
        early = dnp.sum(x * 5.0) + dnp.sum(w * 3.0) + dnp.sum(x * x)
        return early + dnp.sum((x + w) * c)  # swept first: x and w get the same array

    fast, slow, in_place = both_paths(monkeypatch, lambda: dk.grad(f, argnums=(0, 1))(x, w))
    assert in_place >= 1
    for a, b in zip(fast, slow):
        assert_array_equal(a, b)
    assert_allclose(fast[0], c + 2 * x + 5.0, rtol=1e-12)
    assert_allclose(fast[1], c + 3.0, rtol=1e-12)


def test_mixed_precision_contributions_accumulate_at_the_wider_precision(monkeypatch):
    """x is float32; its slot gets float32 cotangents (through the casts) and float64 ones
    (from x * w): a float32 sum never takes a float64 term in place."""
    x = small().astype(np.float32)
    w = small()
    cast = dnp.astype

    def f(x, w):
        a = dnp.sum(cast(x * 7.0, np.float64))  # float32 term, swept last
        b = dnp.sum(x * w)                      # float64 term
        c = dnp.sum(cast(x * x, np.float64))    # two float32 terms
        d = dnp.sum(cast(x * 3.0, np.float64))  # float32 term, swept first
        return a + b + c + d

    fast, slow, in_place = both_paths(monkeypatch, lambda: dk.grad(f, argnums=(0, 1))(x, w))
    assert in_place >= 2
    gx, gw = fast
    assert gx.dtype == np.float32 and gw.dtype == np.float64
    assert_array_equal(gx, slow[0])
    assert_array_equal(gw, slow[1])
    x64 = x.astype(np.float64)
    assert_allclose(gx, (7.0 + w + 2 * x64 + 3.0).astype(np.float32), rtol=2e-7)
    assert_array_equal(gw, x64)


def test_in_place_accumulation_after_a_traced_contribution():
    """In a higher-order sweep some contributions are plain arrays (x * 4.0) and some are
    tracers (x * x, whose rule reads the traced x): a plain one after a traced one."""
    x, v = small(n=3), small(n=3)

    def f(x):
        return dnp.sum(x * 4.0 + x * x + x * 2.0 + x * 3.0)

    assert_allclose(dk.grad(f)(x), 2 * x + 9.0, rtol=1e-12)
    assert_allclose(dk.hvp(f, (x,), (v,))[0], 2 * v, rtol=1e-12)
    assert_allclose(dk.hessian(f)(x), 2 * np.eye(3), rtol=1e-12)


# --- constant scalar exponents ------------------------------------------------------------


@pytest.mark.parametrize("exponent", [2, 3, 2.5, np.float64(3.0), np.int64(2), -1])
def test_constant_scalar_exponent_binds_scalar_power(exponent, monkeypatch):
    names = processed(monkeypatch, ReverseTrace)
    dk.grad(lambda x: dnp.sum(x ** exponent))(small(0.5, 2.0))
    assert names == ["scalar_power", "sum"]


@pytest.mark.parametrize("exponent", [np.full(7, 2.0), np.array(2.0), True])
def test_array_or_boolean_exponent_binds_power(exponent, monkeypatch):
    names = processed(monkeypatch, ReverseTrace)
    dk.grad(lambda x: dnp.sum(x ** exponent))(small(0.5, 2.0))
    assert names == ["power", "sum"]
    names.clear()
    dk.grad(lambda y: dnp.sum(small(0.5, 2.0) ** y))(np.full(7, 2.0))  # traced exponent
    assert names == ["power", "sum"]


@pytest.mark.parametrize("p", [0, 1, 2, 3, -1, 0.5, 2.5])
def test_scalar_power_matches_power_and_closed_forms(p):
    x = np.concatenate([small(0.25, 2.0, n=5), [0.0]]) if p in (0, 1, 2, 3) \
        else small(0.25, 2.0, n=6)
    p_array = np.full_like(x, float(p))
    fast = dk.grad(lambda x: dnp.sum(x ** p))
    slow = dk.grad(lambda x: dnp.sum(x ** p_array))
    assert_allclose(dnp.power(x, p), dnp.power(x, p_array), rtol=1e-12)
    d1 = np.zeros_like(x) if p == 0 else p * x ** (p - 1)
    assert_allclose(fast(x), d1, rtol=1e-12)
    assert_allclose(fast(x), slow(x), rtol=1e-12)
    assert_allclose(dk.jvp(lambda x: x ** p, (x,), (np.ones_like(x),))[1], d1, rtol=1e-12)
    d2 = np.zeros_like(x) if p in (0, 1) else p * (p - 1) * x ** (p - 2)
    if p == 2:
        d2 = np.full_like(x, 2.0)
    assert_allclose(np.diag(dk.hessian(lambda x: dnp.sum(x ** p))(x)), d2, rtol=1e-12)
    assert_allclose(dk.hessian(lambda x: dnp.sum(x ** p))(x),
                    dk.hessian(lambda x: dnp.sum(x ** p_array))(x), rtol=1e-12)
    assert_allclose(dk.vmap(lambda x: x ** p)(np.stack([x, x])), np.stack([x ** p] * 2),
                    rtol=1e-12)


def test_scalar_power_keeps_float32():
    x = small(0.5, 2.0).astype(np.float32)
    assert dnp.power(x, 2).dtype == np.float32 == np.power(x, 2).dtype
    g = dk.grad(lambda x: dnp.sum(x ** 2.5))(x)
    assert g.dtype == np.float32
    assert_allclose(g, 2.5 * x.astype(np.float64) ** 1.5, rtol=1e-6)


def test_numpy_scalar_exponent_keeps_numpy_promotion():
    x = small(0.5, 2.0).astype(np.float32)
    for exponent in (np.float64(2.5), np.int64(2)):
        assert dnp.power(x, exponent).dtype == np.power(x, exponent).dtype


# --- batching ------------------------------------------------------------------------------


def test_vmap_over_axis_zero_moves_no_axis(monkeypatch):
    moves = spy(monkeypatch, shape_ops, "moveaxis")
    transposes = spy(monkeypatch, shape_ops.transpose_p, "impl")
    xs = RNG.standard_normal((5, 3))

    def f(x):
        return dnp.sin(x) * x

    expected = np.stack([f(x) for x in xs])
    assert_array_equal(dk.vmap(f)(xs), expected)
    assert moves == [] and transposes == []
    # the slow path: a batch on axis 1 in and out moves it twice, same answer
    assert_array_equal(dk.vmap(f, in_axes=1, out_axes=1)(xs.T), expected.T)
    assert len(moves) == len(transposes) == 2


def test_batch_trace_wraps_axis_zero_without_moving(monkeypatch):
    moves = spy(monkeypatch, shape_ops, "moveaxis")
    value = RNG.standard_normal((4, 3))
    with new_trace(BatchTrace, 4) as trace:
        assert trace.wrap(value, 0).value is value
        assert trace.wrap(value, None) is value
        assert moves == []
        moved = trace.wrap(value.T, 1)
        assert type(moved) is BatchTracer and len(moves) == 1
        assert_array_equal(moved.value, value)


@pytest.mark.parametrize("shapes,axes,pads", [
    (((5, 3), (5, 3)), (0, 0), 0),          # same rank: no padding
    (((5, 3), (3,)), (0, None), 0),         # unmapped operand broadcasts from the right
    (((5, 3), (5, 2, 3)), (0, 0), 1),       # lower-rank batched operand: one reshape
    (((5,), (5, 2, 3)), (0, 0), 1),
])
def test_broadcasting_batch_pads_only_lower_ranks(shapes, axes, pads, monkeypatch):
    reshapes = spy(monkeypatch, shape_ops.reshape_p, "impl")
    a, b = (RNG.standard_normal(s) for s in shapes)
    got = dk.vmap(dnp.multiply, in_axes=axes)(a, b)
    assert len(reshapes) == pads
    expected = np.stack([a[i] * (b if axes[1] is None else b[i]) for i in range(5)])
    assert_array_equal(got, expected)


# --- jacrev chunk_size ---------------------------------------------------------------------


def test_jacrev_chunks_run_one_sweep_per_chunk(monkeypatch):
    A = RNG.standard_normal((7, 4))
    x = small(n=4)

    def f(x):
        return dnp.tanh(A @ x) * x[0]

    sweeps = capture_sweeps(monkeypatch)
    full = dk.jacrev(f)(x)
    assert [s.consume for s in sweeps] == [True]  # one batched, one-shot sweep
    sweeps.clear()
    chunked = dk.jacrev(f, chunk_size=3)(x)
    assert [s.consume for s in sweeps] == [False] * math.ceil(7 / 3)  # one retained tape
    assert all(s.tape is sweeps[0].tape for s in sweeps)
    t = np.tanh(A @ x)
    closed = (1 - t ** 2)[:, None] * A * x[0]
    closed[:, 0] += t
    for jac in (full, chunked, dk.jacfwd(f)(x)):
        assert_allclose(jac, closed, rtol=1e-12)


N_IN, M_OUT, CHUNK = 200, 2000, 100


@pytest.fixture(scope="module")
def jacrev_peaks():
    A = RNG.standard_normal((M_OUT, N_IN)) / np.sqrt(N_IN)
    x = RNG.standard_normal(N_IN)

    def f(x):
        return dnp.tanh(A @ x) * 2.0

    small_A = A[:5, :3]
    for chunk in (None, 2):  # warm up both code paths once, cheaply
        dk.jacrev(lambda x: dnp.tanh(small_A @ x), chunk_size=chunk)(x[:3])
    full_peak, full = peak_bytes(dk.jacrev(f), x)
    chunk_peak, chunked = peak_bytes(dk.jacrev(f, chunk_size=CHUNK), x)
    closed = 2.0 * (1 - np.tanh(A @ x) ** 2)[:, None] * A
    return SimpleNamespace(full_peak=full_peak, full=full, chunk_peak=chunk_peak,
                           chunked=chunked, closed=closed)


def test_jacrev_chunk_size_lowers_peak_memory(jacrev_peaks):
    r = jacrev_peaks
    assert_allclose(r.full, r.closed, rtol=1e-12)
    assert_allclose(r.chunked, r.full, rtol=1e-12, atol=0)
    # today about 64 MB against 96 MB; the full batch holds several (m, m) float64 arrays
    assert r.chunk_peak < 0.8 * r.full_peak, (r.chunk_peak, r.full_peak)


def test_jacrev_chunk_memory_does_not_grow_with_m_squared(jacrev_peaks):
    # a chunk of 100 rows works on (100, m) arrays: a few MB, not one (m, m) identity
    assert jacrev_peaks.chunk_peak < M_OUT * M_OUT * 8 / 2


# --- memory of the large elementwise gradient ------------------------------------------------


def test_large_elementwise_gradient_peak_memory():
    x = np.linspace(-3.0, 3.0, 10 ** 6)
    g = dk.grad(bump)
    g(x)  # warm up
    peak, result = peak_bytes(g, x)
    assert_allclose(result, d_bump(x), rtol=1e-12, atol=1e-15)
    # Regression bound. Today the peak is about 4.0 * x.nbytes (exp's rule multiplies its
    # cotangent by its output while sin's cotangent waits); the benchmark target of issue 3
    # is < 4x, so this bound is 4.5x to catch regressions without failing on noise.
    assert peak < 4.5 * x.nbytes, peak / x.nbytes


# --- per-call overhead: pytrees, vmap's axes, grad's seed ------------------------------------


def test_a_single_leaf_flattens_without_the_recursive_walk(monkeypatch):
    from diffkit import tree_util
    walks = spy(monkeypatch, tree_util, "_flatten")
    x = small()
    leaves, treedef = tree_util.tree_flatten(x)
    assert walks == [] and leaves[0] is x and treedef.unflatten([x]) is x
    # the slow path (an is_leaf that never stops the walk) gives the same structure
    slow_leaves, slow_def = tree_util.tree_flatten(x, is_leaf=lambda _: False)
    assert len(walks) == 1
    assert slow_def == treedef and slow_leaves[0] is x and tree_util.treedef_is_leaf(slow_def)


def test_shape_and_dtype_of_plain_arrays_match_the_general_path():
    from diffkit.core.zeros import dtype_of, shape_of
    for x in (small(), np.zeros((2, 0, 3), np.float32), np.array(1 + 2j)):
        assert type(shape_of(x)) is tuple and shape_of(x) == x.shape
        assert dtype_of(x) is x.dtype
        view = x.view(np.ma.MaskedArray)  # a subclass takes the general path
        assert shape_of(view) == x.shape and dtype_of(view) == x.dtype
    assert shape_of(2.0) == () and dtype_of(2.0) == np.float64


def test_vmap_works_out_in_and_out_axes_once_per_structure(monkeypatch):
    from diffkit import tree_util
    prefixes = spy(monkeypatch, tree_util, "broadcast_prefix")
    w, X, y = small(n=3), RNG.standard_normal((4, 3)), small(n=4)

    def loss(w, x, y):
        return (dnp.sum(x * w) - y, {"w": w * y})

    f = dk.vmap(loss, in_axes=(None, 0, 0), out_axes=(0, {"w": 1}))
    first = f(w, X, y)
    assert len(prefixes) == 2  # in_axes and out_axes, each walked once
    second = f(w, X + 1.0, y)
    assert len(prefixes) == 2  # same structures: remembered
    for i in range(4):
        value, aux = loss(w, X[i] + 1.0, y[i])
        assert_allclose(second[0][i], value, rtol=1e-12)
        assert_allclose(second[1]["w"][:, i], aux["w"], rtol=1e-12)
    assert_allclose(first[0], X @ w - y, rtol=1e-12)
    # a new argument structure is worked out afresh (and a keyword maps over axis 0)
    g = dk.vmap(lambda w, x, y, scale: w * x * y * scale, in_axes=(None, 0, 0))
    assert_allclose(g(w, X, y, scale=y), (w * X) * (y * y)[:, None], rtol=1e-12)
    assert_allclose(g(w, X, y[:, None], scale=y), (w * X) * (y * y)[:, None], rtol=1e-12)


def test_vmap_keeps_keyword_and_positional_calls_of_one_tree_apart():
    x, y = RNG.standard_normal((3, 2)), RNG.standard_normal((3, 2))
    def g(a, k):
        return (a[0] if isinstance(a, tuple) else a) * (k["k"] if isinstance(k, dict) else k)

    f = dk.vmap(g, in_axes=(None,))
    # the tree is ((x,), {'k': y}): x unmapped, the keyword mapped over axis 0
    assert_allclose(f(x, k=y), x[None] * y[:, None, :], rtol=1e-12)
    with pytest.raises(dk.errors.BatchingError, match="in_axes"):
        f((x,), {"k": y})  # the same tree, positional: in_axes=(None,) has one entry too few


def test_vmap_in_axes_mismatch_is_reported_on_every_call():
    f = dk.vmap(lambda a, b: (a * b[0], a * b[1]), in_axes=(0, (None, 0)))
    x = RNG.standard_normal((3, 2))
    for _ in range(2):  # nothing remembered from a failed call
        with pytest.raises(dk.errors.BatchingError, match="in_axes"):
            f(x, x)
    c = RNG.standard_normal(2)
    a, b = f(x, (c, 2.0 * x))  # the matching structure: b[0] unmapped, b[1] mapped
    assert_allclose(a, x * c, rtol=1e-12)
    assert_allclose(b, 2.0 * x * x, rtol=1e-12)


def test_grad_of_a_scalar_seeds_without_checking_its_own_cotangent(monkeypatch):
    checks = spy(monkeypatch, api, "_matching_leaves")
    x = small()

    def f(x):
        return dnp.sum(dnp.sin(x) * x)

    g = dk.grad(f)(x)
    assert checks == []
    # the checked path (vjp with the cotangent 1) gives the same gradient
    (slow,) = dk.vjp(f, x)[1](np.ones(()))
    assert len(checks) == 1
    assert_allclose(g, slow, rtol=1e-12)
    assert_allclose(g, np.cos(x) * x + np.sin(x), rtol=1e-12)
    value, g32 = dk.value_and_grad(f)(x.astype(np.float32))
    assert value.dtype == g32.dtype == np.float32
    with pytest.raises(dk.errors.NonScalarOutputError):
        dk.grad(lambda x: x * 2.0)(x)


def test_a_trace_is_finished_when_its_block_raises():
    with pytest.raises(ValueError, match="boom"):
        with new_trace(ReverseTrace) as trace:
            assert trace_module.current_level() == trace.level
            raise ValueError("boom")
    assert not trace.active and trace_module.current_level() == trace.level - 1


# --- zero_safe: the mask is skipped when no derivative product is NaN ----------------


def _singular(x):
    return dnp.sum(dnp.log1p(x) + dnp.sqrt(x) / x)


def _d_singular(x):
    return 1 / (1 + x) - 0.5 * x ** -1.5


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_nan_free_products_skip_the_zero_safe_mask(dtype, monkeypatch):
    from diffkit.ops import families
    masks = spy(monkeypatch, ew, "zero_factor_nan")
    x = small(0.5, 2.0).astype(dtype)
    fast = dk.grad(_singular)(x)
    assert masks == []  # no product is NaN: no mask is built
    monkeypatch.setattr(families, "holds_nan", lambda result: True)
    slow = dk.grad(_singular)(x)
    assert len(masks) == 4  # log1p, sqrt and both partials of the divide mask theirs
    assert fast.dtype == slow.dtype == dtype and type(fast) is type(slow) is np.ndarray
    assert_array_equal(fast, slow)
    if dtype == np.float64:
        assert_allclose(fast, _d_singular(x), rtol=1e-12)
    else:  # a difference of two float32 terms: cancellation costs a few ulps
        assert_allclose(fast, _d_singular(x.astype(np.float64)), rtol=1e-5, atol=1e-6)


def test_zero_safe_fast_path_agrees_with_the_mask_on_zero_dimensional_results(monkeypatch):
    from diffkit.ops import families
    x = np.array(0.7)
    fast = dk.grad(dnp.log)(x)
    monkeypatch.setattr(families, "holds_nan", lambda result: True)
    slow = dk.grad(dnp.log)(x)
    # 0-d results may be NumPy scalars (api.md); both paths give one value of shape ()
    assert np.shape(fast) == np.shape(slow) == () and np.asarray(fast).dtype == np.float64
    assert_allclose(fast, 1 / 0.7, rtol=1e-12)
    assert fast == slow


def test_a_zero_cotangent_entry_still_masks_the_derivative(monkeypatch):
    masks = spy(monkeypatch, ew, "zero_factor_nan")
    x = np.array([0.0, 1.0, 4.0])
    _, pullback = dk.vjp(dnp.sqrt, x)
    with np.errstate(divide="ignore", invalid="ignore"):  # 1 / 0 and 0 / 0 at x = 0
        (ct,) = pullback(np.array([0.0, 1.0, 1.0]))  # 0 times an infinite derivative at 0
        assert len(masks) == 1
        assert_array_equal(ct, [0.0, 0.5, 0.25])
        (ct,) = pullback(np.ones(3))  # no zero: no mask, and the infinite derivative shows
    assert len(masks) == 1
    assert ct[0] == np.inf
    assert_array_equal(ct[1:], [0.5, 0.25])


def test_per_example_gradients_agree_with_and_without_the_mask(monkeypatch):
    from diffkit.ops import families
    w, X, y = small(n=4), RNG.standard_normal((6, 4)), (RNG.uniform(size=6) > 0.5) * 1.0

    def loss(w, x, y):
        z = x @ w
        return dnp.log1p(dnp.exp(z)) - y * z

    per_example = dk.vmap(dk.grad(loss), in_axes=(None, 0, 0))
    fast = per_example(w, X, y)
    monkeypatch.setattr(families, "holds_nan", lambda result: True)
    slow = per_example(w, X, y)
    assert_array_equal(fast, slow)
    z = X @ w
    assert_allclose(fast, (1 / (1 + np.exp(-z)) - y)[:, None] * X, rtol=1e-12)


def test_a_small_finite_nonzero_partial_skips_the_product_check(monkeypatch):
    """``families.times``: a batch of tangents times a small partial with no zero and no
    infinity is returned unchecked (the check reads the partial, not the product); the
    result equals the checked path, and a zero or infinite partial entry still goes
    through the rule."""
    from diffkit.ops import families
    checks = []
    holds_nan = families.holds_nan
    monkeypatch.setattr(families, "holds_nan", lambda r: checks.append(1) or holds_nan(r))
    f = lambda x: dnp.sum((x * np.array([2.0, -3.0, 0.5])) ** 2)  # noqa: E731
    x = np.array([0.3, -1.2, 2.0])
    fast = dk.hessian(f)(x)
    checked_fast = len(checks)
    monkeypatch.setattr(families, "_finite_and_nonzero", lambda partial, t: False)
    slow = dk.hessian(f)(x)
    # the products of the batched tangents with the constant partial skip their check
    assert checked_fast < len(checks) - checked_fast
    assert_array_equal(fast, slow)
    assert_allclose(fast, 2 * np.diag([4.0, 9.0, 0.25]), rtol=1e-12)
    # an infinite tangent entry meeting a zero partial entry: 0 under the rule
    t = np.array([[np.inf, 1.0, 1.0]] * 8)
    with np.errstate(invalid="ignore"):
        assert_array_equal(families.times(t, np.array([0.0, 2.0, 3.0])), [[0.0, 2.0, 3.0]] * 8)
