"""diffkit.compat.autograd: autograd's public API, computed by diffkit.

Every name autograd's users import exists; each operator gives autograd's documented
result on small functions, checked against closed forms (rtol 1e-7) or central finite
differences; ``extend.primitive`` rules are used, and built once per primitive; the
``install()`` switch makes ``import autograd`` resolve here and ``uninstall()`` undoes it;
integer arrays are differentiated as real ones.
"""

import subprocess
import sys
import textwrap
from collections import OrderedDict

import numpy as onp
import pytest
import scipy.linalg
import scipy.special
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import diffkit
import diffkit.compat.autograd as ag
import diffkit.compat.autograd.numpy as np
import diffkit.custom
from diffkit.compat.autograd import extend, test_util
from diffkit.compat.autograd.builtins import isinstance as ag_isinstance
from diffkit.compat.autograd.builtins import type as ag_type
from diffkit.compat.autograd.misc import flatten
from diffkit.compat.autograd.misc.optimizers import adam, rmsprop, sgd
from diffkit.compat.autograd.scipy import linalg as spla
from diffkit.compat.autograd.scipy import signal, special
from diffkit.compat.autograd.scipy.stats import norm
from diffkit.errors import NonScalarOutputError, NoRuleError

RTOL = 1e-7
FD_RTOL = 1e-5

floats = st.floats(-2.0, 2.0, allow_nan=False, allow_infinity=False)
vectors = arrays(onp.float64, st.integers(1, 5), elements=floats)


def central_difference(f, x, eps=1e-6):
    """The gradient of the scalar ``f`` at the float array ``x`` by central differences."""
    x = onp.asarray(x, dtype=float)
    grad = onp.zeros_like(x)
    for index in onp.ndindex(*x.shape):
        step = onp.zeros_like(x)
        step[index] = eps
        grad[index] = (f(x + step) - f(x - step)) / (2 * eps)
    return grad


# --- the public names -------------------------------------------------------------------

TOP_LEVEL = ["grad", "elementwise_grad", "value_and_grad", "grad_and_aux", "jacobian",
             "hessian", "hessian_tensor_product", "hessian_vector_product", "make_vjp",
             "make_jvp", "make_hvp", "make_ggnvp", "make_jvp_reversemode",
             "holomorphic_grad", "deriv", "multigrad_dict", "checkpoint", "grad_named",
             "tensor_jacobian_product", "vector_jacobian_product", "primitive", "ArrayBox",
             "tuple", "list", "dict", "isinstance", "type", "install", "uninstall"]
SUBMODULE_NAMES = {
    "extend": ["primitive", "defvjp", "defvjp_argnum", "defvjp_argnums", "defjvp",
               "defjvp_argnum", "defjvp_argnums", "def_linear", "Box", "VSpace", "vspace",
               "notrace_primitive", "SparseObject"],
    "builtins": ["tuple", "list", "dict", "isinstance", "type", "SequenceBox", "DictBox"],
    "misc": ["flatten", "const_graph"],
    "misc.optimizers": ["sgd", "rmsprop", "adam", "unflatten_optimizer"],
    "misc.flatten": ["flatten", "flatten_func"],
    "misc.fixed_points": ["fixed_point"],
    "test_util": ["check_grads", "check_vjp", "check_jvp", "check_equivalent",
                  "combo_check", "scalar_close"],
    "core": ["make_vjp", "make_jvp", "vspace", "VSpace", "defvjp", "primitive_vjps"],
    "tracer": ["Box", "isbox", "getval", "primitive", "notrace_primitive"],
    "wrap_util": ["unary_to_nary", "wraps"],
    "util": ["subvals", "subval", "func", "quick_grad_check"],
    "differential_operators": ["make_jvp_reversemode", "grad", "jacobian"],
    "numpy": ["sin", "dot", "sum", "where", "linalg", "fft", "random", "array",
              "concatenate", "einsum", "float64", "ndarray", "make_diagonal", "metadata"],
    "numpy.linalg": ["solve", "inv", "det", "slogdet", "cholesky", "eigh", "svd", "norm",
                     "T"],
    "numpy.fft": ["fft", "ifft", "rfft", "fftn"],
    "numpy.random": ["randn", "seed", "RandomState", "normal", "default_rng"],
    "numpy.numpy_boxes": ["ArrayBox"],
    "numpy.numpy_vjps": ["unbroadcast", "unbroadcast_f"],
    "numpy.numpy_vspaces": ["ArrayVSpace", "ComplexArrayVSpace"],
    "scipy.special": ["gammaln", "digamma", "polygamma", "gammainc", "gammaincc", "erf",
                      "erfinv", "expit", "logit", "logsumexp", "beta", "betainc", "i0",
                      "j0", "multigammaln", "log_ndtr"],
    "scipy.linalg": ["sqrtm", "solve_triangular", "solve_banded", "solve_sylvester",
                     "cho_factor", "cho_solve", "expm"],
    "scipy.signal": ["convolve"],
    "scipy.integrate": ["odeint"],
    "scipy.misc": ["logsumexp"],
    "scipy.stats.norm": ["pdf", "logpdf", "cdf", "logcdf", "sf", "logsf"],
    "scipy.stats.t": ["pdf", "logpdf", "cdf", "logcdf"],
    "scipy.stats.multivariate_normal": ["pdf", "logpdf", "entropy"],
    "scipy.stats.beta": ["pdf", "logpdf", "cdf"],
    "scipy.stats.gamma": ["pdf", "logpdf", "cdf"],
    "scipy.stats.chi2": ["pdf", "logpdf", "cdf"],
    "scipy.stats.poisson": ["pmf", "logpmf", "cdf"],
    "scipy.stats.dirichlet": ["pdf", "logpdf"],
}


def test_every_public_name_exists():
    import importlib

    missing = [n for n in TOP_LEVEL if not callable(getattr(ag, n, None))]
    for module, names in SUBMODULE_NAMES.items():
        loaded = importlib.import_module(f"diffkit.compat.autograd.{module}")
        missing += [f"{module}.{n}" for n in names if not hasattr(loaded, n)]
    assert not missing


# --- the differential operators ------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(vectors)
def test_grad_and_value_and_grad_match_the_closed_form(x):
    def f(x):
        return np.sum(np.sin(x) ** 2)

    onp.testing.assert_allclose(ag.grad(f)(x), onp.sin(2 * x), rtol=RTOL, atol=1e-15)
    value, gradient = ag.value_and_grad(f)(x)
    onp.testing.assert_allclose(value, onp.sum(onp.sin(x) ** 2), rtol=RTOL)
    onp.testing.assert_allclose(gradient, onp.sin(2 * x), rtol=RTOL, atol=1e-15)


@settings(max_examples=25, deadline=None)
@given(arrays(onp.int64, st.integers(1, 5), elements=st.integers(-5, 5)))
def test_integer_arrays_are_differentiated_as_real(x):
    # autograd's convention: an integer argument is a point of R^n, the gradient is float
    gradient = ag.grad(lambda x: np.sum(x ** 3.0))(x)
    assert gradient.dtype == onp.float64
    onp.testing.assert_allclose(gradient, 3.0 * x.astype(float) ** 2, rtol=RTOL)
    hazard = ag.elementwise_grad(lambda t: t ** 2.5, 0)(onp.abs(x) + 1)
    onp.testing.assert_allclose(hazard, 2.5 * (onp.abs(x) + 1.0) ** 1.5, rtol=RTOL)
    jac = ag.jacobian(lambda x: x * 2.0)(x)
    onp.testing.assert_allclose(jac, 2.0 * onp.eye(len(x)), rtol=RTOL)


def test_booleans_and_python_ints_are_real_too():
    onp.testing.assert_allclose(ag.grad(lambda x: np.sum(x * 1.5))(onp.array([True, False])),
                                [1.5, 1.5], rtol=RTOL)
    assert ag.grad(lambda x: x ** 2)(3) == pytest.approx(6.0, rel=RTOL)


def test_argnum_int_tuple_and_keywords():
    def f(x, y, scale=1.0):
        return scale * np.sum(x * y ** 2)

    x, y = onp.array([1.0, 2.0]), onp.array([3.0, -1.0])
    onp.testing.assert_allclose(ag.grad(f, 1)(x, y, scale=2.0), 4.0 * x * y, rtol=RTOL)
    gx, gy = ag.grad(f, argnum=(0, 1))(x, y)
    onp.testing.assert_allclose(gx, y ** 2, rtol=RTOL)
    onp.testing.assert_allclose(gy, 2 * x * y, rtol=RTOL)
    with pytest.raises(ValueError, match="argnum"):
        ag.grad(f, 5)(x, y)
    with pytest.raises(ValueError, match="argnum"):
        ag.grad(f, "x")


def test_grad_accepts_one_element_outputs_and_refuses_others():
    x = onp.array([0.3, -1.2])
    value, gradient = ag.value_and_grad(lambda x: np.sum(x ** 2, keepdims=True))(x)
    assert onp.shape(value) == (1,)
    onp.testing.assert_allclose(gradient, 2 * x, rtol=RTOL)
    with pytest.raises(NonScalarOutputError, match="jacobian, elementwise_grad"):
        ag.grad(lambda x: x ** 2)(x)
    with pytest.raises(TypeError):  # NonScalarOutputError is a TypeError, as autograd's
        ag.grad(lambda z: z ** 2)(1.0 + 2.0j)


def test_pytree_arguments_keep_their_structure():
    params = {"a": onp.array([1.0, 2.0]), "b": (3.0, onp.array(4.0))}
    gradient = ag.grad(lambda p: np.sum(p["a"] ** 2) * p["b"][0] + p["b"][1])(params)
    onp.testing.assert_allclose(gradient["a"], 2 * params["a"] * 3.0, rtol=RTOL)
    assert gradient["b"][0] == pytest.approx(5.0, rel=RTOL)
    assert gradient["b"][1] == pytest.approx(1.0, rel=RTOL)


@settings(max_examples=20, deadline=None)
@given(vectors)
def test_elementwise_grad_deriv_and_jacobian(x):
    onp.testing.assert_allclose(ag.elementwise_grad(np.tanh)(x), 1 / onp.cosh(x) ** 2,
                                rtol=RTOL)
    onp.testing.assert_allclose(ag.deriv(np.sin)(x), onp.cos(x), rtol=RTOL, atol=1e-15)
    matrix = onp.arange(1.0, 1.0 + 3 * len(x)).reshape(3, len(x))
    onp.testing.assert_allclose(ag.jacobian(lambda x: np.dot(matrix, x ** 2))(x),
                                matrix * 2 * x, rtol=RTOL)


@settings(max_examples=20, deadline=None)
@given(vectors, st.data())
def test_hessian_and_its_products(x, data):
    n = len(x)
    a = data.draw(arrays(onp.float64, (n, n), elements=floats))
    v = data.draw(arrays(onp.float64, (n,), elements=floats))

    def f(x):  # x^T A x + sum(x^4): Hessian A + A^T + 12 diag(x^2)
        return np.dot(x, np.dot(a, x)) + np.sum(x ** 4)

    expected = a + a.T + 12 * onp.diag(x ** 2)
    onp.testing.assert_allclose(ag.hessian(f)(x), expected, rtol=RTOL, atol=1e-12)
    onp.testing.assert_allclose(ag.hessian_tensor_product(f)(x, v), expected @ v,
                                rtol=RTOL, atol=1e-12)
    onp.testing.assert_allclose(ag.hessian_vector_product(f)(x, v), expected @ v,
                                rtol=RTOL, atol=1e-12)
    hvp, gradient = ag.make_hvp(f)(x)
    onp.testing.assert_allclose(gradient, (a + a.T) @ x + 4 * x ** 3, rtol=RTOL,
                                atol=1e-12)
    onp.testing.assert_allclose(hvp(v), expected @ v, rtol=RTOL, atol=1e-12)


def test_hessian_of_a_vector_function_has_autograd_shape():
    x = onp.array([0.5, -1.0, 2.0])
    hess = ag.hessian(lambda x: np.stack([np.sum(x ** 3), x[0] * x[1]]))(x)
    assert hess.shape == (2, 3, 3)
    onp.testing.assert_allclose(hess[0], onp.diag(6 * x), rtol=RTOL)
    onp.testing.assert_allclose(hess[1], [[0, 1, 0], [1, 0, 0], [0, 0, 0]], rtol=RTOL)


def test_make_vjp_returns_vjp_first_and_make_jvp_a_function_of_the_tangent():
    matrix = onp.array([[1.0, 2.0], [3.0, 4.0], [5.0, -6.0]])
    x, g, v = onp.array([0.1, 0.2]), onp.array([1.0, -1.0, 2.0]), onp.array([0.5, 2.0])

    def f(x):
        return np.dot(matrix, np.exp(x))

    vjp, value = ag.make_vjp(f)(x)
    onp.testing.assert_allclose(value, matrix @ onp.exp(x), rtol=RTOL)
    onp.testing.assert_allclose(vjp(g), onp.exp(x) * (matrix.T @ g), rtol=RTOL)
    onp.testing.assert_allclose(vjp(2 * g), 2 * onp.exp(x) * (matrix.T @ g), rtol=RTOL)
    value, tangent = ag.make_jvp(f)(x)(v)
    onp.testing.assert_allclose(tangent, matrix @ (onp.exp(x) * v), rtol=RTOL)
    jvp = ag.make_jvp_reversemode(f)(x)
    onp.testing.assert_allclose(jvp(v), matrix @ (onp.exp(x) * v), rtol=RTOL)
    tjp = ag.tensor_jacobian_product(f)(x, g)
    onp.testing.assert_allclose(tjp, onp.exp(x) * (matrix.T @ g), rtol=RTOL)


def test_make_ggnvp_is_j_transpose_h_j():
    matrix = onp.array([[1.0, 2.0], [3.0, 4.0], [5.0, -6.0]])
    x, v = onp.array([0.1, 0.2]), onp.array([0.5, 2.0])
    # f(x) = A x, g(y) = sum(y^2)/2 (the default): J^T H J v = A^T A v
    onp.testing.assert_allclose(ag.make_ggnvp(lambda x: np.dot(matrix, x))(x)(v),
                                matrix.T @ matrix @ v, rtol=RTOL)
    weights = onp.array([1.0, 2.0, 3.0])
    ggnvp = ag.make_ggnvp(lambda x: np.dot(matrix, x),
                          lambda y: np.sum(weights * y ** 2))(x)
    onp.testing.assert_allclose(ggnvp(v), matrix.T @ (2 * weights * (matrix @ v)),
                                rtol=RTOL)


def test_complex_conventions():
    z = 1.0 + 2.0j
    # the gradient of a real function of z is df/dx - i df/dy, as autograd's
    assert ag.grad(lambda z: np.abs(z) ** 2)(z) == pytest.approx(2 * onp.conj(z), rel=RTOL)
    assert ag.holomorphic_grad(lambda z: z ** 3)(z) == pytest.approx(3 * z ** 2, rel=RTOL)
    with pytest.warns(UserWarning, match="not complex"):
        assert ag.holomorphic_grad(lambda z: z ** 2)(1.5) == pytest.approx(3.0, rel=RTOL)


def test_grad_and_aux_grad_named_and_multigrad_dict():
    gradient, aux = ag.grad_and_aux(lambda x: (x ** 3, x + 1))(2.0)
    assert (gradient, aux) == (pytest.approx(12.0, rel=RTOL), pytest.approx(3.0))
    assert ag.grad_named(lambda a, b: a * b ** 2, "b")(3.0, 2.0) == pytest.approx(12.0)

    def f(a, b, c=4.0):
        return a * b + b * c ** 2

    grads = ag.multigrad_dict(f)(2.0, 3.0)
    assert isinstance(grads, OrderedDict) and list(grads) == ["a", "b", "c"]
    assert [grads[k] for k in "abc"] == [pytest.approx(v, rel=RTOL)
                                         for v in (3.0, 2.0 + 16.0, 2 * 3.0 * 4.0)]


def test_checkpoint_keeps_values_and_gradients():
    def block(x, power):  # the int ``power`` is static
        return np.sin(x) ** power

    checkpointed = ag.checkpoint(block)
    x = onp.array([0.3, 1.1, -0.4])
    onp.testing.assert_allclose(checkpointed(x, 2), onp.sin(x) ** 2, rtol=RTOL)
    gradient = ag.grad(lambda x: np.sum(checkpointed(checkpointed(x, 2), 3)))(x)
    s = onp.sin(x) ** 2
    onp.testing.assert_allclose(gradient, 3 * onp.sin(s) ** 2 * onp.cos(s) * onp.sin(2 * x),
                                rtol=RTOL)


# --- extend: primitives with their own rules ---------------------------------------------


class CountingConstructions:
    """Counts constructions of diffkit's custom-rule objects (``custom_vjp``/``custom_jvp``,
    what a per-call mapping of autograd's primitives would build on every call)."""

    def __init__(self, monkeypatch):
        self.built = 0
        for cls in (diffkit.custom.custom_vjp, diffkit.custom.custom_jvp):
            original = cls.__init__

            def counting(obj, *args, _original=original, **kwargs):
                self.built += 1
                _original(obj, *args, **kwargs)

            monkeypatch.setattr(cls, "__init__", counting)


def make_logsumexp(seen):
    """A primitive whose raw function records the types it receives in ``seen``."""
    @extend.primitive
    def logsumexp(x):
        seen.add(type(x))
        m = onp.max(x)
        return m + onp.log(onp.sum(onp.exp(x - m)))

    extend.defvjp(logsumexp, lambda ans, x: lambda g: g * np.exp(x - ans))
    return logsumexp


@settings(max_examples=20, deadline=None)
@given(vectors)
def test_primitive_vjp_is_used_and_raw_function_sees_plain_arrays(x):
    seen = set()
    logsumexp = make_logsumexp(seen)
    softmax = onp.exp(x - scipy.special.logsumexp(x))
    onp.testing.assert_allclose(ag.grad(logsumexp)(x), softmax, rtol=RTOL)
    # second order differentiates the VJP rule: d softmax / dx = diag(s) - s s^T
    onp.testing.assert_allclose(ag.hessian(logsumexp)(x),
                                onp.diag(softmax) - onp.outer(softmax, softmax),
                                rtol=RTOL, atol=1e-14)
    # forward mode transposes the VJP (exact: it is linear in its cotangent)
    onp.testing.assert_allclose(ag.deriv(logsumexp)(x), onp.sum(softmax), rtol=RTOL)
    assert seen <= {onp.ndarray}


def test_rules_are_built_once_per_primitive(monkeypatch):
    counter = CountingConstructions(monkeypatch)
    logsumexp = make_logsumexp(set())
    rules = logsumexp._autograd_rules
    x = onp.array([0.5, -1.0, 2.0])
    value_and_grad = ag.value_and_grad(lambda x: logsumexp(x) + logsumexp(2 * x))
    for _ in range(20):
        value, gradient = value_and_grad(x)
    ag.hessian(logsumexp)(x)
    ag.deriv(logsumexp)(x)
    assert rules.builds == 1
    assert counter.built == 0  # no custom-rule object per call: one call record each
    softmax = onp.exp(x - scipy.special.logsumexp(x))
    softmax2 = onp.exp(2 * x - scipy.special.logsumexp(2 * x))
    onp.testing.assert_allclose(gradient, softmax + 2 * softmax2, rtol=RTOL)
    # redefining the rule builds it again, once, and the new rule is the one used
    extend.defvjp(logsumexp, lambda ans, x: lambda g: 2 * g * np.exp(x - ans))
    for _ in range(5):
        value, gradient = value_and_grad(x)
    assert rules.builds == 2
    onp.testing.assert_allclose(gradient, 2 * (softmax + 2 * softmax2), rtol=RTOL)


def test_defjvp_rules_serve_both_modes():
    @extend.primitive
    def cube(x):
        return x ** 3

    extend.defjvp(cube, lambda g, ans, x: 3 * x ** 2 * g)
    x = onp.array([0.5, -2.0])
    onp.testing.assert_allclose(ag.deriv(cube)(x), 3 * x ** 2, rtol=RTOL)
    # reverse mode transposes the JVP rule
    onp.testing.assert_allclose(ag.elementwise_grad(cube)(x), 3 * x ** 2, rtol=RTOL)

    @extend.primitive
    def scale(a, x):
        return a * x

    extend.defjvp(scale, lambda g, ans, a, x: g * x, "same")
    a, x = 1.5, onp.array([2.0, -1.0])
    _, tangent = ag.make_jvp(scale, 1)(a, x)(onp.array([1.0, 1.0]))
    onp.testing.assert_allclose(tangent, [a, a], rtol=RTOL)
    onp.testing.assert_allclose(ag.grad(lambda a: np.sum(scale(a, x)))(a), onp.sum(x),
                                rtol=RTOL)


def test_argnum_forms_of_the_rules_and_zero_rules():
    def make():
        @extend.primitive
        def product(x, y, label):
            assert label == "static"
            return x * y
        return product

    x, y = 1.5, -2.0
    forms = make(), make(), make()
    extend.defvjp(forms[0], lambda ans, x, y, label: lambda g: g * y,
                  lambda ans, x, y, label: lambda g: g * x)
    extend.defvjp_argnum(forms[1], lambda argnum, ans, args, kwargs:
                         lambda g: g * args[1 - argnum])
    extend.defvjp_argnums(forms[2], lambda argnums, ans, args, kwargs:
                          lambda g: [g * args[1 - i] for i in argnums])
    for product in forms:
        gx, gy = ag.grad(product, (0, 1))(x, y, "static")
        assert (gx, gy) == (pytest.approx(y, rel=RTOL), pytest.approx(x, rel=RTOL))

    jvp_form = make()
    extend.defjvp_argnum(jvp_form, lambda argnum, g, ans, args, kwargs: g * args[1 - argnum])
    assert ag.deriv(jvp_form, 1)(x, y, "static") == pytest.approx(x, rel=RTOL)

    stopped = make()
    extend.defvjp(stopped, None, lambda ans, x, y, label: lambda g: g * x)
    assert ag.grad(stopped, 0)(x, y, "static") == 0.0
    assert ag.grad(stopped, 1)(x, y, "static") == pytest.approx(x, rel=RTOL)


def test_missing_rules_raise_not_implemented_error():
    twice = extend.primitive(lambda x: 2.0 * x)
    with pytest.raises(NotImplementedError):
        ag.grad(twice)(1.0)
    with pytest.raises(NotImplementedError):
        ag.deriv(twice)(1.0)
    partial = extend.primitive(lambda x, y: x * y)
    extend.defvjp(partial, lambda ans, x, y: lambda g: g * y)
    with pytest.raises(NoRuleError, match="argument"):
        ag.grad(partial, 1)(1.0, 2.0)
    with pytest.raises(TypeError, match="primitive"):
        extend.defvjp(onp.sin, lambda ans, x: lambda g: g)


def test_primitives_inside_jacobian_are_evaluated_per_row():
    # jacobian/hessian batch their rows (vmap): a raw function still sees plain arrays
    seen = set()

    @extend.primitive
    def clipped_exp(x):
        seen.add(type(x))
        return onp.exp(onp.clip(x, -50, 50))

    extend.defvjp(clipped_exp, lambda ans, x: lambda g: g * ans)
    x = onp.array([0.1, -0.3, 0.7])
    jac = ag.jacobian(lambda x: clipped_exp(np.outer(x, x)[0]))(x)
    expected = onp.exp(x[0] * x)[:, None] * (x[0] * onp.eye(3) + onp.outer(onp.eye(3)[0], x)
                                              .T)
    onp.testing.assert_allclose(jac, expected, rtol=RTOL)
    hess = ag.hessian(lambda x: np.sum(clipped_exp(x * x[::-1])))(x)
    onp.testing.assert_allclose(hess, hess.T, rtol=RTOL)
    onp.testing.assert_allclose(hess[1, 1], 2 * onp.exp(x[1] ** 2) * (1 + 2 * x[1] ** 2),
                                rtol=RTOL)
    # diffkit's vmap batches the primitive's arguments: the raw function runs per example
    rows = onp.array([[0.1, 0.2], [0.3, -0.4], [2.0, 1.0]])
    grads = diffkit.vmap(ag.grad(lambda r: np.sum(clipped_exp(r * r))))(rows)
    onp.testing.assert_allclose(grads, 2 * rows * onp.exp(rows ** 2), rtol=RTOL)
    onp.testing.assert_allclose(diffkit.vmap(clipped_exp)(rows), onp.exp(rows), rtol=RTOL)
    assert seen <= {onp.ndarray}


def test_unbroadcast_sums_a_cotangent_back_to_its_arguments_shape():
    from diffkit.compat.autograd.numpy.numpy_vjps import unbroadcast_f

    g = onp.arange(24.0).reshape(2, 3, 4) + 1j
    summed = unbroadcast_f(onp.ones((3, 1)), lambda g: 2 * g)(g)
    onp.testing.assert_array_equal(summed, 2 * g.real.sum(axis=(0, 2))[:, None])
    onp.testing.assert_array_equal(unbroadcast_f(1.0, lambda g: g)(g), g.real.sum())

    @extend.primitive
    def scaled(a, x):
        return a * x

    extend.defvjp(scaled, lambda ans, a, x: unbroadcast_f(a, lambda g: g * x),
                  lambda ans, a, x: unbroadcast_f(x, lambda g: g * a))
    a, x = onp.array([[2.0], [3.0]]), onp.array([1.0, -1.0, 0.5])
    ga, gx = ag.grad(lambda a, x: np.sum(scaled(a, x)), (0, 1))(a, x)
    onp.testing.assert_allclose(ga, onp.full((2, 1), x.sum()), rtol=RTOL)
    onp.testing.assert_allclose(gx, onp.full(3, a.sum()), rtol=RTOL)


def test_notrace_primitive_and_box_checks():
    shapes = []
    record = extend.notrace_primitive(lambda x: shapes.append((type(x), onp.shape(x))))

    def f(x):
        record(x)
        assert isinstance(x, ag.ArrayBox) and isinstance(x, extend.Box)
        assert ag_isinstance(x, onp.ndarray) and ag_type(x) is onp.ndarray
        assert not isinstance(x, ag.builtins.SequenceBox)
        return np.sum(x ** 2)

    onp.testing.assert_allclose(ag.grad(f)(onp.array([1.0, 2.0])), [2.0, 4.0], rtol=RTOL)
    assert shapes == [(onp.ndarray, (2,))]
    assert not isinstance(onp.ones(2), ag.ArrayBox)
    assert ag_isinstance([1.0], list) and not ag_isinstance(onp.ones(1), list)


# --- test_util, misc ----------------------------------------------------------------------


def test_check_grads_passes_true_rules_and_catches_wrong_ones():
    onp.random.seed(0)
    test_util.check_grads(lambda x, y: np.sum(np.sin(x) * y), (0, 1))(
        onp.array([0.3, 1.0]), onp.array([2.0, -1.0]))
    wrong = extend.primitive(lambda x: 2.0 * x)
    wrong.__name__ = "wrong"
    extend.defvjp(wrong, lambda ans, x: lambda g: 2.001 * g)
    with pytest.raises(AssertionError, match=r"\(VJP\) check of"):
        test_util.check_grads(wrong, modes=["rev"])(1.0)


def test_flatten_round_trips_and_is_differentiable():
    value = (1.0, onp.arange(6.0).reshape(2, 3), [onp.ones(2), {"b": 2.0, "a": onp.zeros(1)}])
    flat, unflatten = flatten(value)
    assert flat.shape == (11,)
    # dict items in sorted key order, as autograd
    onp.testing.assert_array_equal(flat, onp.r_[1.0, onp.arange(6.0), 1.0, 1.0, 0.0, 2.0])
    rebuilt = unflatten(flat)
    onp.testing.assert_array_equal(flatten(rebuilt)[0], flat)
    assert rebuilt[2][1]["b"] == 2.0 and rebuilt[1].shape == (2, 3)
    gradient = ag.grad(lambda v: np.sum(unflatten(v)[1] ** 2))(flat)
    onp.testing.assert_allclose(gradient, onp.r_[0.0, 2 * onp.arange(6.0), 0, 0, 0, 0],
                                rtol=RTOL)


@pytest.mark.parametrize("optimizer, options", [
    (adam, {"step_size": 0.1, "num_iters": 150}),
    (sgd, {"step_size": 0.5, "num_iters": 150}),
    (rmsprop, {"step_size": 0.05, "num_iters": 150}),
])
def test_optimizers_find_the_minimum_of_a_quadratic(optimizer, options):
    target = {"w": onp.array([1.0, -2.0]), "b": 0.5}

    def loss(params, i):
        return np.sum((params["w"] - target["w"]) ** 2) + (params["b"] - target["b"]) ** 2

    calls = []
    result = optimizer(ag.grad(loss), {"w": onp.zeros(2), "b": 0.0},
                       callback=lambda x, i, g: calls.append(i), **options)
    assert calls == list(range(options["num_iters"]))
    onp.testing.assert_allclose(result["w"], target["w"], atol=2e-2)
    assert result["b"] == pytest.approx(target["b"], abs=2e-2)


def test_fixed_point_is_differentiated_by_the_implicit_function_theorem():
    from diffkit.compat.autograd.misc.fixed_points import fixed_point

    def newton_sqrt(a):  # x <- (x + a/x)/2 converges to sqrt(a)
        return fixed_point(lambda a: lambda x: 0.5 * (x + a / x), a, 1.0,
                           lambda x, y: np.abs(x - y), 1e-15)

    assert newton_sqrt(2.0) == pytest.approx(onp.sqrt(2.0), rel=RTOL)
    assert ag.grad(newton_sqrt)(2.0) == pytest.approx(0.5 / onp.sqrt(2.0), rel=RTOL)
    assert ag.grad(ag.grad(newton_sqrt))(2.0) == pytest.approx(-0.25 * 2.0 ** -1.5, rel=RTOL)


def test_const_graph_replays_the_recorded_primitives():
    from diffkit.compat.autograd.misc import const_graph

    calls = []

    @extend.primitive
    def logged(x, label):
        calls.append(label)
        return x

    def f(x, y, z):
        return np.sin(logged(x, "x")) * logged(y, "y") + logged(z, "z") ** 2

    replayed = const_graph(f, 0.5, z=3.0)
    for y in (2.0, -1.5, 4.0):
        assert replayed(y) == pytest.approx(onp.sin(0.5) * y + 9.0, rel=RTOL)
    # the first call runs f; the replays run only what depends on the new argument
    assert calls == ["x", "y", "z", "y", "y"]


def test_where_keeps_autograds_python_in_python_out_rule():
    assert np.where(True, 1, 2) == 1 and type(np.where(True, 1, 2)) is int
    assert np.where(False, [1, 2], [3, 4]) == [3, 4]
    onp.testing.assert_array_equal(np.where([True, False], x=onp.ones(2), y=onp.zeros(2)),
                                   [1.0, 0.0])


# --- autograd.scipy ------------------------------------------------------------------------


@settings(max_examples=15, deadline=None)
@given(arrays(onp.float64, st.integers(1, 4), elements=st.floats(0.2, 5.0)))
def test_scipy_special_and_stats_derivatives(x):
    onp.testing.assert_allclose(ag.elementwise_grad(special.gammaln)(x),
                                scipy.special.digamma(x), rtol=RTOL)
    onp.testing.assert_allclose(ag.elementwise_grad(norm.logpdf)(x), -x, rtol=RTOL)
    mu_grad = ag.grad(lambda mu: np.sum(norm.logpdf(x, mu, 2.0)))(0.3)
    assert mu_grad == pytest.approx(onp.sum(x - 0.3) / 4.0, rel=RTOL)


@pytest.mark.parametrize("mode", ["full", "valid", "same"])
@pytest.mark.parametrize("n, m", [(6, 3), (3, 6), (5, 4)])
def test_signal_convolve_matches_numpy_and_finite_differences(mode, n, m):
    rng = onp.random.default_rng(n * 10 + m)
    a, b = rng.standard_normal(n), rng.standard_normal(m)
    expected = onp.convolve(a, b, mode="full")
    start = {"full": 0, "valid": min(n, m) - 1, "same": (m - 1) // 2}[mode]
    size = {"full": n + m - 1, "valid": abs(n - m) + 1, "same": n}[mode]
    onp.testing.assert_allclose(signal.convolve(a, b, mode=mode),
                                expected[start:start + size], rtol=RTOL, atol=1e-14)
    weights = rng.standard_normal(size)

    def loss(a):
        return np.sum(weights * signal.convolve(a, b, mode=mode))

    onp.testing.assert_allclose(ag.grad(loss)(a), central_difference(loss, a),
                                rtol=FD_RTOL, atol=1e-8)


def test_signal_convolve_over_axes_with_dot_axes():
    rng = onp.random.default_rng(0)
    a, b = rng.standard_normal((2, 5, 3)), rng.standard_normal((3, 4, 2))
    out = signal.convolve(a, b, axes=([1], [1]), dot_axes=([2], [0]))
    assert out.shape == (2, 2, 8)   # A's rest, B's rest, convolved
    for i in range(2):
        for j in range(2):
            expected = sum(onp.convolve(a[i, :, k], b[k, :, j]) for k in range(3))
            onp.testing.assert_allclose(out[i, j], expected, rtol=RTOL, atol=1e-13)


def test_solve_banded_matches_the_dense_solve_and_its_gradient():
    rng = onp.random.default_rng(1)
    n, lower, upper = 5, 1, 2
    ab = rng.standard_normal((lower + upper + 1, n))
    ab[upper] += 4.0  # diagonally dominant
    dense = onp.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if -upper <= i - j <= lower:
                dense[i, j] = ab[upper + i - j, j]
    b, weights = rng.standard_normal(n), rng.standard_normal(n)
    onp.testing.assert_allclose(spla.solve_banded((lower, upper), ab, b),
                                scipy.linalg.solve(dense, b), rtol=RTOL)
    x = scipy.linalg.solve(dense, b)
    adjoint = scipy.linalg.solve(dense.T, weights)

    def loss(ab, b):
        return np.sum(weights * spla.solve_banded((lower, upper), ab, b))

    onp.testing.assert_allclose(ag.grad(loss, 1)(ab, b), adjoint, rtol=RTOL)
    grad_ab = ag.grad(loss, 0)(ab, b)
    for r in range(lower + upper + 1):
        for j in range(n):
            i = j + r - upper
            want = -adjoint[i] * x[j] if 0 <= i < n else 0.0
            assert grad_ab[r, j] == pytest.approx(want, rel=RTOL, abs=1e-14)


# --- the one-line switch --------------------------------------------------------------------


def run_python(code):
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_install_resolves_import_autograd_here_and_uninstall_undoes_it():
    out = run_python("""
        import sys, types
        import diffkit.compat.autograd as compat

        # a real autograd imported first: install() refuses to mix the two
        sys.modules["autograd"] = types.ModuleType("autograd")
        try:
            compat.install()
        except ImportError as error:
            print("refused:", "before anything imports autograd" in str(error),
                  compat.installed())
        del sys.modules["autograd"]

        compat.install()
        import autograd
        import autograd.numpy as anp
        from autograd.extend import primitive, defvjp
        from autograd.scipy.special import expit
        from autograd.numpy.numpy_boxes import ArrayBox
        import autograd.numpy.linalg as linalg_module
        assert autograd is compat and anp is compat.numpy and compat.installed()
        assert linalg_module is compat.numpy.linalg and ArrayBox is compat.ArrayBox
        assert primitive is compat.extend.primitive and expit is compat.scipy.special.expit
        print(autograd.grad(lambda x: anp.sum(x ** 2))(anp.array([1, 2])).tolist())
        try:
            import autograd.no_such_module
        except ModuleNotFoundError as error:
            print("missing:", "no counterpart" in str(error))
        compat.uninstall()
        assert not compat.installed()
        assert not [m for m in sys.modules if m == "autograd" or m.startswith("autograd.")]
        try:
            import autograd  # noqa: F811
            print("after:", autograd is compat)
        except ModuleNotFoundError:
            print("after: not found")
    """)
    lines = out.splitlines()
    assert lines[:3] == ["refused: True False", "[2.0, 4.0]", "missing: True"]
    assert lines[3] in ("after: False", "after: not found")
