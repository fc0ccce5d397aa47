"""User-defined derivative rules (``custom_jvp``, ``custom_vjp``) and ``checkpoint``.

Each rule is defined once and checked under every engine and composition against closed
forms and finite differences: forward, reverse, vmap, Hessians both ways, linearize.
"""

import tracemalloc
from functools import partial

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.errors import EscapedTracerError, NoRuleError, ShapeMismatchError
from diffkit.scipy.special import expit
from diffkit.testing import check_grads
from diffkit.testing.strategies import programs

RTOL = 1e-7


def close(got, expected, rtol=RTOL, atol=0.0):
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)


# --- custom_jvp: a numerically stable log(1 + exp(x)) ------------------------------------


@dk.custom_jvp
def log1pexp(x):
    return dnp.logaddexp(0.0, x)  # stable value; the rule gives the stable derivative


@log1pexp.defjvp
def _log1pexp_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    return log1pexp(x), x_dot * expit(x)


def softplus_sum(x):
    return dnp.sum(log1pexp(x))


X = np.array([-30.0, -2.0, 0.0, 1.5, 40.0])
SIG = 1.0 / (1.0 + np.exp(-X))


@pytest.mark.parametrize("transform", [dk.jacfwd, dk.jacrev, partial(dk.jacobian, mode="fwd")])
def test_log1pexp_first_derivative_in_both_engines(transform):
    close(np.diagonal(transform(log1pexp)(X)), SIG)


def test_log1pexp_stays_finite_where_the_naive_derivative_overflows():
    x = np.array([800.0, -800.0])
    close(dk.grad(softplus_sum)(x), [1.0, 0.0], atol=1e-300)
    close(dk.jvp(log1pexp, (x,), (np.ones(2),))[1], [1.0, 0.0], atol=1e-300)


@pytest.mark.parametrize("outer, inner", [(dk.jacfwd, dk.jacrev), (dk.jacrev, dk.jacrev),
                                          (dk.jacfwd, dk.jacfwd), (dk.jacrev, dk.jacfwd)])
def test_log1pexp_hessian_every_composition(outer, inner):
    hessian = outer(inner(softplus_sum))(X)
    close(hessian, np.diag(SIG * (1 - SIG)), atol=1e-16)


def test_log1pexp_under_vmap_both_orders():
    close(dk.vmap(dk.grad(log1pexp))(X), SIG)
    close(dk.grad(lambda x: dnp.sum(dk.vmap(log1pexp)(x)))(X), SIG)
    close(dk.jacfwd(dk.vmap(dk.grad(log1pexp)))(X), np.diag(SIG * (1 - SIG)), atol=1e-16)


def test_log1pexp_matches_finite_differences():
    check_grads(softplus_sum, (X[1:4],), order=2)


def test_custom_jvp_nested_jvp_has_no_perturbation_confusion():
    # d/dy [ d/dx log1pexp(x * y) ] at x=1: the inner tangent must not leak into the outer
    def inner(y):
        return dk.jvp(lambda x: log1pexp(x * y), (1.0,), (1.0,))[1]   # y * sigma(y)

    y = 0.7
    s = 1 / (1 + np.exp(-y))
    close(dk.grad(inner)(y), s + y * s * (1 - s))
    close(dk.jvp(inner, (y,), (1.0,))[1], s + y * s * (1 - s))


def test_custom_jvp_float32_stays_float32():
    x = X[1:4].astype(np.float32)
    g = dk.grad(softplus_sum)(x)
    assert g.dtype == np.float32
    close(g, SIG[1:4], rtol=1e-6)


# --- custom_jvp: several arguments and outputs, pytrees, nondiff_argnums ------------------


@dk.custom_jvp
def polar(point):
    """(x, y) -> {"r": radius, "theta": angle}, with the derivative written by hand."""
    x, y = point["x"], point["y"]
    return {"r": dnp.sqrt(x * x + y * y), "theta": dnp.arctan2(y, x)}


@polar.defjvp
def _polar_jvp(primals, tangents):
    (point,), (dot,) = primals, tangents
    out = polar(point)
    x, y, r = point["x"], point["y"], out["r"]
    return out, {"r": (x * dot["x"] + y * dot["y"]) / r,
                 "theta": (x * dot["y"] - y * dot["x"]) / (r * r)}


def test_custom_jvp_pytrees_in_and_out_agree_with_the_plain_function():
    def plain(point):
        x, y = point["x"], point["y"]
        return {"r": dnp.sqrt(x * x + y * y), "theta": dnp.arctan2(y, x)}

    point = {"x": np.array([1.0, -2.0, 0.5]), "y": np.array([2.0, 0.3, -1.5])}
    for transform in (dk.jacfwd, dk.jacrev):
        got, want = transform(polar)(point), transform(plain)(point)
        for out_key in ("r", "theta"):
            for in_key in ("x", "y"):
                close(got[out_key][in_key], want[out_key][in_key], atol=1e-15)
    h_got = dk.hessian(lambda p: dnp.sum(polar(p)["theta"] ** 2))(point)
    h_want = dk.hessian(lambda p: dnp.sum(plain(p)["theta"] ** 2))(point)
    close(h_got["x"]["y"], h_want["x"]["y"], atol=1e-14)


@partial(dk.custom_jvp, nondiff_argnums=(0, 2))
def apply_scaled(fun, x, power):
    return fun(x) ** power


@apply_scaled.defjvp
def _apply_scaled_jvp(fun, power, primals, tangents):
    (x,), (x_dot,) = primals, tangents
    value, fun_dot = dk.jvp(fun, (x,), (x_dot,))
    return value ** power, power * value ** (power - 1) * fun_dot


def test_custom_jvp_nondiff_argnums_are_passed_first_to_the_rule():
    x = np.array([0.3, 1.1])
    expected = 3 * np.sin(x) ** 2 * np.cos(x)
    close(np.diagonal(dk.jacrev(lambda x: apply_scaled(dnp.sin, x, 3))(x)), expected)
    close(np.diagonal(dk.jacfwd(lambda x: apply_scaled(dnp.sin, x, 3))(x)), expected)
    close(dk.vmap(dk.grad(lambda x: apply_scaled(dnp.sin, x, 3)))(x), expected)


def test_defjvps_one_rule_per_argument():
    @dk.custom_jvp
    def product(x, y):
        return x * y

    product.defjvps(lambda x_dot, out, x, y: x_dot * y, lambda y_dot, out, x, y: x * y_dot)
    x, y = np.array([1.5, -2.0]), np.array([0.5, 3.0])
    gx, gy = dk.grad(lambda x, y: dnp.sum(product(x, y)), argnums=(0, 1))(x, y)
    close(gx, y)
    close(gy, x)


def test_custom_jvp_keyword_arguments_and_integer_arguments():
    @dk.custom_jvp
    def shifted_power(x, n):
        return x ** n

    @shifted_power.defjvp
    def _(primals, tangents):
        (x, n), (x_dot, _) = primals, tangents
        return x ** n, n * x ** (n - 1) * x_dot

    x = np.array([1.2, 0.4])
    close(dk.grad(lambda x: dnp.sum(shifted_power(x, n=3)))(x), 3 * x ** 2)
    close(np.diagonal(dk.jacfwd(lambda x: shifted_power(x, np.int64(4)))(x)), 4 * x ** 3)


# --- custom_vjp: a clipped-gradient identity ---------------------------------------------


@dk.custom_vjp
def clip_gradient(x):
    return x


def _clip_fwd(x):
    return x, None


def _clip_bwd(residuals, g):
    return (dnp.clip(g, -1.0, 1.0),)


clip_gradient.defvjp(_clip_fwd, _clip_bwd)


def clipped_energy(x):
    return dnp.sum(3.0 * clip_gradient(x) ** 2)


XC = np.array([-0.5, -0.1, 0.05, 0.12, 2.0])


def test_clip_gradient_reverse_mode_uses_the_rule():
    close(dk.grad(clipped_energy)(XC), np.clip(6 * XC, -1, 1))
    close(dk.vmap(dk.grad(lambda x: 3.0 * clip_gradient(x) ** 2))(XC), np.clip(6 * XC, -1, 1))
    close(dk.grad(lambda x: dnp.sum(dk.vmap(lambda x: 3.0 * clip_gradient(x) ** 2)(x)))(XC),
          np.clip(6 * XC, -1, 1))


def test_clip_gradient_hessian_differentiates_the_rule():
    # the gradient clip(6x) has derivative 6 inside the clip and 0 outside
    expected = np.diag(np.where(np.abs(6 * XC) < 1, 6.0, 0.0))
    close(dk.hessian(clipped_energy)(XC), expected)
    close(dk.jacfwd(dk.jacrev(clipped_energy))(XC), expected)
    # reverse over reverse applies the rule to the outer cotangent too: clip(6 * 1) = 1
    close(dk.jacrev(dk.jacrev(clipped_energy))(XC), np.minimum(expected, 1.0))


def test_custom_vjp_forward_mode_transposes_bwd():
    # bwd is the identity near a zero cotangent, so forward mode sees the identity: the true
    # derivative of the function, which finite differences confirm
    tangent = np.array([1.0, -2.0, 0.5, 0.0, 3.0])
    out, out_dot = dk.jvp(lambda x: 3.0 * clip_gradient(x), (XC,), (tangent,))
    close(out, 3 * XC)
    close(out_dot, 3 * tangent)
    close(dk.jacfwd(lambda x: 3.0 * clip_gradient(x))(XC), 3 * np.eye(5))
    eps = 1e-6
    fd = (3.0 * clip_gradient(XC + eps * tangent) - 3.0 * clip_gradient(XC - eps * tangent)) \
        / (2 * eps)
    close(out_dot, fd, rtol=1e-8)


# --- custom_vjp: a fixed-point solver differentiated by the implicit function theorem -----


@partial(dk.custom_vjp, nondiff_argnums=(0,))
def fixed_point(step, a, x0):
    """The x with x = step(a, x), by iteration from x0 (step must be a contraction in x)."""
    x = x0
    for _ in range(80):
        x = step(a, x)
    return x


def _fixed_point_fwd(step, a, x0):
    x = fixed_point(step, a, x0)
    return x, (a, x)


def _adjoint_step(step, packed, u):
    a, x, g = packed
    return g + dk.vjp(lambda x: step(a, x), x)[1](u)[0]


def _fixed_point_bwd(step, residuals, g):
    # x* = step(a, x*)  =>  the cotangent u of x* solves u = g + u d(step)/dx, and the
    # cotangent of a is u d(step)/da; x0 does not matter
    a, x = residuals
    u = fixed_point(partial(_adjoint_step, step), (a, x, g), g)
    return dk.vjp(lambda a: step(a, x), a)[1](u)[0], None


fixed_point.defvjp(_fixed_point_fwd, _fixed_point_bwd)


def _kepler_like(a, x):
    return 0.3 * dnp.sin(x) + a


A = np.array([0.2, 1.0, 2.5])


def _root_derivatives(a):
    x = fixed_point(_kepler_like, a, np.zeros_like(a))
    dx = 1 / (1 - 0.3 * np.cos(x))   # implicit differentiation of x = 0.3 sin x + a
    return x, dx, -0.3 * np.sin(x) * dx ** 3


def solve(a):
    return fixed_point(_kepler_like, a, np.zeros_like(a))


def test_fixed_point_value_and_gradient():
    x, dx, _ = _root_derivatives(A)
    close(x, 0.3 * np.sin(x) + A)
    close(dk.grad(lambda a: dnp.sum(solve(a)))(A), dx)
    close(np.diagonal(dk.jacrev(solve)(A)), dx)
    close(np.diagonal(dk.jacfwd(solve)(A)), dx)


def test_fixed_point_matches_finite_differences():
    _, dx, _ = _root_derivatives(A)
    eps = 1e-6
    fd = (solve(A + eps) - solve(A - eps)) / (2 * eps)
    close(dx, fd, rtol=1e-8)


def test_fixed_point_under_vmap_and_second_order():
    _, dx, d2x = _root_derivatives(A)
    close(dk.vmap(dk.grad(lambda a: fixed_point(_kepler_like, a, 0.0)))(A), dx)
    total = lambda a: dnp.sum(solve(a))  # noqa: E731
    close(np.diagonal(dk.jacfwd(dk.jacrev(total))(A)), d2x)
    close(np.diagonal(dk.jacrev(dk.jacrev(total))(A)), d2x)
    close(np.diagonal(dk.hessian(total)(A)), d2x)
    close(dk.vmap(dk.hessian(lambda a: fixed_point(_kepler_like, a, 0.0)))(A), d2x)


def test_fixed_point_linearize_replays_the_rule():
    _, dx, _ = _root_derivatives(A)
    out, jvp_fn = dk.linearize(solve, A)
    close(jvp_fn(np.ones(3)), dx)
    close(jvp_fn(np.array([2.0, 0.0, -1.0])), dx * [2.0, 0.0, -1.0])


# --- custom_vjp with several arguments and pytree residuals ---------------------------------


@dk.custom_vjp
def weighted_norm(x, w):
    return dnp.sqrt(dnp.sum(w * x * x))


def _weighted_norm_fwd(x, w):
    norm = weighted_norm(x, w)
    return norm, {"x": x, "w": w, "norm": norm}


def _weighted_norm_bwd(res, g):
    x, w, norm = res["x"], res["w"], res["norm"]
    return g * w * x / norm, g * x * x / (2 * norm)


weighted_norm.defvjp(_weighted_norm_fwd, _weighted_norm_bwd)


def test_custom_vjp_two_arguments_all_engines_against_finite_differences():
    x, w = np.array([0.5, -1.2, 2.0]), np.array([1.0, 0.5, 2.0])
    check_grads(weighted_norm, (x, w), order=2)
    batch = np.stack([x, 2 * x, -x])
    per_example = dk.vmap(dk.grad(weighted_norm), in_axes=(0, None))(batch, w)
    close(per_example, [dk.grad(weighted_norm)(b, w) for b in batch])


# --- errors -----------------------------------------------------------------------------------


def test_calling_without_a_rule_says_how_to_define_one():
    @dk.custom_jvp
    def f(x):
        return x

    with pytest.raises(NoRuleError, match=r"f\.defjvp"):
        f(1.0)

    @dk.custom_vjp
    def g(x):
        return x

    with pytest.raises(NoRuleError, match=r"g\.defvjp\(fwd, bwd\)"):
        g(1.0)


def test_a_tangent_of_the_wrong_shape_is_named():
    @dk.custom_jvp
    def f(x):
        return dnp.sum(x)

    f.defjvp(lambda primals, tangents: (f(primals[0]), tangents[0]))
    with pytest.raises(ShapeMismatchError, match=r"shape \(3,\).*shape \(\)"):
        dk.jvp(f, (np.ones(3),), (np.ones(3),))


def test_bwd_must_return_one_cotangent_per_argument():
    @dk.custom_vjp
    def f(x, y):
        return x * y

    f.defvjp(lambda x, y: (x * y, (x, y)), lambda res, g: g * res[1])
    with pytest.raises(ShapeMismatchError, match=r"one cotangent per differentiable argument"):
        dk.grad(f)(2.0, 3.0)


def test_a_cotangent_of_the_wrong_shape_is_named():
    @dk.custom_vjp
    def f(x):
        return dnp.sum(x)

    f.defvjp(lambda x: (dnp.sum(x), None), lambda res, g: (g,))   # should broadcast g
    with pytest.raises(ShapeMismatchError, match=r"shape \(\) for argument 0, .*\(3,\)"):
        dk.grad(f)(np.ones(3))


# --- rule outputs are checked against the primal (structure, shape, dtype kind) ------------


def doubling_jvp(tangent_out):
    """``2 x`` with a JVP rule whose tangent is ``tangent_out(t)``."""
    @dk.custom_jvp
    def f(x):
        return 2.0 * x

    f.defjvp(lambda primals, tangents: (f(primals[0]), tangent_out(tangents[0])))
    return f


@pytest.mark.parametrize("run", [
    lambda f: dk.jvp(f, (1.0,), (1.0,)),
    lambda f: dk.grad(f)(1.0),            # reverse mode transposes the rule: checked too
    lambda f: dk.jacfwd(f)(np.ones(2)),
], ids=["jvp", "grad", "jacfwd"])
def test_a_complex_tangent_for_a_real_output_is_refused(run):
    f = doubling_jvp(lambda t: t * (2 + 1j))
    with pytest.raises(ShapeMismatchError) as excinfo:
        run(f)
    text = str(excinfo.value)
    assert "JVP rule of 'f'" in text and "output leaf 0" in text
    assert "complex128" in text and "float64" in text and "real" in text


def test_none_as_a_tangent_is_refused():
    f = doubling_jvp(lambda t: None)
    with pytest.raises(ShapeMismatchError, match=r"JVP rule of 'f' returned None as a tangent "
                                                 r"for output leaf 0.*zeros"):
        dk.jvp(f, (1.0,), (1.0,))


def test_a_non_numeric_tangent_is_refused():
    f = doubling_jvp(lambda t: "2t")
    with pytest.raises(ShapeMismatchError, match=r"JVP rule of 'f'.*dtype <U2"):
        dk.jvp(f, (1.0,), (1.0,))


def test_a_rule_tangent_keeps_the_primal_precision():
    f = doubling_jvp(lambda t: np.float64(2.0) * np.asarray(t, np.float64))
    x = np.array([1.5, -0.5], np.float32)
    out, tangent = dk.jvp(f, (x,), (np.ones(2, np.float32),))
    assert tangent.dtype == np.float32
    close(tangent, [2.0, 2.0])


def real_square_vjp(cotangent):
    """``x ** 2`` with a bwd rule returning ``cotangent(x, g)``."""
    @dk.custom_vjp
    def g(x):
        return x * x

    g.defvjp(lambda x: (x * x, x), lambda x, ct: (cotangent(x, ct),))
    return g


@pytest.mark.parametrize("run", [
    lambda g: dk.grad(g)(1.5),
    lambda g: dk.jvp(g, (1.5,), (1.0,)),   # forward mode transposes bwd: checked too
    lambda g: dk.vmap(dk.grad(g))(np.ones(3)),
], ids=["grad", "jvp", "vmap-grad"])
def test_a_complex_cotangent_for_a_real_input_is_refused_not_truncated(run):
    g = real_square_vjp(lambda x, ct: 2.0 * x * ct * (1 + 1j))
    with pytest.raises(ShapeMismatchError) as excinfo:
        run(g)
    text = str(excinfo.value)
    assert "bwd rule of 'g'" in text and "argument 0" in text
    assert "complex128" in text and "real" in text


def test_a_bwd_cotangent_is_checked_per_pytree_leaf():
    @dk.custom_vjp
    def h(p):
        return p["a"] * p["b"]

    h.defvjp(lambda p: (p["a"] * p["b"], p),
             lambda p, g: ({"a": g * p["b"], "b": g * p["a"] * 1j},))
    with pytest.raises(ShapeMismatchError, match=r"argument 0 \(leaf 1 of its pytree\)"):
        dk.grad(h)({"a": 2.0, "b": 3.0})


def test_closing_over_a_traced_value_is_an_error_that_says_to_pass_it():
    @dk.custom_vjp
    def scale(x):
        return x * 2.0

    scale.defvjp(lambda x: (x * 2.0, None), lambda res, g: (2.0 * g,))

    def outer(c):
        @dk.custom_vjp
        def uses_c(x):
            return x * c

        uses_c.defvjp(lambda x: (x * c, None), lambda res, g: (g * c,))
        return uses_c(dnp.ones(2) * c)

    with pytest.raises(EscapedTracerError, match="as an argument"):
        dk.vmap(outer)(np.array([1.0, 2.0]))
    close(dk.grad(lambda x: dnp.sum(scale(x)))(np.ones(2)), [2.0, 2.0])


# --- checkpoint -------------------------------------------------------------------------------


def _segment(x):
    for _ in range(25):
        x = dnp.sin(x) * 1.01 + 0.1
    return x


_checkpointed_segment = dk.checkpoint(_segment)


def _chain(segment):
    def loss(x):
        for _ in range(4):
            x = segment(x)
        return dnp.sum(x)
    return loss


def test_checkpoint_gives_the_same_derivatives_in_every_composition():
    x = np.linspace(0.0, 1.0, 5)
    plain, remat = _chain(_segment), _chain(_checkpointed_segment)
    close(dk.grad(remat)(x), dk.grad(plain)(x))
    close(dk.hessian(remat)(x), dk.hessian(plain)(x), atol=1e-30)
    close(dk.jacrev(dk.jacrev(remat))(x), dk.jacrev(dk.jacrev(plain))(x), atol=1e-30)
    close(dk.jacfwd(_checkpointed_segment)(x), dk.jacfwd(_segment)(x))
    close(dk.vmap(dk.grad(_checkpointed_segment))(x), dk.vmap(dk.grad(_segment))(x))
    close(dk.grad(lambda x: dnp.sum(dk.vmap(_checkpointed_segment)(x)))(x),
          dk.grad(lambda x: dnp.sum(_segment(x)))(x))


def test_checkpoint_static_argnums():
    @partial(dk.checkpoint, static_argnums=(1,))
    def repeat_sin(x, times):
        for _ in range(times):
            x = dnp.sin(x)
        return x

    x = np.array([0.4, 1.0])
    expected = np.cos(np.sin(x)) * np.cos(x)
    close(dk.vmap(dk.grad(lambda x: repeat_sin(x, 2)))(x), expected)


def _peak_bytes(fun, x):
    tracemalloc.start()
    try:
        fun(x)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_checkpoint_lowers_peak_memory_on_a_long_chain():
    # 100 operations on 1.6 MB: plain reverse mode keeps an input per sin; checkpointed
    # pieces keep 4 piece inputs plus one piece's 25 intermediates during the sweep
    x = np.linspace(0.0, 1.0, 200_000)
    plain = _peak_bytes(dk.grad(_chain(_segment)), x)
    remat = _peak_bytes(dk.grad(_chain(_checkpointed_segment)), x)
    assert plain > 100 * x.nbytes
    assert remat < 0.4 * plain


# --- property: a rule that restates the true derivative changes nothing -------------------


def _with_custom_jvp(program):
    wrapped = dk.custom_jvp(lambda *args: program(*args))
    wrapped.defjvp(lambda primals, tangents: dk.jvp(program, primals, tangents))
    return wrapped


def _with_custom_vjp(program):
    wrapped = dk.custom_vjp(lambda *args: program(*args))

    def fwd(*args):
        return program(*args), args          # the inputs are the residuals

    def bwd(args, g):
        return dk.vjp(program, *args)[1](g)

    wrapped.defvjp(fwd, bwd)
    return wrapped


@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs(max_steps=5), st.sampled_from([_with_custom_jvp, _with_custom_vjp,
                                               dk.checkpoint]))
def test_rules_that_restate_the_derivative_agree_with_the_plain_program(case, wrap):
    program, args = case
    custom = wrap(program)
    argnums = tuple(range(len(args)))

    def total(f):
        return lambda *a: dnp.sum(f(*a) ** 2)

    for transform in (dk.jacfwd, dk.jacrev):
        got = transform(custom, argnums=argnums)(*args)
        want = transform(program, argnums=argnums)(*args)
        for g, w in zip(got, want):
            close(g, w, rtol=1e-9, atol=1e-12)
    close(dk.hessian(total(custom))(*args), dk.hessian(total(program))(*args),
          rtol=1e-9, atol=1e-12)
    batched = tuple(np.stack([x, 0.5 * x]) for x in args)
    close(dk.vmap(custom)(*batched), dk.vmap(program)(*batched), rtol=1e-12, atol=1e-15)


# --- the function and its rules agree on the primal output -----------------------------------


def test_a_jvp_rule_whose_primal_output_differs_from_the_function_is_named():
    @dk.custom_jvp
    def f(x):
        return dnp.sum(x)

    # the rule's primal output is x itself (shape (3,)), not the function's scalar
    f.defjvp(lambda primals, tangents: (primals[0], tangents[0]))
    with pytest.raises(ShapeMismatchError) as excinfo:
        dk.grad(f)(np.ones(3))   # reverse mode evaluates f, then transposes the rule
    text = str(excinfo.value)
    assert "JVP rule of 'f'" in text and "shape (3,)" in text and "shape ()" in text


def test_a_fwd_rule_whose_output_is_complex_for_a_real_function_is_named():
    @dk.custom_vjp
    def g(x):
        return x * 2.0

    g.defvjp(lambda x: (x * (2.0 + 0j), None), lambda res, ct: (2.0 * ct,))
    with pytest.raises(ShapeMismatchError, match=r"fwd rule of 'g'.*complex128.*float64"):
        dk.vmap(dk.grad(lambda x: dnp.real(g(x))))(np.ones(3))
