"""The objective of ``minimize`` on the flat vector: value, gradient, Hessian products and
Hessian, cached per point and staged with ``diffkit.jit``; and which of them SciPy gets for a
method."""

import numpy as np

from ... import api
from ...core.zeros import shape_of
from ...errors import NonScalarOutputError
from .flat import _Cache, _real_output
from .staged import Stager

_GRADIENT_METHODS = {"cg", "bfgs", "newton-cg", "l-bfgs-b", "tnc", "slsqp", "dogleg",
                     "trust-ncg", "trust-krylov", "trust-exact", "trust-constr"}
_HESSP_METHODS = {"newton-cg", "trust-ncg", "trust-krylov"}
_HESS_METHODS = {"trust-exact", "dogleg", "trust-constr"}


class _Objective:
    """``fun(tree, *args)`` on the flat vector: value, gradient, Hessian products, Hessian.

    With ``stage`` (the default of ``minimize``), each of them is a ``diffkit.jit`` function:
    recorded at the first point and replayed at the next ones. A function that draws random
    numbers cannot be staged: it is then evaluated eagerly, as without ``stage``."""

    def __init__(self, fun, params, args, stage=False):
        self.params, self.args, self.fun = params, args, fun
        self.cache = _Cache()
        self.stager = Stager(stage)
        self.workers = None   # an executor for the dense Hessian's chunks (not staged)

    def __getstate__(self):
        """What a worker needs to evaluate ``fun`` (``workers=``): not the staged functions,
        the cache or the executor, which hold locks and connections."""
        return {k: v for k, v in vars(self).items() if k not in ("stager", "cache", "workers")}

    @property
    def stage(self):
        return self.stager.stage

    def _run(self, name, make, *values):
        """``make()(*values)``, through a jitted ``make()`` (kept under ``name``) when
        staging."""
        return self.stager.run(name, make, *values)

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
        if self.workers is not None:
            hessian = lambda: api.hessian(self.of_flat, executor=self.workers)(x)  # noqa: E731
        else:
            hessian = lambda: self._run("hess", lambda: api.hessian(self.of_flat), x)  # noqa: E731
        return self.cache.get(x, "hess", lambda: {"hess": np.asarray(hessian(), np.float64)})


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
