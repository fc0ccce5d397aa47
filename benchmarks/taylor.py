"""Taylor mode: Laplacians, the biharmonic operator and high-order jets.

    python benchmarks/taylor.py                      # print the figures
    python benchmarks/taylor.py --markdown benchmarks/RESULTS.md

The Laplacian of a tanh MLP D -> 64 -> 64 -> 64 -> 1 at 1,000 points (float64, one BLAS
thread), by:

- a forward Laplacian written by hand in NumPy (the floor: value, input Jacobian and
  Laplacian pushed through the layers together);
- ``dk.laplacian`` eager and under ``dk.jit``;
- diffkit's nested route, ``vmap(trace(hessian))``, eager and jitted;
- JAX jit's ``vmap(trace(hessian))`` and ``jax.experimental.jet`` where JAX is installed
  (``TAYLOR_PEERS`` may name a directory holding it, appended to the import path).

Then the biharmonic at D = 5 and the weighted Laplacian at D = 10 against diffkit's nested
routes, peak memory of the Laplacian against the nested route at D = 30, and a jet of order
4 of a 200-operation scalar chain against four nested ``jvp``s. Each figure is the median
of a few runs; the ratios, measured in one run, are the figures to read.
"""

import argparse
import math
import os
import re
import sys
import tracemalloc
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
# JAX on one thread too, as benchmarks/run.py pins it
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                   "intra_op_parallelism_threads=1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
if os.environ.get("TAYLOR_PEERS"):
    sys.path.append(os.environ["TAYLOR_PEERS"])

from timing import fmt  # noqa: E402
from timing import median_time as _median_time  # noqa: E402

import diffkit as dk  # noqa: E402
import diffkit.numpy as dnp  # noqa: E402

POINTS = 1000
WIDTH = 64


def mlp_weights(dim, rng):
    sizes = [dim, WIDTH, WIDTH, WIDTH, 1]
    return [(rng.standard_normal((a, b)) / math.sqrt(a), 0.1 * rng.standard_normal(b))
            for a, b in zip(sizes[:-1], sizes[1:])]


def mlp(weights, xnp=dnp):
    def u(x):
        h = x
        for W, b in weights[:-1]:
            h = xnp.tanh(h @ W + b)
        W, b = weights[-1]
        return (h @ W + b)[..., 0]
    return u


def forward_laplacian_numpy(weights, X):
    """The Laplacian of the MLP at each row of ``X`` (N, D), by hand: for each layer the
    value h (N, H), its Jacobian in the input g (N, D, H) and its Laplacian l (N, H)."""
    n, d = X.shape
    h = X
    g = np.broadcast_to(np.eye(d), (n, d, d))
    lap = np.zeros((n, d))
    for W, b in weights[:-1]:
        z, g, lap = h @ W + b, g @ W, lap @ W
        h = np.tanh(z)
        slope = 1 - h * h
        curvature = -2 * h * slope
        lap = slope * lap + curvature * np.einsum("ndh,ndh->nh", g, g)
        g = slope[:, None, :] * g
    W, _ = weights[-1]
    return (lap @ W)[:, 0]


def median_time(thunk, runs=5):
    return _median_time(thunk, runs, warm_up=True)


def peak_memory(thunk):
    tracemalloc.start()
    try:
        thunk()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak


def laplacian_rows(dims, runs):
    return [laplacian_row(dim, runs) for dim in dims]


def laplacian_row(dim, runs):
    rng = np.random.default_rng(dim)
    weights = mlp_weights(dim, rng)
    X = rng.standard_normal((POINTS, dim))
    u = mlp(weights)
    floor = forward_laplacian_numpy(weights, X)
    ours = dk.vmap(dk.laplacian(u))
    ours_jit = dk.jit(ours)
    nested = dk.vmap(lambda x: dnp.trace(dk.hessian(u)(x)))
    nested_jit = dk.jit(nested)
    for name, f in (("eager", ours), ("jit", ours_jit), ("nested jit", nested_jit)):
        got = f(X)
        error = np.max(np.abs(got - floor)) / max(1.0, np.max(np.abs(floor)))
        assert error < 1e-9, (dim, name, error)
    row = dict(dim=dim,
               numpy=median_time(lambda: forward_laplacian_numpy(weights, X), runs),
               eager=median_time(lambda: ours(X), runs),
               jit=median_time(lambda: ours_jit(X), runs),
               nested=median_time(lambda: nested(X), max(1, runs // 2)),
               nested_jit=median_time(lambda: nested_jit(X), runs))
    row.update(jax_rows(weights, X, floor, runs))
    return row


def jax_rows(weights, X, floor, runs):
    """JAX jit's nested Laplacian and ``jet``-based one, when JAX is installed."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return {"jax": None, "jax_jet": None}
    jax.config.update("jax_enable_x64", True)
    from jax.experimental.jet import jet
    u = mlp([(jnp.asarray(W), jnp.asarray(b)) for W, b in weights], jnp)
    nested = jax.jit(jax.vmap(lambda x: jnp.trace(jax.hessian(u)(x))))
    units = jnp.eye(X.shape[1])

    def by_jet(x):   # the second derivative along each unit vector, summed
        along = jax.vmap(lambda e: jet(u, (x,), ((e, jnp.zeros_like(e)),))[1][1])
        return jnp.sum(along(units))
    with_jet = jax.jit(jax.vmap(by_jet))
    X_j = jnp.asarray(X)
    assert np.allclose(np.asarray(nested(X_j)), floor, rtol=1e-9, atol=1e-9)
    assert np.allclose(np.asarray(with_jet(X_j)), floor, rtol=1e-9, atol=1e-9)
    return {"jax": median_time(lambda: nested(X_j).block_until_ready(), runs),
            "jax_jet": median_time(lambda: with_jet(X_j).block_until_ready(), runs)}


def operator_rows(runs):
    rng = np.random.default_rng(5)
    rows = []
    weights5 = mlp_weights(5, rng)
    u5 = mlp(weights5)
    x5 = rng.standard_normal((50, 5))
    bih = dk.vmap(dk.biharmonic(u5))

    def nested_bih(x):
        hess_of_laplacian = dk.hessian(lambda y: dnp.trace(dk.hessian(u5)(y)))
        return dnp.trace(hess_of_laplacian(x))
    nested = dk.vmap(nested_bih)
    assert np.allclose(bih(x5), nested(x5), rtol=1e-7, atol=1e-9)
    rows.append(("biharmonic, D = 5, 50 points", median_time(lambda: bih(x5), runs),
                 median_time(lambda: nested(x5), max(1, runs // 2))))
    weights10 = mlp_weights(10, rng)
    u10 = mlp(weights10)
    sigma = rng.standard_normal((10, 10)) / 3
    x10 = rng.standard_normal((POINTS, 10))
    weighted = dk.vmap(dk.weighted_laplacian(u10, sigma))
    nested_w = dk.vmap(lambda x: dnp.trace(sigma @ sigma.T @ dk.hessian(u10)(x)))
    assert np.allclose(weighted(x10), nested_w(x10), rtol=1e-7, atol=1e-9)
    rows.append(("weighted Laplacian, D = 10, 1,000 points",
                 median_time(lambda: weighted(x10), runs),
                 median_time(lambda: nested_w(x10), runs)))
    return rows


def memory_row(dim=30):
    rng = np.random.default_rng(dim)
    u = mlp(mlp_weights(dim, rng))
    X = rng.standard_normal((POINTS, dim))
    ours = dk.vmap(dk.laplacian(u))
    nested = dk.vmap(lambda x: dnp.trace(dk.hessian(u)(x)))
    return peak_memory(lambda: ours(X)), peak_memory(lambda: nested(X))


def chain(x):
    for _ in range(50):
        x = dnp.sin(x) * 0.9 + dnp.exp(-x * x) * 0.1
    return x


def jet_row(runs):
    x = np.array(0.3)
    series = (np.array(1.0), np.array(0.0), np.array(0.0), np.array(0.0))

    def nested4(x):
        def d(f):
            return lambda y: dk.jvp(f, (y,), (np.ones_like(y),))[1]
        return d(d(d(d(chain))))(x)
    got = dk.jet(chain, (x,), (series,))[1][3]
    assert np.allclose(got, nested4(x), rtol=1e-7)
    return (median_time(lambda: dk.jet(chain, (x,), (series,)), runs),
            median_time(lambda: nested4(x), runs))


def report(dims, runs):
    lap = laplacian_rows(dims, runs)
    ops = operator_rows(runs)
    ours_mem, nested_mem = memory_row()
    jet_time, nested_time = jet_row(runs)
    lines = ["<!-- taylor:start -->", "## Taylor mode (`benchmarks/taylor.py`)", "",
             "Shared 2-core machine, one BLAS thread: the ratios, measured in one run, are "
             "the figures to read.", "",
             f"### Laplacian of a tanh MLP D -> 64 -> 64 -> 64 -> 1 at {POINTS:,} points", "",
             "| D | NumPy forward Laplacian (floor) | `dk.laplacian` eager | jitted | "
             "jitted / floor | eager / jitted | diffkit nested, jitted | JAX jit nested | "
             "jitted / JAX nested | JAX jit `jet` |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in lap:
        jax_text = "not installed here" if r["jax"] is None else fmt(r["jax"])
        jax_ratio = "" if r["jax"] is None else f"{r['jit'] / r['jax']:.2f}x"
        jet_text = "" if r["jax_jet"] is None else fmt(r["jax_jet"])
        lines.append(f"| {r['dim']} | {fmt(r['numpy'])} | {fmt(r['eager'])} | "
                     f"{fmt(r['jit'])} | {r['jit'] / r['numpy']:.2f}x | "
                     f"{r['eager'] / r['jit']:.2f}x | {fmt(r['nested_jit'])} | {jax_text} | "
                     f"{jax_ratio} | {jet_text} |")
    lines += ["", "| operator | Taylor mode | diffkit nested | ratio |", "|---|---|---|---|"]
    for name, ours, nested in ops:
        lines.append(f"| {name} | {fmt(ours)} | {fmt(nested)} | {ours / nested:.2f}x |")
    lines += ["", f"Peak memory of the Laplacian at D = 30: {ours_mem / 2**20:.1f} MiB with "
              f"`dk.laplacian`, {nested_mem / 2**20:.1f} MiB nested "
              f"({ours_mem / nested_mem:.2f}x).", "",
              f"`dk.jet` to order 4 of a 200-operation scalar chain: {fmt(jet_time)}; four "
              f"nested `jvp`s: {fmt(nested_time)} ({jet_time / nested_time:.2f}x).",
              "<!-- taylor:end -->"]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--markdown")
    parser.add_argument("--dims", default="3,10,30")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    text = report([int(d) for d in args.dims.split(",")], args.runs)
    print(text)
    if args.markdown:
        path = Path(args.markdown)
        old = path.read_text()
        if "<!-- taylor:start -->" in old:
            new = re.sub(r"<!-- taylor:start -->.*<!-- taylor:end -->", lambda m: text, old,
                         flags=re.S)
        else:
            new = old.rstrip("\n") + "\n\n" + text + "\n"
        path.write_text(new)


if __name__ == "__main__":
    main()
