"""Sparsity detection: which input entries each output entry of a function depends on.

A ``SparsityTracer`` carries its value (``primal``, so Python control flow and rules that
look at values still run) and ``deps``, a boolean CSR array of shape ``(size, n)``: row
``r`` holds the input entries that entry ``r`` of the value depends on. An input vector of
``n`` entries starts as the identity. ``SparsityTrace.process`` runs the primitive on the
values and asks its structural rule (``prim.sparsity``, see
``diffkit.ops.sparsity_rules``) how each output entry depends on each argument's
entries, then composes: ``deps(out) = sum_i L_i @ deps(arg_i)`` with boolean arithmetic
(a gather of rows when ``L_i`` is one, nothing at all for an elementwise identity).

By default the rules are *global*: they read shapes (and integer index arrays), never the
values, so the pattern holds at every input of these shapes (as long as the function's
own Python control flow takes the same path). With ``local=True`` piecewise primitives
keep only the branch taken at the given values (``where``, ``maximum``, ``max``).

Values a rule may read are those of constants: a constant matrix's zeros (``matmul``), a
``where``'s condition that does not depend on the inputs, an index array. A value traced
by an enclosing transformation (an argument under ``jit``, a batch under ``vmap``) is no
constant: it changes from call to call (or from one batch member to the next) without a
read that anyone could check, so it is treated like the inputs, as *varying*: its zeros are
not used, both branches of its ``where`` are kept, an index read from it gives a dense
block. The pattern then holds for all its values.

A primitive without a rule gets a dense block (each output entry depends on every entry of
its differentiable arguments), with a ``DensePatternWarning`` naming it. Primitives without
a derivative (``nondiff``) and values of integer or boolean dtype carry no derivative
dependence, but they are still traced as *varying* values (``deps=None``): an index array
computed from the inputs (``argsort`` for a ``sort``, ``searchsorted``) can send any entry
anywhere, so a rule that reads index values (marked ``reads_values``) gives a dense block
there, unless ``local=True``. Functions with user-defined rules (``custom_jvp``,
``custom_vjp``, ``checkpoint``) are traced through their primal function.

Representation (measured in ``benchmarks/sparsity_representation.py``): a SciPy CSR
array per value. Its operations cost a fixed ~20-80 us plus time proportional to the
nonzeros. The alternative, one Python integer per entry used as a bit set, is 5 to 50
times faster on small problems (a few hundred inputs) but costs time proportional to
entries x inputs: on a 64 x 64 grid its unions are already twice as slow, and at 10**4
inputs (a chained objective) hundreds of times. Sparse derivatives pay off on large
problems, so the CSR array it is. A third form was tried for values with a few entries per
row: the columns as a padded ``(rows, k)`` integer array, gathered and merged with NumPy
alone (unions by column-wise comparisons, CSR built only for matrix rules and at the end).
It was 25-30% slower than the CSR arrays, both for the Hessian pattern of the chained
Rosenbrock function (n = 10**4) and for the Brusselator's Jacobian pattern (32 x 32): the
many small NumPy operations on narrow 2-D arrays cost more than SciPy's C merges.
"""

import math
import os
import sys
import warnings

import numpy as np

from ..core.source_info import first_outside
from ..core.trace import PrimalTracer, Trace, Tracer, check_not_escaped, new_trace
from ..core.zeros import dtype_of, shape_of
from ..errors import DensePatternWarning
from ..ops import sparsity_rules as sr


class SparsityTracer(PrimalTracer):
    """``deps`` is None for a value computed from the inputs that carries no derivative (a
    comparison, an ``argsort``): its value still depends on the inputs, which matters
    where it decides a structure (an index array)."""

    __slots__ = ("deps",)

    def __init__(self, trace, primal, deps):
        self._trace = trace
        self.primal = primal
        self.deps = deps


class SparsityTrace(Trace):
    __slots__ = ("n", "local")
    name = "sparsity detection"

    def __init__(self, level, n, local):
        super().__init__(level)
        self.n = n
        self.local = local

    def process(self, prim, args, params):
        primals, deps, moving = [], [], []
        varying = False   # some argument without derivative depends on the inputs
        for x in args:
            mine = type(x) is SparsityTracer and x._trace is self
            outer = not mine and isinstance(x, Tracer)
            moving.append(mine or outer)   # changes between calls: no constant
            primals.append(x.primal if mine else x)
            deps.append(x.deps if mine else None)
            varying = varying or (mine and x.deps is None) or outer
        out = prim(*primals, **params)
        outs = out if prim.multiple_results else (out,)
        if prim.nondiff:
            results = tuple(SparsityTracer(self, o, None) for o in outs)
        else:
            rule = prim.sparsity
            if rule is None:
                local = _dense_fallback(prim, primals, outs, warn=True)
            elif varying and not self.local and getattr(rule, "reads_values", False):
                # an index computed from the inputs: any entry may land anywhere
                local = _dense_fallback(prim, primals, outs, warn=False)
            else:
                local = self.local or _decided(rule, moving)
                if getattr(rule, "reads_constants", False):
                    params = dict(params, constant=tuple(not m for m in moving))
                local = rule(primals, out, local, **params)
                if not prim.multiple_results:
                    local = (local,)
            results = tuple(self.wrap(o, _compose(per_arg, deps, o, self.n), varying)
                            for o, per_arg in zip(outs, local))
        return results if prim.multiple_results else results[0]

    def process_custom(self, call, args):
        return tuple(call.fun(*args))

    def wrap(self, value, deps, varying):
        if deps is None or deps.nnz == 0 or dtype_of(value).kind not in "fc":
            return SparsityTracer(self, value, None) if (varying or deps is not None) \
                else value
        return SparsityTracer(self, value, deps)


def _decided(rule, moving):
    """Whether the arguments that decide the rule's branches (``where``'s condition) are
    all constants (``moving``: the values that depend on the inputs or are traced by an
    enclosing transformation): then the local structure holds everywhere."""
    deciding = getattr(rule, "deciding", None)
    return deciding is not None and not any(moving[i] for i in deciding)


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _in_diffkit(frame):
    return frame.f_code.co_filename.startswith(_PACKAGE)


def _outside_diffkit():
    """The ``stacklevel`` of the innermost caller outside the diffkit package (the line of
    the user's function that applied the primitive)."""
    _, passed = first_outside(sys._getframe(1), _in_diffkit)
    return passed + 1


def _dense_fallback(prim, args, outs, warn):
    if warn:
        warnings.warn(f"primitive {prim.name!r} has no sparsity rule: each of its output "
                      "entries is taken to depend on every entry of its inputs (a dense "
                      "block)", DensePatternWarning, stacklevel=_outside_diffkit())
    return tuple(tuple(sr.dense(math.prod(shape_of(o)), math.prod(shape_of(a)))
                       if sr.differentiable(a) else None for a in args) for o in outs)


def _compose_parts(per_arg, deps):
    """Each argument's contribution to the dependence of the output (None for none)."""
    sp = sr.scipy_sparse()
    parts = []
    for local, dep in zip(per_arg, deps):
        if dep is None or local is None:
            part = None
        elif local is sr.IDENTITY:
            part = dep
        elif isinstance(local, np.ndarray):
            part = gather_rows(dep, local)
        elif type(local) is sr.Lazy:
            part = gather_rows(dep, local.make())
        elif local is sr.ALL:
            part = union_of_rows(dep)
        else:
            part = sp.csr_array(local @ dep)
        parts.append(part)
    return parts


def _compose(per_arg, deps, out, n):
    """The dependence of ``out`` from each argument's local structure and dependence."""
    total = None
    for part in _compose_parts(per_arg, deps):
        if part is None:
            continue
        if total is None:
            total = part
        elif part is not total:   # x * x: one dependence, nothing to add
            total = union(total, part)
    if total is not None and total.shape[0] != math.prod(shape_of(out)):  # a rule's bug
        raise AssertionError(f"sparsity rule gave {total.shape[0]} rows for an output of "
                             f"shape {shape_of(out)}")
    return total


# Fast paths. Most values of a program read one input entry per entry, or none (a slice, a
# scaled input, a scattered cotangent). Such a CSR array carries ``single = True`` and is
# handled through its column per row (-1 for none), with NumPy alone: SciPy's operations
# cost a fixed ~50 us each, which dominates detection on long vectors.


def _from_columns(cols, width):
    """The CSR array whose row ``r`` holds column ``cols[r]`` (nothing where it is -1)."""
    sp = sr.scipy_sparse()
    present = cols >= 0
    if present.all():
        indptr = np.arange(cols.size + 1, dtype=np.int32 if width < 2**31 else np.int64)
        cols = cols.astype(indptr.dtype, copy=False)
        out = sp.csr_array((np.ones(cols.size, bool), cols, indptr), shape=(cols.size, width))
    else:
        indptr = np.zeros(cols.size + 1, dtype=np.int32 if width < 2**31 else np.int64)
        np.cumsum(present, out=indptr[1:])
        kept = cols[present].astype(indptr.dtype, copy=False)
        out = sp.csr_array((np.ones(kept.size, bool), kept, indptr), shape=(cols.size, width))
    out.single = True
    return out


def _columns(deps):
    """The column of each row of a ``single`` CSR array, -1 for an empty row."""
    if deps.indptr[-1] == deps.shape[0]:
        return deps.indices[:deps.shape[0]]
    cols = np.full(deps.shape[0], -1, np.intp)
    cols[np.diff(deps.indptr) > 0] = deps.indices[:deps.indptr[-1]]
    return cols


def union(a, b):
    """The row-wise union of two CSR arrays of one shape."""
    if not (getattr(a, "single", False) and getattr(b, "single", False)):
        return a + b
    sp = sr.scipy_sparse()
    x, y = _columns(a), _columns(b)
    width = a.shape[1]
    if x.min(initial=0) < 0 or y.min(initial=0) < 0:   # empty rows: -1 sorts last
        lo = np.minimum(np.where(x < 0, width, x), np.where(y < 0, width, y))
    else:
        lo = np.minimum(x, y)
    hi = np.maximum(x, y)
    present = lo < width
    two = hi > lo
    two &= present
    if not two.any():
        return _from_columns(np.where(present, lo, -1), width)
    counts = present.astype(np.intp)
    counts += two
    indptr = np.zeros(a.shape[0] + 1, dtype=np.intp)
    np.cumsum(counts, out=indptr[1:])
    cols = np.empty(int(indptr[-1]), dtype=np.intp)
    starts = indptr[:-1]
    cols[starts[present]] = lo[present]
    cols[starts[two] + 1] = hi[two]
    return sp.csr_array((np.ones(cols.size, bool), cols, indptr), shape=a.shape)


def union_of_rows(deps):
    """One row holding every column any row of the CSR array ``deps`` has."""
    sp = sr.scipy_sparse()
    seen = np.zeros(deps.shape[1], bool)
    seen[deps.indices[:deps.indptr[-1]]] = True
    cols = np.flatnonzero(seen)
    return sp.csr_array((np.ones(cols.size, bool), cols, np.array([0, cols.size])),
                        shape=(1, deps.shape[1]))


def gather_rows(deps, index):
    """Rows ``index`` of the CSR array ``deps`` (an empty row where ``index`` is -1), built
    directly from its index arrays: the hot path of indexing and broadcasting."""
    sp = sr.scipy_sparse()
    index = np.asarray(index, np.intp)
    missing = index < 0
    some_missing = bool(missing.any())
    if getattr(deps, "single", False):
        cols = _columns(deps)[index]
        if some_missing:
            cols[missing] = -1
        return _from_columns(cols, deps.shape[1])
    safe = np.where(missing, 0, index) if some_missing else index
    starts = deps.indptr[safe]
    lengths = deps.indptr[safe + 1] - starts
    if some_missing:
        lengths[missing] = 0
    indptr = np.zeros(len(index) + 1, dtype=deps.indptr.dtype)
    np.cumsum(lengths, out=indptr[1:])
    total = int(indptr[-1])
    positions = np.repeat(starts - indptr[:-1], lengths) + np.arange(total)
    return sp.csr_array((np.ones(total, bool), deps.indices[positions], indptr),
                        shape=(len(index), deps.shape[1]))


# --- the entry point ---------------------------------------------------------------------


def sparsity_flat(fun, x, *, local=False, name="jacobian_sparsity"):
    """Run ``fun`` (a function of one vector returning one array) on the vector ``x`` while
    tracking dependences; returns ``(out, pattern)``, ``pattern`` a boolean CSR array of
    shape ``(out.size, x.size)``."""
    sp = sr.scipy_sparse()
    n = math.prod(shape_of(x))
    with new_trace(SparsityTrace, n, local) as trace:
        start = _from_columns(np.arange(n), n)
        out = fun(SparsityTracer(trace, x, start))
        if type(out) is SparsityTracer and out._trace is trace:
            value, deps = out.primal, out.deps
        else:
            value, deps = check_not_escaped(out, name), None
        if deps is None:   # no derivative
            deps = sp.csr_array((math.prod(shape_of(value)), n), dtype=bool)
    deps = sp.csr_array(deps, dtype=bool)
    if not deps.has_canonical_format:
        deps.sum_duplicates()   # sorts the indices too
    return value, deps
