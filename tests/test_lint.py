"""The repository follows its own lint settings (``[tool.ruff]`` in ``pyproject.toml``)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _ruff():
    found = shutil.which("ruff")
    if found:
        return [found]
    try:
        import ruff  # noqa: F401  (the wheel ships the binary; python -m ruff runs it)
    except ImportError:
        # a failure, not a skip: the test extra (which the suite needs anyway: pytest,
        # Hypothesis) brings ruff, so a run without it is not the run the README describes
        pytest.fail("ruff is not installed: it comes with the test extra "
                    "(pip install '.[test]'), which the test suite is run with")
    return [sys.executable, "-m", "ruff"]


def test_ruff_check_passes():
    result = subprocess.run([*_ruff(), "check", "--no-cache", "."], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, "ruff check found problems:\n" + result.stdout + result.stderr
