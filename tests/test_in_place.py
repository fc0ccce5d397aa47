"""In-place writes on traced values (``y[idx] = v``, ``y[idx] += v``, ``y op= v``): NumPy's
semantics for ``y`` itself in every engine, and a clear error wherever NumPy would let a
view made earlier see the write (diffkit refuses rather than give it a stale value)."""

import copy
import warnings

import numpy as np
import pytest

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.errors import TracerConversionError

X = np.array([0.3, -1.2, 2.0, 0.7])


def writes(x, np_=dnp):
    """NumPy code that writes into arrays it made: run on ndarrays and on traced values."""
    y = x * 2.0
    y[0] = 5.0                       # a constant
    y[1:3] += x[:2] ** 2             # an augmented write into a slice
    y[np_.asarray([3])] *= x[1]      # advanced index
    y[y > 4.5] = x[2] ** 3           # boolean mask (chosen by value)
    y /= 1.5 + x[3]
    y -= x[0]
    y **= 2
    z = y                            # the same object: sees the next write, as in NumPy
    y[2] = np_.sin(x[0])
    return np_.sum(z * np_.arange(1.0, 5.0))


def fd_gradient(f, x, h=1e-6):
    return np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(len(x))])


def test_writes_match_numpy_and_finite_differences_in_every_engine():
    value = writes(X, np)
    assert dk.value_and_grad(writes)(X)[0] == pytest.approx(value, rel=1e-12)
    expected = fd_gradient(lambda x: writes(x, np), X)
    reverse = dk.grad(writes)(X)
    forward = dk.jacfwd(writes)(X)
    np.testing.assert_allclose(reverse, expected, rtol=1e-6, atol=1e-8)
    # the chain rule sums the same products in another order: equal to rounding
    np.testing.assert_allclose(forward, reverse, rtol=1e-13)
    batch = np.stack([X, X + 0.25, X * 0.5])
    np.testing.assert_array_equal(dk.vmap(dk.grad(writes))(batch),
                                  np.stack([dk.grad(writes)(b) for b in batch]))
    hess = dk.hessian(writes)(X)
    expected_h = np.stack([fd_gradient(lambda x, i=i: dk.grad(writes)(x)[i], X)
                           for i in range(4)])
    np.testing.assert_allclose(hess, expected_h, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(hess, dk.jacrev(dk.grad(writes))(X), rtol=1e-12)


def test_a_write_into_the_argument_keeps_its_derivative_slot():
    def f(x):
        x[1] = 0.0          # NumPy would change the caller's array; here the traced argument
        return dnp.sum(x ** 2)
    np.testing.assert_array_equal(dk.grad(f)(X), 2 * X * np.array([1, 0, 1, 1]))
    np.testing.assert_array_equal(dk.jacfwd(f)(X), 2 * X * np.array([1, 0, 1, 1]))
    assert X[1] == -1.2     # the caller's array is not touched


def test_a_write_of_a_constant_into_a_value_without_derivative():
    def f(x):
        y = dk.stop_gradient(x) * 1.0
        y[0] = 3.0
        return dnp.sum(y * x)
    expected = np.r_[3.0, X[1:]]
    for engine in (dk.grad, dk.jacfwd):
        np.testing.assert_array_equal(engine(f)(X), expected)
    np.testing.assert_array_equal(dk.vmap(f)(np.stack([X, X])), [expected @ X] * 2)
    # under vmap(grad), stop_gradient gives a value of grad's trace without derivative (as
    # in JAX), so the write is one on grad's own value, and the gradient is the same
    np.testing.assert_array_equal(dk.vmap(dk.grad(f))(np.stack([X, X])), [expected] * 2)


def test_copies_are_new_arrays():
    copies = [dnp.copy, lambda y: y.copy(), lambda y: +y, dnp.array,
              lambda y: dnp.asarray(y, copy=True), lambda y: y.astype(y.dtype),
              lambda y: dnp.astype(y, y.dtype), lambda y: dnp.concatenate([y]),
              copy.copy, np.copy, lambda y: np.concatenate([y])]
    for make in copies:
        def f(x, make=make):
            y = x * 1.0
            c = make(y)
            c[0] = 100.0
            return dnp.sum(y * X)    # y is unchanged: its gradient is X
        np.testing.assert_array_equal(dk.grad(f)(X), X)
        np.testing.assert_array_equal(dk.jacfwd(f)(X), X)


VIEWS = {
    "slice": lambda y: y[:2],
    "integer row": lambda y: dnp.reshape(y, (2, 2))[0],
    "T": lambda y: dnp.reshape(y, (2, 2)).T,
    "reshape method": lambda y: y.reshape(2, 2),
    "dnp.reshape": lambda y: dnp.reshape(y, (2, 2)),
    "np.reshape": lambda y: np.reshape(y, (2, 2)),
    "ravel": lambda y: y.ravel(),
    "split": lambda y: dnp.split(y, 2)[1],
    "flip": lambda y: dnp.flip(y),
    "broadcast_to": lambda y: dnp.broadcast_to(y, (3, 4)),
    "einsum of one operand": lambda y: dnp.einsum("ij->ji", dnp.reshape(y, (2, 2))),
    "diag of a matrix": lambda y: dnp.diag(dnp.reshape(y, (2, 2))),
    "np.transpose": lambda y: np.transpose(dnp.reshape(y, (2, 2))),
}


def _engines(f):
    return {"reverse": lambda: dk.grad(f)(X), "forward": lambda: dk.jacfwd(f)(X),
            "vmap": lambda: dk.vmap(f)(np.stack([X, X])),
            "hessian": lambda: dk.hessian(f)(X)}


@pytest.mark.parametrize("view", VIEWS)
def test_writing_into_an_array_with_a_live_view_is_refused(view):
    def base_write(x):
        y = x * 1.0
        z = VIEWS[view](y)
        y[0] = 5.0            # NumPy: z sees this; diffkit refuses
        return dnp.sum(z) + dnp.sum(y)

    def view_write(x):
        y = x * 1.0
        z = VIEWS[view](y)
        z[...] = 0.0          # NumPy: y sees this (or raises for a read-only view)
        return dnp.sum(z) + dnp.sum(y)

    for f in (base_write, view_write):
        for run in _engines(f).values():
            with pytest.raises(TracerConversionError, match="shares memory"):
                run()


def test_writes_after_the_view_is_gone_or_copied_are_allowed():
    def f(x):
        y = x * 1.0
        total = dnp.sum(y[:2])       # the view is a temporary: gone after this line
        z = y[2:].copy()             # a copy, not a view
        y[0] = 5.0
        z[0] = 7.0
        w = dnp.reshape(y, (2, 2))   # a view taken after the write sees it
        return total + dnp.sum(w * w) + dnp.sum(z * z)

    def f_np(x):
        y = x * 1.0
        total = np.sum(y[:2])
        z = y[2:].copy()
        y[0] = 5.0
        z[0] = 7.0
        w = np.reshape(y, (2, 2))
        return total + np.sum(w * w) + np.sum(z * z)

    assert dk.value_and_grad(f)(X)[0] == pytest.approx(f_np(X), rel=1e-12)
    expected = fd_gradient(f_np, X)
    got = {name: run() for name, run in _engines(f).items()}
    np.testing.assert_allclose(got["reverse"], expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(got["forward"], got["reverse"], rtol=1e-13)
    np.testing.assert_allclose(got["vmap"], [f_np(X)] * 2, rtol=1e-12)
    hessian_fd = np.stack([fd_gradient(lambda x, i=i: dk.grad(f)(x)[i], X) for i in range(4)])
    np.testing.assert_allclose(got["hessian"], hessian_fd, rtol=1e-5, atol=1e-6)


def test_a_view_written_back_through_its_base_in_one_statement():
    """``y[1:3] += v`` makes the temporary view ``y[1:3]`` and stores it back: allowed."""
    def f(x):
        y = x * 1.0
        y[1:3] += 1.0
        y[::2] *= x[:2]
        return dnp.sum(y ** 2)

    def f_np(x):
        y = x * 1.0
        y[1:3] += 1.0
        y[::2] *= x[:2]
        return np.sum(y ** 2)

    np.testing.assert_allclose(dk.grad(f)(X), fd_gradient(f_np, X), rtol=1e-6)
    np.testing.assert_allclose(dk.jacfwd(f)(X), dk.grad(f)(X), rtol=1e-13)


def test_an_enclosing_transformations_value_is_not_written_by_an_inner_one():
    def outer(x):
        y = x * 1.0

        def inner(t):
            y[0] = t           # an inner traced value into an outer array
            return t

        dk.grad(inner)(2.0)
        return dnp.sum(y)

    def outer_constant(x):
        y = x * 1.0

        def inner(t):
            y[0] = 1.0         # a constant, but into the outer array while inner runs
            return t * 2.0

        dk.grad(inner)(2.0)
        return dnp.sum(y)

    for f in (outer, outer_constant):
        for engine in (dk.grad, dk.jacfwd):
            with pytest.raises(TracerConversionError, match="enclosing"):
                engine(f)(X)
        with pytest.raises(TracerConversionError, match="enclosing"):
            dk.vmap(f)(np.stack([X, X]))


def test_numpy_casting_and_shape_rules():
    def int_add(x):
        y = dnp.asarray(x > 0, dtype=np.int64) + 0 * dnp.astype(x, np.int64)
        y += x            # float into int: NumPy refuses (same_kind)
        return dnp.sum(x)

    def broadcast(x):
        y = x[:1] * 1.0
        y += x            # the result is bigger than y: NumPy refuses
        return dnp.sum(y)

    def complex_into_real(x):
        y = x * 1.0
        y[0] = x[0] * 1j
        return dnp.sum(y)

    with pytest.raises(TypeError):
        np.asarray([1]) .__iadd__(np.asarray([0.5]))
    with pytest.raises(TypeError, match="same_kind"):
        dk.grad(int_add)(X)
    with pytest.raises(ValueError, match="non-broadcastable"):
        dk.grad(broadcast)(X)
    with pytest.raises(TypeError, match="complex"):
        dk.grad(complex_into_real)(X)


def test_jit_of_writes():
    jitted = dk.jit(writes)
    assert jitted(X) == pytest.approx(writes(X, np), rel=1e-12)
    np.testing.assert_allclose(dk.grad(jitted)(X), dk.grad(writes)(X), rtol=1e-12)


def _returns_its_argument(name, a):
    """Whether ``dnp.<name>(traced a)`` returns the traced argument itself (None: it fails)."""
    found = {}

    def f(x):
        try:
            out = getattr(dnp, name)(x)
        except Exception:   # noqa: BLE001 (a function that needs more arguments)
            return dnp.sum(x)
        found["same"] = any(o is x for o in (out if isinstance(out, (tuple, list)) else [out]))
        return dnp.sum(x)
    dk.grad(f)(a)
    return found.get("same")


def test_a_function_returns_its_argument_only_where_numpy_shares_memory():
    """A write into the result of ``f(y)`` changes ``y`` exactly when NumPy's result shares
    memory with ``y``: every one-argument function of diffkit.numpy that returns its traced
    argument itself is one whose NumPy result is a view (or the array itself)."""
    a = np.arange(1.0, 7.0).reshape(2, 3) / 7
    skip = {"test", "show_config", "show_runtime", "info", "source", "lookfor"}
    for name in sorted(dir(dnp)):
        fn = getattr(dnp, name)
        if name.startswith("_") or name in skip or not callable(fn) or isinstance(fn, type):
            continue
        # every name is called on the same array: NumPy's deprecated ones (row_stack,
        # asmatrix's matrix) warn, and functions outside their domain (arccosh) give NaN
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", (DeprecationWarning, PendingDeprecationWarning))
            returns_it = _returns_its_argument(name, a)
            out = getattr(np, name)(a) if returns_it else None
        if returns_it:
            outs = out if isinstance(out, (tuple, list)) else [out]
            assert any(isinstance(o, np.ndarray) and np.shares_memory(o, a) for o in outs), name


def test_boolean_mask_operators_and_a_masked_write_under_vmap():
    """``~m``, ``m & k``, ``m | k``, ``m ^ k`` on traced masks, and ``y[mask] = c`` with a mask
    that differs per example (a where, so vmap batches it)."""
    def g(x):
        m, k = x > 1, x < 3
        y = x * 1.0
        y[~m & k | (m ^ k)] = 0.0
        return dnp.sum(y * y)

    x = np.array([0.5, 2.0, 4.0])
    np.testing.assert_array_equal(dk.grad(g)(x), [0.0, 4.0, 0.0])
    np.testing.assert_array_equal(dk.jacfwd(g)(x), [0.0, 4.0, 0.0])
    batch = np.array([[0.5, 2.0, 4.0], [2.5, 0.2, 1.5]])
    np.testing.assert_array_equal(dk.vmap(dk.grad(g))(batch), [[0, 4, 0], [5, 0, 3]])


def test_an_augmented_write_into_a_list_element_changes_the_array_itself():
    """``arrays[0] += v`` on a list of traced arrays changes the array object, so another
    name bound to it sees the change, as with NumPy arrays."""
    def f(x, np_=dnp):
        arrays = [x * 1.0, x * 2.0]
        first = arrays[0]
        arrays[0] += x ** 2
        return np_.sum(first * arrays[1])

    expected = fd_gradient(lambda x: f(x, np), X)
    assert dk.value_and_grad(f)(X)[0] == pytest.approx(f(X, np), rel=1e-12)
    np.testing.assert_allclose(dk.grad(f)(X), expected, rtol=1e-6)
    np.testing.assert_allclose(dk.jacfwd(f)(X), dk.grad(f)(X), rtol=1e-13)


def test_an_element_read_is_a_copy_and_a_row_read_is_a_view():
    """``y[i]`` of a 1-d array (``y[i, j]`` of a 2-d one) is a scalar copy in NumPy: writes
    after it are allowed. ``y[i]`` of a 2-d array and ``y[..., i]`` are views: refused."""
    def element(x):
        y = x * 1.0
        first = y[0]
        corner = dnp.reshape(y * 1.0, (2, 2))[1, 1]
        y[0] = 0.0
        return first + corner + dnp.sum(y)

    np.testing.assert_array_equal(dk.grad(element)(X), [1.0, 1.0, 1.0, 2.0])
    np.testing.assert_array_equal(dk.jacfwd(element)(X), [1.0, 1.0, 1.0, 2.0])

    def row(x):
        y = dnp.reshape(x * 1.0, (2, 2))
        r = y[0]
        y[0, 0] = 0.0
        return dnp.sum(r)

    def zero_d(x):
        y = x * 1.0
        r = y[..., 0]
        y[0] = 0.0
        return r

    for f in (row, zero_d):
        with pytest.raises(TracerConversionError, match="shares memory"):
            dk.grad(f)(X)


def test_a_copy_of_an_enclosing_value_belongs_to_the_inner_transformation():
    """``c = copy of y`` where ``y`` is a value of an enclosing transformation: ``c`` is the
    innermost one's (a constant to it), so it may be written in place, and the enclosing
    derivative still flows through it."""
    def f(x, y):
        c = dnp.asarray(y, copy=True)
        c[0] = 0.0
        c /= 2.0
        return dnp.sum(c * x)

    ys, xs = np.stack([X, X + 1]), np.stack([2 * X, X])
    halved = np.stack([y * [0, 0.5, 0.5, 0.5] for y in ys])
    np.testing.assert_array_equal(dk.vmap(dk.grad(f))(xs, ys), halved)
    np.testing.assert_array_equal(dk.vmap(dk.grad(f, argnums=1))(xs, ys),
                                  xs * [0, 0.5, 0.5, 0.5])
    # y traced by an outer grad, copied and written inside the inner one
    np.testing.assert_array_equal(dk.grad(lambda y: dnp.sum(dk.grad(f)(X, y)))(X),
                                  [0, 0.5, 0.5, 0.5])
    np.testing.assert_array_equal(dk.jacfwd(lambda y: dnp.sum(dk.grad(f)(X, y)))(X),
                                  [0, 0.5, 0.5, 0.5])


def test_einsum_and_diag_that_build_new_arrays_are_no_views():
    def f(x):
        y = x * 1.0
        product = dnp.einsum("i,i->", y, x)   # two operands: a new array
        square = dnp.diag(y)                  # of a vector: a new matrix
        y[0] = 0.0
        return product + dnp.sum(square) + dnp.sum(y)
    expected = 2 * X + np.array([1.0, 2.0, 2.0, 2.0])
    np.testing.assert_allclose(dk.grad(f)(X), expected, rtol=1e-13)


def test_a_list_holding_traced_values_is_written_as_one_array():
    def f(x):
        y = x * 1.0
        y[:2] = [x[2] ** 2, 3.0]
        return dnp.sum(y * X)
    expected = [0.0, 0.0, 2 * X[2] * X[0] + X[2], X[3]]
    np.testing.assert_allclose(dk.grad(f)(X), expected, rtol=1e-13)
    np.testing.assert_allclose(dk.jacfwd(f)(X), expected, rtol=1e-13)
    np.testing.assert_allclose(dk.vmap(dk.grad(f))(np.stack([X, X])), [expected] * 2,
                               rtol=1e-13)
