"""``diffkit.numpy.fft``: NumPy's discrete Fourier transforms, differentiable (see
``diffkit.ops.fft``)."""

import numpy as _np

from ..ops.fft import *  # noqa: F403
from ..ops.fft import __all__  # noqa: F401
from ._wrap import wrap_namespace as _wrap_namespace

# NumPy's signatures, docstrings and array-like inputs (diffkit/numpy/_wrap.py)
_wrap_namespace(globals(), _np.fft, __name__, __all__)
