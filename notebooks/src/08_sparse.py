# %% [markdown]
# # Sparse derivatives
#
# The Jacobians of discretised PDEs and the Hessians of chained objectives are mostly
# zeros. Dense automatic differentiation does not care: `jacfwd` costs one pass per input,
# whatever the structure. diffkit can find the structure, colour it, and compute the whole
# derivative in as many passes as there are colours, a number that stays small when the
# problem grows:
#
# 1. `dk.jacobian_sparsity(f)(x)` and `dk.hessian_sparsity(f)(x)` read the pattern off
#    the program (valid at every point of these shapes);
# 2. a greedy colouring groups the columns that share no row (star colouring for a
#    symmetric Hessian);
# 3. `dk.sparse_jacobian(f)(x)` and `dk.sparse_hessian(f)(x)` run one batched pass over
#    the colours and return an exact `scipy.sparse.csr_array`.
#
# This notebook follows the 2-D Brusselator reaction-diffusion system and then solves a
# chained Rosenbrock problem with SciPy's `trust-constr` on the sparse path.

# %%
import time

import matplotlib.pyplot as plt
import numpy as np
import scipy.sparse as sps
from scipy.optimize._numdiff import approx_derivative, group_columns

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.scipy import optimize as dko

plt.rcParams.update({"figure.dpi": 72, "figure.figsize": (7, 2.6), "font.size": 9})
rng = np.random.default_rng(0)


def best_time(fun, repeat=5):
    """The fastest of a few runs, in seconds (the machine may be shared)."""
    fun()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fun()
        times.append(time.perf_counter() - start)
    return min(times)


# %% [markdown]
# ## The Brusselator on a periodic grid
#
# Two species `u` and `v` on an `N x N` periodic grid react (`u²v` terms) and diffuse (a
# five-point Laplacian). The right-hand side maps the `2N²` unknowns to `2N²` rates. It is
# written once for any array namespace, so the same code runs on NumPy (for SciPy's finite
# differences) and on `diffkit.numpy` (for the derivatives).

# %%
def brusselator(xp, n, a=3.4, b=1.0, alpha=0.02):
    def rhs(y):
        u = xp.reshape(y[:n * n], (n, n))
        v = xp.reshape(y[n * n:], (n, n))

        def laplacian(w):
            return (xp.roll(w, 1, axis=0) + xp.roll(w, -1, axis=0) + xp.roll(w, 1, axis=1)
                    + xp.roll(w, -1, axis=1) - 4.0 * w) * (n - 1) ** 2

        uuv = u * u * v
        du = b + uuv - (a + 1.0) * u + alpha * laplacian(u)
        dv = a * u - uuv + alpha * laplacian(v)
        return xp.concatenate([xp.reshape(du, (-1,)), xp.reshape(dv, (-1,))])

    return rhs


n = 8
y = rng.uniform(0.5, 2.0, 2 * n * n)
pattern = dk.jacobian_sparsity(brusselator(dnp, n))(y)
print(f"{n} x {n} grid: Jacobian {pattern.shape}, {pattern.nnz} nonzeros "
      f"({pattern.nnz / np.prod(pattern.shape):.1%} of the entries)")

# %% [markdown]
# Each rate depends on its own cell and its four neighbours (diffusion) and on the other
# species in the same cell (reaction): 6 entries per row. The blocks show it: `du/du`
# and `dv/dv` carry the stencil with its periodic wrap-around, `du/dv` and `dv/du` are
# diagonal.

# %%
fig, ax = plt.subplots(figsize=(3.2, 3.2))
ax.spy(pattern, markersize=1.2)
ax.set_title(f"Brusselator Jacobian pattern, {n} x {n} grid")
plt.show()
assert (np.diff(pattern.indptr) == 6).all()

# %% [markdown]
# ## The number of colours does not grow with the grid
#
# Columns that share no row can be seeded together in one forward pass. The colouring is
# found once per input shape and kept by `sparse_jacobian`; `coloring(x)` shows it.

# %%
sizes = [4, 8, 16, 32, 64]
colours = []
for size in sizes:
    jac = dk.sparse_jacobian(brusselator(dnp, size))
    info = jac.coloring(rng.uniform(0.5, 2.0, 2 * size * size))
    colours.append(info.num_colors)
    print(f"N = {size:3d}: {2 * size * size:5d} unknowns, {info.num_colors:2d} colours "
          f"({info.mode} mode)")

fig, ax = plt.subplots()
ax.plot([2 * s * s for s in sizes], colours, "o-", label="colours (passes)")
ax.plot([2 * s * s for s in sizes], [2 * s * s for s in sizes], "--",
        label="dense jacfwd (one pass per unknown)")
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel("unknowns 2N²")
ax.set_ylabel("passes")
ax.legend()
plt.show()
assert max(colours[2:]) <= 12   # bounded, whatever the grid

# %% [markdown]
# ## Exact, and faster than dense AD and finite differences
#
# On a 32 x 32 grid (2048 unknowns) we compare three ways to get the Jacobian:
# `dk.sparse_jacobian` (pattern and colouring cached after the first call), dense
# `dk.jacfwd`, and SciPy's grouped finite differences with the groups precomputed, as a
# user of `approx_derivative(..., sparsity=(pattern, groups))` would call it in a loop.
# The sparse Jacobian is checked against the dense one first: they are equal to rounding.

# %%
n = 32
f_dk, f_np = brusselator(dnp, n), brusselator(np, n)
y = rng.uniform(0.5, 2.0, 2 * n * n)
jac = dk.sparse_jacobian(f_dk)
sparse_J = jac(y)
dense_J = np.asarray(dk.jacfwd(f_dk)(y))
np.testing.assert_allclose(sparse_J.toarray(), dense_J, rtol=1e-12, atol=0)

groups_pattern = sps.csr_matrix(jac.coloring(y).pattern)
groups = group_columns(groups_pattern)
fd_J = approx_derivative(f_np, y, sparsity=(groups_pattern, groups))
print(f"finite differences: largest error {abs(fd_J - sparse_J).max():.1e} "
      f"(the sparse Jacobian is exact)")

times = {
    "dk.sparse_jacobian": best_time(lambda: jac(y)),
    "SciPy grouped FD": best_time(lambda: approx_derivative(
        f_np, y, sparsity=(groups_pattern, groups))),
    "dk.jacfwd (dense)": best_time(lambda: dk.jacfwd(f_dk)(y), repeat=3),
}
for name, seconds in times.items():
    print(f"{name:20s} {seconds * 1e3:8.2f} ms")

fig, ax = plt.subplots(figsize=(7, 1.8))
ax.barh(list(times), [t * 1e3 for t in times.values()])
ax.set_xscale("log")
ax.set_xlabel("ms per Jacobian (2048 unknowns)")
plt.show()

# %% [markdown]
# The figures move with the machine's load; `benchmarks/RESULTS.md` has them measured
# with interleaved rounds. The ratio to dense AD grows with the grid: dense `jacfwd`
# does 2N² passes, the sparse Jacobian a bounded number.
#
# ## A chained Rosenbrock problem with trust-constr
#
# `diffkit.scipy.optimize.minimize(method="trust-constr")` gives SciPy a sparse Hessian
# when the detected pattern is sparse enough (`sparse=None`, the default: at least 200
# parameters, at most 5% of the entries and at most one colour per 12 parameters) or when
# asked (`sparse=True`). The chained Rosenbrock function has a tridiagonal Hessian: three
# colours, whatever `n`.

# %%
def rosenbrock(x):
    return dnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


n = 1000
x = rng.uniform(-1, 1, n)
hess = dk.sparse_hessian(rosenbrock)
H = hess(x)
print(f"Hessian: {H.nnz} stored entries, {hess.coloring(x).num_colors} colours")
np.testing.assert_allclose(H.toarray(), np.asarray(dk.hessian(rosenbrock)(x)), rtol=1e-12,
                           atol=1e-12)

# %% [markdown]
# Solved on the sparse path and on the dense one (`sparse=False`): the same minimum.

# %%
options = {"gtol": 1e-9, "xtol": 1e-12, "maxiter": 500}
x0 = np.full(n, 0.5)
start = time.perf_counter()
on_sparse = dko.minimize(rosenbrock, x0, method="trust-constr", options=options)
sparse_seconds = time.perf_counter() - start
start = time.perf_counter()
on_dense = dko.minimize(rosenbrock, x0, method="trust-constr", sparse=False,
                        options=options)
dense_seconds = time.perf_counter() - start
print(f"sparse path: {on_sparse.nit} iterations, {sparse_seconds:.2f} s")
print(f"dense path:  {on_dense.nit} iterations, {dense_seconds:.2f} s")
np.testing.assert_allclose(on_sparse.x, np.ones(n), atol=1e-7)
np.testing.assert_allclose(on_sparse.x, on_dense.x, atol=1e-7)
