"""Run the Python examples of a Markdown page and check the output they show.

An example shows what it prints doctest-style, in the comment lines right after the
statement that prints::

    print(dk.grad(f)(x))
    # [0.19866933 0.38941834]

Each top-level statement of a block runs on its own with its standard output captured. When
it prints, the ``# `` lines that follow it (up to the first line that is not a comment) must
be its output: the same text, compared word by word so that a long message may be wrapped
over several comment lines (numbers printed by NumPy are compared as the text NumPy prints).
A statement that prints and is followed by no comment lines fails in a strict page: every
value an example prints is shown. Comments after a statement that prints nothing are
ordinary comments.

Used by tests/test_docs.py (the documentation pages) and tests/test_readme.py (README.md).
"""

import ast
import io
import re
from contextlib import redirect_stdout

_BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def python_blocks(text):
    """The Python blocks (```python fences) of a Markdown text, in order."""
    return _BLOCK.findall(text)


def shown_output(lines, end):
    """The comment lines right after line ``end`` (1-based, the statement's last line),
    without their ``# ``: the output the example shows, or None if no comment follows."""
    shown = []
    for line in lines[end:]:
        stripped = line.strip()
        if not stripped.startswith("#"):
            break
        shown.append(stripped[2:] if stripped.startswith("# ") else stripped[1:])
    return "\n".join(shown) if shown else None


def run_example(code, filename, namespace=None, strict=True):
    """Run ``code`` statement by statement in ``namespace`` (a fresh one by default) and
    check each printed output against the comment lines after its statement.

    Returns the number of statements whose output was checked. Raises AssertionError on a
    mismatch, or (``strict``) on output that the example does not show; any exception of
    the example propagates.
    """
    namespace = {} if namespace is None else namespace
    lines = code.splitlines()
    checked = 0
    for statement in ast.parse(code, filename).body:
        compiled = compile(ast.Module([statement], type_ignores=[]), filename, "exec")
        printed = io.StringIO()
        with redirect_stdout(printed):
            exec(compiled, namespace)
        output = printed.getvalue()
        if not output:
            continue
        shown = shown_output(lines, statement.end_lineno)
        where = f"{filename}, line {statement.lineno}"
        if shown is None:
            assert not strict, (f"{where} prints\n{output}\nbut the example does not show it: "
                                "add the output as '# ' comment lines after the statement")
            continue
        assert output.split() == shown.split(), (
            f"{where} prints\n{output}\nbut the example shows\n{shown}")
        checked += 1
    return checked
