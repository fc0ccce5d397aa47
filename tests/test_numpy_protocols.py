"""Plain NumPy code (``import numpy as np`` only) differentiated through ``__array_function__``:
NumPy functions on traced values call the diffkit function of the same name."""

import warnings

import numpy as np
import pytest

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.errors import NoRuleError
from diffkit.testing import check_grads

RNG = np.random.default_rng(0)


def finite_difference_grad(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


# --- a Gaussian log-likelihood ------------------------------------------------------------

Y = RNG.normal(size=3)


def gaussian_loglik_np(L):
    cov = L @ L.T + 3.0 * np.eye(3)
    _, logdet = np.linalg.slogdet(cov)
    alpha = np.linalg.solve(cov, Y)
    return -0.5 * (np.sum(Y * alpha) + logdet + 3 * np.log(2 * np.pi))


def gaussian_loglik_dnp(L):
    cov = L @ L.T + 3.0 * dnp.eye(3)
    _, logdet = dnp.linalg.slogdet(cov)
    alpha = dnp.linalg.solve(cov, Y)
    return -0.5 * (dnp.sum(Y * alpha) + logdet + 3 * dnp.log(2 * dnp.pi))


def test_gaussian_loglik_gradient():
    L = RNG.normal(size=(3, 3))
    g = dk.grad(gaussian_loglik_np)(L)
    np.testing.assert_allclose(g, dk.grad(gaussian_loglik_dnp)(L), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(g, finite_difference_grad(gaussian_loglik_np, L), rtol=1e-6,
                               atol=1e-8)


# --- tensordot (autograd silently returns zero here) ----------------------------------------

def test_tensordot_true_gradient():
    A = RNG.normal(size=(3, 4))

    def f(x):
        return np.sum(np.tensordot(x, A, axes=1) ** 2)

    x = RNG.normal(size=3)
    g = dk.grad(f)(x)
    np.testing.assert_allclose(g, 2 * A @ (x @ A), rtol=1e-12)
    assert np.any(g != 0)


# --- a heat-equation residual ----------------------------------------------------------------

def heat_residual(u):
    dx = 0.1
    left = np.concatenate([np.zeros(1), u[:-1]])
    right = np.concatenate([u[1:], np.zeros(1)])
    return (left - 2 * u + right) / dx**2 - np.sin(u)


def test_heat_residual_jacobians_agree():
    u = RNG.normal(size=6)
    jf = dk.jacfwd(heat_residual)(u)
    jr = dk.jacrev(heat_residual)(u)
    np.testing.assert_allclose(jf, jr, rtol=1e-12, atol=1e-12)
    expected = (np.diag(-2 * np.ones(6)) + np.diag(np.ones(5), 1) + np.diag(np.ones(5), -1))
    np.testing.assert_allclose(jf, expected / 0.01 - np.diag(np.cos(u)), rtol=1e-10)


# --- einsum, stack, mean, where --------------------------------------------------------------

def test_einsum_stack_mean_where():
    B = RNG.normal(size=(4, 4))

    def f(x):
        quad = np.einsum("i,ij,j->", x, B, x)
        m = np.mean(np.stack([x, x**2]), axis=0)
        return quad + np.sum(np.where(x > 0, m, -m), dtype=None)

    def f_dnp(x):
        quad = dnp.einsum("i,ij,j->", x, B, x)
        m = dnp.mean(dnp.stack([x, x**2]), axis=0)
        return quad + dnp.sum(dnp.where(x > 0, m, -m))

    x = RNG.normal(size=4)
    g = dk.grad(f)(x)
    np.testing.assert_allclose(g, dk.grad(f_dnp)(x), rtol=1e-12)
    np.testing.assert_allclose(g, finite_difference_grad(f, x), rtol=1e-6, atol=1e-8)


# --- fft of a real input inside a real loss --------------------------------------------------

def test_fft_real_loss():
    def f(x):
        spectrum = np.fft.fft(x)
        return np.sum(np.abs(spectrum) ** 2)

    x = RNG.normal(size=8)
    g = dk.grad(f)(x)
    # Parseval: sum |fft(x)|^2 = n sum x^2
    np.testing.assert_allclose(g, 2 * 8 * x, rtol=1e-10)
    np.testing.assert_allclose(g, finite_difference_grad(f, x), rtol=1e-6)


# --- harmless NumPy keywords are dropped -----------------------------------------------------

def test_harmless_keywords_and_methods():
    def f(x):
        return (np.sum(x, axis=0, out=None, dtype=None) + np.prod(x, where=True)
                + x.sum(dtype=None, out=None) + x.mean(out=None) + x.max(out=None)
                + x.min(axis=0, out=None) + x.prod(dtype=None))

    x = RNG.normal(size=3) + 2
    np.testing.assert_allclose(dk.grad(f)(x), finite_difference_grad(f, x), rtol=1e-6)


def test_keyword_that_changes_result_raises():
    # (np.sum's initial= has a rule now; concatenate's dtype= would change the result)
    with pytest.raises(NoRuleError, match=r"concatenate\(\) does not support the keyword dtype"):
        dk.grad(lambda x: np.sum(np.concatenate([x, x], dtype=np.float32)))(np.ones(3))


# --- no rule ---------------------------------------------------------------------------------

def test_unsupported_function_names_itself():
    with pytest.raises(NoRuleError) as excinfo:
        dk.grad(lambda x: np.sum(np.histogramdd(np.stack([x, x], 1))[0] * x[0]))(np.ones(3))
    msg = str(excinfo.value)
    assert "np.histogramdd has no diffkit rule" in msg
    assert "dk.custom_vjp" in msg and "dk.custom_jvp" in msg


# --- foreign array types keep their own dispatch ---------------------------------------------

class Foreign:
    def __init__(self, value):
        self.value = value

    def __array_function__(self, func, types, args, kwargs):
        return ("foreign", func.__name__)


def test_foreign_type_dispatch_runs():
    seen = []

    def f(x):
        seen.append(np.concatenate([x, Foreign(1.0)]))
        return np.sum(x)

    dk.grad(f)(np.ones(3))
    assert seen == [("foreign", "concatenate")]


# --- ufunc methods: reduce, accumulate, outer --------------------------------------------

_X2 = np.array([[0.5, -1.25, 2.0], [1.5, 0.75, -0.5]])
UFUNC_METHODS = [
    (np.add, "reduce", {}), (np.add, "reduce", {"axis": None}),
    (np.add, "reduce", {"axis": 1, "keepdims": True}), (np.add, "reduce", {"initial": 2.0}),
    (np.multiply, "reduce", {"axis": 1}), (np.maximum, "reduce", {"axis": 1}),
    (np.minimum, "reduce", {}), (np.logaddexp, "reduce", {"axis": 0}),
    (np.add, "accumulate", {"axis": 1}), (np.multiply, "accumulate", {}),
]


@pytest.mark.parametrize("ufunc, method, kwargs", UFUNC_METHODS,
                         ids=[f"{u.__name__}.{m}{sorted(k)}" for u, m, k in UFUNC_METHODS])
def test_ufunc_methods_match_numpy_and_differentiate(ufunc, method, kwargs):
    def f(x):
        return getattr(ufunc, method)(x, **kwargs)

    out, _ = dk.vjp(f, _X2)
    np.testing.assert_allclose(out, getattr(ufunc, method)(_X2, **kwargs), rtol=1e-15)
    check_grads(f, (_X2,), order=2)
    np.testing.assert_allclose(dk.jacfwd(f)(_X2), dk.jacrev(f)(_X2), rtol=1e-12)


def test_ufunc_outer_is_broadcasting():
    a, b = np.array([1.0, 2.0, 3.0]), np.array([[0.5, -1.0], [2.0, 4.0]])
    jac_a, jac_b = dk.jacfwd(lambda a, b: np.subtract.outer(a, b), argnums=(0, 1))(a, b)
    # out[i, j, k] = a[i] - b[j, k]
    np.testing.assert_allclose(jac_a, np.broadcast_to(np.eye(3)[:, None, None, :], (3, 2, 2, 3)))
    np.testing.assert_allclose(jac_b, -np.broadcast_to(np.eye(4).reshape(2, 2, 2, 2),
                                                       (3, 2, 2, 2, 2)))
    check_grads(lambda a, b: np.multiply.outer(a, b), (a, b), order=2)


@pytest.mark.parametrize("call, fix", [
    (lambda x: np.maximum.accumulate(x), "np.cumsum"),
    (lambda x: np.add.reduceat(x, [0, 2]), "custom_vjp"),
    (lambda x: np.add.reduce(x, where=x > 0), "np.where"),
    (lambda x: np.add.reduce(x, dtype=np.float32), "astype"),
])
def test_ufunc_methods_without_a_rule_say_what_to_do(call, fix):
    with pytest.raises(NoRuleError, match=fix.replace(".", r"\.")):
        dk.grad(lambda x: np.sum(call(x)))(np.array([1.0, -2.0, 3.0]))


# --- stacking one traced array (issue 10, item 4): NumPy iterates over its first axis -------

STACKERS = ["vstack", "hstack", "dstack", "column_stack", "stack", "concatenate", "block"] + \
    (["row_stack"] if hasattr(np, "row_stack") else [])
T3 = RNG.normal(size=(3, 2, 2))


def _stack_program(name, ndim):
    fn = getattr(np, name)
    weights = np.cos(np.arange(1.0, 40.0))

    def f(x):   # plain NumPy: the stacking function gets one (traced) array
        out = fn(np.sin(x))
        return np.sum(out * weights[:out.size].reshape(out.shape))
    return f


@pytest.mark.parametrize("ndim", [1, 2, 3])
@pytest.mark.parametrize("name", STACKERS)
def test_stacking_one_traced_array(name, ndim):
    x = T3[(0,) * (3 - ndim)]
    f = _stack_program(name, ndim)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)   # np.row_stack
        if name == "concatenate" and ndim == 1:   # it would join 0-d arrays: NumPy refuses
            with pytest.raises(ValueError, match="zero-dimensional"):
                f(x)
            with pytest.raises(ValueError, match="zero-dimensional"):
                dk.grad(f)(x)
            return
        value = f(x)   # the NumPy function itself on plain arrays
        expected = finite_difference_grad(f, x)
        np.testing.assert_allclose(dk.grad(f)(x), expected, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(dk.jacfwd(f)(x), expected, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(dk.vmap(f)(np.stack([x, 2 * x])), [value, f(2 * x)],
                                   rtol=1e-12)
        hessian = dk.hessian(f)(x)
        np.testing.assert_allclose(hessian, dk.jacrev(dk.jacrev(f))(x), rtol=1e-12, atol=1e-14)


# --- np.r_ and np.c_ with traced values (issue 10, item 5) -----------------------------------

V = np.array([0.4, -1.1])

# keys with a traced vector t: each is checked against NumPy's own r_/c_ on plain values
R_KEYS = {
    "arrays and scalars": lambda r, t: r[t, 1.5, [2.0, t[0]], np.array([3.0])],
    "slice as arange": lambda r, t: r[t, 0:3],
    "slice with step": lambda r, t: r[1:2:0.25, t],
    "slice as linspace": lambda r, t: r[t, -1:1:5j],
    "traced linspace ends": lambda r, t: r[t[0]:t[1]:4j],
    "traced arange start": lambda r, t: r[t[0]:3.0:0.5],
    "axis directive": lambda r, t: r["0", t, t * 2],
    "ndmin directive": lambda r, t: r["0,2", t, t ** 2],
    "trans1d directive": lambda r, t: r["0,2,0", t, [1.0, 2.0]],
    "second axis": lambda r, t: r["1,2,1", t, np.array([5.0, 6.0])],
    "last axis": lambda r, t: r["-1", np.ones((2, 2)) * t, np.eye(2)],
    "three dims": lambda r, t: r["0,3,-1", t, [[7.0, 8.0]]],
    "0-d traced": lambda r, t: r[t[0], 2.0, t[1]],
}
C_KEYS = {
    "columns": lambda c, t: c[t, t * 2],
    "matrix and column": lambda c, t: c[np.ones((2, 2)), t],
    "scalars": lambda c, t: c[t[None, :], 1.0, 2.0],
    "slice": lambda c, t: c[t, 0:2],
}


def _concatenator_case(build, concatenator):
    weights = np.cos(np.arange(1.0, 40.0))

    def f(t):
        out = build(concatenator, np.tanh(t))
        return np.sum(out * weights[:out.size].reshape(out.shape))
    return f


@pytest.mark.parametrize(
    "which, build", [("r_", b) for b in R_KEYS.values()] + [("c_", b) for b in C_KEYS.values()],
    ids=[f"r_-{k}" for k in R_KEYS] + [f"c_-{k}" for k in C_KEYS])
def test_r_and_c_with_traced_values(which, build):
    f = _concatenator_case(build, getattr(np, which))
    # values and shapes equal NumPy's own on plain arrays, with dnp.r_ / dnp.c_ too
    traced_out = dk.jvp(lambda t: build(getattr(np, which), t), (V,), (V,))[0]
    plain_out = build(getattr(np, which), V)
    assert traced_out.shape == plain_out.shape
    np.testing.assert_allclose(traced_out, plain_out, rtol=1e-12)
    assert dnp.r_ is np.r_ and dnp.c_ is np.c_
    expected = finite_difference_grad(f, V)
    np.testing.assert_allclose(dk.grad(f)(V), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(dk.jacfwd(f)(V), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(dk.hessian(f)(V), dk.jacfwd(dk.jacfwd(f))(V), rtol=1e-12,
                               atol=1e-14)


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")   # NumPy's np.matrix
def test_r_matrix_directives_give_the_matrix_shape():
    for directive, shape in (("r", (1, 4)), ("c", (4, 1))):
        out = dk.jvp(lambda t, directive=directive: np.r_[directive, t, t], (V,), (V,))[1]
        assert out.shape == shape == np.r_[directive, V, V].shape
        np.testing.assert_array_equal(out, np.asarray(np.r_[directive, V, V]))


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
def test_r_under_vmap_and_errors():
    xs = RNG.normal(size=(3, 2))
    np.testing.assert_allclose(dk.vmap(lambda t: np.r_[t, 1.0])(xs),
                               [np.r_[x, 1.0] for x in xs], rtol=1e-12)
    with pytest.raises(ValueError, match="first entry"):
        dk.grad(lambda t: np.sum(np.r_[t, "0"]))(V)
    # plain keys are NumPy's own code path, np.matrix included
    assert type(np.r_["r", [1, 2]]) is np.matrix
    assert dnp.s_[1:3] == np.s_[1:3] and dnp.index_exp[1] == np.index_exp[1]
