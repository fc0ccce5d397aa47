"""The public Taylor-mode API (issue 29): ``dk.jet`` and the operators built on it.

``jet``: pytrees in and out, ``factorial_scaled=False``, float32 kept, complex curves,
constant and integer outputs, errors; composed with ``vmap`` (== a loop), ``grad``
(reverse over Taylor == forward over forward over reverse, and finite differences) and
``jit`` (== eager); ``custom_jvp`` rules followed as forward mode follows them. The
reference for a jet is nested ``dk.jvp`` in the scalar ``t`` of ``t -> f(x(t))``
(``derivatives_along`` of tests/test_taylor_primitives.py), a route that never enters the
Taylor interpreter.

The operators (``laplacian``, ``weighted_laplacian``, ``hessian_diagonal``,
``biharmonic``) against ``dk.hessian`` (forward over reverse) and closed forms, with
dimensions and points drawn by Hypothesis: vector outputs, ``argnums``, ``vmap`` over
points, ``jit``, ``sparsity``; the stochastic estimates' mean and variance over 200
estimates against the exact value and the closed-form Hutchinson variance; the same
generator state giving the same estimate; errors.

Tolerances: rtol 1e-7 against another engine (float64; entries that cancel to near zero
are judged with an absolute floor of 1e-12 times the scale of the terms that cancel),
1e-12 where the same operations run in another order (vmap, jit), finite differences 1e-6.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_taylor_primitives import derivatives_along, random_series

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.errors import (
    ArgnumsError,
    DiffkitError,
    InputTypeError,
    NonScalarOutputError,
    OptionError,
    ShapeMismatchError,
)

RTOL = 1e-7
SAME_OPS_RTOL = 1e-12   # the same operations in another order or batching
CANCELLATION = 1e-12    # absolute floor, relative to the scale of cancelling terms


def _settings(examples):
    return settings(max_examples=examples, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


def _leaves(tree):
    return dk.tree_util.tree_leaves(tree)


def assert_terms_equal(terms, expected, rtol=RTOL):
    """``terms``: jet's per-leaf lists (flattened in order); ``expected``: the references
    of orders 1..K, each a pytree like the output."""
    order = len(expected)
    flat = _leaves(terms)
    references = [_leaves(e) for e in expected]
    assert len(flat) == order * len(references[0])
    for j in range(len(references[0])):
        for k in range(order):
            reference = np.asarray(references[k][j])
            scale = max([float(np.max(np.abs(r[j]), initial=0.0)) for r in references])
            np.testing.assert_allclose(flat[j * order + k], reference, rtol=rtol,
                                       atol=CANCELLATION * scale,
                                       err_msg=f"output leaf {j}, derivative {k + 1}")


# --- jet: structures and conventions -----------------------------------------------------


def tree_fun(params, y):
    """A function of a pytree and an array, returning a pytree."""
    a, (b, c) = params["a"], params["bc"]
    return {"sum": dnp.sum(dnp.sin(a) * b) + c * y[0],
            "pair": (dnp.exp(a * c) + y, dnp.tanh(b)[:2] * y[1])}


def _tree_primals(rng):
    return ({"a": rng.normal(size=3), "bc": (rng.normal(size=3), np.asarray(rng.normal()))},
            rng.normal(size=3))


def _tree_series(rng, primals, order):
    return tuple(tuple(dk.tree_util.tree_map(lambda x: rng.normal(size=np.shape(x)), p)
                       for _ in range(order)) for p in primals)


@_settings(10)
@given(seed=st.integers(0, 2**32 - 1), order=st.integers(1, 4))
def test_jet_takes_and_gives_pytrees(seed, order):
    rng = np.random.default_rng(seed)
    primals = _tree_primals(rng)
    series = _tree_series(rng, primals, order)
    value, terms = dk.jet(tree_fun, primals, series)
    expected = derivatives_along(tree_fun, primals, series, order)
    for v, e in zip(_leaves(value), _leaves(tree_fun(*primals)), strict=True):
        np.testing.assert_allclose(v, e, rtol=SAME_OPS_RTOL)
    # the output's structure, each leaf replaced by the list of its derivatives
    as_lists = dk.tree_util.tree_map(lambda o: [o] * order, value)
    assert dk.tree_util.tree_structure(terms) == dk.tree_util.tree_structure(as_lists)
    assert_terms_equal(terms, expected[1:])


@_settings(10)
@given(seed=st.integers(0, 2**32 - 1), order=st.integers(1, 4))
def test_factorial_scaled_false_takes_and_gives_taylor_coefficients(seed, order):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=3)
    (derivatives,) = random_series(rng, (x,), order)
    coefficients = tuple(d / math.factorial(k) for k, d in enumerate(derivatives, start=1))

    def f(y):
        return dnp.exp(dnp.sin(y)) * dnp.sum(y ** 2)

    _, terms = dk.jet(f, (x,), (coefficients,), factorial_scaled=False)
    expected = derivatives_along(f, (x,), (derivatives,), order)
    assert_terms_equal(terms, [e / math.factorial(k) for k, e in
                               enumerate(expected[1:], start=1)])


def test_jet_keeps_float32():
    rng = np.random.default_rng(0)
    x = rng.normal(size=4).astype(np.float32)
    series = tuple(rng.normal(size=4).astype(np.float32) for _ in range(3))

    def f(y):
        return dnp.tanh(y) * dnp.exp(y[0]) + dnp.log1p(y ** 2)

    value, terms = dk.jet(f, (x,), (series,))
    assert value.dtype == np.float32 and all(t.dtype == np.float32 for t in terms)
    value64, terms64 = dk.jet(f, (x.astype(np.float64),),
                              (tuple(s.astype(np.float64) for s in series),))
    for t, t64 in zip([value, *terms], [value64, *terms64]):
        np.testing.assert_allclose(t, t64, rtol=1e-4, atol=1e-5 * np.max(np.abs(t64)))


def test_jet_keeps_each_leafs_precision():
    x32, x64 = np.float32([0.5, -1.0]), np.array([0.3, 2.0])
    value, terms = dk.jet(lambda a, b: (dnp.sin(a), dnp.cos(b)), (x32, x64),
                          ((np.ones(2, np.float32), np.ones(2, np.float32)),
                           (np.ones(2), np.ones(2))))
    assert [v.dtype for v in value] == [np.float32, np.float64]
    assert [t.dtype for t in terms[0]] == [np.float32] * 2
    assert [t.dtype for t in terms[1]] == [np.float64] * 2


@_settings(10)
@given(seed=st.integers(0, 2**32 - 1), order=st.integers(1, 5))
def test_jet_of_a_holomorphic_function_along_a_complex_line(seed, order):
    """f(z) = z exp(z) along z0 + v t: the k-th derivative is v^k exp(z0) (z0 + k)."""
    rng = np.random.default_rng(seed)
    z0 = rng.normal(size=3) + 1j * rng.normal(size=3)
    v = rng.normal(size=3) + 1j * rng.normal(size=3)
    series = (v,) + (np.zeros(3, complex),) * (order - 1)
    value, terms = dk.jet(lambda z: z * dnp.exp(z), (z0,), (series,))
    np.testing.assert_allclose(value, z0 * np.exp(z0), rtol=SAME_OPS_RTOL)
    for k, term in enumerate(terms, start=1):
        np.testing.assert_allclose(term, v ** k * np.exp(z0) * (z0 + k), rtol=RTOL)


def test_jet_of_outputs_that_do_not_move():
    """A constant output, an integer output and one that does not depend on the input:
    all terms zero, shaped like the output."""
    x = np.array([0.3, -1.0, 2.0])
    value, terms = dk.jet(lambda y: (dnp.argmax(y), dnp.ones(2) * 3.0, y * 0.0 + 1.0),
                          (x,), ((np.ones(3), np.ones(3)),))
    assert int(value[0]) == 2
    for out, out_terms in zip(value, terms):
        assert len(out_terms) == 2
        for t in out_terms:
            assert np.shape(t) == np.shape(out) and not np.any(t)


def test_jet_of_order_zero_is_the_value():
    value, terms = dk.jet(dnp.sin, (np.array([0.5, 1.0]),), ((),))
    np.testing.assert_array_equal(value, np.sin([0.5, 1.0]))
    assert list(terms) == []


# --- jet: errors -----------------------------------------------------------------------------

_X, _V = np.array([0.3, -1.2, 2.0]), np.array([1.0, 0.5, -0.2])


def _f(x):
    return dnp.sum(dnp.sin(x) * x)


JET_ERRORS = [
    ("series per primal", lambda: dk.jet(_f, (_X,), ((_V,), (_V,))), ShapeMismatchError,
     "1 primals but 2 series"),
    ("term shape", lambda: dk.jet(_f, (_X,), ((_V[:2],),)), ShapeMismatchError,
     r"series term 1 .*shape \(2,\), expected \(3,\)"),
    ("orders", lambda: dk.jet(lambda a, b: _f(a) * _f(b), (_X, _X), ((_V, _V), (_V,))),
     ShapeMismatchError, r"same number of terms; got \[1, 2\]"),
    ("term not a sequence", lambda: dk.jet(_f, (_X,), (_V,)), InputTypeError,
     r"series\[0\] must be a sequence of terms .* primal 0\), got ndarray"),
    ("series not a tuple", lambda: dk.jet(_f, (_X,), _V), InputTypeError,
     "primals and series as tuples"),
    ("primals not a tuple", lambda: dk.jet(_f, _X, ((_V,),)), InputTypeError,
     "primals and series as tuples"),
    ("int primal", lambda: dk.jet(_f, (np.arange(3),), ((np.ones(3),),)), InputTypeError,
     "dtype int64"),
    ("complex term of a real primal", lambda: dk.jet(_f, (_X,), ((_V + 1j,),)),
     ShapeMismatchError, "dtype complex128, expected float64"),
    ("tree of a term", lambda: dk.jet(lambda d: d["a"] * d["b"], ({"a": _X, "b": _X},),
                                      (({"a": _V},),)),
     ShapeMismatchError, "series term 1 does not have the structure"),
    ("not callable", lambda: dk.jet(3.0, (_X,), ((_V,),)), InputTypeError,
     "expects a callable"),
]


@pytest.mark.parametrize(("label", "call", "error", "message"), JET_ERRORS,
                         ids=[e[0] for e in JET_ERRORS])
def test_jet_errors(label, call, error, message):
    with pytest.raises(error, match=message):
        call()


# --- jet under the other transformations --------------------------------------------------


def _g(x):
    return dnp.sum(dnp.exp(0.3 * x) * dnp.sin(x[::-1])) + dnp.prod(dnp.cos(x))


@_settings(8)
@given(seed=st.integers(0, 2**32 - 1), batch=st.integers(1, 4), order=st.integers(1, 4))
def test_vmap_of_jet_is_a_loop(seed, batch, order):
    rng = np.random.default_rng(seed)
    xs = rng.normal(size=(batch, 3))
    series = rng.normal(size=(order, batch, 3))

    def jet_at(x, *terms):
        return dk.jet(_g, (x,), (terms,))

    batched = dk.vmap(jet_at)(xs, *series)
    fixed_series = dk.vmap(jet_at, in_axes=(0,) + (None,) * order)(xs, *series[:, 0])
    for b in range(batch):
        one = jet_at(xs[b], *series[:, b])
        np.testing.assert_allclose(batched[0][b], one[0], rtol=SAME_OPS_RTOL)
        for k in range(order):
            np.testing.assert_allclose(batched[1][k][b], one[1][k], rtol=SAME_OPS_RTOL,
                                       atol=SAME_OPS_RTOL * np.abs(one[1][k]))
        with_first = jet_at(xs[b], *series[:, 0])
        for k in range(order):
            np.testing.assert_allclose(fixed_series[1][k][b], with_first[1][k],
                                       rtol=SAME_OPS_RTOL)


def _nested_forward(fun, x, v, times):
    """``times`` nested jvps of ``fun`` along ``v``: the directional derivative of that
    order (of a vector-valued ``fun``, entry by entry)."""
    for _ in range(times):
        fun = (lambda h: lambda y: dk.jvp(h, (y,), (v,))[1])(fun)
    return fun(x)


@_settings(8)
@given(seed=st.integers(0, 2**32 - 1), order=st.integers(2, 3))
def test_grad_of_a_jet_coefficient(seed, order):
    """Reverse over Taylor: the gradient in x of the k-th derivative along v,
    ``∇_x ∂^k f(x)[v, ..., v]``, equals k nested jvps of ``grad f`` (forward over forward
    over reverse) and central finite differences."""
    rng = np.random.default_rng(seed)
    x, v = rng.normal(size=3), rng.normal(size=3)
    unit = (v,) + (np.zeros(3),) * (order - 1)

    def coefficient(y):
        return dk.jet(_g, (y,), (unit,))[1][order - 1]

    gradient = dk.grad(coefficient)(x)
    np.testing.assert_allclose(gradient, _nested_forward(dk.grad(_g), x, v, order), rtol=RTOL,
                               atol=CANCELLATION * np.max(np.abs(gradient)))
    h = 1e-5
    differences = [(coefficient(x + h * e) - coefficient(x - h * e)) / (2 * h)
                   for e in np.eye(3)]
    np.testing.assert_allclose(gradient, differences, rtol=1e-6, atol=1e-7)


def test_jit_of_a_function_calling_jet_equals_eager():
    w = np.array([0.1, -0.2, 0.3])

    def second_and_third(x, v):
        _, terms = dk.jet(_g, (x,), ((v, w, np.zeros(3)),))
        return terms[1], terms[2]

    staged = dk.jit(second_and_third)
    rng = np.random.default_rng(3)
    for _ in range(3):   # the first call traces, the others replay
        x, v = rng.normal(size=3), rng.normal(size=3)
        for s, e in zip(staged(x, v), second_and_third(x, v)):
            np.testing.assert_allclose(s, e, rtol=SAME_OPS_RTOL)


def test_jet_follows_a_custom_jvp_rule():
    """A rule that is deliberately twice the true derivative: jet expands the rule, as
    forward mode does. For y' = 2 cos(x) x': y'' = -2 sin(x) x'^2 + 2 cos(x) x'' and
    y''' = -2 cos(x) x'^3 - 6 sin(x) x' x'' + 2 cos(x) x'''."""
    @dk.custom_jvp
    def f(x):
        return dnp.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return f(x), 2.0 * dnp.cos(x) * t

    rng = np.random.default_rng(4)
    x = rng.normal(size=3)
    d1, d2, d3 = rng.normal(size=(3, 3))
    value, terms = dk.jet(lambda y: f(y) * 1.0, (x,), ((d1, d2, d3),))
    s, c = np.sin(x), np.cos(x)
    np.testing.assert_allclose(value, s, rtol=SAME_OPS_RTOL)
    closed_form = [2 * c * d1, -2 * s * d1 ** 2 + 2 * c * d2,
                   -2 * c * d1 ** 3 - 6 * s * d1 * d2 + 2 * c * d3]
    for term, expected in zip(terms, closed_form):
        np.testing.assert_allclose(term, expected, rtol=RTOL)
    nested = derivatives_along(f, (x,), ((d1, d2, d3),), 3)
    assert_terms_equal(terms, nested[1:])


def test_jet_of_a_custom_vjp_function_follows_forward_mode():
    """Forward mode pushes a tangent through the transpose of a custom_vjp function's
    backward rule (linear in the cotangent); jet expands that, as nested jvp does. A rule
    that is not the true derivative (100 x instead of x cos x + sin x) shows whose
    derivative comes out: y' = 100 x x', y'' = 100 (x'^2 + x x'')."""
    @dk.custom_vjp
    def f(x):
        return dnp.sin(x) * x

    f.defvjp(lambda x: (f(x), x), lambda x, g: (g * 100.0 * x,))
    rng = np.random.default_rng(5)
    x, d1, d2 = rng.normal(size=(3, 2))
    _, terms = dk.jet(f, (x,), ((d1, d2),))
    np.testing.assert_allclose(terms[0], 100 * x * d1, rtol=RTOL)
    np.testing.assert_allclose(terms[1], 100 * (d1 ** 2 + x * d2), rtol=RTOL)
    assert_terms_equal(terms, derivatives_along(f, (x,), ((d1, d2),), 2)[1:])


# --- the operators against the Hessian ----------------------------------------------------


def make_fun(seed, dim):
    """A smooth scalar function of x (shape (dim,)) with random parameters, every pair of
    coordinates coupled."""
    rng = np.random.default_rng(seed)
    w, b, c = rng.normal(size=(3, dim)), rng.normal(size=3), rng.normal(size=dim) / dim

    def f(x):
        return (dnp.sum(dnp.sin(dnp.matmul(w, x) + b))
                + 0.5 * dnp.dot(x, x) * dnp.exp(dnp.dot(c, x)) + dnp.log1p(dnp.dot(x, x)))
    return f


def points(dim, count=None):
    shape = (dim,) if count is None else (count, dim)
    size = math.prod(shape)
    return st.lists(st.floats(-1.5, 1.5), min_size=size, max_size=size).map(
        lambda v: np.array(v).reshape(shape))


@st.composite
def cases(draw, max_dim=6):
    dim = draw(st.integers(1, max_dim), label="D")
    return make_fun(draw(st.integers(0, 2**32 - 1), label="seed"), dim), \
        draw(points(dim), label="x")


def _hessian(f, x):
    return np.asarray(dk.hessian(f)(x))


def _close(actual, expected, scale=None):
    scale = np.max(np.abs(expected)) if scale is None else scale
    np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=CANCELLATION * scale)


@_settings(10)
@given(case=cases())
def test_laplacian_is_the_trace_of_the_hessian(case):
    f, x = case
    hessian = _hessian(f, x)
    _close(dk.laplacian(f)(x), np.trace(hessian), np.sum(np.abs(np.diag(hessian))))


@_settings(10)
@given(case=cases())
def test_hessian_diagonal_is_the_diagonal_of_the_hessian(case):
    f, x = case
    _close(dk.hessian_diagonal(f)(x), np.diag(_hessian(f, x)))


@_settings(10)
@given(case=cases(), columns=st.integers(1, 4), seed=st.integers(0, 2**32 - 1))
def test_weighted_laplacian_is_the_trace_of_sigma_sigma_t_hessian(case, columns, seed):
    f, x = case
    sigma = np.random.default_rng(seed).normal(size=(x.size, columns))
    hessian = _hessian(f, x)
    expected = np.trace(sigma @ sigma.T @ hessian)
    scale = np.sum(np.abs(sigma.T @ hessian @ sigma))
    _close(dk.weighted_laplacian(f, sigma)(x), expected, scale)

    def sigma_at(y):   # a state-dependent diffusion
        return dnp.reshape(1.0 + y ** 2, (-1, 1)) * sigma

    s = (1.0 + x ** 2)[:, None] * sigma
    _close(dk.weighted_laplacian(f, sigma_at)(x), np.trace(s @ s.T @ hessian),
           np.sum(np.abs(s.T @ hessian @ s)))


@_settings(5)
@given(case=cases(max_dim=4))
def test_biharmonic_is_the_laplacian_of_the_laplacian(case):
    """Δ²f = trace(∇²(trace ∇²f)): two nested Hessians, forward over reverse twice."""
    f, x = case

    def laplacian_by_hessian(y):
        return dnp.trace(dk.hessian(f)(y))

    expected = np.trace(_hessian(laplacian_by_hessian, x))
    fourth = [derivatives_along(f, (x,), ((e, np.zeros_like(e), np.zeros_like(e),
                                           np.zeros_like(e)),), 4)[4] for e in np.eye(x.size)]
    _close(dk.biharmonic(f)(x), expected, np.sum(np.abs(fourth)) + abs(expected))


# --- closed forms ------------------------------------------------------------------------------


def _square(x):
    return dnp.sum(x ** 2)


def _fourth_power(x):
    return dnp.sum(x ** 2) ** 2


HARMONIC = {   # harmonic in their first two coordinates, independent of the others
    "x0^2 - x1^2": lambda x: x[0] ** 2 - x[1] ** 2,
    "exp(x0) cos(x1)": lambda x: dnp.exp(x[0]) * dnp.cos(x[1]),
    "Re (x0 + i x1)^3": lambda x: x[0] ** 3 - 3 * x[0] * x[1] ** 2,
    "x0 x1 x2 + log|(x0, x1)|": lambda x: x[0] * x[1] * x[-1] * (x.shape[0] > 2)
    + 0.5 * dnp.log(x[0] ** 2 + x[1] ** 2),
}


def _second_scale(f, x):
    return np.sum(np.abs(np.diag(_hessian(f, x)))) + 1.0


@_settings(10)
@given(dim=st.integers(2, 6), data=st.data())
def test_harmonic_functions_have_zero_laplacian_and_bilaplacian(dim, data):
    x = data.draw(points(dim), label="x")
    for name, f in HARMONIC.items():
        if "log" in name and np.hypot(x[0], x[1]) < 0.1:
            continue
        scale = _second_scale(f, x)
        np.testing.assert_allclose(dk.laplacian(f)(x), 0.0, atol=CANCELLATION * scale,
                                   err_msg=name)
        np.testing.assert_allclose(dk.biharmonic(f)(x), 0.0, atol=1e-10 * scale ** 2,
                                   err_msg=name)


@_settings(10)
@given(dim=st.integers(1, 6), data=st.data())
def test_powers_of_the_norm(dim, data):
    """Δ|x|² = 2D, Δ²|x|² = 0, Δ|x|⁴ = 4(D+2)|x|², Δ²|x|⁴ = 8D(D+2); the diagonal of
    the Hessian of |x|⁴ is 4|x|² + 8x_i²."""
    x = data.draw(points(dim), label="x")
    r2 = float(x @ x)
    np.testing.assert_allclose(dk.laplacian(_square)(x), 2 * dim, rtol=RTOL)
    np.testing.assert_allclose(dk.biharmonic(_square)(x), 0.0, atol=1e-12 * dim)
    np.testing.assert_allclose(dk.laplacian(_fourth_power)(x), 4 * (dim + 2) * r2, rtol=RTOL,
                               atol=1e-12)
    np.testing.assert_allclose(dk.biharmonic(_fourth_power)(x), 8 * dim * (dim + 2),
                               rtol=RTOL)
    np.testing.assert_allclose(dk.hessian_diagonal(_fourth_power)(x), 4 * r2 + 8 * x ** 2,
                               rtol=RTOL, atol=1e-12)


def test_operators_on_a_matrix_argument():
    """The argument may have any shape: the operators sum over all its entries."""
    x = np.array([[0.5, -1.0], [2.0, 0.25]])
    r2 = float(np.sum(x ** 2))
    np.testing.assert_allclose(dk.laplacian(_fourth_power)(x), 4 * (4 + 2) * r2, rtol=RTOL)
    np.testing.assert_allclose(dk.biharmonic(_fourth_power)(x), 8 * 4 * 6, rtol=RTOL)
    np.testing.assert_allclose(dk.hessian_diagonal(_fourth_power)(x), 4 * r2 + 8 * x ** 2,
                               rtol=RTOL)


# --- outputs, arguments, transformations ------------------------------------------------------


@_settings(5)
@given(case=cases(max_dim=4), seed=st.integers(0, 2**32 - 1))
def test_vector_valued_fun_gets_one_value_per_output_entry(case, seed):
    f, x = case
    g, h = make_fun(seed, x.size), make_fun(seed + 1, x.size)

    def stacked(y):
        return dnp.reshape(dnp.stack([f(y), g(y), h(y), f(y) * g(y)]), (2, 2))

    funs = [f, g, h, lambda y: f(y) * g(y)]
    laplacians = np.reshape([np.trace(_hessian(fi, x)) for fi in funs], (2, 2))
    scale = max(np.sum(np.abs(np.diag(_hessian(fi, x)))) for fi in funs)
    _close(dk.laplacian(stacked)(x), laplacians, scale)
    biharmonics = [dk.biharmonic(fi)(x) for fi in funs]
    _close(dk.biharmonic(stacked)(x), np.reshape(biharmonics, (2, 2)))
    sigma = np.eye(x.size)[:, :1]
    _close(dk.weighted_laplacian(stacked, sigma)(x),
           np.reshape([_hessian(fi, x)[0, 0] for fi in funs], (2, 2)), scale)


def test_argnums_picks_the_argument():
    a, x, b = np.array([0.5, 2.0]), np.array([0.3, -0.4, 1.1]), 0.7

    def f(a, x, b):
        return dnp.sum(a) * dnp.sum(dnp.sin(x) * x) + b * dnp.prod(x)

    hessian = _hessian(lambda y: f(a, y, b), x)
    for argnums in (1, -2):
        _close(dk.laplacian(f, argnums=argnums)(a, x, b), np.trace(hessian))
        _close(dk.hessian_diagonal(f, argnums=argnums)(a, x, b), np.diag(hessian))
    expected = np.trace(_hessian(lambda y: f(y, x, b), a))
    _close(dk.laplacian(f)(a, x, b), expected)


@_settings(5)
@given(dim=st.integers(1, 4), count=st.integers(1, 4), seed=st.integers(0, 2**32 - 1),
       data=st.data())
def test_operators_under_vmap_over_points(dim, count, seed, data):
    f = make_fun(seed, dim)
    xs = data.draw(points(dim, count), label="points")
    sigma = np.random.default_rng(seed).normal(size=(dim, 2))
    for make in (dk.laplacian, dk.hessian_diagonal, dk.biharmonic,
                 lambda g: dk.weighted_laplacian(g, sigma)):
        op = make(f)
        batched = dk.vmap(op)(xs)
        for i in range(count):
            np.testing.assert_allclose(batched[i], op(xs[i]), rtol=SAME_OPS_RTOL,
                                       atol=SAME_OPS_RTOL * np.max(np.abs(op(xs[i]))))


def test_operators_under_jit():
    f = make_fun(5, 3)
    sigma = np.array([[1.0, 0.5], [0.0, 2.0], [-1.0, 0.3]])
    rng = np.random.default_rng(6)
    for make in (dk.laplacian, dk.hessian_diagonal, dk.biharmonic,
                 lambda g: dk.weighted_laplacian(g, sigma)):
        op = make(f)
        staged = dk.jit(op)
        for _ in range(3):   # the first call traces, the others replay
            x = rng.normal(size=3)
            np.testing.assert_allclose(staged(x), op(x), rtol=SAME_OPS_RTOL)


def _chain(x):
    """Coordinates meet only their neighbours: a sparse Hessian (tridiagonal)."""
    return dnp.sum(dnp.sin(x[:-1] * x[1:])) + dnp.sum(x ** 4) + dnp.sum(dnp.exp(0.1 * x))


def test_sparsity_options_agree_with_the_dense_hessian():
    x = np.random.default_rng(7).normal(size=20)
    hessian = _hessian(_chain, x)
    for sparsity in (True, False, "auto"):
        _close(dk.laplacian(_chain, sparsity=sparsity)(x), np.trace(hessian),
               np.sum(np.abs(np.diag(hessian))))
        _close(dk.hessian_diagonal(_chain, sparsity=sparsity)(x), np.diag(hessian))
    biharmonics = [dk.biharmonic(_chain, sparsity=s)(x) for s in (True, False, "auto")]
    np.testing.assert_allclose(biharmonics[0], biharmonics[1], rtol=1e-10)
    np.testing.assert_allclose(biharmonics[2], biharmonics[1], rtol=1e-10)


# --- stochastic estimates ------------------------------------------------------------------------

ESTIMATES, DIRECTIONS = 200, 8


def _coupled(x):
    """A function of 4 coordinates with every off-diagonal Hessian entry nonzero."""
    return dnp.exp(0.3 * dnp.sum(x)) + dnp.sum(dnp.outer(x, x) ** 2) / 4 + x[0] * x[1] * x[3]


_POINT = np.array([0.4, -0.8, 1.1, 0.2])


def _estimates(op, count=ESTIMATES):
    """``count`` estimates by one operator (each call draws new directions)."""
    return np.array([np.asarray(op(_POINT)) for _ in range(count)])


def _assert_mean(estimates, exact, variance):
    """The mean of the estimates is within 4 standard errors of ``exact``, the standard
    error from the closed-form ``variance`` of one estimate."""
    error = np.sqrt(variance / len(estimates))
    assert np.all(np.abs(estimates.mean(axis=0) - exact) <= 4 * error), \
        f"mean {estimates.mean(axis=0)}, exact {exact}, standard error {error}"


def _assert_variance(estimates, variance):
    """The sample variance is within 4 of its own standard errors of the closed form
    ``variance``; the standard error of a sample variance is sqrt((m4 - s^4 (n-3)/(n-1))
    / n), m4 the sample's fourth central moment."""
    n = len(estimates)
    centred = estimates - estimates.mean(axis=0)
    s2 = np.sum(centred ** 2, axis=0) / (n - 1)
    m4 = np.mean(centred ** 4, axis=0)
    error = np.sqrt(np.maximum(m4 - s2 ** 2 * (n - 3) / (n - 1), 0) / n)
    assert np.all(np.abs(s2 - variance) <= 4 * error), \
        f"sample variance {s2}, Hutchinson variance {variance}, standard error {error}"


def _off_diagonal_squares(m):
    return np.sum(m ** 2) - np.sum(np.diag(m) ** 2)


def test_stochastic_laplacian_mean_and_variance():
    """Hutchinson with Rademacher vectors: Var(vᵀHv) = 2 Σ_{i≠j} H_ij², over k directions
    divided by k."""
    hessian = _hessian(_coupled, _POINT)
    op = dk.laplacian(_coupled, stochastic=DIRECTIONS, rng=np.random.default_rng(0))
    estimates = _estimates(op)
    variance = 2 * _off_diagonal_squares(hessian) / DIRECTIONS
    _assert_mean(estimates, np.trace(hessian), variance)
    _assert_variance(estimates, variance)


def test_stochastic_weighted_laplacian_mean_and_variance():
    """The Rademacher combinations σv: Var = 2 Σ_{r≠s} M_rs² / k with M = σᵀHσ."""
    sigma = np.array([[1.0, 0.5, 0.0], [0.2, -1.0, 0.3], [0.0, 0.4, 1.5], [0.7, 0.0, -0.5]])
    m = sigma.T @ _hessian(_coupled, _POINT) @ sigma
    op = dk.weighted_laplacian(_coupled, sigma, stochastic=DIRECTIONS,
                               rng=np.random.default_rng(1))
    estimates = _estimates(op)
    variance = 2 * _off_diagonal_squares(m) / DIRECTIONS
    _assert_mean(estimates, np.trace(m), variance)
    _assert_variance(estimates, variance)


def test_stochastic_hessian_diagonal_mean_and_variance():
    """v ⊙ Hv with Rademacher v: entry i is H_ii + Σ_{j≠i} H_ij v_i v_j, of variance
    Σ_{j≠i} H_ij² (over k directions divided by k)."""
    hessian = _hessian(_coupled, _POINT)
    op = dk.hessian_diagonal(_coupled, stochastic=DIRECTIONS, rng=np.random.default_rng(2))
    estimates = _estimates(op)
    variance = (np.sum(hessian ** 2, axis=1) - np.diag(hessian) ** 2) / DIRECTIONS
    _assert_mean(estimates, np.diag(hessian), variance)
    _assert_variance(estimates, variance)


def test_stochastic_biharmonic_mean():
    """Gaussian directions: E[D⁴_v f] = 3 Δ²f; the mean of 200 estimates is within 4 of
    its sample standard errors of the exact value."""
    exact = dk.biharmonic(_coupled)(_POINT)
    op = dk.biharmonic(_coupled, stochastic=DIRECTIONS, rng=np.random.default_rng(3))
    estimates = _estimates(op)
    _assert_mean(estimates, exact, np.var(estimates, ddof=1))


STOCHASTIC_OPERATORS = {
    "laplacian": lambda **kw: dk.laplacian(_coupled, **kw),
    "weighted_laplacian": lambda **kw: dk.weighted_laplacian(_coupled, np.eye(4)[:, :3], **kw),
    "hessian_diagonal": lambda **kw: dk.hessian_diagonal(_coupled, **kw),
    "biharmonic": lambda **kw: dk.biharmonic(_coupled, **kw),
}


@pytest.mark.parametrize("name", sorted(STOCHASTIC_OPERATORS))
def test_the_generator_is_the_only_source_of_randomness(name):
    """The same generator state gives the same estimate; the generator moves on, so the
    next call gives another one."""
    make = STOCHASTIC_OPERATORS[name]
    first = make(stochastic=3, rng=np.random.default_rng(11))
    again = make(stochastic=3, rng=np.random.default_rng(11))
    estimate = np.asarray(first(_POINT))
    np.testing.assert_array_equal(estimate, again(_POINT))
    assert np.any(np.asarray(first(_POINT)) != estimate)


def test_directions_given_by_the_caller():
    """stochastic=V: the mean of vᵀHv over the rows of V, also as an argument of a jitted
    function (where drawing from a generator is refused)."""
    hessian = _hessian(_coupled, _POINT)
    directions = np.random.default_rng(12).normal(size=(5, 4))
    expected = np.mean([v @ hessian @ v for v in directions])
    _close(dk.laplacian(_coupled, stochastic=directions)(_POINT), expected)
    expected_diagonal = np.mean([v * (hessian @ v) for v in directions], axis=0)
    _close(dk.hessian_diagonal(_coupled, stochastic=directions)(_POINT), expected_diagonal)

    def estimate(x, v):
        return dk.laplacian(_coupled, stochastic=v)(x)

    np.testing.assert_allclose(dk.jit(estimate)(_POINT, directions),
                               estimate(_POINT, directions), rtol=SAME_OPS_RTOL)
    drawing = dk.jit(dk.laplacian(_coupled, stochastic=2, rng=np.random.default_rng(0)))
    with pytest.raises(DiffkitError, match="drew random numbers"):
        drawing(_POINT)


# --- operator errors ---------------------------------------------------------------------------

_RNG = np.random.default_rng(0)

OPERATOR_ERRORS = [
    ("stochastic without rng", lambda: dk.laplacian(_f, stochastic=8), OptionError,
     r"needs rng=, a numpy.random.Generator"),
    ("rng without stochastic", lambda: dk.biharmonic(_f, rng=_RNG), OptionError,
     "rng= is used only with stochastic=k"),
    ("stochastic 0", lambda: dk.hessian_diagonal(_f, stochastic=0, rng=_RNG), OptionError,
     "positive int"),
    ("stochastic negative", lambda: dk.laplacian(_f, stochastic=-3, rng=_RNG), OptionError,
     "positive int"),
    ("stochastic float", lambda: dk.laplacian(_f, stochastic=2.5, rng=_RNG), OptionError,
     "stochastic must be"),
    ("stochastic bool", lambda: dk.laplacian(_f, stochastic=True, rng=_RNG), OptionError,
     "stochastic must be"),
    ("stochastic string", lambda: dk.biharmonic(_f, stochastic="8", rng=_RNG), OptionError,
     "stochastic must be"),
    ("legacy RandomState", lambda: dk.laplacian(_f, stochastic=2,
                                                rng=np.random.RandomState(0)),
     OptionError, "numpy.random.Generator"),
    ("seed instead of a generator", lambda: dk.laplacian(_f, stochastic=2, rng=0),
     OptionError, "numpy.random.Generator"),
    ("rng with given directions", lambda: dk.laplacian(_f, stochastic=np.ones((2, 3)),
                                                       rng=_RNG),
     OptionError, "directions already drawn"),
    ("directions of the wrong shape", lambda: dk.laplacian(_f, stochastic=np.ones((2, 4)))(_X),
     ShapeMismatchError, r"shape \(2, 4\), expected \(k,\) \+ \(3,\)"),
    ("no directions", lambda: dk.hessian_diagonal(_f, stochastic=np.ones((0, 3)))(_X),
     OptionError, "holds no directions"),
    ("sigma of the wrong shape", lambda: dk.weighted_laplacian(_f, np.ones((2, 2)))(_X),
     ShapeMismatchError, r"sigma has shape \(2, 2\), expected x.shape \+ \(R,\)"),
    ("sigma without its column axis", lambda: dk.weighted_laplacian(_f, np.ones(3))(_X),
     ShapeMismatchError, r"sigma has shape \(3,\)"),
    ("argnums tuple", lambda: dk.laplacian(_f, argnums=(0,)), InputTypeError,
     "argnums must be one int"),
    ("argnums out of range", lambda: dk.laplacian(_f, argnums=1)(_X), ArgnumsError,
     "argnums=1"),
    ("argnums negative out of range", lambda: dk.biharmonic(_f, argnums=-2)(_X),
     ArgnumsError, "argnums=-2"),
    ("hessian_diagonal of a vector", lambda: dk.hessian_diagonal(dnp.sin)(_X),
     NonScalarOutputError, "hessian_diagonal"),
    ("not callable", lambda: dk.laplacian(_f(_X)), InputTypeError, "expects a callable"),
    ("sparsity value", lambda: dk.laplacian(_f, sparsity="yes"), OptionError,
     "sparsity must be"),
]


@pytest.mark.parametrize(("label", "call", "error", "message"), OPERATOR_ERRORS,
                         ids=[e[0] for e in OPERATOR_ERRORS])
def test_operator_errors(label, call, error, message):
    with pytest.raises(error, match=message):
        call()
