"""``diffkit.scipy.optimize``: ``scipy.optimize.minimize``, ``least_squares``, ``root`` and
``fixed_point`` on pytrees of parameters, with exact derivatives supplied by diffkit.

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

Solutions differentiate too: when ``args`` hold traced values (``grad``, ``jvp``, ``vmap``,
``hessian``, ``jit`` of a function that calls the solver), ``minimize`` (unconstrained),
``least_squares`` (linear loss, no bounds), ``root`` and ``fixed_point`` return solutions
whose derivatives in those values come from the implicit function theorem (``implicit.py``):
a linear solve with the Jacobian of the optimality condition at the solution, dense or by
CG/GMRES (``linear_solve_options``). A solver that did not converge raises
``NonConvergenceError`` and a singular Jacobian ``SingularJacobianError`` instead of a
derivative.

Anything you pass yourself (``jac=``, ``hess=``, ``hessp=``, a constraint's ``jac``) is used
instead of the automatic derivative. A callable receives the pytree (and ``args``) like
``fun``; it returns a gradient as a pytree like ``x0`` or a flat vector, and Jacobians and
Hessians as 2-D arrays in the flat ordering of ``ravel_pytree`` (rows: outputs, columns:
parameters). SciPy's strings (``'2-point'``...) and ``HessianUpdateStrategy`` objects are
passed through unchanged.
"""

from .implicit import (
    NonConvergenceError,
    SingularJacobianError,
    fixed_point,
    linear_solve_options,
)
from .residuals import least_squares, root
from .scalar import minimize

__all__ = ["minimize", "least_squares", "root", "fixed_point", "linear_solve_options",
           "NonConvergenceError", "SingularJacobianError"]
