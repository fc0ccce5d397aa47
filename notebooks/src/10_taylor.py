# %% [markdown]
# # Taylor mode: a PINN for Poisson's equation
#
# A physics-informed neural network (PINN) solves a PDE by fitting a network `u(θ, x)` so
# that the equation holds at a set of collocation points. Its loss contains the PDE's
# differential operator applied to the network, and training needs the gradient of that
# loss with respect to `θ`: a derivative of a derivative, at every point.
#
# `dk.laplacian(u, argnums=1)` computes `Δu = Σ_i ∂²u/∂x_i²` in collapsed Taylor mode: one
# pass carrying the value, the first-order coefficients along the D unit vectors and one
# summed second-order coefficient, with no Hessian formed. It is a function like any
# other: `dk.vmap` maps it over the collocation points, `dk.value_and_grad` differentiates
# a loss containing it, and `dk.jit` records the whole thing once.
#
# The problem, on the unit square `Ω = [0, 1]²`:
#
# $$-\Delta u = f \text{ in } \Omega, \qquad u = 0 \text{ on } \partial\Omega, \qquad
# f(x, y) = 2\pi^2 \sin(\pi x)\sin(\pi y),$$
#
# whose solution is `u*(x, y) = sin(πx) sin(πy)`. We train a small tanh network with SciPy's
# L-BFGS-B, compare it with `u*`, and look at the stochastic estimate of the Laplacian.

# %%
import os

for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")   # one thread for BLAS, set before NumPy loads it

import time  # noqa: E402

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from scipy.optimize import minimize  # noqa: E402

import diffkit as dk  # noqa: E402
import diffkit.numpy as dnp  # noqa: E402
from diffkit.flatten_util import ravel_pytree  # noqa: E402

plt.rcParams.update({"figure.dpi": 72, "figure.figsize": (9, 2.6), "font.size": 9})
rng = np.random.default_rng(0)

# %% [markdown]
# ## The network and the collocation points
#
# A tanh MLP `2 → 16 → 16 → 1` (337 parameters), written for one point `x` of shape `(2,)`
# and taking its parameters (a list of dicts of arrays) first. SciPy wants one flat vector
# of parameters: `ravel_pytree` gives it, and the function that rebuilds the pytree.
#
# The interior points are drawn uniformly in the square, the boundary points uniformly on
# its four sides.

# %%
sizes = [2, 16, 16, 1]
params0 = [{"W": rng.normal(size=(m, n)) / np.sqrt(m), "b": np.zeros(n)}
           for m, n in zip(sizes[:-1], sizes[1:])]
theta0, unravel = ravel_pytree(params0)


def u(params, x):
    h = x
    for layer in params[:-1]:
        h = dnp.tanh(h @ layer["W"] + layer["b"])
    return (h @ params[-1]["W"] + params[-1]["b"])[0]


def exact(X):
    return np.sin(np.pi * X[..., 0]) * np.sin(np.pi * X[..., 1])


def source(X):
    return 2 * np.pi ** 2 * exact(X)


interior = rng.uniform(size=(256, 2))
side = rng.uniform(size=(4, 32))
boundary = np.concatenate([
    np.stack([side[0], np.zeros(32)], axis=1), np.stack([side[1], np.ones(32)], axis=1),
    np.stack([np.zeros(32), side[2]], axis=1), np.stack([np.ones(32), side[3]], axis=1)])
print(f"{theta0.size} parameters, {len(interior)} interior and {len(boundary)} boundary "
      "points")

# %% [markdown]
# ## The loss
#
# The residual `-Δu(θ, x) - f(x)` at each interior point, with the Laplacian in the point
# (`argnums=1`) mapped over the points with the parameters shared (`in_axes=(None, 0)`),
# and the values at the boundary points, which should be 0:
#
# $$L(\theta) = \frac{1}{N}\sum_{n} \big(\Delta u(\theta, x_n) + f(x_n)\big)^2
#   + \frac{\lambda}{M} \sum_{m} u(\theta, b_m)^2, \qquad \lambda = 100.$$
#
# The weight λ balances the two terms: the residual is of the size of `f` (about 20), the
# boundary values of the size of `u` (about 1).

# %%
laplacian_u = dk.vmap(dk.laplacian(u, argnums=1), in_axes=(None, 0))
u_at = dk.vmap(u, in_axes=(None, 0))
boundary_weight = 100.0


def loss(theta):
    params = unravel(theta)
    residual = laplacian_u(params, interior) + source(interior)
    return dnp.mean(residual ** 2) + boundary_weight * dnp.mean(u_at(params, boundary) ** 2)


value_and_grad = dk.value_and_grad(loss)
fast_value_and_grad = dk.jit(value_and_grad)

# %% [markdown]
# Before training, three checks at the starting point:
#
# - the Laplacian of the network equals the trace of its Hessian (`dk.hessian`, a
#   different route: forward over reverse mode) at every interior point;
# - the gradient of the loss, through the Laplacian, agrees with central finite
#   differences of the loss along a random direction;
# - the jitted `value_and_grad` gives the eager result.

# %%
params = unravel(theta0)
hessians = dk.vmap(dk.hessian(u, argnums=1), in_axes=(None, 0))(params, interior)
np.testing.assert_allclose(laplacian_u(params, interior),
                           np.trace(hessians, axis1=1, axis2=2), rtol=1e-10, atol=1e-12)

value, gradient = value_and_grad(theta0)
direction = rng.normal(size=theta0.size)
step = 1e-5
finite_difference = (loss(theta0 + step * direction) - loss(theta0 - step * direction)) / (2 * step)
print(f"loss {value:.4f}; directional derivative: diffkit {gradient @ direction:.8f}, "
      f"finite differences {finite_difference:.8f}")
np.testing.assert_allclose(gradient @ direction, finite_difference, rtol=1e-6)

fast_value, fast_gradient = fast_value_and_grad(theta0)
np.testing.assert_allclose(fast_value, value, rtol=1e-12)
np.testing.assert_allclose(fast_gradient, gradient, rtol=1e-10, atol=1e-12)

# %% [markdown]
# ## Training with L-BFGS-B
#
# `scipy.optimize.minimize` with `jac=True` takes one function returning the loss and its
# gradient: the jitted `value_and_grad`, recorded on its first call and replayed on every
# later one. The iteration count is capped to keep the notebook quick.

# %%
history = [value]   # the loss at the start, then after each iteration


def record(intermediate_result):
    history.append(intermediate_result.fun)


start = time.perf_counter()
result = minimize(fast_value_and_grad, theta0, jac=True, method="L-BFGS-B",
                  callback=record, options={"maxiter": 500})
seconds = time.perf_counter() - start
print(f"{result.nit} iterations, {result.nfev} evaluations in {seconds:.1f} s; "
      f"loss {value:.3g} -> {result.fun:.3g}")
print(fast_value_and_grad.cache_info())

# %% [markdown]
# ## The solution against `u*`
#
# On a 41 x 41 grid over the square (points the network was not trained on), the relative
# L2 error `‖u_θ - u*‖ / ‖u*‖`, which must be below 2%:

# %%
grid = np.linspace(0.0, 1.0, 41)
GX, GY = np.meshgrid(grid, grid)
points = np.stack([GX.ravel(), GY.ravel()], axis=1)
trained = unravel(result.x)
predicted = u_at(trained, points)
error = predicted - exact(points)
relative_error = np.linalg.norm(error) / np.linalg.norm(exact(points))
print(f"relative L2 error {relative_error:.2e}, largest pointwise error "
      f"{np.abs(error).max():.2e}")
assert relative_error < 2e-2

fig, axes = plt.subplots(1, 4, figsize=(9, 2.2))
solution_levels = np.linspace(min(predicted.min(), 0.0), max(predicted.max(), 1.0), 11)
panels = [(predicted, "PINN u_θ", solution_levels), (exact(points), "exact u*", solution_levels),
          (np.abs(error), "|u_θ - u*|", 10)]
for i, (ax, (values, title, levels)) in enumerate(zip(axes, panels)):
    image = ax.contourf(GX, GY, values.reshape(GX.shape), levels=levels, cmap="viridis")
    ax.set_title(title)
    ax.set_aspect("equal")
    ax.set_xticks([0, 1])
    ax.set_yticks([0, 1])
    if i > 0:   # the first two panels share their colour scale
        fig.colorbar(image, ax=ax, shrink=0.8, ticks=[0, 0.5, 1] if i == 1 else None)
axes[3].semilogy(history)
axes[3].set_xlabel("L-BFGS-B iteration")
axes[3].set_title("loss")
fig.tight_layout()
plt.show()

# %% [markdown]
# The PDE residual of the trained network, at the grid points, is small compared with `f`
# (whose largest value is 2π² ≈ 19.7):

# %%
residual = laplacian_u(trained, points) + source(points)
print(f"residual: RMS {np.sqrt(np.mean(residual ** 2)):.3f}, "
      f"largest {np.abs(residual).max():.3f}")

# %% [markdown]
# ## The stochastic estimate
#
# `dk.laplacian(u, argnums=1, stochastic=k, rng=rng)` replaces the D unit vectors by k
# random Rademacher vectors `v` (entries ±1, `E[v vᵀ] = I`) and returns
# `mean_r v_rᵀ ∇²u v_r`, an unbiased estimate of `tr ∇²u` whose cost does not depend on
# D. In two dimensions it saves nothing; it pays when the points have hundreds of
# coordinates. But its behaviour is the same, and easy to read here: for `v = (s₁, s₂)`,
# `vᵀHv = H₁₁ + H₂₂ + 2 s₁s₂ H₁₂`, so the diagonal of the Hessian is always counted
# exactly and the error is `2 H₁₂` times the mean of the k signs `s₁s₂`: zero on average,
# with variance `4 H₁₂² / k`.
#
# Under `vmap` an estimate draws its k directions once per call, shared by all the points;
# each call draws new ones from the generator. Below: 50 calls for each k, at the 256
# interior points, against the exact Laplacian of the trained network.

# %%
exact_laplacian = laplacian_u(trained, interior)
hessians = dk.vmap(dk.hessian(u, argnums=1), in_axes=(None, 0))(trained, interior)
predicted_rms = np.sqrt(np.mean(4 * hessians[:, 0, 1] ** 2))   # for k = 1

ks = [1, 4, 16, 64]
estimate_rng = np.random.default_rng(1)
largest_off_diagonal = np.abs(2 * hessians[:, 0, 1]).max()
calls = 50
rms_errors = []
for k in ks:
    estimate = dk.vmap(dk.laplacian(u, argnums=1, stochastic=k, rng=estimate_rng),
                       in_axes=(None, 0))
    samples = np.array([estimate(trained, interior) for _ in range(calls)])
    rms_errors.append(np.sqrt(np.mean((samples - exact_laplacian) ** 2)))
    error_of_mean = np.abs(samples.mean(axis=0) - exact_laplacian).max()
    print(f"k = {k:2d}: RMS error {rms_errors[-1]:.4f} (predicted "
          f"{predicted_rms / np.sqrt(k):.4f}); the mean of {calls} calls is off by at most "
          f"{error_of_mean:.4f}")
    np.testing.assert_allclose(rms_errors[-1], predicted_rms / np.sqrt(k), rtol=0.3)
    # unbiased: the mean of the calls' signs is within 4 standard deviations of 0
    assert error_of_mean <= 4 * largest_off_diagonal / np.sqrt(calls * k)

same_state = [dk.laplacian(u, argnums=1, stochastic=4, rng=np.random.default_rng(7))(
    trained, interior[0]) for _ in range(2)]
assert same_state[0] == same_state[1]    # the same generator state: the same estimate
print(f"k = 4 from default_rng(7), twice: {same_state[0]:.4f}, {same_state[1]:.4f} "
      f"(exact {exact_laplacian[0]:.4f})")

fig, ax = plt.subplots(figsize=(4, 2.4))
ax.loglog(ks, rms_errors, "o-", label="measured")
ax.loglog(ks, predicted_rms / np.sqrt(ks), "--", label="RMS of 2|∂²u/∂x∂y| / √k")
ax.set_xlabel("k (random directions)")
ax.set_ylabel("RMS error of the estimate")
ax.legend()
plt.show()

# %% [markdown]
# The error falls as `1/√k`, as predicted from the Hessian's off-diagonal entry, and the
# mean over many calls converges to the exact Laplacian. The exact operator, its
# stochastic estimate and the other operators (`weighted_laplacian` for diffusion
# generators, `hessian_diagonal`, `biharmonic`) are described in the user guide's page
# on Taylor mode (`docs/guide/taylor.md`), with a heat-equation operator and a
# Black-Scholes generator.
