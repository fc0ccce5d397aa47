"""``diffkit.scipy.signal``: differentiable convolutions and correlations with SciPy's names,
signatures, modes and errors: ``convolve``, ``correlate``, ``fftconvolve``, ``oaconvolve``,
``convolve2d`` and ``correlate2d``; linear filtering, ``lfilter`` (a primitive whose
derivatives in the coefficients and the signal are filters again), and Welch's power
spectral density ``welch`` (a composition of segments, window, FFT and average).

All are compositions over one primitive, ``convolve_nd`` (diffkit/ops/signal.py: the full or
valid N-D convolution, computed by SciPy itself): ``'same'`` is a window of the full result,
correlation convolves with the second input reversed and conjugated, and the boundaries
``'wrap'``/``'symm'`` and a nonzero ``fillvalue`` of the 2-D functions pad the first input
(``diffkit.numpy.pad``) before a valid convolution. Derivatives flow to both inputs (and to a
traced ``fillvalue``). Called with no traced argument, each function hands the work to SciPy.

Conventions matched from SciPy: ``'same'`` is centered on ``in1`` (the window of the full
convolution starting at ``(s2 - 1) // 2``; ``correlate2d`` starts at ``s2 // 2``); for
``'valid'``, one input must be at least as large as the other along every (convolved) axis
and the two are swapped when ``in2`` is the larger; ``correlate2d`` of a swapped ``'valid'``
pair returns SciPy's conjugated result.
"""

import warnings

import numpy as np
import scipy.signal as _ss

from .. import numpy as _dnp
from ..core.concrete import holds_tracer
from ..core.trace import Tracer
from ..core.zeros import as_array, dtype_of, shape_of
from ..numpy._wrap import wrap_namespace as _wrap_namespace
from ..ops import elementwise as ew
from ..ops import shape as sh
from ..ops.array_padding import pad as _pad
from ..ops.indexing import getitem
from ..ops.signal import convolve_nd, lfilter_p, reverse_axes

__all__ = ["convolve", "correlate", "fftconvolve", "oaconvolve", "convolve2d", "correlate2d",
           "lfilter", "welch"]

_MODES = ("full", "same", "valid")
_BOUNDARIES = {"fill": "fill", "pad": "fill", "wrap": "wrap", "circular": "wrap",
               "symm": "symm", "symmetric": "symm"}


def _ndim(x):
    return len(shape_of(x))


def _check_mode(mode):
    if mode not in _MODES:
        raise ValueError("acceptable mode flags are 'valid', 'same', or 'full'.")


def _rev_conj(x, nbatch=0):
    x = reverse_axes(x, nbatch)
    return ew.conj_p(x) if dtype_of(x).kind == "c" else x


def _swap_needed(s1, s2, what):
    """Whether ``'valid'`` must swap the inputs (``in2`` larger along every axis); an error
    when neither is at least as large as the other along every axis."""
    if all(a >= b for a, b in zip(s1, s2)):
        return False
    if all(b >= a for a, b in zip(s1, s2)):
        return True
    raise ValueError(f"For 'valid' mode, one must be at least as large as the other in "
                     f"every dimension{what}")


def _window(full, nbatch, starts, lengths):
    index = (slice(None),) * nbatch + tuple(slice(s, s + n) for s, n in zip(starts, lengths))
    return getitem(full, index)


def _conv(a, v, mode, method, nbatch=0, correlate=False):
    """The ``mode`` convolution (or correlation) of ``a`` and ``v`` over the axes after the
    first ``nbatch``, which broadcast. Returns the result."""
    s1, s2 = shape_of(a)[nbatch:], shape_of(v)[nbatch:]
    kernel = _rev_conj(v, nbatch) if correlate else v
    if mode == "valid":
        if _swap_needed(s1, s2, ""):
            return convolve_nd(kernel, a, "valid", method, nbatch)
        return convolve_nd(a, kernel, "valid", method, nbatch)
    full = convolve_nd(a, kernel, "full", method, nbatch)
    if mode == "full":
        return full
    return _window(full, nbatch, [(m - 1) // 2 for m in s2], s1)


def _operands(in1, in2):
    a, v = as_array(in1), as_array(in2)
    if _ndim(a) != _ndim(v):
        raise ValueError("in1 and in2 should have the same dimensionality")
    return a, v


def _nd(in1, in2, mode, method, correlate):
    a, v = _operands(in1, in2)
    _check_mode(mode)
    if method not in ("auto", "direct", "fft"):
        raise ValueError("Acceptable method flags are 'auto', 'direct', or 'fft'.")
    if _ndim(a) == 0:
        return ew.multiply_p(a, ew.conj_p(v) if correlate and dtype_of(v).kind == "c" else v)
    return _conv(a, v, mode, method, 0, correlate)


def convolve(in1, in2, mode="full", method="auto"):
    """N-dimensional convolution of ``in1`` and ``in2``, as ``scipy.signal.convolve``
    (``mode`` ``'full'``, ``'same'`` or ``'valid'``; ``method`` ``'auto'``, ``'direct'`` or
    ``'fft'``); differentiable in both inputs."""
    if not holds_tracer(in1, in2):
        return _ss.convolve(in1, in2, mode, method)
    return _nd(in1, in2, mode, method, correlate=False)


def correlate(in1, in2, mode="full", method="auto"):
    """N-dimensional cross-correlation ``z[k] = sum_l in1[l + k] conj(in2[l])`` (offset to
    ``mode``), as ``scipy.signal.correlate``; differentiable in both inputs."""
    if not holds_tracer(in1, in2):
        return _ss.correlate(in1, in2, mode, method)
    return _nd(in1, in2, mode, method, correlate=True)


def _axes_conv(in1, in2, mode, axes, method):
    """``fftconvolve``/``oaconvolve``: convolve along ``axes`` (all by default), broadcast
    the others. Axes where an input has length 1 are broadcast too, as in SciPy."""
    a, v = _operands(in1, in2)
    _check_mode(mode)
    ndim = _ndim(a)
    if ndim == 0:
        return ew.multiply_p(a, v)
    if axes is None:
        axes = list(range(ndim))
    else:
        axes = [axes] if np.ndim(axes) == 0 else list(axes)
        axes = [sh._normalize_axis(int(ax), ndim) for ax in axes]
        if len(set(axes)) != len(axes):
            raise ValueError("all axes must be unique")
    s1, s2 = shape_of(a), shape_of(v)
    for ax in range(ndim):
        if ax not in axes and s1[ax] != s2[ax] and 1 not in (s1[ax], s2[ax]):
            raise ValueError("incompatible shapes for in1 and in2: "
                             f"{s1} and {s2}")
    axes = sorted(ax for ax in axes if s1[ax] != 1 and s2[ax] != 1)
    if not axes:
        return ew.multiply_p(a, v)
    others = [ax for ax in range(ndim) if ax not in axes]
    order = others + axes
    a, v = sh.transpose(a, order), sh.transpose(v, order)
    out = _conv(a, v, mode, method, len(others))
    return sh.transpose(out, list(np.argsort(order)))


def fftconvolve(in1, in2, mode="full", axes=None):
    """Convolution of ``in1`` and ``in2`` by FFT along ``axes``, as
    ``scipy.signal.fftconvolve``; differentiable in both inputs."""
    if not holds_tracer(in1, in2):
        return _ss.fftconvolve(in1, in2, mode, axes)
    return _axes_conv(in1, in2, mode, axes, "fft")


def oaconvolve(in1, in2, mode="full", axes=None):
    """Convolution of ``in1`` and ``in2`` by the overlap-add method along ``axes``, as
    ``scipy.signal.oaconvolve``; differentiable in both inputs."""
    if not holds_tracer(in1, in2):
        return _ss.oaconvolve(in1, in2, mode, axes)
    return _axes_conv(in1, in2, mode, axes, "oa")


def _conv2d(in1, in2, mode, boundary, fillvalue, correlate, name):
    a, v = as_array(in1), as_array(in2)
    if _ndim(a) != 2 or _ndim(v) != 2:
        raise ValueError(f"{name} inputs must both be 2-D arrays")
    _check_mode(mode)
    if boundary not in _BOUNDARIES:
        raise ValueError("Acceptable boundary flags are 'fill', 'circular' (or 'wrap'), "
                         "and 'symmetric' (or 'symm').")
    boundary = _BOUNDARIES[boundary]
    if not isinstance(fillvalue, Tracer) and np.ndim(fillvalue) != 0:
        raise ValueError("fillvalue must be scalar or an array with one element")
    s1, s2 = shape_of(a), shape_of(v)
    kernel = _rev_conj(v) if correlate else v
    if mode == "valid":
        if _swap_needed(s1, s2, ""):
            out = convolve_nd(kernel, a, "valid", "direct")
            return ew.conj_p(out) if correlate and dtype_of(out).kind == "c" else out
        return convolve_nd(a, kernel, "valid", "direct")
    filled = boundary == "fill" and (isinstance(fillvalue, Tracer) or fillvalue != 0)
    if boundary == "fill" and not filled:
        full = convolve_nd(a, kernel, "full", "direct")
    else:
        widths = [(m - 1, m - 1) for m in s2]
        if boundary == "fill":
            padded = _pad(a, widths, mode="constant", constant_values=fillvalue)
        else:
            padded = _pad(a, widths, mode="wrap" if boundary == "wrap" else "symmetric")
        full = convolve_nd(padded, kernel, "valid", "direct")
    if mode == "full":
        return full
    starts = [m // 2 if correlate else (m - 1) // 2 for m in s2]
    return _window(full, 0, starts, s1)


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
    """2-D convolution, as ``scipy.signal.convolve2d`` (``mode`` ``'full'``, ``'same'`` or
    ``'valid'``; ``boundary`` ``'fill'`` with ``fillvalue``, ``'wrap'`` or ``'symm'``);
    differentiable in both inputs and in a traced ``fillvalue``."""
    if not holds_tracer(in1, in2, fillvalue):
        return _ss.convolve2d(in1, in2, mode, boundary, fillvalue)
    return _conv2d(in1, in2, mode, boundary, fillvalue, False, "convolve2d")


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
    """2-D cross-correlation, as ``scipy.signal.correlate2d`` (same modes and boundaries as
    ``convolve2d``); differentiable in both inputs and in a traced ``fillvalue``."""
    if not holds_tracer(in1, in2, fillvalue):
        return _ss.correlate2d(in1, in2, mode, boundary, fillvalue)
    return _conv2d(in1, in2, mode, boundary, fillvalue, True, "correlate2d")


# --- linear filtering and spectral estimation ------------------------------------------------


def lfilter(b, a, x, axis=-1):
    """``scipy.signal.lfilter(b, a, x, axis)`` with zero initial conditions: the output of
    the IIR/FIR filter with numerator ``b`` and denominator ``a`` (1-D) along ``axis``.
    Differentiable in ``b``, ``a`` and ``x``; each derivative is another filter
    (``diffkit/ops/signal.py``). Initial conditions (SciPy's ``zi``) are not supported."""
    if not holds_tracer(b, a, x):
        return _ss.lfilter(b, a, x, axis=axis)
    b, a, x = as_array(b), as_array(a), as_array(x)
    if _ndim(b) != 1 or _ndim(a) != 1:
        raise ValueError("lfilter: b and a must be 1-D arrays of filter coefficients")
    ndim = _ndim(x)
    if not -ndim <= axis < max(ndim, 1):
        raise ValueError(f"lfilter: axis {axis} is out of bounds for an array of dimension "
                         f"{ndim}")
    return lfilter_p(b, a, x, axis=axis - ndim if axis >= 0 else axis)


def _median_bias(n):
    """SciPy's bias of the median of ``n`` chi-squared(2) periodogram values."""
    ii_2 = 2 * np.arange(1.0, (n - 1) // 2 + 1)
    return 1 + np.sum(1.0 / (ii_2 + 1) - 1.0 / ii_2)


def _segments_window(window, nperseg, length):
    """The window array and segment length, as SciPy chooses them."""
    if isinstance(window, (str, tuple)):
        if nperseg is None:
            nperseg = 256
        if nperseg > length:
            warnings.warn(f"nperseg={nperseg} is greater than signal length {length}, using "
                          f"nperseg = {length}", stacklevel=3)
            nperseg = length
        return np.asarray(_ss.get_window(window, nperseg)), nperseg
    win = np.asarray(window)
    if win.ndim != 1:
        raise ValueError("window must be 1-D")
    if length < win.shape[-1]:
        raise ValueError("window is longer than input signal")
    if nperseg is not None and nperseg != win.shape[0]:
        raise ValueError("value specified for nperseg is different from length of window")
    return win, win.shape[0]


def _detrended(segments, detrend):
    if detrend is False or detrend is None:
        return segments
    if callable(detrend):
        return detrend(segments)
    if detrend == "constant":
        return segments - _dnp.mean(segments, axis=-1, keepdims=True)
    if detrend == "linear":   # remove the least-squares line: project out span{1, t}
        n = shape_of(segments)[-1]
        basis, _ = np.linalg.qr(np.stack([np.ones(n), np.arange(n, dtype=float)], axis=1))
        return segments - _dnp.matmul(_dnp.matmul(segments, basis), basis.T)
    raise ValueError(f"detrend must be 'constant', 'linear', False or a function, not "
                     f"{detrend!r}")


def welch(x, fs=1.0, window="hann_periodic", nperseg=None, noverlap=None, nfft=None,
          detrend="constant", return_onesided=True, scaling="density", axis=-1,
          average="mean"):
    """``scipy.signal.welch``: the power spectral density by Welch's method, as SciPy
    computes it (segments, detrending, window, FFT, one-sided doubling, mean or
    bias-corrected median over segments), written with diffkit's functions, so
    differentiable in ``x``. Returns ``(f, Pxx)``; ``f`` is a NumPy array."""
    if not holds_tracer(x):
        return _ss.welch(x, fs, window, nperseg, noverlap, nfft, detrend, return_onesided,
                         scaling, axis, average)
    x = _dnp.moveaxis(as_array(x), axis, -1)
    length = shape_of(x)[-1]
    win, nperseg = _segments_window(window, nperseg, length)
    noverlap = nperseg // 2 if noverlap is None else int(noverlap)
    nfft = nperseg if nfft is None else int(nfft)
    if noverlap >= nperseg:
        raise ValueError("noverlap must be less than nperseg.")
    if nfft < nperseg:
        raise ValueError("nfft must be greater than or equal to nperseg.")
    if scaling == "density":
        scale = 1.0 / (fs * np.sum(win * win))
    elif scaling == "spectrum":
        scale = 1.0 / np.sum(win) ** 2
    else:
        raise ValueError(f"Unknown scaling: {scaling!r}")
    onesided = bool(return_onesided) and dtype_of(x).kind != "c"
    step = nperseg - noverlap
    count = (length - noverlap) // step
    starts = np.arange(count) * step
    segments = getitem(x, (Ellipsis, starts[:, None] + np.arange(nperseg)[None, :]))
    segments = _detrended(segments, detrend) * win
    if onesided:
        spectrum = _dnp.fft.rfft(segments, n=nfft, axis=-1)
        freqs = np.fft.rfftfreq(nfft, 1 / fs)
    else:
        spectrum = _dnp.fft.fft(segments, n=nfft, axis=-1)
        freqs = np.fft.fftfreq(nfft, 1 / fs)
    power = (_dnp.real(spectrum) ** 2 + _dnp.imag(spectrum) ** 2) * scale
    if onesided:   # the negative frequencies' power, folded onto the positive ones
        doubled = np.full(shape_of(power)[-1], 2.0)
        doubled[0] = 1.0
        if nfft % 2 == 0:
            doubled[-1] = 1.0
        power = power * doubled
    if average == "mean":
        result = _dnp.mean(power, axis=-2) if count > 0 else _dnp.sum(power, axis=-2)
    elif average == "median":
        result = _dnp.median(power, axis=-2) / _median_bias(count)
    else:
        raise ValueError(f"average must be 'median' or 'mean', got {average}")
    result = _dnp.moveaxis(result, -1, axis)
    real = np.result_type(dtype_of(x), np.float32)
    real = np.dtype(real.char.lower()) if real.kind == "c" else real
    return freqs.astype(real), ew.astype(result, real) if dtype_of(result) != real else result


# SciPy's signatures, docstrings and array-like inputs (diffkit/numpy/_wrap.py)
_wrap_namespace(globals(), _ss, __name__, __all__)
