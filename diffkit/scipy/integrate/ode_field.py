"""Vector fields of the ODE solvers: the user's function on flat parameters, closure
conversion of the traced values it closes over, the augmented fields of the derivative
rules, and the exact (dense or sparse) Jacobians the implicit methods receive.

A *field* is a callable ``field(t, y, *params) -> dy/dt`` written with diffkit operations
(so it differentiates and batches), where ``params`` is a flat list of arrays. It is the
static parameter of the solve primitive (``ode_rules.py``): everything it depends on that a
derivative may flow into is among ``params``.

Closure conversion
------------------
A user's function may close over traced values (``grad(lambda p: solve_ivp(lambda t, y: -p
* y, ...))``). The solve primitive's implementation must never see them, so ``as_field``
records the function once (``diffkit.interpreters.staging``) at the initial point: every
traced value of an enclosing transformation the recording uses as a constant becomes one
more parameter, and the field replays the recording with those parameters in their place.
The recording is valid while the function's Python control flow takes the same branches:
its guards are checked on every replay, and a failing one raises ``ClosureError`` (pass
such values through ``args`` instead). A function that closes over no traced value is
called as it is.

Python branches on values
-------------------------
A function whose Python reads values (``if y[0] > 0.5:``) is a ``BranchingField``: called
as it is, its staged functions recorded branch by branch, and the branches it takes
followed through the solves (``ode_branches``): a derivative across a switch of branch is
refused.
"""

import collections
import threading

import numpy as np

from ... import api
from ...core.concrete import concrete_test, underlying
from ...core.trace import Tracer
from ...core.zeros import dtype_of, shape_of
from ...errors import TracerConversionError
from ...interpreters.staging import stage_flat
from ...jit import make_graph, randomness
from ...jit.graph import GuardFailure, Unverifiable
from ...numpy import asarray, dot, ravel, reshape
from ...ops.shape import concatenate, stack
from ...sparse import jacobian_sparsity, sparse_jacobian
from ...tree_util import tree_flatten
from ..solver_call import captured, replay
from .ode_branches import (
    BranchWatch,
    ClosureBranchError,
    ClosureError,
    PathTest,
    branch_signature,
    call_plainly,
    closure_message,
    in_native,
    native,
    state_dependent,
)

# sparse=None picks the sparse Jacobian when the detected pattern has at most this share
# of nonzeros (and the system has at least SPARSE_MIN_SIZE unknowns).
SPARSE_DENSITY = 0.1
SPARSE_MIN_SIZE = 16

# The transition system's products are written out row by row up to this many rows when
# the field computes with numbers (entries of its arguments: each NumPy call's fixed cost
# dominates, and a batch would turn numbers into arrays), batched otherwise.
UNROLLED_ROWS = 4

# The methods that receive the field's Jacobian (odeint is LSODA).
IMPLICIT = ("BDF", "Radau", "LSODA", "odeint")


def _rhs_array(value, n, name):
    out = asarray(value)
    if shape_of(out) != (n,):
        if int(np.prod(shape_of(out))) == n:
            return reshape(out, (n,))
        raise ValueError(f"{name}: the function returned shape {shape_of(out)}, "
                         f"but the state has shape ({n},)")
    return out


class UserField:
    """The user's ``fun(t, y, *args)`` (or ``func(y, t, *args)`` with ``tfirst=False``)
    on the flat leaves of ``args``, called as it is. ``cache`` holds its staged functions
    (made once per solve: the field of one call of the solver)."""

    def __init__(self, fun, treedef, n, tfirst=True, name="solve_ivp"):
        self.fun, self.treedef, self.n, self.tfirst, self.name = fun, treedef, n, tfirst, name
        self.cache = {}

    def __call__(self, t, y, *params):
        args = self.treedef.unflatten(params)
        out = self.fun(t, y, *args) if self.tfirst else self.fun(y, t, *args)
        return _rhs_array(out, self.n, self.name)


class BranchingField(UserField):
    """A user's function whose Python reads values (branches on them). It runs its own
    Python on plain values and while a staged function records it (each branch gets its
    graph, its reads the graph's guards); on traced values (a derivative rule's single
    points) through ``field_call_p``, which calls it on plain values. ``watch`` follows the
    branches its staged functions take (``ode_branches``). ``recording`` is the one made at
    the initial point (None when it could not be made: a read of a value batched by vmap)."""

    def __init__(self, fun, treedef, n, tfirst, name, recording):
        super().__init__(fun, treedef, n, tfirst, name)
        self.recording = recording
        self.watch = BranchWatch(name)
        self.direct = super().__call__

    def __call__(self, t, y, *params):
        if in_native():
            return self.direct(t, y, *params)
        return call_plainly(self.direct, t, y, *params)


class ReplayField:
    """A recorded user function with the traced values it closed over (``closed``) as
    parameters (``solver_call.replay`` evaluates the recording; its guards are checked
    after each evaluation). ``cache`` holds its staged functions: shared by every field
    of the same program (``program_cache``), or its own."""

    def __init__(self, recording, closed, n, name, cache=None):
        self.recording, self.closed, self.n, self.name = recording, closed, n, name
        self.num_inputs = recording.num_inputs
        self.cache = {} if cache is None else cache

    def __call__(self, t, y, *params):
        rec = self.recording
        inputs = (t, y, *params[:self.num_inputs - 2])
        (out,), env = replay(rec, inputs, self.closed, params[self.num_inputs - 2:])
        for guard in rec.guards:
            # read through concrete_test: a staged function of this field keeps the check
            if not concrete_test(env[guard.var], PathTest(guard)):
                self._left_branch(t, guard)
        return _rhs_array(out, self.n, self.name)

    def _left_branch(self, t, guard):
        at = np.asarray(underlying(t), float)
        at = float(at) if at.ndim == 0 else None     # (several times under vmap)
        if guard.var in state_dependent(self.recording, closed=self.closed):
            raise ClosureBranchError(closure_message(self.name, at))
        raise ClosureError(
            f"{self.name}: the function closes over traced values and its Python control "
            f"flow on the time changed{'' if at is None else f' at t = {at:.6g}'} since it "
            f"was recorded ({guard.describe()}). Pass the traced values through args "
            "instead of a closure.")


def as_field(fun, t0, y0, args, tfirst=True, name="solve_ivp"):
    """``(field, params)``: the user's function as a field and its flat parameters (the
    leaves of ``args``, then the traced values it closes over).

    The function is recorded once at ``(t0, y0)``. A recording whose Python took no branch
    on the values (no guards) *is* the function: the field replays it, and fields of equal
    recordings (the same operations, constants equal by value) share their staged
    functions, so a fit solving with the same function again records and compiles them
    only once. A recording with guards is valid only where they hold: the field then calls
    the function itself (``BranchingField``), or, when it closes over traced values,
    replays the recording and raises ``ClosureError`` where a guard fails."""
    leaves, treedef = tree_flatten(args)
    n = shape_of(y0)[0]
    field = UserField(fun, treedef, n, tfirst, name)
    if not isinstance(t0, Tracer):   # SciPy evaluates at float times
        t0 = float(np.asarray(underlying(t0), float))

    def staged(t, y, *ls):
        return [asarray(field(t, y, *ls))]

    generators = randomness.reachable_generators(fun)
    before = randomness.snapshot(generators)
    try:
        _, recording = stage_flat(staged, [t0, y0, *leaves], name=name)
    except TracerConversionError:
        recording = None    # Python read a value batched by vmap: a branch on values
    where = randomness.changed(before, generators)
    if where is not None:
        raise randomness.random_draw_error(name, where)
    if recording is None:
        return BranchingField(fun, treedef, n, tfirst, name, None), list(leaves)
    closed = captured(recording) if recording.holds_tracers else []
    if recording.guards:
        if not closed:
            return BranchingField(fun, treedef, n, tfirst, name, recording), list(leaves)
        return ReplayField(recording, closed, n, name), list(leaves) + closed
    cache = program_cache(recording, closed, name)
    return ReplayField(recording, closed, n, name, cache), list(leaves) + closed


# The staged functions of the programs met lately, by program (``program_key``); solves
# may run in threads (an executor's workers), hence the lock.
_PROGRAMS = collections.OrderedDict()
_PROGRAMS_LOCK = threading.Lock()
PROGRAMS_KEPT = 32


def program_cache(recording, closed, name):
    """The dict of staged functions shared by the fields of ``recording``'s program (a fresh
    dict when the program has a parameter that cannot be compared by value)."""
    try:
        key = (name, program_key(recording, closed))
    except _Unkeyable:
        return {}
    with _PROGRAMS_LOCK:
        cache = _PROGRAMS.get(key)
        if cache is None:
            cache = _PROGRAMS[key] = {}
            while len(_PROGRAMS) > PROGRAMS_KEPT:
                _PROGRAMS.popitem(last=False)
        else:
            _PROGRAMS.move_to_end(key)
    return cache


class _Unkeyable(Exception):
    pass


def program_key(recording, closed):
    """A hashable value equal for recordings of the same program: the inputs' shapes and
    dtypes, every equation (primitive, parameters, inputs, results) and the outputs, with
    constants by value (floats by their bits, so that -0.0 differs from 0.0) and the
    captured traced values ``closed`` by position. ``_Unkeyable`` when a parameter is
    neither a plain value nor hashable."""
    closed_at = {id(v): i for i, v in enumerate(closed)}

    def ref(r):
        if type(r) is int:
            return r
        if id(r.value) in closed_at:
            return ("closed", closed_at[id(r.value)])
        return _frozen(r.value)

    head = (recording.num_inputs, tuple(recording.avals[:recording.num_inputs]),
            tuple(recording.numpy[:recording.num_inputs]))
    body = tuple((eqn.prim, _frozen(eqn.params), tuple(ref(r) for r in eqn.inputs),
                  eqn.outs, eqn.avals, _frozen(eqn.errstate)) for eqn in recording.equations)
    return head, body, tuple(ref(r) for r in recording.outputs)


def _frozen(value):
    kind = type(value)
    if kind is np.ndarray or isinstance(value, np.generic):
        if value.dtype.hasobject:
            raise _Unkeyable
        return ("array", value.dtype.str, np.shape(value), np.ascontiguousarray(value).tobytes())
    if kind is float:
        return ("float", value.hex())
    if kind is complex:
        return ("complex", value.real.hex(), value.imag.hex())
    if kind in (bool, int, str, type(None)):
        return (kind.__name__, value)
    if kind in (tuple, list):
        return (kind.__name__, tuple(_frozen(v) for v in value))
    if kind is dict:
        return ("dict", tuple((k, _frozen(v)) for k, v in value.items()))
    if kind is slice:
        return ("slice", _frozen(value.start), _frozen(value.stop), _frozen(value.step))
    if isinstance(value, Tracer):
        raise _Unkeyable
    try:
        hash(value)
    except TypeError:
        raise _Unkeyable from None
    return ("object", value)   # compared by identity (or the object's own equality)


def scalar_code(field):
    """Whether ``field`` is a recording whose operations mostly give numbers (0-d values),
    as a field written entry by entry (``y[0] * y[1]``) does."""
    recording = getattr(field, "recording", None)
    if recording is None or not recording.equations:
        return False
    numbers = sum(all(shape == () for shape, _ in eqn.avals) for eqn in recording.equations)
    return 2 * numbers >= len(recording.equations)


def differentiable(x):
    return dtype_of(x).kind in "fc"


class SensitivityField:
    """State ``(y, s)``: ``y' = f(t, y, p)``, ``s' = J_y s + J_p dp`` (the forward
    sensitivity along the tangents ``dp`` of the parameters at ``which``), parameters
    ``(*p, *dp)``."""

    derived = True    # solved for a derivative: a switch of branch is refused

    def __init__(self, field, n, num_params, which):
        self.field, self.n, self.num_params, self.which = field, n, num_params, tuple(which)
        self.watch = getattr(field, "watch", None)
        self.cache = {}

    def __call__(self, t, z, *params):
        n, k = self.n, self.num_params
        p, dp = list(params[:k]), params[k:]
        y, s = z[:n], z[n:]

        def f(y, *chosen):
            q = list(p)
            for i, v in zip(self.which, chosen):
                q[i] = v
            return self.field(t, y, *q)

        dy, ds = api.jvp(f, (y, *[p[i] for i in self.which]), (s, *dp))
        return concatenate([dy, ds])


class TransitionField:
    """State ``(y, W)`` integrated backwards, ``W`` the ``(n, n)`` transition matrix of the
    adjoint by rows (the columns of ``M``): ``y' = f``, ``W' = -W J_y^T`` (``M' = -J_y^T
    M``), one vector-Jacobian product per row: written out row by row for a field that
    computes with numbers (``scalar_code``), batched over the rows otherwise. Its staged
    functions are kept with the field's (shared across solves of one program)."""

    derived = True

    def __init__(self, field, n):
        self.field, self.n = field, n
        self.watch = getattr(field, "watch", None)
        self.unrolled = n <= UNROLLED_ROWS and scalar_code(field)
        self.cache = field.cache.setdefault(("transition field", n), {})

    def __call__(self, t, z, *params):
        n, field = self.n, self.field
        out, pull = api.vjp(lambda y: field(t, y, *params), z[:n])
        back = -z[n:]     # pull is linear: one negation serves every row
        if not self.unrolled:     # one batched product over the rows
            rows = api.vmap(lambda w: pull(w)[0])(reshape(back, (n, n)))
            return concatenate([out, ravel(rows)])
        return concatenate([out] + [pull(back[n * j:n * (j + 1)])[0] for j in range(n)])


class AdjointField:
    """State ``(y, a, g)`` integrated backwards: ``y' = f``, ``a' = -a J_y``,
    ``g' = -a J_p`` (the parameters at ``which``, flattened)."""

    derived = True

    def __init__(self, field, n, which):
        self.field, self.n, self.which = field, n, tuple(which)
        self.watch = getattr(field, "watch", None)
        self.cache = {}

    def __call__(self, t, z, *params):
        n = self.n
        y, a = z[:n], z[n:2 * n]
        f = _of_chosen(self.field, t, params, self.which)
        dy, pull = api.vjp(f, y, *[params[i] for i in self.which])
        cts = pull(a)
        return concatenate([dy] + [-ravel(c) for c in cts])


def _of_chosen(field, t, params, which):
    """``field(t, y, *params)`` as a function of ``y`` and the parameters at ``which``
    (the others fixed): what the vector-Jacobian products differentiate."""
    def f(y, *chosen):
        return field(t, y, *with_chosen(params, which, chosen))
    return f


def _of_chosen_params(field, t, y, params, which):
    """``field(t, y, *params)`` as a function of the parameters at ``which``."""
    def f(*chosen):
        return field(t, y, *with_chosen(params, which, chosen))
    return f


def with_chosen(params, which, chosen):
    """``params`` with ``chosen`` at the positions ``which``."""
    q = list(params)
    for i, v in zip(which, chosen):
        q[i] = v
    return q


def compiled(field, kind, which=(), n=None):
    """A staged (``diffkit.jit``) function of ``field``, made once per field and kept:
    ``"rhs"``: ``(t, y, *params) -> f``; ``"pull"``: ``(t, y, a, *params) -> (a J_y,
    *(a J_p for the parameters at which))``; ``"aug"`` (``n`` the state's size): ``(t, z,
    *params) -> dz/dt`` for ``z = [y, a, g]``: ``[f, -a J_y, -a J_p]`` flattened;
    ``"jac_all"``: ``(t, y, *params) -> [J_y, J_p]`` (dense, ``(n, n + P)``);
    ``"jac"``: ``(t, y, *params) -> J_y`` (dense); ``"quadrature"`` (``n`` the number of
    nodes):
    ``(ts, Y, A, weights, *params) -> sum_r weights[r] A[r] J_p(ts[r], Y[r])`` (the
    parameters at ``which``, flattened), all nodes at once under ``vmap`` (node by node
    for a field with branches, whose Python reads one point at a time).
    The solvers call them on plain values, where a replay is straight-line NumPy."""
    key = (kind, tuple(which), n)
    fn = field.cache.get(key)
    if fn is not None:
        return fn
    if kind == "rhs":
        def fn(t, y, *params):
            return field(t, y, *params)
    elif kind == "pull":
        def fn(t, y, a, *params):
            f = _of_chosen(field, t, params, which)
            _, pull = api.vjp(f, y, *[params[i] for i in which])
            return tuple(pull(a))
    elif kind == "aug":
        def fn(t, z, *params):
            f = _of_chosen(field, t, params, which)
            out, pull = api.vjp(f, z[:n], *[params[i] for i in which])
            # pull is linear: pull(-a) is the negated products, with no negation of each
            return concatenate([out] + [ravel(c) for c in pull(-z[n:2 * n])])
    elif kind == "quadrature":
        def fn(ts, Y, A, weights, *params):
            def integrand(t, y, a):
                _, pull = api.vjp(_of_chosen_params(field, t, y, params, which),
                                  *[params[i] for i in which])
                return concatenate([ravel(c) for c in pull(a)])
            if getattr(field, "watch", None) is None:
                return dot(weights, api.vmap(integrand)(ts, Y, A))
            # a field with branches, node by node: its Python reads one point at a time
            rows = [integrand(ts[r], Y[r], A[r]) for r in range(shape_of(ts)[0])]
            return dot(weights, stack(rows))
    elif kind == "jac_all":
        def fn(t, y, *params):
            f = _of_chosen(field, t, params, which)
            blocks = api.jacfwd(f, argnums=tuple(range(1 + len(which))))(
                y, *[params[i] for i in which])
            return concatenate([reshape(b, (shape_of(y)[0], -1)) for b in blocks], axis=1)
    else:
        def fn(t, y, *params):
            return api.jacfwd(lambda y: field(t, y, *params))(y)
    fn = field.cache[key] = Staged(fn, getattr(field, "watch", None))
    return fn


class Staged:
    """``fn`` recorded once (``diffkit.jit.make_graph``) and replayed as straight-line NumPy
    on plain arguments, without ``jit``'s per-call cache lookup (the solvers call it
    thousands of times with arguments of one signature: ``t`` a Python float, ``y`` a
    float array, the parameters unchanged). A failing guard tries the other graphs, most
    recently used first, and records again, up to ``MAX_GRAPHS`` graphs; past them, and for
    traced arguments, ``fn`` runs itself. ``plain(*args)`` is the same for arguments known
    to be plain (the solvers' calls): the current graph's replay, called directly.

    ``watch`` (a ``BranchWatch``, for a field whose Python reads values) receives the
    branch signature of every call. In a derivative's solve, past ``MAX_GRAPHS`` each call
    is recorded (``stage_flat``, without the graph's optimisation) so that its branch is
    still seen."""

    MAX_GRAPHS = 4

    def __init__(self, fn, watch=None):
        self.fn = fn
        self.watch = watch
        self.graphs = []
        self.signatures = {}      # id(graph) -> its branch signature (watched only)
        self._replay = self._single = self._signature = None

    def __call__(self, *args):
        if any(isinstance(a, Tracer) for a in args):
            return self.fn(*args)
        for k, graph in enumerate(self.graphs):
            try:
                outs = graph.run_flat(args)
            except (GuardFailure, Unverifiable):
                continue
            if k:
                self._use(graph)
            self._note(self._signature, args)
            return graph.out_tree.unflatten(outs)
        if len(self.graphs) >= self.MAX_GRAPHS:
            if self.watch is not None and self.watch.strict:
                return self._recorded(args)
            return self.fn(*args)
        with native():
            graph = make_graph(self.fn)(*args)
        outs = graph.run_flat(args)
        if self.watch is not None:
            self.signatures[id(graph)] = branch_signature(graph.program)
        self._use(graph)
        self._note(self._signature, args)
        return graph.out_tree.unflatten(outs)

    def _use(self, graph):
        """Make ``graph`` the current one (first to try, replayed by ``plain``)."""
        # one assignment: a solve in another thread sees the old list or the new one
        self.graphs = [graph] + [g for g in self.graphs if g is not graph]
        self._replay = graph._plain
        self._single = graph.out_tree.node is None    # one array, not a tuple
        self._signature = self.signatures.get(id(graph))

    def _note(self, signature, args):
        if self.watch is not None:
            self.watch.note(self, signature, args)

    def _recorded(self, args):
        """``fn(*args)`` recorded as it runs, its branch noted (a watched function past
        ``MAX_GRAPHS`` graphs, in a derivative's solve)."""
        out_tree = []

        def flat(*xs):
            leaves, tree = tree_flatten(self.fn(*xs))
            out_tree.append(tree)
            return leaves

        with native():
            outs, recording = stage_flat(flat, list(args), name="solve_ivp")
        self._note(branch_signature(recording), args)
        return out_tree[0].unflatten(outs)

    def plain(self, *args):
        if self._replay is not None:
            try:
                outs = self._replay(*args)
            except GuardFailure:
                pass
            else:
                if self.watch is not None:
                    self.watch.note(self, self._signature, args)
                return outs[0] if self._single else self.graphs[0].out_tree.unflatten(outs)
        return self(*args)


class Jacobian:
    """The exact Jacobian ``d field / d y`` at the parameters ``params``, for SciPy's
    ``jac``: dense (``jacfwd``), or sparse (``sparse_jacobian``, pattern and colouring found
    once per field and reused) as a ``scipy.sparse.csr_array``."""

    def __init__(self, field, params, y0, t0, sparse, sparsity=None):
        self.params = params
        n = shape_of(y0)[0]

        def g(y, t, *ps):
            return field(t, y, *ps)

        self.g = g
        self.sparse = False
        if sparse is not False and (sparse or sparsity is not None or n >= SPARSE_MIN_SIZE):
            shared = field.cache    # the program's (compared by value) or this solve's
            key = ("pattern", tuple(shape_of(p) for p in params))
            pattern = sparsity if sparsity is not None else shared.get(key)
            if pattern is None:
                pattern = jacobian_sparsity(g)(np.asarray(y0, float), np.asarray(t0, float),
                                               *params)
                shared[key] = pattern
            density = pattern.nnz / max(n * n, 1)
            self.sparse = bool(sparse) or density <= SPARSE_DENSITY
            if self.sparse:
                jkey = ("sparse_jacobian", key[1], sparsity is None)
                sj = shared.get(jkey) if sparsity is None else None
                if sj is None:
                    sj = sparse_jacobian(g, sparsity=pattern)
                    if sparsity is None:
                        shared[jkey] = sj
                self.fn = sj
        self.dense = None if self.sparse else compiled(field, "jac")

    def __call__(self, t, y):
        if self.dense is not None:
            return self.dense(float(t), np.asarray(y, float), *self.params)
        return self.fn(y, np.asarray(t, float), *self.params)
