"""Benchmark diffkit against plain NumPy and the peers that are installed.

    python benchmarks/run.py                # full run (about a minute with all peers)
    python benchmarks/run.py --quick        # fewer rounds, shorter samples, same workloads
    python benchmarks/run.py --markdown benchmarks/RESULTS.md

See benchmarks/README.md for what is measured and how.
"""

import os
import sys

# Pin every thread pool to one thread before NumPy (or a peer) is imported: the comparison
# is of single-threaded eager execution, and BLAS threads would add noise on a small machine.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_var] = "1"
os.environ["JAX_PLATFORMS"] = "cpu"
_xla = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
if _xla not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + _xla).strip()



def _fix_allocator():
    """Put glibc's malloc in one fixed state for the whole run. By default its mmap
    threshold moves up the first time a large block is freed, after which every mid-size
    array (e.g. the MLP's 256 KiB activations) stops costing an mmap and page faults: the
    same code then runs ~30% faster depending on which workloads ran before. Fixing the
    thresholds high (the state a long-running process reaches anyway) removes that order
    effect for every system alike. Returns a description for the report."""
    try:
        import ctypes
        libc = ctypes.CDLL("libc.so.6")
        m_trim_threshold, m_mmap_threshold = -1, -3
        ok = libc.mallopt(m_mmap_threshold, 32 * 2**20) == 1 and \
            libc.mallopt(m_trim_threshold, 512 * 2**20) == 1
    except (OSError, AttributeError):
        ok = False
    return ("glibc malloc fixed by mallopt: mmap threshold 32 MiB, trim threshold 512 MiB"
            if ok else "allocator left as it is (not glibc)")


ALLOCATOR = _fix_allocator()

_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.dirname(_HERE)
sys.path.insert(0, _HERE)
sys.path.insert(0, _ROOT)   # benchmark the diffkit of this checkout, not an installed one

import argparse  # noqa: E402
import datetime  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import report  # noqa: E402
import timing  # noqa: E402
from systems import NotAvailable, available_systems, pinned_threads  # noqa: E402
from workloads import WORKLOADS  # noqa: E402

RTOL = 1e-6          # agreement of every system's result with diffkit's
ATOL_SCALE = 1e-9    # atol = ATOL_SCALE * max |reference|
PROBE_TOL = 1e-5     # relative error allowed against central finite differences

timing.Cell.probe_tol = PROBE_TOL

MODES = {   # rounds, minimum sample time (s), one call slower than this is timed once
    "full": (15, 0.020, 20.0),
    "quick": (5, 0.005, 2.0),
}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true",
                   help="5 rounds of >= 5 ms samples instead of 15 of >= 20 ms")
    p.add_argument("--markdown", metavar="FILE", help="also write the report as Markdown")
    p.add_argument("--only", metavar="KEYS",
                   help="comma-separated workload keys: " + ",".join(w.key for w in WORKLOADS))
    p.add_argument("--systems", metavar="KEYS",
                   help="comma-separated peers to try (autograd,jax,jaxjit,torch); "
                        "default: every installed one")
    p.add_argument("--rounds", type=int, help="override the number of rounds")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    return p.parse_args(argv)


def build_cells(workload, systems, rng):
    args = workload.setup(rng)
    cells = []
    for system in systems:
        cell = timing.Cell(workload, system)
        cells.append(cell)
        try:
            sys_args = system.convert(args)
            if system.key == "numpy":
                cell.thunk = workload.primal(system.ns, sys_args)
            else:
                fn = workload.derivative(system, sys_args)
                cell.thunk = (lambda fn=fn, a=sys_args, s=system: s.sync(fn(*a)))
        except NotAvailable as why:
            cell.status, cell.message = "n/a", str(why)
            continue
        except Exception as error:   # noqa: BLE001
            cell.status, cell.message = "error", f"{type(error).__name__}: {error}"
            continue
        start = time.perf_counter()
        timing.warm_up(cell)   # for a jit: the trace (and JAX's compile)
        cell.first_call = time.perf_counter() - start
        if cell.ok and cell.system.key in FIRST_CALLS:   # diffkit-jit generates its code
            start = time.perf_counter()
            cell.thunk()
            cell.second_call = time.perf_counter() - start
    return args, cells


FIRST_CALLS = ("diffkit", "diffkitjit", "jaxjit")   # first calls reported in a table


def check_agreement(workload, args, cells):
    """Check every derivative before timing: each against central finite differences of the
    NumPy primal (the workload's probe), and each peer against diffkit (or, if diffkit
    failed, against the first peer that passed the probe). Returns notes to print."""
    notes = []
    derivs = [c for c in cells if c.ok and c.system.key != "numpy"]
    if not derivs:
        return ["checks: nothing to compare (no derivative ran)"]
    for cell in derivs:
        try:
            cell.probe_err = workload.probe(args, cell.result)
        except Exception as error:   # noqa: BLE001
            notes.append(f"{cell.system.name}: finite-difference probe failed: {error}")
        if cell.probe_err is not None and cell.probe_err > PROBE_TOL:
            notes.append(f"!!! WRONG: {cell.system.name}'s result disagrees with central "
                         f"finite differences: relative error {cell.probe_err:.2e} > "
                         f"{PROBE_TOL:g}")
    ref = next((c for c in derivs if c.system.key == "diffkit"), None)
    if ref is None:
        ref = next((c for c in derivs if c.probe_ok), derivs[0])
        notes.append(f"diffkit did not run; results compared with {ref.system.name}'s")
    ref.check = "reference"
    agree = []
    for cell in derivs:
        if cell is ref:
            continue
        problem = _compare(cell.result, ref.result)
        if problem:
            # Flag the cell, unless finite differences side with it against the reference
            # (then the reference is the one flagged, by its failed probe).
            vindicated = cell.probe_err is not None and cell.probe_ok and not ref.probe_ok
            cell.check = "ok" if vindicated else "MISMATCH"
            wrong = [c.system.name for c in (cell, ref) if not c.probe_ok]
            verdict = f" (finite differences side against: {', '.join(wrong)})" if wrong else ""
            notes.append(f"!!! MISMATCH: {cell.system.name} vs {ref.system.name}: "
                         f"{problem}{verdict}")
        else:
            cell.check = "ok"
            agree.append(cell.system.name)
    probes = ", ".join(f"{c.system.name} {c.probe_err:.0e}" for c in derivs
                       if c.probe_err is not None)
    compared = len(derivs) - 1
    summary = f"checks: rel. error vs finite differences: {probes or 'no probe'}"
    if compared:
        summary += (f"; agree with {ref.system.name} (rtol={RTOL:g}): "
                    f"{', '.join(agree) or 'none'}")
    return [summary] + notes


def _compare(got, ref):
    if len(got) != len(ref):
        return f"{len(got)} result arrays, expected {len(ref)}"
    for i, (g, r) in enumerate(zip(got, ref)):
        g, r = np.asarray(g), np.asarray(r)
        if g.shape != r.shape:
            return f"result {i} has shape {g.shape}, expected {r.shape}"
        atol = ATOL_SCALE * float(np.max(np.abs(r))) if r.size else 0.0
        if not np.allclose(g, r, rtol=RTOL, atol=atol):
            worst = float(np.max(np.abs(g - r) / (atol + RTOL * np.abs(r) + 1e-300)))
            return (f"result {i} differs beyond rtol={RTOL:g}, atol={atol:.1e} "
                    f"(worst element off by {worst:.3g}x the tolerance)")
    return ""


def cell_text(cell, primal):
    if cell.status == "n/a":
        return "n/a"
    if cell.status == "error":
        return "FAILED"
    if cell.status != "ok" or not cell.samples:
        return "-"
    t = cell.median()
    ratio = t / primal if primal else None
    text = f"{report.format_time(t)} ({report.format_ratio(ratio)})" \
        if cell.system.key != "numpy" else report.format_time(t)
    text += report.format_spread(cell.spread())
    if len(cell.samples) == 1:
        text += " [1 sample]"
    if cell.check == "MISMATCH" or not cell.probe_ok:
        text += " MISMATCH!"
    return text


def main(argv=None):
    opts = parse_args(argv)
    mode = "quick" if opts.quick else "full"
    rounds, min_sample, slow_limit = MODES[mode]
    rounds = opts.rounds or rounds
    wanted = None if opts.systems is None else set(opts.systems.split(","))
    workloads = WORKLOADS if opts.only is None else \
        [w for w in WORKLOADS if w.key in opts.only.split(",")]
    started = datetime.datetime.now(datetime.timezone.utc)
    t_start = time.perf_counter()
    command = "python benchmarks/run.py " + " ".join(sys.argv[1:] if argv is None else argv)

    cpu_start = report.cpu_snapshot()
    systems, skipped = available_systems(wanted)
    machine = report.machine_lines(systems, skipped, _ROOT)
    threads = ", ".join(f"{k}={v}" for k, v in pinned_threads().items())
    if any(s.key == "torch" for s in systems):
        threads += ", torch.set_num_threads(1)"
    settings = (f"{mode} mode: {rounds} interleaved rounds; one sample = mean over enough "
                f"back-to-back calls to take >= {min_sample * 1e3:g} ms; cells show the "
                f"median over rounds, (ratio to the NumPy primal) and ±IQR/median")
    print(f"diffkit benchmark, {started:%Y-%m-%d %H:%M} UTC: {command.strip()}")
    print("\n".join("  " + ln for ln in machine))
    print(f"  threads pinned to 1: {threads}")
    print(f"  {ALLOCATOR}")
    print(f"  {settings}\n")

    results, notes, memory = [], {}, []
    for workload in workloads:
        t0 = time.perf_counter()
        # Each workload's inputs depend only on the seed and the workload, not on --only.
        rng = np.random.default_rng([opts.seed, WORKLOADS.index(workload)])
        args, cells = build_cells(workload, systems, rng)
        wnotes = check_agreement(workload, args, cells)
        for cell in [c for c in cells if c.ok]:
            timing.calibrate(cell, min_sample, slow_limit)
        timing.run_rounds([c for c in cells if c.ok], rounds)
        for cell in cells:
            if cell.status == "error":
                wnotes.append(f"{cell.system.name} FAILED: {cell.message[:400]}")
            for w in cell.warnings:
                # diffkit's warnings are findings; peers' deprecation notices are noise
                if cell.system.key == "diffkit" or not w.startswith(
                        ("DeprecationWarning", "FutureWarning", "PendingDeprecationWarning")):
                    wnotes.append(f"{cell.system.name} warned: {w[:300]}")
        if workload.key == "elementwise":
            memory = measure_memory(cells, args)
        results.append((workload, cells))
        notes[workload.key] = wnotes
        primal = next((c.median() for c in cells if c.system.key == "numpy"), None)
        summary = ", ".join(f"{c.system.name} {cell_text(c, primal)}" for c in cells)
        print(f"[{workload.key}] {time.perf_counter() - t0:.1f}s: {summary}", flush=True)
        for n in wnotes:
            print(f"    {n}", flush=True)

    sections = make_sections(results, systems, memory)
    print()
    for title, headers, rows, foot in sections:
        print(f"{title}\n")
        print(report.render_text(headers, rows))
        if foot:
            print("\n" + foot)
        print()
    elapsed = time.perf_counter() - t_start
    machine.append(report.contention_line(cpu_start, report.cpu_snapshot()))
    print(f"total time {elapsed:.0f} s; {machine[-1]}")
    if opts.markdown:
        write_markdown(opts.markdown, started, command.strip(), machine, threads, settings,
                       sections, notes, results, elapsed)
        print(f"wrote {opts.markdown}")


def measure_memory(cells, args):
    """Peak traced memory of each NumPy-based system on the large elementwise workload."""
    x_bytes = args[0].nbytes
    rows = []
    for cell in cells:
        if not cell.ok:
            continue
        if cell.system.key in ("numpy", "diffkit", "diffkitjit", "autograd"):
            peak = timing.peak_memory(cell.thunk)
            rows.append((cell.system.name, peak, peak / x_bytes))
        else:
            rows.append((cell.system.name, None, None))
    return rows


def make_sections(results, systems, memory):
    names = [s.name for s in systems]
    peers = [s for s in systems if s.is_peer]
    sections = []

    def find(wkey, skey):
        for workload, cells in results:
            if workload.key == wkey:
                for c in cells:
                    if c.system.key == skey and c.ok and c.samples:
                        return c.median()
        return None

    rows = []
    for workload, cells in results:
        primal = next((c.median() for c in cells if c.system.key == "numpy"), None)
        rows.append([workload.title] + [cell_text(c, primal) for c in cells])
    sections.append(("Median time per call (ratio to the NumPy primal) ±IQR/median",
                     ["workload"] + names, rows,
                     "FAILED: see the notes; n/a: the system has no such transformation; "
                     "MISMATCH!: result disagrees with diffkit's or with finite differences."))

    if peers:
        rows = []
        for workload, _ in results:
            dk = find(workload.key, "diffkit")
            cells = []
            for s in peers:
                t = find(workload.key, s.key)
                cells.append(report.format_ratio(t / dk) if t and dk else "-")
            rows.append([workload.title] + cells)
        sections.append(("Peer time / diffkit time (above 1: diffkit is faster)",
                         ["workload"] + [s.name for s in peers], rows, ""))

    mem_ratio = next((r for name, _, r in memory if name == "diffkit"), None)
    sections.append(("Issue 3 targets (diffkit)", ["target", "measured", "met"],
                     [list(r) for r in report.target_rows(find, mem_ratio)], ""))
    if any(s.key == "diffkitjit" for s in systems):
        sections += jit_sections(results, find, memory)
    if memory:
        rows = [[name, "not seen by tracemalloc" if peak is None else
                 f"{peak / 2**20:.1f} MiB", "-" if r is None else f"{r:.2f}x"]
                for name, peak, r in memory]
        sections.append(("Peak memory, grad of sum(sin(x)*exp(-x**2)), n=10**6 (input 7.6 MiB)",
                         ["system", "peak allocated during the call (tracemalloc)",
                          "/ input bytes"], rows,
                         "Memory allocated during one call, the result included; the input "
                         "itself is not counted."))
    return sections


def jit_sections(results, find, memory):
    """The first calls of diffkit, diffkit-jit and JAX jit, and issue 12's targets."""
    rows = []
    firsts = {}
    for workload, cells in results:
        by_key = {c.system.key: c for c in cells if c.ok}
        row = [workload.title]
        for key in FIRST_CALLS:
            cell = by_key.get(key)
            if cell is None:
                row.append("-")
                continue
            firsts[workload.key, key] = cell.first_call
            text = report.format_time(cell.first_call)
            eager = find(workload.key, "diffkit")
            if key == "diffkitjit" and eager:
                text += f" ({report.format_ratio(cell.first_call / eager)} eager)"
                text += f"; 2nd call {report.format_time(cell.second_call)}"
            row.append(text)
        rows.append(row)
    sections = [("First calls (diffkit-jit: the trace; its 2nd call generates the replay "
                 "code; JAX jit: trace and compile)",
                 ["workload", "diffkit (eager)", "diffkit-jit", "JAX jit"], rows,
                 "(Nx eager): the first call over one steady eager diffkit call.")]
    mem_ratio = next((r for name, _, r in memory if name == "diffkit-jit"), None)
    sections.append(("Issue 12 targets (diffkit-jit)", ["target", "measured", "met"],
                     [list(r) for r in report.jit_target_rows(find, firsts, mem_ratio,
                                                             [w.key for w, _ in results])],
                     ""))
    return sections


def write_markdown(path, started, command, machine, threads, settings, sections, notes,
                   results, elapsed):
    out = ["# diffkit benchmark results", "",
           f"Run on **{started:%Y-%m-%d %H:%M} UTC** with `{command}` "
           f"(took {elapsed:.0f} s). Regenerate with "
           "`python benchmarks/run.py --markdown benchmarks/RESULTS.md`.", "",
           "## Machine", ""]
    out += [f"- {ln}" for ln in machine]
    out += [f"- Threads pinned to 1 before any import: {threads}",
            f"- Memory allocator: {ALLOCATOR} (so that timings do not depend on which "
            "workloads ran before)",
            "", "## Method", "",
            f"- {settings}.",
            "- Every system evaluates the same function (written once against a namespace "
            "of array functions; each system supplies its own `sin`, `tanh`, `logsumexp` "
            "...). Ratios divide by plain NumPy evaluating the function without derivatives.",
            f"- Before timing, each peer's result is compared with diffkit's "
            f"(`np.allclose`, rtol={RTOL:g}, atol={ATOL_SCALE:g}·max|diffkit|), and every "
            f"result is probed along a random direction against central finite differences "
            f"of the NumPy primal (or of a hand-written NumPy gradient, for second "
            f"derivatives; relative error <= {PROBE_TOL:g}).",
            "- JAX eager runs op by op without `jit` (float64, CPU); JAX jit is the same "
            "derivative function under `jax.jit`, compiled before timing. torch.func runs "
            "float64 CPU tensors. autograd has no vmap (per-example gradients are a Python "
            "loop over examples) and no forward-mode Jacobian (n/a).", ""]
    for title, headers, rows, foot in sections:
        out += [f"## {title}", "", report.render_markdown(headers, rows), ""]
        if foot:
            out += [foot, ""]
    out += ["## Checks and notes per workload", ""]
    for workload, _ in results:
        items = notes.get(workload.key, [])
        out.append(f"- **{workload.title}**: " + (items[0] if items else "no notes"))
        out += [f"  - {n}" for n in items[1:]]
    out.append("")
    out.append(_kept_analysis(path))
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(out))


ANALYSIS_MARKER = "<!-- hand-written analysis below: run.py keeps it when it rewrites the file -->"


def _kept_analysis(path):
    """The hand-written part at the end of an existing results file (from the marker on)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return ""
    at = text.find(ANALYSIS_MARKER)
    return text[at:] if at >= 0 else ""


if __name__ == "__main__":
    main()
