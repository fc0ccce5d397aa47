# %% [markdown]
# # `backward()` is a vector-Jacobian product
#
# In PyTorch, `y.backward(gradient=v)` does not compute "the derivative of `y`". It computes
# the **vector-Jacobian product** `v^T J`, where `J = dy/dx` is the Jacobian of `y` with
# respect to each leaf `x`, and adds the result into `x.grad`. The `gradient` argument `v`
# (the *cotangent*) has the shape of `y`; the result has the shape of `x`. For a scalar `y`,
# `v` defaults to `1` and `v^T J` is the ordinary gradient, which is why the argument only
# becomes visible (and confusing) once `y` is not a scalar.
#
# diffkit spells the same thing as a function, with nothing accumulated anywhere:
#
# ```python
# y, f_vjp = dk.vjp(f, x)     # y = f(x), and the pullback x -> v^T J
# (x_bar,) = f_vjp(v)         # PyTorch: y.backward(gradient=v); x_bar = x.grad
# ```
#
# This notebook redoes the classic `backward()` examples with diffkit, with the PyTorch
# lines next to them in comments, and checks every number against its closed form.

# %%
import matplotlib.pyplot as plt
import numpy as np

import diffkit as dk
import diffkit.numpy as dnp

plt.rcParams.update({"figure.dpi": 72, "figure.figsize": (7, 2.6), "font.size": 9})

# %% [markdown]
# ## 1. A scalar function at one point
#
# `f(x) = x²` at `x = 2`: the derivative is `2x = 4`. For a scalar output the cotangent is
# the number `1`, so `grad` and a `vjp` with cotangent `1.0` are the same computation.

# %%
def f(x):
    return x ** 2

# PyTorch:
#   x = torch.tensor(2.0, requires_grad=True)
#   y = x ** 2
#   y.backward()              # same as y.backward(torch.tensor(1.0))
#   x.grad                    # tensor(4.)
df_dx = dk.grad(f)(2.0)

y, f_vjp = dk.vjp(f, 2.0)
(x_bar,) = f_vjp(1.0)         # the cotangent of a scalar output is a scalar

print("f(2) =", y, "  grad:", df_dx, "  vjp with cotangent 1:", x_bar)
np.testing.assert_allclose(df_dx, 4.0, rtol=1e-12)
np.testing.assert_allclose(x_bar, 4.0, rtol=1e-12)

# %% [markdown]
# ## 2. The same function at many points
#
# Evaluate `f` on a whole array of points at once. Now `y` is a vector, `J` is a square
# matrix, and PyTorch's `y.backward()` refuses ("grad can be implicitly created only for
# scalar outputs"). The two classic fixes are `y.backward(torch.ones_like(y))` and
# `y.sum().backward()`. Both give `f'(x_i)` at every point, and both are exact:
#
# - `f` acts on each element separately, so `J` is **diagonal** with `f'(x_i)` on the
#   diagonal, and `ones^T J` picks out exactly that diagonal;
# - `sum(f(x))` is a scalar whose gradient is, by the chain rule, `ones^T J` again: the
#   derivative of `sum` *is* the vector of ones.
#
# (If `f` mixed elements, e.g. a cumulative sum, `ones^T J` would be the column sums of `J`,
# not per-point derivatives. The trick relies on the diagonal Jacobian.)

# %%
x = np.linspace(-3.0, 3.0, 61)

# PyTorch:
#   x = torch.linspace(-3, 3, 61, requires_grad=True)
#   y = x ** 2
#   y.backward(torch.ones_like(y))     # or: y.sum().backward()
#   x.grad                             # 2 * x
y, f_vjp = dk.vjp(f, x)
(with_ones,) = f_vjp(np.ones_like(y))
with_sum = dk.grad(lambda x: dnp.sum(f(x)))(x)
with_vmap = dk.vmap(dk.grad(f))(x)     # diffkit also has a direct way: grad at each point

np.testing.assert_allclose(with_ones, 2 * x, rtol=1e-12)
np.testing.assert_array_equal(with_ones, with_sum)
np.testing.assert_allclose(with_vmap, 2 * x, rtol=1e-12)
print("x[:4]       =", x[:4])
print("v^T J [:4]  =", with_ones[:4])

# %%
J = dk.jacobian(f)(x)                  # the whole (61, 61) Jacobian, for this small example
print("J is diagonal:", np.array_equal(J, np.diag(np.diag(J))))
np.testing.assert_array_equal(J, np.diag(np.diag(J)))
np.testing.assert_allclose(np.ones_like(y) @ J, with_ones, rtol=1e-12)

# %% [markdown]
# The same one-liner draws any function with its derivative. Each curve is checked against
# the derivative worked out by hand.

# %%
examples = {
    "x sin(x)": (lambda x: x * dnp.sin(x), lambda x: np.sin(x) + x * np.cos(x)),
    "tanh(x)": (dnp.tanh, lambda x: 1 - np.tanh(x) ** 2),
    "softplus log(1 + e^x)": (lambda x: dnp.logaddexp(0.0, x), lambda x: 1 / (1 + np.exp(-x))),
}
fig, axes = plt.subplots(1, 3, figsize=(9, 2.4), sharex=True)
for ax, (title, (fun, by_hand)) in zip(axes, examples.items()):
    values, fun_vjp = dk.vjp(fun, x)
    (slopes,) = fun_vjp(np.ones_like(values))
    np.testing.assert_allclose(slopes, by_hand(x), rtol=1e-12, atol=1e-14)
    ax.plot(x, values, label="f")
    ax.plot(x, slopes, "--", label="f' (vjp with ones)")
    ax.set_title(title)
    ax.axhline(0, color="0.8", lw=0.8)
axes[0].legend(frameon=False)
fig.tight_layout()

# %% [markdown]
# ## 3. The gradient of 3x₁² + 5x₂² at (-1, 2)
#
# A scalar function of a vector: the gradient is `(6 x₁, 10 x₂) = (-6, 20)`.

# %%
def g(x):
    return 3 * x[0] ** 2 + 5 * x[1] ** 2

# PyTorch:
#   x = torch.tensor([-1.0, 2.0], requires_grad=True)
#   y = 3 * x[0] ** 2 + 5 * x[1] ** 2
#   y.backward()
#   x.grad                    # tensor([-6., 20.])
point = np.array([-1.0, 2.0])
grad_g = dk.grad(g)(point)
print("value:", g(point), " gradient:", grad_g)
np.testing.assert_allclose(g(point), 23.0, rtol=1e-12)
np.testing.assert_allclose(grad_g, [-6.0, 20.0], rtol=1e-12)

# %% [markdown]
# ## 4. Gradients at many points
#
# Put many points in the rows of `X`. In PyTorch one evaluates `g` on all rows at once and
# calls `y.backward(torch.ones_like(y))`, which works because row `i`'s output depends only on
# row `i` (the Jacobian is block diagonal). In diffkit the same trick works, and `vmap(grad(g))`
# says what is meant directly: the gradient of `g`, at each row.

# %%
def g_rows(X):
    return 3 * X[:, 0] ** 2 + 5 * X[:, 1] ** 2

grid = np.linspace(-2.0, 2.0, 9)
X = np.stack(np.meshgrid(grid, grid), axis=-1).reshape(-1, 2)     # 81 points, shape (81, 2)

# PyTorch:
#   X = X.requires_grad_()
#   y = 3 * X[:, 0] ** 2 + 5 * X[:, 1] ** 2
#   y.backward(torch.ones_like(y))
#   X.grad                    # shape (81, 2)
y, g_vjp = dk.vjp(g_rows, X)
(grads_by_ones,) = g_vjp(np.ones_like(y))
grads_by_vmap = dk.vmap(dk.grad(g))(X)

expected = np.stack([6 * X[:, 0], 10 * X[:, 1]], axis=1)
np.testing.assert_allclose(grads_by_ones, expected, rtol=1e-12)
np.testing.assert_allclose(grads_by_vmap, expected, rtol=1e-12)
print("shape:", grads_by_vmap.shape, " gradient at", X[0], "is", grads_by_vmap[0])

# %%
fine = np.linspace(-2.2, 2.2, 60)
G1, G2 = np.meshgrid(fine, fine)
fig, ax = plt.subplots(figsize=(3.4, 3.2))
ax.contour(G1, G2, 3 * G1 ** 2 + 5 * G2 ** 2, levels=8, colors="0.75", linewidths=0.7)
ax.quiver(X[:, 0], X[:, 1], grads_by_vmap[:, 0], grads_by_vmap[:, 1], color="C0",
          angles="xy", scale_units="xy", scale=50, width=0.006)
ax.plot(*point, "o", color="C3", label="(-1, 2): gradient (-6, 20)")
ax.set_aspect("equal")
ax.set_title("$3x_1^2 + 5x_2^2$: contours and gradients")
ax.legend(loc="lower left", fontsize=7)
fig.tight_layout()

# %% [markdown]
# ## 5. A vector-valued function: one cotangent at a time, then all at once
#
# `h(x₁, x₂) = (x₁², x₁ x₂, x₂³)` maps R² to R³, with Jacobian
#
# ```
# J = [[2 x₁, 0    ],
#      [x₂,   x₁   ],
#      [0,    3 x₂²]]      = [[2, 0], [2, 1], [0, 12]] at (1, 2).
# ```
#
# The cotangent `e_i` (a one in place `i`) gives `e_i^T J`, the `i`-th **row** of `J`: the
# gradient of output `i`. In PyTorch this needs `retain_graph=True` (the graph is freed after
# one backward pass) and `x.grad.zero_()` between calls (gradients accumulate). A diffkit
# `vjp_fn` can be called any number of times and returns a fresh result each time.

# %%
def h(x):
    return dnp.stack([x[0] ** 2, x[0] * x[1], x[1] ** 3])

x12 = np.array([1.0, 2.0])
J_by_hand = np.array([[2.0, 0.0], [2.0, 1.0], [0.0, 12.0]])

# PyTorch:
#   x = torch.tensor([1.0, 2.0], requires_grad=True)
#   y = torch.stack([x[0] ** 2, x[0] * x[1], x[1] ** 3])
#   rows = []
#   for e in torch.eye(3):
#       y.backward(e, retain_graph=True)
#       rows.append(x.grad.clone())
#       x.grad.zero_()
#   torch.stack(rows)
y, h_vjp = dk.vjp(h, x12)
rows = []
for e in np.eye(3):
    (row,) = h_vjp(e)
    print(f"cotangent {e} -> {row}")
    rows.append(row)
J_rows = np.stack(rows)
np.testing.assert_allclose(J_rows, J_by_hand, rtol=1e-12)

# %% [markdown]
# All at once: `jacobian` (PyTorch: `torch.autograd.functional.jacobian(h, x)` or
# `torch.func.jacrev(h)(x)`). `jacrev` builds `J` from the VJPs of all unit cotangents,
# as the loop above does; `jacfwd` builds it from forward-mode JVPs of unit *tangents*, one
# column at a time; `jacobian` picks whichever needs fewer passes. The shape is
# `out.shape + in.shape = (3, 2)`.

# %%
J_auto, J_rev, J_fwd = dk.jacobian(h)(x12), dk.jacrev(h)(x12), dk.jacfwd(h)(x12)
print(J_auto)
for J_any in (J_auto, J_rev, J_fwd):
    np.testing.assert_allclose(J_any, J_by_hand, rtol=1e-12)

# %% [markdown]
# ## 6. A matrix-valued function: f(x) = [[1, x], [x², x³], [x⁴, x⁵]] at x = 1
#
# The output is a 3×2 matrix, so the cotangent is a 3×2 matrix too. With all ones it sums
# the derivatives of the six entries: `0 + 1 + 2x + 3x² + 4x³ + 5x⁴ = 15` at `x = 1`.

# %%
def m(x):
    return dnp.stack([dnp.stack([dnp.ones_like(x), x]),
                      dnp.stack([x ** 2, x ** 3]),
                      dnp.stack([x ** 4, x ** 5])])

# PyTorch:
#   x = torch.tensor(1.0, requires_grad=True)
#   y = torch.stack([torch.stack([torch.ones_like(x), x]), torch.stack([x**2, x**3]),
#                    torch.stack([x**4, x**5])])
#   y.backward(torch.ones_like(y))
#   x.grad                    # tensor(15.)
y, m_vjp = dk.vjp(m, 1.0)
(with_ones,) = m_vjp(np.ones((3, 2)))
print("f(1) =\n", y)
print("vjp with ones:", with_ones)
np.testing.assert_allclose(with_ones, 15.0, rtol=1e-12)

dm = dk.jacobian(m)(1.0)       # shape (3, 2): the derivative of each entry
print("jacobian:\n", dm)
np.testing.assert_allclose(dm, [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]], rtol=1e-12)
np.testing.assert_allclose(dm.sum(), with_ones, rtol=1e-12)

# %% [markdown]
# ## 7. Scaling the cotangent
#
# `v ↦ v^T J` is linear, so a cotangent of `0.1` everywhere gives a tenth of the result,
# `1.5`, and any other cotangent weighs the entries' derivatives: putting `1` on the
# entries `1` and `x⁵` only gives `0 + 5 = 5`.

# %%
# PyTorch: y.backward(0.1 * torch.ones_like(y)); x.grad   # tensor(1.5000)
(tenth,) = m_vjp(0.1 * np.ones((3, 2)))
(corners,) = m_vjp(np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]]))
print("cotangent 0.1 * ones:", tenth, "   cotangent on 1 and x^5:", corners)
np.testing.assert_allclose(tenth, 1.5, rtol=1e-12)
np.testing.assert_allclose(corners, 5.0, rtol=1e-12)

# %% [markdown]
# ## 8. When `grad` says no
#
# `grad` is for scalar functions. Asked for the gradient of a vector, diffkit says so and
# points to the VJP or the Jacobian, instead of silently summing.

# %%
try:
    dk.grad(h)(x12)
except Exception as error:  # noqa: BLE001  (shown, not handled)
    message = str(error)
    print(type(error).__name__ + ":", message)
else:
    raise AssertionError("grad of a vector-valued function should fail")
assert "scalar" in message and "(3,)" in message

# %% [markdown]
# ## Summary
#
# PyTorch on the left, diffkit on the right:
#
# - `y.backward(); x.grad` for a scalar `y`: `dk.grad(f)(x)`
# - `y.backward(v); x.grad`: `y, f_vjp = dk.vjp(f, x); (x_bar,) = f_vjp(v)`
# - `y.backward(torch.ones_like(y))` or `y.sum().backward()`: `f_vjp(np.ones_like(y))`,
#   `dk.grad(lambda x: f(x).sum())`, or, saying what is meant, `dk.vmap(dk.grad(f))`
# - `retain_graph=True`, `x.grad.zero_()`: not needed, `f_vjp` is reusable and returns fresh
#   values
# - `torch.autograd.functional.jacobian`, `torch.func.jacrev` / `jacfwd`: `dk.jacobian`,
#   `dk.jacrev` / `dk.jacfwd`
