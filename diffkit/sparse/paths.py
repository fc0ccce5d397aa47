"""The guard of a cached sparsity pattern: which path the function took.

A detected pattern is the pattern of the program the function ran: the primitives it
applied, in the shapes it applied them, and the values of the constants the structural
rules read (a constant matrix's zeros, a ``where``'s fixed condition, an index array).
Python decides which program runs by reading values: a truth test (``if x[0] > 0``), an
``int``, an index or a mask taken from a traced value. Every such read goes through
``diffkit.core.concrete`` (the reads ``jit`` keeps as guards), and ``watch_reads`` shows
them here. So a cached pattern is reused only when

- the call has the signature it was detected for (structure, shapes and dtypes of all
  arguments: the cache key),
- the plain values among the arguments that are not differentiated (arrays, numbers) are
  equal to those it was detected with (``fixed_values``: the rules may have read them), and
- the evaluation made the same concrete reads, with the same answers, in the same order
  (an exception a primitive raised counts as a read: the function may catch it),
  as the first evaluation with that pattern (made right after detection, at the point of
  detection: the same path). The same reads mean the same program, hence the same
  pattern.

The reads are compared after the evaluation pass, before its result is decompressed: the
check costs one comparison per read. A call whose reads differ is evaluated again with a
pattern detected on its own path, kept beside the others (a few per signature).

Reads of values batched over the seeds (tangents, cotangents: the 0 x inf rule's NaN checks
on them) decide how a derivative is computed, not which program runs: they are not part of
the path. Values a function closes over (globals, closures) are not arguments: as for
``jit``, their values are taken as they were when the pattern was detected.
"""

import threading

import numpy as np

from ..core.trace import PrimalTracer, Tracer, current_level
from ..interpreters.ir import same_value
from ..tree_util import tree_leaves
from .flat import array_like

__all__ = ["ReadLog", "Path", "PathCache", "fixed_values", "same_reads"]


class ReadLog:
    """The concrete reads made while it watches (``with watch_reads(log)``), in order: the
    value read (a copy), or a test's answer. Reads of values batched by a transformation
    started inside the block (the seeds' ``vmap``, the function's own) are left out."""

    __slots__ = ("base", "reads")

    def __init__(self):
        self.base = current_level()
        self.reads = []

    def __call__(self, tracer, value, test):
        if tracer is None:   # a primitive raised: the function may have caught it
            self.reads.append(("raised", type(value).__name__, test.name))
            return
        if tracer._trace.level > self.base and not isinstance(tracer, PrimalTracer):
            return   # batched over the seeds: the derivative's arithmetic, not the path
        if test is None:
            value = None if value is None else np.array(value, copy=True)
        self.reads.append(value)


def _same_read(a, b):
    if a is None or b is None:
        return a is b
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and same_value(b, a)
    try:
        return type(a) is type(b) and bool(a == b)
    except (TypeError, ValueError):   # an answer that does not compare to one bool
        return False


def same_reads(first, second):
    """Whether two lists of reads are equal entry by entry (values by shape, dtype and
    entries, NaN equal to NaN, as ``jit``'s guards compare them)."""
    return len(first) == len(second) and all(map(_same_read, first, second))


def fixed_values(args, kwargs, positions):
    """Copies of the plain array-like leaves (arrays, Python and NumPy numbers) of the
    arguments not at ``positions`` (the differentiated ones) and of ``kwargs``: values a
    structural rule or a branch may have read without a trace seeing it. Traced leaves (of
    an enclosing transformation) are left out: a branch on them is a watched read, and
    detection never reads their values (a rule treats them as varying)."""
    if not kwargs and len(args) == len(positions):   # the common call: nothing else
        return ()
    rest = ([a for i, a in enumerate(args) if i not in positions], kwargs)
    return tuple(np.array(leaf, copy=True) for leaf in tree_leaves(rest)
                 if array_like(leaf) and not isinstance(leaf, Tracer))


def _same_fixed(first, second):
    return len(first) == len(second) and all(map(same_value, second, first))


class Path:
    """One path of the function at one signature: what was made for it (``made``: a
    colouring, an evaluator), the ``fixed`` argument values it was made with, and the
    ``reads`` of its first evaluation (None before it)."""

    __slots__ = ("made", "fixed", "reads")

    def __init__(self, made, fixed=(), reads=None):
        self.made, self.fixed, self.reads = made, fixed, reads

    def accepts(self, reads):
        """Whether an evaluation that made ``reads`` took this path; the first one
        (right after detection, at its point) sets them."""
        if self.reads is None:
            self.reads = reads
            return True
        return same_reads(self.reads, reads)


class PathCache:
    """Up to ``per_key`` paths per key (an input signature), most recently used first, and
    up to ``keys`` keys (one more starts the cache afresh)."""

    def __init__(self, keys=32, per_key=8):
        self.keys, self.per_key = keys, per_key
        self._paths = {}
        self._lock = threading.Lock()

    def candidates(self, key, fixed):
        """The paths kept for ``key`` made with these ``fixed`` values, most recent first
        (a copy: safe to iterate while others are added)."""
        try:
            paths = self._paths.get(key, ())
        except TypeError:   # an unhashable static argument: nothing is kept
            return []
        return [p for p in paths if _same_fixed(p.fixed, fixed)]

    def use(self, key, path):
        """Keep ``path`` for ``key`` as the most recent one."""
        try:
            paths = self._paths.get(key)
        except TypeError:   # unhashable: nothing is kept
            return
        if paths and paths[0] is path:   # already the most recent (the common call)
            return
        with self._lock:
            paths = self._paths.get(key)
            if paths is None:
                if len(self._paths) >= self.keys:
                    self._paths.clear()
                paths = self._paths[key] = []
            if path in paths:
                paths.remove(path)
            paths.insert(0, path)
            del paths[self.per_key:]

    def count(self, key):
        """How many paths are kept for ``key``."""
        try:
            return len(self._paths.get(key, ()))
        except TypeError:
            return 0
