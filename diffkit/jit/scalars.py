"""Values of one entry in the plain replay: NumPy scalars where the recording made 0-d
arrays, and a vector of such values made in one call.

On a problem of a few unknowns (an ODE's right-hand side and its vector-Jacobian
products) every NumPy call's fixed cost is the replay's cost, and the kind of a value of
one entry sets it: an operation on a NumPy scalar (``np.float64``) costs a tenth of the same
operation on a 0-d array. Three patterns of the recorded code make 0-d arrays or pay for
them:

- **An entry read as a 0-d array**: ``reshape(x, ())`` of a one-entry value (the
  cotangent of a ``stack`` is sliced ``ct[0:1]``, then reshaped) gives a 0-d array.
  ``element`` reads the entry instead, ``x[0]`` (``x[0, 0]``, ``x[()]`` of a 0-d value):
  a NumPy scalar. Through basic indexing and reshapes (views, or copies of the same
  entries) it reads the first array of the chain (``w[0:2][0:1]`` reshaped is ``w[0]``);
  the views go where nothing else reads them.
- **A stack of values of no dimension**: ``concatenate`` of ``reshape(a, (1,))``,
  ``reshape(b, (1,))`` ... along axis 0 (what ``stack`` and ``array`` of scalars record)
  becomes ``np.array((a, b, ...), dtype)`` with the recorded dtype (``stack``); the
  reshapes go where nothing else reads them. A piece that is such a stack itself gives
  its values; a small vector, or its negation (``concatenate([f, -a, -b])``, an adjoint
  system's right-hand side), gives its entries read as numbers (and negated as numbers,
  exact as the vector's negation), where that costs less than the calls it replaces.
- **A sum of scatters read entry by entry**: a cotangent of a small vector summed from
  scatters of numbers (a reverse pass reading the vector entry by entry) that is read only
  as entries (by the stack above) is summed entry by entry as numbers, with the scatters
  and the vector gone. The sum of vectors adds 0.0 to the entries a scatter misses,
  which turns -0.0 into +0.0: the numbers get 0.0 added where that can change them.

Where a scalar is exact: a NumPy scalar and a 0-d array hold the same number, and every
ufunc gives the same result and the same floating-point errors on either (it reads both as
0-d). What else may see the value is limited to what gives the same answer on both:
elementwise ufuncs (called, or written as NumPy's operators, which on two NumPy scalars
run NumPy's scalar arithmetic: the ufunc's IEEE result and errors, but for the sign of a
NaN made from two NaNs, as for the scalars indexing gives; the generated code keeps a
complex product of values of no dimension as a call, ``codegen``), ``scalar_power``
(``np.power``), a reshape to at least one dimension (a new array either way), the values
of a basic ``scatter_add`` (written into zeros), a ``stack`` above, and the NaN checks
of the 0 x inf rule. A value returned, or read by anything else, stays a 0-d array.
"""

import math

import numpy as np

from ..core.primitive import Primitive, Traits
from ..interpreters.ir import Const, DefUse, Equation, is_numpy
from ..ops.families import holds_nan, holds_nonfinite
from .buffers import writes_out

# Primitives of rewritten programs only (no rules: they are listed and replayed, never
# differentiated; a replay under a transformation runs the recording before the rewrite).
#: ``x[index]``: an entry of ``x`` as a NumPy scalar (``params["index"]``: ints)
element = Primitive("element", lambda x, index: x[index], register=False,
                    traits=Traits(reads_index=lambda params: params["index"]))
#: ``np.array(values, dtype)``: a vector of values of no dimension (``params["dtype"]``)
stack = Primitive("stack", lambda *values, dtype: np.array(values, dtype), register=False,
                  traits=Traits(packs_scalars=lambda params: params["dtype"]))

_SCALAR_GUARDS = (None, holds_nan, holds_nonfinite)


def narrow(program, guards_after):
    """``program`` with the stacks and entry reads above (a copy; the program itself where
    there is none)."""
    if not any(eqn.prim.traits.joins_along is not None or _to_no_dimension(eqn)
               for eqn in program.equations):
        return program   # nothing to rewrite: no stack, no entry read
    r = _Rewrite(program, guards_after)
    for i, eqn in enumerate(r.equations):
        if eqn.prim.traits.joins_along is not None:
            r.stack(i, eqn)
    index = DefUse(r.equations)   # after the stacks, which replace equations in place
    for i, eqn in enumerate(r.equations):
        if _to_no_dimension(eqn):
            new = _element(eqn, r.equations, index, r.outputs, guards_after, r.avals,
                           r.numpy)
            if new is not None:
                r.equations[i] = new
                r.changed = True
    if not r.changed:
        return program
    copy = type(program).__new__(type(program))
    copy.__dict__.update(program.__dict__)
    copy.avals, copy.numpy = r.avals, r.numpy
    equations = _drop_unread(r.finish(), r.outputs, guards_after)
    equations = _chains_of_numbers(equations, r.outputs, guards_after, r.avals, r.numpy)
    copy.equations = _drop_unread(equations, r.outputs, guards_after)
    return copy


def _to_no_dimension(eqn):
    """Whether ``eqn`` reshapes a value to no dimension (a 0-d array)."""
    reshapes_to = eqn.prim.traits.reshapes_to
    return reshapes_to is not None and tuple(reshapes_to(eqn.params)) == ()


#: The most entries of a stack made of vectors' entries (``np.array`` of more numbers
#: costs more per number)
MAX_STACK = 32
#: What NumPy 2.4's calls cost on small values, in nanoseconds (measured on one machine;
#: only their proportions matter): ``np.concatenate`` of P pieces costs ``concatenate +
#: piece * P``, negating a small vector ``negate_vector``, reshaping a number to one entry
#: ``reshape``; ``np.array`` of N numbers ``array + number * N``, reading a vector's entry
#: ``read`` and negating a number ``negate_number``.
COST = {"concatenate": 310, "piece": 55, "negate_vector": 170, "reshape": 70,
        "array": 170, "number": 8, "read": 30, "negate_number": 20}


class _Rewrite:
    """The program's equations being rewritten: replaced in place (same index), removed,
    or new ones inserted before an index; new variables of no dimension."""

    def __init__(self, program, guards_after):
        self.equations = list(program.equations)
        self.avals, self.numpy = list(program.avals), list(program.numpy)
        self.outputs = {o for o in program.outputs if type(o) is int}
        self.index = program.def_use()
        self.guards_after = guards_after
        self.removed, self.inserted = set(), {}
        self.changed = False

    def private(self, var):
        """Whether ``var`` is read by one equation once, and not returned or guarded."""
        return self.index.reads(var) == 1 and var not in self.outputs \
            and not self.guards_after.get(var)

    def maker(self, ref):
        i = self.index.maker(ref) if type(ref) is int else None
        return (None, None) if i is None or i in self.removed else (i, self.equations[i])

    def new_var(self, dtype):
        self.avals.append(((), dtype))
        self.numpy.append(True)
        return len(self.avals) - 1

    def stack(self, i, eqn):
        """Make the ``concatenate`` at ``i`` (a join along axis 0, of vectors of its dtype)
        a ``stack`` where every piece is a value of no dimension reshaped to one entry, a
        stack read by nothing else, a constant, or a small vector or the negation of one
        (its entries read, and negated, as numbers), and the stack costs less than the
        calls it replaces (the costs above)."""
        shape, dtype = eqn.avals[0]
        dtype = np.dtype(dtype)
        if eqn.prim.traits.joins_along(eqn.params) != 0 or len(shape) != 1 \
                or dtype.kind not in "biufc":
            return
        values, before, gone = [], [], []
        vectors = False   # some piece a vector of more than one entry
        # what the stack saves: the concatenate and the calls it drops, less its own
        saved = COST["concatenate"] + COST["piece"] * len(eqn.inputs) - COST["array"]
        for ref in eqn.inputs:
            if _dtype(ref, self.avals) != dtype:
                return
            if type(ref) is not int:   # a constant vector: its entries
                value = ref.value
                if type(value) is not np.ndarray or value.ndim != 1:
                    return
                values.extend(Const(v) for v in value)
                vectors = vectors or value.shape != (1,)
                continue
            j, maker = self.maker(ref)
            traits = maker.prim.traits if maker is not None else None
            if traits is not None and traits.reshapes_to is not None \
                    and self.avals[ref][0] == (1,) \
                    and _no_dimension(maker.inputs[0], self.avals) \
                    and _dtype(maker.inputs[0], self.avals) == dtype:
                values.append(maker.inputs[0])
                saved += COST["reshape"] if self.private(ref) else 0
            elif traits is not None and traits.packs_scalars is not None \
                    and self.private(ref):
                values.extend(maker.inputs)
                gone.append(j)
                saved += COST["array"]
            else:
                entries = self._entries(ref, maker, j, before, gone)
                if entries is None:
                    return
                values.extend(entries)
                vectors = True
                saved -= COST["read"] * len(entries)
                if gone and gone[-1] == j:
                    saved += COST["negate_vector"] - COST["negate_number"] * len(entries)
        if saved <= COST["number"] * len(values) or (vectors and len(values) > MAX_STACK):
            return
        self.equations[i] = Equation(stack, {"dtype": dtype}, tuple(values), eqn.outs,
                                     eqn.avals, eqn.errstate)
        self.inserted[i] = before
        self.removed.update(gone)
        self.changed = True

    def _entries(self, ref, maker, j, before, gone):
        """The entries of the vector ``ref`` as new values of no dimension (read from it, or
        negated entries of the vector it negates), with their equations added to
        ``before``; ``None`` where it is neither."""
        shape, dtype = self.avals[ref]
        kind = np.dtype(dtype)
        negate = maker is not None and maker.prim.traits.operator == "neg" \
            and not maker.params \
            and self.private(ref) and type(maker.inputs[0]) is int \
            and self.avals[maker.inputs[0]] == (shape, dtype) \
            and kind.kind in "fc" and kind.itemsize >= 4   # a number's negation: ``-x``
        source = maker.inputs[0] if negate else ref
        if len(shape) != 1 or not self.numpy[source] or shape[0] > MAX_STACK:
            return None
        entries = []
        for k in range(shape[0]):
            entry = self.new_var(dtype)
            before.append(Equation(element, {"index": (k,)}, (source,), (entry,),
                                   (((), dtype),), None))
            if negate:
                value = self.new_var(dtype)
                before.append(Equation(maker.prim, {}, (entry,), (value,), (((), dtype),),
                                       maker.errstate))
                entry = value
            entries.append(entry)
        if negate:
            gone.append(j)
        return entries

    def finish(self):
        out = []
        for i, eqn in enumerate(self.equations):
            out.extend(self.inserted.get(i, ()))
            if i not in self.removed:
                out.append(eqn)
        return out


def _dtype(ref, avals):
    return np.dtype(avals[ref][1]) if type(ref) is int else np.asarray(ref.value).dtype


def _no_dimension(ref, avals):
    """Whether ``ref`` is a value of no dimension: a variable, or a NumPy or Python number."""
    if type(ref) is int:
        return avals[ref][0] == ()
    value = ref.value
    return (is_numpy(value) or type(value) in (bool, int, float, complex)) \
        and np.shape(value) == ()


def _scalar_safe(eqn):
    """Whether ``eqn`` gives the same result (value, type, errors) on a NumPy scalar as on a
    0-d array holding the same number, in any of its inputs."""
    if writes_out(eqn):   # a ufunc (or like one) returns a NumPy scalar for scalars
        return "out" not in eqn.params
    traits = eqn.prim.traits
    if traits.packs_scalars is not None:
        return True
    if traits.reshapes_to is not None:   # a NumPy scalar reshaped to () stays a scalar
        return len(traits.reshapes_to(eqn.params)) > 0
    # the values, written into zeros
    return traits.written_index(eqn.params) is not None


def _element(eqn, equations, index, outputs, guards_after, avals, numpy):
    """The ``element`` equation for a reshape to no dimension of a one-entry NumPy value
    whose readers are all ``_scalar_safe`` (``None`` where the 0-d array must stay)."""
    (x,) = eqn.inputs
    (out,) = eqn.outs
    if type(x) is not int or not numpy[x] or math.prod(avals[x][0]) != 1:
        return None
    dtype = np.dtype(avals[x][1])
    if dtype.kind not in "fc" or dtype.itemsize < 4 or out in outputs:
        return None
    if any(g.test not in _SCALAR_GUARDS for g in guards_after.get(out, ())):
        return None
    if not all(_scalar_safe(equations[r]) for r in index.readers(out)):
        return None

    moves = []   # the basic indexing and reshapes from the first array to x, last first
    root = x
    while index.maker(root) is not None:
        maker = equations[index.maker(root)]
        (source,) = maker.inputs if len(maker.inputs) == 1 else (None,)
        move = _entries_moved(maker)
        if type(source) is not int or not numpy[source] or move is None:
            break
        moves.append(move)
        root = source
    shape = avals[root][0]
    probe = np.arange(math.prod(shape)).reshape(shape)   # where each entry sits in root
    for move in reversed(moves):
        probe = move(probe)
    flat = int(probe.reshape(-1)[0])
    index = tuple(int(i) for i in np.unravel_index(flat, shape)) if shape else ()
    return Equation(element, {"index": index}, (root,), eqn.outs, eqn.avals, eqn.errstate)


def _entries_moved(eqn):
    """``move(array)``: where ``eqn`` puts the entries of its single argument, applied to
    an array of that argument's shape (a reshape, ``reshapes_to``, or a basic index read,
    ``reads_index``); None for any other equation."""
    traits = eqn.prim.traits
    if traits.reshapes_to is not None:
        shape = traits.reshapes_to(eqn.params)
        return lambda array: array.reshape(shape)
    index = traits.read_index(eqn.params)
    if index is not None:
        return lambda array: array[index]
    return None


def _moves_entries(traits):
    """Whether a primitive only reads or writes entries: a reshape, an index read or a
    write into zeros (what the rewrites leave unread)."""
    return traits.reshapes_to is not None or traits.reads_index is not None \
        or traits.writes_index is not None


def _drop_unread(equations, outputs, guards_after):
    """Drop the reshapes, index reads and scatters that nothing reads any more."""
    uses = DefUse(equations)
    lost = {}   # variable -> its reads by the equations dropped
    kept = []
    for eqn in reversed(equations):
        if _moves_entries(eqn.prim.traits) and not any(
                uses.reads(v) > lost.get(v, 0) or v in outputs or guards_after.get(v)
                for v in eqn.outs):
            for ref in eqn.inputs:
                if type(ref) is int:
                    lost[ref] = lost.get(ref, 0) + 1
            continue
        kept.append(eqn)
    kept.reverse()
    return kept


def _chains_of_numbers(equations, outputs, guards_after, avals, numpy):
    """Sums of scatters of numbers into a small vector whose entries only are read (each
    reader reads one entry at a basic index: an ``element``), computed entry by entry as
    numbers (see ``narrow``). New variables are appended to ``avals`` and ``numpy``; the
    equations are returned."""
    uses = DefUse(equations)

    def private(v):
        return v not in outputs and not guards_after.get(v) and uses.reads(v) == 1

    def scatter(v, aval):
        """``(i, value, k)``: ``v`` made at ``i`` by a scatter of the number ``value`` to
        entry ``k`` of a vector of ``aval``; ``None`` for any other."""
        i = uses.maker(v)
        eqn = equations[i] if i is not None else None
        if eqn is None or eqn.avals[0] != aval or v in outputs or guards_after.get(v):
            return None
        k = _entry(eqn.prim.traits.written_index(eqn.params))
        (value,) = eqn.inputs if len(eqn.inputs) == 1 else (None,)
        if k is None or type(value) is not int or not numpy[value] \
                or avals[value] != ((), aval[1]):
            return None
        return i, value, k % aval[0][0]

    replaced, removed, sub, taken = {}, set(), {}, set()
    for i, eqn in enumerate(equations):
        aval = eqn.avals[0]
        dtype = np.dtype(aval[1])
        if eqn.prim.traits.writes_index is None or len(aval[0]) != 1 \
                or aval[0][0] > MAX_STACK or dtype.kind not in "fc" or dtype.itemsize < 4 \
                or i in taken:
            continue   # (a scatter of a chain taken already from another of its scatters)
        start = scatter(eqn.outs[0], aval)
        if start is None or not private(eqn.outs[0]):
            continue
        steps, var = [], eqn.outs[0]   # the additions: (i, owner first, scatter)
        while private(var):
            (r,) = uses.readers(var)
            add = equations[r]
            if add.prim.traits.operator != "+" or add.params or len(add.inputs) != 2 \
                    or add.avals[0] != aval or add.inputs[0] == add.inputs[1] \
                    or r in replaced:
                break
            other = add.inputs[1] if add.inputs[0] == var else add.inputs[0]
            step = scatter(other, aval) if type(other) is int else None
            if step is None:
                break
            steps.append((r, add.inputs[0] == var, step))
            var = add.outs[0]
        reads = [equations[r] for r in uses.readers(var)]
        if var in outputs or guards_after.get(var) or not reads or not all(
                _entry(e.prim.traits.read_index(e.params)) is not None
                and e.outs[0] not in outputs and not guards_after.get(e.outs[0])
                for e in reads):
            continue
        entries, lines = _entry_sums(start, steps, equations, dtype, aval[0][0], avals,
                                     numpy)
        replaced.update(lines)
        taken.update(i for _, _, (i, _, _) in steps)
        for e in reads:
            sub[e.outs[0]] = entries[_entry(e.prim.traits.read_index(e.params))]
            removed.add(uses.maker(e.outs[0]))
    if not sub:
        return equations
    out = []
    for i, eqn in enumerate(equations):
        if i in replaced:
            out.extend(replaced[i])
        elif i not in removed:
            inputs = tuple(sub.get(ref, ref) if type(ref) is int else ref for ref in eqn.inputs)
            out.append(eqn if inputs == eqn.inputs else Equation(
                eqn.prim, eqn.params, inputs, eqn.outs, eqn.avals, eqn.errstate))
    return out


def _entry(index):
    """The entry of a vector a basic ``index`` selects (``(k,)``: ``k``), or None where it
    selects more (a slice) or none."""
    return index[0] if index is not None and len(index) == 1 and type(index[0]) is int \
        else None


def _entry_sums(start, steps, equations, dtype, n, avals, numpy):
    """The entries of a sum of scatters of numbers (``_chains_of_numbers``: ``start`` and
    ``steps``) as numbers: ``(entries, lines)``, ``lines[r]`` the equations replacing the
    addition at ``r``. The sum of vectors adds 0.0 to the entries a step does not write,
    which turns -0.0 to +0.0: an entry that may hold -0.0 (written, ``dirty``) has 0.0
    added before its next sum, or after the last step (``pending``), as
    ``codegen._scatter_chains`` does."""
    zero = Const(np.zeros((), dtype)[()])
    entries = [zero] * n
    _, value, k = start
    entries[k] = value
    dirty, pending, lines = {k}, set(), {}

    def add(a, b, like):
        out = len(avals)
        avals.append(((), dtype))
        numpy.append(True)
        return out, Equation(like.prim, {}, (a, b), (out,), (((), dtype),), like.errstate)

    for r, owner_first, (_, value, k) in steps:
        like, lines[r] = equations[r], []
        if k in pending:   # the sum added 0.0 to it since it was written: add it now
            entries[k], line = add(entries[k], zero, like)
            lines[r].append(line)
        pair = (entries[k], value) if owner_first else (value, entries[k])
        entries[k], line = add(*pair, like)
        lines[r].append(line)
        pending = (pending | dirty) - {k}
        dirty &= {k}
    for j in sorted(pending):   # the sums added 0.0 since it was written: as they did
        entries[j], line = add(entries[j], zero, equations[steps[-1][0]])
        lines[steps[-1][0]].append(line)
    return entries, lines
