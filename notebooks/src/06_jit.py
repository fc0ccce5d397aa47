# %% [markdown]
# # `jit`: when staging a derivative pays, and by how much
#
# `dk.jit(f)` runs `f` once per argument signature (structure, shapes, dtypes) while
# recording every primitive it applies, optimises the recording, and answers later calls
# by replaying it as generated NumPy: no tracers, no dispatch, no symbolic zeros. Every
# eager diffkit operation costs a few microseconds of Python on top of its NumPy kernel;
# a replay costs the kernel and a fraction of a microsecond. So the speed-up depends on how
# much of the time is dispatch, that is on the size of the arrays.
#
# This notebook measures it: three derivatives timed eagerly, under `jit` and against the
# NumPy function without derivatives, as the problem grows. Every jitted result is checked
# against the eager one.

# %%
import os

for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")   # one thread for BLAS, set before NumPy loads it

import time  # noqa: E402

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import diffkit as dk  # noqa: E402
import diffkit.numpy as dnp  # noqa: E402

plt.rcParams.update({"figure.dpi": 72, "figure.figsize": (9, 2.8), "font.size": 9})
rng = np.random.default_rng(0)

# %% [markdown]
# ## A first look
#
# `jit` composes with the transformations: `jit(grad(f))` records the gradient once. The
# recording is a `Graph`; `dk.make_graph` returns it to read, like `jax.make_jaxpr`. Its
# listing has one line per operation that the replay runs (after the optimisation passes)
# and the *guards*: values the recording depends on, checked on every replay (here the
# 0 x inf rule's NaN checks, which keep a replay exact at singular points).

# %%
def chain(x):
    y = x
    for _ in range(4):
        y = dnp.tanh(y) * 0.9 + dnp.sin(y) * 0.1
    return dnp.sum(y ** 2)

grad_chain = dk.jit(dk.grad(chain))
x = rng.normal(size=5)
np.testing.assert_allclose(grad_chain(x), dk.grad(chain)(x), rtol=1e-12)
print(dk.make_graph(dk.grad(chain))(x))
print(grad_chain.cache_info())

# %% [markdown]
# ## The speed-up against problem size
#
# Three derivatives, each at growing `n`:
#
# - **gradient of an elementwise chain** (the function above) of a vector of length `n`:
#   about 40 small operations, so at small `n` it is all dispatch;
# - **Hessian-vector product** of `sum(tanh(A x))` with an `n x n` matrix: forward over
#   reverse, three matrix-vector products against the function's one;
# - **per-example gradients** `vmap(grad(loss))` of a logistic loss, for a batch of `n`
#   examples with 20 features.
#
# Each is timed as the median of a few loops long enough to measure, the three versions
# taking turns. The clock is the processor time of this process (`time.process_time`),
# with BLAS on one thread: unlike wall-clock time, it does not count the moments when other
# programs had the processor, so the numbers vary less on a busy machine (they still vary
# from machine to machine). The jitted function is called before timing, to trace and to
# compile its replay.

# %%
def median_times(funs, args, rounds=9, min_time=0.005):
    """Processor seconds per call of each ``fun(*args)``: the median over ``rounds`` loops
    of at least ``min_time``, the functions taking turns (so a busy moment of the machine
    does not fall on one of them only)."""
    counts = []
    for fun in funs:
        fun(*args)
        count, start = 0, time.process_time()
        while time.process_time() - start < min_time:
            fun(*args)
            count += 1
        counts.append(count)
    samples = [[] for _ in funs]
    for _ in range(rounds):
        for i, (fun, count) in enumerate(zip(funs, counts)):
            start = time.process_time()
            for _ in range(count):
                fun(*args)
            samples[i].append((time.process_time() - start) / count)
    return [float(np.median(s)) for s in samples]


def hvp_problem(n):
    A = rng.normal(size=(n, n)) / np.sqrt(n)
    x, v = rng.normal(size=n), rng.normal(size=n)

    def f(x):
        return dnp.sum(dnp.tanh(A @ x))

    def product(x, v):
        return dk.hvp(f, (x,), (v,))[0]

    def primal(x, v):
        return np.sum(np.tanh(A @ x))

    return product, primal, (x, v)


def chain_problem(n):
    def primal(x):
        y = x
        for _ in range(4):
            y = np.tanh(y) * 0.9 + np.sin(y) * 0.1
        return np.sum(y ** 2)

    return dk.grad(chain), primal, (rng.normal(size=n),)


def per_example_problem(n):
    w, X = rng.normal(size=20), rng.normal(size=(n, 20))
    y = (rng.random(n) < 0.5).astype(float)

    def loss(w, x, y):
        z = dnp.dot(w, x)
        return dnp.logaddexp(0.0, z) - y * z

    def primal(w, X, y):
        z = X @ w
        return np.logaddexp(0.0, z) - y * z

    return dk.vmap(dk.grad(loss), in_axes=(None, 0, 0)), primal, (w, X, y)


problems = {"grad of an elementwise chain": (chain_problem, [10, 100, 1000, 10**4, 10**5]),
            "Hessian-vector product": (hvp_problem, [10, 30, 100, 300, 1000]),
            "per-example gradients": (per_example_problem, [10, 100, 1000, 10**4])}
timings = {}
for title, (make, sizes) in problems.items():
    rows = []
    for n in sizes:
        derivative, primal, args = make(n)
        jitted = dk.jit(derivative)
        np.testing.assert_allclose(jitted(*args), derivative(*args), rtol=1e-12, atol=1e-14)
        assert jitted.cache_info().traces == 1
        rows.append(median_times([primal, derivative, jitted], args))
        np.testing.assert_allclose(jitted(*args), derivative(*args), rtol=1e-12, atol=1e-14)
        assert jitted.cache_info().traces == 1       # every later call was a replay
    timings[title] = (np.array(sizes), 1e6 * np.array(rows))
    print(f"{title}:")
    for n, (p, e, j) in zip(sizes, timings[title][1]):
        print(f"  n={n:>6}: NumPy {p:9.1f} us   eager {e:9.1f} us   jit {j:9.1f} us   "
              f"eager/jit {e / j:5.1f}x")

# %%
fig, axes = plt.subplots(1, 3)
for ax, (title, (sizes, rows)) in zip(axes, timings.items()):
    ax.loglog(sizes, rows[:, 1], "s-", label="eager diffkit")
    ax.loglog(sizes, rows[:, 2], "o-", label="dk.jit")
    ax.loglog(sizes, rows[:, 0], "k--", label="NumPy function (no derivative)")
    ax.set_title(title)
    ax.set_xlabel("n")
axes[0].set_ylabel("processor time per call [µs]")
fig.legend(*axes[0].get_legend_handles_labels(), loc="lower center", ncol=3)
fig.tight_layout(rect=(0, 0.08, 1, 1))

fig, ax = plt.subplots(figsize=(5, 2.8))
for title, (sizes, rows) in timings.items():
    ax.loglog(sizes, rows[:, 1] / rows[:, 2], "o-", label=title)
ax.axhline(1.0, color="k", lw=0.5)
ax.set_xlabel("n")
ax.set_ylabel("speed-up (eager / jit)")
ax.legend()
fig.tight_layout()

# %% [markdown]
# At small `n` the replay is many times faster: eager time is nearly all dispatch, which
# the replay does not have, so the jitted derivative costs a small multiple of the NumPy
# function. As `n` grows, both spend their time in the same NumPy kernels and the speed-up
# falls towards 1: the replay runs the same kernels, or fewer of them, since the passes
# remove dead code, repeated work and no-op reshapes (on a busy machine a single point may
# scatter around 1 where the kernels dominate). For the Hessian-vector
# product the kernels are matrix-vector products: once the matrix outgrows the caches, the
# replay reads it once, in blocks of rows, instead of once per product (`docs/jit.md`,
# "Merged products"; the sizes timed here stay below that).

# %% [markdown]
# ## What the replay runs
#
# `graph.program` is the optimised graph, `graph.replay_program` what the plain replay
# executes. For the Hessian-vector product with a matrix too large for the caches, the
# replay merges `A x` and `A v`, and then runs them, the elementwise work on them and the
# product `u A` in one loop over blocks of rows (`row_blocks`): one read of the matrix
# instead of three.

# %%
product, _, (x, v) = hvp_problem(2048)
graph = dk.make_graph(product)(x, v)
print("optimised graph:", [e.prim.name for e in graph.program.equations])
print("replay:         ", [e.prim.name for e in graph.replay_program.equations])
np.testing.assert_allclose(graph(x, v), product(x, v), rtol=1e-12, atol=1e-14)

# %% [markdown]
# `dk.linearize` of a jitted function records the linear map as a graph too. The primal
# work (the `tanh` and `sin` values and their derivatives) is done once, when it
# linearizes; the graph holds only the tangent operations, products and sums:

# %%
jitted_chain = dk.jit(chain)
x = rng.normal(size=1000)
value, tangent_map = dk.linearize(jitted_chain, x)
names = sorted({e.prim.name for e in tangent_map.graph.equations})
print(tangent_map.graph.num_ops, "operations:", names)
assert "tanh" not in names and "sin" not in names
t = rng.normal(size=1000)
np.testing.assert_allclose(tangent_map(t), dk.jvp(chain, (x,), (t,))[1], rtol=1e-12)
np.testing.assert_allclose(value, chain(x), rtol=1e-14)
