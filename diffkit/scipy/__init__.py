"""SciPy-shaped namespaces of differentiable functions: ``diffkit.scipy.special``,
``linalg``, ``stats``, ``signal`` and ``integrate``; and ``optimize``, SciPy's solvers on
pytrees of parameters with exact derivatives.

The public functions of ``special``, ``linalg``, ``signal`` and ``integrate`` get SciPy's
signatures, docstrings and array-like inputs here, from one mechanism
(``diffkit/numpy/_wrap.py``), as ``diffkit.numpy``'s do.
"""

import scipy.integrate as _integrate
import scipy.linalg as _linalg
import scipy.signal as _signal
import scipy.special as _special

from ..numpy._wrap import wrap_namespace as _wrap_namespace
from . import integrate, linalg, optimize, signal, special, stats  # noqa: F401

for _module, _reference in ((special, _special), (linalg, _linalg), (signal, _signal),
                            (integrate, _integrate)):
    _wrap_namespace(vars(_module), _reference, _module.__name__,
                    getattr(_module, "WRAPPED", None) or getattr(_module, "__all__", None)
                    or [n for n in dir(_module) if not n.startswith("_")],
                    name_inputs=_module is special)
