"""Collapsed Taylor mode: the sum over directions of the top Taylor coefficient.

A differential operator such as the Laplacian is a sum of directional derivatives of one
order K over R directions: ``Δf = Σ_r ∂²f[e_r, e_r]``. Pushing R separate jets through
``f`` and summing at the end carries R copies of the top coefficient through every
operation. But the top coefficient of each output is linear in the top coefficients of the
arguments, plus a term that depends on the lower ones only:

    y_K = Df(x_0) [x_K] + N(x_0, x_1, ..., x_{K-1}),

so its sum over the directions is ``Df(x_0)[Σ_r x_K,r] + Σ_r N(...)``: one JVP of the
collapsed top coefficient, plus the sum of the nonlinear parts. A ``CollapsedTracer``
carries the value ``x_0`` once, the lower coefficients ``x_1 .. x_{K-1}`` per direction
(axis 0 of length R) and the top coefficient summed over the directions (Dangel et al.,
"Collapsing Taylor mode automatic differentiation", 2025; the forward Laplacian of Li et
al. 2024 is the case K = 2).

``CollapsedTrace.process`` computes, for each primitive:

- the lower coefficients and the nonlinear part of the top one, per direction: the
  primitive's Taylor expansion (``taylor.expand``: its jet rule or the fallback) with a
  zero top coefficient, batched over the directions (``batch_flat``), the nonlinear part
  then summed over axis 0;
- the linear part: the primitive's ``jvp`` rule along the collapsed top coefficients.

A linear primitive (a matrix product with a constant, a sum) has no nonlinear part: its
rule answers a symbolic zero and no sum is formed, so ``h @ W`` costs one batched product
for the lower coefficients and one product for the top, as in a hand-written forward
Laplacian.

``collapsed_flat`` is the entry point, a function of flat lists of values.
"""

import numpy as np

from ..core.trace import PrimalTracer, Trace, bind_custom, check_not_escaped, new_trace
from ..core.zeros import Zero, dtype_of, instantiate, shape_of, tangent_dtype, zero_like
from ..ops import elementwise, families, linalg, reductions
from ..ops import shape as shape_ops
from .batching import batch_flat
from .taylor import expand, expand_custom


class CollapsedTracer(PrimalTracer):
    __slots__ = ("lower", "top")

    def __init__(self, trace, primal, lower, top):
        self._trace = trace
        self.primal = primal
        self.lower = lower   # K-1 coefficients, each (R,) + shape, or Zero(shape)
        self.top = top       # the K-th coefficient summed over the directions, or Zero


class CollapsedTrace(Trace):
    __slots__ = ("order", "directions")
    name = "collapsed Taylor-mode (differential operator)"
    pushes_forward = True

    def __init__(self, level, order, directions):
        super().__init__(level)
        self.order = order
        self.directions = directions

    def lift(self, value):
        return CollapsedTracer(self, value, (zero_like(value),) * (self.order - 1),
                               zero_like(value))

    def unwrap(self, args):
        primals, lowers, tops, moving = [], [], [], False
        for x in args:
            if type(x) is CollapsedTracer and x._trace is self:
                primals.append(x.primal)
                lowers.append(x.lower)
                tops.append(x.top)
                moving = True
            else:
                primals.append(x)
                lowers.append((zero_like(x),) * (self.order - 1))
                tops.append(zero_like(x))
        return primals, lowers, tops, moving

    def process(self, prim, args, params):
        primals, lowers, tops, moving = self.unwrap(args)
        if not moving or prim.nondiff:
            return self.wrap_all(prim(*primals, **params), prim.multiple_results)

        def evaluate(primal_values):
            return prim(*primal_values, **params)

        def expansion(primal_values, series):
            return expand(prim, primal_values, series, params, self.order)

        def jvp(primal_values, tangents):
            return prim.jvp(primal_values, tangents, **params)[1]

        moving_args = [i for i, (lower, top) in enumerate(zip(lowers, tops))
                       if type(top) is not Zero or any(type(c) is not Zero for c in lower)]
        if len(moving_args) == 1 and self.linear_in(prim, primals, moving_args[0]):
            return self.linear_map(prim, params, primals, lowers, tops, moving_args[0])
        moving_lower = [i for i, lower in enumerate(lowers) if type(lower[0]) is not Zero]
        if self.order == 2 and prim.traits.elementwise and len(moving_lower) == 1 \
                and _real(primals):
            return self.second_order_elementwise(expansion, jvp, primals, lowers, tops,
                                                 moving_lower[0])
        return self.combine(evaluate, expansion, jvp, primals, lowers, tops,
                            prim.multiple_results)

    @staticmethod
    def linear_in(prim, primals, i):
        """Whether ``prim`` is linear in argument ``i`` when the others are held (its jet
        rule says so: ``linear_argument``, an index or ``"each"``), with a batching rule,
        and the held arguments finite (so that no 0 x inf product needs the JVP's rule)."""
        linear = getattr(prim.jet, "linear_argument", None)
        if linear is None or (linear != "each" and linear != i) or prim.batch is None \
                or prim.multiple_results:
            return False
        return not any(families.holds_nonfinite(p) for j, p in enumerate(primals)
                       if j != i and dtype_of(p).kind in "fc")

    def linear_map(self, prim, params, primals, lowers, tops, i):
        """A primitive linear in its one moving argument ``i``: every coefficient is the
        primitive applied to the argument's (the lower ones batched over the directions by
        its batching rule), the value computed once."""
        out = prim(*primals, **params)
        axes = [None] * len(primals)
        axes[i] = 0

        def per_direction(c):
            if type(c) is Zero:
                return zero_like(out)
            values = list(primals)
            values[i] = c
            value, axis = prim.batch(self.directions, values, axes, **params)
            return value if axis == 0 else shape_ops.moveaxis(value, axis, 0)

        lower_out = tuple(per_direction(c) for c in lowers[i])
        top = tops[i]
        if type(top) is Zero:
            top_out = zero_like(out)
        else:
            values = list(primals)
            values[i] = top
            top_out = prim(*values, **params)
        return CollapsedTracer(self, out, lower_out, top_out)

    def second_order_elementwise(self, expansion, jvp, primals, lowers, tops, i):
        """An elementwise primitive at order 2 with one argument ``i`` moving along the
        directions: its second coefficient is ``f'(x_0) x_2 + f''(x_0) x_1² / 2``, so
        the sum over the directions needs ``Σ_r x_1,r²`` only (the forward Laplacian's
        step): one expansion along ``x_1 = 1`` gives ``f'`` and ``f'' / 2``."""
        ones = _ones_like(primals[i])
        series = [(ones, zero_like(p)) if j == i else (zero_like(p), zero_like(p))
                  for j, p in enumerate(primals)]
        out, (slope, half_curvature) = expansion(primals, series)
        if type(slope) is Zero:
            lower_out = zero_like(out)
        else:   # products under the 0 x inf rule, as the JVP rule forms them
            lower = _aligned(lowers[i][0], shape_of(primals[i]), len(shape_of(out)))
            lower_out = _product(lower, slope)
        nonlinear = zero_like(out)
        if type(half_curvature) is not Zero:
            nonlinear = half_curvature * _sum_of_squares(lowers[i][0])
        if all(type(t) is Zero for j, t in enumerate(tops) if j != i):
            top = tops[i]   # the slope at hand: no second evaluation of f by the JVP rule
            linear = None if type(top) is Zero or type(slope) is Zero else \
                _product(top, slope)
        else:
            linear = self.top_part(jvp, primals, tops, False, 1)[0]
        return CollapsedTracer(self, out, (lower_out,), _add(nonlinear, linear, out))

    def process_custom(self, call, args):
        primals, lowers, tops, moving = self.unwrap(args)
        if not moving:
            return tuple(self.wrap_all(bind_custom(call, primals), True))

        def evaluate(primal_values):
            return bind_custom(call, primal_values)

        def expansion(primal_values, series):
            return expand_custom(call, primal_values, series, self.order)

        def jvp(primal_values, tangents):
            tangents = [instantiate(t) for t in tangents]
            return call.jvp(list(primal_values), tangents)[1]

        return tuple(self.combine(evaluate, expansion, jvp, primals, lowers, tops, True))

    def combine(self, evaluate, expansion, jvp, primals, lowers, tops, multiple_results):
        """The outputs' tracers: lower coefficients and nonlinear top part per direction
        (``expansion`` batched), linear top part by ``jvp`` of the collapsed tops."""
        if all(type(c) is Zero for lower in lowers for c in lower):
            out = evaluate(primals)
            outs = list(out) if multiple_results else [out]
            lowers_out = [(zero_like(o),) * (self.order - 1) for o in outs]
            nonlinear = [zero_like(o) for o in outs]
        else:
            outs, lowers_out, nonlinear = self.lower_part(expansion, primals, lowers,
                                                          multiple_results)
        linear = self.top_part(jvp, primals, tops, multiple_results, len(outs))
        results = []
        for o, lower, n, lin in zip(outs, lowers_out, nonlinear, linear):
            results.append(CollapsedTracer(self, o, lower, _add(n, lin, o)))
        return tuple(results) if multiple_results else results[0]

    def lower_part(self, expansion, primals, lowers, multiple_results):
        """Per output: its value, its lower coefficients per direction and the sum over
        the directions of the nonlinear part of its top coefficient."""
        n, k = len(primals), self.order - 1

        def per_direction(*values):
            series = [tuple(values[n + i * k: n + (i + 1) * k]) + (zero_like(p),)
                      for i, p in enumerate(values[:n])]
            out, series_out = expansion(list(values[:n]), series)
            outs = list(out) if multiple_results else [out]
            series_out = list(series_out) if multiple_results else [series_out]
            return outs + [c for s in series_out for c in s]

        flat_lowers = [c for lower in lowers for c in lower]
        axes = [None] * n + [None if type(c) is Zero else 0 for c in flat_lowers]
        values, value_axes = batch_flat(per_direction, [*primals, *flat_lowers], axes,
                                        self.directions)
        m = len(values) // (k + 2)
        outs, coefficients = values[:m], values[m:]
        coefficient_axes = value_axes[m:]
        lowers_out, nonlinear = [], []
        for j, o in enumerate(outs):
            own = coefficients[j * (k + 1):(j + 1) * (k + 1)]
            own_axes = coefficient_axes[j * (k + 1):(j + 1) * (k + 1)]
            lowers_out.append(tuple(self.per_direction(c, a, o)
                                    for c, a in zip(own[:k], own_axes[:k])))
            nonlinear.append(self.summed(own[k], own_axes[k], o))
        return outs, lowers_out, nonlinear

    def per_direction(self, coefficient, axis, out):
        """A lower coefficient with its directions on axis 0 (Zero stays Zero)."""
        if type(coefficient) is Zero or axis == 0:
            return coefficient if type(coefficient) is not Zero else zero_like(out)
        return shape_ops.broadcast_to(coefficient, (self.directions, *shape_of(out)))

    def summed(self, coefficient, axis, out):
        """The sum over the directions of a top coefficient."""
        if type(coefficient) is Zero:
            return zero_like(out)
        if axis is None:   # the same for every direction
            return coefficient * self.directions
        return reductions.sum(coefficient, axis=0)

    def top_part(self, jvp, primals, tops, multiple_results, count):
        """Per output: the JVP along the collapsed top coefficients (None when none)."""
        if all(type(t) is Zero for t in tops):
            return [None] * count
        tangent = jvp(primals, tops)
        return list(tangent) if multiple_results else [tangent]

    def wrap_all(self, out, multiple_results):
        if multiple_results:
            return tuple(self.lift(o) for o in out)
        return self.lift(out)


def _real(values):
    return all(dtype_of(v).kind != "c" for v in values)


def _ones_like(value):
    return np.ones(shape_of(value), tangent_dtype(dtype_of(value)))


def _product(t, slope):
    """``t * slope`` under the 0 x inf rule: the slope (one value per output entry, smaller
    than the directions ``t``) is read once for an infinity or a zero, and only then is
    the product checked entry by entry (``families.times``)."""
    if families.holds_nonfinite(slope) or elementwise.holds_zero(slope):
        return families.times(t, slope)
    return t * slope


def _sum_of_squares(lower):
    """``Σ_r lower[r] ** 2`` over the directions (axis 0), as one contraction: ``einsum``
    reads each entry once where ``sum(x * x)`` makes the squares first (5x slower on the
    (points, directions, width) arrays of a network)."""
    labels = "abcdefghijklmnopqrstuvwxyz"[:len(shape_of(lower))]
    return linalg.einsum(f"{labels},{labels}->{labels[1:]}", lower, lower)


def _aligned(lower, shape, ndim):
    """Directions ``(R,) + shape`` reshaped to broadcast against an array of ``ndim``
    dimensions from the right, the directions axis kept first."""
    missing = ndim - len(shape)
    if missing <= 0:
        return lower
    return shape_ops.reshape(lower, (shape_of(lower)[0],) + (1,) * missing + tuple(shape))


def _add(nonlinear, linear, out):
    if linear is None or type(linear) is Zero:
        return nonlinear
    if type(nonlinear) is Zero:
        return linear
    return nonlinear + linear


# --- the entry point ---------------------------------------------------------------------


def collapsed_flat(fun, primals, lowers, tops, order, directions, *, name="laplacian"):
    """Evaluate ``fun`` at ``primals`` with, per primal, ``order - 1`` lower Taylor
    coefficients per direction (arrays ``(directions,) + shape`` or ``Zero``) and the top
    coefficient summed over the directions; return ``(primals_out, lowers_out,
    tops_out)`` for the outputs, ``tops_out`` being the sum over the directions of each
    output's ``order``-th Taylor coefficient (``Zero`` where it is zero)."""
    with new_trace(CollapsedTrace, order, directions) as trace:
        inputs = [CollapsedTracer(trace, p, tuple(lower), top)
                  for p, lower, top in zip(primals, lowers, tops)]
        outs = fun(*inputs)
        primals_out, lowers_out, tops_out = [], [], []
        for o in outs:
            if type(o) is CollapsedTracer and o._trace is trace:
                primals_out.append(o.primal)
                lowers_out.append(o.lower)
                tops_out.append(o.top)
            else:
                o = check_not_escaped(o, name)
                primals_out.append(o)
                lowers_out.append((zero_like(o),) * (order - 1))
                tops_out.append(zero_like(o))
    return primals_out, lowers_out, tops_out
