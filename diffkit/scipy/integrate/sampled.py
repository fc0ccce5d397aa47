"""``diffkit.scipy.integrate``: differentiable quadrature of sampled data with SciPy's names,
signatures and errors: ``trapezoid``, ``simpson`` and ``cumulative_trapezoid``.

Compositions of diffkit.numpy operations (slices, ``diff``, ``cumsum``, arithmetic), so they
inherit forward, reverse and batching rules; differentiable in ``y``, in ``x`` and in a
traced ``dx``. Called with nothing traced, each function hands the work to SciPy.

``simpson`` follows SciPy >= 1.11: composite Simpson's rule (the irregular-spacing form when
``x`` is given) and, for an even number of samples, Simpson's rule on all but the last
interval plus Cartwright's correction for the last one; two samples give the trapezoid.
"""

import numpy as np
import scipy.integrate as _si

from ... import numpy as dnp
from ...core.concrete import holds_tracer
from ...core.trace import Tracer
from ...core.zeros import dtype_of, shape_of
from ...ops.indexing import getitem

__all__ = ["trapezoid", "simpson", "cumulative_trapezoid"]


def _traced_or_ndarray(x):
    """A traced value as it is; anything else as a plain ``ndarray`` (subclasses such as
    ``np.matrix`` or masked arrays too, unlike ``core.zeros.as_array``: the rules below
    read plain NumPy semantics)."""
    return x if isinstance(x, Tracer) else np.asarray(x)


def _along(x, axis, index):
    ndim = len(shape_of(x))
    return getitem(x, (slice(None),) * axis + (index,) + (slice(None),) * (ndim - axis - 1))


def _axis(axis, ndim):
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim)
    return axis % ndim


def _spacings(x, y, axis):
    """``diff(x)`` along ``axis``, shaped to broadcast against ``y``; SciPy's errors."""
    x = _traced_or_ndarray(x)
    ndim = len(shape_of(y))
    if len(shape_of(x)) == 1:
        d = dnp.diff(x)
        d = dnp.reshape(d, tuple(-1 if i == axis else 1 for i in range(ndim)))
    elif len(shape_of(x)) != ndim:
        raise ValueError("If given, shape of x must be 1-D or the same as y.")
    else:
        d = dnp.diff(x, axis=axis)
    if shape_of(d)[axis] != shape_of(y)[axis] - 1:
        raise ValueError("If given, length of x along axis must be the same as y.")
    return d


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of ``y`` along ``axis`` by the trapezoidal rule, as
    ``scipy.integrate.trapezoid`` (``diffkit.numpy.trapezoid``)."""
    if not holds_tracer(y, x, dx):
        return _si.trapezoid(y, x, dx, axis)
    return dnp.trapezoid(y, x, dx, axis)


def cumulative_trapezoid(y, x=None, dx=1.0, axis=-1, initial=None):
    """The running integral of ``y`` along ``axis`` by the trapezoidal rule, as
    ``scipy.integrate.cumulative_trapezoid`` (``initial`` ``None`` or 0, prepended)."""
    if not holds_tracer(y, x, dx):
        return _si.cumulative_trapezoid(y, x, dx, axis, initial)
    y = _traced_or_ndarray(y)
    ndim = len(shape_of(y))
    axis = _axis(axis, ndim)
    n = shape_of(y)[axis]
    if n == 0:
        raise ValueError("At least one point is required along `axis`.")
    d = dx if x is None else _spacings(x, y, axis)
    pairs = _along(y, axis, slice(1, None)) + _along(y, axis, slice(None, n - 1))
    res = dnp.cumsum(d * pairs / 2.0, axis=axis)
    if initial is None:
        return res
    if initial != 0:
        raise ValueError("`initial` must be `None` or `0`.")
    if not np.isscalar(initial):
        raise ValueError("`initial` parameter should be a scalar.")
    dims = list(shape_of(res))
    dims[axis] = 1
    return dnp.concatenate([dnp.zeros(tuple(dims), dtype_of(res)), res], axis=axis)


def _basic_simpson(y, stop, d, dx, axis):
    """Composite Simpson's rule on the samples ``0..stop`` (``stop`` even) along ``axis``;
    ``d`` the spacings (``None`` for the uniform ``dx``)."""
    y0 = _along(y, axis, slice(0, max(stop - 1, 0), 2))
    y1 = _along(y, axis, slice(1, stop, 2))
    y2 = _along(y, axis, slice(2, stop + 1, 2))
    if d is None:
        return dnp.sum(y0 + 4.0 * y1 + y2, axis=axis) * dx / 3.0
    h0 = _along(d, axis, slice(0, max(stop - 1, 0), 2))
    h1 = _along(d, axis, slice(1, stop, 2))
    hsum = h0 + h1
    terms = (y0 * (2.0 - h1 / h0) + y1 * (hsum * hsum / (h0 * h1))
             + y2 * (2.0 - h0 / h1)) * hsum / 6.0
    return dnp.sum(terms, axis=axis)


def simpson(y, *, x=None, dx=1.0, axis=-1):
    """The integral of ``y`` along ``axis`` by Simpson's rule, as ``scipy.integrate.simpson``
    (samples at ``x``, 1-D or shaped like ``y``, or spacing ``dx``)."""
    if not holds_tracer(y, x, dx):
        return _si.simpson(y, x=x, dx=dx, axis=axis)
    y = _traced_or_ndarray(y)
    ndim = len(shape_of(y))
    axis = _axis(axis, ndim)
    n = shape_of(y)[axis]
    d = None if x is None else _spacings(x, y, axis)
    if n % 2 == 1:
        return _basic_simpson(y, n - 1, d, dx, axis)
    last, before, third = (_along(y, axis, i) for i in (-1, -2, -3 if n > 2 else -2))
    if n == 2:
        width = dx if d is None else _along(d, axis, -1)
        return 0.5 * width * (last + before)
    result = _basic_simpson(y, n - 2, d, dx, axis)
    if d is None:
        h0 = h1 = dx
    else:
        h0, h1 = _along(d, axis, -2), _along(d, axis, -1)
    alpha = (2.0 * h1 * h1 + 3.0 * h0 * h1) / (6.0 * (h1 + h0))
    beta = (h1 * h1 + 3.0 * h0 * h1) / (6.0 * h0)
    eta = h1 * h1 * h1 / (6.0 * h0 * (h0 + h1))
    return result + alpha * last + beta * before - eta * third
