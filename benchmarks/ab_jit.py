"""diffkit-jit of this checkout against diffkit-jit of another commit, in one process.

    python benchmarks/ab_jit.py --base main                  # every workload
    python benchmarks/ab_jit.py --base 4621366 --only hvp,mlp --rounds 41

The other commit's ``diffkit/`` is extracted with ``git archive`` into a temporary
folder as a package named ``diffkit_base`` (diffkit imports itself relatively), so both
versions run side by side: the NumPy primal, eager diffkit, the base's jit and this
checkout's jit take turns in every round, and a busy moment of a shared machine falls on
all four alike. Each sample is the mean over enough calls to take ``--sample`` seconds;
the table shows medians over rounds, as ratios to the primal, for two clocks: wall-clock
time and the processor time of this process (``time.process_time``; BLAS is pinned to one
thread, so it is the work done, without the moments when other programs had the
processor, though it still counts waits on memory that they share).
"""

import os
import sys

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.dirname(_HERE)
sys.path.insert(0, _HERE)
sys.path.insert(0, _ROOT)

import numpy as np  # noqa: E402
import run  # noqa: E402,F401  (the allocator settings of the benchmark run)
from systems import DiffkitJitSystem, DiffkitSystem, NumPySystem, _Namespace  # noqa: E402
from workloads import WORKLOADS  # noqa: E402


def base_package(commit, folder):
    """Import the ``diffkit`` of ``commit`` as ``diffkit_base``."""
    archive = subprocess.run(["git", "-C", _ROOT, "archive", commit, "diffkit"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", folder], input=archive, check=True)
    shutil.move(os.path.join(folder, "diffkit"), os.path.join(folder, "diffkit_base"))
    sys.path.insert(0, folder)
    import diffkit_base
    import diffkit_base.numpy
    return diffkit_base


class BaseJit(DiffkitJitSystem):
    key, name = "diffkitjit_base", "diffkit-jit (base)"

    def __init__(self, package):
        super().__init__()
        dnp = package.numpy
        self.dk = package
        self.ns = _Namespace(sin=dnp.sin, cos=dnp.cos, exp=dnp.exp, tanh=dnp.tanh,
                             log1p=dnp.log1p, sum=dnp.sum, mean=dnp.mean,
                             logsumexp=dnp.logsumexp)


def measure(workload, systems, rounds, sample):
    args = workload.setup(np.random.default_rng([0, WORKLOADS.index(workload)]))
    numpy, eager, base, jit = systems
    derivative = {s.name: workload.derivative(s, args) for s in (eager, base, jit)}
    for name in (base.name, jit.name):
        derivative[name](*args)
        derivative[name](*args)
    reference = eager.leaves(derivative[eager.name](*args))
    for name in (base.name, jit.name):
        for got, want in zip(eager.leaves(derivative[name](*args)), reference):
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-300)
    calls = {"NumPy primal": workload.primal(numpy.ns, args)}
    calls.update({name: (lambda f=f: f(*args)) for name, f in derivative.items()})
    counts = {}
    for name, f in calls.items():
        start = time.perf_counter()
        f()
        counts[name] = max(1, int(sample / max(time.perf_counter() - start, 1e-7)))
    wall = {name: [] for name in calls}
    cpu = {name: [] for name in calls}
    for _ in range(rounds):
        for name, f in calls.items():
            t, c = time.perf_counter(), time.process_time()
            for _ in range(counts[name]):
                f()
            cpu[name].append((time.process_time() - c) / counts[name])
            wall[name].append((time.perf_counter() - t) / counts[name])
    return ({n: float(np.median(v)) for n, v in wall.items()},
            {n: float(np.median(v)) for n, v in cpu.items()})


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--base", required=True, help="the commit to compare with (git revision)")
    p.add_argument("--only", help="comma-separated workload keys")
    p.add_argument("--rounds", type=int, default=21)
    p.add_argument("--sample", type=float, default=0.02, help="seconds per sample")
    opts = p.parse_args(argv)
    warnings.simplefilter("ignore")
    workloads = WORKLOADS if opts.only is None else \
        [w for w in WORKLOADS if w.key in opts.only.split(",")]
    folder = tempfile.mkdtemp(prefix="diffkit-base-")
    try:
        systems = (NumPySystem(), DiffkitSystem(), BaseJit(base_package(opts.base, folder)),
                   DiffkitJitSystem())
        print(f"base {opts.base}; load average {os.getloadavg()[0]:.2f}; "
              f"{opts.rounds} rounds of >= {opts.sample * 1e3:g} ms samples")
        print("workload | clock | eager | jit (base) | jit (this checkout) | this / base")
        for workload in workloads:
            for clock, med in zip(("wall", "cpu"), measure(workload, systems, opts.rounds,
                                                           opts.sample)):
                p0 = med["NumPy primal"]
                e, b, j = (med[s.name] for s in systems[1:])
                print(f"{workload.key} | {clock} | {e / p0:.3g}x | {b / p0:.3g}x | "
                      f"{j / p0:.3g}x | {j / b:.3f}", flush=True)
        print(f"load average at the end {os.getloadavg()[0]:.2f}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
