# %% [markdown]
# # `vmap`: per-example gradients and batched Jacobians
#
# `dk.vmap(f)` turns a function written for **one** example into one that takes a batch,
# mapping over a leading axis (or any axis chosen by `in_axes`). It is not a Python loop:
# diffkit runs `f` once, on the whole batch, with each operation rewritten for the batch axis.
# Because `vmap` composes with the other transformations, two things that are awkward
# otherwise become one line each:
#
# - **per-example gradients**, `vmap(grad(loss), in_axes=(None, 0, 0))`: the gradient of
#   each example's loss separately (for gradient clipping per example, differential
#   privacy, influence functions, variance estimates), where an ordinary `grad` of the mean
#   loss only gives their average;
# - **batched Jacobians**, `vmap(jacobian(f))`: the Jacobian of `f` at each of many points.

# %%
import time

import matplotlib.pyplot as plt
import numpy as np

import diffkit as dk
import diffkit.numpy as dnp

plt.rcParams.update({"figure.dpi": 72, "figure.figsize": (7, 2.6), "font.size": 9})
rng = np.random.default_rng(0)

# %% [markdown]
# ## Per-example gradients
#
# Logistic regression, written for a single example `(x, y)`. The gradient of one example's
# loss with respect to the weights is `(σ(w·x) − y) x`.

# %%
def example_loss(w, x, y):
    z = dnp.dot(w, x)
    return dnp.logaddexp(0.0, z) - y * z

n_examples, n_features = 256, 5
X = rng.normal(size=(n_examples, n_features))
w = rng.normal(size=n_features)
y = (rng.random(n_examples) < 1 / (1 + np.exp(-X @ w))).astype(float)

# w is shared (None), x and y are batched along axis 0
per_example_grad = dk.vmap(dk.grad(example_loss), in_axes=(None, 0, 0))
G = per_example_grad(w, X, y)
print("per-example gradients:", G.shape)

sigma = 1 / (1 + np.exp(-X @ w))
np.testing.assert_allclose(G, (sigma - y)[:, None] * X, rtol=1e-12, atol=1e-15)

# Their mean is the gradient of the mean loss, which is all plain `grad` can give.
def mean_loss(w, X, y):
    return dnp.mean(dk.vmap(example_loss, in_axes=(None, 0, 0))(w, X, y))

np.testing.assert_allclose(G.mean(axis=0), dk.grad(mean_loss)(w, X, y), rtol=1e-12)

# %% [markdown]
# What the average hides: per-example gradients differ widely in size. Clipping each
# one to norm at most 1 before averaging (as in differentially private SGD) needs them one
# by one:

# %%
norms = np.linalg.norm(G, axis=1)
clipped = G / np.maximum(1.0, norms)[:, None]
np.testing.assert_array_less(np.linalg.norm(clipped, axis=1), 1.0 + 1e-12)
print(f"gradient norms: median {np.median(norms):.3f}, max {norms.max():.3f}; "
      f"{np.sum(norms > 1)} of {n_examples} clipped")

fig, ax = plt.subplots(figsize=(4.5, 2.4))
ax.hist(norms, bins=30, color="C0")
ax.axvline(1.0, color="C3", lw=1, label="clipping norm")
ax.set_xlabel("‖per-example gradient‖")
ax.set_ylabel("examples")
ax.legend(frameon=False)
fig.tight_layout()

# %% [markdown]
# ## Batched Jacobians: spherical coordinates
#
# `f(r, θ, φ) = (r sin θ cos φ, r sin θ sin φ, r cos θ)` has a 3 × 3 Jacobian whose
# determinant is the volume element `r² sin θ`. `vmap(jacobian(f))` gives the Jacobian at
# each of many points in one call, shape `(batch, 3, 3)`.

# %%
def spherical_to_cartesian(q):
    r, theta, phi = q[0], q[1], q[2]
    return dnp.stack([r * dnp.sin(theta) * dnp.cos(phi),
                      r * dnp.sin(theta) * dnp.sin(phi),
                      r * dnp.cos(theta)])

def jacobian_by_hand(q):
    r, theta, phi = q
    st, ct, sp, cp = np.sin(theta), np.cos(theta), np.sin(phi), np.cos(phi)
    return np.array([[st * cp, r * ct * cp, -r * st * sp],
                     [st * sp, r * ct * sp, r * st * cp],
                     [ct, -r * st, 0.0]])

Q = np.stack([rng.uniform(0.5, 2.0, 1000), rng.uniform(0.1, 3.0, 1000),
              rng.uniform(-3.0, 3.0, 1000)], axis=1)        # 1000 points (r, θ, φ)
jacobians = dk.vmap(dk.jacobian(spherical_to_cartesian))(Q)
print("batched Jacobians:", jacobians.shape)

np.testing.assert_allclose(jacobians, np.stack([jacobian_by_hand(q) for q in Q]),
                           rtol=1e-12, atol=1e-14)
np.testing.assert_allclose(np.linalg.det(jacobians), Q[:, 0] ** 2 * np.sin(Q[:, 1]),
                           rtol=1e-10)

# %% [markdown]
# `in_axes` and `out_axes` choose which axes are mapped. Here the batch runs along the
# *columns* of the input (`in_axes=1`) and the batch axis of the result goes last
# (`out_axes=2`), giving `(3, 3, batch)`; a `None` in `in_axes` broadcasts an argument.

# %%
jacobians_last = dk.vmap(dk.jacobian(spherical_to_cartesian), in_axes=1, out_axes=2)(Q.T)
print(jacobians_last.shape)
np.testing.assert_allclose(jacobians_last, np.moveaxis(jacobians, 0, 2), rtol=1e-12)

def scaled(q, scale):
    return scale * spherical_to_cartesian(q)

scaled_jacobians = dk.vmap(dk.jacobian(scaled), in_axes=(0, None))(Q, 2.0)
np.testing.assert_allclose(scaled_jacobians, 2.0 * jacobians, rtol=1e-12)

# %% [markdown]
# ## Timing: `vmap` against a Python loop
#
# The loop calls `grad` (or `jacobian`) once per example, so its cost is the per-call
# overhead times the batch size; `vmap` pays the overhead once and does the arithmetic on
# whole arrays. Wall-clock times from the machine that ran this notebook (best of three):

# %%
def best_time(fun, *args, repeats=3):
    """The shortest of ``repeats`` wall-clock times of ``fun(*args)``, in seconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fun(*args)
        times.append(time.perf_counter() - start)
    return min(times)

single_grad = dk.grad(example_loss)
single_jacobian = dk.jacobian(spherical_to_cartesian)
batched_jacobian = dk.vmap(single_jacobian)

def loop_grads(n):
    return np.stack([single_grad(w, X[i], y[i]) for i in range(n)])

def loop_jacobians(n):
    return np.stack([single_jacobian(Q[i]) for i in range(n)])

batch_sizes = np.array([1, 4, 16, 64, 256])
timings = {"per-example gradients": [], "Jacobians": []}
for n in batch_sizes:
    np.testing.assert_allclose(loop_grads(n), per_example_grad(w, X[:n], y[:n]), rtol=1e-12)
    np.testing.assert_allclose(loop_jacobians(n), batched_jacobian(Q[:n]), rtol=1e-12)
    timings["per-example gradients"].append(
        (best_time(loop_grads, n), best_time(per_example_grad, w, X[:n], y[:n])))
    timings["Jacobians"].append((best_time(loop_jacobians, n), best_time(batched_jacobian, Q[:n])))

print(f"{'batch':>5s}   gradients: loop / vmap [ms]   Jacobians: loop / vmap [ms]")
for n, (gl, gv), (jl, jv) in zip(batch_sizes, *(1e3 * np.array(t) for t in timings.values())):
    print(f"{n:5d}   {gl:10.2f} / {gv:6.2f}            {jl:10.2f} / {jv:6.2f}")

# %%
fig, axes = plt.subplots(1, 2, figsize=(7.5, 2.7), sharey=True)
for ax, (title, times) in zip(axes, timings.items()):
    times = 1e3 * np.array(times)
    ax.loglog(batch_sizes, times[:, 0], "o-", label="Python loop")
    ax.loglog(batch_sizes, times[:, 1], "s-", label="vmap")
    ax.set_title(title)
    ax.set_xlabel("batch size")
axes[0].set_ylabel("time [ms]")
axes[0].legend(frameon=False)
fig.tight_layout()
