"""``diffkit.scipy.signal``: differentiable convolutions and correlations with SciPy's names,
signatures, modes and errors: ``convolve``, ``correlate``, ``fftconvolve``, ``oaconvolve``,
``convolve2d`` and ``correlate2d``.

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

import numpy as np
import scipy.signal as _ss

from ..core.concrete import holds_tracer
from ..core.trace import Tracer
from ..core.zeros import as_array, dtype_of, shape_of
from ..ops import elementwise as ew
from ..ops import shape as sh
from ..ops.array_padding import pad as _pad
from ..ops.indexing import getitem
from ..ops.signal import convolve_nd, reverse_axes

__all__ = ["convolve", "correlate", "fftconvolve", "oaconvolve", "convolve2d", "correlate2d"]

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
