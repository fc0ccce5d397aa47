"""``autograd.misc.optimizers``: gradient-descent optimizers on nested parameters.

Each optimizer takes ``grad(x, i)`` (the gradient at parameters ``x`` on iteration ``i``),
the starting parameters (any nesting of lists, tuples and dicts of arrays, flattened
internally), an optional ``callback(x, i, g)`` called before each step, and returns the
final parameters in the starting structure.
"""

import functools

import numpy as np

from .flatten import flatten

__all__ = ["unflatten_optimizer", "sgd", "rmsprop", "adam"]


def unflatten_optimizer(optimize):
    """An optimizer of flat vectors as one of nested parameters."""
    @functools.wraps(optimize)
    def nested(grad, x0, callback=None, *args, **kwargs):
        flat_x0, unflatten = flatten(x0)

        def flat_grad(x, i):
            return flatten(grad(unflatten(x), i))[0]

        flat_callback = None
        if callback is not None:
            def flat_callback(x, i, g):
                return callback(unflatten(x), i, unflatten(g))

        return unflatten(optimize(flat_grad, flat_x0, flat_callback, *args, **kwargs))
    return nested


@unflatten_optimizer
def sgd(grad, x, callback=None, num_iters=200, step_size=0.1, mass=0.9):
    """Stochastic gradient descent with momentum: the velocity is an exponential average
    (weight ``mass``) of the negative gradients."""
    velocity = np.zeros(len(x))
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        velocity = mass * velocity - (1.0 - mass) * g
        x = x + step_size * velocity
    return x


@unflatten_optimizer
def rmsprop(grad, x, callback=None, num_iters=100, step_size=0.1, gamma=0.9, eps=10**-8):
    """RMSProp: steps scaled by a running root mean square (decay ``gamma``) of the
    gradients."""
    mean_square = np.ones(len(x))
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        mean_square = gamma * mean_square + (1 - gamma) * g ** 2
        x = x - step_size * g / (np.sqrt(mean_square) + eps)
    return x


@unflatten_optimizer
def adam(grad, x, callback=None, num_iters=100, step_size=0.001, b1=0.9, b2=0.999,
         eps=10**-8):
    """Adam (Kingma and Ba, 2014): steps from bias-corrected running averages of the
    gradients (decay ``b1``) and of their squares (decay ``b2``)."""
    first = np.zeros(len(x))
    second = np.zeros(len(x))
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        first = b1 * first + (1 - b1) * g
        second = b2 * second + (1 - b2) * g ** 2
        first_hat = first / (1 - b1 ** (i + 1))
        second_hat = second / (1 - b2 ** (i + 1))
        x = x - step_size * first_hat / (np.sqrt(second_hat) + eps)
    return x
