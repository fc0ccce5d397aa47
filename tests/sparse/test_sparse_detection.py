"""Pattern detection on whole programs: exact patterns of known problems, Hessian patterns,
local patterns, pytrees, caching, and random programs (sparse derivatives equal the dense
ones, patterns hold every nonzero)."""

import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from sparse_problems import (
    RTOL,
    banded,
    brusselator,
    brusselator_pattern,
    chained_rosenbrock,
    dense_jacobian,
    flat_args,
)

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.errors import DensePatternWarning, ShapeMismatchError
from diffkit.testing import strategies as dks


def test_brusselator_pattern_is_exact():
    n = 6
    y = np.random.default_rng(0).uniform(0.5, 2.0, 2 * n * n)
    pattern = dk.jacobian_sparsity(lambda y: brusselator(y, n))(y)
    assert isinstance(pattern, sp.csr_array) and pattern.dtype == bool
    np.testing.assert_array_equal(pattern.toarray(), brusselator_pattern(n))
    assert pattern.nnz == 2 * n * n * 6


def test_banded_pattern_is_exact():
    x = np.linspace(0.1, 1.3, 9)
    pattern = dk.jacobian_sparsity(banded)(x).toarray()
    np.testing.assert_array_equal(pattern, dense_jacobian(banded, x) != 0)


def test_chained_rosenbrock_hessian_pattern_is_tridiagonal():
    x = np.random.default_rng(2).uniform(-1, 1, 12)
    pattern = dk.hessian_sparsity(chained_rosenbrock)(x)
    np.testing.assert_array_equal(pattern.toarray(),
                                  np.abs(np.subtract.outer(np.arange(12), np.arange(12))) <= 1)
    assert (pattern != pattern.T).nnz == 0


def test_hessian_patterns_know_linear_and_separable_parts():
    x = np.linspace(0.5, 2.0, 6)
    # linear terms interact with nothing
    pattern = dk.hessian_sparsity(lambda x: dnp.sum(3.0 * x) + x[0] * x[1])(x).toarray()
    expected = np.zeros((6, 6), bool)
    expected[0, 1] = expected[1, 0] = True
    np.testing.assert_array_equal(pattern, expected)
    # a separable sum of nonlinear terms: the diagonal
    pattern = dk.hessian_sparsity(lambda x: dnp.sum(dnp.sin(x) * dnp.exp(x)))(x).toarray()
    np.testing.assert_array_equal(pattern, np.eye(6, dtype=bool))
    # a quadratic form through matmul: the matrix's pattern, symmetrised
    a = np.diag(np.ones(6)) + np.diag(np.ones(5), 2)[:6, :6]
    pattern = dk.hessian_sparsity(lambda x: x @ (a @ x))(x).toarray()
    np.testing.assert_array_equal(pattern, (a + a.T) != 0)
    # the square of a sum: dense
    assert dk.hessian_sparsity(lambda x: dnp.sum(x) ** 2)(x).toarray().all()


def test_global_and_local_patterns_of_branches():
    x = np.array([-1.0, 2.0, -3.0, 4.0])

    def f(x):
        return dnp.where(x > 0, x ** 2, dnp.roll(x, 1)) + dnp.maximum(x, 0.0)

    glob = dk.jacobian_sparsity(f)(x).toarray()
    local = dk.jacobian_sparsity(f, local=True)(x).toarray()
    np.testing.assert_array_equal(glob, np.eye(4, dtype=bool) | np.roll(np.eye(4, dtype=bool),
                                                                          -1, axis=1))
    np.testing.assert_array_equal(local, dense_jacobian(f, x) != 0)
    assert (local <= glob).all() and local.sum() < glob.sum()
    # max: every entry globally, the maximum locally
    glob = dk.jacobian_sparsity(lambda x: dnp.max(x, keepdims=True))(x).toarray()
    local = dk.jacobian_sparsity(lambda x: dnp.max(x, keepdims=True), local=True)(x)
    assert glob.all()
    np.testing.assert_array_equal(local.toarray(), [[False, False, False, True]])


def test_constant_masks_decide_globally():
    x = np.ones((3, 3))
    pattern = dk.jacobian_sparsity(dnp.tril)(x).toarray()
    np.testing.assert_array_equal(pattern, np.diag(np.tril(np.ones((3, 3))).ravel() != 0))


def test_data_dependent_indices_go_dense_globally():
    x = np.array([3.0, 1.0, 2.0])
    glob = dk.jacobian_sparsity(dnp.sort)(x).toarray()
    assert glob.all()
    local = dk.jacobian_sparsity(dnp.sort, local=True)(x).toarray()
    np.testing.assert_array_equal(local, dense_jacobian(dnp.sort, x) != 0)


def test_pytrees_and_argnums():
    def f(p, scale):
        return {"a": p["u"] * p["v"][0], "b": dnp.sum(p["v"]) * scale}

    p = {"u": np.ones(3), "v": np.ones(2)}
    pattern = dk.jacobian_sparsity(f)(p, 2.0).toarray()
    # outputs: a (3 entries) then b; inputs: u (3) then v (2)
    expected = np.zeros((4, 5), bool)
    expected[:3, :3] = np.eye(3, dtype=bool)
    expected[:3, 3] = True
    expected[3, 3:] = True
    np.testing.assert_array_equal(pattern, expected)
    pattern = dk.jacobian_sparsity(lambda x, y: x * y[::-1], argnums=1)(np.ones(3), np.ones(3))
    np.testing.assert_array_equal(pattern.toarray(), np.eye(3, dtype=bool)[::-1])


def test_custom_rules_and_checkpoint_are_traced_through():
    @dk.custom_jvp
    def softplus(x):
        return dnp.log1p(dnp.exp(x))

    softplus.defjvps(lambda t, out, x: t * dk.numpy.exp(x) / (1 + dk.numpy.exp(x)))
    x = np.linspace(-1, 1, 4)
    np.testing.assert_array_equal(dk.jacobian_sparsity(softplus)(x).toarray(), np.eye(4))
    pattern = dk.jacobian_sparsity(dk.checkpoint(lambda x: x[1:] * x[:-1]))(x).toarray()
    np.testing.assert_array_equal(pattern, dense_jacobian(lambda x: x[1:] * x[:-1], x) != 0)


def test_a_constant_output_has_an_empty_pattern():
    pattern = dk.jacobian_sparsity(lambda x: np.ones(3))(np.ones(2))
    assert pattern.shape == (3, 2) and pattern.nnz == 0


def test_hessian_of_a_non_scalar_is_an_error():
    with pytest.raises(ShapeMismatchError, match="scalar"):
        dk.hessian_sparsity(dnp.sin)(np.ones(3))


def test_sparse_derivatives_detect_once_per_signature():
    calls = []

    def f(x):
        calls.append(type(x).__name__)
        return banded(x)

    jac_fn = dk.sparse_jacobian(f)
    x = np.linspace(0.1, 1.0, 10)
    for scale in (1.0, 2.0, 3.0):
        np.testing.assert_allclose(jac_fn(scale * x).toarray(),
                                   dense_jacobian(banded, scale * x), rtol=RTOL, atol=0)
    assert calls.count("SparsityTracer") == 1
    assert jac_fn.coloring(x).num_colors == 3
    jac_fn(np.linspace(0.1, 1.0, 12))   # a new shape: detected again
    assert calls.count("SparsityTracer") == 2


def test_sparse_hessian_detects_the_pattern():
    x = np.random.default_rng(3).uniform(-1, 1, 30)
    hess_fn = dk.sparse_hessian(chained_rosenbrock)
    np.testing.assert_allclose(hess_fn(x).toarray(), dk.hessian(chained_rosenbrock)(x),
                               rtol=RTOL, atol=0)
    assert hess_fn.coloring(x).num_colors == 3


def test_sparse_jacobian_of_brusselator_detects_and_colours():
    n = 8
    y = np.random.default_rng(4).uniform(0.5, 2.0, 2 * n * n)
    jac_fn = dk.sparse_jacobian(lambda y: brusselator(y, n))
    jac = jac_fn(y)
    np.testing.assert_allclose(jac.toarray(), dense_jacobian(lambda y: brusselator(y, n), y),
                               rtol=RTOL, atol=0)
    info = jac_fn.coloring(y)
    assert info.mode == "forward" and 6 <= info.num_colors <= 12   # 6 nonzeros a row


def _settings(examples):
    return settings(max_examples=examples, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@_settings(60)
@given(dks.programs(max_inputs=2, max_steps=6))
def test_random_programs_sparse_jacobian_equals_jacfwd(drawn):
    program, args = drawn
    with warnings.catch_warnings():
        warnings.simplefilter("error", DensePatternWarning)
        pattern = dk.jacobian_sparsity(program, argnums=tuple(range(len(args))))(*args)
        flat = flat_args(program, args)
        x = np.concatenate([np.ravel(a) for a in args])
        # each mode against the dense Jacobian of its own engine: the engines multiply a
        # chain of partials in opposite orders, which may round apart in the last bits
        # (and cancellation, as in v - sin(v) near 0, magnifies that)
        for mode, dense_of in (("forward", dk.jacfwd), ("reverse", dk.jacrev)):
            jac_fn = dk.sparse_jacobian(program, argnums=tuple(range(len(args))), mode=mode)
            got = jac_fn(*args).toarray()
            dense = np.asarray(dense_of(flat)(x)).reshape(-1, np.size(x))
            # (atol: products that underflow to subnormals round differently)
            np.testing.assert_allclose(got, dense, rtol=RTOL, atol=1e-300)
    assert not ((dense != 0) & ~pattern.toarray()).any()


@_settings(40)
@given(dks.programs(max_inputs=2, max_steps=6))
def test_random_programs_sparse_hessian_equals_hessian(drawn):
    program, args = drawn

    def scalar(*xs):
        return dnp.sum(dnp.sin(program(*xs)))

    flat = flat_args(scalar, args)
    x = np.concatenate([np.ravel(a) for a in args])
    dense = np.asarray(dk.hessian(lambda v: flat(v)[0])(x))
    with warnings.catch_warnings():
        warnings.simplefilter("error", DensePatternWarning)
        pattern = dk.hessian_sparsity(scalar, argnums=tuple(range(len(args))))(*args).toarray()
        got = dk.sparse_hessian(scalar, argnums=tuple(range(len(args))))(*args).toarray()
    assert not ((dense != 0) & ~pattern).any()
    np.testing.assert_allclose(got, dense, rtol=RTOL, atol=1e-300)


def test_jitted_functions_have_the_same_patterns_and_derivatives():
    x = np.linspace(0.2, 1.4, 7)
    jitted = dk.jit(banded)
    np.testing.assert_array_equal(dk.jacobian_sparsity(jitted)(x).toarray(),
                                  dk.jacobian_sparsity(banded)(x).toarray())
    np.testing.assert_allclose(dk.sparse_jacobian(jitted)(x).toarray(),
                               dense_jacobian(banded, x), rtol=RTOL, atol=0)
    objective = dk.jit(chained_rosenbrock)
    np.testing.assert_allclose(dk.sparse_hessian(objective)(x).toarray(),
                               dk.hessian(chained_rosenbrock)(x), rtol=RTOL, atol=0)


def test_block_rules_of_linear_algebra_fft_and_convolution():
    rng = np.random.default_rng(5)
    # inverses of a stack of matrices: block diagonal
    stack = rng.normal(size=(3, 2, 2)) + 3 * np.eye(2)
    pattern = dk.jacobian_sparsity(dnp.linalg.inv)(stack).toarray()
    np.testing.assert_array_equal(pattern, np.kron(np.eye(3), np.ones((4, 4))))
    # an FFT along axis 1 mixes each row, not the rows
    x = rng.normal(size=(3, 4))
    pattern = dk.jacobian_sparsity(lambda x: dnp.real(dnp.fft.fft(x, axis=1)))(x).toarray()
    np.testing.assert_array_equal(pattern, np.kron(np.eye(3), np.ones((4, 4))))
    # a 1-D convolution with a short kernel is banded, exactly
    a, v = rng.normal(size=8), rng.normal(size=3)
    for mode in ("full", "valid", "same"):
        f = lambda a, mode=mode: dnp.convolve(a, v, mode)   # noqa: E731
        np.testing.assert_array_equal(dk.jacobian_sparsity(f)(a).toarray(),
                                      dense_jacobian(f, a) != 0)


def test_import_diffkit_does_not_load_scipy_sparse():
    """scipy.sparse is imported on first use (``sparsity_rules.scipy_sparse``): in a fresh
    interpreter ``import diffkit`` leaves it out, and the first detection loads it."""
    root = Path(__file__).resolve().parents[2]
    code = textwrap.dedent("""
        import sys
        import numpy as np
        import diffkit as dk
        assert dk.__file__.startswith(sys.argv[1]), dk.__file__   # this checkout
        assert "scipy.sparse" not in sys.modules, "import diffkit loaded scipy.sparse"
        pattern = dk.jacobian_sparsity(lambda x: x[1:] * x[:-1])(np.ones(4))
        import scipy.sparse
        assert isinstance(pattern, scipy.sparse.csr_array)
        expected = np.array([[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1]], bool)
        assert (pattern.toarray() == expected).all(), pattern.toarray()
    """)
    done = subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True,
                          text=True, cwd=root, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
