"""Random draws are refused wherever the generator sits: reached through a helper the
function calls, a nested lambda, a bound method's instance, a partial or a container; the
objective of diffkit.scipy.optimize falls back to eager evaluation."""

import functools
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


class MyRandom(random.Random):
    """A user's subclass: seeded by ``random.Random``'s own ``seed``."""


UNSEEDED = {
    "random.Random()": lambda: random.Random(),
    "random.Random(None)": lambda: random.Random(None),
    "subclass of random.Random": lambda: MyRandom(),
    "np.random.default_rng()": lambda: np.random.default_rng(),
    "RandomState()": lambda: np.random.RandomState(),
}


@settings(max_examples=15, deadline=None)
@given(st.sampled_from(sorted(UNSEEDED)), st.integers(0, 2**31 - 1))
def test_a_generator_made_inside_from_fresh_entropy_is_refused_and_a_seeded_one_staged(
        name, seed):
    make = UNSEEDED[name]

    def unseeded(x):
        return x * make().random()

    with pytest.raises(RandomDrawError, match="fresh entropy"):
        dk.jit(unseeded)(np.ones(2))

    def seeded(x):   # the same numbers every call: the recording is right
        generator = random.Random(seed) if "Random" in name and "State" not in name \
            else np.random.default_rng(seed)
        return x * generator.random()

    jitted = dk.jit(seeded)
    for _ in range(3):
        np.testing.assert_array_equal(jitted(np.ones(2)), seeded(np.ones(2)))
