"""diffkit.scipy.optimize stages the objective's value, gradient, Hessian products and
Hessian with jit (``jit=True``, the default): the same iterates as eagerly, the user's
Python run only while recording, and eager evaluation where staging cannot apply."""

import numpy as np
import pytest

import diffkit.numpy as dnp
from diffkit.scipy import optimize as dko


class Counted:
    def __init__(self, fun):
        self.fun, self.calls = fun, 0

    def __call__(self, *args):
        self.calls += 1
        return self.fun(*args)


def rosen(x):
    return dnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


@pytest.mark.parametrize("method, options", [
    ("Newton-CG", {"xtol": 1e-12}), ("BFGS", {"gtol": 1e-10}),
    ("trust-exact", {"gtol": 1e-10}), ("trust-krylov", {"gtol": 1e-9}),
])
def test_staged_solve_takes_the_same_steps_as_the_eager_one(method, options):
    staged, eager = Counted(rosen), Counted(rosen)
    a = dko.minimize(staged, np.zeros(20), method=method, options=options)
    b = dko.minimize(eager, np.zeros(20), method=method, options=options, jit=False)
    np.testing.assert_allclose(a.x, np.ones(20), rtol=0, atol=1e-8)
    np.testing.assert_array_equal(a.x, b.x)
    for field in ("nit", "nfev", "njev", "nhev"):
        assert a.get(field) == b.get(field), field
    # the Python of fun ran once per staged function (value and gradient, products or
    # Hessian), not once per point
    assert staged.calls <= 2 < eager.calls


def test_pytree_parameters_and_args_are_staged_too():
    def fun(p, target):
        return dnp.sum((p["w"] - target) ** 2) + (p["b"] - 1.0) ** 4

    target = np.array([1.0, -2.0, 3.0])
    x0 = {"w": np.zeros(3), "b": np.array(0.0)}
    a = dko.minimize(fun, x0, args=(target,), method="Newton-CG", options={"xtol": 1e-12})
    b = dko.minimize(fun, x0, args=(target,), method="Newton-CG", options={"xtol": 1e-12},
                     jit=False)
    np.testing.assert_array_equal(a.x["w"], b.x["w"])
    np.testing.assert_allclose(a.x["w"], target, atol=1e-8)


def test_a_value_dependent_branch_is_guarded():
    def fun(x):   # a piecewise objective: the branch is a guard, checked at every point
        if x[0] > 0.5:
            return dnp.sum((x - 1.0) ** 2)
        return dnp.sum((x - 1.0) ** 2) + 0.1 * dnp.sum(x ** 2)

    a = dko.minimize(fun, np.zeros(3), method="BFGS", options={"gtol": 1e-10})
    b = dko.minimize(fun, np.zeros(3), method="BFGS", options={"gtol": 1e-10}, jit=False)
    np.testing.assert_array_equal(a.x, b.x)
    np.testing.assert_allclose(a.x, np.ones(3), atol=1e-8)


def test_an_objective_that_draws_random_numbers_runs_eagerly():
    rng = np.random.default_rng(0)

    def fun(x):
        noise = rng.normal()          # staging refuses the draw: evaluated eagerly instead
        return dnp.sum((x - 2.0) ** 2) + 0.0 * noise

    result = dko.minimize(fun, np.zeros(2), method="BFGS")
    np.testing.assert_allclose(result.x, [2.0, 2.0], atol=1e-6)
