"""``diffkit.numpy.fft``: NumPy's discrete Fourier transforms, differentiable. (being written)"""

from ..ops.fft import *  # noqa: F403
