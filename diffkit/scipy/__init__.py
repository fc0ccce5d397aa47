"""SciPy-shaped namespaces of differentiable functions: ``diffkit.scipy.special``,
``linalg``, ``stats``, ``signal`` and ``integrate``."""

from . import integrate, linalg, signal, special, stats  # noqa: F401
