"""docs/coverage.md is what docs/make_coverage.py generates, and the counts meet issue 4's."""

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(np.lib.NumpyVersion(np.__version__) < "2.0.0",
                    reason="the table is generated with NumPy 2, whose namespace has more names")
def test_coverage_table_is_up_to_date():
    done = subprocess.run([sys.executable, str(ROOT / "docs" / "make_coverage.py"), "--check"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_counts_meet_the_targets():
    text = (ROOT / "docs" / "coverage.md").read_text()
    counts = {m.group(1): int(m.group(2))
              for m in re.finditer(r"^\| `([\w.]+)` \| (\d+) \|", text, re.M)}
    numpy_names = counts["diffkit.numpy"] + counts["diffkit.numpy.linalg"] + \
        counts["diffkit.numpy.fft"]
    assert numpy_names >= 250
    assert counts["diffkit.scipy.special"] >= 45
    assert counts["diffkit.scipy.linalg"] >= 18
