"""Plain NumPy code (``import numpy as np`` only) differentiated through ``__array_function__``:
NumPy functions on traced values call the diffkit function of the same name."""

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
        dk.grad(lambda x: np.sum(np.histogram(x)[0] * x[0]))(np.ones(3))
    msg = str(excinfo.value)
    assert "np.histogram has no diffkit rule" in msg
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
