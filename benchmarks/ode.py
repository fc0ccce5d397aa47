"""ODE solutions: the cost of gradients through ``odeint``/``solve_ivp``.

    python benchmarks/ode.py                      # print the figures
    python benchmarks/ode.py --markdown benchmarks/RESULTS.md

With ``--markdown`` the section between the ``ode`` markers of the file is replaced (or
appended). Each figure is the median of a few timed runs (the machine may be shared: the
ratios, measured in one run, are the figures to read). autograd's and JAX's ``odeint`` are
timed when those packages are installed, and reported as absent otherwise; the
environment variable ``ODE_PEERS`` may name a directory holding them (appended to the
import path, so that this interpreter's NumPy and SciPy still come first).
"""

import argparse
import os
import re
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import scipy.integrate as si  # noqa: E402
import scipy.sparse as sp  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
if os.environ.get("ODE_PEERS"):
    sys.path.append(os.environ["ODE_PEERS"])

from sparse import brusselator  # noqa: E402
from timing import fmt, median_time  # noqa: E402

import diffkit as dk  # noqa: E402
import diffkit.numpy as dnp  # noqa: E402
from diffkit.scipy.integrate import odeint, solve_ivp  # noqa: E402

T = np.linspace(0.0, 10.0, 100)
Y0 = np.array([1.0, 1.0])


def lv(y, t, p):
    """Lotka-Volterra; with more than 4 parameters the rest scale the rates weakly."""
    scale = 1.0 + 1e-3 * dnp.mean(p[4:]) if p.shape[0] > 4 else 1.0
    a, b, c, d = p[0] * scale, p[1], p[2], p[3]
    return dnp.stack([a * y[0] - b * y[0] * y[1], -c * y[1] + d * y[0] * y[1]])


def loss(p):
    return dnp.sum(odeint(lv, Y0, T, args=(p,)) ** 2)


def gradient_rows():
    rows = []
    for k in (4, 400):
        p = np.concatenate([[1.5, 1.0, 3.0, 1.0], np.ones(k - 4)])
        g = dk.grad(loss)(p)
        assert np.all(np.isfinite(g))
        solve = median_time(lambda p=p: odeint(lv, Y0, T, args=(p,)))
        grad = median_time(lambda p=p: dk.grad(loss)(p))
        rows.append((k, solve, grad))
    return rows


def peers(p):
    """autograd's and JAX's gradient of the same loss, when installed."""
    out = {}
    try:
        import autograd
        import autograd.numpy as anp
        from autograd.builtins import tuple as a_tuple
        from autograd.scipy.integrate import odeint as a_odeint

        def a_lv(y, t, p):
            return anp.array([p[0] * y[0] - p[1] * y[0] * y[1], -p[2] * y[1] + p[3] * y[0] * y[1]])

        a_grad = autograd.grad(lambda p: anp.sum(a_odeint(a_lv, Y0, T, a_tuple((p,))) ** 2))
        out["autograd"] = median_time(lambda: a_grad(p))
    except ImportError:
        out["autograd"] = None
    try:
        import jax
        import jax.numpy as jnp
        from jax.experimental.ode import odeint as j_odeint
        jax.config.update("jax_enable_x64", True)

        def j_lv(y, t, p):
            return jnp.stack([p[0] * y[0] - p[1] * y[0] * y[1], -p[2] * y[1] + p[3] * y[0] * y[1]])

        with jax.disable_jit():
            j_grad = jax.grad(lambda p: jnp.sum(j_odeint(j_lv, jnp.asarray(Y0), jnp.asarray(T),
                                                         p) ** 2))
            out["jax (eager)"] = median_time(lambda: j_grad(jnp.asarray(p)), runs=1)
    except ImportError:
        out["jax (eager)"] = None
    return out


def brusselator_rows(n=32):
    f_np, f_dk = brusselator(np, n), brusselator(dnp, n)
    y0 = np.random.default_rng(0).uniform(0.5, 2.0, 2 * n * n)
    pattern = sp.csr_matrix(dk.jacobian_sparsity(f_dk)(y0))
    calls = []

    def counted(t, y):
        calls.append(t)
        return f_np(y)

    span, opts = (0.0, 1.0), dict(method="BDF", rtol=1e-6, atol=1e-8)
    def rhs_np(t, y):
        return f_np(y)

    def rhs_dk(t, y):
        return f_dk(y)

    ref = si.solve_ivp(counted, span, y0, jac_sparsity=pattern, **opts)
    start = time.perf_counter()   # the first call detects the pattern and colours it
    ours = solve_ivp(rhs_dk, span, y0, **opts)
    t_first = time.perf_counter() - start
    error = np.abs(ours.y[:, -1] - ref.y[:, -1]).max()
    t_ref = median_time(lambda: si.solve_ivp(rhs_np, span, y0, jac_sparsity=pattern, **opts))
    t_ours = median_time(lambda: solve_ivp(rhs_dk, span, y0, **opts))
    return dict(n=n, calls_ref=len(calls), nfev=ours.nfev, njev=ours.njev, error=error,
                t_ref=t_ref, t_ours=t_ours, t_first=t_first)


def report():
    rows = gradient_rows()
    peer = peers(np.array([1.5, 1.0, 3.0, 1.0]))
    bru = brusselator_rows()
    lines = ["<!-- ode:start -->", "## ODE solutions (`benchmarks/ode.py`)", "",
             "Shared 2-core machine: the ratios, measured in one run, are the figures to read.",
             "", "### Gradient of a scalar loss of an `odeint` solution (Lotka-Volterra, "
             "100 output times)", "",
             "| parameters | forward solve | `dk.grad` | gradient / solve |", "|---|---|---|---|"]
    for k, solve, grad in rows:
        lines.append(f"| {k} | {fmt(solve)} | {fmt(grad)} | {grad / solve:.1f}x |")
    lines += ["", "| peer gradient (4 parameters) | time | peer / `dk.grad` |", "|---|---|---|"]
    for name, t in peer.items():
        shown = "not installed here" if t is None else fmt(t)
        ratio = "" if t is None else f"{t / rows[0][2]:.1f}x"
        lines.append(f"| {name} | {shown} | {ratio} |")
    lines += ["", f"### Brusselator 2-D, N = {bru['n']} ({2 * bru['n'] ** 2} unknowns), "
              "`solve_ivp(method=\"BDF\")`, t in [0, 1]", "",
              "| | right-hand side calls | time |", "|---|---|---|",
              f"| SciPy, finite differences with `jac_sparsity` | {bru['calls_ref']} | "
              f"{fmt(bru['t_ref'])} |",
              f"| diffkit, exact sparse `jac` ({bru['njev']} Jacobians) | {bru['nfev']} | "
              f"{fmt(bru['t_ours'])} |",
              f"| diffkit, first call (pattern detection and colouring included) | "
              f"{bru['nfev']} | {fmt(bru['t_first'])} |", "",
              f"Largest difference between the two final states: {bru['error']:.1e}.",
              "<!-- ode:end -->"]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--markdown")
    text = report()
    args = parser.parse_args()
    print(text)
    if args.markdown:
        path = Path(args.markdown)
        old = path.read_text()
        if "<!-- ode:start -->" in old:
            new = re.sub(r"<!-- ode:start -->.*<!-- ode:end -->", lambda m: text, old, flags=re.S)
        else:
            new = old.rstrip("\n") + "\n\n" + text + "\n"
        path.write_text(new)


if __name__ == "__main__":
    main()
