"""Logistic and information-theoretic functions as primitives: ``expit``, ``logit``,
``log_expit``, ``xlogy``, ``xlog1py``, ``entr``, ``rel_entr``, ``kl_div``, ``huber``,
``pseudo_huber``; and the compositions over axes ``softmax``, ``log_softmax`` and
``logsumexp`` (with ``b``), which need no rules of their own.

Conventions at special points (the same in both engines)
--------------------------------------------------------
=====================  =====================================================================
function               convention
=====================  =====================================================================
xlogy(x, y)            at x == 0: d/dx = log(y) (JAX's), d/dy = x / y = 0, also at y == 0
xlog1py(x, y)          at x == 0: d/dx = log1p(y), d/dy = 0, also at y == -1
huber(delta, r)        at |r| == delta: d/dr = r, d/d delta = 0 (both sides agree: C^1)
pseudo_huber(delta,r)  at delta == 0 (value 0): the one-sided limits from delta > 0: d/d delta
                       = |r|, d2/d delta2 = -2, d2/d delta dr = sign(r); 0 at r == delta == 0
entr, rel_entr,        at x == 0 the derivative in x is the one-sided limit, -inf (+inf for
kl_div                 entr); rel_entr/kl_div have d/dy = 0 / 1 there; entr' = 0 for x < 0
                       (entr is the constant -inf there)
logsumexp              without return_sign a negative sum gives nan, as in SciPy
=====================  =====================================================================
logit at 0 and 1 has infinite derivatives: the rules give the limit.
"""


import numpy as np

from ..core.zeros import dtype_of, shape_of
from . import elementwise as ew
from . import reductions, shape, ufuncs
from . import taylor_arithmetic as ta
from .control import stop_gradient
from .special_helpers import _weak, sc, special_function

__all__ = [
    "expit", "logit", "log_expit", "logsumexp", "softmax", "log_softmax", "xlogy",
    "xlog1py", "entr", "rel_entr", "kl_div", "huber", "pseudo_huber", "softplus",
]

# --- logistic and information-theoretic functions -----------------------------------------



def _expit_slope(x, out):
    return out * expit_p(-x)


expit_p, expit = special_function(
    "expit", sc.expit, {"x": _expit_slope}, "The logistic sigmoid ``1 / (1 + exp(-x))``.")
expit_p.jet = ta.output_slope(_expit_slope, 1, -1)(expit_p)   # Taylor mode: g = y - y**2
logit_p, logit = special_function(
    "logit", sc.logit,
    {"x": lambda x: 1 / (x * (1 - x))},
    "The inverse of ``expit``: ``log(p / (1 - p))``.")
log_expit_p, log_expit = special_function(
    "log_expit", sc.log_expit,
    {"x": lambda x: expit_p(-x)},
    "``log(expit(x))``, accurate for large ``|x|``.")


def _xdivy_impl(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.equal(x, 0), 0.0, np.true_divide(x, y))


# xdivy(x, y) = x / y, and 0 where x == 0 (also at y == 0: the 0 x inf rule for x * (1/y)).
# The partial in x is 1/y everywhere (+inf at y = 0, the one-sided limit), so it is the
# derivative in y of log(y): the Hessians of xlogy and its relatives are symmetric at x = 0.
# The partial in y, -x / y**2, is -xdivy(out, y): 0 at x == 0, to every order.
xdivy_p, _xdivy = special_function(
    "xdivy", _xdivy_impl, {"x": lambda y: 1 / y, "y": lambda y, out: -xdivy_p(out, y)},
    "``x / y``, 0 where x == 0.")

# At x == 0 the partial in y is 0 and the partial in x is log(y) (-inf at y == 0); the mixed
# derivative is 1/y in both orders. y + 0.0: at y == -0.0 the slope of log is +inf (as at
# +0.0), and so is the partial in x of x / y.
xlogy_p, xlogy = special_function(
    "xlogy", sc.xlogy,
    {"x": lambda y: ew.log_p(y),
     "y": lambda x, y: xdivy_p(x, y + 0.0)},
    "``x * log(y)``, 0 where x == 0. Derivatives at x == 0 follow "
    "JAX: ``log(y)`` in x, 0 in y.")
xlog1py_p, xlog1py = special_function(
    "xlog1py", sc.xlog1py,
    {"x": lambda y: ew.log1p_p(y),
     "y": lambda x, y: xdivy_p(x, 1 + y)},
    "``x * log1p(y)``, 0 where x == 0 (derivatives as ``xlogy``).")


def _entr_slope(x):
    """``-(log x + 1)`` for ``x >= 0`` (+inf at 0, the one-sided limit); 0 for ``x < 0``,
    where ``entr`` is the constant ``-inf``."""
    negative = ew.less_p(x, 0)
    return ew.where_p(negative, 0.0, -(ew.log_p(ew.where_p(negative, 1.0, x)) + 1))


# rel_entr = x log(x / y), kl_div = rel_entr - x + y. Their partial in x is written
# log(x) - log(y) (not log(x / y)) so that its derivative in y is -1/y also at x == 0 (through
# x / y it would be log'(0) * 0 = 0 there), matching the derivative in x of -xdivy(x, y).
entr_p, entr = special_function(
    "entr", sc.entr,
    {"x": lambda x: _entr_slope(x)},
    "Elementwise entropy ``-x log x`` (0 at 0, -inf for x < 0).")
rel_entr_p, rel_entr = special_function(
    "rel_entr", sc.rel_entr,
    {"x": lambda x, y: ew.log_p(x) - ew.log_p(y) + 1,
     "y": lambda x, y: -xdivy_p(x, y)},
    "Elementwise relative entropy ``x log(x / y)``.")
kl_div_p, kl_div = special_function(
    "kl_div", sc.kl_div,
    {"x": lambda x, y: ew.log_p(x) - ew.log_p(y),
     "y": lambda x, y: 1 - xdivy_p(x, y)},
    "Elementwise ``x log(x / y) - x + y``.")


def _huber_inside(delta, r):
    return ew.less_equal_p(ew.abs_p(r), delta)


huber_p, huber = special_function(
    "huber", sc.huber,
    {"delta": lambda delta, r: ew.where_p(_huber_inside(delta, r), 0.0, ew.abs_p(r) - delta),
     "r": lambda delta, r: ew.where_p(_huber_inside(delta, r), r, delta * ew.sign(r))},
    "Huber loss ``huber(delta, r)``, differentiable in both.")


def _pseudo_huber_delta(delta, r):
    # d/d delta [delta^2 (s - 1)] = delta (s - 1)^2 / s with s = sqrt(1 + (r/delta)^2),
    # written without the cancellation in s - 1: r^4 / (q (q + delta)^2), q = hypot. At
    # delta = 0 (where SciPy's value is 0 for every r) that is the one-sided limit from
    # delta > 0, |r| (pseudo_huber ~ delta |r| - delta^2), as ``huber``'s; ``delta`` enters
    # as itself there (not |delta|), so the second derivatives are the one-sided -2 and
    # sign(r) as well. At r = delta = 0: 0 (the value is 0 along both axes).
    side = _delta_side(delta)
    origin, q = _hypot(delta, r)
    ratio = ew.square_p(ew.square_p(r)) / (q * ew.square_p(q + side * delta))
    return ew.where_p(origin, 0.0, side * ratio)


def _pseudo_huber_r(delta, r):
    # r |delta| / q, with |delta| as delta * side (the one-sided derivative at delta = 0)
    origin, q = _hypot(delta, r)
    return ew.where_p(origin, 0.0, r * (_delta_side(delta) * delta) / q)


def _delta_side(delta):
    """-1 for delta < 0 (where SciPy's pseudo_huber is inf), else +1."""
    side = ew.where_p(ew.less_p(delta, 0), -1.0, 1.0)
    return side if dtype_of(side) == dtype_of(delta) else ew.astype(side, dtype_of(delta))


def _hypot(delta, r):
    """``(origin, q)``: whether ``delta = r = 0``, and ``sqrt(delta^2 + r^2)`` (1 there, so
    that no infinity enters the branch a ``where`` discards)."""
    squared = ew.square_p(delta) + ew.square_p(r)
    origin = ew.equal_p(squared, 0)
    return origin, ew.sqrt_p(ew.where_p(origin, 1.0, squared))


pseudo_huber_p, pseudo_huber = special_function(
    "pseudo_huber", sc.pseudo_huber,
    {"delta": _pseudo_huber_delta, "r": _pseudo_huber_r},
    "Pseudo-Huber loss ``delta**2 (sqrt(1 + (r / delta)**2) - 1)``.")


# --- softmax and logsumexp: compositions over axes ----------------------------------------------


def _axes(x, axis):
    return reductions.normalize_axes(axis, len(shape_of(x)))


def softmax(x, axis=None):
    """``exp(x) / sum(exp(x), axis)``, computed stably (all axes for ``axis=None``)."""
    (x,) = _weak((x,), (), ())
    lse = reductions.logsumexp_p(x, axis=_axes(x, axis), keepdims=True)
    return ew.exp_p(x - lse)


def log_softmax(x, axis=None):
    """``x - logsumexp(x, axis, keepdims=True)``: the log of ``softmax``."""
    (x,) = _weak((x,), (), ())
    return x - reductions.logsumexp_p(x, axis=_axes(x, axis), keepdims=True)


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """``log(sum(b * exp(a), axis))`` computed stably, as ``scipy.special.logsumexp``:
    differentiable in ``a`` and in the scale factors ``b``. With ``return_sign=True`` the
    result is ``(log(abs(s)), sign(s))``; otherwise a negative sum gives nan."""
    if b is None:
        (a,) = _weak((a,), (), ())
    else:
        a, b = _weak((a, b), (), ())
        out_shape = np.broadcast_shapes(shape_of(a), shape_of(b))
        a = shape.broadcast_to(a, out_shape)
    axes = _axes(a, axis)
    if b is None and not return_sign:
        return reductions.logsumexp_p(a, axis=axes, keepdims=bool(keepdims))
    # log|sum(b exp(a - peak))| + peak; the peak shifts values only (no derivative).
    peak = reductions.max_p(stop_gradient(a), axis=axes, keepdims=True)
    peak = ew.where_p(ew.isfinite_p(peak), peak, 0.0)
    scaled = ew.exp_p(a - peak)
    total = reductions.sum_p(scaled if b is None else b * scaled, axis=axes, keepdims=True)
    sign = ew.sign(total)
    nonzero = ew.not_equal_p(total, 0)
    out = ew.where_p(nonzero, ew.log_p(ew.abs_p(ew.where_p(nonzero, total, 1.0))), -np.inf) + peak
    if not keepdims:
        kept = tuple(d for i, d in enumerate(shape_of(out)) if i not in axes)
        out = shape.reshape(out, kept)
        sign = shape.reshape(sign, kept)
    if return_sign:
        return out, sign
    return ew.where_p(ew.less_p(sign, 0), np.nan, out)


def softplus(x, **kwargs):
    """``log(1 + exp(x))``, as ``scipy.special.softplus`` (NumPy's ``logaddexp(0, x)``);
    its derivative is ``expit(x)``. Keywords go to the ufunc as in SciPy."""
    return ufuncs.logaddexp(0.0, x, **kwargs) if kwargs else ufuncs.logaddexp(0.0, x)
