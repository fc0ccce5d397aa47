"""Reverse mode: a linear tape and one backward sweep.

While the user's function runs, every primitive applied to a ``ReverseTracer`` is computed
on the primal values (lower levels do the work) and appended to the trace's tape as
``(primitive, input slots, input primals, output, params, output slot)``. A slot is just an
integer naming one traced value; constants have slot ``None``.

``backward_pass`` seeds the output cotangents and walks the tape from the end. Execution
order is already topological, so there is no sort and no recursion (a 100,000-op chain is
fine). Cotangents live in a dict keyed by slot and are dropped as soon as the entry that
produced the slot has consumed them; entries that received no cotangent are skipped. An
entry's per-argument rules run for its traced arguments only; a joint rule (``JointVjp``)
runs once and gives all of their cotangents, so no rule keeps state for another. The
sweep never mutates the tape, so a pullback may be called any number of times (unless it
was made to consume its tape, as ``grad``'s is).

The entry point, at the end of the module, runs a function of flat lists of values:
``vjp_flat`` records it and returns a pullback of flat cotangents. ``diffkit.api`` adds the
pytrees and argument checks on top; ``custom`` calls ``vjp_flat`` directly. (``linearize``
records its tangent map with the staging interpreter: ``staging.linearize_flat``.)
"""

import numpy as np

from ..core.primitive import JointVjp
from ..core.trace import (
    PrimalTracer,
    Trace,
    bind_custom,
    check_custom_outputs,
    check_not_escaped,
    new_trace,
)
from ..core.zeros import Zero, dtype_of, placeholder, shape_of, tangent_dtype, zero_like
from ..errors import NoRuleError, ShapeMismatchError
from ..ops.elementwise import astype
from ..tree_util import tree_leaves, tree_map
from .forward import lower_aux
from .ir import custom_call_p


class ReverseTracer(PrimalTracer):
    __slots__ = ("slot",)

    def __init__(self, trace, primal, slot):
        self._trace = trace
        self.primal = primal
        self.slot = slot


class ReverseTrace(Trace):
    __slots__ = ("tape", "num_slots")
    name = "reverse-mode (grad/vjp/jacrev)"

    def __init__(self, level):
        super().__init__(level)
        self.tape = []
        self.num_slots = 0

    def lift(self, value):
        return ReverseTracer(self, value, None)   # no slot: no cotangent flows to it

    def constant(self, out):
        """A result no cotangent can flow through (every traced argument has no slot, or the
        primitive has no derivative): still a value of this trace, as in JAX; a comparison
        of traced values is a traced bool."""
        if type(out) is tuple:
            return tuple(ReverseTracer(self, o, None) for o in out)
        return ReverseTracer(self, out, None)

    def new_input(self, primal):
        """A fresh traced input holding ``primal``."""
        slot = self.num_slots
        self.num_slots += 1
        return ReverseTracer(self, primal, slot)

    def process(self, prim, args, params):
        primals = []
        slots = []
        traced = False
        for x in args:
            if type(x) is ReverseTracer and x._trace is self:
                primals.append(x.primal)
                slot = x.slot
                slots.append(slot)
                if slot is not None:
                    traced = True
            else:
                primals.append(x)
                slots.append(None)
        out = prim(*primals, **params)
        if not traced:
            return self.constant(out)
        if prim.nondiff:
            return self.constant(out)
        if prim.vjp is None:
            raise NoRuleError(f"primitive {prim.name!r} has no reverse-mode (vjp) rule")
        first = self.num_slots
        if prim.multiple_results:
            self.num_slots += len(out)
            out_slot = tuple(range(first, self.num_slots))
            result = tuple(ReverseTracer(self, o, s) for o, s in zip(out, out_slot))
        else:
            self.num_slots += 1
            out_slot = first
            result = ReverseTracer(self, out, first)
        ignored = prim.vjp_ignores
        if ignored and _holds_big_array(out, primals):
            # keep only what the VJP reads, so the rest is freed now
            every = "args" in ignored
            primals = [placeholder(p) if every or i in ignored else p
                       for i, p in enumerate(primals)]
            if "out" in ignored:
                out = tuple(map(placeholder, out)) if prim.multiple_results else placeholder(out)
        self.tape.append((prim, slots, primals, out, params, out_slot))
        return result

    def process_custom(self, call, args):
        primals = [x.primal if type(x) is ReverseTracer and x._trace is self else x
                   for x in args]
        slots = [x.slot if type(x) is ReverseTracer and x._trace is self else None
                 for x in args]
        if all(s is None for s in slots):   # only constants of this trace: one too
            return self.constant(tuple(bind_custom(call, primals)))
        outs, saved = call.forward(primals)
        check_custom_outputs(self, call, outs)
        first = self.num_slots
        self.num_slots += len(outs)
        out_slots = tuple(range(first, self.num_slots))
        result = tuple(ReverseTracer(self, o, s) for o, s in zip(outs, out_slots))
        if not call.pullback_reads_primals:  # its pullback reads only their shapes
            primals = [placeholder(p) for p in primals]
        self.tape.append((custom_call_p, slots, primals, tuple(map(placeholder, outs)),
                          {"call": call, "saved": saved}, out_slots))
        return result


def _holds_big_array(out, primals):
    """Whether ``out`` or one of ``primals`` is an array worth trimming from the tape.
    (A plain loop: this runs for every taped operation, and ``any`` of a generator
    costs more than the test.)"""
    if type(out) is np.ndarray and out.nbytes >= BIG_ARRAY_BYTES:
        return True
    for value in primals:
        if type(value) is np.ndarray and value.nbytes >= BIG_ARRAY_BYTES:
            return True
    return False


# Trimming the tape is bookkeeping per operation; it pays only for arrays this large.
BIG_ARRAY_BYTES = 1 << 16


sweep_count = 0  # how many backward sweeps have run (the pass-count test reads it)


def _add_to(cotangents, owned, slot, ct):
    """Accumulate ``ct`` into ``cotangents[slot]``.

    A sum this sweep allocated itself (its slot is in ``owned``) is a plain array nobody
    else holds, so further cotangents are added into it in place.
    """
    if ct is None or type(ct) is Zero:
        return
    old = cotangents.get(slot)
    if old is None:
        cotangents[slot] = ct
    elif slot in owned and type(ct) is np.ndarray and ct.shape == old.shape and \
            np.result_type(old, ct) == old.dtype:
        np.add(old, ct, out=old)
    else:
        total = old + ct
        cotangents[slot] = total
        if type(total) is np.ndarray:
            owned.add(slot)
        else:  # a traced sum is not ours to write into
            owned.discard(slot)


def _output_cotangents(out, out_slot, cotangents, owned):
    """Pop the cotangents of an entry's several outputs; None when nothing reached them."""
    owned.difference_update(out_slot)
    cts = [cotangents.pop(s, None) for s in out_slot]
    if all(ct is None for ct in cts):
        return None
    return tuple(Zero(shape_of(o), dtype_of(o)) if ct is None else ct
                 for o, ct in zip(out, cts))


def backward_pass(tape, seeds, input_slots, consume=False):
    """Cotangents of ``input_slots`` (None where zero) given ``seeds``: (slot, cotangent) pairs.

    With ``consume=True`` the tape is emptied as the sweep passes, releasing each entry's
    saved values once its rule has run (for one-shot pullbacks such as ``grad``'s).
    """
    global sweep_count
    sweep_count += 1
    cotangents = {}
    owned = set()
    for slot, ct in seeds:
        _add_to(cotangents, owned, slot, ct)
    entries = _popped(tape) if consume else reversed(tape)
    for prim, in_slots, primals, out, params, out_slot in entries:
        if prim.multiple_results:
            ct = _output_cotangents(out, out_slot, cotangents, owned)
        else:
            owned.discard(out_slot)
            ct = cotangents.pop(out_slot, None)
        if ct is None:
            continue
        if type(prim.vjp) is JointVjp:
            _pull_joint(prim, in_slots, primals, out, params, ct, cotangents, owned)
        elif consume and prim.vjp_reads is not None and type(ct) is np.ndarray and \
                ct.nbytes >= BIG_ARRAY_BYTES:
            _pull_freeing(prim, in_slots, primals, out, params, ct, cotangents, owned)
        else:
            for slot, rule in zip(in_slots, prim.vjp):  # arguments past the tuple: no rule
                if slot is not None and rule is not None:
                    _add_to(cotangents, owned, slot, rule(ct, out, *primals, **params))
        del ct, primals, out  # let the entry's arrays go before the next rule allocates
    return [cotangents.get(slot) for slot in input_slots]


def _pull_joint(prim, in_slots, primals, out, params, ct, cotangents, owned):
    """Run a primitive's joint rule once for all its traced arguments (``JointVjp``)."""
    wanted = tuple(slot is not None for slot in in_slots)
    cts = prim.vjp.rule(ct, out, *primals, wanted=wanted, **params)
    if len(cts) != len(in_slots):
        raise ShapeMismatchError(f"the joint VJP rule of primitive {prim.name!r} returned "
                                 f"{len(cts)} cotangents for {len(in_slots)} arguments: it "
                                 "must return one per argument (None where there is none)")
    for slot, value in zip(in_slots, cts):
        if slot is not None:
            _add_to(cotangents, owned, slot, value)


def _pull_freeing(prim, in_slots, primals, out, params, ct, cotangents, owned):
    """Run the per-argument rules of a popped entry, last argument first, dropping each saved
    value once no remaining rule reads it: for ``x * y`` the cotangent of ``y`` needs only
    ``x``, so ``x`` is gone before the cotangent of ``x`` is allocated."""
    pending = [i for i, slot in enumerate(in_slots)
               if slot is not None and i < len(prim.vjp) and prim.vjp[i] is not None][::-1]
    for k, i in enumerate(pending):
        _add_to(cotangents, owned, in_slots[i], prim.vjp[i](ct, out, *primals, **params))
        still_read = set().union(*(prim.vjp_reads[j] for j in pending[k + 1:]))
        for j in prim.vjp_reads[i] - still_read:
            if j != "out":
                primals[j] = placeholder(primals[j])


def _popped(tape):
    while tape:
        yield tape.pop()


def keep_call_values(tape, caller_values):
    """Make a retained ``tape`` independent of arrays its caller can still write into.

    NumPy arrays are mutable: after ``y, pullback = vjp(f, x)`` an optimiser loop may update
    ``x`` (or a weight ``f`` closes over) in place, and a pullback reading the tape would
    then differentiate at the new values. Every array on the tape that shares memory with
    what the caller can reach is replaced by a copy taken now (one copy per array): the
    ``caller_values`` (the inputs, the outputs and aux handed back), the constants the
    function used (closed-over or global arrays, which the tape cannot tell from arrays the
    function made from them), arrays among the primitives' parameters (index arrays), and
    views of any of them, found by following ``.base`` to the array that owns the memory.
    Arrays the recorded operations allocated, and views of them, are kept as they are.
    The entries are replaced in place; the tape's operations are unchanged.
    """
    external = {id(_memory_owner(v)) for v in caller_values if isinstance(v, np.ndarray)}
    copies = {}

    def kept(value, constant=False):
        if not isinstance(value, np.ndarray):
            return value
        if value.base is None and not constant:  # the common case: owns its memory
            if id(value) not in external:
                return value
        else:
            owner = _memory_owner(value)
            if constant:
                # the tape runs in order, so a constant is seen before any view made of it
                external.add(id(owner))
            elif id(owner) not in external and owner.flags.owndata:
                return value
        pair = copies.get(id(value))
        if pair is None:  # the original is kept alive with its copy, so ids stay unique
            pair = copies[id(value)] = (value, value.copy())
        return pair[1]

    for i, (prim, slots, primals, out, params, out_slot) in enumerate(tape):
        for k, value in enumerate(primals):  # the entry's own list: updated in place
            if type(value) is np.ndarray:
                primals[k] = kept(value, slots[k] is None)
        new_out = tuple(map(kept, out)) if prim.multiple_results else kept(out)
        new_params = _kept_params(params, kept) if params else params
        if new_out is not out or new_params is not params:
            tape[i] = (prim, slots, primals, new_out, new_params, out_slot)


def _memory_owner(array):
    """The array at the end of ``array``'s chain of ``.base`` views (itself if it owns its
    memory), seen through non-array bases such as ``as_strided``'s."""
    owner, base = array, array.base
    while base is not None:
        if isinstance(base, np.ndarray):
            owner = base
        base = getattr(base, "base", None)
    return owner


def _kept_params(params, kept):
    """``params`` with its arrays (also inside tuples, lists and a custom call's residual
    pytree) passed through ``kept``, copied only when something changes."""
    changed = {}
    for name, value in params.items():
        if name == "saved":
            new = tree_map(kept, value)
        elif isinstance(value, np.ndarray):
            new = value.copy()  # a parameter array (an index) is the caller's: keep it now
        elif isinstance(value, (tuple, list)) and any(isinstance(v, np.ndarray) for v in value):
            new = type(value)(v.copy() if isinstance(v, np.ndarray) else v for v in value)
        else:
            continue
        changed[name] = new
    return {**params, **changed} if changed else params


# --- the entry point ------------------------------------------------------------------------


def vjp_flat(fun, primals, *, has_aux=False, retain=True, keep=False, name="vjp"):
    """Evaluate ``fun`` at ``primals`` on a tape; return the outputs and their pullback.

    ``fun(*inputs)`` takes one value per primal and returns a list (or tuple) of output
    values, or ``(outputs, aux)`` with ``has_aux``. Returns ``(primals_out, pullback)``, and
    ``aux`` third with ``has_aux`` (its traced values replaced by their primals).

    ``pullback(cotangents)`` takes one cotangent per output, of its shape and derivative
    dtype (``None`` or a symbolic ``Zero`` where it is zero), and returns one cotangent per
    primal: an array of the primal's derivative dtype (float32 stays float32), or a symbolic
    ``Zero`` where no cotangent reached it.

    ``retain=False``: the pullback may be called once, and frees the tape as it sweeps (what
    ``grad`` and ``jacrev`` use). ``keep=True``: the pullback is handed to a caller who may
    write into arrays before calling it, so the tape keeps copies of the arrays it shares
    with the caller (``keep_call_values``). ``name``, the transformation the user called, is
    named in the error for a traced value of a finished transformation among the outputs.
    """
    with new_trace(ReverseTrace) as trace:
        inputs = [trace.new_input(p) for p in primals]
        in_slots = [x.slot for x in inputs]   # now: an in-place write gives an input a new slot
        outs, aux = fun(*inputs) if has_aux else (fun(*inputs), None)
        primals_out, out_slots = [], []  # the value of each output; its slot if it is traced
        for o in outs:
            if type(o) is ReverseTracer and o._trace is trace:
                primals_out.append(o.primal)
                out_slots.append(o.slot)
            else:  # does not depend on the primals: no cotangent flows through it
                primals_out.append(check_not_escaped(o, name))
                out_slots.append(None)
        if has_aux:
            aux = lower_aux(aux, trace, name)
    tape = trace.tape
    if keep:
        keep_call_values(tape, [*primals, *primals_out, *tree_leaves(aux)])

    def pullback(cotangents):
        seeds = [(s, ct) for s, ct in zip(out_slots, cotangents) if s is not None]
        in_cts = backward_pass(tape, seeds, in_slots, consume=not retain)
        return [zero_like(p) if ct is None else _in_dtype(ct, tangent_dtype(dtype_of(p)))
                for ct, p in zip(in_cts, primals)]

    return (primals_out, pullback, aux) if has_aux else (primals_out, pullback)


def _in_dtype(x, dtype):
    return x if dtype_of(x) == dtype else astype(x, dtype)
