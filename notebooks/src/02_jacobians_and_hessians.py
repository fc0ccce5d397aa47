# %% [markdown]
# # Jacobians and Hessians: forward mode, reverse mode, and their compositions
#
# For `f: Rⁿ → Rᵐ` with Jacobian `J` (an `m × n` matrix) there are two basic products:
#
# - **forward mode**, `jvp`: a tangent `v ∈ Rⁿ` goes in, `J v ∈ Rᵐ` comes out. One pass
#   costs a small multiple of evaluating `f` and yields one **column** of `J` per unit `v`.
# - **reverse mode**, `vjp`: a cotangent `u ∈ Rᵐ` goes in, `uᵀ J ∈ Rⁿ` comes out. One pass
#   also costs a small multiple of `f` (plus memory for the tape) and yields one **row**.
#
# So the whole Jacobian takes `n` forward passes or `m` reverse passes: forward mode wins
# for few inputs and many outputs, reverse mode for many inputs and few outputs (a gradient
# of a scalar loss, `m = 1`, is a single reverse pass whatever `n` is).

# %%
import time

import matplotlib.pyplot as plt
import numpy as np

import diffkit as dk
import diffkit.numpy as dnp

plt.rcParams.update({"figure.dpi": 72, "figure.figsize": (7, 2.6), "font.size": 9})
rng = np.random.default_rng(0)

# %% [markdown]
# ## Columns from JVPs, rows from VJPs
#
# `f(x) = (sin x₁ · x₂, x₁ + x₂², e^{x₁ x₂})` from R² to R³ has the Jacobian worked out
# below by hand. Two JVPs give its two columns, three VJPs its three rows; `jacfwd` and
# `jacrev` do the same with all unit vectors at once.

# %%
def f(x):
    return dnp.stack([dnp.sin(x[0]) * x[1], x[0] + x[1] ** 2, dnp.exp(x[0] * x[1])])

def jacobian_by_hand(x):
    e = np.exp(x[0] * x[1])
    return np.array([[np.cos(x[0]) * x[1], np.sin(x[0])],
                     [1.0, 2 * x[1]],
                     [x[1] * e, x[0] * e]])

x = np.array([0.7, -1.3])
columns = [dk.jvp(f, (x,), (e,))[1] for e in np.eye(2)]
_, f_vjp = dk.vjp(f, x)
rows = [f_vjp(u)[0] for u in np.eye(3)]

J = jacobian_by_hand(x)
np.testing.assert_allclose(np.stack(columns, axis=1), J, rtol=1e-12)
np.testing.assert_allclose(np.stack(rows, axis=0), J, rtol=1e-12)
np.testing.assert_allclose(dk.jacfwd(f)(x), J, rtol=1e-12)
np.testing.assert_allclose(dk.jacrev(f)(x), J, rtol=1e-12)
print(dk.jacobian(f)(x))      # mode="auto": forward here, since 2 inputs < 3 outputs

# %% [markdown]
# ## When each wins, measured
#
# A test function from Rⁿ to Rᵐ: a chain of elementwise operations on the input, a dense
# `m × n` matrix, and another chain on the output. Sweep `n` with `m = 10` fixed, then `m`
# with `n = 10` fixed, and time `jacfwd` and `jacrev` (best of three runs). These are
# wall-clock times on whatever machine ran this notebook, so the exact numbers vary; the
# shape of the curves is the point.

# %%
def chain(h):
    for _ in range(4):
        h = dnp.sin(h) * h + dnp.tanh(h)
    return h

def make_problem(n, m):
    C = rng.normal(size=(m, n)) / np.sqrt(n)
    return (lambda x: chain(C @ chain(x))), rng.normal(size=n)

def best_time(fun, *args, repeats=3):
    """The shortest of ``repeats`` wall-clock times of ``fun(*args)``, in seconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fun(*args)
        times.append(time.perf_counter() - start)
    return min(times)

def sweep(shapes):
    rows = []
    for n, m in shapes:
        fun, x0 = make_problem(n, m)
        J_fwd, J_rev = dk.jacfwd(fun)(x0), dk.jacrev(fun)(x0)
        np.testing.assert_allclose(J_fwd, J_rev, rtol=1e-10, atol=1e-12)   # same Jacobian
        rows.append((best_time(dk.jacfwd(fun), x0), best_time(dk.jacrev(fun), x0)))
    return np.array(rows)

sizes = np.array([10, 30, 100, 300, 1000])
times_vs_n = sweep([(n, 10) for n in sizes])     # many inputs, 10 outputs
times_vs_m = sweep([(10, m) for m in sizes])     # 10 inputs, many outputs

print(" size   n varies: fwd / rev [ms]    m varies: fwd / rev [ms]")
for size, (fn, rn), (fm, rm) in zip(sizes, 1e3 * times_vs_n, 1e3 * times_vs_m):
    print(f"{size:5d}   {fn:8.2f} / {rn:8.2f}          {fm:8.2f} / {rm:8.2f}")

# %%
fig, axes = plt.subplots(1, 2, figsize=(7.5, 2.8), sharey=True)
panels = [(times_vs_n, "inputs n (outputs m = 10)"), (times_vs_m, "outputs m (inputs n = 10)")]
for ax, (times, label) in zip(axes, panels):
    ax.loglog(sizes, 1e3 * times[:, 0], "o-", label="jacfwd (forward)")
    ax.loglog(sizes, 1e3 * times[:, 1], "s-", label="jacrev (reverse)")
    ax.set_xlabel(label)
axes[0].set_ylabel("time [ms]")
axes[0].legend(frameon=False)
fig.suptitle("Jacobian of Rⁿ → Rᵐ: time against input and output size")
fig.tight_layout()

# %% [markdown]
# Reading the plot: with 10 outputs, reverse mode needs 10 passes whatever `n` is, each
# costing work proportional to `n`, so its time grows slowly; forward mode needs `n` such
# passes, so its time grows like `n²`. With 10 inputs it is the other way round. At small
# sizes both are dominated by a fixed Python overhead: diffkit evaluates all basis vectors
# as one batch (with `vmap`), so `n` passes are not `n` trips through the interpreter, and
# the extra passes only show once their arithmetic outweighs that overhead.
# `dk.jacobian(f)` picks forward mode when `n < m` and reverse mode otherwise.
#
# ## Hessians four ways
#
# A Hessian is the Jacobian of the gradient, and each of the two Jacobians can be taken in
# either mode: forward-over-reverse `jacfwd(jacrev(f))` (what `dk.hessian` uses: one reverse
# pass for the gradient, then `n` cheap forward passes through it), reverse-over-forward
# `jacrev(jacfwd(f))`, forward-over-forward and reverse-over-reverse. All four must agree.
#
# The test function is `f(x) = log Σ eᶻⁱ + Σ xᵢ³ / 6`, whose Hessian is known in closed form:
# with `p = softmax(x)`, `H = diag(p) − p pᵀ + diag(x)`.

# %%
def f_scalar(x):
    return dnp.log(dnp.sum(dnp.exp(x))) + dnp.sum(x ** 3) / 6

def hessian_by_hand(x):
    p = np.exp(x - x.max())
    p /= p.sum()
    return np.diag(p) - np.outer(p, p) + np.diag(x)

x = rng.normal(size=6)
H = hessian_by_hand(x)
hessians = {
    "jacfwd(jacrev(f))": dk.jacfwd(dk.jacrev(f_scalar))(x),
    "jacrev(jacfwd(f))": dk.jacrev(dk.jacfwd(f_scalar))(x),
    "jacfwd(jacfwd(f))": dk.jacfwd(dk.jacfwd(f_scalar))(x),
    "jacrev(jacrev(f))": dk.jacrev(dk.jacrev(f_scalar))(x),
    "hessian(f)": dk.hessian(f_scalar)(x),
}
for name, H_any in hessians.items():
    error = np.abs(H_any - H).max()
    print(f"{name:18s} shape {H_any.shape}, largest difference from the closed form {error:.1e}")
    np.testing.assert_allclose(H_any, H, rtol=1e-12, atol=1e-14)
np.testing.assert_allclose(hessians["hessian(f)"], hessians["hessian(f)"].T, rtol=1e-12)

# %%
x_big = rng.normal(size=300)
print("time for the 300 × 300 Hessian:")
for name, compose in [("fwd over rev", lambda g: dk.jacfwd(dk.jacrev(g))),
                      ("rev over fwd", lambda g: dk.jacrev(dk.jacfwd(g))),
                      ("fwd over fwd", lambda g: dk.jacfwd(dk.jacfwd(g))),
                      ("rev over rev", lambda g: dk.jacrev(dk.jacrev(g)))]:
    hess = compose(f_scalar)
    np.testing.assert_allclose(hess(x_big), hessian_by_hand(x_big), rtol=1e-10, atol=1e-13)
    print(f"  {name}: {1e3 * best_time(hess, x_big):7.1f} ms")

# %% [markdown]
# Forward-over-reverse and reverse-over-reverse both start with one reverse pass for the
# gradient, then take `n` passes (batched) through it. The other two start from
# `jacfwd(f)` of a *scalar* function, which spends `n` forward passes to produce a gradient
# that one reverse pass would give, and then differentiate that `n` times again: `n²` work
# from the start. Hence `dk.hessian` is forward-over-reverse.

# %% [markdown]
# ## Hessian-vector products
#
# Newton-type optimisers and Lanczos methods only need `H v` for a few vectors `v`. The
# product is the directional derivative of the gradient, `H v = d/dε ∇f(x + ε v)`, so a
# forward pass through a reverse pass computes it for about the cost of a few gradients,
# without ever forming the `n × n` matrix: `dk.hvp(f, (x,), (v,))`. The same number also
# comes from reverse-over-reverse (the gradient of `x ↦ ∇f(x) · v`) and from differentiating
# the gradient with `jvp`.

# %%
x, v = rng.normal(size=6), rng.normal(size=6)
(hv,) = dk.hvp(f_scalar, (x,), (v,))
hv_jvp_of_grad = dk.jvp(dk.grad(f_scalar), (x,), (v,))[1]
hv_rev_over_rev = dk.grad(lambda y: dnp.sum(dk.grad(f_scalar)(y) * v))(x)

expected = hessian_by_hand(x) @ v
for hv_any in (hv, hv_jvp_of_grad, hv_rev_over_rev):
    np.testing.assert_allclose(hv_any, expected, rtol=1e-12, atol=1e-14)
print("H v =", hv)

# %% [markdown]
# The saving grows with `n`: forming `H` costs `n` forward passes (and `n²` memory), `hvp`
# costs one.

# %%
hvp_sizes = np.array([10, 30, 100, 300, 1000])
hvp_times = []
for n in hvp_sizes:
    x, v = rng.normal(size=n), rng.normal(size=n)
    (hv,) = dk.hvp(f_scalar, (x,), (v,))
    np.testing.assert_allclose(hv, hessian_by_hand(x) @ v, rtol=1e-9, atol=1e-12)
    hvp_times.append((best_time(dk.hvp, f_scalar, (x,), (v,)),
                      best_time(lambda x, v: dk.hessian(f_scalar)(x) @ v, x, v)))
hvp_times = 1e3 * np.array(hvp_times)

fig, ax = plt.subplots(figsize=(3.8, 2.6))
ax.loglog(hvp_sizes, hvp_times[:, 0], "o-", label="hvp(f, (x,), (v,))")
ax.loglog(hvp_sizes, hvp_times[:, 1], "s-", label="hessian(f)(x) @ v")
ax.set_xlabel("n")
ax.set_ylabel("time [ms]")
ax.legend(frameon=False)
fig.tight_layout()
