"""``diffkit.scipy.integrate``: SciPy's integration functions, differentiable.

``trapezoid``, ``simpson`` and ``cumulative_trapezoid`` integrate sampled data
(``sampled.py``: compositions of diffkit.numpy operations, on the namespaces floor).
``quad`` and ``quad_vec`` (``quadrature.py``) run SciPy's adaptive integrals and
differentiate them in their limits and in the parameters passed through ``args``.
"""

from .quadrature import quad, quad_vec
from .sampled import cumulative_trapezoid, simpson, trapezoid

__all__ = ["trapezoid", "simpson", "cumulative_trapezoid", "quad", "quad_vec"]

# Functions taking callables, which keep their own signatures (the namespace wrapper of
# diffkit.scipy converts array-like inputs, which a callable and its args are not).
OWN_SIGNATURES = frozenset({"quad", "quad_vec"})
