"""The plain replay of a graph as generated Python: one compiled function of the flat
arguments with one line per equation, no tracers and no ``bind``.

What makes a line cheap:

- **NumPy's operators** for ``add``, ``subtract``, ``multiply``, ``divide`` and
  ``negative`` on floating or complex values, where an operand was a NumPy array or scalar
  when the graph was recorded (``Recording.numpy``). ``a * b`` then runs the same ufunc
  loop as ``np.multiply(a, b)`` (on arrays it is that call; on NumPy scalars NumPy's scalar
  arithmetic gives the same IEEE result), but skips the ufunc's argument parsing, ten
  times the cost of the product itself on a scalar. The other operand is then a NumPy
  value or a Python ``float``/``int``, so Python's operator dispatch cannot pick another
  type's method (a ``complex`` on the left would; so would an array subclass). Not for a
  complex product of values of no dimension: NumPy's scalar product of complex numbers
  differs from the ufunc at infinities and NaN (``_scalar_math_exact``).
- **Inline guards** for the 0 x inf rule's checks on scalars: ``holds_nan(v)`` is
  ``v != v`` and ``holds_nonfinite(v)`` is ``not -inf < v < inf`` for a real scalar;
  ``holds_nan`` of a real array of a few entries compares each of ``v.tolist()`` with
  itself (a tenth of the call's cost; the answer is the same: ``holds_nan`` sums squares,
  which are NaN exactly where an entry is).
- **Basic indexing inline**: a read of a basic index (the ``reads_index`` trait: a
  ``getitem`` by integers and slices alone, ``scalars``' ``element``) is ``x[index]``,
  integers written out and any other index made once; a write into zeros at a basic
  index (``writes_index``: ``getitem``'s adjoint ``scatter_add``) is a new array of
  zeros (``v = _zeros(shape, dtype)`` and ``v[index] = values`` on the next line: a basic
  index never repeats an element), without rebuilding the index on each call; a sum of
  such scatters adds into the first one's array in place (``_scatter_chains``); a
  reshape (``reshapes_to``) of a NumPy value is its ``reshape`` method, and a vector of
  numbers (``packs_scalars``) one ``np.array`` call.
- **One ``np.errstate`` block per run** of consecutive equations recorded under the same
  error handling (a rule's own ``np.errstate``), instead of one per equation.
- Constants and implementations are closure variables of the function, not globals.
- Matrix-vector products with one large matrix are merged (``products.merge``), so the
  matrix is read once; with the elementwise work after them and a product on the other
  side of the same matrix, in one loop over blocks of its rows (``rowblocks.fuse``).
- Consecutive elementwise operations on large arrays run as one loop over blocks that
  stay in the cache (``blocks.fuse``); only the values read after them are whole arrays.
- Large arrays are deleted after their last use, and an elementwise operation writes into
  a dying input's buffer where that is safe (``buffers.plan``), so peak memory falls.
- Values of one entry are NumPy scalars where nothing can tell them from 0-d arrays, and
  stacks of numbers are one ``np.array`` call (``scalars.narrow``).

A guard is checked right after the line that computes its variable and raises
``GuardFailure``.
"""

import keyword
import math

import numpy as np

from ..interpreters.ir import is_numpy
from ..interpreters.staging import write_back
from ..ops.families import holds_nan, holds_nonfinite
from . import blocks, buffers, products, rowblocks, scalars

#: The operators a replay line may use for an equation of that ``operator`` trait.
_BINARY = ("+", "-", "*", "/")
_UNARY = {"neg": "-"}
_PY_NUMBERS = (float, int)
_LISTED = 8   # the most entries of a real array whose NaN check is written out inline


class _Writer:
    """The source lines and the names they use (constants, implementations)."""

    def __init__(self, fail, program, guards_after):
        self.rec = program
        self.guards_after = guards_after
        self.names = {"_fail": fail, "_errstate": np.errstate, "_copy": np.copy,
                      "_fresh": _fresh, "_inf": np.inf, "_array": np.array, "_add": np.add,
                      "_zeros": np.zeros, "_write_back": write_back}
        self.ids = {}
        self.body = []

    def constant(self, value):
        """A name bound to ``value`` (one per distinct object)."""
        name = self.ids.get(id(value))
        if name is None or self.names[name] is not value:
            name = self.ids[id(value)] = f"c{len(self.names)}"
            self.names[name] = value
        return name

    def ref(self, ref):
        return f"v{ref}" if type(ref) is int else self.constant(ref.value)

    def is_numpy(self, ref):
        return self.rec.numpy[ref] if type(ref) is int else is_numpy(ref.value)

    def is_py_number(self, ref):
        return type(ref) is not int and type(ref.value) in _PY_NUMBERS

    def index(self, index):
        """A basic index as written between brackets: integers as they are (``0, 2``;
        ``()`` for none), any other as a constant made once."""
        if all(type(i) is int for i in index):
            return ", ".join(map(str, index)) if index else "()"
        return self.constant(index)

    def check(self, var, indent):
        rec = self.rec
        for guard in self.guards_after.get(var, ()):
            shape, dtype = rec.avals[var]
            kind = np.dtype(dtype).kind
            g = self.constant(guard)
            v = f"v{var}"
            if guard.test is holds_nan and shape == () and kind in "fc" \
                    and type(guard.expected) is bool:
                cond = f"{v} != {v}" if guard.expected is False else f"not {v} != {v}"
            elif guard.test is holds_nonfinite and shape == () and kind == "f" \
                    and type(guard.expected) is bool:
                finite = f"-_inf < {v} < _inf"
                cond = f"not {finite}" if guard.expected is False else finite
            elif guard.test is holds_nan and kind == "f" and 0 < math.prod(shape) <= _LISTED \
                    and type(guard.expected) is bool and rec.numpy[var]:
                # a few real entries: as Python floats (one call), each compared with itself
                flat = ".tolist()" if len(shape) == 1 else ".ravel().tolist()"
                self.body.append(f"{indent}_t = {v}{flat}")
                nan = " or ".join(f"_t[{i}] != _t[{i}]" for i in range(math.prod(shape)))
                cond = nan if guard.expected is False else f"not ({nan})"
            elif guard.test is not None:
                test, expected = self.constant(guard.test), self.constant(guard.expected)
                cond = f"not {test}({v}) == {expected}"
            else:
                cond = f"not {g}.holds({v})"
            self.body.append(f"{indent}if {cond}: raise _fail({g})")

    def call(self, eqn, out=None):
        """The right-hand side of an equation's line (writing into variable ``out``), or
        for a basic ``scatter_add`` the pair of the new array's right-hand side and the
        write into it (``[index] = values``)."""
        inputs = eqn.inputs
        impl = eqn.prim.impl
        traits = eqn.prim.traits
        if out is not None:
            args = ", ".join(self.ref(i) for i in inputs)
            return f"{self.constant(impl)}({args}, out=v{out})"
        if traits.packs_scalars is not None:
            values = "".join(f"{self.ref(i)}, " for i in inputs)
            return f"_array(({values}), {self.constant(traits.packs_scalars(eqn.params))})"
        operator = traits.operator
        if operator is not None and not eqn.params and _operator_safe(eqn):
            if len(inputs) == 2 and operator in _BINARY and _scalar_math_exact(eqn) and (
                    self.is_numpy(inputs[0]) and (self.is_numpy(inputs[1])
                                                  or self.is_py_number(inputs[1]))
                    or self.is_numpy(inputs[1]) and self.is_py_number(inputs[0])):
                return f"{self.ref(inputs[0])} {operator} {self.ref(inputs[1])}"
            if len(inputs) == 1 and operator in _UNARY and self.is_numpy(inputs[0]):
                return f"{_UNARY[operator]}{self.ref(inputs[0])}"
        if traits.reshapes_to is not None and self.is_numpy(inputs[0]):
            # np.reshape of a NumPy array or scalar is its method: the same result
            shape = tuple(traits.reshapes_to(eqn.params))
            return f"{self.ref(inputs[0])}.reshape({self.constant(shape)})"
        index = traits.read_index(eqn.params)
        if index is not None:
            return f"{self.ref(inputs[0])}[{self.index(index)}]"
        index = traits.written_index(eqn.params)
        if index is not None:
            c = self.constant(index)
            shape, dtype = eqn.avals[0]   # zeros, then the values written in: two lines
            return (f"_zeros({self.constant(tuple(shape))}, "
                    f"{self.constant(np.dtype(dtype))})", f"[{c}] = {self.ref(inputs[0])}")
        args = [self.ref(i) for i in inputs]
        for key, value in eqn.params.items():
            if key.isidentifier() and not keyword.iskeyword(key):
                args.append(f"{key}={self.constant(value)}")
            else:
                args.append(f"**{self.constant({key: value})}")
        return f"{self.constant(impl)}({', '.join(args)})"


def _scatter_chains(rec, guards_after):
    """Sums of writes into zeros at basic indices (``writes_index``: ``scatter_add``s, a
    reverse pass's cotangent of an array read element by element): ``(deferred, fused)``.
    An ``add`` of a small float array made here and read by nothing else (``owner``: such
    a write's result or such a sum) and such a write's result read by nothing else becomes
    ``owner[index] += value`` (``fused[i] = _Step(owner, index, value, ...)``), and that
    ``scatter_add``'s own line is skipped (its index in ``deferred``). The elements the
    index writes get ``owner + value`` as the sum did.

    The sum adds zero to the others, which changes one number: ``-0.0 + 0.0`` is ``0.0``.
    An element may hold -0.0 only where a value was written (the first ``scatter_add``)
    or added (a sum is -0.0 only when both terms are), so each step knows which elements
    the sum would have turned to +0.0 (``pending``): where the step adds to such an
    element it adds ``value + 0.0`` (``(x + 0.0) + v`` is ``x + (v + 0.0)`` for every x and
    v), or adds 0.0 to them first (``before``); after the chain's last step the elements
    still pending get 0.0 added (``after``). Adding 0.0 changes nothing else, and raises
    no floating-point error."""
    uses = rec.def_use()
    returned = {ref for ref in rec.outputs if type(ref) is int}

    def read_once(v):   # by one equation, once, and not returned
        return uses.reads(v) == 1 and v not in returned

    scatters, owned, deferred, fused = {}, set(), set(), {}
    state = {}   # owner -> (dirty, pending): masks of the elements as above
    for i, eqn in enumerate(rec.equations):
        (out,) = eqn.outs if len(eqn.outs) == 1 else (None,)
        if out is None or guards_after.get(out):
            continue
        shape, dtype = eqn.avals[0]
        small = np.dtype(dtype).kind in "fc" and math.prod(shape) < buffers.BIG
        index = eqn.prim.traits.written_index(eqn.params)
        if index is not None:
            if small and type(eqn.inputs[0]) is int:
                scatters[out] = (i, index, eqn.inputs[0])
                owned.add(out)
        elif eqn.prim.traits.operator == "+" and not eqn.params and small \
                and len(eqn.inputs) == 2 \
                and all(type(r) is int and rec.avals[r] == eqn.avals[0] for r in eqn.inputs):
            a, b = eqn.inputs
            if a != b and read_once(a) and read_once(b):
                if b not in scatters or a not in owned:
                    a, b = b, a
                if b in scatters and a in owned and scatters[b][0] not in deferred:
                    j, index, value = scatters.pop(b)
                    owned.discard(b)
                    deferred.add(j)
                    if a in state:
                        dirty, pending = state.pop(a)
                    else:   # a scatter's result: the values it wrote may be -0.0
                        dirty, pending = _written(shape, scatters[a][1]), np.zeros(shape, bool)
                    hit = _written(shape, index)
                    before = pending & hit
                    state[out] = (dirty & hit, (pending | dirty) & ~hit)
                    fused[i] = _Step(a, index, value, before)
                    owned.discard(a)
                    owned.add(out)
    for i, step in fused.items():   # the chains' last steps
        out = rec.equations[i].outs[0]
        if out in state:
            step.after = state[out][1]
    return deferred, fused


class _Step:
    """One fused step ``owner[index] += value`` of ``_scatter_chains``, with the masks of
    the elements that get 0.0 added before it and after it (the chain's last step)."""

    def __init__(self, owner, index, value, before):
        self.owner, self.index, self.value, self.before = owner, index, value, before
        self.after = None

    def lines(self, w, target):
        owner = f"v{self.owner}"
        index = w.constant(self.index)
        value = w.ref(self.value)
        hit = _written(self.before.shape, self.index)
        lines = []
        if self.before.any() and (self.before == hit).all():
            value = f"{value} + 0.0"   # every element it adds to is pending
        elif self.before.any():
            lines.append(_add_zero(w, owner, self.before))
        lines.append(f"{owner}[{index}] += {value}")
        if self.after is not None and self.after.any():
            lines.append(_add_zero(w, owner, self.after))
        lines.append(f"{target} = {owner}")
        return lines


def _written(shape, index):
    """The mask of the elements that a basic ``index`` selects in an array of ``shape``."""
    mask = np.zeros(shape, bool)
    mask[index] = True
    return mask


def _add_zero(w, owner, mask):
    """The line adding 0.0 to the elements of ``mask`` in place."""
    if mask.sum() == 1:
        return f"{owner}[{w.constant(tuple(int(i[0]) for i in np.nonzero(mask)))}] += 0.0"
    if mask.all():
        return f"{owner} += 0.0"
    return f"_add({owner}, 0.0, out={owner}, where={w.constant(mask)})"


def _fresh(value):
    """A copy of an array (a NumPy or Python scalar is immutable: itself)."""
    return value.copy() if isinstance(value, np.ndarray) else value


def _operator_safe(eqn):
    """Whether every output is floating or complex of at least 32 bits (where NumPy's scalar
    arithmetic and its ufuncs warn alike; integer overflow warns only in the former)."""
    for _, dtype in eqn.avals:
        dtype = np.dtype(dtype)
        if dtype.kind not in "fc" or dtype.itemsize < 4:
            return False
    return True


def _scalar_math_exact(eqn):
    """Whether NumPy's scalar arithmetic gives what the ufunc gives when both operands are
    NumPy scalars (a result of no dimension). Not for a complex product: with an infinite
    or NaN part, the scalar product's NaNs and its floating-point errors differ from
    ``np.multiply``'s; the call stays."""
    shape, dtype = eqn.avals[0]
    return shape != () or eqn.prim.traits.operator != "*" or np.dtype(dtype).kind != "c"


def generate_replay(graph, fail):
    """The plain replay of ``graph`` (its ``equations``, guards and outputs) as one compiled
    function of the flat arguments; ``fail(guard)`` is the exception a failing guard
    raises. The function's ``source`` attribute holds its text, its ``program`` the
    program it runs (``graph.program`` with merged products, ``products.merge``, and
    row-block passes, ``rowblocks.fuse``, elementwise stretches in blocks,
    ``blocks.fuse``, and values of one entry as NumPy scalars, ``scalars.narrow``)."""
    rec = rowblocks.fuse(products.merge(graph.program))
    rec, guards_after = blocks.fuse(rec, graph._guards_after, fail)
    rec = scalars.narrow(rec, guards_after)
    w = _Writer(fail, rec, guards_after)
    for i, _ in graph.write_back:   # the caller's arrays, kept from their variables' frees
        w.body.append(f"_target{i} = v{i}")
    for var in range(rec.num_inputs):
        w.check(var, "")
    frees, reuse = buffers.plan(rec)
    deferred, fused = _scatter_chains(rec, w.guards_after)
    errstate = None
    for i, eqn in enumerate(rec.equations):
        if i in deferred:
            continue
        if eqn.errstate != errstate:
            if eqn.errstate is not None:   # the error handling a rule set around it
                w.body.append(f"with _errstate(**{w.constant(eqn.errstate)}):")
            errstate = eqn.errstate
        indent = "    " if errstate is not None else ""
        targets = ", ".join(f"v{v}" for v in eqn.outs)
        if eqn.prim.multiple_results:
            targets += ","
        if i in fused:
            w.body.extend(indent + line for line in fused[i].lines(w, targets))
        else:
            line = w.call(eqn, reuse.get(i))
            if type(line) is tuple:   # a new array, then a write into it
                line, write = line
                w.body.append(f"{indent}{targets} = {line}")
                line = f"{targets}{write}"
                w.body.append(f"{indent}{line}")
            else:
                w.body.append(f"{indent}{targets} = {line}")
        for var in eqn.outs:
            w.check(var, indent)
        if i in frees:
            w.body.append(f"{indent}del {', '.join(f'v{v}' for v in frees[i])}")
    outs, returned = [], set()
    for o, was in zip(rec.outputs, graph.recording.outputs):
        if type(o) is int:
            # a pass made this output an argument or another output (x * 1 is x): a copy,
            # so that the caller never receives one array twice or its own argument back
            # where the function returns a new array
            aliased = (o < rec.num_inputs or o in returned) and was != o
            outs.append(f"_fresh(v{o})" if aliased else f"v{o}")
            returned.add(o)
        elif type(o.value) is np.ndarray:   # a fresh array per call, as the function gives
            outs.append(f"_copy({w.constant(o.value)})")
        else:
            outs.append(w.constant(o.value))
    for i, k in graph.write_back:   # the arguments the function wrote into, as NumPy does
        w.body.append(f"_write_back(_target{i}, {outs[k]})")
    outs = outs[:graph.num_results]
    w.body.append(f"return ({', '.join(outs)}{',' if len(outs) == 1 else ''})")
    args = ", ".join(f"v{i}" for i in range(rec.num_inputs))
    inner = f"    def replay({args}):\n" + "".join(f"        {line}\n" for line in w.body)
    source = f"def make({', '.join(w.names)}):\n{inner}    return replay\n"
    namespace = {}
    exec(compile(source, "<diffkit.jit replay>", "exec"), namespace)   # noqa: S102 (our source)
    # by position: binding thousands of keywords costs time quadratic in their number
    replay = namespace["make"](*w.names.values())
    replay.source = inner
    replay.program = rec
    return replay
