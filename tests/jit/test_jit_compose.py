"""``jit`` composes with the transformations in any order, with functions that have
custom rules (``custom_jvp``, ``custom_vjp``, ``checkpoint``) and with itself."""

import numpy as np

import diffkit as dk
import diffkit.numpy as dnp

X = np.array([0.3, -1.2, 2.0])


def chain(x):
    return dnp.sum(dnp.tanh(dnp.sin(x) * x) ** 2)


def chain_grad(x):
    """d/dx sum(tanh(x sin x)^2), the closed form."""
    u = x * np.sin(x)
    t = np.tanh(u)
    return 2 * t * (1 - t ** 2) * (np.sin(x) + x * np.cos(x))


def test_transformations_of_jit_reuse_the_graph_without_python():
    calls = []

    def f(x):
        calls.append(1)
        return chain(x)

    jitted = dk.jit(f)
    np.testing.assert_allclose(jitted(X), chain(X), rtol=1e-12)
    np.testing.assert_allclose(dk.grad(jitted)(X), chain_grad(X), rtol=1e-12)
    np.testing.assert_allclose(dk.jacfwd(jitted)(X), chain_grad(X), rtol=1e-12)
    np.testing.assert_allclose(dk.hessian(jitted)(X), dk.hessian(chain)(X), rtol=1e-12)
    batch = np.stack([X, 2 * X])
    np.testing.assert_allclose(dk.vmap(jitted)(batch), [chain(X), chain(2 * X)], rtol=1e-12)
    np.testing.assert_allclose(dk.vmap(dk.grad(jitted))(batch),
                               [chain_grad(X), chain_grad(2 * X)], rtol=1e-12)
    assert len(calls) == 1   # every transformation interpreted the recorded graph


def test_jit_of_transformations():
    np.testing.assert_allclose(dk.jit(dk.grad(chain))(X), chain_grad(X), rtol=1e-12)
    np.testing.assert_allclose(dk.jit(dk.hessian(chain))(X), dk.hessian(chain)(X),
                               rtol=1e-12)
    batch = np.stack([X, -X, 0.5 * X])
    per_example = dk.jit(dk.vmap(dk.grad(chain)))
    for b in (batch, 2 * batch):
        np.testing.assert_allclose(per_example(b), [chain_grad(x) for x in b], rtol=1e-12)
    assert per_example.cache_info().hits == 1


def test_jit_inside_jit():
    inner = dk.jit(lambda x: dnp.sin(x) * x)
    outer = dk.jit(lambda x: dnp.sum(dnp.tanh(inner(x)) ** 2))
    for x in (X, 2 * X):
        np.testing.assert_allclose(outer(x), chain(x), rtol=1e-12)
        np.testing.assert_allclose(dk.grad(outer)(x), chain_grad(x), rtol=1e-12)
    assert outer.cache_info().traces == 1


def test_jit_inside_jit_with_a_guard_in_the_inner_function():
    inner = dk.jit(lambda x: x * 2 if x.sum() > 0 else x * 3)
    outer = dk.jit(lambda x: inner(x) + 1)
    np.testing.assert_array_equal(outer(np.ones(2)), [3.0, 3.0])
    np.testing.assert_array_equal(outer(-np.ones(2)), [-2.0, -2.0])   # the outer guard too
    np.testing.assert_array_equal(outer(np.ones(2)), [3.0, 3.0])
    assert outer.cache_info().traces == 2


@dk.custom_jvp
def softplus(x):
    return dnp.log1p(dnp.exp(x))


@softplus.defjvp
def _softplus_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return softplus(x), t * 0.5   # a deliberately wrong rule: shows the rule is used


@dk.custom_vjp
def clip_gradient(x):
    return x * 1.0


def _clip_fwd(x):
    return x * 1.0, None


def _clip_bwd(_, ct):
    return (dnp.clip(ct, -0.1, 0.1),)


clip_gradient.defvjp(_clip_fwd, _clip_bwd)


def test_custom_jvp_rule_survives_jit_in_both_orders():
    f = lambda x: dnp.sum(softplus(x))   # noqa: E731
    np.testing.assert_allclose(dk.jit(f)(X), np.sum(np.log1p(np.exp(X))), rtol=1e-12)
    for g in (dk.grad(dk.jit(f)), dk.jit(dk.grad(f))):
        np.testing.assert_allclose(g(X), np.full(3, 0.5), rtol=1e-12)
        np.testing.assert_allclose(g(2 * X), np.full(3, 0.5), rtol=1e-12)
    np.testing.assert_allclose(dk.jacfwd(dk.jit(f))(X), np.full(3, 0.5), rtol=1e-12)
    np.testing.assert_allclose(dk.vmap(dk.grad(dk.jit(f)))(np.stack([X, X])),
                               np.full((2, 3), 0.5), rtol=1e-12)


def test_custom_vjp_rule_survives_jit_in_both_orders():
    f = lambda x: dnp.sum(clip_gradient(x) * 3.0)   # noqa: E731
    for g in (dk.grad(dk.jit(f)), dk.jit(dk.grad(f))):
        np.testing.assert_allclose(g(X), np.full(3, 0.1), rtol=1e-12)
        np.testing.assert_allclose(g(X + 1), np.full(3, 0.1), rtol=1e-12)


def test_checkpoint_under_jit():
    f = lambda x: dnp.sum(dk.checkpoint(lambda y: dnp.tanh(dnp.sin(y) * y) ** 2)(x))  # noqa
    for g in (dk.grad(dk.jit(f)), dk.jit(dk.grad(f))):
        np.testing.assert_allclose(g(X), chain_grad(X), rtol=1e-12)
        np.testing.assert_allclose(g(2 * X), chain_grad(2 * X), rtol=1e-12)
    graph = dk.make_graph(f)(X)
    assert "custom_call[" in str(graph)


def test_jitfwd_equals_jitrev_bit_for_bit_at_a_singular_point():
    f = lambda x: dnp.sqrt(x) * dnp.log(x)   # noqa: E731
    x = np.array([0.0, 1.0, 4.0])
    forward, reverse = dk.jit(dk.jacfwd(f)), dk.jit(dk.jacrev(f))
    for _ in range(2):
        np.testing.assert_array_equal(forward(x), reverse(x))
        np.testing.assert_array_equal(forward(x), dk.jacfwd(f)(x))


def test_float32_stays_float32():
    x = X.astype(np.float32)
    jitted = dk.jit(dk.grad(lambda x: dnp.sum(dnp.sin(x) * 2.0)))
    for _ in range(2):
        out = jitted(x)
        assert out.dtype == np.float32
        np.testing.assert_allclose(out, 2 * np.cos(x), rtol=1e-6)


def test_jit_closing_over_a_value_traced_by_an_enclosing_transformation():
    """A graph whose constants are traced values of an enclosing transformation is valid
    for one call only: it is not kept, so a later call never replays a stale tracer."""
    closed = []
    jitted = dk.jit(lambda y: dnp.sin(y) * closed[0])

    def outer(x):
        closed[:] = [x]
        return dnp.sum(jitted(x))

    for x in (X, 2 * X):
        np.testing.assert_allclose(dk.grad(outer)(x), np.sin(x) + x * np.cos(x), rtol=1e-12)
    assert jitted.cache_info().traces == 2 and jitted.cache_info().hits == 0
