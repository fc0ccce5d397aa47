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

from ..core.primitive import Primitive
from ..core.trace import Tracer
from ..core.zeros import Zero, dtype_of, shape_of
from . import elementwise, reductions, shape


def real_cotangent(ct, x):
    """``ct`` as the cotangent of ``x``: its real part when ``x`` is real and ``ct`` complex
    (the transpose of embedding the reals in the complex numbers), else ``ct`` itself."""
    dtype = getattr(ct, "dtype", None)  # arrays, tracers and NumPy scalars (the hot path)
    if dtype is None or dtype.kind != "c" or type(ct) is Zero or dtype_of(x).kind == "c":
        return ct
    from .complex import real
    return real(ct)


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
    """``derivative`` made to give 0 wherever the tangent (or cotangent) is 0, even where
    ``f'`` is infinite or NaN.

    That is what keeps the branch a ``where`` did not take from leaking NaN into reverse
    mode: in ``where(x > 0, log(x), 0)`` at ``x = 0`` the cotangent reaching ``log`` is 0
    there, and 0 times ``1/0`` must stay 0, as it does in forward mode. Only functions whose
    derivative can be non-finite use it (``singular=True``), so ``sin`` or ``exp`` pay
    nothing."""

    def safe(t, *args):
        result = derivative(t, *args)
        if _nowhere_zero(t, result):
            return result
        # Replace only the NaN/inf that a zero tangent produced: where the result is finite
        # it is kept as computed, so its own derivatives (Hessians) are not cut off.
        return elementwise.where(elementwise.spurious_nonfinite(t, result), 0.0, result)

    return safe


def _nowhere_zero(t, result):
    """Whether ``zero_safe``'s mask is provably all False, so that its ``where`` would give
    back ``result`` unchanged: ``t`` is a plain array with no zero entry (the usual
    cotangent of ``grad``, even under ``vmap``), broadcasting to ``result``'s shape, and
    ``result`` is a float or complex array or tracer (``where`` keeps its shape, dtype and
    kind of object). Skipping the mask saves two operations on every such rule."""
    return (type(t) is np.ndarray and (type(result) is np.ndarray or isinstance(result, Tracer))
            and (t.ndim == 0 or t.shape == shape_of(result))
            and dtype_of(result).kind in "fc" and bool(t.all()))


def unary(name, impl, derivative, reads=("x", "out"), transpose=None, singular=False):
    """An elementwise primitive from ``derivative(t, x, out) = t * f'(x)``; ``reads`` says
    which of ``x`` and ``out`` the formula uses (the reverse engine keeps only those).

    ``transpose(ct, x, out)``, when given, is the VJP (for a function that is not
    holomorphic on complex inputs, whose JVP and VJP differ); by default the VJP is
    ``derivative`` applied to the cotangent. ``singular=True``: ``f'`` can be infinite or
    undefined, see ``zero_safe``."""
    if singular:
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


def binary(name, impl, first, second, reads=(_EVERYTHING, _EVERYTHING), singular=False):
    """A broadcasting primitive of two arrays from its partials applied to a tangent:
    ``first(t, x, y, out) = t * d out/dx`` and ``second(t, x, y, out) = t * d out/dy``;
    ``reads`` says which of ``x``, ``y`` and ``out`` each partial uses. ``singular=True``:
    a partial can be infinite or undefined, see ``zero_safe``."""
    if singular:
        first, second = zero_safe(first), zero_safe(second)
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
