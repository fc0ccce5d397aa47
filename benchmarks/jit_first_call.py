"""jit's first call against the program's length: does it grow like the program?

    python benchmarks/jit_first_call.py                       # 10**2, 10**3, 10**4 operations
    python benchmarks/jit_first_call.py --sizes 100,1000,10000,30000
    python benchmarks/jit_first_call.py --markdown benchmarks/RESULTS.md
    python benchmarks/jit_first_call.py --profile grad --sizes 10000   # where the time goes

Programs of about ``n`` primitive operations on a vector of 8 entries:

- ``elementwise``: ``x = sin(x) * 0.9 + x * 0.1`` repeated, then ``sum(x)``;
- ``reductions``: reversal by indexing, a mean and an element read each step
  (``x = x * 0.9 + 0.1 * sin(x[::-1]) - 0.01 * mean(x) + 0.001 * x[0]``), then ``sum(x)``;
- ``grad`` and ``grad_reductions``: ``dk.grad`` of those two (a graph of about twice as
  many operations as the function: the forward pass, the backward pass, NaN checks).

For each program and size: one steady eager call (the least over 5 samples of the mean
time of enough calls to take 20 ms); the first call of a fresh ``dk.jit`` (the trace and
the optimisation passes), with a separate trace and a separate run of the passes on its
recording to split it; the second call, which generates and compiles the replay (then
replays once). Each figure is the least over ``--rounds`` fresh jits, in processor time
of this process (``time.process_time``: threads are pinned to one, so it is the work
done, without the moments other programs had the processor; ``--wall`` for wall-clock
time), with a garbage collection before each timed call. The growth exponent is
``log(t2 / t1) / log(n2 / n1)`` between consecutive sizes, by recorded operations: 1 for
linear time. The jitted results (first and second call) must equal the eager one bit for
bit.

With ``--markdown`` the section between the ``jit-first-call`` markers of the file is
replaced, or inserted before the section that follows the jit analysis.
"""

import os
import sys

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import cProfile  # noqa: E402
import gc  # noqa: E402
import math  # noqa: E402
import pstats  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

_HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(_HERE.parent))   # the diffkit of this checkout

import numpy as np  # noqa: E402

import diffkit as dk  # noqa: E402
import diffkit.numpy as dnp  # noqa: E402
from diffkit.interpreters.staging import stage_flat  # noqa: E402
from diffkit.jit import passes  # noqa: E402

START, END = "<!-- jit-first-call:start -->", "<!-- jit-first-call:end -->"
#: Where a new section goes: before the heading that follows the jit analysis.
INSERT_BEFORE = "## Missed targets: where the time goes and what would close the gap"

SIZE = 8   # entries of the vector
OPS_PER_STEP = {"elementwise": 4, "reductions": 12}


def elementwise(n):
    """About ``n`` operations: ``n // 4`` steps of 4, and the sum."""
    steps = max(1, n // OPS_PER_STEP["elementwise"])

    def f(x):
        for _ in range(steps):
            x = dnp.sin(x) * 0.9 + x * 0.1
        return dnp.sum(x)
    return f


def reductions(n):
    """About ``n`` operations with indexing and reductions: steps of 12, and the sum."""
    steps = max(1, n // OPS_PER_STEP["reductions"])

    def f(x):
        for _ in range(steps):
            x = x * 0.9 + 0.1 * dnp.sin(x[::-1]) - 0.01 * dnp.mean(x) + 0.001 * x[0]
        return dnp.sum(x)
    return f


PROGRAMS = {
    "elementwise": elementwise,
    "reductions": reductions,
    "grad": lambda n: dk.grad(elementwise(n)),
    "grad_reductions": lambda n: dk.grad(reductions(n)),
}


def recorded_ops(fun, x):
    """The number of operations staging records for ``fun`` at ``x``, and after the passes."""
    graph = dk.make_graph(fun)(x)
    return len(graph.recording.equations), graph.num_ops


class Clock:
    def __init__(self, wall):
        self.now = time.perf_counter if wall else time.process_time

    def time(self, thunk):
        gc.collect()
        start = self.now()
        out = thunk()
        return self.now() - start, out

    def steady(self, thunk, samples=5, min_time=0.02):
        """The least over ``samples`` of the mean time of enough calls to take
        ``min_time`` (after a warm-up call)."""
        thunk()
        repeats = max(1, int(min_time / max(self.time(thunk)[0], 1e-6)))
        means = []
        for _ in range(samples):
            gc.collect()
            start = self.now()
            for _ in range(repeats):
                thunk()
            means.append((self.now() - start) / repeats)
        return min(means)


def measure(program, n, rounds, clock, x):
    """The figures of one program at one size (a dict of seconds and counts)."""
    fun = PROGRAMS[program](n)
    expected = fun(x)
    eager = clock.steady(lambda: fun(x))
    firsts, seconds, traces, passes_times = [], [], [], []
    for _ in range(rounds):
        first, second, trace, optimise = one_jit(fun, x, clock)
        for got in (first[1], second[1]):
            if not np.array_equal(got, expected) or np.asarray(got).dtype != \
                    np.asarray(expected).dtype:
                raise AssertionError(f"{program} n={n}: jit gives {got}, eagerly {expected}")
        firsts.append(first[0])
        seconds.append(second[0])
        traces.append(trace)
        passes_times.append(optimise)
    ops, after = recorded_ops(fun, x)
    return {"eager": eager, "first": min(firsts), "second": min(seconds),
            "trace": min(traces), "passes": min(passes_times), "ops": ops,
            "after": after}


def one_jit(fun, x, clock):
    """The first and second calls of a fresh jit of ``fun`` (each ``(time, result)``), and
    the times of a separate trace and of the passes on its recording."""
    jitted = dk.jit(fun)
    first = clock.time(lambda: jitted(x))
    second = clock.time(lambda: jitted(x))
    trace, (_, recording) = clock.time(lambda: stage_flat(lambda y: [fun(y)], [x]))
    optimise = clock.time(lambda: passes.optimise(recording))[0]
    return first, second, trace, optimise


def fmt(seconds):
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} us"


def exponent(rows, key, i):
    """The growth exponent of ``key`` from row ``i - 1`` to row ``i`` (by recorded ops)."""
    a, b = rows[i - 1], rows[i]
    return math.log(b[key] / a[key]) / math.log(b["ops"] / a["ops"])


def table(results):
    """Markdown lines: one row per program and size."""
    lines = ["| program | n (recorded ops, after passes) | eager call | jit 1st call "
             "(trace + passes) | 1st / eager | growth of the 1st call | jit 2nd call "
             "(code generation) | 2nd / eager |",
             "|---|---|---|---|---|---|---|---|"]
    for program, rows in results.items():
        for i, r in enumerate(rows):
            growth = f"n^{exponent(rows, 'first', i):.2f}" if i else "-"
            lines.append(
                f"| {program} | {r['n']} ({r['ops']}, {r['after']}) | {fmt(r['eager'])} | "
                f"{fmt(r['first'])} ({fmt(r['trace'])} + {fmt(r['passes'])}) | "
                f"{r['first'] / r['eager']:.1f}x | {growth} | {fmt(r['second'])} | "
                f"{r['second'] / r['eager']:.1f}x |")
    return lines


def profile(program, n, x, top):
    """Print where the first and the second call of a fresh jit spend their time."""
    jitted = dk.jit(PROGRAMS[program](n))
    for which in ("first", "second"):
        profiler = cProfile.Profile()
        gc.collect()
        profiler.enable()
        jitted(x)
        profiler.disable()
        print(f"--- {program}, n={n}: the {which} call, by own time")
        pstats.Stats(profiler).sort_stats("tottime").print_stats(top)


def section(results, opts, started, load):
    clock = "wall-clock" if opts.wall else "processor"
    lines = [START, "### jit's first call against the program's length (issue 27)", "",
             f"Run on **{started}** with `python benchmarks/jit_first_call.py "
             f"--sizes {opts.sizes} --markdown benchmarks/RESULTS.md` ({opts.rounds} fresh "
             f"jits per cell, the least {clock} time of each; load average {load:.2f} at "
             f"the start, {os.getloadavg()[0]:.2f} at the end: the machine has "
             f"{os.cpu_count()} cores shared with other jobs). "
             "Programs of about n operations on a vector of 8 entries: `elementwise` is "
             "`x = sin(x) * 0.9 + x * 0.1` repeated, `reductions` adds a reversal by "
             "indexing, a mean and an element read per step, `grad` and "
             "`grad_reductions` are their gradients (`dk.grad`). The growth is the "
             "exponent between consecutive sizes (1: linear). Issue 12's goal: the "
             "first call at most 20x one eager call.",
             "", *table(results), END]
    return "\n".join(lines)


def write_markdown(path, text):
    path = Path(path)
    old = path.read_text() if path.exists() else ""
    if START in old and END in old:
        new = old[:old.index(START)] + text + old[old.index(END) + len(END):]
    elif INSERT_BEFORE in old:
        at = old.index(INSERT_BEFORE)
        new = old[:at] + text + "\n\n" + old[at:]
    else:
        new = old.rstrip("\n") + "\n\n" + text + "\n"
    path.write_text(new)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", default="100,1000,10000")
    p.add_argument("--programs", default=",".join(PROGRAMS))
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--wall", action="store_true", help="wall-clock instead of processor time")
    p.add_argument("--markdown", metavar="FILE")
    p.add_argument("--profile", metavar="PROGRAM", help="profile one program instead")
    p.add_argument("--top", type=int, default=25)
    opts = p.parse_args(argv)
    sizes = [int(s) for s in opts.sizes.split(",")]
    x = np.linspace(0.1, 1.0, SIZE)
    if opts.profile:
        for n in sizes:
            profile(opts.profile, n, x, opts.top)
        return
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load = os.getloadavg()[0]
    clock = Clock(opts.wall)
    results = {}
    for program in opts.programs.split(","):
        results[program] = rows = []
        for n in sizes:
            row = measure(program, n, opts.rounds, clock, x)
            row["n"] = n
            rows.append(row)
            print(f"{program} n={n}: eager {fmt(row['eager'])}, first {fmt(row['first'])} "
                  f"({row['first'] / row['eager']:.1f}x; trace {fmt(row['trace'])}, passes "
                  f"{fmt(row['passes'])}), second {fmt(row['second'])}", flush=True)
    text = section(results, opts, started, load)
    print(text)
    if opts.markdown:
        write_markdown(opts.markdown, text)


if __name__ == "__main__":
    main()
