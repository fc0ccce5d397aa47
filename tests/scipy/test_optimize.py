"""diffkit.scipy.optimize: SciPy's minimize, least_squares and root on pytrees, with exact
derivatives. Every test checks a known optimum, root or closed-form derivative."""

import numpy as np
import pytest
import scipy.optimize as so

import diffkit.numpy as dnp
from diffkit.errors import InputTypeError, NonScalarOutputError, ShapeMismatchError
from diffkit.scipy import optimize as dko


class Counted:
    """A function that counts its calls (each diffkit pass calls it once)."""

    def __init__(self, fun):
        self.fun, self.calls = fun, 0

    def __call__(self, *args):
        self.calls += 1
        return self.fun(*args)


def rosen(x):
    return dnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def fd_gradient(fun):
    """SciPy's forward-difference gradient (what minimize does without jac)."""
    return lambda x: so.approx_fprime(x, fun, 1.49e-8)


# --- minimize: convergence and the cost against finite differences ---------------------


@pytest.mark.parametrize("n", [2, 100])
@pytest.mark.parametrize("method, options", [
    ("BFGS", {"gtol": 1e-10}),
    ("Newton-CG", {"xtol": 1e-12}),
    ("trust-krylov", {"gtol": 1e-9}),
    ("trust-ncg", {"gtol": 1e-10}),
    ("trust-exact", {"gtol": 1e-10}),
])
def test_rosenbrock_converges_to_ones(n, method, options):
    result = dko.minimize(rosen, np.zeros(n), method=method, options=options)
    assert result.success, result.message
    np.testing.assert_allclose(result.x, np.ones(n), rtol=0, atol=1e-8)
    np.testing.assert_allclose(result.jac, np.zeros(n), rtol=0, atol=1e-6)


@pytest.mark.parametrize("n", [2, 100])
@pytest.mark.parametrize("method", ["BFGS", "Newton-CG"])
def test_rosenbrock_needs_fewer_evaluations_than_finite_differences(n, method):
    options = {"BFGS": {"gtol": 1e-10}, "Newton-CG": {"xtol": 1e-12}}[method]
    exact = Counted(rosen)
    result = dko.minimize(exact, np.zeros(n), method=method, options=options)
    np.testing.assert_allclose(result.x, np.ones(n), rtol=0, atol=1e-8)
    # SciPy alone: the gradient by forward differences, and for Newton-CG the Hessian
    # products by differences of that gradient.
    differenced = Counted(so.rosen)
    reference = so.minimize(differenced, np.zeros(n), method=method,
                            jac=fd_gradient(differenced), options=options)
    # counts every call of fun, including those made for Hessian-vector products
    assert exact.calls < differenced.calls
    # and the exact derivatives reach the minimum more accurately
    assert np.max(np.abs(result.x - 1)) < np.max(np.abs(reference.x - 1))


def test_trust_krylov_beats_finite_difference_hessians():
    exact = Counted(rosen)
    result = dko.minimize(exact, np.zeros(2), method="trust-krylov", options={"gtol": 1e-9})
    np.testing.assert_allclose(result.x, np.ones(2), rtol=0, atol=1e-10)
    differenced = Counted(so.rosen)
    so.minimize(differenced, np.zeros(2), method="trust-krylov",
                jac=fd_gradient(differenced), hess="2-point", options={"gtol": 1e-9})
    assert exact.calls < differenced.calls


def test_value_and_gradient_cost_one_evaluation_per_point():
    counted = Counted(rosen)
    result = dko.minimize(counted, np.zeros(5), method="BFGS", jit=False)   # fun at each point
    # SciPy calls fun and jac separately at each point; the cache answers the second call
    assert counted.calls == result.nfev == result.njev


def test_hessian_products_replay_one_linearisation_per_point():
    counted = Counted(rosen)
    result = dko.minimize(counted, np.zeros(20), method="trust-krylov", options={"gtol": 1e-9})
    np.testing.assert_allclose(result.x, np.ones(20), rtol=0, atol=1e-8)
    # one value-and-gradient pass per point, one linearisation per iterate: never one
    # evaluation per Hessian product
    assert result.nhev > 2 * result.nit
    assert counted.calls <= result.nfev + result.nit + 1


# --- minimize: derivatives handed to SciPy are exact -----------------------------------


@pytest.fixture
def captured(monkeypatch):
    """The arguments diffkit's minimize passes to scipy.optimize.minimize."""
    calls = {}

    def fake_minimize(fun, x0, **kwargs):
        calls.update(kwargs, fun=fun, x0=x0)
        return so.OptimizeResult(x=x0)
    monkeypatch.setattr(so, "minimize", fake_minimize)
    return calls


def _quartic(p):
    return dnp.sum(p["a"] ** 4) + p["a"][0] * p["b"] ** 3


@pytest.mark.parametrize("method, supplied", [
    ("BFGS", {"jac"}), ("Nelder-Mead", set()), ("Newton-CG", {"jac", "hessp"}),
    ("trust-krylov", {"jac", "hessp"}), ("trust-ncg", {"jac", "hessp"}),
    ("trust-exact", {"jac", "hess"}), ("dogleg", {"jac", "hess"}),
    ("trust-constr", {"jac", "hess"}), ("L-BFGS-B", {"jac"}), ("SLSQP", {"jac"}),
])
def test_gradient_hessian_and_products_match_closed_forms(captured, method, supplied):
    dko.minimize(_quartic, {"a": np.array([1.0, -2.0]), "b": 3.0}, method=method)
    assert {k for k in ("jac", "hess", "hessp") if captured[k] is not None} == supplied
    x = np.array([0.5, 1.5, -2.0])  # flat order: a[0], a[1], b
    a0, a1, b = x
    gradient = np.array([4 * a0 ** 3 + b ** 3, 4 * a1 ** 3, 3 * a0 * b ** 2])
    hessian = np.array([[12 * a0 ** 2, 0, 3 * b ** 2], [0, 12 * a1 ** 2, 0],
                        [3 * b ** 2, 0, 6 * a0 * b]])
    assert captured["fun"](x) == pytest.approx(a0 ** 4 + a1 ** 4 + a0 * b ** 3, rel=1e-15)
    if "jac" in supplied:
        np.testing.assert_allclose(captured["jac"](x), gradient, rtol=1e-14)
    if "hess" in supplied:
        np.testing.assert_allclose(captured["hess"](x), hessian, rtol=1e-14)
    if "hessp" in supplied:
        for v in (np.array([1.0, 0.0, 0.0]), np.array([0.3, -1.0, 2.0])):
            np.testing.assert_allclose(captured["hessp"](x, v), hessian @ v, rtol=1e-14)


def test_constraint_jacobians_and_hessians_match_closed_forms(captured):
    def circle(p):  # a pytree output: flattened to [x^2 + y^2, x * y]
        return {"r2": p["x"] ** 2 + p["y"] ** 2, "xy": p["x"] * p["y"]}
    x0 = {"x": 1.0, "y": 2.0}
    for method in ("trust-constr", "SLSQP"):
        dko.minimize(lambda p: p["x"] + p["y"], x0, method=method,
                     constraints=[{"type": "ineq", "fun": circle},
                                  so.NonlinearConstraint(circle, -np.inf, [4.0, 1.0])])
        x, y = 0.5, -3.0
        values = np.array([x * x + y * y, x * y])  # sorted keys: r2, xy
        jacobian = np.array([[2 * x, 2 * y], [y, x]])
        for con in captured["constraints"]:
            fun, jac = (con["fun"], con["jac"]) if isinstance(con, dict) else (con.fun, con.jac)
            np.testing.assert_allclose(fun(np.array([x, y])), values, rtol=1e-15)
            np.testing.assert_allclose(jac(np.array([x, y])), jacobian, rtol=1e-15)
            if method == "trust-constr":
                v = np.array([0.7, -1.3])
                hess = v[0] * np.array([[2.0, 0.0], [0.0, 2.0]]) + v[1] * np.array(
                    [[0.0, 1.0], [1.0, 0.0]])
                np.testing.assert_allclose(con.hess(np.array([x, y]), v), hess, rtol=1e-15)
            else:
                assert isinstance(con, (dict, so.NonlinearConstraint))


# --- minimize: pytrees in and out ------------------------------------------------------


def test_pytree_parameters_round_trip():
    target = {"w": np.arange(6.0).reshape(2, 3) / 7, "b": np.array([0.25, -0.5], np.float32),
              "s": 1.5}

    def loss(p):
        return (dnp.sum((p["w"] - target["w"]) ** 2) + dnp.sum((p["b"] - target["b"]) ** 2)
                + (p["s"] - 2 * target["s"]) ** 2)
    x0 = {"w": np.zeros((2, 3)), "b": np.zeros(2, np.float32), "s": np.float64(0.0)}
    result = dko.minimize(loss, x0, method="BFGS")
    assert set(result.x) == {"w", "b", "s"}
    assert result.x["w"].shape == (2, 3) and result.x["w"].dtype == np.float64
    assert result.x["b"].shape == (2,) and result.x["b"].dtype == np.float32
    assert np.shape(result.x["s"]) == ()
    # the loss has a float32 term, so its gradient is accurate to float32's ~1e-7
    np.testing.assert_allclose(result.x["w"], target["w"], rtol=0, atol=1e-7)
    np.testing.assert_allclose(result.x["s"], 3.0, rtol=0, atol=1e-7)
    np.testing.assert_allclose(result.x["b"], target["b"], rtol=0, atol=1e-6)
    assert result.jac["b"].dtype == np.float32 and result.jac["w"].shape == (2, 3)


def test_tuple_parameters_and_args():
    def loss(p, c, scale):
        x, y = p
        return scale * (dnp.sum((x - c) ** 2) + (y + 1.0) ** 4)
    result = dko.minimize(loss, (np.zeros(3), 0.0), args=(np.array([1.0, 2.0, 3.0]), 2.0),
                          method="trust-exact", options={"gtol": 1e-12})
    x, y = result.x
    np.testing.assert_allclose(x, [1.0, 2.0, 3.0], rtol=1e-10)
    assert abs(y + 1.0) < 1e-3  # (y + 1)^4 is flat at its minimum


def test_callback_receives_the_pytree():
    seen = []
    dko.minimize(lambda p: dnp.sum((p["a"] - 1) ** 2), {"a": np.zeros(2)}, method="BFGS",
                 callback=lambda p: seen.append(p))
    assert seen and all(set(p) == {"a"} and p["a"].shape == (2,) for p in seen)
    new_style = []
    dko.minimize(lambda p: dnp.sum((p["a"] - 1) ** 2), {"a": np.zeros(2)}, method="BFGS",
                 callback=lambda intermediate_result: new_style.append(intermediate_result))
    assert new_style and new_style[-1].x["a"].shape == (2,)
    np.testing.assert_allclose(new_style[-1].x["a"], [1.0, 1.0], rtol=1e-8)


def test_user_derivatives_override_the_automatic_ones():
    jac_calls = Counted(lambda p: {"a": 4 * p["a"] ** 3 - 4})  # the gradient, on the pytree
    result = dko.minimize(lambda p: dnp.sum(p["a"] ** 4 - 4 * p["a"]), {"a": np.zeros(2)},
                          method="BFGS", jac=jac_calls, options={"gtol": 1e-10})
    assert jac_calls.calls == result.njev > 0
    np.testing.assert_allclose(result.x["a"], [1.0, 1.0], rtol=1e-9)
    hess_calls = Counted(lambda p: np.diag(12 * p["a"] ** 2))
    result = dko.minimize(lambda p: dnp.sum(p["a"] ** 4 - 4 * p["a"]), {"a": np.ones(2) * 3},
                          method="trust-exact", hess=hess_calls, options={"gtol": 1e-10})
    assert hess_calls.calls == result.nhev > 0
    np.testing.assert_allclose(result.x["a"], [1.0, 1.0], rtol=1e-9)


def test_jac_true_with_an_automatic_hessian_product():
    def value_and_gradient(p):
        return dnp.sum(p["a"] ** 4 - 4 * p["a"]), {"a": 4 * p["a"] ** 3 - 4}
    counted = Counted(value_and_gradient)
    result = dko.minimize(counted, {"a": np.full(3, 2.0)}, method="Newton-CG", jac=True,
                          options={"xtol": 1e-12})
    np.testing.assert_allclose(result.x["a"], np.ones(3), rtol=1e-10)
    assert result.nhev > 0


# --- minimize: bounds and constraints --------------------------------------------------


def test_bounds_as_a_pytree_and_as_scipy_pairs():
    center = np.array([[-2.0, 0.5, 3.0]])

    def loss(p):
        return dnp.sum((p["a"] - center) ** 2) + (p["b"] - 5.0) ** 2
    x0 = {"a": np.zeros((1, 3)), "b": 0.0}
    by_tree = dko.minimize(loss, x0, bounds={"a": (-1.0, [1.0, 1.0, 2.0]), "b": None})
    np.testing.assert_allclose(by_tree.x["a"], [[-1.0, 0.5, 2.0]], rtol=1e-8)
    np.testing.assert_allclose(by_tree.x["b"], 5.0, rtol=1e-8)
    by_pairs = dko.minimize(loss, x0, method="L-BFGS-B",
                            bounds=[(-1, 1), (-1, 1), (-1, 2), (None, 4)])
    np.testing.assert_allclose(by_pairs.x["a"], [[-1.0, 0.5, 2.0]], rtol=1e-8)
    np.testing.assert_allclose(by_pairs.x["b"], 4.0, rtol=1e-8)


@pytest.mark.parametrize("method", ["SLSQP", "trust-constr"])
def test_equality_constraint_minimum_norm_point(method):
    # min |p|^2 subject to x + 2y + 3z = 14: the point a * 14 / |a|^2 = (1, 2, 3)
    x0 = {"xy": np.zeros(2), "z": 0.0}
    options = {"ftol": 1e-12} if method == "SLSQP" else {"gtol": 1e-12, "xtol": 1e-14}
    result = dko.minimize(
        lambda p: dnp.sum(p["xy"] ** 2) + p["z"] ** 2, x0, method=method, options=options,
        constraints={"type": "eq", "fun": lambda p: p["xy"][0] + 2 * p["xy"][1] + 3 * p["z"] - 14})
    np.testing.assert_allclose(result.x["xy"], [1.0, 2.0], rtol=1e-8)
    np.testing.assert_allclose(result.x["z"], 3.0, rtol=1e-8)


# trust-constr is an interior-point method on inequalities: its answer is as accurate as its
# barrier parameter, so the barrier starts small.
_INEQUALITY_OPTIONS = {
    "SLSQP": {"ftol": 1e-12},
    "trust-constr": {"gtol": 1e-12, "xtol": 1e-14, "initial_barrier_parameter": 1e-10,
                     "initial_barrier_tolerance": 1e-10},
}


@pytest.mark.parametrize("method", ["SLSQP", "trust-constr"])
def test_inequality_constraint_projection_onto_a_half_plane(method):
    # min |p - (2, 1)|^2 subject to x + y <= 1: the projection (1, 0)
    result = dko.minimize(lambda p: (p["x"] - 2) ** 2 + (p["y"] - 1) ** 2,
                          {"x": 0.0, "y": 0.0}, method=method,
                          constraints=[{"type": "ineq", "fun": lambda p: 1 - p["x"] - p["y"]}],
                          options=_INEQUALITY_OPTIONS[method])
    np.testing.assert_allclose([result.x["x"], result.x["y"]], [1.0, 0.0], rtol=0, atol=1e-8)


@pytest.mark.parametrize("method", ["SLSQP", "trust-constr"])
@pytest.mark.parametrize("form", ["dict", "NonlinearConstraint"])
def test_nonlinear_inequality_on_a_disc(method, form):
    # min x + y subject to x^2 + y^2 <= 2: the point (-1, -1)
    if form == "dict":
        con = {"type": "ineq", "fun": lambda p, r2: r2 - p[0] ** 2 - p[1] ** 2, "args": (2.0,)}
    else:
        con = so.NonlinearConstraint(lambda p: p[0] ** 2 + p[1] ** 2, -np.inf, 2.0)
    result = dko.minimize(lambda p: p[0] + p[1], (0.5, 0.0), method=method,
                          constraints=con, options=_INEQUALITY_OPTIONS[method])
    np.testing.assert_allclose(np.array(result.x, dtype=float), [-1.0, -1.0], rtol=1e-8)


# --- minimize: bad input ---------------------------------------------------------------


def test_non_scalar_objective_points_to_least_squares():
    with pytest.raises(NonScalarOutputError, match="least_squares"):
        dko.minimize(lambda x: x ** 2, np.ones(3), method="BFGS")
    with pytest.raises(NonScalarOutputError, match=r"shape \(3,\).*least_squares"):
        dko.minimize(lambda x: x ** 2, np.ones(3), method="Nelder-Mead")


def test_bad_bounds_and_constraints_are_clear_errors():
    with pytest.raises(ValueError, match="bounds must be"):
        dko.minimize(lambda p: dnp.sum(p["a"] ** 2), {"a": np.ones(3)}, bounds=[(0, 1)])
    with pytest.raises(ValueError, match="'eq' or 'ineq'"):
        dko.minimize(lambda x: dnp.sum(x ** 2), np.ones(2), constraints={"type": "le",
                                                                          "fun": lambda x: x})
    with pytest.raises(TypeError, match="complex"):
        dko.minimize(lambda x: dnp.sum(dnp.abs(x) ** 2), np.ones(2, complex))


# --- what fun returns is checked, in every adapter -------------------------------------

X0 = np.array([0.5, 1.5])
ADAPTERS = {
    "minimize BFGS": (dko.minimize, {"method": "BFGS"}),
    "minimize Nelder-Mead": (dko.minimize, {"method": "Nelder-Mead"}),
    "minimize trust-exact": (dko.minimize, {"method": "trust-exact"}),
    "least_squares": (dko.least_squares, {}),
    "root hybr": (dko.root, {"method": "hybr"}),
    "root broyden1": (dko.root, {"method": "broyden1"}),
}
BAD_RETURNS = {
    "None": (lambda p: None, "returned None"),
    "a string": (lambda p: "residual", "returned a str"),
    "an object": (lambda p: object(), "returned an object"),
    "a boolean": (lambda p: True, "type bool"),
    "a complex value": (lambda p: dnp.sum(p) * (1 + 1j), "complex"),
    "complex residuals": (lambda p: p * 1j, "complex"),
}


@pytest.mark.parametrize("returned", list(BAD_RETURNS))
@pytest.mark.parametrize("adapter", list(ADAPTERS))
def test_a_bad_return_value_of_fun_is_a_clear_error(adapter, returned):
    solve, options = ADAPTERS[adapter]
    fun, words = BAD_RETURNS[returned]
    with pytest.raises(InputTypeError) as excinfo:
        solve(fun, X0, **options)
    text = str(excinfo.value)
    assert text.startswith(f"{solve.__name__}: fun returned")
    assert words in text


def test_least_squares_needs_at_least_one_residual():
    with pytest.raises(ShapeMismatchError, match="least_squares: fun returned 0 values"):
        dko.least_squares(lambda p: p[:0], X0)


@pytest.mark.parametrize("method", ["hybr", "krylov"])
def test_root_needs_as_many_equations_as_unknowns_except_with_lm(method):
    # x0 - 1 = 0, x1 - 2 = 0, x0 + x1 - 3 = 0: consistent, solution (1, 2)
    def equations(p):
        return dnp.stack([p[0] - 1, p[1] - 2, p[0] + p[1] - 3])

    with pytest.raises(ShapeMismatchError, match=r"root: fun returned 3 values.*parameters \(2\)"):
        dko.root(equations, X0, method=method)
    # 'lm' solves an overdetermined system in the least-squares sense: no error
    np.testing.assert_allclose(dko.root(equations, X0, method="lm").x, [1.0, 2.0], rtol=1e-7)


def test_a_constraint_returning_none_is_named():
    with pytest.raises(InputTypeError, match="minimize: a constraint's fun returned None"):
        dko.minimize(lambda p: dnp.sum(p ** 2), X0,
                     constraints={"type": "eq", "fun": lambda p: None})


@pytest.mark.parametrize("solve", [dko.minimize, dko.least_squares, dko.root],
                         ids=lambda f: f.__name__)
def test_fun_must_be_callable(solve):
    with pytest.raises(InputTypeError, match=f"{solve.__name__} expects a callable as fun"):
        solve(np.sum(X0), X0)


# --- least_squares and root ------------------------------------------------------------


def _decay_residuals(p, t, y):
    return p["amp"] * dnp.exp(-p["rate"] * t) + p["offset"] - y


def test_least_squares_recovers_a_curve_fit():
    t = np.linspace(0.0, 3.0, 20)
    y = 2.5 * np.exp(-1.3 * t) + 0.5
    result = dko.least_squares(_decay_residuals, {"amp": 1.0, "rate": 1.0, "offset": 0.0},
                               args=(t, y), xtol=1e-15, ftol=1e-15, gtol=1e-15)
    assert result.success
    np.testing.assert_allclose([result.x["amp"], result.x["rate"], result.x["offset"]],
                               [2.5, 1.3, 0.5], rtol=1e-10)
    # the Jacobian SciPy saw (columns in sorted-key order: amp, offset, rate) is exact
    expected = np.stack([np.exp(-1.3 * t), np.ones_like(t), -2.5 * t * np.exp(-1.3 * t)], 1)
    np.testing.assert_allclose(result.jac, expected, rtol=1e-7, atol=1e-12)


def test_least_squares_with_more_parameters_than_residuals_and_pytree_bounds():
    # two residuals in four parameters (reverse mode); the bounds pin x[3]
    def residuals(p):
        return dnp.stack([dnp.sum(p["x"] ** 2) - 1.0, p["x"][0] - p["x"][1]])
    x0 = {"x": np.array([0.5, 0.2, 0.1, 0.3])}
    result = dko.least_squares(residuals, x0, bounds=({"x": [-1, -1, -1, 0.3]},
                                                      {"x": [1, 1, 1, 0.3 + 1e-12]}),
                               xtol=1e-15, ftol=1e-15, gtol=1e-15)
    x = result.x["x"]
    np.testing.assert_allclose(residuals({"x": x}), [0.0, 0.0], atol=1e-10)
    expected = np.array([2 * x, [1.0, -1.0, 0.0, 0.0]])
    np.testing.assert_allclose(result.jac, expected, rtol=1e-10, atol=1e-14)
    assert abs(x[3] - 0.3) <= 1e-12


@pytest.mark.parametrize("method", ["hybr", "lm", "broyden1"])
def test_root_of_a_nonlinear_system(method):
    # x^2 + y^2 = 4 and x = y: the root (sqrt 2, sqrt 2) near (1, 0.5)
    result = dko.root(lambda p: {"circle": p["x"] ** 2 + p["y"] ** 2 - 4, "line": p["x"] - p["y"]},
                      {"x": 1.0, "y": 0.5}, method=method, tol=1e-12)
    assert result.success
    tol = 1e-10 if method != "broyden1" else 1e-6
    np.testing.assert_allclose([result.x["x"], result.x["y"]], [np.sqrt(2)] * 2, rtol=tol)


def test_root_uses_the_exact_jacobian():
    counted = Counted(lambda p: dnp.stack([p[0] ** 3 - 8.0, p[0] * p[1] - 4.0]))
    result = dko.root(counted, np.array([1.0, 1.0]), method="hybr")
    np.testing.assert_allclose(result.x, [2.0, 2.0], rtol=1e-10)
    # hybr's final Jacobian estimate starts from the exact one: one Jacobian evaluation per
    # hybr restart, no finite-difference columns
    assert result.njev >= 1 and counted.calls <= result.nfev + result.njev


def test_root_jacobian_matches_the_closed_form(monkeypatch):
    captured = {}

    def fake_root(fun, x0, **kwargs):
        captured.update(kwargs)
        return so.OptimizeResult(x=x0)
    monkeypatch.setattr(so, "root", fake_root)
    dko.root(lambda x: dnp.sin(x) * dnp.sum(x), np.zeros(3))
    x = np.array([0.3, -1.2, 2.0])
    expected = np.diag(np.cos(x)) * np.sum(x) + np.sin(x)[:, None]
    np.testing.assert_allclose(captured["jac"](x), expected, rtol=1e-15)
