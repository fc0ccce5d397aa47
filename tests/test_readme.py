"""The README's Python examples run as written and its quick start matches CI."""

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_example_runs(code):
    exec(compile(code, str(README), "exec"), {})


def test_quick_start_test_command_is_what_ci_runs():
    shell = re.search(r"```sh\n(.*?)```", README.read_text(), re.S).group(1)
    test_command = shell.splitlines()[1].split("#")[0].strip()
    ci = (README.parent / ".ci" / "run").read_text()
    assert test_command in ci
