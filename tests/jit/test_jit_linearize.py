"""``dk.linearize`` of a jitted function: the linear map is a graph of the tangent
operations, replayed as generated NumPy, with the values of ``dk.jvp``."""

import numpy as np

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.jit import Graph


def same(a, b):
    np.testing.assert_array_equal(a, b)
    assert np.asarray(a).dtype == np.asarray(b).dtype


def test_the_linear_map_is_a_graph_of_tangent_operations():
    calls = []

    def f(x, y):
        calls.append(1)
        return {"a": dnp.sin(x) * y, "b": dnp.sum(dnp.exp(x) ** 2)}

    jf = dk.jit(f)
    x, y = np.array([0.1, 0.2, 0.3]), np.array([1.0, 2.0, 3.0])
    jf(x, y)
    out, lin = dk.linearize(jf, x, y)
    assert len(calls) == 1                    # the jitted graph ran under jvp: no Python
    same(out["a"], np.sin(x) * y)
    np.testing.assert_allclose(out["b"], np.sum(np.exp(x) ** 2), rtol=1e-15)
    assert isinstance(lin.graph, Graph)
    names = [e.prim.name for e in lin.graph.equations]
    assert "sin" not in names and "exp" not in names   # the primal is constants now
    rng = np.random.default_rng(0)
    for _ in range(4):
        t = (rng.standard_normal(3), rng.standard_normal(3))
        got = lin(*t)
        assert len(calls) == 1                # a replay of the linear map
        expected = dk.jvp(f, (x, y), t)[1]
        calls.clear()
        calls.append(1)
        same(got["a"], expected["a"])
        same(got["b"], expected["b"])
        np.testing.assert_allclose(got["a"], np.cos(x) * y * t[0] + np.sin(x) * t[1],
                                   rtol=1e-13)
    assert lin.graph._plain is not None        # the plain replay answered


def test_a_tangent_the_recording_does_not_fit_is_answered_eagerly():
    def f(x):
        return dnp.sqrt(x) * 2.0              # an infinite derivative at 0

    x = np.array([0.0, 1.0, 4.0])
    out, lin = dk.linearize(dk.jit(f), x)
    for t in (np.array([1.0, 1.0, 1.0]), np.array([0.0, 1.0, 1.0]),
              np.array([np.nan, 0.0, 1.0])):
        with np.errstate(all="ignore"):
            got, expected = lin(t), dk.jvp(f, (x,), (t,))[1]
        same(got, expected)
    assert lin(np.array([0.0, 2.0, 4.0]))[0] == 0.0   # 0 x inf is 0: the rule, eagerly


def test_the_linear_map_composes_with_vmap_and_transposes_like_the_tape():
    A = np.random.default_rng(1).standard_normal((4, 3))

    def f(x):
        return dnp.tanh(A @ x)

    x = np.array([0.3, -0.2, 0.5])
    _, lin = dk.linearize(dk.jit(f), x)
    basis = np.eye(3)
    jac = dk.vmap(lin, out_axes=1)(basis)     # the graph bound under vmap
    np.testing.assert_allclose(jac, dk.jacfwd(f)(x), rtol=1e-13)
    np.testing.assert_allclose(jac, (1 - np.tanh(A @ x) ** 2)[:, None] * A, rtol=1e-13)


def test_where_the_graph_cannot_serve_the_tape_does():
    def f(x, n):
        return dnp.sin(x) ** n

    x = np.array([0.4, 0.7])
    static = dk.jit(f, static_argnums=1)
    out, lin = dk.linearize(lambda x: static(x, 3), x)
    assert not hasattr(lin, "graph")
    np.testing.assert_allclose(lin(np.ones(2)), 3 * np.sin(x) ** 2 * np.cos(x), rtol=1e-13)

    jf = dk.jit(lambda x: dnp.sum(dnp.sin(x) ** 3))

    def through(x):                           # linearize at a traced primal (under grad)
        _, lin = dk.linearize(jf, x)
        return lin(np.ones(2))

    np.testing.assert_allclose(dk.grad(through)(x), 6 * np.sin(x) * np.cos(x) ** 2
                               - 3 * np.sin(x) ** 3, rtol=1e-12)


def test_python_and_complex_numbers_as_primals_and_tangents():
    def f(x, a):
        return dnp.sin(x) * a

    jf = dk.jit(f)
    for primals, tangents in [((0.3, 2.0), (1.0, -1.0)),
                              ((0.3, 2.0), (np.float64(1.0), np.float64(-1.0))),
                              ((np.array([0.1 + 1j, 0.2]), 1.5), (np.array([1.0, 1j]), 0.5))]:
        out, lin = dk.linearize(jf, *primals)
        assert isinstance(lin.graph, Graph)
        np.testing.assert_allclose(out, f(*primals), rtol=1e-15)
        got, expected = lin(*tangents), dk.jvp(f, primals, tangents)[1]
        same(got, expected)
        x, a = primals
        np.testing.assert_allclose(got, np.cos(x) * a * tangents[0] + np.sin(x) * tangents[1],
                                   rtol=1e-13)
