"""Staged execution: ``jit`` records a function (and its derivatives) once per argument
signature and replays the recording as straight-line NumPy; ``make_graph`` returns the
recording as a ``Graph`` to read. See ``jitted.py`` for the cache and the guards,
``graph.py`` for the graph, ``passes.py`` for its optimisation, ``codegen.py`` and
``buffers.py`` for the generated replay, ``products.py`` and ``rowblocks.py`` for the
matrix products it merges, ``linear.py`` for ``linearize`` of a jitted function,
``randomness.py`` for the refusal of random draws and ``diffkit.interpreters.staging`` for
the recording."""

from .graph import Graph, StaleGraphError
from .jitted import MAX_SPECIALISATIONS, CacheInfo, Jitted, jit, make_graph
from .randomness import RandomDrawError

__all__ = ["jit", "make_graph", "Graph", "Jitted", "CacheInfo", "RandomDrawError",
           "StaleGraphError", "MAX_SPECIALISATIONS"]
