"""diffkit.scipy.integrate.quad and quad_vec: SciPy's integrals, differentiable in their
limits and in the parameters passed through args. Values and derivatives against closed
forms, forward against reverse mode, vmap against a loop."""

import inspect

import numpy as np
import pytest
import scipy.integrate as si

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.errors import EscapedTracerError, NoRuleError
from diffkit.scipy.integrate import quad, quad_vec

TIGHT = {"epsabs": 1e-13, "epsrel": 1e-13}
SQRT2PI = np.sqrt(2 * np.pi)


def gaussian_moment(k):
    """The k-th moment of exp(-x^2 / (2 s^2)) over the real line, as a function of s."""
    return lambda s: quad(lambda x, s: x ** k * dnp.exp(-x * x / (2 * s * s)), -np.inf,
                          np.inf, args=(s,), **TIGHT)[0]


@pytest.mark.parametrize("k, value, slope", [
    (0, lambda s: SQRT2PI * s, lambda s: SQRT2PI),
    (2, lambda s: SQRT2PI * s ** 3, lambda s: 3 * SQRT2PI * s ** 2),
    (4, lambda s: 3 * SQRT2PI * s ** 5, lambda s: 15 * SQRT2PI * s ** 4),
])
def test_gaussian_moments_and_their_derivatives(k, value, slope):
    moment, s = gaussian_moment(k), 1.3
    np.testing.assert_allclose(moment(s), value(s), rtol=1e-7)
    np.testing.assert_allclose(dk.grad(moment)(s), slope(s), rtol=1e-7)
    np.testing.assert_allclose(dk.jvp(moment, (s,), (1.0,))[1], slope(s), rtol=1e-7)


def gaussian_integral(p):
    return quad(lambda x, p: dnp.exp(-p * x * x), -np.inf, np.inf, args=(p,), **TIGHT)[0]


def test_derivatives_in_p_of_the_gaussian_integral():
    # int exp(-p x^2) dx = sqrt(pi / p): first and second derivatives in closed form
    p = 2.0
    first = -0.5 * np.sqrt(np.pi) * p ** -1.5
    second = 0.75 * np.sqrt(np.pi) * p ** -2.5
    np.testing.assert_allclose(gaussian_integral(p), np.sqrt(np.pi / p), rtol=1e-7)
    reverse = dk.grad(gaussian_integral)(p)
    forward = dk.jvp(gaussian_integral, (p,), (1.0,))[1]
    np.testing.assert_allclose(reverse, first, rtol=1e-7)
    np.testing.assert_allclose(forward, reverse, rtol=1e-10)
    np.testing.assert_allclose(dk.grad(dk.grad(gaussian_integral))(p), second, rtol=1e-7)
    np.testing.assert_allclose(dk.jacfwd(dk.jacrev(gaussian_integral))(p), second, rtol=1e-7)


def test_limits_by_the_leibniz_rule():
    a, b = 0.4, 1.7
    integral = lambda a, b: quad(lambda x: dnp.sin(x), a, b, **TIGHT)[0]  # noqa: E731
    np.testing.assert_allclose(integral(a, b), np.cos(a) - np.cos(b), rtol=1e-7)
    da, db = dk.grad(integral, argnums=(0, 1))(a, b)
    np.testing.assert_allclose([da, db], [-np.sin(a), np.sin(b)], rtol=1e-7)
    np.testing.assert_allclose(dk.jvp(integral, (a, b), (1.0, 2.0))[1],
                               -np.sin(a) + 2 * np.sin(b), rtol=1e-7)
    # second derivative in the upper limit: d/db sin(b) = cos(b)
    np.testing.assert_allclose(dk.grad(dk.grad(integral, argnums=1), argnums=1)(a, b),
                               np.cos(b), rtol=1e-7)


def test_limits_and_parameters_together():
    # int_0^b exp(-p x) dx = (1 - exp(-p b)) / p
    def integral(b, p):
        return quad(lambda x, p: dnp.exp(-p * x), 0.0, b, args=(p,), **TIGHT)[0]

    def closed(b, p):
        return (1 - dnp.exp(-p * b)) / p

    b, p = 1.5, 0.7
    for argnums in (0, 1):
        np.testing.assert_allclose(dk.grad(integral, argnums)(b, p),
                                   dk.grad(closed, argnums)(b, p), rtol=1e-7)
    hessian = dk.hessian(lambda v: integral(v[0], v[1]))(np.array([b, p]))
    expected = dk.hessian(lambda v: closed(v[0], v[1]))(np.array([b, p]))
    np.testing.assert_allclose(hessian, expected, rtol=1e-7)


def test_an_infinite_limit_does_not_move():
    # int_a^inf exp(-x) dx = exp(-a): only the finite limit's Leibniz term counts
    integral = lambda a: quad(lambda x: dnp.exp(-x), a, np.inf, **TIGHT)[0]  # noqa: E731
    np.testing.assert_allclose(dk.grad(integral)(0.5), -np.exp(-0.5), rtol=1e-7)
    # in the parameter, over an infinite interval: int_0^inf exp(-p x) dx = 1 / p
    rate = lambda p: quad(lambda x, p: dnp.exp(-p * x), 0.0, np.inf, args=(p,),  # noqa: E731
                          **TIGHT)[0]
    np.testing.assert_allclose(dk.grad(rate)(2.0), -0.25, rtol=1e-7)


def test_several_parameters_and_a_pytree_of_args():
    # int_0^1 (a x + c x^2) dx = a / 2 + c / 3, args as a dict of arrays
    def integral(params):
        return quad(lambda x, q: q["a"][0] * x + q["c"] * x * x, 0.0, 1.0, args=(params,),
                    **TIGHT)[0]

    params = {"a": np.array([2.0]), "c": np.array(3.0)}
    grads = dk.grad(integral)(params)
    np.testing.assert_allclose(grads["a"], [0.5], rtol=1e-7)
    np.testing.assert_allclose(grads["c"], 1 / 3, rtol=1e-7)


def test_quad_vec_value_jacobian_forward_and_reverse():
    # f(x, p) = [exp(-p x^2), x^2 exp(-p x^2)] over the real line:
    # [sqrt(pi/p), sqrt(pi)/(2 p^1.5)]
    def integral(p):
        return quad_vec(lambda x, p: dnp.stack([dnp.exp(-p * x * x),
                                                x * x * dnp.exp(-p * x * x)]),
                        -np.inf, np.inf, epsabs=1e-13, epsrel=1e-12, args=(p,))[0]

    p = 1.5
    np.testing.assert_allclose(integral(p), [np.sqrt(np.pi / p),
                                             np.sqrt(np.pi) / (2 * p ** 1.5)], rtol=1e-7)
    expected = [-0.5 * np.sqrt(np.pi) * p ** -1.5, -0.75 * np.sqrt(np.pi) * p ** -2.5]
    np.testing.assert_allclose(dk.jacfwd(integral)(p), expected, rtol=1e-7)
    np.testing.assert_allclose(dk.jacrev(integral)(p), expected, rtol=1e-7)


def test_vmap_over_parameters_equals_a_loop():
    ps = np.array([0.5, 1.0, 2.0, 4.0])
    np.testing.assert_allclose(dk.vmap(gaussian_integral)(ps),
                               [gaussian_integral(p) for p in ps], rtol=1e-12)
    batched = dk.vmap(dk.grad(gaussian_integral))(ps)
    np.testing.assert_allclose(batched, [dk.grad(gaussian_integral)(p) for p in ps],
                               rtol=1e-12)
    np.testing.assert_allclose(batched, -0.5 * np.sqrt(np.pi) * ps ** -1.5, rtol=1e-7)
    # a batch of upper limits
    upper = dk.vmap(lambda b: quad(lambda x: dnp.cos(x), 0.0, b)[0])
    np.testing.assert_allclose(dk.grad(lambda bs: dnp.sum(upper(bs)))(ps), np.cos(ps),
                               rtol=1e-7)


def test_jit_replays_the_integral_at_new_parameters():
    staged = dk.jit(gaussian_integral)
    for p in (1.0, 3.0):
        np.testing.assert_allclose(staged(p), np.sqrt(np.pi / p), rtol=1e-7)
    np.testing.assert_allclose(dk.grad(staged)(3.0), -0.5 * np.sqrt(np.pi) * 3.0 ** -1.5,
                               rtol=1e-7)


def test_results_are_scipys():
    f = lambda x, p: np.exp(-p * x * x)  # noqa: E731
    ours = quad(f, 0.0, 2.0, args=(1.5,), full_output=1)
    theirs = si.quad(f, 0.0, 2.0, args=(1.5,), full_output=1)
    assert len(ours) == len(theirs)
    assert ours[0] == theirs[0] and ours[1] == theirs[1]
    assert ours[2]["neval"] == theirs[2]["neval"]
    # traced: the value carries the derivative, the error estimate and the info stay
    traced = dk.jvp(lambda p: quad(f, 0.0, 2.0, args=(p,), full_output=1), (1.5,), (1.0,),
                    has_aux=False)
    np.testing.assert_allclose(traced[0][0], theirs[0], rtol=1e-14)
    res, err, info = quad_vec(lambda x: np.array([x, x * x]), 0.0, 1.0, full_output=True)
    np.testing.assert_allclose(res, [0.5, 1 / 3], rtol=1e-12)
    assert info.success
    assert list(inspect.signature(quad).parameters)[:4] == ["func", "a", "b", "args"]
    assert inspect.signature(dk.scipy.integrate.quad_vec).parameters["args"].kind \
        is inspect.Parameter.KEYWORD_ONLY


def test_closures_differentiate_like_args():
    def closed(p):
        width = 1.0 / p   # a value computed from the traced one, closed over
        return quad(lambda x: dnp.exp(-x * x / width), -np.inf, np.inf, **TIGHT)[0]

    p, ps = 2.0, np.array([0.5, 1.0, 2.0])
    np.testing.assert_allclose(dk.grad(closed)(p), dk.grad(gaussian_integral)(p), rtol=1e-10)
    np.testing.assert_allclose(dk.jvp(closed, (p,), (1.0,))[1],
                               dk.grad(gaussian_integral)(p), rtol=1e-10)
    np.testing.assert_allclose(dk.grad(dk.grad(closed))(p),
                               0.75 * np.sqrt(np.pi) * p ** -2.5, rtol=1e-7)
    np.testing.assert_allclose(dk.vmap(dk.grad(closed))(ps),
                               -0.5 * np.sqrt(np.pi) * ps ** -1.5, rtol=1e-7)
    np.testing.assert_allclose(dk.jit(dk.grad(closed))(3.0),
                               -0.5 * np.sqrt(np.pi) * 3.0 ** -1.5, rtol=1e-7)
    # closed over with args and a traced limit together: int_0^b c exp(-p x) dx
    both = lambda c, p, b: quad(lambda x, p: c * dnp.exp(-p * x), 0.0, b,  # noqa: E731
                                args=(p,), **TIGHT)[0]
    closed_form = lambda c, p, b: c * (1 - dnp.exp(-p * b)) / p  # noqa: E731
    np.testing.assert_allclose(dk.grad(both, argnums=(0, 1, 2))(1.5, 0.7, 2.0),
                               dk.grad(closed_form, argnums=(0, 1, 2))(1.5, 0.7, 2.0),
                               rtol=1e-7)


def test_a_closure_with_python_branches_on_x_is_an_error():
    with pytest.raises(EscapedTracerError, match="args"):
        dk.grad(lambda p: quad(lambda x: p * x if x > 0.5 else p, 0.0, 1.0)[0])(1.0)


def test_a_weight_is_not_differentiated():
    with pytest.raises(NoRuleError, match="weight"):
        dk.grad(lambda p: quad(lambda x, p: p * x, 0.0, 1.0, args=(p,), weight="cos",
                               wvar=2.0)[0])(1.0)
    # without a traced value SciPy's weighted integral is returned
    np.testing.assert_allclose(quad(lambda x: x, 0.0, 1.0, weight="cos", wvar=2.0)[0],
                               si.quad(lambda x: x, 0.0, 1.0, weight="cos", wvar=2.0)[0])
