"""diffkit's types, as a user's type checker sees them.

- tests/typing/user_script.py (correct code calling every public transformation) runs, and
  type-checks clean under ``mypy --strict`` and under pyright;
- tests/typing/misuse_script.py (wrong code, each line marked ``# type: ignore``) must give
  an error on every marked line in both checkers, so the types are real, not ``Any``;
- the generated stubs of the dynamic namespaces (``.ci/make_stubs.py``) list exactly the
  runtime names and are what the generator writes today; the hand-written stubs have the
  runtime names and signatures of their modules;
- the wheel ships ``py.typed`` and every stub.
"""

import ast
import importlib
import importlib.util
import inspect
import os
import re
import runpy
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
import scipy

import diffkit

ROOT = Path(__file__).resolve().parents[1]
TYPING = ROOT / "tests" / "typing"
SCRIPTS = [TYPING / "user_script.py", TYPING / "misuse_script.py"]
# The directory holding the diffkit package under test (the checkout, or site-packages).
PACKAGE_PARENT = Path(diffkit.__file__).resolve().parents[1]

# Stubs written by hand for modules whose code others own: (stub, module).
HANDWRITTEN = [
    ("diffkit/api.pyi", "diffkit.api"),
    ("diffkit/sparse/derivatives.pyi", "diffkit.sparse.derivatives"),
    ("diffkit/sparse/detection.pyi", "diffkit.sparse.detection"),
    ("diffkit/jit/graph.pyi", "diffkit.jit.graph"),
    ("diffkit/tracebacks.pyi", "diffkit.tracebacks"),
]


def _make_stubs():
    spec = importlib.util.spec_from_file_location("make_stubs", ROOT / ".ci" / "make_stubs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_user_script_runs(capsys):
    """The script is correct code: it runs, and its values are the ones it computes."""
    runpy.run_path(str(TYPING / "user_script.py"), run_name="__main__")
    printed = capsys.readouterr().out
    w = np.random.default_rng(0).standard_normal(3)
    assert f"w = {w}" in printed   # dk.debug.print, eagerly
    assert f"v = {w}" in printed   # and under grad, with the value


def _run(command, **kwargs):
    return subprocess.run(command, capture_output=True, text=True, check=False, **kwargs)


@pytest.mark.slow
def test_mypy_strict(tmp_path):
    pytest.importorskip("mypy", reason="mypy is in the test extra")
    env = dict(os.environ, MYPYPATH=str(PACKAGE_PARENT))
    done = _run([sys.executable, "-m", "mypy", "--config-file", str(TYPING / "mypy.ini"),
                 "--cache-dir", str(tmp_path / "cache"), *map(str, SCRIPTS)],
                env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("Success: no issues found in 2 source files"), done.stdout


def _pyright():
    """The command running pyright (the PyPI package, with Node from its nodejs extra)."""
    if importlib.util.find_spec("pyright") is None:
        pytest.skip("pyright is not installed (it is in the test extra: pip install "
                    "'diffkit[test]')")
    return [sys.executable, "-m", "pyright"]


@pytest.mark.slow
def test_pyright(tmp_path):
    config = tmp_path / "pyrightconfig.json"
    # the settings of tests/typing/pyrightconfig.json, with the package under test on the path
    config.write_text((TYPING / "pyrightconfig.json").read_text().replace(
        '"../.."', repr(str(PACKAGE_PARENT)).replace("'", '"')))
    done = _run([*_pyright(), "-p", str(config), "--pythonpath", sys.executable,
                 *map(str, SCRIPTS)], cwd=tmp_path,
                env=dict(os.environ, PYRIGHT_PYTHON_IGNORE_WARNINGS="1"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 errors, 0 warnings" in done.stdout, done.stdout


def test_generated_stubs_list_the_runtime_names():
    """Each generated stub names exactly what its module has (``__all__``, or every public
    name of ``dir()`` for ``diffkit.numpy``, which mirrors NumPy's namespace)."""
    make_stubs = _make_stubs()
    modules = [(m, p) for m, p, _ in make_stubs.NUMPY_MODULES] + make_stubs.SCIPY_MODULES
    for module_name, path in modules:
        module = importlib.import_module(module_name)
        stub = make_stubs.stub_names(ROOT / path)
        runtime = set(make_stubs.runtime_names(module))
        if module_name.startswith("diffkit.numpy") and not _versions_match(path):
            # another NumPy than the stubs were made with moves NumPy's own names; diffkit's
            # functions must all be there still
            own = {n for n in runtime if _is_diffkits(module, n)}
            assert own - stub == set(), f"{path}: run python .ci/make_stubs.py"
            continue
        assert stub == runtime, (
            f"{path}: names only in the stub {sorted(stub - runtime)}, only at run time "
            f"{sorted(runtime - stub)}; run python .ci/make_stubs.py")


def _is_diffkits(module, name):
    return str(getattr(getattr(module, name), "__module__", "")).startswith("diffkit")


def _versions_match(path):
    header = (ROOT / path).read_text().splitlines()[1]
    found = re.search(r"numpy ([^,]+), scipy ([^)]+)", header)
    return found is not None and found.groups() == (np.__version__, scipy.__version__)


def test_generated_stubs_are_up_to_date():
    """The checked-in stubs are what .ci/make_stubs.py writes (with the NumPy and SciPy
    they were made with; others change NumPy's and SciPy's namespaces themselves)."""
    if shutil.which("ruff") is None and importlib.util.find_spec("ruff") is None:
        pytest.skip("ruff is not installed (it is in the test extra)")
    generated = _make_stubs().stubs()
    stale = [path for path, text in generated.items()
             if _versions_match(path) and (ROOT / path).read_text() != text]
    assert stale == [], f"stale stubs {stale}: run python .ci/make_stubs.py"


def _stub_functions(tree):
    """``{name: [FunctionDef, ...]}`` of the stub's top-level functions (overloads too)."""
    functions = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            functions.setdefault(node.name, []).append(node)
    return functions


def _parameters(node):
    """``[(name, kind, default)]`` of a stub function, ``default`` the literal or None."""
    args = node.args
    plain = args.posonlyargs + args.args
    defaults = [None] * (len(plain) - len(args.defaults)) + list(args.defaults)
    out = []
    for arg, default in zip(plain, defaults):
        kind = "POSITIONAL_ONLY" if arg in args.posonlyargs else "POSITIONAL_OR_KEYWORD"
        out.append((arg.arg, kind, default))
    if args.vararg:
        out.append((args.vararg.arg, "VAR_POSITIONAL", None))
    out += [(a.arg, "KEYWORD_ONLY", d) for a, d in zip(args.kwonlyargs, args.kw_defaults)]
    if args.kwarg:
        out.append((args.kwarg.arg, "VAR_KEYWORD", None))
    return out


@pytest.mark.parametrize("path, module_name", HANDWRITTEN)
def test_handwritten_stub_matches_its_module(path, module_name):
    """Names, parameter names, kinds and defaults of a hand-written stub are the runtime
    module's (every overload, for the overloaded ``jvp`` and ``vjp``)."""
    module = importlib.import_module(module_name)
    tree = ast.parse((ROOT / path).read_text())
    public = getattr(module, "__all__", None) or [
        n for n, v in vars(module).items() if not n.startswith("_")
        and getattr(v, "__module__", None) == module_name]
    defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))
               and not n.name.startswith("_")}
    assert defined == set(public), f"{path}: {sorted(defined ^ set(public))}"
    for name, overloads in _stub_functions(tree).items():
        runtime = inspect.signature(inspect.unwrap(getattr(module, name)))
        expected = [(p.name, p.kind.name, p.default) for p in runtime.parameters.values()]
        for node in overloads:
            got = _parameters(node)
            assert [g[:2] for g in got] == [e[:2] for e in expected], (name, got, expected)
            for (pname, _, default), (_, _, value) in zip(got, expected):
                if default is not None and not (isinstance(default, ast.Constant)
                                                and default.value is Ellipsis):
                    assert ast.literal_eval(default) == value, (name, pname)


def test_every_public_function_is_annotated():
    """The public functions and methods of the modules annotated in place have annotated
    parameters and results (a checker treats an unannotated one as untyped)."""
    from diffkit import custom, debug, flatten_util, testing, tree_util
    from diffkit.config import Config
    from diffkit.jit import jitted
    from diffkit.testing import checks, edges, strategies
    objects = [getattr(m, n) for m in (custom, debug, flatten_util, tree_util, checks, edges,
                                       strategies, testing) for n in m.__all__]
    objects += [jitted.jit, jitted.make_graph, jitted.Jitted, Config]
    missing = []
    for value in objects:
        members = [value] if inspect.isfunction(value) else [
            m for k, m in vars(value).items() if inspect.isfunction(m)
            and (not k.startswith("_") or k in ("__init__", "__call__"))] \
            if isinstance(value, type) else []
        for function in members:
            function = inspect.unwrap(function)
            hints = function.__annotations__
            params = [p for p in inspect.signature(function).parameters if p != "self"]
            if "return" not in hints or any(p not in hints for p in params):
                missing.append(f"{function.__module__}.{function.__qualname__}")
    assert missing == []


@pytest.mark.slow
def test_wheel_ships_the_types(tmp_path):
    """PEP 561: the wheel carries ``py.typed`` and every stub next to its module."""
    pytest.importorskip("build", reason="the 'build' package is in the test extra")
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(tmp_path),
                    str(ROOT)], check=True, capture_output=True)
    (wheel,) = tmp_path.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    expected = {"diffkit/py.typed"} | {
        str(p.relative_to(ROOT)) for p in (ROOT / "diffkit").rglob("*.pyi")}
    assert expected - names == set()
