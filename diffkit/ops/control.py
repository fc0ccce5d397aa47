"""Primitives that steer differentiation itself: ``stop_gradient``.

(User-defined rules, ``custom_jvp``/``custom_vjp``, and ``checkpoint`` are built on the
transformations themselves and live in ``diffkit.custom``.)
"""

from ..core.primitive import Primitive, Traits

# nondiff: the output never carries a derivative (a cotangent or tangent never flows
# through it); only vmap needs a rule.
stop_gradient_p = Primitive(
    "stop_gradient", lambda x: x,
    batch=lambda axis_size, values, batch_axes: (values[0], batch_axes[0]),
    nondiff=True, traits=Traits(elementwise=True),
)


def stop_gradient(x):
    """``x`` unchanged, with a zero derivative under every transformation.

    Under a transformation the result is still a traced value (as ``jax.lax.stop_gradient``'s
    is): use it as an array, in arithmetic and NumPy functions, where it acts as a constant.
    ``float()`` and ``np.asarray`` raise on it as on any traced value; to see its value while
    debugging, print it or use ``dk.debug.print``.

    Examples:
        >>> float(dk.grad(lambda x: x * dk.stop_gradient(x))(3.0))    # d/dx (x * 3) at 3
        3.0
        >>> dk.jvp(lambda x: dk.stop_gradient(x ** 2), (3.0,), (1.0,))[1].tolist()
        0.0
        >>> print(dk.stop_gradient(np.array([1.0, 2.0])))
        [1. 2.]
        >>> dk.grad(lambda x: float(dk.stop_gradient(x)))(3.0)
        Traceback (most recent call last):
            ...
        diffkit.errors.TracerConversionError: float(...) would drop the derivative of a traced...
    """
    return stop_gradient_p(x)
