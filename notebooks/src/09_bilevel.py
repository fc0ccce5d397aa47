# %% [markdown]
# # A bilevel problem: tuning a ridge penalty through an inner `minimize`
#
# The weights of a ridge regression are the solution of an inner optimisation,
#
# $$w^*(\lambda) = \arg\min_w \tfrac12 \|X_{\rm train} w - y_{\rm train}\|^2
#   + \tfrac{\lambda}{2} \|w\|^2,$$
#
# and the penalty $\lambda$ is chosen to make the **validation** loss
# $L(\lambda) = \tfrac{1}{2m} \|X_{\rm val} w^*(\lambda) - y_{\rm val}\|^2$ small. Its
# gradient needs $dw^*/d\lambda$, the derivative of a *solution*.
#
# `diffkit.scipy.optimize.minimize` gives it: SciPy solves the inner problem, and diffkit
# differentiates the optimality condition $\nabla_w f(w^*, \lambda) = 0$ (the implicit
# function theorem), with one linear solve per gradient and nothing differentiated through
# SciPy's iterations. The penalty goes in through `args`, as $\lambda = e^{t}$ so that it
# stays positive.

# %%
import matplotlib.pyplot as plt
import numpy as np
import scipy.optimize

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.scipy import optimize

plt.rcParams.update({"figure.dpi": 72, "figure.figsize": (7, 2.6), "font.size": 9})
rng = np.random.default_rng(1)

n_features, n_train, n_val = 15, 25, 200
w_true = rng.normal(size=n_features) * (rng.random(n_features) < 0.5)
X_train, X_val = rng.normal(size=(n_train, n_features)), rng.normal(size=(n_val, n_features))
y_train = X_train @ w_true + 0.8 * rng.normal(size=n_train)
y_val = X_val @ w_true + 0.8 * rng.normal(size=n_val)


def inner_objective(w, log_penalty):
    residual = X_train @ w - y_train
    return 0.5 * dnp.sum(residual ** 2) + 0.5 * dnp.exp(log_penalty) * dnp.sum(w ** 2)


def weights(log_penalty):
    """The inner solution, by SciPy's BFGS; differentiable in log_penalty."""
    return optimize.minimize(inner_objective, np.zeros(n_features), args=(log_penalty,),
                             options={"gtol": 1e-11}).x


def validation_loss(log_penalty):
    residual = X_val @ weights(log_penalty) - y_val
    return 0.5 * dnp.mean(residual ** 2)


t = 1.0
print("validation loss at lambda = e:", validation_loss(t))
print("d loss / d log(lambda), reverse mode:", dk.grad(validation_loss)(t))

# %% [markdown]
# ## Checking the hypergradient
#
# Three independent checks: ridge regression has the closed form
# $w^* = (X^\top X + \lambda I)^{-1} X^\top y$, which diffkit differentiates directly; forward
# mode; and central finite differences of the validation loss computed with **SciPy's own**
# `scipy.optimize.minimize` (plain NumPy, Newton-CG with the exact gradient and Hessian,
# tight tolerance).

# %%
def validation_loss_closed_form(log_penalty):
    a = X_train.T @ X_train + dnp.exp(log_penalty) * np.eye(n_features)
    w = dnp.linalg.solve(a, X_train.T @ y_train)
    return 0.5 * dnp.mean((X_val @ w - y_val) ** 2)


def validation_loss_scipy(log_penalty):
    penalty = np.exp(log_penalty)
    solution = scipy.optimize.minimize(
        lambda w: 0.5 * np.sum((X_train @ w - y_train) ** 2) + 0.5 * penalty * w @ w,
        np.zeros(n_features), jac=lambda w: X_train.T @ (X_train @ w - y_train) + penalty * w,
        hess=lambda w: X_train.T @ X_train + penalty * np.eye(n_features),
        method="Newton-CG", options={"xtol": 1e-14})
    return 0.5 * np.mean((X_val @ solution.x - y_val) ** 2)


hypergradient = dk.grad(validation_loss)(t)
closed = dk.grad(validation_loss_closed_form)(t)
forward = dk.jvp(validation_loss, (t,), (1.0,))[1]
step = 1e-5
finite = (validation_loss_scipy(t + step) - validation_loss_scipy(t - step)) / (2 * step)
print(f"implicit (reverse) {hypergradient:.12f}")
print(f"implicit (forward) {forward:.12f}")
print(f"closed form        {closed:.12f}")
print(f"finite differences {finite:.12f}")
np.testing.assert_allclose(hypergradient, closed, rtol=1e-7)
np.testing.assert_allclose(forward, hypergradient, rtol=1e-10)
np.testing.assert_allclose(hypergradient, finite, rtol=1e-7)

# the curvature too: a second derivative through the inner solve
second = dk.grad(dk.grad(validation_loss))(t)
np.testing.assert_allclose(second, dk.grad(dk.grad(validation_loss_closed_form))(t), rtol=1e-6)
print("second derivative:", second)

# %% [markdown]
# ## A grid of penalties at once
#
# `vmap` solves one inner problem per penalty (SciPy takes one problem at a time) and
# batches the derivative rules; the result equals a loop.

# %%
grid = np.linspace(-4.0, 6.0, 21)
losses = dk.vmap(validation_loss)(grid)
slopes = dk.vmap(dk.grad(validation_loss))(grid)
np.testing.assert_allclose(losses[:5], [validation_loss(g) for g in grid[:5]], rtol=1e-12)
np.testing.assert_allclose(slopes, dk.vmap(dk.grad(validation_loss_closed_form))(grid),
                           rtol=1e-6)
print("slopes at the first grid points:", slopes[:3])

# %% [markdown]
# ## Tuning the penalty with an outer optimiser
#
# The outer problem is another `minimize`, over $t = \log\lambda$, whose gradient comes
# through the inner one. The outer objective calls the inner `minimize` with a traced
# penalty, so the two levels nest.

# %%
outer = optimize.minimize(validation_loss, np.array(0.0), method="BFGS",
                          options={"gtol": 1e-9})
best = float(outer.x)
reference = scipy.optimize.minimize_scalar(lambda s: float(validation_loss_closed_form(s)),
                                           bracket=(-4.0, 0.0, 6.0), tol=1e-12).x
print(f"best log(lambda) {best:.6f} (closed-form search {reference:.6f}), "
      f"lambda = {np.exp(best):.4f}, outer iterations: {outer.nit}")
np.testing.assert_allclose(best, reference, rtol=1e-5)
np.testing.assert_allclose(dk.grad(validation_loss)(best), 0.0, atol=1e-8)

fig, (left, right) = plt.subplots(1, 2)
left.plot(grid, losses)
left.axvline(best, color="k", lw=0.8, ls="--")
left.set(xlabel="log(lambda)", ylabel="validation loss")
right.plot(grid, slopes)
right.axhline(0.0, color="k", lw=0.8)
right.axvline(best, color="k", lw=0.8, ls="--")
right.set(xlabel="log(lambda)", ylabel="d loss / d log(lambda)")
fig.tight_layout()
