"""Derivatives of solutions by the implicit function theorem: root, minimize, least_squares
and fixed_point differentiate in the parameters passed through args. Closed forms, central
finite differences of SciPy's own solutions, forward against reverse, second order, vmap
against a loop, jit, the iterative linear solves, and the errors."""

import numpy as np
import pytest
import scipy.optimize as so

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.errors import EscapedTracerError, NoRuleError
from diffkit.scipy import optimize as dko
from diffkit.scipy.optimize import NonConvergenceError, SingularJacobianError

A0 = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
B = np.array([1.0, -2.0, 0.5])


def quadratic_minimiser(p, method="BFGS"):
    """argmin 0.5 x'(A0 + p I)x - b'x = (A0 + p I)^{-1} b."""
    options = {"gtol": 1e-12} if method == "BFGS" else {"xtol": 1e-14}
    return dko.minimize(lambda x, p: 0.5 * x @ (A0 + p * np.eye(3)) @ x - B @ x, np.zeros(3),
                        args=(p,), method=method, options=options).x


def quadratic_slope(p):
    inverse = np.linalg.inv(A0 + p * np.eye(3))
    return -inverse @ inverse @ B


@pytest.mark.parametrize("method", ["BFGS", "Newton-CG"])
def test_a_quadratics_minimiser(method):
    p = 0.3
    x = quadratic_minimiser(p, method)
    np.testing.assert_allclose(x, np.linalg.solve(A0 + p * np.eye(3), B), rtol=1e-7)
    forward = dk.jacfwd(lambda p: quadratic_minimiser(p, method))(p)
    reverse = dk.jacrev(lambda p: quadratic_minimiser(p, method))(p)
    np.testing.assert_allclose(forward, quadratic_slope(p), rtol=1e-7)
    np.testing.assert_allclose(reverse, forward, rtol=1e-10)


def test_second_derivative_of_a_minimiser():
    # x(p) = (A0 + p I)^{-1} b: x'' = 2 (A0 + p I)^{-3} b
    p = 0.3
    inverse = np.linalg.inv(A0 + p * np.eye(3))
    expected = 2 * inverse @ inverse @ inverse @ B
    np.testing.assert_allclose(dk.jacfwd(dk.jacrev(quadratic_minimiser))(p), expected,
                               rtol=1e-7)
    np.testing.assert_allclose(dk.jacrev(dk.jacrev(quadratic_minimiser))(p), expected,
                               rtol=1e-7)
    # hessian of a scalar of the solution in a vector of parameters
    w = np.array([1.0, 2.0, -1.0])
    loss = lambda b: dnp.sum(w * dko.minimize(  # noqa: E731
        lambda x, b: 0.5 * x @ A0 @ x - b @ x, np.zeros(3), args=(b,),
        options={"gtol": 1e-12}).x ** 2)
    inverse = np.linalg.inv(A0)
    np.testing.assert_allclose(dk.hessian(loss)(B), 2 * inverse @ np.diag(w) @ inverse,
                               rtol=1e-7)


def linear_root(params):
    """The root of A(p) x = b: A = A0 + p0 E, b = (1, p1, 2)."""
    p0, p1 = params[0], params[1]
    e = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    return dko.root(lambda x, p0, p1: (A0 + p0 * e) @ x - dnp.stack([1.0, p1, 2.0]),
                    np.zeros(3), args=(p0, p1), tol=1e-14).x


def test_a_linear_systems_root():
    params = np.array([0.4, -1.0])
    e = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    a = A0 + params[0] * e
    x = np.linalg.solve(a, [1.0, params[1], 2.0])
    expected = np.stack([-np.linalg.solve(a, e @ x), np.linalg.solve(a, [0.0, 1.0, 0.0])], 1)
    np.testing.assert_allclose(linear_root(params), x, rtol=1e-7)
    np.testing.assert_allclose(dk.jacfwd(linear_root)(params), expected, rtol=1e-7)
    np.testing.assert_allclose(dk.jacrev(linear_root)(params), expected, rtol=1e-7)


def contraction_fixed_point(p):
    return dko.fixed_point(lambda x, p: 0.5 * dnp.cos(x) + p, 0.0, args=(p,), xtol=1e-14)


def test_a_contractions_fixed_point():
    # x = cos(x) / 2 + p: dx/dp = 1 / (1 + sin(x) / 2), d2x/dp2 = -cos(x) / 2 * x'^3
    p = 0.3
    x = contraction_fixed_point(p)
    np.testing.assert_allclose(x, 0.5 * np.cos(x) + p, rtol=1e-12)
    slope = 1 / (1 + 0.5 * np.sin(x))
    np.testing.assert_allclose(dk.grad(contraction_fixed_point)(p), slope, rtol=1e-7)
    np.testing.assert_allclose(dk.jvp(contraction_fixed_point, (p,), (1.0,))[1], slope,
                               rtol=1e-7)
    np.testing.assert_allclose(dk.grad(dk.grad(contraction_fixed_point))(p),
                               -0.5 * np.cos(x) * slope ** 3, rtol=1e-7)
    # SciPy's return value without traced values: an array of x0's shape
    plain = dko.fixed_point(lambda x, c: np.sqrt(c / (x + 1)), np.array([1.0, 2.0]),
                            args=(np.array([2.0, 6.0]),))
    np.testing.assert_allclose(plain, so.fixed_point(lambda x, c: np.sqrt(c / (x + 1)),
                                                     np.array([1.0, 2.0]),
                                                     args=(np.array([2.0, 6.0]),)))


def test_weighted_linear_least_squares():
    # min 0.5 |w * (X k - y)|^2: k = (X' W^2 X)^{-1} X' W^2 y, derivatives in w
    rng = np.random.default_rng(3)
    xs, ys = rng.normal(size=(8, 2)), rng.normal(size=8)

    def fit(w):
        return dko.least_squares(lambda k, w: w * (xs @ k - ys), np.zeros(2), args=(w,),
                                 xtol=1e-15, ftol=1e-15, gtol=1e-15).x

    def closed(w):
        return dnp.linalg.solve(xs.T @ (xs * (w ** 2)[:, None]), xs.T @ (w ** 2 * ys))

    w = 1.0 + 0.1 * np.arange(8)
    np.testing.assert_allclose(fit(w), closed(w), rtol=1e-7)
    np.testing.assert_allclose(dk.jacrev(fit)(w), dk.jacfwd(closed)(w), rtol=1e-7)
    np.testing.assert_allclose(dk.jacfwd(fit)(w), dk.jacfwd(closed)(w), rtol=1e-7)
    np.testing.assert_allclose(dk.hessian(lambda w: fit(w)[0])(w),
                               dk.hessian(lambda w: closed(w)[0])(w), rtol=1e-6, atol=1e-9)


def nonlinear_root(p):
    return dko.root(lambda x, p: dnp.stack([x[0] ** 3 + x[1] - p[0], x[1] ** 3 - x[0] - p[1]]),
                    np.array([0.5, 0.5]), args=(p,), tol=1e-14).x


def scipy_root(p):
    return so.root(lambda x: [x[0] ** 3 + x[1] - p[0], x[1] ** 3 - x[0] - p[1]],
                   np.array([0.5, 0.5]), tol=1e-14).x


def central_differences(solve, p, step=1e-6):
    return np.stack([(solve(p + step * e) - solve(p - step * e)) / (2 * step)
                     for e in np.eye(p.size)], axis=-1)


def test_nonlinear_root_against_finite_differences_of_scipy():
    p = np.array([1.0, 0.5])
    reverse, forward = dk.jacrev(nonlinear_root)(p), dk.jacfwd(nonlinear_root)(p)
    np.testing.assert_allclose(forward, central_differences(scipy_root, p), rtol=1e-7,
                               atol=1e-9)
    np.testing.assert_allclose(reverse, forward, rtol=1e-10)
    # second order against differences of the first derivative
    second = dk.jacfwd(dk.jacrev(nonlinear_root))(p)
    np.testing.assert_allclose(second, central_differences(dk.jacrev(nonlinear_root), p,
                                                           1e-5), rtol=1e-6, atol=1e-8)


def test_nonlinear_minimize_against_finite_differences_of_scipy():
    def objective(x, p):
        return dnp.sum(dnp.exp(p[0] * x) - p[1] * x) + 0.5 * dnp.sum((x - p[2]) ** 2)

    def solve(p):
        return dko.minimize(objective, np.zeros(2), args=(p,), method="Newton-CG",
                            options={"xtol": 1e-14}).x

    def scipy_solve(p):
        f = lambda x: float(np.sum(np.exp(p[0] * x) - p[1] * x)  # noqa: E731
                            + 0.5 * np.sum((x - p[2]) ** 2))
        g = lambda x: p[0] * np.exp(p[0] * x) - p[1] + (x - p[2])  # noqa: E731
        h = lambda x: np.diag(p[0] ** 2 * np.exp(p[0] * x) + 1.0)  # noqa: E731
        return so.minimize(f, np.zeros(2), jac=g, hess=h, method="Newton-CG",
                           options={"xtol": 1e-14}).x

    p = np.array([0.5, 2.0, 0.3])
    np.testing.assert_allclose(dk.jacrev(solve)(p), central_differences(scipy_solve, p),
                               rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(dk.jacfwd(solve)(p), dk.jacrev(solve)(p), rtol=1e-10)


def test_result_fields_carry_the_derivative():
    def minimum(p):
        return dko.minimize(lambda x, p: dnp.sum((x - p) ** 2) + p[0] * x[0], np.zeros(2),
                            args=(p,), options={"gtol": 1e-12}).fun

    # x* = p - (p0 / 2, 0): min = p0 * p0 - p0^2 / 4; d/dp = (p0 / 2 ... ) by the envelope rule
    p = np.array([1.0, 2.0])
    np.testing.assert_allclose(minimum(p), p[0] ** 2 - p[0] ** 2 / 4, rtol=1e-7)
    np.testing.assert_allclose(dk.grad(minimum)(p), [1.5 * p[0], 0.0], rtol=1e-7, atol=1e-9)
    result = dk.jvp(lambda p: dko.root(lambda x, p: x - p, np.zeros(2), args=(p,)).x,
                    (p,), (np.ones(2),))
    np.testing.assert_allclose(result[1], np.ones(2), rtol=1e-12)


def test_a_pytree_solution_and_pytree_args():
    def solve(params):
        return dko.minimize(lambda x, q: dnp.sum((x["u"] - q["a"]) ** 2) + (x["v"] - 2 * q["b"])
                            ** 2, {"u": np.zeros(2), "v": 0.0}, args=(params,),
                            options={"gtol": 1e-12}).x

    params = {"a": np.array([1.0, -1.0]), "b": np.array(0.5)}
    jac = dk.jacrev(lambda q: solve(q)["v"])(params)
    np.testing.assert_allclose(jac["b"], 2.0, rtol=1e-7)
    np.testing.assert_allclose(jac["a"], [0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(dk.jacfwd(lambda q: solve(q)["u"])(params)["a"], np.eye(2),
                               rtol=1e-7)


def test_vmap_over_parameters_equals_a_loop():
    ps = np.array([0.1, 0.5, 1.0])
    np.testing.assert_allclose(dk.vmap(quadratic_minimiser)(ps),
                               [quadratic_minimiser(p) for p in ps], rtol=1e-12)
    batched = dk.vmap(dk.jacrev(quadratic_minimiser))(ps)
    np.testing.assert_allclose(batched, [quadratic_slope(p) for p in ps], rtol=1e-7)
    np.testing.assert_allclose(dk.vmap(dk.grad(contraction_fixed_point))(ps),
                               [dk.grad(contraction_fixed_point)(p) for p in ps], rtol=1e-12)
    grads = dk.jacfwd(lambda ps: dk.vmap(contraction_fixed_point)(ps))(ps)
    np.testing.assert_allclose(np.diag(grads), [dk.grad(contraction_fixed_point)(p)
                                                for p in ps], rtol=1e-12)


def test_jit_replays_the_solve():
    staged = dk.jit(quadratic_minimiser)
    for p in (0.2, 0.9):
        np.testing.assert_allclose(staged(p), np.linalg.solve(A0 + p * np.eye(3), B),
                                   rtol=1e-7)
    staged_slope = dk.jit(dk.jacrev(quadratic_minimiser))
    for p in (0.2, 0.9):
        np.testing.assert_allclose(staged_slope(p), quadratic_slope(p), rtol=1e-7)
    staged_root = dk.jit(dk.jacfwd(linear_root))
    for params in (np.array([0.4, -1.0]), np.array([0.1, 2.0])):
        np.testing.assert_allclose(staged_root(params), dk.jacrev(linear_root)(params),
                                   rtol=1e-10)
    staged_fixed = dk.jit(dk.grad(contraction_fixed_point))
    for p in (0.3, 0.6):
        np.testing.assert_allclose(staged_fixed(p), dk.grad(contraction_fixed_point)(p),
                                   rtol=1e-12)


def test_iterative_linear_solves_match_the_dense_ones():
    p = np.array([1.0, 0.5])
    dense_jac = dk.jacrev(nonlinear_root)(p)
    dense_second = dk.jacfwd(dk.jacrev(nonlinear_root))(p)
    dense_min = dk.jacrev(quadratic_minimiser)(0.3)
    with dko.linear_solve_options(dense_max=0, rtol=1e-13):   # GMRES and CG
        np.testing.assert_allclose(dk.jacrev(nonlinear_root)(p), dense_jac, rtol=1e-9)
        np.testing.assert_allclose(dk.jacfwd(nonlinear_root)(p), dense_jac, rtol=1e-9)
        np.testing.assert_allclose(dk.jacfwd(dk.jacrev(nonlinear_root))(p), dense_second,
                                   rtol=1e-8)
        np.testing.assert_allclose(dk.jacrev(quadratic_minimiser)(0.3), dense_min, rtol=1e-9)
        np.testing.assert_allclose(dk.jacfwd(quadratic_minimiser)(0.3), dense_min, rtol=1e-9)


def test_a_large_problem_goes_iterative():
    rng = np.random.default_rng(0)
    n = 250
    m = rng.normal(size=(n, n)) / np.sqrt(n)
    a = m @ m.T + np.eye(n)
    b, w = rng.normal(size=n), rng.normal(size=n)

    def solve(b):
        return dko.minimize(lambda x, b: 0.5 * x @ a @ x - b @ x, np.zeros(n), args=(b,),
                            method="Newton-CG", options={"xtol": 1e-13}).x

    np.testing.assert_allclose(dk.grad(lambda b: dnp.dot(w, solve(b)))(b),
                               np.linalg.solve(a, w), rtol=1e-7, atol=1e-10)


def test_nonconvergence_raises():
    def solve(p):
        return dko.minimize(lambda x, p: dnp.sum((x - p) ** 4) + dnp.sum(dnp.exp(x)),
                            np.zeros(2), args=(p,), method="Nelder-Mead",
                            options={"maxiter": 3}).x[0]

    with pytest.raises(NonConvergenceError, match="did not converge"):
        dk.grad(solve)(np.array([1.0, 2.0]))
    with pytest.raises(NonConvergenceError, match="did not converge"):
        dk.grad(lambda p: dko.fixed_point(lambda x, p: dnp.cos(x) + p, 0.0, args=(p,),
                                          maxiter=2, method="iteration"))(1.0)
    with pytest.raises(NonConvergenceError):
        dk.jvp(lambda p: dko.root(lambda x, p: x * x + p, np.array([1.0]), args=(p,)).x,
               (np.array(1.0),), (np.array(1.0),))


def test_nonconvergence_raises_in_a_staged_derivative_too():
    # the staged gradient replays the solve and the linear solve, not the rules
    def solve(p):
        return dko.minimize(lambda x, p: dnp.sum(dnp.cosh(x - p)), np.zeros(1), args=(p,),
                            options={"maxiter": 2}).x[0]

    staged = dk.jit(dk.grad(solve))
    np.testing.assert_allclose(staged(0.0), 1.0, rtol=1e-12)   # converged where it starts
    with pytest.raises(NonConvergenceError, match="did not converge"):
        staged(5.0)
    np.testing.assert_allclose(staged(0.0), 1.0, rtol=1e-12)   # and again afterwards


@pytest.mark.parametrize("dense_max", [200, 0])
def test_a_singular_jacobian_raises(dense_max):
    def solve(p):   # a line of roots: x0 + x1 = p
        return dko.root(lambda x, p: dnp.stack([x[0] + x[1] - p, 2 * x[0] + 2 * x[1] - 2 * p]),
                        np.array([0.3, 0.1]), args=(p,)).x[0]

    with dko.linear_solve_options(dense_max=dense_max):
        with pytest.raises(SingularJacobianError, match="singular"):
            dk.grad(solve)(1.0)
        with pytest.raises(SingularJacobianError):
            dk.grad(lambda p: dko.minimize(lambda x, p: (x[0] + x[1] - p) ** 2,
                                           np.array([0.3, 0.1]), args=(p,)).x[0])(1.0)


def test_refusals():
    with pytest.raises(NoRuleError, match="bounds"):
        dk.grad(lambda p: dko.minimize(lambda x, p: dnp.sum((x - p) ** 2), np.zeros(1),
                                       args=(p,), bounds=[(0, 1)]).x[0])(0.5)
    with pytest.raises(NoRuleError, match="loss"):
        dk.grad(lambda p: dko.least_squares(lambda x, p: x - p, np.zeros(1), args=(p,),
                                            loss="soft_l1").x[0])(0.5)
    # a closure over a traced value whose function branches on x cannot be replayed
    def branches(p):
        return dko.minimize(lambda x: dnp.sum((x - p) ** 2) if x[0] > -1 else 0.0,
                            np.zeros(1)).x[0]

    with pytest.raises(EscapedTracerError, match="args"):
        dk.grad(branches)(1.0)


def closed_over_minimiser(p):
    """quadratic_minimiser with the parameter closed over (and a value computed from it)."""
    matrix = A0 + p * np.eye(3)
    return dko.minimize(lambda x: 0.5 * x @ matrix @ x - B @ x, np.zeros(3),
                        options={"gtol": 1e-12}).x


def test_closures_differentiate_like_args():
    p, ps = 0.3, np.array([0.1, 0.5])
    for transform in (dk.jacfwd, dk.jacrev):
        np.testing.assert_allclose(transform(closed_over_minimiser)(p),
                                   transform(quadratic_minimiser)(p), rtol=1e-12)
    np.testing.assert_allclose(dk.jacrev(dk.jacrev(closed_over_minimiser))(p),
                               dk.jacfwd(dk.jacrev(quadratic_minimiser))(p), rtol=1e-10)
    np.testing.assert_allclose(dk.vmap(dk.jacrev(closed_over_minimiser))(ps),
                               [quadratic_slope(q) for q in ps], rtol=1e-7)
    staged = dk.jit(dk.jacrev(closed_over_minimiser))
    for q in (0.2, 0.9):
        np.testing.assert_allclose(staged(q), quadratic_slope(q), rtol=1e-7)
    # root, least_squares and fixed_point, closing over p and args together
    e = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])

    def root_closed(params):
        p0 = params[0]
        return dko.root(lambda x, p1: (A0 + p0 * e) @ x - dnp.stack([1.0, p1, 2.0]),
                        np.zeros(3), args=(params[1],), tol=1e-14).x

    params = np.array([0.4, -1.0])
    np.testing.assert_allclose(dk.jacrev(root_closed)(params), dk.jacrev(linear_root)(params),
                               rtol=1e-10)
    xs, ys = np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]]), np.array([0.1, 0.9, 2.2])

    def fit(w):
        return dko.least_squares(lambda k: w * (xs @ k - ys), np.zeros(2),
                                 xtol=1e-15, ftol=1e-15, gtol=1e-15).x

    def closed(w):
        return dnp.linalg.solve(xs.T @ (xs * (w ** 2)[:, None]), xs.T @ (w ** 2 * ys))

    w = np.array([1.0, 2.0, 0.5])
    np.testing.assert_allclose(dk.jacfwd(fit)(w), dk.jacfwd(closed)(w), rtol=1e-7)
    fixed = lambda p: dko.fixed_point(lambda x: 0.5 * dnp.cos(x) + p, 0.0,  # noqa: E731
                                      xtol=1e-14)
    np.testing.assert_allclose(dk.grad(fixed)(0.3), dk.grad(contraction_fixed_point)(0.3),
                               rtol=1e-12)


def test_the_start_does_not_change_the_derivative():
    # x0 traced along with the parameter: the solution does not depend on it
    def solve(p):
        return dko.root(lambda x, p: x ** 3 + x - p, dnp.stack([p]), args=(p,), tol=1e-14).x[0]

    x = solve(2.0)
    np.testing.assert_allclose(dk.grad(solve)(2.0), 1 / (3 * x * x + 1), rtol=1e-7)
