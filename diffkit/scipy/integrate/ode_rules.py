"""The ODE solve primitive and its rules.

``odesolve_p(y0, t0, ts, *params, field, method, options)`` is the solution of
``y' = field(t, y, *params)``, ``y(t0) = y0``, at the output times ``ts`` (a 1-D array,
ordered in the direction of integration from ``t0``): an array of shape ``(len(ts), n)``.
Its implementation calls SciPy (``solve_ivp`` with ``t_eval=ts``, or ``odeint`` for
``method="odeint"``); the implicit methods get the exact Jacobian of the field (dense, or
sparse when the pattern is sparse: ``ode_field.Jacobian``).

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
  time. One backward sweep serves every argument's rule of one backward pass
  (``_RuleMemo``); the output times' rule needs none.
- Batching: one solve per batch member (a loop), stacked.

The solves of derivative systems and the sweeps are *strict* (``ode_branches``): a field
whose Python branch on the state or the parameters changes during them raises
``BranchSwitchError``; the solve of the solution itself goes on as SciPy's.

Derivatives are those of the exact solution, computed to the solver's tolerances: the
sensitivity and adjoint systems are solved with the same ``rtol``/``atol``.
"""

import contextlib
import itertools
import threading
import weakref

import numpy as np
import scipy.integrate as _si

from ... import api
from ...core.concrete import underlying
from ...core.primitive import EachArgument, Primitive
from ...core.trace import Tracer
from ...core.zeros import instantiate, is_zero, shape_of
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
    gauss_layout,
    panel_intervals,
    panels_needed,
    sweep,
    transition_route,
    transition_sweep,
)


class Options:
    """The solver's settings, hashable and shared by the derivative solves: ``method``,
    ``rtol``, ``atol``, the other SciPy options (``items``), the sparse choice, a user's
    ``jac`` (for the user's field only) and the statistics of the last solve."""

    def __init__(self, method, rtol, atol, items=(), sparse=None, jac=None,
                 jac_sparsity=None, name="solve_ivp"):
        self.method, self.rtol, self.atol = method, rtol, atol
        self.items, self.sparse, self.jac = tuple(items), sparse, jac
        self.jac_sparsity, self.name = jac_sparsity, name
        self.stats = None
        # odeint only: the output times of the last solve and the Gauss panels each of
        # their intervals needs for the parameters' integral in the adjoint sweep, from
        # the solve's own steps (a hint: the sweep checks its steps again)
        self.panels = None
        # the steps of the last solve (for solve_ivp, half its evaluations: about the steps
        # LSODA takes over the same problem, two evaluations each)
        self.steps = None
        # odeint only: whether a solve with these options switched LSODA to its stiff
        # method (None: no solve seen yet); the adjoint sweep's choice of solver reads it
        self.stiff = None

    def derived(self):
        """The options of a derivative solve: no user jac, no first step."""
        return Options(self.method, self.rtol, self.atol,
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
    """The solution at ``ts`` on plain values (``odesolve_p``'s implementation)."""
    y0 = np.asarray(y0, float)
    ts = np.asarray(ts, float)
    t0 = float(t0)
    n = y0.shape[0]
    if not np.all(np.isfinite(y0)):    # (a derivative system's start, from a failed solve)
        raise ODESolveError(f"{options.name}: a solve would start from a state that is not "
                            "finite (no solution, so no derivative)")
    if len(ts) and np.all(ts == t0):    # no time to cover (a sweep derivative's last leg)
        return np.tile(y0, (len(ts), 1))
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
        stiff = bool(np.any(np.asarray(info["mused"]) == 2))
        options.stiff = stiff if options.stiff is None else (options.stiff or stiff)
        options.stats = dict(nfev=int(info["nfe"][-1]), njev=int(info["nje"][-1]), nlu=0,
                             status=0, message=info["message"])
        options.steps = int(info["nst"][-1])
        if not skip and len(ts) > 1:
            needed = panels_needed(np.diff(ts), np.diff(info["nst"], prepend=0), info["hu"],
                                   info["nqu"], options.rtol)
            options.panels = (ts.copy(), np.concatenate([[1], needed]))
        return Y[skip:].reshape(len(ts), n)
    if len(ts) == 0:
        return np.zeros((0, n))
    return _solve(rhs, params, jac, y0, t0, float(ts[-1]), ts, options).y.T.copy()


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
    ``ts=None``); a failure raises ``ODESolveError``; the statistics go to ``options``."""
    extra = {} if jac is None or options.method not in IMPLICIT else {
        "jac": _finite(jac, options.name)}
    sol = _si.solve_ivp(rhs, (t0, t1), y0, method=options.method, t_eval=ts,
                        args=tuple(params), rtol=options.rtol, atol=options.atol, **extra,
                        **dict(options.items))
    if sol.status != 0 or (ts is not None and sol.y.shape[1] != len(ts)):
        raise ODESolveError(f"{options.name}: the {options.method} solver failed before the "
                            f"last output time {t1!r}: {sol.message} (no solution, so "
                            "no derivative)")
    options.stats = dict(nfev=sol.nfev, njev=sol.njev, nlu=sol.nlu, status=sol.status,
                         message=sol.message)
    options.steps = sol.nfev // 2    # about LSODA's steps for the same work
    return sol


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
    """The solution at the solver's own steps, on plain values: ``(t, y)`` (``y`` of shape
    ``(len(t), n)``)."""
    y0 = np.asarray(y0, float)
    rhs, jac = _rhs_and_jac(y0, t0, params, field, options)
    with solving(field):
        sol = _solve(rhs, params, jac, y0, float(t0), float(t1), None, options)
    return sol.t, sol.y.T.copy()


def odesolve(y0, t0, ts, params, field, options):
    return odesolve_p(y0, t0, ts, *params, field=field, options=options)


def _rows(field, ts, Y, params):
    """``f(ts[k], Y[k])`` for every row."""
    return api.vmap(lambda t, y: field(t, y, *params))(ts, Y)


def _jvp(primals, tangents, *, field, options):
    y0, t0, ts, *params = primals
    dy0, dt0, dts, *dps = tangents
    out = odesolve_p(y0, t0, ts, *params, field=field, options=options)
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
                       field=aug, options=_derived(options, [n]))
        tangent = Z[:, n:]
    if not is_zero(dts):
        part = _rows(field, ts, out, params) * reshape(dts, (-1, 1))
        tangent = part if tangent is None else tangent + part
    if tangent is None:
        tangent = zeros(shape_of(out))
    return out, tangent


def _derived(options, sizes):
    derived = options.derived()
    derived.atol = options.atol_for(sizes)
    return derived


class _RuleMemo:
    """What the per-argument VJP rules of one application of a primitive share (the adjoint
    sweep serves every argument's rule), computed by the first rule asking for it.

    It is reused only by the other rules of the same backward pass over the same
    application: the memo is kept for the identical cotangent, output, arguments, field and
    options (held weakly), and a rule that asks a second time starts another backward pass
    (a pullback called again, perhaps after its cotangent was changed in place), which
    computes afresh. The value is dropped when the output it was computed for is freed.
    One memo per thread."""

    def __init__(self):
        self._local = threading.local()
        self._made = itertools.count()

    def get(self, rule, key, compute):
        holder = self._holder()
        entry = holder[0]
        if entry is not None:
            refs, served, value, _ = entry
            if rule not in served and len(refs) == len(key) and \
                    all(ref() is k for ref, k in zip(refs, key)):
                served.add(rule)
                return value
        holder[0] = None      # no stale value is kept while computing
        value = compute()
        token = next(self._made)
        holder[0] = (tuple(_held(k) for k in key), {rule}, value, token)
        try:   # key[1] is the output: the value lives no longer than it
            weakref.finalize(key[1], _forget, holder, token)
        except TypeError:
            pass
        return value

    def _holder(self):
        holder = getattr(self._local, "holder", None)
        if holder is None:
            holder = self._local.holder = [None]
        return holder


def _forget(holder, token):
    if holder[0] is not None and holder[0][3] == token:
        holder[0] = None


def _held(x):
    """A weak reference to ``x`` where it has one, else ``x`` itself in a callable."""
    try:
        return weakref.ref(x)
    except TypeError:
        return lambda: x


_sweeps = _RuleMemo()


def _adjoint(i, ct, out, y0, t0, ts, params, field, options):
    """``(a(t0), g(t0), G)``: the sweep's adjoint, the parameters' flat cotangent and the
    output's cotangent, for the rule of argument ``i``."""
    def compute():
        n = shape_of(y0)[0]
        G = instantiate(ct)
        ag = adjoint_sweep_p(y0, t0, ts, out, G, *params, field=field, options=options)
        return ag[:n], ag[n:], G
    return _sweeps.get(i, (ct, out, y0, t0, ts, *params, field, options), compute)


def _vjp_rule(i):
    """The cotangent of argument ``i``: ``a(t0)`` for ``y0``, ``-a(t0) . f(t0, y0)`` for
    ``t0``, ``G[k] . f(t_k, y_k)`` for each output time, ``g``'s block for a parameter.
    Each rule computes only its own part (the others' arguments may be constants); the
    output times' needs no sweep."""
    def rule(ct, out, y0, t0, ts, *params, field, options):
        if i == 2:
            if shape_of(ts)[0] == 0:
                return zeros(0)
            return api.vmap(dot)(instantiate(ct), _rows(field, ts, out, params))
        if i >= 3 and not differentiable(params[i - 3]):
            return None
        a, g, _ = _adjoint(i, ct, out, y0, t0, ts, params, field, options)
        if i == 0:
            return a
        if i == 1:
            return -dot(a, field(t0, y0, *params))
        start = sum(int(np.prod(shape_of(p))) for p in params[:i - 3] if differentiable(p))
        size = int(np.prod(shape_of(params[i - 3])))
        return reshape(g[start:start + size], shape_of(params[i - 3]))
    return rule


def _looped(name):
    """The batching rule of the solve primitive ``name``: SciPy solves one problem at a
    time, so a batch is a loop over its examples, stacked on axis 0."""
    def batch(axis_size, values, batch_axes, *, field, options):
        primitive = {"odesolve": odesolve_p, "odesolve_adjoint": adjoint_sweep_p}[name]
        outs = []
        for b in range(axis_size):
            args = [v[b] if ax is not None else v for v, ax in zip(values, batch_axes)]
            outs.append(primitive(*args, field=field, options=options))
        return stack(outs), 0
    return batch


def _sparsity(args, out, local, **params):
    """Output ``(k, j)`` depends on every entry of ``y0``, ``t0`` and the parameters, and
    on the output time ``ts[k]`` alone."""
    y0, t0, ts, *rest = args
    size = int(np.prod(shape_of(out)))
    m, n = shape_of(out)
    rows = [sr.dense(size, int(np.prod(shape_of(x)))) if sr.differentiable(x) else None
            for x in (y0, t0)]
    times = np.repeat(np.arange(m, dtype=np.intp), n) if sr.differentiable(ts) else None
    return tuple(rows) + (times,) + tuple(
        sr.dense(size, int(np.prod(shape_of(x)))) if sr.differentiable(x) else None
        for x in rest)


def _dense_sparsity(args, out, local, **params):
    """Every output entry depends on every entry of every float argument."""
    size = int(np.prod(shape_of(out)))
    return tuple(sr.dense(size, int(np.prod(shape_of(x)))) if sr.differentiable(x) else None
                 for x in args)


odesolve_p = Primitive("odesolve", _impl, _jvp, EachArgument(_vjp_rule), _looped("odesolve"),
                       sparsity=_sparsity)


# --- the adjoint sweep ------------------------------------------------------------------
#
# ``adjoint_sweep_p(y0, t0, ts, out, G, *params)`` is ``(a(t0), g(t0))``: the adjoint and
# the parameters' cotangent after the backward sweep over every output interval. Its
# implementation is ``ode_sweeps.sweep`` (SciPy's solvers on plain values, by one of three
# routes: the transition matrix for small non-stiff odeint problems, the state solved
# backwards with the adjoint for explicit methods, the state's dense output for stiff
# ones). The sweep's own derivatives (second order) are those of the same map written with
# the solve primitive: the state re-solved backwards with the adjoint from each checkpoint
# (``_resolve``).


def _sweep_impl(y0, t0, ts, out, G, *params, field, options):
    with solving(field, strict=True):    # a derivative: a switch of branch is refused
        return sweep(y0, t0, ts, out, G, params, field, options)


def _resolve(y0, t0, ts, out, G, *params, field, options):
    """The sweep written with the solve primitive, following the route the plain sweep
    takes: the transition route's segments (``_resolve_transition``), else the state
    re-solved backwards with the adjoint from each checkpoint (``_resolve_intervals``)."""
    n, m = shape_of(y0)[0], shape_of(ts)[0]
    plain_ts = np.asarray(underlying(ts), float)
    plain_t0 = float(underlying(t0))
    if transition_route(n, plain_t0, plain_ts, options):
        # the plain sweep again, for its plan (a primitive's value cannot carry it); only
        # derivatives of the sweep pay for it
        plan = []
        which = [i for i, p in enumerate(params) if differentiable(p)]
        with solving(field, strict=True):
            transition_sweep(plain_t0, plain_ts, np.asarray(underlying(out), float),
                             np.asarray(underlying(G), float),
                             [underlying(p) for p in params], field, options, which,
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
                           *params, field=aug, options=derived)
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
                       *params, field=transition, options=derived)
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
    with _stiff_advice(options):
        _, tangent = api.jvp(_resolved_in(primals, which, field, options),
                             tuple(primals[k] for k in which),
                             tuple(instantiate(tangents[k]) for k in which))
    return out, tangent


@contextlib.contextmanager
def _stiff_advice(options):
    """A failed solve in a derivative of the sweep of a stiff problem: the state solved
    backwards from each output time, which a stiff system does not survive."""
    try:
        yield
    except ODESolveError as failure:
        if options.method not in ("BDF", "Radau", "LSODA") and not options.stiff:
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


_resolutions = _RuleMemo()


def _sweep_vjp(i):
    """The cotangent of the sweep's argument ``i``: one reverse pass over ``_resolve``
    gives every float argument's, shared by the rules of one backward pass."""
    def rule(ct, out, *primals, field, options):
        if not differentiable(primals[i]):
            return None

        def compute():
            which = [k for k, x in enumerate(primals) if differentiable(x)]
            with _stiff_advice(options):
                _, pull = api.vjp(_resolved_in(primals, which, field, options),
                                  *[primals[k] for k in which])
                return dict(zip(which, pull(instantiate(ct))))
        return _resolutions.get(i, (ct, out, *primals, field, options), compute)[i]
    return rule


adjoint_sweep_p = Primitive("odesolve_adjoint", _sweep_impl, _sweep_jvp,
                            EachArgument(_sweep_vjp), _looped("odesolve_adjoint"),
                            sparsity=_dense_sparsity)
