"""``make_graph``: the listing, the operation count after dead-code elimination, and
calling a graph."""

import numpy as np
import pytest

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.jit import Graph, StaleGraphError


def test_listing_names_outputs_shapes_dtypes_primitives_params_inputs():
    def f(x, y):
        z = dnp.sin(x) * y
        return dnp.sum(z, axis=0)

    graph = make = dk.make_graph(f)(np.ones((2, 3), dtype=np.float32), np.float32(2.0))
    assert isinstance(make, Graph)
    lines = str(graph).splitlines()
    assert lines[0] == "graph(v0: f32[2,3], v1: f32[]) {"
    assert lines[1] == "  v2: f32[2,3] = sin v0"
    assert lines[2] == "  v3: f32[2,3] = multiply v2 v1"
    assert lines[3].startswith("  v4: f32[3] = sum v3 axis=(0,)")
    assert lines[-2:] == ["  return v4", "}"]
    assert graph.num_ops == 3


def test_dead_code_is_dropped():
    def f(x):
        unused = dnp.exp(x) * 3.0   # noqa: F841 (dead code: not in the graph)
        return dnp.cos(x)

    graph = dk.make_graph(f)(np.ones(3))
    assert graph.num_ops == 1
    assert "exp" not in str(graph)


def test_guards_and_constants_are_listed():
    def f(x):
        if x[0] > 0:
            return x * np.arange(3.0)
        return -x

    listing = str(dk.make_graph(f)(np.ones(3)))
    assert "guard v" in listing and "== True" in listing
    assert "multiply v0 constf64[3]" in listing


def test_graph_of_a_gradient_counts_its_operations():
    f = lambda x: dnp.sum(dnp.tanh(x))   # noqa: E731
    graph = dk.make_graph(dk.grad(f))(np.ones(4))
    names = [line.split(" = ")[1].split()[0] for line in str(graph).splitlines()
             if " = " in line]
    assert names[0] == "tanh" and "square" in names
    assert graph.num_ops == len(names)


def test_calling_a_graph_replays_it():
    f = lambda x, a: dnp.sum(dnp.sin(x) * a)   # noqa: E731
    graph = dk.make_graph(f)(np.ones(3), 2.0)
    x = np.array([0.1, 0.2, 0.3])
    np.testing.assert_allclose(graph(x, 4.0), np.sum(np.sin(x) * 4.0), rtol=1e-12)
    # under a transformation too, without the user's Python
    np.testing.assert_allclose(dk.grad(graph)(x, 4.0), 4.0 * np.cos(x), rtol=1e-12)


def test_static_arguments_are_recorded_not_passed():
    graph = dk.make_graph(lambda x, n: x ** n, static_argnums=1)(np.ones(2), 3)
    np.testing.assert_array_equal(graph(np.array([2.0, 3.0])), [8.0, 27.0])


def test_calling_a_graph_whose_guard_fails_is_an_error():
    graph = dk.make_graph(lambda x: x if x.sum() > 0 else -x)(np.ones(2))
    np.testing.assert_array_equal(graph(np.array([1.0, 2.0])), [1.0, 2.0])
    with pytest.raises(StaleGraphError, match="make_graph, or call the function through jit"):
        graph(np.array([-1.0, -2.0]))
    with pytest.raises(ValueError, match="shape"):
        graph(np.ones(3))
