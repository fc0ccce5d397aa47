"""Structural (sparsity) rules for the elementwise primitives, set on them in one loop.

TO BE MOVED into the elementwise builders: the builders of ``families.py``,
``elementwise.py``, ``ufuncs.py`` and ``special_helpers.py`` are being rewritten, so this
module sets ``prim.sparsity`` on the primitives they registered, found by name in
``core.primitive.PRIMITIVES``. Once the builders settle, each builder passes
``sparsity=sparsity_rules.elementwise_sparsity()`` (or with the ``select`` of a
piecewise primitive, below) to the ``Primitive`` it makes, and this module goes away.

An elementwise primitive's output entry depends on the entry each argument broadcasts to
it (``sparsity_rules.elementwise_sparsity``). A few have a partial that is identically
zero in one argument (``copysign`` in the sign's source): those arguments are dropped.
Piecewise ones (``where``, ``maximum``, ``clip`` ...) have a local rule choosing the
branch taken at the given values.
"""

import numpy as np

from ..core.concrete import underlying
from ..core.primitive import PRIMITIVES
from . import complex as _complex  # noqa: F401 (registers real, imag, angle)
from . import elementwise as _elementwise  # noqa: F401
from . import sparsity_rules as sr
from . import special as _special  # noqa: F401 (every special_*.py)
from . import special_series as _special_series  # noqa: F401 (hyp1f1, hyp2f1, zeta)
from . import ufuncs as _ufuncs  # noqa: F401

# The elementwise primitives with a derivative (the nondiff ones need no rule), by name.
UNARY = (
    "negative", "square", "sqrt", "conj", "abs", "exp", "log", "log1p", "expm1", "sin",
    "cos", "tan", "arctan", "sinh", "cosh", "tanh", "sin_half_pi_square",
    "cos_half_pi_square", "arcsin", "arccos", "arcsinh", "arccosh", "arctanh", "exp2", "log2",
    "log10", "reciprocal", "cbrt", "deg2rad", "rad2deg", "modf_fraction", "fabs",
    "j0", "j1", "y0", "y1", "i0", "i1", "i0e", "i1e", "k0", "k1", "k0e", "k1e", "erf", "erfc",
    "erfinv", "erfcinv", "erfcx", "erfi", "dawsn", "ndtr", "ndtri", "log_ndtr", "ndtri_exp",
    "digamma", "gammaln", "loggamma", "gamma", "rgamma", "expit", "logit", "log_expit",
    "entr", "exp1", "expi", "exprel", "spence", "cosm1", "exp10", "ellipk", "ellipe",
    "ellipkm1", "wrightomega", "riemann_zeta", "real", "imag", "angle", "astype",
    "scalar_power", "sinc", "nan_to_num", "exprel_derivative", "lambertw",
)
BROADCASTING = (
    "add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "where", "clip",
    "jv", "yv", "iv", "kv", "ive", "kve", "owens_t", "polygamma", "beta", "betaln", "poch",
    "binom", "xdivy", "xlogy", "xlog1py", "rel_entr", "kl_div", "huber", "pseudo_huber",
    "gammainc_da", "gammainc", "gammaincc", "gamma_log_density", "beta_log_density",
    "gammaincinv", "gammainccinv", "betainc_partial", "betainc", "betaincc", "betaincinv",
    "betainccinv", "expn", "boxcox", "boxcox1p", "inv_boxcox", "inv_boxcox1p", "hypot",
    "arctan2", "logaddexp", "logaddexp2", "ldexp", "fmod", "remainder", "copysign",
    "nextafter", "heaviside", "fmax", "fmin", "hyp1f1_partial", "hyp1f1", "hyp2f1_partial",
    "hyp2f1", "zeta_partial", "zeta",
)
SEVERAL_OUTPUTS = ("sici", "shichi", "fresnel")   # each output elementwise in the input
# arguments in which the derivative is identically zero
ZERO_PARTIALS = {"copysign": (1,), "heaviside": (0,), "nextafter": (1,)}



def _values(args):
    return [np.asarray(underlying(a)) for a in args]


def _where_select(args, out, **params):
    cond = _values(args[:1])[0].astype(bool)
    return [True, cond, ~cond]


def _larger(args, out, **params):    # maximum, fmax: the winner (both on a tie)
    x, y = _values(args)
    return [~(x < y), ~(y < x)]


def _smaller(args, out, **params):   # minimum, fmin
    x, y = _values(args)
    return [~(x > y), ~(y > x)]


def _clip_select(args, out, **params):
    x, low, high = _values(args)
    above = np.maximum(x, low) > high
    inside = x >= low
    return [inside & ~above, ~inside & ~above, above]


def _heaviside_select(args, out, **params):   # the value at 0 matters only at 0
    x, _ = _values(args)
    return [False, x == 0]


SELECT = {"where": _where_select, "maximum": _larger, "fmax": _larger,
          "minimum": _smaller, "fmin": _smaller, "clip": _clip_select,
          "heaviside": _heaviside_select}
DECIDING = {"where": (0,), "heaviside": (0,)}   # the arguments a selection reads alone


def _dropping(rule, zero):
    def dropped(args, out, local, **params):
        result = list(rule(args, out, local, **params))
        for i in zero:
            result[i] = None
        return tuple(result)

    return dropped


def _per_output(rule):
    def several(args, outs, local, **params):
        return tuple(rule(args, out, local, **params) for out in outs)

    return several


def wire():
    """Set the sparsity rule of every elementwise primitive listed here that is registered
    and has none yet; returns the names set."""
    done = []
    for name in UNARY + BROADCASTING + SEVERAL_OUTPUTS:
        prim = PRIMITIVES.get(name)
        if prim is None or prim.sparsity is not None:
            continue
        rule = sr.elementwise_sparsity(SELECT.get(name), DECIDING.get(name))
        if name in ZERO_PARTIALS:
            rule = _dropping(rule, ZERO_PARTIALS[name])
        if name in SEVERAL_OUTPUTS:
            rule = _per_output(rule)
        prim.sparsity = rule
        done.append(name)
    return done


WIRED = wire()
