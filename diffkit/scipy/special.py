"""``diffkit.scipy.special``: SciPy's special functions, differentiable.

The functions live in :mod:`diffkit.ops.special`, which gathers one module per family
(primitives with their rules, and the compositions ``softmax``, ``log_softmax``,
``logsumexp``, ``multigammaln``); its docstring lists the families, and each family's
docstring its conventions at special points and its arguments without derivative.
``sinc`` is NumPy's, as in SciPy. Importing this module imports ``scipy.special``: each
public function takes its SciPy counterpart's signature and docstring
(``diffkit/numpy/_wrap.py``) and calls it when no argument is traced.
"""

import scipy.special as _scipy_special

from .. import numpy as _dnp
from ..numpy._wrap import wrap_namespace as _wrap_namespace
from ..ops.special import *  # noqa: F403
from ..ops.special import __all__ as _special_all
from ..ops.special_series import *  # noqa: F403
from ..ops.special_series import __all__ as _series_all

if hasattr(_dnp, "sinc"):  # scipy.special.sinc is numpy.sinc
    sinc = _dnp.sinc
    __all__ = [*_special_all, *_series_all, "sinc"]
else:
    __all__ = [*_special_all, *_series_all]

_wrap_namespace(globals(), _scipy_special, __name__, __all__, name_inputs=True)
