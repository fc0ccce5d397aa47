"""MkDocs hooks for the diffkit site (``hooks:`` in mkdocs.yml).

The docstrings are written for reading in the source, with a little reStructuredText that
Markdown does not know: Sphinx roles (``:func:`check_grads```), which would show the role's
name in front of the code, and ``::`` introducing a code example, which would show as a
paragraph of its own. Drop both from the rendered pages; the code stays.

A page may also show diffkit's floors (``diffkit/layers.toml``, the table the layer test
reads): the marker ``<!-- layers: picture -->`` becomes the stack of floors, top floor
first, and ``<!-- layers: table -->`` the table of floors with their modules.
"""

import re
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

LAYERS = Path(__file__).resolve().parents[1] / "diffkit" / "layers.toml"

_SPHINX_ROLE = re.compile(r":(?:func|class|mod|meth|attr|data|exc|obj):(?=<code>)")
_LITERAL_MARKER = re.compile(r"<p>::</p>\s*")
_TRAILING_MARKER = re.compile(r"(\S)::</p>")


def on_page_content(html, page, config, files):
    html = _SPHINX_ROLE.sub("", html)
    html = _LITERAL_MARKER.sub("", html)
    return _TRAILING_MARKER.sub(r"\1:</p>", html)


def floors(path=LAYERS):
    """The floors of ``path`` (``diffkit/layers.toml``), bottom first: a list of dicts with
    ``name``, ``modules`` and ``holds``."""
    with open(path, "rb") as f:
        return tomllib.load(f)["floor"]


def layers_picture(floors):
    """The floors as a stack, top floor first, each importing only from the ones under it
    (a Markdown code block)."""
    width = max(len(floor["name"]) for floor in floors)
    lines = []
    for floor in reversed(floors):
        if lines:
            lines.append(" " * (width // 2) + "↓")
        lines.append(f"{floor['name']:<{width}}   {', '.join(floor['modules'])}")
    return "```text\n" + "\n".join(lines) + "\n```"


def layers_table(floors):
    """The floors as a Markdown table, bottom (1) first."""
    rows = ["| floor | modules | holds |", "|---|---|---|"]
    for number, floor in enumerate(floors, 1):
        modules = ", ".join(f"`{name}`" for name in floor["modules"])
        holds = floor["holds"].replace("|", "\\|")
        rows.append(f"| {number}. {floor['name']} | {modules} | {holds} |")
    return "\n".join(rows)


def on_page_markdown(markdown, page, config, files):
    if "<!-- layers:" not in markdown:
        return markdown
    table = floors()
    markdown = markdown.replace("<!-- layers: picture -->", layers_picture(table))
    return markdown.replace("<!-- layers: table -->", layers_table(table))
