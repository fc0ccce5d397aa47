"""Random draws are refused wherever the generator sits: reached through a helper the
function calls, a nested lambda, a bound method's instance, a partial or a container; the
objective of diffkit.scipy.optimize falls back to eager evaluation."""

import functools

import numpy as np
import pytest

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.jit import RandomDrawError
from diffkit.scipy import optimize as dko

RNG = np.random.default_rng(0)


def noisy_helper(x):
    return x + RNG.normal(size=np.shape(x))


def through_helper(x):
    return dnp.sin(noisy_helper(x))


class Model:
    def __init__(self):
        self.parts = {"rng": np.random.default_rng(1)}

    def __call__(self, x):
        return x * self.parts["rng"].normal()

    def method(self, x):
        return x + self.parts["rng"].normal()


def with_generator(x, gen):
    return x + gen.normal()


@pytest.mark.parametrize("fun", [
    through_helper,
    lambda x: (lambda y: y + RNG.normal())(x),
    Model(),
    Model().method,
    functools.partial(with_generator, gen=np.random.RandomState(2)),
    dk.grad(lambda x: dnp.sum(noisy_helper(x) ** 2)),
], ids=["helper", "nested-lambda", "callable-object", "bound-method", "partial", "in-grad"])
def test_a_draw_anywhere_reachable_is_refused(fun):
    with pytest.raises(RandomDrawError, match="pass them in"):
        dk.jit(fun)(np.ones(2))


def test_minimize_evaluates_a_drawing_objective_eagerly():
    rng = np.random.default_rng(3)
    seen = []

    def fun(x):
        noise = rng.normal()
        seen.append(noise)
        return dnp.sum((x - 2.0) ** 2) + 1e-300 * noise

    result = dko.minimize(fun, np.zeros(2), method="BFGS")
    np.testing.assert_allclose(result.x, [2.0, 2.0], atol=1e-6)
    assert len(set(seen)) == len(seen) > 2   # a fresh draw at every evaluation
