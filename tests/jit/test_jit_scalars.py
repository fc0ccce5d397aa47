"""Values of one entry in the plain replay (``diffkit.jit.scalars``): an entry read as a
NumPy scalar instead of a 0-d array, a stack of scalars as one ``np.array`` call. The
replay stays what the function gives, bit for bit: values (signs of zero, infinities,
NaN), dtypes, the types of the outputs (a 0-d array stays one) and floating-point
errors."""

import itertools
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.jit import make_graph
from diffkit.jit.graph import GuardFailure
from diffkit.testing.strategies import programs

SPECIAL = (1.5, -0.0, 0.0, np.inf, -np.inf, np.nan, 1e-310, -2.0)


def identical(a, b):
    """Of the same type, dtype and shape, and equal bit for bit (the sign of a zero too;
    a NaN equals a NaN)."""
    assert type(a) is type(b), (type(a), type(b))
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    if a.dtype.kind == "c":
        identical(a.real.copy(), b.real.copy())
        identical(a.imag.copy(), b.imag.copy())
        return
    if a.dtype.kind == "f":
        nan = np.isnan(a)
        np.testing.assert_array_equal(nan, np.isnan(b))
        assert a[~nan].tobytes() == b[~nan].tobytes(), (a, b)
    else:
        np.testing.assert_array_equal(a, b)


def run(fn, *args):
    """``fn(*args)`` with its floating-point errors: the outputs (or the exception's type)
    and the categories of the warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = fn(*args)
        except FloatingPointError as error:
            out = type(error)
    return out, sorted({w.category.__name__ for w in caught})


def same_run(graph, fn, *args, eager_types=True):
    """The generated replay of ``graph`` at ``args`` gives the outputs and floating-point
    errors of its bound replay (each equation's implementation, called as NumPy's
    function), and the outputs of ``fn`` itself. (Warnings are compared with the bound
    replay: eagerly, a rule's own checks on plain numbers may warn too. Without
    ``eager_types``, an output may be a NumPy scalar where ``fn`` gives a 0-d array, or
    the other way, as the bound replay does.)"""
    leaves = dk.tree_util.tree_flatten((args, {}))[0]
    out, warned = run(graph.run_flat, leaves)
    bound, bound_warned = run(graph.bind_flat, leaves)
    assert warned == bound_warned
    if bound is FloatingPointError:
        assert out is FloatingPointError
        return
    assert len(out) == len(bound)
    for a, b in zip(out, bound):
        identical(a, b)
    with np.errstate(all="ignore"):
        expected = dk.tree_util.tree_flatten(fn(*args))[0]
    assert len(out) == len(expected)
    for a, b in zip(out, expected):
        if not eager_types and np.ndim(a) == 0:
            a, b = np.asarray(a), np.asarray(b)
        identical(a, b)


def lv(t, y, p):
    return dnp.stack([p[0] * y[0] - p[1] * y[0] * y[1], -p[2] * y[1] + p[3] * y[0] * y[1]])


def lv_traced(t, y, p):
    """``lv`` by diffkit's primitives (called on NumPy arrays, ``p[0] * y[0]`` is NumPy's
    own scalar arithmetic, which a recording does not see)."""
    return dk.vjp(lambda y, p: lv(t, y, p), y, p)[0]


def aug(t, y, w, p):
    """The field and two vector-Jacobian products (what the adjoint of an ODE solves)."""
    out, pull = dk.vjp(lambda y, p: lv(t, y, p), y, p)
    cts = [pull(w[2 * j:2 * j + 2]) for j in range(2)]
    return dnp.concatenate([out] + [-c[0] for c in cts] + [-dnp.ravel(c[1]) for c in cts])


def _source(graph):
    """The generated replay's text (generated here if it was not yet)."""
    assert graph.replay_program is not None   # generates the replay
    return graph._plain.source


def _names(graph):
    return [eqn.prim.name for eqn in graph.replay_program.equations]


def test_a_stack_of_scalars_is_one_array_call():
    y, p = np.array([1.0, 1.0]), np.array([1.5, 1.0, 3.0, 1.0])
    graph = make_graph(lv)(0.5, y, p)
    source = _source(graph)
    assert "_array((" in source and ".reshape(" not in source
    assert "concatenate" not in _names(graph) and "reshape" not in _names(graph)
    identical(graph(0.5, y, p), lv(0.5, y, p))


def test_cotangent_entries_are_numpy_scalars():
    y, w, p = np.array([1.0, 1.0]), np.eye(2).ravel(), np.array([1.5, 1.0, 3.0, 1.0])
    graph = make_graph(aug)(0.5, y, w, p)
    program = graph.replay_program
    shapes = [tuple(eqn.params["shape"]) for eqn in program.equations
              if eqn.prim.name == "reshape"]
    assert () not in shapes   # no 0-d array is made: the entries are read from w itself
    reads = [eqn for eqn in program.equations if eqn.prim.name == "element"]
    assert sorted(e.params["index"] for e in reads if e.inputs == (2,)) == [(0,), (1,), (2,),
                                                                            (3,)]
    assert "v2[0]" in _source(graph)
    # the result, concatenate([f, -a, -b, ...]), is one stack of numbers: the negated
    # cotangents' entries are read and negated as numbers
    assert "concatenate" not in _names(graph) and _names(graph)[-1] == "stack"
    assert all(eqn.avals[0][0] == () for eqn in program.equations
               if eqn.prim.name == "negative")
    assert len(program.equations[-1].inputs) == 14
    identical(graph(0.5, y, w, p), aug(0.5, y, w, p))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.complex64])
def test_field_and_products_equal_eager_at_special_values(dtype):
    """At zeros of both signs, infinities and NaN: the same values and floating-point
    errors as eagerly. Each point is recorded there, so that its NaN checks hold and the
    generated replay runs."""
    rng = np.random.default_rng(0)
    for fn in (lv, aug):
        for a, b in itertools.product(SPECIAL, repeat=2):
            y = np.array([a, b], dtype)
            w = rng.choice(np.array(SPECIAL), 4).astype(dtype)
            p = rng.choice(np.array(SPECIAL), 4).astype(dtype)
            call = (0.5, y, p) if fn is lv else (0.5, y, w, p)
            with np.errstate(all="ignore"):
                graph = make_graph(fn)(*call)
            assert "stack" in _names(graph)
            reference = lv_traced if fn is lv else aug
            same_run(graph, reference, *call)
            with np.errstate(all="raise"):
                same_run(graph, reference, *call)


def test_stack_keeps_the_recorded_dtype():
    def f(x, a):
        return dnp.stack([x[0] * a, x[1] - a, x[0]])

    x = np.array([1.5, -0.0], np.float32)
    graph = make_graph(f)(x, np.float32(2.0))
    assert "stack" in _names(graph)
    for a in (np.float32(3.0), np.float32(-0.0), np.float32(np.inf)):
        out = graph(x, a)
        assert out.dtype == np.float32
        identical(out, f(x, a))


def test_a_stack_of_constants_and_values():
    def f(x):
        return dnp.stack([x[0] * 2.0, dnp.asarray(-0.0), x[1]])

    x = np.array([1.5, -0.0])
    graph = make_graph(f)(x)
    assert "stack" in _names(graph)
    for point in (x, np.array([np.nan, -np.inf])):
        identical(graph(point), f(point))


def test_zero_dimensional_outputs_stay_arrays():
    """A reshape to no dimension that is returned (or read by a NumPy function that keeps
    a 0-d array one) is kept: eagerly it is a 0-d array."""
    def f(x):
        e = dnp.reshape(x[0:1], ())
        return e, e * 2.0, dnp.real(dnp.reshape(x[1:2], ()))

    x = np.array([1.5, -0.0])
    graph = make_graph(f)(x)
    out = graph(x)
    assert type(out[0]) is np.ndarray and out[0].shape == ()
    for point in (x, np.array([-0.0, np.nan])):
        for a, b in zip(graph(point), f(point)):
            identical(a, b)


def test_entries_written_into_cotangent_arrays():
    """An entry read as a scalar is the value a basic scatter writes into zeros and adds
    into an array in place: the array stays one, with the eager entries (-0.0 where the
    sum of arrays gives -0.0, +0.0 where it adds +0.0 to -0.0)."""
    def f(y, w):
        out, pull = dk.vjp(lambda y: dnp.stack([y[0], y[1] * 2.0, y[0] * y[1]]), y)
        return pull(w)

    y, w = np.array([1.0, 2.0]), np.array([1.0, 2.0, 3.0])
    graph = make_graph(f)(y, w)
    assert "element" in _names(graph) and "+=" in _source(graph)
    for a, b in itertools.product(SPECIAL, repeat=2):
        point = (np.array([a, b]), np.array([b, -0.0, a]))
        with np.errstate(all="ignore"):
            graph = make_graph(f)(*point)
        same_run(graph, f, *point)


def test_complex_products_of_entries_match_np_multiply():
    """NumPy's scalar product of two complex numbers differs from ``np.multiply`` at
    infinite and NaN parts (its NaNs and its floating-point errors): the replay calls the
    ufunc for a complex product of values of no dimension."""
    def f(z):
        return dnp.multiply(z[0], z[1]), dnp.multiply(z[0], 2.0), z[0] + z[1]

    assert " * " not in _source(make_graph(f)(np.array([1j, 2j])))
    values = [complex(a, b) for a, b in itertools.product((0.0, 1.0, np.inf, np.nan), repeat=2)]
    for a, b in itertools.product(values, repeat=2):
        z = np.array([a, b])
        with np.errstate(all="ignore"):
            graph = make_graph(f)(z)
        same_run(graph, f, z)
        with np.errstate(all="raise"):
            same_run(graph, f, z)


def test_concatenates_of_vectors():
    """Small vectors and their negations become entries of one stack; long vectors stay
    one concatenate (reading each entry would cost more); a negation read elsewhere too
    stays, and its entries are read."""
    def f(a, b, c):
        nb = -b
        return dnp.concatenate([a, nb, -c]), dnp.concatenate([c, c]), nb * 2.0

    a, b, c = np.array([1.0, -0.0]), np.array([0.0, np.inf, 2.5]), np.linspace(0, 1, 12)
    graph = make_graph(f)(a, b, np.array([0.5, -0.0]))
    names = _names(graph)
    assert names.count("stack") == 2 and "concatenate" not in names
    assert names.count("negative") == 1 + 2   # -b kept (read twice), -c as two numbers
    long_graph = make_graph(f)(a, b, c)
    assert "concatenate" in _names(long_graph)
    for args in [(a, b, np.array([np.nan, -0.0])), (-a, -b, np.array([-np.inf, 0.0]))]:
        same_run(graph, f, *args)
    same_run(long_graph, f, a, b, -c)


def test_fused_cotangent_sums_keep_the_sign_of_zero():
    """A cotangent summed from scatters by the replay's in-place additions: where the sum of
    arrays adds +0.0 to a -0.0 entry it is +0.0, where it adds -0.0 to -0.0 it stays -0.0."""
    def f(x, w):
        out, pull = dk.vjp(lambda x: dnp.stack([x[0] * x[1], x[1] * 2.0, x[0] * 3.0]), x)
        return pull(w)[0]

    graph = make_graph(f)(np.array([1.0, 2.0]), np.array([1.0, 1.0, 1.0]))
    assert "+=" in _source(graph)
    for x, w in [([-0.0, 1.0], [1.0, 0.0, 1.0]), ([1.0, -0.0], [1.0, 0.0, -0.0]),
                 ([0.0, 0.0], [-1.0, -0.0, -0.0]), ([1.0, 1.0], [-0.0, -0.0, -0.0]),
                 ([-0.0, -0.0], [1.0, 1.0, 1.0])]:
        same_run(graph, f, np.array(x), np.array(w))


_SMALL_OPS = ("add", "subtract", "multiply", "negative", "sin", "getitem", "reshape",
              "concatenate", "stack", "sum")


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs(max_steps=6, ops=_SMALL_OPS, max_side=3, max_size=6), st.data())
def test_random_programs_and_gradients_at_special_values(case, data):
    """Random programs of small values (indexing, stacks, concatenates, arithmetic) and
    their gradients, recorded and replayed at arguments holding zeros of both signs,
    infinities and NaN: the generated replay gives the bound replay's outputs and errors,
    and the function's outputs."""
    program, args = case
    special = st.sampled_from(SPECIAL)
    args = [np.array(x) for x in args]
    for x in args:
        for k in range(x.size):
            if data.draw(st.booleans()):
                x.flat[k] = data.draw(special)

    def grad(*a):
        return dk.grad(lambda *b: dnp.sum(program(*b)), tuple(range(len(a))))(*a)

    for fn in (program, grad):
        with np.errstate(all="ignore"):
            graph = make_graph(fn)(*args)
        same_run(graph, fn, *args, eager_types=False)
        with np.errstate(all="raise"):
            same_run(graph, fn, *args, eager_types=False)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_cotangents_read_entry_by_entry_are_summed_as_numbers(dtype):
    """A cotangent summed from scatters of numbers and read only entry by entry (negated
    into an adjoint system's right-hand side) is summed entry by entry as numbers, with
    the sum of vectors' signs of zero (it adds 0.0 to the entries a scatter misses)."""
    def f(x, w):
        out, pull = dk.vjp(lambda x: dnp.stack([x[0] * x[1], x[1] * x[1], x[0] * 2.0, x[1]]),
                           x)
        return dnp.concatenate([out, -pull(w)[0]])

    x0, w0 = np.array([1.0, 2.0], dtype), np.array([1.0, 1.0, 1.0, 1.0], dtype)
    graph = make_graph(f)(x0, w0)
    names = _names(graph)
    assert "scatter_add" not in names and "concatenate" not in names and "add" in names
    assert "+=" not in _source(graph)
    rng = np.random.default_rng(1)
    values = np.array([-0.0, 0.0, 1.0, -2.0, np.inf, np.nan])
    for _ in range(150):
        x, w = rng.choice(values, 2).astype(dtype), rng.choice(values, 4).astype(dtype)
        with np.errstate(all="ignore"):
            graph = make_graph(f)(x, w)
        same_run(graph, f, x, w)
        with np.errstate(all="raise"):
            same_run(graph, f, x, w)


def test_nan_checks_of_small_arrays_are_inline():
    """The 0 x inf rule's NaN check of a small real array (a batch of tangents) is written
    out on its entries as Python floats: it passes and fails where ``holds_nan`` does."""
    def jac(t, y, p):
        return dk.jacfwd(lambda y: lv(t, y, p))(y)

    y0, p0 = np.array([1.0, 1.0]), np.array([1.5, 1.0, 3.0, 1.0])
    graph = make_graph(jac)(0.5, y0, p0)
    assert ".tolist()" in _source(graph)
    assert " == " not in _source(graph)   # no call of the check (``not test(v) == False``)
    failures = 0
    for a, b in itertools.product(SPECIAL, repeat=2):
        for p in (p0, np.array([a, 1.0, b, -0.0])):
            leaves = (0.5, np.array([a, b]), p)
            with np.errstate(all="ignore"):
                try:
                    out = graph.run_flat(leaves)
                except GuardFailure:
                    with pytest.raises(GuardFailure):
                        graph.bind_flat(leaves)
                    failures += 1
                    continue
                for x, e in zip(out, graph.bind_flat(leaves)):
                    identical(x, e)
                identical(out[0], jac(*leaves))
    assert failures > 0
