"""The optimisation passes: each one, on a graph built for it, removes operations and keeps
the values (compared with the unoptimised graph and with the function run eagerly)."""

from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.interpreters.ir import Const, Equation, Guard, Program
from diffkit.jit import Graph, passes
from diffkit.ops.elementwise import add_p, divide_p, multiply_p, negative_p, sin_p, subtract_p
from diffkit.ops.families import holds_nan
from diffkit.ops.shape import broadcast_to_p, reshape_p, transpose_p


def same(a, b):
    assert type(a) is type(b), (type(a), type(b))
    np.testing.assert_array_equal(a, b)
    assert np.asarray(a).dtype == np.asarray(b).dtype
    a, b = np.asarray(a), np.asarray(b)
    for part in (np.real, np.imag):
        np.testing.assert_array_equal(np.signbit(part(a)), np.signbit(part(b)))


def graphs(fun, *args):
    """The optimised graph of ``fun`` at ``args`` and the same recording unoptimised."""
    graph = dk.make_graph(fun)(*args)
    return graph, Graph(graph.recording, graph.in_tree, graph.out_tree, optimise=False)


def ops_after(graph, *steps):
    """The number of operations after only ``steps`` (and dead-code elimination)."""
    program = Program(graph.recording)
    for step in steps:
        step(program)
    passes.eliminate_dead_code(program)
    return len(program.equations)


def check_values(fun, graph, plain, *args):
    same(graph(*args), fun(*args))
    same(plain(*args), fun(*args))


def test_common_subexpressions():
    def f(x):
        a = dnp.sin(x) * dnp.cos(x)
        b = dnp.sin(x) * dnp.cos(x)      # the same three operations again
        return a + b + (x + 0.0) * (x + -0.0)   # 0.0 and -0.0 are different constants

    x = np.array([-0.0, 0.5, 2.0])
    graph, plain = graphs(f, x)
    assert plain.num_ops == 11
    assert ops_after(graph, passes.common_subexpressions) == 8 == graph.num_ops
    check_values(f, graph, plain, x)
    check_values(f, graph, plain, np.array([1.0, -0.0, np.inf]))
    grad = dk.grad(lambda x: dnp.sum(f(x)))
    graph, plain = graphs(grad, x)
    assert graph.num_ops < plain.num_ops
    check_values(grad, graph, plain, np.array([0.1, 0.2, 0.3]))


def test_common_subexpressions_keep_parameters_of_different_types_apart():
    def f(x):
        return [dnp.astype(x, np.float32), dnp.astype(x, np.float64), dnp.sum(x, axis=0),
                dnp.sum(x, axis=(0,))]

    x = np.arange(3)
    graph, plain = graphs(f, x)
    for a, b in zip(graph(x), f(x)):
        same(a, b)


def test_constant_folding_after_a_boolean_mask_guard():
    """A boolean mask is guarded whole (its count sets a shape); what depends only on the
    mask is computed once, when the graph is built."""
    def f(x):
        m = x > 0
        return dnp.sum(x[m]) / dnp.sum(m) + dnp.sum(dnp.where(m, x, 0.0) * 2.0)

    grad = dk.grad(f)
    x = np.array([1.0, -2.0, 3.0])
    graph, plain = graphs(grad, x)
    assert plain.num_ops >= 7
    assert ops_after(graph, passes.known_values, passes.fold_constants) == 1 == graph.num_ops
    check_values(grad, graph, plain, np.array([2.0, -1.0, 0.5]))
    jitted = dk.jit(grad)
    for x in ([1.0, -2.0, 3.0], [2.0, -1.0, 0.5], [-1.0, 2.0, 2.0], [1.0, -2.0, 3.0]):
        same(jitted(np.array(x)), grad(np.array(x)))
    assert jitted.cache_info().traces == 2


def test_constant_folding_keeps_an_operation_that_raises_a_floating_point_error():
    def f(x):
        m = x > 0   # guarded whole by the mask index
        return x[m] + 1.0 / (dnp.sum(m) - 2)   # divides by zero: the replay warns, as eagerly

    x = np.array([1.0, 2.0])
    graph, plain = graphs(f, x)
    assert graph.num_ops < plain.num_ops
    with pytest.warns(RuntimeWarning, match="divide by zero"):
        out = graph(x)
    with np.errstate(all="ignore"):
        same(out, f(x))


def test_a_float_guard_does_not_fix_the_value():
    """A guard on a float (``float(s) == 0``) does not make the value a constant, and tells
    0.0 and -0.0 apart (Python could read the sign: ``math.copysign``)."""
    def f(x):
        s = x * 1.0
        if float(s) == 0.0:
            return 1.0 / s
        return s

    jitted = dk.jit(f)
    with np.errstate(divide="ignore"):
        for x in (0.0, -0.0, 0.0, 2.0, -0.0):
            same(jitted(np.array(x)), f(np.array(x)))
    assert jitted.cache_info().traces == 3


def test_noop_reshapes_transposes_and_broadcasts_are_dropped():
    def f(x):
        a = reshape_p(x, shape=(2, 3))             # its own shape
        b = transpose_p(a, axes=(0, 1))            # identity permutation
        c = broadcast_to_p(b, shape=(2, 3))        # its own shape
        d = reshape_p(reshape_p(c, shape=(3, 2)), shape=(6,))   # one reshape
        e = transpose_p(transpose_p(c, axes=(1, 0)), axes=(1, 0))   # the identity
        s = reshape_p(dnp.sum(x), shape=())        # a NumPy scalar becomes a 0-d array: kept
        return dnp.sin(d), e * 2.0, s

    x = np.arange(6.0).reshape(2, 3)
    graph, plain = graphs(f, x)
    assert plain.num_ops == 11
    assert ops_after(graph, passes.drop_noops) == 5 == graph.num_ops
    for a, b in zip(graph(x), f(x)):
        same(a, b)
    for a, b in zip(plain(x), f(x)):
        same(a, b)
    grad = dk.grad(lambda x: dnp.sum(f(x)[0]) + dnp.sum(f(x)[1]))
    graph, plain = graphs(grad, x)
    assert graph.num_ops < plain.num_ops
    check_values(grad, graph, plain, x + 0.5)


def test_constants_are_frozen_when_recorded():
    """A closed-over array is recorded with the values it had when jit traced: changing it
    in place afterwards does not change the replay (clear the cache to record anew)."""
    scale = np.array([1.0, 2.0])
    jitted = dk.jit(lambda x: x * scale)
    same(jitted(np.ones(2)), np.array([1.0, 2.0]))
    scale[:] = 5.0
    same(jitted(np.ones(2)), np.array([1.0, 2.0]))
    jitted.clear_cache()
    same(jitted(np.ones(2)), np.array([5.0, 5.0]))
    assert scale.flags.writeable   # the caller's array is left alone


def test_benchmark_shaped_gradients_lose_operations_and_keep_values():
    A = np.random.default_rng(0).standard_normal((5, 5))

    def f(x):
        return dnp.sum(dnp.tanh(A @ x))

    def hvp(x, v):
        return dk.jvp(dk.grad(f), (x,), (v,))[1]

    x, v = np.linspace(-1, 1, 5), np.linspace(2, 3, 5)
    graph, plain = graphs(hvp, x, v)
    assert graph.num_ops < plain.num_ops
    np.testing.assert_allclose(graph(x, v), hvp(x, v), rtol=1e-13)
    same(graph(x, v), plain(x, v))


def test_products_with_the_all_ones_cotangent_are_dropped():
    f = lambda x: dnp.sum(dnp.sin(x) * dnp.exp(x))   # noqa: E731
    grad = dk.grad(f)
    graph, plain = graphs(grad, np.linspace(0, 1, 5))
    assert ops_after(graph, passes.drop_unit_products) == plain.num_ops - 2
    check_values(grad, graph, plain, np.array([0.5, -1.0, 3.0, 2.0, -0.0]))
    jitted = dk.jit(grad)
    with np.errstate(all="ignore"):
        for x in ([0.5, -1.0, 3.0, 2.0, -0.0], [0.5, -1.0, np.inf, np.nan, -0.0]):
            same(jitted(np.array(x)), grad(np.array(x)))
    # a complex product with one is not its other factor (inf * (1 + 0j) has a NaN part)
    g = lambda z: z * np.ones(3)   # noqa: E731
    z = np.array([np.inf + 1j, 1 + np.inf * 1j, 2.0])
    graph, plain = graphs(g, z)
    assert graph.num_ops == 1
    with np.errstate(all="ignore"):
        check_values(g, graph, plain, z)


def test_a_value_check_on_a_dead_product_goes_with_the_product():
    # forward over reverse of sum(tanh(A x)): the gradient's own product (u A) is read only
    # by its 0 x inf check; only the tangent's product (u' A) is returned
    def hvp(x, v, A):
        return dk.jvp(dk.grad(lambda x: dnp.sum(dnp.tanh(A @ x))), (x,), (v,))[1]

    rng = np.random.default_rng(0)
    x, v, A = rng.standard_normal(6), rng.standard_normal(6), rng.standard_normal((6, 6))
    graph, plain = graphs(hvp, x, v, A)
    matmuls = [e for e in graph.equations if e.prim.name == "matmul"]
    assert len(matmuls) == 3            # A x, A v and the tangent's product
    assert sum(e.prim.name == "matmul" for e in plain.equations) == 4
    assert all(g.var in {v for e in graph.equations for v in e.outs} | {0, 1, 2}
               for g in graph.guards)
    check_values(hvp, graph, plain, x, v, A)
    t = 1.0 - np.tanh(A @ x) ** 2
    expected = A.T @ (-2 * np.tanh(A @ x) * t * (A @ v))
    np.testing.assert_allclose(graph(x, v, A), expected, rtol=1e-12)
    # a NaN in the dead product's input: the replay still returns what eager does
    bad = A.copy()
    bad[0, 0] = np.nan
    with np.errstate(invalid="ignore"):
        same(dk.jit(hvp)(x, v, bad), hvp(x, v, bad))


def test_a_guard_of_the_users_branch_on_a_dead_value_is_kept():
    def f(x):
        y = dnp.sum(x * 2.0)
        if y > 0:                         # a branch: kept although y is not returned
            return x + 1.0
        return x - 1.0

    graph = dk.make_graph(f)(np.ones(3))
    assert len(graph.guards) == 1 and graph.num_ops == 4   # x * 2, sum, > 0, x + 1
    jf = dk.jit(f)
    for sign in (1.0, -1.0, 1.0):
        same(jf(sign * np.ones(3)), f(sign * np.ones(3)))
    assert jf.cache_info().traces == 2


def test_a_nan_check_implied_by_the_next_operations_check_is_dropped():
    def hvp(x, v, A):
        return dk.jvp(dk.grad(lambda x: dnp.sum(dnp.tanh(A @ x))), (x,), (v,))[1]

    rng = np.random.default_rng(4)
    x, v, A = rng.standard_normal(5), rng.standard_normal(5), rng.standard_normal((5, 5))
    graph = dk.make_graph(hvp)(x, v, A)
    program = Program(graph.recording)
    for step in (passes.eliminate_dead_code, passes.drop_dead_value_guards,
                 passes.eliminate_dead_code):
        step(program)
    before = len(program.guards)
    passes.drop_implied_value_checks(program)
    assert len(program.guards) < before
    for g in program.guards:   # only NaN checks of products that reach the output remain
        assert g.test is holds_nan and g.expected is False
    jitted = dk.jit(hvp)
    same(jitted(x, v, A), hvp(x, v, A))
    for bad in (np.full(5, np.nan), np.array([np.inf, 0.0, 1.0, 2.0, 3.0])):
        with np.errstate(all="ignore"):       # a NaN where a dropped check stood
            same(jitted(x, bad, A), hvp(x, bad, A))
    info = jitted.cache_info()
    assert info.guard_failures >= 1 and info.traces >= 2


def test_nan_checks_are_deferred_along_arithmetic_to_a_kept_check():
    def f(x):
        return dnp.sum(dnp.sin(x) * dnp.exp(-x ** 2))

    grad = dk.grad(f)
    x = np.linspace(-2.0, 2.0, 7)
    graph, plain = graphs(grad, x)
    assert len(graph.guards) == 2 < len(plain.guards)   # the two products summed last
    check_values(grad, graph, plain, x)
    jitted = dk.jit(grad)
    same(jitted(x), grad(x))
    for bad in ([np.nan] + [0.5] * 6, [np.inf] + [0.5] * 6, [0.5] * 6 + [-np.inf]):
        bad = np.array(bad)
        with np.errstate(all="ignore"):   # a NaN where the dropped checks stood
            same(jitted(bad), grad(bad))
    assert jitted.cache_info().guard_failures >= 1


# --- drop_implied_value_checks: one sweep, the same checks as its definition ------------------


def _reference_implied_value_checks(program):
    """``drop_implied_value_checks`` as first written (its specification): each check walks
    its whole path of first readers and looks at every reader of every value on it, so a
    chain of n checked values costs n**2 steps."""
    checked = {g.var for g in program.guards if g.test is holds_nan and g.expected is False}
    if not checked:
        return
    readers = {}
    for i, eqn in enumerate(program.equations):
        for ref in dict.fromkeys(eqn.inputs):
            if type(ref) is int:
                readers.setdefault(ref, []).append(i)
    equations, avals = program.equations, program.avals
    implied = set()

    def endpoint(v):
        path, u = [v], v
        while True:
            first = readers.get(u, ())
            if not first:
                return None, path
            eqn = equations[first[0]]
            if not eqn.prim.traits.nan_propagating or eqn.params or eqn.errstate \
                    or eqn.avals[0] != avals[u] or np.dtype(avals[u][1]).kind != "f":
                return None, path
            u = eqn.outs[0]
            if u in checked and u not in implied:
                return u, path
            path.append(u)

    for v in sorted(checked, reverse=True):
        w, path = endpoint(v)
        if w is None:
            continue
        last = readers[path[-1]][0]
        if all(r == readers[u][0] or r > last for u in path for r in readers[u]):
            implied.add(v)
    program.guards = [g for g in program.guards if not (
        g.var in implied and g.test is holds_nan and g.expected is False)]


_F64, _F32 = np.dtype(np.float64), np.dtype(np.float32)
_AVALS = [((3,), _F64), ((3,), _F64), ((), _F64), ((3,), _F32), ((3,), np.dtype(np.int64))]


@st.composite
def checked_programs(draw):
    """A random straight-line program of arithmetic (the propagating kinds and others, some
    with parameters or error handling), values read once or several times, and NaN checks
    (and other guards) on random values: a ``Program``."""
    avals = [draw(st.sampled_from(_AVALS)) for _ in range(draw(st.integers(1, 3)))]
    num_inputs = len(avals)
    equations = []
    for _ in range(draw(st.integers(1, 40))):
        prim = draw(st.sampled_from([add_p, subtract_p, multiply_p, divide_p, negative_p,
                                     sin_p]))
        arity = 1 if prim in (negative_p, sin_p) else 2
        # mostly the latest values, so that paths of first readers form
        inputs = tuple(Const(2.0) if draw(st.integers(0, 9)) == 0 else
                       len(avals) - 1 - draw(st.integers(0, min(3, len(avals) - 1)))
                       for _ in range(arity))
        first = inputs[0] if type(inputs[0]) is int else inputs[-1]
        aval = avals[first] if type(first) is int and draw(st.integers(0, 5)) else \
            draw(st.sampled_from(_AVALS))
        params = {"note": 1} if draw(st.integers(0, 15)) == 0 else {}
        errstate = {"invalid": "ignore"} if draw(st.integers(0, 15)) == 0 else None
        equations.append(Equation(prim, params, inputs, (len(avals),), (aval,), errstate))
        avals.append(aval)
    guards = []
    for v in range(len(avals)):
        kind = draw(st.integers(0, 5))
        if kind <= 2:
            guards.append(Guard(v, holds_nan, False, 0))
        elif kind == 3:
            guards.append(Guard(v, holds_nan, True, 0))
        elif kind == 4:
            guards.append(Guard(v, passes.holds_nonfinite, False, 0))
    recording = SimpleNamespace(num_inputs=num_inputs, equations=equations,
                                outputs=[len(avals) - 1], guards=guards, avals=avals,
                                numpy=[True] * len(avals))
    return Program(recording)


@settings(max_examples=150, deadline=None)
@given(checked_programs())
def test_implied_checks_are_the_ones_the_definition_drops(program):
    expected = Program(program)
    _reference_implied_value_checks(expected)
    passes.drop_implied_value_checks(program)
    assert [id(g) for g in program.guards] == [id(g) for g in expected.guards]


def test_implied_checks_are_found_in_one_sweep(monkeypatch):
    """A chain of n products, each value checked: every check but the last is implied, and
    the pass steps from each value to the next once (its definition: n**2 / 2 steps)."""
    n = 3000
    aval = ((4,), _F64)
    equations = [Equation(multiply_p, {}, (v, Const(0.5)), (v + 1,), (aval,), None)
                 for v in range(n)]
    guards = [Guard(v, holds_nan, False, v) for v in range(n + 1)]
    recording = SimpleNamespace(num_inputs=1, equations=equations, outputs=[n],
                                guards=guards, avals=[aval] * (n + 1),
                                numpy=[True] * (n + 1))
    steps = []
    step = passes._ImpliedChecks._step
    monkeypatch.setattr(passes._ImpliedChecks, "_step",
                        lambda self, u: steps.append(u) or step(self, u))
    program = Program(recording)
    passes.drop_implied_value_checks(program)
    assert [g.var for g in program.guards] == [n]
    assert sorted(steps) == list(range(n + 1))   # each value once


def test_a_long_gradient_keeps_the_checks_a_short_one_keeps_per_step():
    """The gradient of 200 steps of ``sin(x) * exp(-x**2) + x``: each step records five
    NaN checks, of which the passes keep two (the two products summed last, as in
    ``test_nan_checks_are_deferred_along_arithmetic_to_a_kept_check``), and the replay
    equals the gradient."""
    def chain(steps):
        def f(x):
            for _ in range(steps):
                x = dnp.sin(x) * dnp.exp(-x ** 2) + x
            return dnp.sum(x)
        return dk.grad(f)

    steps, x = 200, np.linspace(0.1, 1.0, 4)
    graph = dk.make_graph(chain(steps))(x)
    assert len(graph.recording.guards) == 5 * steps and len(graph.guards) == 2 * steps
    assert all(g.test is holds_nan and g.expected is False for g in graph.guards)
    same(graph(x), chain(steps)(x))
    jitted = dk.jit(chain(steps))
    for y in (x, x - 0.5):
        same(jitted(y), chain(steps)(y))
    assert jitted.cache_info().traces == 1
