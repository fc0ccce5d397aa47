"""MkDocs hook (``hooks:`` in mkdocs.yml): the notebooks of ``notebooks/`` as pages of the site.

Each ``notebooks/<name>.ipynb`` becomes the page ``notebooks/<name>.md``, rendered from the
outputs stored in the notebook: Markdown cells as they are, code cells as Python blocks,
printed output as text blocks and figures as PNG files next to the page. Nothing is
executed here, so the build stays fast: ``tests/test_notebooks.py`` checks that each stored
notebook is its jupytext source executed top to bottom, with no error, and re-runs it.
``notebooks/index.md`` lists them with the one-line descriptions of ``notebooks/README.md``,
and each notebook's ``.ipynb`` file is in the site too, to download.
"""

import base64
import json
import re
from pathlib import Path

from mkdocs.structure.files import File

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
# A bullet of notebooks/README.md: "- [`<name>.ipynb`](<name>.ipynb): <what it shows>"
_README_LINE = re.compile(r"^- \[`(?P<name>[0-9]{2}_\w+)\.ipynb`\]\(\S+\): (?P<text>.*)$")


def notebook_names():
    """The stored notebooks' names (``01_backward_is_a_vjp`` ...), in order."""
    return sorted(path.stem for path in NOTEBOOKS.glob("[0-9]*.ipynb"))


def _fence(language, text):
    """``text`` as a fenced block, with a fence longer than any run of backticks in it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text.rstrip(chr(10))}\n{fence}"


def _text(value):
    """A notebook field stored as a string or a list of lines, as one string."""
    return "".join(value) if isinstance(value, list) else value


def _relink(markdown):
    """Links from one notebook to another (``02_x.ipynb``) point at that notebook's page."""
    return re.sub(r"\]\(([0-9]{2}_\w+)\.ipynb\)", r"](\1.md)", markdown)


def _outputs(name, outputs, figures):
    """The Markdown of a code cell's outputs; PNG figures are appended to ``figures`` as
    ``(file name, bytes)`` and shown as images."""
    parts = []
    for out in outputs:
        kind = out["output_type"]
        if kind == "error":
            raise ValueError(f"notebooks/{name}.ipynb stores an error ({out['ename']}): "
                             f"rebuild it with python notebooks/build.py {name}")
        if kind == "stream":
            parts.append(_fence("text", _text(out["text"])))
            continue
        data = out.get("data", {})
        if "image/png" in data:
            figure = f"figure-{len(figures) + 1}.png"
            figures.append((figure, base64.b64decode(_text(data["image/png"]))))
            parts.append(f"![Figure {len(figures)} of {name}]({name}/{figure})")
        elif "text/plain" in data:
            parts.append(_fence("text", _text(data["text/plain"])))
    return parts


def notebook_page(name):
    """``(markdown, figures)`` of the page for ``notebooks/<name>.ipynb``; ``figures`` is a
    list of ``(file name, PNG bytes)`` to place in ``notebooks/<name>/``."""
    cells = json.loads((NOTEBOOKS / f"{name}.ipynb").read_text())["cells"]
    note = (f"*This page is the notebook [`notebooks/{name}.ipynb`]({name}.ipynb) (download "
            "it to run it) with the outputs stored in the repository; its source is "
            f"`notebooks/src/{name}.py`. The tests run it top to bottom and every number it "
            "checks must hold.*")
    parts, figures = [], []
    for cell in cells:
        source = _text(cell["source"])
        if cell["cell_type"] == "markdown":
            parts.append(_relink(source))
        elif cell["cell_type"] == "code":
            parts.append(_fence("python", source))
            parts.extend(_outputs(name, cell.get("outputs", []), figures))
    title, _, rest = parts[0].partition("\n")  # the note goes under the notebook's title
    parts[0] = f"{title}\n\n{note}\n{rest}"
    return "\n\n".join(parts) + "\n", figures


def _title(name):
    """The notebook's title: its first Markdown heading, without the ``#``."""
    for cell in json.loads((NOTEBOOKS / f"{name}.ipynb").read_text())["cells"]:
        if cell["cell_type"] == "markdown":
            return _text(cell["source"]).splitlines()[0].lstrip("# ").strip()
    return name


def index_page():
    """``notebooks/index.md``: every notebook with its line from ``notebooks/README.md``."""
    lines = {}
    for line in (NOTEBOOKS / "README.md").read_text().splitlines():
        match = _README_LINE.match(line)
        if match:
            lines[match["name"]] = match["text"]
    missing = [name for name in notebook_names() if name not in lines]
    if missing:
        raise ValueError(f"notebooks/README.md has no line for {missing}")
    items = [f"- [{name[:2]}. {_title(name)}]({name}.md): {lines[name]}"
             for name in notebook_names()]
    return ("# Notebooks\n\n"
            "Longer worked examples, each shown here with its stored outputs and plots. Each "
            "notebook checks its own numbers (closed forms, finite differences, SciPy's "
            "hand-written derivatives), and the tests re-run them all. To run one yourself, "
            "download it from its page, or open `notebooks/` of the repository in Jupyter "
            "(`pip install '.[test]'` brings the notebook runner and Matplotlib).\n\n"
            + "\n".join(items) + "\n")


def on_files(files, config):
    files.append(File.generated(config, "notebooks/index.md", content=index_page()))
    for name in notebook_names():
        markdown, figures = notebook_page(name)
        files.append(File.generated(config, f"notebooks/{name}.md", content=markdown))
        files.append(File.generated(config, f"notebooks/{name}.ipynb",
                                    abs_src_path=str(NOTEBOOKS / f"{name}.ipynb")))
        for figure, png in figures:
            files.append(File.generated(config, f"notebooks/{name}/{figure}", content=png))
    return files
