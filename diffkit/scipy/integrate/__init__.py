"""``diffkit.scipy.integrate``: SciPy's integration functions, differentiable.

``trapezoid``, ``simpson`` and ``cumulative_trapezoid`` integrate sampled data
(``sampled.py``: compositions of diffkit.numpy operations, on the namespaces floor).
``quad`` and ``quad_vec`` (``quadrature.py``) run SciPy's adaptive integrals and
differentiate them in their limits and in the parameters passed through ``args``.
``solve_ivp`` and ``odeint`` solve ODEs with SciPy's solvers; their solutions differentiate
in the initial state, the output times and the parameters (``ode.py``; the solve primitive
and its sensitivity and adjoint rules in ``ode_rules.py``; the vector fields, closure
conversion and exact Jacobians in ``ode_field.py``; fields whose Python branches on values
in ``ode_branches.py``). The solvers keep their own signatures
(SciPy's), so only the sampled-data functions (``WRAPPED``) take SciPy's signatures,
docstrings and array-like inputs (``diffkit/numpy/_wrap.py``), applied here on import.
"""

import scipy.integrate as _scipy_integrate

from ...numpy._wrap import wrap_namespace as _wrap_namespace
from .ode import BranchSwitchError, ClosureError, ODESolveError, odeint, solve_ivp
from .quadrature import quad, quad_vec
from .sampled import cumulative_trapezoid, simpson, trapezoid

WRAPPED = ["trapezoid", "simpson", "cumulative_trapezoid"]
__all__ = ["trapezoid", "simpson", "cumulative_trapezoid", "quad", "quad_vec", "solve_ivp",
           "odeint", "ODESolveError", "ClosureError", "BranchSwitchError"]

_wrap_namespace(globals(), _scipy_integrate, __name__, WRAPPED)
