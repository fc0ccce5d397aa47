"""The jit guide page (docs/jit.md): every Python example runs and checks its numbers, as
tests/test_docs.py does for the user guide (each block on its own)."""

import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "jit.md"
BLOCKS = re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.S)


def test_the_page_has_its_examples():
    assert len(BLOCKS) >= 6


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_jit_guide_example_runs(index, capsys):
    exec(compile(BLOCKS[index], f"docs/jit.md block {index}", "exec"), {})
