"""The notebooks in ``notebooks/`` run top to bottom and are stored with clean outputs.

Each notebook asserts its own key numbers (closed forms, SciPy's hand-written derivatives),
so running it is the test. It runs in a scratch copy, in a kernel started with this
interpreter and importing the same ``diffkit`` as these tests (``notebooks/build.py`` sets
that up), with Matplotlib's non-interactive Agg backend; the stored notebook is never
rewritten. To refresh the stored outputs after editing a notebook's source:
``python notebooks/build.py <name>``. jupytext reads the sources and pairs them with the
stored notebooks (``notebooks/jupytext.toml``); the pairing is checked here with jupytext's
own command line.
"""

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

import diffkit

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
EXPECTED = ["01_backward_is_a_vjp", "02_jacobians_and_hessians", "03_scipy",
            "04_property_testing", "05_vmap", "06_jit", "07_solvers", "08_sparse", "09_bilevel",
            "10_taylor"]


def _load_build():
    spec = importlib.util.spec_from_file_location("notebooks_build", NOTEBOOKS / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build = _load_build()


def _stored(name):
    return nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)


def _code_cells(nb):
    return [cell for cell in nb.cells if cell.cell_type == "code"]


def test_every_notebook_has_a_source_a_stored_copy_and_a_readme_line():
    assert build.names() == EXPECTED
    readme = (NOTEBOOKS / "README.md").read_text()
    for name in EXPECTED:
        assert (NOTEBOOKS / f"{name}.ipynb").is_file(), f"{name}.ipynb is missing"
        assert f"{name}.ipynb" in readme, f"notebooks/README.md does not mention {name}.ipynb"


@pytest.mark.slow
@pytest.mark.parametrize("name", EXPECTED)
def test_notebook_runs_top_to_bottom(name, tmp_path):
    shutil.copy(NOTEBOOKS / f"{name}.ipynb", tmp_path)
    nb = nbformat.read(tmp_path / f"{name}.ipynb", as_version=4)
    build.execute(nb, tmp_path, mpl_backend="Agg")  # raises CellExecutionError on any failure
    errors = [out for cell in _code_cells(nb) for out in cell.outputs
              if out.output_type == "error"]
    assert not errors


@pytest.mark.parametrize("name", EXPECTED)
def test_stored_notebook_has_outputs_and_no_errors(name):
    cells = _code_cells(_stored(name))
    counts = [cell.execution_count for cell in cells]
    assert counts == list(range(1, len(cells) + 1)), (
        f"{name}: cells were not all executed in one run, top to bottom (execution counts "
        f"{counts}); rebuild it with python notebooks/build.py {name}")
    outputs = [out for cell in cells for out in cell.outputs]
    assert any(out.output_type == "stream" for out in outputs), f"{name}: no printed output"
    bad = [out for out in outputs
           if out.output_type == "error" or (out.output_type == "stream" and
                                             out.name == "stderr")]
    assert not bad, f"{name}: stored errors or warnings: {bad}"


@pytest.mark.parametrize("name", EXPECTED)
def test_stored_notebook_matches_its_source(name):
    stored = [(cell.cell_type, cell.source) for cell in _stored(name).cells]
    built = [(cell.cell_type, cell.source) for cell in build.build(name).cells]
    assert stored == built, (f"notebooks/{name}.ipynb differs from notebooks/src/{name}.py; "
                             f"rebuild it with python notebooks/build.py {name}")


def _jupytext(*args, cwd):
    """Run jupytext's command line with this interpreter, in ``cwd``."""
    return subprocess.run([sys.executable, "-m", "jupytext", *args], capture_output=True,
                          text=True, cwd=cwd, check=False)


def test_jupytext_pairs_each_notebook_with_its_source():
    for name in EXPECTED:  # (--paired-paths exits with 1 even when it prints the pairs)
        result = _jupytext("--paired-paths", f"{name}.ipynb", cwd=NOTEBOOKS)
        assert result.stdout.split() == [f"src/{name}.py"], (
            f"jupytext pairs {name}.ipynb with {result.stdout.split()}, not src/{name}.py "
            "(see notebooks/jupytext.toml)")


@pytest.mark.parametrize("newer", ["source", "notebook"])
def test_jupytext_sync_finds_every_pair_in_step(newer, tmp_path):
    """``jupytext --sync`` changes no byte of a notebook or its source, whichever was saved
    last: the stored notebooks are exactly what jupytext makes of their sources (cells,
    blank lines between them), and the sources exactly what it makes of the notebooks."""
    copy = tmp_path / "notebooks"
    shutil.copytree(NOTEBOOKS, copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = {path: path.read_bytes() for path in copy.rglob("*") if path.is_file()}
    for name in EXPECTED:  # sync reads the inputs from the file saved last
        older, later = (f"{name}.ipynb", f"src/{name}.py") if newer == "source" else \
            (f"src/{name}.py", f"{name}.ipynb")
        os.utime(copy / older, (1_000_000_000, 1_000_000_000))
        os.utime(copy / later, (1_000_000_100, 1_000_000_100))
    result = _jupytext("--sync", *(f"{name}.ipynb" for name in EXPECTED), cwd=copy)
    assert result.returncode == 0, f"jupytext --sync failed:\n{result.stderr}"
    assert "is not a paired notebook" not in result.stderr + result.stdout
    changed = sorted(str(path.relative_to(copy)) for path, data in before.items()
                     if path.read_bytes() != data)
    assert not changed, (f"jupytext --sync rewrote {changed}; rebuild with "
                         "python notebooks/build.py")


def test_notebooks_with_plots_store_them_and_stay_small():
    total = 0
    for name in EXPECTED:
        total += (NOTEBOOKS / f"{name}.ipynb").stat().st_size
        if name != "04_property_testing":
            images = [out for cell in _code_cells(_stored(name)) for out in cell.outputs
                      if "image/png" in out.get("data", {})]
            assert images, f"{name}: no stored plot"
    assert total < 600_000, f"the notebooks take {total} bytes; keep figures small"


@pytest.mark.slow
def test_kernel_runs_this_interpreter_and_this_diffkit(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "import sys, diffkit, matplotlib\n"
        "print(sys.executable)\nprint(diffkit.__file__)\nprint(matplotlib.get_backend())")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    build.execute(nb, tmp_path, mpl_backend="Agg")
    executable, package, backend = nb.cells[0].outputs[0].text.split()
    assert Path(executable).resolve() == Path(sys.executable).resolve()
    assert Path(package).resolve() == Path(diffkit.__file__).resolve()
    assert backend.lower() == "agg"


@pytest.mark.slow
def test_a_wrong_number_fails_the_run(tmp_path):
    from nbclient.exceptions import CellExecutionError

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "import numpy as np, diffkit as dk\n"
        "np.testing.assert_allclose(dk.grad(lambda x: x ** 2)(3.0), 7.0)")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    with pytest.raises(CellExecutionError, match="AssertionError"):
        build.execute(nb, tmp_path, mpl_backend="Agg")
