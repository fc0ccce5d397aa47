"""``diffkit.numpy.fft``: NumPy's discrete Fourier transforms, differentiable (see
``diffkit.ops.fft``)."""

from ..ops.fft import *  # noqa: F403
