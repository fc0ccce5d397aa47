"""The README's Python examples run as written and show what they print, its quick start
matches CI, it lists every notebook, and the tour that the quick start runs
(``python -m diffkit``) checks out and points at the notebooks."""

import re
import subprocess
import sys
from pathlib import Path

import pytest
from doc_examples import python_blocks, run_example

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BLOCKS = python_blocks(README.read_text())
NOTEBOOKS = sorted(path.stem for path in (ROOT / "notebooks").glob("[0-9]*.ipynb"))


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_example_runs_and_shows_its_output(code):
    run_example(code, str(README))


def test_most_readme_examples_show_a_value():
    showing = [code for code in BLOCKS if re.search(r"^print\(.*\n# ", code, re.M)]
    assert len(showing) >= 0.75 * len(BLOCKS), f"{len(showing)} of {len(BLOCKS)}"


def test_readme_lists_every_notebook():
    section = README.read_text().split("## Notebooks", 1)[1].split("\n## ", 1)[0]
    missing = [name for name in NOTEBOOKS if f"(notebooks/{name}.ipynb)" not in section]
    assert NOTEBOOKS and not missing, f"README's Notebooks section lacks {missing}"


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
    where_next = done.stdout.split("Every number above matched its closed form.", 1)[1]
    missing = [name for name in NOTEBOOKS if f"notebooks/{name}.ipynb" not in where_next]
    assert not missing, f"the tour does not point at {missing}"


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
    # the suite's time as measured by .ci/run, with the conditions it was measured in
    assert "minutes under `.ci/run` on a 2-core machine" in " ".join(text.split())
