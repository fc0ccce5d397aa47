"""diffkit.testing's checkers fail, with a message naming the mode, when a rule is wrong."""

import numpy as np
import pytest

import diffkit.numpy as dnp
from diffkit.core.primitive import Primitive
from diffkit.testing import assert_jacobians_agree, check_grads, check_vmap


def _sine(name, jvp_scale, vjp_scale):
    """sin with its JVP and VJP scaled: (1, 1) is right, anything else is a broken rule."""
    prim = Primitive(name, np.sin, register=False)
    prim.jvp = lambda primals, tangents: (prim(primals[0]),
                                          tangents[0] * (jvp_scale * dnp.cos(primals[0])))
    prim.vjp = (lambda ct, out, x: ct * (vjp_scale * dnp.cos(x)),)
    prim.batch = lambda size, values, axes: (prim(values[0]), axes[0])
    return prim


X = np.array([0.3, -0.5, 1.1])


def test_correct_rules_pass():
    good = _sine("good_sin", 1.0, 1.0)
    check_grads(good, (X,), order=2)
    assert_jacobians_agree(good, X)


@pytest.mark.parametrize("modes, jvp_scale, vjp_scale, expected", [
    (("fwd",), 2.0, 1.0, "forward mode \\(jvp\\) at order 1"),
    (("rev",), 1.0, 2.0, "reverse mode \\(vjp\\) at order 1"),
    (("fwd", "rev"), 1.0, 2.0, "adjoint identity fails"),
])
def test_a_wrong_rule_is_reported(modes, jvp_scale, vjp_scale, expected):
    bad = _sine(f"bad_sin_{jvp_scale}_{vjp_scale}", jvp_scale, vjp_scale)
    with pytest.raises(AssertionError, match=expected):
        check_grads(bad, (X,), order=1, modes=modes)


def test_jacobian_disagreement_is_reported():
    bad = _sine("bad_sin_jac", 1.0, 3.0)
    with pytest.raises(AssertionError):
        assert_jacobians_agree(bad, X)


# --- complex arguments and outputs -----------------------------------------------------------
# diffkit's (JAX's) convention: jvp is the directional derivative along a complex tangent t,
# and vjp(w) is the transpose under the bilinear pairing Re(sum(w * t)), no conjugation.

Z = np.array([0.7 - 0.4j, -1.1 + 0.3j, 0.2 + 1.3j])
A = np.array([[2.0 + 0.5j, 0.3 - 1.0j, 0.1j],
              [-0.4 + 0.2j, 1.5 - 0.7j, 0.6],
              [0.8j, -0.2 + 0.1j, 1.9 + 0.4j]])
ROW = np.array([0.5, -1.3, 2.1])

CORRECT_COMPLEX = {
    "cube": (lambda z: z ** 3, (Z,)),
    "exp_times_conj": (lambda z: dnp.exp(z) * dnp.conj(z), (Z,)),
    "abs_squared": (lambda z: dnp.abs(z) ** 2, (Z,)),
    "real_times_imag": (lambda z: dnp.real(z) * dnp.imag(z), (Z,)),
    "r_to_c_cis": (lambda x: dnp.exp(1j * x), (ROW,)),
    "c_to_r_abs": (dnp.abs, (Z,)),
    "inv": (dnp.linalg.inv, (A,)),
    "mixed_real_and_complex": (lambda x, z: (x * dnp.sin(z), dnp.sum(x ** 2 * dnp.abs(z))),
                               (ROW, Z)),
}


@pytest.mark.parametrize("name", sorted(CORRECT_COMPLEX))
def test_complex_functions_pass(name):
    fun, args = CORRECT_COMPLEX[name]
    check_grads(fun, args, order=2, modes=("fwd", "rev"))
    assert_jacobians_agree(fun, *args)


@pytest.mark.parametrize("name", ["exp_times_conj", "r_to_c_cis", "c_to_r_abs", "inv"])
def test_single_precision_complex_functions_pass(name):
    fun, args = CORRECT_COMPLEX[name]
    low = tuple(a.astype(np.complex64 if a.dtype.kind == "c" else np.float32) for a in args)
    check_grads(fun, low, order=2)
    assert_jacobians_agree(fun, *low)


def _complex_square(name, jvp_rule, vjp_rule):
    """z**2 with the given rules: ``jvp_rule(z, t)``, ``vjp_rule(z, w)``; right ones are
    ``2 z t`` and ``2 z w``."""
    prim = Primitive(name, np.square, register=False)
    prim.jvp = lambda primals, tangents: (prim(primals[0]), jvp_rule(primals[0], tangents[0]))
    prim.vjp = (lambda ct, out, z: vjp_rule(z, ct),)
    prim.batch = lambda size, values, axes: (prim(values[0]), axes[0])
    return prim


def _right(z, t):
    return 2.0 * z * t


def _conjugated(z, t):   # the derivative of conj(z)**2 rules, not of z**2
    return 2.0 * dnp.conj(z) * t


def _real_directions_only(z, t):   # right along real tangents, wrong along imaginary ones
    return 2.0 * z * dnp.real(t)


def test_correct_complex_rule_passes():
    square = _complex_square("good_csquare", _right, _right)
    check_grads(square, (Z,), order=2)
    assert_jacobians_agree(square, Z)


@pytest.mark.parametrize("jvp_rule, vjp_rule, modes, expected", [
    (_conjugated, _right, ("fwd",), r"forward mode \(jvp\) at order 1 differs for argument "
     r"args\[0\]: largest error"),
    (_real_directions_only, _right, ("fwd",), r"forward mode \(jvp\) at order 1 differs for "
     r"argument args\[0\]"),
    (_right, _conjugated, ("rev",), r"reverse mode \(vjp\) at order 1 differs for argument "
     r"args\[0\]: <J\^T u, v> from vjp"),
    (_right, _conjugated, ("fwd", "rev"), r"reverse mode \(vjp\) at order 1 differs for "
     r"argument args\[0\]: the adjoint identity fails"),
    (_conjugated, _right, ("fwd", "rev"), r"forward mode \(jvp\) at order 1"),
])
def test_wrong_complex_rule_is_reported(jvp_rule, vjp_rule, modes, expected):
    square = _complex_square(f"bad_csquare_{jvp_rule.__name__}_{vjp_rule.__name__}",
                             jvp_rule, vjp_rule)
    with pytest.raises(AssertionError, match=expected):
        check_grads(square, (Z,), order=2, modes=modes)


def test_wrong_complex_rule_names_the_argument():
    square = _complex_square("bad_csquare_two_args", _right, _conjugated)
    with pytest.raises(AssertionError, match=r"reverse mode \(vjp\) at order 1 differs for "
                                             r"argument args\[1\]:"):
        check_grads(lambda x, z: x * square(z), (ROW, Z), order=2)


def test_wrong_complex_second_derivative_is_reported_at_order_2():
    """z**2 whose jvp multiplies by ``twice(z)``, a primitive with the right value 2 z but a
    conjugating derivative: order 1 passes, order 2 must not."""
    twice = _complex_square("bad_twice", lambda z, t: 2.0 * dnp.conj(t),
                            lambda z, w: 2.0 * dnp.conj(w))
    twice.impl = lambda z: 2.0 * z
    square = _complex_square("csquare_over_bad_twice", lambda z, t: twice(z) * t,
                             lambda z, w: twice(z) * w)
    check_grads(square, (Z,), order=1)
    with pytest.raises(AssertionError, match=r"forward mode \(jvp\) at order 2, applied to "
                                             r"the forward-mode derivative \(jvp\)"):
        check_grads(square, (Z,), order=2, modes=("fwd",))
    with pytest.raises(AssertionError, match=r"at order 2, applied to the reverse-mode "
                                             r"derivative \(vjp\)"):
        check_grads(square, (Z,), order=2, modes=("rev",))


def _abs_squared(name, vjp_rule):
    """C -> R |z|**2: jvp 2 Re(conj(z) t), and ``vjp_rule(z, w)`` (right: 2 w conj(z))."""
    prim = Primitive(name, lambda z: np.abs(z) ** 2, register=False)
    prim.jvp = lambda primals, tangents: (prim(primals[0]),
                                          2.0 * dnp.real(dnp.conj(primals[0]) * tangents[0]))
    prim.vjp = (lambda ct, out, z: vjp_rule(z, ct),)
    return prim


def _cis(name, vjp_rule):
    """R -> C exp(i x): jvp i exp(i x) t, and ``vjp_rule(x, w)`` (right: Re(i exp(i x) w))."""
    prim = Primitive(name, lambda x: np.exp(1j * x), register=False)
    prim.jvp = lambda primals, tangents: (prim(primals[0]), 1j * prim(primals[0]) * tangents[0])
    prim.vjp = (lambda ct, out, x: vjp_rule(x, ct),)
    return prim


@pytest.mark.parametrize("build, args, right, wrong", [
    (_abs_squared, (Z,), lambda z, w: 2.0 * w * dnp.conj(z), lambda z, w: 2.0 * w * z),
    (_cis, (ROW,), lambda x, w: dnp.real(1j * dnp.exp(1j * x) * w),
     lambda x, w: dnp.real(1j * dnp.exp(1j * x) * dnp.conj(w))),
])
def test_complex_to_real_and_real_to_complex_rules(build, args, right, wrong):
    """A vjp that conjugates where it should not fails, in both directions of C <-> R."""
    good = build(f"good_{build.__name__}", right)
    check_grads(good, args, order=1)
    assert_jacobians_agree(good, *args)
    bad = build(f"bad_{build.__name__}", wrong)
    with pytest.raises(AssertionError, match=r"reverse mode \(vjp\) at order 1 differs for "
                                             r"argument args\[0\]"):
        check_grads(bad, args, order=1, modes=("rev",))
    with pytest.raises(AssertionError, match=r"Jacobian from unit-vector VJPs differs from the "
                                             r"one from unit-vector JVPs"):
        assert_jacobians_agree(bad, *args)


def test_jacobian_disagreement_names_real_and_imaginary_parts():
    square = _complex_square("bad_csquare_jac", _right, _conjugated)
    with pytest.raises(AssertionError, match=r"at d (Re|Im) out\[\d\] / d (Re|Im) args\[0\]\[\d\]"):
        assert_jacobians_agree(square, Z)


def test_check_vmap_compares_complex_values():
    zs = np.stack([Z, 2 * Z, Z[::-1]])
    check_vmap(lambda z: dnp.exp(z) * dnp.conj(z), (zs,))
    bad = Primitive("bad_batch_csquare", np.square, register=False)
    bad.batch = lambda size, values, axes: (dnp.conj(bad(values[0])), axes[0])
    with pytest.raises(AssertionError, match="vmap and the loop differ"):
        check_vmap(bad, (zs,))


# --- check_edge ---------------------------------------------------------------------------------


def test_check_edge_passes_a_correct_rule_at_its_edges():
    from diffkit.testing import check_edge

    good = _sine("good_sin_edge", 1.0, 1.0)
    jacobian = check_edge(good, (np.array([0.0, -0.0, np.pi]),), reference=np.sin)
    np.testing.assert_array_equal(jacobian, np.diag([1.0, 1.0, -1.0]))


@pytest.mark.parametrize("kwargs, expected", [
    ({}, "jacfwd and jacrev differ"),
    ({"jvp_scale": 2.0, "vjp_scale": 2.0}, "finite differences"),
])
def test_check_edge_reports_engines_and_finite_differences(kwargs, expected):
    from diffkit.testing import check_edge

    scales = {"jvp_scale": 1.0, "vjp_scale": 2.0, **kwargs}
    bad = _sine(f"bad_sin_edge_{scales['jvp_scale']}_{scales['vjp_scale']}", **scales)
    with pytest.raises(AssertionError, match=expected):
        check_edge(bad, (np.array([0.0, 0.5]),), reference=np.sin)


def test_check_edge_reports_a_wrong_convention_and_value():
    import diffkit.numpy as dnp
    from diffkit.testing import check_edge

    with pytest.raises(AssertionError, match="documented convention"):
        check_edge(dnp.abs, (np.array([0.0]),), differentiable=False, jacobian=1.0)
    with pytest.raises(AssertionError, match="the value"):
        check_edge(dnp.sin, (np.array([1.0]),), reference=np.cos)


def test_check_vmap_treats_nan_as_equal_and_infinity_sets_no_scale():
    """NaN in both at the same place is equal; an infinite entry elsewhere must not make
    every finite difference pass."""
    check_vmap(lambda x: x * np.nan, (np.ones((2, 3)),))

    def wrong(x):
        return x + np.array([np.inf, 0.0, 0.0])

    with pytest.raises(AssertionError, match="vmap and the loop differ"):
        check_vmap(lambda x: wrong(x) if isinstance(x, np.ndarray)   # the loop
                   else wrong(x) + np.array([0, 1e-3, 0]), (np.ones((2, 3)),))
