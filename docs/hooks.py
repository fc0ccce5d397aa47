"""MkDocs hooks for the diffkit site (``hooks:`` in mkdocs.yml).

The docstrings are written for reading in the source, with a little reStructuredText that
Markdown does not know: Sphinx roles (``:func:`check_grads```), which would show the role's
name in front of the code, and ``::`` introducing a code example, which would show as a
paragraph of its own. Drop both from the rendered pages; the code stays.

A page may also show diffkit's floors (``diffkit/layers.toml``, the table the layer test
reads): the marker ``<!-- layers: picture -->`` becomes the stack of floors, top floor
first, and ``<!-- layers: table -->`` the table of floors with their modules.

The reference pages take two more markers, so that what they show is read from the code
and cannot drift from it:

- ``<!-- signature: diffkit.grad as dk.grad -->``: the object's call signature as a Python
  block (``dk.grad(fun, argnums=0, ...)``), annotations left out; without ``as ...`` the
  bare name is shown.
- ``<!-- names: diffkit.numpy -->``: every public name of the module (its ``__all__``, else
  its names without a leading underscore), one line each with an anchor
  (``#diffkit.numpy.sin``), the signature and the first lines of the docstring; objects
  that are NumPy's or SciPy's own, passed through unchanged, are listed after them.
  ``<!-- names: diffkit.jit except jit make_graph -->`` leaves out names that have an
  entry of their own.

Code is highlighted by Pygments when the site is built (no script from the network): the
stylesheet ``css/pygments.css`` is written here too.
"""

import importlib
import inspect
import re
import types
from pathlib import Path

from mkdocs.structure.files import File

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
    markdown = _SIGNATURE_MARKER.sub(lambda m: signature_block(m["path"], m["shown"]), markdown)
    markdown = _NAMES_MARKER.sub(
        lambda m: names_list(m["module"], (m["skip"] or "").split()), markdown)
    if "<!-- layers:" not in markdown:
        return markdown
    table = floors()
    markdown = markdown.replace("<!-- layers: picture -->", layers_picture(table))
    return markdown.replace("<!-- layers: table -->", layers_table(table))


# --- signatures and lists of names on the reference pages -----------------------------------

# A marker is a line of its own (quoted in a sentence, it stays as it is).
_SIGNATURE_MARKER = re.compile(
    r"^<!-- signature: (?P<path>[\w.]+)(?: as (?P<shown>[\w.]+))? -->$", re.M)
_NAMES_MARKER = re.compile(
    r"^<!-- names: (?P<module>[\w.]+)(?: except (?P<skip>[\w ]+))? -->$", re.M)
_WIDTH = 88  # a signature longer than this gets one parameter a line


def resolve(path):
    """The object at the dotted ``path`` as a user reaches it: ``diffkit.jit`` is the
    function ``dk.jit`` (an attribute wins over a submodule of the same name); else through
    the longest importable module prefix (``diffkit.jit.Graph``)."""
    first, *rest = path.split(".")
    try:
        obj, prefix = importlib.import_module(first), first
        for part in rest:
            prefix = f"{prefix}.{part}"
            obj = getattr(obj, part) if hasattr(obj, part) else importlib.import_module(prefix)
        return obj
    except ImportError:
        parts = path.split(".")
        for split in range(len(parts) - 1, 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:split]))
            except ImportError:
                continue
            for part in parts[split:]:
                obj = getattr(obj, part)
            return obj
        raise


def _parameters(signature):
    """The parameter list of ``signature`` as strings, without annotations, with the ``/``
    and ``*`` markers where Python writes them."""
    items, kinds = [], inspect.Parameter
    params = list(signature.parameters.values())
    for i, param in enumerate(params):
        param = param.replace(annotation=kinds.empty)
        if (param.kind == kinds.KEYWORD_ONLY and
                not any(p.kind in (kinds.KEYWORD_ONLY, kinds.VAR_POSITIONAL) for p in params[:i])):
            items.append("*")
        items.append(re.sub(r"<class '([\w.]+)'>", r"\1", str(param)))  # dtype=numpy.float64
        if param.kind == kinds.POSITIONAL_ONLY and (
                i + 1 == len(params) or params[i + 1].kind != kinds.POSITIONAL_ONLY):
            items.append("/")
    return items


def signature_text(obj, shown, width=_WIDTH):
    """``shown(parameters)``, on one line if it fits in ``width``, else one parameter a
    line."""
    items = _parameters(inspect.signature(obj))
    one_line = f"{shown}({', '.join(items)})"
    if len(one_line) <= width:
        return one_line
    return f"{shown}(\n" + "".join(f"    {item},\n" for item in items) + ")"


def signature_block(path, shown=None):
    """The signature of the object at ``path`` as a Markdown Python block."""
    text = signature_text(resolve(path), shown or path.rsplit(".", 1)[-1])
    return f"```python\n{text}\n```"


def public_names(module):
    """The public names of ``module``: its ``__all__``, else every name without a leading
    underscore that is not a module."""
    names = getattr(module, "__all__", None)
    if names is None:
        names = [name for name in dir(module) if not name.startswith("_")
                 and not isinstance(getattr(module, name), types.ModuleType)]
    return list(names)


def _reference_module(module_name):
    """The NumPy or SciPy module that ``module_name`` mirrors (``diffkit.numpy.linalg`` ->
    ``numpy.linalg``), or None."""
    try:
        return importlib.import_module(module_name.removeprefix("diffkit."))
    except ImportError:
        return None


def summary(obj):
    """The first paragraph of ``obj``'s docstring (a line that only repeats the signature
    skipped), plus its ``Derivative...`` paragraph if it has one, as one Markdown line."""
    paragraphs = [p for p in re.split(r"\n\s*\n", inspect.getdoc(obj) or "") if p.strip()]
    name = getattr(obj, "__name__", "")
    if paragraphs and re.match(rf"{re.escape(name)}\(", paragraphs[0]):
        paragraphs = paragraphs[1:]
    chosen = paragraphs[:1] + [p for p in paragraphs[1:] if p.startswith("Derivative")][:1]
    text = " ".join(" ".join(p.split()) for p in chosen)
    return re.sub(r"``(.+?)``", r"`\1`", text).replace("::", ":")


def _signature_or_none(obj, name):
    try:
        return signature_text(obj, name, width=float("inf"))
    except (TypeError, ValueError):
        return None


def names_list(module_name, skip=()):
    """Every public name of ``module_name`` but those in ``skip`` (entries of their own) as a
    Markdown list (see the module docstring)."""
    module = importlib.import_module(module_name)
    reference = _reference_module(module_name)
    own, foreign = [], []
    for name in public_names(module):
        if name in skip:
            continue
        obj = getattr(module, name)
        anchor = f'<a id="{module_name}.{name}"></a>'
        if reference is not None and getattr(reference, name, None) is obj:
            foreign.append(f"{anchor}`{name}`")
            continue
        if isinstance(obj, (bool, int, float, complex, str, tuple)):  # a constant
            own.append(f"- {anchor}`{name} = {obj!r}`")
            continue
        shown = _signature_or_none(obj, name) if callable(obj) else None
        if isinstance(obj, type) and issubclass(obj, BaseException):
            shown = f"{name}({', '.join(base.__name__ for base in obj.__bases__)})"
        head = f"`{shown}`" if shown else f"`{name}`"
        own.append(f"- {anchor}{head}: {summary(obj)}".rstrip(": "))
    text = "\n".join(own)
    if foreign:
        text += ("\n\nNumPy's or SciPy's own objects, re-exported unchanged (constants, types "
                 "and functions without a derivative): " + ", ".join(foreign) + ".")
    return text + "\n"


# --- highlighting without a script from the network -----------------------------------------

def pygments_css():
    """The stylesheet of Pygments' default style for ``pymdownx.highlight``'s blocks, plus
    table cells that wrap (the theme keeps them on one line)."""
    from pygments.formatters import HtmlFormatter

    return (HtmlFormatter(style="default").get_style_defs(".highlight") +
            "\n.wy-table-responsive table td, .wy-table-responsive table th "
            "{ white-space: normal; }\n")


def on_files(files, config):
    files.append(File.generated(config, "css/pygments.css", content=pygments_css()))
    return files
