"""Buffer reuse and freeing in the plain replay: results unchanged, the caller's arrays and
constants never written, views and outputs never overwritten, peak memory lower."""

import tracemalloc

import numpy as np

import diffkit as dk
import diffkit.numpy as dnp

N = 1 << 15   # above buffers.BIG


def same(a, b):
    np.testing.assert_array_equal(a, b)
    assert np.asarray(a).dtype == np.asarray(b).dtype


def replayed(fun, *args):
    """``fun`` jitted and called twice (the second call replays), and its source."""
    jitted = dk.jit(fun)
    jitted(*args)
    out = jitted(*args)
    (graph,) = jitted.graphs()
    return out, graph._plain.source


def peak_bytes(fun, *args):
    tracemalloc.start()
    try:
        fun(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def loss(x):
    return dnp.sum(dnp.sin(x) * dnp.exp(-x ** 2))


def test_gradient_writes_into_dying_buffers_and_keeps_its_values():
    x = np.random.default_rng(0).standard_normal(N)
    before = x.copy()
    grad = dk.grad(loss)
    out, source = replayed(grad, x)
    same(out, grad(x))
    same(x, before)
    assert "out=v" in source and "del v" in source


def test_peak_memory_of_the_replay_is_three_inputs():
    """Input, the result and one intermediate at a time (eagerly the reverse pass keeps
    more alive)."""
    x = np.random.default_rng(1).standard_normal(N)
    jitted = dk.jit(dk.grad(loss))
    jitted(x)
    jitted(x)
    replay = peak_bytes(jitted, x)
    eager = peak_bytes(dk.grad(loss), x)
    assert replay <= 3 * x.nbytes + 4096
    assert replay < eager


def test_arguments_and_constants_are_never_written():
    c = np.linspace(1.0, 2.0, N)
    c_before = c.copy()

    def f(x, y):
        return [dnp.exp(x) + y, x * c, dnp.sin(y * 2.0) - c]

    x, y = np.linspace(-1, 1, N), np.linspace(0, 3, N)
    xb, yb = x.copy(), y.copy()
    out, source = replayed(f, x, y)
    for a, b in zip(out, f(x, y)):
        same(a, b)
    same(x, xb)
    same(y, yb)
    same(c, c_before)
    assert "out=v" in source   # sin(y * 2.0) is written into y * 2.0's buffer


def test_a_buffer_with_a_view_or_an_output_on_it_is_not_overwritten():
    def f(x):
        a = x * 2.0
        column = dnp.reshape(a, (N, 1))    # a view of a
        b = dnp.exp(a)                     # a's last elementwise use
        c = x * 3.0
        d = dnp.sin(c)                     # c's last use, but c is returned
        return [b, column, c, d]

    x = np.linspace(0, 1, N)
    out, source = replayed(f, x)
    for a, b in zip(out, f(x)):
        same(a, b)
    assert "out=" not in source


def test_outputs_a_pass_merged_are_separate_arrays():
    """``x * 1`` is ``x`` and two equal products are one: the replay still returns new
    arrays, never the caller's argument or one array twice (as the function does)."""
    def f(x):
        return [x * np.ones(3), dnp.sin(x) * 2.0, dnp.sin(x) * 2.0, x]

    x = np.array([0.1, 0.2, 0.3])
    out, _ = replayed(f, x)
    same(out[0], x)
    assert out[0] is not x and out[1] is not out[2]
    assert out[3] is x   # returned as it is, as the function returns it
    out[0][0] = 5.0
    out[1][0] = 5.0
    same(x, np.array([0.1, 0.2, 0.3]))
    same(out[2], np.sin(x) * 2.0)


def test_outputs_merged_by_a_pass_are_separate_on_the_bound_path_too():
    f = lambda x: [x * np.ones(3), x]   # noqa: E731
    graph = dk.make_graph(f)(np.zeros(3))
    x = np.array([0.1, 0.2, 0.3])
    out = graph.bind_flat([x])   # each operation bound (the path of a transformed graph)
    assert out[0] is not x and out[1] is x
    same(out[0], x)
