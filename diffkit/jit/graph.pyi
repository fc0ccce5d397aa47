# The types of diffkit.jit.graph's public names (graph.py holds the code and docstrings;
# tests/test_typing.py checks that the names and signatures agree).

from collections.abc import Sequence
from typing import Any

from .._types import PyTree
from ..errors import DiffkitError
from ..tree_util import PyTreeDef

class GuardFailure(Exception):
    guard: Any
    def __init__(self, guard: Any) -> None: ...

class Unverifiable(Exception): ...

class StaleGraphError(DiffkitError, ValueError): ...

class Graph:
    num_results: int
    raised: tuple[Any, ...]
    write_back: Any
    recording: Any
    in_tree: PyTreeDef
    out_tree: PyTreeDef
    program: Any
    equations: Any
    def __init__(self, recording: Any, in_tree: PyTreeDef, out_tree: PyTreeDef,
                 optimise: bool = True) -> None: ...
    @property
    def num_ops(self) -> int: ...
    @property
    def guards(self) -> Any: ...
    @property
    def replay_program(self) -> Any: ...
    def run_flat(self, leaves: Sequence[Any]) -> Any: ...
    def bind_flat(self, leaves: Sequence[Any]) -> Any: ...
    def __call__(self, *args: Any, **kwargs: Any) -> PyTree: ...
