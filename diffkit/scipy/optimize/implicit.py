"""Derivatives of solutions by the implicit function theorem: ``root``, ``minimize``,
``least_squares`` and ``fixed_point`` whose solutions differentiate in the parameters passed
through ``args`` and in the traced values the user's function closes over (found by
recording the function once and replayed with them as parameters: ``_UserFunction``).

A solution ``x*(p)`` satisfies an optimality condition ``F(x*, p) = 0``:

- ``root``: ``F = fun(x, *args)``;
- ``minimize`` (unconstrained): ``F = grad f(x, *args)``;
- ``least_squares`` (linear loss, no bounds): ``F = J_r(x)^T r(x)``, the gradient of
  ``0.5 * sum(r ** 2)``;
- ``fixed_point``: ``F = g(x, *args) - x``.

Where ``A = dF/dx`` at the solution is invertible, ``x*`` is differentiable and
``dx* = -A^{-1} (dF/dp) dp`` (forward mode); reverse mode solves ``A^T l = g`` for a
cotangent ``g`` and gives ``-(dF/dp)^T l``. SciPy finds ``x*``; diffkit supplies ``dF/dp``
and the products with ``A`` (JVPs and VJPs of ``F``). The linear system is solved densely
(``A`` formed by ``n`` JVPs) when ``n`` is at most ``dense_max``, else by conjugate gradients
(``minimize``, ``least_squares``: ``A`` is symmetric) or GMRES on a
``scipy.sparse.linalg.LinearOperator`` built from JVPs (``A``) and VJPs (``A^T``). The linear
solves are differentiable calls themselves, so second derivatives, ``vmap``, ``hessian``
and ``jit`` compose.

When the derivative does not exist it is an error, never a number: a solver that did not
converge raises ``NonConvergenceError``, and a singular ``A`` at the solution (a root of
multiplicity above one, a flat direction of the objective, a minimiser that is not strict)
raises ``SingularJacobianError``. The derivative is as accurate as the solution: tighten the
solver's tolerances (``tol``, ``options``, ``xtol``, ``ftol``/``gtol``) and, for the
iterative linear solve, ``linear_solve_options(rtol=...)``.
"""

import contextlib
import contextvars
import threading
import types

import numpy as np
import scipy  # scipy.optimize, scipy.sparse.linalg: imported on first use

from ... import api
from ... import numpy as dnp
from ...core.concrete import holds_tracer
from ...core.trace import Tracer, current_level
from ...core.zeros import dtype_of, is_zero, shape_of
from ...errors import DiffkitError, NoRuleError
from ...flatten_util import ravel_pytree
from ...interpreters.forward import jvp_flat
from ...interpreters.reverse import vjp_flat
from ...tree_util import tree_flatten, tree_map
from ..solver_call import Closure, SolverCall, TracedArgs, call, check_plain, plain
from .flat import _flat_output, _Params

__all__ = ["fixed_point", "linear_solve_options", "NonConvergenceError",
           "SingularJacobianError"]


class NonConvergenceError(DiffkitError, RuntimeError):
    """The solver did not converge, so its solution has no derivative to give."""


class SingularJacobianError(DiffkitError, np.linalg.LinAlgError):
    """The optimality condition's Jacobian is singular at the solution: the solution is not
    a differentiable function of the parameters there."""


# --- settings of the linear solves ------------------------------------------------------------

# The settings in force, context-local: each thread (and asyncio task) sees its own, so a
# block in one thread never changes the solves of another. A read-only mapping, replaced
# (never changed) by ``linear_solve_options``.
_DEFAULTS = types.MappingProxyType({"dense_max": 200, "rtol": 1e-10, "maxiter": None,
                                    "cond_max": 1e12})
_SETTINGS = contextvars.ContextVar("linear_solve_options", default=_DEFAULTS)


@contextlib.contextmanager
def linear_solve_options(dense_max=None, rtol=None, maxiter=None, cond_max=None):
    """Within the block, the linear systems of implicit derivatives use these settings:
    ``dense_max`` (default 200), the largest size solved densely; ``rtol`` (1e-10) and
    ``maxiter`` (SciPy's default) of CG/GMRES above it; ``cond_max`` (1e12), the largest
    condition number of a dense system accepted before ``SingularJacobianError``.

    The settings are context-local (``contextvars``): they hold for the solves run in this
    thread inside the block, nested blocks override the arguments they give, and other
    threads keep their own settings. Tasks that ``jacrev(..., executor=pool)`` runs in a
    thread pool see the settings of the block around the ``jacrev`` call (each runs in a
    copy of the caller's context); tasks run in other processes (Dask, a process pool)
    start from the defaults: enter the block inside the function they run."""
    settings = dict(_SETTINGS.get())
    for key, value in (("dense_max", dense_max), ("rtol", rtol), ("maxiter", maxiter),
                       ("cond_max", cond_max)):
        if value is not None:
            settings[key] = value
    token = _SETTINGS.set(types.MappingProxyType(settings))
    try:
        yield
    finally:
        _SETTINGS.reset(token)


class _Solving(threading.local):
    def __init__(self):
        self.levels = []   # the levels of the transformations waiting for each plain solve


_solving = _Solving()


def wanted(args):
    """Whether a solver called with ``args`` goes the implicit way: ``args`` hold traced
    values, or a transformation is running (the user's function may close over one of its
    values, which is reported) that is not the one waiting for a plain solve of this
    module (whose solver, given plain arrays, takes the plain way)."""
    base = _solving.levels[-1] if _solving.levels else 0
    return holds_tracer(args) or current_level() > base


@contextlib.contextmanager
def _plain_solve():
    """SciPy solves on plain arrays in the block; a value traced by a transformation
    running now (up to its level) met there is a closure (``_checked``)."""
    _solving.levels.append(current_level())
    try:
        yield
    finally:
        _solving.levels.pop()


# --- the linear system of a derivative ---------------------------------------------------------


class _Condition:
    """The optimality condition ``F(x, params)`` (a flat vector of ``n`` entries) of one
    problem, its products with ``A = dF/dx`` and the differentiable solves with ``A`` and
    ``A^T``."""

    def __init__(self, residual, symmetric, name):
        self.residual, self.symmetric, self.name = residual, symmetric, name
        self.failure = None   # why the last solve that did not converge stopped

    def product(self, v, x, params, transpose):
        """``A v`` (``A^T v`` with ``transpose``) at ``(x, params)``, diffkit operations."""
        if transpose and not self.symmetric:
            _, pull = vjp_flat(lambda y: [self.residual(y, params)], [x], retain=False)
            (out,) = pull([v])
        else:
            _, (out,) = jvp_flat(lambda y: [self.residual(y, params)], [x], [v])
        return dnp.zeros(shape_of(x)) if is_zero(out) else out

    def solve(self, b, ok, x, params, transpose=False):
        """The solution ``y`` of ``A y = b`` (``A^T y = b``), a differentiable call. ``ok``
        (1 or 0, per example of a batch) says whether the solve of ``x`` converged: a
        derivative is refused where it did not, also when a staged (``jit``) derivative is
        replayed, which runs this call but not the rules."""
        transpose = transpose and not self.symmetric
        solver = SolverCall(
            lambda *p: (self._plain_solve(p[0], p[1], p[2], p[3:], transpose),),
            lambda p, t: self._solve_rule(p, t, transpose),
            lambda s, p, c: self._solve_back(s, p, c, transpose),
            f"{self.name} (linear solve)")
        return call(solver, [b, ok, x, *params])[0]

    def check(self, ok):
        """Raise ``NonConvergenceError`` unless ``ok`` (plain) is 1 everywhere."""
        if not np.all(np.asarray(ok) == 1.0):
            raise NonConvergenceError(
                f"{self.name} did not converge ({self.failure}), so its solution has no "
                "derivative to give. Raise the iteration limit, improve x0 or adjust the "
                "tolerances, and check that a solution exists.")

    def _plain_solve(self, b, ok, x, params, transpose):
        self.check(ok)
        settings = _SETTINGS.get()     # once: the whole solve uses one set of settings
        n = x.size
        b = np.asarray(b, np.float64)
        if n <= settings["dense_max"]:
            a = np.asarray(api.jacfwd(lambda y: self.residual(y, list(params)))(x),
                           np.float64).reshape(n, n)
            a = a.T if transpose else a
            cond = np.linalg.cond(a) if n else 1.0
            if not np.isfinite(cond) or cond > settings["cond_max"]:
                raise self._singular(f"its condition number is {cond:.3g}")
            return np.linalg.solve(a, b)
        operator = scipy.sparse.linalg.LinearOperator(
            (n, n), dtype=np.float64,
            matvec=lambda v: np.asarray(self.product(np.asarray(v, np.float64).ravel(), x,
                                                     list(params), transpose), np.float64))
        method = scipy.sparse.linalg.cg if self.symmetric else scipy.sparse.linalg.gmres
        with np.errstate(all="ignore"):   # a singular system is reported below
            y, info = method(operator, b, rtol=settings["rtol"], atol=0.0,
                             maxiter=settings["maxiter"])
            residual = np.linalg.norm(operator.matvec(y) - b)
        if info != 0 or not np.isfinite(residual) \
                or residual > 10 * settings["rtol"] * max(np.linalg.norm(b), 1e-300):
            raise self._singular(f"{method.__name__.upper()} stopped with info {info} and a "
                                 f"relative residual {residual / np.linalg.norm(b):.3g}",
                                 iterative=True)
        return y

    def _singular(self, why, iterative=False):
        more = (" (or the iterative solve needs more iterations: raise maxiter or loosen rtol "
                "with diffkit.scipy.optimize.linear_solve_options)") if iterative else ""
        return SingularJacobianError(
            f"{self.name}: the Jacobian of the optimality condition at the solution is "
            f"singular or nearly so ({why}){more}. The solution is then not a differentiable "
            "function of the parameters (a multiple root, a flat direction of the objective, "
            "a minimiser that is not strict), so it has no derivative.")

    def _solve_rule(self, primals, tangents, transpose):
        b, ok, x, params = primals[0], primals[1], primals[2], list(primals[3:])
        y = self.solve(b, ok, x, params, transpose)
        _, (change,) = jvp_flat(lambda z, *q: [self.product(y, z, list(q), transpose)],
                                [x, *params], list(tangents[2:]))
        rhs = tangents[0] if is_zero(change) else tangents[0] - change
        return (y,), (self.solve(rhs, ok, x, params, transpose),)

    def _solve_back(self, saved, primals, cotangents, transpose):
        (y,), (ct,) = saved, cotangents
        ok, x, params = primals[1], primals[2], list(primals[3:])
        lam = self.solve(ct, ok, x, params, not transpose)
        _, pull = vjp_flat(lambda z, *q: [self.product(y, z, list(q), transpose)],
                           [x, *params], retain=False)
        pulled = pull([lam])
        return [lam, None, *[None if is_zero(c) else -c for c in pulled]]


# --- a solution as a differentiable call -------------------------------------------------------


class _Problem:
    """One solve: ``solve(x0, params) -> (x, result)`` on plain arrays (SciPy),
    ``condition`` its optimality condition, ``converged(result, x, params)``."""

    def __init__(self, name, solve, condition, converged, x_size):
        self.name, self.plain, self.condition = name, solve, condition
        self.converged, self.x_size = converged, x_size
        self.state = []       # SciPy's results of the solves of the user's call
        self.keep = True      # (not of later ones: the rules' and jit's replays)

    def solution(self, x0, params):
        """The differentiable flat solution for the start ``x0`` and the traced params, and
        whether its solve converged (1.0 or 0.0; a batch under ``vmap``)."""
        return call(SolverCall(self._fun, self._rule, self._back, self.name), [x0, *params])

    def _fun(self, x0, *params):
        with _plain_solve():
            x, result = self.plain(np.asarray(x0, np.float64), list(params))
        ok = self.converged(result, x, list(params))
        if not ok:
            self.condition.failure = getattr(result, "message", result)
        if self.keep:
            self.state.append(result)
        return np.asarray(x, np.float64), np.float64(ok)

    def _rule(self, primals, tangents):
        x, ok = self.solution(primals[0], primals[1:])
        self.condition.check(plain(ok))
        params = list(primals[1:])
        _, (rhs,) = jvp_flat(lambda *q: [self.condition.residual(x, list(q))], params,
                             list(tangents[1:]))
        no_change = dnp.zeros(shape_of(ok))
        if is_zero(rhs):
            return (x, ok), (dnp.zeros(shape_of(x)), no_change)
        return (x, ok), (-self.condition.solve(rhs, ok, x, params), no_change)

    def _back(self, saved, primals, cotangents):
        (x, ok), ct = saved, cotangents[0]
        self.condition.check(plain(ok))
        params = list(primals[1:])
        lam = self.condition.solve(ct, ok, x, params, transpose=True)
        _, pull = vjp_flat(lambda *q: [self.condition.residual(x, list(q))], params,
                           retain=False)
        return [None, *[None if is_zero(c) else -c for c in pull([lam])]]

    def solved(self, x0, params, tree):
        """``(x, result)``: the flat solution (``solution``) and SciPy's result with the
        solution as ``tree(x)``."""
        x, _ = self.solution(x0, params)
        return x, self.result(tree(x))

    def result(self, x):
        """SciPy's result of the user's (last) solve, with ``success`` over a batch."""
        self.keep = False
        result = scipy.optimize.OptimizeResult(self.state[-1])
        result.success = bool(all(getattr(r, "success", True) for r in self.state))
        result.x = x
        return result


def _start(x0, name):
    """``x0`` as a ``_Params`` (from its structure, shapes and dtypes; it may be traced) and
    its flat vector (traced if ``x0`` is: the solution does not depend on it)."""
    leaves, treedef = tree_flatten(x0)
    template = treedef.unflatten([np.zeros(shape_of(v), _float(dtype_of(v))) if
                                  isinstance(v, Tracer) else v for v in leaves])
    params = _Params(template, name)
    flat = ravel_pytree(tree_map(lambda v: dnp.astype(v, _float(dtype_of(v)))
                                 if isinstance(v, Tracer) else v,
                                 treedef.unflatten(leaves)))[0]
    if not isinstance(flat, Tracer):
        flat = np.asarray(flat, np.float64)
    return params, flat


def _float(dtype):
    return dtype if dtype.kind == "f" else np.dtype(np.float64)


def _checked(fun, name):
    def checked(*a, **k):
        return check_plain(fun(*a, **k), name, _solving.levels[-1] if _solving.levels else 0)
    return checked


def _refuse(name, what):
    raise NoRuleError(f"{name}: the derivative of a solution with {what} is not computed "
                      "(the optimality condition then has active constraints). Solve the "
                      "unconstrained problem, or reparametrise the parameters (x = exp(z) "
                      "for x > 0) to differentiate it.")


class _UserFunction:
    """The user's ``fun(tree, *args, **kwargs)`` as ``f(y, theta)``, a function of the flat
    point ``y`` and the parameters ``theta``: the traced leaves of ``args`` and ``kwargs``,
    then the traced values ``fun`` closes over (closure conversion, ``Closure``).
    ``to_tree`` turns a flat point into ``fun``'s first argument, ``example`` is a plain
    flat point to record ``fun`` at."""

    def __init__(self, fun, to_tree, args, kwargs, example, name):
        self.fun, self.to_tree, self.name = fun, to_tree, name
        self.traced = TracedArgs((args, kwargs))
        self.closure = None
        if current_level() > 0:   # a transformation runs: fun may close over its values
            closure = Closure(lambda y, *q: self._direct(y, list(q)),
                              [example, *self.traced.params], name)
            self.closure = closure if closure.found else None
        self.params = self.traced.params + (self.closure.values if self.closure else [])

    def _direct(self, y, theta):
        args, kwargs = self.traced.rebuild(theta)
        return self.fun(self.to_tree(y), *args, **kwargs)

    def __call__(self, y, theta):
        if self.closure is None:
            return self._direct(y, theta)
        k = len(self.traced.params)
        return self.closure([y, *theta[:k]], theta[k:])

    def for_scipy(self, theta, flatten):
        """``(fun, args, kwargs)`` for the plain solver at the plain parameters ``theta``;
        ``flatten`` turns the solver's point back into a flat vector."""
        if self.closure is None:
            args, kwargs = self.traced.rebuild(theta)
            return _checked(self.fun, self.name), args, kwargs
        return (lambda point, *_, **__: self(flatten(point), theta)), (), {}


def _flatten_tree(tree):
    return dnp.astype(ravel_pytree(tree)[0], np.float64)


# --- the solvers ---------------------------------------------------------------------------------


def minimize(plain_minimize, fun, x0, args=(), method=None, jac=None, hess=None, hessp=None,
             bounds=None, constraints=(), tol=None, callback=None, options=None,
             **solver_options):
    """``diffkit.scipy.optimize.minimize`` (``plain_minimize``) whose solution
    differentiates in the traced values of ``args`` (and those ``fun`` closes over):
    optimality ``grad f = 0``. ``solver_options`` (``jit``, ``sparse``, ``workers``) go to
    the plain solve."""
    args = args if isinstance(args, tuple) else (args,)
    params, x0_flat = _start(x0, "minimize")
    user = _UserFunction(fun, params.tree, args, {}, params.x0, "minimize")
    if user.params and bounds is not None:
        _refuse("minimize", "bounds")
    if user.params and constraints:
        _refuse("minimize", "constraints")

    def solve(start, theta):
        scipy_fun, scipy_args, _ = user.for_scipy(theta, _flatten_tree)
        result = plain_minimize(scipy_fun, params.tree(start), args=scipy_args, method=method,
                                jac=jac, hess=hess, hessp=hessp, bounds=bounds,
                                constraints=constraints, tol=tol, callback=callback,
                                options=options, **solver_options)
        return params.flat(result.x, "the solution"), result

    def objective(y, theta):
        out = user(y, theta)
        return out[0] if jac is True else out

    def residual(y, theta):
        return api.grad(objective)(y, theta)

    def converged(result, x, theta):
        if result.success:
            return True
        # BFGS and others report a loss of precision at a minimiser they cannot improve
        gradient = np.asarray(residual(x, theta))
        return bool(np.max(np.abs(gradient), initial=0.0)
                    <= 1e-6 * (1.0 + abs(float(objective(x, theta)))))

    problem = _Problem("minimize", solve, _Condition(residual, True, "minimize"), converged,
                       params.n)
    x, result = problem.solved(x0_flat, user.params, params.tree)
    result.fun = objective(x, user.params)
    return result


def root(plain_root, fun, x0, args=(), method="hybr", jac=None, tol=None, callback=None,
         options=None, **solver_options):
    """``diffkit.scipy.optimize.root`` (``plain_root``) whose solution differentiates in the
    traced values of ``args`` (and those ``fun`` closes over): ``fun(x, *args) = 0``.
    ``solver_options`` (``jit``, ``workers``) go to the plain solve."""
    args = args if isinstance(args, tuple) else (args,)
    params, x0_flat = _start(x0, "root")
    user = _UserFunction(fun, params.tree, args, {}, params.x0, "root")

    def solve(start, theta):
        scipy_fun, scipy_args, _ = user.for_scipy(theta, _flatten_tree)
        result = plain_root(scipy_fun, params.tree(start), args=scipy_args, method=method,
                            jac=jac, tol=tol, callback=callback, options=options,
                            **solver_options)
        return params.flat(result.x, "the solution"), result

    def residual(y, theta):
        return _flat_output(user(y, theta), "root")

    def converged(result, x, theta):
        # a tolerance tighter than the arithmetic allows ends with "no progress" at a root
        return bool(result.success) or bool(
            np.max(np.abs(np.asarray(residual(x, theta))), initial=0.0)
            <= 1e-10 * (1.0 + np.max(np.abs(x), initial=0.0)))

    problem = _Problem("root", solve, _Condition(residual, False, "root"), converged,
                       params.n)
    x, result = problem.solved(x0_flat, user.params, params.tree)
    result.fun = residual(x, user.params)
    return result


def least_squares(plain_least_squares, fun, x0, jac=None, bounds=None, args=(), kwargs=None,
                  callback=None, **options):
    """``diffkit.scipy.optimize.least_squares`` (``plain_least_squares``) whose solution
    differentiates in the traced values of ``args`` and ``kwargs`` (and those ``fun``
    closes over): ``J_r^T r = 0``."""
    args = args if isinstance(args, tuple) else (args,)
    params, x0_flat = _start(x0, "least_squares")
    user = _UserFunction(fun, params.tree, args, kwargs or {}, params.x0, "least_squares")
    if user.params and options.get("loss", "linear") != "linear":
        raise NoRuleError(f"least_squares: the derivative of a solution with loss="
                          f"{options['loss']!r} is not computed; use the linear loss")
    if user.params and bounds is not None and not _unbounded(bounds):
        _refuse("least_squares", "bounds")

    def solve(start, theta):
        scipy_fun, scipy_args, scipy_kwargs = user.for_scipy(theta, _flatten_tree)
        result = plain_least_squares(scipy_fun, params.tree(start), jac=jac, bounds=bounds,
                                     args=scipy_args, kwargs=scipy_kwargs, callback=callback,
                                     **options)
        return params.flat(result.x, "the solution"), result

    def residuals(y, theta):
        return _flat_output(user(y, theta), "least_squares")

    def residual(y, theta):
        return api.grad(lambda z: 0.5 * dnp.sum(residuals(z, theta) ** 2))(y)

    problem = _Problem("least_squares", solve,
                       _Condition(residual, True, "least_squares"),
                       lambda result, x, theta: bool(result.success), params.n)
    x, result = problem.solved(x0_flat, user.params, params.tree)
    result.fun = residuals(x, user.params)
    result.cost = 0.5 * dnp.sum(result.fun ** 2)
    return result


def _unbounded(bounds):
    if isinstance(bounds, scipy.optimize.Bounds):
        lb, ub = bounds.lb, bounds.ub
    else:
        lb, ub = bounds
    try:
        return bool(np.all(np.asarray(lb, float) == -np.inf)
                    and np.all(np.asarray(ub, float) == np.inf))
    except (TypeError, ValueError):
        return False


def fixed_point(func, x0, args=(), xtol=1e-08, maxiter=500, method="del2"):
    """A fixed point ``x = func(x, *args)``, as ``scipy.optimize.fixed_point``, whose value
    differentiates in the traced values of ``args`` (and in nothing else: not in ``x0``).

    Same arguments and return value as SciPy's: the fixed point, an array of ``x0``'s shape
    (``method`` is ``'del2'``, Steffensen's acceleration, or ``'iteration'``). SciPy raises
    ``RuntimeError`` when it does not converge within ``maxiter`` iterations; here that is a
    ``NonConvergenceError`` (a ``RuntimeError`` too). The derivative is
    ``(I - dg/dx)^{-1} dg/dp`` at the fixed point; it exists when 1 is not an eigenvalue of
    ``dg/dx`` there (always, for a contraction), else ``SingularJacobianError``.
    """
    args = args if isinstance(args, tuple) else (args,)

    def plain(function, start, plain_args):
        try:
            with _plain_solve():
                return np.asarray(scipy.optimize.fixed_point(
                    function, start, args=plain_args, xtol=xtol, maxiter=maxiter,
                    method=method))
        except RuntimeError as error:
            if isinstance(error, DiffkitError):
                raise
            raise NonConvergenceError(f"fixed_point did not converge: {error}. Raise maxiter, "
                                      "loosen xtol or start nearer the fixed point.") from None

    if not (wanted(args) or isinstance(x0, Tracer)):
        return plain(_checked(func, "fixed_point"), x0, args)
    shape = shape_of(x0) if isinstance(x0, Tracer) else np.shape(x0)
    start = dnp.ravel(dnp.astype(x0, np.float64)) if isinstance(x0, Tracer) \
        else np.ravel(np.asarray(x0, np.float64))
    example = np.zeros(shape).ravel() if isinstance(x0, Tracer) else start
    user = _UserFunction(func, lambda y: dnp.reshape(y, shape), args, {}, example,
                         "fixed_point")

    def solve(start_flat, theta):
        scipy_fun, scipy_args, _ = user.for_scipy(theta, dnp.ravel)
        x = plain(scipy_fun, start_flat.reshape(shape), scipy_args)
        return np.ravel(np.asarray(x, np.float64)), "converged"

    def residual(y, theta):
        return dnp.ravel(user(y, theta)) - y

    problem = _Problem("fixed_point", solve, _Condition(residual, False, "fixed_point"),
                       lambda result, x, theta: True, int(np.prod(shape)))
    x, _ = problem.solution(start, user.params)
    problem.keep = False
    return dnp.reshape(x, shape)
