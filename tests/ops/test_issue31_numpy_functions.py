"""NumPy functions that JAX differentiates and diffkit refused before issue 31: ``kaiser`` in
``beta``, ``bincount`` in ``weights``, ``poly`` of its roots (or matrix), ``union1d``'s
values and ``histogram2d``'s ``weights``. Each is checked against NumPy's values, central
finite differences of NumPy (h = 1e-6, rtol 1e-6), both engines, ``vmap`` against a loop,
and through NumPy's own function on a traced value (``np.bincount(x, weights=t)``)."""

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import diffkit as dk
import diffkit.numpy as dnp

SETTINGS = settings(max_examples=20, deadline=None)
FLOATS = st.floats(-3, 3, allow_nan=False, allow_infinity=False)


def central(f, x, h=1e-6):
    """The Jacobian of the NumPy function ``f`` at ``x`` by central differences."""
    x = np.asarray(x, float)
    columns = [(np.asarray(f(x + h * e), float) - np.asarray(f(x - h * e), float)) / (2 * h)
               for e in np.eye(x.size).reshape((x.size,) + x.shape)]
    return np.stack(columns, axis=-1).reshape(np.shape(f(x)) + x.shape)


def check(f_diffkit, f_numpy, x, rtol=1e-6, atol=1e-8):
    """Values equal NumPy's, jacfwd == jacrev, and both equal finite differences."""
    traced, _ = dk.jvp(f_diffkit, (x,), (np.ones_like(x),))
    np.testing.assert_allclose(traced, f_numpy(x), rtol=1e-13, atol=1e-15)
    fwd, rev = dk.jacfwd(f_diffkit)(x), dk.jacrev(f_diffkit)(x)
    np.testing.assert_allclose(fwd, rev, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(fwd, central(f_numpy, x), rtol=rtol, atol=atol)
    return fwd


@SETTINGS
@given(st.floats(0.0, 12.0), st.integers(0, 9))
def test_kaiser_in_beta(beta, size):
    jac = check(lambda b: dnp.kaiser(size, b), lambda b: np.kaiser(size, b), np.float64(beta))
    assert jac.shape == (size,)
    betas = np.array([0.5, 2.0, 7.0])
    np.testing.assert_allclose(dk.vmap(lambda b: dnp.kaiser(size, b))(betas),
                               np.stack([np.kaiser(size, b) for b in betas]).reshape(3, size),
                               rtol=1e-13)


@SETTINGS
@given(hnp.arrays(np.int64, st.integers(1, 8), elements=st.integers(0, 6)),
       st.integers(0, 9), st.data())
def test_bincount_in_weights(x, minlength, data):
    w = data.draw(hnp.arrays(np.float64, x.shape, elements=FLOATS))
    jac = check(lambda v: dnp.bincount(x, weights=v, minlength=minlength),
                lambda v: np.bincount(x, weights=v, minlength=minlength), w)
    # the derivative is the 0/1 matrix of the bins (exact)
    np.testing.assert_array_equal(jac, np.equal.outer(np.arange(jac.shape[0]), x))
    got = dk.grad(lambda v: np.sum(np.bincount(x, weights=v) ** 2))(w)   # NumPy's own
    np.testing.assert_allclose(got, 2 * np.bincount(x, weights=w)[x], rtol=1e-13)
    batch = np.stack([w, 2 * w + 1])
    np.testing.assert_allclose(dk.vmap(lambda v: dnp.bincount(x, weights=v))(batch),
                               np.stack([np.bincount(x, weights=v) for v in batch]),
                               rtol=1e-13)


def test_bincount_dtype_and_errors():
    x = np.array([0, 1, 1])
    out = dnp.bincount(x, weights=dk.jvp(lambda v: v, (np.ones(3, np.float32),),
                                         (np.ones(3, np.float32),))[0])
    assert out.dtype == np.bincount(x, weights=np.ones(3, np.float32)).dtype == np.float64
    try:
        dk.grad(lambda v: dnp.sum(dnp.bincount(x, weights=v)))(np.ones(4))
    except ValueError as error:
        assert "same length" in str(error)
    else:
        raise AssertionError("a weights/list length mismatch must raise")


@SETTINGS
@given(hnp.arrays(np.float64, st.integers(1, 5), elements=FLOATS))
def test_poly_of_roots(r):
    check(dnp.poly, np.poly, r, atol=1e-6)
    # d coefficients / d r_i: -(the coefficients of prod_{j != i} (x - r_j)), shifted
    if r.size:
        jac = dk.jacrev(dnp.poly)(r)
        for i in range(r.size):
            others = np.poly(np.delete(r, i))
            np.testing.assert_allclose(jac[1:, i], -others, rtol=1e-12, atol=1e-12)
        batch = np.stack([r, r + 1.0])
        np.testing.assert_allclose(dk.vmap(dnp.poly)(batch), [np.poly(b) for b in batch],
                                   rtol=1e-13, atol=1e-13)


def test_poly_of_complex_roots_and_of_a_matrix():
    p = np.array([1.0, 2.0, 5.0, 3.0])
    # poly(roots(p)) is p / p[0]: its Jacobian is exact (distinct roots)
    jac = dk.jacfwd(lambda q: dnp.poly(dnp.roots(q)))(p)
    assert jac.dtype == np.float64   # conjugate pairs: real, as NumPy
    expected = np.eye(4) / p[0]
    expected[:, 0] -= p / p[0] ** 2
    np.testing.assert_allclose(jac, expected, rtol=1e-10, atol=1e-12)
    a = np.array([[1.0, 2.0, 0.5], [3.0, 4.0, -1.0], [0.0, 1.0, 2.0]])
    check(dnp.poly, np.poly, a, atol=1e-6)
    batch = np.stack([a, a.T + 1.0])
    np.testing.assert_allclose(dk.vmap(dnp.poly)(batch), [np.poly(b) for b in batch],
                               rtol=1e-12)


def _principal_minor_sums(a):
    """The characteristic polynomial's coefficients as (-1)^k times the sums of the k x k
    principal minors: determinants only, whose derivatives are exact at every rank."""
    n = a.shape[0]
    coefficients = [dnp.ones(())]
    for k in range(1, n + 1):
        total = sum(dnp.linalg.det(a[np.ix_(rows, rows)])
                    for rows in itertools.combinations(range(n), k))
        coefficients.append((-1) ** k * total)
    return dnp.stack(coefficients)


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 4).flatmap(lambda n: st.lists(
    st.integers(-2, 2), min_size=n * n, max_size=n * n).map(
        lambda v: np.array(v, float).reshape(n, n))))
def test_poly_of_a_matrix_is_exact_where_eigenvalues_repeat_or_the_matrix_is_defective(a):
    # small integer matrices: nilpotent, repeated and defective ones among them, where the
    # eigenvalues' derivatives are NaN or huge but the coefficients are polynomials
    np.testing.assert_allclose(dnp.poly(a), np.poly(a), rtol=1e-12, atol=1e-12)
    for engine in (dk.jacfwd, dk.jacrev):
        np.testing.assert_allclose(engine(dnp.poly)(a), dk.jacfwd(_principal_minor_sums)(a),
                                   rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(dk.hessian(lambda m: dnp.poly(m)[-1])(a),
                               dk.hessian(lambda m: _principal_minor_sums(m)[-1])(a),
                               rtol=1e-10, atol=1e-10)


def test_union1d_values():
    a, b = np.array([3.0, 1.0, 2.0, 1.0]), np.array([2.0, 5.0])
    np.testing.assert_array_equal(dnp.union1d(*dk.jvp(lambda u: u, (a,), (a,))[:1], b),
                                  np.union1d(a, b))
    ja, jb = dk.jacfwd(lambda u, v: np.union1d(u, v), argnums=(0, 1))(a, b)
    ra, rb = dk.jacrev(lambda u, v: dnp.union1d(u, v), argnums=(0, 1))(a, b)
    np.testing.assert_array_equal(ja, ra)
    np.testing.assert_array_equal(jb, rb)
    # each value's derivative is its first occurrence (a's entry before b's): 1, 2, 3, 5
    np.testing.assert_array_equal(ja, [[0, 1, 0, 0], [0, 0, 1, 0], [1, 0, 0, 0], [0, 0, 0, 0]])
    np.testing.assert_array_equal(jb, [[0, 0], [0, 0], [0, 0], [0, 1]])


@SETTINGS
@given(st.integers(3, 8), st.sampled_from([2, 3, (2, 3)]), st.booleans(), st.data())
def test_histogram2d_weights(count, bins, density, data):
    # coordinates on a grid of 1/20: a sample range of 1e-308 (bins of subnormal area) would
    # make the density overflow, where finite differences mean nothing
    grid = st.integers(0, 20).map(lambda k: k / 20)
    x = data.draw(hnp.arrays(np.float64, count, elements=grid))
    y = data.draw(hnp.arrays(np.float64, count, elements=grid))
    w = data.draw(hnp.arrays(np.float64, count, elements=st.floats(0.5, 2.0)))
    f_np = lambda v: np.histogram2d(x, y, bins=bins, density=density, weights=v)[0]  # noqa: E731
    f_dk = lambda v: dnp.histogram2d(x, y, bins=bins, density=density, weights=v)[0]  # noqa: E731
    check(f_dk, f_np, w)
    _, xedges, yedges = dnp.histogram2d(x, y, bins=bins, weights=dk.jvp(
        lambda v: v, (w,), (w,))[0])
    np.testing.assert_array_equal(xedges, np.histogram2d(x, y, bins=bins)[1])
    np.testing.assert_array_equal(yedges, np.histogram2d(x, y, bins=bins)[2])
    batch = np.stack([w, w[::-1]])
    np.testing.assert_allclose(dk.vmap(f_dk)(batch), np.stack([f_np(v) for v in batch]),
                               rtol=1e-13)
    # through NumPy's own function
    np.testing.assert_allclose(dk.jacrev(lambda v: np.histogram2d(
        x, y, bins=bins, density=density, weights=v)[0])(w), dk.jacrev(f_dk)(w), rtol=1e-14)
