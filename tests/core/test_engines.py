"""The engines on toy scalar primitives, with no NumPy namespace involved.

If these fail, the bug is in the engines (trace, forward, reverse, batching, api), not in
an op's rules.
"""

import math

import numpy as np
import pytest

import diffkit as dk
from diffkit.core.primitive import Primitive
from diffkit.core.trace import current_level

# Scalar primitives on Python floats (and elementwise on arrays), rules in themselves.
mul = Primitive("toy_mul", lambda x, y: x * y, register=False)
add = Primitive("toy_add", lambda x, y: x + y, register=False)
sin = Primitive("toy_sin", lambda x: np.sin(x), register=False)
cos = Primitive("toy_cos", lambda x: np.cos(x), register=False)
neg = Primitive("toy_neg", lambda x: -x, register=False)


def _nonzero_sum(*terms):
    from diffkit.core.zeros import Zero
    live = [t for t in terms if type(t) is not Zero]
    total = live[0]
    for t in live[1:]:
        total = add(total, t)
    return total


def _product_jvp(primals, tangents):
    x, y = primals
    tx, ty = tangents
    from diffkit.core.zeros import Zero
    parts = []
    if type(tx) is not Zero:
        parts.append(mul(tx, y))
    if type(ty) is not Zero:
        parts.append(mul(x, ty))
    return mul(x, y), _nonzero_sum(*parts)


mul.jvp = _product_jvp
mul.vjp = (lambda ct, out, x, y: mul(ct, y), lambda ct, out, x, y: mul(ct, x))
add.jvp = lambda primals, tangents: (add(*primals), _nonzero_sum(*tangents))
add.vjp = (lambda ct, out, x, y: ct, lambda ct, out, x, y: ct)
sin.jvp = lambda primals, tangents: (sin(primals[0]), mul(tangents[0], cos(primals[0])))
sin.vjp = (lambda ct, out, x: mul(ct, cos(x)),)
cos.jvp = lambda primals, tangents: (cos(primals[0]), neg(mul(tangents[0], sin(primals[0]))))
cos.vjp = (lambda ct, out, x: neg(mul(ct, sin(x))),)
neg.jvp = lambda primals, tangents: (neg(primals[0]), neg(tangents[0]))
neg.vjp = (lambda ct, out, x: neg(ct),)
for _prim in (mul, add):
    # elementwise on equal shapes only: enough for these tests
    _prim.batch = lambda size, values, axes, _p=_prim: (_p(*values), 0)
for _prim in (sin, cos, neg):
    _prim.batch = lambda size, values, axes, _p=_prim: (_p(values[0]), 0)


def f(x):
    return mul(sin(x), x)  # x sin x


def df(x):
    return math.sin(x) + x * math.cos(x)


def d2f(x):
    return 2 * math.cos(x) - x * math.sin(x)


def test_forward_and_reverse_match_closed_form():
    x = 0.7
    out, tangent = dk.jvp(f, (x,), (1.0,))
    assert out == pytest.approx(x * math.sin(x), rel=1e-12)
    assert tangent == pytest.approx(df(x), rel=1e-12)
    assert dk.grad(f)(x) == pytest.approx(df(x), rel=1e-12)


def test_second_derivative_all_four_ways():
    x = 1.3
    assert dk.grad(dk.grad(f))(x) == pytest.approx(d2f(x), rel=1e-12)
    assert dk.jvp(lambda y: dk.jvp(f, (y,), (1.0,))[1], (x,), (1.0,))[1] == \
        pytest.approx(d2f(x), rel=1e-12)
    assert dk.jvp(dk.grad(f), (x,), (1.0,))[1] == pytest.approx(d2f(x), rel=1e-12)
    assert dk.grad(lambda y: dk.jvp(f, (y,), (1.0,))[1])(x) == pytest.approx(d2f(x), rel=1e-12)


def test_no_perturbation_confusion():
    # d/dx [x * d/dy (x * y)] = d/dx [x * x] = 2x; confusing the perturbations gives 3x or x.
    def outer(x):
        inner = dk.jvp(lambda y: mul(x, y), (2.0,), (1.0,))[1]
        return mul(x, inner)

    assert dk.jvp(outer, (3.0,), (1.0,))[1] == pytest.approx(6.0)
    assert dk.grad(lambda x: mul(x, dk.grad(lambda y: mul(x, y))(2.0)))(3.0) == \
        pytest.approx(6.0)


def test_vmap_of_grad_and_grad_inside_vmap():
    xs = np.array([0.1, 0.5, 2.0])
    expected = np.array([df(x) for x in xs])
    np.testing.assert_allclose(dk.vmap(dk.grad(f))(xs), expected, rtol=1e-12)
    np.testing.assert_allclose(dk.vmap(lambda x: dk.jvp(f, (x,), (1.0,))[1])(xs), expected,
                               rtol=1e-12)


def test_pullback_is_pure_and_reusable():
    out, pullback = dk.vjp(f, 0.4)
    first = pullback(1.0)
    second = pullback(1.0)
    assert first[0] == pytest.approx(df(0.4), rel=1e-12)
    assert second[0] == first[0]
    assert pullback(2.0)[0] == pytest.approx(2 * df(0.4), rel=1e-12)


def test_trace_stack_is_restored_after_errors():
    level = current_level()

    def broken(x):
        raise RuntimeError("boom")

    for transform in (lambda: dk.grad(broken)(1.0), lambda: dk.jvp(broken, (1.0,), (1.0,)),
                      lambda: dk.vmap(broken)(np.ones(2))):
        with pytest.raises(RuntimeError, match="boom"):
            transform()
        assert current_level() == level


def test_constant_output_has_zero_derivative():
    assert dk.grad(lambda x: sin(0.3))(1.0) == 0.0
    assert dk.jvp(lambda x: cos(0.3), (1.0,), (1.0,))[1] == 0.0
