"""``autograd.scipy.integrate``: ``odeint`` with derivatives with respect to the initial
state, the times and the extra arguments (diffkit's adjoint solver), with SciPy's
signature ``odeint(func, y0, t, args=(), **options)``."""

from ....scipy.integrate import odeint

__all__ = ["odeint"]
