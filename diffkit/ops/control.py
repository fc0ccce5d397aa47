"""Primitives that steer differentiation itself: ``stop_gradient``."""

from ..core.primitive import Primitive
from ..core.zeros import zero_like


def _stop_gradient_jvp(primals, tangents):
    (x,) = primals
    out = stop_gradient_p(x)
    return out, zero_like(out)


stop_gradient_p = Primitive(
    "stop_gradient", lambda x: x, _stop_gradient_jvp,
    (lambda ct, out, x: None,),
    lambda axis_size, values, batch_axes: (values[0], batch_axes[0]),
)


def stop_gradient(x):
    """``x`` unchanged, with a zero derivative under every transformation."""
    return stop_gradient_p(x)
