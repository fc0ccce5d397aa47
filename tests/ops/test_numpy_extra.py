"""Differentiable NumPy functions beyond the core families: ``piecewise``, ``polyfit``,
``roots``, ``polydiv``, ``apply_along_axis``, ``apply_over_axes``, ``vectorize``,
``put_along_axis``, ``choose``, ``extract``, ``histogram`` (weights), ``unique`` (values),
``fill_diagonal``, and float32 ``logspace``. Values against NumPy itself, derivatives
against central finite differences of the NumPy function (step 1e-6, rtol 1e-6) or closed
forms (rtol 1e-7), in both engines and under ``vmap``; plain NumPy calls on traced values
route here."""

import numpy as np
import pytest

import diffkit as dk
import diffkit.numpy as dnp

RTOL = 1e-7
FD_RTOL = 1e-6


def central_jacobian(f, x, eps=1e-6):
    """The Jacobian of ``f`` (plain NumPy in, plain NumPy out) by central differences."""
    x = np.asarray(x, float)
    columns = []
    for i in range(x.size):
        step = np.zeros(x.size)
        step[i] = eps
        step = step.reshape(x.shape)
        columns.append((np.asarray(f(x + step)) - np.asarray(f(x - step))) / (2 * eps))
    return np.stack(columns, axis=-1).reshape(np.shape(f(x)) + x.shape)


def both_jacobians(f, x):
    """jacfwd and jacrev of ``f`` at ``x``; they must agree to rounding."""
    forward, reverse = dk.jacfwd(f)(x), dk.jacrev(f)(x)
    np.testing.assert_allclose(forward, reverse, rtol=1e-12, atol=1e-14)
    return forward


# --- logspace keeps float32 ----------------------------------------------------------------


@pytest.mark.parametrize("start", [np.float32(1.5), np.array([0.5, 1.5], np.float32)])
def test_logspace_float32_in_both_engines(start):
    f = lambda s: dnp.logspace(s, 2.0, 4)  # noqa: E731
    assert np.logspace(start, 2.0, 4).dtype == np.float32
    assert f(start).dtype == np.float32
    assert dk.jacfwd(f)(start).dtype == np.float32
    assert dk.jacrev(f)(start).dtype == np.float32
    expected = central_jacobian(lambda s: np.logspace(s, 2.0, 4), start.astype(np.float64))
    np.testing.assert_allclose(dk.jacfwd(f)(start), expected, rtol=1e-5)
    # float64 stays float64, and linspace keeps float32 likewise
    assert dk.jacfwd(f)(start.astype(np.float64)).dtype == np.float64
    assert dk.jacfwd(lambda s: dnp.linspace(s, 2.0, 3))(start).dtype == np.float32


# --- polynomials -------------------------------------------------------------------------


def test_roots_values_and_implicit_derivative():
    p = np.array([2.0, -12.0, 22.0, -12.0])  # 2 (x - 1)(x - 2)(x - 3)
    np.testing.assert_allclose(np.sort(dnp.roots(p).real), np.sort(np.roots(p)), rtol=1e-12)
    jac = both_jacobians(lambda q: dnp.roots(q), p)
    r = dnp.roots(p)
    slope = np.polyval(np.polyder(p), r)
    expected = -(r[:, None] ** np.arange(3, -1, -1)) / slope[:, None]  # dr = -dp(r) / p'(r)
    np.testing.assert_allclose(jac, expected, rtol=RTOL)
    # finite differences of NumPy's roots (sorted, as the order may change)
    numeric = central_jacobian(lambda q: np.sort(np.roots(q).real), p)
    np.testing.assert_allclose(jac.real[np.argsort(r.real)], numeric, rtol=FD_RTOL)


def test_roots_complex_pair_leading_and_trailing_zeros_vmap_float32():
    p = np.array([0.0, 1.0, 2.0, 5.0, 0.0])  # (x^2 + 2x + 5) x: roots -1 +- 2i and 0
    got = dnp.roots(p)
    np.testing.assert_allclose(np.sort_complex(got), np.sort_complex(np.roots(p)), rtol=1e-12)
    jac = both_jacobians(lambda q: dnp.roots(q), p)
    assert jac.shape == (3, 5)
    # d(-1 + 2i)/dc for x^2 + b x + c: 1 / (2 r + b) * -1
    i = np.argmin(np.abs(got - (-1 + 2j)))
    np.testing.assert_allclose(jac[i, 3], -1 / (2 * got[i] + 2.0), rtol=RTOL)
    batch = np.array([[1.0, -3.0, 2.0], [1.0, 0.0, -4.0]])
    np.testing.assert_allclose(dk.vmap(dnp.roots)(batch), [np.roots(b) for b in batch],
                               rtol=1e-12)
    g = dk.grad(lambda q: dnp.sum(dnp.real(dnp.roots(q))))(batch[0].astype(np.float32))
    assert g.dtype == np.float32


def test_polyfit_against_numpy_and_finite_differences():
    x = np.linspace(-1.0, 2.0, 7)
    y = np.cos(x) + 0.1 * x ** 3
    w = 1.0 + 0.5 * np.sin(x)
    np.testing.assert_allclose(dnp.polyfit(dk.jvp(lambda v: v, (x,), (x,))[0], y, 2),
                               np.polyfit(x, y, 2), rtol=1e-12)
    for argnum, point in ((0, x), (1, y), (2, w)):
        def fit(v, argnum=argnum):
            args = [x, y, w]
            args[argnum] = v
            return dnp.polyfit(args[0], args[1], 3, w=args[2])

        def numpy_fit(v, argnum=argnum):
            args = [x, y, w]
            args[argnum] = v
            return np.polyfit(args[0], args[1], 3, w=args[2])

        np.testing.assert_allclose(both_jacobians(fit, point),
                                   central_jacobian(numpy_fit, point), rtol=FD_RTOL,
                                   atol=1e-8)


def test_polyfit_full_cov_and_two_dimensional_y():
    x = np.linspace(0.0, 1.0, 6)
    y = np.stack([np.exp(x), np.sin(2 * x)], axis=1)
    c, resids, rank, s, rcond = dnp.polyfit(x, dk.jvp(lambda v: v, (y,), (y,))[0], 2,
                                            full=True)
    expected = np.polyfit(x, y, 2, full=True)
    for ours, theirs in zip((c, resids, rank, s, rcond), expected):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10)
    cov = lambda v: dnp.polyfit(x, v, 2, cov=True)[1]  # noqa: E731
    np.testing.assert_allclose(cov(dk.jvp(lambda v: v, (y,), (y,))[0]),
                               np.polyfit(x, y, 2, cov=True)[1], rtol=1e-10)
    np.testing.assert_allclose(both_jacobians(cov, y[:, 0]),
                               central_jacobian(lambda v: np.polyfit(x, v, 2, cov=True)[1],
                                                y[:, 0]), rtol=FD_RTOL, atol=1e-9)
    batched = dk.vmap(lambda v: dnp.polyfit(x, v, 1), in_axes=1)(y)
    np.testing.assert_allclose(batched, np.polyfit(x, y, 1).T, rtol=1e-12)


def test_polydiv_values_and_derivatives():
    u, v = np.array([3.0, -5.0, 2.0, 7.0, 1.0]), np.array([2.0, 1.0, -1.0])
    q, r = dnp.polydiv(dk.jvp(lambda a: a, (u,), (u,))[0], v)
    for ours, theirs in zip((q, r), np.polydiv(u, v)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)
    for i in range(2):
        for argnum, point in ((0, u), (1, v)):
            def div(a, i=i, argnum=argnum):
                return dnp.polydiv(*((a, v) if argnum == 0 else (u, a)))[i]

            def numpy_div(a, i=i, argnum=argnum):
                return np.polydiv(*((a, v) if argnum == 0 else (u, a)))[i]

            np.testing.assert_allclose(both_jacobians(div, point),
                                       central_jacobian(numpy_div, point), rtol=FD_RTOL,
                                       atol=1e-8)
    batch = np.stack([u, 2 * u + 1])
    got = dk.vmap(lambda a: dnp.polydiv(a, v))(batch)
    for k in range(2):
        for ours, theirs in zip((got[0][k], got[1][k]), np.polydiv(batch[k], v)):
            np.testing.assert_allclose(ours, theirs, rtol=1e-12)


# --- functions of functions ----------------------------------------------------------------


def test_piecewise_matches_numpy_and_never_evaluates_other_branches():
    x = np.array([-2.0, -0.5, 0.0, 0.25, 3.0])
    f = lambda v: dnp.piecewise(v, [v < 0, v > 0], [lambda t: t ** 3, dnp.log, 1.5])  # noqa
    np.testing.assert_allclose(f(x), np.piecewise(x, [x < 0, x > 0],
                                                  [lambda t: t ** 3, np.log, 1.5]))
    # log is evaluated only on x > 0: no NaN in either engine, zero slope in the constant
    expected = np.where(x < 0, 3 * x ** 2, np.where(x > 0, 1 / np.where(x > 0, x, 1), 0.0))
    np.testing.assert_allclose(both_jacobians(f, x), np.diag(expected), rtol=RTOL)
    # conditions batched by vmap: each example selects its own entries
    np.testing.assert_allclose(dk.vmap(lambda v: dnp.piecewise(v, [v < 0], [dnp.sin, dnp.cos]))(
        np.stack([x, -x])), [np.piecewise(b, [b < 0], [np.sin, np.cos]) for b in (x, -x)])


def test_apply_along_axis_and_over_axes():
    a = np.arange(1.0, 7.0).reshape(2, 3)
    func = lambda r: dnp.stack([dnp.sum(r ** 2), r[0] * r[-1]])  # noqa: E731
    numpy_func = lambda r: np.stack([np.sum(r ** 2), r[0] * r[-1]])  # noqa: E731
    for axis in (0, 1):
        f = lambda v, axis=axis: dnp.apply_along_axis(func, axis, v)  # noqa: E731
        np.testing.assert_allclose(f(a + 0 * dk.jvp(lambda v: v, (a,), (a,))[0]),
                                   np.apply_along_axis(numpy_func, axis, a))
        numeric = central_jacobian(lambda v, axis=axis: np.apply_along_axis(numpy_func, axis, v),
                                   a)
        np.testing.assert_allclose(both_jacobians(f, a), numeric, rtol=FD_RTOL, atol=1e-8)
    got = dk.vmap(lambda v: dnp.apply_along_axis(func, 1, v))(np.stack([a, -a]))
    np.testing.assert_allclose(got, [np.apply_along_axis(numpy_func, 1, b) for b in (a, -a)])
    # apply_over_axes: sum of squares over axes 0 and 2, dims kept
    b = np.linspace(-1, 1, 24).reshape(2, 3, 4)
    g = lambda v: dnp.apply_over_axes(dnp.sum, v ** 2, [0, 2])  # noqa: E731
    assert g(dk.jvp(lambda v: v, (b,), (b,))[0]).shape == (1, 3, 1)
    np.testing.assert_allclose(both_jacobians(lambda v: g(v).ravel(), b),
                               central_jacobian(lambda v: np.apply_over_axes(
                                   np.sum, v ** 2, [0, 2]).ravel(), b), rtol=FD_RTOL)


def test_vectorize_elementwise_control_flow_signature_and_otypes():
    v = dnp.vectorize(lambda a, b: a * b if a > 0 else a + b)
    x = np.array([[1.0, -1.0], [2.0, -3.0]])
    y = np.array([2.0, 3.0])
    np.testing.assert_allclose(dk.grad(lambda s: dnp.sum(v(s, y)))(x), [[2, 1], [2, 1]])
    dot = dnp.vectorize(lambda a, b: dnp.dot(a, b), signature="(n),(n)->()")
    a = np.arange(6.0).reshape(3, 2)
    np.testing.assert_allclose(dot(a, y), a @ y)
    np.testing.assert_allclose(both_jacobians(lambda s: dot(s, y), a),
                               np.einsum("ij,k->ijk", np.eye(3), y), rtol=RTOL)
    f32 = dnp.vectorize(lambda t: t * 2.0, otypes=[np.float32])
    assert dk.jvp(f32, (x,), (x,))[1].dtype == np.float32
    np.testing.assert_allclose(dk.vmap(lambda s: dot(s, y))(np.stack([a, 2 * a])),
                               [a @ y, 2 * a @ y])


# --- selections and writes ----------------------------------------------------------------


def test_choose_extract_histogram_unique():
    choices = np.arange(12.0).reshape(3, 4) ** 1.5
    index = np.array([2, 0, 1, 2])
    jac = both_jacobians(lambda c: dnp.choose(index, c), choices)
    np.testing.assert_allclose(dnp.choose(index, dk.jvp(lambda c: c, (choices,), (choices,))[0]),
                               np.choose(index, choices))
    np.testing.assert_array_equal(jac, np.eye(12).reshape(12, 3, 4)[index * 4 + np.arange(4)])
    for mode in ("wrap", "clip"):
        np.testing.assert_allclose(dnp.choose(index + 2, dk.jvp(
            lambda c: c, (choices,), (choices,))[0], mode=mode),
            np.choose(index + 2, choices, mode=mode))
    x = np.array([[0.5, -1.0, 2.0], [3.0, -0.2, 1.0]])
    np.testing.assert_allclose(dk.grad(lambda v: dnp.sum(dnp.extract(x > 0, v) ** 2))(x),
                               np.where(x > 0, 2 * x, 0))
    samples = np.array([0.1, 0.35, 0.6, 0.62, 0.9, 1.0, 1.5, -0.2])
    weights = np.linspace(0.5, 2.0, 8)
    for bins, density in ((4, False), (np.array([0.0, 0.3, 0.5, 1.0]), True)):
        f = lambda w, bins=bins, density=density: dnp.histogram(  # noqa: E731
            samples, bins, range=(0.0, 1.0) if np.ndim(bins) == 0 else None, weights=w,
            density=density)[0]
        np.testing.assert_allclose(f(dk.jvp(lambda w: w, (weights,), (weights,))[0]),
                                   np.histogram(samples, bins, range=(0.0, 1.0) if np.ndim(
                                       bins) == 0 else None, weights=weights,
                                       density=density)[0], rtol=1e-12)
        numeric = central_jacobian(lambda w, bins=bins, density=density: np.histogram(
            samples, bins, range=(0.0, 1.0) if np.ndim(bins) == 0 else None, weights=w,
            density=density)[0], weights)
        np.testing.assert_allclose(both_jacobians(f, weights), numeric, rtol=FD_RTOL,
                                   atol=1e-9)
    hist = dk.vmap(lambda w: dnp.histogram(samples, 3, weights=w)[0])(np.stack([weights, -weights]))
    np.testing.assert_allclose(hist[1], np.histogram(samples, 3, weights=-weights)[0])
    u = np.array([3.0, 1.0, 3.0, 2.0, 1.0])
    values, first, inverse, counts = dnp.unique(dk.jvp(lambda v: v, (u,), (u,))[0], True,
                                                True, True)
    for ours, theirs in zip((values, first, inverse, counts),
                            np.unique(u, True, True, True)):
        np.testing.assert_array_equal(ours, theirs)
    # each unique value is its first occurrence: derivative one-hot there
    np.testing.assert_array_equal(both_jacobians(lambda v: dnp.unique(v), u),
                                  np.eye(5)[[1, 3, 0]])
    with pytest.raises(TypeError, match="not supported for weighted data"):  # as NumPy
        dk.grad(lambda w: dnp.sum(dnp.histogram(samples, "auto", weights=w)[0]))(weights)
    with pytest.raises(dk.errors.TracerConversionError, match="unique: ar is a value batched"):
        dk.vmap(dnp.unique)(np.stack([u, u]))


def test_put_along_axis_and_fill_diagonal():
    a = np.arange(6.0).reshape(2, 3)
    idx = np.array([[2], [0]])
    f = lambda x, v: dnp.put_along_axis(x, idx, v, 1, inplace=False)  # noqa: E731
    expected = a.copy()
    np.put_along_axis(expected, idx, np.array([[7.0], [8.0]]), 1)
    np.testing.assert_allclose(f(a, dk.jvp(lambda v: v, (np.array([[7.0], [8.0]]),),
                                           (np.ones((2, 1)),))[0]), expected)
    jac_a = both_jacobians(lambda x: f(x, np.array([[7.0], [8.0]])), a)
    mask = np.ones((2, 3))
    mask[0, 2] = mask[1, 0] = 0
    np.testing.assert_array_equal(jac_a, np.diag(mask.ravel()).reshape(2, 3, 2, 3))
    m = np.arange(9.0).reshape(3, 3)
    g = lambda x, v: dnp.fill_diagonal(x, v, inplace=False)  # noqa: E731
    filled = m.copy()
    np.fill_diagonal(filled, [10.0, 20.0])
    np.testing.assert_allclose(g(m, dk.jvp(lambda v: v, (np.array([10.0, 20.0]),),
                                           (np.ones(2),))[0]), filled)
    jac_v = both_jacobians(lambda v: g(m, v), np.array([10.0, 20.0]))
    expected_v = np.zeros((3, 3, 2))
    expected_v[0, 0, 0] = expected_v[1, 1, 1] = expected_v[2, 2, 0] = 1  # val cycles
    np.testing.assert_array_equal(jac_v, expected_v)
    tall = np.zeros((7, 2))
    np.fill_diagonal(tall, 1.0, wrap=True)
    np.testing.assert_array_equal(dnp.fill_diagonal(
        np.zeros((7, 2)), dk.jvp(lambda v: v, (1.0,), (1.0,))[0], wrap=True, inplace=False),
        tall)
    # NumPy's in-place behaviour, on plain arrays and on traced ones (the write is the
    # functional update, taken over by the traced array as y[i] = v is)
    plain = np.zeros((2, 2))
    assert dnp.fill_diagonal(plain, 3.0) is None and plain[1, 1] == 3.0

    def zero_diagonal(x):
        assert dnp.fill_diagonal(x, 0.0) is None
        return dnp.sum(x * x)

    np.testing.assert_array_equal(dk.grad(zero_diagonal)(m), 2 * m * (1 - np.eye(3)))

    def zero_along(x):
        np.put_along_axis(x, idx, 0.0, 1)
        return dnp.sum(x * x)

    np.testing.assert_array_equal(dk.grad(zero_along)(a), 2 * a * mask)


def test_plain_numpy_calls_route_to_diffkit():
    x = np.linspace(0.0, 1.0, 6)
    y = np.cos(x)
    # np.polyfit on a traced y: the gradient of sum(coefficients) = column sums of the fit
    got = dk.grad(lambda v: np.sum(np.polyfit(x, v, 2)))(y)
    numeric = central_jacobian(lambda v: np.polyfit(x, v, 2), y).sum(axis=0)
    np.testing.assert_allclose(got, numeric, rtol=FD_RTOL, atol=1e-8)
    p = np.array([1.0, -3.0, 2.0])
    np.testing.assert_allclose(dk.grad(lambda q: np.sum(np.roots(q).real))(p),
                               [-3.0, -1.0, 0.0], rtol=RTOL, atol=1e-15)  # sum = -b/a
    assert dk.grad(lambda u: np.polydiv(u, np.array([1.0, 2.0]))[0][0])(p)[0] == 1.0
    np.testing.assert_allclose(dk.grad(lambda t: np.sum(np.piecewise(
        t, [t < 0.5], [np.sin, np.cos])))(x), np.where(x < 0.5, np.cos(x), -np.sin(x)))
    np.testing.assert_allclose(dk.grad(lambda w: np.sum(np.histogram(x, 3, weights=w)[0]))(y),
                               np.ones(6))
    np.testing.assert_allclose(dk.grad(lambda a: np.sum(np.apply_over_axes(
        np.sum, a ** 2, [0])))(np.ones((2, 2))), 2 * np.ones((2, 2)))
    np.testing.assert_allclose(dk.grad(lambda c: np.sum(np.choose(np.array([0, 1]), c)))(
        np.ones((2, 2))), [[1, 0], [0, 1]])
    np.testing.assert_allclose(dk.grad(lambda t: np.sum(np.extract(t > 0.5, t)))(x),
                               (x > 0.5).astype(float))
    np.testing.assert_allclose(dk.grad(lambda t: np.sum(np.unique(t)))(np.array([1.0, 1.0])),
                               [1.0, 0.0])
