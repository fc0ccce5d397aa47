"""Sparse derivatives: timings against dense AD and SciPy's grouped finite differences.

    python benchmarks/sparse.py                      # print the table
    python benchmarks/sparse.py --markdown benchmarks/RESULTS.md

With ``--markdown`` the section between the ``sparse`` markers of the file is replaced (or
appended). Each figure is the median over interleaved rounds of one sample, a sample being
the mean over enough back-to-back calls to take at least 20 ms. Every sparse result is
checked against the dense one before timing.
"""

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from scipy.optimize._numdiff import approx_derivative, group_columns  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import diffkit as dk  # noqa: E402
import diffkit.numpy as dnp  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sparsity_representation as representation  # noqa: E402

START, END = "<!-- sparse:start -->", "<!-- sparse:end -->"


def brusselator(xp, n, a=3.4, b=1.0, alpha=0.02):
    """The 2-D Brusselator right-hand side on a periodic n x n grid, for the namespace
    ``xp`` (NumPy or diffkit.numpy)."""
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


def chained_rosenbrock(xp):
    def f(x):
        return xp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
    return f


def sample(thunk, min_time=0.02):
    calls, start = 0, time.perf_counter()
    while True:
        thunk()
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= min_time:
            return elapsed / calls


def measure(thunks, rounds):
    samples = {name: [] for name in thunks}
    for thunk in thunks.values():
        thunk()   # warm up (and fill caches)
    for _ in range(rounds):
        for name, thunk in thunks.items():
            samples[name].append(sample(thunk))
    return {name: float(np.median(s)) for name, s in samples.items()}


def fmt(seconds):
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-6:.3g} us"


def brusselator_rows(n, rounds):
    f_np, f_dk = brusselator(np, n), brusselator(dnp, n)
    y = np.random.default_rng(0).uniform(0.5, 2.0, 2 * n * n)
    jac_fn = dk.sparse_jacobian(f_dk)
    sparse = jac_fn(y)
    dense = np.asarray(dk.jacfwd(f_dk)(y))
    np.testing.assert_allclose(sparse.toarray(), dense, rtol=1e-12, atol=0)
    info = jac_fn.coloring(y)
    pattern = sp.csr_matrix(info.pattern)
    groups = group_columns(pattern)
    fd = approx_derivative(f_np, y, sparsity=(pattern, groups))
    fd_error = abs(fd - sparse).max() / abs(sparse).max()
    times = measure({
        "primal": lambda: f_np(y),
        "sparse": lambda: jac_fn(y),
        "dense": lambda: dk.jacfwd(f_dk)(y),
        "fd": lambda: approx_derivative(f_np, y, sparsity=(pattern, groups)),
        "detect": lambda: dk.jacobian_sparsity(f_dk)(y),
    }, rounds)
    return times, info, int(groups.max()) + 1, fd_error


def rosenbrock_rows(n, rounds):
    f_np, f_dk = chained_rosenbrock(np), chained_rosenbrock(dnp)
    x = np.random.default_rng(1).uniform(-1, 1, n)
    hess_fn = dk.sparse_hessian(f_dk)
    hess = hess_fn(x)
    small = np.asarray(dk.hessian(f_dk)(x[:200]))
    np.testing.assert_allclose(dk.sparse_hessian(f_dk)(x[:200]).toarray(), small, rtol=1e-12,
                               atol=0)
    diag = 1200 * x ** 2 - 400 * np.roll(x, -1) + 2
    diag[-1] = 0
    diag[1:] += 200
    np.testing.assert_allclose(hess.diagonal(), diag, rtol=1e-12)
    times = measure({
        "primal": lambda: f_np(x),
        "sparse": lambda: hess_fn(x),
        "detect": lambda: dk.hessian_sparsity(f_dk)(x),
    }, rounds)
    return times, hess_fn.coloring(x)


def banded_objective(xp, k):
    """A scalar objective whose Hessian has bandwidth ``k`` (2k + 1 diagonals)."""
    def f(x):
        total = xp.sum(x ** 4) + xp.sum((1.0 - x) ** 2)
        for j in range(1, k + 1):
            total = total + xp.sum((x[j:] * x[:-j] - 0.5) ** 2)
        return total
    return f


def banded_residuals(xp, k):
    """Residuals whose Jacobian has ``k + 1`` diagonals."""
    def r(x):
        parts = [x ** 2 - 1.0]
        for j in range(1, k + 1):
            parts.append(x[j:] * x[:-j] - 0.5)
        return xp.concatenate(parts)
    return r


def per_step(solve, steps):
    """Seconds per solver step (median of 3), ``solve()`` returning the result."""
    times = []
    for _ in range(3):
        start = time.perf_counter()
        result = solve()
        times.append((time.perf_counter() - start) / max(steps(result), 1))
    return float(np.median(times))


def break_even_rows(sizes=(50, 100, 200, 400, 800), bands=(1, 4, 16)):
    """Time per step of trust-constr (unconstrained, 15 steps) and least_squares (15
    evaluations) on banded problems, dense path against sparse path, both staged: where
    ``sparse=None`` should switch."""
    from diffkit.scipy import optimize as dko
    rows = []
    for n in sizes:
        for k in bands:
            if 2 * k + 1 > n // 4:
                continue
            x0 = np.full(n, 0.3)
            f = banded_objective(dnp, k)
            tc = {s: per_step(lambda s=s, f=f, x0=x0: dko.minimize(
                f, x0, method="trust-constr", sparse=s, options={"maxiter": 15}),
                lambda r: r.nit) for s in (False, True)}
            res = banded_residuals(dnp, k)
            ls = {s: per_step(lambda s=s, res=res, x0=x0: dko.least_squares(
                res, x0, sparse=s, max_nfev=15), lambda r: r.nfev) for s in (False, True)}
            hess_density = dk.hessian_sparsity(f)(x0).nnz / n ** 2
            pattern = dk.jacobian_sparsity(res)(x0)
            jac_density = pattern.nnz / (pattern.shape[0] * n)
            colours = (dk.sparse_hessian(f).coloring(x0).num_colors,
                       dk.sparse_jacobian(res).coloring(x0).num_colors)
            rows.append((n, k, hess_density, jac_density, tc, ls, colours))
    return rows


def report(rounds):
    lines = []
    n = 32
    times, info, groups, fd_error = brusselator_rows(n, rounds)
    lines += [
        f"### Brusselator 2-D, periodic {n} x {n} grid ({2 * n * n} unknowns)", "",
        f"Pattern: {info.pattern.nnz} nonzeros; {info.num_colors} colours ({info.mode} mode); "
        f"SciPy's `group_columns`: {groups} groups. Grouped finite differences differ from "
        f"the exact Jacobian by {fd_error:.1e} (relative to its largest entry).", "",
        "| computation | median time | ratio to the NumPy primal |",
        "|---|---|---|",
    ]
    for key, label in (("primal", "NumPy primal"),
                       ("sparse", "`dk.sparse_jacobian` (pattern and colouring cached)"),
                       ("dense", "`dk.jacfwd` (dense)"),
                       ("fd", "SciPy `approx_derivative`, groups precomputed"),
                       ("detect", "`dk.jacobian_sparsity` (global pattern)")):
        lines.append(f"| {label} | {fmt(times[key])} | {times[key] / times['primal']:.3g}x |")
    lines += ["",
              f"- sparse vs dense `jacfwd`: **{times['dense'] / times['sparse']:.1f}x** faster",
              f"- sparse vs SciPy grouped finite differences: "
              f"**{times['fd'] / times['sparse']:.2f}x** faster",
              f"- pattern detection: **{times['detect'] / times['primal']:.0f}x** the primal", ""]
    m = 10 ** 4
    times, info = rosenbrock_rows(m, rounds)
    lines += [
        f"### Chained Rosenbrock, n = {m} (tridiagonal Hessian)", "",
        f"Pattern: {info.pattern.nnz} nonzeros; star colouring with {info.num_colors} colours.",
        "",
        "| computation | median time | ratio to the NumPy primal |",
        "|---|---|---|",
    ]
    for key, label in (("primal", "NumPy primal"),
                       ("sparse", "`dk.sparse_hessian` (pattern and colouring cached)"),
                       ("detect", "`dk.hessian_sparsity`")):
        lines.append(f"| {label} | {fmt(times[key])} | {times[key] / times['primal']:.3g}x |")
    sparse_ratio = times["sparse"] / times["primal"]
    detect_ratio = times["detect"] / times["primal"]
    lines += ["",
              f"- sparse Hessian: **{sparse_ratio:.0f}x** the primal (goal: at most 60x, "
              f"{'met' if sparse_ratio <= 60 else 'not met'})",
              f"- Hessian pattern detection: **{detect_ratio:.0f}x** the primal (goal: at most "
              f"100x, {'met' if detect_ratio <= 100 else 'not met'})", ""]
    lines += ["### Dependence sets in detection: CSR against bit sets", "",
              "(`benchmarks/sparsity_representation.py`; a 5-point stencil's sets)", "",
              "| grid | operation | CSR | Python-integer bit sets | bit sets / CSR |",
              "|---|---|---|---|---|"]
    for n in (16, 32, 64):
        for name, (with_csr, with_bits) in representation.cases(n).items():
            a, b = representation.median_time(with_csr), representation.median_time(with_bits)
            lines.append(f"| {n} x {n} | {name} | {fmt(a)} | {fmt(b)} | {b / a:.2g}x |")
    lines.append("")
    lines += ["### Dense or sparse: where `sparse=None` switches", "",
              "Time per step of `diffkit.scipy.optimize` solves on banded problems (both "
              "paths staged with `jit`; trust-constr unconstrained, 15 iterations; "
              "least_squares `trf`, 15 evaluations, `tr_solver` `exact` when dense, `lsmr` "
              "when sparse). Densities: the detected patterns' stored entries over all "
              "entries. `sparse=None` takes the sparse path from 200 parameters, at most 5% "
              "density and at most one colour per 12 parameters.", "",
              "| n | bandwidth k | Hessian density, colours | trust-constr dense / sparse | "
              "Jacobian density, colours | least_squares dense / sparse |",
              "|---|---|---|---|---|---|"]
    for n, k, hd, jd, tc, ls, (hc, jc) in break_even_rows():
        lines.append(f"| {n} | {k} | {hd:.3f}, {hc} | {fmt(tc[False])} / {fmt(tc[True])} "
                     f"(**{tc[False] / tc[True]:.2g}x**) | {jd:.3f}, {jc} | "
                     f"{fmt(ls[False])} / {fmt(ls[True])} (**{ls[False] / ls[True]:.2g}x**) |")
    lines.append("")
    return lines


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--markdown", metavar="FILE")
    opts = p.parse_args()
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    start_load = os.getloadavg()[0]
    body = report(opts.rounds)
    section = [START, "## Sparse derivatives", "",
               f"Run on **{started}** with `python benchmarks/sparse.py --markdown "
               f"benchmarks/RESULTS.md` ({opts.rounds} interleaved rounds, medians; "
               f"load average at start {start_load:.2f}, at the end "
               f"{{end_load}}). The machine has {os.cpu_count()} cores shared with other "
               "jobs: single figures move by tens of percent from run to run; the ratios of "
               "one run, measured in interleaved rounds, move less.", "", *body, END]
    text = "\n".join(section).replace("{end_load}", f"{os.getloadavg()[0]:.2f}")
    print(text)
    if opts.markdown:
        path = Path(opts.markdown)
        old = path.read_text() if path.exists() else ""
        if START in old and END in old:
            new = old[:old.index(START)] + text + old[old.index(END) + len(END):]
        else:
            new = old.rstrip("\n") + "\n\n" + text + "\n"
        path.write_text(new)


if __name__ == "__main__":
    main()
