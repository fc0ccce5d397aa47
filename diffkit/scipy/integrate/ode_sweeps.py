"""The adjoint sweep of an ODE solution, on plain values.

``sweep(y0, t0, ts, out, G, params, field, options, info)`` is
``concatenate([a(t0), g(t0)])``
for the solution ``out`` (shape ``(m, n)``) at the output times ``ts`` and its cotangent
``G``: the adjoint ``a`` of ``a' = -a J_y``, started at zero after the last output time and
raised by ``G[k]`` at each output time ``ts[k]`` on the way back to ``t0``, and the
parameters' cotangent ``g`` (``g' = -a J_p``, from zero), for the parameters of ``params``
with a float dtype (flattened, in order). ``J_y`` and ``J_p`` are the field's Jacobians
along the solution. The output times are the checkpoints: wherever the state is needed
between them it is solved again from the stored output. ``info`` (a ``SolveInfo``) is what
the forward solve reported about itself (its steps, whether LSODA went stiff, the Gauss
panels its steps ask for): it chooses the route and the panels, never the result.

Three routes, each with SciPy's solvers and the forward solve's tolerances:

- **transition** (non-stiff problems with at most ``TRANSITION_MAX`` states and output
  times dense among the forward solve's steps): one backward LSODA solve of the state
  with the transition matrix ``M(t)`` of the adjoint (``M' = -J_y^T M``, ``M = I`` where
  the solve starts) over every output time at once. The adjoint is linear, so between two
  output times ``a(t) = M(t) c`` with a constant ``c``, which each output's cotangent
  raises by ``M(t_k)^{-1} G[k]``; ``g`` is the Gauss-Legendre sum of ``a J_p`` at nodes
  inside each interval, where LSODA also reports ``(y, M)``. No solver restarts at the
  output times (LSODA's restarts, at order 1 with small steps, cost more than the whole
  sweep; a Runge-Kutta method needs at least one full step per interval). Where ``M``
  becomes ill-conditioned (above ``CONDITION_LIMIT``, where its inverse would magnify the
  solver's error) the solve starts again from that output time with ``M = I``.
- **explicit** (the other non-stiff problems: RK45, RK23, DOP853, ``odeint``):
  the state, ``a`` and ``g`` solved backwards together interval by interval with the
  forward method (DOP853 for ``odeint``), the state restarted from each output.
- **dense** (stiff: BDF, Radau, LSODA, ``odeint`` problems that went stiff): the state
  solved once forwards with dense output (a stiff state is never solved backwards, where
  its fast modes grow), then ``a`` (and ``g``) backwards along it, interval by interval.
"""

import dataclasses
import warnings

import numpy as np
import scipy.integrate as _si

from ...errors import DiffkitError
from .ode_branches import solving
from .ode_field import IMPLICIT, Jacobian, TransitionField, compiled, differentiable

# The transition route serves states of at most this many entries (its evaluations cost
# one vector-Jacobian product per state entry, its state is n + n^2 long) and output times
# at least this dense among the forward solve's steps (with fewer, the explicit route
# restarts rarely and its cheaper evaluations win),
TRANSITION_MAX = 16
OUTPUTS_PER_STEP = 1 / 8
# restarts where the condition number of M exceeds this,
CONDITION_LIMIT = 1e3
# The error of five-point Gauss-Legendre on [a, b]: GAUSS_ERROR (b - a) ** 11 f^(10).
GAUSS_ERROR = 2.0736e8 / (11 * 3628800.0 ** 3)    # (5!)^4 / (11 (10!)^3)


class ODESolveError(DiffkitError, RuntimeError):
    """SciPy's solver did not reach the last output time: there is no solution, and no
    derivative, to give."""


# The statistics of one solve, the solve primitive's second output (an int64 vector):
# SciPy's counts and status, then the steps taken (for solve_ivp, half its evaluations:
# about the steps LSODA takes over the same problem, two evaluations each) and, for odeint,
# whether LSODA switched to its stiff method (-1: unknown, no odeint solve ran).
STATS = ("nfev", "njev", "nlu", "status", "steps", "stiff")
STEPS, STIFF = STATS.index("steps"), STATS.index("stiff")


def statistics(nfev=0, njev=0, nlu=0, status=0, steps=0, stiff=-1):
    """The statistics vector (``STATS``) of one solve."""
    return np.array([nfev, njev, nlu, status, steps, stiff], dtype=np.int64)


@dataclasses.dataclass(frozen=True, eq=False)
class SolveInfo:
    """What the forward solve tells the sweep: ``steps`` (0 when unknown), ``stiff`` (None
    when unknown) and ``panels``, the Gauss panels of each output interval's parameter
    integral that the solve's steps ask for (entry ``k`` for the interval ending at output
    ``k``; ones where the solve gave no hint)."""

    steps: int
    stiff: object
    panels: np.ndarray

    @classmethod
    def of(cls, stats, panels):
        """From the solve's statistics and panels as plain arrays; a batch of solves (a
        leading axis, under ``vmap``) gives one hint for all: the most steps and panels,
        stiff where any member was."""
        stats = np.asarray(stats).reshape(-1, len(STATS))
        panels = np.asarray(panels)
        panels = panels.reshape(-1, panels.shape[-1]).max(axis=0) if panels.size else \
            np.ones(panels.shape[-1:], dtype=np.int64)
        codes = stats[:, STIFF]
        stiff = None if np.all(codes < 0) else bool(np.any(codes == 1))
        return cls(int(stats[:, STEPS].max(initial=0)), stiff, panels)


def sweep(y0, t0, ts, out, G, params, field, options, info):
    """``concatenate([a(t0), g(t0)])`` (see the module docstring); plain arrays in and out."""
    y0, ts, G = np.asarray(y0, float), np.asarray(ts, float), np.asarray(G, float)
    out = np.asarray(out, float)
    t0 = float(t0)
    n, m = y0.shape[0], ts.shape[0]
    which = [i for i, p in enumerate(params) if differentiable(p)]
    P = sum(int(np.size(params[i])) for i in which)
    if m == 0:
        return np.zeros(n + P)
    if transition_route(n, t0, ts, options, info):
        return transition_sweep(t0, ts, out, G, params, field, options, info, which, P)
    if ts[-1] != t0 and (options.method in _EXPLICIT and options.method != "odeint"
                         or options.method == "odeint" and info.stiff is False):
        return explicit_sweep(t0, ts, out, G, params, field, options, which, P)
    return dense_sweep(y0, t0, ts, G, params, field, options, which, P)


def transition_route(n, t0, ts, options, info):
    """Whether the sweep of ``n`` states over the output times ``ts`` takes the transition
    route (``info``: the forward solve's ``SolveInfo``)."""
    m = len(ts)
    dense = info.steps == 0 or m - 1 >= OUTPUTS_PER_STEP * info.steps
    non_stiff = info.stiff is False or options.method in _EXPLICIT
    return bool(m and non_stiff and n <= TRANSITION_MAX and dense and ts[-1] != t0)


def _lsoda_options(options):
    """The forward solve's step limits, as odeint's options."""
    items = dict(options.items)
    if options.method == "odeint":
        return {k: items[k] for k in ("hmax", "hmin", "mxstep", "mxordn", "mxords")
                if k in items}
    step = items.get("max_step", np.inf)
    return {"hmax": float(step)} if np.isfinite(step) else {}


def _scalar_atol(options):
    return options.atol if np.ndim(options.atol) == 0 else float(np.min(options.atol))


# --- transition ---------------------------------------------------------------------------


def transition_sweep(t0, ts, out, G, params, field, options, info, which, P, plan=None):
    """The transition route. The sweep's points, backwards, are the output times and then
    ``t0`` when it is not one, each with its cotangent (zero at ``t0``). A segment starts
    at point ``at`` with ``M = I`` and the adjoint ``a_in`` arriving there (before the
    point's cotangent), and covers at most ``span`` intervals (all that are left at first,
    then twice as many as the last segment kept before ``M`` became ill-conditioned).
    LSODA solves ``(y, M)`` and reports them at the points and at Gauss-Legendre nodes
    inside each interval, where ``g``'s integrand ``a J_p`` (``a = M c``) is evaluated for
    all nodes at once (``_Segment``). ``plan``, a list, receives the segments taken
    (``("segment", at, stop, panels, good)``) and a hand-over (``("explicit", at)``), for
    the same sweep written with the solve primitive (``ode_rules``)."""
    plan = [] if plan is None else plan
    n, m = out.shape[1], ts.shape[0]
    points, cotangents = ts[::-1], G[::-1]
    panels = _panel_hint(info, ts)
    if ts[0] != t0:
        points, cotangents = np.append(points, t0), np.vstack([cotangents, np.zeros(n)])
        panels = np.append(panels, 1)
    at, a_in, g = 0, np.zeros(n), np.zeros(P)
    span = len(points)
    while True:
        stop = min(at + span, len(points) - 1)
        try:
            seg = _Segment(field, options, params, which, out[m - 1 - at],
                           points[at:stop + 1], panels[at:stop])
        except _SegmentFailed:    # M grew past what LSODA can follow: a shorter segment
            if span > 1:
                span = max(1, span // 4)
                continue
            seg = None
        W = None if seg is None else seg.M
        good = 0 if seg is None else _well_conditioned(W)
        if good == 0:      # not one interval: the state is too stiff for this route
            plan.append(("explicit", at))
            return explicit_sweep(t0, ts, out, G, params, field, options, which, P,
                                  start=m - 1 - at, a=a_in + cotangents[at], g=g)
        # a(t) = M(t) c between points; row j's cotangent raises c by M_j^{-1} G_j
        jumps = np.empty((good + 1, n))
        jumps[0] = a_in + cotangents[at]
        jumps[1:] = np.linalg.solve(np.swapaxes(W[1:good + 1], 1, 2),
                                    cotangents[at + 1:at + good + 1, :, None])[:, :, 0]
        c = np.cumsum(jumps, axis=0)          # c[j]: after the cotangent at row j
        plan.append(("segment", at, stop, seg.panels, good))
        if P:
            g = g + seg.integral(c, good)
        if at + good == len(points) - 1:
            return np.concatenate([W[good].T @ c[good], g])
        # start again at row `good`'s point, with the adjoint arriving there
        a_in = W[good].T @ c[good - 1]
        at, span = at + good, 2 * good


def _panel_hint(info, ts):
    """Gauss panels for each interval, backwards from the last output time: those the
    forward solve's steps asked for (``SolveInfo.panels``), else one."""
    hint = info.panels
    if hint.shape == (len(ts),):
        return hint[1:][::-1].astype(int)
    return np.ones(len(ts) - 1, dtype=int)


class _SegmentFailed(Exception):
    """LSODA did not finish a segment (a transition matrix growing too fast to follow)."""


class _Segment:
    """One backward LSODA solve of ``(y, M)`` from the first of ``edges`` (``M = I``,
    ``y`` there) to the last, reported at the edges and at the five Gauss-Legendre nodes of
    each of ``panels[i]`` panels between ``edges[i]`` and ``edges[i + 1]``. Where LSODA's
    step and order at an interval's far end say that its panels are too long for the rule
    (``panels_needed``), that interval is solved again alone, from its near end, with
    enough equal panels."""

    def __init__(self, field, options, params, which, y, edges, panels):
        self.field, self.params, self.which = field, params, which
        self.n = n = y.shape[0]
        self.evaluate = compiled(TransitionField(field, n), "rhs")
        self.options, self.extra = options, _lsoda_options(options)
        self.panels = np.array(panels)     # with the refined intervals' counts
        times, nodes, weights, ends = gauss_times(edges, panels)
        Z, info = self._solve(np.concatenate([y, np.eye(n).ravel()]), times)
        self.M = Z[ends, n:].reshape(-1, n, n)
        node_rows = nodes.ravel()
        self.t, self.Z, self.w = times[node_rows], Z[node_rows], weights.ravel()
        self.interval = np.repeat(np.repeat(np.arange(len(panels)), panels), 5)
        # the step in use on reaching each interval's far end, against its panels
        last = ends[1:] - 1      # info's entries are for the times after the first
        needed = panels_needed(np.diff(edges) / panels, np.diff(info["nst"][last], prepend=0)
                               / panels, info["hu"][last], info["nqu"][last], options.rtol)
        for j in np.nonzero(needed > 1)[0]:
            self.panels[j] = needed[j] * panels[j]
            self._refine(j, edges[j:j + 2], int(self.panels[j]), Z[ends[j]])

    def _solve(self, z0, times):
        options = self.options
        # a solve of its own (from the segment's first point), for a derivative
        with warnings.catch_warnings(), solving(self.field, strict=True):
            warnings.simplefilter("ignore", _si.ODEintWarning)
            Z, info = _si.odeint(self.evaluate.plain, z0, times, args=tuple(self.params),
                                 tfirst=True, rtol=float(np.min(options.rtol)),
                                 atol=_scalar_atol(options), full_output=True, **self.extra)
        if info["message"] != "Integration successful.":
            raise _SegmentFailed(info["message"])
        return Z, info

    def _refine(self, j, edges, panels, z0):
        """Interval ``j``'s nodes again, from its own solve with ``panels`` panels."""
        times, nodes, weights, _ = gauss_times(edges, np.array([panels]))
        Z, _ = self._solve(z0, times)
        keep = self.interval != j
        rows = nodes.ravel()
        self.t = np.concatenate([self.t[keep], times[rows]])
        self.Z = np.concatenate([self.Z[keep], Z[rows]])
        self.w = np.concatenate([self.w[keep], weights.ravel()])
        self.interval = np.concatenate([self.interval[keep], np.full(rows.size, j)])

    def integral(self, c, good):
        """``g``'s increment over the first ``good`` intervals: the integral of ``a J_p``
        with ``a = M c[j]`` on interval ``j``, by the Gauss rule at every node at once."""
        n = self.n
        keep = self.interval < good
        Y = self.Z[keep, :n]
        M = self.Z[keep, n:].reshape(-1, n, n)
        A = np.einsum("rij,ri->rj", M, c[self.interval[keep]])
        if getattr(self.field, "watch", None) is not None:
            # a field with branches reads one point at a time: node by node, each a replay
            pull = compiled(self.field, "pull", self.which)
            rows = [np.concatenate([np.ravel(c) for c in pull.plain(t, y, a, *self.params)[1:]])
                    for t, y, a in zip(self.t[keep].tolist(), Y, A)]
            return self.w[keep] @ np.array(rows)
        quadrature = compiled(self.field, "quadrature", self.which, int(keep.sum()))
        return quadrature.plain(self.t[keep], Y, A, self.w[keep], *self.params)


def gauss_times(edges, panels):
    """The times to report between the monotonic ``edges`` (the sweep's direction), with
    ``panels[i]`` equal panels between ``edges[i]`` and ``edges[i + 1]``: the first edge,
    then for each panel its five Gauss-Legendre nodes and its far end. Returns ``(times,
    nodes, weights, ends)``: ``nodes[r]`` are the positions in ``times`` of panel ``r``'s
    nodes, ``weights[r]`` their weights for the integral in increasing time, ``ends`` the
    positions of the edges. Every time is ``edges[i] + fraction * (edges[i + 1] -
    edges[i])`` and every weight a multiple of ``edges[i + 1] - edges[i]``
    (``gauss_layout``), so the same layout serves traced edges."""
    interval, fraction, scale, nodes, ends = gauss_layout(panels)
    edges = np.asarray(edges)
    width = edges[1:] - edges[:-1]
    times = edges[interval] + fraction * width[interval]
    times[ends] = edges
    return times, nodes, width[panel_intervals(panels)][:, None] * scale, ends


def panel_intervals(panels):
    """The interval of each panel."""
    return np.repeat(np.arange(len(panels)), panels)


def gauss_layout(panels):
    """The layout of ``gauss_times``: each reported time's interval and fraction of it,
    each panel's node weights per unit of its interval's width, the nodes' and the edges'
    positions."""
    panels = np.asarray(panels)
    interval = panel_intervals(panels)
    within = np.arange(len(interval)) - np.repeat(np.cumsum(panels) - panels, panels)
    count = panels[interval][:, None]
    # a panel's nodes then its far end, as fractions of its interval from the near edge
    node_fractions = (within[:, None] + (1 + _NODES) / 2) / count
    rows = np.concatenate([node_fractions, (within[:, None] + 1) / count], axis=1)
    fraction = np.concatenate([[0.0], rows.ravel()])
    row_interval = np.concatenate([[0], np.repeat(interval, 6)])
    nodes = 1 + 6 * np.arange(len(interval))[:, None] + np.arange(5)
    ends = np.concatenate([[0], 6 * np.cumsum(panels)])
    # weights in increasing time: the panel's half width, negated in the sweep's direction
    scale = -_WEIGHTS[None, :] / (2 * count)
    return row_interval, fraction, scale, nodes, ends


def panels_needed(lengths, counts, steps, orders, rtol):
    """Gauss panels for intervals of ``lengths`` over which LSODA took ``counts`` steps,
    the last of size ``steps`` at order ``orders``. A step ``h`` at order ``q`` within
    ``rtol`` says the solution varies on the time scale ``1 / w`` with ``h w ~ rtol **
    (1 / (q + 1))`` (``h`` the smaller of the last step and the interval's mean step);
    five-point Gauss-Legendre on a panel of length ``L`` errs by about ``GAUSS_ERROR (L w)
    ** 10`` relative to the integral, below ``rtol`` while ``L w <= (rtol / GAUSS_ERROR) **
    0.1``; panels are half that long, for the estimate's sake."""
    rtol = float(np.min(rtol))
    lengths = np.abs(lengths)
    with np.errstate(divide="ignore", invalid="ignore"):
        h = np.minimum(np.abs(steps), lengths / np.maximum(counts, 1))
        w = rtol ** (1.0 / (np.asarray(orders) + 1.0)) / h
        needed = np.ceil(2 * lengths * w / (rtol / GAUSS_ERROR) ** 0.1)
    return np.where(np.isfinite(needed) & (needed > 1), needed, 1).astype(int)


def _well_conditioned(W):
    """How many rows after the first (the identity) keep ``M`` within ``CONDITION_LIMIT``."""
    bad = np.nonzero(~(np.linalg.cond(W[1:]) <= CONDITION_LIMIT))[0]   # NaN is bad too
    return len(W) - 1 if len(bad) == 0 else int(bad[0])


# --- explicit ------------------------------------------------------------------------------


_EXPLICIT = {"RK45": _si.RK45, "RK23": _si.RK23, "DOP853": _si.DOP853,
             "odeint": _si.DOP853}


def explicit_sweep(t0, ts, out, G, params, field, options, which, P, start=None, a=None,
                   g=None):
    """The explicit route, from the output ``start`` (default: the last) with the adjoint
    ``a`` there (``G[start]`` included) and ``g`` gathered so far. One replay per evaluation
    gives ``f``, ``a J_y`` and ``a J_p``; each interval's solver starts from the step size
    the previous interval reached (no initial step selection), so the restarts cost one
    evaluation each. ``odeint``'s non-stiff problems use DOP853 (the same tolerances)."""
    n, m = out.shape[1], ts.shape[0]
    start = m - 1 if start is None else start
    cls = _EXPLICIT[options.method]
    atol = _scalar_atol(options)
    items = dict(options.items)
    extra = {}
    if options.method == "odeint":
        if items.get("hmax"):
            extra["max_step"] = float(items["hmax"])
    elif "max_step" in items:
        extra["max_step"] = items["max_step"]
    fun = compiled(field, "aug", which, n).plain

    a = G[start].copy() if a is None else a
    g = np.zeros(P) if g is None else g
    h = None
    for k in range(start, -1, -1):
        here = float(ts[k])
        target = float(ts[k - 1]) if k > 0 else t0
        if target != here:
            first = None if h is None else min(h, abs(target - here))
            solver = cls(lambda t, z: fun(float(t), z, *params), here,
                         np.concatenate([out[k], a, g]), target,
                         rtol=options.rtol, atol=atol, first_step=first, **extra)
            while solver.status == "running":
                proposal = solver.h_abs
                solver.step()
            if solver.status != "finished":
                raise ODESolveError(f"{options.name}: the adjoint solve failed at "
                                    f"t={solver.t!r}")
            h = proposal
            a, g = solver.y[n:2 * n].copy(), solver.y[2 * n:].copy()
        if k > 0:
            a = a + G[k - 1]
    return np.concatenate([a, g])


# --- dense ---------------------------------------------------------------------------------


def dense_sweep(y0, t0, ts, G, params, field, options, which, P):
    """The dense route: the state solved forwards once with SciPy's dense output (the same
    solve as the primal's: its values at ``ts`` are the outputs), then the adjoint
    backwards along that interpolant interval by interval from the last output time. The
    parameters' cotangent is integrated with the adjoint (five-point Gauss-Legendre on the
    adjoint's own steps for BDF, whose step control trips on the augmented system)."""
    n, m = y0.shape[0], ts.shape[0]
    method = "LSODA" if options.method == "odeint" else options.method
    implicit = method in IMPLICIT
    rtol, atol = options.rtol, _scalar_atol(options)
    staged = compiled(field, "rhs")
    jac = None
    if implicit:
        jac = options.jac if options.jac is not None else Jacobian(
            field, params, y0, t0, options.sparse, options.jac_sparsity)
    extra = {"jac": jac} if implicit else {}
    items = dict((k, v) for k, v in options.items if k in ("max_step", "min_step"))
    if ts[-1] == t0:
        state = None
    else:
        forward = _si.solve_ivp(lambda t, y: np.asarray(staged(t, y, *params), float),
                                (t0, float(ts[-1])), y0, method=method, rtol=rtol,
                                atol=options.atol, dense_output=True, **extra, **items)
        if forward.status != 0:
            raise ODESolveError(f"{options.name}: the state solve of the adjoint sweep "
                                f"failed: {forward.message}")
        state = forward.sol
    pull = compiled(field, "pull", which)
    quadrature = method == "BDF" and P > 0
    width = n if quadrature else n + P

    def rhs(t, z):
        cts = pull(float(t), state(t), z[:n], *params)
        if quadrature:
            return -np.asarray(cts[0], float)
        return -np.concatenate([np.ravel(c) for c in cts])

    back_extra = {}
    if implicit:
        full = compiled(field, "jac_all", which)

        def back_jac(t, z):
            J = np.asarray(full(float(t), state(t), *params), float)   # (n, n + P)
            M = np.zeros((width, width))
            M[:, :n] = -J[:, :width].T
            return M
        back_extra["jac"] = back_jac

    a = G[m - 1].copy()
    g = np.zeros(P)
    times = list(ts)
    for k in range(m - 1, -1, -1):
        target = times[k - 1] if k > 0 else t0
        if target != times[k]:
            z0 = a if quadrature else np.concatenate([a, g])
            back = _si.solve_ivp(rhs, (times[k], target), z0, method=method, rtol=rtol,
                                 atol=atol, dense_output=quadrature, **back_extra, **items)
            if back.status != 0 and method == "BDF":
                # SciPy's BDF can fail to start on an adjoint whose components begin at
                # zero and grow on a fast scale; Radau (also stiff) takes the interval
                back = _si.solve_ivp(rhs, (times[k], target), z0, method="Radau", rtol=rtol,
                                     atol=atol, dense_output=quadrature, **back_extra,
                                     **items)
            if back.status != 0:
                raise ODESolveError(f"{options.name}: the adjoint solve failed: "
                                    f"{back.message}")
            a = back.y[:n, -1].copy()
            if quadrature:
                g = g + _gauss(lambda t, sol=back.sol: np.concatenate(
                    [np.ravel(c) for c in pull(float(t), state(t), sol(t), *params)[1:]]),
                    back.t)
            else:
                g = back.y[n:, -1].copy()
        if k > 0:
            a = a + G[k - 1]
    return np.concatenate([a, g])


_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(5)


def _gauss(integrand, steps):
    """``integral of integrand`` from ``steps[-1]`` to ``steps[0]`` (a backward solve's
    step times): five-point Gauss-Legendre on each step, exact for polynomials of degree 9,
    so its error stays below the solver's own on the steps the solver chose (the adjoint's
    fast transients after each jump get short steps, so they are sampled finely)."""
    total = 0.0
    for left, right in zip(steps[1:], steps[:-1]):
        half, mid = (right - left) / 2, (right + left) / 2
        for node, weight in zip(_NODES, _WEIGHTS):
            total = total + weight * half * integrand(mid + half * node)
    return total
