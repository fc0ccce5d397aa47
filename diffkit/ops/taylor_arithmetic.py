"""Taylor arithmetic: the jet rules of the primitives (Griewank & Walther, *Evaluating
Derivatives*, 2nd ed., ch. 13).

A jet rule (``core.primitive``) receives each argument's value and its K Taylor
coefficients, ``x(t) = x_0 + x_1 t + ... + x_K t^K``, and returns the output's value and K
coefficients; without one, Taylor mode derives them from the JVP rule
(``interpreters.taylor.taylor_from_jvp``), which re-runs that rule at orders K-1, K-2, ...
The recurrences here cost O(K²) products of coefficients per primitive and nothing else.
The makers return ``jet(primals, series, **params)``; each is given the operation it
serves (the primitive itself, or a function binding it), and the rule computes the output's
value with it, so the value is exactly the primitive's.

Inside, a series is a list ``[x_0, x_1, ..., x_K]`` (the value first) with ``None`` for a
coefficient that is exactly zero (a symbolic ``Zero`` outside): a term with a zero factor
is never computed, and an output coefficient with no term is a ``Zero`` (``_finish``).
Coefficients are arrays or tracers of other transformations (jet under ``grad``, ``vmap``
or ``jit``): only Python's operators and diffkit primitives touch them, and scale factors
are Python numbers, so a float32 series stays float32.

Products follow the 0 x inf rule of the JVP rules (``families.times``) as the fallback
and nested forward mode apply it, so all three agree at overflowing values and singular
points: within a sum of products a term with a zero factor is 0 even when the other is
infinite or NaN (the sum is computed plainly and re-done term by term only when it holds
NaN), and the JVP's product of the slope with the velocity, y' = g x', is zero with all
its coefficients where its value x_1 g_0 is a zero times an infinity (``_unmoving_mask``:
``sqrt(x²)`` at 0, which is ``|x|``, has zero coefficients, as in nested ``jvp``s).

The recurrences (y = f(x) elementwise; sums run over j = 1..k unless said otherwise):

- ``exp``: y' = y x', so y_k = (1/k) Σ j x_j y_{k-j};
- ``sin``/``cos`` together: s_k = (1/k) Σ j x_j c_{k-j}, c_k = -(1/k) Σ j x_j s_{k-j}
  (``sinh``/``cosh`` without the minus);
- ``log``: x y' = x', so y_k = (x_k - (1/k) Σ_{j<k} j y_j x_{k-j}) / x_0;
- powers ``x^a``: x y' = a y x', so y_k = Σ (a j - (k - j)) x_j y_{k-j} / (k x_0)
  (``sqrt``, ``cbrt``, ``reciprocal``, ``scalar_power``, ``power``);
- quotient: y_k = (a_k - Σ b_j y_{k-j}) / b_0; products: the Cauchy product
  y_k = Σ_{i+j=k} a_i b_j (``multiply``, ``matmul``, ``einsum``, ``convolve``);
- functions with a known slope, y' = g x': y_k = (1/k) Σ j x_j g_{k-j}, with g's series
  from the rules above (``arctan``: g = 1/(1 + x²); ``arcsin``: (1 - x²)^(-1/2); ``erf``:
  (2/√π) exp(-x²)), or from y itself (``tanh``: g = 1 - y²; ``tan``: 1 + y²; ``expit``:
  y - y²).

A recurrence that divides by x_0 (logarithms, powers, quotients) is used where x_0 has no
zero entry. Where it has one, the power's series is built from its derivative instead,
y' = a x^(a-1) x', with the series of x^(a-1) made the same way one order lower: the
structure of the JVP fallback, so the stationary entries there get zero coefficients (the
0 x inf rule) and the moving ones the infinite or NaN limit of the derivatives, as in
forward mode, and a power whose exponent exceeds the order (x^5.5 at 0, to order 4) gets
its exact zero coefficients. A quotient by a zero follows the JVP's two products (with its
NaN slope at 0 / 0).

Linear maps (``linear``: reshape, sum, getitem, fft ...; ``linear_combination``: add,
subtract) apply themselves to each coefficient; a multilinear one (``multilinear``:
matmul, einsum, convolve) sums itself over the coefficients whose orders add up to k.
"""

import math

import numpy as np

from ..core.concrete import concrete_test
from ..core.trace import Tracer
from ..core.zeros import Zero, dtype_of, shape_of, zero_like

__all__ = []

_FLOATS = (float, np.float64)


# --- series: building, finishing, arithmetic ---------------------------------------------


def _terms(value, coefficients):
    """``[value, c_1, ..., c_K]``, ``None`` for a symbolic zero."""
    return [value, *[None if type(c) is Zero else c for c in coefficients]]


def _finish(out, ys):
    """The K output coefficients of ``out`` from ``ys = [y_0, ..., y_K]``: a ``Zero`` for
    ``None``, a coefficient smaller than the output broadcast to its shape."""
    out_shape = shape_of(out)
    zero = None
    finished = []
    for y in ys[1:]:
        if y is None:
            zero = zero_like(out) if zero is None else zero
            finished.append(zero)
        elif shape_of(y) != out_shape:
            finished.append(shape.broadcast_to(y, out_shape))
        else:
            finished.append(y)
    return tuple(finished)


def _order(series):
    return len(series[0])


def _scaled(c, factor):
    """``factor * c`` for a Python number ``factor`` (``None`` stays ``None``)."""
    if c is None or factor == 1:
        return c
    if factor == -1:
        return -c
    return c * factor


def _plus(a, b):
    if a is None:
        return b
    return a if b is None else a + b


def _minus(a, b):
    if b is None:
        return a
    return -b if a is None else a - b


def _has_nan(x):
    if type(x) in _FLOATS:
        return x != x
    return families.holds_nan(x)


def _has_underflow(x):
    """Whether ``x`` has an entry below the smallest normal number in magnitude (zero
    included): the power recurrence divides what it read from such a value (``x_0 ** n``
    underflowed at a tiny base) and would lose the terms that do not vanish."""
    if type(x) in _FLOATS:
        return abs(x) < _TINY
    if isinstance(x, Tracer):
        return concrete_test(x, _has_underflow)
    x = np.asarray(x)
    if x.dtype.kind not in "fc":
        return not np.all(x)
    return bool(np.any(np.abs(x) < np.finfo(x.dtype).tiny))


_TINY = np.finfo(np.float64).tiny


def _has_zero(x):
    """Whether ``x`` (array, scalar or tracer) has a zero entry (a recording trace keeps
    the answer as a guard)."""
    if type(x) in _FLOATS:
        return x == 0
    return ew.holds_zero(x)


def _dot(pairs):
    """``Σ a * b`` over the ``(a, b)`` pairs with neither ``None`` (``None`` when there is
    none), under the 0 x inf rule: re-done with ``families.times`` when it holds NaN."""
    total = None
    for a, b in pairs:
        if a is not None and b is not None:
            total = a * b if total is None else total + a * b
    if total is None or not _has_nan(total):
        return total
    total = None
    for a, b in pairs:
        if a is not None and b is not None:
            term = families.times(a, b)
            total = term if total is None else total + term
    return total


def _has_nonfinite(x):
    if type(x) in _FLOATS:
        return not math.isfinite(x)
    return families.holds_nonfinite(x)


def _unmoving_mask(xs, g0):
    """Where ``x_1 g_0`` is a zero times an infinity (or NaN), or None when nowhere: there
    the 0 x inf rule of the JVP's product ``x'(t) g(t)`` (``families.times``) makes the
    whole product 0, in the fallback and in nested forward mode alike (``|x|`` as
    ``sqrt(x²)`` at 0 has zero coefficients), and so do these rules."""
    if len(xs) < 2 or not _has_nonfinite(g0):
        return None
    first = 0.0 if xs[1] is None else xs[1]
    with np.errstate(invalid="ignore"):
        mask = ew.zero_factor_nan_p(first * g0, first, g0)
    return mask if concrete_test(mask, np.any) else None


def _masked(y, mask):
    return y if mask is None or y is None else ew.where_p(mask, 0.0, y)


def _unmoving_where_infinite(ys, xs, g0):
    """``ys`` with every coefficient after the value 0 where ``_unmoving_mask`` holds."""
    mask = _unmoving_mask(xs, g0)
    return ys if mask is None else [ys[0]] + [_masked(y, mask) for y in ys[1:]]


def _weighted(xs, order):
    """``[None, 1 x_1, 2 x_2, ..., K x_K]``: the coefficients of ``t x'(t)``."""
    return [None] + [_scaled(xs[j], j) for j in range(1, order + 1)]


def _integrated(xw, gs, k):
    """y_k of y' = g x' from ``xw = _weighted(x)``: ``(1/k) Σ_j j x_j g_{k-j}``."""
    return _scaled(_dot([(xw[j], gs[k - j]) for j in range(1, k + 1)]), 1 / k)


def _cauchy(a, b, k, start=0):
    """``Σ_{i=start}^{k-start} a_i b_{k-i}``: coefficient k of a product."""
    return _dot([(a[i], b[k - i]) for i in range(start, k - start + 1)])


def _square_coefficient(xs, k, start=0):
    """``Σ_{i=start}^{k-start} x_i x_{k-i}`` by symmetry: each pair once, doubled."""
    half = _dot([(xs[i], xs[k - i]) for i in range(start, (k + 1) // 2)])
    half = _scaled(half, 2)
    if k % 2 == 0 and k // 2 >= start:
        return _plus(half, _dot([(xs[k // 2], xs[k // 2])]))
    return half


# --- recurrences -----------------------------------------------------------------------------


def _exp_series(xs, y0, order, rate=1):
    """The series of ``y`` with y' = rate y x' and value ``y0`` (``exp``: rate 1)."""
    xw = [None] + [_scaled(xs[j], j * rate) for j in range(1, order + 1)]
    ys = [y0]
    for k in range(1, order + 1):
        ys.append(_integrated(xw, ys, k))
    return _unmoving_where_infinite(ys, xs, y0)


def _sin_cos_series(xs, s0, c0, order, hyperbolic, cosine):
    """The series of sin(x) (``cosine``: of cos(x)); sinh and cosh with ``hyperbolic``.
    Each is the other's slope, so the other is carried one order less."""
    xw = _weighted(xs, order)
    ss, cs = [s0], [c0]
    sign = 1 if hyperbolic else -1
    for k in range(1, order + 1):
        if k < order or not cosine:
            ss.append(_integrated(xw, cs, k))
        if k < order or cosine:
            cs.append(_scaled(_integrated(xw, ss, k), sign))
    if cosine:
        return _unmoving_where_infinite(cs, xs, s0)
    return _unmoving_where_infinite(ss, xs, c0)


def _log_series(us, order):
    """``[None, L_1, ..., L_K]``, the coefficients of log(u) after its value, for ``u_0``
    without zeros: u L' = u', so L_k = (u_k - (1/k) Σ_{j<k} j L_j u_{k-j}) / u_0."""
    inverse = 1 / us[0]
    ls, lw = [None], [None]
    for k in range(1, order + 1):
        inner = _scaled(_dot([(lw[j], us[k - j]) for j in range(1, k)]), 1 / k)
        top = _minus(us[k], inner)
        lk = None if top is None else top * inverse
        ls.append(lk)
        lw.append(_scaled(lk, k))
    return ls


def _pow_with(scalar_exponent):
    """``power(u, e)`` with the primitive that suits the exponent."""
    if scalar_exponent:
        return lambda u, e: ew.scalar_power_p(u, exponent=e)
    return lambda u, e: ew.power_p(u, e)


def _power_series(us, g0, a, order, pow_fn, factor=1):
    """The series of ``g = factor * u^a`` with value ``g0``: the recurrence where ``u_0``
    has no zero entry, else from the derivative ``g' = factor a u^(a-1) u'`` (the series
    of ``u^(a-1)`` one order lower, made the same way). ``pow_fn(u, e)`` is ``u^e`` (the
    branch the primitive takes); ``a`` a number or an array broadcasting with ``u``."""
    if order == 0 or all(u is None for u in us[1:order + 1]):
        return [g0] + [None] * order
    constant_exponent = isinstance(a, (int, float, np.number))
    if constant_exponent and a == 0:
        return [g0] + [None] * order
    if not _has_zero(us[0]) and not _has_underflow(g0):
        gs = _power_recurrence(us, g0, a, order, constant_exponent)
        if not _has_nonfinite(g0):
            return gs
        return _unmoving_where_infinite(gs, us, g0 * a / us[0])   # (its slope)
    lower = _power_series(us[:order], pow_fn(us[0], a - 1), a - 1, order - 1, pow_fn)
    slope = factor * a if constant_exponent else None
    ds = [_scaled(d, slope) if slope is not None else
          (None if d is None else families.times(d, a * factor)) for d in lower]
    return _with_slope(us, g0, ds, order)


def _power_recurrence(us, g0, a, order, constant_exponent):
    """g_k = Σ_j (a j - (k - j)) u_j g_{k-j} / (k u_0), for ``u_0`` without zeros."""
    inverse = 1 / us[0]
    gs = [g0]
    for k in range(1, order + 1):
        pairs = []
        for j in range(1, k + 1):
            if us[j] is None or gs[k - j] is None:
                continue
            if constant_exponent:
                weight = (a * j - (k - j)) / k
                if weight != 0:
                    pairs.append((_scaled(us[j], weight), gs[k - j]))
            else:
                pairs.append((us[j] * ((a * j - (k - j)) * (1 / k)), gs[k - j]))
        total = _dot(pairs)
        gs.append(None if total is None else total * inverse)
    return gs


def _quadratic_series(xs, order, sign):
    """``[None, sign (x²)_1, ..., sign (x²)_K]``: the series of ``c + sign x²`` after its
    value."""
    return [None] + [_scaled(_square_coefficient(xs, k), sign) for k in range(1, order + 1)]


def _with_slope(xs, y0, gs, order):
    """The series of y with y' = g x', given g's series to order K-1."""
    xw = _weighted(xs, order)
    ys = [y0] + [_integrated(xw, gs, k) for k in range(1, order + 1)]
    return _unmoving_where_infinite(ys, xs, gs[0])


# --- rule makers: linear maps ----------------------------------------------------------------


def linear(op, argnum=0, multiple_results=False):
    """The rule of an operation linear in argument ``argnum`` (the others, indices or
    parameters, are passed through as values): y_k = op(..., x_k, ...)."""
    def jet(primals, series, **params):
        out = op(*primals, **params)
        before, after = primals[:argnum], primals[argnum + 1:]
        coefficients = []
        for c in series[argnum]:
            coefficients.append(None if type(c) is Zero else op(*before, c, *after, **params))
        if not multiple_results:
            return out, _finish(out, [out, *coefficients])
        return out, [_finish(o, [o, *[None if c is None else c[i] for c in coefficients]])
                     for i, o in enumerate(out)]
    jet.linear_argument = argnum   # collapsed Taylor mode applies op to each coefficient
    return jet


def linear_combination(op, weights):
    """The rule of an elementwise map with constant partials ``weights`` (``add``: 1, 1;
    ``subtract``: 1, -1; 0 for an argument it does not depend on): y_k = Σ_i w_i x_{i,k}."""
    def jet(primals, series, **params):
        out = op(*primals, **params)
        ys = [out]
        for k in range(_order(series)):
            total = None
            for w, s in zip(weights, series):
                c = s[k]
                if w == 0 or type(c) is Zero:
                    continue
                if total is None:
                    total = _scaled(c, w)
                elif w == 1:
                    total = total + c
                elif w == -1:
                    total = total - c
                else:
                    total = total + c * w
            ys.append(total)
        return out, _finish(out, ys)
    return jet


def astype(op):
    """``astype``: linear to a float or complex dtype, constant (zero series) to another."""
    convert = linear(op)

    def jet(primals, series, dtype):
        if np.dtype(dtype).kind not in "fc":
            out = op(*primals, dtype=dtype)
            return out, (zero_like(out),) * _order(series)
        return convert(primals, series, dtype=dtype)
    return jet


def where(op):
    """``where(condition, x, y)``: the condition is a value; each coefficient is chosen as
    the value is (a zero one as 0.0)."""
    def jet(primals, series):
        condition = primals[0]
        out = op(*primals)
        ys = [out]
        for cx, cy in zip(series[1], series[2]):
            zx, zy = type(cx) is Zero, type(cy) is Zero
            ys.append(None if zx and zy else
                      op(condition, 0.0 if zx else cx, 0.0 if zy else cy))
        return out, _finish(out, ys)
    return jet


def concatenate(op):
    """``concatenate``: each coefficient joins the pieces' coefficients. A piece that is
    zero at an order where another is not becomes an array of zeros of its own shape (the
    output's coefficient is an array either way); an order where all are zero stays
    ``Zero``."""
    def jet(primals, series, **params):
        out = op(*primals, **params)
        ys = [out]
        for k in range(_order(series)):
            pieces = [s[k] for s in series]
            if all(type(c) is Zero for c in pieces):
                ys.append(None)
                continue
            ys.append(op(*[np.zeros(c.shape, c.dtype) if type(c) is Zero else c
                           for c in pieces], **params))
        return out, _finish(out, ys)
    return jet


# --- rule makers: products --------------------------------------------------------------------


def product(op):
    """``multiply``: the Cauchy product y_k = Σ_{i+j=k} a_i b_j (a constant factor
    contributes its value only; ``x * x`` is squared, each pair of terms once). Where the
    value is not finite, as the JVP's two products y' = a' b + b' a, each under the 0 x inf
    rule (``_unmoving_mask``)."""
    def jet(primals, series):
        a0, b0 = primals
        out = op(a0, b0)
        order = _order(series)
        a = _terms(a0, series[0])
        b = a if a0 is b0 and series[0] is series[1] else _terms(b0, series[1])
        if _has_nonfinite(out):
            return out, _finish(out, _product_rule(a, b, order))
        if b is a:
            ys = [out] + [_square_coefficient(a, k) for k in range(1, order + 1)]
        else:
            ys = [out] + [_cauchy(a, b, k) for k in range(1, order + 1)]
        return out, _finish(out, ys)
    return jet


def _product_rule(a, b, order):
    """The series of a b as (a b)' = a' b + b' a, each product zero where its value is 0 x
    inf: the fallback's structure, for values that are not finite."""
    aw, bw = _weighted(a, order), _weighted(b, order)
    mask_a, mask_b = _unmoving_mask(a, b[0]), _unmoving_mask(b, a[0])
    return [a[0] * b[0]] + [
        _plus(_masked(_integrated(aw, b, k), mask_a), _masked(_integrated(bw, a, k), mask_b))
        for k in range(1, order + 1)]


def multilinear(op, safe=None):
    """The rule of an operation linear in each of its arguments (``matmul``, ``einsum``,
    ``convolve``): y_k is the sum of ``op`` over the choices of one coefficient per
    argument whose orders add up to k, zero ones skipped (for two arguments, the Cauchy
    product). ``safe(contract, *operands)``: ``contract`` under the 0 x inf rule
    (``linalg.rule_contraction``), used term by term when the plain sum holds NaN."""
    def jet(primals, series, **params):
        out = op(*primals, **params)
        order = _order(series)
        terms = [_terms(p, s) for p, s in zip(primals, series)]
        available = [[0] + [j for j in range(1, order + 1) if t[j] is not None]
                     for t in terms]
        ys = [out]
        for k in range(1, order + 1):
            choices = list(_compositions(available, k))
            ys.append(_contraction_sum(op, params, safe, [
                [t[i] for t, i in zip(terms, choice)] for choice in choices]))
        return out, _finish(out, ys)
    jet.linear_argument = "each"   # linear in any one argument while the others are held
    return jet


def _compositions(available, k):
    """The tuples ``(i_1, ..., i_n)``, ``i_m`` in ``available[m]``, adding up to ``k``."""
    if len(available) == 1:
        if k in available[0]:
            yield (k,)
        return
    for i in available[0]:
        if i > k:
            break
        for rest in _compositions(available[1:], k - i):
            yield (i, *rest)


def _contraction_sum(op, params, safe, operand_lists):
    if not operand_lists:
        return None
    total = None
    for operands in operand_lists:
        term = op(*operands, **params)
        total = term if total is None else total + term
    if safe is None or not _has_nan(total):
        return total
    total = None
    for operands in operand_lists:
        term = safe(lambda *ops: op(*ops, **params), *operands)
        total = term if total is None else total + term
    return total


def quotient(op):
    """``divide``: y_k = (a_k - Σ_j b_j y_{k-j}) / b_0. Where ``b_0`` has a zero entry the
    rule declines (``NotImplemented``), and the series comes from the JVP rule, whose
    0 x inf and 0 / 0 conventions it then follows."""
    def jet(primals, series):
        a0, b0 = primals
        out = op(a0, b0)
        order = _order(series)
        a, b = _terms(a0, series[0]), _terms(b0, series[1])
        if _has_zero(b0):
            return NotImplemented
        inverse = 1 / b0
        ys = [out]
        for k in range(1, order + 1):
            top = _minus(a[k], _dot([(b[j], ys[k - j]) for j in range(1, k + 1)]))
            ys.append(None if top is None else top * inverse)
        return out, _finish(out, ys)
    return jet


# --- rule makers: elementwise functions of one argument ---------------------------------------


def _unary(series_of):
    """The rule of an elementwise function of one argument: ``series_of(xs, out, order,
    **params)`` gives its series from the argument's (``xs[0]`` its value) and the value
    ``out`` the primitive computed."""
    def make(op):
        def jet(primals, series, **params):
            (x0,), (xseries,) = primals, series
            out = op(x0, **params)
            order = len(xseries)
            return out, _finish(out, series_of(_terms(x0, xseries), out, order, **params))
        return jet
    return make


def exponential(rate=1.0, shift=0):
    """``exp`` (``exp2``: rate log 2; ``expm1``: shift 1, the series of ``out + 1``)."""
    def series_of(xs, out, order):
        ys = _exp_series(xs, out + shift if shift else out, order, rate)
        return [out] + ys[1:]
    return _unary(series_of)


def _sine(hyperbolic, cosine):
    def series_of(xs, out, order):
        x0 = xs[0]
        if hyperbolic:
            s0, c0 = (ew.sinh_p(x0), out) if cosine else (out, ew.cosh_p(x0))
        else:
            s0, c0 = (ew.sin_p(x0), out) if cosine else (out, ew.cos_p(x0))
        return _sin_cos_series(xs, s0, c0, order, hyperbolic, cosine)
    return _unary(series_of)


sine = _sine(False, False)
cosine = _sine(False, True)
hyperbolic_sine = _sine(True, False)
hyperbolic_cosine = _sine(True, True)


def logarithm(slope, shift=0, scale=1.0):
    """``log`` of ``u = x + shift`` times ``scale`` (``log1p``: shift 1; ``log2``: scale
    1 / log 2). ``slope(x)`` is the primitive's derivative, the value of the slope series
    where ``u_0`` has zeros (the series is then built from it, as for a power)."""
    def series_of(xs, out, order):
        us = [xs[0] + shift if shift else xs[0], *xs[1:]]
        if _has_zero(us[0]):
            slopes = _power_series(us[:order], slope(xs[0]), -1, order - 1,
                                   _pow_with(True), factor=scale)
            return _with_slope(us, out, slopes, order)
        return [out] + [_scaled(c, scale) for c in _log_series(us, order)[1:]]
    return _unary(series_of)


def _power_rule(exponent_of, pow_fn, square_at_two=True):
    def series_of(xs, out, order, **params):
        a = exponent_of(params)
        if isinstance(a, (int, float, np.number)):
            if a == 0:
                return [out] + [None] * order
            if a == 1:
                return [out, *xs[1:]]
            if a == 2 and square_at_two:   # exact at x_0 = 0 and cheaper
                return [out] + [_square_coefficient(xs, k) for k in range(1, order + 1)]
        return _power_series(xs, out, a, order, pow_fn)
    return _unary(series_of)


#: ``scalar_power``: ``x ** exponent`` for a constant number ``exponent``.
scalar_power = _power_rule(lambda params: params["exponent"], _pow_with(True))
#: ``square``: the Cauchy product of x with itself.
square = _power_rule(lambda params: 2, None)
#: ``sqrt``: x^(1/2).
square_root = _power_rule(lambda params: 0.5, _pow_with(True))
#: ``reciprocal``: x^(-1).
reciprocal = _power_rule(lambda params: -1, _pow_with(True))


def cube_root(real_cbrt):
    """``cbrt``: x^(1/3) with the real cube root of a negative x (``real_cbrt``, the
    primitive); the powers of the derivative series are powers of it."""
    def pow_fn(u, e):
        return ew.scalar_power_p(real_cbrt(u), exponent=round(3 * e))
    return _power_rule(lambda params: 1 / 3, pow_fn)


def power(op):
    """``power(x, y)``, elementwise. A constant exponent (zero series): the power
    recurrence. A moving one: exp(y log x) where ``x_0 > 0`` (``x_0 != 0`` for a complex
    result), and elsewhere the power with the exponent held at ``y_0``, as the JVP rule
    does there (its partial in ``y`` is 0 where ``x <= 0``)."""
    def jet(primals, series):
        x0, y0 = primals
        out = op(x0, y0)
        order = _order(series)
        xs, ys = _terms(x0, series[0]), _terms(y0, series[1])
        held = _power_series(xs, out, y0, order, _pow_with(False))
        if all(y is None for y in ys[1:]):
            return out, _finish(out, held)
        complex_out = dtype_of(out).kind == "c"
        has_log = ew.not_equal_p(x0, 0) if complex_out else ew.greater_p(x0, 0)
        everywhere = concrete_test(has_log, lambda v: bool(np.all(v)))
        if not everywhere and not concrete_test(has_log, lambda v: bool(np.any(v))):
            return out, _finish(out, held)
        moving = _exponential_power(xs, ys, out, has_log, everywhere, order)
        if everywhere:
            return out, _finish(out, moving)
        return out, _finish(out, [out] + [_select(has_log, m, h)
                                          for m, h in zip(moving[1:], held[1:])])
    return jet


def _exponential_power(xs, ys, out, has_log, everywhere, order):
    """The series of exp(y log x), from the entries where ``has_log`` holds (the base
    there; 1 elsewhere, so that its logarithm is finite)."""
    x0 = xs[0]
    if isinstance(x0, (int, float, complex)) or dtype_of(x0) != dtype_of(out):
        x0 = ew.astype(np.asarray(x0) if isinstance(x0, (int, float, complex)) else x0,
                       dtype_of(out))   # log of the base in the result's dtype
    if everywhere:
        base = [x0, *xs[1:]]
    else:
        base = [ew.where_p(has_log, x0, 1.0)] + [
            None if x is None else ew.where_p(has_log, x, 0.0) for x in xs[1:]]
    logs = _log_series(base, order)
    logs[0] = ew.log_p(base[0])
    exponent = [_cauchy(ys, logs, k) for k in range(1, order + 1)]
    return _exp_series([None, *exponent], out, order)


def _select(mask, a, b):
    if a is None and b is None:
        return None
    return ew.where_p(mask, 0.0 if a is None else a, 0.0 if b is None else b)


def algebraic_slope(slope, base, sign, exponent, factor=1):
    """A function whose slope is a power of a quadratic, g = factor (c + sign x²)^exponent
    (``arcsin``: (1 - x²)^(-1/2); ``arctan``: (1 + x²)^(-1); ``arccos``: factor -1).
    ``slope(x)`` is the primitive's derivative (g's value) and ``base(x)`` the quadratic's
    value, written as the primitive's rule writes them."""
    def series_of(xs, out, order):
        us = [base(xs[0]), *_quadratic_series(xs, order - 1, sign)[1:]]
        gs = _power_series(us, slope(xs[0]), exponent, order - 1, _pow_with(True), factor)
        return _with_slope(xs, out, gs, order)
    return _unary(series_of)


def gaussian_slope(slope, sign):
    """A function whose slope is a multiple of exp(sign x²) (``erf``, ``erfc``: sign -1;
    ``erfi``: +1); ``slope(x)`` is its value. The slope g solves g' = g (sign x²)'."""
    def series_of(xs, out, order):
        gs = _exp_series(_quadratic_series(xs, order - 1, sign), slope(xs[0]), order - 1)
        return _with_slope(xs, out, gs, order)
    return _unary(series_of)


def output_slope(slope, linear_weight, square_weight):
    """A function whose slope is a polynomial of its value, g = c + w1 y + w2 y²
    (``tanh``: 1 - y²; ``tan``: 1 + y²; ``expit``: y - y²); ``slope(x, out)`` is g's
    value as the primitive's rule computes it. g_{k-1} needs y up to k-1 only."""
    def series_of(xs, out, order):
        xw = _weighted(xs, order)
        ys, gs = [out], [slope(xs[0], out)]
        for k in range(1, order + 1):
            ys.append(_integrated(xw, gs, k))
            if k < order:
                gs.append(_plus(_scaled(ys[k], linear_weight) if linear_weight else None,
                                _scaled(_square_coefficient(ys, k), square_weight)))
        return ys
    return _unary(series_of)


# The modules whose primitives the rules bind when they run (``where``, ``broadcast_to``,
# ``cos`` ...) build their own primitives' rules with the makers above while they are
# imported, so they are imported after the makers exist: importing them first would run
# their makers' calls against this module half made.
from . import elementwise as ew  # noqa: E402
from . import families, shape  # noqa: E402
