"""``diffkit.scipy.integrate``: SciPy's integration functions, differentiable.

``trapezoid``, ``simpson`` and ``cumulative_trapezoid`` integrate sampled data
(``sampled.py``: compositions of diffkit.numpy operations, on the namespaces floor).
"""

from .sampled import cumulative_trapezoid, simpson, trapezoid

__all__ = ["trapezoid", "simpson", "cumulative_trapezoid"]
