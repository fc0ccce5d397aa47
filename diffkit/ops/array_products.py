"""Products of arrays: ``convolve``, ``correlate``, ``cross``, ``kron`` and ``polyval``.

``convolve`` is a primitive: the full 1-D convolution along the last axis (leading axes
broadcast). A bilinear map: the JVP is two convolutions, each VJP is a convolution with the
other operand reversed, so rules cost what the function costs. ``correlate`` is a
convolution with the second operand reversed and conjugated; the others are compositions.
"""

import math
import warnings

import numpy as np

from ..core.concrete import holds_tracer
from ..core.primitive import Primitive
from ..core.zeros import add_tangents, as_array, dtype_of, shape_of
from . import elementwise as ew
from . import reductions as red
from . import shape as sh
from . import sparsity_rules as sr
from . import taylor_arithmetic as ta
from .array_helpers import _NUMPY2, _axis, _ndim
from .indexing import getitem

__all__ = ["kron", "convolve", "correlate", "cross", "polyval"]

def kron(a, b):
    """Kronecker product, as ``np.kron``: one broadcasting product of interleaved axes."""
    if not holds_tracer(a, b):
        return np.kron(a, b)
    a, b = as_array(a), as_array(b)
    sa, sb = shape_of(a), shape_of(b)
    ndim = max(len(sa), len(sb))
    sa, sb = (1,) * (ndim - len(sa)) + sa, (1,) * (ndim - len(sb)) + sb
    if ndim == 0:
        return ew.multiply_p(a, b)
    product = ew.multiply_p(sh.reshape(a, sum(((d, 1) for d in sa), ())),
                          sh.reshape(b, sum(((1, d) for d in sb), ())))
    return sh.reshape(product, tuple(x * y for x, y in zip(sa, sb)))


# === convolve and correlate ================================================================


def _convolve_impl(a, v, mode):
    """Convolution along the last axis, leading axes broadcasting: ``'full'`` (length
    n + m - 1) or ``'valid'`` (length n - m + 1, for n >= m)."""
    if a.ndim == 1 and v.ndim == 1:
        return np.convolve(a, v, mode)
    n, m = a.shape[-1], v.shape[-1]
    lead = np.broadcast_shapes(a.shape[:-1], v.shape[:-1])
    length = n + m - 1 if mode == "full" else n - m + 1
    out = np.zeros(lead + (length,), np.result_type(a, v))
    if math.prod(lead) <= min(n, m, length):  # few long convolutions: NumPy's kernel each
        a = np.broadcast_to(a, lead + (n,))
        v = np.broadcast_to(v, lead + (m,))
        for i in np.ndindex(*lead):
            out[i] = np.convolve(a[i], v[i], mode)
        return out
    # Many short ones: a loop over the shorter of the kernel and the output.
    if mode == "full":
        if n < m:
            a, v, n, m = v, a, m, n
        for k in range(m):
            out[..., k:k + n] += a * v[..., k:k + 1]
    elif m <= length:
        for k in range(m):
            out += a[..., m - 1 - k:m - 1 - k + length] * v[..., k:k + 1]
    else:
        kernel = v[..., ::-1]
        for k in range(length):
            out[..., k] = np.sum(a[..., k:k + m] * kernel, axis=-1)
    return out


def _reversed_last(x):
    return getitem(x, (Ellipsis, slice(None, None, -1)))


def _convolve_jvp(primals, tangents, mode):
    a, v = primals
    return convolve_p(a, v, mode=mode), add_tangents(
        tangents, lambda i, t: convolve_p(t, v, mode=mode) if i == 0 else
        convolve_p(a, t, mode=mode))


def _convolve_vjp_a(ct, out, a, v, mode):
    # The cotangent correlates with v: a convolution with v reversed, valid for a full
    # convolution and full for a valid one.
    g = convolve_p(ct, _reversed_last(v), mode="valid" if mode == "full" else "full")
    return red.unbroadcast(g, shape_of(a))


def _convolve_vjp_v(ct, out, a, v, mode):
    if mode == "full":
        g = convolve_p(ct, _reversed_last(a), mode="valid")
    else:
        g = convolve_p(_reversed_last(a), ct, mode="valid")
    return red.unbroadcast(g, shape_of(v))


def _convolve_batch(axis_size, values, batch_axes, mode):
    rank = max(len(shape_of(v)) - (ax is not None) for v, ax in zip(values, batch_axes))
    aligned = []
    for value, ax in zip(values, batch_axes):
        dims = shape_of(value)
        if ax is not None and len(dims) - 1 < rank:
            value = sh.reshape(value, dims[:1] + (1,) * (rank - len(dims) + 1) + dims[1:])
        aligned.append(value)
    return convolve_p(*aligned, mode=mode), 0


# Closed under differentiation: each rule is a full or valid convolution costing about what
# the function costs (a cotangent of length m is never computed from a full-length result).
convolve_p = Primitive("convolve", _convolve_impl, _convolve_jvp,
                       (_convolve_vjp_a, _convolve_vjp_v), _convolve_batch,
                       vjp_ignores=("out",), vjp_reads=(frozenset({1}), frozenset({0})))
convolve_p.jet = ta.multilinear(convolve_p)   # bilinear: the Cauchy product


def _signal_operands(a, v, promote):
    a, v = as_array(a), as_array(v)
    if not promote and (_ndim(a) == 0 or _ndim(v) == 0):
        raise ValueError(f"object of too small depth for desired array: correlate takes "
                         f"1-D arrays, got shapes {shape_of(a)} and {shape_of(v)}")
    a = sh.reshape(a, (1,)) if _ndim(a) == 0 else a
    v = sh.reshape(v, (1,)) if _ndim(v) == 0 else v
    if _ndim(a) != 1 or _ndim(v) != 1:
        raise ValueError(f"object too deep for desired array: convolve and correlate take "
                         f"1-D arrays, got shapes {shape_of(a)} and {shape_of(v)}")
    if shape_of(a)[0] == 0:
        raise ValueError("a cannot be empty")
    if shape_of(v)[0] == 0:
        raise ValueError("v cannot be empty")
    return a, v


def _mode_window(a, v, mode, same_start):
    """``mode`` of the convolution of the 1-D ``a`` and ``v``: ``'valid'`` directly (the
    longer operand first), ``'same'`` and ``'full'`` from the full convolution."""
    n, m = shape_of(a)[0], shape_of(v)[0]
    if mode == "valid":
        return convolve_p(a, v, mode="valid") if n >= m else convolve_p(v, a, mode="valid")
    if mode not in ("full", "same"):
        raise ValueError(f"mode must be one of 'full', 'same', or 'valid' (got {mode!r})")
    full = convolve_p(a, v, mode="full")
    if mode == "full" or (same_start == 0 and max(n, m) == n + m - 1):
        return full
    return getitem(full, slice(same_start, same_start + max(n, m)))


def convolve(a, v, mode="full"):
    """Discrete linear convolution of two 1-D sequences, as ``np.convolve`` (``mode``
    ``'full'``, ``'same'`` or ``'valid'``); differentiable in both."""
    if not holds_tracer(a, v):
        return np.convolve(a, v, mode)
    a, v = _signal_operands(a, v, promote=True)
    n, m = shape_of(a)[0], shape_of(v)[0]
    return _mode_window(a, v, mode, (min(n, m) - 1) // 2)


def correlate(a, v, mode="valid"):
    """Cross-correlation ``c[k] = sum_n a[n + k] * conj(v[n])`` of two 1-D sequences, as
    ``np.correlate`` (default ``mode='valid'``); differentiable in both."""
    if not holds_tracer(a, v):
        return np.correlate(a, v, mode)
    a, v = _signal_operands(a, v, promote=False)
    n, m = shape_of(a)[0], shape_of(v)[0]
    kernel = _reversed_last(v)
    if dtype_of(kernel).kind == "c":
        kernel = ew.conj_p(kernel)
    short = min(n, m)
    return _mode_window(a, kernel, mode, (short - 1) // 2 if n >= m else short // 2)


# === cross, polyval, meshgrid ==============================================================


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cross product of vectors along ``axisa``/``axisb`` (of length 3, or 2 taken as
    z = 0), placed along ``axisc``, as ``np.cross``; ``axis`` sets all three."""
    if not holds_tracer(a, b):
        return np.cross(a, b, axisa, axisb, axisc, axis)
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = as_array(a), as_array(b)
    a = sh.moveaxis(a, _axis(axisa, _ndim(a)), -1)
    b = sh.moveaxis(b, _axis(axisb, _ndim(b)), -1)
    na, nb = shape_of(a)[-1], shape_of(b)[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n"
                         "(dimension must be 2 or 3)")
    if (na == 2 or nb == 2) and _NUMPY2:
        warnings.warn("Arrays of 2-dimensional vectors are deprecated. Use arrays of "
                      "3-dimensional vectors instead. (deprecated in NumPy 2.0)",
                      DeprecationWarning, stacklevel=2)
    ca = [getitem(a, (Ellipsis, i)) for i in range(na)]
    cb = [getitem(b, (Ellipsis, i)) for i in range(nb)]

    def det(i, j):  # a_i b_j - a_j b_i, with missing (z) components zero
        return ew.subtract_p(ew.multiply_p(ca[i], cb[j]), ew.multiply_p(ca[j], cb[i]))

    if na == 2 and nb == 2:
        return det(0, 1)
    if na == 2:
        parts = [ew.multiply_p(ca[1], cb[2]), ew.negative_p(ew.multiply_p(ca[0], cb[2])), det(0, 1)]
    elif nb == 2:
        parts = [ew.negative_p(ew.multiply_p(ca[2], cb[1])), ew.multiply_p(ca[2], cb[0]), det(0, 1)]
    else:
        parts = [det(1, 2), det(2, 0), det(0, 1)]
    out = sh.stack(parts, axis=-1)
    return sh.moveaxis(out, -1, _axis(axisc, _ndim(out)))


def polyval(p, x):
    """The polynomial with coefficients ``p`` (highest power first) at ``x``, as
    ``np.polyval``, by Horner's scheme; differentiable in ``p`` and ``x``."""
    if isinstance(p, np.poly1d):
        p = p.coeffs
    if not holds_tracer(p, x):
        return np.polyval(p, x)
    p, x = as_array(p), as_array(x)
    y = np.zeros(shape_of(x), dtype_of(x))
    for i in range(shape_of(p)[0] if shape_of(p) else 0):
        y = ew.add_p(ew.multiply_p(y, x), getitem(p, i)) if i else ew.add_p(y, getitem(p, 0))
    return y

convolve_p.sparsity = sr.convolve_sparsity
