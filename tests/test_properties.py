"""Property tests over random programs: the engines are each other's oracle.

For compositions of primitives drawn by ``diffkit.testing.strategies.programs`` (elementwise
maps with broadcasting, reductions, reshapes, transposes, indexing, joins, matmul and
einsum) and random input shapes:

- the Jacobian assembled from unit-vector VJPs equals the one from unit-vector JVPs
  (rtol 1e-9), and ``jacfwd == jacrev == jacobian``;
- derivatives match finite differences to order 2 in both modes (the programs are smooth);
- ``vmap`` of a program equals a loop over examples.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diffkit.testing import assert_jacobians_agree, check_grads, check_vmap
from diffkit.testing.strategies import PROGRAM_OPS, Program, programs

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                      HealthCheck.data_too_large])


@settings(max_examples=50, **SETTINGS)
@given(programs())
def test_vjp_and_jvp_jacobians_agree(case):
    """The mission's property: unit-vector VJPs and JVPs give the same Jacobian (rtol 1e-9),
    and jacfwd, jacrev and jacobian give it too."""
    program, args = case
    assert_jacobians_agree(program, *args, rtol=1e-9)


@settings(max_examples=25, **SETTINGS)
@given(programs(max_outputs=3))
def test_jacobians_agree_for_several_outputs(case):
    """The same with programs returning a tuple of values (Jacobians nest per output)."""
    program, args = case
    assert_jacobians_agree(program, *args, rtol=1e-9)


@settings(max_examples=25, **SETTINGS)
@given(programs(max_steps=4))
def test_programs_match_finite_differences(case):
    program, args = case
    check_grads(program, args, order=2)


@settings(max_examples=25, **SETTINGS)
@given(programs(max_steps=4), st.integers(0, 2**32 - 1))
def test_vmap_of_programs_matches_loop(case, seed):
    program, args = case
    rng = np.random.default_rng(seed)
    batched = tuple(rng.uniform(-2.0, 2.0, (3,) + np.shape(x)) for x in args)
    check_vmap(program, batched)


def test_program_repr_is_runnable_source():
    """A printed failing example can be pasted and run: repr(program) defines it."""
    from diffkit.testing.strategies import Step

    program = Program([(2, 3), (3,)], [
        Step("sin", (0,), (), (2, 3)),
        Step("multiply", (2, 1), (), (2, 3)),
        Step("sum", (3,), (("axis", 1), ("keepdims", False)), (2,)),
        Step("getitem", (4,), (("index", (slice(None, 1),)),), (1,)),
    ], 5)
    namespace = {}
    exec("import diffkit.numpy as dnp\n" + repr(program), namespace)
    x, y = np.arange(6.0).reshape(2, 3), np.array([1.0, -2.0, 0.5])
    assert np.allclose(namespace["program"](x, y), program(x, y))
    assert np.allclose(program(x, y), (np.sin(x) * y).sum(axis=1)[:1])
    assert set(step.op for step in program.steps) <= set(PROGRAM_OPS)


def test_diffkit_testing_imports_without_hypothesis():
    """Hypothesis is an optional dependency: only diffkit.testing.strategies needs it."""
    code = ("import sys; sys.modules['hypothesis'] = None\n"
            "import diffkit.testing as t\n"
            "assert callable(t.check_grads) and callable(t.assert_jacobians_agree)\n"
            "try:\n    import diffkit.testing.strategies\nexcept ImportError:\n    pass\n"
            "else:\n    raise SystemExit('strategies imported without hypothesis')\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
