"""diffkit.scipy.optimize stages least_squares' and root's residuals and Jacobians with jit
(``jit=True``, the default): the same iterates as eagerly, the user's Python run only while
recording, and eager evaluation where staging cannot apply."""

import numpy as np
import pytest

import diffkit.numpy as dnp
from diffkit.scipy import optimize as dko


class Counted:
    def __init__(self, fun):
        self.fun, self.calls = fun, 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return self.fun(*args, **kwargs)


def rosen_residuals(x):
    return dnp.concatenate([10.0 * (x[1:] - x[:-1] ** 2), 1.0 - x[:-1]])


def system(x):   # a root at x = 2 (plus a coupling that vanishes there)
    return x ** 3 - 8.0 + 0.5 * (dnp.roll(x, 1) - x)


@pytest.mark.parametrize("options", [
    {}, {"method": "dogbox"}, {"method": "lm"}, {"loss": "soft_l1"},
    {"sparse": True}, {"x_scale": "jac"},
])
def test_staged_least_squares_takes_the_same_steps_as_the_eager_one(options):
    staged, eager = Counted(rosen_residuals), Counted(rosen_residuals)
    tight = dict(xtol=1e-15, ftol=1e-15, gtol=1e-15)
    a = dko.least_squares(staged, np.full(12, -0.5), **tight, **options)
    b = dko.least_squares(eager, np.full(12, -0.5), **tight, **options, jit=False)
    np.testing.assert_allclose(a.x, np.ones(12), atol=1e-8)
    np.testing.assert_allclose(a.x, b.x, rtol=1e-13, atol=1e-15)
    assert (a.nfev, a.njev) == (b.nfev, b.njev)
    # the Python of fun ran once per staged function (residuals, Jacobian; the sparse
    # path adds the pattern detection), not once per point
    assert staged.calls <= 3 < eager.calls


@pytest.mark.parametrize("method", ["hybr", "lm", "broyden1", "krylov"])
def test_staged_root_takes_the_same_steps_as_the_eager_one(method):
    staged, eager = Counted(system), Counted(system)
    a = dko.root(staged, np.full(6, 1.5), method=method, tol=1e-12)
    b = dko.root(eager, np.full(6, 1.5), method=method, tol=1e-12, jit=False)
    np.testing.assert_allclose(a.x, np.full(6, 2.0), rtol=1e-8)
    np.testing.assert_allclose(a.x, b.x, rtol=1e-13)
    assert a.get("nfev") == b.get("nfev") and a.get("njev") == b.get("njev")
    assert staged.calls <= 2 < eager.calls


def test_pytree_parameters_args_and_kwargs_are_staged_too():
    def fun(p, target, scale=1.0):
        return {"w": scale * (p["w"] - target), "b": p["b"] ** 3 - 1.0}

    target = np.array([1.0, -2.0, 3.0])
    x0 = {"w": np.zeros(3), "b": np.array(0.5)}
    a = dko.least_squares(fun, x0, args=(target,), kwargs={"scale": 2.0})
    b = dko.least_squares(fun, x0, args=(target,), kwargs={"scale": 2.0}, jit=False)
    np.testing.assert_array_equal(a.x["w"], b.x["w"])
    np.testing.assert_allclose(a.x["w"], target, atol=1e-8)
    np.testing.assert_allclose(a.x["b"], 1.0, atol=1e-8)


def test_a_value_dependent_branch_is_guarded():
    def fun(x):   # piecewise residuals: the branch is a guard, checked at every point
        if x[0] > 0.5:
            return x - 1.0
        return 2.0 * (x - 1.0) + 0.1 * x ** 2

    a = dko.least_squares(fun, np.zeros(3), xtol=1e-15, ftol=1e-15, gtol=1e-15)
    b = dko.least_squares(fun, np.zeros(3), xtol=1e-15, ftol=1e-15, gtol=1e-15, jit=False)
    np.testing.assert_array_equal(a.x, b.x)
    np.testing.assert_allclose(a.x, np.ones(3), atol=1e-8)
    c = dko.root(fun, np.zeros(3), tol=1e-12)
    d = dko.root(fun, np.zeros(3), tol=1e-12, jit=False)
    np.testing.assert_array_equal(c.x, d.x)


def test_residuals_that_draw_random_numbers_run_eagerly():
    rng = np.random.default_rng(0)

    def fun(x):
        noise = rng.normal()          # staging refuses the draw: evaluated eagerly instead
        return x - 2.0 + 0.0 * noise

    np.testing.assert_allclose(dko.least_squares(fun, np.zeros(2)).x, [2.0, 2.0], atol=1e-8)
    np.testing.assert_allclose(dko.root(fun, np.zeros(2)).x, [2.0, 2.0], atol=1e-8)
