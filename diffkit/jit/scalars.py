"""Values of one entry in the plain replay: NumPy scalars where the recording made 0-d
arrays, and a vector of such values made in one call.

On a problem of a few unknowns (an ODE's right-hand side and its vector-Jacobian
products) every NumPy call's fixed cost is the replay's cost, and the kind of a value of
one entry sets it: an operation on a NumPy scalar (``np.float64``) costs a tenth of the same
operation on a 0-d array. Two patterns of the recorded code make 0-d arrays or pay for
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
  reshapes go where nothing else reads them.

Where a scalar is exact: a NumPy scalar and a 0-d array hold the same number, and every
ufunc gives the same result and the same floating-point errors on either (it reads both as
0-d). What else may see the value is limited to what gives the same answer on both:
elementwise ufuncs (called or written as NumPy's operators: the generated code keeps a
complex product of values of no dimension as a call, ``codegen``), ``scalar_power``
(``np.power``), a reshape to at least one dimension (a new array either way), the values
of a basic ``scatter_add`` (written into zeros), a ``stack`` above, and the NaN checks
of the 0 x inf rule. A value returned, or read by anything else, stays a 0-d array.
"""

import math

import numpy as np

from ..interpreters.staging import Const, Equation, is_numpy
from ..ops.elementwise import scalar_power_p
from ..ops.families import holds_nan, holds_nonfinite
from ..ops.indexing import ARRAY, getitem_p, scatter_add_p
from ..ops.shape import concatenate_p, reshape_p


class _Pseudo:
    """Stands where a primitive does in a rewritten equation (listing and replay only)."""

    multiple_results = False

    def __init__(self, name, impl):
        self.name = name
        self.impl = impl


#: ``x[index]``: the entry of a one-entry value, a NumPy scalar (``params["index"]``: ints)
element = _Pseudo("element", lambda x, index: x[index])
#: ``np.array(values, dtype)``: a vector of values of no dimension (``params["dtype"]``)
stack = _Pseudo("stack", lambda *values, dtype: np.array(values, dtype))

_SCALAR_GUARDS = (None, holds_nan, holds_nonfinite)


def basic_index(spec):
    """The NumPy index of an indexing ``spec`` without index arrays (``None`` if it has
    some)."""
    index = []
    for entry in spec:
        if entry is ARRAY:
            return None
        index.append(slice(*entry) if type(entry) is tuple else entry)
    return tuple(index)


def narrow(program, guards_after):
    """``program`` with the stacks and entry reads above (a copy; the program itself where
    there is none)."""
    equations = list(program.equations)
    avals, numpy = program.avals, program.numpy
    outputs = {o for o in program.outputs if type(o) is int}
    made = {v: i for i, eqn in enumerate(equations) for v in eqn.outs}
    changed = False
    for i, eqn in enumerate(equations):
        if eqn.prim is concatenate_p:
            new = _stack(eqn, equations, made, avals)
            if new is not None:
                equations[i] = new
                changed = True
    readers = _readers(equations)
    for i, eqn in enumerate(equations):
        if eqn.prim is reshape_p and tuple(eqn.params["shape"]) == ():
            new = _element(eqn, equations, made, readers, outputs, guards_after, avals, numpy)
            if new is not None:
                equations[i] = new
                changed = True
    if not changed:
        return program
    copy = type(program).__new__(type(program))
    copy.__dict__.update(program.__dict__)
    copy.equations = _drop_unread(equations, outputs, guards_after)
    return copy


def _readers(equations):
    readers = {}
    for i, eqn in enumerate(equations):
        for ref in eqn.inputs:
            if type(ref) is int:
                readers.setdefault(ref, []).append(i)
    return readers


def _dtype(ref, avals):
    return np.dtype(avals[ref][1]) if type(ref) is int else np.asarray(ref.value).dtype


def _stack(eqn, equations, made, avals):
    """The ``stack`` equation for a ``concatenate`` of values of no dimension reshaped
    to one entry each, of the result's dtype (``None`` for any other)."""
    shape, dtype = eqn.avals[0]
    dtype = np.dtype(dtype)
    if dict(eqn.params) != {"axis": 0} or len(shape) != 1 or dtype.kind not in "biufc":
        return None
    values = []
    for ref in eqn.inputs:
        if type(ref) is not int:   # a constant of one entry: its entry
            value = ref.value
            if type(value) is not np.ndarray or value.shape != (1,) or value.dtype != dtype:
                return None
            values.append(Const(value[0]))
            continue
        maker = equations[made[ref]] if ref in made else None
        if maker is None or maker.prim is not reshape_p or avals[ref][0] != (1,):
            return None
        (inner,) = maker.inputs
        if type(inner) is int:
            if avals[inner][0] != ():
                return None
        elif not (is_numpy(inner.value) or type(inner.value) in (bool, int, float, complex)) \
                or np.shape(inner.value) != ():
            return None
        if _dtype(inner, avals) != dtype:
            return None
        values.append(inner)
    return Equation(stack, {"dtype": dtype}, tuple(values), eqn.outs, eqn.avals, eqn.errstate)


def _scalar_safe(eqn):
    """Whether ``eqn`` gives the same result (value, type, errors) on a NumPy scalar as on a
    0-d array holding the same number, in any of its inputs."""
    impl = eqn.prim.impl
    if isinstance(impl, np.ufunc):
        return impl.signature is None and impl.nout == 1 and "out" not in eqn.params
    if eqn.prim is scalar_power_p or eqn.prim is stack:
        return True
    if eqn.prim is reshape_p:   # a NumPy scalar reshaped to () stays a scalar
        return len(eqn.params["shape"]) > 0
    if eqn.prim is scatter_add_p:   # the values, written into zeros
        return len(eqn.inputs) == 1 and basic_index(eqn.params["spec"]) is not None
    return False


def _element(eqn, equations, made, readers, outputs, guards_after, avals, numpy):
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
    if not all(_scalar_safe(equations[r]) for r in readers.get(out, ())):
        return None

    steps = []   # the basic indexing and reshapes from the first array to x, last first
    root = x
    while root in made:
        maker = equations[made[root]]
        (source,) = maker.inputs if len(maker.inputs) == 1 else (None,)
        if type(source) is not int or not numpy[source] or not (
                maker.prim is reshape_p or maker.prim is getitem_p
                and basic_index(maker.params["spec"]) is not None):
            break
        steps.append(maker)
        root = source
    shape = avals[root][0]
    probe = np.arange(math.prod(shape)).reshape(shape)   # where each entry sits in root
    for step in reversed(steps):
        if step.prim is reshape_p:
            probe = probe.reshape(step.params["shape"])
        else:
            probe = probe[basic_index(step.params["spec"])]
    flat = int(probe.reshape(-1)[0])
    index = tuple(int(i) for i in np.unravel_index(flat, shape)) if shape else ()
    return Equation(element, {"index": index}, (root,), eqn.outs, eqn.avals, eqn.errstate)


def _drop_unread(equations, outputs, guards_after):
    """Drop the reshapes and basic indexing that nothing reads any more."""
    counts = {}
    for eqn in equations:
        for ref in eqn.inputs:
            if type(ref) is int:
                counts[ref] = counts.get(ref, 0) + 1
    kept = []
    for eqn in reversed(equations):
        if eqn.prim in (reshape_p, getitem_p) and not any(
                counts.get(v) or v in outputs or guards_after.get(v) for v in eqn.outs):
            for ref in eqn.inputs:
                if type(ref) is int:
                    counts[ref] -= 1
            continue
        kept.append(eqn)
    kept.reverse()
    return kept
