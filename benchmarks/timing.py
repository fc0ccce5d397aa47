"""Timing: warm-up, inner-repeat calibration, interleaved rounds, medians and spread."""

import gc
import math
import time
import tracemalloc
import warnings

import numpy as np


class Cell:
    """One (workload, system) pair: its thunk, status, checks and timing samples."""

    probe_tol = 1e-5              # set by run.py

    def __init__(self, workload, system):
        self.workload, self.system = workload, system
        self.thunk = None
        self.status = "pending"   # ok | error | n/a
        self.message = ""
        self.result = None        # the warm-up result as a list of NumPy arrays
        self.check = ""           # reference | ok | MISMATCH (with the reference) | ""
        self.probe_err = None     # relative error against finite differences
        self.warnings = []
        self.inner = 1
        self.max_rounds = None    # None: every round; 1 for a cell too slow to repeat
        self.samples = []
        self.first_call = None    # seconds of the first (warm-up) call: a jit's trace
        self.second_call = None

    @property
    def ok(self):
        return self.status == "ok"

    @property
    def probe_ok(self):
        return self.probe_err is None or self.probe_err <= self.probe_tol

    def median(self):
        return float(np.median(self.samples)) if self.samples else None

    def spread(self):
        """Interquartile range of the samples divided by their median."""
        if len(self.samples) < 2:
            return None
        q1, q3 = np.percentile(self.samples, [25, 75])
        return float((q3 - q1) / np.median(self.samples))


def warm_up(cell):
    """Run the thunk once (compiles, caches), recording warnings and failures."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = cell.thunk()
            cell.result = cell.system.leaves(out)
            cell.status = "ok"
        except Exception as error:   # noqa: BLE001 - a failing cell must not stop the run
            cell.status = "error"
            cell.message = f"{type(error).__name__}: {error}".strip()
    seen = []
    for w in caught:
        text = f"{w.category.__name__}: {w.message}"
        if text not in seen:
            seen.append(text)
    cell.warnings = seen


def _run(thunk, n):
    start = time.perf_counter()
    for _ in range(n):
        thunk()
    return time.perf_counter() - start


def _failed(cell, error):
    cell.status = "error"
    cell.message = f"failed while timing: {type(error).__name__}: {error}"


def calibrate(cell, min_sample, slow_limit):
    """Choose ``cell.inner`` so that one sample (``inner`` calls) takes ``>= min_sample``."""
    try:
        _calibrate(cell, min_sample, slow_limit)
    except Exception as error:   # noqa: BLE001 - a failing cell must not stop the run
        _failed(cell, error)


def _calibrate(cell, min_sample, slow_limit):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        once = _run(cell.thunk, 1)
        if once >= slow_limit:
            cell.inner, cell.max_rounds = 1, 1
            return
        n = max(1, math.ceil(min_sample / max(once, 1e-9)))
        for _ in range(4):
            total = _run(cell.thunk, n)
            if total >= 0.8 * min_sample:
                break
            n = max(n + 1, math.ceil(n * min_sample / max(total, 1e-9)))
        cell.inner = min(n, 10 ** 7)


def run_rounds(cells, rounds):
    """Round ``r`` times every cell once, starting at a different system each round; one
    sample is the mean time per call over ``cell.inner`` back-to-back calls."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for r in range(rounds):
            gc.collect()
            k = r % len(cells)
            for cell in cells[k:] + cells[:k]:
                if not cell.ok or (cell.max_rounds is not None and
                                   len(cell.samples) >= cell.max_rounds):
                    continue
                try:
                    cell.samples.append(_run(cell.thunk, cell.inner) / cell.inner)
                except Exception as error:   # noqa: BLE001
                    _failed(cell, error)


def peak_memory(thunk):
    """Peak bytes allocated (and seen by tracemalloc) while ``thunk()`` runs, result
    included; memory allocated before the call (the inputs) is not counted."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gc.collect()
        tracemalloc.start()
        try:
            out = thunk()
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    del out
    return peak


def median_time(thunk, runs=3, warm_up=False):
    """The median wall-clock time of ``runs`` calls of ``thunk`` (after one untimed call
    with ``warm_up``): the figure of the standalone benchmark scripts."""
    if warm_up:
        thunk()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        thunk()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def fmt(seconds):
    """Seconds as milliseconds below one second."""
    return f"{seconds * 1e3:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"
