"""The README's Python examples run as written, its quick start matches CI, and the tour that
the quick start runs (``python -m diffkit``) checks out."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_example_runs(code):
    exec(compile(code, str(README), "exec"), {})


def quick_start_commands():
    """The two commands of the README's "Quick start" block: ``[tour, tests]``."""
    section = README.read_text().split("## Quick start", 1)[1]
    shell = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    return [line.split("#")[0].strip() for line in shell.splitlines() if line.strip()]


def test_quick_start_has_the_tour_and_the_tests():
    tour, tests = quick_start_commands()
    assert tour == "pip install . && python -m diffkit"
    assert tests.startswith("pip install '.[test]' && python -m pytest")


def test_quick_start_test_command_is_what_ci_runs():
    test_command = quick_start_commands()[1]
    ci = (ROOT / ".ci" / "run").read_text()
    assert test_command in ci


def test_tour_runs_and_checks_every_number():
    # The tour asserts each number against its closed form and stops on the first mismatch.
    done = subprocess.run([sys.executable, "-m", "diffkit"], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "Every number above matched its closed form." in done.stdout
    assert "notebooks/01_backward_is_a_vjp.ipynb" in done.stdout


PUBLIC_MODULES = ["diffkit", "diffkit.numpy", "diffkit.numpy.linalg", "diffkit.numpy.fft",
                  "diffkit.scipy.special", "diffkit.scipy.optimize", "diffkit.tree_util",
                  "diffkit.flatten_util", "diffkit.testing", "diffkit.testing.strategies",
                  "diffkit.jit", "diffkit.errors"]


def test_readme_lists_every_public_module_and_the_suite_time():
    import importlib

    text = README.read_text()
    section = text.split("## Public modules", 1)[1].split("\n## ", 1)[0]
    for name in PUBLIC_MODULES:
        importlib.import_module(name)
        assert f"`{name}" in section, name
    for name in ("linalg", "stats", "signal", "integrate"):
        importlib.import_module(f"diffkit.scipy.{name}")
        assert f".{name}`" in section, name
    from diffkit.flatten_util import ravel_pytree  # named, and it exists

    assert callable(ravel_pytree) and "`diffkit.flatten_util.ravel_pytree`" in section
    assert "test suite takes about 3 to 5 minutes" in text
