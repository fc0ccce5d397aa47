"""Formatting: the machine description, tables as text or Markdown, the issue-3 targets."""

import os
import platform
import subprocess
import time

import numpy as np


def format_time(seconds):
    if seconds is None:
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale or unit == "us":
            value = seconds / scale
            return f"{value:.3g} {unit}" if value < 1000 else f"{value:.0f} {unit}"
    return "-"


def format_ratio(ratio):
    if ratio is None or not np.isfinite(ratio):
        return "-"
    return f"{ratio:.3g}x" if ratio < 1000 else f"{ratio:.0f}x"


def format_spread(spread):
    return "" if spread is None else f" ±{100 * spread:.0f}%"


# --- tables --------------------------------------------------------------------------------


def render_text(headers, rows):
    widths = [max(len(str(r[i])) for r in [headers] + rows) for i in range(len(headers))]
    line = "  ".join("-" * w for w in widths)
    out = ["  ".join(str(h).ljust(w) for h, w in zip(headers, widths)), line]
    out += ["  ".join(str(c).ljust(w) for c, w in zip(row, widths)) for row in rows]
    return "\n".join(out)


def render_markdown(headers, rows):
    def esc(c):
        return str(c).replace("|", "\\|")
    out = ["| " + " | ".join(esc(h) for h in headers) + " |",
           "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


# --- the machine -----------------------------------------------------------------------------


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            lines = f.read().splitlines()
    except OSError:
        return platform.processor() or "?", None
    models = [ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("model name")]
    count = sum(1 for ln in lines if ln.startswith("processor"))
    model = models[0] if models else platform.processor() or "?"
    flags = next((ln.split(":", 1)[1].split() for ln in lines if ln.startswith("flags")), [])
    simd = [f for f in ("sse4_2", "avx", "avx2", "fma", "avx512f") if f in flags]
    return model + (f" (SIMD: {' '.join(simd)})" if simd else ""), count


def _git(root, *args):
    try:
        return subprocess.run(["git", "-C", root, *args], capture_output=True, text=True,
                              timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def machine_lines(systems, skipped, repo_root):
    model, count = _cpu_model()
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    lines = [f"CPU: {model}; {count or os.cpu_count()} logical CPUs ({usable} usable by this "
             f"process)",
             f"OS: {platform.platform()}",
             f"Python: {platform.python_implementation()} {platform.python_version()}"]
    blas = "?"
    try:
        info = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        blas = f"{info.get('name', '?')} {info.get('version', '')}".strip()
    except Exception:   # noqa: BLE001 - older NumPy: leave it unknown
        pass
    lines.append(f"NumPy: {np.__version__} (BLAS: {blas})")
    lines.append(load_line("at start"))
    commit = _git(repo_root, "rev-parse", "--short", "HEAD")
    dirty = _git(repo_root, "status", "--porcelain", "--", "diffkit")
    where = f"commit {commit}{' + uncommitted changes in diffkit/' if dirty else ''}" \
        if commit else "not a git checkout"
    for s in systems:
        if s.key == "diffkit":
            lines.append(f"diffkit: {s.version()} ({where})")
        elif s.key not in ("numpy", "jaxjit"):
            lines.append(f"{s.name}: {s.version()}")
    for name, why in skipped.items():
        lines.append(f"{name}: {why}")
    return lines


def load_line(when):
    """The load average, which says whether other processes competed for the CPUs."""
    try:
        one, five, _ = os.getloadavg()
    except OSError:
        return f"load average {when}: unknown"
    busy = " (other processes were busy: timings may be noisy)" if one > 0.5 else ""
    return f"load average {when}: {one:.2f} (1 min), {five:.2f} (5 min){busy}"


def cpu_snapshot():
    """(CPU seconds busy on the whole machine, CPU seconds of this process, wall time)."""
    busy = None
    try:
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:]]
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0)   # idle + iowait
        busy = (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        pass
    t = os.times()
    return busy, t.user + t.system, time.monotonic()


def contention_line(start, end):
    """How many CPUs other processes kept busy, on average, between two snapshots."""
    if start[0] is None or end[0] is None or end[2] <= start[2]:
        return "CPU use by other processes during the run: unknown"
    others = ((end[0] - start[0]) - (end[1] - start[1])) / (end[2] - start[2])
    others = max(others, 0.0)
    busy = " (timings may be noisy)" if others > 0.25 else ""
    return f"CPU use by other processes during the run: {others:.2f} CPUs on average{busy}"


# --- issue 3's targets ----------------------------------------------------------------------


def _fmt(value, kind):
    return format_ratio(value) if kind == "x" else f"{value:.3g}"


def target_rows(median, memory_ratio):
    """Rows (target, measured, met) for the speed and memory targets of issue 3.

    ``median(workload_key, system_key)`` is a median time or None.
    """
    rows = []

    def ratio(a, b):
        return None if a is None or b is None else a / b

    def add(target, value, ok, shown):
        if value is None:
            rows.append((target, "not measured", "n/a"))
        else:
            rows.append((target, shown, "yes" if ok(value) else "NO"))

    dk = lambda w: median(w, "diffkit")            # noqa: E731
    primal = lambda w: median(w, "numpy")          # noqa: E731
    peer = lambda w, s: median(w, s)               # noqa: E731

    r = ratio(dk("chain"), peer("chain", "autograd"))
    add("scalar chain: diffkit time <= 0.5 x autograd's", r, lambda v: v <= 0.5,
        f"{r:.3g} x autograd's" if r is not None else "")
    r = ratio(dk("mlp"), primal("mlp"))
    add("MLP gradient: <= 2.6x the NumPy primal", r, lambda v: v <= 2.6, format_ratio(r))
    r = ratio(peer("hessian", "torch"), dk("hessian"))
    add("Rosenbrock Hessian: >= 5x faster than torch.func", r, lambda v: v >= 5,
        f"{r:.3g}x faster" if r is not None else "")
    r = ratio(peer("hessian", "autograd"), dk("hessian"))
    add("Rosenbrock Hessian: >= 30x faster than autograd", r, lambda v: v >= 30,
        f"{r:.3g}x faster" if r is not None else "")
    for key, mode in (("jacrev", "reverse"), ("jacfwd", "forward")):
        r = ratio(peer(key, "torch"), dk(key))
        add(f"Jacobian n=300 ({mode}): faster than torch.func ({mode})", r, lambda v: v > 1,
            f"{r:.3g}x faster" if r is not None else "")
        # autograd's only Jacobian is reverse mode: both rows compare with it.
        r = ratio(peer("jacrev", "autograd"), dk(key))
        add(f"Jacobian n=300 ({mode}): >= 20x faster than autograd's jacobian", r,
            lambda v: v >= 20, f"{r:.3g}x faster" if r is not None else "")
    r = ratio(dk("hvp"), primal("hvp"))
    add("Hessian-vector product: <= 2.5x the primal", r, lambda v: v <= 2.5, format_ratio(r))
    r = ratio(peer("per_example", "torch"), dk("per_example"))
    add("per-example gradients: faster than torch.func", r, lambda v: v > 1,
        f"{r:.3g}x faster" if r is not None else "")
    r = ratio(dk("per_example"), primal("per_example"))
    add("per-example gradients: within 15x of the primal", r, lambda v: v <= 15,
        format_ratio(r))
    r = ratio(dk("elementwise"), primal("elementwise"))
    add("large elementwise gradient: <= 2.0x the primal", r, lambda v: v <= 2.0,
        format_ratio(r))
    add("large elementwise gradient: peak memory < 4x the input", memory_ratio,
        lambda v: v < 4, f"{memory_ratio:.3g}x the input" if memory_ratio is not None else "")
    return rows


# --- issue 12's targets (diffkit.jit) ---------------------------------------------------------

JIT_GOALS = (   # workload key, the row, goal for the ratio to the NumPy primal
    ("chain", "grad of the 200-op scalar chain", 5.0),
    ("per_example", "per-example gradients, vmap(grad)", 8.0),
    ("per_example_loop", "jit(grad) called per example in a Python loop", 10.0),
    ("mlp", "MLP gradient", 2.4),
    ("hvp", "Hessian-vector product n=2000", 2.5),
    ("elementwise", "big elementwise gradient n=1e6", 1.7),
)


def jit_target_rows(median, first_calls, memory_ratio, keys):
    """Rows (target, measured, met) for issue 12: each row's ratio to the primal, never
    slower than eager diffkit, the first call against eager and against JAX's compile,
    the geometric mean against JAX jit, and the elementwise gradient's peak memory.

    ``median(workload_key, system_key)`` is a median time or None; ``first_calls`` maps
    ``(workload_key, system_key)`` to a first call's seconds; ``keys`` the workloads run.
    """
    rows = []

    def add(target, value, ok, shown):
        if value is None:
            rows.append((target, "not measured", "n/a"))
        else:
            rows.append((target, shown, "yes" if ok(value) else "NO"))

    for key, title, goal in JIT_GOALS:
        jit, primal = median(key, "diffkitjit"), median(key, "numpy")
        r = None if jit is None or primal is None else jit / primal
        add(f"{title}: <= {goal:g}x the primal", r, lambda v, g=goal: v <= g, format_ratio(r))
    for key in keys:
        jit, eager = median(key, "diffkitjit"), median(key, "diffkit")
        r = None if jit is None or eager is None else jit / eager
        add(f"{key}: never slower than eager diffkit", r, lambda v: v <= 1.0,
            f"{format_ratio(r)} eager's time")
    for key in keys:
        first, eager = first_calls.get((key, "diffkitjit")), median(key, "diffkit")
        r = None if first is None or eager is None else first / eager
        add(f"{key}: first call <= 20x one eager call", r, lambda v: v <= 20,
            format_ratio(r))
        jax_first = first_calls.get((key, "jaxjit"))
        r = None if first is None or jax_first is None else first / jax_first
        add(f"{key}: first call < JAX's trace and compile", r, lambda v: v < 1,
            f"{format_ratio(r)} JAX's")
    ratios = [median(k, "diffkitjit") / median(k, "jaxjit") for k in keys
              if median(k, "diffkitjit") and median(k, "jaxjit")]
    geo = float(np.exp(np.mean(np.log(ratios)))) if ratios else None
    add("geometric mean of diffkit-jit time / JAX jit time <= 2", geo, lambda v: v <= 2,
        f"{format_ratio(geo)} over {len(ratios)} rows")
    add("big elementwise gradient: peak memory <= 3x the input", memory_ratio,
        lambda v: v <= 3, f"{memory_ratio:.3g}x the input" if memory_ratio is not None else "")
    return rows
