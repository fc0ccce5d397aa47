"""NumPy's in-place array methods on traced values: ``y.sort()``, ``y.partition(k)``,
``y.fill(v)``, ``y.flat[i] = v``, ``y.flat = v``, ``y.put``, ``y.resize``, ``out=`` a traced
array (``y.clip(lo, hi, out=y)``, ``y.cumsum(out=y)``, ``y.sum(axis=0, out=z)``), and
``np.fill_diagonal``/``np.put_along_axis`` into a traced array.

Each writes the new value, computed functionally, into the traced object: its value must be
NumPy's on plain arrays, its derivative the closed form, the other engine's and finite
differences', under ``vmap`` and ``jit`` too. The rest (NumPy functions with ``out=``,
``np.add.at``, ``np.copyto``, ``np.put``, ``y.setfield``, a NumPy array receiving a traced
value) raise an error naming what to write instead.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.errors import NoRuleError, TracerConversionError

X = np.array([0.3, -1.2, 2.0, 0.7, -0.4, 1.5])


def _flat_set(y, index, value):
    y.flat[index] = value


def _along_axis(y, x):
    np.put_along_axis(y, np.array([[2], [0]]), x[:2].reshape(2, 1) * 3.0, axis=1)


# name -> (statement on y, made from x (shape (6,)), reshaped to `shape`), shape,
# whether a value read by NumPy itself (mask, index) is computed from x (no vmap, and jit
# must follow it to other inputs)
CASES = {
    "y.sort()": (lambda y, x: y.sort(), (6,), False),
    "y.sort(axis=0)": (lambda y, x: y.sort(axis=0), (3, 2), False),
    "y.sort(0)": (lambda y, x: y.sort(0), (2, 3), False),
    "y.partition(1, 0)": (lambda y, x: y.partition(1, 0), (3, 2), False),
    "y.sort(kind='stable')": (lambda y, x: y.sort(kind="stable"), (2, 3), False),
    "y.partition(2)": (lambda y, x: y.partition(2), (6,), False),
    "y.partition((0, 4))": (lambda y, x: y.partition((0, 4)), (6,), False),
    "y.fill(x[0] ** 2)": (lambda y, x: y.fill(x[0] ** 2), (2, 3), False),
    "y.fill(3.0)": (lambda y, x: y.fill(3.0), (6,), False),
    "y.flat[[1, 4, 1]] = x[:2]": (lambda y, x: _flat_set(y, [1, 4, 1], x[:2]), (2, 3), False),
    "y.flat[2:5] = x[0]": (lambda y, x: _flat_set(y, slice(2, 5), x[0]), (2, 3), False),
    "y.flat[-1] = x[1] * x[2]": (lambda y, x: _flat_set(y, -1, x[1] * x[2]), (6,), False),
    "y.flat[x > 0] = 0.0": (lambda y, x: _flat_set(y, x > 0, 0.0), (6,), True),
    "y.flat = x[:4]": (lambda y, x: setattr(y, "flat", x[:4]), (3, 2), False),
    "y.put([0, -1, 9], x[:2], mode='wrap')":
        (lambda y, x: y.put([0, -1, 9], x[:2], mode="wrap"), (6,), False),
    "y.put([0, 9], x[3] ** 2, mode='clip')":
        (lambda y, x: y.put([0, 9], x[3] ** 2, mode="clip"), (2, 3), False),
    "y.clip(-0.5, 0.5, out=y)": (lambda y, x: y.clip(-0.5, 0.5, out=y), (6,), False),
    "y.clip(-0.5, x[0], y)": (lambda y, x: y.clip(-0.5, x[0], y), (6,), False),
    "y.cumsum(out=y)": (lambda y, x: y.cumsum(out=y), (6,), False),
    "y.round(1, out=y)": (lambda y, x: y.round(1, out=y), (6,), False),
    "np.fill_diagonal(y, x[0])": (lambda y, x: np.fill_diagonal(y, x[0]), (3, 2), False),
    "np.put_along_axis(y, ..., axis=1)": (_along_axis, (2, 3), False),
    "y.resize(4, refcheck=False)": (lambda y, x: y.resize(4, refcheck=False), (6,), False),
    "y.resize((2, 4), refcheck=False)":
        (lambda y, x: y.resize((2, 4), refcheck=False), (2, 3), False),
}
if hasattr(np.ndarray, "itemset"):   # NumPy before 2.0
    CASES["y.itemset(2, x[0])"] = (lambda y, x: y.itemset(2, x[0]), (6,), False)


def _program(name):
    statement, shape, _ = CASES[name]

    def program(x):
        y = (x * 1.0).reshape(shape)
        statement(y, x)
        return y
    return program


def _plain(name, x):
    statement, shape, _ = CASES[name]
    y = np.array(np.reshape(x, shape), copy=True)   # owns its data (y.resize needs it)
    statement(y, x)
    return y


def _fd_jacobian(f, x, h=1e-6):
    return np.stack([((f(x + h * e) - f(x - h * e)) / (2 * h)).ravel()
                     for e in np.eye(x.size)], axis=-1)


@pytest.mark.parametrize("name", CASES)
def test_in_place_method_values_and_derivatives(name):
    program = _program(name)
    expected = _plain(name, X)
    value, _ = dk.jvp(program, (X,), (np.ones_like(X),))
    # equal up to the order repeated indices are summed in (np.add.at)
    np.testing.assert_allclose(value, expected, rtol=1e-15, atol=1e-15)
    assert value.shape == expected.shape
    forward, reverse = dk.jacfwd(program)(X), dk.jacrev(program)(X)
    np.testing.assert_allclose(forward, reverse, rtol=1e-13, atol=0)
    np.testing.assert_allclose(forward.reshape(expected.size, X.size),
                               _fd_jacobian(lambda x: _plain(name, x), X),
                               rtol=1e-6, atol=1e-7)
    if not CASES[name][2]:   # a mask from x is batched under vmap (see the error test)
        batch = np.stack([X, X[::-1], 2 * X])
        np.testing.assert_allclose(dk.vmap(program)(batch),
                                   np.stack([_plain(name, b) for b in batch]),
                                   rtol=1e-15, atol=1e-15)


@pytest.mark.parametrize("name", [n for n in CASES if "resize" not in n][::3] +
                         ["y.flat[x > 0] = 0.0"])
def test_in_place_methods_under_jit_called_twice(name):
    program = _program(name)
    weights = np.linspace(0.5, 1.5, X.size).reshape(CASES[name][1])

    def loss(x, np_=dnp):
        return np_.sum(np_.sin(program(x)) * weights)

    def plain(x):
        return np.sum(np.sin(_plain(name, x)) * weights)

    jitted = dk.jit(loss)
    for x in (X, -X[::-1] * 1.3):      # other values, other signs (masks), same shapes
        assert jitted(x) == pytest.approx(plain(x), rel=1e-12)
        np.testing.assert_allclose(dk.grad(jitted)(x), dk.grad(loss)(x), rtol=1e-12)
        np.testing.assert_allclose(dk.grad(loss)(x), _fd_jacobian(plain, x)[0], rtol=1e-6,
                                   atol=1e-8)


def test_sort_closed_form_derivative_is_the_sorting_permutation():
    def f(x):
        y = x * 1.0
        y.sort()
        return y
    permutation = np.eye(X.size)[np.argsort(X, kind="stable")]
    np.testing.assert_array_equal(dk.jacfwd(f)(X), permutation)
    np.testing.assert_array_equal(dk.jacrev(f)(X), permutation)


def test_every_name_bound_to_the_array_sees_the_write():
    def f(x):
        y = x * 1.0
        alias = y
        y.sort()
        y.flat[0] = 10.0
        return alias
    np.testing.assert_array_equal(dk.jvp(f, (X,), (X,))[0], np.r_[10.0, np.sort(X)[1:]])


# --- generated flat writes: NumPy's cycling, repeats, index modes and errors --------------

@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["flat", "put-raise", "put-wrap", "put-clip", "flat-mask"]),
       st.lists(st.integers(-9, 9), max_size=5), st.integers(0, 4),
       st.lists(st.booleans(), min_size=6, max_size=6))
def test_generated_flat_writes_follow_numpy(kind, indices, count, mask):
    mask = np.array(mask)

    def statement(y, values):
        if kind == "flat":
            y.flat[indices] = values
        elif kind == "flat-mask":
            y.flat[mask] = values
        else:
            y.put(indices, values, mode=kind[4:])

    def program(x):
        y = (x * 1.0).reshape(2, 3)
        statement(y, x[:count] * 3.0)
        return y

    def plain(x):
        y = np.array(x, copy=True).reshape(2, 3)
        statement(y, x[:count] * 3.0)
        return y

    try:
        expected = plain(X)
    except (IndexError, ValueError) as error:   # NumPy refuses: so does diffkit
        with pytest.raises(type(error)):
            dk.jvp(program, (X,), (X,))
        return
    np.testing.assert_array_equal(dk.jvp(program, (X,), (X,))[0], expected)
    closed = np.stack([plain(u).ravel() for u in np.eye(X.size)], axis=-1)  # linear in x
    np.testing.assert_array_equal(dk.jacfwd(program)(X).reshape(6, 6), closed)
    np.testing.assert_array_equal(dk.jacrev(program)(X).reshape(6, 6), closed)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=7), st.data())
def test_generated_sort_and_partition_with_ties(values, data):
    x = np.array(values, dtype=float) + np.linspace(0.0, 0.5, len(values)) * \
        data.draw(st.sampled_from([0.0, 1.0]))          # with ties, or without
    kth = data.draw(st.integers(0, len(values) - 1))
    for method, args in (("sort", ()), ("partition", (kth,))):
        def program(x, method=method, args=args):
            y = x * 1.0
            getattr(y, method)(*args)
            return y
        expected = x.copy()
        getattr(expected, method)(*args)
        np.testing.assert_array_equal(dk.jvp(program, (x,), (x,))[0], expected)
        order = (np.argsort(x, kind="stable") if method == "sort"
                 else np.argpartition(x, kth))
        # the derivative moves each entry with its value; tied values carry it in the
        # order of the stable argsort (sort) or of argpartition (partition)
        np.testing.assert_array_equal(dk.jacfwd(program)(x), np.eye(x.size)[order])
        np.testing.assert_array_equal(dk.jacrev(program)(x), np.eye(x.size)[order])


# --- what is refused, and what the error names --------------------------------------------

def _raises(error, match, f, engine=dk.grad, x=X):
    with pytest.raises(error, match=match):
        engine(f)(x)


def test_out_into_another_traced_array():
    def f(x, np_=dnp):
        y = (x * 1.0).reshape(2, 3)
        z = x[:3] * 0.0
        returned = y.sum(axis=0, out=z)
        top = x[:2] * 0.0
        assert y.max(axis=1, out=top) is top
        return np_.concatenate([returned * 1.0, z, top])

    expected = f(X, np)
    np.testing.assert_array_equal(dk.jvp(f, (X,), (X,))[0], expected)
    np.testing.assert_allclose(dk.jacfwd(f)(X), dk.jacrev(f)(X), rtol=1e-13)
    np.testing.assert_allclose(dk.jacfwd(f)(X), _fd_jacobian(lambda x: f(x, np), X),
                               rtol=1e-6, atol=1e-8)


def test_in_place_errors_name_the_replacement():
    def setfield(x):
        y = x * 1.0
        y.setfield(1.0, np.float64)
        return dnp.sum(y)
    _raises(NoRuleError, r"setfield.*y\[\.\.\.\] = value", setfield)

    plain = np.zeros(6)
    fixes = {   # the write, the error, what its message must name
        "np.clip out=y": (lambda x: np.clip(x, -0.5, 0.5, out=x), TracerConversionError,
                          r"y\[\.\.\.\] = np\.clip\(x, -0\.5, 0\.5\)"),
        "np.sin out=y": (lambda x: np.sin(x, out=x), TracerConversionError,
                         r"y = np\.sin\(x\) \(no out=\)"),
        "np.add.at": (lambda x: np.add.at(x, [0, 0], x[:2]), TracerConversionError,
                      r"x = x\.at\[\[0, 0\]\]\.add\(x\[:2\]\)"),
        "np.copyto": (lambda x: np.copyto(x, 1.0), NoRuleError, r"np\.copyto has no"),
        "np.put": (lambda x: np.put(x, [0], 1.0), NoRuleError, r"np\.put has no"),
        "np.put plain": (lambda x: np.put(plain, [0], x[0]), NoRuleError, r"np\.put has no"),
        "fill_diagonal plain": (lambda x: np.fill_diagonal(plain.reshape(2, 3), x[0]),
                                TracerConversionError,
                                r"diffkit\.numpy\.fill_diagonal\(\.\.\., inplace=False\)"),
        "clip out=ndarray": (lambda x: x.clip(0.0, 1.0, out=plain), TracerConversionError,
                             r"out="),
        "sum out=ndarray": (lambda x: x.sum(out=plain[:1].reshape(())),
                            TracerConversionError, r"out="),
    }
    for write, error, match in fixes.values():
        _raises(error, match, lambda x, write=write: (write(x * 1.0), dnp.sum(x))[1])
    assert not plain.any()


def test_a_batched_index_is_refused_under_vmap():
    def masked(x):
        y = x * 1.0
        y.flat[x > 0] = 0.0
        return y
    _raises(TracerConversionError, "batched by vmap", masked, dk.vmap, np.stack([X, -X]))


def test_in_place_methods_refuse_live_views_and_numpy_errors():
    def sort_with_view(x):
        y = x * 1.0
        head = y[:2]
        y.sort()
        return dnp.sum(head)

    def fill_with_array(x):
        y = x * 1.0
        y.fill(x[:2])
        return dnp.sum(y)

    def sort_flattened(x):
        y = x * 1.0
        y.sort(None)
        return dnp.sum(y)

    _raises(TracerConversionError, "shares memory", sort_with_view)
    _raises(ValueError, "scalar", fill_with_array)
    _raises(TypeError, "axis=None", sort_flattened)
    with pytest.raises(TypeError):
        np.sort(X.copy()).sort(None)


def test_itemset_exists_exactly_where_numpy_has_it():
    found = {}

    def f(x):
        found["itemset"] = hasattr(x, "itemset")
        return dnp.sum(x)
    dk.grad(f)(X)
    assert found["itemset"] == hasattr(np.ndarray, "itemset")
