"""Polynomials: ``roots``, ``poly``, ``polyfit`` and ``polydiv`` (coefficients highest power
first, as NumPy's ``poly*`` functions).

- ``roots``: the eigenvalues of the companion matrix (NumPy's algorithm), as one primitive
  whose derivative is implicit differentiation of ``p(r) = 0``:
  ``dr = -(dp)(r) / p'(r)``, i.e. ``dr_i = -sum_k dp_k r_i^(n-k) / p'(r_i)``. The result is
  always complex on traced values (NumPy returns a real array when every root is real; a
  derivative needs one dtype), in ``np.roots``'s order, under ``vmap`` too.
  **Multiple roots (the tie rule).** At an m-fold root the roots are not differentiable
  (they move like ``dp^(1/m)``), and NumPy does not return it m times: rounding splits it
  by about ``eps^(1/m)`` (a double root by ~1e-8), where ``1 / p'(r)`` would give a finite
  derivative of ~1e7 that means nothing. So roots are grouped into clusters (numerical
  multiple roots: a group whose radius is within ``CLUSTER_RADIUS_FACTOR`` times the
  radius that rounding of the coefficients produces around an m-fold root), and every root
  of a cluster has a NaN derivative, in both engines and at every order: its tangent is NaN
  for any nonzero ``dp``, and a nonzero cotangent on it makes the cotangent of every
  coefficient NaN. The NaN is a product with the coefficients, so Hessians, ``hvp`` and the
  nested Jacobians are NaN too (never the zero derivative of a constant NaN). The other
  roots keep their exact derivatives. Functions symmetric in a cluster's roots (their sum,
  product: what the coefficients determine smoothly) are NaN as well through ``roots``: a
  derivative through the individual roots cannot give them (IEEE arithmetic cannot cancel
  NaN, and the finite split derivatives lose about half the digits); compute them from the
  coefficients instead (the sum of all roots is ``-p[1] / p[0]``, and ``poly`` of roots is
  the coefficients).
- ``poly``: the coefficients of the monic polynomial with the given roots (or the
  characteristic polynomial of a square matrix, through ``eigvals``), as ``np.poly``:
  repeated multiplication by ``(x - r_k)``, differentiable in the roots; real when the
  roots come in conjugate pairs (read from the concrete values, as NumPy does; a
  ``vmap``-batched complex input stays complex).
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
must then be nonzero) and its trailing zeros give roots at 0 after the others, per
polynomial, as ``np.roots`` does.
"""

import warnings

import numpy as np

from ..core.concrete import concrete_value, holds_tracer
from ..core.primitive import Primitive
from ..core.zeros import as_array, dtype_of, shape_of
from . import complex as cx
from . import elementwise as ew
from . import reductions as red
from . import shape as sh
from .array_diagonals import trace
from .control import stop_gradient_p
from .creation import vander
from .decompositions import inv, lstsq
from .eigen import eigvals
from .families import real_cotangent, times
from .indexing import getitem
from .linalg import matmul
from .ufuncs import reciprocal_p

__all__ = ["roots", "poly", "polyfit", "polydiv"]


# --- roots ---------------------------------------------------------------------------------

# A group of m >= 2 computed roots is a numerical multiple root ("cluster") when its radius
# around its centre c is within CLUSTER_RADIUS_FACTOR times the radius that rounding the
# coefficients alone (relative eps) produces around an m-fold root at c:
#     rho^m |p_0| prod_{j not in the group} |c - r_j| <= (K^m) eps sum_k |p_k| |c|^(n-k).
# NumPy (LAPACK on the companion matrix) splits an m-fold root by about eps^(1/m) times
# this conditioning: a factor of at most 2.5 in 20000 random well-scaled polynomials with
# double to quadruple roots, up to 43 when the roots span twelve decades. A factor of 8
# catches the split of every polynomial whose roots span up to about six decades, and
# flags genuinely distinct roots only closer than about 2e-5 relative (well scaled), where
# their computed values are themselves uncertain to a part in 1e5 or so.
CLUSTER_RADIUS_FACTOR = 8.0


def _cluster_accepted(p, r, members, eps):
    """Whether the roots ``r[members]`` of ``p`` (1-D) form a numerical multiple root."""
    m, n = len(members), len(p) - 1
    centre = r[members].mean()
    radius = np.max(np.abs(r[members] - centre))
    if radius == 0:
        return True   # an exact tie (NumPy's appended zeros, or equal eigenvalues)
    others = np.delete(r, members)
    separation = abs(p[0]) * np.prod(np.abs(centre - others))
    rounding = eps * np.sum(np.abs(p) * np.abs(centre) ** np.arange(n, -1, -1))
    return bool(radius ** m * separation <= CLUSTER_RADIUS_FACTOR ** m * rounding)


def _cluster_labels_1d(p, r):
    """Cluster labels (n,) of the roots ``r`` of one polynomial ``p`` (n + 1,): roots in one
    numerical multiple root share a label; every other root has a label of its own. Each
    root is tried with its m - 1 nearest neighbours for every m; accepted groups that
    overlap are merged."""
    n = len(r)
    labels = np.arange(n)
    if n < 2 or not np.all(np.isfinite(r)):
        return labels
    eps = float(np.finfo(np.result_type(p.dtype, np.float32)).eps)
    order = np.argsort(np.abs(r[:, None] - r[None, :]), axis=1, kind="stable")

    def root_of(i):
        while labels[i] != i:
            i = labels[i]
        return i

    for i in range(n):
        for m in range(2, n + 1):
            members = order[i, :m]
            if _cluster_accepted(p, r, members, eps):
                for j in members[1:]:
                    labels[root_of(j)] = root_of(i)
    return np.array([root_of(i) for i in range(n)])


def _in_cluster_impl(p, r):
    """``(..., n)`` booleans: root ``r[..., i]`` of ``p[..., :]`` lies in a cluster (see
    ``_cluster_labels_1d``)."""
    p, r = np.asarray(p), np.asarray(r)
    out = np.zeros(r.shape, bool)
    for index in np.ndindex(r.shape[:-1]):
        labels = _cluster_labels_1d(p[index], r[index])
        out[index] = np.bincount(labels, minlength=len(labels))[labels] > 1
    return out


def _in_cluster_batch(axis_size, values, batch_axes):
    p, r = (sh.moveaxis(v, ax, 0) if ax is not None else sh.broadcast_to(
        v, (axis_size,) + shape_of(v)) for v, ax in zip(values, batch_axes))
    return in_cluster_p(p, r), 0


in_cluster_p = Primitive("polyroot_clusters", _in_cluster_impl, batch=_in_cluster_batch,
                         nondiff=True)


def _trailing_zero_count(p):
    """For each polynomial of ``p`` (..., m), the number of its trailing zero coefficients
    (``m`` for an all-zero one)."""
    nonzero = p[..., ::-1] != 0
    return np.where(nonzero.any(axis=-1), np.argmax(nonzero, axis=-1), p.shape[-1])


def _companion_roots(p, out_dtype):
    """Eigenvalues of the companion matrices of ``p`` (k, n + 1), leading entries nonzero."""
    n = p.shape[-1] - 1
    if n < 1:
        return np.zeros(p.shape[:-1] + (0,), out_dtype)
    companion = np.zeros(p.shape[:-1] + (n, n), np.result_type(p.dtype, np.float32))
    companion[..., 0, :] = -p[..., 1:] / p[..., :1]
    below = np.arange(n - 1)
    companion[..., below + 1, below] = 1
    return np.linalg.eigvals(companion).astype(out_dtype)


def _roots_impl(p):
    """The roots of each polynomial along the last axis of ``p`` (..., n + 1), leading
    coefficient nonzero, always complex, in ``np.roots``'s order for each polynomial: the
    eigenvalues of the companion matrix of the polynomial without its trailing zero
    coefficients, then one 0 per trailing zero. Polynomials of a stack with the same number
    of trailing zeros are solved together."""
    p = np.asarray(p)
    out_dtype = np.result_type(p.dtype, np.complex64)
    flat = p.reshape(-1, p.shape[-1])
    found = np.zeros((flat.shape[0], p.shape[-1] - 1), out_dtype)
    trailing = _trailing_zero_count(flat)
    for count in np.unique(trailing):
        rows = np.flatnonzero(trailing == count)
        kept = flat[rows, :max(p.shape[-1] - count, 1)]
        found[rows, :kept.shape[-1] - 1] = _companion_roots(kept, out_dtype)
    return found.reshape(p.shape[:-1] + (p.shape[-1] - 1,))


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


def _slope_at_roots(p, r, clustered):
    """p'(r) for each root (Horner on the derivative's coefficients); 1 at clustered roots,
    whose derivative is not this formula's (so no infinity enters a discarded branch)."""
    n = shape_of(p)[-1] - 1
    derivative = getitem(p, (Ellipsis, slice(0, n))) * np.arange(n, 0, -1).astype(
        np.result_type(dtype_of(p), np.float32))
    return ew.where_p(clustered, 1.0, _horner(derivative, r))


def _nan_of(p):
    """NaN (..., 1) for each polynomial of ``p``, made as a product of ``p`` (shifted off
    zero) with NaN so that its tangent and cotangent are NaN in every coefficient. The
    shift matters: the 0 x inf rule makes a zero coefficient's product 0 with derivative 0,
    which would hide the unknown second derivatives along that coefficient."""
    nonzero = ew.where_p(p == 0, p + 1.0, p)   # same tangent as p, no zero entry
    return red.sum(times(nonzero, np.full(shape_of(p)[-1:], np.nan, dtype_of(p))), axis=-1,
                   keepdims=True)


def _unknown(x, p):
    """NaN (..., 1) where some entry of ``x`` (..., k) is nonzero, else 0: the derivative
    the tie rule leaves unknown. A product with ``_nan_of(p)`` (the 0 x inf rule gives 0
    for a zero ``x``), so that it stays NaN at every order and in every route: its
    tangents and cotangents are NaN, never those of a constant."""
    return red.sum(times(x, _nan_of(p)), axis=-1, keepdims=True)


def _roots_jvp(primals, tangents):
    (p,), (dp,) = primals, tangents
    r = roots_p(p)
    clustered = in_cluster_p(p, r)
    # dr = -dp(r) / p'(r) at a simple root; a root of a cluster (a multiple root that
    # NumPy split by rounding) has no derivative: NaN for every tangent that moves p
    simple = times(-_horner(dp, r), reciprocal_p(_slope_at_roots(p, r, clustered)))
    # NaN in both the real and the imaginary part of the complex roots
    unknown = _unknown(dp, p) * np.asarray(1 + 1j, dtype_of(r))
    return r, ew.where_p(clustered, sh.broadcast_to(unknown, shape_of(r)), simple)


def _roots_vjp(ct, r, p):
    clustered = in_cluster_p(p, r)
    simple_ct = ew.where_p(clustered, 0.0, ct)
    weights = times(-simple_ct, reciprocal_p(_slope_at_roots(p, r, clustered)))
    # ct_p[k] = sum_i weights_i r_i^(n-k) over the simple roots
    n = shape_of(p)[-1] - 1
    columns, power = [], None
    for _ in range(n + 1):
        term = weights if power is None else times(weights, power)
        columns.append(red.sum(term, axis=-1, keepdims=True))
        power = r if power is None else power * r
    ct_p = sh.concatenate(columns[::-1], axis=-1)
    # a nonzero cotangent on a clustered root makes every coefficient's cotangent NaN
    ct_p = ct_p + _unknown(ew.where_p(clustered, ct, 0.0), p)
    return real_cotangent(ct_p, p)


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
    ``np.roots``: complex on traced values, differentiable in ``p`` at simple roots; the
    roots of a numerical multiple root (a cluster) have NaN derivatives (the module
    docstring has the rule)."""
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


# --- poly -----------------------------------------------------------------------------------


def _conjugate_pairs(values):
    """NumPy's test for a real ``poly``: the sorted roots equal their sorted conjugates."""
    values = np.asarray(values)
    return bool(np.all(np.sort(values) == np.sort(values.conjugate())))


def poly(seq_of_zeros):
    """The coefficients (highest power first, leading 1) of the polynomial whose roots are
    ``seq_of_zeros`` (1-D), or the characteristic polynomial of a square matrix, as
    ``np.poly``. Differentiable in the roots: each factor ``(x - r)`` multiplies the
    coefficients so far, ``a <- [a, 0] - r [0, a]``. Of a matrix: the value is NumPy's
    (through the eigenvalues), the derivative that of the coefficients as the polynomials
    in the entries they are (``_characteristic``), exact also where eigenvalues repeat or
    the matrix is defective, where the eigenvalues' own derivatives are NaN or huge."""
    if not holds_tracer(seq_of_zeros):
        return np.poly(seq_of_zeros)
    zeros = as_array(seq_of_zeros)
    dims = shape_of(zeros)
    if len(dims) == 2 and dims[0] == dims[1] and dims[0] != 0:
        smooth = _characteristic(zeros)
        # a real matrix has a real characteristic polynomial (its eigenvalues come in exact
        # conjugate pairs): real without reading values, so under vmap too
        value = _from_roots(eigvals(stop_gradient_p(zeros)),
                            real=dtype_of(zeros).kind != "c")
        return smooth + stop_gradient_p(value - smooth)
    if len(dims) == 0 or 0 in dims:   # NumPy: a scalar or an empty sequence gives 1.0
        return np.ones((), np.result_type(dtype_of(zeros), np.float64))[()] * 1.0
    if len(dims) != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    return _from_roots(zeros, real=False)


def _characteristic(a):
    """The characteristic polynomial ``det(x I - a)`` of the square matrix ``a`` (n, n),
    coefficients highest power first, by the Faddeev-LeVerrier recurrence
    (``M_1 = I``, ``c_k = -tr(a M_k) / k``, ``M_(k+1) = a M_k + c_k I``): products and
    traces only, so its derivatives at every order are those of polynomials in the
    entries."""
    n = shape_of(a)[0]
    dtype = np.result_type(dtype_of(a), np.float64)
    eye = np.eye(n, dtype=dtype)
    coefficients, m, previous = [np.ones(1, dtype)], None, 1.0
    for k in range(1, n + 1):
        m = eye if m is None else matmul(a, m) + eye * previous
        previous = -trace(matmul(a, m)) / k
        coefficients.append(sh.reshape(previous, (1,)))
    return sh.concatenate(coefficients)


def _from_roots(zeros, real):
    """The coefficients of the monic polynomial with the roots ``zeros`` (k,), real (the
    real part) when ``real`` or when the concrete roots come in conjugate pairs."""
    if dtype_of(zeros).kind not in "fc":
        zeros = ew.astype(zeros, np.float64)
    dtype = dtype_of(zeros)
    coefficients = np.ones(1, dtype)
    for k in range(shape_of(zeros)[0]):
        root = getitem(zeros, slice(k, k + 1))
        coefficients = (sh.concatenate([coefficients, np.zeros(1, dtype)])
                        - root * sh.concatenate([np.zeros(1, dtype), coefficients]))
    if dtype.kind == "c":
        values = None if real else concrete_value(zeros)
        if real or (values is not None and _conjugate_pairs(values)):
            coefficients = cx.real(coefficients)
    return coefficients


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
