"""Family helpers: most primitives are one formula handed to one of these.

- ``unary``: an elementwise function and ``tangent * f'(x)``.
- ``binary``: a broadcasting function of two arrays and its two partials.
- ``nondiff_elementwise``: comparisons and other piecewise-constant maps.

For an elementwise map the Jacobian is diagonal, so one formula, "multiply by the local
derivative", serves as the JVP (applied to a tangent) and the VJP (applied to a cotangent,
then summed back over broadcast axes by ``unbroadcast``).

Complex numbers follow JAX's convention: a cotangent ``w`` stands for the real-linear
functional ``t -> Re(w t)`` (a bilinear pairing, no conjugation), so the VJP is the plain
transpose of the JVP. For a holomorphic ``f`` both are multiplication by ``f'(z)`` and the
same formula serves; a non-holomorphic function (``abs`` of a complex number) gives its
VJP separately (``transpose=``). The cotangent of a real value is real: where a real
operand meets a complex one (``x * 1j``), its cotangent keeps only the real part
(``real_cotangent``).
"""

import numpy as np

from ..core.concrete import concrete_test
from ..core.primitive import Primitive
from ..core.trace import PrimalTracer, Tracer
from ..core.zeros import Zero, dtype_of, shape_of
from . import complex as cx
from . import elementwise, reductions, shape


def real_cotangent(ct, x):
    """``ct`` as the cotangent of ``x``: its real part when ``x`` is real and ``ct`` complex
    (the transpose of embedding the reals in the complex numbers), else ``ct`` itself."""
    dtype = getattr(ct, "dtype", None)  # arrays, tracers and NumPy scalars (the hot path)
    if dtype is None or dtype.kind != "c" or type(ct) is Zero or dtype_of(x).kind == "c":
        return ct
    return cx.real(ct)


def sum_tangents(parts, out):
    """The sum of the nonzero tangent ``parts`` of an elementwise primitive, broadcast to
    the shape of its output ``out`` (a part may be smaller than the output)."""
    total = parts[0]
    for part in parts[1:]:
        total = total + part
    return total if shape_of(total) == shape_of(out) else shape.broadcast_to(total,
                                                                             shape_of(out))


def broadcasting_batch(prim):
    """Batching rule for an elementwise primitive of any number of broadcasting arrays.

    An unbatched operand broadcasts from the right as usual; a batched one gets size-1
    axes inserted after its batch axis so that the batch axis lines up with axis 0 of the
    result instead of being broadcast against a data axis.
    """

    def batch(axis_size, values, batch_axes, **params):
        ranks = [len(shape_of(v)) - (a is not None) for v, a in zip(values, batch_axes)]
        rank = max(ranks)
        if min(ranks) == rank:  # operands of one rank (the usual case): nothing to pad
            return prim(*values, **params), 0
        aligned = values  # copied only when an operand needs padding
        for i, axis in enumerate(batch_axes):
            if axis is not None and ranks[i] < rank:
                if aligned is values:
                    aligned = list(values)
                dims = shape_of(values[i])
                aligned[i] = shape.reshape_p(values[i], shape=dims[:1] + (1,) * (rank - ranks[i])
                                             + dims[1:])
        return prim(*aligned, **params), 0

    return batch


def zero_safe(derivative):
    """``derivative(t, *args)``, a tangent or cotangent ``t`` times a partial
    derivative, made to follow the 0 x inf rule: a zero factor on either side gives 0.

    IEEE arithmetic makes ``0 * inf`` (and ``0 * nan``) NaN. Without the rule the engines
    disagree wherever a zero meets an infinity, because they meet in different products:
    in ``t * sqrt(t)`` at 0, forward mode multiplies the partial ``t = 0`` by sqrt's infinite
    tangent, reverse mode multiplies sqrt's infinite partial by a zero cotangent. With the
    rule both give 0, the true derivative where one exists, and so do overflowing values
    (``exp(1e5)`` times a zero cotangent), the branch a ``where`` did not take, and
    Hessians at poles.

    Fast path: such a product is NaN exactly where the rule applies (or a factor was NaN),
    so a result with no NaN is returned as computed; one extra read of the result, no
    allocation. Otherwise the NaN entries with a zero factor are replaced by 0 through a
    nondifferentiable mask (finite entries keep their own derivatives, for Hessians). The
    partial itself is evaluated only when the tangent has non-finite entries (as the rule
    applied to a unit tangent there)."""

    def safe(t, *args):
        result = derivative(t, *args)
        kind = type(result)
        if kind is np.float64 or kind is float:  # the scalar chain's hot case
            if result == result:
                return result
        elif not holds_nan(result):
            return result
        if holds_nonfinite(t):
            unit = elementwise.where(elementwise.isfinite(t), t, 1.0)
            zero = elementwise.zero_factor_nan(result, t, derivative(unit, *args))
        else:
            zero = elementwise.zero_factor_nan(result, t)
        return elementwise.where(zero, 0.0, result)

    return safe


def times(t, partial):
    """``t * partial`` under the 0 x inf rule (see ``zero_safe``): for rules written by hand.

    When the partial is a plain number, or a plain array much smaller than ``t`` (the usual
    case under ``jacfwd``, ``jacrev`` and ``vmap``, where ``t`` carries a batch of tangents),
    with every entry finite and nonzero, no zero factor can meet an infinity: the product
    has a NaN only where ``t`` has one, which the rule keeps. It is then returned unchecked,
    and the check reads the small partial instead of the large product."""
    if _finite_and_nonzero(partial, t):
        return t * partial
    return _times(t, partial)


def _finite_and_nonzero(partial, t):
    kind = type(partial)
    if kind is float or kind is np.float64 or kind is int:
        return partial != 0 and partial - partial == 0   # nonzero, not inf or NaN
    if kind is not np.ndarray or partial.dtype.kind not in "fc":
        return False
    value = _concrete(t)
    if 4 * partial.size > getattr(value, "size", 1):
        return False   # as large as the product: reading it saves nothing
    return bool(np.isfinite(partial).all() and partial.all())


_times = zero_safe(lambda t, partial: t * partial)


def _concrete(x):
    """The plain value under ``x``: a tracer's primal (forward, reverse) or batched value
    (vmap), down to an array or scalar."""
    while isinstance(x, Tracer):
        x = x.primal if isinstance(x, PrimalTracer) else x.value
    return x


def holds_nan(x):
    """Whether the array, scalar or tracer ``x`` has a NaN entry (False for integers).

    One pass and no allocation. A small array: ``vdot(x, x)`` sums ``|x|**2``, terms that
    cannot cancel, so it is NaN exactly when an entry is (the cheapest call). A large one:
    ``maximum`` propagates NaN (a BLAS dot product of a large array may start threads,
    which costs milliseconds on a busy machine)."""
    if type(x) is not np.ndarray:
        if isinstance(x, Tracer):  # a recording trace (jit) keeps this answer as a guard
            return concrete_test(x, holds_nan)
        x = np.asarray(x)
    if x.dtype.kind not in "fc":
        return False
    if x.size <= _SMALL and x.flags.c_contiguous:
        total = np.vdot(x, x)
    elif x.size == 0:
        return False
    else:
        total = np.maximum.reduce(x, axis=None)
    return bool(total != total)


_SMALL = 4096  # well below the size at which BLAS libraries thread a dot product


def holds_nonfinite(x):
    """Whether the array, scalar or tracer ``x`` has an infinite or NaN entry."""
    if isinstance(x, Tracer):  # a recording trace (jit) keeps this answer as a guard
        return concrete_test(x, holds_nonfinite)
    x = np.asarray(x)
    return x.dtype.kind in "fc" and not np.isfinite(x).all()


def unary(name, impl, derivative, reads=("x", "out"), transpose=None, products=True,
          singular=None):
    """An elementwise primitive from ``derivative(t, x, out) = t * f'(x)``; ``reads`` says
    which of ``x`` and ``out`` the formula uses (the reverse engine keeps only those).

    ``transpose(ct, x, out)``, when given, is the VJP (for a function that is not
    holomorphic on complex inputs, whose JVP and VJP differ); by default the VJP is
    ``derivative`` applied to the cotangent. Both follow the 0 x inf rule (``zero_safe``)
    unless the formula reads neither ``x`` nor ``out`` (a constant partial) or
    ``products=False`` (it only selects or shares ``t``, as a ``where`` does).
    ``singular`` is accepted and ignored: every product rule follows the 0 x inf rule."""
    if products and reads:
        derivative = zero_safe(derivative)
        transpose = transpose and zero_safe(transpose)
    ignores = tuple(i for i, v in ((0, "x"), ("out", "out")) if v not in reads)
    prim = Primitive(name, impl, vjp_ignores=ignores)
    pullback = derivative if transpose is None else transpose

    def jvp(primals, tangents):
        (x,) = primals
        out = prim(x)
        return out, derivative(tangents[0], x, out)

    def vjp(cotangent, out, x):
        return pullback(cotangent, x, out)

    prim.jvp = jvp
    prim.vjp = (vjp,)
    prim.batch = lambda axis_size, values, batch_axes: (prim(values[0]), batch_axes[0])
    return prim


_EVERYTHING = ("x", "y", "out")


def binary(name, impl, first, second, reads=(_EVERYTHING, _EVERYTHING), products=True,
           singular=None):
    """A broadcasting primitive of two arrays from its partials applied to a tangent:
    ``first(t, x, y, out) = t * d out/dx`` and ``second(t, x, y, out) = t * d out/dy``;
    ``reads`` says which of ``x``, ``y`` and ``out`` each partial uses. Each partial that
    reads something follows the 0 x inf rule (``zero_safe``) unless ``products=False``;
    ``singular`` is accepted and ignored."""
    if products:
        first, second = (zero_safe(p) if r else p for p, r in zip((first, second), reads))
    names = {"x": 0, "y": 1, "out": "out"}
    per_argument = tuple(frozenset(names[v] for v in r) for r in reads)
    ignores = set(names.values()) - per_argument[0] - per_argument[1]
    prim = Primitive(name, impl, vjp_ignores=ignores, vjp_reads=per_argument)

    def jvp(primals, tangents):
        x, y = primals
        tx, ty = tangents
        out = prim(x, y)
        if type(tx) is Zero:
            t = second(ty, x, y, out)
        elif type(ty) is Zero:
            t = first(tx, x, y, out)
        else:
            t = first(tx, x, y, out) + second(ty, x, y, out)
        out_shape = shape_of(out)
        if shape_of(t) != out_shape:
            t = shape.broadcast_to(t, out_shape)
        return out, t

    def vjp_first(cotangent, out, x, y):
        return reductions.unbroadcast(real_cotangent(first(cotangent, x, y, out), x),
                                      shape_of(x))

    def vjp_second(cotangent, out, x, y):
        return reductions.unbroadcast(real_cotangent(second(cotangent, x, y, out), y),
                                      shape_of(y))

    prim.jvp = jvp
    prim.vjp = (vjp_first, vjp_second)
    prim.batch = broadcasting_batch(prim)
    return prim


def nondiff_elementwise(name, impl):
    """A piecewise-constant elementwise primitive (comparisons, sign): no derivative."""
    prim = Primitive(name, impl, nondiff=True)
    prim.batch = broadcasting_batch(prim)
    return prim
