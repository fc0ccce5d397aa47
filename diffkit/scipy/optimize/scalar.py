"""``minimize``: a scalar objective over a pytree of parameters, with exact derivatives."""

import scipy  # scipy.optimize is imported on first use (SciPy's lazy submodules)

from ...api_checks import check_callable
from ...chunking import integer_workers
from . import implicit as _implicit
from .constraints import _constraint_list, _flat_bounds, _flat_constraints
from .flat import _as_trees, _Params, _tree_callback
from .objective import _default_method, _derivatives, _Objective
from .sparse_path import check_option, minimize_hessian


@integer_workers
def minimize(fun, x0, args=(), method=None, jac=None, hess=None, hessp=None, bounds=None,
             constraints=(), tol=None, callback=None, options=None, jit=True, sparse=None,
             workers=None):
    """Minimize the scalar ``fun(params, *args)`` over a pytree of parameters with
    ``scipy.optimize.minimize``, with exact derivatives from diffkit.

    ``x0`` is a pytree of float arrays (integers become float64); ``fun`` takes a pytree of
    the same structure and returns a real scalar (a non-scalar output is an error: use
    ``least_squares`` for residual vectors). ``method`` is SciPy's (default as SciPy's:
    BFGS, L-BFGS-B with bounds, SLSQP with constraints). diffkit supplies:

    - ``jac``: the exact gradient, for every method that uses one; value and gradient come
      from one reverse pass and are cached, so SciPy's ``fun(x)`` and ``jac(x)`` at the same
      point evaluate ``fun`` once. Derivative-free methods (Nelder-Mead, Powell, COBYLA,
      COBYQA) get only the value.
    - ``hessp``: exact Hessian-vector products for Newton-CG, trust-ncg and trust-krylov
      (forward over reverse; the linearised gradient is recorded once per point and
      replayed for each product, so an inner CG loop does not re-run ``fun``).
    - ``hess``: the exact Hessian, shape ``(n, n)``, for trust-exact, dogleg and trust-constr.

    ``jac``, ``hess`` and ``hessp`` given here replace the automatic ones: a callable takes
    the pytree (and ``args``; ``hessp`` also the direction as a pytree) and returns a
    gradient pytree (or flat vector), an ``(n, n)`` array, or a product pytree; ``jac=True``
    means ``fun`` returns ``(value, gradient)``; strings and ``HessianUpdateStrategy``
    objects go to SciPy as they are.

    ``constraints``: SciPy dicts ``{'type': 'eq' | 'ineq', 'fun': f, 'args': ...}`` (``'eq'``
    means ``f == 0``, ``'ineq'`` means ``f >= 0``), ``NonlinearConstraint(f, lb, ub)`` and
    ``LinearConstraint``. ``f`` takes the parameter pytree and returns any pytree of values,
    flattened to a vector of ``m`` entries (``lb``/``ub`` refer to that vector). Their
    Jacobians (``(m, n)``) are exact, and for trust-constr so are their Hessians, in SciPy's
    ``hess(x, v)`` form (dicts are converted to ``NonlinearConstraint`` for that). A
    ``NonlinearConstraint``'s own callable ``jac``/``hess`` (taking the pytree) or
    finite-difference string is kept; its default ``'2-point'`` Jacobian and its default
    (``BFGS()``, also when given explicitly) Hessian are replaced by exact ones. A
    ``LinearConstraint``'s matrix acts on the flat vector (``ravel_pytree`` order).

    ``bounds``: ``scipy.optimize.Bounds`` or a sequence of ``n`` ``(min, max)`` pairs on the
    flat vector (``ravel_pytree`` order), or a pytree with ``x0``'s structure holding a
    ``(lo, hi)`` pair at each leaf (numbers or arrays broadcastable to the leaf; ``None``
    means unbounded), or ``None`` at a leaf to leave it free.

    ``callback`` receives the pytree instead of the flat vector (with SciPy's
    ``callback(intermediate_result)`` form, ``intermediate_result.x`` is the pytree).
    ``tol`` and ``options`` go to SciPy unchanged.

    ``jit`` (default True): the value, gradient, Hessian products and Hessian are staged
    with ``diffkit.jit``: recorded at the first point, replayed at the next ones, so the
    Python of ``fun`` runs once (again only where a value it reads changes: see the jit
    guide). Side effects in ``fun`` (counting calls, printing) then happen only while it is
    recorded; pass ``jit=False`` to run ``fun`` at every point. A ``fun`` that draws random
    numbers is evaluated eagerly.

    ``sparse`` (trust-constr): the objective's Hessian and the constraints' Jacobians and
    Hessians computed by diffkit are given to SciPy as ``scipy.sparse`` arrays, each
    computed in as many batched passes as its sparsity pattern has colours (the pattern is
    detected at ``x0``, and again on each new path of the function's Python control
    flow: ``diffkit.sparse``). ``True`` takes that path for each of
    them, ``False`` never; ``None`` (default) takes it for each derivative whose pattern
    is sparse enough: at least 200 parameters, at most 5% of the entries and at most
    one colour (batched pass) per 12 parameters (the measured break-even; see the sparse
    guide). Other methods take no sparse derivatives
    (``sparse=True`` is then an error).

    ``workers``: a number of processes (SciPy's integer: a pool made for this call;
    ``-1``, one per CPU), a map-like callable ``workers(fun, iterable)`` (SciPy's
    convention) or an executor (as ``diffkit.hessian``'s ``executor=``): the dense
    Hessian's chunks of columns run on it (then not staged). The gradient is one reverse
    pass and stays here.

    Returns SciPy's ``OptimizeResult``; ``x`` (and ``jac``, the gradient, when SciPy reports
    it; ``grad`` and ``lagrangian_grad`` for trust-constr) are pytrees like ``x0``, each leaf
    with its shape and dtype. ``hess_inv`` and the other fields are as SciPy gives them, on
    the flat vector.
    """
    if _implicit.wanted(args):   # traced args: the solution differentiates (implicit.py)
        return _implicit.minimize(minimize, **locals())
    check_callable(fun, "minimize")
    params = _Params(x0, "minimize")
    method = _default_method(method, _constraint_list(constraints), bounds)
    args = args if isinstance(args, tuple) else (args,)
    # with jac=True, fun returns (value, gradient); the automatic Hessians need the value
    value_fun = (lambda *a: fun(*a)[0]) if jac is True else fun
    objective = _Objective(value_fun, params, args, stage=jit)
    objective.workers = workers
    scipy_fun, scipy_jac, scipy_hess, scipy_hessp = _derivatives(
        objective, method, jac, hess, hessp, fun, params, args)
    check_option(sparse, "minimize")
    stager = objective.stager   # one random draw turns staging off for all of them
    scipy_hess = minimize_hessian(objective, method, hess, hessp, sparse, params.x0,
                                  stager) or scipy_hess
    result = scipy.optimize.minimize(
        scipy_fun, params.x0, method=method, jac=scipy_jac, hess=scipy_hess,
        hessp=scipy_hessp, bounds=_flat_bounds(bounds, params),
        constraints=_flat_constraints(constraints, params, method, sparse, stager), tol=tol,
        callback=_tree_callback(callback, params), options=options)
    return _as_trees(result, params, ("x", "jac", "grad", "lagrangian_grad"))
