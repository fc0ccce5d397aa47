"""The ODE solve primitive and its rules.

``odesolve_p(y0, t0, ts, *params, field, options)`` is the solution of
``y' = field(t, y, *params)``, ``y(t0) = y0``, at the output times ``ts`` (a 1-D array,
ordered in the direction of integration from ``t0``): an array of shape ``(len(ts), n)``,
with two outputs that have no derivative: the solve's statistics (``ode_sweeps.STATS``:
SciPy's counts and status, the steps taken, whether LSODA went stiff) and the Gauss panels
its steps ask for in each output interval (``panels_needed``). The adjoint sweep reads them
(its route and panels) from there, as ``solve_ivp``'s result reads ``nfev``: the options,
a parameter, are never changed. Its implementation calls SciPy (``solve_ivp`` with
``t_eval=ts``, or ``odeint`` for ``method="odeint"``); the implicit methods get the exact
Jacobian of the field (dense, or sparse when the pattern is sparse: ``ode_field.Jacobian``).

- JVP: the forward sensitivity system ``(y, s)`` (``SensitivityField``) solved by the same
  primitive, so it differentiates again; a tangent of an output time adds ``f(t_k, y_k)``
  times it, a tangent of ``t0`` starts ``s`` at ``-f(t0, y0) dt0``.
- VJP: the adjoint method (``adjoint_sweep_p``, below): from the last output time back
  to ``t0`` the adjoint ``a' = -a J_y`` and the parameters' cotangent ``g' = -a J_p``,
  each output's cotangent added to ``a`` at its time (the output times are the
  checkpoints), by one of the three routes of ``ode_sweeps.py`` (the transition matrix,
  the state solved backwards with the adjoint, the state's dense output for stiff
  problems). ``a(t0)`` is the cotangent of ``y0``, ``g(t0)`` those of the parameters,
  ``-a(t0) . f(t0, y0)`` that of ``t0`` and ``G_k . f(t_k, y_k)`` that of each output
  time. The rule is joint (``JointVjp``): one call gives every wanted argument's
  cotangent from one backward sweep; the output times' part needs none.
- Batching: one solve per batch member (a loop), stacked.

The solves of derivative systems and the sweeps are *strict* (``ode_branches``): a field
whose Python branch on the state or the parameters changes during them raises
``BranchSwitchError``; the solve of the solution itself goes on as SciPy's.

Derivatives are those of the exact solution, computed to the solver's tolerances: the
sensitivity and adjoint systems are solved with the same ``rtol``/``atol``.
"""

import contextlib
import dataclasses

import numpy as np
import scipy.integrate as _si

from ... import api
from ...core.concrete import underlying
from ...core.primitive import JointVjp, Primitive
from ...core.trace import Tracer
from ...core.zeros import instantiate, is_zero, shape_of, zero_like
from ...numpy import (
    cumsum,
    dot,
    einsum,
    eye,
    ravel,
    reshape,
    swapaxes,
    zeros,
)
from ...numpy.linalg import solve
from ...ops import sparsity_rules as sr

# The namespace's concatenate and stack make their result a value of the innermost
# transformation running user code (NumPy's copy semantics, numpy_protocol.in_place); a rule
# computes on the values of the levels below its own, so it joins arrays with the operations
# themselves.
from ...ops.shape import concatenate, stack
from .ode_branches import solving
from .ode_field import (
    IMPLICIT,
    AdjointField,
    Jacobian,
    SensitivityField,
    TransitionField,
    compiled,
    differentiable,
    with_chosen,
)
from .ode_sweeps import (
    ODESolveError,
    SolveInfo,
    gauss_layout,
    panel_intervals,
    panels_needed,
    statistics,
    sweep,
    transition_route,
    transition_sweep,
)


@dataclasses.dataclass(frozen=True, eq=False)
class Options:
    """The solver's settings, shared by the derivative solves: ``method``, ``rtol``,
    ``atol``, the other SciPy options (``items``, pairs), the sparse choice, a user's ``jac``
    (for the user's field only) and ``jac_sparsity``, and the name of the solver for
    messages. A parameter of the solve primitive: frozen (a solve's statistics are outputs
    of the primitive, never written here), compared and hashed by identity."""

    method: str
    rtol: object
    atol: object
    items: tuple = ()
    sparse: object = None
    jac: object = None
    jac_sparsity: object = None
    name: str = "solve_ivp"

    def __post_init__(self):
        object.__setattr__(self, "items", tuple(self.items))

    def derived(self, sizes=()):
        """The options of a derivative solve whose state appends blocks of ``sizes`` to the
        solution's: no user jac, no first step, ``atol`` extended over the blocks."""
        return Options(self.method, self.rtol, self.atol_for(sizes),
                       [(k, v) for k, v in self.items if k not in ("first_step", "h0")],
                       self.sparse, name=self.name)

    def atol_for(self, sizes):
        """``atol`` for an augmented state made of blocks of ``sizes``."""
        atol = np.asarray(self.atol, float)
        if atol.ndim == 0:
            return self.atol
        return np.concatenate([atol] + [np.full(k, atol.min()) for k in sizes])


def _impl(y0, t0, ts, *params, field, options):
    # the fields of derivative systems are solved for a derivative: a switch of the
    # user's Python branch is refused there (ode_branches)
    with solving(field, strict=getattr(field, "derived", False)):
        return _solve_at(y0, t0, ts, params, field, options)


def _solve_at(y0, t0, ts, params, field, options):
    """``(solution, statistics, panels)`` at ``ts`` on plain values (``odesolve_p``'s
    implementation; ``panels`` all ones where the solve gives no hint)."""
    y0 = np.asarray(y0, float)
    ts = np.asarray(ts, float)
    t0 = float(t0)
    n = y0.shape[0]
    if not np.all(np.isfinite(y0)):    # (a derivative system's start, from a failed solve)
        raise ODESolveError(f"{options.name}: a solve would start from a state that is not "
                            "finite (no solution, so no derivative)")
    no_hint = np.ones(len(ts), dtype=np.int64)
    if len(ts) and np.all(ts == t0):    # no time to cover (a sweep derivative's last leg)
        return np.tile(y0, (len(ts), 1)), statistics(), no_hint
    rhs, jac = _rhs_and_jac(y0, t0, params, field, options)
    if options.method == "odeint":
        skip = 1 if len(ts) == 0 or ts[0] != t0 else 0
        times = np.concatenate([[t0], ts]) if skip else ts
        Y, info = _si.odeint(rhs, y0, times, args=tuple(params),
                             Dfun=None if jac is None else _finite(jac, options.name),
                             tfirst=True, rtol=options.rtol, atol=options.atol,
                             full_output=True, **dict(options.items))
        if info["message"] != "Integration successful.":
            raise ODESolveError(f"{options.name}: odeint failed: {info['message']}")
        stats = statistics(nfev=int(info["nfe"][-1]), njev=int(info["nje"][-1]),
                           steps=int(info["nst"][-1]),
                           stiff=int(np.any(np.asarray(info["mused"]) == 2)))
        panels = no_hint
        if not skip and len(ts) > 1:
            # the Gauss panels each interval needs for the parameters' integral in the
            # adjoint sweep, from the solve's own steps (a hint: the sweep checks its steps)
            needed = panels_needed(np.diff(ts), np.diff(info["nst"], prepend=0), info["hu"],
                                   info["nqu"], options.rtol)
            panels = np.concatenate([[1], needed]).astype(np.int64)
        return Y[skip:].reshape(len(ts), n), stats, panels
    if len(ts) == 0:
        return np.zeros((0, n)), statistics(), no_hint
    sol, stats = _solve(rhs, params, jac, y0, t0, float(ts[-1]), ts, options)
    return sol.y.T.copy(), stats, no_hint


def _rhs_and_jac(y0, t0, params, field, options):
    """SciPy's ``fun(t, y, *params)`` (the field's staged replay on plain values, called
    directly: the solvers pass ``params`` as ``args``) and its ``jac(t, y)``: the user's,
    or for the implicit methods the exact (sparse where it pays) Jacobian."""
    jac = options.jac
    if jac is None and options.method in IMPLICIT:
        jac = Jacobian(field, params, y0, t0, options.sparse, options.jac_sparsity)
    return compiled(field, "rhs").plain, jac


def _solve(rhs, params, jac, y0, t0, t1, ts, options):
    """SciPy's ``solve_ivp`` from ``t0`` to ``t1`` (output at ``ts``, or at its steps for
    ``ts=None``): ``(solution, statistics)``; a failure raises ``ODESolveError``."""
    extra = {} if jac is None or options.method not in IMPLICIT else {
        "jac": _finite(jac, options.name)}
    sol = _si.solve_ivp(rhs, (t0, t1), y0, method=options.method, t_eval=ts,
                        args=tuple(params), rtol=options.rtol, atol=options.atol, **extra,
                        **dict(options.items))
    if sol.status != 0 or (ts is not None and sol.y.shape[1] != len(ts)):
        raise ODESolveError(f"{options.name}: the {options.method} solver failed before the "
                            f"last output time {t1!r}: {sol.message} (no solution, so "
                            "no derivative)")
    # steps: about LSODA's for the same work (two evaluations each)
    return sol, statistics(nfev=sol.nfev, njev=sol.njev, nlu=sol.nlu, status=sol.status,
                           steps=sol.nfev // 2)


def _finite(jac, name):
    """SciPy's ``jac(t, y, *args)`` (it passes the args on): ``jac(t, y)``, refused where
    it is not finite (the state grew without bound: SciPy's LU would raise a ValueError
    of its own)."""
    def checked(t, y, *_):
        J = jac(t, y)
        entries = J if isinstance(J, np.ndarray) else getattr(J, "data", J)
        if not np.all(np.isfinite(entries)):
            raise ODESolveError(f"{name}: the Jacobian of the field is not finite at t = "
                                f"{float(t)!r} (the state grew without bound: no solution, "
                                "so no derivative)")
        return J
    return checked


def solve_steps(y0, t0, t1, params, field, options):
    """The solution at the solver's own steps, on plain values: ``(t, y, statistics)``
    (``y`` of shape ``(len(t), n)``)."""
    y0 = np.asarray(y0, float)
    rhs, jac = _rhs_and_jac(y0, t0, params, field, options)
    with solving(field):
        sol, stats = _solve(rhs, params, jac, y0, float(t0), float(t1), None, options)
    return sol.t, sol.y.T.copy(), stats


def odesolve(y0, t0, ts, params, field, options):
    """``(solution, statistics, panels)``: the outputs of ``odesolve_p``."""
    return odesolve_p(y0, t0, ts, *params, field=field, options=options)


def _rows(field, ts, Y, params):
    """``f(ts[k], Y[k])`` for every row."""
    return api.vmap(lambda t, y: field(t, y, *params))(ts, Y)


def _jvp(primals, tangents, *, field, options):
    y0, t0, ts, *params = primals
    dy0, dt0, dts, *dps = tangents
    out, stats, panels = odesolve_p(y0, t0, ts, *params, field=field, options=options)
    n = shape_of(y0)[0]
    which = [i for i, d in enumerate(dps) if not is_zero(d) and differentiable(params[i])]
    s0 = None if is_zero(dy0) else dy0
    if not is_zero(dt0):
        start = -field(t0, y0, *params) * dt0
        s0 = start if s0 is None else s0 + start
    tangent = None
    if s0 is not None or which:
        s0 = zeros(n) if s0 is None else s0
        aug = SensitivityField(field, n, len(params), which)
        Z = odesolve_p(concatenate([y0, s0]), t0, ts, *params, *[dps[i] for i in which],
                       field=aug, options=_derived(options, [n]))[0]
        tangent = Z[:, n:]
    if not is_zero(dts):
        part = _rows(field, ts, out, params) * reshape(dts, (-1, 1))
        tangent = part if tangent is None else tangent + part
    if tangent is None:
        tangent = zeros(shape_of(out))
    # the statistics and panels have no derivative
    return (out, stats, panels), (tangent, zero_like(stats), zero_like(panels))


def _derived(options, sizes):
    return options.derived(sizes)


def _solve_vjp(cts, outs, y0, t0, ts, *params, wanted, field, options):
    """The cotangents of the wanted arguments (``JointVjp``): ``a(t0)`` for ``y0``,
    ``-a(t0) . f(t0, y0)`` for ``t0``, ``G[k] . f(t_k, y_k)`` for each output time, ``g``'s
    block for a parameter, from one backward sweep (none for the output times alone).
    ``cts`` and ``outs`` are the solution's, the statistics' and the panels' (the last two
    without derivative)."""
    G, out, stats, panels = cts[0], outs[0], outs[1], outs[2]
    result = [None] * (3 + len(params))
    if is_zero(G):      # a cotangent reached only the statistics
        return tuple(result)
    G = instantiate(G)
    if wanted[2]:
        result[2] = zeros(0) if shape_of(ts)[0] == 0 else \
            api.vmap(dot)(G, _rows(field, ts, out, params))
    floats = [k for k, p in enumerate(params) if differentiable(p)]
    if not (wanted[0] or wanted[1] or any(wanted[3 + k] for k in floats)):
        return tuple(result)
    n = shape_of(y0)[0]
    ag = adjoint_sweep_p(y0, t0, ts, out, G, stats, panels, *params, field=field,
                         options=options)
    a = ag[:n]
    if wanted[0]:
        result[0] = a
    if wanted[1]:
        result[1] = -dot(a, field(t0, y0, *params))
    start = n
    for k in floats:
        shape = shape_of(params[k])
        size = int(np.prod(shape))
        if wanted[3 + k]:
            result[3 + k] = reshape(ag[start:start + size], shape)
        start += size
    return tuple(result)


def _looped(name):
    """The batching rule of the solve primitive ``name``: SciPy solves one problem at a
    time, so a batch is a loop over its examples, each output stacked on axis 0."""
    def batch(axis_size, values, batch_axes, *, field, options):
        primitive = {"odesolve": odesolve_p, "odesolve_adjoint": adjoint_sweep_p}[name]
        outs = []
        for b in range(axis_size):
            args = [v[b] if ax is not None else v for v, ax in zip(values, batch_axes)]
            outs.append(primitive(*args, field=field, options=options))
        if primitive.multiple_results:
            return tuple(stack(list(parts)) for parts in zip(*outs)), (0,) * len(outs[0])
        return stack(outs), 0
    return batch


def _sparsity(args, outs, local, **params):
    """Output ``(k, j)`` of the solution depends on every entry of ``y0``, ``t0`` and the
    parameters, and on the output time ``ts[k]`` alone; the statistics and panels have no
    derivative."""
    y0, t0, ts, *rest = args
    out = outs[0]
    size = int(np.prod(shape_of(out)))
    m, n = shape_of(out)
    rows = [sr.dense(size, int(np.prod(shape_of(x)))) if sr.differentiable(x) else None
            for x in (y0, t0)]
    times = np.repeat(np.arange(m, dtype=np.intp), n) if sr.differentiable(ts) else None
    solution = tuple(rows) + (times,) + tuple(
        sr.dense(size, int(np.prod(shape_of(x)))) if sr.differentiable(x) else None
        for x in rest)
    none = (None,) * len(args)
    return solution, none, none


def _dense_sparsity(args, out, local, **params):
    """Every output entry depends on every entry of every float argument."""
    size = int(np.prod(shape_of(out)))
    return tuple(sr.dense(size, int(np.prod(shape_of(x)))) if sr.differentiable(x) else None
                 for x in args)


odesolve_p = Primitive("odesolve", _impl, _jvp, JointVjp(_solve_vjp), _looped("odesolve"),
                       multiple_results=True, sparsity=_sparsity)


# --- the adjoint sweep ------------------------------------------------------------------
#
# ``adjoint_sweep_p(y0, t0, ts, out, G, stats, panels, *params)`` is ``(a(t0), g(t0))``: the
# adjoint and the parameters' cotangent after the backward sweep over every output interval
# (``stats`` and ``panels``: the forward solve's outputs without derivative, which make its
# ``SolveInfo``). Its implementation is ``ode_sweeps.sweep`` (SciPy's solvers on plain
# values, by one of three routes: the transition matrix for small non-stiff odeint
# problems, the state solved backwards with the adjoint for explicit methods, the state's
# dense output for stiff ones). The sweep's own derivatives (second order) are those of the
# same map written with the solve primitive: the state re-solved backwards with the adjoint
# from each checkpoint (``_resolve``).


def _sweep_impl(y0, t0, ts, out, G, stats, panels, *params, field, options):
    with solving(field, strict=True):    # a derivative: a switch of branch is refused
        return sweep(y0, t0, ts, out, G, params, field, options, SolveInfo.of(stats, panels))


def _info(stats, panels):
    """The ``SolveInfo`` of traced statistics and panels."""
    return SolveInfo.of(underlying(stats), underlying(panels))


def _resolve(y0, t0, ts, out, G, stats, panels, *params, field, options):
    """The sweep written with the solve primitive, following the route the plain sweep
    takes: the transition route's segments (``_resolve_transition``), else the state
    re-solved backwards with the adjoint from each checkpoint (``_resolve_intervals``)."""
    n, m = shape_of(y0)[0], shape_of(ts)[0]
    plain_ts = np.asarray(underlying(ts), float)
    plain_t0 = float(underlying(t0))
    info = _info(stats, panels)
    if transition_route(n, plain_t0, plain_ts, options, info):
        # the plain sweep again, for its plan (a primitive's value cannot carry it); only
        # derivatives of the sweep pay for it
        plan = []
        which = [i for i, p in enumerate(params) if differentiable(p)]
        with solving(field, strict=True):
            transition_sweep(plain_t0, plain_ts, np.asarray(underlying(out), float),
                             np.asarray(underlying(G), float),
                             [underlying(p) for p in params], field, options, info, which,
                             sum(int(np.prod(shape_of(params[i]))) for i in which), plan)
        return _resolve_transition(t0, ts, out, G, params, field, options, plan)
    return _resolve_intervals(t0, ts, out, G, params, field, options, m - 1,
                              G[m - 1] if m else zeros(n), None)


def _resolve_intervals(t0, ts, out, G, params, field, options, start, a, g):
    """The explicit route from the output ``start`` (adjoint ``a`` there, ``G[start]``
    included, and ``g`` gathered so far, None for none) with the solve primitive."""
    n = shape_of(out)[1]
    which = [i for i, p in enumerate(params) if differentiable(p)]
    sizes = [int(np.prod(shape_of(params[i]))) for i in which]
    aug = AdjointField(field, n, which)
    derived = _derived(options, [n] + sizes)
    times = [float(t) for t in np.asarray(underlying(ts), float).ravel()]
    g = zeros(sum(sizes)) if g is None else g
    for k in range(start, -1, -1):
        target, t_target = (ts[k - 1], times[k - 1]) if k > 0 else (t0, float(underlying(t0)))
        # an interval of no length still carries the derivatives in its ends (t0 equal to
        # the first output time: solve_ivp's own steps start there)
        if t_target != times[k] or isinstance(target, Tracer) or isinstance(ts, Tracer):
            Z = odesolve_p(concatenate([out[k], a, g]), ts[k], reshape(target, (1,)),
                           *params, field=aug, options=derived)[0]
            a, g = Z[0, n:2 * n], Z[0, 2 * n:]
        if k > 0:
            a = a + G[k - 1]
    return concatenate([a, g])


def _resolve_transition(t0, ts, out, G, params, field, options, plan):
    """The transition route of ``ode_sweeps`` with the solve primitive and diffkit's
    operations, segment by segment as the plain sweep took them (``plan``): the solve of
    ``(y, M)`` over each segment's points and Gauss nodes is one ``odesolve_p`` (its
    derivatives are one sensitivity or adjoint solve, not one per interval)."""
    n, m = shape_of(out)[1], shape_of(ts)[0]
    which = [i for i, p in enumerate(params) if differentiable(p)]
    P = sum(int(np.prod(shape_of(params[i]))) for i in which)
    points, cotangents = ts[::-1], G[::-1]
    if float(underlying(ts[0])) != float(underlying(t0)):
        points = concatenate([points, reshape(t0, (1,))])
        cotangents = concatenate([cotangents, zeros((1, n))])
    transition = TransitionField(field, n)
    derived = _derived(options, [n * n])
    a_in, g = zeros(n), zeros(P)
    for step in plan:
        if step[0] == "explicit":
            at = step[1]
            return _resolve_intervals(t0, ts, out, G, params, field, options, m - 1 - at,
                                      a_in + cotangents[at], g)
        _, at, stop, panels, good = step
        edges = points[at:stop + 1]
        times, nodes, weights, ends = _traced_gauss_times(edges, panels)
        Z = odesolve_p(concatenate([out[m - 1 - at], ravel(eye(n))]), times[0], times,
                       *params, field=transition, options=derived)[0]
        W = reshape(Z[ends, n:], (-1, n, n))
        rest = solve(swapaxes(W[1:good + 1], 1, 2), cotangents[at + 1:at + good + 1, :, None])
        c = cumsum(concatenate([reshape(a_in + cotangents[at], (1, n)), rest[:, :, 0]]),
                   axis=0)
        if P:
            interval = np.repeat(np.repeat(np.arange(len(panels)), panels), 5)
            keep = interval < good
            rows = nodes.ravel()[keep]
            M = reshape(Z[rows, n:], (-1, n, n))
            A = einsum("rij,ri->rj", M, c[interval[keep]])
            quadrature = compiled(field, "quadrature", which, int(keep.sum()))
            g = g + quadrature(times[rows], Z[rows, :n], A, ravel(weights)[keep], *params)
        if at + good == shape_of(points)[0] - 1:
            a = dot(c[good], W[good])
            if float(underlying(ts[0])) == float(underlying(t0)) and \
                    (isinstance(t0, Tracer) or isinstance(ts, Tracer)):
                # t0 is the first output time in value: the leg of no length between
                # them carries t0's derivatives (_resolve_intervals' last step)
                return _resolve_intervals(t0, ts[:1], out[:1], G[:1], params, field,
                                          options, 0, a, g)
            return concatenate([a, g])
        a_in = dot(c[good - 1], W[good])
    raise AssertionError("the plan ends with the last point")   # pragma: no cover


def _traced_gauss_times(edges, panels):
    """``ode_sweeps.gauss_times`` of traced ``edges``."""
    interval, fraction, scale, nodes, ends = gauss_layout(panels)
    width = edges[1:] - edges[:-1]
    times = edges[interval] + fraction * width[interval]
    return times, nodes, width[panel_intervals(panels)][:, None] * scale, ends


def _sweep_jvp(primals, tangents, *, field, options):
    out = adjoint_sweep_p(*primals, field=field, options=options)
    # only the float arguments are differentiated (t_span may be integers, args hold counts)
    which = [k for k, (x, d) in enumerate(zip(primals, tangents))
             if differentiable(x) and not is_zero(d)]
    if not which:
        return out, zeros(shape_of(out))
    with _stiff_advice(options, primals[5]):
        _, tangent = api.jvp(_resolved_in(primals, which, field, options),
                             tuple(primals[k] for k in which),
                             tuple(instantiate(tangents[k]) for k in which))
    return out, tangent


@contextlib.contextmanager
def _stiff_advice(options, stats):
    """A failed solve in a derivative of the sweep of a stiff problem (``stats``: the
    forward solve's statistics): the state solved backwards from each output time, which
    a stiff system does not survive."""
    try:
        yield
    except ODESolveError as failure:
        if options.method not in ("BDF", "Radau", "LSODA") and \
                not SolveInfo.of(underlying(stats), np.ones(0)).stiff:
            raise
        raise ODESolveError(
            f"{failure} It was a solve of a second derivative through the adjoint method "
            "(hessian, jacfwd or jacrev of grad), which solves the state backwards from each "
            "output time, and a stiff system does not survive that: for second derivatives "
            "of stiff systems use jacfwd(jacfwd(...)) (forward sensitivities only).") \
            from failure


def _resolved_in(primals, which, field, options):
    """``_resolve`` as a function of the arguments at ``which`` (the others fixed)."""
    def resolved(*chosen):
        return _resolve(*with_chosen(primals, which, chosen), field=field, options=options)
    return resolved


def _sweep_vjp(ct, out, *primals, wanted, field, options):
    """The cotangents of the sweep's wanted float arguments (``JointVjp``): one reverse
    pass over ``_resolve``."""
    which = [k for k, x in enumerate(primals) if wanted[k] and differentiable(x)]
    result = [None] * len(primals)
    if not which:
        return tuple(result)
    with _stiff_advice(options, primals[5]):
        _, pull = api.vjp(_resolved_in(primals, which, field, options),
                          *[primals[k] for k in which])
        for k, cotangent in zip(which, pull(instantiate(ct))):
            result[k] = cotangent
    return tuple(result)


adjoint_sweep_p = Primitive("odesolve_adjoint", _sweep_impl, _sweep_jvp,
                            JointVjp(_sweep_vjp), _looped("odesolve_adjoint"),
                            sparsity=_dense_sparsity)
