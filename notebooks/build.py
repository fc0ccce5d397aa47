"""Build the notebooks from their sources and execute them, storing the outputs.

    python notebooks/build.py            # every notebook
    python notebooks/build.py 03_scipy   # one notebook

Each notebook's source is ``notebooks/src/<name>.py`` in jupytext's "percent" format: ``# %%``
starts a code cell, ``# %% [markdown]`` a Markdown cell whose lines are written as ``# ``
comments. ``notebooks/jupytext.toml`` pairs each source with ``notebooks/<name>.ipynb``, so
Jupyter (with jupytext) edits both as one notebook. This script reads the source with
jupytext, executes it and writes ``notebooks/<name>.ipynb`` with its outputs;
``tests/test_notebooks.py`` checks that the two still match. The documentation site shows
these stored outputs and figures (``docs/notebook_pages.py``), so the site is built without
executing anything.

Notebooks run in a kernel started with this interpreter (``sys.executable``) and with the
``diffkit`` that this interpreter imports first on ``PYTHONPATH``, in a scratch copy of this
folder, so nothing the notebooks write lands in the repository.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import jupytext
import nbformat

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "src"
KERNEL_NAME = "diffkit-notebooks"
# Inline PNG figures in the stored notebooks; the tests run with the Agg backend instead.
INLINE_BACKEND = "module://matplotlib_inline.backend_inline"
CELL_TIMEOUT = 300  # seconds; a hung cell fails instead of stalling CI


def names():
    """Notebook names (``01_backward_is_a_vjp``, ...), in order."""
    return sorted(path.stem for path in SOURCES.glob("[0-9]*.py"))


def build(name):
    """The notebook ``name`` read from its source by jupytext, without outputs.

    jupytext keeps a cell's count of blank lines to the next cell in its metadata (when it is
    not the default), so that the stored notebook writes back to exactly its source
    (``jupytext --sync`` changes nothing). The pairing lives in ``jupytext.toml``, not in the
    notebook's metadata.
    """
    nb = jupytext.read(SOURCES / f"{name}.py", fmt="py:percent")
    nb.metadata.pop("jupytext", None)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def _write_kernel_spec(kernels_dir):
    """A kernel spec that starts ``sys.executable -m ipykernel_launcher``."""
    from ipykernel.kernelspec import write_kernel_spec

    write_kernel_spec(path=kernels_dir / KERNEL_NAME,
                      overrides={"display_name": "diffkit notebooks"})


def kernel_env(mpl_backend):
    """The environment for the kernel: this process's, with the directory holding the
    ``diffkit`` this process imports first on ``PYTHONPATH`` and the given Matplotlib
    backend."""
    import diffkit

    package_root = str(Path(diffkit.__file__).resolve().parents[1])
    paths = [package_root] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return dict(os.environ, PYTHONPATH=os.pathsep.join(paths), MPLBACKEND=mpl_backend)


def execute(nb, workdir, mpl_backend="Agg"):
    """Run ``nb`` top to bottom in place, in a fresh kernel running ``sys.executable`` with
    working directory ``workdir``. Raises ``nbclient.exceptions.CellExecutionError`` on the
    first cell that fails."""
    from jupyter_client import AsyncKernelManager
    from jupyter_client.kernelspec import KernelSpecManager
    from nbclient import NotebookClient

    workdir = Path(workdir)
    kernels_dir = workdir / ".kernels"
    _write_kernel_spec(kernels_dir)
    specs = KernelSpecManager(kernel_dirs=[str(kernels_dir)])
    manager = AsyncKernelManager(kernel_name=KERNEL_NAME, kernel_spec_manager=specs)
    client = NotebookClient(nb, km=manager, kernel_name=KERNEL_NAME, timeout=CELL_TIMEOUT,
                            resources={"metadata": {"path": str(workdir)}})
    kernelspec = dict(nb.metadata["kernelspec"])
    client.execute(env=kernel_env(mpl_backend))
    nb.metadata["kernelspec"] = kernelspec  # keep the generic "python3" for readers
    return nb


def _merge_streams(outputs):
    """Consecutive prints to the same stream as one output, as a reader sees them."""
    merged = []
    for out in outputs:
        previous = merged[-1] if merged else None
        if (out.output_type == "stream" and previous is not None
                and previous.output_type == "stream" and previous.name == out.name):
            previous.text += out.text
        else:
            merged.append(out)
    return merged


def main(argv):
    wanted = argv or names()
    unknown = sorted(set(wanted) - set(names()))
    if unknown:
        raise SystemExit(f"no notebook source for {unknown}; the sources are {names()}")
    for name in wanted:
        nb = build(name)
        with tempfile.TemporaryDirectory() as scratch:
            execute(nb, scratch, mpl_backend=INLINE_BACKEND)
        for cell in nb.cells:  # no timestamps in the stored metadata
            cell.metadata.pop("execution", None)
            if cell.cell_type == "code":
                cell.outputs = _merge_streams(cell.outputs)
        nbformat.validate(nb)
        target = HERE / f"{name}.ipynb"
        nbformat.write(nb, target)
        print(f"wrote {target.relative_to(HERE.parent)} ({target.stat().st_size // 1024} kB)")


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parent))  # the checkout's diffkit, as the tests use
    main(sys.argv[1:])
