"""The documentation site builds with no warnings, its API reference really holds the
docstrings, and every Python example in the user guide runs and checks its numbers."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
GUIDE_PAGES = sorted([DOCS / "index.md", *(DOCS / "guide").glob("*.md")])


def python_blocks(page):
    return re.findall(r"```python\n(.*?)```", page.read_text(), re.S)


GUIDE_BLOCKS = [(page, i, code) for page in GUIDE_PAGES
                for i, code in enumerate(python_blocks(page))]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """Build the site once with ``mkdocs build --strict``; the output directory."""
    pytest.importorskip("mkdocs", reason="MkDocs is not installed: pip install '.[docs]'")
    pytest.importorskip("mkdocstrings", reason="mkdocstrings is not installed: "
                        "pip install '.[docs]'")
    site_dir = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--clean",
         "--config-file", str(ROOT / "mkdocs.yml"), "--site-dir", str(site_dir)],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    log = done.stdout + done.stderr
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{log}"
    warnings = [line for line in log.splitlines() if "WARNING" in line or "ERROR" in line]
    assert not warnings, "mkdocs reported:\n" + "\n".join(warnings)
    return site_dir


def test_docs_build_strict_without_warnings(site):
    assert (site / "index.html").is_file()


@pytest.mark.parametrize("page, objects", [
    ("reference/diffkit", [f"diffkit.{name}" for name in (
        "grad", "value_and_grad", "vjp", "jvp", "linearize", "jacfwd", "jacrev", "jacobian",
        "hessian", "hvp", "vmap", "stop_gradient", "custom_jvp", "custom_vjp", "checkpoint")]),
    ("reference/testing", ["diffkit.testing.check_grads", "diffkit.testing.assert_jacobians_agree",
                           "diffkit.testing.check_vmap", "diffkit.testing.strategies.arrays",
                           "diffkit.testing.strategies.programs"]),
    ("reference/tree_util", ["diffkit.tree_util.tree_flatten", "diffkit.tree_util.tree_map",
                             "diffkit.tree_util.register_pytree_node"]),
    ("reference/errors", ["diffkit.errors.DiffkitError", "diffkit.errors.TracerConversionError",
                          "diffkit.errors.NonScalarOutputError"]),
    ("reference/scipy", ["diffkit.scipy.linalg.expm", "diffkit.scipy.signal.convolve",
                         "diffkit.scipy.integrate.simpson", "diffkit.scipy.optimize.minimize"]),
    ("reference/flatten_util", ["diffkit.flatten_util.ravel_pytree"]),
    ("reference/sparse", ["diffkit.jacobian_sparsity", "diffkit.hessian_sparsity",
                          "diffkit.sparse_jacobian", "diffkit.sparse_hessian",
                          "diffkit.sparse.star_coloring"]),
])
def test_reference_pages_hold_the_docstrings(site, page, objects):
    # A misspelt identifier or a member filtered away leaves a page without its entry
    # rather than failing the build, so look for each object's anchor.
    html = (site / page / "index.html").read_text()
    missing = [name for name in objects if f'id="{name}"' not in html]
    assert not missing, f"{page} lacks {missing}"


def test_conventions_and_coverage_are_in_the_site(site):
    assert "abs" in (site / "conventions" / "index.html").read_text()
    assert "diffkit.scipy.special" in (site / "coverage" / "index.html").read_text()


def test_array_api_page_runs():
    """docs/array_api.md: SCIPY_ARRAY_API must be set before SciPy is imported, so its blocks
    run in order in one fresh interpreter (the first block sets the variable)."""
    page = DOCS / "array_api.md"
    script = "\n".join(python_blocks(page))
    assert 'os.environ["SCIPY_ARRAY_API"] = "1"' in script.split("import scipy")[0]
    env = {k: v for k, v in os.environ.items() if k != "SCIPY_ARRAY_API"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.mark.parametrize("page, index, code", GUIDE_BLOCKS,
                         ids=[f"{p.stem}-block{i}" for p, i, _ in GUIDE_BLOCKS])
def test_guide_example_runs(page, index, code):
    exec(compile(code, f"{page.relative_to(ROOT)} block {index}", "exec"), {})
