"""Random programs (``diffkit.testing.strategies.programs``) give the same value, gradient,
Jacobians, Hessian and batched value under ``jit`` as eagerly (rtol 1e-12), with ``jit``
outside the transformation (the derivative is staged) and inside it (the transformation
interprets the replayed graph). Each case is called on two argument sets of the same
shapes, so the second call replays the graph the first one recorded."""

import numpy as np
from hypothesis import HealthCheck, given, settings

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.testing.strategies import programs

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                      HealthCheck.data_too_large])
RTOL = 1e-12


def _close(actual, expected):
    leaves_a, tree_a = dk.tree_util.tree_flatten(actual)
    leaves_e, tree_e = dk.tree_util.tree_flatten(expected)
    assert tree_a == tree_e
    for a, e in zip(leaves_a, leaves_e):
        assert np.shape(a) == np.shape(e) and np.asarray(a).dtype == np.asarray(e).dtype
        np.testing.assert_allclose(a, e, rtol=RTOL, atol=1e-300)


def _transformations(program):
    n = program.num_inputs
    argnums = tuple(range(n))

    def scalar(*args):
        return dnp.sum(dnp.sin(program(*args)))

    return {
        "value": (program, lambda f: f),
        "grad": (scalar, lambda f: dk.grad(f, argnums)),
        "jacfwd": (program, lambda f: dk.jacfwd(f, argnums)),
        "jacrev": (program, lambda f: dk.jacrev(f, argnums)),
        "hessian": (scalar, lambda f: dk.hessian(f, 0)),
        "vmap": (program, lambda f: dk.vmap(f)),
    }


def _argument_sets(name, args):
    first = tuple(args)
    second = tuple(0.5 * x + 0.25 for x in args)
    if name == "vmap":
        return [tuple(np.stack([x, -x, 0.5 * x]) for x in a) for a in (first, second)]
    return [first, second]


@settings(max_examples=30, **SETTINGS)
@given(programs(max_steps=6))
def test_jit_matches_eager_outside_and_inside_transformations(case):
    program, args = case
    for name, (fun, transform) in _transformations(program).items():
        outside = dk.jit(transform(fun))
        inside_jit = dk.jit(fun)
        inside = transform(inside_jit)
        for arg_set in _argument_sets(name, args):
            expected = transform(fun)(*arg_set)
            _close(outside(*arg_set), expected)
            _close(inside(*arg_set), expected)
        # the second argument set replayed the recorded graphs
        assert outside.cache_info().traces == 1 and outside.cache_info().hits == 1, name
        assert inside_jit.cache_info().traces == 1, name
        assert inside_jit.cache_info().hits >= 1, name


@settings(max_examples=15, **SETTINGS)
@given(programs(max_steps=5, max_outputs=3))
def test_jit_of_programs_with_several_outputs(case):
    program, args = case
    jitted = dk.jit(program)
    for arg_set in _argument_sets("value", args):
        _close(jitted(*arg_set), program(*arg_set))
        _close(dk.jacrev(jitted)(*arg_set), dk.jacrev(program)(*arg_set))
