"""Building arrays from traced values, polynomials, and NumPy's non-differentiable helpers.

``array``/``asarray`` accept (nested) lists of traced values, which ``np.array`` cannot take
without dropping their derivatives. The polynomial helpers are compositions of existing
primitives. Functions whose results carry no derivative (predicates, index helpers, array
creation from shapes) work on the concrete values under every transformation.
"""

import operator

import numpy as np

from ..core.concrete import concrete_value, holds_tracer, static_value
from ..core.trace import Tracer
from ..core.zeros import as_array, dtype_of, shape_of
from . import array_products, reductions, shape, special, statistics, ufuncs
from . import complex as cx
from . import elementwise as ew
from . import shape as shape_mod  # ``shape`` is also a parameter name below
from .control import stop_gradient
from .indexing import getitem, read_entries, traced_items

__all__ = [
    "array", "asarray", "asanyarray", "full", "full_like", "zeros_like", "ones_like",
    "concat", "permute_dims", "matrix_transpose", "unstack",
    "vander", "polyadd", "polysub", "polymul", "polyder", "polyint", "unwrap", "resize",
    "all", "any", "count_nonzero", "nonzero", "flatnonzero", "argwhere", "isclose",
    "allclose", "array_equal", "empty_like", "tri", "tril_indices", "triu_indices",
    "diag_indices", "indices", "linspace", "geomspace", "logspace", "isposinf", "isneginf",
    "i0", "kaiser",
    "real_if_close", "trim_zeros",
]


def _leaves(obj, out):
    """The non-sequence entries of the nested lists/tuples ``obj``, in order."""
    if isinstance(obj, (list, tuple)):
        for o in obj:
            _leaves(o, out)
    else:
        out.append(obj)
    return out


def _nested_shape(obj):
    """The shape NumPy reads from nested lists ``obj`` whose leaves have shapes, or None
    when the nesting is ragged."""
    if not isinstance(obj, (list, tuple)):
        return shape_of(obj)
    shapes = {_nested_shape(o) for o in obj}
    if None in shapes or len(shapes) > 1:
        return None
    return (len(obj),) + (shapes.pop() if shapes else ())


def _build(obj, dtype):
    if isinstance(obj, (list, tuple)):
        if not obj:
            return np.zeros((0,), dtype)
        parts = [_build(o, dtype) for o in obj]
        if len(parts) == 1:
            return shape.expand_dims(parts[0], 0)
        return shape.stack(parts)
    if isinstance(obj, Tracer):
        return obj if dtype_of(obj) == dtype else ew.astype(obj, dtype)
    return np.asarray(obj, dtype)


def array_from_nested(obj, dtype=None):
    """(Nested) lists/tuples of traced values, arrays and numbers read as ``np.array`` reads
    them: one array of the nesting's shape and the leaves' common dtype (``dtype`` if given),
    built by stacking, so the traced entries keep their derivatives."""
    leaves = [as_array(leaf) for leaf in _leaves(obj, [])]
    if dtype is None:
        dtype = np.result_type(*[dtype_of(leaf) for leaf in leaves]) if leaves \
            else np.dtype(np.float64)
    if _nested_shape(obj) is None:
        raise ValueError(
            "setting an array element with a sequence: the nested lists have an "
            "inhomogeneous shape (entries of different lengths or shapes), which NumPy does "
            "not read as one array either; pad or split the entries to equal shapes")
    return _build(obj, np.dtype(dtype))


def as_array_like(obj):
    """An array-like argument as diffkit's functions take it: a list/tuple holding traced
    values becomes one traced array (``array_from_nested``); anything else is returned
    unchanged (plain lists are read by NumPy as before, and a ragged tuple such as
    ``(c, lower)`` is left to the function that takes it)."""
    if isinstance(obj, (list, tuple)) and holds_tracer(obj) \
            and _nested_shape(obj) is not None:
        return array_from_nested(obj)
    return obj


def array(obj, dtype=None, copy=True):
    """``np.array`` that also takes (nested lists of) traced values, stacking them; a traced
    value is returned as it is (traced values are immutable, so no copy is needed)."""
    if not holds_tracer(obj):
        return np.array(obj, dtype=dtype, copy=copy)
    return _cast(array_from_nested(obj, dtype), dtype)


def asarray(obj, dtype=None, *, device=None, copy=None):
    """``np.asarray`` (and the array API's ``asarray``); a traced value is returned as it is
    (converted to ``dtype``). ``device`` is ``None`` or ``"cpu"``. A traced value is never
    written in place, so ``copy=True`` needs no copy of it; ``copy=False`` refuses a dtype
    conversion, as NumPy does. Other array-likes (a pandas ``Series``, a ``range``) are read
    as NumPy reads them, also as entries of a list holding traced values."""
    if device not in (None, "cpu"):
        raise ValueError(f"asarray: diffkit computes on the CPU only, not on device={device!r}")
    items = traced_items(obj)   # a deque of traced values: the list of them
    obj = obj if items is None else items
    if not holds_tracer(obj):
        return np.asarray(obj, dtype=dtype, copy=copy)
    value = array_from_nested(read_entries(obj), None if copy is False else dtype)
    if copy is False and dtype is not None and dtype_of(value) != np.dtype(dtype):
        raise ValueError(f"asarray: a conversion to {np.dtype(dtype)} needs a copy, which "
                         "copy=False forbids")
    return _cast(value, dtype)


def _cast(x, dtype):
    if dtype is None or dtype_of(x) == np.dtype(dtype):
        return x
    return ew.astype(x, np.dtype(dtype))


asanyarray = asarray


def concat(arrays, axis=0):
    """NumPy 2's name for ``concatenate``."""
    return shape.concatenate(arrays, axis=axis)


def permute_dims(x, axes=None):
    """NumPy 2's name for ``transpose``."""
    return shape.transpose(x, axes)


def matrix_transpose(x):
    """Swap the last two axes."""
    if len(shape_of(x)) < 2:
        raise ValueError(f"matrix_transpose needs at least 2 dimensions, got shape {shape_of(x)}")
    return shape.swapaxes(x, -1, -2)


def unstack(x, axis=0):
    """The slices of ``x`` along ``axis``, as a tuple."""
    x = shape.moveaxis(x, axis, 0)
    return tuple(getitem(x, i) for i in range(shape_of(x)[0]))


def vander(x, N=None, increasing=False):  # noqa: N803 (NumPy's name)
    """The Vandermonde matrix of the 1-D ``x``: columns are powers of ``x``."""
    if len(shape_of(x)) != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    n = shape_of(x)[0] if N is None else int(N)
    powers = np.arange(n) if increasing else np.arange(n)[::-1]
    columns = [ew.power(x, int(p)) for p in powers]
    return shape.stack(columns, axis=1) if columns else np.zeros((shape_of(x)[0], 0))


def _poly_pad(p, length):
    missing = length - shape_of(p)[0]
    if missing <= 0:
        return p
    return shape.concatenate([np.zeros(missing, dtype_of(p)), p])


def polyadd(a1, a2):
    """Sum of two polynomials given by their coefficients, highest power first."""
    a1, a2 = asarray(a1), asarray(a2)
    length = max(shape_of(a1)[0], shape_of(a2)[0])
    return ew.add_p(_poly_pad(a1, length), _poly_pad(a2, length))


def polysub(a1, a2):
    """Difference of two polynomials, highest power first."""
    a1, a2 = asarray(a1), asarray(a2)
    length = max(shape_of(a1)[0], shape_of(a2)[0])
    return ew.subtract_p(_poly_pad(a1, length), _poly_pad(a2, length))


def polymul(a1, a2):
    """Product of two polynomials: the full convolution of their coefficients."""
    return array_products.convolve(asarray(a1), asarray(a2))


def polyder(p, m=1):
    """The ``m``-th derivative of the polynomial with coefficients ``p``."""
    p = asarray(p)
    for _ in range(int(m)):
        n = shape_of(p)[0] - 1
        if n <= 0:
            return np.zeros(1, dtype_of(p))
        p = ew.multiply_p(getitem(p, slice(0, n)), np.arange(n, 0, -1).astype(dtype_of(p)))
    return p


def polyint(p, m=1, k=None):
    """The ``m``-th antiderivative of ``p``, with integration constants ``k`` (default 0)."""
    p = asarray(p)
    constants = np.zeros(int(m)) if k is None else np.atleast_1d(k)
    if len(constants) == 1 and m > 1:
        constants = np.repeat(constants, int(m))
    for i in range(int(m)):
        n = shape_of(p)[0]
        scaled = ew.divide_p(p, np.arange(n, 0, -1).astype(np.result_type(dtype_of(p), float)))
        p = shape.concatenate([scaled, np.asarray([constants[i]], dtype_of(scaled))])
    return p


def unwrap(p, discont=None, axis=-1, period=2 * np.pi):
    """``p`` with jumps larger than ``discont`` unwrapped by multiples of ``period``, as
    ``np.unwrap``. The correction is piecewise constant, so the derivative is 1."""
    base = stop_gradient(p)
    jumps = statistics.diff(base, axis=axis)
    half = period / 2
    discont = half if discont is None else max(discont, half)
    wrapped = ew.subtract_p(ufuncs.remainder(ew.add_p(jumps, half), period), half)
    wrapped = ew.where_p(ew.logical_and_p(ew.equal_p(wrapped, -half), ew.greater_p(jumps, 0)),
                       half, wrapped)
    step = ew.where_p(ew.less_p(ew.abs_p(jumps), discont), 0.0, ew.subtract_p(wrapped, jumps))
    axis = axis % len(shape_of(p))
    first = np.zeros(tuple(1 if i == axis else d for i, d in enumerate(shape_of(p))),
                     dtype_of(step))
    return ew.add_p(p, shape.concatenate([first, statistics.cumsum(step, axis=axis)], axis=axis))


def resize(a, new_shape):
    """``np.resize``: ``a`` repeated (flattened) to fill ``new_shape``."""
    new_shape = (new_shape,) if isinstance(new_shape, (int, np.integer)) else tuple(new_shape)
    flat = shape.ravel(a)
    size, target = shape_of(flat)[0], int(np.prod(new_shape))
    if size == 0 or target == 0:
        return np.zeros(new_shape, dtype_of(a))
    return shape.reshape(getitem(flat, np.arange(target) % size), new_shape)


def _concrete(x):
    """The plain value under ``x`` for a function without derivative."""
    return static_value(x, lambda t: "this function needs concrete values, but got a value "
                                     "batched by vmap; it has no batching rule")


def _nondiff(fn):
    """``fn`` applied to concrete values: for results that carry no derivative."""
    def wrapper(*args, **kwargs):
        return fn(*[_concrete(a) for a in args], **kwargs)
    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = f"``np.{fn.__name__}`` (no derivative)."
    return wrapper


def _predicate_reduction(fn):
    """``all``/``any``/``count_nonzero``: no derivative, but batched under vmap."""
    def reduce(x, axis=None, keepdims=False):
        truth = ew.not_equal_p(x, 0)
        count = reductions.sum(ew.astype(truth, np.int64), axis=axis, keepdims=keepdims)
        return fn(count, shape_of(x), axis)
    return reduce


def _reduced_size(dims, axis):
    axes = reductions.normalize_axes(axis, len(dims))
    return int(np.prod([dims[a] for a in axes]))


all = _predicate_reduction(  # noqa: A001 (NumPy's name)
    lambda count, dims, axis: ew.equal_p(count, _reduced_size(dims, axis)))
any = _predicate_reduction(  # noqa: A001 (NumPy's name)
    lambda count, dims, axis: ew.greater_p(count, 0))
all.__doc__ = "True where every entry along ``axis`` is nonzero (no derivative)."
any.__doc__ = "True where some entry along ``axis`` is nonzero (no derivative)."


def count_nonzero(x, axis=None, keepdims=False):
    """How many entries along ``axis`` are nonzero (no derivative)."""
    truth = ew.astype(ew.not_equal_p(x, 0), np.int64)
    return reductions.sum(truth, axis=axis, keepdims=keepdims)


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``np.isclose`` (no derivative), batched under vmap."""
    close = ew.less_equal_p(ew.abs_p(ew.subtract_p(a, b)),
                            ew.add_p(atol, ew.multiply_p(rtol, ew.abs_p(b))))
    if equal_nan:
        close = ew.logical_or_p(close, ew.logical_and_p(ew.isnan_p(a), ew.isnan_p(b)))
    return close


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``np.allclose`` on the concrete values (a Python bool)."""
    return bool(np.allclose(_concrete(a), _concrete(b), rtol=rtol, atol=atol,
                            equal_nan=equal_nan))


def array_equal(a1, a2, equal_nan=False):
    """``np.array_equal`` on the concrete values (a Python bool)."""
    return bool(np.array_equal(_concrete(a1), _concrete(a2), equal_nan=equal_nan))


def _like_shape(a, shape):
    if shape is None:
        return shape_of(a)
    return (operator.index(shape),) if np.ndim(shape) == 0 else tuple(shape)


def empty_like(prototype, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """An uninitialised array shaped like ``prototype`` (plain, no derivative)."""
    return np.empty(_like_shape(prototype, shape), dtype or dtype_of(prototype))


def zeros_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """Zeros shaped like ``a`` (or ``shape``): a plain array with no derivative."""
    return np.zeros(_like_shape(a, shape), dtype or dtype_of(a))


def ones_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """Ones shaped like ``a`` (or ``shape``): a plain array with no derivative."""
    return np.ones(_like_shape(a, shape), dtype or dtype_of(a))


def full(shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    """An array of ``shape`` filled with ``fill_value`` (broadcast), as ``np.full``. A
    traced fill value gives a traced result, differentiable in it (as in JAX): the
    derivative of every entry is that of the fill value entry it was copied from."""
    if not holds_tracer(fill_value):
        extra = {} if like is None else {"like": like}
        return np.full(shape, fill_value, dtype, order, device=device, **extra)
    dims = (operator.index(shape),) if np.ndim(shape) == 0 else tuple(shape)
    return shape_mod.broadcast_to(asarray(fill_value, dtype), dims)


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """An array shaped like ``a`` (or ``shape``) filled with ``fill_value``, in ``a``'s dtype
    unless ``dtype`` is given, as ``np.full_like``. Differentiable in a traced fill value
    (never in ``a``, whose values are not used)."""
    dims, dtype = _like_shape(a, shape), np.dtype(dtype or dtype_of(a))
    if not holds_tracer(fill_value):
        return np.full(dims, fill_value, dtype)
    return shape_mod.broadcast_to(asarray(fill_value, dtype), dims)


def i0(x):
    """The modified Bessel function of order 0 (NumPy's ``i0``), differentiable."""
    return special.i0(x)


def kaiser(M, beta):
    """The Kaiser window of ``M`` points, as ``np.kaiser``:
    ``i0(beta sqrt(1 - ((n - alpha) / alpha)^2)) / i0(beta)`` with ``alpha = (M - 1) / 2``;
    differentiable in ``beta`` (``M`` sets the shape and has none)."""
    if not holds_tracer(beta):
        return np.kaiser(M, beta)
    if M < 1:
        return np.array([], np.float64)
    beta = ew.astype(as_array(beta), np.result_type(dtype_of(beta), np.float64))
    if M == 1:
        return np.ones(1, np.float64) + 0.0 * beta
    alpha = (M - 1) / 2.0
    # NumPy's own arithmetic for the constant radii, so the values match it bit for bit
    radii = np.sqrt(1 - ((np.arange(0, M) - alpha) / alpha) ** 2.0)
    return special.i0(beta * radii) / special.i0(beta)


def real_if_close(a, tol=100):
    """``a`` without its imaginary part when that part is within ``tol`` machine epsilons
    of 0, as ``np.real_if_close``."""
    if dtype_of(a).kind != "c":
        return a
    value = np.asarray(_concrete(a))
    if np.all(np.abs(value.imag) < tol * np.finfo(value.real.dtype).eps):
        return cx.real(a)
    return a


nonzero = _nondiff(np.nonzero)
flatnonzero = _nondiff(np.flatnonzero)
argwhere = _nondiff(np.argwhere)
isposinf = _nondiff(np.isposinf)
isneginf = _nondiff(np.isneginf)


def trim_zeros(filt, trim="fb"):
    """``filt`` (1-D) without its leading and/or trailing zeros, differentiable."""
    values = np.asarray(_concrete(filt))
    nonzero_at = np.flatnonzero(values)
    if nonzero_at.size == 0:
        return getitem(filt, slice(0, 0))
    start = nonzero_at[0] if "f" in trim.lower() else 0
    stop = nonzero_at[-1] + 1 if "b" in trim.lower() else values.shape[0]
    return getitem(filt, slice(int(start), int(stop)))


tri = np.tri
tril_indices = np.tril_indices
triu_indices = np.triu_indices
diag_indices = np.diag_indices
indices = np.indices


# --- evenly spaced samples: differentiable in their end points ------------------------------
# With concrete end points these are NumPy's own functions. With traced ones they are the same
# arithmetic written with diffkit's ops (start + k * step, the last sample set to stop), so
# each sample's derivative is 1 - k/div in start and k/div in stop.


def _lead_shape(*values):
    return np.broadcast_shapes(*(shape_of(v) for v in values))


def _samples_along_first_axis(start, stop, num, endpoint):
    """``num`` samples from ``start`` to ``stop`` (both shaped like the result's trailing
    axes), stacked along a new first axis; also the step (NaN when it is undefined)."""
    lead = shape_of(start)
    div = num - 1 if endpoint else num
    k = np.arange(num, dtype=dtype_of(start)).reshape((num,) + (1,) * len(lead))
    delta = ew.subtract_p(stop, start)
    if div > 0:
        step = ew.divide_p(delta, div)
        samples = ew.add_p(ew.multiply_p(k, step), start)
    else:  # a single sample (or none): start, with NumPy's NaN step
        step = np.nan
        samples = ew.add_p(ew.multiply_p(k, delta), start)
    if endpoint and num > 1:  # exactly stop, as NumPy
        samples = shape.concatenate([getitem(samples, slice(0, num - 1)),
                                     shape.reshape(stop, (1,) + lead)])
    return samples, step


def _sample_count(num):
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    return num


def _finish(samples, axis, dtype, round_down=True):
    """Move the sample axis to ``axis`` and cast to ``dtype`` (integers rounded down, as
    NumPy 2's ``linspace``, or truncated, as its ``geomspace``)."""
    if axis != 0:
        samples = shape.moveaxis(samples, 0, axis)
    if dtype is None:
        return samples
    dtype = np.dtype(dtype)
    if dtype.kind in "iu" and round_down:
        samples = ufuncs.floor(samples)
    return ew.astype(samples, dtype)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
             device=None):
    """``num`` evenly spaced samples from ``start`` to ``stop``, as ``np.linspace``
    (array-valued end points give samples of their broadcast shape, stacked along ``axis``).
    Differentiable in ``start`` and ``stop``; also the step with ``retstep=True``."""
    if not (holds_tracer(start) or holds_tracer(stop)):
        if device is not None:
            return np.linspace(start, stop, num, endpoint, retstep, dtype, axis, device=device)
        return np.linspace(start, stop, num, endpoint, retstep, dtype, axis)
    if device not in (None, "cpu"):
        raise ValueError(f"Device not understood. Only \"cpu\" is allowed, but received: "
                         f"{device}")
    num = _sample_count(num)
    work = _weak_result_type(start, stop)
    start, stop = asarray(start), asarray(stop)
    lead = _lead_shape(start, stop)
    start = shape.broadcast_to(ew.astype(start, work), lead)
    stop = shape.broadcast_to(ew.astype(stop, work), lead)
    samples, step = _samples_along_first_axis(start, stop, num, endpoint)
    samples = _finish(samples, axis, dtype)
    return (samples, step) if retstep else samples


def _weak_result_type(*values):
    """The float dtype of samples from ``values``: Python scalars are weak (NumPy 2), so
    ``linspace(float32, 2.0)`` stays float32; integers become float64."""
    dtypes = [v if type(v) in (int, float, complex) else dtype_of(asarray(v)) for v in values]
    return np.result_type(*dtypes, 1.0)


def _with_rank(x, ndim):
    """``x`` with leading axes of length 1 up to ``ndim`` axes."""
    missing = ndim - len(shape_of(x))
    return shape.reshape(x, (1,) * missing + shape_of(x)) if missing > 0 else x


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``base ** linspace(start, stop)``, as ``np.logspace``; differentiable in ``start``,
    ``stop`` and ``base`` (which may be an array broadcast with them)."""
    if not (holds_tracer(start) or holds_tracer(stop) or holds_tracer(base)):
        return np.logspace(start, stop, num, endpoint, base, dtype, axis)
    work = _weak_result_type(start, stop, base)
    start, stop, base = (ew.astype(asarray(v), work) for v in (start, stop, base))
    ndim = len(_lead_shape(start, stop, base))
    start, stop, base = (_with_rank(v, ndim) for v in (start, stop, base))
    exponents = linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    powers = ew.power(shape.expand_dims(base, axis), exponents)
    return powers if dtype is None else ew.astype(powers, dtype)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """Samples evenly spaced on a log scale from ``start`` to ``stop`` (same sign, nonzero),
    as ``np.geomspace``: the end points are exactly ``start`` and ``stop``. Differentiable in
    both (real end points)."""
    if not (holds_tracer(start) or holds_tracer(stop)):
        return np.geomspace(start, stop, num, endpoint, dtype, axis)
    num = _sample_count(num)
    start, stop = asarray(start), asarray(stop)
    for end in (start, stop):
        value = concrete_value(end)
        if value is not None and np.any(np.asarray(value) == 0):
            raise ValueError("Geometric sequence cannot include zero")
    work = np.result_type(dtype_of(start), dtype_of(stop), 1.0)
    lead = _lead_shape(start, stop)
    start = shape.broadcast_to(ew.astype(start, work), lead)
    stop = shape.broadcast_to(ew.astype(stop, work), lead)
    sign = stop_gradient(ew.sign(start))  # negative sequences: the same, mirrored
    start, stop = ew.divide_p(start, sign), ew.divide_p(stop, sign)
    exponents, _ = _samples_along_first_axis(ufuncs.log10(start), ufuncs.log10(stop), num,
                                             endpoint)
    samples = ew.power(np.asarray(10.0, work), exponents)
    if num > 0:  # the end points exactly, as NumPy
        first = [shape.reshape(start, (1,) + lead)]
        if endpoint and num > 1:
            middle = [getitem(samples, slice(1, num - 1)), shape.reshape(stop, (1,) + lead)]
        else:
            middle = [getitem(samples, slice(1, num))]
        samples = shape.concatenate(first + middle)
    return _finish(ew.multiply_p(sign, samples), axis, dtype, round_down=False)
