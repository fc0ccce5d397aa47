"""NumPy's overlap idioms on traced values: ``y[1:3] = y[1:3][::-1]``, ``y += y[::-1]``,
``y[1:] += y[:-1]``, ``A += A.T`` ...

NumPy buffers an operand that overlaps the array written, so the result is the one computed
from the old values; the right-hand side is a temporary view that dies with the statement.
Generated statements (slices of 1-D and 2-D arrays, forward and reversed, the operators
``=``, ``+=``, ``-=``, ``*=``) must give NumPy's own result on plain arrays, and derivatives
that agree across engines, with the closed form (the statement applied to the unit vectors,
for the linear ones) and with finite differences; under ``vmap`` and ``jit`` too. A view a
name holds outlives the statement, and NumPy would change it: that write is refused.
"""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.errors import TracerConversionError

OPERATORS = ("=", "+=", "-=", "*=")


def overlap(y, form, op, lhs, rhs):
    """One overlap statement on ``y`` (a NumPy array or a traced value), returned after it:
    ``whole``: ``y op= y[rhs]`` (``y[...] = y[rhs]`` for ``=``); ``index``:
    ``y[lhs] op= y[rhs]``; ``reversed``: ``y[lhs] op= y[rhs][::-1]``; ``transpose``:
    ``y op= y.T`` (``y[...] = y.T``)."""
    if form == "whole":
        if op == "=":
            y[...] = y[rhs]
        elif op == "+=":
            y += y[rhs]
        elif op == "-=":
            y -= y[rhs]
        else:
            y *= y[rhs]
    elif form == "index":
        if op == "=":
            y[lhs] = y[rhs]
        elif op == "+=":
            y[lhs] += y[rhs]
        elif op == "-=":
            y[lhs] -= y[rhs]
        else:
            y[lhs] *= y[rhs]
    elif form == "reversed":
        if op == "=":
            y[lhs] = y[rhs][::-1]
        elif op == "+=":
            y[lhs] += y[rhs][::-1]
        elif op == "-=":
            y[lhs] -= y[rhs][::-1]
        else:
            y[lhs] *= y[rhs][::-1]
    else:
        if op == "=":
            y[...] = y.T
        elif op == "+=":
            y += y.T
        elif op == "-=":
            y -= y.T
        else:
            y *= y.T
    return y


def named_overlap(y, op, lhs, rhs):
    """The same write with the right-hand side bound to a name first: NumPy changes ``z``
    too, so diffkit refuses."""
    z = y[rhs]
    if op == "=":
        y[lhs] = z
    elif op == "+=":
        y[lhs] += z
    elif op == "-=":
        y[lhs] -= z
    else:
        y[lhs] *= z
    return y + dnp.sum(z)


# --- generated statements -----------------------------------------------------------------

_BOUND = st.one_of(st.none(), st.integers(-8, 8))
_STEP = st.sampled_from([None, 1, 2, 3, -1, -2, -3])


def _length(index, n):
    return len(range(*index.indices(n)))


@st.composite
def _slice_of_length(draw, n, length):
    """A slice of ``range(n)`` selecting ``length`` entries (forward or backward), its start
    written as a negative index sometimes."""
    choices = [(step, start) for step in (1, 2, 3, -1, -2, -3) for start in range(n)
               if length == 0 or 0 <= start + step * (length - 1) < n]
    step, start = draw(st.sampled_from(choices))
    stop = start + step * length
    if stop < 0:
        stop = None     # a stop of -1 would mean n - 1
    if draw(st.booleans()):
        start -= n
    return slice(start, stop, step)


@st.composite
def _side(draw, n, length=None):
    """A slice of an axis of length ``n``: any slice, or one of ``length`` entries (or of
    one entry, which broadcasts)."""
    if length is None:
        return slice(draw(_BOUND), draw(_BOUND), draw(_STEP))
    if length > 0 and draw(st.integers(0, 4)) == 0:
        length = 1
    return draw(_slice_of_length(n, length))


@st.composite
def overlap_cases(draw):
    """``(shape, form, op, lhs, rhs)`` of a statement NumPy accepts."""
    form = draw(st.sampled_from(["whole", "index", "reversed", "transpose"]))
    op = draw(st.sampled_from(OPERATORS))
    if form == "transpose":
        m = draw(st.integers(1, 4))
        return (m, m), form, op, None, None
    ndim = draw(st.sampled_from([1, 2]))
    shape = tuple(draw(st.integers(1, 5)) for _ in range(ndim))
    if form == "whole":
        lhs = None
        lengths = shape
    else:
        lhs = tuple(draw(_side(n)) for n in shape)
        lengths = [_length(s, n) for s, n in zip(lhs, shape)]
        lhs = lhs[0] if ndim == 1 else lhs
    assume(all(n >= 1 for n in shape))
    rhs = tuple(draw(_side(n, length)) for n, length in zip(shape, lengths))
    if ndim == 1 or draw(st.booleans()) and rhs[1] == slice(None):
        rhs = rhs[0]
    return shape, form, op, lhs, rhs


def _inputs(shape, seed):
    rng = np.random.default_rng(seed)
    return rng.uniform(0.5, 2.0, shape) * rng.choice([-1.0, 1.0], shape)


def _numpy_result(case, x):
    shape, form, op, lhs, rhs = case
    try:
        return overlap(np.array(x, copy=True), form, op, lhs, rhs)
    except ValueError:     # shapes NumPy does not broadcast (an empty slice into one entry)
        return None


def _program(case):
    _, form, op, lhs, rhs = case
    return lambda x: overlap(x * 1.0, form, op, lhs, rhs)


def _fd_jacobian(f, x, h=1e-6):
    columns = []
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = h
        e = e.reshape(x.shape)
        columns.append(((f(x + e) - f(x - e)) / (2 * h)).ravel())
    return np.stack(columns, axis=-1)


@settings(max_examples=60, deadline=None)
@given(overlap_cases(), st.integers(0, 2**16))
def test_overlap_statements_equal_numpy_with_derivatives(case, seed):
    shape, form, op, lhs, rhs = case
    x = _inputs(shape, seed)
    expected = _numpy_result(case, x)
    assume(expected is not None)
    program = _program(case)
    value, tangent = dk.jvp(program, (x,), (np.ones_like(x),))
    np.testing.assert_array_equal(value, expected)
    forward, reverse = dk.jacfwd(program)(x), dk.jacrev(program)(x)
    np.testing.assert_allclose(forward, reverse, rtol=1e-13, atol=0)
    flat_forward = forward.reshape(expected.size, x.size)

    def plain(x):
        return overlap(np.array(x, copy=True), form, op, lhs, rhs)

    if op == "*=":
        np.testing.assert_allclose(flat_forward, _fd_jacobian(plain, x), rtol=1e-6, atol=1e-7)
    else:   # a linear statement: its Jacobian is the statement applied to the unit vectors
        units = np.eye(x.size).reshape((x.size,) + shape)
        closed = np.stack([plain(u).ravel() for u in units], axis=-1)
        np.testing.assert_array_equal(flat_forward, closed)
    np.testing.assert_allclose(tangent.ravel(), flat_forward.sum(axis=1), rtol=1e-13)
    batch = np.stack([x, -x, 2 * x])
    np.testing.assert_array_equal(dk.vmap(program)(batch),
                                  np.stack([plain(b) for b in batch]))


@settings(max_examples=25, deadline=None)
@given(overlap_cases(), st.integers(0, 2**16))
def test_overlap_statements_under_grad_and_jit(case, seed):
    shape, form, op, lhs, rhs = case
    x = _inputs(shape, seed)
    assume(_numpy_result(case, x) is not None)
    weights = np.linspace(0.5, 1.5, x.size).reshape(shape)

    def loss(x, np_=dnp):
        y = overlap(x * 1.0, form, op, lhs, rhs)
        return np_.sum(np_.sin(y) * weights)

    def plain(x):
        return loss(x, np)

    gradient = dk.grad(loss)(x)
    np.testing.assert_allclose(gradient, dk.jacfwd(loss)(x), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(gradient.ravel(), _fd_jacobian(plain, x).ravel(),
                               rtol=1e-6, atol=1e-8)
    jitted = dk.jit(loss)
    for inputs in (x, _inputs(shape, seed + 1)):   # traced once, replayed on new values
        assert jitted(inputs) == pytest.approx(plain(inputs), rel=1e-12, abs=1e-15)
        np.testing.assert_allclose(dk.grad(jitted)(inputs), dk.grad(loss)(inputs),
                                   rtol=1e-12, atol=1e-15)


@st.composite
def _named_cases(draw):
    n = draw(st.integers(1, 6))
    lhs = draw(_side(n))
    rhs = draw(_side(n, _length(lhs, n)))
    return n, draw(st.sampled_from(OPERATORS)), lhs, rhs


@settings(max_examples=30, deadline=None)
@given(_named_cases())
def test_a_right_hand_side_bound_to_a_name_is_refused(case):
    n, op, lhs, rhs = case
    x = _inputs((n,), n)
    assume(_numpy_result(((n,), "index", op, lhs, rhs), x) is not None)
    for engine in (dk.grad, dk.jacfwd):
        with pytest.raises(TracerConversionError, match="shares memory"):
            engine(lambda x: dnp.sum(named_overlap(x * 1.0, op, lhs, rhs)))(x)


# --- the idioms by name -----------------------------------------------------------------

IDIOMS = {
    "y[1:3] = y[1:3][::-1]": lambda y: overlap(y, "reversed", "=", slice(1, 3), slice(1, 3)),
    "y += y[::-1]": lambda y: overlap(y, "whole", "+=", None, slice(None, None, -1)),
    "y[:] = y[::-1]": lambda y: overlap(y, "index", "=", slice(None), slice(None, None, -1)),
    "y[1:] += y[:-1]": lambda y: overlap(y, "index", "+=", slice(1, None), slice(None, -1)),
    "y[:-1] = y[1:]": lambda y: overlap(y, "index", "=", slice(None, -1), slice(1, None)),
    "y *= y[::-1]": lambda y: overlap(y, "whole", "*=", None, slice(None, None, -1)),
}


@pytest.mark.parametrize("idiom", IDIOMS)
def test_the_named_idioms_in_every_engine(idiom):
    statement = IDIOMS[idiom]
    x = np.array([0.3, -1.2, 2.0, 0.7, 1.1])

    def loss(x, np_=dnp):
        y = statement(x * 1.0)
        return np_.sum(y * np_.arange(1.0, 6.0) + y ** 2)

    expected = _fd_jacobian(lambda x: loss(x, np), x)[0]
    assert dk.value_and_grad(loss)(x)[0] == pytest.approx(loss(x, np), rel=1e-13)
    np.testing.assert_allclose(dk.grad(loss)(x), expected, rtol=1e-6)
    np.testing.assert_allclose(dk.jacfwd(loss)(x), dk.grad(loss)(x), rtol=1e-13)
    np.testing.assert_allclose(dk.hessian(loss)(x), dk.jacfwd(dk.jacrev(loss))(x),
                               rtol=1e-12)
    batch = np.stack([x, x[::-1]])
    np.testing.assert_allclose(dk.vmap(loss)(batch), [loss(b, np) for b in batch],
                               rtol=1e-13)


def test_a_view_taken_in_the_statement_and_kept_is_refused():
    """``z`` is bound in the same statement (a chained assignment): it outlives it."""
    def chained(x):
        y = x * 1.0
        y[1:3] = z = y[1:3][::-1]
        return dnp.sum(y) + dnp.sum(z)

    def in_a_list(x):
        y = x * 1.0
        keep = [y[::-1]]
        y += keep[0]
        return dnp.sum(y)

    for f in (chained, in_a_list):
        with pytest.raises(TracerConversionError, match="shares memory"):
            dk.grad(f)(np.arange(1.0, 5.0))


def test_an_explicit_dunder_call_with_a_named_view_is_refused():
    """``y.__setitem__(i, z)`` hands ``z`` over without the statement's own reference: its
    count looks like a temporary's, but ``z`` lives on (NumPy changes it): refused."""
    def set_item(x):
        y = x * 1.0
        z = y[::-1]
        y.__setitem__(slice(None), z)
        return dnp.sum(z * np.arange(4.0))

    def add_in_place(x):
        y = x * 1.0
        z = y[::-1]
        y.__iadd__(z)
        return dnp.sum(z * np.arange(4.0))

    for f in (set_item, add_in_place):
        with pytest.raises(TracerConversionError, match="shares memory"):
            dk.grad(f)(np.arange(1.0, 5.0))
