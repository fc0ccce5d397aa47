"""SciPy-shaped namespaces of differentiable functions: ``diffkit.scipy.special``,
``linalg``, ``stats``, ``signal`` and ``integrate``; and ``optimize``, SciPy's solvers on
pytrees of parameters with exact derivatives."""

from . import integrate, linalg, optimize, signal, special, stats  # noqa: F401
