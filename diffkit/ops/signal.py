"""N-dimensional convolution, the primitive behind ``diffkit.scipy.signal``.

``convolve_nd(a, v, mode, method, nbatch)``: the ``'full'`` or ``'valid'`` convolution of
``a`` and ``v`` over their trailing axes (all but the first ``nbatch``, which broadcast
against each other like NumPy's leading axes); for ``'valid'`` ``a`` is at least as large
as ``v`` along every convolved axis. The implementation is SciPy's own (``method`` is
``'auto'``, ``'direct'`` or ``'fft'`` of ``scipy.signal.convolve``, or ``'oa'`` for
``scipy.signal.oaconvolve``), so values are SciPy's.

A bilinear map, closed under differentiation like the 1-D ``convolve`` of
``diffkit.ops.array_products``: the JVP is two convolutions; the VJP for ``a`` is the cotangent
convolved with ``v`` reversed along the convolved axes (``'valid'`` for a full
convolution, ``'full'`` for a valid one), the VJP for ``v`` is a valid convolution with
``a`` reversed. Transposes, not adjoints: no conjugation, as JAX's convention for complex
values wants. ``'same'`` mode, correlation and boundary handling are compositions
(slicing, reversal, ``conj``, ``pad``) in ``diffkit.scipy.signal``.
"""

import math

import numpy as np
import scipy.signal as _ss

from ..core.primitive import Primitive
from ..core.zeros import add_tangents, dtype_of, shape_of
from . import reductions as red
from . import shape as sh
from . import sparsity_rules as sr
from .indexing import getitem

__all__ = ["convolve_nd", "convolve_nd_p", "reverse_axes", "lfilter_p"]


def _convolve_nd_impl(a, v, mode, method, nbatch):
    a, v = np.asarray(a), np.asarray(v)
    if nbatch == 0:
        if method == "oa":
            return _ss.oaconvolve(a, v, mode)
        return _ss.convolve(a, v, mode, method)
    conv_axes = tuple(range(nbatch, a.ndim))
    if method in ("fft", "oa"):   # SciPy's FFT convolutions broadcast the other axes
        fun = _ss.fftconvolve if method == "fft" else _ss.oaconvolve
        out = fun(a, v, mode, axes=conv_axes)
        lead = np.broadcast_shapes(a.shape[:nbatch], v.shape[:nbatch])
        return np.broadcast_to(out, lead + out.shape[nbatch:]).copy()
    lead = np.broadcast_shapes(a.shape[:nbatch], v.shape[:nbatch])
    a = np.broadcast_to(a, lead + a.shape[nbatch:])
    v = np.broadcast_to(v, lead + v.shape[nbatch:])
    slices = [_ss.convolve(a[i], v[i], mode, method) for i in np.ndindex(*lead)]
    first = slices[0] if slices else _ss.convolve(
        np.zeros(a.shape[nbatch:], a.dtype), np.zeros(v.shape[nbatch:], v.dtype), mode, method)
    out = np.empty(lead + first.shape, first.dtype)
    for i, s in zip(np.ndindex(*lead), slices):
        out[i] = s
    return out


def reverse_axes(x, nbatch=0):
    """``x`` reversed along every axis after the first ``nbatch``."""
    rank = len(shape_of(x)) - nbatch
    if rank == 0:
        return x
    return getitem(x, (Ellipsis,) + (slice(None, None, -1),) * rank)


def _convolve_nd_jvp(primals, tangents, mode, method, nbatch):
    a, v = primals
    params = dict(mode=mode, method=method, nbatch=nbatch)
    return convolve_nd_p(a, v, **params), add_tangents(
        tangents, lambda i, t: convolve_nd_p(t, v, **params) if i == 0 else
        convolve_nd_p(a, t, **params))


def _convolve_nd_vjp_a(ct, out, a, v, mode, method, nbatch):
    g = convolve_nd_p(ct, reverse_axes(v, nbatch), mode="valid" if mode == "full" else "full",
                      method=method, nbatch=nbatch)
    return red.unbroadcast(g, shape_of(a))


def _convolve_nd_vjp_v(ct, out, a, v, mode, method, nbatch):
    if mode == "full":
        g = convolve_nd_p(ct, reverse_axes(a, nbatch), mode="valid", method=method,
                          nbatch=nbatch)
    else:
        g = convolve_nd_p(reverse_axes(a, nbatch), ct, mode="valid", method=method,
                          nbatch=nbatch)
    return red.unbroadcast(g, shape_of(v))


def _convolve_nd_batch(axis_size, values, batch_axes, mode, method, nbatch):
    aligned = []
    for value, ax in zip(values, batch_axes):
        if ax is None:
            value = sh.reshape(value, (1,) + shape_of(value))
        aligned.append(value)
    return convolve_nd_p(*aligned, mode=mode, method=method, nbatch=nbatch + 1), 0


convolve_nd_p = Primitive("convolve_nd", _convolve_nd_impl, _convolve_nd_jvp,
                          (_convolve_nd_vjp_a, _convolve_nd_vjp_v), _convolve_nd_batch,
                          vjp_ignores=("out",),
                          vjp_reads=(frozenset({1}), frozenset({0})))


def convolve_nd(a, v, mode, method="auto", nbatch=0):
    """Bind ``convolve_nd`` (``mode`` ``'full'`` or ``'valid'``; see the module docstring)."""
    return convolve_nd_p(a, v, mode=mode, method=method, nbatch=nbatch)


# --- lfilter: a linear recurrence -------------------------------------------------------
#
# y = lfilter(b, a, x) solves sum_j a_j y[n-j] = sum_k b_k x[n-k] along one axis, with
# zero initial conditions. It is linear in b and in x, and differentiating the recurrence in
# a gives sum_j a_j dy[n-j] = -sum_j da_j y[n-j]. So every derivative is another lfilter:
#   dy = lfilter(db, a, x) + lfilter(b, a, dx) - lfilter(da, a, y).
# The transposes: a causal filter with zero initial state is a lower-triangular Toeplitz
# matrix, whose transpose is the same filter run backwards in time (reverse, filter,
# reverse). With w = reverse(lfilter([1], a, reverse(ct))), the cotangents are
#   x: reverse(lfilter(b, a, reverse(ct))),  b_k: sum_n w[n] x[n-k],  a_j: -sum_n w[n] y[n-j].


def _lfilter_impl(b, a, x, axis):
    b, a, x = np.asarray(b), np.asarray(a), np.asarray(x)
    out = _ss.lfilter(b, a, x, axis=axis)
    dtype = np.result_type(b, a, x)
    return out.astype(dtype, copy=False) if dtype.kind == "f" else out


def _time_reversed(x, axis):
    index = [slice(None)] * len(shape_of(x))
    index[axis] = slice(None, None, -1)
    return getitem(x, tuple(index))


def _lagged_products(w, x, count, axis):
    """``[sum_n w[n] x[n-k] for k in range(count)]`` as one array: the sums run over the
    filtered axis (``x`` delayed by ``k``) and over every other axis."""
    w, x = sh.moveaxis(w, axis, -1), sh.moveaxis(x, axis, -1)
    size = shape_of(x)[-1]
    sums = []
    for k in range(count):
        if k >= size:   # a lag beyond the signal: no product
            sums.append(np.zeros((), np.result_type(dtype_of(w), dtype_of(x))))
        else:
            sums.append(red.sum(getitem(w, (Ellipsis, slice(k, None)))
                                * getitem(x, (Ellipsis, slice(None, size - k)))))
    return sh.stack(sums)


def _lfilter_jvp(primals, tangents, axis):
    b, a, x = primals
    out = lfilter_p(b, a, x, axis=axis)

    def term(i, t):
        if i == 0:
            return lfilter_p(t, a, x, axis=axis)
        if i == 1:
            return -lfilter_p(t, a, out, axis=axis)
        return lfilter_p(b, a, t, axis=axis)
    return out, add_tangents(tangents, term)


def _backward(ct, a, axis):
    """``w``: the cotangent run backwards through the all-pole filter 1/a."""
    one = np.ones(1, dtype_of(a) if dtype_of(a).kind in "fc" else np.float64)
    return _time_reversed(lfilter_p(one, a, _time_reversed(ct, axis), axis=axis), axis)


def _lfilter_vjp_b(ct, out, b, a, x, axis):
    return _lagged_products(_backward(ct, a, axis), x, shape_of(b)[0], axis)


def _lfilter_vjp_a(ct, out, b, a, x, axis):
    return -_lagged_products(_backward(ct, a, axis), out, shape_of(a)[0], axis)


def _lfilter_vjp_x(ct, out, b, a, x, axis):
    return _time_reversed(lfilter_p(b, a, _time_reversed(ct, axis), axis=axis), axis)


def _lfilter_batch(axis_size, values, batch_axes, axis):
    """A batched signal is filtered along the same (negative) axis at once; batched
    coefficients are filtered row by row (SciPy's lfilter takes 1-D coefficients)."""
    b, a, x = values
    if batch_axes[0] is None and batch_axes[1] is None:
        return lfilter_p(b, a, x, axis=axis), 0
    rows = [lfilter_p(*[v if ax is None else getitem(v, i)
                        for v, ax in zip(values, batch_axes)], axis=axis)
            for i in range(axis_size)]
    return sh.stack(rows), 0


def _lfilter_sparsity(args, out, local, axis):
    """Output ``n`` of a line depends on the signal's entries ``m <= n`` of that line (only
    ``n - m < len(b)`` for a FIR filter, ``len(a) == 1``), on ``b_k`` for ``k <= n`` and on
    ``a_j`` for ``j <= n``."""
    b, a, x = args
    shape = shape_of(x)
    size, length = math.prod(shape), shape[axis]
    numbers = np.moveaxis(sr.numbered(shape), axis, -1)   # (..., length)
    taps, poles = shape_of(b)[0], shape_of(a)[0]
    i, j = np.tril_indices(length)
    if poles == 1:
        keep = i - j < taps
        i, j = i[keep], j[keep]
    signal = sr.matrix(numbers[..., i], numbers[..., j], (size, size))

    def coefficients(count):
        n, k = np.nonzero(np.arange(length)[:, None] >= np.arange(count)[None, :])
        rows = numbers[..., n]
        return sr.matrix(rows, np.broadcast_to(k, rows.shape), (size, count))

    return coefficients(taps), coefficients(poles), signal


lfilter_p = Primitive("lfilter", _lfilter_impl, _lfilter_jvp,
                      (_lfilter_vjp_b, _lfilter_vjp_a, _lfilter_vjp_x), _lfilter_batch,
                      vjp_reads=(frozenset({0, 1, 2}), frozenset({1, "out"}),
                                 frozenset({0, 1})), sparsity=_lfilter_sparsity)
