"""The documentation site builds with no warnings and loads nothing from the network; its API
reference has an entry for every public name, opening with what a user needs; the notebooks
are pages of it, with their outputs and plots; and every Python example of the guides and
the reference runs, checks its numbers and shows what it prints (``doc_examples``)."""

import ast
import html
import importlib
import inspect
import json
import os
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest
from doc_examples import python_blocks, run_example

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
NOTEBOOKS = ROOT / "notebooks"
REFERENCE_PAGES = sorted((DOCS / "reference").glob("*.md"))
EXAMPLE_PAGES = sorted([DOCS / "index.md", DOCS / "jit.md", *(DOCS / "guide").glob("*.md"),
                        *REFERENCE_PAGES])
# Pages whose authors show some printed output and not the rest (a graph listing): their
# shown output is checked, but a print without it is allowed.
PARTLY_SHOWN = {DOCS / "guide" / "debugging.md"}
# Pages other engineers write; the rest must mostly show values (see the last tests).
OTHERS = {DOCS / "guide" / name for name in ("debugging.md", "distributed.md", "ode.md",
                                             "sparse.md", "autograd.md")}

# The public names of the brief (issue 28): diffkit's own, then whole modules.
DIFFKIT_NAMES = [
    "grad", "value_and_grad", "vjp", "jvp", "linearize", "jacfwd", "jacrev", "jacobian",
    "hessian", "hvp", "vmap", "stop_gradient", "custom_jvp", "custom_vjp", "checkpoint", "jit",
    "make_graph", "jacobian_sparsity", "hessian_sparsity", "sparse_jacobian", "sparse_hessian",
    "debug.print", "debug.callback", "config"]
PUBLIC_MODULES = [
    "diffkit.numpy", "diffkit.numpy.linalg", "diffkit.numpy.fft", "diffkit.scipy.special",
    "diffkit.scipy.linalg", "diffkit.scipy.stats", "diffkit.scipy.signal",
    "diffkit.scipy.integrate", "diffkit.scipy.optimize", "diffkit.testing",
    "diffkit.testing.strategies", "diffkit.tree_util", "diffkit.flatten_util", "diffkit.errors",
    "diffkit.sparse"]


def _page_blocks(pages):
    return [(page, i, code) for page in pages for i, code in enumerate(python_blocks(
        page.read_text()))]


EXAMPLES = _page_blocks(EXAMPLE_PAGES)


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


def _text(html_page):
    """The visible text of an HTML page, tags removed and whitespace collapsed."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", html_page)).split())


def test_docs_build_strict_without_warnings(site):
    assert (site / "index.html").is_file()


# --- offline ---------------------------------------------------------------------------------

_REMOTE_TAG = re.compile(
    r"<script\b[^>]*\bsrc=[\"']?(?:https?:)?//|"
    r"<link\b(?=[^>]*\brel=[\"']?(?:stylesheet|preload|modulepreload))[^>]*\bhref=[\"']?"
    r"(?:https?:)?//", re.I)
_REMOTE_CSS = re.compile(r"@import\s+(?:url\()?[\"']?(?:https?:)?//|url\([\"']?(?:https?:)?//",
                         re.I)


def test_site_loads_no_script_or_stylesheet_from_the_network(site):
    """Every script and stylesheet is a file of the site: it works offline."""
    remote = [f"{path.relative_to(site)}: {match.group(0)}"
              for path in site.rglob("*.html")
              for match in _REMOTE_TAG.finditer(path.read_text())]
    remote += [f"{path.relative_to(site)}: {match.group(0)}"
               for path in site.rglob("*.css")
               for match in _REMOTE_CSS.finditer(path.read_text())]
    assert not remote, "the site loads from the network:\n" + "\n".join(remote[:20])
    index = (site / "index.html").read_text()
    assert "highlight.js" not in index and "hljs" not in index
    assert 'href="css/pygments.css"' in index
    # code is highlighted when the site is built: Pygments' token classes are in the HTML
    assert re.search(r'<span class="(?:kn|nn|k)">', (site / "reference/diffkit/index.html")
                     .read_text())


# --- the reference -----------------------------------------------------------------------------

def _public_names(module):
    names = getattr(module, "__all__", None)
    if names is None:
        names = [name for name in dir(module) if not name.startswith("_")
                 and not isinstance(getattr(module, name), types.ModuleType)]
    return [name for name in names if not isinstance(getattr(module, name, None),
                                                     types.ModuleType)]


def _all_public_anchors():
    """The anchor of every public name: a list of alternatives for each (a function of
    ``diffkit.sparse`` is documented as the ``diffkit`` function it also is)."""
    import diffkit

    anchors = [[f"diffkit.{name}"] for name in DIFFKIT_NAMES]
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        for name in _public_names(module):
            same = getattr(diffkit, name, None) is getattr(module, name)
            anchors.append([f"{module_name}.{name}"] + [f"diffkit.{name}"] * same)
    return anchors


def test_every_public_name_has_a_reference_entry(site):
    pages = "".join(path.read_text() for path in (site / "reference").rglob("index.html"))
    anchors = set(re.findall(r'id="(diffkit[\w.]*)"', pages))
    missing = [names[0] for names in _all_public_anchors()
               if not any(name in anchors for name in names)]
    assert not missing, f"no reference entry for {missing}"


@pytest.mark.parametrize("page, objects", [
    ("reference/diffkit", [f"diffkit.{name}" for name in DIFFKIT_NAMES
                           if not name.endswith("sparsity") and "sparse" not in name]),
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
    ("reference/numpy", ["diffkit.numpy.sin", "diffkit.numpy.linalg.solve",
                         "diffkit.numpy.fft.rfft", "diffkit.numpy.zeros"]),
    ("reference/sparse", ["diffkit.jacobian_sparsity", "diffkit.hessian_sparsity",
                          "diffkit.sparse_jacobian", "diffkit.sparse_hessian",
                          "diffkit.sparse.star_coloring"]),
])
def test_reference_pages_hold_the_entries(site, page, objects):
    # A misspelt identifier leaves a page without its entry rather than failing the build,
    # so look for each object's anchor.
    html_page = (site / page / "index.html").read_text()
    missing = [name for name in objects if f'id="{name}"' not in html_page]
    assert not missing, f"{page} lacks {missing}"


def _resolve(path, modules_first=False):
    """The object at a dotted path. As a user reaches it by default: ``diffkit.jit`` is
    ``dk.jit`` (an attribute before a submodule). With ``modules_first``, as mkdocstrings
    does: the longest importable module prefix, then attributes (``diffkit.config`` is the
    module, ``diffkit.jit.jit`` the function in the package)."""
    parts = path.split(".")
    if not modules_first:
        obj = importlib.import_module(parts[0])
        for i, part in enumerate(parts[1:], 2):
            obj = (getattr(obj, part) if hasattr(obj, part)
                   else importlib.import_module(".".join(parts[:i])))
        return obj
    for split in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for part in parts[split:]:
            obj = getattr(obj, part)
        return obj
    raise ImportError(path)


def _first_words(docstring, count=6):
    """The first words of a docstring without markup or spaces (as ``_squeeze`` leaves the
    rendered text)."""
    return "".join(re.sub(r":\w+:|`", "", docstring).split()[:count])


def _squeeze(text):
    return "".join(text.split())


@pytest.mark.parametrize("page", REFERENCE_PAGES, ids=lambda page: page.stem)
def test_rendered_docstrings_are_there(site, page):
    """Each ``::: object`` of a reference page shows the object's docstring: griffe reads the
    source, and a stub (``.pyi``) declaring a re-exported name bare would hide it quietly."""
    text = _squeeze(_text((site / "reference" / page.stem / "index.html").read_text()))
    lost = []
    for path in re.findall(r"^::: ([\w.]+)", page.read_text(), re.M):
        docstring = inspect.getdoc(_resolve(path, modules_first=True)) or ""
        if docstring and _first_words(docstring) not in text:
            lost.append(path)
    assert not lost, f"reference/{page.stem}: the docstrings of {lost} are not rendered"


def _entries(markdown):
    """``(anchor, body)`` of each entry: a heading anchored ``{ #diffkit.name }`` and the text
    up to the next heading (of level 1 to 3; headings inside code blocks do not count)."""
    entries, anchor, body, fenced = [], None, [], False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        heading = not fenced and re.match(r"#{1,3} ", line)
        if heading:
            if anchor:
                entries.append((anchor, "\n".join(body)))
            match = re.search(r"\{ #(diffkit[\w.]*) \}$", line)
            anchor, body = (match.group(1) if match else None), []
        else:
            body.append(line)
    if anchor:
        entries.append((anchor, "\n".join(body)))
    return entries


def _shows_output(code):
    lines = code.splitlines()
    return any(line.lstrip().startswith("print(") and i + 1 < len(lines)
               and lines[i + 1].lstrip().startswith("#") for i, line in enumerate(lines))


@pytest.mark.parametrize("page", REFERENCE_PAGES, ids=lambda page: page.stem)
def test_reference_entries_open_with_signature_summary_and_example(page):
    """An entry (a heading anchored ``{ #diffkit.name }``) starts, before the docstring,
    with the signature (for a function), a summary paragraph, and an example that prints a
    value and shows it. A list of names (``<!-- names: module -->``, one line each with
    signature and summary) follows an example of its own section."""
    problems = []
    for anchor, body in _entries(page.read_text()):
        head = body.split("\n::: ", 1)[0]
        obj = _resolve(anchor)
        if inspect.isfunction(obj) and not head.lstrip().startswith("<!-- signature: "):
            problems.append(f"{anchor}: no signature first")
        prose = [part for part in re.split(r"```.*?```|<!--.*?-->", head, flags=re.S)
                 if part.strip()]
        if not prose:
            problems.append(f"{anchor}: no summary")
        if inspect.ismodule(obj) and "<!-- names: " not in head:
            continue  # a module's section: its entries follow
        if "<!-- names: " not in head and not any(
                _shows_output(code) for code in python_blocks(head)):
            problems.append(f"{anchor}: no example showing its output")
        if "<!-- names: " in head and not _shows_output("".join(python_blocks(
                head.split("<!-- names: ")[0]))):
            problems.append(f"{anchor}: its list of names follows no example")
    assert not problems, "\n".join(problems)


# --- the notebooks ---------------------------------------------------------------------------

def _stored_outputs(name):
    cells = json.loads((NOTEBOOKS / f"{name}.ipynb").read_text())["cells"]
    return [out for cell in cells if cell["cell_type"] == "code" for out in cell["outputs"]]


NOTEBOOK_NAMES = sorted(path.stem for path in NOTEBOOKS.glob("[0-9]*.ipynb"))


@pytest.mark.parametrize("name", NOTEBOOK_NAMES)
def test_notebook_is_a_page_with_its_outputs_and_plots(site, name):
    page = site / "notebooks" / name / "index.html"
    text = _text(page.read_text())
    outputs = _stored_outputs(name)
    for out in outputs:
        if out["output_type"] == "stream":
            printed = " ".join("".join(out["text"]).split())
            assert printed[:200] in text, f"{name}: printed output missing: {printed[:80]}"
    figures = [out for out in outputs if "image/png" in out.get("data", {})]
    images = re.findall(r'<img[^>]*src="(figure-\d+\.png)"', page.read_text())
    assert len(images) == len(figures)
    for image in images:
        assert (page.parent / image).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (site / "notebooks" / f"{name}.ipynb").is_file()   # to download
    assert f'href="{name}/"' in (site / "notebooks" / "index.html").read_text()


def test_notebooks_are_linked_from_the_docs_home():
    home = (DOCS / "index.md").read_text()
    missing = [name for name in NOTEBOOK_NAMES if f"(notebooks/{name}.md)" not in home]
    assert not missing, f"docs/index.md does not link {missing}"


def test_conventions_and_coverage_are_in_the_site(site):
    assert "abs" in (site / "conventions" / "index.html").read_text()
    assert "diffkit.scipy.special" in (site / "coverage" / "index.html").read_text()


# --- the examples ------------------------------------------------------------------------------

def test_array_api_page_runs():
    """docs/array_api.md: SCIPY_ARRAY_API must be set before SciPy is imported, so its blocks
    run in order in one fresh interpreter (the first block sets the variable)."""
    page = DOCS / "array_api.md"
    script = "\n".join(python_blocks(page.read_text()))
    assert 'os.environ["SCIPY_ARRAY_API"] = "1"' in script.split("import scipy")[0]
    env = {k: v for k, v in os.environ.items() if k != "SCIPY_ARRAY_API"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]


def _imports_only(code):
    return all(isinstance(node, (ast.Import, ast.ImportFrom)) for node in ast.parse(code).body)


def _namespace(page, index):
    """A fresh namespace for block ``index`` of ``page``. On a reference page the blocks
    made only of imports (``import numpy as np`` ...) run before each later example."""
    namespace = {}
    if page.parent.name == "reference":
        for code in python_blocks(page.read_text())[:index]:
            if _imports_only(code):
                exec(code, namespace)
    return namespace


@pytest.mark.parametrize("page, index, code", EXAMPLES,
                         ids=[f"{p.parent.name}/{p.stem}-block{i}" for p, i, _ in EXAMPLES])
def test_example_runs_and_shows_its_output(page, index, code):
    run_example(code, f"{page.relative_to(ROOT)} block {index}", _namespace(page, index),
                strict=page not in PARTLY_SHOWN)


def test_most_examples_show_a_value():
    """Most examples print a value and show it, rather than only asserting it."""
    ours = [(page, code) for page, _, code in EXAMPLES
            if page not in OTHERS and not _imports_only(code)]
    showing = [code for _, code in ours if _shows_output(code)]
    assert len(showing) >= 0.8 * len(ours), (
        f"only {len(showing)} of {len(ours)} examples show a printed value")


def test_the_example_checker_catches_wrong_and_unshown_output():
    assert run_example("print(1 + 1)\n# 2\n", "ok") == 1
    assert run_example("x = 1\n# an ordinary comment\n", "comment") == 0
    assert run_example("print('a b c')\n# a\n# b c\n", "wrapped message") == 1
    assert run_example("import numpy as np\nprint(np.array([0.1, 0.25]))\n# [0.1  0.25]\n",
                       "numpy") == 1
    with pytest.raises(AssertionError, match="shows"):      # NumPy's text, not the number
        run_example("import numpy as np\nprint(np.array([0.1, 0.25]))\n# [0.10 0.25]\n", "x")
    with pytest.raises(AssertionError, match="shows"):
        run_example("print(1 + 1)\n# 3\n", "wrong")
    with pytest.raises(AssertionError, match="does not show"):
        run_example("print(2)\nx = 1\n", "unshown")
    assert run_example("print(2)\nx = 1\n", "partly shown", strict=False) == 0
    with pytest.raises(AssertionError, match="shows"):      # output of the loop, after it
        run_example("for i in range(2):\n    print(i)\n# 0\n# 2\n", "loop")
