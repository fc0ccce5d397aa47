"""The engines' flat entry points (``jvp_flat``, ``vjp_flat``, ``linearize_flat``,
``batch_flat``) on their own, below the pytree layer of ``diffkit.api``, and the one
structure checker that the API and the custom rules share.

Expected values are closed forms: d(x*y) = y dx + x dy, d sin = cos, and so on.
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import diffkit as dk
import diffkit.numpy as dnp
from diffkit import tree_util
from diffkit.core.trace import Tracer
from diffkit.core.zeros import Zero
from diffkit.errors import EscapedTracerError, ShapeMismatchError
from diffkit.interpreters.batching import batch_flat
from diffkit.interpreters.forward import jvp_flat
from diffkit.interpreters.reverse import vjp_flat
from diffkit.interpreters.staging import linearize_flat

RNG = np.random.default_rng(11)
X = RNG.standard_normal(4)
Y = RNG.standard_normal(4)
C = np.arange(3.0)  # a constant output: depends on no input


def product_and_sine(x, y):
    """Flat in, flat out: ``[x * y, sin(x), C]``."""
    return [x * y, dnp.sin(x), C]


# --- forward ---------------------------------------------------------------------------


def test_jvp_flat_gives_flat_primals_and_tangents_with_symbolic_zeros():
    dx, dy = RNG.standard_normal(4), RNG.standard_normal(4)
    primals, tangents = jvp_flat(product_and_sine, [X, Y], [dx, dy])
    assert len(primals) == len(tangents) == 3
    assert_allclose(primals[0], X * Y, rtol=1e-15)
    assert_allclose(primals[1], np.sin(X), rtol=1e-15)
    assert_allclose(tangents[0], Y * dx + X * dy, rtol=1e-7)
    assert_allclose(tangents[1], np.cos(X) * dx, rtol=1e-7)
    # the constant output's tangent stays symbolic, shaped like it
    assert type(tangents[2]) is Zero and tangents[2].shape == (3,)
    assert tangents[2].dtype == np.float64


def test_jvp_flat_takes_symbolic_zero_tangents_and_keeps_float32():
    x = np.float32([0.5, -1.0])
    y = np.float32([2.0, 3.0])
    dx = np.float32([1.0, 1.0])
    primals, tangents = jvp_flat(lambda a, b: [a * b], [x, y], [dx, Zero((2,), np.float32)])
    assert tangents[0].dtype == np.float32
    assert_allclose(tangents[0], y * dx, rtol=1e-7)


def test_jvp_flat_lowers_aux_to_primals():
    def f(x):
        s = dnp.sum(x ** 2)
        return [s], {"norm": dnp.sqrt(s), "tag": "unchanged"}

    (out,), (t,), aux = jvp_flat(f, [X], [np.ones(4)], has_aux=True)
    assert_allclose(out, np.sum(X ** 2), rtol=1e-15)
    assert_allclose(t, 2 * np.sum(X), rtol=1e-7)
    assert not isinstance(aux["norm"], Tracer)
    assert_allclose(aux["norm"], np.sqrt(np.sum(X ** 2)), rtol=1e-15)
    assert aux["tag"] == "unchanged"


def test_flat_entry_points_name_the_transformation_when_a_tracer_escapes():
    kept = []
    dk.grad(lambda x: kept.append(x) or dnp.sum(x))(X)
    for run in (lambda: jvp_flat(lambda x: [kept[0]], [X], [X], name="my-jvp"),
                lambda: vjp_flat(lambda x: [kept[0]], [X], name="my-jvp"),
                lambda: batch_flat(lambda x: [kept[0]], [X], [0], 4, name="my-jvp")):
        with pytest.raises(EscapedTracerError, match="my-jvp would return a traced value"):
            run()


# --- reverse ---------------------------------------------------------------------------


def test_vjp_flat_pullback_of_flat_cotangents():
    primals, pullback = vjp_flat(product_and_sine, [X, Y])
    assert_allclose(primals[0], X * Y, rtol=1e-15)
    assert_array_equal(primals[2], C)
    u, v = RNG.standard_normal(4), RNG.standard_normal(4)
    ct_x, ct_y = pullback([u, v, None])
    assert_allclose(ct_x, u * Y + v * np.cos(X), rtol=1e-7)
    assert_allclose(ct_y, u * X, rtol=1e-7)
    # retained by default: a second call gives the same, with symbolic zero seeds too
    again = pullback([u, Zero((4,), np.float64), np.ones(3)])
    assert_allclose(again[0], u * Y, rtol=1e-7)
    assert_allclose(again[1], u * X, rtol=1e-7)


def test_vjp_flat_gives_a_symbolic_zero_where_no_cotangent_arrives():
    x32 = np.float32([1.0, 2.0])
    _, pullback = vjp_flat(lambda a, b: [a * 3.0], [x32, Y])
    ct_a, ct_b = pullback([np.float32([1.0, -1.0])])
    assert ct_a.dtype == np.float32
    assert_allclose(ct_a, [3.0, -3.0], rtol=1e-7)
    assert type(ct_b) is Zero and ct_b.shape == (4,) and ct_b.dtype == np.float64


def test_vjp_flat_without_retain_consumes_its_tape():
    _, pullback = vjp_flat(lambda x: [dnp.sum(dnp.sin(x))], [X], retain=False)
    (first,) = pullback([np.float64(1.0)])
    assert_allclose(first, np.cos(X), rtol=1e-7)
    (second,) = pullback([np.float64(1.0)])  # the tape is gone: nothing reaches x
    assert type(second) is Zero


def test_vjp_flat_keep_copies_what_the_caller_can_write_into():
    x = X.copy()
    _, pullback = vjp_flat(lambda a: [dnp.sum(a ** 3)], [x], keep=True)
    x[:] = 100.0  # an optimiser step in place, before the pullback runs
    (ct,) = pullback([np.float64(1.0)])
    assert_allclose(ct, 3 * X ** 2, rtol=1e-7)


def test_vjp_flat_lowers_aux():
    (out,), pullback, aux = vjp_flat(lambda x: ([dnp.sum(x)], [x * 2]), [X], has_aux=True)
    assert isinstance(aux[0], np.ndarray) and not isinstance(aux[0], Tracer)
    assert_allclose(aux[0], 2 * X, rtol=1e-15)
    assert_allclose(pullback([np.float64(2.0)])[0], np.full(4, 2.0), rtol=1e-15)


def test_linearize_flat_replays_on_new_tangents():
    primals, jvp_fn = linearize_flat(product_and_sine, [X, Y])
    assert_allclose(primals[1], np.sin(X), rtol=1e-15)
    for _ in range(2):
        dx, dy = RNG.standard_normal(4), RNG.standard_normal(4)
        t_prod, t_sin, t_const = jvp_fn([dx, dy])
        assert_allclose(t_prod, Y * dx + X * dy, rtol=1e-7)
        assert_allclose(t_sin, np.cos(X) * dx, rtol=1e-7)
        assert type(t_const) is Zero and t_const.shape == (3,)


# --- batching --------------------------------------------------------------------------


def test_batch_flat_returns_outputs_with_their_batch_axes():
    xs = RNG.standard_normal((4, 5))  # batch along axis 1: five examples of length 4
    w = RNG.standard_normal(4)
    values, axes = batch_flat(lambda x, v: [dnp.dot(x, v), v * 2.0], [xs, w], [1, None], 5)
    assert axes == [0, None]
    assert_allclose(values[0], xs.T @ w, rtol=1e-7)
    assert_allclose(values[1], 2 * w, rtol=1e-15)


# --- one structure checker for the API and the custom rules ------------------------------


def test_flatten_as_names_the_path_where_structures_differ():
    treedef = tree_util.tree_structure({"a": 1.0, "b": (1.0, 1.0)})
    assert tree_util.flatten_as(treedef, {"a": 1, "b": (2, 3)}) == [1, 2, 3]
    with pytest.raises(ValueError, match=r"at \['b'\]\[1\], expected a leaf, got a list"):
        tree_util.flatten_as(treedef, {"a": 1, "b": (2, [3, 4])})
    with pytest.raises(ValueError, match=r"at the root, expected a dict with keys \['a', 'b'\]"):
        tree_util.flatten_as(treedef, {"a": 1, "c": (2, 3)})
    # None may stand for a leaf when is_leaf says so; a None node still matches None
    with_none = tree_util.tree_structure((1.0, None))
    assert tree_util.flatten_as(with_none, (None, None), lambda x: x is None) == [None]


def test_a_pullback_names_where_the_cotangent_structure_differs():
    _, pullback = dk.vjp(lambda x: {"a": x, "b": dnp.sum(x)}, X)
    with pytest.raises(ShapeMismatchError) as excinfo:
        pullback({"a": np.ones(4), "b": (1.0, 2.0)})
    text = str(excinfo.value)
    assert "cotangent" in text and "{'a': *, 'b': *}" in text
    assert "at ['b'], expected a leaf, got a tuple with 2 children" in text


def test_a_custom_rule_names_where_its_tangent_structure_differs():
    @dk.custom_jvp
    def f(x):
        return {"p": x, "q": x * 2}

    f.defjvp(lambda primals, tangents: (f(*primals), {"p": tangents[0], "r": tangents[0]}))
    with pytest.raises(ShapeMismatchError) as excinfo:
        dk.jvp(f, (X,), (np.ones(4),))
    text = str(excinfo.value)
    assert "the tangent returned by the JVP rule of 'f'" in text
    assert "expected a dict with keys ['p', 'q'], got a dict with keys ['p', 'r']" in text
