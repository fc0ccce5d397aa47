"""``Graph``: a staged recording that can be read and replayed.

When it is built, a graph optimises the recording (``passes.optimise``: dead code, common
subexpressions, constant folding, no-op shape operations ...; ``Graph.program`` is the
result). It then replays in one of two ways:

- **plain**: every argument is a plain value (array or Python scalar). The program becomes
  one generated Python function (``codegen.generate_replay``), compiled on the first plain
  replay, that calls each primitive's ``impl`` directly (or NumPy's operator for it): no
  tracers, no ``bind``. Each guard is checked as soon as its variable is computed. An
  argument of another kind than recorded (a Python number where a NumPy value was) makes
  a direct call take the bound path instead, since the generated code relies on the kinds.
- **bound**: some argument is a tracer of an enclosing transformation (``grad(jit(f))``,
  ``vmap(jit(f))``). Each equation binds its primitive, so that transformation interprets
  the graph without running the user's Python again; guards read the concrete values
  under the tracers (through ``diffkit.core.concrete``, so an enclosing jit records them
  too). A guard that cannot be read (a batched value under ``vmap``) makes the replay give
  up with ``Unverifiable``; the caller then runs the function itself.

A guard that no longer holds raises ``GuardFailure`` (the caller traces again).

Beyond the function's results, a replay computes what the recording says the plain function
does and the equations alone would lose (``Recording``): the final value of each argument
written in place, written into the caller's array at the end (``write_back``), and each
operation that may raise although nothing reads its result. A recording on which a
primitive raised an exception that the function caught is never replayed (``Unverifiable``):
no guard can tell that an operation which did not run would not raise now.
"""

import copy

import numpy as np

from ..config import config
from ..core.trace import Tracer
from ..errors import DiffkitError
from ..interpreters.ir import Program, ReadDiffers, bind_equation, check_guards, is_numpy
from ..interpreters.staging import write_back
from ..tree_util import tree_flatten, tree_unflatten
from . import passes
from .codegen import generate_replay


class GuardFailure(Exception):
    """A value read while tracing reads differently now: the graph does not apply."""

    def __init__(self, guard):
        super().__init__(guard.describe() + guard.read_at())
        self.guard = guard


class Unverifiable(Exception):
    """A guard cannot be checked on this call (its value is batched under vmap)."""


class StaleGraphError(DiffkitError, ValueError):
    """A graph called directly with values for which one of its guards fails."""


class Graph:
    """A recorded function: ``str(graph)`` lists it, ``graph.num_ops`` counts its operations
    (after the optimisation passes), ``graph(*args)`` replays it on arguments of the
    recorded structure, shapes and dtypes (the non-static arguments, in order).

    ``in_tree``/``out_tree`` are the pytree structures of the arguments (the pair of the
    positional arguments and the keyword arguments) and of the outputs. ``optimise=False``
    keeps the recording as it is, but for dead code (to compare with the passes).
    """

    def __init__(self, recording, in_tree, out_tree, optimise=True):
        self.num_results = len(recording.outputs)
        self.raised = tuple(recording.raised)
        recording, self.write_back = _with_extras(recording)
        self.recording = recording
        self.in_tree = in_tree
        self.out_tree = out_tree
        self.program = passes.optimise(recording) if optimise else _unoptimised(recording)
        self.equations = self.program.equations
        self._guards_after = _guards_by_var(self.program.guards)
        self._plain = None   # the generated function, compiled on the first plain replay

    @property
    def num_ops(self):
        return len(self.equations)

    @property
    def guards(self):
        return self.program.guards

    @property
    def replay_program(self):
        """The program the plain replay runs: ``program`` with the matrix-vector products
        that share a large matrix merged (``products.merge``)."""
        if self._plain is None:
            self._plain = generate_replay(self, GuardFailure)
        return self._plain.program

    # --- replay ----------------------------------------------------------------------

    def run_flat(self, leaves):
        """Outputs (a flat tuple) for the flat arguments ``leaves``, plain values or tracers
        of enclosing transformations; ``GuardFailure``/``Unverifiable`` as above."""
        for leaf in leaves:
            if isinstance(leaf, Tracer):
                return self.bind_flat(leaves)
        if self.raised:
            raise Unverifiable(self._raised_message())
        plain = self._plain
        if plain is None:
            plain = self._plain = generate_replay(self, GuardFailure)
        return plain(*leaves)

    def bind_flat(self, leaves):
        if self.raised:
            raise Unverifiable(self._raised_message())
        if self.write_back and any(isinstance(leaves[i], Tracer) for i, _ in self.write_back):
            # the function writes into a traced argument: it runs itself, so that the
            # enclosing transformation sees the write where the function makes it
            raise Unverifiable("the function writes into a traced argument")
        env = list(leaves) + [None] * (len(self.recording.avals) - len(leaves))
        for var in range(len(leaves)):
            self._check(var, env[var])
        for eqn in self.equations:
            args = [env[i] if type(i) is int else i.value for i in eqn.inputs]
            if eqn.errstate is not None:
                with np.errstate(**eqn.errstate):
                    outs = _bind(eqn, args)
            else:
                outs = _bind(eqn, args)
            for var, value in zip(eqn.outs, outs):
                env[var] = value
                self._check(var, value)
        outs, returned = [], set()
        for o, was in zip(self.program.outputs, self.recording.outputs):
            if type(o) is not int:
                outs.append(o.value)
                continue
            value = env[o]   # copied where a pass made it an argument or another output
            if (o < len(leaves) or o in returned) and was != o and \
                    isinstance(value, np.ndarray):
                value = value.copy()
            returned.add(o)
            outs.append(value)
        for i, k in self.write_back:
            write_back(leaves[i], outs[k])
        return tuple(outs[:self.num_results])

    def _raised_message(self):
        return (f"it was recorded while the function caught an exception "
                f"({', '.join(self.raised)}); the path it took cannot be checked on a replay")

    def _check(self, var, value):
        guards = self._guards_after.get(var)
        if guards:
            try:
                check_guards(guards, value)
            except ReadDiffers as differs:
                if differs.unverifiable:
                    raise Unverifiable(differs.guard.describe()) from None
                raise GuardFailure(differs.guard) from None

    def __call__(self, *args, **kwargs):
        leaves, tree = tree_flatten((args, kwargs))
        if tree != self.in_tree:
            raise ValueError(f"this graph was recorded for arguments of structure "
                             f"{self.in_tree}, got {tree}")
        for leaf, (shape, _) in zip(leaves, self.recording.avals):
            if np.shape(leaf) != shape:
                raise ValueError(f"this graph was recorded for an argument of shape {shape}, "
                                 f"got shape {np.shape(leaf)}; record a new graph")
        numpy = self.recording.numpy
        mixed = any(is_numpy(leaf) != numpy[i] for i, leaf in enumerate(leaves))
        if self.raised:
            raise StaleGraphError(
                f"this graph cannot be replayed: {self._raised_message()}. Call the function "
                "itself, or through jit, which traces such calls every time.")
        try:   # the generated replay assumes each argument's kind (NumPy or Python) as recorded
            outs = self.bind_flat(leaves) if mixed else self.run_flat(leaves)
        except (GuardFailure, Unverifiable) as failure:
            raise StaleGraphError(
                f"this graph does not apply to these arguments: a value read while it was "
                f"recorded reads differently now ({failure}). Record a new graph with "
                "make_graph, or call the function through jit, which traces again.") from None
        return tree_unflatten(self.out_tree, outs)

    # --- listing ---------------------------------------------------------------------

    def __str__(self):
        rec = self.recording
        inputs = ", ".join(f"v{i}: {_aval(rec.avals[i])}" for i in range(rec.num_inputs))
        lines = [f"graph({inputs}) {{"]
        lines += [f"  guard {g.describe()}" for v in range(rec.num_inputs)
                  for g in self._guards_after.get(v, ())]
        for eqn in self.equations:
            outs = ", ".join(f"v{v}: {_aval(a)}" for v, a in zip(eqn.outs, eqn.avals))
            args = " ".join(_ref(i) for i in eqn.inputs)
            params = "".join(f" {k}={_param(v)}" for k, v in eqn.params.items())
            lines.append(f"  {outs} = {_prim_name(eqn)} {args}{params}{_line_of(eqn)}")
            lines += [f"  guard {g.describe()}{_line_of(g)}" for v in eqn.outs
                      for g in self._guards_after.get(v, ())]
        outputs = self.program.outputs
        written = {k: i for i, k in self.write_back}
        for k in range(self.num_results, len(outputs)):   # what runs beyond the results
            lines.append(f"  write argument v{written[k]} <- {_ref(outputs[k])}" if k in written
                         else f"  run {_ref(outputs[k])} (it may raise)")
        lines.append(f"  return {', '.join(_ref(o) for o in outputs[:self.num_results])}")
        lines.append("}")
        return "\n".join(lines)

    def __repr__(self):
        return f"<Graph: {self.recording.num_inputs} inputs, {self.num_ops} ops, " \
               f"{len(self.guards)} guards>"


def _line_of(made):
    """``"  # file:line"`` of an equation or guard when every staged operation keeps its
    line (``dk.config.source_info = "all"``), else ''."""
    if config.source_info != "all" or made.where is None:
        return ""
    return f"  # {made.where.filename}:{made.where.lineno}"


def _bind(eqn, args):
    out = bind_equation(eqn.prim, args, eqn.params)
    return out if eqn.prim.multiple_results else (out,)


def _unoptimised(recording):
    program = Program(recording)
    passes.eliminate_dead_code(program)
    return program


def _with_extras(recording):
    """``(recording, write_back)``: the recording with the values a replay computes beyond
    the results appended to its outputs (the final value of each argument written into,
    then each result of an operation that may raise and that nothing else reads), and
    ``(argument, output position)`` for each write."""
    if not recording.writes and not recording.effects:
        return recording, ()
    outputs = list(recording.outputs)
    write_back = []
    for i, var in recording.writes:
        write_back.append((i, len(outputs)))
        outputs.append(var)
    outputs.extend(_unread(recording, recording.effects))
    extended = copy.copy(recording)
    extended.outputs = outputs
    extended.written = []
    return extended, tuple(write_back)


def _unread(recording, variables):
    """The ``variables`` that reach no output and no guard of ``recording``."""
    needed = {o for o in recording.outputs if type(o) is int}
    needed.update(g.var for g in recording.guards)
    needed.update(v for _, v in recording.writes)
    for eqn in reversed(recording.equations):
        if any(v in needed for v in eqn.outs):
            needed.update(i for i in eqn.inputs if type(i) is int)
    return [v for v in dict.fromkeys(variables) if v not in needed]


def _guards_by_var(guards):
    by_var = {}
    for guard in guards:
        by_var.setdefault(guard.var, []).append(guard)
    return by_var


# --- listing helpers -----------------------------------------------------------------------

_KIND = {"f": "f", "i": "i", "u": "u", "c": "c"}


def _aval(aval):
    shape, dtype = aval
    dtype = np.dtype(dtype)
    name = "bool" if dtype.kind == "b" else f"{_KIND.get(dtype.kind, dtype.kind)}" \
        f"{dtype.itemsize * 8}"
    return f"{name}[{','.join(map(str, shape))}]"


def _ref(ref):
    if type(ref) is int:
        return f"v{ref}"
    value = ref.value
    if isinstance(value, Tracer):
        return f"traced{_aval((value.shape, value.dtype))}"
    if np.ndim(value) == 0:
        return repr(value.item() if isinstance(value, np.generic) or
                    type(value) is np.ndarray else value)
    return f"const{_aval((np.shape(value), np.asarray(value).dtype))}"


def _param(value):
    if callable(value) and hasattr(value, "__name__"):
        return value.__name__
    name = getattr(value, "name", None)
    if isinstance(name, str) and not isinstance(value, (str, np.dtype)):
        return name
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _prim_name(eqn):
    user_function = eqn.prim.traits.user_function
    if user_function is not None:
        return f"{eqn.prim.name}[{user_function(eqn.params).name}]"
    return eqn.prim.name
