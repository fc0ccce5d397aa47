"""Constraints and bounds of ``minimize`` written on the parameter pytree, given to SciPy on
the flat vector with exact Jacobians (and, for trust-constr, exact Hessians)."""

import numpy as np
import scipy  # scipy.optimize is imported on first use (SciPy's lazy submodules)

from ... import api
from ... import numpy as dnp
from . import sparse_path
from .flat import _flat_output


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

    def automatic(self, sparse, stager, index, want=(True, True)):
        """``(jac, hess)`` computed by diffkit for trust-constr: sparse where the sparse
        path is taken (``sparse_path``), else the dense ``jac`` and ``hess``. ``want``
        says which of the two are used (the others are the user's)."""
        if sparse is False or not any(want):
            return self.jac, self.hess
        jac, hess = sparse_path.constraint_derivatives(self.traced, self.params.x0, sparse,
                                                        stager, index, want)
        return jac or self.jac, hess or self.hess


def _constraint_list(constraints):
    if constraints is None:
        return []
    if isinstance(constraints, (dict, scipy.optimize.NonlinearConstraint,
                                scipy.optimize.LinearConstraint)):
        return [constraints]
    return list(constraints)


def _dict_constraint(con, params, method, sparse=False, stager=None, index=0):
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
        auto_jac, hess = function.automatic(sparse, stager, index,
                                            (not callable(user_jac), True))
        upper = 0.0 if kind == "eq" else np.inf
        return scipy.optimize.NonlinearConstraint(function, 0.0, upper,
                                       jac=jac if callable(user_jac) else auto_jac, hess=hess)
    return {"type": kind, "fun": function, "jac": jac}


def _nonlinear_constraint(con, params, method, sparse=False, stager=None, index=0):
    """A ``NonlinearConstraint`` written on the pytree, on the flat vector."""
    function = _ConstraintFunction(con.fun, params, ())
    if method == "trust-constr":
        auto_jac, auto_hess = function.automatic(
            sparse, stager, index, (not callable(con.jac), not callable(con.hess)
                                    and not isinstance(con.hess, str)))
    else:
        auto_jac, auto_hess = function.jac, function.hess
    # '2-point' is SciPy's default, so a string jac means "not given"
    jac = (lambda x: con.jac(params.tree(x))) if callable(con.jac) else auto_jac
    if callable(con.hess):
        hess = lambda x, v: con.hess(params.tree(x), v)  # noqa: E731
    elif isinstance(con.hess, str):
        hess = con.hess
    elif method != "trust-constr":
        hess = None  # only trust-constr uses constraint Hessians; others warn when given one
    else:
        # SciPy stores a missing hess as BFGS(), so a quasi-Newton strategy cannot be told
        # from no Hessian at all: both get the exact one.
        hess = auto_hess
    return scipy.optimize.NonlinearConstraint(function, con.lb, con.ub, jac=jac, hess=hess,
                                   keep_feasible=con.keep_feasible,
                                   finite_diff_rel_step=con.finite_diff_rel_step,
                                   finite_diff_jac_sparsity=con.finite_diff_jac_sparsity)


def _flat_constraints(constraints, params, method, sparse=False, stager=None):
    """The constraints on the flat vector; for trust-constr with ``sparse`` not False,
    their automatic Jacobians and Hessians may take the sparse path (``sparse_path``)."""
    name = method.lower() if isinstance(method, str) else method
    converted = []
    for index, con in enumerate(_constraint_list(constraints)):
        if isinstance(con, dict):
            converted.append(_dict_constraint(con, params, name, sparse, stager, index))
        elif isinstance(con, scipy.optimize.NonlinearConstraint):
            converted.append(_nonlinear_constraint(con, params, name, sparse, stager, index))
        elif isinstance(con, scipy.optimize.LinearConstraint):
            converted.append(con)  # its matrix acts on the flat vector already
        else:
            raise TypeError(f"constraints must be dicts, NonlinearConstraint or "
                            f"LinearConstraint objects (or a list of them), got "
                            f"{type(con).__name__}")
    return converted


# --- bounds ---------------------------------------------------------------------------


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
    if bounds is None or isinstance(bounds, scipy.optimize.Bounds) \
            or _is_scipy_pairs(bounds, params.n):
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
        return scipy.optimize.Bounds(np.zeros(0), np.zeros(0))
    return scipy.optimize.Bounds(np.concatenate(lower), np.concatenate(upper))
