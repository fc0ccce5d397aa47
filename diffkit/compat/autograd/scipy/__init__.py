"""``autograd.scipy``: SciPy's functions, differentiable, from ``diffkit.scipy``."""

from . import integrate, linalg, misc, signal, special, stats  # noqa: F401
