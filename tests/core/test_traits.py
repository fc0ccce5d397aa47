"""Primitive traits: each claim a primitive's traits make is checked on the operations the
op records run, and a primitive made by the builder gets the fast routes with no edit
elsewhere (the forward Hessian-pattern route, jit's fused blocks).

The claims are checked on the values every record's function applies its primitives to
(staged once, then replayed equation by equation with plain values):

- ``elementwise``: the output has the arguments' broadcast shape, and each half of the
  (broadcast, flattened) arguments gives the same half of the output, bit for bit;
- ``out_argument``: ``impl(*args, out=buffer)`` writes what ``impl(*args)`` returns;
- ``operator``: the Python operator gives ``impl``'s result, bit for bit;
- ``nan_propagating``: a NaN in an argument's entry gives NaN at the output entries;
- ``shape_only``: the output's entries are the input's (``is_identity`` and ``compose``
  agree with ``impl``);
- ``curvature``: the Hessian of ``sum(w * f(args))`` (diffkit's own, whose rules the
  generic checker compares with finite differences) couples only the entries the
  curvature allows;
- what an application computes (``check_computes``): ``reads_index`` is NumPy's read
  ``x[index]`` at a basic index, ``writes_index`` zeros with the values written at one
  (each entry once), ``reshapes_to`` ``np.reshape``, ``joins_along`` ``np.concatenate``,
  ``packs_scalars`` ``np.array`` of values of no dimension, ``matrix_products`` the
  products ``matrix @ v`` or ``v @ matrix``: on the records' applications, on generated
  indices and matrices, and on the programs jit rewrites (whose stand-ins claim them).
"""

import itertools
import math
import types

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from records import RECORDS

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.api import grad
from diffkit.core.primitive import CURVATURES, PRIMITIVES, Primitive, Traits
from diffkit.errors import NoRuleError
from diffkit.interpreters.interactions import interaction_pattern
from diffkit.interpreters.ir import custom_call_p
from diffkit.interpreters.sparsity import sparsity_flat
from diffkit.interpreters.staging import stage_flat
from diffkit.jit import make_graph
from diffkit.jit.products import SHARED_MATVECS
from diffkit.ops.families import elementwise
from diffkit.tree_util import tree_flatten, tree_leaves


def staged_applications(fun, args):
    """``(equation, argument values, output values)`` for each primitive ``fun`` applies
    to ``args``, in order."""
    _, recording = stage_flat(lambda *xs: tree_leaves(fun(*xs)), list(args))
    env = dict(enumerate(args))
    for eqn in recording.equations:
        values = [env[r] if type(r) is int else r.value for r in eqn.inputs]
        out = eqn.prim.impl(*values, **eqn.params)
        outs = tuple(out) if eqn.prim.multiple_results else (out,)
        env.update(zip(eqn.outs, outs))
        if eqn.prim is not custom_call_p:
            yield eqn, values, outs


def record_applications(seed, records=RECORDS, case=0):
    """Every primitive application of each record's shape case ``case`` (the last one it
    has, if fewer), with values drawn from the record's domains by a generator seeded with
    ``seed``."""
    rng = np.random.default_rng(seed)
    for record in records:
        shapes = record.shapes[min(case, len(record.shapes) - 1)]
        args = [record.domain(i).sample(shape, rng) for i, shape in enumerate(shapes)]
        try:
            yield from staged_applications(record.fun, args)
        except Exception:   # noqa: BLE001 (a record staging cannot run is not this test's)
            continue


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and bool(
        np.all((a == b) | (np.isnan(a) & np.isnan(b)) if a.dtype.kind in "fc"
               else a == b))


def _broadcast(values, shape):
    return [np.broadcast_to(np.asarray(v), shape) for v in values]


PY_NUMBERS = (bool, int, float, complex)


def check_elementwise(eqn, values, out):
    shape = np.broadcast_shapes(*(np.shape(v) for v in values))
    assert np.shape(out) == shape, (eqn.prim, np.shape(out), shape)
    size = math.prod(shape)
    if size < 2:
        return
    # Python numbers stay as they are (NumPy promotes them as weak scalars), as jit's
    # blocks pass values of no dimension whole
    flat = [v if type(v) in PY_NUMBERS else
            np.ascontiguousarray(np.broadcast_to(v, shape)).reshape(-1) for v in values]
    half = size // 2
    parts = [eqn.prim.impl(*[v if type(v) in PY_NUMBERS else v[cut] for v in flat],
                           **eqn.params) for cut in (slice(0, half), slice(half, size))]
    assert same_bits(np.concatenate([np.ravel(p) for p in parts]), np.ravel(out)), eqn.prim


def check_out_argument(eqn, values, out):
    buffer = np.empty_like(np.asarray(out))
    if buffer.ndim == 0:
        return   # a NumPy scalar result: out= takes arrays
    eqn.prim.impl(*values, **eqn.params, out=buffer)
    assert same_bits(buffer, out), eqn.prim


OPERATORS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
             "/": lambda a, b: a / b, "@": lambda a, b: a @ b, "neg": lambda a: -a}


def check_operator(eqn, values, out):
    with np.errstate(all="ignore"):
        by_operator = OPERATORS[eqn.prim.traits.operator](*values)
    assert same_bits(np.asarray(by_operator), np.asarray(out)), eqn.prim


def check_nan_propagating(eqn, values, out):
    shape = np.shape(out)
    for i, v in enumerate(values):
        if np.asarray(v).dtype.kind != "f" or np.shape(v) != shape or not np.size(v):
            continue
        poisoned = np.array(v, copy=True)
        poisoned.flat[0] = np.nan
        with np.errstate(all="ignore"):
            result = eqn.prim.impl(*values[:i], poisoned, *values[i + 1:], **eqn.params)
        assert np.isnan(np.reshape(result, -1)[0]), eqn.prim


def check_shape_only(eqn, values, out):
    (x,) = values
    traits = eqn.prim.traits
    coded = np.arange(1, np.size(x) + 1, dtype=float).reshape(np.shape(x))
    moved = eqn.prim.impl(coded, **eqn.params)
    assert set(np.ravel(moved)) <= set(np.ravel(coded)), eqn.prim
    if traits.is_identity(eqn.params, np.shape(x)):
        assert same_bits(moved, coded), eqn.prim
    if traits.compose is not None:
        try:
            twice = eqn.prim.impl(moved, **eqn.params)
        except ValueError:
            return   # the parameters do not apply to the output's shape
        composed = traits.compose(eqn.params, eqn.params)
        assert same_bits(eqn.prim.impl(coded, **composed), twice), eqn.prim


#: What a basic index may hold (no index array)
BASIC = (int, slice, type(None), type(Ellipsis))


def _basic(index):
    return type(index) is tuple and all(type(i) in BASIC for i in index)


def check_reads_index(eqn, values, out):
    index = eqn.prim.traits.read_index(eqn.params)
    if index is None:
        return
    (x,) = values
    assert _basic(index), (eqn.prim, index)
    read = x[index]
    assert type(read) is type(out) and same_bits(read, out), eqn.prim


def check_writes_index(eqn, values, out):
    index = eqn.prim.traits.written_index(eqn.params)
    if index is None:
        return
    (v,) = values
    assert _basic(index), (eqn.prim, index)
    written = np.zeros(np.shape(out), np.asarray(out).dtype)
    written[index] = v
    assert type(out) is np.ndarray and same_bits(written, out), eqn.prim
    picked = np.arange(np.size(out)).reshape(np.shape(out))[index]
    assert np.unique(picked).size == picked.size, eqn.prim   # each entry written once


def check_reshapes_to(eqn, values, out):
    (x,) = values
    traits = eqn.prim.traits
    reshaped = np.reshape(x, tuple(traits.reshapes_to(eqn.params)))
    assert traits.shape_only and type(reshaped) is type(out), eqn.prim
    assert same_bits(reshaped, out), eqn.prim


def check_joins_along(eqn, values, out):
    axis = eqn.prim.traits.joins_along(eqn.params)
    assert type(axis) is int, eqn.prim
    assert same_bits(np.concatenate(values, axis=axis), out), eqn.prim


def check_packs_scalars(eqn, values, out):
    dtype = eqn.prim.traits.packs_scalars(eqn.params)
    assert all(np.ndim(v) == 0 for v in values), eqn.prim
    assert same_bits(np.array(values, dtype), out), eqn.prim


def check_matrix_products(eqn, values, outs):
    side = eqn.prim.traits.matrix_products(eqn.params)
    matrix, *vectors = values
    assert np.ndim(matrix) == 2 and len(outs) == len(vectors), eqn.prim
    for v, out in zip(vectors, outs):
        product = matrix @ v if side == "left" else v @ matrix
        assert side in ("left", "right") and same_bits(product, out), (eqn.prim, side)


#: The claims of what an application computes, by trait: ``check(eqn, values, out)``
#: (``matrix_products``: ``outs``, all the results)
COMPUTES = {"reads_index": check_reads_index, "writes_index": check_writes_index,
            "reshapes_to": check_reshapes_to, "joins_along": check_joins_along,
            "packs_scalars": check_packs_scalars}


def check_computes(eqn, values, outs):
    """Check every claim of what ``eqn`` computes; the names of the traits checked."""
    traits = eqn.prim.traits
    if traits.matrix_products is not None:
        check_matrix_products(eqn, values, outs)
        return {"matrix_products"}
    checked = {name for name in COMPUTES if getattr(traits, name) is not None}
    for name in checked:
        (out,) = outs
        COMPUTES[name](eqn, values, out)
    return checked


def allowed_couplings(curvature, n, sizes):
    """The pairs of the Hessian (flat argument entries, ``sizes`` per argument, each ``n``
    entries after broadcasting) that ``curvature`` allows to be nonzero."""
    offsets = np.cumsum([0] + sizes)
    allowed = np.zeros((offsets[-1], offsets[-1]), bool)
    if curvature == "linear":
        return allowed
    same_entry = np.zeros_like(allowed)
    for a in range(len(sizes)):
        for b in range(len(sizes)):
            idx = np.arange(n)
            same_entry[offsets[a] + idx, offsets[b] + idx] = True
    if curvature in ("unary", "elementwise"):
        return same_entry
    if curvature == "bilinear":   # x with y only
        block = np.zeros_like(allowed)
        block[offsets[0]:offsets[1], offsets[1]:offsets[2]] = True
        return same_entry & (block | block.T)
    if curvature == "quotient":   # never x with x
        block = np.ones_like(allowed)
        block[offsets[0]:offsets[1], offsets[0]:offsets[1]] = False
        return same_entry & block
    raise AssertionError(curvature)


def _has_derivative(eqn, full, i):
    """Whether the primitive differentiates in argument ``i`` (an order does not)."""
    def of_one(x):
        return eqn.prim(*full[:i], x, *full[i + 1:], **eqn.params)
    try:
        dk.jvp(of_one, (np.array(full[i]),), (np.ones(np.shape(full[i])),))
    except NoRuleError:
        return False
    return True


def check_curvature(eqn, values, out):
    curvature = eqn.prim.traits.curvature_of(eqn.params)
    if curvature is None or eqn.prim.nondiff or not eqn.prim.traits.elementwise:
        return
    shape = np.shape(out)
    if np.asarray(out).dtype.kind != "f":
        return
    n = math.prod(shape)
    if n == 0:
        return
    full = _broadcast(values, shape)
    floats = [i for i, v in enumerate(values) if np.asarray(v).dtype.kind == "f"
              and _has_derivative(eqn, full, i)]
    if not floats:
        return
    w = np.linspace(0.5, 1.5, n).reshape(shape)

    def scalar(flat):
        args = list(full)
        for k, i in enumerate(floats):
            args[i] = dnp.reshape(flat[k * n:(k + 1) * n], shape)
        return dnp.sum(w * eqn.prim(*args, **eqn.params))

    point = np.concatenate([np.ravel(full[i]) for i in floats])
    with np.errstate(all="ignore"):
        hessian = np.asarray(dk.hessian(scalar)(point))
    if not np.all(np.isfinite(hessian)):
        return   # at a pole or tie: the structure is not visible there
    if curvature in ("bilinear", "quotient") and floats != [0, 1]:
        curvature = "elementwise"   # one argument is an integer: no finer claim to check
    allowed = allowed_couplings(curvature, n, [n] * len(floats))
    assert not np.any((hessian != 0) & ~allowed), (eqn.prim, curvature, hessian)


@pytest.fixture(scope="module")
def applications():
    return list(record_applications(seed=7))


def test_the_records_apply_most_primitives(applications):
    applied = {eqn.prim.name for eqn, _, _ in applications}
    with_traits = {name for name, p in PRIMITIVES.items()
                   if p.traits.elementwise or p.traits.curvature is not None}
    # the records exercise every primitive elsewhere (tests/test_primitives.py); staged
    # first cases reach most of those with traits, enough to check the claims on
    assert len(applied & with_traits) >= 0.8 * len(with_traits), sorted(with_traits - applied)


def test_trait_claims_hold_on_every_staged_application(applications):
    curvature_checked = set()
    computes = set()
    for eqn, values, outs in applications:
        computes |= check_computes(eqn, values, outs)
        traits = eqn.prim.traits
        (out,) = outs if len(outs) == 1 else (None,)
        if out is None:
            continue
        if traits.elementwise:
            check_elementwise(eqn, values, out)
        if traits.out_argument:
            check_out_argument(eqn, values, out)
        if traits.operator is not None:
            check_operator(eqn, values, out)
        if traits.nan_propagating:
            check_nan_propagating(eqn, values, out)
        if traits.shape_only:
            check_shape_only(eqn, values, out)
        key = (eqn.prim.name, tuple(np.shape(v) for v in values))
        if key not in curvature_checked:
            curvature_checked.add(key)
            check_curvature(eqn, values, out)
    assert {"reads_index", "reshapes_to", "joins_along"} <= computes, computes


@settings(max_examples=6, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 5))
def test_elementwise_claims_hold_at_generated_values(seed, case):
    records = [r for r in RECORDS if r.elementwise]   # shape cases with broadcasting
    for eqn, values, outs in record_applications(seed, records, case):
        if eqn.prim.traits.elementwise and len(outs) == 1:
            check_elementwise(eqn, values, outs[0])


def test_every_registered_primitive_states_its_traits():
    for name, prim in PRIMITIVES.items():
        traits = prim.traits
        assert isinstance(traits, Traits), name
        curvature = traits.curvature
        assert curvature is None or callable(curvature) or curvature in CURVATURES, name
        if isinstance(prim.impl, np.ufunc) and prim.impl.nout == 1 \
                and prim.impl.signature is None:
            assert traits.elementwise and traits.out_argument, name
        if traits.shape_only:
            assert traits.is_identity is not None, name
        if traits.operator is not None:
            assert traits.operator in OPERATORS, name


def test_traits_are_immutable():
    traits = PRIMITIVES["add"].traits
    with pytest.raises(AttributeError, match="immutable"):
        traits.operator = "-"
    assert traits.replace(operator="-").operator == "-" and traits.operator == "+"
    with pytest.raises(ValueError, match="curvature"):
        Traits(curvature="cubic")


def test_a_reshape_only_moves_entries():
    with pytest.raises(ValueError, match="shape_only"):
        Traits(reshapes_to=lambda params: params["shape"])
    assert PRIMITIVES["reshape"].traits.shape_only


def test_the_users_code_is_never_pure():
    traits = Traits(user_function=lambda params: params["call"])
    assert not traits.pure and not traits.must_run   # never merged or folded; may be dropped
    assert not traits.replace(operator=None).pure and Traits().pure


# --- what an application computes, at generated values ---------------------------------------


@st.composite
def indices(draw):
    """``(shape, index, has_array)``: an array shape and an index into it of integers,
    slices, ``None`` and at most one ``...``; with ``has_array``, one integer became an
    index array repeating it (a read that is no basic one, a write that adds)."""
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    used = draw(st.integers(0, len(shape)))
    ellipsis_at = draw(st.none() | st.integers(0, used))
    axes = list(range(used))
    if ellipsis_at is not None:   # the entries after it index the last axes
        axes = axes[:ellipsis_at] + list(range(len(shape) - (used - ellipsis_at), len(shape)))
    index, integers = [], []
    for k, axis in enumerate(axes):
        if k == ellipsis_at:
            index.append(Ellipsis)
        if draw(st.integers(0, 3)) == 0:
            index.append(None)
        n = shape[axis]
        if draw(st.booleans()):
            integers.append(len(index))
            index.append(draw(st.integers(-n, n - 1)))
        else:
            bound = st.none() | st.integers(-n - 2, n + 2)
            step = st.none() | st.integers(-3, 3).filter(bool)
            index.append(slice(draw(bound), draw(bound), draw(step)))
    if ellipsis_at == used:
        index.append(Ellipsis)
    has_array = bool(integers) and draw(st.booleans())
    if has_array:
        k = draw(st.sampled_from(integers))
        index[k] = np.array([index[k], index[k]])
    return shape, tuple(index), has_array


@settings(max_examples=80, deadline=None)
@given(indices())
def test_index_reads_and_writes_are_numpys_at_generated_indices(case):
    """``x[index]`` and its cotangent, staged: the read claims a basic index exactly when
    there is no index array, and gives NumPy's ``x[index]``; the cotangent's write into
    zeros claims one likewise, and gives NumPy's sum of the values at the index."""
    shape, index, has_array = case
    x = np.arange(1.0, math.prod(shape) + 1).reshape(shape)
    read = x[index]
    ct = np.linspace(-1.0, 2.0, read.size).reshape(read.shape)
    pulled_back = np.zeros(shape)
    np.add.at(pulled_back, index, ct)

    def read_and_pull_back(x, ct):
        return dk.vjp(lambda y: y[index], x)[1](ct)

    seen = set()
    for eqn, values, outs in staged_applications(read_and_pull_back, [x, ct]):
        check_computes(eqn, values, outs)
        traits = eqn.prim.traits
        if traits.reads_index is not None:
            seen.add("read")
            assert (traits.read_index(eqn.params) is None) == has_array
            assert same_bits(outs[0], read)
        if traits.writes_index is not None:
            seen.add("write")
            assert (traits.written_index(eqn.params) is None) == has_array
            assert same_bits(outs[0], pulled_back)
    assert seen == {"read", "write"}


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 70), st.sampled_from([1, 3, 6, 4096]), st.integers(1, 3),
       st.sampled_from(["left", "right"]), st.booleans(), st.integers(0, 2**32 - 1))
def test_merged_products_are_the_products_at_generated_matrices(rows, cols, count, side,
                                                                fortran, seed):
    """jit's merged matrix-vector products (blocks of rows for a wide C-contiguous matrix,
    the plain products otherwise) are ``matrix @ v`` or ``v @ matrix``. Small integers:
    every sum is exact, so the bits cannot depend on the order of the additions."""
    rng = np.random.default_rng(seed)
    matrix = rng.integers(-4, 5, (rows, cols)).astype(float)
    if fortran:
        matrix = np.asfortranarray(matrix)
    vectors = [rng.integers(-4, 5, cols if side == "left" else rows).astype(float)
               for _ in range(count)]
    params = {"side": side}
    outs = SHARED_MATVECS.impl(matrix, *vectors, **params)
    eqn = types.SimpleNamespace(prim=SHARED_MATVECS, params=params)
    assert check_computes(eqn, [matrix, *vectors], outs) == {"matrix_products"}


def replayed_applications(graph, args):
    """``(equation, argument values, output values)`` for each equation of the program
    jit's plain replay runs (after its rewrites: stacks, entry reads ...), evaluated by the
    primitives' implementations at ``args``."""
    env = dict(enumerate(tree_flatten((args, {}))[0]))
    for eqn in graph.replay_program.equations:
        values = [env[r] if type(r) is int else r.value for r in eqn.inputs]
        out = eqn.prim.impl(*values, **eqn.params)
        outs = tuple(out) if eqn.prim.multiple_results else (out,)
        env.update(zip(eqn.outs, outs))
        yield eqn, values, outs


def _lotka_volterra(t, y, p):
    return dnp.stack([p[0] * y[0] - p[1] * y[0] * y[1], -p[2] * y[1] + p[3] * y[0] * y[1]])


def _field_and_products(t, y, w, p):
    """The field and two vector-Jacobian products (an adjoint system's right-hand side)."""
    out, pull = dk.vjp(lambda y, p: _lotka_volterra(t, y, p), y, p)
    cts = [pull(w[2 * j:2 * j + 2]) for j in range(2)]
    return dnp.concatenate([out] + [-c[0] for c in cts] + [-dnp.ravel(c[1]) for c in cts])


def _pulled_back_entries(y, w):
    out, pull = dk.vjp(lambda y: dnp.stack([y[0], y[1] * 2.0, y[0] * y[1]]), y)
    return pull(w)


def _long_pieces(a, c):
    return dnp.concatenate([a, -c]), dnp.reshape(c, (3, 4)), dnp.reshape(c[2:3], ())


def test_claims_hold_on_the_programs_jit_rewrites():
    y, p = np.array([1.0, 2.0]), np.array([1.5, 1.0, 3.0, 1.0])
    w = np.array([0.5, -1.0, 2.0, 1.5])
    a, c = np.array([1.0, -0.0]), np.linspace(0.0, 1.0, 12)
    cases = [(_lotka_volterra, (0.5, y, p)), (_field_and_products, (0.5, y, w, p)),
             (_pulled_back_entries, (y, w[:3])), (_long_pieces, (a, c))]
    checked, names = set(), set()
    for fun, args in cases:
        for eqn, values, outs in replayed_applications(make_graph(fun)(*args), args):
            checked |= check_computes(eqn, values, outs)
            names.add(eqn.prim.name)
    # jit's stand-ins (an entry read, a vector of numbers) claim what they compute, and
    # each claim was checked on some application
    assert {"element", "stack"} <= names and set(COMPUTES) <= checked, (names, checked)


# --- a primitive made by the builder gets the fast routes --------------------------------

# np.arcsinh under another name: a new primitive, as a contributor would add one
softish_p, softish = elementwise(
    "test_traits_arcsinh", np.arcsinh, {"x": lambda x: 1 / dnp.sqrt(x * x + 1)},
    doc="arcsinh, as a new primitive", module="tests")
# not one of diffkit's: out of the registry, which the completeness tests read (a record and
# an edge sample for every registered primitive)
PRIMITIVES.pop(softish_p.name)


def test_a_builder_primitive_takes_the_forward_hessian_route():
    def fun(x):
        return dnp.sum(softish(x[1:] * x[:-1])) + dnp.sum(softish(x) ** 2)

    x = np.random.default_rng(1).uniform(-1, 1, 7)
    forward = interaction_pattern(fun, x)
    assert forward is not None
    gradient = sparsity_flat(grad(fun), x)[1]
    gradient = (gradient + gradient.T).toarray().astype(bool)
    np.testing.assert_array_equal(forward.toarray(), gradient)
    dense = np.asarray(dk.hessian(fun)(x)) != 0
    assert not (dense & ~forward.toarray()).any()


def test_a_builder_primitive_is_fused_by_jit():
    def fun(x):
        return dnp.sum(softish(x) * dnp.exp(-x * x) + softish(x * 0.5))

    x = np.linspace(-3, 3, 1 << 17)
    jitted = dk.jit(dk.grad(fun))
    jitted(x)
    replayed = jitted(x)
    (graph,) = jitted.graphs()
    fused = [e for e in graph.replay_program.equations if e.prim.name == "elementwise_blocks"]
    staged = [e.prim.name for e in graph.program.equations]
    left = [e.prim.name for e in graph.replay_program.equations]
    # the new primitive's applications went into the loop over blocks
    assert fused and "test_traits_arcsinh" in staged and "test_traits_arcsinh" not in left
    np.testing.assert_array_equal(replayed, dk.grad(fun)(x))


def test_a_primitive_that_draws_is_never_merged_or_replayed_as_a_value():
    counter = itertools.count()
    draw_p = Primitive("test_traits_draw", lambda x: x + float(next(counter)), nondiff=True,
                       batch=lambda size, values, axes: (draw_p(values[0]), axes[0]),
                       traits=Traits(elementwise=True, draws_randomness=True),
                       register=False)
    assert not draw_p.traits.pure and PRIMITIVES["add"].traits.pure

    def two_draws(x):
        return draw_p(x) + draw_p(x)   # equal applications: two draws, not one used twice

    jitted = dk.jit(two_draws)
    # call k draws 2k and 2k + 1 (a first call traces, a second compiles, then replays)
    for k in range(4):
        np.testing.assert_array_equal(jitted(np.zeros(2)), np.full(2, 4.0 * k + 1))
