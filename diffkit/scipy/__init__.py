"""SciPy-shaped namespaces of differentiable functions: ``diffkit.scipy.special``,
``linalg``, ``stats``, ``signal`` and ``integrate``; and ``optimize``, SciPy's solvers on
pytrees of parameters with exact derivatives.

The public functions of ``special``, ``linalg``, ``signal`` and ``integrate`` get SciPy's
signatures, docstrings and array-like inputs from one mechanism
(``diffkit/numpy/_wrap.py``), as ``diffkit.numpy``'s do; each namespace applies it to
itself when it is imported.

Each submodule is imported when it is first used, as SciPy's own are: ``import
diffkit.scipy as dsp`` loads nothing more, ``dsp.stats`` imports ``diffkit.scipy.stats``
(and with it ``scipy.stats``), and ``from diffkit.scipy.optimize import minimize`` loads
neither ``scipy.stats`` nor ``scipy.signal`` nor ``scipy.integrate`` (tests/
test_import_cost.py checks this).
"""

import importlib
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what type checkers see: the submodules as attributes
    from . import integrate, linalg, optimize, signal, special, stats  # noqa: F401

_SUBMODULES = ("integrate", "linalg", "optimize", "signal", "special", "stats")

__all__ = list(_SUBMODULES)


def __getattr__(name: str) -> ModuleType:
    # Import cost: each submodule imports its SciPy counterpart (scipy.stats, scipy.signal
    # and scipy.integrate take about half a second together), so ``import diffkit.scipy``
    # leaves them to their first use.
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_SUBMODULES})
