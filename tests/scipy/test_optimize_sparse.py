"""The sparse path of diffkit.scipy.optimize: trust-constr gets a sparse objective Hessian
and sparse constraint Jacobians and Hessians, least_squares a sparse Jacobian with lsmr;
the same iterates as the dense path, the same derivative values, clear errors."""

import numpy as np
import pytest
import scipy.optimize as so
import scipy.sparse as sps

import diffkit.numpy as dnp
from diffkit.errors import OptionError
from diffkit.scipy import optimize as dko
from diffkit.scipy.optimize import sparse_path
from diffkit.scipy.optimize.sparse_path import SparsePathError


def rosen(x):
    return dnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def rosen_hessian(x):
    """The closed-form (tridiagonal) Hessian of the chained Rosenbrock function."""
    n = x.size
    diag = 1200 * x ** 2 - 400 * np.roll(x, -1) + 2
    diag[-1] = 0.0
    diag[1:] += 200
    off = -400 * x[:-1]
    return np.diag(diag) + np.diag(off, 1) + np.diag(off, -1) + np.zeros((n, n))


def ring(x):   # constraint: consecutive pairs inside a circle (a bidiagonal Jacobian)
    return x[1:] ** 2 + x[:-1] ** 2


class Recorded:
    """scipy.optimize's solver, run for real, remembering the derivatives it was given."""

    def __init__(self, monkeypatch, name):
        self.real, self.kwargs = getattr(so, name), None
        monkeypatch.setattr(so, name, self)

    def __call__(self, *args, **kwargs):
        self.kwargs = kwargs
        return self.real(*args, **kwargs)


TARGET = np.linspace(-1.0, 2.0, 30)


def convex(x):   # strictly convex with a tridiagonal Hessian: rounding does not grow
    return (dnp.sum(dnp.cosh(x - TARGET)) + dnp.sum((x[1:] - x[:-1]) ** 4)
            + 0.5 * dnp.sum(x ** 2))


def iterates(**options):
    """A trust-constr solve's iterates (through its callback) and its result."""
    seen = []

    def callback(intermediate_result):
        seen.append(np.array(intermediate_result.x, copy=True))

    result = dko.minimize(convex, np.full(30, 3.0), method="trust-constr", callback=callback,
                          options={"gtol": 1e-12, "xtol": 1e-14, "maxiter": 400}, **options)
    return np.array(seen), result


# --- trust-constr ------------------------------------------------------------------------


def test_trust_constr_takes_the_dense_paths_steps_with_a_sparse_hessian(monkeypatch):
    recorded = Recorded(monkeypatch, "minimize")
    sparse_steps, sparse = iterates(sparse=True)
    hess = recorded.kwargs["hess"]
    x = np.random.default_rng(0).uniform(-1, 1, 30)
    assert sps.issparse(hess(x))   # SciPy got a sparse matrix ...
    assert hess(x).nnz == 3 * 30 - 2   # ... with the tridiagonal structure
    d = x[1:] - x[:-1]
    expected = np.diag(np.cosh(x - TARGET) + 1.0) - np.diag(12 * d ** 2, 1) \
        - np.diag(12 * d ** 2, -1)
    expected[np.arange(29), np.arange(29)] += 12 * d ** 2
    expected[np.arange(1, 30), np.arange(1, 30)] += 12 * d ** 2
    np.testing.assert_allclose(hess(x).toarray(), expected, rtol=1e-12, atol=1e-12)
    dense_steps, dense = iterates(sparse=False)
    assert not sps.issparse(recorded.kwargs["hess"](x))
    assert sparse.nit == dense.nit and sparse_steps.shape == dense_steps.shape
    np.testing.assert_allclose(sparse_steps, dense_steps, rtol=1e-7, atol=1e-9)
    assert np.abs(sparse.grad).max() <= 1e-6 and sparse.success


def test_constraint_jacobians_and_hessians_are_sparse_and_exact(monkeypatch):
    recorded = Recorded(monkeypatch, "minimize")
    n = 26
    cons = [so.NonlinearConstraint(ring, -np.inf, 1.5),
            {"type": "ineq", "fun": lambda x: 3.0 - x[::2] * x[1::2]}]
    options = {"gtol": 1e-10, "xtol": 1e-12, "maxiter": 2000}
    sparse = dko.minimize(rosen, np.zeros(n), method="trust-constr", constraints=cons,
                          sparse=True, options=options)
    given, objective_hess = recorded.kwargs["constraints"], recorded.kwargs["hess"]
    dense = dko.minimize(rosen, np.zeros(n), method="trust-constr", constraints=cons,
                         sparse=False, options=options)
    dense_given = recorded.kwargs["constraints"]
    np.testing.assert_allclose(sparse.x, dense.x, rtol=1e-6, atol=1e-6)
    assert sparse.constr_violation <= 1e-8

    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, n)
    assert sps.issparse(objective_hess(x))
    for con, dense_con in zip(given, dense_given):
        v = rng.uniform(0.5, 2.0, con.fun(x).size)
        jac, hess = con.jac(x), con.hess(x, v)
        assert sps.issparse(jac) and sps.issparse(hess)
        np.testing.assert_allclose(jac.toarray(), dense_con.jac(x), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(hess.toarray(), dense_con.hess(x, v), rtol=1e-12,
                                   atol=1e-14)
    # the ring's Jacobian is bidiagonal, its Hessian diagonal; the pair products' Hessian
    # couples x[2i] with x[2i+1]
    assert given[0].jac(x).nnz == 2 * (n - 1)
    assert given[0].hess(x, np.ones(n - 1)).nnz == n
    assert given[1].hess(x, np.ones(n // 2)).nnz == 2 * (n // 2)
    # the Lagrangian SciPy sums: the union of the patterns, exact values
    v0, v1 = rng.uniform(0.5, 2.0, n - 1), rng.uniform(0.5, 2.0, n // 2)
    total = (objective_hess(x) + given[0].hess(x, v0) + given[1].hess(x, v1))
    expected = rosen_hessian(x) + np.diag(2 * np.r_[v0, 0] + 2 * np.r_[0, v0])
    pairs = np.arange(n // 2)
    expected[2 * pairs, 2 * pairs + 1] -= v1
    expected[2 * pairs + 1, 2 * pairs] -= v1
    np.testing.assert_allclose(total.toarray(), expected, rtol=1e-12, atol=1e-12)


def test_the_sparse_objective_hessian_is_found_once_and_staged():
    calls = []

    def counted(x):
        calls.append(1)
        return rosen(x)

    result = dko.minimize(counted, np.full(20, 0.3), method="trust-constr", sparse=True,
                          options={"gtol": 1e-10, "xtol": 1e-12})
    np.testing.assert_allclose(result.x, np.ones(20), atol=1e-7)
    # value and gradient recorded once, the pattern detected once, the compressed Hessian
    # recorded once: the Python of fun does not run at every iterate
    assert len(calls) <= 4 < result.nit


def test_sparse_none_picks_by_size_and_density(monkeypatch):
    recorded = Recorded(monkeypatch, "minimize")
    small = dict(method="trust-constr", options={"maxiter": 2})
    dko.minimize(rosen, np.zeros(50), **small)   # too few parameters: dense
    assert isinstance(recorded.kwargs["hess"](np.zeros(50)), np.ndarray)
    n = sparse_path.MIN_SIZE
    dko.minimize(rosen, np.zeros(n), **small)   # tridiagonal, 1.5% dense: sparse
    assert sps.issparse(recorded.kwargs["hess"](np.zeros(n)))
    dko.minimize(lambda x: dnp.sum(x) ** 4 + rosen(x), np.zeros(n), **small)   # full
    assert isinstance(recorded.kwargs["hess"](np.zeros(n)), np.ndarray)
    dko.minimize(rosen, np.zeros(n), sparse=False, **small)
    assert isinstance(recorded.kwargs["hess"](np.zeros(n)), np.ndarray)


def test_a_users_hessian_is_kept():
    def hess(x):
        return rosen_hessian(np.asarray(x))

    result = dko.minimize(rosen, np.full(8, 0.3), method="trust-constr", hess=hess,
                          sparse=True, options={"gtol": 1e-10, "xtol": 1e-12})
    np.testing.assert_allclose(result.x, np.ones(8), atol=1e-7)


# --- least_squares -----------------------------------------------------------------------


def residuals(x):
    return dnp.concatenate([10.0 * (x[1:] - x[:-1] ** 2), 1.0 - x[:-1]])


def test_least_squares_gets_a_sparse_jacobian_and_lsmr(monkeypatch):
    recorded = Recorded(monkeypatch, "least_squares")
    x0 = np.full(40, -0.5)
    tight = dict(xtol=1e-14, ftol=1e-14, gtol=1e-14)
    sparse = dko.least_squares(residuals, x0, sparse=True, **tight)
    assert recorded.kwargs["tr_solver"] == "lsmr"
    assert sps.issparse(sparse.jac) and sparse.jac.nnz == 3 * 39
    x = np.random.default_rng(2).uniform(-1, 1, 40)
    jac = recorded.kwargs["jac"](x)
    expected = np.zeros((78, 40))
    rows = np.arange(39)
    expected[rows, rows + 1] = 10.0
    expected[rows, rows] = -20.0 * x[:-1]
    expected[39 + rows, rows] = -1.0
    np.testing.assert_allclose(jac.toarray(), expected, rtol=1e-12, atol=0)
    # the dense path with the same trust-region solver takes the same steps
    dense = dko.least_squares(residuals, x0, sparse=False, tr_solver="lsmr", **tight)
    assert isinstance(dense.jac, np.ndarray)
    assert (sparse.nfev, sparse.njev) == (dense.nfev, dense.njev)
    np.testing.assert_allclose(sparse.x, dense.x, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(sparse.x, np.ones(40), atol=1e-8)


def test_least_squares_keeps_the_users_solver_and_pytrees(monkeypatch):
    recorded = Recorded(monkeypatch, "least_squares")

    def fun(p):
        return {"a": p["u"] - 2.0, "b": p["u"][1:] * p["v"][:-1] - 1.0}

    x0 = {"u": np.ones(6), "v": np.ones(6)}
    result = dko.least_squares(fun, x0, sparse=True, tr_solver="lsmr",
                               tr_options={"atol": 1e-12, "btol": 1e-12}, xtol=1e-14,
                               ftol=1e-14, gtol=1e-14)
    assert recorded.kwargs["tr_solver"] == "lsmr"
    assert sps.issparse(result.jac)
    np.testing.assert_allclose(result.x["u"], 2.0, rtol=1e-8)
    np.testing.assert_allclose(result.x["v"][:-1], 0.5, rtol=1e-8)


def test_least_squares_sparse_none_picks_by_size_and_density():
    n = sparse_path.MIN_SIZE
    assert sps.issparse(dko.least_squares(residuals, np.zeros(n), max_nfev=2).jac)
    assert isinstance(dko.least_squares(residuals, np.zeros(50), max_nfev=2).jac,
                      np.ndarray)
    # a sparse pattern needing many colours (passes) for its columns stays dense ...

    def wide_band(x):
        return dnp.concatenate([x[j:] * x[:-j] - 0.5 for j in range(1, 21)])

    assert isinstance(dko.least_squares(wide_band, np.full(n, 0.3), max_nfev=2).jac,
                      np.ndarray)
    # ... unless asked for (21 colours for 200 columns)
    forced = dko.least_squares(wide_band, np.full(n, 0.3), max_nfev=2, sparse=True)
    assert sps.issparse(forced.jac)
    # method 'lm' and tr_solver 'exact' take dense Jacobians: None leaves them dense
    assert isinstance(dko.least_squares(residuals, np.zeros(n), method="lm",
                                        max_nfev=2).jac, np.ndarray)
    assert isinstance(dko.least_squares(residuals, np.zeros(n), tr_solver="exact",
                                        max_nfev=2).jac, np.ndarray)


# --- errors ------------------------------------------------------------------------------


def test_errors_are_clear():
    with pytest.raises(OptionError, match="sparse='yes'"):
        dko.minimize(rosen, np.zeros(3), method="trust-constr", sparse="yes")
    with pytest.raises(SparsePathError, match="trust-constr"):
        dko.minimize(rosen, np.zeros(3), method="BFGS", sparse=True)
    with pytest.raises(SparsePathError, match="method='lm'"):
        dko.least_squares(residuals, np.zeros(3), method="lm", sparse=True)
    with pytest.raises(SparsePathError, match="tr_solver='exact'"):
        dko.least_squares(residuals, np.zeros(3), tr_solver="exact", sparse=True)
    with pytest.raises(SparsePathError, match="jac= was given"):
        dko.least_squares(residuals, np.zeros(3), jac=lambda x: np.eye(4, 3), sparse=True)
    with pytest.raises(OptionError, match="sparse=1"):
        dko.least_squares(residuals, np.zeros(3), sparse=1)


def test_a_pattern_that_cannot_be_detected_is_a_clear_error():
    def fun(x):   # the pattern of a foreign solver's output cannot be traced
        return dnp.sum(x ** 2) + float(np.linalg.norm(np.asarray(x)))

    with pytest.raises(SparsePathError, match="(?s)could not be detected.*sparse=False"):
        dko.minimize(fun, np.ones(3), method="trust-constr", sparse=True)
