"""Seeing values while debugging: ``print``, ``repr`` and ``format`` of a traced value show
its value where it is known, ``np.array2string`` works on it, and ``dk.debug.print`` /
``dk.debug.callback`` run eagerly, under every transformation and at every jit replay, in
order."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import diffkit as dk
import diffkit.numpy as dnp

TRANSFORMS = {
    "grad": lambda f: dk.grad(f),
    "jacfwd": lambda f: dk.jacfwd(f),
    "hessian": lambda f: dk.hessian(f),
    "jit": lambda f: dk.jit(f),
}


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_print_repr_and_format_show_the_value(name, capsys):
    x = np.array([0.25, 1.5])

    def f(v):
        print(v)
        print(repr(v))
        print(f"{v[0]:.3f}|{v}")
        print(np.array2string(v, precision=1))
        return dnp.sum(v ** 2)

    TRANSFORMS[name](f)(x)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(str(x) + " (traced by ")
    assert lines[1].split("(")[0].endswith("Tracer")
    assert "(array([0.25, 1.5 ]), traced by " in lines[1]
    assert lines[2].startswith("0.250|[0.25 1.5 ] (traced by ")
    assert lines[3] == np.array2string(x, precision=1)


def test_format_of_an_array_fails_as_numpy_does():
    def f(v):
        with pytest.raises(TypeError, match="unsupported format string"):
            format(v, ".2f")
        with pytest.raises(TypeError, match="unsupported format string"):
            format(np.asarray([1.0, 2.0]), ".2f")
        return dnp.sum(v)

    dk.grad(f)(np.ones(2))


def test_showing_a_value_inside_jit_makes_no_guard(capsys):
    @dk.jit
    def f(v):
        print(f"{v[0]:.2f}", repr(v), str(v))
        return v * 2.0

    for v in (np.ones(2), np.arange(2.0), np.full(2, -3.0)):
        np.testing.assert_array_equal(f(v), v * 2.0)
    assert f.cache_info().traces == 1 and f.cache_info().hits == 2
    assert capsys.readouterr().out.count("\n") == 1   # Python's print: only when tracing


def test_under_vmap_the_batch_is_shown_and_format_refuses():
    def f(v):
        assert str(v).startswith("batch of 3: ")
        with pytest.raises(TypeError, match="a batch of values"):
            f"{v[0]:.2f}"
        return dnp.sum(v)

    dk.vmap(f)(np.ones((3, 2)))


def program(v):
    dk.debug.print("start")
    dk.debug.print("v = {}", v)
    w = dnp.sin(v)
    dk.debug.print("w0 = {w:.4f}", w=w[0])
    return dnp.sum(w * v)


def expected_lines(v):
    return ["start", f"v = {v}", f"w0 = {np.sin(v[0]):.4f}"]


@pytest.mark.parametrize("name", ["eager", "grad", "jvp", "hessian", "jit", "jit-grad",
                                  "grad-jit"])
def test_debug_print_runs_at_every_call_in_order(name, capsys):
    run = {
        "eager": program,
        "grad": dk.grad(program),
        "jvp": lambda v: dk.jvp(program, (v,), (np.ones_like(v),)),
        "hessian": dk.hessian(program),
        "jit": dk.jit(program),
        "jit-grad": dk.jit(dk.grad(program)),
        "grad-jit": dk.grad(dk.jit(program)),
    }[name]
    for v in (np.array([0.5, 1.0]), np.array([-2.0, 3.0]), np.array([0.1, 0.2])):
        run(v)
        assert capsys.readouterr().out.splitlines() == expected_lines(v)


def test_debug_print_under_vmap_prints_each_example_in_order(capsys):
    xs = np.array([[0.5, 1.0], [2.0, 3.0], [4.0, 5.0]])
    for fun in (dk.vmap(program), dk.jit(dk.vmap(program))):
        for _ in range(2):
            fun(xs)
            lines = capsys.readouterr().out.splitlines()
            assert lines[0] == "start"
            assert lines[1:4] == [f"v = {x}" for x in xs]
            assert lines[4:] == [f"w0 = {np.sin(x[0]):.4f}" for x in xs]


def test_callback_receives_plain_arrays_and_pytrees():
    seen = []

    def record(tree, scale=None):
        seen.append((type(tree["a"]), tree["a"].copy(), tree["b"], scale))

    def f(v):
        dk.debug.callback(record, {"a": v * 2.0, "b": "label"}, scale=v[0])
        return dnp.sum(v)

    x = np.array([1.0, 4.0])
    for fun in (f, dk.grad(f), dk.jit(f)):
        seen.clear()
        fun(x)
        kind, a, b, scale = seen[0]
        assert kind is np.ndarray and b == "label" and len(seen) == 1
        np.testing.assert_array_equal(a, x * 2.0)
        assert scale == x[0]


def test_debug_print_rejects_a_non_string_format():
    with pytest.raises(TypeError, match="format string"):
        dk.debug.print(np.ones(2))


@settings(max_examples=25, deadline=None)
@given(hnp.arrays(np.float64, st.integers(1, 4),
                  elements=st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)))
def test_printed_values_equal_the_plain_values(x):
    seen = []
    dk.grad(lambda v: (dk.debug.callback(seen.append, v), dnp.sum(v * v))[1])(x)
    jitted = dk.jit(lambda v: (dk.debug.callback(seen.append, v), v + 1.0)[1])
    jitted(x)
    jitted(x + 1.0)
    np.testing.assert_array_equal(seen[0], x)
    np.testing.assert_array_equal(seen[1], x)
    np.testing.assert_array_equal(seen[2], x + 1.0)
