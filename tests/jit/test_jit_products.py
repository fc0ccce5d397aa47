"""Merging matrix-vector products that share a large matrix (``diffkit.jit.products``):
fewer matrix products in the plain replay, the same values as eager."""

import numpy as np

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.jit import products

ROWS, COLS = 1536, 2048   # 3 * 2**20 entries: the smallest matrix the pass merges on


def matmuls(program):
    names = [e.prim.name for e in program.equations]
    return names.count("matmul"), names.count("shared_matvecs")


def hvp(x, v, A):
    return dk.jvp(dk.grad(lambda x: dnp.sum(dnp.tanh(A @ x))), (x,), (v,))[1]


def test_a_hessian_vector_product_reads_its_matrix_once_forward():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((ROWS, COLS)) / np.sqrt(COLS)
    x, v = rng.standard_normal(COLS), rng.standard_normal(COLS)
    graph = dk.make_graph(hvp)(x, v, A)
    assert matmuls(graph.program) == (3, 0)          # A x, A v, and the tangent's u A
    merged = products.merge(graph.program)
    assert matmuls(merged) == (1, 1)                 # A x and A v are one equation
    assert merged.equations[0].prim.name == "shared_matvecs"
    # and with the elementwise work and u A, one loop over blocks of rows
    assert [e.prim.name for e in graph.replay_program.equations] == ["row_blocks"]
    got = graph(x, v, A)
    np.testing.assert_allclose(got, hvp(x, v, A), rtol=1e-12, atol=1e-14)
    t = np.tanh(A @ x)
    np.testing.assert_allclose(got, A.T @ (-2 * t * (1 - t ** 2) * (A @ v)), rtol=1e-10)
    jitted = dk.jit(hvp)
    for seed in range(3):   # replays with new values, and a matrix in Fortran order
        r = np.random.default_rng(seed + 1)
        x, v = r.standard_normal(COLS), r.standard_normal(COLS)
        for B in (A, np.asfortranarray(A)):
            np.testing.assert_allclose(jitted(x, v, B), hvp(x, v, B), rtol=1e-12, atol=1e-14)
    assert jitted.cache_info().traces == 1


def test_products_on_the_right_of_a_shared_matrix_are_merged():
    def f(x, v, A):
        return dnp.sin(x @ A) + dnp.cos(v @ A)

    rng = np.random.default_rng(1)
    A = rng.standard_normal((COLS, ROWS))
    x, v = rng.standard_normal(COLS), rng.standard_normal(COLS)
    graph = dk.make_graph(f)(x, v, A)
    assert matmuls(graph.replay_program) == (0, 1)
    for B in (A, np.asfortranarray(A)):   # C order: the two products; Fortran: blocks
        np.testing.assert_allclose(graph(x, v, B), f(x, v, B), rtol=1e-12)
        np.testing.assert_allclose(graph(x, v, B), np.sin(x @ B) + np.cos(v @ B), rtol=1e-12)


def test_dependent_or_small_products_are_not_merged():
    rng = np.random.default_rng(2)
    A = rng.standard_normal((COLS, COLS)) / np.sqrt(COLS)
    x = rng.standard_normal(COLS)

    def chained(x, A):
        return A @ dnp.tanh(A @ x)        # the second product reads the first

    graph = dk.make_graph(chained)(x, A)
    assert matmuls(graph.replay_program) == (2, 0)
    np.testing.assert_allclose(graph(x, A), A @ np.tanh(A @ x), rtol=1e-12)

    small = A[:100, :100].copy()
    graph = dk.make_graph(hvp)(x[:100], x[:100], small)
    assert matmuls(graph.replay_program) == (3, 0)


def test_shared_matvecs_equals_the_separate_products():
    rng = np.random.default_rng(3)
    A = rng.standard_normal((301, 77))
    x, v, w = rng.standard_normal(77), rng.standard_normal(77), rng.standard_normal(77)
    left = products.shared_matvecs(A, x, v, w, side="left")
    for got, vec in zip(left, (x, v, w)):
        np.testing.assert_allclose(got, A @ vec, rtol=1e-13)
    u = rng.standard_normal(301)
    for B in (A, np.asfortranarray(A)):
        (got,) = products.shared_matvecs(B, u, side="right")
        np.testing.assert_allclose(got, u @ B, rtol=1e-13)


def test_row_blocks_keep_every_value_and_fall_back_to_one_block():
    def both(x, v, A):   # the gradient and the Hessian-vector product: u0 A and u A
        return dk.jvp(dk.grad(lambda x: dnp.sum(dnp.tanh(A @ x) ** 2)), (x,), (v,))

    rng = np.random.default_rng(5)
    A = rng.standard_normal((ROWS, COLS)) / np.sqrt(COLS)
    x, v = rng.standard_normal(COLS), rng.standard_normal(COLS)
    graph = dk.make_graph(both)(x, v, A)
    names = [e.prim.name for e in graph.replay_program.equations]
    assert "row_blocks" in names
    t = np.tanh(A @ x)
    s = 1 - t ** 2
    gradient = A.T @ (2 * t * s)
    product = A.T @ ((2 * s * s - 4 * t * t * s) * (A @ v))
    for B in (A, np.asfortranarray(A)):
        got = graph(x, v, B)
        expected = both(x, v, B)
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(got[0], gradient, rtol=1e-10, atol=1e-13)
        np.testing.assert_allclose(got[1], product, rtol=1e-10, atol=1e-13)
    jitted = dk.jit(both)
    jitted(x, v, A)
    bad = v.copy()
    bad[3] = np.nan
    with np.errstate(all="ignore"):   # a NaN inside the loop: the check after it retraces
        for g, e in zip(jitted(x, bad, A), both(x, bad, A)):
            np.testing.assert_array_equal(g, e)
    assert jitted.cache_info().guard_failures == 1
