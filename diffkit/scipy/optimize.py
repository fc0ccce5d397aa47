"""``diffkit.scipy.optimize``: ``scipy.optimize.minimize``, ``least_squares`` and ``root`` on
pytrees of parameters, with exact derivatives supplied by diffkit.

Each function takes SciPy's arguments, but ``x0`` may be any pytree of arrays (a dict of
weights, a tuple of a matrix and a vector...) and the user's functions receive that pytree.
The parameters are flattened with ``diffkit.flatten_util.ravel_pytree`` into the one float64
vector SciPy works on, and the result's ``x`` comes back in the pytree's structure, each leaf
with its shape and dtype (a float32 leaf stays float32; SciPy itself computes in float64).
Lists and tuples are pytree nodes: ``x0=[1.3, 0.7]`` is a list of two scalar parameters and
``fun`` receives a list; pass ``np.array([1.3, 0.7])`` for one vector parameter.

Derivatives: ``minimize`` gets an exact gradient (value and gradient in one reverse pass,
cached, so SciPy's separate ``fun`` and ``jac`` calls cost one evaluation), and, for the
methods that use them, exact Hessian-vector products (``hessp``: Newton-CG, trust-ncg,
trust-krylov; the linearisation of the gradient is recorded once per point and replayed for
every product) or exact Hessians (``hess``: trust-exact, dogleg, trust-constr). Constraints
get exact Jacobians and, for trust-constr, exact Hessians. ``least_squares`` and ``root`` get
exact Jacobians, forward mode when the parameters are fewer than the residuals, else reverse.

Anything you pass yourself (``jac=``, ``hess=``, ``hessp=``, a constraint's ``jac``) is used
instead of the automatic derivative. A callable receives the pytree (and ``args``) like
``fun``; it returns a gradient as a pytree like ``x0`` or a flat vector, and Jacobians and
Hessians as 2-D arrays in the flat ordering of ``ravel_pytree`` (rows: outputs, columns:
parameters). SciPy's strings (``'2-point'``...) and ``HessianUpdateStrategy`` objects are
passed through unchanged.
"""

import inspect

import numpy as np
import scipy.optimize as _so

from .. import api, tree_util
from .. import numpy as dnp
from ..api_checks import check_callable, describe
from ..core.trace import Tracer
from ..core.zeros import dtype_of, shape_of
from ..errors import InputTypeError, NonScalarOutputError, ShapeMismatchError
from ..flatten_util import ravel_pytree
from ..jit.jitted import jit
from ..jit.randomness import RandomDrawError

__all__ = ["minimize", "least_squares", "root"]

_GRADIENT_METHODS = {"cg", "bfgs", "newton-cg", "l-bfgs-b", "tnc", "slsqp", "dogleg",
                     "trust-ncg", "trust-krylov", "trust-exact", "trust-constr"}
_HESSP_METHODS = {"newton-cg", "trust-ncg", "trust-krylov"}
_HESS_METHODS = {"trust-exact", "dogleg", "trust-constr"}
_ROOT_JACOBIAN_METHODS = {"hybr", "lm"}


# --- parameters as one vector ----------------------------------------------------------


class _Params:
    """The pytree ``x0`` seen as a flat float64 vector: ``x0`` (shape ``(n,)``), ``unravel``
    (vector -> pytree), and the leaves' shapes for bounds."""

    def __init__(self, x0, name):
        leaves, self.treedef = tree_util.tree_flatten(x0)
        leaves = [_real_leaf(x, i, name) for i, x in enumerate(leaves)]
        self.shapes = [x.shape for x in leaves]
        flat, self.unravel = ravel_pytree(tree_util.tree_unflatten(self.treedef, leaves))
        self.x0 = np.asarray(flat, dtype=np.float64)
        self.n = self.x0.size

    def tree(self, x):
        """The pytree at the flat point ``x`` (plain arrays or traced values)."""
        return self.unravel(x)

    def flat(self, tree, what):
        """A pytree with ``x0``'s sizes (or a vector of shape ``(n,)``) as a float64 vector."""
        flat = np.asarray(ravel_pytree(tree)[0], dtype=np.float64)
        if flat.shape != (self.n,):
            raise ShapeMismatchError(f"{what} has {flat.size} elements in all, but the "
                                     f"parameters x0 have {self.n}")
        return flat


def _real_leaf(x, i, name):
    """Leaf ``i`` of ``x0`` as a NumPy array; integers become float64, as SciPy does."""
    try:
        x = np.asarray(x)
    except Exception as e:
        raise InputTypeError(f"{name}: x0 leaf {i} cannot be converted to an array: {e}. "
                             "x0 must be a pytree of arrays or numbers.") from None
    if x.dtype.kind == "b":
        raise InputTypeError(f"{name}: x0 leaf {i} is boolean; x0 must be a pytree of float "
                             "arrays or numbers (e.g. x.astype(float)).")
    if x.dtype.kind in "iu":
        return x.astype(np.float64)
    if x.dtype.kind == "c":
        raise InputTypeError(f"{name}: x0 leaf {i} is complex ({x.dtype}); SciPy optimizes "
                             "real parameters. Split it into real and imaginary parts, e.g. "
                             "{'re': z.real, 'im': z.imag}.")
    if x.dtype.kind != "f":
        raise InputTypeError(f"{name}: x0 leaf {i} has dtype {x.dtype}; x0 must be a pytree "
                             "of float arrays or numbers.")
    return x


def _flat_output(out, name, what="fun"):
    """An output pytree (traced or not) as one 1-D vector, differentiably, after checking
    that it holds real numbers (``name`` is the adapter, ``what`` the user's function)."""
    return ravel_pytree(_real_output(out, name, what))[0]


_NUMBERS = (np.ndarray, Tracer, np.generic, int, float, complex)


def _real_output(out, name, what="fun"):
    """``out``, the value the user's ``what`` returned, checked to be real numbers: None, a
    value that is not a number or an array (a string, an object), a complex value and a
    boolean are errors that say so."""
    if out is None:
        raise InputTypeError(f"{name}: {what} returned None; it must return its value (check "
                             "that it ends with a return statement).")
    for leaf in tree_util.tree_leaves(out):
        if not isinstance(leaf, _NUMBERS) or isinstance(leaf, bool):
            within = "" if leaf is out else f" (in {describe(out)})"
            raise InputTypeError(f"{name}: {what} returned {describe(leaf)}{within}; it must "
                                 "return real numbers or arrays.")
        dtype = dtype_of(leaf)
        if dtype.kind == "c":
            raise InputTypeError(
                f"{name}: {what} returned a complex value ({dtype}); SciPy's optimizers work "
                "with real values. Return abs(z) ** 2 or split the real and imaginary parts.")
        if dtype.kind not in "iuf":
            raise InputTypeError(f"{name}: {what} returned an array of dtype {dtype}; it "
                                 "must return real numbers.")
    return out


class _Cache:
    """The last point and what was computed there: SciPy asks for the value, the gradient
    and the Hessian products at one point in separate calls."""

    def __init__(self):
        self.x, self.items = None, {}

    def get(self, x, key, compute):
        if self.x is None or self.x.shape != x.shape or not np.array_equal(self.x, x):
            self.x, self.items = np.array(x, copy=True), {}
        if key not in self.items:
            self.items.update(compute())
        return self.items[key]


# --- the objective of minimize ---------------------------------------------------------


class _Objective:
    """``fun(tree, *args)`` on the flat vector: value, gradient, Hessian products, Hessian.

    With ``stage`` (the default of ``minimize``), each of them is a ``diffkit.jit`` function:
    recorded at the first point and replayed at the next ones. A function that draws random
    numbers cannot be staged: it is then evaluated eagerly, as without ``stage``."""

    def __init__(self, fun, params, args, stage=False):
        self.params, self.args, self.fun = params, args, fun
        self.cache = _Cache()
        self.stage = stage
        self.staged = {}

    def _run(self, name, make, *values):
        """``make()(*values)``, through a jitted ``make()`` (kept under ``name``) when
        staging."""
        if self.stage:
            staged = self.staged.get(name)
            if staged is None:
                staged = self.staged[name] = jit(make())
            try:
                return staged(*values)
            except RandomDrawError:
                self.stage = False   # a random draw: evaluate eagerly from now on
        return make()(*values)

    def of_flat(self, x):
        """fun at the flat point ``x`` (traced or not), checked to be a real scalar."""
        return _real_scalar(self.fun(self.params.tree(x), *self.args), "fun")

    def _value_and_grad(self, x):
        value, gradient = self._run("value_and_grad",
                                    lambda: api.value_and_grad(self.of_flat), x)
        return {"value": float(value), "grad": np.asarray(gradient, np.float64)}

    def value(self, x):
        """fun at the flat point ``x``, as a float (with its gradient, computed alongside)."""
        return self.cache.get(x, "value", lambda: self._value_and_grad(x))

    def value_only(self, x):
        """fun at ``x`` without derivatives (for the methods that never use them)."""
        return self.cache.get(
            x, "value", lambda: {"value": float(self._run("value", lambda: self.of_flat, x))})

    def grad(self, x):
        """The gradient at ``x``, shape ``(n,)``."""
        return self.cache.get(x, "grad", lambda: self._value_and_grad(x))

    def hessp(self, x, p):
        """The Hessian at ``x`` times ``p``, shape ``(n,)``; the gradient's linearisation at
        ``x`` is recorded on the first product and replayed for the next ones. Staged: one
        recorded forward-over-reverse product, replayed at every point and direction."""
        if self.stage:
            p = np.asarray(p, np.float64)
            product = self._run("hvp", lambda: self._hvp, np.asarray(x, np.float64), p)
            if self.stage:
                return np.asarray(product, np.float64)

        def linearize():
            gradient, product = api.linearize(api.grad(self.of_flat), x)
            return {"grad": np.asarray(gradient, np.float64), "hvp": product}
        product = self.cache.get(x, "hvp", linearize)
        return np.asarray(product(np.asarray(p, np.float64)), np.float64)

    def _hvp(self, x, p):
        return api.jvp(api.grad(self.of_flat), (x,), (p,))[1]

    def hess(self, x):
        """The Hessian at ``x``, shape ``(n, n)``."""
        return self.cache.get(x, "hess", lambda: {"hess": np.asarray(
            self._run("hess", lambda: api.hessian(self.of_flat), x), np.float64)})


def _real_scalar(value, what):
    """``value``, returned by the user's ``what``, checked to be a real scalar."""
    _real_output(value, "minimize", what)
    if isinstance(value, (tuple, list, dict)) or shape_of(value) != ():
        got = f"a {type(value).__name__}" if isinstance(value, (tuple, list, dict)) \
            else f"an array of shape {shape_of(value)}"
        raise NonScalarOutputError(
            f"minimize needs {what} to return a real scalar, but it returned {got}. To fit "
            "a vector of residuals use diffkit.scipy.optimize.least_squares(fun, x0); to "
            "solve fun(x) = 0 use diffkit.scipy.optimize.root(fun, x0).")
    return value


def _user_jac(jac, params, args):
    """A user's gradient function of the pytree as SciPy's ``jac(x)``."""
    return lambda x: params.flat(jac(params.tree(x), *args), "the gradient returned by jac")


def _user_value_and_jac(fun, params, args):
    """``jac=True``: ``fun`` returns ``(value, gradient)``; SciPy gets a flat gradient."""
    def fun_and_grad(x):
        value, gradient = fun(params.tree(x), *args)
        return (float(_real_scalar(value, "fun (jac=True)")),
                params.flat(gradient, "the gradient returned by fun (jac=True)"))
    return fun_and_grad


def _user_hess(hess, params, args):
    return lambda x: hess(params.tree(x), *args)


def _user_hessp(hessp, params, args):
    def product(x, p):
        hv = hessp(params.tree(x), params.tree(p), *args)
        return params.flat(hv, "the product returned by hessp")
    return product


def _default_method(method, constraints, bounds):
    """SciPy's choice when ``method`` is None, so we know which derivatives it uses."""
    if method is not None:
        return method
    if constraints:
        return "SLSQP"
    return "L-BFGS-B" if bounds is not None else "BFGS"


def _derivatives(objective, method, jac, hess, hessp, fun, params, args):
    """``(fun, jac, hess, hessp)`` for SciPy: the user's where given, else diffkit's."""
    name = method.lower() if isinstance(method, str) else None
    custom = callable(method)
    uses_gradient = custom or name in _GRADIENT_METHODS
    if jac is True:
        scipy_fun, scipy_jac = _user_value_and_jac(fun, params, args), True
    elif jac is not None:
        scipy_fun = objective.value_only
        scipy_jac = _user_jac(jac, params, args) if callable(jac) else jac
    elif uses_gradient:
        scipy_fun, scipy_jac = objective.value, objective.grad
    else:
        scipy_fun, scipy_jac = objective.value_only, None
    if hess is not None or hessp is not None:
        scipy_hess = _user_hess(hess, params, args) if callable(hess) else hess
        scipy_hessp = _user_hessp(hessp, params, args) if callable(hessp) else hessp
    elif custom or name in _HESSP_METHODS:
        scipy_hess, scipy_hessp = None, objective.hessp
    elif name in _HESS_METHODS:
        scipy_hess, scipy_hessp = objective.hess, None
    else:
        scipy_hess = scipy_hessp = None
    return scipy_fun, scipy_jac, scipy_hess, scipy_hessp


# --- constraints -----------------------------------------------------------------------


class _ConstraintFunction:
    """A constraint ``fun(tree, *args)`` (any output pytree) on the flat vector: values
    shape ``(m,)``, Jacobian ``(m, n)``, and the Hessian of ``v @ fun`` ``(n, n)``."""

    def __init__(self, fun, params, args):
        self.fun, self.params, self.args = fun, params, args
        self.size = None

    def traced(self, x):
        return _flat_output(self.fun(self.params.tree(x), *self.args), "minimize",
                            "a constraint's fun")

    def __call__(self, x):
        values = np.asarray(self.traced(x), np.float64)
        self.size = values.size
        return values

    def jac(self, x):
        if self.size is None:
            self(x)
        mode = api.jacfwd if self.params.n <= self.size else api.jacrev
        return np.asarray(mode(self.traced)(x), np.float64).reshape(self.size, self.params.n)

    def hess(self, x, v):
        weights = np.asarray(v, np.float64)
        return np.asarray(api.hessian(lambda y: dnp.sum(weights * self.traced(y)))(x),
                          np.float64)


def _constraint_list(constraints):
    if constraints is None:
        return []
    if isinstance(constraints, (dict, _so.NonlinearConstraint, _so.LinearConstraint)):
        return [constraints]
    return list(constraints)


def _dict_constraint(con, params, method):
    """A SciPy dict constraint written on the pytree, as SciPy needs it for ``method``."""
    if not {"type", "fun"} <= set(con):
        raise ValueError(f"a constraint dict needs the keys 'type' and 'fun', got "
                         f"{sorted(con)}; e.g. {{'type': 'ineq', 'fun': lambda p: ...}}")
    kind = con["type"]
    if kind not in ("eq", "ineq"):
        raise ValueError(f"a constraint's 'type' must be 'eq' or 'ineq', got {kind!r}")
    args = tuple(con.get("args", ()))
    function = _ConstraintFunction(con["fun"], params, args)
    user_jac = con.get("jac")
    jac = (lambda x: user_jac(params.tree(x), *args)) if callable(user_jac) else function.jac
    if method == "trust-constr":
        # trust-constr turns dicts into NonlinearConstraint without Hessians (quasi-Newton);
        # converting here gives it the exact ones.
        upper = 0.0 if kind == "eq" else np.inf
        return _so.NonlinearConstraint(function, 0.0, upper, jac=jac, hess=function.hess)
    return {"type": kind, "fun": function, "jac": jac}


def _nonlinear_constraint(con, params, method):
    """A ``NonlinearConstraint`` written on the pytree, on the flat vector."""
    function = _ConstraintFunction(con.fun, params, ())
    # '2-point' is SciPy's default, so a string jac means "not given"
    jac = (lambda x: con.jac(params.tree(x))) if callable(con.jac) else function.jac
    if callable(con.hess):
        hess = lambda x, v: con.hess(params.tree(x), v)  # noqa: E731
    elif isinstance(con.hess, str):
        hess = con.hess
    elif method != "trust-constr":
        hess = None  # only trust-constr uses constraint Hessians; others warn when given one
    else:
        # SciPy stores a missing hess as BFGS(), so a quasi-Newton strategy cannot be told
        # from no Hessian at all: both get the exact one.
        hess = function.hess
    return _so.NonlinearConstraint(function, con.lb, con.ub, jac=jac, hess=hess,
                                   keep_feasible=con.keep_feasible,
                                   finite_diff_rel_step=con.finite_diff_rel_step,
                                   finite_diff_jac_sparsity=con.finite_diff_jac_sparsity)


def _flat_constraints(constraints, params, method):
    name = method.lower() if isinstance(method, str) else method
    converted = []
    for con in _constraint_list(constraints):
        if isinstance(con, dict):
            converted.append(_dict_constraint(con, params, name))
        elif isinstance(con, _so.NonlinearConstraint):
            converted.append(_nonlinear_constraint(con, params, name))
        elif isinstance(con, _so.LinearConstraint):
            converted.append(con)  # its matrix acts on the flat vector already
        else:
            raise TypeError(f"constraints must be dicts, NonlinearConstraint or "
                            f"LinearConstraint objects (or a list of them), got "
                            f"{type(con).__name__}")
    return converted


# --- bounds ----------------------------------------------------------------------------


def _is_number_or_none(v):
    return v is None or (np.ndim(v) == 0 and not isinstance(v, (tuple, list, dict)))


def _is_scipy_pairs(bounds, n):
    """SciPy's form: a sequence of ``n`` ``(min, max)`` pairs of numbers or None."""
    return (isinstance(bounds, (tuple, list)) and len(bounds) == n
            and all(isinstance(b, (tuple, list)) and len(b) == 2
                    and all(_is_number_or_none(v) for v in b) for b in bounds))


def _limit(value, shape, default):
    value = default if value is None else value
    return np.broadcast_to(np.asarray(value, np.float64), shape).ravel()


def _flat_bounds(bounds, params):
    """``bounds`` as SciPy wants them on the flat vector."""
    if bounds is None or isinstance(bounds, _so.Bounds) or _is_scipy_pairs(bounds, params.n):
        return bounds
    try:
        pairs = params.treedef.flatten_up_to(bounds)
    except ValueError:
        pairs = None
    if pairs is None or not all(p is None or (isinstance(p, (tuple, list)) and len(p) == 2)
                                for p in pairs):
        raise ValueError(
            f"bounds must be scipy.optimize.Bounds, a sequence of {params.n} (min, max) pairs "
            "(one per element of the flattened parameters, in ravel_pytree order), or a "
            f"pytree with the structure of x0 ({params.treedef}) holding a (lo, hi) pair "
            "(numbers, arrays broadcastable to the leaf, or None) or None at each leaf.")
    lower, upper = [], []
    for pair, shape in zip(pairs, params.shapes):
        lo, hi = (None, None) if pair is None else pair
        lower.append(_limit(lo, shape, -np.inf))
        upper.append(_limit(hi, shape, np.inf))
    if not lower:
        return _so.Bounds(np.zeros(0), np.zeros(0))
    return _so.Bounds(np.concatenate(lower), np.concatenate(upper))


# --- results and callbacks -------------------------------------------------------------


def _as_trees(result, params, fields):
    """``result``'s fields that are flat vectors of the parameters, as pytrees."""
    for field in fields:
        value = result.get(field)
        if isinstance(value, np.ndarray) and value.shape == (params.n,):
            result[field] = params.tree(value)
    return result


def _wraps_intermediate_result(callback):
    try:
        return set(inspect.signature(callback).parameters) == {"intermediate_result"}
    except (TypeError, ValueError):
        return False


def _tree_callback(callback, params):
    """The user's callback, given the pytree instead of the flat vector."""
    if callback is None:
        return None
    if _wraps_intermediate_result(callback):
        def tree_callback(intermediate_result):
            shown = _so.OptimizeResult(intermediate_result)
            return callback(intermediate_result=_as_trees(shown, params, ("x", "jac")))
        return tree_callback

    def tree_callback_x(xk, *rest):
        return callback(params.tree(xk), *rest)
    return tree_callback_x


# --- minimize --------------------------------------------------------------------------


def minimize(fun, x0, args=(), method=None, jac=None, hess=None, hessp=None, bounds=None,
             constraints=(), tol=None, callback=None, options=None, jit=True):
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

    Returns SciPy's ``OptimizeResult``; ``x`` (and ``jac``, the gradient, when SciPy reports
    it; ``grad`` and ``lagrangian_grad`` for trust-constr) are pytrees like ``x0``, each leaf
    with its shape and dtype. ``hess_inv`` and the other fields are as SciPy gives them, on
    the flat vector.
    """
    check_callable(fun, "minimize")
    params = _Params(x0, "minimize")
    method = _default_method(method, _constraint_list(constraints), bounds)
    args = args if isinstance(args, tuple) else (args,)
    # with jac=True, fun returns (value, gradient); the automatic Hessians need the value
    value_fun = (lambda *a: fun(*a)[0]) if jac is True else fun
    objective = _Objective(value_fun, params, args, stage=jit)
    scipy_fun, scipy_jac, scipy_hess, scipy_hessp = _derivatives(
        objective, method, jac, hess, hessp, fun, params, args)
    result = _so.minimize(
        scipy_fun, params.x0, method=method, jac=scipy_jac, hess=scipy_hess,
        hessp=scipy_hessp, bounds=_flat_bounds(bounds, params),
        constraints=_flat_constraints(constraints, params, method), tol=tol,
        callback=_tree_callback(callback, params), options=options)
    return _as_trees(result, params, ("x", "jac", "grad", "lagrangian_grad"))


# --- least_squares and root: vector-valued functions -----------------------------------


class _Residuals:
    """``fun(tree, *args, **kwargs)`` (any output pytree) on the flat vector: values
    ``(m,)`` and the exact Jacobian ``(m, n)``, forward mode when ``n <= m`` else reverse."""

    def __init__(self, fun, params, args, kwargs, name, square=False):
        self.fun, self.params, self.args, self.kwargs = fun, params, args, kwargs
        self.cache, self.size = _Cache(), None
        self.name = name
        self.square = square  # n equations in n unknowns (root, except method 'lm')

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
        values = np.asarray(self._traced(x), np.float64)
        self.size = values.size
        return {"values": values}

    def __call__(self, x):
        return self.cache.get(x, "values", lambda: self._values(x))

    def _jacobian(self, x):
        if self.size is None:
            self(x)
        with_values = lambda y: (lambda r: (r, r))(self._traced(y))  # noqa: E731
        transform = api.jacfwd if self.params.n <= self.size else api.jacrev
        jac, values = transform(with_values, has_aux=True)(x)
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
    if isinstance(bounds, _so.Bounds):
        return bounds
    if not isinstance(bounds, (tuple, list)) or len(bounds) != 2:
        raise ValueError("least_squares bounds must be a pair (lb, ub) or "
                         "scipy.optimize.Bounds; lb and ub may be numbers, flat vectors or "
                         "pytrees like x0")
    return (_flat_limit(bounds[0], params, -np.inf), _flat_limit(bounds[1], params, np.inf))


def least_squares(fun, x0, jac=None, bounds=None, args=(), kwargs=None, callback=None,
                  **options):
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

    Returns SciPy's ``OptimizeResult`` with ``x`` and ``grad`` as pytrees like ``x0``;
    ``fun`` (residuals, ``(m,)``), ``jac`` (``(m, n)``) and ``active_mask`` are flat.
    """
    check_callable(fun, "least_squares")
    params = _Params(x0, "least_squares")
    args = args if isinstance(args, tuple) else (args,)
    residuals = _Residuals(fun, params, args, kwargs or {}, "least_squares")
    if jac is None:
        scipy_jac = residuals.jac
    elif callable(jac):
        scipy_jac = lambda x: jac(params.tree(x), *args, **(kwargs or {}))  # noqa: E731
    else:
        scipy_jac = jac
    if callback is not None:
        options["callback"] = _tree_callback(callback, params)
    result = _so.least_squares(residuals, params.x0, jac=scipy_jac,
                               bounds=_least_squares_bounds(bounds, params), **options)
    return _as_trees(result, params, ("x", "grad"))


def root(fun, x0, args=(), method="hybr", jac=None, tol=None, callback=None, options=None):
    """Find a root of ``fun(params, *args)`` (a pytree of values with as many elements as
    the parameters) with ``scipy.optimize.root`` and an exact Jacobian.

    ``x0`` is a pytree of float arrays with ``n`` elements in all; ``fun`` returns any pytree
    whose flattened values have ``n`` entries. For the methods that use a Jacobian (hybr,
    lm) diffkit supplies the exact ``(n, n)`` Jacobian (forward mode), computed with the
    residual in one pass and cached; a callable ``jac`` (taking the pytree and ``args``,
    returning an ``(n, n)`` array) replaces it, and the quasi-Newton and Krylov methods get
    no Jacobian (they do not use one). ``callback`` receives the pytree.

    Returns SciPy's ``OptimizeResult`` with ``x`` as a pytree like ``x0``; ``fun`` and the
    Jacobian fields are flat, as SciPy gives them.
    """
    check_callable(fun, "root")
    params = _Params(x0, "root")
    args = args if isinstance(args, tuple) else (args,)
    square = not (isinstance(method, str) and method.lower() == "lm")  # lm: least squares
    residuals = _Residuals(fun, params, args, {}, "root", square)
    if callable(jac):
        scipy_jac = lambda x: jac(params.tree(x), *args)  # noqa: E731
    elif jac is not None:
        scipy_jac = jac
    elif isinstance(method, str) and method.lower() in _ROOT_JACOBIAN_METHODS:
        scipy_jac = residuals.jac
    else:
        scipy_jac = None
    result = _so.root(residuals, params.x0, method=method, jac=scipy_jac, tol=tol,
                      callback=_tree_callback(callback, params), options=options)
    return _as_trees(result, params, ("x",))

