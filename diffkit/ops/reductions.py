"""Reductions over axes: sum, prod, max/min, logsumexp, argmax/argmin, and ``unbroadcast``;
cumulative sums and products (and the linear recurrence behind the latter's derivatives).

Axis parameters reach the primitives already normalised by ``diffkit.numpy``: ``axis`` is a
tuple of non-negative ints (all axes for ``None``), so batching only shifts each by one.

The NumPy-shaped wrappers take NumPy's keywords. ``dtype`` casts the entries first; ``where``
replaces masked-out entries by the reduction's identity (by ``initial`` for ``max``/``min``,
which have none) with ``where``, so they get derivative 0 through rules that already exist,
in every engine and under vmap; ``initial`` is combined last. A plain call binds the
primitive directly. ``out=`` is refused: a traced result cannot be written into a buffer.
"""

import math
import warnings

import numpy as np

from ..core.concrete import concrete_test, underlying
from ..core.primitive import Primitive, Traits
from ..core.trace import Tracer
from ..core.zeros import add_tangents, as_array, dtype_of, shape_of
from ..errors import UnsupportedKeywordError
from . import elementwise as ew
from . import shape
from . import sparsity_rules as sr
from . import taylor_arithmetic as ta
from .indexing import getitem


def _shift(axis):
    return tuple(a + 1 for a in axis)


def expand_reduced(ct, in_shape, axis, keepdims):
    """Broadcast ``ct``, shaped like a reduction's output, back to the input shape."""
    if not keepdims:
        kept = tuple(1 if i in axis else d for i, d in enumerate(in_shape))
        if kept != shape_of(ct):
            ct = shape.reshape_p(ct, shape=kept)
    return shape.broadcast_to_p(ct, shape=in_shape) if shape_of(ct) != in_shape else ct


def unbroadcast(x, target_shape):
    """Sum ``x`` over the axes that broadcasting added to reach ``target_shape``.

    The adjoint of broadcasting, used by every broadcasting binary rule.
    """
    x_shape = shape_of(x)
    if x_shape == target_shape:
        return x
    lead = len(x_shape) - len(target_shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, d in enumerate(target_shape) if d == 1 and x_shape[lead + i] != 1)
    if axes:
        x = sum_p(x, axis=axes, keepdims=False)
    return shape.reshape_p(x, shape=target_shape) if shape_of(x) != target_shape else x


# --- sum: linear ------------------------------------------------------------------------

sum_p = Primitive(
    "sum",
    lambda x, axis, keepdims: np.add.reduce(x, axis=axis, keepdims=keepdims),
    lambda primals, tangents, axis, keepdims: (
        sum_p(primals[0], axis=axis, keepdims=keepdims),
        sum_p(tangents[0], axis=axis, keepdims=keepdims)),
    (lambda ct, out, x, axis, keepdims: expand_reduced(ct, shape_of(x), axis, keepdims),),
    lambda axis_size, values, batch_axes, axis, keepdims: (
        sum_p(values[0], axis=_shift(axis), keepdims=keepdims), 0),
    vjp_ignores=(0, "out"),
    sparsity=sr.reduction_sparsity(),
    traits=Traits(curvature="linear"),
)
sum_p.jet = ta.linear(sum_p)

# --- cumulative sums: linear, the adjoint runs the other way ---------------------------------


def _cumsum_impl(x, axis, reverse):
    if reverse:
        return np.flip(np.cumsum(np.flip(x, axis), axis), axis)
    return np.cumsum(x, axis)


cumsum_p = Primitive(
    "cumsum", _cumsum_impl,
    lambda primals, tangents, axis, reverse: (
        cumsum_p(primals[0], axis=axis, reverse=reverse),
        cumsum_p(tangents[0], axis=axis, reverse=reverse)),
    (lambda ct, out, x, axis, reverse: cumsum_p(ct, axis=axis, reverse=not reverse),),
    lambda axis_size, values, batch_axes, axis, reverse: (
        cumsum_p(values[0], axis=axis + 1, reverse=reverse), 0),
    vjp_ignores=(0, "out"),
    traits=Traits(curvature="linear"),
)
cumsum_p.sparsity = sr.cumulative_sparsity
cumsum_p.jet = ta.linear(cumsum_p)


def _shifted(x, axis, toward_end, fill):
    """``x`` moved one place along ``axis`` (toward its end, or its start), with ``fill``
    entering at the vacated end and the last (or first) entry dropped."""
    dims = shape_of(x)
    n = dims[axis]
    if n == 0:
        return x
    edge = np.full(dims[:axis] + (1,) + dims[axis + 1:], fill, dtype_of(x))
    if n == 1:
        return edge
    lead = (slice(None),) * axis
    if toward_end:
        return shape.concatenate_p(edge, getitem(x, lead + (slice(0, n - 1),)), axis=axis)
    return shape.concatenate_p(getitem(x, lead + (slice(1, n),)), edge, axis=axis)


# --- linear recurrences: the derivatives of cumulative products ----------------------------
# recurrence(a, b)[k] = a[k] * u[k - 1] + b[k] with u[-1] = 0 (running toward the end), or
# a[k] * u[k + 1] + b[k] with u[n] = 0 (reverse=True), along ``axis``. The tangent of a
# cumulative product is such a recurrence; so are the recurrence's own derivatives (in b it
# is linear, with the adjoint running the other way; in a it is driven by the shifted output),
# so derivatives of every order stay exact where entries are zero: nothing is divided.


def _zero_safe_product(x, y):
    """``x * y`` with 0 where a factor is 0 (the 0 x inf rule of the derivative products: an
    infinite entry times a zero tangent, or a zero entry times an infinite one, adds 0)."""
    product = x * y
    if product.size and np.isnan(np.max(product)):
        product[(x == 0) | (y == 0)] = 0.0
    return product


def _recurrence_impl(a, b, axis, reverse):
    dtype = np.result_type(a, b)
    a = np.moveaxis(np.array(a, dtype), axis, -1)  # copies: both are updated in place
    u = np.moveaxis(np.array(b, dtype), axis, -1)
    if reverse:
        a, u = a[..., ::-1], u[..., ::-1]
    n = u.shape[-1]
    step = 1
    while step < n:  # Hillis-Steele doubling: log2(n) vectorised passes
        u[..., step:] += _zero_safe_product(a[..., step:], u[..., :-step])
        if 2 * step < n:
            a[..., step:] = _zero_safe_product(a[..., step:], a[..., :-step])
        step *= 2
    if reverse:
        u = u[..., ::-1]
    return np.ascontiguousarray(np.moveaxis(u, -1, axis))


def _recurrence_jvp(primals, tangents, axis, reverse):
    a, b = primals
    out = recurrence_p(a, b, axis=axis, reverse=reverse)

    def drive(i, t):  # u_k = a_k u_(k-1) + b_k: da_k u_(k-1) + db_k drives the tangent
        return _times_partials(t, _shifted(out, axis, not reverse, 0.0)) if i == 0 else t

    return out, recurrence_p(a, add_tangents(tangents, drive), axis=axis, reverse=reverse)


def _recurrence_adjoint(ct, a, axis, reverse):
    """The cotangent of ``b``: the recurrence transposed, run the other way."""
    return recurrence_p(_shifted(a, axis, reverse, 0.0), ct, axis=axis, reverse=not reverse)


def _recurrence_batch(axis_size, values, batch_axes, axis, reverse):
    a, b = (v if ax is not None else shape.broadcast_to(v, (axis_size,) + shape_of(v))
            for v, ax in zip(values, batch_axes))
    return recurrence_p(a, b, axis=axis + 1, reverse=reverse), 0


recurrence_p = Primitive(
    "linear_recurrence", _recurrence_impl, _recurrence_jvp,
    (lambda ct, out, a, b, axis, reverse: _times_partials(
        _recurrence_adjoint(ct, a, axis, reverse), _shifted(out, axis, not reverse, 0.0)),
     lambda ct, out, a, b, axis, reverse: _recurrence_adjoint(ct, a, axis, reverse)),
    _recurrence_batch, vjp_ignores=(1,), vjp_reads=(frozenset({0, "out"}), frozenset({0})),
)
# (each entry of a recurrence depends on its whole line: a bound, its past would be exact)
recurrence_p.sparsity = sr.along_axes_sparsity(lambda params: params["axis"])

# --- cumulative products ------------------------------------------------------------------
# d out[k] / d x[j] = (product of x before j) * (product of x[j+1..k]) for j <= k: the
# exclusive product times a recurrence, never out[k] / x[j], so zeros are handled exactly.


def _cumprod_impl(x, axis, reverse):
    if reverse:
        return np.flip(np.cumprod(np.flip(x, axis), axis), axis)
    return np.cumprod(x, axis)


def _cumprod_jvp(primals, tangents, axis, reverse):
    (x,), (t,) = primals, tangents
    out = cumprod_p(x, axis=axis, reverse=reverse)
    exclusive = _shifted(out, axis, not reverse, 1.0)
    return out, recurrence_p(x, _times_partials(t, exclusive), axis=axis, reverse=reverse)


def _cumprod_vjp(ct, out, x, axis, reverse):
    return _times_partials(_recurrence_adjoint(ct, x, axis, reverse),
                           _shifted(out, axis, not reverse, 1.0))


cumprod_p = Primitive(
    "cumprod", _cumprod_impl, _cumprod_jvp, (_cumprod_vjp,),
    lambda axis_size, values, batch_axes, axis, reverse: (
        cumprod_p(values[0], axis=axis + 1, reverse=reverse), 0),
    sparsity=sr.cumulative_sparsity,
)

# --- prod ------------------------------------------------------------------------------
# d prod / d x_i is the product of the other entries: the exclusive cumulative product from
# the left times the one from the right, exact where entries are zero (and to every order,
# since cumprod's own rules divide by nothing). For a concrete input without zeros (a first
# derivative, not itself differentiated) prod / x_i is the same number, cheaper.


def _prod_others(x, axis):
    if not isinstance(x, Tracer):
        with np.errstate(all="ignore"):
            if np.all(np.isfinite(x) & (x != 0)):
                return expand_reduced(np.prod(x, axis=axis, keepdims=True), shape_of(x),
                                      axis, True) / x
    dims = shape_of(x)
    kept = [i for i in range(len(dims)) if i not in axis]
    perm = kept + list(axis)
    inner = tuple(dims[i] for i in perm)
    last = len(kept)
    y = shape.reshape(shape.transpose(x, perm), inner[:last] + (math.prod(inner[last:]),))
    left = _shifted(cumprod_p(y, axis=last, reverse=False), last, True, 1.0)
    right = _shifted(cumprod_p(y, axis=last, reverse=True), last, False, 1.0)
    others = shape.reshape(left * right, inner)
    return shape.transpose(others, [int(i) for i in np.argsort(perm)])


def _times_partials(t, partials):
    """``t * partials`` under the 0 x inf rule (docs/conventions.md): 0 wherever either factor
    is 0, so that an infinite tangent of an entry that does not move the result (a product
    with a zero entry, a maximum it does not reach) contributes nothing rather than NaN, and
    jacfwd and jacrev agree. (``families.times`` for the reductions, which sit below it.)"""
    product = t * partials
    if type(product) is np.ndarray and not np.isnan(product).any():
        return product
    return ew.where_p(ew.zero_factor_nan(product, t, partials), 0.0, product)


def _prod_jvp(primals, tangents, axis, keepdims):
    (x,), (t,) = primals, tangents
    tangent = sum_p(_times_partials(t, _prod_others(x, axis)), axis=axis, keepdims=keepdims)
    return prod_p(x, axis=axis, keepdims=keepdims), tangent


def _prod_vjp(ct, out, x, axis, keepdims):
    return _times_partials(expand_reduced(ct, shape_of(x), axis, keepdims),
                           _prod_others(x, axis))


prod_p = Primitive(
    "prod",
    lambda x, axis, keepdims: np.prod(x, axis=axis, keepdims=keepdims),
    _prod_jvp, (_prod_vjp,),
    lambda axis_size, values, batch_axes, axis, keepdims: (
        prod_p(values[0], axis=_shift(axis), keepdims=keepdims), 0),
    vjp_ignores=("out",),
    sparsity=sr.reduction_sparsity(),
)

# --- max and min: the derivative is shared equally among tied maxima ----------------------


def _argext_weights(x, out, axis, keepdims):
    hits = ew.astype(ew.equal_p(x, expand_reduced(out, shape_of(x), axis, keepdims)),
                     dtype_of(x))
    return hits / sum_p(hits, axis=axis, keepdims=True)


def _extremum(name, impl):
    def jvp(primals, tangents, axis, keepdims):
        (x,), (t,) = primals, tangents
        out = prim(x, axis=axis, keepdims=keepdims)
        weights = _argext_weights(x, out, axis, keepdims)
        return out, sum_p(_times_partials(t, weights), axis=axis, keepdims=keepdims)

    def vjp(ct, out, x, axis, keepdims):
        weights = _argext_weights(x, out, axis, keepdims)
        return _times_partials(expand_reduced(ct, shape_of(x), axis, keepdims), weights)

    def batch(axis_size, values, batch_axes, axis, keepdims):
        return prim(values[0], axis=_shift(axis), keepdims=keepdims), 0

    def maxima(x, out, axis, keepdims):   # local structure: the entries that reach out
        x, out = np.asarray(underlying(x)), np.asarray(underlying(out))
        return x == (out if keepdims else np.expand_dims(out, axis if axis is not None
                                                          else tuple(range(x.ndim))))

    prim = Primitive(name, lambda x, axis, keepdims: impl(x, axis=axis, keepdims=keepdims),
                     jvp, (vjp,), batch, sparsity=sr.reduction_sparsity(maxima))
    return prim


max_p = _extremum("max", np.max)
min_p = _extremum("min", np.min)

# --- logsumexp: stable, and its derivative is the softmax --------------------------------


def _logsumexp_impl(x, axis, keepdims):
    peak = np.max(x, axis=axis, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0)
    total = np.sum(np.exp(x - peak), axis=axis, keepdims=True)
    out = np.log(total) + peak
    return out if keepdims else np.squeeze(out, axis=axis)


def _all_finite(value):
    return bool(np.isfinite(value).all())


def _softmax_weights(x, out, axis, keepdims):
    """``exp(x - out)``, the softmax; where ``out`` is infinite (every entry -inf, or some
    +inf) the limit along the diagonal instead: shared equally among the entries equal to
    ``out``, as ``logaddexp`` shares equal infinities and ``max`` ties."""
    peak = expand_reduced(out, shape_of(x), axis, keepdims)
    # a branch on the values (a recording trace, jit, keeps it as a guard): the limit is
    # computed only where it is needed, and its 0/0 never runs on finite values
    if concrete_test(out, _all_finite):
        return ew.exp_p(x - peak)
    finite = ew.isfinite_p(peak)
    smooth = ew.exp_p(ew.where_p(finite, x, 0.0) - ew.where_p(finite, peak, 0.0))
    return ew.where_p(finite, smooth, _argext_weights(x, out, axis, keepdims))


def _logsumexp_jvp(primals, tangents, axis, keepdims):
    (x,), (t,) = primals, tangents
    out = logsumexp_p(x, axis=axis, keepdims=keepdims)
    weights = _softmax_weights(x, out, axis, keepdims)
    return out, sum_p(t * weights, axis=axis, keepdims=keepdims)


logsumexp_p = Primitive(
    "logsumexp", _logsumexp_impl, _logsumexp_jvp,
    (lambda ct, out, x, axis, keepdims: expand_reduced(ct, shape_of(x), axis, keepdims)
     * _softmax_weights(x, out, axis, keepdims),),
    lambda axis_size, values, batch_axes, axis, keepdims: (
        logsumexp_p(values[0], axis=_shift(axis), keepdims=keepdims), 0),
    sparsity=sr.reduction_sparsity(),
)

# --- argmax and argmin: integer results, no derivative ------------------------------------


def _arg_extremum(name, impl):
    def batch(axis_size, values, batch_axes, axis, keepdims):
        (x,) = values
        if axis is None:
            dims = shape_of(x)
            flat = shape.reshape(x, (dims[0], math.prod(dims[1:])))
            out = prim(flat, axis=1, keepdims=False)
            if keepdims:
                out = shape.reshape(out, (dims[0],) + (1,) * (len(dims) - 1))
            return out, 0
        return prim(x, axis=axis + 1, keepdims=keepdims), 0

    prim = Primitive(name, lambda x, axis, keepdims: impl(x, axis=axis, keepdims=keepdims),
                     batch=batch, nondiff=True)
    return prim


argmax_p = _arg_extremum("argmax", np.argmax)
argmin_p = _arg_extremum("argmin", np.argmin)


# --- NumPy-shaped wrappers ----------------------------------------------------------------


def normalize_axes(axis, ndim):
    """``axis`` (None, int or tuple) as a sorted tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    normalized = tuple(sorted(shape._normalize_axis(a, ndim) for a in axes))
    if len(set(normalized)) != len(normalized):
        raise ValueError(f"duplicate value in 'axis': {axis}")
    return normalized


_NO_VALUE = np._NoValue
_SEQUENCES = (list, tuple)  # array-likes that need np.asarray (no shape attribute)


def _flag(keepdims):
    return False if keepdims is _NO_VALUE else bool(keepdims)


def no_out(name, out):
    """``out=`` names a buffer to write into in place, which a traced result cannot be.
    ``name`` is the function's name under ``diffkit.numpy`` (``"fft.rfft"`` for submodules)."""
    if out is not None:
        raise UnsupportedKeywordError(
            f"diffkit.numpy.{name} does not support out=: it returns a new array (writing into "
            f"a buffer in place would lose the derivative). Use the returned value instead: "
            f"y = dnp.{name}(x, ...) without out=.")


def _masking(where):
    """Whether ``where`` masks entries (NumPy's default ``True`` keeps them all)."""
    return where is not True and where is not _NO_VALUE


def where_mask(where, dims):
    """``where`` as a boolean mask of shape ``dims``: NumPy casts it to bool and broadcasts it
    against the input (a traced mask, e.g. ``t > 0``, stays traced so vmap batches it)."""
    if isinstance(where, Tracer):
        mask = where if dtype_of(where) == np.bool_ else ew.astype(where, np.bool_)
        return shape.broadcast_to(mask, dims)
    return np.broadcast_to(np.asarray(where).astype(bool, copy=False), dims)


def scalar_initial(initial, dtype):
    """``initial`` (a scalar, possibly traced) cast to ``dtype``, as NumPy casts it."""
    if isinstance(initial, Tracer):
        if shape_of(initial) != ():
            raise ValueError(f"initial must be a scalar, got a traced value of shape "
                             f"{shape_of(initial)}")
        return ew.astype(initial, dtype)
    value = np.asarray(initial)
    if value.ndim:
        raise ValueError(f"initial must be a scalar, got an array of shape {value.shape}")
    with np.errstate(invalid="ignore"):
        return value.astype(dtype)


def _accumulate(name, prim, identity, combine, a, axis, dtype, out, keepdims, initial, where):
    """``sum``/``prod`` with NumPy's keywords: entries cast to ``dtype`` first, masked
    entries replaced by the ``identity`` (so their derivative is 0), ``initial`` combined
    last; the result has NumPy's dtype (small integers and booleans are upcast)."""
    no_out(name, out)
    x = as_array(a)
    target = getattr(np, name)(np.zeros(1, dtype_of(x)), dtype=dtype).dtype
    if dtype is not None:
        x = ew.astype(x, dtype)
    dims = shape_of(x)
    if _masking(where):
        x = ew.where_p(where_mask(where, dims), x, np.asarray(identity, dtype_of(x)))
    result = prim(x, axis=normalize_axes(axis, len(dims)), keepdims=_flag(keepdims))
    result = ew.astype(result, target)  # e.g. back to int8 for dtype=np.int8 (wraps alike)
    if initial is not _NO_VALUE:
        result = combine(result, scalar_initial(initial, target))
    return result


def sum(a, axis=None, dtype=None, out=None, keepdims=False,  # noqa: A001 (NumPy's name)
        initial=_NO_VALUE, where=True):
    """Sum over ``axis`` (all axes by default), as ``np.sum``: ``dtype`` casts the entries
    first, ``initial`` is added, entries where ``where`` is False are left out (derivative 0).
    ``out=`` is not supported (use the returned value)."""
    if dtype is None and out is None and initial is _NO_VALUE and where is True and \
            keepdims is not _NO_VALUE and not isinstance(a, _SEQUENCES):  # the common call
        return sum_p(a, axis=normalize_axes(axis, len(shape_of(a))), keepdims=bool(keepdims))
    return _accumulate("sum", sum_p, 0, ew.add, a, axis, dtype, out, keepdims, initial, where)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NO_VALUE, where=True):
    """Product over ``axis``, as ``np.prod``, with ``dtype``, ``initial`` (a factor) and
    ``where`` as in ``sum``. ``out=`` is not supported (use the returned value)."""
    if dtype is None and out is None and initial is _NO_VALUE and where is True and \
            keepdims is not _NO_VALUE and not isinstance(a, _SEQUENCES):
        return prod_p(a, axis=normalize_axes(axis, len(shape_of(a))), keepdims=bool(keepdims))
    return _accumulate("prod", prod_p, 1, ew.multiply, a, axis, dtype, out, keepdims,
                       initial, where)


def _extreme(name, prim, numpy_name, a, axis, out, keepdims, initial, where):
    """``max``/``min`` with ``initial`` (one more candidate) and ``where``: masked entries
    are replaced by ``initial``, so they get derivative 0, and a slice with no kept entry
    (or an empty axis) gives ``initial``. NumPy requires ``initial`` with any ``where``
    mask, since these reductions have no identity."""
    no_out(name, out)
    masking = _masking(where)
    if masking and initial is _NO_VALUE:
        raise ValueError(f"reduction operation '{numpy_name}' does not have an identity, so "
                         "to use a where mask one has to specify 'initial'")
    x = as_array(a)
    dims = shape_of(x)
    axes = normalize_axes(axis, len(dims))
    keepdims = _flag(keepdims)
    if initial is _NO_VALUE:
        return prim(x, axis=axes, keepdims=keepdims)
    start = scalar_initial(initial, dtype_of(x))
    if masking:
        x = ew.where_p(where_mask(where, dims), x, start)
    if math.prod(dims[i] for i in axes) == 0:  # nothing to compare: initial itself
        out_shape = tuple(1 if i in axes else d for i, d in enumerate(dims) if keepdims
                          or i not in axes)
        if isinstance(start, Tracer):
            return shape.broadcast_to(start, out_shape)
        return np.full(out_shape, start, dtype_of(x))
    pick = ew.maximum if prim is max_p else ew.minimum
    return pick(prim(x, axis=axes, keepdims=keepdims), start)


def max(a, axis=None, out=None, keepdims=False,  # noqa: A001 (NumPy's name)
        initial=_NO_VALUE, where=True):
    """Maximum over ``axis``, as ``np.max``; ties share the derivative. ``initial`` is one
    more candidate (required with ``where``, as in NumPy); masked entries get derivative 0.
    ``out=`` is not supported (use the returned value)."""
    if out is None and initial is _NO_VALUE and where is True and \
            keepdims is not _NO_VALUE and not isinstance(a, _SEQUENCES):
        return max_p(a, axis=normalize_axes(axis, len(shape_of(a))), keepdims=bool(keepdims))
    return _extreme("max", max_p, "maximum", a, axis, out, keepdims, initial, where)


def min(a, axis=None, out=None, keepdims=False,  # noqa: A001 (NumPy's name)
        initial=_NO_VALUE, where=True):
    """Minimum over ``axis``, as ``np.min``, with ``initial`` and ``where`` as in ``max``."""
    if out is None and initial is _NO_VALUE and where is True and \
            keepdims is not _NO_VALUE and not isinstance(a, _SEQUENCES):
        return min_p(a, axis=normalize_axes(axis, len(shape_of(a))), keepdims=bool(keepdims))
    return _extreme("min", min_p, "minimum", a, axis, out, keepdims, initial, where)


amax = max
amin = min


def logsumexp(x, axis=None, keepdims=False):
    """``log(sum(exp(x)))`` over ``axis``, computed stably."""
    return logsumexp_p(x, axis=normalize_axes(axis, len(shape_of(x))), keepdims=bool(keepdims))


def _mean_dtype(x, dtype):
    """The dtype ``np.mean`` accumulates in: ``dtype``, float64 for integers and booleans,
    float32 for float16 (whose result is float16 again), else the input's."""
    if dtype is not None:
        return np.dtype(dtype)
    kind = dtype_of(x)
    if kind.kind in "biu":
        return np.dtype(np.float64)
    return np.dtype(np.float32) if kind == np.float16 else kind


def _warn_empty_mean(count, stacklevel):
    """NumPy's warning when a concrete ``count`` of entries is 0 somewhere."""
    if not isinstance(count, Tracer) and np.any(count == 0):
        warnings.warn("Mean of empty slice.", RuntimeWarning, stacklevel=stacklevel + 1)


def _masked_mean(x, dims, axes, keepdims, where):
    """The mean of the entries kept by ``where``: their sum over their count (derivative 0
    for the others), NaN for a slice with none, as NumPy (which also warns)."""
    mask = where_mask(where, dims)
    real = np.zeros((), dtype_of(x)).real.dtype
    count_dtype = real if real.kind == "f" else np.dtype(np.float64)
    count = sum_p(ew.astype(mask, count_dtype), axis=axes, keepdims=keepdims)
    total = sum_p(ew.where_p(mask, x, np.zeros((), dtype_of(x))), axis=axes, keepdims=keepdims)
    empty = ew.equal_p(count, 0)
    _warn_empty_mean(count, 3)
    return ew.where_p(empty, np.nan, total / ew.maximum_p(count, 1.0))


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    """Arithmetic mean over ``axis``, as ``np.mean``: accumulated in ``dtype`` (float64 for
    integer input), over the entries kept by ``where`` (the others get derivative 0; a slice
    with none gives NaN). ``out=`` is not supported (use the returned value)."""
    kind = getattr(a, "dtype", None)
    if dtype is None and out is None and where is True and keepdims is not _NO_VALUE and \
            kind is not None and kind.kind in "fc" and kind != np.float16:
        axes = normalize_axes(axis, len(shape_of(a)))
        count = math.prod([shape_of(a)[i] for i in axes])
        return sum_p(a, axis=axes, keepdims=bool(keepdims)) / count
    no_out("mean", out)
    x = as_array(a)
    result_dtype = np.dtype(dtype) if dtype is not None else (
        dtype_of(x) if dtype_of(x) == np.float16 else _mean_dtype(x, None))
    x = ew.astype(x, _mean_dtype(x, dtype))
    dims = shape_of(x)
    axes = normalize_axes(axis, len(dims))
    keepdims = _flag(keepdims)
    if _masking(where):
        result = _masked_mean(x, dims, axes, keepdims, where)
    else:
        count = math.prod([dims[i] for i in axes])
        _warn_empty_mean(count, 2)
        with np.errstate(invalid="ignore", divide="ignore"):
            result = sum_p(x, axis=axes, keepdims=keepdims) / count
    with np.errstate(invalid="ignore"):
        return ew.astype(result, result_dtype)


def _arg_reducer(prim):
    def reduce(x, axis=None, keepdims=False):
        if axis is not None:
            axis = shape._normalize_axis(axis, len(shape_of(x)))
        return prim(x, axis=axis, keepdims=bool(keepdims))

    reduce.__name__ = prim.name
    reduce.__doc__ = f"Indices of the {prim.name[3:]}ima along ``axis``, as ``np.{prim.name}``."
    return reduce


argmax = _arg_reducer(argmax_p)
argmin = _arg_reducer(argmin_p)
