"""Sparse derivatives: timings against dense AD and SciPy's grouped finite differences,
and colouring at scale.

    python benchmarks/sparse.py                      # print the table
    python benchmarks/sparse.py --markdown benchmarks/RESULTS.md
    python benchmarks/sparse.py --only scale         # only the rows at scale

With ``--markdown`` the section between the ``sparse`` markers of the file is replaced (or
appended). Each figure is the median over interleaved rounds of one sample, a sample being
the mean over enough back-to-back calls to take at least 20 ms. Every sparse result is
checked against the dense one before timing (at scale, where no dense one fits, against
Jacobian-vector products and closed forms).

The rows at scale (``scale_rows``) run each problem in a fresh process (``--scale-case``),
so that its peak resident memory is its own: an arrow pattern of 10**5 unknowns (a dense
row, a dense column and the diagonal), the 2-D Brusselator on a 512 x 512 grid (524,288
unknowns) and the chained Rosenbrock Hessian at n = 10**6. The first call of a fresh
``sparse_jacobian`` (``sparse_hessian``) detects the pattern, colours it and evaluates;
the second reuses both.
"""

import argparse
import json
import os
import resource
import subprocess
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


# --- at scale ----------------------------------------------------------------------------


def arrow_pattern(n, column=True):
    """A dense first row, the diagonal, and (``column``) a dense first column."""
    inner = np.arange(1, n)
    rows = [np.zeros(n, int), inner] + ([inner] if column else [])
    cols = [np.arange(n), inner] + ([np.zeros(n - 1, int)] if column else [])
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    return sp.csr_array((np.ones(rows.size, bool), (rows, cols)), shape=(n, n))


def _timed(thunk):
    start = time.perf_counter()
    out = thunk()
    return out, time.perf_counter() - start


def _peak_gib():
    """This process's peak resident memory: ``VmHWM`` (Linux; a new program image starts
    it afresh, where ``ru_maxrss`` keeps the parent's peak across ``execve``)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 2 ** 20   # KiB
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20


def arrow_case(n=10 ** 5):
    from diffkit.sparse.coloring import gather_bidirectional, seed_matrix
    from diffkit.sparse.derivatives import jacobian_coloring
    out = {}
    for name, column in (("full", True), ("half", False)):
        pattern = sp.csr_array(arrow_pattern(n, column))
        info, seconds = _timed(lambda p=pattern: jacobian_coloring(p, "auto",
                                                                    bidirectional=True))
        values = np.random.default_rng(0).standard_normal(pattern.nnz)
        jac = sp.csr_array((values, pattern.indices, pattern.indptr), shape=pattern.shape)
        if info.mode == "bidirectional":   # every entry read back alone
            flat = np.concatenate([(jac @ seed_matrix(info.colors)).T.ravel(),
                                   (jac.T @ seed_matrix(info.row_colors)).ravel()])
            assert np.array_equal(
                flat[gather_bidirectional(pattern, info.colors, info.row_colors)], values)
        out[name] = {"seconds": seconds, "mode": info.mode, "colors": info.num_colors,
                     "nnz": int(pattern.nnz)}
    out["peak_gib"] = _peak_gib()
    return out


def _second_call_ratio(primal, derivative, rounds):
    times = measure({"primal": primal, "derivative": derivative}, rounds)
    return times["derivative"] / times["primal"], times


def brusselator_case(n=512, rounds=5):
    f_np, f_dk = brusselator(np, n), brusselator(dnp, n)
    y = np.random.default_rng(0).uniform(0.5, 2.0, 2 * n * n)
    pattern, detect = _timed(lambda: dk.jacobian_sparsity(f_dk)(y))
    from diffkit.sparse.derivatives import jacobian_coloring
    info, colour = _timed(lambda: jacobian_coloring(pattern, "auto", bidirectional=True))
    jac_fn = dk.sparse_jacobian(f_dk)
    jac, first = _timed(lambda: jac_fn(y))
    peak = _peak_gib()
    v = np.random.default_rng(1).standard_normal(y.size)
    np.testing.assert_allclose(jac @ v, dk.jvp(f_dk, (y,), (v,))[1], rtol=1e-12, atol=1e-9)
    ratio, times = _second_call_ratio(lambda: f_np(y), lambda: jac_fn(y), rounds)
    used = jac_fn.coloring(y)
    return {"unknowns": y.size, "nnz": int(pattern.nnz), "detect": detect, "colour": colour,
            "first": first, "peak_gib": peak, "mode": used.mode, "colors": used.num_colors,
            "ratio": ratio, "primal": times["primal"], "second": times["derivative"],
            "same_colors": info.num_colors == used.num_colors}


def rosenbrock_case(n=10 ** 6, rounds=5):
    f_np, f_dk = chained_rosenbrock(np), chained_rosenbrock(dnp)
    x = np.random.default_rng(1).uniform(-1, 1, n)
    pattern, detect = _timed(lambda: dk.hessian_sparsity(f_dk)(x))
    from diffkit.sparse.derivatives import hessian_coloring
    info, colour = _timed(lambda: hessian_coloring(pattern))
    hess_fn = dk.sparse_hessian(f_dk)
    hess, first = _timed(lambda: hess_fn(x))
    peak = _peak_gib()
    diag = 1200 * x ** 2 - 400 * np.roll(x, -1) + 2
    diag[-1] = 0
    diag[1:] += 200
    np.testing.assert_allclose(hess.diagonal(), diag, rtol=1e-12, atol=1e-10)   # cancellation
    v = np.random.default_rng(2).standard_normal(n)
    hvp = dk.jvp(dk.grad(f_dk), (x,), (v,))[1]
    np.testing.assert_allclose(hess @ v, hvp, rtol=1e-10, atol=1e-8)
    ratio, times = _second_call_ratio(lambda: f_np(x), lambda: hess_fn(x), rounds)
    return {"unknowns": n, "nnz": int(pattern.nnz), "detect": detect, "colour": colour,
            "first": first, "peak_gib": peak, "mode": "star", "colors": info.num_colors,
            "ratio": ratio, "primal": times["primal"], "second": times["derivative"]}


SCALE_CASES = {"arrow": arrow_case, "brusselator": brusselator_case,
               "rosenbrock": rosenbrock_case}


def run_scale_case(name):
    """One problem at scale in a fresh process: its figures, as JSON on stdout."""
    done = subprocess.run([sys.executable, __file__, "--scale-case", name],
                          capture_output=True, text=True, timeout=1800)
    if done.returncode:
        raise RuntimeError(f"{name} at scale failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _met(ok):
    return "met" if ok else "**not met**"


def scale_rows():
    lines = ["### Colouring at scale", "",
             "Each problem runs in a fresh process (peak memory: its resident set at its "
             "largest, Python and the imports included). *First call*: a fresh "
             "`sparse_jacobian` (`sparse_hessian`) detects the pattern, colours it and "
             "evaluates; *second call*: pattern and colouring cached, as a ratio to the "
             "NumPy primal (medians of interleaved rounds). Goals (issue 30): the arrow "
             "coloured in at most 1 s with at most 3 products; detection, colouring and "
             "one derivative within 30 s and 4 GiB; a second call within 60x the primal.",
             ""]
    arrow = run_scale_case("arrow")
    lines += ["| arrow pattern, n = 10^5 | nonzeros | colouring | scheme | products | goal |",
              "|---|---|---|---|---|---|"]
    for name, label in (("full", "dense row, dense column, diagonal"),
                        ("half", "dense row, diagonal")):
        row = arrow[name]
        ok = row["seconds"] <= 1 and row["colors"] <= 3
        lines.append(f"| {label} | {row['nnz']} | {fmt(row['seconds'])} | {row['mode']} | "
                     f"{row['colors']} | {_met(ok)} |")
    lines += ["", "| problem | unknowns | nonzeros | detection | colouring | scheme, "
              "products | first call | peak memory | second call / primal | goals |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for name, label in (("brusselator", "Brusselator Jacobian, 512 x 512 grid"),
                        ("rosenbrock", "chained Rosenbrock Hessian, n = 10^6")):
        r = run_scale_case(name)
        ok = r["first"] <= 30 and r["peak_gib"] <= 4 and r["ratio"] <= 60
        lines.append(f"| {label} | {r['unknowns']} | {r['nnz']} | {fmt(r['detect'])} | "
                     f"{fmt(r['colour'])} | {r['mode']}, {r['colors']} | {fmt(r['first'])} | "
                     f"{r['peak_gib']:.2f} GiB | {r['ratio']:.3g}x ({fmt(r['second'])} / "
                     f"{fmt(r['primal'])}) | {_met(ok)} |")
    lines.append("")
    return lines


def report(rounds, only=None):
    lines = []
    if only == "scale":
        return scale_rows()
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
    if only is None:
        lines += scale_rows()
    return lines


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--markdown", metavar="FILE")
    p.add_argument("--only", choices=("small", "scale"),
                   help="only the rows on small problems, or only those at scale")
    p.add_argument("--scale-case", choices=tuple(SCALE_CASES), help=argparse.SUPPRESS)
    opts = p.parse_args()
    if opts.scale_case:   # one problem at scale, in this (fresh) process
        print(json.dumps(SCALE_CASES[opts.scale_case]()))
        return
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    start_load = os.getloadavg()[0]
    body = report(opts.rounds, opts.only)
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
