"""``solve_ivp`` and ``odeint``: SciPy's ODE solvers whose solutions differentiate in the
initial state, the output times and the parameters (``args``, and traced values the
function closes over). The solve is one primitive (``ode_rules.py``); its JVP solves the
forward sensitivity equations and its VJP the adjoint equations, both with SciPy's solver
of the same method and tolerances. See ``docs/guide/ode.md``.
"""

import numpy as np

from ...core.concrete import underlying
from ...core.trace import Tracer, innermost_trace
from ...core.zeros import shape_of
from ...errors import OptionError
from ...numpy import asarray, concatenate, reshape
from .ode_branches import BranchSwitchError
from .ode_field import SPARSE_DENSITY, SPARSE_MIN_SIZE, ClosureError, as_field
from .ode_rules import ODESolveError, Options, odesolve, solve_steps
from .ode_sweeps import STATS

try:   # SciPy's result type (a dict with attribute access)
    from scipy.integrate._ivp.ivp import OdeResult
except ImportError:   # pragma: no cover
    from scipy.optimize import OptimizeResult as OdeResult

__all__ = ["solve_ivp", "odeint", "ODESolveError", "ClosureError", "BranchSwitchError",
           "SPARSE_DENSITY", "SPARSE_MIN_SIZE"]

METHODS = ("RK45", "RK23", "DOP853", "Radau", "BDF", "LSODA")


def _state(y0, name):
    y0 = asarray(y0)
    if len(shape_of(y0)) != 1:
        raise ValueError(f"{name}: y0 must be 1-dimensional, got shape {shape_of(y0)}")
    kind = np.dtype(getattr(underlying(y0), "dtype", np.float64)).kind
    if kind == "c":
        raise OptionError(f"{name}: complex states are not supported; split y0 into its "
                          "real and imaginary parts")
    return y0 if kind == "f" else asarray(y0, dtype=float)


def _float(x):
    """``x`` with a float dtype (SciPy computes times in float64; ``t_span=(0, 10)``)."""
    kind = np.dtype(getattr(underlying(x), "dtype", np.float64)).kind
    return x if kind == "f" else asarray(x, dtype=float)


def _times(t, name, what):
    t = asarray(t)
    if len(shape_of(t)) != 1:
        raise ValueError(f"{name}: {what} must be 1-dimensional")
    values = np.asarray(underlying(t), float)
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{name}: {what} must be finite")
    steps = np.diff(values)
    if len(steps) and not (np.all(steps > 0) or np.all(steps < 0)):
        raise ValueError(f"{name}: {what} must be strictly monotonic")
    return t if np.asarray(underlying(t)).dtype.kind == "f" else asarray(t, dtype=float)


def solve_ivp(fun, t_span, y0, method="RK45", t_eval=None, dense_output=False, events=None,
              vectorized=False, args=None, **options):
    """Solve an initial value problem as ``scipy.integrate.solve_ivp`` does; the solution
    ``y`` differentiates in ``y0``, the output times (``t_eval``, or the end of ``t_span``)
    and ``args`` (any pytree of arrays), and in traced values ``fun`` closes over.

    ``method``: "RK45", "RK23", "DOP853" (explicit), "Radau", "BDF", "LSODA" (implicit: they
    get the exact Jacobian of ``fun`` in ``y`` unless ``jac`` is given). ``sparse=`` (a
    keyword of diffkit's among ``options``): the
    Jacobian as a ``scipy.sparse`` matrix (``True``), dense (``False``), or chosen from the
    detected pattern (``None``: sparse when at most ``SPARSE_DENSITY`` of its entries are
    nonzero and there are at least ``SPARSE_MIN_SIZE`` unknowns, or when ``jac_sparsity``
    is given). ``rtol``, ``atol`` and SciPy's other options are passed on and also govern
    the derivative solves. ``dense_output`` and ``events`` are not supported.

    Without ``t_eval`` the output times are the solver's steps at the current values; only
    the last one (``t_span[1]``) carries a derivative. A failed solve raises
    ``ODESolveError``. A ``fun`` whose Python branches on the state or the parameters
    (``if y[0] > 0.5:``) solves as SciPy's does; a derivative across a change of its branch
    raises ``BranchSwitchError`` (it would miss the switch's jump term).
    """
    name = "solve_ivp"
    if dense_output:
        raise OptionError(f"{name}: dense_output=True is not supported (its interpolant "
                          "has no derivative); pass the times you need as t_eval")
    if events is not None:
        raise OptionError(f"{name}: events are not supported (event times have no "
                          "derivative here)")
    if not callable(fun):
        raise TypeError(f"{name}: fun must be callable")
    method_name = method if isinstance(method, str) else getattr(method, "__name__", method)
    if method_name not in METHODS:
        raise OptionError(f"{name}: method {method!r} is not supported; use one of "
                          f"{', '.join(METHODS)}")
    if not isinstance(t_span, (tuple, list)) and len(shape_of(t_span)) != 1 \
            or len(t_span) != 2:
        raise ValueError(f"{name}: t_span must be a pair (t0, t1)")
    t0, t1 = _float(asarray(t_span[0])), _float(asarray(t_span[1]))
    if shape_of(t0) != () or shape_of(t1) != ():
        raise ValueError(f"{name}: t_span must hold two scalars")
    a, b = float(underlying(t0)), float(underlying(t1))
    if not (np.isfinite(a) and np.isfinite(b)) or a == b:
        raise ValueError(f"{name}: t_span must hold two different finite times, got "
                         f"({a}, {b})")
    y0 = _state(y0, name)
    if args is not None and not isinstance(args, tuple):
        args = (args,)
    args = () if args is None else args
    sparse = options.pop("sparse", None)
    rtol = options.pop("rtol", 1e-3)
    atol = options.pop("atol", 1e-6)
    jac = options.pop("jac", None)
    jac_sparsity = options.pop("jac_sparsity", None)
    options.pop("vectorized", None)
    field, params = as_field(fun, t0, y0, args, name=name)
    user_jac = None if jac is None else _user_jac(jac, args, True)
    opts = Options(method_name, rtol, atol, options.items(), sparse, user_jac, jac_sparsity,
                   name)
    if t_eval is None:
        plain = [underlying(y0)] + [underlying(p) for p in params]
        if any(np.shape(q) != shape_of(x) for q, x in zip(plain, [y0, *params])):
            raise OptionError(f"{name}: under vmap the output times must be given (t_eval): "
                              "the solver's own steps differ from one batch member to the next")
        steps, Y, stats = solve_steps(plain[0], a, b, plain[1:], field, opts)
        if innermost_trace() is None:    # nothing to differentiate: the solve is the result
            return _result(steps, Y, stats)
        ts = concatenate([steps[:-1], reshape(t1, (1,))])
    else:
        ts = _times(t_eval, name, "t_eval")
        values = np.asarray(underlying(ts), float)
        lo, hi = min(a, b), max(a, b)
        if np.any(values < lo) or np.any(values > hi):
            raise ValueError(f"{name}: values in t_eval are not within t_span")
        if len(values) > 1 and (values[1] - values[0]) * (b - a) < 0:
            raise ValueError(f"{name}: t_eval must be sorted in the direction of t_span")
    Y, stats, _ = odesolve(y0, t0, ts, params, field, opts)
    return _result(ts, Y, stats)


# SciPy's message for status 0, the only status of a solve that returns (a failed one raises
# ODESolveError; events, status 1, are not supported).
SUCCESS = "The solver successfully reached the end of the integration interval."


def _result(ts, Y, stats):
    """SciPy's result from the solution ``Y`` at ``ts`` and the solve's statistics (the
    solve primitive's output without derivative): Python integers where the statistics
    have one value (no transformation, or ``grad``, ``jvp``...); under ``vmap`` (one
    value per batch member) and ``jit`` (a value per call) the traced counts."""
    counts = _counts(stats)
    return OdeResult(t=ts, y=Y.T, sol=None, t_events=None, y_events=None,
                     nfev=counts["nfev"], njev=counts["njev"], nlu=counts["nlu"],
                     status=counts["status"], message=SUCCESS, success=True)


def _counts(stats):
    """``{name: count}`` for the entries of ``STATS`` in ``stats``."""
    value = stats
    while isinstance(value, Tracer):
        if getattr(value._trace, "read_concretely", None) is not None:
            value = None       # a recording (jit): each replay has its own counts
            break
        value = getattr(value, "primal", None)     # None for a batch (vmap)
    if value is None:
        return {name: stats[i] for i, name in enumerate(STATS)}
    return {name: int(v) for name, v in zip(STATS, np.asarray(value))}


def _user_jac(jac, args, tfirst):
    """The user's Jacobian as SciPy's ``jac(t, y)``, used as it is."""
    if not callable(jac):
        matrix = np.asarray(jac)
        return lambda t, y: matrix

    def user_jac(t, y):
        return jac(t, y, *args) if tfirst else jac(y, t, *args)
    return user_jac


def odeint(func, y0, t, args=(), Dfun=None, col_deriv=0, full_output=0, ml=None, mu=None,
           rtol=None, atol=None, tcrit=None, h0=0.0, hmax=0.0, hmin=0.0, ixpr=0, mxstep=0,
           mxhnil=0, mxordn=12, mxords=5, printmessg=0, tfirst=False):
    """Integrate ``y' = func(y, t, *args)`` (``func(t, y, ...)`` with ``tfirst``) from
    ``y(t[0]) = y0`` with SciPy's ``odeint`` (LSODA); returns the ``(len(t), len(y0))``
    solution. Differentiable in ``y0``, ``t`` and ``args`` (and closures), by forward
    sensitivities or the adjoint method, both solved by ``odeint`` with the same
    tolerances (a derivative across a change of ``func``'s Python branch raises
    ``BranchSwitchError``). ``full_output``, banded Jacobians (``ml``, ``mu``) and ``tcrit``
    are not supported."""
    name = "odeint"
    if full_output:
        raise OptionError(f"{name}: full_output is not supported")
    if ml is not None or mu is not None or tcrit is not None or col_deriv:
        raise OptionError(f"{name}: banded or column-major Jacobians and tcrit are not "
                          "supported")
    if not callable(func):
        raise TypeError(f"{name}: func must be callable")
    y0 = _state(y0, name)
    t = _times(t, name, "t")
    if shape_of(t)[0] < 1:
        raise ValueError(f"{name}: t must hold at least the initial time")
    args = args if isinstance(args, tuple) else (args,)
    rtol = 1.49012e-8 if rtol is None else rtol
    atol = 1.49012e-8 if atol is None else atol
    items = [(k, v) for k, v in (("h0", h0), ("hmax", hmax), ("hmin", hmin),
                                 ("mxstep", mxstep), ("mxordn", mxordn), ("mxords", mxords))]
    t0 = t[0]
    field, params = as_field(func, t0, y0, args, tfirst=tfirst, name=name)
    user_jac = None if Dfun is None else _user_jac(Dfun, args, tfirst)
    opts = Options("odeint", rtol, atol, items, False, user_jac, name=name)
    return odesolve(y0, t0, t, params, field, opts)[0]
