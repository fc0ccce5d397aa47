"""Memory of the plain replay: when a value can be freed, and which elementwise operations
can write their result into the buffer of an input that dies there.

The generated replay is one Python function, so every intermediate array would live until
it returns. ``plan`` says, for each equation, which variables to delete after it (their
last use) and whether it writes into a dying input with ``out=``. Both apply to arrays of
at least ``BIG`` entries only; on small ones the bookkeeping costs more than it saves.

A buffer is reused only when nothing else can see it: it was made by an elementwise
operation of this replay (one that writes into ``out=``, such as a NumPy ufunc, and
otherwise returns a new array: never an argument the
caller passed, a constant, or a view of either), every operation that reads it is
elementwise too (so no view of it outlives it), it is not an output, and it has the shape
and dtype of the result. Writing into it with ``out=`` runs the same loop as allocating.
"""

import math

BIG = 1024


def writes_out(eqn):
    """Whether the equation is elementwise and its implementation writes into ``out=``
    (otherwise returning a new array): the ``elementwise`` and ``out_argument`` traits,
    with exactly its inputs as positional arguments (a ufunc would read one more as
    ``out``)."""
    traits = eqn.prim.traits
    return traits.elementwise and traits.out_argument and \
        len(eqn.inputs) == getattr(eqn.prim.impl, "nin", len(eqn.inputs))


def _ufunc(eqn):
    """Whether the equation writes into ``out=`` and has no parameters (the replay's
    ``impl(*inputs, out=buffer)`` form)."""
    return not eqn.params and writes_out(eqn)


def _fresh(eqn):
    """Whether the equation's result is always a new array (on array inputs)."""
    return writes_out(eqn)


def plan(program):
    """``(frees, reuse)``: ``frees[i]`` the variables to delete after equation ``i``,
    ``reuse[i]`` the variable whose buffer equation ``i`` writes into (where one is).

    Only arrays of at least ``BIG`` entries are freed or reused, so only the equations
    that read or make one are looked at (none, on a program of small values)."""
    large = {v for v, (shape, _) in enumerate(program.avals)
             if len(shape) > 0 and math.prod(shape) >= BIG}
    if not large:
        return {}, {}
    equations = program.equations
    avals = program.avals
    outputs = {o for o in program.outputs if type(o) is int}
    uses = program.def_use()
    touching = [(i, eqn) for i, eqn in enumerate(equations)   # (a Const is never in large)
                if not (large.isdisjoint(eqn.inputs) and large.isdisjoint(eqn.outs))]

    def last_read(ref):
        return uses.readers(ref)[-1]

    def reusable(ref):
        """Made here as a new array, and only ever read elementwise (no view outlives it)."""
        maker = uses.maker(ref)
        return maker is not None and _fresh(equations[maker]) \
            and all(_ufunc(equations[r]) for r in uses.readers(ref))

    frees, reuse = {}, {}
    for i, eqn in touching:
        dying = [ref for ref in dict.fromkeys(eqn.inputs) if ref in large
                 and last_read(ref) == i and ref not in outputs and ref >= program.num_inputs]
        if eqn.outs and eqn.outs[0] in large and _ufunc(eqn):
            for ref in dying:
                if avals[ref] == eqn.avals[0] and reusable(ref):
                    reuse[i] = ref
                    break
        # a value nothing reads (kept for a guard) is freed right after its guard
        unused = [v for v in eqn.outs if v in large and not uses.reads(v) and v not in outputs]
        gone = dying + unused   # a reused buffer lives on under the result's name
        if gone:
            frees[i] = gone
    return frees, reuse
