"""Stretches of elementwise operations on large arrays, run block by block while a block
is still in the cache.

A derivative of elementwise code on a large array (``sum(sin(x) * exp(-x**2))`` at a
million entries) replays as a dozen NumPy calls, each of which reads and writes whole
arrays: every intermediate value is a fresh array of the input's size, and the values
that stay alive together set the peak memory (three arrays of the input's size there,
however the buffers are reused). ``fuse`` turns a stretch of consecutive elementwise
equations on arrays of one shape into one equation whose implementation is a generated
loop over blocks of ``BLOCK`` entries: within a block every intermediate value lives in
a small buffer that stays in the cache, and only the values read after the stretch (or
returned) are arrays of the full size. Peak memory falls to those arrays and the
blocks; the arithmetic no longer streams through main memory.

Exactness: an elementwise NumPy function computes each entry from the same entries of
its inputs, by the same loop whatever the array's length, so each entry of a blocked
result is the entry of the whole-array result, bit for bit. Reductions are never
fused (a blocked sum would add in another order).

What is fused: elementwise primitives whose implementation writes into ``out=`` (the
``elementwise`` and ``out_argument`` traits: NumPy ufuncs with one output such as ``sin``
and ``multiply``, and ``scalar_power``), with parameters of no dimension, recorded
without a rule's own error handling, whose result and array inputs all have the
stretch's shape; other inputs are values of no dimension. A stretch needs at least two
equations and one value that does not outlive it.

Guards: a 0 x inf rule's check that a value has no NaN (``holds_nan(v) == False``, or
``holds_nonfinite``) holds for the whole array exactly when it holds for every block, so
it is checked block by block inside the loop, and the value need not be kept whole. Any
other guard keeps its value whole and is checked after the loop, as before. A failing
check raises as the line-by-line replay would; the call then traces again, and what the
loop wrote is dropped with it.
"""

import collections
import math

import numpy as np

from ..core.primitive import Primitive
from ..interpreters.ir import DefUse, Equation
from ..ops.families import holds_nan, holds_nonfinite
from .buffers import writes_out

MIN_ENTRIES = 1 << 16   # arrays this large stream from memory; smaller ones sit in the cache
BLOCK = 1 << 14         # entries a block: 128 KiB of float64, a few live in the level-2 cache


def _blocks_primitive(impl):
    """The primitive of one fused equation (listing and replay only: no rules)."""
    return Primitive("elementwise_blocks", impl, multiple_results=True, register=False)


def fuse(program, guards_after, fail):
    """``(program, guards_after)`` with each fusable stretch as one equation, and without
    the guards now checked inside the loops (``fail(guard)`` is what a failing one
    raises). The program itself and the same guards where there is nothing to fuse."""
    guards_after = dict(guards_after)
    equations, avals = program.equations, program.avals
    if not any(_large(eqn) for eqn in equations):   # nothing streams from memory
        return program, guards_after
    later_reads = _last_reads(program)
    fused_equations = []
    i = 0
    while i < len(equations):
        end = _stretch_end(equations, i, avals)
        if end - i >= 2:
            # where the stretch ends in the list as fused so far (each fused stretch
            # stands for its equations as one)
            shifted = end - (i - len(fused_equations))
            fused = _fuse(equations[i:end], shifted, later_reads, guards_after, fail, avals)
            if fused is not None:
                fused_equations.append(fused)
                i = end
                continue
        stop = max(end, i + 1)
        fused_equations.extend(equations[i:stop])
        i = stop
    if len(fused_equations) == len(equations):
        return program, guards_after
    copy = type(program).__new__(type(program))
    copy.__dict__.update(program.__dict__)
    copy.equations = fused_equations
    return copy, guards_after


def _large(eqn):
    """Whether the equation's first result has at least ``MIN_ENTRIES`` entries."""
    return bool(eqn.avals) and math.prod(eqn.avals[0][0]) >= MIN_ENTRIES


def _last_reads(program):
    """``last_read(var)``: the index of the last equation reading ``var`` (``inf`` for an
    output, -1 for a value nothing reads)."""
    uses = program.def_use()
    returned = {ref for ref in program.outputs if type(ref) is int}

    def last_read(var):
        if var in returned:
            return math.inf
        readers = uses.readers(var)
        return readers[-1] if readers else -1
    return last_read


def _blockable(eqn, shape, avals):
    """Whether ``eqn`` computes an entry from the same entries of arrays of ``shape``."""
    if eqn.errstate is not None or len(eqn.outs) != 1 or eqn.avals[0][0] != shape \
            or np.dtype(eqn.avals[0][1]).kind not in "fc":
        return False
    if not writes_out(eqn) or any(np.ndim(v) != 0 for v in eqn.params.values()):
        return False
    for ref in eqn.inputs:
        dims = avals[ref][0] if type(ref) is int else np.shape(ref.value)
        if dims != shape and dims != ():
            return False
    return True


def _stretch_end(equations, i, avals):
    """The end (exclusive) of the stretch of blockable equations starting at ``i``."""
    shape = equations[i].avals[0][0]
    if not shape or math.prod(shape) < MIN_ENTRIES:
        return i
    end = i
    while end < len(equations) and _blockable(equations[end], shape, avals):
        end += 1
    return end


def _blockwise_guard(guard):
    return guard.test in (holds_nan, holds_nonfinite) and guard.expected is False


def _fuse(stretch, end, later_reads, guards_after, fail, avals):
    """The fused equation of ``stretch`` (ending before equation ``end``), or None where
    every value it makes is needed whole. Its results are the whole values, in the order
    of their variables; their guards stay with the replay's writer, after the loop."""
    made = [e.outs[0] for e in stretch]
    whole = sorted(v for v in made if later_reads(v) >= end
                   or not all(_blockwise_guard(g) for g in guards_after.get(v, ())))
    if len(whole) == len(made):
        return None
    kept_whole = set(whole)
    inside_guards = {v: guards_after.pop(v) for v in made
                     if v not in kept_whole and v in guards_after}
    impl, outside = _generate(stretch, whole, inside_guards, fail, avals)
    out_avals = tuple(avals[v] for v in whole)
    return Equation(_blocks_primitive(impl), {}, tuple(outside), tuple(whole), out_avals, None)


class _Source:
    """The generated loop's lines and the names it closes over."""

    def __init__(self, fail):
        self.names = {"_empty": np.empty, "_fail": fail, "_min": min, "_BLOCK": BLOCK}
        self.ids = {}

    def constant(self, value):
        name = self.ids.get(id(value))
        if name is None:
            name = self.ids[id(value)] = f"c{len(self.names)}"
            self.names[name] = value
        return name


def _generate(stretch, whole, inside_guards, fail, avals):
    """``(implementation, outside inputs)`` of the loop over blocks."""
    src = _Source(fail)
    shape, size = stretch[0].avals[0][0], math.prod(stretch[0].avals[0][0])
    made = {e.outs[0]: np.dtype(e.avals[0][1]) for e in stretch}
    outside = list(dict.fromkeys(r for e in stretch for r in e.inputs
                                 if type(r) is int and r not in made))
    uses = DefUse(stretch)   # equations of the stretch by their position in it
    slots, free, slot_of = [], _FreeSlots(), {}
    full = [v for v in outside if avals[v][0] == shape]
    whole_set, full_set = set(whole), set(full)
    head = [f"f{v} = v{v}.reshape(-1)" for v in full]   # a view where v is C-contiguous
    head += [f"w{v} = v{v}" for v in outside if v not in full_set]   # values of no dimension
    head += [f"v{v} = _empty({shape!r}, {src.constant(made[v])}); f{v} = v{v}.reshape(-1)"
             for v in whole]
    loop = [f"e = _min(s + _BLOCK, {size})"]
    loop += [f"w{v} = f{v}[s:e]" for v in full]
    cut = {src.constant(ref.value) for eqn in stretch for ref in eqn.inputs
           if type(ref) is not int and np.shape(ref.value) == shape}
    for name in sorted(cut):   # constant arrays of the full shape are cut like the inputs
        head.append(f"f{name} = {name}.reshape(-1)")
        loop.append(f"b{name} = f{name}[s:e]")
    for k, eqn in enumerate(stretch):
        var = eqn.outs[0]
        for ref in dict.fromkeys(eqn.inputs):   # a dying block buffer may take the result
            if type(ref) is int and ref in slot_of and uses.readers(ref)[-1] == k:
                free.append(slot_of[ref], slots)
        if var in whole_set:
            loop.append(f"w{var} = f{var}[s:e]")
        else:
            slot_of[var] = free.take(slots, made[var])
            loop.append(f"w{var} = t{slot_of[var]}[:e - s]")
        loop.append(_call(src, eqn, var, shape))
        for guard in inside_guards.get(var, ()):
            loop.append(f"if {src.constant(guard.test)}(w{var}): raise _fail("
                        f"{src.constant(guard)})")
        if var in slot_of and not uses.reads(var):   # read by nothing but its guards
            free.append(slot_of[var], slots)
    head += [f"t{j} = _empty(_BLOCK, {src.constant(dtype)})" for j, dtype in enumerate(slots)]
    body = head + [f"for s in range(0, {size}, _BLOCK):"] + ["    " + line for line in loop]
    body.append(f"return ({''.join(f'v{v}, ' for v in whole)})")
    params = ", ".join(f"v{v}" for v in outside)
    source = (f"def make({', '.join(src.names)}):\n"
              f"    def elementwise_blocks({params}):\n"
              + "".join(f"        {line}\n" for line in body)
              + "    return elementwise_blocks\n")
    namespace = {}
    exec(compile(source, "<diffkit.jit elementwise blocks>", "exec"), namespace)  # noqa: S102
    # by position, in the order of make's parameters: binding n keywords costs n**2
    impl = namespace["make"](*src.names.values())
    impl.source = source
    return impl, outside


class _FreeSlots:
    """The block buffers free for a new value, by dtype, each in the order they were
    freed: a value takes the first freed buffer of its dtype (one dict look-up, however
    many are free)."""

    def __init__(self):
        self.by_dtype = {}

    def append(self, j, slots):
        self.by_dtype.setdefault(slots[j], collections.deque()).append(j)

    def take(self, slots, dtype):
        """The slot for a new value of ``dtype``: a free one, or a new one in ``slots``."""
        free = self.by_dtype.get(dtype)
        if free:
            return free.popleft()
        slots.append(dtype)
        return len(slots) - 1


def _call(src, eqn, var, shape):
    """The line computing ``var``'s block into ``w{var}``."""
    def arg(ref):
        if type(ref) is int:
            return f"w{ref}"
        name = src.constant(ref.value)
        return f"b{name}" if np.shape(ref.value) == shape else name

    args = "".join(f"{arg(r)}, " for r in eqn.inputs)
    args += "".join(f"{key}={src.constant(value)}, " for key, value in eqn.params.items())
    return f"{src.constant(eqn.prim.impl)}({args}out=w{var})"
