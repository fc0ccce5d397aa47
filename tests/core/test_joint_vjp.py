"""Joint VJP rules (``JointVjp``): one rule gives the cotangents of every argument being
differentiated, called once per application by the reverse engine; indexing gives
per-argument rules for code that reads them. A function with a user-defined VJP (the
custom call) uses one, so its backward rule runs once per sweep, also when one pullback is
called from several threads at once."""

import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.core.primitive import JointVjp, Primitive
from diffkit.core.zeros import is_zero
from diffkit.errors import ShapeMismatchError

CALLS = threading.local()     # the wanted flags of each call of the joint rule, per thread


def _calls():
    if not hasattr(CALLS, "seen"):
        CALLS.seen = []
    return CALLS.seen


def _fma_jvp(primals, tangents):
    x, y, z = primals
    parts = [t for t in (None if is_zero(tangents[0]) else tangents[0] * y,
                         None if is_zero(tangents[1]) else x * tangents[1],
                         None if is_zero(tangents[2]) else tangents[2]) if t is not None]
    total = parts[0]
    for part in parts[1:]:
        total = total + part
    return fma_p(x, y, z), total


def _fma_vjp(ct, out, x, y, z, *, wanted):
    _calls().append(wanted)
    return (ct * y if wanted[0] else None, ct * x if wanted[1] else None,
            ct if wanted[2] else None)


# x * y + z (elementwise, arrays of one shape): its rules are diffkit operations, so they
# differentiate again
fma_p = Primitive("test_fma", lambda x, y, z: x * y + z, _fma_jvp, JointVjp(_fma_vjp),
                  lambda size, values, axes: (fma_p(*[v if a == 0 else dnp.broadcast_to(
                      v, (size,) + np.shape(v)) for v, a in zip(values, axes)]), 0),
                  register=False)


def fma_sum(x, y, z):
    return dnp.sum(fma_p(x, y, z) ** 2)


X, Y, Z = np.array([0.5, -1.5, 2.0]), np.array([1.25, 0.75, -0.5]), np.array([0.1, 0.2, 0.3])


def test_the_joint_rule_runs_once_for_every_argument():
    _calls().clear()
    gx, gy, gz = dk.grad(fma_sum, argnums=(0, 1, 2))(X, Y, Z)
    c = 2 * (X * Y + Z)
    np.testing.assert_array_equal(gx, c * Y)
    np.testing.assert_array_equal(gy, c * X)
    np.testing.assert_array_equal(gz, c)
    assert _calls() == [(True, True, True)]


@settings(max_examples=40, deadline=None)
@given(st.sets(st.integers(0, 2), min_size=1),
       st.lists(st.floats(-3, 3), min_size=6, max_size=6))
def test_only_the_traced_arguments_are_wanted(argnums, values):
    argnums = tuple(sorted(argnums))
    args = [np.array(values[:2]), np.array(values[2:4]), np.array(values[4:])]
    _calls().clear()
    grads = dk.grad(fma_sum, argnums=argnums)(*args)
    x, y, z = args
    c = 2 * (x * y + z)
    expected = {0: c * y, 1: c * x, 2: c}
    for i, g in zip(argnums, grads):
        np.testing.assert_array_equal(g, expected[i])
    assert _calls() == [tuple(i in argnums for i in range(3))]


def test_indexing_gives_per_argument_rules():
    rules = fma_p.vjp
    assert isinstance(rules, tuple)       # read like any primitive's tuple of rules
    ct = np.array([1.0, 2.0, -1.0])
    out = X * Y + Z
    _calls().clear()
    np.testing.assert_array_equal(rules[0](ct, out, X, Y, Z), ct * Y)
    np.testing.assert_array_equal(rules[1](ct, out, X, Y, Z), ct * X)
    np.testing.assert_array_equal(rules[2](ct, out, X, Y, Z), ct)
    assert _calls() == [(True, False, False), (False, True, False), (False, False, True)]
    each = iter(rules)      # endless, like EachArgument: zip it with the arguments
    first, second = next(each), next(each)
    np.testing.assert_array_equal(first(ct, out, X, Y, Z), ct * Y)
    np.testing.assert_array_equal(second(ct, out, X, Y, Z), ct * X)


def test_a_joint_rule_differentiates_and_batches_again():
    # d^2/dx^2 sum((x y + z)^2) = 2 diag(y^2); d^2/dx dy = 2 diag(2 x y + z)
    np.testing.assert_allclose(dk.hessian(fma_sum)(X, Y, Z), 2 * np.diag(Y ** 2), rtol=1e-15)
    mixed = dk.jacrev(dk.grad(fma_sum, argnums=0), argnums=1)(X, Y, Z)
    np.testing.assert_allclose(mixed, 2 * np.diag(2 * X * Y + Z), rtol=1e-15)
    np.testing.assert_allclose(dk.jacfwd(dk.grad(fma_sum, argnums=0), argnums=1)(X, Y, Z),
                               mixed, rtol=1e-15)
    out, pull = dk.vjp(lambda x, y: fma_p(x, y, Z), X, Y)
    cts = np.random.default_rng(0).normal(size=(4, 3))
    batched = dk.vmap(pull)(cts)
    for k, ct in enumerate(cts):
        for b, single in zip(batched, pull(ct)):
            np.testing.assert_array_equal(b[k], single)


def test_a_joint_rule_must_give_one_cotangent_per_argument():
    short = Primitive("test_short", lambda x, y: x * y,
                      vjp=JointVjp(lambda ct, out, x, y, *, wanted: (ct * y,)), register=False)
    with pytest.raises(ShapeMismatchError, match="test_short.*1 cotangents for 2 arguments"):
        dk.grad(lambda x: dnp.sum(short(x, Y)))(X)


def test_an_application_no_cotangent_reaches_runs_no_rule():
    def unused(x, y):
        fma_p(x, y, Z)          # recorded, but the output does not depend on it
        return dnp.sum(x * y)

    _calls().clear()
    gx, gy = dk.grad(unused, argnums=(0, 1))(X, Y)
    np.testing.assert_array_equal(gx, Y)
    np.testing.assert_array_equal(gy, X)
    assert _calls() == []


# --- the custom call: a user's backward rule, once per sweep, also from threads at once ----


@pytest.fixture
def frequent_switches():
    """Threads switch every few microseconds (a shared state's race shows up)."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


def test_one_custom_pullback_called_from_several_threads_at_once(frequent_switches):
    calls = []

    @dk.custom_vjp
    def f(x, y, z):
        return x * y * z

    def f_fwd(x, y, z):
        return f(x, y, z), (x, y, z)

    def f_bwd(residuals, ct):
        calls.append(1)
        time.sleep(0.01)      # give the other threads time to run their sweeps meanwhile
        x, y, z = residuals
        return ct * y * z, ct * x * z, ct * x * y

    f.defvjp(f_fwd, f_bwd)
    _, pull = dk.vjp(f, X, Y, Z)
    cts = [np.full(3, float(k + 1)) for k in range(8)]
    start = threading.Barrier(len(cts))

    def run(ct):
        start.wait()
        return pull(ct)

    calls.clear()
    with ThreadPoolExecutor(max_workers=len(cts)) as executor:
        results = list(executor.map(run, cts))
    assert len(calls) == len(cts)        # one run of the rule per sweep, none repeated
    for ct, (gx, gy, gz) in zip(cts, results):
        np.testing.assert_array_equal(gx, ct * Y * Z)
        np.testing.assert_array_equal(gy, ct * X * Z)
        np.testing.assert_array_equal(gz, ct * X * Y)
