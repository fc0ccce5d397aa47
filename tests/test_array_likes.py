"""Array-likes holding traced values (issue 10, items 2 and 3): every diffkit.numpy and
diffkit.scipy function reads (nested) lists and tuples mixing traced values and constants as
NumPy reads them, through one conversion; creation functions take empty and traced
array-likes. Derivatives are checked against central finite differences of the NumPy (SciPy)
function itself (rtol 1e-6, step 1e-6), in both engines, at second order and under vmap."""

import numpy as np
import pytest
import scipy.special

import diffkit as dk
import diffkit.numpy as dnp
import diffkit.scipy.special as dsp
from diffkit.errors import TracerConversionError

RNG = np.random.default_rng(7)
EPS = 1e-6


def fd_grad(f, x):
    """Central finite differences of the scalar function ``f`` (plain NumPy) at ``x``."""
    x = np.asarray(x, float)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = EPS
        g[i] = (f(x + e) - f(x - e)) / (2 * EPS)
    return g


def fd_hessian(f, x, eps=1e-4):
    x = np.asarray(x, float)
    n = x.size
    h = np.zeros((n, n))
    for i in range(n):
        e = np.zeros(n)
        e[i] = eps
        h[i] = (fd_grad(f, x + e.reshape(x.shape)) - fd_grad(f, x - e.reshape(x.shape))).ravel() \
            / (2 * eps)
    return h.reshape(x.shape + x.shape)


X = np.array([0.7, -1.3, 2.1])
W = RNG.normal(size=(2, 3))
C = np.array([True, False])

# (label, diffkit program, the same program in NumPy/SciPy on plain lists)
CASES = [
    ("mean", lambda x: dnp.mean([x[0], x[1] + 2]),
     lambda x: np.mean([x[0], x[1] + 2])),
    ("std", lambda x: dnp.std((x[0] * x[1], x[2])),
     lambda x: np.std((x[0] * x[1], x[2]))),
    ("norm", lambda x: dnp.linalg.norm([x[0], x[1]]),
     lambda x: np.linalg.norm([x[0], x[1]])),
    ("dot", lambda x: dnp.sum(dnp.dot([x, x ** 2], W.T)),
     lambda x: np.sum(np.dot([x, x ** 2], W.T))),
    ("where", lambda x: dnp.sum(dnp.where(C, [x[0], 0.0], x[1:])),
     lambda x: np.sum(np.where(C, [x[0], 0.0], x[1:]))),
    ("nested", lambda x: dnp.sum(dnp.sin([[x[0], 1.0], [x[1], x[2] ** 2]])),
     lambda x: np.sum(np.sin([[x[0], 1.0], [x[1], x[2] ** 2]]))),
    ("tuple-of-arrays", lambda x: dnp.sum(dnp.exp((x, 2 * x))),
     lambda x: np.sum(np.exp((x, 2 * x)))),
    ("mixed-constants", lambda x: dnp.prod(dnp.array([x[0], 2, np.float64(3.0), x[2]])),
     lambda x: np.prod(np.array([x[0], 2, np.float64(3.0), x[2]]))),
    ("matmul", lambda x: dnp.sum(dnp.matmul([[x[0], x[1]], [0.0, x[2]]], [x[1], 1.0])),
     lambda x: np.sum(np.matmul([[x[0], x[1]], [0.0, x[2]]], [x[1], 1.0]))),
    ("logsumexp", lambda x: dsp.logsumexp([x[0], x[1], 0.5]),
     lambda x: scipy.special.logsumexp([x[0], x[1], 0.5])),
    ("erf", lambda x: dnp.sum(dsp.erf([x[0], x[1] / 2])),
     lambda x: np.sum(scipy.special.erf([x[0], x[1] / 2]))),
    ("clip", lambda x: dnp.sum(dnp.clip([x[0], x[1], x[2]], -1.0, 1.5)),
     lambda x: np.sum(np.clip([x[0], x[1], x[2]], -1.0, 1.5))),
    ("keyword", lambda x: dnp.mean(a=[x[0], x[1] * x[2]]),
     lambda x: np.mean(a=[x[0], x[1] * x[2]])),
    ("linalg-solve", lambda x: dnp.sum(dnp.linalg.solve([[2.0, x[0]], [x[1], 3.0]], [x[2], 1.0])),
     lambda x: np.sum(np.linalg.solve([[2.0, x[0]], [x[1], 3.0]], [x[2], 1.0]))),
]


@pytest.mark.parametrize("label, f, reference", CASES, ids=[c[0] for c in CASES])
def test_lists_of_traced_values_in_both_engines(label, f, reference):
    np.testing.assert_allclose(f(X), reference(X), rtol=1e-12)
    expected = fd_grad(reference, X)
    np.testing.assert_allclose(dk.grad(f)(X), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(dk.jacfwd(f)(X), expected, rtol=1e-6, atol=1e-8)
    assert np.array_equal(dk.jacfwd(f)(X), dk.jacrev(f)(X)) or \
        np.allclose(dk.jacfwd(f)(X), dk.jacrev(f)(X), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("label, f, reference",
                         [c for c in CASES if c[0] in ("mean", "std", "norm", "dot", "nested")],
                         ids=["mean", "std", "norm", "dot", "nested"])
def test_second_order(label, f, reference):
    # finite differences of finite differences: looser (rtol 1e-4)
    np.testing.assert_allclose(dk.hessian(f)(X), fd_hessian(reference, X), rtol=1e-4,
                               atol=1e-5)
    np.testing.assert_allclose(dk.hessian(f)(X), dk.jacrev(dk.jacrev(f))(X), rtol=1e-12,
                               atol=1e-14)


def test_vmap_of_a_list_of_traced_values():
    xs = RNG.normal(size=(4, 3))
    f = CASES[0][1]
    np.testing.assert_allclose(dk.vmap(f)(xs), [np.mean([x[0], x[1] + 2]) for x in xs],
                               rtol=1e-12)
    g = dk.vmap(dk.grad(lambda x: dnp.linalg.norm([x[0], x[1] * x[2]])))
    expected = [fd_grad(lambda x: np.linalg.norm([x[0], x[1] * x[2]]), x) for x in xs]
    np.testing.assert_allclose(g(xs), expected, rtol=1e-6, atol=1e-8)


def test_list_dtype_follows_numpy():
    x32 = np.array([0.5, 1.5], np.float32)

    def f(x):
        out = dnp.array([x[0], x[1]])
        assert out.dtype == np.float32          # all entries float32
        mixed = dnp.array([x[0], 1.0])          # a Python float in np.array is float64
        assert mixed.dtype == np.array([np.float32(0.5), 1.0]).dtype
        ints = dnp.array([x[0], 2])             # ints promote to the float entry's dtype
        assert ints.dtype == np.array([np.float32(0.5), 2]).dtype
        return dnp.sum(out)

    assert dk.grad(f)(x32).dtype == np.float32


def test_ragged_list_is_numpys_error():
    with pytest.raises(ValueError, match="inhomogeneous shape"):
        dk.grad(lambda x: dnp.sum(dnp.array([x, x[:2]])))(X)


def test_plain_numpy_on_a_list_names_the_diffkit_function_and_np_stack():
    with pytest.raises(TracerConversionError) as info:
        dk.grad(lambda x: np.mean([x[0], x[1] + 2]))(X)
    message = str(info.value)
    assert "diffkit.numpy.mean" in message and "np.stack" in message
    assert "test_array_likes.py" in message        # the user's line


# --- item 3: empty and traced array-likes in creation functions ------------------------------

@pytest.mark.parametrize("make, shape", [
    (lambda: dnp.array([]), (0,)), (lambda: dnp.array([[]]), (1, 0)),
    (lambda: dnp.asarray(()), (0,)), (lambda: dnp.array([], dtype=np.int32), (0,)),
    (lambda: dnp.asarray([[], []]), (2, 0))])
def test_empty_array_likes(make, shape):
    out = make()
    assert out.shape == shape
    # inside traced code too: an empty accumulator, or np.array([]) for a plot's ticks
    g = dk.grad(lambda x: dnp.sum(x ** 2) + dnp.sum(make()))(X)
    np.testing.assert_allclose(g, 2 * X, rtol=1e-12)


def test_empty_list_as_accumulator_in_traced_code():
    def f(x):
        values = []
        acc = dnp.array(values)
        for xi in x:
            acc = dnp.concatenate([acc, dnp.array([xi ** 2])])
        return dnp.sum(acc)

    np.testing.assert_allclose(dk.grad(f)(X), 2 * X, rtol=1e-12)


def full_program(x):
    return dnp.sum(dnp.full((2, 3), x[0] * x[1]) * W) + dnp.sum(dnp.full_like(W, x[2]) ** 2)


def full_reference(x):
    return np.sum(np.full((2, 3), x[0] * x[1]) * W) + np.sum(np.full_like(W, x[2]) ** 2)


def test_full_and_full_like_are_differentiable_in_the_fill_value():
    np.testing.assert_allclose(full_program(X), full_reference(X), rtol=1e-12)
    expected = fd_grad(full_reference, X)
    np.testing.assert_allclose(dk.grad(full_program)(X), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(dk.jacfwd(full_program)(X), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(dk.hessian(full_program)(X), fd_hessian(full_reference, X),
                               rtol=1e-4, atol=1e-5)
    xs = RNG.normal(size=(3, 3))
    np.testing.assert_allclose(dk.vmap(full_program)(xs), [full_reference(x) for x in xs],
                               rtol=1e-12)


def test_full_broadcasts_an_array_fill_and_keeps_dtype():
    out = dk.jacrev(lambda x: dnp.full((2, 3), x))(X)
    np.testing.assert_array_equal(out, np.broadcast_to(np.eye(3), (2, 3, 3)))
    x32 = np.float32(1.5)
    assert dk.grad(lambda x: dnp.sum(dnp.full((2,), x)))(x32).dtype == np.float32
    # an integer array's full_like truncates (as NumPy): derivative 0
    assert dk.grad(lambda x: dnp.sum(dnp.full_like(np.arange(3), x) * 1.0))(1.7) == 0.0
    assert dnp.full_like(np.arange(3), 1.7).dtype == np.arange(3).dtype


def test_plain_np_full_of_a_traced_value_names_dnp_full():
    with pytest.raises(TracerConversionError, match=r"diffkit\.numpy\.full"):
        dk.grad(lambda x: np.sum(np.full((2,), x)))(1.0)


def test_like_functions_take_numpys_keywords():
    a = np.ones((2, 3))
    assert dnp.zeros_like(a, shape=(4,)).shape == (4,)
    assert dnp.ones_like(a, dtype=np.int8).dtype == np.int8
    assert dnp.full_like(a, 2.0, shape=(3, 1)).shape == (3, 1)
