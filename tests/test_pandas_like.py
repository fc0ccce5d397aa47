"""pandas objects and other array-likes as NumPy reads them (issue 32, item 1).

A pandas ``Series``/``DataFrame``/``Index``, a ``range``, a ``memoryview`` or any object with
``__array__`` is read by every diffkit.numpy function and every indexing path as NumPy reads
it, through ``np.asarray``:

- with a traced value among the arguments, the result is a traced array equal to NumPy's
  result on ``np.asarray`` of the same objects, and its derivatives are checked against the
  other engine (jacfwd vs jacrev), central finite differences of the NumPy program and,
  where one exists, the closed form (an index's Jacobian is rows of the identity, a matrix
  product's is the matrix);
- without one, the call is NumPy's own: the same type and the same values as ``np.<name>``
  (an ndarray for ``np.dot(DataFrame, a)``, a ``Series`` for ``np.sin(Series)``).

The pandas rows skip when pandas is not installed (it is in the test extra).
"""

import collections

import numpy as np
import pytest
import scipy.special
from hypothesis import given, settings
from hypothesis import strategies as st

import diffkit as dk
import diffkit.numpy as dnp
import diffkit.scipy.special as dsp
from diffkit.errors import InputTypeError, TracerConversionError

try:
    import pandas as pd
except ImportError:   # the pandas rows skip; the generic array-likes still run
    pd = None

NEEDS_PANDAS = pytest.mark.skipif(
    pd is None, reason="pandas is not installed: it is in the test extra "
                       "(pip install -e '.[test]'); the rows without pandas still run")
EPS = 1e-6
X = np.array([0.3, -0.7, 1.1])
M = np.array([[1.5, -0.5, 2.0], [0.25, 3.0, -1.0], [2.5, 0.75, 1.25]])


class ArrayLike:
    """An object NumPy reads only through ``__array__`` (no shape, no operators)."""

    def __init__(self, values):
        self._values = np.asarray(values)

    def __array__(self, dtype=None, copy=None):
        return self._values if dtype is None else self._values.astype(dtype)

    def __repr__(self):
        return f"ArrayLike({self._values.tolist()})"


def _maker(label, make, pandas=False):
    return pytest.param(make, id=label, marks=NEEDS_PANDAS if pandas else ())


# Float (or integer) vectors of length 3. Pandas objects get labels out of order: NumPy reads
# positions, never labels.
VECTORS = [
    _maker("Series-float", lambda: pd.Series([0.5, -1.25, 2.0], index=[30, 10, 20]), True),
    _maker("Series-int", lambda: pd.Series([1, 2, 3], index=list("cab")), True),
    _maker("Index-float", lambda: pd.Index([0.5, -1.25, 2.0]), True),
    _maker("RangeIndex", lambda: pd.RangeIndex(1, 4), True),
    _maker("range", lambda: range(1, 4)),
    _maker("memoryview", lambda: memoryview(np.array([0.5, -1.25, 2.0]))),
    _maker("ArrayLike", lambda: ArrayLike([0.5, -1.25, 2.0])),
]
MATRICES = [
    _maker("DataFrame", lambda: pd.DataFrame(M, columns=list("cab"), index=[2, 0, 1]), True),
    _maker("DataFrame-int", lambda: pd.DataFrame((M * 4).astype(int)), True),
    _maker("memoryview-2d", lambda: memoryview(M.copy())),
    _maker("ArrayLike-2d", lambda: ArrayLike(M)),
]
MASKS = [
    _maker("Series-bool", lambda: pd.Series([True, False, True], index=list("zxy")), True),
    _maker("Series-bool-inverted", lambda: ~pd.Series([False, True, False]), True),
    _maker("Index-bool", lambda: pd.Index([True, False, True]), True),
    _maker("memoryview-bool", lambda: memoryview(np.array([True, False, True]))),
    _maker("ArrayLike-bool", lambda: ArrayLike([True, False, True])),
]

# (label, program): program(xp, x, obj) runs once with diffkit.numpy on the object and a
# traced x, and once with NumPy on np.asarray(obj) and a plain x (the reference).
VECTOR_PROGRAMS = [
    ("add-sum", lambda xp, x, v: xp.sum(xp.add(v, x) ** 2)),
    ("mean", lambda xp, x, v: xp.mean(xp.multiply(v, x))),
    ("std", lambda xp, x, v: xp.std(xp.multiply(v, x))),
    ("var", lambda xp, x, v: xp.var(xp.subtract(x, v))),
    ("prod", lambda xp, x, v: xp.prod(xp.add(v, x))),
    ("max", lambda xp, x, v: xp.max(xp.multiply(v, x))),
    ("min", lambda xp, x, v: xp.min(xp.subtract(v, x))),
    ("cumsum", lambda xp, x, v: xp.cumsum(xp.multiply(v, x))),
    ("sin", lambda xp, x, v: xp.sin(xp.add(v, x))),
    ("exp-divide", lambda xp, x, v: xp.exp(xp.divide(x, xp.add(v, 4.0)))),
    ("maximum", lambda xp, x, v: xp.maximum(v, x)),
    ("arctan2", lambda xp, x, v: xp.arctan2(x, v)),
    ("logaddexp", lambda xp, x, v: xp.logaddexp(v, x)),
    ("power", lambda xp, x, v: xp.power(xp.exp(x), v)),
    ("where", lambda xp, x, v: xp.where(x > 0, v, x)),
    ("clip", lambda xp, x, v: xp.clip(x, xp.subtract(v, 1.0), xp.add(v, 1.0))),
    ("dot", lambda xp, x, v: xp.dot(v, x)),
    ("outer", lambda xp, x, v: xp.outer(v, x)),
    ("einsum", lambda xp, x, v: xp.einsum("i,j->ij", x, v)),
    ("stack", lambda xp, x, v: xp.stack([v, x])),
    ("concatenate", lambda xp, x, v: xp.concatenate([x, v])),
    ("array-of-list", lambda xp, x, v: xp.array([v, x])),
    ("average", lambda xp, x, v: xp.average(x, weights=v)),
    ("norm", lambda xp, x, v: xp.linalg.norm(xp.add(v, x))),
    ("polyval", lambda xp, x, v: xp.polyval(v, x)),
    ("convolve", lambda xp, x, v: xp.convolve(x, v)),
    ("interp", lambda xp, x, v: xp.interp(x, [-2.0, 0.0, 3.0], v)),
    ("cov", lambda xp, x, v: xp.cov(xp.stack([x, xp.multiply(v, x ** 2)]))),
    ("fft", lambda xp, x, v: xp.abs(xp.fft.fft(xp.add(x, v)))),
    ("kron", lambda xp, x, v: xp.kron(x, v)),
    ("select", lambda xp, x, v: xp.select([x > 0], [x ** 2], default=v)),
]
MATRIX_PROGRAMS = [
    ("dot", lambda xp, x, m: xp.dot(m, x)),
    ("dot-left", lambda xp, x, m: xp.dot(x, m)),
    ("matmul", lambda xp, x, m: xp.matmul(m, x)),
    ("einsum", lambda xp, x, m: xp.einsum("ij,j->i", m, x)),
    ("tensordot", lambda xp, x, m: xp.tensordot(m, xp.outer(x, x), axes=2)),
    ("sum-axis0", lambda xp, x, m: xp.sum(xp.multiply(m, x), axis=0)),
    ("mean-axis1", lambda xp, x, m: xp.mean(xp.multiply(m, x), axis=1)),
    ("max-axis1", lambda xp, x, m: xp.max(xp.multiply(m, xp.exp(x)), axis=1)),
    ("where", lambda xp, x, m: xp.where(xp.greater(m, 1.0), x, xp.sin(x))),
    ("solve", lambda xp, x, m: xp.linalg.solve(xp.add(m, 10 * np.eye(3)), x)),
]
MASK_PROGRAMS = [
    ("where", lambda xp, x, b: xp.where(b, x, 0.0)),
    ("where-both", lambda xp, x, b: xp.where(b, xp.sin(x), xp.cos(x))),
    ("multiply", lambda xp, x, b: xp.multiply(b, x)),
    ("compress", lambda xp, x, b: xp.compress(b, x)),
    ("extract", lambda xp, x, b: xp.extract(b, x)),
    ("sum-where", lambda xp, x, b: xp.sum(x ** 2, where=b)),
]


def fd_jacobian(f, x):
    """Central finite differences of ``f`` (plain NumPy) at ``x``: shape out + x's."""
    columns = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = EPS
        columns.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * EPS))
    return np.stack(columns, axis=-1).reshape(np.shape(f(x)) + x.shape)


def check_traced(program, make, x=X):
    """``program`` on a traced x and the array-like ``make()`` against NumPy on
    ``np.asarray`` of the same object: values (a plain ndarray, rtol 1e-12), jacfwd vs jacrev
    and grad of the sum (rtol 1e-12), finite differences (rtol 1e-6), vmap and jit."""
    def f(x):
        return program(dnp, x, make())

    def reference(x):
        return program(np, x, np.asarray(make()))

    value, _ = dk.vjp(f, x)
    assert type(value) is np.ndarray or np.isscalar(value)
    np.testing.assert_allclose(value, reference(x), rtol=1e-12, atol=1e-15)
    forward, reverse = dk.jacfwd(f)(x), dk.jacrev(f)(x)
    np.testing.assert_allclose(forward, reverse, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(forward, fd_jacobian(reference, x), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(dk.grad(lambda x: dnp.sum(f(x)))(x),
                               forward.reshape(-1, x.size).sum(axis=0), rtol=1e-12, atol=1e-14)
    xs = np.stack([x, 1.5 * x - 0.2])
    np.testing.assert_allclose(dk.vmap(f)(xs), [reference(row) for row in xs], rtol=1e-12,
                               atol=1e-15)
    np.testing.assert_allclose(dk.jit(f)(x), reference(x), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("make", VECTORS)
@pytest.mark.parametrize("program", [p for _, p in VECTOR_PROGRAMS],
                         ids=[label for label, _ in VECTOR_PROGRAMS])
def test_vectors_with_a_traced_value(program, make):
    check_traced(program, make)


@pytest.mark.parametrize("make", MATRICES)
@pytest.mark.parametrize("program", [p for _, p in MATRIX_PROGRAMS],
                         ids=[label for label, _ in MATRIX_PROGRAMS])
def test_matrices_with_a_traced_value(program, make):
    check_traced(program, make)


@pytest.mark.parametrize("make", MASKS)
@pytest.mark.parametrize("program", [p for _, p in MASK_PROGRAMS],
                         ids=[label for label, _ in MASK_PROGRAMS])
def test_masks_with_a_traced_value(program, make):
    check_traced(program, make)


@pytest.mark.parametrize("make", MATRICES)
def test_matrix_product_jacobian_is_the_matrix(make):
    # the closed form: d(m @ x)/dx = m, d(x @ m)/dx = m.T, in both engines, through
    # diffkit.numpy, NumPy's own functions and the traced value's operators and methods
    m = np.asarray(make()).astype(float)
    for f, expected in [(lambda x: dnp.dot(make(), x), m), (lambda x: np.dot(make(), x), m),
                        (lambda x: x @ make(), m.T), (lambda x: x.dot(make()), m.T),
                        (lambda x: np.matmul(x, make()), m.T)]:
        np.testing.assert_array_equal(dk.jacfwd(f)(X), expected)
        np.testing.assert_array_equal(dk.jacrev(f)(X), expected)


def test_numpys_ufuncs_read_a_foreign_operand_of_a_traced_value():
    # np.multiply reaches the traced value's __array_ufunc__ with the memoryview as it is
    v = np.array([0.5, -1.25, 2.0])
    for operand in (memoryview(v.copy()), ArrayLike(v)):
        f = lambda x, operand=operand: np.multiply(operand, x)   # noqa: E731
        np.testing.assert_array_equal(dk.jacrev(f)(X), np.diag(v))
        np.testing.assert_array_equal(dk.jacfwd(f)(X), np.diag(v))
        g = lambda x, operand=operand: np.add(x, operand)   # noqa: E731
        value, _ = dk.vjp(g, X)
        assert type(value) is np.ndarray
        np.testing.assert_array_equal(value, X + v)


OPERATORS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
             "/": lambda a, b: a / b, "**": lambda a, b: a ** b}


@pytest.mark.parametrize("make", VECTORS)
@settings(max_examples=15, deadline=None)
@given(st.sampled_from(sorted(OPERATORS)), st.booleans())
def test_python_operators_between_a_traced_value_and_an_array_like(make, symbol, left):
    # x * series, series * x (pandas defers to the traced value), x - range(...): the
    # array-like is read as np.asarray reads it; the result is a traced array
    operand = make()
    values = np.asarray(operand).astype(float)
    op = OPERATORS[symbol]
    if left:
        f, plain = (lambda x: op(operand, x)), (lambda x: op(values, x))
    else:
        f, plain = (lambda x: op(x, operand)), (lambda x: op(x, values))
    x = np.abs(X) + 0.5   # positive: powers and quotients defined
    out, _ = dk.vjp(f, x)
    assert type(out) is np.ndarray
    np.testing.assert_allclose(out, plain(x), rtol=1e-15)
    np.testing.assert_array_equal(dk.jacrev(f)(x), dk.jacrev(plain)(x))
    np.testing.assert_array_equal(dk.jacfwd(f)(x), dk.jacfwd(plain)(x))


def test_a_sequence_holding_traced_values_is_stacked():
    def f(x):
        return dnp.sum(dnp.asarray(collections.deque([x[0], x[1] ** 2]))) + dnp.sum(
            collections.deque([x[2], 1.0]))
    np.testing.assert_allclose(dk.grad(f)(X), [1.0, 2 * X[1], 1.0], rtol=1e-12)
    np.testing.assert_allclose(dk.jacfwd(f)(X), [1.0, 2 * X[1], 1.0], rtol=1e-12)


# --- without a traced value: NumPy's own results -------------------------------------------------

def assert_same(got, expected):
    """The same type and the same values (and dtype, index, columns for pandas objects)."""
    assert type(got) is type(expected), (type(got), type(expected))
    if pd is not None and isinstance(expected, pd.Series):
        pd.testing.assert_series_equal(got, expected, check_exact=True)
    elif pd is not None and isinstance(expected, pd.DataFrame):
        pd.testing.assert_frame_equal(got, expected, check_exact=True)
    elif pd is not None and isinstance(expected, pd.Index):
        pd.testing.assert_index_equal(got, expected, exact=True)
    else:
        np.testing.assert_array_equal(got, expected)
        assert np.asarray(got).dtype == np.asarray(expected).dtype


def _plain(label, call, pandas=True):
    return pytest.param(call, id=label, marks=NEEDS_PANDAS if pandas else ())


def _series():
    return pd.Series([0.5, -1.25, 2.0, np.nan], index=[3, 1, 2, 0])


def _frame():
    return pd.DataFrame(M, columns=list("cab"))


# (label, call): call(xp) once with diffkit.numpy, once with numpy; both give NumPy's result
PLAIN_CALLS = [
    _plain("sum-Series", lambda xp: xp.sum(_series())),            # pandas skips the NaN
    _plain("sum-DataFrame", lambda xp: xp.sum(_frame())),
    _plain("sum-DataFrame-axis0", lambda xp: xp.sum(_frame(), axis=0)),
    _plain("mean-DataFrame", lambda xp: xp.mean(_frame())),
    _plain("mean-DataFrame-axis1", lambda xp: xp.mean(_frame(), axis=1)),
    _plain("std-Series", lambda xp: xp.std(_series())),
    _plain("var-Series-ddof", lambda xp: xp.var(_series(), ddof=1)),
    _plain("prod-Index", lambda xp: xp.prod(pd.Index([0.5, 2.0, 3.0]))),
    _plain("max-DataFrame", lambda xp: xp.max(_frame())),
    _plain("min-Series", lambda xp: xp.min(_series())),
    _plain("cumsum-Series", lambda xp: xp.cumsum(_series())),
    _plain("dot-DataFrame-ndarray", lambda xp: xp.dot(_frame(), X)),
    _plain("dot-ndarray-DataFrame", lambda xp: xp.dot(X, _frame())),
    _plain("dot-Series-Series", lambda xp: xp.dot(_series().fillna(1.0), _series().fillna(0))),
    _plain("matmul-DataFrame-ndarray", lambda xp: xp.matmul(_frame(), X)),
    _plain("einsum-DataFrame", lambda xp: xp.einsum("ij,j->i", _frame(), X)),
    _plain("sin-Series", lambda xp: xp.sin(_series())),
    _plain("exp-DataFrame", lambda xp: xp.exp(_frame())),
    _plain("sin-Index", lambda xp: xp.sin(pd.Index([0.5, 1.5]))),
    _plain("add-Series-ndarray", lambda xp: xp.add(_series(), np.arange(4.0))),
    _plain("maximum-Series-scalar", lambda xp: xp.maximum(_series(), 0.0)),
    _plain("invert-bool-Series", lambda xp: xp.invert(pd.Series([True, False]))),
    _plain("where-bool-Series", lambda xp: xp.where(_series() > 0, _series(), 0.0)),
    _plain("clip-Series", lambda xp: xp.clip(_series(), -1.0, 1.0)),
    _plain("concatenate-Series", lambda xp: xp.concatenate([_series(), _series()])),
    _plain("stack-Series", lambda xp: xp.stack([_series(), _series()])),
    _plain("asarray-DataFrame", lambda xp: xp.asarray(_frame())),
    _plain("shape-DataFrame", lambda xp: xp.shape(_frame())),
    _plain("norm-DataFrame", lambda xp: xp.linalg.norm(_frame())),
    _plain("solve-DataFrame", lambda xp: xp.linalg.solve(_frame(), X)),
    _plain("sum-range", lambda xp: xp.sum(range(5)), pandas=False),
    _plain("sin-range", lambda xp: xp.sin(range(3)), pandas=False),
    _plain("mean-memoryview", lambda xp: xp.mean(memoryview(M.copy()), axis=0), pandas=False),
    _plain("dot-ArrayLike", lambda xp: xp.dot(ArrayLike(M), X), pandas=False),
    _plain("exp-ArrayLike", lambda xp: xp.exp(ArrayLike(X)), pandas=False),
    _plain("sum-deque", lambda xp: xp.sum(collections.deque([1.5, 2.5])), pandas=False),
]


@pytest.mark.parametrize("call", PLAIN_CALLS)
def test_without_a_traced_value_the_result_is_numpys(call):
    assert_same(call(dnp), call(np))
    assert_same(call(dnp), call(np))   # the same again once the argument types are known


@NEEDS_PANDAS
def test_scipy_special_without_a_traced_value_is_scipys():
    s = pd.Series([0.25, -0.5], index=["a", "b"])
    assert_same(dsp.erf(s), scipy.special.erf(s))
    assert_same(dsp.gammaln(pd.Index([1.5, 2.5])), scipy.special.gammaln(pd.Index([1.5, 2.5])))
    g = dk.grad(lambda x: dnp.sum(dsp.erf(dnp.multiply(s, x[:2]))))(X)
    expected = np.r_[2 / np.sqrt(np.pi) * np.exp(-(s.to_numpy() * X[:2]) ** 2) * s.to_numpy(), 0]
    np.testing.assert_allclose(g, expected, rtol=1e-12)


# --- indexing ----------------------------------------------------------------------------------

def _index(label, make, pandas=False):
    return pytest.param(make, id=label, marks=NEEDS_PANDAS if pandas else ())


# Indices of a vector of length 4 and of a 3 x 4 matrix. NumPy reads each through
# np.asarray: a boolean Series is a mask (by position: its labels are ignored).
VECTOR_INDICES = [
    _index("Series-bool", lambda: pd.Series([True, False, True, True], index=[9, 8, 7, 6]),
           True),
    _index("Series-bool-inverted", lambda: ~pd.Series([True, False, False, True]), True),
    _index("Index-int-repeated", lambda: pd.Index([3, 0, 0]), True),
    _index("Index-bool", lambda: pd.Index([False, True, True, False]), True),
    _index("RangeIndex", lambda: pd.RangeIndex(1, 3), True),
    _index("Series-int", lambda: pd.Series([2, -1], index=[7, 9]), True),
    _index("range", lambda: range(0, 4, 2)),
    _index("range-empty", lambda: range(0)),
    _index("memoryview", lambda: memoryview(np.array([2, 1]))),
    _index("memoryview-bool", lambda: memoryview(np.array([True, True, False, True]))),
    _index("ArrayLike", lambda: ArrayLike([1, 3])),
    _index("deque", lambda: collections.deque([3, 1])),
]
MATRIX_INDICES = [
    _index("Series-bool-and-range", lambda: (pd.Series([True, False, True]), range(2)), True),
    _index("slice-and-Index", lambda: (slice(None), pd.Index([3, 1])), True),
    _index("Series-int-and-None", lambda: (pd.Series([2, 0]), None), True),
    _index("DataFrame-mask", lambda: pd.DataFrame(np.arange(12).reshape(3, 4) % 3 == 0), True),
    _index("Ellipsis-and-range", lambda: (Ellipsis, range(1, 3))),
    _index("memoryview-rows", lambda: memoryview(np.array([1, 1, 0]))),
    _index("ArrayLike-and-int", lambda: (ArrayLike([0, 2]), 3)),
]
ALL_INDICES = [(p.values[0], (4,), p.id, p.marks) for p in VECTOR_INDICES] + \
    [(p.values[0], (3, 4), p.id, p.marks) for p in MATRIX_INDICES]
INDEX_CASES = [pytest.param(make, shape, id=label, marks=marks)
               for make, shape, label, marks in ALL_INDICES]


def _point(shape):
    return np.linspace(-1.0, 2.0, int(np.prod(shape))).reshape(shape) ** 3


def _selection_jacobian(shape, index):
    """The closed form: the rows of the identity of the entries NumPy picks."""
    size = int(np.prod(shape))
    picked = np.arange(size).reshape(shape)[index]
    return np.eye(size)[picked].reshape(picked.shape + shape)


@pytest.mark.parametrize("make, shape", INDEX_CASES)
def test_getitem_of_a_traced_value(make, shape):
    x = _point(shape)
    value, _ = dk.vjp(lambda x: x[make()], x)
    np.testing.assert_array_equal(value, x[make()])          # NumPy indexing the same object
    expected = _selection_jacobian(shape, make())
    np.testing.assert_array_equal(dk.jacfwd(lambda x: x[make()])(x), expected)
    np.testing.assert_array_equal(dk.jacrev(lambda x: x[make()])(x), expected)
    np.testing.assert_array_equal(dk.vmap(lambda x: x[make()])(np.stack([x, -x])),
                                  np.stack([x[make()], -x[make()]]))
    np.testing.assert_array_equal(dk.jit(lambda x: x[make()])(x), x[make()])


@pytest.mark.parametrize("make, shape", INDEX_CASES)
def test_setitem_of_a_traced_value(make, shape):
    def f(x):
        y = x * 1.0
        y[make()] = dnp.sum(x) ** 2      # a traced value written at the index
        return y

    def reference(x):
        y = x.copy()
        y[make()] = np.sum(x) ** 2
        return y

    x = _point(shape)
    value, _ = dk.vjp(f, x)
    np.testing.assert_allclose(value, reference(x), rtol=1e-12)
    forward, reverse = dk.jacfwd(f)(x), dk.jacrev(f)(x)
    np.testing.assert_allclose(forward, reverse, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(forward, fd_jacobian(reference, x), rtol=1e-6, atol=1e-8)


def _as_numpy_index(index):
    """``index`` with each array-like entry read through ``np.asarray`` (``np.add.at``
    takes arrays, slices, integers, ``None`` and ``...``)."""
    entries = index if isinstance(index, tuple) else (index,)
    return tuple(e if e is None or e is Ellipsis or isinstance(e, (slice, int))
                 else _index_array(np.asarray(e)) for e in entries)


def _index_array(array):
    """An empty array indexes as integers (NumPy reads ``x[range(0)]`` so)."""
    return array.astype(np.intp) if array.size == 0 else array


def _at_reference(x, index, update, values):
    """NumPy's reading of ``x.at[index].<update>(values)``: ``set`` as assignment (the last
    write wins), ``add`` as ``np.add.at`` (repeats accumulate)."""
    y = x.copy()
    if update == "set":
        y[index] = values
    else:
        np.add.at(y, _as_numpy_index(index), values)
    return y


@pytest.mark.parametrize("update", ["set", "add"])
@pytest.mark.parametrize("make, shape", INDEX_CASES)
def test_at_updates_of_a_traced_value(make, shape, update):
    def f(x):
        return getattr(x.at[make()], update)(dnp.sin(x[(0,) * len(shape)]) * 2.0)

    def reference(x):
        return _at_reference(x, make(), update, np.sin(x[(0,) * len(shape)]) * 2.0)

    x = _point(shape)
    value, _ = dk.vjp(f, x)
    np.testing.assert_allclose(value, reference(x), rtol=1e-12)
    np.testing.assert_array_equal(dk.vjp(lambda x: x.at[make()].get(), x)[0], x[make()])
    forward, reverse = dk.jacfwd(f)(x), dk.jacrev(f)(x)
    np.testing.assert_allclose(forward, reverse, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(forward, fd_jacobian(reference, x), rtol=1e-6, atol=1e-8)


# (label, program): functions taking an index argument, program(xp, x, index)
INDEX_FUNCTIONS = [
    ("take", lambda xp, x, i: xp.take(x, i)),
    ("delete", lambda xp, x, i: xp.delete(x, i)),
    ("insert", lambda xp, x, i: xp.insert(x, i, x[0] * 3.0)),
    ("take_along_axis", lambda xp, x, i: xp.take_along_axis(x, i, axis=0)),
    ("repeat", lambda xp, x, i: xp.repeat(x[:2], i)),
]
FUNCTION_INDICES = [
    _index("Index", lambda: pd.Index([3, 1]), True),
    _index("Series-int", lambda: pd.Series([0, 2], index=[5, 4]), True),
    _index("range", lambda: range(1, 3)),
    _index("memoryview", lambda: memoryview(np.array([2, 0]))),
    _index("ArrayLike", lambda: ArrayLike([1, 1])),
]


@pytest.mark.parametrize("make", FUNCTION_INDICES)
@pytest.mark.parametrize("program", [p for _, p in INDEX_FUNCTIONS],
                         ids=[label for label, _ in INDEX_FUNCTIONS])
def test_functions_taking_an_index(program, make):
    # the reference is NumPy's function on np.asarray of the index (np.take_along_axis
    # itself takes only arrays)
    def f(x):
        return program(dnp, x, make())

    def reference(x):
        return program(np, x, np.asarray(make()))

    x = _point((4,))
    value, _ = dk.vjp(f, x)
    np.testing.assert_array_equal(value, reference(x))
    forward, reverse = dk.jacfwd(f)(x), dk.jacrev(f)(x)
    np.testing.assert_array_equal(forward, reverse)
    np.testing.assert_allclose(forward, fd_jacobian(reference, x), rtol=1e-6, atol=1e-8)


@NEEDS_PANDAS
def test_lifelines_penalty_on_the_unpenalised_complement():
    # lifelines' objective: params[~self._cols_to_not_penalize] on every evaluation
    cols_to_not_penalize = pd.Series([False, True, False, False], index=["a", "b", "c", "d"])
    X4 = np.array([0.4, -1.2, 0.9, 2.0])

    def penalty(params):
        return 0.5 * dnp.sum(params[~cols_to_not_penalize] ** 2)

    expected = np.where(cols_to_not_penalize.to_numpy(), 0.0, X4)
    np.testing.assert_allclose(dk.grad(penalty)(X4), expected, rtol=1e-12)
    np.testing.assert_allclose(dk.hessian(penalty)(X4), np.diag((~cols_to_not_penalize)
                                                                .to_numpy().astype(float)))


@pytest.mark.parametrize("make, error", [
    pytest.param(lambda: pd.Series([1.0, 2.0]), "integer", id="Series-float", marks=NEEDS_PANDAS),
    pytest.param(lambda: pd.Series([True, False]), "boolean index did not match",
                 id="mask-too-short", marks=NEEDS_PANDAS),
    pytest.param(lambda: range(3, 6), "out of bounds", id="range-out-of-bounds"),
    pytest.param(lambda: ArrayLike([0.5]), "integer", id="ArrayLike-float"),
])
def test_invalid_array_like_indices_are_numpys_index_errors(make, error):
    x = _point((4,))
    with pytest.raises(IndexError, match=error):
        x[make()]                                   # NumPy's own error
    with pytest.raises(IndexError, match=error):
        dk.grad(lambda x: dnp.sum(x[make()]))(x)


# --- integer inputs ------------------------------------------------------------------------------

@pytest.mark.parametrize("value, kind", [(np.arange(3), "an integer"),
                                         (np.array([True, False]), "a boolean")])
def test_integer_inputs_are_refused_with_the_fix(value, kind):
    with pytest.raises(InputTypeError) as info:
        dk.grad(lambda x: dnp.sum(x * 2.0))(value)
    message = str(info.value)
    assert f"dtype {value.dtype}" in message and f"{kind} array" in message
    assert "astype(float)" in message and "argnums" in message
    # the fix it names works
    np.testing.assert_array_equal(dk.grad(lambda x: dnp.sum(x * 2.0))(value.astype(float)),
                                  np.full(value.shape, 2.0))


# --- generated cases ---------------------------------------------------------------------------

def _containers():
    """Ways to hold an array that NumPy reads through np.asarray."""
    ways = [("memoryview", lambda a: memoryview(np.ascontiguousarray(a))),
            ("ArrayLike", ArrayLike)]
    if pd is not None:
        ways += [("Series", lambda a: pd.Series(a, index=np.arange(len(a))[::-1])),
                 ("Index", pd.Index)]
    return ways


def _frames():
    ways = [("memoryview", lambda a: memoryview(np.ascontiguousarray(a))),
            ("ArrayLike", ArrayLike)]
    if pd is not None:
        ways.append(("DataFrame", lambda a: pd.DataFrame(a, columns=np.arange(a.shape[1])[::-1])))
    return ways


@st.composite
def masked_arrays(draw):
    rows = draw(st.integers(1, 6))
    cols = draw(st.integers(0, 3))
    shape = (rows,) + ((cols,) if cols else ())
    mask = np.array(draw(st.lists(st.booleans(), min_size=rows, max_size=rows)))
    x = np.array(draw(st.lists(st.floats(-3, 3), min_size=int(np.prod(shape)),
                               max_size=int(np.prod(shape))))).reshape(shape)
    label, hold = draw(st.sampled_from(_containers()))
    return x, mask, hold(mask), label


@settings(max_examples=60, deadline=None)
@given(masked_arrays())
def test_generated_masks_select_rows_as_numpy(case):
    x, mask, held, _ = case
    value, _ = dk.vjp(lambda x: x[held], x)
    np.testing.assert_array_equal(value, x[mask])
    expected = _selection_jacobian(x.shape, mask)
    np.testing.assert_array_equal(dk.jacrev(lambda x: x[held])(x), expected)
    np.testing.assert_array_equal(dk.jacfwd(lambda x: x[held])(x), expected)
    # y[mask] = 0, then where(mask, y, 2 x): 0 on the mask's rows, 2 x elsewhere
    rows = mask if x.ndim == 1 else mask[:, None]

    def zeroed(x):
        y = x * 1.0
        y[held] = 0.0
        return dnp.sum(dnp.where(held if x.ndim == 1 else rows, y, 2.0 * x))

    value, gradient = dk.value_and_grad(zeroed)(x)
    np.testing.assert_allclose(value, np.sum(np.where(rows, 0.0, 2.0 * x)), rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_array_equal(gradient, np.where(rows, 0.0, 2.0) * np.ones_like(x))


@st.composite
def frames_and_vectors(draw):
    rows, cols = draw(st.integers(1, 5)), draw(st.integers(1, 4))
    m = np.array(draw(st.lists(st.floats(-4, 4), min_size=rows * cols,
                               max_size=rows * cols))).reshape(rows, cols)
    x = np.array(draw(st.lists(st.floats(-2, 2), min_size=cols, max_size=cols)))
    label, hold = draw(st.sampled_from(_frames()))
    axis = draw(st.sampled_from([None, 0, 1]))
    return m, hold(m), x, axis, label


@settings(max_examples=60, deadline=None)
@given(frames_and_vectors())
def test_generated_frame_products_and_reductions(case):
    m, held, x, axis, _ = case
    # products: the value is NumPy's on the values, the Jacobian is the matrix itself
    for product in (dnp.dot, dnp.matmul, lambda a, b: dnp.einsum("ij,j->i", a, b)):
        value, _ = dk.vjp(lambda x, product=product: product(held, x), x)
        assert type(value) is np.ndarray
        np.testing.assert_allclose(value, m @ x, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(dk.jacrev(lambda x, p=product: p(held, x))(x), m)
        np.testing.assert_array_equal(dk.jacfwd(lambda x, p=product: p(held, x))(x), m)
    # reductions of the frame scaled by a traced vector: d/dx_j sum(m * x) = sum_i m_ij
    # (and of sum over axis 0 the diagonal of the column sums, over axis 1 the matrix)
    expected = {None: m.sum(axis=0), 0: np.diag(m.sum(axis=0)), 1: m}[axis]
    for jacobian in (dk.jacrev, dk.jacfwd):
        scaled = jacobian(lambda x: dnp.sum(dnp.multiply(held, x), axis=axis))(x)
        np.testing.assert_allclose(scaled, expected, rtol=1e-12, atol=1e-12)
    # without a traced value: NumPy's own result, of NumPy's own type
    assert_same(dnp.sum(held, axis=axis), np.sum(held, axis=axis))
    assert_same(dnp.dot(held, x), np.dot(held, x))


@NEEDS_PANDAS
@pytest.mark.parametrize("call", [lambda s, x: s @ x, lambda s, x: s.dot(x),
                                  lambda s, x: pd.DataFrame(np.eye(3)).dot(x)],
                         ids=["series @ x", "series.dot(x)", "df.dot(x)"])
def test_a_pandas_method_that_converts_a_traced_value_names_the_users_line(call):
    # pandas' own matmul/dot read the traced value with np.asarray: refused, with the
    # user's line and the replacement that keeps the derivative
    series = pd.Series([1.0, 2.0, 3.0])
    with pytest.raises(TracerConversionError) as info:
        dk.grad(lambda x: dnp.sum(call(series, x)))(X)   # the user's line
    message = str(info.value)
    assert __file__ in message and "dnp.matmul(series, t)" in message
    np.testing.assert_array_equal(dk.grad(lambda x: dnp.matmul(series, x))(X),
                                  series.to_numpy())
