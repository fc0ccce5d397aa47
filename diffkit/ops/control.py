"""Primitives that steer differentiation itself: ``stop_gradient``.

(User-defined rules, ``custom_jvp``/``custom_vjp``, and ``checkpoint`` are built on the
transformations themselves and live in ``diffkit.custom``.)
"""

from ..core.primitive import Primitive, Traits

# nondiff: the output never carries a derivative, so under grad and jvp it is a plain value
# (float() and np.asarray() on it are fine); only vmap needs a rule.
stop_gradient_p = Primitive(
    "stop_gradient", lambda x: x,
    batch=lambda axis_size, values, batch_axes: (values[0], batch_axes[0]),
    nondiff=True, traits=Traits(elementwise=True),
)


def stop_gradient(x):
    """``x`` unchanged, with a zero derivative under every transformation. Under ``grad``,
    ``jvp`` and their relatives the result is a plain array, so it may be converted with
    ``float()`` or ``np.asarray``."""
    return stop_gradient_p(x)
