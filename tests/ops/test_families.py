"""``families.elementwise``, the one elementwise builder: each kind of partial, what the
reverse engine keeps, static parameters, the public function; and the per-argument VJP
tuples every primitive has (``EachArgument`` for any number of arguments, the custom call's
one pullback per sweep)."""

import inspect

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import diffkit as dk
import diffkit.numpy as dnp
import diffkit.scipy.special as dsp
from diffkit.core.primitive import PRIMITIVES, EachArgument
from diffkit.errors import NoRuleError
from diffkit.ops import elementwise as ew
from diffkit.ops import shape as shape_ops
from diffkit.ops.families import ZERO, elementwise, no_derivative, tangent_rule
from diffkit.testing import assert_jacobians_agree, check_grads, check_vmap

X = np.array([[0.5, -1.25, 2.0], [1.5, 0.75, -0.5]])
Y = np.array([0.3, -2.0, 1.1])


@pytest.fixture
def registry():
    """The primitives a test builds leave the registry afterwards (the completeness tests
    read it)."""
    before = dict(PRIMITIVES)
    yield
    PRIMITIVES.clear()
    PRIMITIVES.update(before)


def test_an_argument_name_a_function_and_no_derivative(registry):
    # f(x, y, k) = x * y + 3 y + k, with k an integer without derivative
    prim, f = elementwise("test_product_plus", lambda x, y, k: x * y + 3.0 * y + k,
                          {"x": "y", "y": lambda x: x + 3.0, "k": no_derivative("a count")},
                          doc="A test function.", module="tests.families")
    assert prim.missing_rules() == [] and isinstance(prim.vjp, tuple) and len(prim.vjp) == 3
    # the tape keeps what the partials read: y for x, x for y, nothing of k or out
    assert prim.vjp_reads == (frozenset({1}), frozenset({0}), frozenset())
    assert prim.vjp_ignores == {2, "out"}
    k = np.array([1, 2, 3])
    value = f(X, Y, k)
    assert_array_equal(value, X * Y + 3.0 * Y + k)
    gx, gy = dk.grad(lambda x, y: dnp.sum(f(x, y, k)), argnums=(0, 1))(X, Y)
    assert_allclose(gx, np.broadcast_to(Y, X.shape), rtol=1e-15)
    assert_allclose(gy, np.sum(X + 3.0, axis=0), rtol=1e-15)   # summed over the broadcast
    check_grads(lambda x, y: f(x, y, k), (X, Y), order=2)
    assert_jacobians_agree(lambda x, y: f(x, y, k), X, Y)
    check_vmap(lambda x, y: f(x, y, k), (np.stack([X, 2 * X]), Y), in_axes=(0, None))
    # a float k has no derivative: both engines say so, naming the function and argument
    for transform in (dk.jacfwd, dk.jacrev):
        with pytest.raises(NoRuleError, match=r"tests\.families\.test_product_plus .*'k' "
                                              r"\(a count\)"):
            transform(lambda kk: f(X, Y, kk))(np.array([1.0, 2.0, 3.0]))


def test_constants_zero_and_the_public_function(registry):
    prim, f = elementwise("test_affine", lambda x, s, z: x - 2.0 * s + 0.0 * z,
                          {"x": 1, "s": -2, "z": ZERO}, doc="x - 2 s.",
                          module="tests.families")
    assert prim.vjp[2] is None and prim.vjp_ignores == {0, 1, 2, "out"}
    jx, js, jz = dk.jacrev(f, argnums=(0, 1, 2))(Y, Y, Y)
    assert_array_equal(jx, np.eye(3))
    assert_array_equal(js, -2 * np.eye(3))
    assert_array_equal(jz, np.zeros((3, 3)))
    assert_array_equal(dk.jacfwd(f, argnums=2)(Y, Y, Y), np.zeros((3, 3)))
    # the signature and docstring given; keywords bind by the partials' names
    assert str(inspect.signature(f)) == "(x, s, z)" and f.__doc__ == "x - 2 s."
    assert f.__name__ == "test_affine" and f.__module__ == "tests.families"
    assert_array_equal(f(Y, z=Y, s=1.0), Y - 2.0)
    with pytest.raises(TypeError, match=r"test_affine\(\)"):
        f(Y, Y)
    assert f.primitive is prim


def test_a_tangent_rule_selects_and_a_static_parameter(registry):
    relu_p, relu = elementwise(
        "test_relu", lambda x: np.maximum(x, 0.0),
        {"x": tangent_rule(lambda t, x: ew.where_p(ew.greater_p(x, 0), t, 0.0))},
        doc="max(x, 0).", module="tests.families")
    x = np.array([-1.0, 0.0, 2.0])
    assert_array_equal(dk.jacfwd(relu)(x), dk.jacrev(relu)(x))
    assert_array_equal(np.diag(dk.jacrev(relu)(x)), [0.0, 0.0, 1.0])
    assert relu_p.vjp_ignores == {"out"}

    # x**k with the integer k a static parameter: the partial reads it by name
    power_p, power = elementwise(
        "test_power_of", lambda x, k: np.power(x, k),
        {"x": lambda x, k: k * power_p(x, k=k - 1)},
        doc="x ** k.", module="tests.families", params=("k",))
    assert "k" in str(inspect.signature(power))
    assert_allclose(power(Y, k=3), Y ** 3, rtol=1e-15)
    assert_allclose(dk.grad(lambda y: dnp.sum(power(y, k=3)))(Y), 3 * Y ** 2, rtol=1e-15)
    assert_allclose(dk.hessian(lambda y: dnp.sum(power(y, k=3)))(Y), np.diag(6 * Y),
                    rtol=1e-15)
    check_vmap(lambda y: power(y, k=4), (np.stack([Y, -Y]),))


def test_a_partial_reading_an_unknown_name_is_refused(registry):
    with pytest.raises(TypeError, match="reads"):
        elementwise("test_bad", np.sin, {"x": lambda z: z}, doc="", module="tests.families")


def test_the_builders_primitives_keep_only_what_their_partials_read():
    assert ew.exp_p.vjp_ignores == {0}               # exp' = out
    assert ew.sin_p.vjp_ignores == {"out"}           # sin' = cos(x)
    assert ew.add_p.vjp_ignores == {0, 1, "out"}     # constants
    assert ew.multiply_p.vjp_reads == (frozenset({1}), frozenset({0}))
    # the namespace binds the primitive directly, and the operators are the primitives
    assert dnp.sin.diffkit_function is ew.sin_p and dnp.multiply.diffkit_function is \
        ew.multiply_p


def test_special_functions_keep_scipys_names_and_scalar_dtypes():
    assert str(inspect.signature(dsp.polygamma)) == "(n, x)"
    assert_allclose(dsp.polygamma(n=1, x=2.0), np.pi ** 2 / 6 - 1, rtol=1e-15)
    with pytest.raises(TypeError, match=r"gammaln\(\)"):
        dsp.gammaln(1.0, 2.0)
    x32 = np.array([1.5, 2.5], np.float32)
    assert dsp.beta(x32, 2.0).dtype == np.float32   # a Python float adapts to float32
    assert dk.grad(lambda a: dnp.sum(dsp.beta(a, 2.0)))(x32).dtype == np.float32


def test_every_primitive_has_a_tuple_of_per_argument_rules():
    import diffkit.scipy.linalg  # noqa: F401  (registers its primitives)

    single = [name for name, p in PRIMITIVES.items()
              if p.vjp is not None and not isinstance(p.vjp, tuple)]
    assert single == []


def test_a_primitive_of_any_number_of_arguments_has_a_rule_for_each():
    rules = shape_ops.concatenate_p.vjp
    assert isinstance(rules, EachArgument) and rules[40] is rules[40]
    pieces = [np.full(i % 3 + 1, float(i)) for i in range(40)]
    weights = np.arange(sum(len(p) for p in pieces), dtype=float)
    grads = dk.grad(lambda *xs: dnp.sum(dnp.concatenate(xs) * weights),
                    argnums=tuple(range(40)))(*pieces)
    assert_array_equal(np.concatenate(grads), weights)


def test_a_custom_vjp_runs_its_backward_rule_once_per_sweep():
    calls = []

    @dk.custom_vjp
    def f(x, y, z):
        return x * y * z

    def f_fwd(x, y, z):
        return f(x, y, z), (x, y, z)

    def f_bwd(residuals, ct):
        calls.append(1)
        x, y, z = residuals
        return ct * y * z, ct * x * z, ct * x * y

    f.defvjp(f_fwd, f_bwd)
    x, y, z = 2.0, 3.0, 5.0
    assert dk.grad(f, argnums=(0, 1, 2))(x, y, z) == (15.0, 10.0, 6.0)
    assert len(calls) == 1
    _, pullback = dk.vjp(f, x, y, z)
    assert pullback(1.0) == (15.0, 10.0, 6.0) and pullback(2.0) == (30.0, 20.0, 12.0)
    assert len(calls) == 3   # once per sweep, for all three arguments
    assert dk.grad(f, argnums=1)(x, y, z) == 10.0   # only one argument traced
