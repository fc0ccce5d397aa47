"""One generic checker over every function of diffkit.numpy, driven by the op records of
tests/records/ops/.

For each record and shape case, with values drawn by Hypothesis from the record's domains:

- derivatives: ``check_grads`` to order 2 in both modes (forward and reverse against central
  finite differences and against each other, recursing on the derivative functions), or,
  for functions without a derivative, zero tangents and cotangents;
- Jacobians: unit-vector VJPs == unit-vector JVPs == ``jacfwd`` == ``jacrev`` == ``jacobian``;
- batching: ``vmap`` equals a loop over slices, for batch axes first, second and last and
  mixes with unmapped (``None``) arguments; a primitive that falls back to the batching
  loop fails (``PerformanceWarning`` is an error here).

Then completeness: every registered primitive has all its rules (or is marked ``nondiff``)
and is exercised by at least one record.
"""

from __future__ import annotations

import contextlib
import importlib
import pkgutil

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from records import RECORDS, case_id, cases

import diffkit as dk
from diffkit.core.primitive import PRIMITIVES
from diffkit.testing import assert_jacobians_agree, check_grads, check_vmap
from diffkit.testing import strategies as dks

BATCH = 5  # no record uses an axis of this size

CASES = list(cases())
IDS = [case_id(r, s) for r, s in CASES]
ELEMENTWISE = [r for r in RECORDS if r.elementwise]

no_fallback = pytest.mark.filterwarnings("error::diffkit.errors.PerformanceWarning")


def _settings(examples):
    return settings(max_examples=examples, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def draw_args(data, record, shapes):
    """One array per argument from the record's domains, entry by entry from Hypothesis."""
    return tuple(data.draw(record.domain(i).strategy(shape), label=f"argument {i}")
                 for i, shape in enumerate(shapes))


def batched_args(seed, record, shapes, batch_axes):
    """One array per argument from the record's domains with an axis of size BATCH inserted
    at ``batch_axes[i]`` in each mapped argument. Values come from a generator seeded by
    Hypothesis: batched arrays are large, and batching is insensitive to values."""
    rng = np.random.default_rng(seed)
    args = []
    for i, (shape, axis) in enumerate(zip(shapes, batch_axes)):
        if axis is not None:
            position = axis if axis >= 0 else len(shape) + 1 + axis
            shape = shape[:position] + (BATCH,) + shape[position:]
        args.append(record.domain(i).sample(shape, rng))
    return tuple(args)


def _is_float(x):
    return np.asarray(x).dtype.kind == "f"


def _float_outputs(record, shapes):
    """Whether the record has a floating-point output (evaluated once on sample values);
    True when it raises, so that the error shows up in the test."""
    rng = np.random.default_rng(0)
    try:
        out = record.fun(*[record.domain(i).sample(s, rng) for i, s in enumerate(shapes)])
    except Exception:
        return True
    return any(_is_float(o) for o in dk.tree_util.tree_leaves(out))


JACOBIAN_CASES = [(r, s) for r, s in CASES if _float_outputs(r, s)]


def assert_zero_derivative(fun, args):
    """The jvp along a random direction and the vjp of a random cotangent are exactly zero,
    with the shapes of the outputs and of the floating-point arguments."""
    rng = np.random.default_rng(1)
    floats = [i for i, x in enumerate(args) if _is_float(x)]

    def of_floats(*xs):
        full = list(args)
        for i, x in zip(floats, xs):
            full[i] = x
        return fun(*full)

    xs = tuple(args[i] for i in floats)
    tangents = tuple(rng.normal(size=np.shape(x)).astype(x.dtype) for x in xs)
    out, tangent_out = dk.jvp(of_floats, xs, tangents)
    for o, t in zip(dk.tree_util.tree_leaves(out), dk.tree_util.tree_leaves(tangent_out)):
        assert np.shape(t) == np.shape(o), f"tangent shape {np.shape(t)} for output {np.shape(o)}"
        assert not np.any(t), f"the jvp of a function without derivative is {t}, not zero"
    out, pullback = dk.vjp(of_floats, *xs)
    cotangent = dk.tree_util.tree_map(
        lambda o: rng.normal(size=np.shape(o)).astype(
            o.dtype if _is_float(o) else np.float64), out)
    for x, ct in zip(xs, pullback(cotangent)):
        assert np.shape(ct) == np.shape(x) and ct.dtype == x.dtype, \
            f"cotangent {np.shape(ct)} {ct.dtype} for argument {np.shape(x)} {x.dtype}"
        assert not np.any(ct), f"the vjp of a function without derivative is {ct}, not zero"


def axis_configs(shapes):
    """in_axes to try: all first, all last, all second, each argument unmapped in turn,
    only the first mapped, and an alternating mix."""
    n = len(shapes)
    configs = [(0,) * n, (-1,) * n, tuple(1 if len(s) >= 1 else 0 for s in shapes)]
    if n > 1:
        configs += [tuple(None if j == i else 0 for j in range(n)) for i in range(n)]
        configs.append((0,) + (None,) * (n - 1))
        configs.append(tuple(-1 if j % 2 else 1 if len(s) >= 1 else 0
                             for j, s in enumerate(shapes)))
    return list(dict.fromkeys(configs))


# --- the generic checker -------------------------------------------------------------------


@pytest.mark.parametrize(("record", "shapes"), CASES, ids=IDS)
@_settings(5)
@given(data=st.data())
def test_derivatives(record, shapes, data):
    """Both modes against finite differences and each other, to order 2 (or exactly zero)."""
    args = draw_args(data, record, shapes)
    if record.zero_derivative:
        assert_zero_derivative(record.fun, args)
    else:
        check_grads(record.fun, args, order=record.order)


@no_fallback
@pytest.mark.parametrize(("record", "shapes"), JACOBIAN_CASES,
                         ids=[case_id(r, s) for r, s in JACOBIAN_CASES])
@_settings(3)
@given(data=st.data())
def test_jacobians_agree(record, shapes, data):
    """Unit-vector VJPs == unit-vector JVPs == jacfwd == jacrev == jacobian."""
    assert_jacobians_agree(record.fun, *draw_args(data, record, shapes))


@no_fallback
@pytest.mark.parametrize(("record", "shapes"), CASES, ids=IDS)
@_settings(2)
@given(seed=st.integers(0, 2**32 - 1))
def test_vmap_matches_loop(record, shapes, seed):
    """vmap equals a loop over slices, for every batch-axis placement in axis_configs."""
    for in_axes in axis_configs(shapes):
        check_vmap(record.fun, batched_args(seed, record, shapes, in_axes), in_axes=in_axes)


@no_fallback
@pytest.mark.parametrize("record", ELEMENTWISE, ids=[r.name for r in ELEMENTWISE])
@_settings(5)
@given(data=st.data())
def test_elementwise_with_drawn_shapes(record, data):
    """Elementwise functions with shapes drawn by Hypothesis (broadcasting included)."""
    if record.nargs == 1:
        shapes = (data.draw(dks.shapes(max_dims=3, max_side=4), label="shape"),)
    else:
        shapes = data.draw(dks.broadcastable_shapes(record.nargs, max_side=4), label="shapes")
    args = draw_args(data, record, shapes)
    if record.zero_derivative:
        assert_zero_derivative(record.fun, args)
    else:
        check_grads(record.fun, args, order=1)
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    check_vmap(record.fun, batched_args(seed, record, shapes, (0,) * len(shapes)))


# --- completeness --------------------------------------------------------------------------


@contextlib.contextmanager
def primitives_reached():
    """A set that collects the names of the primitives whose implementation runs inside the
    block (directly or through a rule)."""
    reached = set()
    originals = {name: prim.impl for name, prim in PRIMITIVES.items()}

    def counting(name, impl):
        def impl_and_count(*args, **params):
            reached.add(name)
            return impl(*args, **params)
        return impl_and_count

    try:
        for name, prim in PRIMITIVES.items():
            prim.impl = counting(name, prim.impl)
        yield reached
    finally:
        for name, impl in originals.items():
            PRIMITIVES[name].impl = impl


def _import_all_of_diffkit():
    """Import every module of diffkit, so that every primitive is registered."""
    failed = []
    for module in pkgutil.walk_packages(dk.__path__, "diffkit."):
        if module.name.endswith("__main__"):
            continue
        try:
            importlib.import_module(module.name)
        except Exception as error:  # report, don't hide: a module that fails to import
            failed.append(f"{module.name}: {type(error).__name__}: {error}")
    assert not failed, "modules of diffkit failed to import:\n" + "\n".join(failed)


def test_every_primitive_has_all_rules():
    _import_all_of_diffkit()
    missing = {name: prim.missing_rules() for name, prim in PRIMITIVES.items()
               if prim.missing_rules()}
    assert not missing, f"primitives without some rules (and not marked nondiff): {missing}"


def _exercise(record, shapes, rng):
    """Run the record once in each engine on sample values."""
    args = tuple(record.domain(i).sample(s, rng) for i, s in enumerate(shapes))
    record.fun(*args)
    floats = [i for i, x in enumerate(args) if _is_float(x)]

    def of_floats(*xs):
        full = list(args)
        for i, x in zip(floats, xs):
            full[i] = x
        return record.fun(*full)

    xs = tuple(args[i] for i in floats)
    dk.jvp(of_floats, xs, tuple(np.ones_like(x) for x in xs))
    out, pullback = dk.vjp(of_floats, *xs)
    pullback(dk.tree_util.tree_map(
        lambda o: np.ones(np.shape(o), o.dtype if _is_float(o) else np.float64), out))
    batched = tuple(np.stack([x, x]) for x in args)
    dk.vmap(record.fun)(*batched)


def test_every_primitive_is_exercised_by_a_record():
    """A primitive that no record reaches (directly or through a rule) has no test: add a
    record to its family's module in tests/records/ops/."""
    _import_all_of_diffkit()
    errors = []
    rng = np.random.default_rng(0)
    with primitives_reached() as reached:
        for record, shapes in CASES:
            try:
                _exercise(record, shapes, rng)
            except Exception as error:  # the record's own tests report it
                errors.append(f"{case_id(record, shapes)}: {type(error).__name__}")
    unreached = sorted(set(PRIMITIVES) - reached)
    assert not unreached, (
        f"no record in tests/records/ops/ exercises the primitives {unreached}"
        + (f" (records that raised, possibly hiding coverage: {errors})" if errors else ""))


def test_records_cover_their_own_argument_counts():
    """Every shape case of a record has one shape per argument and one domain per
    argument (or one for all)."""
    for record in RECORDS:
        for shapes in record.shapes:
            assert len(shapes) == record.nargs, record.name
        assert len(record.domains) in (1, record.nargs), record.name
