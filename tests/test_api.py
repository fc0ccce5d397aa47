"""The functional API with real values: every transformation against closed forms.

Each test uses small functions whose derivatives are known exactly, so a failure shows a
wrong number, not a disagreement between two diffkit code paths.
"""

from collections import namedtuple

import numpy as np
import pytest
from numpy.testing import assert_allclose

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.interpreters import reverse

Pair = namedtuple("Pair", ["a", "b"])

X3 = np.array([0.3, -1.2, 2.0])
X23 = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])


def is_plain(x):
    """A result must be a NumPy value, never a diffkit object."""
    return isinstance(x, (np.ndarray, np.generic))


def sin_x(x):
    return dnp.sin(x) * x


def d_sin_x(x):
    return np.cos(x) * x + np.sin(x)


# --- grad and value_and_grad -----------------------------------------------------------


class TestGrad:
    def test_closed_form(self):
        g = dk.grad(lambda x: dnp.sum(sin_x(x)))(X3)
        assert is_plain(g)
        assert g.shape == X3.shape and g.dtype == X3.dtype
        assert_allclose(g, d_sin_x(X3), rtol=1e-12)

    def test_two_dimensional_input(self):
        g = dk.grad(lambda x: dnp.sum(x ** 3))(X23)
        assert g.shape == (2, 3)
        assert_allclose(g, 3 * X23 ** 2, rtol=1e-12)

    def test_argnums_int(self):
        def f(x, y):
            return dnp.sum(x ** 2 * y)

        x, y = X3, np.array([2.0, 3.0, -1.0])
        assert_allclose(dk.grad(f)(x, y), 2 * x * y)
        assert_allclose(dk.grad(f, argnums=1)(x, y), x ** 2)

    def test_argnums_tuple_gives_tuple(self):
        def f(x, y, z):
            return dnp.sum(x * y ** 2) + z

        x, y = X3, np.array([2.0, 3.0, -1.0])
        g = dk.grad(f, argnums=(0, 2))(x, y, 4.0)
        assert isinstance(g, tuple) and len(g) == 2
        assert_allclose(g[0], y ** 2)
        assert_allclose(g[1], 1.0)
        g = dk.grad(f, argnums=(1,))(x, y, 4.0)
        assert isinstance(g, tuple) and len(g) == 1
        assert_allclose(g[0], 2 * x * y)

    def test_negative_argnums(self):
        def f(x, y):
            return dnp.sum(x * dnp.exp(y))

        x, y = X3, np.array([0.0, 1.0, -1.0])
        assert_allclose(dk.grad(f, argnums=-1)(x, y), x * np.exp(y))
        g = dk.grad(f, argnums=(-2, -1))(x, y)
        assert_allclose(g[0], np.exp(y))
        assert_allclose(g[1], x * np.exp(y))

    def test_has_aux(self):
        def f(x):
            loss = dnp.sum(x ** 2)
            return loss, {"loss": loss, "double": 2 * x}

        g, aux = dk.grad(f, has_aux=True)(X3)
        assert_allclose(g, 2 * X3)
        assert set(aux) == {"loss", "double"}
        assert is_plain(aux["loss"]) and is_plain(aux["double"])
        assert_allclose(aux["loss"], np.sum(X3 ** 2))
        assert_allclose(aux["double"], 2 * X3)

    def test_kwargs_are_passed_through_not_differentiated(self):
        def f(x, scale=1.0, *, power=2):
            return scale * dnp.sum(x ** power)

        assert_allclose(dk.grad(f)(X3, scale=3.0, power=3), 9 * X3 ** 2)
        assert_allclose(dk.grad(f)(X3, power=3), 3 * X3 ** 2)
        value, g = dk.value_and_grad(f)(X3, scale=0.5)
        assert_allclose(value, 0.5 * np.sum(X3 ** 2))
        assert_allclose(g, X3)

    def test_python_float_input(self):
        g = dk.grad(lambda x: x ** 3 + 2 * x)(2.0)
        assert is_plain(g)
        assert np.shape(g) == ()
        assert np.asarray(g).dtype == np.float64
        assert_allclose(g, 3 * 2.0 ** 2 + 2)

    def test_numpy_scalar_input(self):
        g = dk.grad(lambda x: dnp.sin(x))(np.float64(0.5))
        assert_allclose(g, np.cos(0.5))

    def test_float32_stays_float32(self):
        x = X3.astype(np.float32)
        g = dk.grad(lambda x: dnp.sum(dnp.sin(x) * x))(x)
        assert g.dtype == np.float32
        assert_allclose(g, d_sin_x(X3), rtol=1e-5)
        value, g = dk.value_and_grad(lambda x: dnp.sum(x ** 2))(x)
        assert g.dtype == np.float32
        assert np.asarray(value).dtype == np.float32

    def test_mixed_precision_arguments(self):
        # Each gradient has its own argument's dtype, even though the output is float64.
        def f(a, b):
            return dnp.sum(a * b)

        a, b = X3.astype(np.float32), np.array([1.0, 2.0, 3.0])
        ga, gb = dk.grad(f, argnums=(0, 1))(a, b)
        assert ga.dtype == np.float32 and gb.dtype == np.float64
        assert_allclose(ga, b)
        assert_allclose(gb, a, rtol=1e-6)

    def test_dict_input(self):
        params = {"w": X3, "b": 0.5}
        g = dk.grad(lambda p: dnp.sum(p["w"] ** 2) * p["b"])(params)
        assert isinstance(g, dict) and set(g) == {"w", "b"}
        assert_allclose(g["w"], 2 * X3 * 0.5)
        assert_allclose(g["b"], np.sum(X3 ** 2))

    def test_tuple_and_list_input(self):
        def f(xs):
            return dnp.sum(xs[0] * xs[1])

        a, b = X3, np.array([1.0, -2.0, 0.5])
        g = dk.grad(f)((a, b))
        assert isinstance(g, tuple) and len(g) == 2
        assert_allclose(g[0], b)
        assert_allclose(g[1], a)
        g = dk.grad(f)([a, b])
        assert isinstance(g, list) and len(g) == 2
        assert_allclose(g[0], b)
        assert_allclose(g[1], a)

    def test_namedtuple_input(self):
        g = dk.grad(lambda p: dnp.sum(p.a ** 2 * p.b))(Pair(X3, 3.0))
        assert type(g) is Pair
        assert_allclose(g.a, 6 * X3)
        assert_allclose(g.b, np.sum(X3 ** 2))

    def test_nested_pytree_input(self):
        tree = {"layer": [Pair(X3, 2.0), (np.array(1.5),)], "c": None}

        def f(t):
            p = t["layer"][0]
            return dnp.sum(p.a * p.b) * t["layer"][1][0] ** 2

        g = dk.grad(f)(tree)
        assert g["c"] is None
        assert type(g["layer"]) is list and type(g["layer"][0]) is Pair
        assert_allclose(g["layer"][0].a, 2.0 * 1.5 ** 2 * np.ones(3))
        assert_allclose(g["layer"][0].b, np.sum(X3) * 1.5 ** 2)
        assert_allclose(g["layer"][1][0], np.sum(X3 * 2.0) * 2 * 1.5)

    def test_value_and_grad(self):
        value, g = dk.value_and_grad(lambda x: dnp.sum(sin_x(x)))(X3)
        assert is_plain(value) and is_plain(g)
        assert_allclose(value, np.sum(np.sin(X3) * X3))
        assert_allclose(g, d_sin_x(X3))

    def test_value_and_grad_has_aux(self):
        (value, aux), g = dk.value_and_grad(
            lambda x, y: (dnp.sum(x * y), x + y), argnums=(0, 1), has_aux=True)(X3, 2 * X3)
        assert_allclose(value, np.sum(2 * X3 ** 2))
        assert_allclose(aux, 3 * X3)
        assert_allclose(g[0], 2 * X3)
        assert_allclose(g[1], X3)

    def test_output_independent_of_input(self):
        g = dk.grad(lambda x: 3.0)(X3)
        assert_allclose(g, np.zeros(3))
        g = dk.grad(lambda x, y: dnp.sum(y), argnums=0)(X3, X3)
        assert_allclose(g, np.zeros(3))

    def test_indexed_element_is_a_scalar_output(self):
        # x[1] is 0-d, so grad accepts it; the gradient is one-hot.
        assert_allclose(dk.grad(lambda x: x[1] ** 2)(X3), [0.0, 2 * X3[1], 0.0])


# --- vjp -------------------------------------------------------------------------------


class TestVJP:
    def test_tuple_result_one_per_primal(self):
        def f(x, y):
            return x * dnp.sin(y)

        y = np.array([0.1, 0.2, 0.3])
        out, pullback = dk.vjp(f, X3, y)
        assert_allclose(out, X3 * np.sin(y))
        ct = np.array([1.0, 2.0, 3.0])
        result = pullback(ct)
        assert isinstance(result, tuple) and len(result) == 2
        assert_allclose(result[0], ct * np.sin(y))
        assert_allclose(result[1], ct * X3 * np.cos(y))
        (single,) = dk.vjp(lambda x: x ** 2, X3)[1](np.ones(3))
        assert_allclose(single, 2 * X3)

    def test_ones_cotangent_is_elementwise_derivative(self):
        # PyTorch's y.backward(gradient=torch.ones_like(y)) for an elementwise function.
        y, pullback = dk.vjp(sin_x, X3)
        (dx,) = pullback(np.ones_like(y))
        assert_allclose(dx, d_sin_x(X3))

    def test_many_calls_no_accumulation(self):
        y, pullback = dk.vjp(lambda x: dnp.exp(x) * x, X3)
        expected = np.exp(X3) * (1 + X3)
        for _ in range(5):
            (dx,) = pullback(np.ones(3))
            assert_allclose(dx, expected, rtol=1e-12)
        ct = np.array([1.0, 0.0, -2.0])
        (dx,) = pullback(ct)
        assert_allclose(dx, ct * expected)
        (dx,) = pullback(np.ones(3))
        assert_allclose(dx, expected, rtol=1e-12)

    def test_pytree_output(self):
        def f(x):
            return {"sq": x ** 2, "parts": (dnp.sum(x), x[0] * x[1])}

        out, pullback = dk.vjp(f, X3)
        assert set(out) == {"sq", "parts"}
        assert_allclose(out["sq"], X3 ** 2)
        assert_allclose(out["parts"][0], np.sum(X3))
        assert_allclose(out["parts"][1], X3[0] * X3[1])
        ct = {"sq": np.array([1.0, 2.0, 3.0]), "parts": (np.array(10.0), np.array(100.0))}
        (dx,) = pullback(ct)
        expected = ct["sq"] * 2 * X3 + 10.0 + 100.0 * np.array([X3[1], X3[0], 0.0])
        assert_allclose(dx, expected)

    def test_pytree_primals(self):
        def f(p, scale):
            return p["w"] * scale + p["b"]

        params = {"w": X3, "b": np.array([1.0, 2.0, 3.0])}
        out, pullback = dk.vjp(f, params, 2.0)
        assert_allclose(out, 2 * X3 + params["b"])
        ct = np.array([1.0, -1.0, 0.5])
        dparams, dscale = pullback(ct)
        assert set(dparams) == {"w", "b"}
        assert_allclose(dparams["w"], 2 * ct)
        assert_allclose(dparams["b"], ct)
        assert_allclose(dscale, np.sum(ct * X3))

    def test_has_aux(self):
        out, pullback, aux = dk.vjp(lambda x: (dnp.sin(x), {"cos": dnp.cos(x)}), X3,
                                    has_aux=True)
        assert_allclose(out, np.sin(X3))
        assert is_plain(aux["cos"])
        assert_allclose(aux["cos"], np.cos(X3))
        (dx,) = pullback(np.ones(3))
        assert_allclose(dx, np.cos(X3))

    def test_scalar_output_python_float_cotangent(self):
        out, pullback = dk.vjp(lambda x: dnp.sum(x ** 2), X3)
        (dx,) = pullback(3.0)
        assert_allclose(dx, 6 * X3)

    def test_output_not_depending_on_input(self):
        out, pullback = dk.vjp(lambda x, y: (x * 2, y * 0 + 1.0, np.ones(2)), X3, 1.0)
        dx, dy = pullback((np.ones(3), np.array(5.0), np.ones(2)))
        assert_allclose(dx, 2 * np.ones(3))
        assert_allclose(dy, 0.0)

    def test_float32_cotangent_dtype(self):
        x = X3.astype(np.float32)
        out, pullback = dk.vjp(lambda x: x * 2, x)
        assert out.dtype == np.float32
        (dx,) = pullback(np.ones(3, np.float32))
        assert dx.dtype == np.float32


# --- jvp and linearize -----------------------------------------------------------------


class TestJVP:
    def test_closed_form(self):
        v = np.array([1.0, -2.0, 0.5])
        out, t = dk.jvp(sin_x, (X3,), (v,))
        assert is_plain(out) and is_plain(t)
        assert_allclose(out, sin_x(X3))
        assert_allclose(t, v * d_sin_x(X3))

    def test_several_primals_lists_accepted(self):
        def f(x, y):
            return x * y

        u, v = np.ones(3), np.array([1.0, 2.0, 3.0])
        out, t = dk.jvp(f, [X3, 2 * X3], [u, v])
        assert_allclose(out, 2 * X3 ** 2)
        assert_allclose(t, u * 2 * X3 + X3 * v)

    def test_pytrees(self):
        def f(p):
            return {"y": p["w"] * p["b"], "s": dnp.sum(p["w"] ** 2)}

        params = {"w": X3, "b": 2.0}
        tangent = {"w": np.array([1.0, 0.0, -1.0]), "b": 0.5}
        out, t = dk.jvp(f, (params,), (tangent,))
        assert set(out) == {"y", "s"} and set(t) == {"y", "s"}
        assert_allclose(out["y"], 2 * X3)
        assert_allclose(t["y"], tangent["w"] * 2 + X3 * 0.5)
        assert_allclose(t["s"], np.sum(2 * X3 * tangent["w"]))

    def test_has_aux(self):
        out, t, aux = dk.jvp(lambda x: (x ** 2, {"x": x, "n": 3}), (X3,), (np.ones(3),),
                             has_aux=True)
        assert_allclose(out, X3 ** 2)
        assert_allclose(t, 2 * X3)
        assert is_plain(aux["x"])
        assert_allclose(aux["x"], X3)
        assert aux["n"] == 3

    def test_zero_tangent_outputs(self):
        def f(x):
            return x * 2, np.ones((2, 2)), 7.0, X3.astype(np.float32)

        out, t = dk.jvp(f, (X3,), (np.ones(3),))
        assert_allclose(t[0], 2 * np.ones(3))
        for got, shape, dtype in zip(t[1:], [(2, 2), (), (3,)],
                                     [np.float64, np.float64, np.float32]):
            assert is_plain(got)
            assert np.shape(got) == shape
            assert np.asarray(got).dtype == dtype
            assert_allclose(got, 0.0)

    def test_zero_tangent_input(self):
        out, t = dk.jvp(lambda x, y: x * y, (X3, 2.0), (np.zeros(3), 1.0))
        assert_allclose(t, X3)

    def test_float32_tangent(self):
        x = X3.astype(np.float32)
        out, t = dk.jvp(lambda x: dnp.sin(x), (x,), (np.ones(3, np.float32),))
        assert out.dtype == np.float32 and t.dtype == np.float32

    def test_python_float_primal(self):
        out, t = dk.jvp(lambda x: x ** 3, (2.0,), (1.0,))
        assert_allclose(out, 8.0)
        assert_allclose(t, 12.0)


class TestLinearize:
    def test_equals_jvp_for_several_tangents(self):
        def f(x, y):
            return dnp.sin(x) * y ** 2 + dnp.exp(x * y)

        y = np.array([0.5, 1.0, -0.5])
        out, jvp_fn = dk.linearize(f, X3, y)
        assert_allclose(out, f(X3, y))
        rng = np.random.default_rng(0)
        for _ in range(4):
            u, v = rng.normal(size=3), rng.normal(size=3)
            expected = dk.jvp(f, (X3, y), (u, v))[1]
            assert_allclose(jvp_fn(u, v), expected, rtol=1e-12)
            closed = (np.cos(X3) * y ** 2 + y * np.exp(X3 * y)) * u + \
                (2 * y * np.sin(X3) + X3 * np.exp(X3 * y)) * v
            assert_allclose(jvp_fn(u, v), closed, rtol=1e-12)

    def test_does_not_call_function_again(self):
        calls = []

        def f(x):
            calls.append(1)
            return dnp.sin(x) * x

        out, jvp_fn = dk.linearize(f, X3)
        assert len(calls) == 1
        for v in (np.ones(3), np.array([1.0, 0.0, 2.0]), np.zeros(3)):
            assert_allclose(jvp_fn(v), v * d_sin_x(X3))
        assert len(calls) == 1

    def test_pytree_in_and_out(self):
        def f(p):
            return {"a": p[0] * p[1], "b": dnp.sum(p[0])}

        out, jvp_fn = dk.linearize(f, (X3, 2.0))
        t = jvp_fn((np.ones(3), 1.0))
        assert_allclose(t["a"], 2.0 + X3)
        assert_allclose(t["b"], 3.0)

    def test_constant_output(self):
        out, jvp_fn = dk.linearize(lambda x: (x * 2, np.ones(2)), X3)
        t = jvp_fn(np.ones(3))
        assert_allclose(t[0], 2 * np.ones(3))
        assert_allclose(t[1], np.zeros(2))


# --- Jacobians -------------------------------------------------------------------------

JACOBIANS = {
    "jacfwd": dk.jacfwd,
    "jacrev": dk.jacrev,
    "jacobian-auto": lambda f, **kw: dk.jacobian(f, mode="auto", **kw),
    "jacobian-fwd": lambda f, **kw: dk.jacobian(f, mode="fwd", **kw),
    "jacobian-rev": lambda f, **kw: dk.jacobian(f, mode="rev", **kw),
}


@pytest.fixture(params=sorted(JACOBIANS))
def jac(request):
    return JACOBIANS[request.param]


class TestJacobians:
    def test_vector_to_vector(self, jac):
        def f(x):  # R^3 -> R^2
            return dnp.stack([x[0] * x[1], dnp.sin(x[2]) * x[0]])

        x = X3
        expected = np.array([[x[1], x[0], 0.0],
                             [np.sin(x[2]), 0.0, x[0] * np.cos(x[2])]])
        j = jac(f)(x)
        assert is_plain(j)
        assert j.shape == (2, 3)
        assert_allclose(j, expected)

    def test_elementwise_is_diagonal(self, jac):
        j = jac(sin_x)(X3)
        assert_allclose(j, np.diag(d_sin_x(X3)))

    def test_scalar_to_scalar(self, jac):
        j = jac(lambda x: x ** 3)(2.0)
        assert np.shape(j) == ()
        assert_allclose(j, 12.0)

    def test_scalar_to_vector(self, jac):
        j = jac(lambda t: dnp.stack([dnp.cos(t), dnp.sin(t), t ** 2]))(0.5)
        assert j.shape == (3,)
        assert_allclose(j, [-np.sin(0.5), np.cos(0.5), 1.0])

    def test_vector_to_scalar(self, jac):
        j = jac(lambda x: dnp.sum(x ** 2))(X3)
        assert j.shape == (3,)
        assert_allclose(j, 2 * X3)

    def test_matrix_to_vector(self, jac):
        j = jac(lambda m: dnp.sum(m ** 2, axis=0))(X23)
        assert j.shape == (3, 2, 3)
        expected = np.zeros((3, 2, 3))
        for k in range(3):
            expected[k, :, k] = 2 * X23[:, k]
        assert_allclose(j, expected)

    def test_matrix_to_matrix(self, jac):
        j = jac(lambda m: m.T * 2.0)(X23)
        assert j.shape == (3, 2, 2, 3)
        expected = np.zeros((3, 2, 2, 3))
        for i in range(2):
            for k in range(3):
                expected[k, i, i, k] = 2.0
        assert_allclose(j, expected)

    def test_argnums_tuple(self, jac):
        def f(x, y):
            return x * y

        jx, jy = jac(f, argnums=(0, 1))(X3, 2.0)
        assert jx.shape == (3, 3) and jy.shape == (3,)
        assert_allclose(jx, 2.0 * np.eye(3))
        assert_allclose(jy, X3)

    def test_has_aux(self, jac):
        j, aux = jac(lambda x: (x ** 2, dnp.sum(x)), has_aux=True)(X3)
        assert_allclose(j, np.diag(2 * X3))
        assert is_plain(aux)
        assert_allclose(aux, np.sum(X3))

    def test_pytree_in_pytree_out(self, jac):
        # outer structure = the output's, inner = the input's.
        def f(p):
            w, b = p["w"], p["b"]
            return (w * b, dnp.sum(w ** 2))

        params = {"w": X3, "b": 2.0}
        j = jac(f)(params)
        assert isinstance(j, tuple) and len(j) == 2
        assert isinstance(j[0], dict) and set(j[0]) == {"w", "b"}
        assert isinstance(j[1], dict) and set(j[1]) == {"w", "b"}
        assert j[0]["w"].shape == (3, 3) and j[0]["b"].shape == (3,)
        assert j[1]["w"].shape == (3,) and np.shape(j[1]["b"]) == ()
        assert_allclose(j[0]["w"], 2.0 * np.eye(3))
        assert_allclose(j[0]["b"], X3)
        assert_allclose(j[1]["w"], 2 * X3)
        assert_allclose(j[1]["b"], 0.0)

    def test_namedtuple_input_list_output(self, jac):
        def f(p):
            return [p.a * p.b, p.b ** 2]

        j = jac(f)(Pair(np.array([1.0, 2.0]), 3.0))
        assert type(j) is list and len(j) == 2
        assert type(j[0]) is Pair and type(j[1]) is Pair
        assert_allclose(j[0].a, 3.0 * np.eye(2))
        assert_allclose(j[0].b, [1.0, 2.0])
        assert_allclose(j[1].a, [0.0, 0.0])
        assert_allclose(j[1].b, 6.0)

    def test_float32(self, jac):
        x = X3.astype(np.float32)
        j = jac(lambda x: x * 2)(x)
        assert j.dtype == np.float32
        assert_allclose(j, 2 * np.eye(3))

    def test_jacfwd_and_jacrev_agree(self):
        def f(x):
            return dnp.stack([dnp.sum(dnp.exp(x) * x[::-1]), x[0] * x[1] * x[2],
                              dnp.sum(dnp.tanh(x) ** 2)])

        assert_allclose(dk.jacfwd(f)(X3), dk.jacrev(f)(X3), rtol=1e-12, atol=1e-14)

    @pytest.mark.parametrize("chunk_size", [1, 2, 5, None])
    def test_jacrev_chunk_size(self, chunk_size):
        def f(x):  # R^3 -> R^(4,) via a product of rows
            return dnp.stack([x[0] * x[1], x[1] * x[2], x[2] * x[0], dnp.sum(x ** 2)])

        x = X3
        expected = np.array([[x[1], x[0], 0.0],
                             [0.0, x[2], x[1]],
                             [x[2], 0.0, x[0]],
                             2 * x])
        j = dk.jacrev(f, chunk_size=chunk_size)(x)
        assert j.shape == (4, 3)
        assert_allclose(j, expected)

    @pytest.mark.parametrize("chunk_size", [1, 2, 5, None])
    def test_jacrev_chunk_size_pytrees(self, chunk_size):
        def f(x, y):
            return {"p": dnp.reshape(x, (3, 1)) * y, "q": dnp.sum(x) * y}

        y = np.array([2.0, -1.0])
        # jacrev over argnums=(0, 1): outer = output dict, inner = the (x, y) tuple.
        j = dk.jacrev(f, argnums=(0, 1), chunk_size=chunk_size)(X3, y)
        assert set(j) == {"p", "q"}
        assert all(type(j[k]) is tuple and len(j[k]) == 2 for k in j)
        jx = {k: j[k][0] for k in j}
        jy = {k: j[k][1] for k in j}
        assert_allclose(jx["p"], _outer_p(X3, y)[0])
        assert_allclose(jy["p"], _outer_p(X3, y)[1])
        assert_allclose(jx["q"], np.outer(y, np.ones(3)))
        assert_allclose(jy["q"], np.sum(X3) * np.eye(2))

    def test_jacobian_auto_picks_forward_for_few_inputs(self):
        # 1 input element, 5 outputs: forward mode, so no backward sweep.
        before = reverse.sweep_count
        j = dk.jacobian(lambda t: dnp.stack([t, t ** 2, t ** 3, t ** 4, t ** 5]))(2.0)
        assert reverse.sweep_count == before
        assert_allclose(j, [1.0, 4.0, 12.0, 32.0, 80.0])

    def test_jacobian_auto_picks_reverse_for_few_outputs(self):
        before = reverse.sweep_count
        j = dk.jacobian(lambda x: dnp.sum(x ** 2))(X3)
        assert reverse.sweep_count == before + 1
        assert_allclose(j, 2 * X3)

    def test_bad_mode_and_chunk_size(self):
        with pytest.raises(ValueError, match="mode"):
            dk.jacobian(sin_x, mode="sideways")
        with pytest.raises(ValueError, match="chunk_size"):
            dk.jacrev(sin_x, chunk_size=0)


def _outer_p(x, y):
    """Jacobian blocks of (x, y) -> x[:, None] * y[None, :] (shape (3, 2))."""
    jx = np.zeros((3, 2, 3))
    jy = np.zeros((3, 2, 2))
    for i in range(3):
        for k in range(2):
            jx[i, k, i] = y[k]
            jy[i, k, k] = x[i]
    return jx, jy


# --- Hessians --------------------------------------------------------------------------


def rosenbrock(x):
    return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2


def rosenbrock_hessian(x):
    return np.array([[2 - 400 * (x[1] - 3 * x[0] ** 2), -400 * x[0]],
                     [-400 * x[0], 200.0]])


class TestHessian:
    def test_rosenbrock(self):
        x = np.array([1.5, -0.5])
        h = dk.hessian(rosenbrock)(x)
        assert h.shape == (2, 2)
        assert_allclose(h, rosenbrock_hessian(x), rtol=1e-12)

    def test_diagonal(self):
        h = dk.hessian(lambda x: dnp.sum(dnp.sin(x) * x ** 2))(X3)
        expected = (2 - X3 ** 2) * np.sin(X3) + 4 * X3 * np.cos(X3)
        assert_allclose(h, np.diag(expected), rtol=1e-12, atol=1e-14)

    def test_matrix_input_shape(self):
        h = dk.hessian(lambda m: dnp.sum(m ** 3))(X23)
        assert h.shape == (2, 3, 2, 3)
        expected = np.diag((6 * X23).ravel()).reshape(2, 3, 2, 3)
        assert_allclose(h, expected)

    def test_scalar_input(self):
        assert_allclose(dk.hessian(lambda t: t ** 4)(2.0), 48.0)

    def test_argnums_and_float32(self):
        def f(a, x):
            return a * dnp.sum(x ** 3)

        x = X3.astype(np.float32)
        h = dk.hessian(f, argnums=1)(2.0, x)
        assert h.dtype == np.float32
        assert_allclose(h, np.diag(12 * X3), rtol=1e-5)

    def test_hvp_returns_tuple_equal_to_hessian_times_v(self):
        x = np.array([1.5, -0.5])
        v = np.array([0.3, -2.0])
        result = dk.hvp(rosenbrock, (x,), (v,))
        assert isinstance(result, tuple) and len(result) == 1
        assert_allclose(result[0], rosenbrock_hessian(x) @ v, rtol=1e-12)
        assert_allclose(result[0], dk.hessian(rosenbrock)(x) @ v, rtol=1e-12)

    def test_hvp_two_primals(self):
        def f(x, y):
            return dnp.sum(x ** 2 * y)

        x, y = X3, np.array([1.0, 2.0, 3.0])
        u, v = np.array([1.0, 0.0, -1.0]), np.array([0.5, 0.5, 0.5])
        hx, hy = dk.hvp(f, (x, y), (u, v))
        # H = [[diag(2y), diag(2x)], [diag(2x), 0]]
        assert_allclose(hx, 2 * y * u + 2 * x * v)
        assert_allclose(hy, 2 * x * u)

    def test_hessian_has_aux(self):
        h, aux = dk.hessian(lambda x: (dnp.sum(x ** 3), x * 2), has_aux=True)(X3)
        assert_allclose(h, np.diag(6 * X3))
        assert_allclose(aux, 2 * X3)


# --- vmap ------------------------------------------------------------------------------


class TestVmap:
    def test_default_axis_zero(self):
        out = dk.vmap(lambda row: dnp.sum(row ** 2))(X23)
        assert is_plain(out)
        assert_allclose(out, np.sum(X23 ** 2, axis=1))

    def test_in_axes_int(self):
        out = dk.vmap(lambda col: dnp.sum(col * dnp.arange(2.0)), in_axes=1)(X23)
        assert_allclose(out, X23[1])

    def test_in_axes_negative(self):
        out = dk.vmap(lambda col: col[0] - col[1], in_axes=-1)(X23)
        assert_allclose(out, X23[0] - X23[1])

    def test_in_axes_none_and_tuple(self):
        w = np.array([1.0, 10.0, 100.0])
        out = dk.vmap(lambda row, w, c: dnp.sum(row * w) + c, in_axes=(0, None, 0))(
            X23, w, np.array([1.0, 2.0]))
        assert_allclose(out, X23 @ w + [1.0, 2.0])

    def test_in_axes_list_treated_as_tuple(self):
        out = dk.vmap(lambda a, b: a * b, in_axes=[1, None])(X23, 2.0)
        assert_allclose(out, 2.0 * X23.T)

    def test_in_axes_nested_prefix(self):
        params = {"w": np.array([1.0, 2.0, 3.0]), "b": np.array([0.5, -0.5])}
        xs = X23

        def f(p, row):
            return dnp.sum(p["w"] * row) + p["b"]

        # "w" unmapped, "b" mapped along axis 0, rows mapped along axis 0.
        out = dk.vmap(f, in_axes=({"w": None, "b": 0}, 0))(params, xs)
        assert_allclose(out, xs @ params["w"] + params["b"])
        # A prefix leaf applies to the whole subtree below it.
        pairs = (np.ones((2, 3)), 2 * np.ones((2, 3)))
        out = dk.vmap(lambda ab, c: (ab[0] + ab[1]) * c, in_axes=(0, None))(pairs, 2.0)
        assert_allclose(out, 6 * np.ones((2, 3)))

    def test_out_axes(self):
        out = dk.vmap(lambda row: row * 2, out_axes=1)(X23)
        assert out.shape == (3, 2)
        assert_allclose(out, 2 * X23.T)
        out = dk.vmap(lambda row: row * 2, out_axes=-1)(X23)
        assert_allclose(out, 2 * X23.T)

    def test_out_axes_tuple_with_none(self):
        w = np.array([1.0, 2.0, 3.0])

        def f(row, w):
            return row * w, w * 3

        scaled, const = dk.vmap(f, in_axes=(0, None), out_axes=(0, None))(X23, w)
        assert_allclose(scaled, X23 * w)
        assert np.shape(const) == (3,)
        assert_allclose(const, 3 * w)

    def test_out_axes_negative_on_matrix_output(self):
        def f(row):
            return row[:, None] * np.ones((3, 4))  # (3, 4) per example

        out = dk.vmap(f, out_axes=-2)(X23)
        assert out.shape == (3, 2, 4)
        assert_allclose(out, np.broadcast_to(X23.T[:, :, None], (3, 2, 4)))

    def test_axis_size_with_no_mapped_input(self):
        out = dk.vmap(lambda c: c * 2.0, in_axes=None, axis_size=4)(np.array([1.0, 2.0]))
        assert out.shape == (4, 2)
        assert_allclose(out, np.tile([2.0, 4.0], (4, 1)))
        out = dk.vmap(lambda: np.ones(2), axis_size=3)()
        assert out.shape == (3, 2)

    def test_axis_size_agrees_with_mapped_size(self):
        out = dk.vmap(lambda r: dnp.sum(r), axis_size=2)(X23)
        assert_allclose(out, X23.sum(axis=1))

    def test_unbatched_output_is_broadcast(self):
        out, const = dk.vmap(lambda row: (dnp.sum(row), np.array([1.0, 2.0])))(X23)
        assert const.shape == (2, 2)
        assert_allclose(const, [[1.0, 2.0], [1.0, 2.0]])
        assert_allclose(out, X23.sum(axis=1))

    def test_keyword_arguments_are_mapped_over_axis_zero(self):
        # As in JAX: in_axes covers the positional arguments; keywords are mapped over axis 0.
        out = dk.vmap(lambda row, scale: row * scale)(X23, scale=np.array([1.0, 10.0]))
        assert_allclose(out, X23 * np.array([[1.0], [10.0]]))
        out = dk.vmap(lambda c, v=None: c * v, in_axes=(None,))(2.0, v=X3)
        assert_allclose(out, 2 * X3)

    def test_nested_vmap(self):
        a = np.array([1.0, 2.0, 3.0])
        b = np.array([10.0, 20.0])
        table = dk.vmap(dk.vmap(lambda x, y: x * y + x, in_axes=(None, 0)),
                        in_axes=(0, None))(a, b)
        assert table.shape == (3, 2)
        assert_allclose(table, np.outer(a, b) + a[:, None])
        # Same matrix, inner map over the first argument's axis 1.
        out = dk.vmap(dk.vmap(lambda v: v * 2.0, in_axes=0), in_axes=1)(X23)
        assert out.shape == (3, 2)
        assert_allclose(out, 2 * X23.T)

    def test_pytree_output(self):
        out = dk.vmap(lambda row: {"s": dnp.sum(row), "r": row[::-1]})(X23)
        assert_allclose(out["s"], X23.sum(axis=1))
        assert_allclose(out["r"], X23[:, ::-1])

    def test_per_example_gradients(self):
        w = np.array([0.5, -1.0, 2.0])

        def loss(w, x):
            return (dnp.sum(w * x) - 1.0) ** 2

        grads = dk.vmap(dk.grad(loss), in_axes=(None, 0))(w, X23)
        expected = 2 * (X23 @ w - 1.0)[:, None] * X23
        assert grads.shape == (2, 3)
        assert_allclose(grads, expected)

    def test_float32_preserved(self):
        out = dk.vmap(lambda r: r * 2)(X23.astype(np.float32))
        assert out.dtype == np.float32


# --- stop_gradient ---------------------------------------------------------------------


class TestStopGradient:
    def test_value_unchanged(self):
        assert_allclose(dk.stop_gradient(X3), X3)

    def test_grad(self):
        # d/dx [x * sg(x)] = sg(x) = x, not 2x.
        g = dk.grad(lambda x: dnp.sum(x * dk.stop_gradient(x)))(X3)
        assert_allclose(g, X3)
        assert_allclose(dk.grad(lambda x: dnp.sum(dk.stop_gradient(x ** 2)))(X3), 0.0)

    def test_jvp_and_jacobians(self):
        def f(x):
            return x * dk.stop_gradient(x)

        _, t = dk.jvp(f, (X3,), (np.ones(3),))
        assert_allclose(t, X3)
        assert_allclose(dk.jacfwd(f)(X3), np.diag(X3))
        assert_allclose(dk.jacrev(f)(X3), np.diag(X3))

    def test_hessian(self):
        # f = x^2 * sg(x): f' = 2x sg(x), f'' = 2 sg(x).
        h = dk.hessian(lambda x: dnp.sum(x ** 2 * dk.stop_gradient(x)))(X3)
        assert_allclose(h, np.diag(2 * X3))

    def test_under_vmap(self):
        out = dk.vmap(lambda r: dnp.sum(dk.stop_gradient(r) * 2))(X23)
        assert_allclose(out, 2 * X23.sum(axis=1))
        g = dk.vmap(dk.grad(lambda r: dnp.sum(r * dk.stop_gradient(r))))(X23)
        assert_allclose(g, X23)
