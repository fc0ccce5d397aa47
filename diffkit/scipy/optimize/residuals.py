"""``least_squares`` and ``root``: vector-valued functions of a pytree of parameters, with
exact Jacobians."""

import numpy as np
import scipy  # scipy.optimize is imported on first use (SciPy's lazy submodules)

from ... import api
from ...api_checks import check_callable
from ...chunking import integer_workers
from ...core.zeros import shape_of
from ...errors import ShapeMismatchError
from . import implicit as _implicit
from .constraints import _limit
from .flat import _as_trees, _Cache, _flat_output, _Params, _tree_callback
from .sparse_path import check_option, least_squares_jacobian
from .staged import Stager

_ROOT_JACOBIAN_METHODS = {"hybr", "lm"}


class _Residuals:
    """``fun(tree, *args, **kwargs)`` (any output pytree) on the flat vector: values
    ``(m,)`` and the exact Jacobian ``(m, n)``, forward mode when ``n <= m`` else reverse,
    or a sparse one (``sparse``: a ``sparse_path.JacobianOf``). Both staged with
    ``diffkit.jit`` when the ``stager`` stages."""

    def __init__(self, fun, params, args, kwargs, name, square=False, stager=None):
        self.fun, self.params, self.args, self.kwargs = fun, params, args, kwargs
        self.cache, self.size = _Cache(), None
        self.name = name
        self.square = square  # n equations in n unknowns (root, except method 'lm')
        self.stager = stager or Stager(False)
        self.sparse = None
        self.workers = None   # an executor for the Jacobian's chunks (not staged)

    def __getstate__(self):
        """What a worker needs to evaluate ``fun`` (``workers=``): not the staged functions,
        the cache or the executor, which hold locks and connections."""
        return {k: v for k, v in vars(self).items()
                if k not in ("stager", "cache", "sparse", "workers")}

    def _traced(self, x):
        values = _flat_output(self.fun(self.params.tree(x), *self.args, **self.kwargs),
                              self.name)
        size = shape_of(values)[0]
        if size == 0 or (self.square and size != self.params.n):
            wanted = f"as many values as parameters ({self.params.n})" if self.square \
                else "at least one residual"
            raise ShapeMismatchError(f"{self.name}: fun returned {size} values in all, but it "
                                     f"must return {wanted}.")
        return values

    def _values(self, x):
        values = np.asarray(self.stager.run("values", lambda: self._traced, x), np.float64)
        self.size = values.size
        return {"values": values}

    def __call__(self, x):
        return self.cache.get(x, "values", lambda: self._values(x))

    def _jacobian(self, x):
        if self.sparse is not None:
            values, jac = self.sparse.values_and_jac(x)
            self.size = values.size
            return {"values": values, "jac": jac}
        if self.size is None:
            self(x)
        with_values = lambda y: (lambda r: (r, r))(self._traced(y))  # noqa: E731
        transform = api.jacfwd if self.params.n <= self.size else api.jacrev
        if self.workers is not None:
            jac, values = transform(with_values, has_aux=True, executor=self.workers)(x)
        else:
            jac, values = self.stager.run("jac", lambda: transform(with_values, has_aux=True),
                                          x)
        return {"values": np.asarray(values, np.float64),
                "jac": np.asarray(jac, np.float64).reshape(self.size, self.params.n)}

    def jac(self, x):
        """The Jacobian at ``x``, shape ``(m, n)``."""
        return self.cache.get(x, "jac", lambda: self._jacobian(x))


def _flat_limit(value, params, default):
    """A least_squares bound (a number, a flat vector or a pytree like ``x0``) as a number or
    a vector of shape ``(n,)``."""
    if value is None:
        return default
    if np.ndim(value) == 0 and not isinstance(value, (tuple, list, dict)):
        return float(value)
    try:
        leaves = params.treedef.flatten_up_to(value)
        return np.concatenate([_limit(v, s, default) for v, s in zip(leaves, params.shapes)]
                              ) if leaves else np.zeros(0)
    except ValueError:
        pass
    flat = np.asarray(value, np.float64)
    if flat.shape != (params.n,):
        raise ValueError(f"a least_squares bound must be a number, a vector of shape "
                         f"({params.n},) (the flattened parameters) or a pytree with the "
                         f"structure of x0 ({params.treedef}); got {value!r}")
    return flat


def _least_squares_bounds(bounds, params):
    if bounds is None:
        return (-np.inf, np.inf)
    if isinstance(bounds, scipy.optimize.Bounds):
        return bounds
    if not isinstance(bounds, (tuple, list)) or len(bounds) != 2:
        raise ValueError("least_squares bounds must be a pair (lb, ub) or "
                         "scipy.optimize.Bounds; lb and ub may be numbers, flat vectors or "
                         "pytrees like x0")
    return (_flat_limit(bounds[0], params, -np.inf), _flat_limit(bounds[1], params, np.inf))


@integer_workers
def least_squares(fun, x0, jac=None, bounds=None, args=(), kwargs=None, callback=None,
                  jit=True, sparse=None, **options):
    """Solve a nonlinear least-squares problem, minimizing ``0.5 * sum(rho(r_i ** 2))`` over
    a pytree of parameters with ``scipy.optimize.least_squares`` and an exact Jacobian.

    ``fun(params, *args, **kwargs)`` returns the residuals as any pytree of arrays; they are
    flattened to a vector of ``m`` entries. ``x0`` is a pytree of float arrays with ``n``
    elements in all. The Jacobian (``(m, n)``) is computed by diffkit in forward mode
    (``jacfwd``) when ``n <= m`` and in reverse mode (``jacrev``) otherwise, in one batched
    pass; a callable ``jac`` (taking the pytree and ``args``, returning an ``(m, n)`` array)
    or one of SciPy's strings replaces it.

    ``bounds``: ``(lb, ub)`` where each is a number, a vector of shape ``(n,)`` on the
    flattened parameters, or a pytree like ``x0`` (leaves broadcastable, ``None`` for no
    bound), or ``scipy.optimize.Bounds``. ``callback`` receives the pytree. Every other
    keyword (``method``, ``loss``, ``f_scale``, ``x_scale``, ``ftol``, ``max_nfev``...) goes
    to SciPy unchanged.

    ``sparse``: the Jacobian as a ``scipy.sparse`` array, computed in as many batched passes
    as its sparsity pattern (detected at ``x0``, and again on each new path of the
    function's Python control flow: ``diffkit.sparse``) has colours, and
    ``tr_solver="lsmr"`` unless you set ``tr_solver``. ``True`` takes that path (an error
    with ``method="lm"``, ``tr_solver="exact"`` or your own ``jac``), ``False`` never, and
    ``None`` (default) takes it when the pattern is sparse enough: at least 200 parameters,
    at most 5% of the entries and at most one colour (batched pass) per 12 parameters
    (the measured break-even; see the sparse guide), with a
    method and ``tr_solver`` that take sparse Jacobians.

    ``jit`` (default True): the residuals and the Jacobian are staged with ``diffkit.jit``
    (recorded at the first point, replayed at the next ones; see ``minimize``). Pass
    ``jit=False`` to run ``fun`` at every point; a ``fun`` that draws random numbers is
    evaluated eagerly.

    ``workers``: SciPy's map-like callable ``workers(fun, iterable)``, any executor
    ``diffkit.jacobian`` takes, or a number of processes (a pool made for this call; ``-1``,
    one per CPU). The dense Jacobian's chunks of unit vectors run on it
    (``executor=`` of ``jacfwd``/``jacrev``; that Jacobian is then not staged), and SciPy
    gets it too, for what it computes by finite differences. The sparse path computes its
    few colours in this process.

    Returns SciPy's ``OptimizeResult`` with ``x`` and ``grad`` as pytrees like ``x0``;
    ``fun`` (residuals, ``(m,)``), ``jac`` (``(m, n)``) and ``active_mask`` are flat.
    """
    if _implicit.wanted((args, kwargs)):   # traced args: differentiable solution
        return _implicit.least_squares(least_squares, fun, x0, jac, bounds, args, kwargs,
                                       callback, **options)
    check_callable(fun, "least_squares")
    check_option(sparse, "least_squares")
    params = _Params(x0, "least_squares")
    args = args if isinstance(args, tuple) else (args,)
    residuals = _Residuals(fun, params, args, kwargs or {}, "least_squares",
                           stager=Stager(jit))
    residuals.sparse = least_squares_jacobian(residuals, params.x0, jac, sparse, options)
    residuals.workers = options.get("workers")
    if residuals.workers is not None and not callable(residuals.workers):
        del options["workers"]   # an executor object: SciPy takes only map-like callables
    if jac is None:
        scipy_jac = residuals.jac
    elif callable(jac):
        scipy_jac = lambda x: jac(params.tree(x), *args, **(kwargs or {}))  # noqa: E731
    else:
        scipy_jac = jac
    if callback is not None:
        options["callback"] = _tree_callback(callback, params)
    result = scipy.optimize.least_squares(residuals, params.x0, jac=scipy_jac,
                               bounds=_least_squares_bounds(bounds, params), **options)
    return _as_trees(result, params, ("x", "grad"))


@integer_workers
def root(fun, x0, args=(), method="hybr", jac=None, tol=None, callback=None, options=None,
         jit=True, workers=None):
    """Find a root of ``fun(params, *args)`` (a pytree of values with as many elements as
    the parameters) with ``scipy.optimize.root`` and an exact Jacobian.

    ``x0`` is a pytree of float arrays with ``n`` elements in all; ``fun`` returns any pytree
    whose flattened values have ``n`` entries. For the methods that use a Jacobian (hybr,
    lm) diffkit supplies the exact ``(n, n)`` Jacobian (forward mode), computed with the
    residual in one pass and cached; a callable ``jac`` (taking the pytree and ``args``,
    returning an ``(n, n)`` array) replaces it, and the quasi-Newton and Krylov methods get
    no Jacobian (they do not use one). ``callback`` receives the pytree.

    ``jit`` (default True): the residuals and the Jacobian are staged with ``diffkit.jit``
    (recorded at the first point, replayed at the next ones; see ``minimize``). Pass
    ``jit=False`` to run ``fun`` at every point; a ``fun`` that draws random numbers is
    evaluated eagerly.

    ``workers``: a number of processes (SciPy's integer: a pool made for this call;
    ``-1``, one per CPU), a map-like callable ``workers(fun, iterable)`` or an executor (as
    ``diffkit.jacobian``'s ``executor=``): the Jacobian's chunks of unit vectors run on it
    (then not staged). SciPy's ``root`` itself takes no ``workers``.

    Returns SciPy's ``OptimizeResult`` with ``x`` as a pytree like ``x0``; ``fun`` and the
    Jacobian fields are flat, as SciPy gives them.
    """
    if _implicit.wanted(args):   # traced args: the solution differentiates (implicit.py)
        return _implicit.root(root, **locals())
    check_callable(fun, "root")
    params = _Params(x0, "root")
    args = args if isinstance(args, tuple) else (args,)
    square = not (isinstance(method, str) and method.lower() == "lm")  # lm: least squares
    residuals = _Residuals(fun, params, args, {}, "root", square, Stager(jit))
    residuals.workers = workers
    if callable(jac):
        scipy_jac = lambda x: jac(params.tree(x), *args)  # noqa: E731
    elif jac is not None:
        scipy_jac = jac
    elif isinstance(method, str) and method.lower() in _ROOT_JACOBIAN_METHODS:
        scipy_jac = residuals.jac
    else:
        scipy_jac = None
    result = scipy.optimize.root(residuals, params.x0, method=method, jac=scipy_jac, tol=tol,
                      callback=_tree_callback(callback, params), options=options)
    return _as_trees(result, params, ("x",))
