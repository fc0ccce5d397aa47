"""Complex numbers through the three engines, and the API's complex conventions (JAX's).

A complex function is checked with ``diffkit.testing.check_grads`` to order 2 (JVPs along
random complex directions against central finite differences, VJPs against both by JAX's
bilinear pairing ``Re(sum(w * jvp(t))) == Re(sum(vjp(w) * t))``), with tight tolerances.
Then the documented values: ``grad`` of ``|z|**2`` at ``3 + 4j`` is ``6 - 8j``;
``holomorphic=True`` gives ``f'(z)``; ``R -> C`` and ``C -> R`` Jacobians agree in both
modes; conventions at ``z = 0``; dtypes; errors.
"""

import warnings

import numpy as np
import pytest

import diffkit as dk
import diffkit.numpy as dnp
import diffkit.scipy.linalg as dsl
import diffkit.scipy.special as dss
from diffkit.errors import ComplexOutputError, InputTypeError, ShapeMismatchError
from diffkit.testing import assert_jacobians_agree, check_grads

RTOL = 1e-7       # analytic values and one engine against another
ATOL = 1e-12
FD_EPS = 1e-6     # central finite-difference step, relative to max(1, |z|)
FD_RTOL = 1e-6    # against central finite differences
FD_ATOL = 1e-8


# --- checking a complex function -----------------------------------------------------------


def _random_like(x, rng):
    """Random values shaped like ``x``, with random real and imaginary parts when ``x`` is
    complex."""
    x = np.asarray(x)
    v = rng.uniform(-1.0, 1.0, x.shape)
    if x.dtype.kind == "c":
        v = v + 1j * rng.uniform(-1.0, 1.0, x.shape)
    return np.asarray(v).astype(x.dtype)


def _pairing(w, t):
    """JAX's bilinear pairing: ``Re(sum(w * t))`` summed over the leaves."""
    return sum(float(np.real(np.sum(np.asarray(a, complex) * np.asarray(b, complex))))
               for a, b in zip(dk.tree_util.tree_leaves(w), dk.tree_util.tree_leaves(t)))


def check_complex(f, args, seed=0):
    """Check ``f`` of (possibly complex) arrays at ``args`` in both engines.

    - ``check_grads`` to order 2 with a small step and tight tolerances: JVPs along random
      complex directions (real for real arguments) against central finite differences, VJPs
      of random complex cotangents against both by the bilinear pairing, tangent and
      cotangent shapes and dtypes, and the same for the derivative functions themselves;
    - the pairing ``Re(sum(w * jvp(t))) == Re(sum(vjp(w) * t))`` once more, at rounding level.
    """
    args = tuple(np.asarray(a) for a in args)
    check_grads(f, args, order=2, eps=FD_EPS, rtol=FD_RTOL, atol=FD_ATOL)
    rng = np.random.default_rng(seed)
    t = tuple(_random_like(a, rng) for a in args)
    _, tangent = dk.jvp(f, args, t)
    out, pullback = dk.vjp(f, *args)
    w = _random_like(out, rng)
    cotangents = pullback(w)
    lhs, rhs = _pairing(w, tangent), _pairing(cotangents, t)
    scale = sum(float(np.sum(np.abs(np.asarray(x)))) for x in (w, tangent)) + 1.0
    assert abs(lhs - rhs) <= 1e-10 * scale, f"Re<w, J t> = {lhs} but Re<J^T w, t> = {rhs}"


def z_array(*shape, seed=0, dtype=np.complex128):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=shape) + 1j * rng.normal(size=shape)).astype(dtype)


Z = z_array(4)


# --- elementwise functions -----------------------------------------------------------------

HOLOMORPHIC = {
    "exp": (dnp.exp, np.exp), "log": (dnp.log, lambda z: 1 / z),
    "log1p": (dnp.log1p, lambda z: 1 / (1 + z)), "expm1": (dnp.expm1, np.exp),
    "sqrt": (dnp.sqrt, lambda z: 0.5 / np.sqrt(z)), "square": (dnp.square, lambda z: 2 * z),
    "sin": (dnp.sin, np.cos), "cos": (dnp.cos, lambda z: -np.sin(z)),
    "tan": (dnp.tan, lambda z: 1 / np.cos(z) ** 2), "sinh": (dnp.sinh, np.cosh),
    "cosh": (dnp.cosh, np.sinh), "tanh": (dnp.tanh, lambda z: 1 / np.cosh(z) ** 2),
    "arctan": (dnp.arctan, lambda z: 1 / (1 + z * z)),
    "negative": (dnp.negative, lambda z: -np.ones_like(z)),
    "cube": (lambda z: z ** 3, lambda z: 3 * z ** 2),
    "power_2.5": (lambda z: z ** 2.5, lambda z: 2.5 * z ** 1.5),
    "reciprocal": (lambda z: 1 / z, lambda z: -1 / z ** 2),
}


@pytest.mark.parametrize("name", sorted(HOLOMORPHIC))
def test_holomorphic_functions(name):
    """jvp(t) = f'(z) t and vjp(w) = f'(z) w, and grad(holomorphic=True) is f'(z)."""
    f, derivative = HOLOMORPHIC[name]
    z = 0.5 * Z + 0.3   # away from branch cuts and poles
    check_complex(f, (z,))
    t = z_array(4, seed=1)
    np.testing.assert_allclose(dk.jvp(f, (z,), (t,))[1], derivative(z) * t, rtol=RTOL)
    np.testing.assert_allclose(dk.vjp(f, z)[1](t)[0], derivative(z) * t, rtol=RTOL)
    grads = [dk.grad(lambda s: f(s), holomorphic=True)(s) for s in z]
    np.testing.assert_allclose(grads, derivative(z), rtol=RTOL)


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "power"])
def test_holomorphic_binary(name):
    f = getattr(dnp, name)
    a, b = 0.5 * Z + 1.0, 0.4 * z_array(4, seed=2) + 0.5
    check_complex(f, (a, b))
    check_complex(f, (a, b[:1].reshape(())))   # broadcasting a 0-d operand


def test_power_partials_closed_form():
    a, b = 0.5 * Z + 1.0, 0.4 * z_array(4, seed=2)
    da, db = dk.jacfwd(lambda a, b: dnp.power(a, b), argnums=(0, 1), holomorphic=True)(a, b)
    np.testing.assert_allclose(np.diag(da), b * a ** (b - 1), rtol=RTOL)
    np.testing.assert_allclose(np.diag(db), a ** b * np.log(a), rtol=RTOL)


def test_real_base_complex_exponent():
    """A real negative base with a complex exponent takes the principal complex logarithm."""
    x = np.array([-2.0, -0.5, 1.5])
    y = np.array([0.3 + 0.2j, 1.1 - 0.4j, -0.7 + 0.5j])
    check_complex(dnp.power, (x, y))
    dx = dk.jacfwd(lambda x: dnp.power(x, y))(x)
    np.testing.assert_allclose(np.diag(dx), y * x.astype(complex) ** (y - 1), rtol=RTOL)
    dy = dk.jacfwd(lambda y: dnp.power(x, y), holomorphic=True)(y)
    np.testing.assert_allclose(np.diag(dy), x.astype(complex) ** y * np.log(x.astype(complex)),
                               rtol=RTOL)


NOT_HOLOMORPHIC = {
    "abs": dnp.abs, "sign": dnp.sign, "angle": dnp.angle, "conj": dnp.conj,
    "real": dnp.real, "imag": dnp.imag, "angle_deg": lambda z: dnp.angle(z, deg=True),
    "abs_squared": lambda z: dnp.abs(z) ** 2, "conjugate_product": lambda z: z * dnp.conj(z),
    "astype_float": lambda z: dnp.astype(z, np.float64),
}


@pytest.mark.parametrize("name", sorted(NOT_HOLOMORPHIC))
def test_non_holomorphic_functions(name):
    check_complex(NOT_HOLOMORPHIC[name], (Z,))


def test_abs_sign_angle_closed_forms():
    """With z = x + iy: grad|z| = (x - iy)/|z|, grad angle = (-y - ix)/|z|^2 (JAX's
    convention d/dx - i d/dy); sign(z) = z/|z| has jvp t/|z| - z Re(conj(z) t)/|z|^3."""
    z = np.array([3 + 4j, -1 + 0.5j, 0.2 - 2j])
    x, y, r = z.real, z.imag, np.abs(z)
    grad_abs = [dk.grad(dnp.abs)(s) for s in z]
    np.testing.assert_allclose(grad_abs, (x - 1j * y) / r, rtol=RTOL)
    np.testing.assert_allclose(dk.grad(dnp.abs)(3 + 4j), 0.6 - 0.8j, rtol=RTOL)
    grad_angle = [dk.grad(dnp.angle)(s) for s in z]
    np.testing.assert_allclose(grad_angle, (-y - 1j * x) / r ** 2, rtol=RTOL)
    t = z_array(3, seed=4)
    expected = t / r - z * np.real(np.conj(z) * t) / r ** 3
    np.testing.assert_allclose(dk.jvp(dnp.sign, (z,), (t,))[1], expected, rtol=RTOL)
    np.testing.assert_allclose(dnp.sign(z), np.sign(z), rtol=RTOL)


def test_real_imag_conj_transposes():
    """Transposes under the bilinear pairing: real embeds w, imag gives -i w, conj conj."""
    w = np.array([0.5, -2.0, 1.5])
    np.testing.assert_allclose(dk.vjp(dnp.real, Z[:3])[1](w)[0], w + 0j, rtol=RTOL)
    np.testing.assert_allclose(dk.vjp(dnp.imag, Z[:3])[1](w)[0], -1j * w, rtol=RTOL)
    wc = z_array(3, seed=5)
    np.testing.assert_allclose(dk.vjp(dnp.conj, Z[:3])[1](wc)[0], np.conj(wc), rtol=RTOL)
    np.testing.assert_allclose(dk.grad(lambda z: dnp.real(dnp.conj(z)), holomorphic=False)(
        2 + 1j), 1 + 0j, rtol=RTOL)


def test_real_inputs_of_complex_helpers():
    x = np.array([-1.5, 0.5, 2.0])
    assert dnp.real(x) is x
    np.testing.assert_array_equal(dnp.imag(x), np.zeros(3))
    np.testing.assert_array_equal(dnp.angle(x), np.angle(x))
    for f in (dnp.imag, dnp.angle, lambda x: dnp.angle(x, deg=True)):
        np.testing.assert_array_equal(dk.jacfwd(f)(x), np.zeros((3, 3)))
        np.testing.assert_array_equal(dk.jacrev(f)(x), np.zeros((3, 3)))
    np.testing.assert_allclose(dk.jacrev(dnp.real)(x), np.eye(3), rtol=RTOL)


def test_predicates_and_dtypes():
    assert dnp.iscomplexobj(Z) and not dnp.iscomplexobj(Z.real)
    assert dnp.isrealobj([1.0, 2.0]) and not dnp.isrealobj([1j])
    z = np.array([1 + 0j, 2 + 1e-3j, 0j])
    np.testing.assert_array_equal(dnp.iscomplex(z), np.iscomplex(z))
    np.testing.assert_array_equal(dnp.isreal(z), np.isreal(z))
    np.testing.assert_array_equal(dnp.isreal(np.ones(3)), np.ones(3, bool))
    assert dnp.iscomplex(2.0) == np.iscomplex(2.0)
    assert dnp.complex64 is np.complex64 and dnp.complex128 is np.complex128
    np.testing.assert_allclose(dnp.angle([1j, -1.0], deg=True), [90.0, 180.0])


def test_astype_complex_to_real_keeps_the_real_part_quietly():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(dnp.astype(Z, np.float32), Z.real.astype(np.float32))
        g = dk.grad(lambda z: dnp.sum(dnp.astype(z, np.float64) ** 2))(Z)
    np.testing.assert_allclose(g, 2 * Z.real + 0j, rtol=RTOL)


# --- grad: JAX's convention ----------------------------------------------------------------


def test_grad_of_squared_modulus_is_twice_the_conjugate():
    """JAX's documented value: grad of |z|^2 at 3 + 4j is 6 - 8j (dx f - i dy f)."""
    def f(z):
        return dnp.real(z) ** 2 + dnp.imag(z) ** 2

    assert dk.grad(f)(3.0 + 4j) == pytest.approx(6 - 8j, rel=RTOL)
    assert dk.grad(lambda z: dnp.abs(z) ** 2)(3.0 + 4j) == pytest.approx(6 - 8j, rel=RTOL)
    assert dk.grad(lambda z: dnp.real(z * dnp.conj(z)))(3.0 + 4j) == pytest.approx(6 - 8j)
    np.testing.assert_allclose(dk.grad(lambda z: dnp.sum(dnp.abs(z) ** 2))(Z), 2 * np.conj(Z),
                               rtol=RTOL)


def test_grad_gives_directional_derivatives_by_the_plain_product():
    """f(z + h t) = f(z) + h Re(grad(f)(z) * t) + O(h^2), and descent along -conj(grad)."""
    def f(z):
        return dnp.sum(dnp.sin(dnp.real(z)) * dnp.imag(z) ** 2 + dnp.abs(z - 0.5))

    g = dk.grad(f)(Z)
    t = z_array(4, seed=6)
    h = 1e-6
    fd = (f(Z + h * t) - f(Z - h * t)) / (2 * h)
    assert fd == pytest.approx(np.real(np.sum(g * t)), rel=1e-6)
    # the same as the real gradient in (x, y): g = df/dx - i df/dy
    def in_parts(x, y):
        return f(x + 1j * y)
    gx, gy = dk.grad(in_parts, argnums=(0, 1))(Z.real, Z.imag)
    np.testing.assert_allclose(g, gx - 1j * gy, rtol=RTOL)
    z = np.array([3.0 + 4j])
    for _ in range(50):
        z = z - 0.05 * np.conj(dk.grad(lambda z: dnp.sum(dnp.abs(z) ** 2))(z))
    assert np.abs(z[0]) < 0.1


def test_jax_cookbook_example_jvp_and_vjp():
    """u = x^2 + sin(y), v = x y: the jvp applies the real 2x2 Jacobian to (Re t, Im t), and
    the vjp is its transpose under Re(w t)."""
    def fun(z):
        x, y = dnp.real(z), dnp.imag(z)
        return x ** 2 + dnp.sin(y) + x * y * 1j

    z, t, w = 1.5 + 0.5j, 0.7 - 0.3j, -0.2 + 1.1j
    jac = np.array([[2 * 1.5, np.cos(0.5)], [0.5, 1.5]])
    _, t_out = dk.jvp(fun, (z,), (t,))
    pair = jac @ np.array([t.real, t.imag])
    assert t_out == pytest.approx(pair[0] + 1j * pair[1], rel=RTOL)
    (w_out,) = dk.vjp(fun, z)[1](w)
    assert np.real(w * t_out) == pytest.approx(np.real(w_out * t), rel=RTOL)
    assert np.real(np.conj(w) * t_out) != pytest.approx(np.real(np.conj(w_out) * t), rel=1e-3)


def test_grad_holomorphic():
    np.testing.assert_allclose(dk.grad(dnp.sin, holomorphic=True)(3.0 + 4j), np.cos(3 + 4j),
                               rtol=RTOL)
    # not holomorphic, but promised: the derivative of the real part (as JAX)
    assert dk.grad(dnp.conj, holomorphic=True)(3.0 + 4j) == pytest.approx(1.0)
    value, g = dk.value_and_grad(lambda z: z ** 3, holomorphic=True)(1.0 + 2j)
    assert value == pytest.approx((1 + 2j) ** 3) and g == pytest.approx(3 * (1 + 2j) ** 2)
    g = dk.grad(lambda a, b: dnp.sum(a * dnp.exp(b)), argnums=(0, 1), holomorphic=True)(
        Z, Z[::-1])
    np.testing.assert_allclose(g[0], np.exp(Z[::-1]), rtol=RTOL)
    np.testing.assert_allclose(g[1], Z * np.exp(Z[::-1]), rtol=RTOL)


def test_grad_errors():
    with pytest.raises(ComplexOutputError, match="holomorphic=True"):
        dk.grad(dnp.sin)(1.0 + 2j)
    with pytest.raises(ComplexOutputError, match="complex128"):
        dk.grad(lambda x: x * 1j)(2.0)
    with pytest.raises(InputTypeError, match="holomorphic=True requires inputs with complex"):
        dk.grad(dnp.sin, holomorphic=True)(1.0)
    with pytest.raises(ComplexOutputError, match="requires a complex output"):
        dk.grad(dnp.abs, holomorphic=True)(1.0 + 1j)


def test_grad_of_real_argument_through_complex_values():
    """A real argument's gradient is real (and keeps float32), whatever complex values it
    passes through."""
    def f(x):
        z = dnp.exp(1j * x) * (2.0 - 1j) + x
        return dnp.sum(dnp.abs(z) ** 2)

    x = np.array([0.3, -1.2, 2.5])
    g = dk.grad(f)(x)
    assert g.dtype == np.float64
    eps = 1e-6
    fd = [(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(3)]
    np.testing.assert_allclose(g, fd, rtol=FD_RTOL)
    g32 = dk.grad(f)(x.astype(np.float32))
    assert g32.dtype == np.float32
    np.testing.assert_allclose(g32, g, rtol=1e-4)
    check_complex(lambda x: dnp.exp(1j * x) * x, (x,))


# --- Jacobians and Hessians ----------------------------------------------------------------


def test_jacobians_holomorphic():
    def f(z):
        return dnp.sin(z) * z[::-1]

    z = Z
    expected = np.diag(np.cos(z) * z[::-1]) + np.sin(z)[:, None] * np.eye(4)[::-1]
    for jac in (dk.jacfwd, dk.jacrev, dk.jacobian):
        got = jac(f, holomorphic=True)(z)
        assert got.dtype == np.complex128
        np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(dk.jacrev(f, holomorphic=True, chunk_size=3)(z), expected,
                               rtol=RTOL, atol=ATOL)
    for mode in ("fwd", "rev"):
        np.testing.assert_allclose(dk.jacobian(f, mode=mode, holomorphic=True)(z), expected,
                                   rtol=RTOL, atol=ATOL)


def test_hessian_holomorphic():
    def f(z):
        return dnp.sum(dnp.exp(z) * z[0])

    h = dk.hessian(f, holomorphic=True)(Z)
    expected = np.diag(np.exp(Z) * Z[0])
    expected[0, :] += np.exp(Z)
    expected[:, 0] += np.exp(Z)
    np.testing.assert_allclose(h, expected, rtol=RTOL, atol=ATOL)


def _r_to_c(x):
    return dnp.exp(1j * x) * x[::-1] + x ** 2


def _c_to_r(z):
    return dnp.abs(z) ** 2 * dnp.real(z[::-1]) + dnp.angle(z)


def test_jacobian_real_to_complex_both_modes():
    """R -> C: the Jacobian is df/dx (complex), the same in both modes."""
    x = np.array([0.3, -1.2, 2.5])
    expected = np.diag(1j * np.exp(1j * x) * x[::-1] + 2 * x) + \
        np.exp(1j * x)[:, None] * np.eye(3)[::-1]
    results = [dk.jacfwd(_r_to_c)(x), dk.jacrev(_r_to_c)(x), dk.jacobian(_r_to_c)(x),
               dk.jacrev(_r_to_c, chunk_size=2)(x), dk.jacobian(_r_to_c, mode="rev")(x)]
    for got in results:
        assert got.dtype == np.complex128 and got.shape == (3, 3)
        np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)


def test_jacobian_complex_to_real_both_modes():
    """C -> R: row i is grad(f_i) = df_i/dx - i df_i/dy, the same in both modes."""
    z = Z[:3]

    def in_parts(x, y):
        return _c_to_r(x + 1j * y)

    jx, jy = dk.jacfwd(in_parts, argnums=(0, 1))(z.real, z.imag)
    expected = jx - 1j * jy
    results = [dk.jacfwd(_c_to_r)(z), dk.jacrev(_c_to_r)(z), dk.jacobian(_c_to_r)(z),
               dk.jacobian(_c_to_r, mode="fwd")(z), dk.jacrev(_c_to_r, chunk_size=1)(z)]
    for got in results:
        assert got.dtype == np.complex128 and got.shape == (3, 3)
        np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)
    rows = np.array([dk.grad(lambda z, i=i: _c_to_r(z)[i])(z) for i in range(3)])
    np.testing.assert_allclose(rows, expected, rtol=RTOL, atol=ATOL)


def test_jacobians_with_mixed_pytrees():
    """Real and complex leaves together: R -> R blocks stay real, the others are complex."""
    def f(params):
        x, z = params["x"], params["z"]
        return {"a": dnp.sum(x * dnp.abs(z) ** 2), "b": dnp.sin(x) * 2.0}

    params = {"x": np.array([0.5, -1.0]), "z": np.array([1 + 1j, 2 - 0.5j])}
    fwd, rev = dk.jacfwd(f)(params), dk.jacrev(f)(params)
    for key in ("a", "b"):
        for arg in ("x", "z"):
            np.testing.assert_allclose(fwd[key][arg], rev[key][arg], rtol=RTOL, atol=ATOL)
    assert fwd["b"]["x"].dtype == np.float64 and fwd["a"]["z"].dtype == np.complex128
    np.testing.assert_allclose(fwd["a"]["z"], 2 * params["x"] * np.conj(params["z"]),
                               rtol=RTOL)

    def g(x, y):
        return x * (1 + 2j) + y, dnp.sum(x * y)

    x, y = np.array([1.0, 2.0]), np.array([0.5, -0.5])
    fwd = dk.jacfwd(g, argnums=(0, 1))(x, y)
    rev = dk.jacrev(g, argnums=(0, 1))(x, y)
    for out in range(2):
        for arg in range(2):
            np.testing.assert_allclose(fwd[out][arg], rev[out][arg], rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(rev[0][0], (1 + 2j) * np.eye(2), rtol=RTOL)


def test_complex_jacobians_agree_with_unit_vector_loops():
    """The loops push 1 and 1j and pull 1 and -1j: in real coordinates they must agree with
    each other and with jacfwd/jacrev/jacobian (directly for R -> C and C -> R, and on the
    real and imaginary parts for C -> C)."""
    assert_jacobians_agree(_r_to_c, np.array([0.3, -1.2, 2.5]))
    assert_jacobians_agree(_c_to_r, Z[:3])
    assert_jacobians_agree(lambda z: dnp.exp(z) * dnp.conj(z[::-1]), Z[:3])
    params = {"x": np.array([0.5, -1.0]), "z": np.array([1 + 1j, 2 - 0.5j])}
    assert_jacobians_agree(lambda p: {"a": dnp.sum(p["x"] * dnp.abs(p["z"]) ** 2),
                                      "b": dnp.sin(p["x"]) * p["z"]}, params)


def test_jacobian_errors():
    def f(z):
        return dnp.conj(z) * z[::-1]

    for jac in (dk.jacfwd, dk.jacrev, dk.jacobian):
        with pytest.raises(InputTypeError, match="holomorphic=True"):
            jac(f)(Z)
        with pytest.raises(InputTypeError, match="requires inputs with complex dtype"):
            jac(dnp.sin, holomorphic=True)(np.ones(3))
        with pytest.raises(InputTypeError, match="requires outputs with complex dtype"):
            jac(dnp.abs, holomorphic=True)(Z)
    with pytest.raises(InputTypeError, match="no complex Hessian"):
        dk.hessian(lambda z: dnp.sum(dnp.abs(z) ** 2))(Z)
    with pytest.raises(InputTypeError, match="holomorphic=True requires inputs"):
        dk.hessian(lambda x: dnp.sum(x ** 3), holomorphic=True)(np.ones(2))


def test_hessian_in_real_and_imaginary_parts():
    """The advertised alternative for a real function of complex inputs."""
    def f(x, y):
        z = x + 1j * y
        return dnp.sum(dnp.abs(z) ** 2)

    h = dk.hessian(f, argnums=(0, 1))(Z.real, Z.imag)
    np.testing.assert_allclose(h[0][0], 2 * np.eye(4), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(h[0][1], np.zeros((4, 4)), atol=ATOL)
    np.testing.assert_allclose(h[1][1], 2 * np.eye(4), rtol=RTOL, atol=ATOL)


def test_hvp_of_a_real_function_of_complex_inputs():
    """hvp = jvp of grad: the directional derivative of grad(f) (complex-valued)."""
    def f(z):
        return dnp.sum(dnp.abs(z) ** 2 * dnp.real(z))

    t = z_array(4, seed=8)
    (hv,) = dk.hvp(f, (Z,), (t,))
    eps = 1e-6
    fd = (dk.grad(f)(Z + eps * t) - dk.grad(f)(Z - eps * t)) / (2 * eps)
    np.testing.assert_allclose(hv, fd, rtol=FD_RTOL, atol=FD_ATOL)


# --- conventions at z = 0 --------------------------------------------------------------------


@pytest.mark.parametrize("name", ["abs", "sign", "angle"])
def test_derivative_at_zero_is_zero_in_both_modes(name):
    f = getattr(dnp, name)
    z = np.array([0j, 1 + 1j])
    _, tangent = dk.jvp(f, (z,), (np.array([1 + 2j, 0j]),))
    assert np.all(np.isfinite(tangent)) and tangent[0] == 0
    (ct,) = dk.vjp(f, z)[1](np.ones(2, np.asarray(f(z)).dtype))
    assert np.all(np.isfinite(ct)) and ct[0] == 0
    for part in (dnp.real, dnp.imag):   # real outputs: C -> R Jacobians in both modes
        def g(z, part=part):
            return part(f(z))
        fwd, rev = dk.jacfwd(g)(z), dk.jacrev(g)(z)
        np.testing.assert_allclose(fwd, rev, rtol=RTOL, atol=ATOL)
        assert fwd[0, 0] == 0


# --- dtypes, vjp cotangents, vmap --------------------------------------------------------------


def test_complex64_stays_complex64():
    z = Z.astype(np.complex64)

    def f(z):
        return dnp.sum(dnp.abs(dnp.exp(z)) ** 2)

    g = dk.grad(f)(z)
    assert g.dtype == np.complex64
    np.testing.assert_allclose(g, dk.grad(f)(Z), rtol=1e-4)
    _, t = dk.jvp(dnp.sin, (z,), (z,))
    assert t.dtype == np.complex64
    (ct,) = dk.vjp(dnp.abs, z)[1](np.ones(4, np.float32))
    assert ct.dtype == np.complex64
    assert dk.jacfwd(dnp.abs)(z).dtype == np.complex64
    assert dk.jacrev(dnp.abs)(z).dtype == np.complex64
    assert dk.jacrev(lambda z: z * 2, holomorphic=True)(z).dtype == np.complex64
    x32 = np.array([0.5, 1.5], np.float32)
    assert dk.jacfwd(lambda x: x * 1j)(x32).dtype == np.complex64
    assert dk.jacrev(lambda x: x * 1j)(x32).dtype == np.complex64


def test_cotangent_and_tangent_kinds_are_checked():
    _, pullback = dk.vjp(dnp.exp, Z)
    with pytest.raises(ShapeMismatchError, match="complex"):
        pullback(np.ones(4))
    with pytest.raises(ShapeMismatchError, match="complex"):
        dk.jvp(dnp.exp, (Z,), (np.ones(4),))


def test_vmap_of_complex_gradients_and_jacobians():
    zs = z_array(3, 4, seed=9)

    def f(z):
        return dnp.sum(dnp.abs(dnp.sin(z)) ** 2)

    batched = dk.vmap(dk.grad(f))(zs)
    np.testing.assert_allclose(batched, [dk.grad(f)(z) for z in zs], rtol=RTOL)
    jac = dk.vmap(dk.jacrev(dnp.sin, holomorphic=True), in_axes=1)(zs)
    np.testing.assert_allclose(jac, [np.diag(np.cos(zs[:, j])) for j in range(4)], rtol=RTOL)
    xs = np.linspace(-1, 1, 6).reshape(2, 3)
    np.testing.assert_allclose(dk.vmap(dk.jacrev(_r_to_c))(xs),
                               [dk.jacfwd(_r_to_c)(x) for x in xs], rtol=RTOL, atol=ATOL)


def test_linearize_complex():
    out, jvp_fn = dk.linearize(lambda z: dnp.abs(z) * dnp.exp(z), Z)
    t = z_array(4, seed=10)
    np.testing.assert_allclose(jvp_fn(t), dk.jvp(lambda z: dnp.abs(z) * dnp.exp(z), (Z,),
                                                 (t,))[1], rtol=RTOL)


def test_second_order_through_complex_intermediates():
    """Hessians of real functions that pass through complex values, all four nestings."""
    def f(x):
        z = x[0] + 1j * x[1]
        return dnp.real(dnp.exp(z) * dnp.conj(z)) + dnp.abs(z * z + 1.0)

    x = np.array([0.4, -0.7])
    h = dk.hessian(f)(x)
    for nest in (dk.jacfwd(dk.jacfwd(f)), dk.jacrev(dk.jacrev(f)), dk.jacrev(dk.jacfwd(f))):
        np.testing.assert_allclose(nest(x), h, rtol=RTOL, atol=1e-10)
    eps = 1e-5
    fd = np.array([(dk.grad(f)(x + eps * e) - dk.grad(f)(x - eps * e)) / (2 * eps)
                   for e in np.eye(2)])
    np.testing.assert_allclose(h, fd, rtol=1e-6, atol=1e-8)


def test_plain_numpy_spellings_on_traced_values():
    """z.real, z.imag, z.conj(), np.real, np.conj, np.abs and abs() on traced values."""
    def f(z):
        return dnp.sum(z.real ** 2 * np.imag(z) + np.real(z * np.conj(z)) + abs(z) * z.conj().imag)

    def reference(z):
        x, y = dnp.real(z), dnp.imag(z)
        return dnp.sum(x ** 2 * y + x ** 2 + y ** 2 - dnp.abs(z) * y)

    np.testing.assert_allclose(dk.grad(f)(Z), dk.grad(reference)(Z), rtol=RTOL)
    np.testing.assert_allclose(dk.jacfwd(f)(Z), dk.grad(reference)(Z), rtol=RTOL)


# --- linear algebra, FFTs and reductions of complex arrays -----------------------------------

M = z_array(3, 3, seed=11) + 3 * np.eye(3)
RHS = z_array(3, 2, seed=12)
HPD = M @ M.conj().T


def _hermitian(a):
    """The Hermitian part: these rules, like NumPy, read one triangle of a Hermitian input,
    so finite differences must stay Hermitian."""
    return (a + dnp.conj(a).T) / 2


MATRIX_FUNCTIONS = {
    "prod": (dnp.prod, (Z,)), "cumprod": (dnp.cumprod, (Z,)), "var": (dnp.var, (Z,)),
    "vdot": (dnp.vdot, (Z, Z[::-1])), "matmul": (dnp.matmul, (M, RHS)),
    "einsum": (lambda a, b: dnp.einsum("ij,jk->ik", a, b), (M, RHS)),
    "inv": (dnp.linalg.inv, (M,)), "solve": (dnp.linalg.solve, (M, RHS)),
    "det": (dnp.linalg.det, (M,)), "slogdet": (lambda a: dnp.linalg.slogdet(a)[1], (M,)),
    "norm": (dnp.linalg.norm, (M,)), "qr_r": (lambda a: dnp.linalg.qr(a)[1], (M,)),
    "svdvals": (lambda a: dnp.linalg.svd(a, compute_uv=False), (M,)),
    "eigvals": (dnp.linalg.eigvals, (M,)),
    "cholesky": (lambda a: dnp.linalg.cholesky(_hermitian(a)), (HPD,)),
    "eigvalsh": (lambda a: dnp.linalg.eigvalsh(_hermitian(a)), (HPD,)),
    "cho_solve": (lambda a, b: dsl.cho_solve(dsl.cho_factor(_hermitian(a)), b), (HPD, RHS)),
    "expm": (dsl.expm, (0.3 * M,)), "fft": (dnp.fft.fft, (Z,)), "ifft2": (dnp.fft.ifft2, (M,)),
    "logsumexp": (dss.logsumexp, (0.3 * Z,)),
}


@pytest.mark.parametrize("name", sorted(MATRIX_FUNCTIONS))
def test_matrix_functions_of_complex_arrays(name):
    fun, args = MATRIX_FUNCTIONS[name]
    check_complex(fun, args)
