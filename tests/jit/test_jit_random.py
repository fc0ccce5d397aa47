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


def test_the_generator_search_does_not_enter_diffkits_own_rules():
    """A primitive's per-argument rules (``EachArgument``, one rule per argument however
    many) are an endless sequence: the search for generators must not walk into them."""
    from diffkit.ops.shape import concatenate_p

    rules = concatenate_p.vjp
    rng = np.random.default_rng(4)

    def fun(x):
        assert rules is concatenate_p.vjp   # the closure reaches the rules
        return dnp.sum(dnp.concatenate([x, x * 2.0]) ** 2)

    x = np.array([1.0, -2.0])
    np.testing.assert_allclose(dk.jit(dk.grad(fun))(x), 10.0 * x, rtol=1e-15)

    def drawing(x):   # a generator next to them is still found
        return dnp.sum(dnp.concatenate([x, x]) * rules.__class__.__name__.count("E")
                       * rng.normal())

    with pytest.raises(RandomDrawError, match="pass them in"):
        dk.jit(drawing)(x)
