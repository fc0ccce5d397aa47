"""Polynomials: ``roots``, ``polyfit`` and ``polydiv`` (coefficients highest power first, as
NumPy's ``poly*`` functions).

- ``roots``: the eigenvalues of the companion matrix (NumPy's algorithm), as one primitive
  whose derivative is implicit differentiation of ``p(r) = 0``:
  ``dr = -(dp)(r) / p'(r)``, i.e. ``dr_i = -sum_k dp_k r_i^(n-k) / p'(r_i)``. The result is
  always complex on traced values (NumPy returns a real array when every root is real; a
  derivative needs one dtype). At a repeated root ``p'(r) = 0`` and the derivative is
  infinite or NaN: the roots are not differentiable there.
- ``polyfit``: NumPy's least-squares fit (scaled Vandermonde matrix, ``lstsq``) written with
  diffkit's operations, so it is differentiable in ``x``, ``y`` and ``w`` (where the rank is
  constant), with ``full`` and ``cov`` as NumPy.
- ``polydiv``: long division written with diffkit's operations, differentiable in both
  polynomials. NumPy strips leading entries of the remainder that are zero to within 1e-8;
  that needs values, which traced values under ``grad``/``jvp`` have. Under ``vmap`` only the
  leading entries that are zero by construction (``len(u) - len(v) + 1`` of them) are
  stripped, so every example has the same shape.

Leading (and, for ``roots``, trailing) zero coefficients are stripped from the concrete
values as NumPy does; a ``vmap``-batched ``p`` keeps all its coefficients (the leading one
must then be nonzero).
"""

import warnings

import numpy as np

from ..core.concrete import concrete_value, holds_tracer
from ..core.primitive import Primitive
from ..core.zeros import as_array, dtype_of, shape_of
from . import elementwise as ew
from . import reductions as red
from . import shape as sh
from .creation import vander
from .decompositions import inv, lstsq
from .families import real_cotangent, times
from .indexing import getitem
from .ufuncs import reciprocal_p

__all__ = ["roots", "polyfit", "polydiv"]


# --- roots ----------------------------------------------------------------------------------


def _roots_impl(p):
    """The roots of each polynomial along the last axis of ``p`` (..., n + 1), leading
    coefficient nonzero: eigenvalues of NumPy's companion matrix, always complex. Trailing
    zero coefficients (shared by every polynomial of a stack) are roots at 0, appended after
    the others as NumPy does."""
    p = np.asarray(p)
    out_dtype = np.result_type(p.dtype, np.complex64)
    zero_columns = np.all(p == 0, axis=tuple(range(p.ndim - 1)))
    trailing = int(np.argmin(zero_columns[::-1])) if not zero_columns.all() else 0
    p = p[..., :p.shape[-1] - trailing]
    n = p.shape[-1] - 1
    if n < 1:
        found = np.zeros(p.shape[:-1] + (0,), out_dtype)
    else:
        companion = np.zeros(p.shape[:-1] + (n, n), np.result_type(p.dtype, np.float32))
        companion[..., 0, :] = -p[..., 1:] / p[..., :1]
        below = np.arange(n - 1)
        companion[..., below + 1, below] = 1
        found = np.linalg.eigvals(companion).astype(out_dtype)
    return np.concatenate([found, np.zeros(p.shape[:-1] + (trailing,), out_dtype)], axis=-1)


def _coefficient(p, k):
    """Coefficient ``k`` of each polynomial in ``p`` (..., m), shaped (..., 1)."""
    return getitem(p, (Ellipsis, slice(k, k + 1)))


def _horner(p, r):
    """Each polynomial ``p`` (..., m) at its points ``r`` (..., n)."""
    value = _coefficient(p, 0)
    for k in range(1, shape_of(p)[-1]):
        value = value * r + _coefficient(p, k)
    target = np.broadcast_shapes(shape_of(value), shape_of(r))
    return value if shape_of(value) == target else sh.broadcast_to(value, target)


def _slope_at_roots(p, r):
    """p'(r) for each root: Horner on the derivative's coefficients."""
    n = shape_of(p)[-1] - 1
    derivative = getitem(p, (Ellipsis, slice(0, n))) * np.arange(n, 0, -1).astype(
        np.result_type(dtype_of(p), np.float32))
    return _horner(derivative, r)


def _roots_jvp(primals, tangents):
    (p,), (dp,) = primals, tangents
    r = roots_p(p)
    # dr = -dp(r) / p'(r) under the 0 x inf rule: a multiple root (p'(r) = 0) moves infinitely
    # fast only along the directions that move it, so jacfwd and jacrev agree there
    return r, times(-_horner(dp, r), reciprocal_p(_slope_at_roots(p, r)))


def _roots_vjp(ct, r, p):
    weights = times(-ct, reciprocal_p(_slope_at_roots(p, r)))  # ct_p[k] = sum_i weights_i r_i^(n-k)
    n = shape_of(p)[-1] - 1
    columns, power = [], None
    for _ in range(n + 1):
        term = weights if power is None else times(weights, power)
        columns.append(red.sum(term, axis=-1, keepdims=True))
        power = r if power is None else power * r
    return real_cotangent(sh.concatenate(columns[::-1], axis=-1), p)


roots_p = Primitive("polyroots", _roots_impl, _roots_jvp, (_roots_vjp,),
                    lambda axis_size, values, batch_axes: (roots_p(values[0]), batch_axes[0]))


def _nonzero_span(p):
    """``(first, last)`` nonzero positions of the concrete coefficients (None if unknown)."""
    values = concrete_value(as_array(p))  # a plain value is its own concrete value
    if values is None:
        return None
    nonzero = np.flatnonzero(values)
    return (int(nonzero[0]), int(nonzero[-1])) if nonzero.size else (0, -1)


def roots(p):
    """The roots of the polynomial with coefficients ``p`` (highest power first), as
    ``np.roots``: complex on traced values, differentiable in ``p`` (simple roots)."""
    if not holds_tracer(p):
        return np.roots(p)
    p = as_array(p)
    if len(shape_of(p)) != 1:
        raise ValueError("Input must be a rank-1 array.")
    size = shape_of(p)[0]
    span = _nonzero_span(p) or (0, size - 1)
    first, last = span
    out_dtype = np.result_type(dtype_of(p), np.complex64)
    if last < first:  # all zero
        return np.zeros(0, out_dtype)
    # The trailing zeros stay: they are roots at 0 that move when the last coefficients do
    # (a simple one by -dp(0) / p'(0)), and they shift the derivatives of the other roots.
    return roots_p(getitem(p, slice(first, size)))


# --- polyfit --------------------------------------------------------------------------------


def _check_fit_inputs(x, y, deg, w):
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if len(shape_of(x)) != 1:
        raise TypeError("expected 1D vector for x")
    if shape_of(x)[0] == 0:
        raise TypeError("expected non-empty vector for x")
    if len(shape_of(y)) not in (1, 2):
        raise TypeError("expected 1D or 2D array for y")
    if shape_of(x)[0] != shape_of(y)[0]:
        raise TypeError("expected x and y to have same length")
    if w is not None:
        if len(shape_of(w)) != 1:
            raise TypeError("expected a 1-d array for weights")
        if shape_of(w)[0] != shape_of(y)[0]:
            raise TypeError("expected w and y to have the same length")


def _column(v, like):
    """``v`` (n,) shaped to broadcast against ``like`` (n,) or (n, k) along its rows."""
    return v if len(shape_of(like)) == 1 else sh.reshape(v, (shape_of(v)[0], 1))


def _fit_covariance(lhs, scale, resids, cov, count, order, y):
    """NumPy's covariance of the coefficients (``cov=True`` or ``'unscaled'``)."""
    base = inv(sh.transpose(lhs) @ lhs) / (sh.reshape(scale, (-1, 1)) * scale)
    if cov == "unscaled":
        factor = 1.0
    else:
        if count <= order:
            raise ValueError("the number of data points must exceed order to scale the "
                             "covariance matrix")
        factor = resids / (count - order)
    if len(shape_of(y)) == 1:
        return base * factor
    return sh.expand_dims(base, -1) * factor


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """The least-squares polynomial of degree ``deg`` through ``(x, y)`` (coefficients
    highest power first; one column per column of a 2-D ``y``), as ``np.polyfit``, with
    its ``rcond``, ``full``, weights ``w`` and ``cov``. Differentiable in ``x``, ``y`` and
    ``w``."""
    if not holds_tracer(x, y, w):
        return np.polyfit(x, y, deg, rcond, full, w, cov)
    order = int(deg) + 1
    x, y = as_array(x) + 0.0, as_array(y) + 0.0
    w = None if w is None else as_array(w) + 0.0
    _check_fit_inputs(x, y, int(deg), w)
    count = shape_of(x)[0]
    if rcond is None:
        rcond = count * np.finfo(dtype_of(x)).eps
    lhs, rhs = vander(x, order), y
    if w is not None:
        lhs = lhs * sh.reshape(w, (count, 1))
        rhs = rhs * _column(w, y)
    scale = ew.sqrt_p(red.sum(lhs * lhs, axis=0))
    lhs = lhs / scale
    c, resids, rank, s = lstsq(lhs, rhs, rcond)
    c = c / _column(scale, c)
    if isinstance(rank, int) and rank != order and not full:
        warnings.warn("Polyfit may be poorly conditioned", np.exceptions.RankWarning,
                      stacklevel=2)
    if full:
        return c, resids, rank, s, rcond
    if cov:
        return c, _fit_covariance(lhs, scale, resids, cov, count, order, y)
    return c


# --- polydiv --------------------------------------------------------------------------------


def _strip_leading(r, at_least):
    """NumPy's remainder: leading entries within 1e-8 of zero removed (keeping one); from
    concrete values when there are some, else the ``at_least`` entries that are zero by
    construction."""
    values = concrete_value(as_array(r))
    size = shape_of(r)[0]
    if values is None:
        start = min(at_least, size - 1)
    else:
        start = 0
        while start < size - 1 and np.allclose(values[start], 0, rtol=1e-14):
            start += 1
    return getitem(r, slice(start, None)) if start else r


def polydiv(u, v):
    """``(q, r)`` with ``u = q v + r`` and ``deg r < deg v``, as ``np.polydiv``;
    differentiable in ``u`` and ``v``."""
    if not holds_tracer(u, v):
        return np.polydiv(u, v)
    u, v = sh.ravel(as_array(u) + 0.0), sh.ravel(as_array(v) + 0.0)
    m, n = shape_of(u)[0] - 1, shape_of(v)[0] - 1
    if n < 0 or m < 0:
        raise ValueError("polydiv needs non-empty coefficient arrays")
    dtype = np.result_type(dtype_of(u), dtype_of(v))
    remainder = [getitem(u, i) for i in range(m + 1)]
    divisor = [getitem(v, j) for j in range(n + 1)]
    scale = 1.0 / divisor[0]
    quotient = []
    for k in range(m - n + 1):
        d = scale * remainder[k]
        quotient.append(d)
        for j in range(n + 1):
            remainder[k + j] = remainder[k + j] - d * divisor[j]
    q = sh.stack(quotient) if quotient else np.zeros(1, dtype)
    r = sh.stack(remainder)
    if dtype_of(r) != dtype:
        r = ew.astype(r, dtype)
    return q, _strip_leading(r, max(m - n + 1, 0))
