"""Every skip in the test suite says why it skips and what would run it (issue 28: a skip
nobody can explain hides a test nobody runs).

The checker reads every test module with ``ast`` (it imports nothing) and finds each
``pytest.skip(...)``, ``pytest.importorskip(...)`` and ``pytest.mark.skipif(...)``: each must
give its reason (``importorskip`` and ``skipif`` a ``reason=``; ``skip`` its message) of a
few words at least, so that the summary line of a skipped test reads as an explanation
("pip install ...", "no real Jacobian: ..."), not as a bare module name.
"""

import ast
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

TESTS = Path(__file__).resolve().parent
MIN_WORDS = 3


def _is_pytest_call(node, name):
    """Whether ``node`` calls ``pytest.<name>`` or ``pytest.mark.<name>``."""
    func = node.func
    if not isinstance(func, ast.Attribute) or func.attr != name:
        return False
    owner = func.value
    if isinstance(owner, ast.Name):
        return owner.id == "pytest"
    return isinstance(owner, ast.Attribute) and owner.attr == "mark" \
        and isinstance(owner.value, ast.Name) and owner.value.id == "pytest"


def _text(node, constants):
    """The words a reason argument spells (string pieces of an f-string or a
    concatenation, a module-level string constant by its name; any other name or call
    counts as one word)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return " ".join(_text(part, constants) if isinstance(part, ast.Constant) else "x"
                        for part in node.values)
    if isinstance(node, ast.BinOp):
        return f"{_text(node.left, constants)} {_text(node.right, constants)}"
    if isinstance(node, ast.Name) and node.id in constants:
        return constants[node.id]
    return "x"


def _module_strings(tree):
    """``{name: text}`` of the module's top-level assignments of a string to a name."""
    strings = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            text = _text(node.value, strings)
            if text != "x":
                strings[node.targets[0].id] = text
    return strings


def _reason(call, name, constants):
    keywords = {k.arg: k.value for k in call.keywords}
    if name == "skip":
        node = call.args[0] if call.args else keywords.get("reason")
    else:
        node = keywords.get("reason")
    return None if node is None else _text(node, constants)


def unexplained_skips(source, filename="<test>"):
    """``[(line, what)]`` for each skip in ``source`` without a reason of MIN_WORDS words."""
    found = []
    tree = ast.parse(source, filename)
    constants = _module_strings(tree)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        for name in ("skip", "importorskip", "skipif"):
            if _is_pytest_call(node, name):
                reason = _reason(node, name, constants)
                if reason is None or len(reason.split()) < MIN_WORDS:
                    found.append((node.lineno, name))
    return found


def test_every_skip_in_the_suite_gives_its_reason():
    problems = []
    for path in sorted(TESTS.rglob("*.py")):
        for line, name in unexplained_skips(path.read_text(), str(path)):
            problems.append(f"{path.relative_to(TESTS.parent)}:{line}: pytest.{name} without "
                            "a reason saying why it skips and what would run it")
    assert not problems, "\n".join(problems)


# --- the checker itself -----------------------------------------------------------------

EXPLAINED = [
    'pytest.importorskip("dask", reason="pip install \'diffkit[distributed]\'")',
    'pytest.skip(f"no real Jacobian: {name}")',
    '@pytest.mark.skipif(True, reason="NumPy without " + "row_stack here")\ndef t(): pass',
]
BARE = [
    'pytest.importorskip("dask")',
    'pytest.skip()',
    'pytest.skip("integer")',
    '@pytest.mark.skipif(True)\ndef t(): pass',
    'pytest.importorskip("jax", reason="jax")',
]


@given(st.sampled_from(EXPLAINED), st.sampled_from(BARE), st.booleans(),
       st.integers(0, 3))
def test_the_checker_finds_the_bare_skip_among_explained_ones(explained, bare, first, pad):
    lines = [explained, bare] if first else [bare, explained]
    source = "import pytest\n" + "\n" * pad + "\n".join(lines) + "\n"
    found = unexplained_skips(source)
    bare_line = 2 + pad + (0 if not first else explained.count("\n") + 1)
    assert [line for line, _ in found] == [bare_line]


def test_a_reason_held_in_a_module_constant_counts():
    source = ('import pytest\nWHY = "mpmath is in " + "the test extra"\nSHORT = "mpmath"\n'
              'pytest.importorskip("mpmath", reason=WHY)\n'
              'pytest.importorskip("mpmath", reason=SHORT)\n')
    assert unexplained_skips(source) == [(5, "importorskip")]


def test_other_calls_named_skip_are_not_pytest_skips():
    source = "import pytest\nitertools.skip(1)\nobj.mark.skipif(x)\npytest.fail('no')\n"
    assert unexplained_skips(source) == []
