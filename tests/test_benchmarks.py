"""The benchmark script runs, and every system's result passes its checks (no timing)."""

import subprocess
import sys
from pathlib import Path

RUN = Path(__file__).resolve().parents[1] / "benchmarks" / "run.py"


def test_quick_benchmark_runs_and_checks_pass():
    done = subprocess.run([sys.executable, str(RUN), "--quick", "--systems", "none",
                           "--rounds", "1"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    report = done.stdout
    assert "diffkit" in report
    assert "FAILED" not in report.split("FAILED: see the notes")[0]
    assert "MISMATCH!" not in report.split("MISMATCH!: result")[0]
