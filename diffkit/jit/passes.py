"""Optimisation passes over a recorded program, run once when a ``Graph`` is built.

Each pass takes a ``Program`` and changes it in place; ``optimise`` runs them in order:

1. ``freeze_constants``: each writeable constant array becomes a read-only copy, so the
   graph holds the values it was recorded with (as jit documents for closed-over arrays)
   and the passes below may read them.
2. ``known_values``: a guard that compares a whole integer or boolean array (a boolean
   mask, say) fixes its value: later equations read the guarded value as a constant.
3. ``drop_noops``: a reshape or broadcast to the same shape, an identity transpose, and a
   reshape of a reshape or a transpose of a transpose (composed into one).
   ``drop_unit_products``: a real product with a constant one (the all-ones cotangent a
   reverse pass starts from, say) is its other factor.
4. ``common_subexpressions``: an equation with the primitive, parameters and inputs of an
   earlier one reuses its outputs.
5. ``fold_constants``: an equation whose inputs are all constants runs once, here.
6. ``drop_dead_value_guards``: a 0 x inf rule's check (``holds_nan``, ``holds_nonfinite``)
   on a value that reaches no output and no other guard is dropped, with the value.
7. ``eliminate_dead_code``: only equations that reach an output or a guard stay.
8. ``drop_implied_value_checks``: a NaN check of a value whose first readers lead through
   real arithmetic to a value with a NaN check of its own, with nothing else reading on
   the way, is dropped (NaN propagates: the later check fails whenever the earlier one
   would).

A variable an equation no longer computes is replaced everywhere (later inputs, outputs,
guards); a guard moved onto an earlier variable is checked earlier, on the same value. A
guard on a value that became a constant is checked once, here: a fold whose guard would
fail is not made.

Every pass is one sweep (or two) over the equations with dictionary and set look-ups, so
the passes take time linear in the program's length: they run on the first call of a
jitted function, which must cost a small multiple of one eager call however long the
function is (``benchmarks/jit_first_call.py``).
"""

import numpy as np

from ..core.trace import Tracer
from ..interpreters.ir import Const, Equation, Guard, Program
from ..ops.families import holds_nan, holds_nonfinite


def optimise(recording):
    """The ``Program`` of ``recording`` after every pass."""
    program = Program(recording)
    eliminate_dead_code(program)
    freeze_constants(program)
    known_values(program)
    drop_noops(program)
    drop_unit_products(program)
    common_subexpressions(program)
    fold_constants(program)
    drop_dead_value_guards(program)
    eliminate_dead_code(program)
    drop_implied_value_checks(program)
    return program


# --- substitution ----------------------------------------------------------------------------


class _Substitution:
    """Variables replaced by other variables or constants, applied as the passes go."""

    def __init__(self):
        self.to = {}

    def __call__(self, ref):
        if type(ref) is int:
            return self.to.get(ref, ref)
        return ref

    def equation(self, eqn):
        """``eqn`` with its inputs substituted (``eqn`` itself where none is replaced)."""
        to = self.to
        # most equations read nothing replaced: one set operation in C says so (a Const
        # input is never a key: only variables, ints, are replaced)
        if not to or to.keys().isdisjoint(eqn.inputs):
            return eqn
        inputs = tuple(map(to.get, eqn.inputs, eqn.inputs))
        if inputs == eqn.inputs:
            return eqn
        return Equation(eqn.prim, eqn.params, inputs, eqn.outs, eqn.avals, eqn.errstate,
                        eqn.where)

    def finish(self, program):
        """Outputs and guards after the substitution (a guard on a constant is checked
        by the pass that made the constant, and dropped)."""
        program.outputs = [self(o) for o in program.outputs]
        guards, seen = [], set()
        for g in program.guards:
            target = self(g.var)
            if type(target) is not int:
                continue
            if g.test is not None and type(g.expected) is bool:   # the same check twice
                key = (target, g.test, g.expected)
                if key in seen:
                    continue
                seen.add(key)
            guards.append(g if target == g.var else
                          Guard(target, g.test, g.expected, g.at, g.where))
        program.guards = guards


# --- the passes ------------------------------------------------------------------------------


def eliminate_dead_code(program):
    """Keep the equations that reach an output or a guard."""
    needed = {o for o in program.outputs if type(o) is int}
    needed.update(g.var for g in program.guards)
    program.equations = _live(program.equations, needed)


def _live(equations, needed):
    """The equations (in order) that compute a variable of ``needed`` or one that such an
    equation reads; ``needed`` grows to every variable they read."""
    live = []
    for eqn in reversed(equations):
        if not needed.isdisjoint(eqn.outs):
            live.append(eqn)
            # the inputs' Consts go into the set too: cheaper than filtering them out,
            # and a Const never equals a variable
            needed.update(eqn.inputs)
    live.reverse()
    return live


#: The checks of the 0 x inf rule (``families.zero_safe``, ``families.times``,
#: ``linalg.rule_contraction``). Each decides only how the rule's own result is computed:
#: the checked value is returned as it is, or replaced by a masked copy of it.
VALUE_CHECKS = (holds_nan, holds_nonfinite)


def drop_dead_value_guards(program):
    """Drop the 0 x inf rule's guards on values that nothing else needs.

    Such a guard decides only whether a rule returns the checked value (a product) as it
    is or a masked value computed from it. Where the checked value reaches no output and
    no other guard, neither does the rule's result, whichever way the check goes: the
    guard cannot change what the replay returns, and it alone kept the product alive (in
    a Hessian-vector product, the gradient's own matrix product, whose value only its NaN
    check read). Other guards (a branch of the user's code) are always kept."""
    if not any(g.test in VALUE_CHECKS for g in program.guards):
        return
    needed = {o for o in program.outputs if type(o) is int}
    needed.update(g.var for g in program.guards if g.test not in VALUE_CHECKS)
    _live(program.equations, needed)
    program.guards = [g for g in program.guards
                      if g.test not in VALUE_CHECKS or g.var in needed]


def drop_implied_value_checks(program):
    """Drop a check ``holds_nan(v) == False`` that a later NaN check implies.

    From ``v``, follow first readers: while the first equation reading the value is real
    elementwise arithmetic that propagates NaN (the ``nan_propagating`` trait) with a
    result of the value's shape and dtype,
    a NaN in the value makes one in the result. If that path reaches a value ``w`` with a
    kept check ``holds_nan(w) == False``, and nothing but the path reads ``v`` or the
    values between before ``w`` is computed, then ``w``'s check fails whenever ``v``'s
    would, and no other operation saw the NaN first: ``v``'s check is dropped. The path
    runs on the NaN quietly (IEEE operations on a quiet NaN raise no floating-point error)
    and the call traces again at ``w``'s check. ``w``'s check itself stays: a path goes on
    through a value whose check was dropped already, to a kept one.

    Linear in the program: each value's path is summarised once (``_ImpliedChecks``)."""
    checked = {g.var for g in program.guards if g.test is holds_nan and g.expected is False}
    if not checked:
        return
    implied = _ImpliedChecks(program, checked).implied()
    program.guards = [g for g in program.guards if not (
        g.var in implied and g.test is holds_nan and g.expected is False)]


class _ImpliedChecks:
    """The checks ``drop_implied_value_checks`` drops, found in one sweep.

    Each value ``u`` has at most one next step (the result of its first reader, when that
    is propagating arithmetic of ``u``'s shape and dtype), and a step always leads to a
    later variable, so the paths form a forest walked towards later values. A value's
    path summary, ``last`` and ``earliest``, says where the path from ``u`` ends at a kept
    check: ``last`` is the index of the equation computing that check's value (none
    where the path ends without one) and ``earliest`` the earliest second reader of
    ``u`` and the values after it on the path (``inf`` where none has one). A check on
    ``v`` is implied when ``earliest > last``: nothing but the path reads those values
    before the kept check's value is computed. Values are decided latest first, so a
    summary, once made, never changes: the checks after a value are decided before it."""

    def __init__(self, program, checked):
        self.equations, self.avals, self.checked = program.equations, program.avals, checked
        self.uses = program.def_use()
        # the summaries, as two dicts of ints (no tuple kept per value: fewer garbage
        # collections); a value whose path ends without a kept check has no ``last``
        self.last, self.earliest = {}, {}
        self.kept = set()   # checks decided and kept

    def _first(self, u):
        """The first equation reading ``u`` (None if none)."""
        readers = self.uses.readers(u)
        return readers[0] if readers else None

    def _second(self, u):
        """The first equation after the first reading ``u`` (``_NEVER`` if none)."""
        readers = self.uses.readers(u)
        second = self.uses.next_reader(u, readers[0]) if readers else None
        return _NEVER if second is None else second

    def implied(self):
        implied = set()
        for v in sorted(self.checked, reverse=True):   # later values first
            self._summarise(v)
            last = self.last.get(v)
            if last is not None and self.earliest[v] > last:
                implied.add(v)
            else:
                self.kept.add(v)
        return implied

    def _step(self, u):
        """The value the path from ``u`` goes on to, or None (the path ends at ``u``)."""
        i = self._first(u)
        if i is None:
            return None
        eqn, aval = self.equations[i], self.avals[u]
        if not eqn.prim.traits.nan_propagating or eqn.params or eqn.errstate \
                or eqn.avals[0] != aval or np.dtype(aval[1]).kind != "f":
            return None
        return eqn.outs[0]

    def _summarise(self, v):
        """Summarise the path from ``v``, and every value on it (memoised)."""
        last, earliest, path, u = self.last, self.earliest, [], v
        while u not in earliest:   # else: met a path summarised already
            nxt = self._step(u)
            if nxt is None:   # the path ends without a kept check
                earliest[u] = _NEVER
                break
            if nxt in self.kept:   # u's first reader computes a value with a kept check
                last[u], earliest[u] = self._first(u), self._second(u)
                break
            path.append(u)
            u = nxt
        end, soonest = last.get(u), earliest[u]
        for u in reversed(path):
            soonest = min(soonest, self._second(u))
            if end is not None:
                last[u] = end
            earliest[u] = soonest


_NEVER = float("inf")   # the second reader of a value read once


def freeze_constants(program):
    """Replace each writeable constant array by a read-only copy (once per array)."""
    copies = {}

    def frozen(ref):
        if not _writeable(ref):
            return ref
        new = copies.get(id(ref.value))
        if new is None:
            value = np.array(ref.value, copy=True)
            value.flags.writeable = False
            new = copies[id(ref.value)] = (ref.value, Const(value))
        return new[1]

    equations = program.equations
    for k, eqn in enumerate(equations):
        for ref in eqn.inputs:   # most equations read no constant array: kept as they are
            if _writeable(ref):
                equations[k] = Equation(eqn.prim, eqn.params, tuple(map(frozen, eqn.inputs)),
                                        eqn.outs, eqn.avals, eqn.errstate, eqn.where)
                break
    program.outputs = [frozen(o) for o in program.outputs]


def _writeable(ref):
    """Whether ``ref`` is a constant writeable NumPy array."""
    return type(ref) is not int and type(ref.value) is np.ndarray and ref.value.flags.writeable


def known_values(program):
    """After a guard ``v == array`` on an integer or boolean array (never a float: 0.0 and
    -0.0 compare equal but are different numbers), later equations read the array."""
    known = {}
    for g in program.guards:
        expected = g.expected
        if g.test is None and type(expected) is np.ndarray and expected.ndim \
                and expected.dtype.kind in "biu":
            value = expected.copy()
            value.flags.writeable = False
            known[g.var] = Const(value)
    if not known:
        return
    sub = _Substitution()
    sub.to = known
    program.equations = [sub.equation(e) for e in program.equations]


def drop_noops(program):
    """Drop operations that only move entries (the ``shape_only`` trait: reshapes,
    broadcasts, transposes) where they leave the input as it is (``is_identity``: a
    reshape to the input's own shape, an identity transpose; of arrays of at least one
    dimension: a reshape makes a NumPy scalar a 0-d array); read two in a row of one
    primitive as one where its traits say how (``compose``: a reshape of a reshape, a
    transpose of a transpose). A returned value that is a view (a broadcast, read-only as
    eagerly) stays as it is."""
    sub = _Substitution()
    made = {}   # variable -> the composable equation that made it (after substitution)
    returned = {o for o in program.outputs if type(o) is int}
    equations = []
    for eqn in program.equations:
        eqn = sub.equation(eqn)
        traits = eqn.prim.traits
        if traits.shape_only and not eqn.errstate and not (
                traits.compose is None and eqn.outs[0] in returned):
            (x,) = eqn.inputs
            inner = made.get(x)
            if inner is not None and inner.prim is eqn.prim:
                x = inner.inputs[0]
                eqn = Equation(eqn.prim, traits.compose(eqn.params, inner.params),
                               inner.inputs, eqn.outs, eqn.avals, None, eqn.where)
            shape = program.avals[x][0] if type(x) is int else np.shape(x.value)
            if len(shape) and traits.is_identity(eqn.params, shape):
                sub.to[eqn.outs[0]] = x
                continue
            if traits.compose is not None:   # what a later one composes
                made[eqn.outs[0]] = eqn
        equations.append(eqn)
    program.equations = equations
    sub.finish(program)


def drop_unit_products(program):
    """Read ``multiply(x, 1)`` (either order; the one a constant) as ``x`` where ``x`` is a
    real floating array with the product's shape and dtype: ``x * 1.0`` is ``x`` for every
    real number, NaN and infinities included (not for a complex one: ``inf * (1 + 0j)``
    has a NaN part; nor for a NumPy scalar, which would become a 0-d array)."""
    sub = _Substitution()
    equations = []
    for eqn in program.equations:
        eqn = sub.equation(eqn)
        if eqn.prim.traits.operator == "*" and not eqn.params and not eqn.errstate \
                and len(eqn.inputs) == 2:
            a, b = eqn.inputs
            x = a if type(b) is not int and _all_ones(b.value) else \
                b if type(a) is not int and _all_ones(a.value) else None
            if type(x) is int:
                shape, dtype = program.avals[x]
                if (shape, dtype) == eqn.avals[0] and len(shape) and \
                        np.dtype(dtype).kind == "f":
                    sub.to[eqn.outs[0]] = x
                    continue
        equations.append(eqn)
    program.equations = equations
    sub.finish(program)


def _all_ones(value):
    if type(value) in (int, float):
        return value == 1
    if type(value) is not np.ndarray and not isinstance(value, np.generic):
        return False
    if np.dtype(value.dtype).kind not in "biuf":
        return False
    if type(value) is np.ndarray and value.size and not any(value.strides):
        return bool(value.flat[0] == 1)   # a broadcast scalar: one entry to look at
    return bool(np.all(value == 1))


def _const_key(value):
    """A key equal only for interchangeable constants: the same array object, or Python
    and NumPy scalars of the same type and bits (0.0 and -0.0 differ, NaN equals NaN)."""
    kind = type(value)
    if kind in (float, int, bool, complex):
        return (kind, repr(value))
    if isinstance(value, np.generic):
        return (kind, value.tobytes())
    return ("object", id(value))


def _param_key(value):
    """A parameter as a key that tells apart what compares equal but acts differently
    (``2`` and ``2.0``, ``0.0`` and ``-0.0``)."""
    if type(value) in (tuple, list):
        return (type(value), tuple(_param_key(v) for v in value))
    if type(value) in (float, complex):
        return (type(value), repr(value))
    return (type(value), value)


def common_subexpressions(program):
    """Reuse the outputs of an earlier equation with the same primitive, parameters (of
    the same types), error handling and inputs."""
    sub = _Substitution()
    # (primitive, parameters, error handling) -> {inputs: the first equation}: two levels,
    # so that an equation whose inputs are all variables is keyed by its own inputs tuple
    # and the pass keeps no new object per equation (fewer garbage collections)
    seen = {}
    equations = []
    for eqn in program.equations:
        eqn = sub.equation(eqn)
        if eqn.prim.traits.pure:
            try:
                earlier = seen.setdefault(_cse_kind(eqn), {}).setdefault(
                    _cse_inputs(eqn.inputs), eqn)
            except TypeError:   # an unhashable parameter: the equation is kept as it is
                earlier = eqn
            if earlier is not eqn:
                for old, new in zip(eqn.outs, earlier.outs):
                    sub.to[old] = new
                continue
        equations.append(eqn)
    program.equations = equations
    sub.finish(program)


def _cse_kind(eqn):
    """The primitive, parameters and error handling of an equation, as a key."""
    params = tuple([(k, _param_key(v)) for k, v in eqn.params.items()]) if eqn.params \
        else ()
    errstate = tuple(sorted(eqn.errstate.items())) if eqn.errstate else None
    return (id(eqn.prim), params, errstate)


def _cse_inputs(inputs):
    """The inputs as a key: variables as they are, constants by identity or by type and
    bits (``inputs`` itself where every one is a variable)."""
    for ref in inputs:
        if type(ref) is not int:
            return tuple([i if type(i) is int else _const_key(i.value) for i in inputs])
    return inputs


def fold_constants(program):
    """Run each equation whose inputs are all constants (plain values, not traced ones)
    now, and read its outputs as constants. An equation that would raise or warn (a
    floating-point error), or whose outputs fail a guard, stays in the program."""
    sub = _Substitution()
    guards = {}
    for g in program.guards:
        guards.setdefault(g.var, []).append(g)
    equations = []
    for eqn in program.equations:
        eqn = sub.equation(eqn)
        outs = None
        # a callback, the user's code, runs at each replay: not here
        if eqn.prim.traits.pure and _all_constant(eqn.inputs):
            outs = _evaluate(eqn)
        if outs is not None and all(g.holds(value) for v, value in zip(eqn.outs, outs)
                                    for g in guards.get(v, ())):
            for v, value in zip(eqn.outs, outs):
                if type(value) is np.ndarray:
                    value.flags.writeable = False
                sub.to[v] = Const(value)
            continue
        equations.append(eqn)
    program.equations = equations
    sub.finish(program)


def _all_constant(inputs):
    """Whether every input is a plain value (no variable, no traced value)."""
    for ref in inputs:
        if type(ref) is int or isinstance(ref.value, Tracer):
            return False
    return True


def _evaluate(eqn):
    args = [i.value for i in eqn.inputs]
    errstate = eqn.errstate or {"all": "raise"}
    try:
        with np.errstate(**errstate):
            out = eqn.prim.impl(*args, **eqn.params)
    except Exception:   # noqa: BLE001 (anything: the replay will meet it, as the function does)
        return None
    return tuple(out) if eqn.prim.multiple_results else (out,)
