"""Chunked work on two Dask workers against one process, and the cost of the new options
when they are not used.

    python benchmarks/distributed.py                       # print the section
    python benchmarks/distributed.py --markdown benchmarks/RESULTS.md
    python benchmarks/distributed.py --base /path/to/other/checkout   # also the overhead rows

Workloads (issue 14):

1. Per-example gradients of the logistic loss over 10**6 examples x 100 features, each
   clipped to norm 1 inside the vmapped function, and summed (one step of DP-SGD). One
   process: ``vmap`` on NumPy arrays, whole and with ``chunk_size``. Two workers: the
   chunked ``vmap`` over a dask array held by a ``LocalCluster`` of two worker processes
   (one thread each), the data already in the workers' memory (``persist``), as a data set
   loaded on a cluster would be, in blocks of about 100 ms of work (one task each).
   The workers start without Dask's ``MALLOC_TRIM_THRESHOLD_`` (see the guide page); one
   more row shows ``jacrev`` with Dask's default worker environment.
2. ``jacrev`` of a function with 2000 outputs whose rows are expensive (each row is a
   backward pass through a 2000 x 2000 product and a chain of elementwise functions): one
   process, then ``executor=client`` on the same cluster (default chunk size, and
   ``chunk_size=250``).
3. With ``--base``: small Jacobians and ``vmap`` without ``chunk_size`` or ``executor``,
   this checkout against another one (run alternately in fresh processes, CPU time per
   call, the median of 9 samples of 50 ms), to show that the options cost nothing when
   they are not given.

Every process, the workers' included, runs BLAS on one thread: the comparison is one
core against two. Each figure is the median of interleaved rounds; every result is
compared with the one-process result before it is timed.
"""

import argparse
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
# this script's folder would shadow the package ``distributed`` (this file's name)
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "benchmarks"]
sys.path.insert(0, str(ROOT))

import diffkit as dk  # noqa: E402
import diffkit.numpy as dnp  # noqa: E402

START, END = "<!-- distributed:start -->", "<!-- distributed:end -->"


def median_time(fun, rounds):
    times = []
    for _ in range(rounds):
        began = time.perf_counter()
        fun()
        times.append(time.perf_counter() - began)
    return float(np.median(times))


def interleaved(funs, rounds):
    """Median seconds of each of ``funs``, run in turn ``rounds`` times."""
    times = {name: [] for name in funs}
    for _ in range(rounds):
        for name, fun in funs.items():
            began = time.perf_counter()
            fun()
            times[name].append(time.perf_counter() - began)
    return {name: float(np.median(t)) for name, t in times.items()}


# --- 1. per-example logistic-regression gradients -----------------------------------------


def logistic_loss(w, x, y):
    return dnp.log1p(dnp.exp(-y * dnp.dot(x, w)))


def clipped_gradient(w, x, y):
    """One example's gradient, scaled down to norm 1 if it is longer (DP-SGD's clipping)."""
    g = dk.grad(logistic_loss)(w, x, y)
    return g / dnp.maximum(dnp.sqrt(dnp.sum(g ** 2)), 1.0)


def per_example(client, rows, features, block, local_chunk, rounds):
    """``block`` examples a dask block (a task), ``local_chunk`` a chunk in one process."""
    import dask.array as da

    whole = dk.vmap(clipped_gradient, in_axes=(None, 0, 0))
    # the same chunk size in one process and in each block of the dask array
    chunked = dk.vmap(clipped_gradient, in_axes=(None, 0, 0), chunk_size=local_chunk)
    w = np.random.default_rng(0).normal(size=features) * 0.1
    xs = da.random.default_rng(1).normal(size=(rows, features), chunks=(block, features))
    ys = da.sign(da.random.default_rng(2).normal(size=rows, chunks=block))
    xs, ys = client.persist([xs, ys])
    client.rebalance([xs, ys])   # as many blocks on each worker, as a loaded data set has
    x, y = client.gather(client.compute([xs, ys]))   # the same data, here

    def local():
        return whole(w, x, y).sum(axis=0)

    def local_chunked():
        return chunked(w, x, y).sum(axis=0)

    def cluster():   # vmap of dask arrays: lazy, computed on the cluster
        return chunked(w, xs, ys).sum(axis=0).compute()

    expected = local()
    margin = y * (x @ w)
    g = (-y / (1 + np.exp(margin)))[:, None] * x
    np.testing.assert_allclose(
        expected, (g / np.maximum(np.linalg.norm(g, axis=1), 1.0)[:, None]).sum(axis=0),
        rtol=1e-9)
    for result in (local_chunked(), cluster()):
        np.testing.assert_allclose(result, expected, rtol=1e-9)
    times = interleaved({"local": local, "local_chunked": local_chunked, "cluster": cluster},
                        rounds)
    client.cancel([xs, ys])
    times.update(ceiling(client, features, block, local_chunk, rounds))
    return times


def one_block(features, block, local_chunk, rounds):
    """Median seconds of one block's chunked per-example gradients, in this process."""
    rng = np.random.default_rng(4)
    w, x = rng.normal(size=features) * 0.1, rng.normal(size=(block, features))
    y = np.sign(rng.normal(size=block))
    chunked = dk.vmap(clipped_gradient, in_axes=(None, 0, 0), chunk_size=local_chunk)
    chunked(w, x, y)
    return median_time(lambda: chunked(w, x, y), 2 * rounds + 1)


def ceiling(client, features, block, local_chunk, rounds):
    """What two workers can give on this machine: one block's time on a worker alone and
    on both workers at once (they share the memory bus; this work streams through memory)."""
    workers = list(client.scheduler_info()["workers"])
    args = (features, block, local_chunk, rounds)
    alone = float(np.median([client.run(one_block, *args, workers=[w])[w] for w in workers]))
    both = float(np.median(list(client.run(one_block, *args).values())))
    return {"block_alone": alone, "block_both": both}


# --- 2. jacrev of a function with expensive rows --------------------------------------------


def expensive_rows(n_in=100, n_out=2000, depth=30):
    rng = np.random.default_rng(3)
    a = rng.normal(size=(n_out, n_in)) / np.sqrt(n_in)
    b = rng.normal(size=(n_out, n_out)) / np.sqrt(n_out)

    def f(x):
        h = dnp.tanh(a @ x)
        for _ in range(depth):
            h = dnp.sin(h) * dnp.cos(h) + 0.5 * h
        return b @ h

    return f, rng.normal(size=n_in)


def jacrev_rows(client, rounds):
    f, x = expensive_rows()
    expected = dk.jacrev(f)(x)
    auto = dk.jacrev(f, executor=client)
    fixed = dk.jacrev(f, executor=client, chunk_size=250)
    for result in (auto(x), fixed(x)):
        np.testing.assert_allclose(result, expected, rtol=1e-12, atol=1e-12)
    one = dk.jacrev(f)
    return interleaved({"local": lambda: one(x), "cluster_auto": lambda: auto(x),
                        "cluster_250": lambda: fixed(x)}, rounds)


# --- 3. executor=None costs nothing -----------------------------------------------------------

OVERHEAD = textwrap.dedent("""
    import os, sys, time
    os.environ["OMP_NUM_THREADS"] = os.environ["OPENBLAS_NUM_THREADS"] = "1"
    sys.path.insert(0, sys.argv[1])
    import numpy as np
    import diffkit as dk
    import diffkit.numpy as dnp
    assert dk.__file__.startswith(sys.argv[1]), dk.__file__
    x = np.linspace(0.1, 1.0, 10)
    xs = np.linspace(0.1, 1.0, 400).reshape(40, 10)
    f = lambda x: dnp.sin(x) * dnp.sum(x ** 2)
    s = lambda x: dnp.sum(dnp.sin(x) * x ** 2)
    work = {"jacfwd": lambda: dk.jacfwd(f)(x), "jacrev": lambda: dk.jacrev(f)(x),
            "hessian": lambda: dk.hessian(s)(x), "vmap(grad)": lambda: dk.vmap(dk.grad(s))(xs)}
    for name, fun in work.items():   # CPU time: steadier than wall time on a shared machine
        for _ in range(50):
            fun()
        samples = []
        for _ in range(9):
            n, began = 0, time.process_time()
            while time.process_time() - began < 0.05:
                fun(); n += 1
            samples.append((time.process_time() - began) / n)
        print(name, sorted(samples)[4])
""")


def overhead(base, rounds):
    times = {}
    for _ in range(rounds):
        for label, root in (("base", base), ("this", str(ROOT))):
            done = subprocess.run([sys.executable, "-c", OVERHEAD, root], capture_output=True,
                                  text=True, check=True)
            for line in done.stdout.splitlines():
                name, seconds = line.rsplit(" ", 1)
                times.setdefault(name, {}).setdefault(label, []).append(float(seconds))
    return {name: {k: float(np.median(v)) for k, v in d.items()} for name, d in times.items()}


def fmt(seconds):
    return f"{seconds * 1e3:.0f} ms" if seconds >= 0.1 else f"{seconds * 1e3:.1f} ms" \
        if seconds >= 1e-3 else f"{seconds * 1e6:.1f} us"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--markdown", metavar="FILE")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--block", type=int, default=125_000, help="examples a dask block")
    p.add_argument("--base", metavar="DIR", help="another checkout, for the overhead rows")
    opts = p.parse_args()

    import dask
    import distributed

    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load_before = os.getloadavg()
    # a task should carry about 100 ms of work (docs/guide/distributed.md): 125,000 examples
    # are about that much here; in one process, smaller chunks keep the temporaries in cache
    block, local_chunk = opts.block, 25_000

    def cluster_run(trim_threshold):
        # Dask's nannies start workers with MALLOC_TRIM_THRESHOLD_=65536, which also turns
        # off glibc's adaptive mmap threshold: every temporary of a few MB is fresh pages.
        with dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_":
                              trim_threshold}):
            cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1,
                                               processes=True, dashboard_address=None)
        client = distributed.Client(cluster)
        try:
            if trim_threshold is None:
                return (per_example(client, opts.rows, 100, block, local_chunk, opts.rounds),
                        jacrev_rows(client, opts.rounds))
            return None, jacrev_rows(client, opts.rounds)
        finally:
            client.close()
            cluster.close()

    logistic, rows = cluster_run(None)
    _, rows_dask_env = cluster_run(65536)
    costs = overhead(opts.base, opts.rounds + 4) if opts.base else None
    load_after = os.getloadavg()

    body = [
        f"Run on **{started}** with `python benchmarks/distributed.py` ({opts.rounds} "
        f"interleaved rounds, medians). LocalCluster: 2 worker processes x 1 thread; BLAS on "
        "one thread everywhere, so one process is one core and the cluster two. "
        f"Load average (1 min) {load_before[0]:.2f} at start, {load_after[0]:.2f} at the end, "
        f"on {os.cpu_count()} logical CPUs"
        + (": the machine was shared with other work while this ran, so the two workers did "
           "not always have a core each." if load_before[0] > 0.5 else
           ": nothing else ran; Dask's scheduler and this client share the two cores with "
           "the workers."), "",
        f"### Per-example logistic-regression gradients, {opts.rows:,} x 100, each clipped "
        "to norm 1, summed", "",
        "| computation | median time |", "|---|---|",
        f"| one process, `vmap` on NumPy arrays | {fmt(logistic['local'])} |",
        f"| one process, `chunk_size={local_chunk:,}` | {fmt(logistic['local_chunked'])} |",
        f"| LocalCluster, `vmap` of a dask array ({block:,} rows a block, "
        f"`chunk_size={local_chunk:,}`), persisted "
        f"| {fmt(logistic['cluster'])} |", "",
        f"- two workers vs one process: **{logistic['local'] / logistic['cluster']:.2f}x** "
        f"(vs the chunked process: {logistic['local_chunked'] / logistic['cluster']:.2f}x); "
        "target 1.6x",
        f"- the ceiling on this machine: one block ({block:,} examples) takes "
        f"{fmt(logistic['block_alone'])} on a worker alone and {fmt(logistic['block_both'])} "
        "on each worker while both run (this work streams through memory, and the two cores "
        "share it), so two workers can be at most "
        f"**{2 * logistic['block_alone'] / logistic['block_both']:.2f}x** as fast as one "
        "chunked process, before any scheduling", "",
        "### `jacrev`, 2000 outputs, 100 inputs, expensive rows", "",
        "| computation | median time |", "|---|---|",
        f"| one process | {fmt(rows['local'])} |",
        f"| `executor=client`, default chunk size | {fmt(rows['cluster_auto'])} |",
        f"| `executor=client`, `chunk_size=250` | {fmt(rows['cluster_250'])} |", "",
        f"| `executor=client`, default chunk size, workers with Dask's default "
        f"`MALLOC_TRIM_THRESHOLD_=65536` | {fmt(rows_dask_env['cluster_auto'])} |", "",
        f"- two workers vs one process: **{rows['local'] / rows['cluster_auto']:.2f}x** "
        f"(default chunks), {rows['local'] / rows['cluster_250']:.2f}x (`chunk_size=250`); "
        "target 1.6x",
        f"- with Dask's default worker environment: "
        f"{rows_dask_env['local'] / rows_dask_env['cluster_auto']:.2f}x. Dask's nannies set "
        "`MALLOC_TRIM_THRESHOLD_=65536`, which also turns off glibc's adaptive mmap "
        "threshold, so each temporary array of a few MB is mapped afresh and page-faulted "
        "in: the rows above ran with it unset "
        "(`distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_: null`).",
    ]
    if costs:
        body += ["", "### Without `chunk_size` and `executor`: this checkout vs its base", "",
                 f"CPU time per call (not wall time), medians over {opts.rounds + 4} "
                 "alternating fresh processes of each checkout.", "",
                 "| workload | base | this | this / base |", "|---|---|---|---|"]
        for name, d in costs.items():
            body.append(f"| `{name}` | {fmt(d['base'])} | {fmt(d['this'])} | "
                        f"{d['this'] / d['base']:.3f} |")
    section = [START, "## Distributed (issue 14)", "", *body, END]
    text = "\n".join(section) + "\n"
    print(text)
    if opts.markdown:
        path = Path(opts.markdown)
        old = path.read_text() if path.exists() else ""
        if START in old and END in old:
            new = old[:old.index(START)] + text.rstrip("\n") + old[old.index(END) + len(END):]
        else:
            new = old.rstrip("\n") + "\n\n" + text
        path.write_text(new)


if __name__ == "__main__":
    main()
