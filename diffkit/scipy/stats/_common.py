"""What every distribution of ``diffkit.scipy.stats`` shares: argument binding as SciPy's,
the masks that keep invalid parameters out of every branch, and the methods computed by
SciPy itself (``rvs``, ``fit``, ``expect``, ...), which take plain values only.

A method computed by SciPy raises :class:`diffkit.errors.NoRuleError` when one of its
arguments is traced (differentiated or batched by a diffkit transformation), naming the
method, the distribution, the argument and what to do; with plain arguments it returns
SciPy's result unchanged (``rvs`` draws SciPy's exact numbers for the same seed).
"""

import inspect
import math

import numpy as np
import scipy.stats

from ... import numpy as dnp
from ...core.concrete import holds_tracer
from ...core.trace import Tracer
from ...errors import NoRuleError

_LOG_2 = math.log(2.0)
_LOG_PI = math.log(math.pi)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_NAN = float("nan")
_INF = float("inf")


def _float(x):
    """Plain inputs as float arrays (integers promoted); traced values as they are."""
    if isinstance(x, (bool, int, float, complex, list, tuple, np.ndarray, np.generic)):
        a = np.asarray(x)
        return a.astype(np.float64) if a.dtype.kind in "biu" else a
    return x


def _int(x):
    """Integer-valued arguments (``k``, ``n``): no derivative, as float arrays."""
    return dnp.stop_gradient(_float(x))


def _and(*conditions):
    out = conditions[0]
    for c in conditions[1:]:
        out = dnp.logical_and(out, c)
    return out


def _log(x):
    """``log`` with ``log(0) = -inf``, nan for negative or nan ``x``, and no warning."""
    positive = x > 0
    return dnp.where(positive, dnp.log(dnp.where(positive, x, 1.0)),
                     dnp.where(x == 0, -_INF, _NAN))


def _bind(where, names, required, args, kwds):
    """SciPy's argument binding: positional then keyword arguments named ``names``, with
    ``required`` ones (the shape parameters) mandatory. Returns a dict name -> value."""
    if len(args) > len(names):
        raise TypeError(f"{where}() takes at most {len(names) + 1} positional arguments "
                        f"({len(args) + 1} given)")
    given = dict(zip(names, args))
    for key, value in kwds.items():
        if key not in names:
            raise TypeError(f"{where}() got an unexpected keyword argument {key!r}")
        if key in given:
            raise TypeError(f"{where}() got multiple values for {key!r}")
        given[key] = value
    missing = [n for n in required if n not in given]
    if missing:
        raise TypeError(f"{where}() missing required argument(s): "
                        f"{', '.join(map(repr, missing))}")
    return given


def _order(order):
    """The order of a moment: a plain non-negative integer, as SciPy requires."""
    if isinstance(order, Tracer) or not (np.ndim(order) == 0 and float(order) == int(order)
                                         and order >= 0):
        raise ValueError(f"Moment must be an integer (a plain non-negative int), got {order!r}")
    return int(order)


def _raw_moment(n, mu, mu2, g1, g2, munp):
    """The ``n``-th raw moment from the mean, variance, skewness and excess kurtosis (as
    SciPy, for ``n <= 4``: same values, nan and inf where those are), else ``munp(n)``."""
    if n == 0:
        return 1.0
    if n == 1:
        return mu
    if n == 2:
        return mu2 + mu * mu
    if n == 3:
        return g1 * mu2 ** 1.5 + 3 * mu * mu2 + mu ** 3
    if n == 4:
        return (g2 + 3.0) * mu2 ** 2 + 4 * mu * g1 * mu2 ** 1.5 + 6 * mu * mu * mu2 + mu ** 4
    return munp(n)


def _shifted_moment(n, loc, scale, raw):
    """``E[(loc + scale Y)^n] = sum_k C(n, k) loc^(n-k) scale^k E[Y^k]``; ``raw(k)`` is
    ``E[Y^k]``. Powers of ``loc`` and ``scale`` are integer powers (exact derivatives at 0).
    A plain ``loc == 0`` gives ``scale^n E[Y^n]`` alone (as SciPy: no ``0 * inf`` terms from
    lower moments that do not exist)."""
    if not holds_tracer(loc) and not np.any(loc):
        return scale ** n * raw(n) + np.zeros(np.shape(loc))   # loc's shape broadcast in
    out = loc ** n
    for k in range(1, n + 1):
        out = out + math.comb(n, k) * (loc ** (n - k) if n > k else 1.0) * scale ** k * raw(k)
    return out


def _broadcast(value, *params):
    """``value`` broadcast to the shape of all ``params`` together (SciPy's result shape)."""
    shape = np.broadcast_shapes(dnp.shape(value), *map(dnp.shape, params))
    return value if dnp.shape(value) == shape else dnp.broadcast_to(value, shape)


def _select_moments(moments, values):
    """``stats(moments=...)``: the requested ones of ``values`` (a dict 'm', 'v', 's', 'k'
    -> value) in SciPy's order; one value alone, several as a tuple."""
    if not isinstance(moments, str) or not moments or set(moments) - set("mvsk"):
        raise ValueError(f"moments must be a string of the letters 'm', 'v', 's', 'k', "
                         f"got {moments!r}")
    out = tuple(values[c] for c in "mvsk" if c in moments)
    return out[0] if len(out) == 1 else out


# --- methods computed by SciPy ---------------------------------------------------------------


def _traced_argument(args, kwds, names):
    """The name of the first traced argument (``names``: the positional ones'), or None."""
    for i, value in enumerate(args):
        if holds_tracer(value):
            return repr(names[i]) if i < len(names) else f"positional argument {i}"
    for key, value in kwds.items():
        if holds_tracer(value):
            return repr(key)
    return None


def _plain_only(where, args, kwds, names=()):
    """Raise NoRuleError if an argument of ``where`` (e.g. 'norm.rvs') is traced."""
    name = _traced_argument(args, kwds, names)
    if name is not None:
        raise NoRuleError(
            f"diffkit.scipy.stats.{where} is computed by SciPy and has no derivative or "
            f"batching rule, but its argument {name} is traced (differentiated or batched "
            f"by a diffkit transformation). Call it with plain values: compute it outside "
            f"the transformed function, or hold the argument fixed with dk.stop_gradient "
            f"(under grad/jvp).")


def _scipy_method(method, names=()):
    """A method that checks its arguments are plain (``names``: the positional ones) and
    calls the same method of SciPy's distribution, with SciPy's signature."""

    def call(self, *args, **kwds):
        _plain_only(f"{self.name}.{method}", args, kwds, self._names(names))
        return getattr(self._scipy, method)(*args, **kwds)

    call.__name__ = call.__qualname__ = method
    call.computed_by_scipy = True   # no derivative: docs/make_coverage.py leaves it out
    call.__doc__ = (f"SciPy's ``{method}``, called with plain values (no derivative: a "
                    "traced argument raises ``NoRuleError``).")
    return call


def _scipy_signature(cls, method, scipy_obj):
    """Give ``cls.method`` the signature of ``scipy_obj.method`` (with ``self`` first)."""
    try:
        sig = inspect.signature(getattr(scipy_obj, method))
    except (TypeError, ValueError):
        return
    self_param = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    getattr(cls, method).__signature__ = sig.replace(
        parameters=[self_param, *sig.parameters.values()])


def _delegated(attr):
    """A read-only attribute of SciPy's distribution (``a``, ``badvalue``, ``shapes``...)."""
    return property(lambda self: getattr(self._scipy, attr),
                    doc=f"SciPy's ``{attr}`` of this distribution.")


def _random_state_property(owner="_scipy"):
    """The ``random_state`` property, read from and written to the attribute ``owner`` of
    the instance (SciPy's twin, or the distribution a frozen one fills in)."""
    def get(self):
        return getattr(self, owner).random_state

    def set_(self, seed):
        getattr(self, owner).random_state = seed

    return property(get, set_, doc="The random state ``rvs`` draws from when given none "
                                   "(SciPy's, settable with a seed or a Generator).")


def _new_scipy(name, seed=None):
    """A fresh instance of SciPy's distribution ``name``, with its own ``random_state``
    (as SciPy's frozen distributions make one)."""
    base = getattr(scipy.stats, name)
    ctor = getattr(base, "_updated_ctor_param", None)
    if ctor is not None:
        obj = type(base)(**ctor())
        if seed is not None:
            obj.random_state = seed
        return obj
    return type(base)(seed)


class _Distribution:
    """Base of every distribution object: its SciPy twin (made on first use), SciPy's
    plain attributes, and the SciPy-computed methods listed in ``_SCIPY_METHODS`` (name ->
    names of the positional arguments, for the error message; ``"*params"`` stands for the
    distribution's parameters)."""

    name = ""
    _ATTRIBUTES = ()
    _SCIPY_METHODS = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if not cls.name:
            return
        twin = getattr(scipy.stats, cls.name)
        for method, names in cls._SCIPY_METHODS.items():
            if method not in cls.__dict__:
                setattr(cls, method, _scipy_method(method, names))
            _scipy_signature(cls, method, twin)
        for attr in cls._ATTRIBUTES:
            if attr not in cls.__dict__:
                setattr(cls, attr, _delegated(attr))

    def __init__(self, seed=None):
        self._seed = seed
        self._scipy_obj = None

    def _param_names(self):
        """The names of the parameters (shapes, loc, scale) in SciPy's positional order."""
        return ()

    def _names(self, names):
        """``names`` with ``"*params"`` standing for ``_param_names()``."""
        out = []
        for n in names:
            out.extend(self._param_names() if n == "*params" else (n,))
        return tuple(out)

    @property
    def _scipy(self):
        if self._scipy_obj is None:
            self._scipy_obj = _new_scipy(self.name, self._seed)
        return self._scipy_obj

    random_state = _random_state_property()

    def __repr__(self):
        return f"<diffkit.scipy.stats.{self.name}>"


class _Univariate(_Distribution):
    """The summaries every univariate distribution derives from its ``_summaries(method,
    args, kwds) -> (values, given)`` (``values`` maps 'm', 'v', 's', 'k' to closed forms):
    differentiable in the distribution's continuous parameters."""

    def __call__(self, *args, **kwds):
        """The distribution with its parameters fixed, as ``freeze``."""
        return self.freeze(*args, **kwds)

    def stats(self, *args, **kwds):
        """Mean ('m'), variance ('v'), skewness ('s') and excess kurtosis ('k'), those named
        by ``moments`` (default 'mv')."""
        values, given = self._summaries("stats", args, kwds)
        return _select_moments(given.get("moments", "mv"), values)

    def mean(self, *args, **kwds):
        """The mean (``loc`` plus ``scale`` times the standardized distribution's)."""
        return self._summaries("mean", args, kwds)[0]["m"]

    def var(self, *args, **kwds):
        """The variance (``scale**2`` times the standardized distribution's)."""
        return self._summaries("var", args, kwds)[0]["v"]

    def std(self, *args, **kwds):
        """The standard deviation."""
        return dnp.sqrt(self._summaries("std", args, kwds)[0]["v"])

