"""Differences, gradients and integrals with NumPy's signatures: ``diff``, ``ediff1d``,
``gradient`` and ``trapezoid``, compositions of slicing, ``concatenate`` and arithmetic
(so they need no rules of their own).
"""

import numpy as np

from ..core.trace import Tracer
from ..core.zeros import as_array, dtype_of, shape_of
from . import elementwise as ew
from . import reductions as rd
from . import shape as sh
from .indexing import getitem
from .statistics_helpers import _along, _single_axis

__all__ = ["diff", "ediff1d", "gradient", "trapezoid"]


# --- differences, gradients, integrals -----------------------------------------------------


def _edge_value(value, x, axis):
    """``prepend``/``append`` as an array joinable to ``x`` along ``axis``."""
    value = as_array(value)
    if len(shape_of(value)) == 0:
        dims = shape_of(x)
        value = sh.broadcast_to(value, dims[:axis] + (1,) + dims[axis + 1:])
    return value


def diff(a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue):
    """The ``n``-th discrete difference along ``axis``, as ``np.diff`` (``prepend`` and
    ``append`` join values first; scalars are broadcast)."""
    if n == 0:
        return a
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n!r}")
    x = as_array(a)
    ndim = len(shape_of(x))
    if ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = _single_axis(axis, ndim)
    parts = []
    if prepend is not np._NoValue:
        parts.append(_edge_value(prepend, x, axis))
    parts.append(x)
    if append is not np._NoValue:
        parts.append(_edge_value(append, x, axis))
    if len(parts) > 1:
        x = sh.concatenate(parts, axis=axis)
    boolean = dtype_of(x).kind == "b"
    for _ in range(n):
        length = shape_of(x)[axis]
        later, earlier = _along(x, axis, slice(1, None)), _along(x, axis, slice(0, length - 1))
        x = ew.not_equal_p(later, earlier) if boolean else later - earlier
    return x


def ediff1d(ary, to_end=None, to_begin=None):
    """Differences between consecutive entries of the flattened ``ary``, with ``to_begin``
    and ``to_end`` joined at the ends, as ``np.ediff1d``."""
    x = sh.ravel(as_array(ary))
    n = shape_of(x)[0]
    parts = [_along(x, 0, slice(1, None)) - _along(x, 0, slice(0, max(n - 1, 0)))]
    for value, what in ((to_begin, "to_begin"), (to_end, "to_end")):
        if value is None:
            continue
        value = as_array(value)
        if not np.can_cast(dtype_of(value), dtype_of(x), casting="same_kind"):
            raise TypeError(f"dtype of `{what}` must be compatible with input `ary` under the "
                            "`same_kind` rule.")
        value = ew.astype(sh.ravel(value), dtype_of(x))
        parts.insert(0 if what == "to_begin" else len(parts), value)
    return parts[0] if len(parts) == 1 else sh.concatenate(parts)


def _spacings(varargs, dims, axes):
    """One spacing per axis: a scalar, or a 1-D array of coordinates."""
    if not varargs:
        return [1.0] * len(axes)
    if len(varargs) == 1 and len(shape_of(varargs[0])) == 0:
        return [varargs[0]] * len(axes)
    if len(varargs) != len(axes):
        raise TypeError("invalid number of arguments")
    spacings = []
    for spacing, ax in zip(varargs, axes):
        spacing = as_array(spacing)
        rank = len(shape_of(spacing))
        if rank == 0:
            spacings.append(spacing)
            continue
        if rank != 1:
            raise ValueError("distances must be either scalars or 1d")
        if shape_of(spacing)[0] != dims[ax]:
            raise ValueError("when 1d, distances must match the length of the corresponding "
                             "dimension")
        if dtype_of(spacing).kind in "biu":
            spacing = ew.astype(spacing, np.float64)
        steps = diff(spacing)
        if not isinstance(steps, Tracer) and steps.size and np.all(steps == steps[0]):
            spacings.append(steps[0])  # uniform, as NumPy: the simpler formula
        else:
            spacings.append(("coordinates", steps))
    return spacings


def _on_axis(values, ndim, axis):
    """A 1-D array laid along ``axis`` of an ``ndim``-dimensional array."""
    return sh.reshape(values, tuple(-1 if i == axis else 1 for i in range(ndim)))


def _gradient_along(f, spacing, axis, edge_order):
    ndim = len(shape_of(f))
    n = shape_of(f)[axis]

    def at(start, stop):
        return _along(f, axis, slice(start, stop))

    first, second, last, before = at(0, 1), at(1, 2), at(n - 1, n), at(n - 2, n - 1)
    third, before2 = (at(2, 3), at(n - 3, n - 2)) if n >= 3 else (None, None)
    if type(spacing) is tuple:
        steps = spacing[1]
        dx1 = _along(steps, 0, slice(0, n - 2))
        dx2 = _along(steps, 0, slice(1, n - 1))
        a = -dx2 / (dx1 * (dx1 + dx2))
        b = (dx2 - dx1) / (dx1 * dx2)
        c = dx1 / (dx2 * (dx1 + dx2))
        a, b, c = (_on_axis(v, ndim, axis) for v in (a, b, c))
        inner = a * at(0, n - 2) + b * at(1, n - 1) + c * at(2, n)
        h0, hl = getitem(steps, 0), getitem(steps, n - 2)
        if edge_order == 1:
            start = (second - first) / h0
            end = (last - before) / hl
        else:
            dx1, dx2 = h0, getitem(steps, 1)
            a = -(2.0 * dx1 + dx2) / (dx1 * (dx1 + dx2))
            b = (dx1 + dx2) / (dx1 * dx2)
            c = -dx1 / (dx2 * (dx1 + dx2))
            start = a * first + b * second + c * third
            dx1, dx2 = getitem(steps, n - 3), hl
            a = dx2 / (dx1 * (dx1 + dx2))
            b = -(dx2 + dx1) / (dx1 * dx2)
            c = (2.0 * dx2 + dx1) / (dx2 * (dx1 + dx2))
            end = a * before2 + b * before + c * last
    else:
        h = spacing
        inner = (at(2, n) - at(0, n - 2)) / (2.0 * h)
        if edge_order == 1:
            start = (second - first) / h
            end = (last - before) / h
        else:
            start = (-1.5 / h) * first + (2.0 / h) * second + (-0.5 / h) * third
            end = (0.5 / h) * before2 + (-2.0 / h) * before + (1.5 / h) * last
    return sh.concatenate([start, inner, end], axis=axis)


def gradient(f, *varargs, axis=None, edge_order=1):
    """The gradient of ``f`` sampled on a grid, as ``np.gradient``: second-order central
    differences inside and one-sided differences of order ``edge_order`` (1 or 2) at the
    ends. Spacings are one scalar, one per axis, or 1-D coordinate arrays (differentiable
    too). Returns one array, or a tuple with one per axis when there are several."""
    x = as_array(f)
    dims = shape_of(x)
    ndim = len(dims)
    if axis is None:
        axes = list(range(ndim))
    else:
        given = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
        axes = [sh._normalize_axis(a, ndim) for a in given]
        if len(set(axes)) != len(axes):
            raise ValueError(f"duplicate value in 'axis': {axis}")
    spacings = _spacings(varargs, dims, axes)
    if edge_order > 2:
        raise ValueError("'edge_order' greater than 2 not supported")
    if dtype_of(x).kind in "biu":
        x = ew.astype(x, np.float64)
    outputs = []
    for ax, spacing in zip(axes, spacings):
        if dims[ax] < edge_order + 1:
            raise ValueError("Shape of array too small to calculate a numerical gradient, at "
                             "least (edge_order + 1) elements are required.")
        outputs.append(_gradient_along(x, spacing, ax, edge_order))
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of ``y`` along ``axis`` by the trapezoidal rule, as ``np.trapezoid``:
    at sample points ``x`` (1-D along ``axis``, or shaped like ``y``) or spacing ``dx``.
    Differentiable in ``y``, ``x`` and ``dx``."""
    y = as_array(y)
    ndim = len(shape_of(y))
    axis = _single_axis(axis, ndim)
    n = shape_of(y)[axis]
    if x is None:
        d = dx
    else:
        x = as_array(x)
        if len(shape_of(x)) == 1:
            d = _on_axis(diff(x), ndim, axis)
        else:
            d = diff(x, axis=axis)
    pairs = _along(y, axis, slice(1, None)) + _along(y, axis, slice(0, max(n - 1, 0)))
    return rd.sum(d * pairs / 2.0, axis=axis)
