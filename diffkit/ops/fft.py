"""Discrete Fourier transforms: ``numpy.fft``, differentiable.

Three primitives, each over several axes at once and each linear (so its JVP is the same
transform of the tangent):

- ``fft_p(x, axes, inverse, norm)``: ``np.fft.fftn`` (``ifftn`` with ``inverse``);
- ``rfft_p(x, axes, norm)``: ``np.fft.rfftn`` of a real input, keeping ``n // 2 + 1``
  entries along the last of ``axes``;
- ``irfft_p(x, axes, n, norm)``: ``np.fft.irfftn``, a real output of length ``n`` along the
  last of ``axes`` from ``n // 2 + 1`` entries.

Transposes, for JAX's bilinear pairing ``Re(w t)`` (see ``diffkit.ops.complex``):

- A DFT matrix ``s * exp(-+2 pi i j k / n)`` is symmetric, so ``fft`` and ``ifft`` (any
  ``norm``) are their own transposes; the real part is kept for a real input.
- ``rfft`` = keep the first ``n // 2 + 1`` entries of ``fft``: its transpose zero-pads the
  cotangent back to ``n`` entries, applies ``fft`` and keeps the real part.
- ``irfft`` reads each of the entries ``1 .. ceil(n / 2) - 1`` twice (as itself and as its
  conjugate mirror) and only the real part of entry 0 and, for even ``n``, of entry
  ``n / 2``: ``x_k = s * sum_j a_j Re(c_j exp(2 pi i j k / n))`` with ``a_j`` 1 for those
  and 2 otherwise. Its transpose is ``a * conj(rfft(g))`` with the scaling of the other
  direction (``norm`` "backward" <-> "forward").

The wrappers have NumPy's signatures: they crop or zero-pad to ``n``/``s`` (so the primitives
see exact sizes), and compose ``fft2``, ``hfft``, ``ihfft``, ``fftshift`` ... from these.
"""

import operator
import warnings

import numpy as np
from numpy.fft import fftfreq, rfftfreq  # sample frequencies: NumPy's own, no derivative

from ..core.primitive import Primitive
from ..core.zeros import as_array, dtype_of, shape_of
from . import elementwise as ew
from . import reductions
from . import sparsity_rules as sr
from . import taylor_arithmetic as ta
from .complex import real_p, real_part
from .families import real_cotangent
from .indexing import getitem
from .shape import _normalize_axis, concatenate

__all__ = ["fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn",
           "ifftn", "rfftn", "irfftn", "hfft", "ihfft", "fftshift", "ifftshift", "fftfreq",
           "rfftfreq"]

_DUAL_NORM = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


def _shift(axes):
    return tuple(a + 1 for a in axes)


def _fit(x, axis, length):
    """``x`` cropped or zero-padded at the end to ``length`` entries along ``axis``."""
    dims = shape_of(x)
    size = dims[axis]
    if size == length:
        return x
    if size > length:
        return getitem(x, (slice(None),) * axis + (slice(0, length),))
    padding = np.zeros(dims[:axis] + (length - size,) + dims[axis + 1:], dtype_of(x))
    return concatenate([x, padding], axis=axis)


# --- fft and ifft: complex to complex -----------------------------------------------------


def _fft_jvp(primals, tangents, axes, inverse, norm):
    (x,), (t,) = primals, tangents
    return fft_p(x, axes=axes, inverse=inverse, norm=norm), \
        fft_p(t, axes=axes, inverse=inverse, norm=norm)


fft_p = Primitive(
    "fft",
    lambda x, axes, inverse, norm: (np.fft.ifftn if inverse else np.fft.fftn)(
        x, axes=axes, norm=norm),
    _fft_jvp,
    (lambda ct, out, x, axes, inverse, norm: real_cotangent(
        fft_p(ct, axes=axes, inverse=inverse, norm=norm), x),),
    lambda axis_size, values, batch_axes, axes, inverse, norm: (
        fft_p(values[0], axes=_shift(axes), inverse=inverse, norm=norm), 0),
    vjp_ignores=(0, "out"))
fft_p.jet = ta.linear(fft_p)


# --- rfft: real to complex, half the spectrum ----------------------------------------------


def _rfft_jvp(primals, tangents, axes, norm):
    (x,), (t,) = primals, tangents
    return rfft_p(x, axes=axes, norm=norm), rfft_p(t, axes=axes, norm=norm)


def _rfft_vjp(ct, out, x, axes, norm):
    full = _fit(ct, axes[-1], shape_of(x)[axes[-1]])
    return real_p(fft_p(full, axes=axes, inverse=False, norm=norm))


rfft_p = Primitive(
    "rfft", lambda x, axes, norm: np.fft.rfftn(x, axes=axes, norm=norm),
    _rfft_jvp, (_rfft_vjp,),
    lambda axis_size, values, batch_axes, axes, norm: (
        rfft_p(values[0], axes=_shift(axes), norm=norm), 0),
    vjp_ignores=(0, "out"))
rfft_p.jet = ta.linear(rfft_p)


# --- irfft: half a Hermitian spectrum to a real signal -------------------------------------


def _irfft_impl(x, axes, n, norm):
    sizes = [x.shape[a] for a in axes[:-1]] + [n]
    return np.fft.irfftn(x, s=sizes, axes=axes, norm=norm)


def _irfft_jvp(primals, tangents, axes, n, norm):
    (x,), (t,) = primals, tangents
    return irfft_p(x, axes=axes, n=n, norm=norm), irfft_p(t, axes=axes, n=n, norm=norm)


def _hermitian_weights(n, axis, ndim, dtype):
    """How often ``irfft`` reads each of the ``n // 2 + 1`` entries (1 or 2), shaped to
    broadcast along ``axis`` of an array with ``ndim`` axes."""
    weights = np.full(n // 2 + 1, 2.0, dtype)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    return weights.reshape((n // 2 + 1,) + (1,) * (ndim - 1 - axis))


def _irfft_vjp(ct, out, x, axes, n, norm):
    g = real_part(ct)
    spectrum = ew.conj_p(rfft_p(g, axes=axes, norm=_DUAL_NORM[norm]))
    weights = _hermitian_weights(n, axes[-1], len(shape_of(x)), dtype_of(g))
    return real_cotangent(spectrum * weights, x)


irfft_p = Primitive(
    "irfft", _irfft_impl, _irfft_jvp, (_irfft_vjp,),
    lambda axis_size, values, batch_axes, axes, n, norm: (
        irfft_p(values[0], axes=_shift(axes), n=n, norm=norm), 0),
    vjp_ignores=(0, "out"))
irfft_p.jet = ta.linear(irfft_p)


# --- checking arguments ------------------------------------------------------------------------


def _norm(norm):
    if norm is None:
        return "backward"
    if norm not in _DUAL_NORM:
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or '
                         '"forward".')
    return norm


def _no_out(out, name):
    reductions.no_out(f"fft.{name}", out)


def _points(n):
    n = operator.index(n)
    if n < 1:
        raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
    return n


def _real_input(a, name):
    if dtype_of(a).kind == "c":
        raise TypeError(f"{name} expects a real input, got dtype {dtype_of(a)}; use fft for a "
                        "complex input (or take dnp.real of it first)")


def _axis(a, axis):
    return _normalize_axis(operator.index(axis), len(shape_of(a)))


# --- one axis ----------------------------------------------------------------------------------


def _c2c(a, n, axis, norm, out, inverse, name):
    _no_out(out, name)
    a = as_array(a)
    norm, axis = _norm(norm), _axis(a, axis)
    n = shape_of(a)[axis] if n is None else _points(n)
    return fft_p(_fit(a, axis, n), axes=(axis,), inverse=inverse, norm=norm)


def fft(a, n=None, axis=-1, norm=None, out=None):
    """The one-dimensional discrete Fourier transform along ``axis``, as ``np.fft.fft``:
    ``n`` points (the input cropped or zero-padded), scaled by ``norm`` ("backward": 1,
    "ortho": 1/sqrt(n), "forward": 1/n)."""
    return _c2c(a, n, axis, norm, out, False, "fft")


def ifft(a, n=None, axis=-1, norm=None, out=None):
    """The one-dimensional inverse discrete Fourier transform, as ``np.fft.ifft``."""
    return _c2c(a, n, axis, norm, out, True, "ifft")


def rfft(a, n=None, axis=-1, norm=None, out=None):
    """The discrete Fourier transform of a real input, its ``n // 2 + 1`` non-negative
    frequency terms, as ``np.fft.rfft``."""
    _no_out(out, "rfft")
    a = as_array(a)
    _real_input(a, "rfft")
    norm, axis = _norm(norm), _axis(a, axis)
    n = shape_of(a)[axis] if n is None else _points(n)
    return rfft_p(_fit(a, axis, n), axes=(axis,), norm=norm)


def irfft(a, n=None, axis=-1, norm=None, out=None):
    """The inverse of ``rfft``: ``n`` real points (``2 * (m - 1)`` by default for ``m``
    input terms) from the non-negative frequency terms, as ``np.fft.irfft``. The imaginary
    parts of the zero-frequency term and, for even ``n``, of the Nyquist term are ignored
    (their derivative is 0)."""
    _no_out(out, "irfft")
    a = as_array(a)
    norm, axis = _norm(norm), _axis(a, axis)
    n = _points(2 * (shape_of(a)[axis] - 1) if n is None else n)
    return irfft_p(_fit(a, axis, n // 2 + 1), axes=(axis,), n=n, norm=norm)


def hfft(a, n=None, axis=-1, norm=None, out=None):
    """The FFT of a signal with Hermitian symmetry given by its first half (a real
    spectrum), as ``np.fft.hfft``: ``irfft(conj(a))`` with the opposite ``norm``."""
    _no_out(out, "hfft")
    return irfft(ew.conj_p(as_array(a)), n, axis, _DUAL_NORM[_norm(norm)])


def ihfft(a, n=None, axis=-1, norm=None, out=None):
    """The inverse of ``hfft`` for a real input, as ``np.fft.ihfft``: ``conj(rfft(a))`` with
    the opposite ``norm``."""
    _no_out(out, "ihfft")
    a = as_array(a)
    _real_input(a, "ihfft")
    return ew.conj_p(rfft(a, n, axis, _DUAL_NORM[_norm(norm)]))


# --- several axes ------------------------------------------------------------------------------


def _nd_args(a, s, axes, inverse_real=False):
    """NumPy's reading of ``s`` and ``axes``: the sizes (``None`` entries kept: the 1-D
    default) and the normalised axes."""
    dims = shape_of(a)
    if axes is not None:
        axes = [_axis(a, ax) for ax in axes]
    if s is None:
        sizes = list(dims) if axes is None else [dims[ax] for ax in axes]
        if inverse_real and sizes:
            sizes[-1] = None
    else:
        sizes = list(s)
    if axes is None:
        if s is not None:
            warnings.warn("`axes` should not be `None` if `s` is not `None` (deprecated in "
                          "NumPy 2.0): the last len(s) axes are transformed. Pass `axes` "
                          "explicitly.", DeprecationWarning, stacklevel=3)
        axes = [_axis(a, ax) for ax in range(-len(sizes), 0)]
    if len(sizes) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    if s is not None and any(size is None for size in sizes):
        warnings.warn("Passing an array containing `None` values to `s` is deprecated in "
                      "NumPy 2.0; pass the default of the corresponding 1-D transform.",
                      DeprecationWarning, stacklevel=3)
    sizes = [dims[ax] if size == -1 else size for size, ax in zip(sizes, axes)]
    return sizes, axes


def _c2c_nd(a, s, axes, norm, out, inverse, name):
    _no_out(out, name)
    a = as_array(a)
    norm = _norm(norm)
    sizes, axes = _nd_args(a, s, axes)
    if len(set(axes)) < len(axes):  # NumPy transforms a repeated axis once per mention
        for size, ax in reversed(list(zip(sizes, axes))):
            a = _c2c(a, size, ax, norm, None, inverse, name)
        return a
    for size, ax in zip(sizes, axes):
        a = _fit(a, ax, shape_of(a)[ax] if size is None else _points(size))
    return fft_p(a, axes=tuple(axes), inverse=inverse, norm=norm) if axes else a


def fftn(a, s=None, axes=None, norm=None, out=None):
    """The n-dimensional discrete Fourier transform over ``axes`` (all by default) with
    sizes ``s``, as ``np.fft.fftn``."""
    return _c2c_nd(a, s, axes, norm, out, False, "fftn")


def ifftn(a, s=None, axes=None, norm=None, out=None):
    """The n-dimensional inverse discrete Fourier transform, as ``np.fft.ifftn``."""
    return _c2c_nd(a, s, axes, norm, out, True, "ifftn")


def fft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """The two-dimensional discrete Fourier transform, as ``np.fft.fft2``."""
    return _c2c_nd(a, s, axes, norm, out, False, "fft2")


def ifft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """The two-dimensional inverse discrete Fourier transform, as ``np.fft.ifft2``."""
    return _c2c_nd(a, s, axes, norm, out, True, "ifft2")


def _rfftn(a, s, axes, norm, out, name):
    _no_out(out, name)
    a = as_array(a)
    _real_input(a, name)
    norm = _norm(norm)
    sizes, axes = _nd_args(a, s, axes)
    if not axes:
        raise ValueError(f"{name} needs at least one axis to transform")
    if len(set(axes)) < len(axes):
        a = rfft(a, sizes[-1], axes[-1], norm)
        for size, ax in reversed(list(zip(sizes[:-1], axes[:-1]))):
            a = fft(a, size, ax, norm)
        return a
    for size, ax in zip(sizes, axes):
        a = _fit(a, ax, shape_of(a)[ax] if size is None else _points(size))
    return rfft_p(a, axes=tuple(axes), norm=norm)


def rfftn(a, s=None, axes=None, norm=None, out=None):
    """The n-dimensional discrete Fourier transform of a real input (half the spectrum
    along the last of ``axes``), as ``np.fft.rfftn``."""
    return _rfftn(a, s, axes, norm, out, "rfftn")


def rfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """The two-dimensional FFT of a real input, as ``np.fft.rfft2``."""
    return _rfftn(a, s, axes, norm, out, "rfft2")


def _irfftn(a, s, axes, norm, out, name):
    _no_out(out, name)
    a = as_array(a)
    norm = _norm(norm)
    sizes, axes = _nd_args(a, s, axes, inverse_real=True)
    if not axes:
        raise ValueError(f"{name} needs at least one axis to transform")
    last = sizes[-1]
    if len(set(axes)) < len(axes):
        for size, ax in zip(sizes[:-1], axes[:-1]):
            a = ifft(a, size, ax, norm)
        return irfft(a, last, axes[-1], norm)
    for size, ax in zip(sizes[:-1], axes[:-1]):
        a = _fit(a, ax, shape_of(a)[ax] if size is None else _points(size))
    n = _points(2 * (shape_of(a)[axes[-1]] - 1) if last is None else last)
    a = _fit(a, axes[-1], n // 2 + 1)
    return irfft_p(a, axes=tuple(axes), n=n, norm=norm)


def irfftn(a, s=None, axes=None, norm=None, out=None):
    """The inverse of ``rfftn``, as ``np.fft.irfftn``: real output with sizes ``s`` (the
    last by default ``2 * (m - 1)`` for ``m`` input terms)."""
    return _irfftn(a, s, axes, norm, out, "irfftn")


def irfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """The inverse of ``rfft2``, as ``np.fft.irfft2``."""
    return _irfftn(a, s, axes, norm, out, "irfft2")


# --- shifts ----------------------------------------------------------------------------------


def _roll(x, shift, axis):
    n = shape_of(x)[axis]
    shift %= n if n else 1
    if shift == 0:
        return x
    lead = (slice(None),) * axis
    return concatenate([getitem(x, lead + (slice(n - shift, None),)),
                        getitem(x, lead + (slice(0, n - shift),))], axis=axis)


def _shift_axes(x, axes, sign):
    x = as_array(x)
    ndim = len(shape_of(x))
    axes = range(ndim) if axes is None else \
        (axes,) if isinstance(axes, (int, np.integer)) else axes
    for ax in axes:
        ax = _axis(x, ax)
        x = _roll(x, sign * (shape_of(x)[ax] // 2), ax)
    return x


def fftshift(x, axes=None):
    """Move the zero-frequency term to the centre, as ``np.fft.fftshift`` (all axes by
    default)."""
    return _shift_axes(x, axes, 1)


def ifftshift(x, axes=None):
    """The inverse of ``fftshift``, as ``np.fft.ifftshift``."""
    return _shift_axes(x, axes, -1)

# Sparsity detection: each output entry depends on the input's line (plane) along the
# transformed axes.
fft_p.sparsity = rfft_p.sparsity = irfft_p.sparsity = \
    sr.along_axes_sparsity(lambda params: params["axes"])
