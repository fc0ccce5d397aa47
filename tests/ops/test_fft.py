"""Tests for diffkit.numpy.fft: values and dtypes as NumPy's, derivatives as the transposes
of the (linear) transforms, and NumPy's errors.

Derivatives are checked against closed forms (the DFT matrix and its pieces), against
central finite differences along real and imaginary directions, and by the bilinear
adjoint identity of ``test_complex.check_complex``; the generic checker runs the records
of tests/records/ops/complex_fft.py on top (order 2, jacfwd == jacrev, vmap).
"""

import numpy as np
import pytest
from test_complex import ATOL, RTOL, check_complex, z_array

import diffkit as dk
import diffkit.numpy as dnp

F = dnp.fft
X = np.random.default_rng(0).normal(size=(3, 6))
Z = z_array(3, 6, seed=1)


def dft(n, norm="backward", inverse=False):
    """The DFT matrix of size n, scaled as NumPy's ``norm``."""
    j = np.arange(n)
    matrix = np.exp((2j if inverse else -2j) * np.pi * np.outer(j, j) / n)
    forward_scale = {"backward": 1.0, "ortho": n ** -0.5, "forward": 1.0 / n}
    inverse_scale = {"backward": 1.0 / n, "ortho": n ** -0.5, "forward": 1.0}
    return matrix * (inverse_scale if inverse else forward_scale)[norm]


# --- values ------------------------------------------------------------------------------------

CALLS = [
    ("fft", Z, {}), ("fft", X, {}), ("fft", Z, {"n": 4, "norm": "ortho"}),
    ("fft", Z, {"n": 8, "axis": 0, "norm": "forward"}), ("ifft", Z, {"n": 7}),
    ("ifft", Z, {"axis": -2, "norm": "ortho"}), ("rfft", X, {}), ("rfft", X, {"n": 5}),
    ("rfft", X, {"axis": 0, "norm": "forward"}), ("irfft", Z, {}), ("irfft", Z, {"n": 7}),
    ("irfft", Z, {"n": 12, "norm": "ortho"}), ("irfft", X, {"axis": 0}), ("hfft", Z, {}),
    ("hfft", Z, {"n": 5, "norm": "forward"}), ("ihfft", X, {}), ("ihfft", X, {"n": 4}),
    ("fft2", Z, {}), ("fft2", X, {"s": (4, 4)}), ("ifft2", Z, {"axes": (1, 0)}),
    ("rfft2", X, {"norm": "ortho"}), ("irfft2", Z, {"s": (3, 9)}), ("fftn", Z, {}),
    ("fftn", Z, {"s": (2, 8), "axes": (0, 1)}), ("fftn", Z, {"axes": (1, 1)}),
    ("fftn", Z, {"axes": ()}), ("ifftn", Z, {"axes": [-1], "norm": "forward"}),
    ("rfftn", X, {}), ("rfftn", X, {"axes": (1, 0)}), ("rfftn", X, {"axes": (0, 1, 0)}),
    ("rfftn", X, {"s": (-1, 4), "axes": (0, 1)}), ("irfftn", Z, {}),
    ("irfftn", Z, {"s": (4, 5), "axes": (0, 1)}), ("irfftn", Z, {"axes": (0, 1, 1)}),
    ("fftshift", X, {}), ("fftshift", X, {"axes": 0}), ("ifftshift", X, {"axes": (1, -1)}),
    ("ifftshift", X, {}),
]


@pytest.mark.parametrize(("name", "a", "kwargs"), CALLS,
                         ids=[f"{n}-{'complex' if a is Z else 'real'}-{k}" for n, a, k in CALLS])
def test_values_and_dtypes_match_numpy(name, a, kwargs):
    got = getattr(F, name)(a, **kwargs)
    expected = getattr(np.fft, name)(a, **kwargs)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fftn",
                                  "rfftn", "irfftn"])
def test_single_precision_is_kept(name):
    a = (Z if name in ("ifft", "irfft", "hfft", "irfftn") else X)
    a = a.astype(np.complex64 if a.dtype.kind == "c" else np.float32)
    got = getattr(F, name)(a)
    assert got.dtype == getattr(np.fft, name)(a).dtype
    assert got.dtype in (np.float32, np.complex64)
    if a.dtype == np.float32:
        g = dk.grad(lambda a: dnp.sum(dnp.abs(getattr(F, name)(a)) ** 2))(a)
        assert g.dtype == np.float32


def test_frequencies_and_lists_pass_through():
    assert F.fftfreq is np.fft.fftfreq and F.rfftfreq is np.fft.rfftfreq
    np.testing.assert_allclose(F.fft([1.0, 2.0, 0.5]), np.fft.fft([1.0, 2.0, 0.5]))


# --- derivatives: closed forms -------------------------------------------------------------------


@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
@pytest.mark.parametrize("inverse", [False, True])
def test_fft_jacobian_is_the_dft_matrix(norm, inverse):
    z = Z[0]
    f = (F.ifft if inverse else F.fft)
    expected = dft(6, norm, inverse)
    for jac in (dk.jacfwd, dk.jacrev):
        np.testing.assert_allclose(jac(lambda z: f(z, norm=norm), holomorphic=True)(z),
                                   expected, rtol=RTOL, atol=ATOL)
    # R -> C: the same matrix for a real input, in both modes
    for jac in (dk.jacfwd, dk.jacrev):
        np.testing.assert_allclose(jac(lambda x: f(x, norm=norm))(X[0]), expected,
                                   rtol=RTOL, atol=ATOL)


def test_fft_with_n_crops_and_pads():
    z = Z[0]
    np.testing.assert_allclose(dk.jacrev(lambda z: F.fft(z, n=4), holomorphic=True)(z),
                               dft(4) @ np.eye(4, 6), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(dk.jacfwd(lambda z: F.fft(z, n=9), holomorphic=True)(z),
                               dft(9) @ np.eye(9, 6), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("n", [6, 7])
@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
def test_rfft_jacobian_is_the_first_half_of_the_dft(n, norm):
    x = np.linspace(-1.0, 1.0, n)
    expected = dft(n, norm)[: n // 2 + 1]
    for jac in (dk.jacfwd, dk.jacrev):
        np.testing.assert_allclose(jac(lambda x: F.rfft(x, norm=norm))(x), expected,
                                   rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("n", [6, 7])
@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
def test_irfft_jacobian(n, norm):
    """C -> R: row k is d/dRe c - i d/dIm c of x_k. From irfft(c)_k =
    s sum_j a_j Re(c_j e^{2 pi i jk/n}) (a_j = 1 for j = 0 and n/2, else 2):
    d/dRe c_j = s a_j cos(2 pi jk/n), d/dIm c_j = -s a_j sin(2 pi jk/n)."""
    m = n // 2 + 1
    c = Z[0, :m]
    scale = {"backward": 1.0 / n, "ortho": n ** -0.5, "forward": 1.0}[norm]
    weights = np.where((np.arange(m) == 0) | (2 * np.arange(m) == n), 1.0, 2.0)
    angle = 2 * np.pi * np.outer(np.arange(n), np.arange(m)) / n
    expected = scale * weights * (np.cos(angle) + 1j * np.sin(angle))
    for jac in (dk.jacfwd, dk.jacrev):
        np.testing.assert_allclose(jac(lambda c: F.irfft(c, n=n, norm=norm))(c), expected,
                                   rtol=RTOL, atol=ATOL)


def test_irfft_ignores_the_imaginary_parts_of_dc_and_nyquist():
    c = Z[0, :4]                                  # n = 6: entries 0 and 3 are read as real
    g = dk.grad(lambda c: dnp.sum(F.irfft(c) * np.arange(6.0)))(c)
    # the derivative along the imaginary direction of c_j is -Im(g_j): zero for j = 0 and 3
    assert g[0].imag == 0 and g[3].imag == 0
    assert np.all(g[1:3].imag != 0)
    bumped = c.copy()
    bumped[[0, 3]] += 0.7j
    np.testing.assert_allclose(F.irfft(bumped), F.irfft(c), rtol=1e-12)


def test_parseval_gradient():
    """sum |fft(x)|^2 = n sum x^2, so its gradient is 2 n x; for complex z it is 2 n conj(z)."""
    x = X[0]
    np.testing.assert_allclose(dk.grad(lambda x: dnp.sum(dnp.abs(F.fft(x)) ** 2))(x),
                               12 * x, rtol=RTOL)
    z = Z[0]
    np.testing.assert_allclose(dk.grad(lambda z: dnp.sum(dnp.abs(F.fft(z)) ** 2))(z),
                               12 * np.conj(z), rtol=RTOL)
    np.testing.assert_allclose(
        dk.grad(lambda z: dnp.sum(dnp.abs(F.fft(z, norm="ortho")) ** 2))(z), 2 * np.conj(z),
        rtol=RTOL)


def test_hessian_of_a_weighted_power_spectrum():
    """f(x) = sum_k w_k |rfft(x)_k|^2 = x^T A x with A = Re(R^H diag(w) R) symmetrised."""
    x = X[0]
    w = np.array([1.0, 0.5, 2.0, 0.25])
    matrix = dft(6)[:4]
    a = np.real(np.conj(matrix).T @ np.diag(w) @ matrix)

    def f(x):
        s = F.rfft(x)
        return dnp.sum(w * dnp.real(s * dnp.conj(s)))

    np.testing.assert_allclose(dk.hessian(f)(x), a + a.T, rtol=RTOL, atol=1e-10)
    np.testing.assert_allclose(dk.jacrev(dk.jacrev(f))(x), a + a.T, rtol=RTOL, atol=1e-10)


def test_round_trips_have_identity_jacobians():
    x = X[0]
    for roundtrip in (lambda x: F.irfft(F.rfft(x), n=6), lambda x: dnp.real(F.ifft(F.fft(x))),
                      lambda x: F.ifftshift(F.fftshift(x)),
                      lambda x: F.hfft(F.ihfft(x), n=6)):
        np.testing.assert_allclose(dk.jacfwd(roundtrip)(x), np.eye(6), rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(dk.jacrev(roundtrip)(x), np.eye(6), rtol=RTOL, atol=ATOL)


def test_fftshift_jacobian_is_a_permutation():
    x = np.arange(5.0)
    jac = dk.jacrev(F.fftshift)(x)
    np.testing.assert_array_equal(jac @ x, np.fft.fftshift(x))
    np.testing.assert_array_equal(dk.jacfwd(F.ifftshift)(x) @ x, np.fft.ifftshift(x))


# --- derivatives: finite differences and the adjoint identity --------------------------------

ADJOINT_CASES = [
    ("fft", lambda z: F.fft(z, n=8, axis=0), Z), ("ifft_ortho", lambda z: F.ifft(z, norm="ortho"),
                                                 Z),
    ("fft_of_real", lambda x: F.fft(x, n=4), X), ("rfft_odd", lambda x: F.rfft(x, n=7), X),
    ("irfft", lambda z: F.irfft(z, n=9), Z), ("irfft_of_real", F.irfft, X),
    ("hfft", lambda z: F.hfft(z, norm="ortho"), Z), ("ihfft", F.ihfft, X),
    ("fft2", lambda z: F.fft2(z, s=(4, 5)), Z), ("fftn", lambda z: F.fftn(z, axes=(1, 0, 1)), Z),
    ("rfftn", lambda x: F.rfftn(x, s=(2, 7), axes=(0, 1), norm="forward"), X),
    ("irfftn", lambda z: F.irfftn(z, s=(4, 9), axes=(0, 1)), Z),
    ("irfft2_repeated", lambda z: F.irfftn(z, axes=(1, 0, 1)), Z),
    ("fftshift", F.fftshift, Z),
]


@pytest.mark.parametrize(("name", "f", "a"), ADJOINT_CASES, ids=[c[0] for c in ADJOINT_CASES])
def test_against_finite_differences_and_adjoint(name, f, a):
    check_complex(f, (a,))


def test_vmap_over_an_extra_axis():
    stack = z_array(4, 3, 6, seed=2)
    np.testing.assert_allclose(dk.vmap(F.fft)(stack), np.fft.fft(stack), rtol=1e-12)
    np.testing.assert_allclose(dk.vmap(F.rfftn, in_axes=2)(stack.real),
                               np.fft.rfftn(np.moveaxis(stack.real, 2, 0), axes=(1, 2)),
                               rtol=1e-12)
    np.testing.assert_allclose(dk.vmap(lambda z: F.irfft(z, n=7, axis=0), in_axes=1)(stack),
                               np.moveaxis(np.fft.irfft(stack, n=7, axis=0), 1, 0), rtol=1e-12)

    def loss(x):
        return dnp.sum(dnp.abs(F.rfft(x)) ** 2 * np.arange(4.0))

    xs = stack.real[0]
    np.testing.assert_allclose(dk.vmap(dk.grad(loss))(xs), [dk.grad(loss)(x) for x in xs],
                               rtol=RTOL)


# --- errors --------------------------------------------------------------------------------------


def test_errors_match_numpy():
    with pytest.raises(ValueError, match="Invalid norm value"):
        F.fft(Z, norm="unitary")
    with pytest.raises(ValueError, match=r"Invalid number of FFT data points \(0\)"):
        F.fft(Z, n=0)
    with pytest.raises(ValueError, match=r"Invalid number of FFT data points \(0\)"):
        F.irfft(Z[:, :1])
    with pytest.raises(ValueError, match="Shape and axes have different lengths"):
        F.fftn(Z, s=(2, 3), axes=(0,))
    with pytest.raises(np.exceptions.AxisError):
        F.fft(Z, axis=2)
    with pytest.raises(TypeError, match="real input"):
        F.rfft(Z)
    with pytest.raises(TypeError, match="out="):
        F.fft(Z, out=np.empty_like(Z))
    with pytest.raises(TypeError):
        F.fft(Z, n=2.5)
    with pytest.warns(DeprecationWarning, match="axes"):
        F.fftn(Z, s=(3, 4))
    with pytest.raises(ValueError, match="at least one axis"):
        F.rfftn(X, axes=())
