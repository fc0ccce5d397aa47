"""Regression tests for derivatives at edges (signed zeros, poles, domain ends, single
precision) that the edge checker found wrong: each asserts a closed form, a finite
difference of the NumPy/SciPy function, or the documented convention of docs/conventions.md,
in both engines (jacfwd == jacrev bit for bit) and, for Hessians, in every order."""

import numpy as np
import scipy.special as sc

import diffkit as dk
import diffkit.numpy as dnp
import diffkit.scipy.special as dsp

INF, NAN = np.inf, np.nan


def jacobians(fun, *args):
    """jacfwd and jacrev of ``fun`` in all its arguments, asserted identical bit for bit."""
    argnums = tuple(range(len(args)))
    with np.errstate(all="ignore"):
        forward = dk.jacfwd(fun, argnums=argnums)(*args)
        reverse = dk.jacrev(fun, argnums=argnums)(*args)
    for f, r in zip(forward, reverse):
        np.testing.assert_array_equal(f, r)
    return forward


def hessians(fun, x):
    """The Hessian of scalar ``fun`` at ``x`` in all four orders of the engines, asserted
    equal to rounding (infinities and NaN identical) and symmetric; returned once."""
    x = np.asarray(x, np.float64)
    with np.errstate(all="ignore"):
        orders = [dk.jacfwd(dk.jacrev(fun))(x), dk.jacrev(dk.jacfwd(fun))(x),
                  dk.jacfwd(dk.jacfwd(fun))(x), dk.jacrev(dk.jacrev(fun))(x)]
    for h in orders[1:]:
        np.testing.assert_allclose(h, orders[0], rtol=1e-12, atol=0)
    np.testing.assert_allclose(orders[0], orders[0].T, rtol=1e-12, atol=0)
    return orders[0]


# --- signed zeros -------------------------------------------------------------------------


def test_sqrt_and_log_derivatives_at_minus_zero_are_plus_inf():
    """sqrt(-0.0) == -0.0 and log(-0.0) == -inf as at +0.0: the derivative is +inf there too,
    not 1 / (2 * -0.0) = -inf."""
    x = np.array([-0.0, 0.0, 4.0])
    np.testing.assert_array_equal(np.diag(jacobians(dnp.sqrt, x)[0]), [INF, INF, 0.25])
    np.testing.assert_array_equal(np.diag(jacobians(dnp.log, x)[0]), [INF, INF, 0.25])
    assert dk.grad(dnp.sqrt)(-0.0) == INF
    assert dk.grad(dnp.log)(-0.0) == INF
    # a zero tangent still gives 0 (the 0 x inf rule), in both engines
    np.testing.assert_array_equal(dk.jvp(dnp.sqrt, (-0.0,), (0.0,))[1], 0.0)
    np.testing.assert_array_equal(dk.vjp(dnp.log, -0.0)[1](0.0)[0], 0.0)


# --- single precision ---------------------------------------------------------------------


def test_scalar_base_power_keeps_float32():
    """2.0 ** y with y float32 is float32 in NumPy 2 (a Python float is weak), and so are its
    tangent and cotangent; the value is log(2) 2**y."""
    y = np.array([0.0, 1.0, -3.0], np.float32)
    for fun in (lambda v: dnp.power(2.0, v), lambda v: 2.0 ** v, lambda v: dnp.power(2, v)):
        out, tangent = dk.jvp(fun, (y,), (np.ones_like(y),))
        assert out.dtype == tangent.dtype == np.float32
        np.testing.assert_allclose(tangent, np.log(2.0) * 2.0 ** y.astype(np.float64),
                                   rtol=1e-6)
        assert dk.vjp(fun, y)[1](np.ones_like(y))[0].dtype == np.float32


def test_hypergeometric_tangents_keep_float32_with_integer_parameters():
    """hyp1f1(a, b, x) and hyp2f1(a, b, c, z) with integer parameters and float32 x / z are
    float32; so are their x- and z-tangents: d/dx 1F1 = a/b 1F1(a+1; b+1; x) and
    d/dz 2F1 = ab/c 2F1(a+1, b+1; c+1; z)."""
    a, b, c = np.array([1, 2], np.int16), np.array([1, 3], np.int16), np.array([2, 3], np.int16)
    x = np.array([0.0, 0.5], np.float32)
    out, t = dk.jvp(lambda v: dsp.hyp1f1(a, b, v), (x,), (np.ones_like(x),))
    assert out.dtype == t.dtype == np.float32
    np.testing.assert_allclose(t, a / b * sc.hyp1f1(a + 1, b + 1, x.astype(np.float64)),
                               rtol=1e-6)
    out, t = dk.jvp(lambda v: dsp.hyp2f1(a, b, c, v), (x,), (np.ones_like(x),))
    assert out.dtype == t.dtype == np.float32
    np.testing.assert_allclose(t, a * b / c * sc.hyp2f1(a + 1, b + 1, c + 1,
                                                        x.astype(np.float64)), rtol=1e-6)


# --- power's Hessian --------------------------------------------------------------------


def _power_of(v):
    return dnp.power(v[0], v[1])


def test_power_hessian_at_zero_and_negative_base_is_symmetric():
    """Where x <= 0 power's partial in y is 0 (the documented convention), so its derivative
    in x is 0 and the mixed second derivative is 0 in both orders; d2/dx2 is that of
    x**y with y fixed (6x for y = 3, the one-sided limit 2/x**3 -> +inf for y = -1)."""
    cases = {(0.0, 0.0): 0.0, (0.0, 1.0): 0.0, (0.0, 2.0): 2.0, (0.0, 3.0): 0.0,
             (0.0, 0.5): -INF, (0.0, -1.0): INF, (-2.0, 3.0): -12.0, (-1.5, 2.0): 2.0}
    for (x, y), second_in_x in cases.items():
        np.testing.assert_array_equal(hessians(_power_of, [x, y]),
                                      [[second_in_x, 0.0], [0.0, 0.0]], err_msg=f"{x}, {y}")
    # for x > 0, the closed forms: d2/dx2 = y (y-1) x**(y-2), d2/dxdy = x**(y-1) (1 + y log x),
    # d2/dy2 = x**y log(x)**2
    x, y = 2.0, 3.0
    mixed = x ** (y - 1) * (1 + y * np.log(x))
    expected = [[y * (y - 1) * x ** (y - 2), mixed], [mixed, x ** y * np.log(x) ** 2]]
    np.testing.assert_allclose(hessians(_power_of, [x, y]), expected, rtol=1e-7)


def test_power_second_derivative_in_x_at_negative_base_matches_finite_differences():
    """At x < 0 with an integer exponent x**y is smooth in x: d2/dx2 (-2)**3 = 6 * -2,
    against central differences of NumPy's power (rtol 1e-6 for the step)."""
    h = 1e-4
    fd = (np.power(-2.0 + h, 3.0) - 2 * np.power(-2.0, 3.0) + np.power(-2.0 - h, 3.0)) / h ** 2
    np.testing.assert_allclose(hessians(_power_of, [-2.0, 3.0])[0, 0], fd, rtol=1e-6)


# --- arctan2 at the origin ------------------------------------------------------------------


def test_arctan2_derivatives_are_zero_at_the_origin_at_every_order():
    """arctan2 has no derivative at (0, 0); the documented convention is 0 in both arguments,
    and so at every order (a symmetric, zero Hessian and third derivative). Away from the
    origin the Hessian is the closed form of atan(y / x): [[-2xy, y2 - x2], [y2 - x2, 2xy]] / r4
    in (y, x)."""
    def f(v):
        return dnp.arctan2(v[0], v[1])

    for origin in ([0.0, 0.0], [-0.0, 0.0], [0.0, -0.0]):
        np.testing.assert_array_equal(hessians(f, origin), np.zeros((2, 2)))
        third = dk.jacfwd(dk.jacfwd(dk.jacrev(f)))(np.array(origin))
        np.testing.assert_array_equal(third, np.zeros((2, 2, 2)))
    y, x = 1.5, -0.5
    r4 = (x * x + y * y) ** 2
    expected = np.array([[-2 * x * y, y * y - x * x], [y * y - x * x, 2 * x * y]]) / r4
    np.testing.assert_allclose(hessians(f, [y, x]), expected, rtol=1e-7)


# --- complex log at 0 -----------------------------------------------------------------------


def test_complex_log_derivative_at_zero_is_nan_in_every_coordinate_in_both_engines():
    """The complex derivative 1/z has no direction-independent value at z = 0: NaN in every
    real coordinate, as complex sqrt (not IEEE's 1 / 0j = inf + nan j, whose NaN the engines
    placed differently). Elsewhere it is 1/z; a zero tangent still gives 0."""
    def of_parts(re, im):
        out = dnp.log(re + 1j * im)
        return dnp.stack([dnp.real(out), dnp.imag(out)])

    re, im = np.array([0.0, 3.0]), np.array([0.0, -4.0])
    d_re, d_im = jacobians(of_parts, re, im)
    assert np.isnan(d_re[:, 0, 0]).all() and np.isnan(d_im[:, 0, 0]).all()
    inverse = 1 / (3.0 - 4.0j)  # d log / d re = 1/z, d log / d im = i/z
    np.testing.assert_allclose(d_re[:, 1, 1], [inverse.real, inverse.imag], rtol=1e-12)
    np.testing.assert_allclose(d_im[:, 1, 1], [(1j * inverse).real, (1j * inverse).imag],
                               rtol=1e-12)
    assert dk.jvp(dnp.log, (np.complex128(0),), (np.complex128(0),))[1] == 0


# --- xlogy, xlog1py, rel_entr, kl_div at x = 0 ----------------------------------------------


def _pair(f):
    return lambda v: f(v[0], v[1])


def test_xlogy_family_hessians_at_zero_are_symmetric_closed_forms():
    """At x = 0 the mixed derivative is the derivative of the x-partial (log y, log1p y,
    log x - log y) in y: 1/y, 1/(1+y), -1/y, also in the other order (+inf at y = 0, the
    one-sided slope of log there); the second derivative in y, -x/y**2 (x/y**2), is 0."""
    cases = [
        (dsp.xlogy, [0.0, 3.0], [[0.0, 1 / 3], [1 / 3, 0.0]]),
        (dsp.xlogy, [0.0, 0.0], [[0.0, INF], [INF, 0.0]]),
        (dsp.xlogy, [2.0, 0.0], [[0.0, INF], [INF, -INF]]),
        (dsp.xlog1py, [0.0, -1.0], [[0.0, INF], [INF, 0.0]]),
        (dsp.xlog1py, [0.0, 1.0], [[0.0, 0.5], [0.5, 0.0]]),
        (dsp.rel_entr, [0.0, 2.0], [[INF, -0.5], [-0.5, 0.0]]),
        (dsp.kl_div, [0.0, 2.0], [[INF, -0.5], [-0.5, 0.0]]),
    ]
    for f, point, expected in cases:
        np.testing.assert_allclose(hessians(_pair(f), point), expected, rtol=1e-12, atol=0,
                                   err_msg=f"{f.__name__} at {point}")
    # inside the domain: [[1/x, -1/y], [-1/y, x/y**2]] for both entropies
    x, y = 1.5, 2.0
    inside = [[1 / x, -1 / y], [-1 / y, x / y ** 2]]
    for f in (dsp.rel_entr, dsp.kl_div):
        np.testing.assert_allclose(hessians(_pair(f), [x, y]), inside, rtol=1e-7)
    # the documented first derivatives at x = 0 stay: xlogy -> (log y, 0), rel_entr ->
    # (-inf, 0), kl_div -> (-inf, 1); d/dy xlogy(x, y) = x / y elsewhere
    x, y = np.array([0.0, 0.0, 2.0]), np.array([3.0, 0.0, 4.0])
    dx, dy = jacobians(dsp.xlogy, x, y)
    np.testing.assert_array_equal(np.diag(dx), [np.log(3.0), -INF, np.log(4.0)])
    np.testing.assert_array_equal(np.diag(dy), [0.0, 0.0, 0.5])
    dx, dy = jacobians(dsp.rel_entr, np.array([0.0]), np.array([2.0]))
    np.testing.assert_array_equal([dx[0, 0], dy[0, 0]], [-INF, 0.0])
    dx, dy = jacobians(dsp.kl_div, np.array([0.0]), np.array([2.0]))
    np.testing.assert_array_equal([dx[0, 0], dy[0, 0]], [-INF, 1.0])


# --- the incomplete beta function at x = 0 and x = 1 ------------------------------------


def _betainc_of(v):
    return dsp.betainc(v[0], v[1], v[2])


def test_betainc_hessian_at_the_ends_is_the_one_sided_limit():
    """I_x(a, b) at x = 0 (x = 1): the density x^(a-1) (1-x)^(b-1) / B(a, b) and its
    a-derivatives take their limits. For a = b = 2 the density is 6 x (1 - x): d2I/dx2 = 6
    (-6 at x = 1), every mixed derivative 0 (x log x -> 0); for a = b = 1 (I = x) d2I/da dx
    = log x + digamma(2) - digamma(1) = -inf at x = 0 and d2I/db dx = 1 (mirrored at x = 1).
    Before, 0 * -inf gave NaN rows."""
    cases = [([2.0, 2.0, 0.0], [[0, 0, 0], [0, 0, 0], [0, 0, 6.0]]),
             ([2.0, 2.0, 1.0], [[0, 0, 0], [0, 0, 0], [0, 0, -6.0]]),
             ([1.0, 1.0, 0.0], [[0, 0, -INF], [0, 0, 1.0], [-INF, 1.0, 0]]),
             ([1.0, 1.0, 1.0], [[0, 0, 1.0], [0, 0, -INF], [1.0, -INF, 0]]),
             ([3.0, 1.5, 0.0], [[0, 0, 0], [0, 0, 0], [0, 0, 0]])]
    for point, expected in cases:
        np.testing.assert_allclose(hessians(_betainc_of, point), expected, rtol=1e-12,
                                   atol=1e-12, err_msg=f"betainc at {point}")
        np.testing.assert_allclose(hessians(lambda v: dsp.betaincc(v[0], v[1], v[2]), point),
                                   -np.array(expected), rtol=1e-12, atol=1e-12)


def test_betainc_second_derivative_in_x_near_zero_matches_finite_differences():
    """d2I/dx2 at x = 0 for a = 2, b = 3: the density is 12 x (1 - x)**2, whose slope at 0 is
    12; one-sided second differences of SciPy's betainc agree (rtol 1e-5 for the step)."""
    h = 1e-4
    fd = (sc.betainc(2.0, 3.0, 2 * h) - 2 * sc.betainc(2.0, 3.0, h) + sc.betainc(2.0, 3.0, 0.0))
    np.testing.assert_allclose(hessians(_betainc_of, [2.0, 3.0, 0.0])[2, 2], 12.0, rtol=1e-12)
    np.testing.assert_allclose(fd / h ** 2, 12.0, rtol=1e-3)  # O(h) one-sided error


# --- the inverse incomplete gamma and beta functions at the end where out = 0 ------------


def test_inverse_incomplete_functions_at_zero_are_the_one_sided_limits():
    """At p = 0 (q = 1) the inverse is 0 for every shape: d out/da = 0 and d2 out/da2 = 0;
    d2 out/da dp = +inf (out ~ c p^(1/a), d out/da ~ -out log(out) / a); in p, out = -log(1-p)
    for a = 1 (second derivative 1) and out ~ sqrt(2p) for a = 2 (-inf). The beta inverse
    at a = b = 1 is out = y (d2 out/db dy = digamma(1) - digamma(2) = -1), at a = b = 2
    out ~ sqrt(y / 3). Before, 0/0 gave NaN shape derivatives and asymmetric Hessians."""
    gammaincinv = lambda v: dsp.gammaincinv(v[0], v[1])  # noqa: E731
    gammainccinv = lambda v: dsp.gammainccinv(v[0], v[1])  # noqa: E731
    betaincinv = lambda v: dsp.betaincinv(v[0], v[1], v[2])  # noqa: E731
    betainccinv = lambda v: dsp.betainccinv(v[0], v[1], v[2])  # noqa: E731
    cases = [
        (gammaincinv, [1.0, 0.0], [0.0, 1.0], [[0, INF], [INF, 1.0]]),
        (gammaincinv, [2.0, 0.0], [0.0, INF], [[0, INF], [INF, -INF]]),
        (gammainccinv, [1.0, 1.0], [0.0, -1.0], [[0, -INF], [-INF, 1.0]]),
        (betaincinv, [1.0, 1.0, 0.0], [0.0, 0.0, 1.0], [[0, 0, INF], [0, 0, -1.0],
                                                       [INF, -1.0, 0]]),
        (betaincinv, [2.0, 2.0, 0.0], [0.0, 0.0, INF], [[0, 0, INF], [0, 0, -INF],
                                                       [INF, -INF, -INF]]),
        (betaincinv, [2.0, 2.0, 1.0], [0.0, 0.0, INF], [[0, 0, -INF], [0, 0, INF],
                                                       [-INF, INF, INF]]),
        (betainccinv, [2.0, 2.0, 1.0], [0.0, 0.0, -INF], [[0, 0, -INF], [0, 0, INF],
                                                         [-INF, INF, -INF]]),
    ]
    for f, point, gradient, hessian in cases:
        (jacobian,) = jacobians(f, np.array(point))
        np.testing.assert_array_equal(jacobian, gradient, err_msg=f"at {point}")
        np.testing.assert_allclose(hessians(f, point), hessian, rtol=1e-12, atol=0,
                                   err_msg=f"at {point}")



# --- prod with an infinite and a zero entry ------------------------------------------------


def test_prod_hessian_with_infinite_and_zero_entries():
    """d2 prod / dx_i dx_j is the product of the entries other than i and j (0 on the
    diagonal): for [inf, 0, 2] that is [[0, 2, 0], [2, 0, inf], [0, inf, 0]], in all four
    orders of the engines; before, the cumulative-product rules multiplied 0 by inf (NaN)."""
    np.testing.assert_array_equal(hessians(dnp.prod, [INF, 0.0, 2.0]),
                                  [[0, 2.0, 0], [2.0, 0, INF], [0, INF, 0]])
    np.testing.assert_array_equal(hessians(dnp.prod, [0.0, 3.0, INF, 2.0]),
                                  [[0, INF, 6.0, INF], [INF, 0, 0, 0], [6.0, 0, 0, 0],
                                   [INF, 0, 0, 0]])
    # cumprod's Jacobian: d out[k] / d x[j] = prod of x[:k+1] without x[j]
    x = np.array([INF, 0.0, 2.0])
    (jac,) = jacobians(dnp.cumprod, x)
    np.testing.assert_array_equal(jac, [[1.0, 0, 0], [0.0, INF, 0], [0.0, 2 * INF, NAN]])
