"""SciPy-shaped namespaces of differentiable functions: ``diffkit.scipy.special`` ..."""

from . import special  # noqa: F401
