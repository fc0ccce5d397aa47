# %% [markdown]
# # Exact derivatives for SciPy: `minimize`, `least_squares`, `solve_ivp`
#
# SciPy's optimisers and stiff integrators take derivatives as plain callables: `jac`,
# `hess` and `hessp` for `scipy.optimize.minimize`, `jac` for `least_squares` and for
# `solve_ivp`. When none are given, SciPy falls back to finite differences, which cost extra
# function evaluations (one or two per input for each gradient or Jacobian) and lose about
# half the significant digits. diffkit turns the function you already have into each of
# these callables:
#
# | SciPy wants | diffkit gives |
# |---|---|
# | `jac(x)`: gradient of a scalar objective | `dk.grad(f)` |
# | `hess(x)`: Hessian | `dk.hessian(f)` |
# | `hessp(x, p)`: Hessian times `p` | `lambda x, p: dk.hvp(f, (x,), (p,))[0]` |
# | `jac(x)` of a vector function (least squares, root finding) | `dk.jacobian(residuals)` |
# | `jac(t, y)` of an ODE right-hand side `fun(t, y)` | `dk.jacobian(fun, argnums=1)` |
#
# Each section below counts the calls each variant makes and checks the results against
# closed forms.

# %%
import warnings

import matplotlib.pyplot as plt
import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import (
    approx_fprime,
    least_squares,
    minimize,
    rosen_der,
    rosen_hess,
    rosen_hess_prod,
)

import diffkit as dk
from diffkit.scipy.optimize import minimize as dk_minimize

plt.rcParams.update({"figure.dpi": 72, "figure.figsize": (7, 2.6), "font.size": 9})

# %% [markdown]
# ## Rosenbrock's function
#
# `f(x) = Σ 100 (xᵢ₊₁ − xᵢ²)² + (1 − xᵢ)²`, minimum `0` at `x = (1, …, 1)`, written with plain
# NumPy. (SciPy's own `scipy.optimize.rosen` starts with `np.asarray(x)`, which would throw
# the derivative away, so diffkit refuses to trace it and says why; writing the one-line
# formula keeps it differentiable.) A counter records every call, including the ones diffkit
# makes while tracing and the ones finite differences make.

# %%
calls = {"f": 0}

def rosenbrock(x):
    calls["f"] += 1
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)

gradient = dk.grad(rosenbrock)
hessian = dk.hessian(rosenbrock)

def hessp(x, p):
    return dk.hvp(rosenbrock, (x,), (p,))[0]

# SciPy ships the hand-written derivatives of this function: diffkit must match them.
x_test = np.array([-1.2, 1.0, 0.5, 0.3, 2.0])
p_test = np.arange(5.0)
np.testing.assert_allclose(gradient(x_test), rosen_der(x_test), rtol=1e-12)
np.testing.assert_allclose(hessian(x_test), rosen_hess(x_test), rtol=1e-12)
np.testing.assert_allclose(hessp(x_test, p_test), rosen_hess_prod(x_test, p_test), rtol=1e-12)
print("gradient:", gradient(x_test))

# %% [markdown]
# ## `minimize` with Newton-CG and trust-krylov
#
# Both methods need a gradient and a Hessian (or Hessian-vector products). Three variants:
#
# - **exact `hess`**: `jac=dk.grad(f)`, `hess=dk.hessian(f)`;
# - **exact `hessp`**: `jac=dk.grad(f)`, `hessp` from `dk.hvp` (never forms the Hessian);
# - **finite differences**: a forward-difference gradient (`scipy.optimize.approx_fprime`)
#   and SciPy's `hess="2-point"` differences of that gradient.
#
# Starting point `(-1.2, 1, -1.2, 1, …)`, dimensions 2 and 10.

# %%
def start(n):
    x0 = np.ones(n)
    x0[::2] = -1.2
    return x0

def fd_gradient(x):
    return approx_fprime(x, rosenbrock)

variants = {
    "exact hess": dict(jac=gradient, hess=hessian),
    "exact hessp": dict(jac=gradient, hessp=hessp),
    "finite differences": dict(jac=fd_gradient, hess="2-point"),
}
tolerances = {  # SciPy's defaults, and tight ones that ask for about eight digits of x
    "default": {"Newton-CG": {}, "trust-krylov": {}},
    "tight": {"Newton-CG": {"xtol": 1e-10}, "trust-krylov": {"gtol": 1e-8}},
}

def run(method, n, derivatives, tolerance="tight", **kw):
    calls["f"] = 0
    options = {**tolerances[tolerance][method], "maxiter": 2000}
    with warnings.catch_warnings():   # finite differences may end in a precision-loss warning
        warnings.simplefilter("ignore")
        result = minimize(rosenbrock, start(n), method=method, **derivatives, options=options,
                          **kw)
    return result, calls["f"]

results = {}
print(f"{'method':13s} {'tolerance':9s} {'n':>3s} {'derivatives':19s} {'success':>7s} "
      f"{'iterations':>10s} {'calls of f':>10s} {'max |x - 1|':>12s}")
for method in ["Newton-CG", "trust-krylov"]:
    for tolerance in tolerances:
        for n in [2, 10]:
            for name, derivatives in variants.items():
                result, f_calls = run(method, n, derivatives, tolerance)
                results[method, tolerance, n, name] = (result, f_calls)
                error = np.abs(result.x - 1).max()
                print(f"{method:13s} {tolerance:9s} {n:3d} {name:19s} {result.success!s:>7s} "
                      f"{result.nit:10d} {f_calls:10d} {error:12.1e}")

# %%
for (method, tolerance, n, name), (result, f_calls) in results.items():
    if name.startswith("exact"):
        assert result.success, (method, n, name, result.message)
        atol = 1e-6 if tolerance == "tight" else 1e-3
        np.testing.assert_allclose(result.x, np.ones(n), atol=atol)
        fd_calls = results[method, tolerance, n, "finite differences"][1]
        assert f_calls < fd_calls, (method, tolerance, n, name, f_calls, fd_calls)

# %% [markdown]
# The exact variants always converge, to about eight digits with the tight tolerances, with
# a fraction of the calls: every finite-difference gradient costs `n + 1` calls of `f`, and
# every finite-difference Hessian `n` more gradients, while diffkit's gradient and Hessian
# each cost one traced call (`hessp` costs one per Hessian-vector product, which is why it
# makes more calls than `hess` on these small problems; it wins when `n` is large and the
# Hessian would not fit). Finite differences also cost accuracy: a forward difference is good
# to about `√ε ≈ 1e-8` relative, and differencing it once more for the Hessian leaves only a
# few digits. With SciPy's default tolerances that is sometimes enough; asked for eight
# digits, those runs end early ("success False") short of the minimum.
#
# Where the iterates go, for n = 2:

# %%
def recorder(iterates):
    """A `minimize` callback that appends a copy of each iterate to `iterates`."""
    return lambda xk, *_: iterates.append(np.copy(xk))

paths = {}
for method in ["Newton-CG", "trust-krylov"]:
    iterates = [start(2)]
    run(method, 2, variants["exact hess"], callback=recorder(iterates))
    paths[method] = np.array(iterates)

g1, g2 = np.meshgrid(np.linspace(-1.5, 1.5, 120), np.linspace(-0.5, 1.5, 100))
fig, ax = plt.subplots(figsize=(4.2, 3.0))
ax.contour(g1, g2, 100 * (g2 - g1 ** 2) ** 2 + (1 - g1) ** 2, levels=np.logspace(-0.5, 2.5, 6),
           colors="0.75", linewidths=0.7)
for (method, path), marker in zip(paths.items(), "os"):
    ax.plot(path[:, 0], path[:, 1], marker + "-", ms=3, lw=1, label=f"{method} ({len(path) - 1})")
ax.plot(1, 1, "*", color="k", ms=9)
ax.legend(frameon=False, fontsize=8, loc="lower right")
ax.set_title("Rosenbrock, exact derivatives: iterates")
fig.tight_layout()

# %% [markdown]
# ## The same, with parameters as a pytree: `diffkit.scipy.optimize`
#
# Research code keeps parameters in dicts and tuples of arrays, while SciPy wants one flat
# vector. `diffkit.scipy.optimize.minimize` takes any pytree `x0`, flattens it with
# `diffkit.flatten_util.ravel_pytree`, supplies the exact `jac` (and `hess` or `hessp` when the
# method uses them) and returns `x` in the pytree's structure. Here a ridge regression whose
# weights and bias live in a dict, with its closed-form answer to compare. With the exact
# Hessian, trust-exact solves this quadratic in a Newton step or two.

# %%
rng_ridge = np.random.default_rng(3)
features = rng_ridge.normal(size=(40, 3))
targets = features @ np.array([1.0, -2.0, 0.5]) + 0.7 + 0.1 * rng_ridge.normal(size=40)
penalty = 0.1

def ridge_loss(params):
    prediction = features @ params["w"] + params["b"]
    return np.mean((prediction - targets) ** 2) + penalty * np.sum(params["w"] ** 2)

fit = dk_minimize(ridge_loss, {"w": np.zeros(3), "b": 0.0}, method="trust-exact", tol=1e-12)
print(fit.x, "in", fit.nit, "iterations")

# closed form: the normal equations of the penalised least-squares problem
design = np.hstack([features, np.ones((40, 1))])
regulariser = np.diag([penalty * 40] * 3 + [0.0])
solution = np.linalg.solve(design.T @ design + regulariser, design.T @ targets)
np.testing.assert_allclose(fit.x["w"], solution[:3], rtol=1e-7)
np.testing.assert_allclose(fit.x["b"], solution[3], rtol=1e-7)

# %% [markdown]
# ## `least_squares` with an exact Jacobian: fitting a damped oscillation
#
# Fit `y(t) = a e^{−b t} cos(ω t)` to 60 noisy samples. `least_squares` wants the residuals
# `r(p) = model(p, t) − y` and their `60 × 3` Jacobian `∂rᵢ/∂pⱼ`, which is
# `dk.jacobian(residuals)`.

# %%
rng = np.random.default_rng(1)
t = np.linspace(0.0, 10.0, 60)
p_true = np.array([2.0, 0.3, 1.7])
noise = 0.05

def model(p, t):
    return p[0] * np.exp(-p[1] * t) * np.cos(p[2] * t)

y_data = model(p_true, t) + noise * rng.normal(size=t.size)
calls["r"] = 0

def residuals(p):
    calls["r"] += 1
    return model(p, t) - y_data

def jacobian_by_hand(p):
    decay, wave = np.exp(-p[1] * t), np.cos(p[2] * t)
    return np.stack([decay * wave, -p[0] * t * decay * wave,
                     -p[0] * t * decay * np.sin(p[2] * t)], axis=1)

residual_jacobian = dk.jacobian(residuals)
p0 = np.array([1.5, 0.2, 1.6])
np.testing.assert_allclose(residual_jacobian(p0), jacobian_by_hand(p0), rtol=1e-12, atol=1e-15)

fits = {}
for name, jac in [("exact Jacobian", residual_jacobian), ("finite differences", "2-point")]:
    calls["r"] = 0
    fits[name] = least_squares(residuals, p0, jac=jac, xtol=1e-12, ftol=1e-12, gtol=1e-12)
    fit = fits[name]
    print(f"{name:18s} p = {fit.x}, Jacobians {fit.njev}, calls of the residuals {calls['r']}")

exact, fd = fits["exact Jacobian"], fits["finite differences"]
assert exact.success
# At the optimum the gradient of ½‖r‖², Jᵀ r, vanishes (relative to the size of its terms).
J_opt = jacobian_by_hand(exact.x)
assert np.all(np.abs(J_opt.T @ exact.fun) <= 1e-7 * (np.abs(J_opt).T @ np.abs(exact.fun)))
np.testing.assert_allclose(fd.x, exact.x, rtol=1e-6)

# %% [markdown]
# The two fits land on the same parameters here (a small, well-conditioned problem); each
# finite-difference Jacobian costs three extra residual evaluations, one per parameter,
# where diffkit's costs one traced evaluation. The Jacobian also gives the parameters'
# standard errors, from the covariance `σ² (JᵀJ)⁻¹`:

# %%
J_fit = residual_jacobian(exact.x)
sigma2 = np.sum(exact.fun ** 2) / (t.size - p0.size)
std_errors = np.sqrt(np.diag(sigma2 * np.linalg.inv(J_fit.T @ J_fit)))
for label, value, err, true in zip(["a", "b", "ω"], exact.x, std_errors, p_true):
    print(f"{label} = {value:.4f} ± {err:.4f}   (true {true})")
assert np.all(np.abs(exact.x - p_true) < 4 * std_errors)   # a fixed seed: this is exact

fig, ax = plt.subplots(figsize=(5.5, 2.4))
t_fine = np.linspace(0, 10, 300)
ax.plot(t, y_data, ".", color="0.4", label="data")
ax.plot(t_fine, model(exact.x, t_fine), label="fit")
ax.plot(t_fine, model(p_true, t_fine), "--", lw=1, label="truth")
ax.set_xlabel("t")
ax.legend(frameon=False, ncols=3)
fig.tight_layout()

# %% [markdown]
# ## `solve_ivp` on a stiff system: Robertson's chemical kinetics
#
# ```
# y₁' = −0.04 y₁ + 10⁴ y₂ y₃
# y₂' =  0.04 y₁ − 10⁴ y₂ y₃ − 3·10⁷ y₂²
# y₃' =  3·10⁷ y₂²
# ```
#
# Rate constants eleven orders of magnitude apart make this stiff: explicit methods need
# absurdly small steps, and the implicit methods `BDF` and `Radau` solve a Newton system
# with the Jacobian `∂f/∂y` at each step. Without `jac`, SciPy estimates it by finite
# differences, one extra call of `f` per state variable, each time it refreshes it.
# `dk.jacobian(fun, argnums=1)` differentiates `fun(t, y)` with respect to `y`, which is
# exactly SciPy's `jac(t, y)` signature.

# %%
calls["ode"] = 0

def robertson(t, y):
    calls["ode"] += 1
    y1, y2, y3 = y[0], y[1], y[2]
    return np.stack([-0.04 * y1 + 1e4 * y2 * y3,
                     0.04 * y1 - 1e4 * y2 * y3 - 3e7 * y2 ** 2,
                     3e7 * y2 ** 2])

def robertson_jacobian_by_hand(y):
    y1, y2, y3 = y
    return np.array([[-0.04, 1e4 * y3, 1e4 * y2],
                     [0.04, -1e4 * y3 - 6e7 * y2, -1e4 * y2],
                     [0.0, 6e7 * y2, 0.0]])

robertson_jacobian = dk.jacobian(robertson, argnums=1)
y_test = np.array([0.9, 2e-5, 0.1])
np.testing.assert_allclose(robertson_jacobian(0.0, y_test), robertson_jacobian_by_hand(y_test),
                           rtol=1e-12)

def solve(fun, y0, t_end, method, jac, **kw):
    calls["ode"] = 0
    solution = solve_ivp(fun, (0.0, t_end), y0, method=method, jac=jac, rtol=1e-6, **kw)
    assert solution.success, solution.message
    return solution, calls["ode"]

def compare(fun, jac, y0, t_end, **kw):
    print(f"{'method':6s} {'jac':18s} {'steps':>6s} {'Jacobians':>9s} {'LU':>5s} "
          f"{'calls of fun':>12s}")
    solutions = {}
    for method in ["BDF", "Radau"]:
        for name, jac_arg in [("finite differences", None), ("exact (diffkit)", jac)]:
            solution, fun_calls = solve(fun, y0, t_end, method, jac_arg, **kw)
            solutions[method, name] = (solution, fun_calls)
            print(f"{method:6s} {name:18s} {solution.t.size - 1:6d} {solution.njev:9d} "
                  f"{solution.nlu:5d} {fun_calls:12d}")
    return solutions

def check_jacobian_costs(runs, n_states):
    """Calls spent on Jacobians (all calls minus SciPy's own `nfev`): one traced call per
    Jacobian with diffkit's, at least one per state variable with finite differences."""
    for method in ["BDF", "Radau"]:
        with_fd, fd_calls = runs[method, "finite differences"]
        with_jac, jac_calls = runs[method, "exact (diffkit)"]
        assert jac_calls - with_jac.nfev == with_jac.njev, (method, jac_calls, with_jac.njev)
        assert fd_calls - with_fd.nfev >= n_states * with_fd.njev, (method, fd_calls)

robertson_runs = compare(robertson, robertson_jacobian, [1.0, 0.0, 0.0], 1e5, atol=1e-10)
check_jacobian_costs(robertson_runs, 3)

# %%
for method in ["BDF", "Radau"]:
    with_fd, fd_calls = robertson_runs[method, "finite differences"]
    with_jac, jac_calls = robertson_runs[method, "exact (diffkit)"]
    np.testing.assert_allclose(with_jac.y[:, -1], with_fd.y[:, -1], rtol=1e-4, atol=1e-10)
    # y₁ + y₂ + y₃ is conserved: the right-hand sides sum to zero.
    np.testing.assert_allclose(with_jac.y.sum(axis=0), 1.0, rtol=1e-8)

solution = robertson_runs["Radau", "exact (diffkit)"][0]
fig, ax = plt.subplots(figsize=(5.5, 2.4))
for row, label in zip([solution.y[0], 1e4 * solution.y[1], solution.y[2]],
                      ["y₁", "10⁴ y₂", "y₃"]):
    ax.semilogx(solution.t[1:], row[1:], label=label)
ax.set_xlabel("t")
ax.legend(frameon=False)
ax.set_title("Robertson (Radau with diffkit's Jacobian)")
fig.tight_layout()

# %% [markdown]
# With three state variables a finite-difference Jacobian costs only three extra calls, and
# the solver reuses Jacobians across many steps, so the saving is modest. It grows with the
# number of states. A reaction-diffusion system, the Brusselator on 40 grid points (80
# states), makes the difference plain: each finite-difference Jacobian now costs 80 calls.
# (SciPy's `jac_sparsity` argument would cut that down for banded problems; an exact
# Jacobian needs no sparsity pattern.)

# %%
N = 40
dx = 1.0 / (N + 1)
grid = np.linspace(dx, 1 - dx, N)

def brusselator(t, y, alpha=0.02):
    calls["ode"] += 1
    u, v = y[:N], y[N:]
    u_ends, v_ends = np.ones(1), np.full(1, 3.0)       # fixed boundary values
    u_all = np.concatenate([u_ends, u, u_ends])
    v_all = np.concatenate([v_ends, v, v_ends])
    u_xx = (u_all[2:] - 2 * u + u_all[:-2]) / dx ** 2
    v_xx = (v_all[2:] - 2 * v + v_all[:-2]) / dx ** 2
    return np.concatenate([1 + u ** 2 * v - 4 * u + alpha * u_xx,
                           3 * u - u ** 2 * v + alpha * v_xx])

y0 = np.concatenate([1 + np.sin(2 * np.pi * grid), np.full(N, 3.0)])
brusselator_jacobian = dk.jacobian(brusselator, argnums=1)
J0 = brusselator_jacobian(0.0, y0)
# Spot checks against the hand derivative: the diagonal of ∂u'/∂u, and the coupling ∂v'/∂u.
u0, v0 = y0[:N], y0[N:]
np.testing.assert_allclose(np.diag(J0[:N, :N]), 2 * u0 * v0 - 4 - 2 * 0.02 / dx ** 2, rtol=1e-12)
np.testing.assert_allclose(J0[N:, :N], np.diag(3 - 2 * u0 * v0), rtol=1e-12, atol=1e-15)

brusselator_runs = compare(brusselator, brusselator_jacobian, y0, 10.0, atol=1e-8)
check_jacobian_costs(brusselator_runs, 2 * N)
for method in ["BDF", "Radau"]:
    with_fd, fd_calls = brusselator_runs[method, "finite differences"]
    with_jac, jac_calls = brusselator_runs[method, "exact (diffkit)"]
    np.testing.assert_allclose(with_jac.y[:, -1], with_fd.y[:, -1], rtol=1e-4, atol=1e-6)
