"""Staged equations and guards know the user's line that made them, and the errors and
warnings about a recording that no longer applies name it."""

import contextlib
import linecache
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.errors import PerformanceWarning
from diffkit.jit.graph import StaleGraphError

UNARY = ["sin", "cos", "exp", "tanh", "arctan", "log1p"]


def _compiled(lines, name):
    """A function ``f(x)`` from source ``lines`` under a file name linecache knows."""
    filename = f"<user code {name}>"
    source = "def f(x):\n" + "".join(f"    {line}\n" for line in lines) + "    return x\n"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"dnp": dnp}
    exec(compile(source, filename, "exec"), namespace)   # noqa: S102
    return namespace["f"], filename


@contextlib.contextmanager
def every_line():
    """Every staged equation keeps its line (the default keeps those of the reads)."""
    before = dk.config.source_info
    dk.config.source_info = "all"
    try:
        yield
    finally:
        dk.config.source_info = before


def test_by_default_only_reads_keep_their_line():
    assert dk.config.source_info == "reads"
    graph = dk.make_graph(branching)(np.ones(2))
    assert all(e.where is None for e in graph.recording.equations)
    assert all(g.where is not None for g in graph.recording.guards)
    assert "#" not in str(graph)
    with pytest.raises(ValueError, match="source_info"):
        dk.config.source_info = "some"


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(UNARY), min_size=1, max_size=8), st.integers(0, 10**6))
def test_each_equation_knows_the_users_line(ops, name):
    f, filename = _compiled([f"x = dnp.{op}(x)" for op in ops], name)
    with every_line():
        graph = dk.make_graph(f)(np.linspace(0.1, 0.9, 3))
        listing = str(graph)
    equations = graph.recording.equations
    assert [e.prim.name for e in equations] == ops
    # line 1 is the def: op k is on line k + 2
    assert [(e.where.filename, e.where.lineno) for e in equations] == \
        [(filename, k + 2) for k in range(len(ops))]
    assert all(e.where.function == "f" for e in equations)
    assert str(equations[-1].where).endswith(f"x = dnp.{ops[-1]}(x)")
    assert f"  # {filename}:{len(ops) + 1}" in listing


def branching(x):
    y = dnp.sin(x)
    if y[0] > 0:   # the read a later call answers differently
        return y * 2.0
    return -y


def test_a_stale_graph_names_the_read_that_changed():
    graph = dk.make_graph(branching)(np.ones(2))
    (guard,) = graph.recording.guards
    assert guard.where.filename == __file__ and guard.where.function == "branching"
    with pytest.raises(StaleGraphError) as info:
        graph(-np.ones(2))
    message = str(info.value)
    assert f"{__file__}:{guard.where.lineno}" in message
    assert "if y[0] > 0:" in message


def test_reads_through_library_code_point_at_the_users_line():
    def through_numpy(x):
        norm = np.linalg.norm(x)   # NumPy's own Python code reads nothing; diffkit's does
        return x / norm if float(dnp.max(x)) > 0.5 else x   # line of the read

    graph = dk.make_graph(through_numpy)(np.array([0.3, 0.9]))
    lines = {g.where.lineno for g in graph.recording.guards}
    assert lines and all(g.where.filename == __file__ for g in graph.recording.guards)
    assert all(g.where.function == "through_numpy" for g in graph.recording.guards)
    assert all("float(dnp.max(x))" in g.where.source() for g in graph.recording.guards)


def test_a_branch_that_keeps_changing_is_named_in_the_warning():
    def counted(x):
        n = int(dnp.sum(x > 0))   # the read: a different count every call
        return x * n

    jitted = dk.jit(counted)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for k in range(1, 12):
            x = np.where(np.arange(12) < k, 1.0, -1.0)
            np.testing.assert_array_equal(jitted(x), counted(x))
    messages = [str(w.message) for w in caught if issubclass(w.category, PerformanceWarning)]
    assert messages and "int(dnp.sum(x > 0))" in messages[-1]
    assert __file__ in messages[-1]
