"""``diffkit.scipy.integrate``: SciPy's integration functions, differentiable.

``trapezoid``, ``simpson`` and ``cumulative_trapezoid`` integrate sampled data
(``sampled.py``: compositions of diffkit.numpy operations, on the namespaces floor).

``solve_ivp`` and ``odeint`` solve ODEs with SciPy's solvers; their solutions differentiate
in the initial state, the output times and the parameters (``ode.py``; the solve primitive
and its sensitivity and adjoint rules in ``ode_rules.py``; the vector fields, closure
conversion and exact Jacobians in ``ode_field.py``). They keep their own signatures (SciPy's,
plus ``sparse=``), so ``diffkit.scipy`` wraps only the sampled-data functions (``WRAPPED``).
"""

from .ode import ClosureError, ODESolveError, odeint, solve_ivp
from .sampled import cumulative_trapezoid, simpson, trapezoid

WRAPPED = ["trapezoid", "simpson", "cumulative_trapezoid"]
__all__ = ["trapezoid", "simpson", "cumulative_trapezoid", "solve_ivp", "odeint",
           "ODESolveError", "ClosureError"]
