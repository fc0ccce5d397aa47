"""diffkit is a house with floors: every import goes to the module's own floor or below.

The floors are the table in ``diffkit/layers.toml`` (the docs render the same table). The
checker reads each module under ``diffkit/`` with ``ast`` (it imports nothing): imports at
module level, under ``if TYPE_CHECKING``, inside functions and classes, and calls of
``importlib.import_module`` with a name it can read. Relative imports are resolved against
the module's package, and ``from package import name`` counts as importing the submodule
``package.name`` when that is a module. A function-level import must be listed in the
table's ``[[lazy]]`` entries with its reason.
"""

import ast
import importlib.util
from dataclasses import dataclass
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pytest brings tomli
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "diffkit" / "layers.toml"


# --- the checker ------------------------------------------------------------------------


@dataclass(frozen=True)
class Import:
    """One import in ``module`` (line ``line``) of the module ``target``; ``lazy`` when it
    runs inside a function."""
    module: str
    path: Path
    line: int
    target: str
    lazy: bool


def modules_under(root, package):
    """``{module name: (file, is_package)}`` for every ``.py`` file of ``package``, which
    is the directory ``root / package``."""
    found = {}
    for path in sorted((Path(root) / package).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def _absolute(module, is_package, level, name):
    """The absolute module of ``from <level dots><name> import ...`` in ``module``."""
    base = module.split(".") if is_package else module.split(".")[:-1]
    if level > 1:
        base = base[:len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def _literal_name(node, module):
    """The module name an ``import_module`` argument spells: a string, or an f-string
    whose leading part is known (``__name__`` stands for the module); None otherwise."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if not isinstance(node, ast.JoinedStr):
        return None
    text = ""
    for part in node.values:
        if isinstance(part, ast.Constant):
            text += part.value
        elif isinstance(part.value, ast.Name) and part.value.id == "__name__":
            text += module
        else:  # an unknown part: keep the packages named before it
            return text.rpartition(".")[0] or None
    return text


def _is_import_module(call):
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return name in ("import_module", "__import__") and bool(call.args)


class _Reader(ast.NodeVisitor):
    def __init__(self, module, path, is_package, modules):
        self.module, self.path, self.is_package, self.modules = module, path, is_package, modules
        self.depth = 0  # how many functions enclose the current node
        self.found = []

    def _add(self, node, target):
        self.found.append(Import(self.module, self.path, node.lineno, target, self.depth > 0))

    def _function(self, node):
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_Import(self, node):
        for alias in node.names:
            self._add(node, alias.name)

    def visit_ImportFrom(self, node):
        source = (_absolute(self.module, self.is_package, node.level, node.module)
                  if node.level else node.module)
        targets = {f"{source}.{alias.name}" for alias in node.names}
        for target in sorted({t if t in self.modules else source for t in targets}):
            self._add(node, target)

    def visit_Call(self, node):
        if _is_import_module(node):
            target = _literal_name(node.args[0], self.module)
            if target is not None:
                self._add(node, target)
        self.generic_visit(node)


def imports_of(root, package):
    """Every import of every module of ``package`` (in the directory ``root``)."""
    modules = modules_under(root, package)
    found = []
    for module, (path, is_package) in modules.items():
        reader = _Reader(module, path, is_package, modules)
        reader.visit(ast.parse(path.read_text(), str(path)))
        found.extend(reader.found)
    return found


def floor_of(module, floors, package):
    """The index of the floor holding ``module``, or None. An entry places the module it
    names and the modules under it, except that the root package places only itself."""
    candidates = [module] + [module.rsplit(".", k)[0] for k in range(1, module.count(".") + 1)]
    for name in candidates:
        if name == package and module != package:
            return None
        for index, floor in enumerate(floors):
            if name in floor["modules"]:
                return index
    return None


def _where(imp, root):
    return f"{imp.path.relative_to(root)}:{imp.line}"


def violations(root, package, table):
    """What breaks the floors of ``table`` in ``package``: unplaced modules, imports of a
    higher floor, and function-level imports the table does not list (one message each)."""
    floors = table["floor"]
    lazy = {(entry["module"], entry["imports"]) for entry in table.get("lazy", [])}
    problems = []
    for module in modules_under(root, package):
        if floor_of(module, floors, package) is None:
            problems.append(f"{module} stands on no floor: give it one in the layer table")
    for imp in imports_of(root, package):
        if imp.lazy and (imp.module, imp.target) not in lazy:
            problems.append(
                f"{_where(imp, root)}: {imp.module} imports {imp.target} inside a function; "
                "make the import module-level, or list it under [[lazy]] with its reason "
                "(import cost of an optional or heavy dependency; a cycle is not a reason)")
        if imp.target != package and not imp.target.startswith(package + "."):
            continue
        here, there = floor_of(imp.module, floors, package), floor_of(imp.target, floors, package)
        if here is not None and there is not None and there > here:
            problems.append(
                f"{_where(imp, root)}: {imp.module} (floor '{floors[here]['name']}') imports "
                f"{imp.target} (floor '{floors[there]['name']}'), a higher floor")
    return problems


# --- diffkit ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def table():
    with TABLE.open("rb") as f:
        return tomllib.load(f)


def test_every_import_goes_down_or_stays_on_its_floor(table):
    problems = violations(ROOT, "diffkit", table)
    assert not problems, "\n".join(problems)


def test_every_listed_lazy_import_exists_and_has_a_reason(table):
    found = {(i.module, i.target) for i in imports_of(ROOT, "diffkit") if i.lazy}
    for entry in table["lazy"]:
        assert entry["reason"].strip(), entry
        if "pending" not in entry:
            assert (entry["module"], entry["imports"]) in found, (
                f"{entry['module']} no longer imports {entry['imports']} lazily: drop the "
                "entry from the layer table")


def test_each_module_entry_is_on_one_floor(table):
    names = [name for floor in table["floor"] for name in floor["modules"]]
    assert len(names) == len(set(names))
    assert all(floor["holds"].strip() for floor in table["floor"])


def test_the_protocol_is_installed_by_import_diffkit_and_core_knows_no_namespace():
    # Tracer lives in core; its NumPy methods come from the protocol floor at import time.
    import diffkit
    from diffkit.core.trace import Tracer
    from diffkit.numpy_protocol import dispatch

    assert diffkit.numpy_protocol.dispatch is dispatch
    assert Tracer.__array_ufunc__ is dispatch.array_ufunc
    assert Tracer.__array_function__ is dispatch.array_function
    core = [i for i in imports_of(ROOT, "diffkit") if i.module.startswith("diffkit.core")]
    assert all(not i.target.startswith(("diffkit.numpy", "diffkit.scipy")) for i in core)


def _docs_hooks():
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    return hooks


def test_the_docs_show_the_same_table(table):
    hooks = _docs_hooks()
    page = hooks.on_page_markdown("<!-- layers: picture -->\n\n<!-- layers: table -->",
                                  None, None, None)
    picture, rows = page.split("\n\n")
    names = [floor["name"] for floor in table["floor"]]
    # the picture stacks the floors top first, the table lists them bottom first
    tops = [line.split()[0] for line in picture.splitlines()[1:-1] if line.strip() != "↓"]
    assert tops == names[::-1]
    table_rows = rows.splitlines()[2:]
    assert len(table_rows) == len(names)
    for number, (row, floor) in enumerate(zip(table_rows, table["floor"]), 1):
        assert row.startswith(f"| {number}. {floor['name']} | ")
        assert all(f"`{module}`" in row for module in floor["modules"])
    assert "<!-- layers:" in (ROOT / "docs" / "layers.md").read_text()


# --- the checker on a synthetic tree ------------------------------------------------------

SYNTHETIC = {
    "floor": [
        {"name": "low", "modules": ["pkg.low", "pkg.errors"], "holds": "the bottom"},
        {"name": "middle", "modules": ["pkg.middle"], "holds": "in between"},
        {"name": "high", "modules": ["pkg", "pkg.high"], "holds": "the top"},
    ],
    "lazy": [{"module": "pkg.high.app", "imports": "json", "reason": "import cost"}],
}

CLEAN = {
    "pkg/__init__.py": "from . import high\n",
    "pkg/errors.py": "class Oops(Exception):\n    pass\n",
    "pkg/low/__init__.py": "from ..errors import Oops\nfrom . import base\n",
    "pkg/low/base.py": "import math\nfrom .. import errors\n",
    "pkg/middle/__init__.py": "from ..low import base\nfrom pkg.errors import Oops\n",
    "pkg/high/__init__.py": "from .app import run\n",
    "pkg/high/app.py": ("from typing import TYPE_CHECKING\n"
                        "from ..middle import base as _unused\n"
                        "if TYPE_CHECKING:\n"
                        "    from ..low import base\n"
                        "def run():\n"
                        "    import json\n"
                        "    return json\n"),
}


def _write(root, files):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_checker_passes_a_clean_tree(tmp_path):
    _write(tmp_path, CLEAN)
    assert violations(tmp_path, "pkg", SYNTHETIC) == []
    targets = {(i.module, i.target, i.lazy) for i in imports_of(tmp_path, "pkg")}
    # relative imports resolve to modules; a name imported from a package that is a
    # submodule counts as that submodule
    assert ("pkg.low.base", "pkg.errors", False) in targets
    assert ("pkg.low", "pkg.low.base", False) in targets
    assert ("pkg.high.app", "pkg.low.base", False) in targets   # under TYPE_CHECKING
    assert ("pkg.high.app", "json", True) in targets


@pytest.mark.parametrize("where, code, line", [
    ("module level", "from ..high import app\n", 3),
    ("inside a function", "def f():\n    from pkg.high.app import run\n    return run\n", 4),
    ("under TYPE_CHECKING", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                            "    from ..middle import base\n", 5),
    ("import_module", "import importlib\nhigh = importlib.import_module('pkg.high')\n", 4),
])
def test_checker_fails_an_upward_import_naming_module_line_and_floors(tmp_path, where, code,
                                                                       line):
    _write(tmp_path, {**CLEAN, "pkg/low/base.py": CLEAN["pkg/low/base.py"] + code})
    problems = violations(tmp_path, "pkg", SYNTHETIC)
    upward = [p for p in problems if "a higher floor" in p]
    assert len(upward) == 1, problems
    assert upward[0].startswith(f"{Path('pkg/low/base.py')}:{line}: pkg.low.base (floor 'low') "
                                "imports pkg.")
    assert "(floor 'high')" in upward[0] or "(floor 'middle')" in upward[0]
    if where == "inside a function":  # and the lazy import itself is not listed
        assert any("inside a function" in p for p in problems)


def test_checker_fails_an_unlisted_lazy_import_and_an_unplaced_module(tmp_path):
    _write(tmp_path, {**CLEAN, "pkg/low/base.py": "def f():\n    from .. import errors\n",
                      "pkg/stray.py": "x = 1\n"})
    problems = violations(tmp_path, "pkg", SYNTHETIC)
    assert problems == [
        "pkg.stray stands on no floor: give it one in the layer table",
        f"{Path('pkg/low/base.py')}:2: pkg.low.base imports pkg.errors inside a function; "
        "make the import module-level, or list it under [[lazy]] with its reason "
        "(import cost of an optional or heavy dependency; a cycle is not a reason)",
    ]


def test_checker_reads_relative_imports_of_several_levels(tmp_path):
    files = {**CLEAN, "pkg/high/deep/__init__.py": "",
             "pkg/high/deep/leaf.py": "from ...low.base import math\nfrom ... import errors\n"}
    _write(tmp_path, files)
    targets = {i.target for i in imports_of(tmp_path, "pkg") if i.module == "pkg.high.deep.leaf"}
    assert targets == {"pkg.low.base", "pkg.errors"}
    assert violations(tmp_path, "pkg", SYNTHETIC) == []   # high imports low: downward
