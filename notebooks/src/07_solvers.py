# %% [markdown]
# # Fitting ODE models: a stiff chemical system and a neural ODE
#
# `diffkit.scipy.integrate.solve_ivp` is SciPy's `solve_ivp` whose solution differentiates
# in the initial state, the output times and the parameters. Reverse mode solves the
# adjoint equations backwards, forward mode the sensitivity equations, each with SciPy's
# solver of the same method and tolerances. This notebook fits two models through it and
# checks each derivative against central finite differences of the solution.

# %%
import time

import matplotlib.pyplot as plt
import numpy as np
import scipy.integrate as si

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.scipy.integrate import solve_ivp
from diffkit.scipy.optimize import least_squares

plt.rcParams.update({"figure.dpi": 60, "figure.figsize": (7, 2.4), "font.size": 9})


def central(f, x, h):
    return np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(x.size)]).T

# %% [markdown]
# ## Robertson's reactions: rate constants by least squares
#
# Three species, rates spanning nine orders of magnitude (0.04, 3·10⁷, 10⁴): the classic
# stiff test. We observe all species at a few times and fit the logarithms of the rates.
# The implicit `BDF` method gets the exact Jacobian of the right-hand side from diffkit, and
# `least_squares` gets the exact Jacobian of the residuals through the solver.

# %%
def robertson(t, y, log_k):
    k = dnp.exp(log_k)
    return dnp.stack([-k[0] * y[0] + k[2] * y[1] * y[2],
                      k[0] * y[0] - k[2] * y[1] * y[2] - k[1] * y[1] ** 2,
                      k[1] * y[1] ** 2])


times = np.array([0.1, 1.0, 10.0, 100.0])
y0 = np.array([1.0, 0.0, 0.0])
scale = np.array([1.0, 1e4, 1.0])      # y2 is tiny: weigh it so that it counts
true_log_k = np.log([0.04, 3e7, 1e4])
options = dict(method="BDF", rtol=1e-8, atol=1e-12)


def observe(log_k):
    return solve_ivp(robertson, (0.0, 100.0), y0, t_eval=times, args=(log_k,), **options).y


data = observe(true_log_k)


def residuals(log_k):
    return dnp.ravel((observe(log_k) - data) * scale[:, None])

# %% [markdown]
# The Jacobian of the residuals (forward mode, three directions), against central finite
# differences of SciPy's own solution:

# %%
start = true_log_k + np.array([0.3, -0.4, 0.25])
J = dk.jacfwd(residuals)(start)


def residuals_scipy(log_k):
    sol = si.solve_ivp(lambda t, y: np.asarray(robertson(t, y, log_k)), (0.0, 100.0), y0,
                       t_eval=times, method="Radau", rtol=1e-12, atol=1e-16)
    return np.ravel((sol.y - data) * scale[:, None])


J_fd = central(residuals_scipy, start, 1e-5)
print("largest relative difference:", np.abs(J - J_fd).max() / np.abs(J_fd).max())
assert np.abs(J - J_fd).max() <= 1e-4 * np.abs(J_fd).max()

# reverse mode (the adjoint) gives the gradient of the cost, J^T r:
r = np.asarray(residuals(start))
g = dk.grad(lambda x: 0.5 * dnp.sum(residuals(x) ** 2))(start)
print("gradient of the cost, adjoint:", g, " J^T r:", J.T @ r)
assert np.allclose(g, J.T @ r, rtol=1e-4)

# %%
begin = time.perf_counter()
fit = least_squares(residuals, start, xtol=1e-12, ftol=1e-12)
print(f"{fit.nfev} residual evaluations, {fit.njev} Jacobians, "
      f"{time.perf_counter() - begin:.1f} s")
print("fitted rates:", np.exp(fit.x))
assert np.allclose(fit.x, true_log_k, atol=1e-5)

# %% [markdown]
# ## A small neural ODE
#
# The vector field is a two-layer MLP, `f(y) = W2 tanh(W1 y + b1) + b2`, trained so that its
# flow follows a damped spiral sampled at 20 times. The loss is differentiated by the
# adjoint method with `grad`, whose cost does not grow with the number of weights, and the
# weights (a dict: any pytree) are updated by plain gradient descent with momentum.

# %%
rng = np.random.default_rng(0)
A = np.array([[-0.1, 2.0], [-2.0, -0.1]])
ts = np.linspace(0.0, 2.0, 20)
z0 = np.array([2.0, 0.0])
target = si.solve_ivp(lambda t, y: A @ y, (0.0, 2.0), z0, t_eval=ts, rtol=1e-10).y

hidden = 8
weights = {"W1": 0.5 * rng.normal(size=(hidden, 2)), "b1": np.zeros(hidden),
           "W2": 0.5 * rng.normal(size=(2, hidden)), "b2": np.zeros(2)}


def mlp(t, y, w):
    return w["W2"] @ dnp.tanh(w["W1"] @ y + w["b1"]) + w["b2"]


def loss(w):
    sol = solve_ivp(mlp, (0.0, 2.0), z0, t_eval=ts, args=(w,), rtol=1e-6, atol=1e-8)
    return dnp.mean((sol.y - target) ** 2)

# %% [markdown]
# The gradient of one weight against central finite differences of the loss:

# %%
g = dk.grad(loss)(weights)


def loss_of_entry(v):
    w = dict(weights, W1=weights["W1"].copy())
    w["W1"][0, 1] = v
    return float(loss(w))


v0 = weights["W1"][0, 1]
fd = (loss_of_entry(v0 + 1e-5) - loss_of_entry(v0 - 1e-5)) / 2e-5
print("adjoint:", g["W1"][0, 1], " finite differences:", fd)
assert abs(g["W1"][0, 1] - fd) <= 1e-3 * abs(fd) + 1e-6

# %%
value_and_grad = dk.value_and_grad(loss)
velocity = {k: np.zeros_like(v) for k, v in weights.items()}
history = []
begin = time.perf_counter()
for _ in range(40):
    value, g = value_and_grad(weights)
    history.append(float(value))
    for k in weights:
        velocity[k] = 0.9 * velocity[k] - 0.05 * g[k]
        weights[k] = weights[k] + velocity[k]
print(f"loss {history[0]:.3f} -> {history[-1]:.4f} in 40 steps, "
      f"{time.perf_counter() - begin:.1f} s")
assert history[-1] < 0.25 * history[0]

# %%
fitted = solve_ivp(mlp, (0.0, 2.0), z0, t_eval=ts, args=(weights,), rtol=1e-6, atol=1e-8).y
fig, (left, right) = plt.subplots(1, 2)
left.plot(target[0], target[1], "k.", label="data")
left.plot(fitted[0], fitted[1], label="neural ODE")
left.legend()
right.semilogy(history)
right.set_xlabel("step")
right.set_ylabel("loss")
plt.tight_layout()
