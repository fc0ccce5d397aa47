"""Tests for diffkit.scipy.signal and diffkit.scipy.integrate: values as SciPy's (to rtol
1e-10, traced and untraced, odd and even kernels, real and complex), Jacobians against
closed forms (every function here is linear in each input, so its Jacobian's columns are
SciPy's results on unit vectors), ``x`` derivatives against finite differences, ``vmap``
against a loop over SciPy, and SciPy's errors. The generic checker runs the records of
tests/records/ops/scipy_signal.py on top (order 2, jacfwd == jacrev, vmap)."""

import numpy as np
import pytest
import scipy.integrate as si
import scipy.signal as ss

import diffkit as dk
from diffkit.scipy import integrate as dint
from diffkit.scipy import signal as dsig

RTOL, ATOL = 1e-10, 1e-12
RNG = np.random.default_rng(0)
SHAPES = [((7,), (4,)), ((7,), (3,)), ((3,), (6,)), ((4, 6), (2, 3)), ((4, 6), (3, 2)),
          ((2, 3), (4, 4)), ((3, 4, 2), (2, 2, 2))]


def _values(shape, complex_=False):
    x = RNG.normal(size=shape)
    return x + 1j * RNG.normal(size=shape) if complex_ else x


def traced(fun, *args):
    """``fun(*args)`` computed on traced values (the primal output of a JVP)."""
    out, _ = dk.jvp(fun, args, tuple(np.zeros_like(a) for a in args))
    return out


def unit_jacobian(fun, x):
    """The Jacobian of ``fun``, linear in ``x``, from SciPy's results on unit vectors."""
    cols = []
    for i in range(x.size):
        e = np.zeros(x.size, x.dtype)
        e[i] = 1
        cols.append(np.ravel(fun(e.reshape(x.shape))))
    return np.stack(cols, axis=-1).reshape(np.shape(fun(x)) + x.shape)


@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve_correlate_values(shapes, mode, complex_):
    a, v = _values(shapes[0], complex_), _values(shapes[1], complex_)
    for name in ("convolve", "correlate"):
        for method in ("auto", "direct", "fft"):
            expected = getattr(ss, name)(a, v, mode, method)
            out = traced(lambda x, y, n=name, k=method: getattr(dsig, n)(x, y, mode, k), a, v)
            np.testing.assert_allclose(out, expected, rtol=RTOL, atol=ATOL)
            assert np.shape(out) == expected.shape
            # Untraced: SciPy's own result.
            np.testing.assert_array_equal(getattr(dsig, name)(a, v, mode, method), expected)
    for name in ("fftconvolve", "oaconvolve"):
        expected = getattr(ss, name)(a, v, mode)
        out = traced(lambda x, y, n=name: getattr(dsig, n)(x, y, mode), a, v)
        np.testing.assert_allclose(out, expected, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("shapes", [s for s in SHAPES if len(s[0]) == 2], ids=str)
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("boundary", ["fill", "wrap", "symm"])
def test_2d_values(shapes, mode, boundary, complex_):
    a, v = _values(shapes[0], complex_), _values(shapes[1], complex_)
    for name in ("convolve2d", "correlate2d"):
        for fillvalue in (0, 2.5):
            expected = getattr(ss, name)(a, v, mode, boundary, fillvalue)
            out = traced(lambda x, y, n=name, f=fillvalue:
                         getattr(dsig, n)(x, y, mode, boundary, f), a, v)
            np.testing.assert_allclose(out, expected, rtol=RTOL, atol=ATOL)


def test_2d_large_kernel_boundaries():
    a, v = _values((2, 3)), _values((5, 7))
    for boundary in ("wrap", "symm", "circular", "symmetric"):
        for name in ("convolve2d", "correlate2d"):
            expected = getattr(ss, name)(a, v, "same", boundary)
            out = traced(lambda x, y, n=name, b=boundary: getattr(dsig, n)(x, y, "same", b), a, v)
            np.testing.assert_allclose(out, expected, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("axes", [None, 1, [1, 2], [-1], [0, 2], 0])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_fftconvolve_axes(axes, mode):
    a, v = _values((3, 6, 4)), _values((1, 3, 4))
    if axes in ([-1], [0, 2], 0):
        with pytest.raises(ValueError, match="incompatible shapes"):
            traced(lambda x, y: dsig.fftconvolve(x, y, mode, axes), a, v)
        return
    for name in ("fftconvolve", "oaconvolve"):
        expected = getattr(ss, name)(a, v, mode, axes)
        out = traced(lambda x, y, n=name: getattr(dsig, n)(x, y, mode, axes), a, v)
        np.testing.assert_allclose(out, expected, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("shapes", SHAPES[:6], ids=str)
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_jacobians_closed_form(shapes, mode):
    a, v = _values(shapes[0]), _values(shapes[1])
    cases = [("convolve", {}), ("correlate", {}), ("fftconvolve", {})]
    if len(shapes[0]) == 2:
        cases += [("convolve2d", {"boundary": "symm"}), ("correlate2d", {"boundary": "wrap"}),
                  ("correlate2d", {"fillvalue": 0.5})]
    for name, kw in cases:
        sf, df = getattr(ss, name), getattr(dsig, name)
        if kw.get("fillvalue"):  # affine in a: subtract the fill's contribution
            ja = unit_jacobian(
                lambda x, sf=sf, kw=kw: sf(x, v, mode, **kw) - sf(0 * x, v, mode, **kw), a)
        else:
            ja = unit_jacobian(lambda x, sf=sf, kw=kw: sf(x, v, mode, **kw), a)
        jv = unit_jacobian(lambda y, sf=sf, kw=kw: sf(a, y, mode, **kw), v)
        for jac in (dk.jacfwd, dk.jacrev):
            got_a, got_v = jac(lambda x, y, df=df, kw=kw: df(x, y, mode, **kw),
                               argnums=(0, 1))(a, v)
            np.testing.assert_allclose(got_a, ja, rtol=RTOL, atol=ATOL)
            np.testing.assert_allclose(got_v, jv, rtol=RTOL, atol=ATOL)


def test_complex_holomorphic_jacobian():
    # correlate is holomorphic in in1 (the conjugate falls on in2).
    a, v = _values((6,), True), _values((3,), True)
    expected = unit_jacobian(lambda x: ss.correlate(x, v, "same"), a)
    for jac in (dk.jacfwd, dk.jacrev):
        got = jac(lambda x: dsig.correlate(x, v, "same"), holomorphic=True)(a)
        np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)
    # convolve is holomorphic in both.
    expected = unit_jacobian(lambda y: ss.convolve(a, y), v)
    got = dk.jacrev(lambda y: dsig.convolve(a, y), holomorphic=True)(v)
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)


def test_fillvalue_derivative():
    a, v = _values((3, 4)), _values((2, 3))
    # d/dc of convolve2d(a, v, fillvalue=c) is convolve2d of zeros with fill 1.
    expected = ss.convolve2d(np.zeros_like(a), v, "full", fillvalue=1.0)
    got = dk.jacfwd(lambda c: dsig.convolve2d(a, v, "full", fillvalue=c))(0.7)
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)


def test_vmap_against_loop():
    a, v = _values((3, 6, 4)), _values((3, 2, 3))
    for fun, sfun in [(lambda x, y: dsig.convolve(x, y, "same"),
                       lambda x, y: ss.convolve(x, y, "same")),
                      (lambda x, y: dsig.correlate2d(x, y, "full", "symm"),
                       lambda x, y: ss.correlate2d(x, y, "full", "symm")),
                      (lambda x, y: dsig.fftconvolve(x, y, "valid"),
                       lambda x, y: ss.fftconvolve(x, y, "valid"))]:
        np.testing.assert_allclose(dk.vmap(fun)(a, v), [sfun(x, y) for x, y in zip(a, v)],
                                   rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(dk.vmap(fun, in_axes=(0, None))(a, v[0]),
                                   [sfun(x, v[0]) for x in a], rtol=RTOL, atol=ATOL)
        # vmap of a gradient: the batching rules of the VJP's convolutions.
        grads = dk.vmap(dk.grad(lambda x, y, f=fun: (f(x, y) ** 2).sum(), argnums=1))(a, v)
        assert grads.shape == v.shape


def test_signal_errors():
    a, v = dk.numpy.ones((3, 4)), np.ones((2, 3))
    with pytest.raises(ValueError, match="acceptable mode flags"):
        traced(lambda x: dsig.convolve(x, v, "middle"), np.ones((3, 4)))
    with pytest.raises(ValueError, match="Acceptable method flags"):
        traced(lambda x: dsig.correlate(x, v, method="slow"), np.ones((3, 4)))
    with pytest.raises(ValueError, match="same dimensionality"):
        traced(lambda x: dsig.convolve(x, np.ones(3)), np.ones((3, 4)))
    with pytest.raises(ValueError, match="at least as large"):
        traced(lambda x: dsig.convolve(x, np.ones((2, 5)), "valid"), np.ones((3, 4)))
    with pytest.raises(ValueError, match="must both be 2-D"):
        traced(lambda x: dsig.convolve2d(x, np.ones(2)), np.ones(4))
    with pytest.raises(ValueError, match="boundary flags"):
        traced(lambda x: dsig.correlate2d(x, v, boundary="reflect"), np.ones((3, 4)))
    del a


# --- integrate ------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 7, 8])
def test_integrate_values(n):
    y = _values((3, n))
    x = np.sort(RNG.uniform(0, 3, n))
    xs = np.sort(RNG.uniform(0, 3, (3, n)), axis=1)
    for xx in (x, xs):
        cases = [(lambda yy, x_: si.simpson(yy, x=x_), lambda yy, x_: dint.simpson(yy, x=x_)),
                 (si.trapezoid, dint.trapezoid),
                 (lambda yy, x_: si.cumulative_trapezoid(yy, x_, initial=0),
                  lambda yy, x_: dint.cumulative_trapezoid(yy, x_, initial=0))]
        for sfun, dfun in cases:
            np.testing.assert_allclose(traced(dfun, y, xx), sfun(y, xx), rtol=RTOL, atol=ATOL)
    for dx in (1.0, 0.3):
        np.testing.assert_allclose(traced(lambda yy, d=dx: dint.simpson(yy, dx=d), y),
                                   si.simpson(y, dx=dx), rtol=RTOL, atol=ATOL)
        yt = y.T.copy()
        np.testing.assert_allclose(
            traced(lambda yy, d=dx: dint.cumulative_trapezoid(yy, dx=d, axis=0), yt),
            si.cumulative_trapezoid(yt, dx=dx, axis=0), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("n", [3, 4, 6, 7])
def test_integrate_derivatives(n):
    y = _values((n,))
    x = np.sort(RNG.uniform(0, 3, n))
    for sfun, dfun in [(lambda yy, x_: si.simpson(yy, x=x_),
                        lambda yy, x_: dint.simpson(yy, x=x_)),
                       (si.cumulative_trapezoid, dint.cumulative_trapezoid)]:
        # Linear in y: the weights are SciPy's integrals of unit vectors.
        expected = unit_jacobian(lambda yy, f=sfun: f(yy, x), y)
        for jac in (dk.jacfwd, dk.jacrev):
            np.testing.assert_allclose(jac(dfun)(y, x), expected, rtol=RTOL, atol=ATOL)
        # In x: central finite differences.
        eps = 1e-6
        fd = np.stack([(sfun(y, x + eps * e) - sfun(y, x - eps * e)) / (2 * eps)
                       for e in np.eye(n)], axis=-1)
        for jac in (dk.jacfwd, dk.jacrev):
            np.testing.assert_allclose(jac(dfun, argnums=1)(y, x), fd, rtol=1e-6, atol=1e-7)


def test_integrate_errors():
    y = np.ones((2, 4))
    with pytest.raises(ValueError, match="shape of x must be 1-D or the same"):
        traced(lambda yy: dint.simpson(yy, x=np.ones((1, 2, 4))), y)
    with pytest.raises(ValueError, match="length of x along axis"):
        traced(lambda yy: dint.cumulative_trapezoid(yy, np.arange(3.0)), y)
    with pytest.raises(ValueError, match="`initial` must be `None` or `0`"):
        traced(lambda yy: dint.cumulative_trapezoid(yy, initial=1.0), y)
    # x is positional or keyword-only, as in the installed SciPy (positional from SciPy 1.15)
    import scipy.integrate
    try:
        expected = scipy.integrate.simpson(y, np.arange(4.0))
    except TypeError:
        with pytest.raises(TypeError):
            dint.simpson(y, np.arange(4.0))
    else:
        np.testing.assert_allclose(dint.simpson(y, np.arange(4.0)), expected, rtol=1e-12)
