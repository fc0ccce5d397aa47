"""Hessian sparsity from nonlinear interactions, without running the gradient program.

The pattern of the Hessian of a scalar ``f`` is the set of input pairs ``(i, j)`` whose
second derivative may be nonzero. ``InteractionTrace`` runs ``f`` once, forward, tracking
for every value its gradient pattern (which input entries each of its entries depends on,
the CSR rows of ``diffkit.interpreters.sparsity``). Where a primitive combines its
arguments nonlinearly it records an *interaction* at each output entry ``r``: the pairs of
the dependence rows that meet there (for ``x * y``, row ``r`` of ``x`` times row ``r`` of
``y``; for ``sin(x)``, row ``r`` of ``x`` with itself). Linear primitives record none.

An interaction matters only where its entry reaches the output: a backward sweep of boolean
vectors through the same structural rules (transposed) marks the live entries of every
value, and the pattern is the union over interactions of ``A[live].T @ B[live]`` (one
sparse product), made symmetric. For the primitives this module knows (elementwise and
linear ones, where the pairs that meet at an entry are exactly those of its arguments'
rows) this is the Jacobian pattern of the gradient program, or finer: the gradient program
also keeps products whose entries never reach the output (their cotangent is a scattered
zero, not an absent one) and reads ``x`` in the derivative of ``x ** 1``. For any other primitive (a
matrix product, a piecewise or user-defined rule, several results) detection stops and
``hessian_pattern`` takes the general route (``grad`` under ``SparsityTrace``).

Measured on the chained Rosenbrock function (n = 10**4, ``benchmarks/sparse.py``): the
forward pass applies 10 primitives where the gradient program applies 26, and detection
takes about half the time of the gradient route; the pairs are sorted into CSR once, by
SciPy, which with the forward pass's unions and gathers is most of what remains.
"""

import math

import numpy as np

from ..core.trace import Tracer, check_not_escaped, new_trace
from ..core.zeros import dtype_of, shape_of
from ..ops import sparsity_rules as sr
from .sparsity import (
    SparsityTrace,
    SparsityTracer,
    _compose_parts,
    _from_columns,
    union,
)


class Unsupported(Exception):
    """A primitive this module does not know: the caller takes the general route."""


class InteractionTracer(SparsityTracer):
    __slots__ = ("node",)

    def __init__(self, trace, primal, deps, node):
        super().__init__(trace, primal, deps)
        self.node = node


class InteractionTrace(SparsityTrace):
    """Forward tracking of dependence rows; ``tape`` holds, per value with a derivative,
    ``(node, size, ((arg_node, arg_size, structure), ...))`` and ``interactions`` the
    pairs ``(node, rows_a, rows_b)``."""

    __slots__ = ("tape", "interactions", "unsupported", "count")
    name = "Hessian sparsity detection"

    def __init__(self, level, n, local):
        super().__init__(level, n, local)
        self.tape, self.interactions = [], []
        self.unsupported = None   # the name of the first primitive not known here
        self.count = 1            # node 0 is the input

    def fail(self, what):
        if self.unsupported is None:
            self.unsupported = what
        raise Unsupported(what)

    def process(self, prim, args, params):
        primals, deps, nodes, moving = [], [], [], []
        varying = False
        for x in args:
            mine = type(x) is InteractionTracer and x._trace is self
            outer = not mine and isinstance(x, Tracer)   # see SparsityTrace.process
            moving.append(mine or outer)   # changes between calls: no constant
            primals.append(x.primal if mine else x)
            deps.append(x.deps if mine else None)
            nodes.append(x.node if mine else None)
            varying = varying or (mine and x.deps is None) or outer
        out = prim(*primals, **params)
        if prim.nondiff or all(d is None for d in deps):
            if prim.multiple_results:
                return tuple(self.plain(o, varying) for o in out)
            return self.plain(out, varying)
        kind = _kind(prim.traits, params, deps)
        if kind is None or prim.multiple_results or prim.sparsity is None or (
                varying and getattr(prim.sparsity, "reads_values", False)):
            self.fail(prim.name)
        local = self.local or _decided(prim.sparsity, moving)
        if getattr(prim.sparsity, "reads_constants", False):
            params = dict(params, constant=tuple(not m for m in moving))
        structure = prim.sparsity(primals, out, local, **params)
        structure = tuple(s.make() if type(s) is sr.Lazy else s for s in structure)
        parts = _compose_parts(structure, deps)
        total = _union_all(parts, out)
        if total is None or total.nnz == 0 or dtype_of(out).kind not in "fc":
            return self.plain(out, varying or total is not None)
        node = self.count
        self.count += 1
        size = math.prod(shape_of(out))
        self.tape.append((node, size, tuple(
            (nodes[i], deps[i].shape[0], structure[i]) for i in range(len(args))
            if parts[i] is not None)))
        live = [p for p in parts if p is not None]
        if kind == "unary":
            self.interactions.append((node, live[0], live[0]))
        elif kind == "product":
            self.interactions.append((node, parts[0], parts[1]))
        elif kind == "quotient":   # x / y: x with y, y with itself, never x with x
            self.interactions.append((node, total, parts[1]))
        elif kind == "elementwise":   # every argument's row with every other's and itself
            self.interactions.append((node, total, total))
        return InteractionTracer(self, out, total, node)

    def plain(self, value, varying):
        return InteractionTracer(self, value, None, None) if varying else value

    def process_custom(self, call, args):
        # a user-defined derivative rule: its structure is the gradient program's business
        self.fail(type(call).__name__)


def _kind(traits, params, deps):
    """How a primitive with these traits combines its arguments here: "linear", "unary",
    "product", "quotient", "elementwise", or None when its curvature is unknown or it is
    not elementwise (then the general route runs). Arguments without dependence rows
    (constants) simplify the curvature: a product with a constant is linear."""
    curvature = traits.curvature_of(params)
    if curvature == "linear":
        return "linear"
    if curvature is None or not traits.elementwise:
        return None
    traced = sum(d is not None for d in deps)
    if curvature == "unary":
        return "unary" if traced == 1 and len(deps) == 1 else None
    if curvature == "bilinear" and len(deps) == 2:
        return "product" if traced == 2 else "linear"
    if curvature == "quotient" and len(deps) == 2:
        if deps[1] is None:
            return "linear"
        return "quotient" if deps[0] is not None else "unary"
    if curvature == "elementwise":
        return "unary" if traced == 1 else "elementwise"
    return None


def _decided(rule, moving):
    deciding = getattr(rule, "deciding", None)
    return deciding is not None and not any(moving[i] for i in deciding)


def _union_all(parts, out):
    total = None
    for part in parts:
        if part is None:
            continue
        if total is None:
            total = part
        elif part is not total:
            total = union(total, part)
    if total is not None and total.shape[0] != math.prod(shape_of(out)):
        raise AssertionError(f"sparsity rule gave {total.shape[0]} rows for an output of "
                             f"shape {shape_of(out)}")
    return total


def _pull(structure, live, arg_size):
    """The entries of an argument that the live entries of the output read."""
    if structure is sr.IDENTITY:
        return live
    if structure is sr.ALL:
        return np.full(arg_size, bool(live.any()))
    if isinstance(structure, np.ndarray):
        index = np.asarray(structure, np.intp)[live]
        seen = np.zeros(arg_size, bool)
        seen[index[index >= 0]] = True
        return seen
    matrix = sr.scipy_sparse().csr_array(structure, dtype=np.float64)
    return np.asarray(matrix.T @ live.astype(np.float64)) > 0


def _pattern(trace, out_node, n, max_pairs=None):
    sp = sr.scipy_sparse()
    live = {out_node: np.ones(1, bool)}
    for node, _size, args in reversed(trace.tape):
        mask = live.pop(node, None)
        if mask is None or not mask.any():
            continue
        live[node] = mask   # kept for the interactions
        for arg_node, arg_size, structure in args:
            if arg_node == 0:
                continue
            pulled = _pull(structure, mask, arg_size)
            if arg_node in live:
                live[arg_node] = live[arg_node] | pulled
            else:
                live[arg_node] = pulled
    diagonal = np.zeros(n, bool)   # pairs (i, i), kept apart: most of them repeat
    firsts, seconds = [], []
    budget = [np.inf if max_pairs is None else max_pairs]
    for node, a, b in trace.interactions:
        mask = live.get(node)
        if mask is not None and mask.any():
            _pairs(a, b, mask, diagonal, firsts, seconds, budget)
    kind = np.int32 if n < 2**31 else np.int64   # half the memory: large arrays fault pages
    on = np.flatnonzero(diagonal).astype(kind)
    rows = np.concatenate([on, *firsts, *seconds], dtype=kind, casting="same_kind")
    cols = np.concatenate([on, *seconds, *firsts], dtype=kind, casting="same_kind")
    pattern = sp.coo_array((np.ones(rows.size, bool), (rows, cols)), shape=(n, n)).tocsr()
    pattern.sum_duplicates()   # sorted indices, each pair once
    return sp.csr_array(pattern)


def _pairs(a, b, mask, diagonal, firsts, seconds, budget):
    """The input pairs ``(i, j)`` with ``i`` in row ``r`` of the CSR array ``a`` and ``j`` in
    row ``r`` of ``b``, over the entries ``r`` where ``mask`` holds: ``diagonal[i]`` set
    for a pair ``(i, i)`` of a row with itself, the others appended to ``firsts`` and
    ``seconds`` (each pair in one orientation at least). ``budget``: a one-entry list of
    the pairs still allowed, lowered here (``_TooDense`` when it runs out)."""
    if mask.all():   # the common case: slices, no gathers
        starts_a, starts_b = a.indptr[:-1], b.indptr[:-1]
        len_a, len_b = np.diff(a.indptr), np.diff(b.indptr)
    else:
        rows = np.flatnonzero(mask)
        starts_a, starts_b = a.indptr[rows], b.indptr[rows]
        len_a = a.indptr[rows + 1] - starts_a
        len_b = b.indptr[rows + 1] - starts_b
    budget[0] -= int(np.dot(len_a, len_b))   # the pairs this interaction lists
    if budget[0] < 0:
        raise _TooDense
    long_a, long_b = int(len_a.max(initial=0)), int(len_b.max(initial=0))
    if long_a * long_b > 16:   # long rows: every pair of every row, enumerated
        counts = len_a * len_b
        owner = np.repeat(np.arange(counts.size), counts)
        offsets = np.zeros(counts.size, np.intp)
        np.cumsum(counts[:-1], out=offsets[1:])
        k = np.arange(owner.size) - offsets[owner]
        width = len_b[owner]
        firsts.append(a.indices[starts_a[owner] + k // width])
        seconds.append(b.indices[starts_b[owner] + k % width])
        return
    same = a is b
    for i in range(long_a):   # short rows: one gather per pair of positions
        has_i = len_a > i
        for j in range(i if same else 0, long_b):
            both = (len_b > j) if same else has_i & (len_b > j)   # same: j >= i
            if same and i == j:
                diagonal[a.indices[starts_a[both] + i]] = True
            elif both.all():
                firsts.append(a.indices[starts_a + i])
                seconds.append(b.indices[starts_b + j])
            else:
                firsts.append(a.indices[starts_a[both] + i])
                seconds.append(b.indices[starts_b[both] + j])


def interaction_pattern(scalar_fun, x, local=False, max_pairs=None):
    """The ``(n, n)`` Hessian pattern of ``scalar_fun`` (a function of the vector ``x``
    returning one number, as a scalar or a vector of one entry), or None when it applies a
    primitive this module does not know or returns more numbers (the caller reports it),
    or when the interactions would list more than ``max_pairs`` pairs of coordinates (a
    caller that wants only a sparse pattern stops before building a dense one)."""
    sp = sr.scipy_sparse()
    n = math.prod(shape_of(x))
    with new_trace(InteractionTrace, n, local) as trace:
        try:
            out = scalar_fun(InteractionTracer(trace, x, _from_columns(np.arange(n), n), 0))
        except Unsupported:
            return None
        if trace.unsupported is not None:   # raised and caught inside the function
            return None
        if math.prod(shape_of(out)) != 1:
            return None
        if type(out) is InteractionTracer and out._trace is trace:
            node = out.node
        else:
            check_not_escaped(out, "hessian_sparsity")
            node = None
        if node is None:
            return sp.csr_array((n, n), dtype=bool)
        if node == 0:   # the function returns (an entry of) its input: linear
            return sp.csr_array((n, n), dtype=bool)
        try:
            return _pattern(trace, node, n, max_pairs)
        except _TooDense:
            return None


class _TooDense(Exception):
    """More pairs than the caller's ``max_pairs``."""
