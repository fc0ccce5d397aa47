"""Tests for diffkit.ops.linalg: matmul, dot, outer, inner, vdot, tensordot and einsum.

Values are compared with NumPy; derivatives by the engines against each other (jacfwd,
jacrev, Hessians by forward-over-reverse and reverse-over-reverse) and against central
finite differences; vmap against a Python loop over the examples.
"""

import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.ops import linalg

RTOL = 1e-7  # engines against each other, and against NumPy
ATOL = 1e-10
FD_RTOL = 1e-5  # against finite differences
FD_ATOL = 1e-6


def rand(*shape, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed + 7919 * len(shape) + sum(shape))
    return rng.normal(size=shape).astype(dtype)


def operands(shapes, seed=0):
    return [rand(*s, seed=seed + i) for i, s in enumerate(shapes)]


def numeric_jacobian(f, args, argnum, eps=1e-6):
    """Central-difference Jacobian of ``f`` in argument ``argnum``: ``out.shape + x.shape``."""
    args = [np.asarray(a, dtype=float) for a in args]
    x = args[argnum]
    out_shape = np.shape(f(*args))
    columns = []
    for i in range(x.size):
        step = np.zeros(x.size)
        step[i] = eps
        step = step.reshape(x.shape)
        plus = list(args)
        minus = list(args)
        plus[argnum] = x + step
        minus[argnum] = x - step
        columns.append((np.asarray(f(*plus)) - np.asarray(f(*minus))) / (2 * eps))
    jac = np.stack(columns, axis=-1) if columns else np.zeros(out_shape + (0,))
    return jac.reshape(out_shape + x.shape)


def check_jacobians(f, args, argnums=None):
    """jacfwd == jacrev (tightly) == finite differences (loosely), in every argument."""
    argnums = range(len(args)) if argnums is None else argnums
    for i in argnums:
        forward = dk.jacfwd(f, argnums=i)(*args)
        reverse = dk.jacrev(f, argnums=i)(*args)
        expected_shape = np.shape(f(*args)) + np.shape(args[i])
        assert forward.shape == expected_shape
        assert reverse.shape == expected_shape
        np.testing.assert_allclose(forward, reverse, rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(forward, numeric_jacobian(f, args, i),
                                   rtol=FD_RTOL, atol=FD_ATOL)


def check_vmap(f, args, in_axes):
    """``vmap(f, in_axes)`` equals stacking ``f`` over the examples."""
    size = next(np.shape(a)[ax] for a, ax in zip(args, in_axes) if ax is not None)
    expected = np.stack([
        np.asarray(f(*[a if ax is None else np.take(a, i, axis=ax)
                       for a, ax in zip(args, in_axes)]))
        for i in range(size)])
    got = dk.vmap(f, in_axes=tuple(in_axes))(*args)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)


def batched(x, axis, size=3, seed=11):
    """A stack of ``size`` examples shaped like ``x``, with the stacking axis at ``axis``."""
    stack = np.stack([x + rand(*np.shape(x), seed=seed + i) for i in range(size)])
    return np.moveaxis(stack, 0, axis)


def axis_choices(ndim):
    """``None`` (not mapped) and every position the batch axis can take."""
    return [None] + list(range(ndim + 1))


@pytest.fixture(autouse=True)
def no_loop_fallback():
    """No linalg primitive may fall back to vmap's per-example loop."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", dk.errors.PerformanceWarning)
        yield


# --- shapes ------------------------------------------------------------------------------

MATMUL_SHAPES = [
    ((3,), (3,)),
    ((3,), (3, 4)),
    ((2, 3), (3,)),
    ((2, 3), (3, 4)),
    ((5, 2, 3), (3, 4)),
    ((2, 3), (5, 3, 4)),
    ((3,), (5, 3, 4)),
    ((5, 2, 3), (3,)),
    ((5, 2, 3), (5, 3, 4)),
    ((1, 2, 3), (5, 3, 4)),  # size-1 batch axis broadcasts
    ((5, 2, 3), (1, 3, 4)),
    ((2, 1, 2, 3), (5, 3, 4)),  # batch axes broadcast both ways
    ((5, 1, 2, 3), (1, 4, 3, 2)),
    ((1, 1, 2, 3), (3, 1)),
    ((1, 3), (3, 1)),
]

DOT_SHAPES = [
    ((), ()),
    ((), (3,)),
    ((2, 3), ()),
    ((3,), (3,)),
    ((3,), (3, 4)),
    ((2, 3), (3,)),
    ((2, 3), (3, 4)),
    ((4, 2, 3), (3,)),
    ((4, 2, 3), (3, 5)),
    ((3,), (4, 3, 5)),
    ((2, 3), (4, 3, 5)),
    ((6, 2, 3), (4, 3, 5)),
]

INNER_SHAPES = [
    ((), (2, 3)),
    ((3,), ()),
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (2, 3)),
    ((2, 3), (4, 3)),
    ((5, 2, 3), (4, 3)),
    ((2, 3), (4, 1, 3)),
]

OUTER_SHAPES = [((3,), (4,)), ((), (4,)), ((2, 3), (2,)), ((2, 2), (3, 1, 2))]

VDOT_SHAPES = [((3,), (3,)), ((2, 3), (6,)), ((2, 3), (3, 2)), ((), ())]

TENSORDOT_CASES = [
    ((3, 4), (4, 5), 1),
    ((2, 3, 4), (3, 4, 5), 2),
    ((2, 3), (3, 2), 0),
    ((2, 3), (2, 3), 2),
    ((3,), (3,), 1),
    ((2, 3, 4), (4, 3, 5), ([1, 2], [1, 0])),
    ((2, 3, 4), (5, 2), ([0], [1])),
    ((2, 3, 4), (4, 2), (-1, 0)),
    ((2, 3, 4), (4, 3), ([-1, -2], [0, 1])),
    ((4, 3), (3, 2, 4), ((0, 1), (2, 0))),
]

EINSUM_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),  # implicit output
    ("ji,jk", [(3, 2), (3, 4)]),
    ("ba", [(2, 3)]),  # implicit output is sorted: a transpose
    ("Ba", [(2, 3)]),  # uppercase sorts first
    ("ij->ji", [(2, 3)]),
    ("ij->", [(2, 3)]),  # single-operand sums
    ("ij->j", [(2, 3)]),
    ("ijk->ki", [(2, 3, 4)]),
    ("ii->i", [(3, 3)]),  # diagonals
    ("ii", [(3, 3)]),  # trace
    ("ii->", [(3, 3)]),
    ("iij->j", [(3, 3, 2)]),
    ("iii->i", [(2, 2, 2)]),
    ("iji->ij", [(3, 2, 3)]),
    ("ii,i->i", [(3, 3), (3,)]),
    ("ij,ij->", [(2, 3), (2, 3)]),
    ("i,i", [(3,), (3,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("i,j", [(3,), (4,)]),
    ("i,j->", [(3,), (4,)]),  # indices summed that appear in one operand only
    ("ij,k->i", [(2, 3), (4,)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),  # three operands
    ("ab,bc,ca->", [(2, 3), (3, 4), (4, 2)]),
    ("ij,jk,kl", [(2, 3), (3, 4), (4, 2)]),
    ("i,i,i->i", [(3,), (3,), (3,)]),
    ("bij,bjk->bik", [(4, 2, 3), (4, 3, 5)]),
    ("...ij,...jk->...ik", [(4, 2, 3), (4, 3, 5)]),  # ellipsis
    ("...ij,...jk", [(1, 2, 3), (4, 3, 5)]),  # broadcast ellipsis (size 1)
    ("...ij,jk->...ik", [(2, 4, 2, 3), (3, 5)]),
    ("...ij,...jk", [(2, 3), (6, 3, 5)]),  # ellipsis of different ranks
    ("i...->...", [(3, 2, 4)]),
    ("...ii->...i", [(2, 3, 3)]),
    ("...", [(2, 3)]),
    ("...i,...i", [(2, 3), (3,)]),
    ("i...,i...->i", [(3,), (3,)]),  # ellipsis over no axes
    ("ij,ij->ij", [(1, 3), (2, 3)]),  # size-1 broadcasting of a named index
    ("ij,jk->ik", [(2, 1), (3, 4)]),  # ... even of a contracted one (NumPy allows it)
    (",i->i", [(), (3,)]),  # a 0-d operand
    (" ij , jk -> ik ", [(2, 3), (3, 4)]),  # spaces
]


# --- values equal NumPy's ---------------------------------------------------------------


@pytest.mark.parametrize("sa, sb", MATMUL_SHAPES)
def test_matmul_values(sa, sb):
    a, b = operands([sa, sb])
    expected = np.matmul(a, b)
    got = dnp.matmul(a, b)
    assert np.shape(got) == expected.shape
    np.testing.assert_allclose(got, expected, rtol=RTOL)
    # the same through the tracer's @ operator, on traced values
    traced = dk.jvp(lambda x, y: x @ y, (a, b), (a, b))[0]
    np.testing.assert_allclose(traced, expected, rtol=RTOL)


@pytest.mark.parametrize("sa, sb", DOT_SHAPES)
def test_dot_values(sa, sb):
    a, b = operands([sa, sb])
    expected = np.dot(a, b)
    got = dnp.dot(a, b)
    assert np.shape(got) == np.shape(expected)
    np.testing.assert_allclose(got, expected, rtol=RTOL)


@pytest.mark.parametrize("sa, sb", INNER_SHAPES)
def test_inner_values(sa, sb):
    a, b = operands([sa, sb])
    expected = np.inner(a, b)
    got = dnp.inner(a, b)
    assert np.shape(got) == np.shape(expected)
    np.testing.assert_allclose(got, expected, rtol=RTOL)


@pytest.mark.parametrize("sa, sb", OUTER_SHAPES)
def test_outer_values(sa, sb):
    a, b = operands([sa, sb])
    got = dnp.outer(a, b)
    assert got.shape == np.outer(a, b).shape
    np.testing.assert_allclose(got, np.outer(a, b), rtol=RTOL)


@pytest.mark.parametrize("sa, sb", VDOT_SHAPES)
def test_vdot_values(sa, sb):
    a, b = operands([sa, sb])
    np.testing.assert_allclose(dnp.vdot(a, b), np.vdot(a, b), rtol=RTOL)


def test_vdot_conjugates_the_first_argument():
    a = rand(2, 3) + 1j * rand(2, 3, seed=1)
    b = rand(6) + 1j * rand(6, seed=2)
    np.testing.assert_allclose(dnp.vdot(a, b), np.vdot(a, b), rtol=RTOL)
    assert not np.allclose(np.vdot(a, b), np.dot(a.ravel(), b))
    # vdot is conjugate-linear in a: its JVP along t is vdot(t, b)
    t = rand(2, 3, seed=3) + 1j * rand(2, 3, seed=4)
    _, tangent = dk.jvp(lambda x: dnp.vdot(x, b), (a,), (t,))
    np.testing.assert_allclose(tangent, np.vdot(t, b), rtol=RTOL)


@pytest.mark.parametrize("sa, sb, axes", TENSORDOT_CASES)
def test_tensordot_values(sa, sb, axes):
    a, b = operands([sa, sb])
    expected = np.tensordot(a, b, axes)
    got = dnp.tensordot(a, b, axes)
    assert np.shape(got) == expected.shape
    np.testing.assert_allclose(got, expected, rtol=RTOL)


def test_tensordot_default_axes_is_two():
    a, b = operands([(2, 3, 4), (3, 4, 5)])
    np.testing.assert_allclose(dnp.tensordot(a, b), np.tensordot(a, b), rtol=RTOL)


@pytest.mark.parametrize("subscripts, shapes", EINSUM_CASES)
def test_einsum_values(subscripts, shapes):
    ops = operands(shapes)
    expected = np.einsum(subscripts, *ops)
    got = dnp.einsum(subscripts, *ops)
    assert np.shape(got) == np.shape(expected)
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)


def test_einsum_sublist_form():
    a, b = operands([(2, 3), (3, 4)])
    np.testing.assert_allclose(dnp.einsum(a, [0, 1], b, [1, 2], [0, 2]),
                               np.einsum(a, [0, 1], b, [1, 2], [0, 2]), rtol=RTOL)
    np.testing.assert_allclose(dnp.einsum(a, [1, 0]), np.einsum(a, [1, 0]), rtol=RTOL)
    np.testing.assert_allclose(dnp.einsum(a, [Ellipsis, 30], [30, Ellipsis]),
                               np.einsum(a, [Ellipsis, 30], [30, Ellipsis]), rtol=RTOL)


def test_einsum_large_contractions_use_path_optimisation():
    """Large multi-operand contractions go through np.einsum's optimiser; same values,
    same derivatives."""
    shapes = [(40, 30), (30, 40), (40, 20)]
    subscripts = "ab,bc,cd->ad"
    ops = operands(shapes)
    assert linalg._optimize("ab,bc,cd->ad", tuple(shapes))
    assert not linalg._optimize("ab,bc,cd->ad", ((2, 2),) * 3)
    assert not linalg._optimize("ab,ab->ab", ((400, 400),) * 2)  # nothing summed
    np.testing.assert_allclose(dnp.einsum(subscripts, *ops), np.einsum(subscripts, *ops),
                               rtol=RTOL)
    f = lambda a: dnp.sum(dnp.einsum(subscripts, a, ops[1], ops[2]) ** 2)  # noqa: E731
    g = dk.grad(f)(ops[0])
    b, c = ops[1], ops[2]
    bc = b @ c
    np.testing.assert_allclose(g, 2 * (ops[0] @ bc) @ bc.T, rtol=1e-9)


def test_plain_inputs_give_plain_outputs():
    a, b = operands([(2, 3), (3, 4)])
    for result in (dnp.matmul(a, b), dnp.einsum("ij,jk", a, b), dnp.dot(a, b),
                   dnp.tensordot(a, b, 1), dnp.outer(a, b), dnp.inner(a, a)):
        assert isinstance(result, np.ndarray)
    # lists and scalars are accepted like NumPy's
    np.testing.assert_allclose(dnp.matmul([[1.0, 2.0]], [3.0, 4.0]), [11.0])
    np.testing.assert_allclose(dnp.dot(2.0, [1.0, 2.0]), [2.0, 4.0])
    np.testing.assert_allclose(dnp.einsum("i,i", [1.0, 2.0], [3.0, 4.0]), 11.0)


# --- errors ------------------------------------------------------------------------------


@pytest.mark.parametrize("call, shapes", [
    (dnp.matmul, [(2, 3), (4, 5)]),
    (dnp.matmul, [(3,), (4,)]),
    (dnp.matmul, [(2, 3), (4,)]),
    (dnp.matmul, [(3, 2, 3), (4, 3, 5)]),
    (dnp.dot, [(2, 3), (4, 5)]),
    (dnp.dot, [(2, 3), (4, 2, 5)]),
    (dnp.dot, [(3,), (4,)]),
    (dnp.inner, [(2, 3), (2, 4)]),
    (dnp.vdot, [(2, 3), (5,)]),
    (lambda a, b: dnp.tensordot(a, b, 1), [(2, 3), (4, 5)]),
    (lambda a, b: dnp.tensordot(a, b, ([0], [1])), [(2, 3), (4, 5)]),
    (lambda a, b: dnp.einsum("ij,jk", a, b), [(2, 3), (4, 5)]),
    (lambda a, b: dnp.einsum("...i,...i", a, b), [(2, 3), (4, 3)]),
])
def test_mismatched_shapes_raise_valueerrors_naming_them(call, shapes):
    ops = operands(shapes)
    for f in (call, lambda *xs: dk.jacrev(lambda x: call(x, *xs[1:]))(xs[0])):
        with pytest.raises(ValueError) as info:
            f(*ops)
        message = str(info.value)
        assert str(shapes[0]) in message and str(shapes[1]) in message, message


@pytest.mark.parametrize("subscripts, shapes, fragment", [
    ("ij", [(2, 3, 4)], "dimension"),
    ("ijk", [(2, 3)], "dimension"),
    ("ij,jk", [(2, 3)], "operand"),
    ("i->j", [(3,)], "no input"),
    ("i->ii", [(3,)], "repeated"),
    ("ii", [(2, 3)], "different sizes"),
    ("i-j", [(2, 3)], "invalid subscript"),
    ("i..j", [(2, 3)], "ellipsis"),
    ("...i->i", [(2, 3)], "'...'"),
    ("i->i->i", [(3,)], "'->'"),
])
def test_einsum_subscript_errors(subscripts, shapes, fragment):
    with pytest.raises(ValueError, match=fragment):
        dnp.einsum(subscripts, *operands(shapes))


def test_other_argument_errors():
    with pytest.raises(ValueError, match="0-d"):
        dnp.matmul(rand(3), 2.0)
    with pytest.raises(ValueError, match="axes"):
        dnp.tensordot(rand(2, 3), rand(3, 2), ([0, 1], [0]))
    with pytest.raises(ValueError):
        dnp.tensordot(rand(2, 3), rand(3, 2), 3)
    with pytest.raises(ValueError, match="no operands"):
        dnp.einsum("")


# --- derivatives: jacfwd == jacrev == finite differences ----------------------------------


@pytest.mark.parametrize("sa, sb", MATMUL_SHAPES)
def test_matmul_jacobians(sa, sb):
    check_jacobians(dnp.matmul, operands([sa, sb]))


def test_matmul_jacobians_same_operand_twice():
    x = rand(3, 3)
    check_jacobians(lambda x: x @ x, [x])
    check_jacobians(lambda v: dnp.matmul(v, v), [rand(4)])


@pytest.mark.parametrize("sa, sb", DOT_SHAPES)
def test_dot_jacobians(sa, sb):
    check_jacobians(dnp.dot, operands([sa, sb]))


@pytest.mark.parametrize("sa, sb", INNER_SHAPES)
def test_inner_jacobians(sa, sb):
    check_jacobians(dnp.inner, operands([sa, sb]))


@pytest.mark.parametrize("sa, sb", OUTER_SHAPES)
def test_outer_jacobians(sa, sb):
    check_jacobians(dnp.outer, operands([sa, sb]))


@pytest.mark.parametrize("sa, sb", VDOT_SHAPES)
def test_vdot_jacobians(sa, sb):
    check_jacobians(dnp.vdot, operands([sa, sb]))


@pytest.mark.parametrize("sa, sb, axes", TENSORDOT_CASES)
def test_tensordot_jacobians(sa, sb, axes):
    check_jacobians(lambda a, b: dnp.tensordot(a, b, axes), operands([sa, sb]))


@pytest.mark.parametrize("subscripts, shapes", EINSUM_CASES)
def test_einsum_jacobians(subscripts, shapes):
    check_jacobians(lambda *xs: dnp.einsum(subscripts, *xs), operands(shapes))


def test_einsum_with_the_same_operand_twice():
    x = rand(3, 3)
    check_jacobians(lambda x: dnp.einsum("ij,jk->ik", x, x), [x])
    check_jacobians(lambda x: dnp.einsum("ii,ij->j", x, x), [x])


def test_matmul_size_one_batch_axes_get_summed_cotangents():
    a, b = operands([(1, 2, 3), (5, 3, 4)])
    ct = rand(5, 2, 4, seed=3)
    _, pullback = dk.vjp(dnp.matmul, a, b)
    ga, gb = pullback(ct)
    assert ga.shape == a.shape and gb.shape == b.shape
    np.testing.assert_allclose(ga, np.sum(ct @ np.swapaxes(b, -1, -2), axis=0, keepdims=True),
                               rtol=RTOL)
    np.testing.assert_allclose(gb, np.swapaxes(a, -1, -2) @ ct, rtol=RTOL)


def test_einsum_broadcast_ellipsis_gets_summed_cotangents():
    a, b = operands([(1, 2, 3), (4, 3, 5)])
    ct = rand(4, 2, 5, seed=3)
    _, pullback = dk.vjp(lambda a, b: dnp.einsum("...ij,...jk", a, b), a, b)
    ga, gb = pullback(ct)
    np.testing.assert_allclose(ga, np.einsum("bik,bjk->ij", ct, b)[None], rtol=RTOL)
    np.testing.assert_allclose(gb, np.einsum("ij,bik->bjk", a[0], ct), rtol=RTOL)


@pytest.mark.parametrize("name, shapes", [
    ("matmul", [(2, 3, 0), (0, 4)]),
    ("matmul", [(0, 2, 3), (3, 4)]),
    ("matmul", [(2, 0), (0,)]),
    ("matmul", [(3,), (2, 3, 0)]),
    ("tensordot", [(2, 0), (0, 3)]),
    ("einsum", [(2, 0), (0, 3)]),
    ("einsum", [(0, 0), (0,)]),
])
def test_zero_size_operands(name, shapes):
    extra = {"tensordot": (1,), "einsum": ("ij,jk" if len(shapes[0]) == 2 and shapes[0][0]
                                             else "ii,i->i",)}.get(name, ())
    if name == "einsum":
        f = lambda a, b: dnp.einsum(*extra, a, b)  # noqa: E731
        expected = np.einsum(*extra, np.ones(shapes[0]), np.ones(shapes[1]))
    else:
        f = lambda a, b: getattr(dnp, name)(a, b, *extra)  # noqa: E731
        expected = getattr(np, name)(np.ones(shapes[0]), np.ones(shapes[1]), *extra)
    a, b = (np.ones(s) for s in shapes)
    out = f(a, b)
    assert np.shape(out) == np.shape(expected)
    for i, x in enumerate((a, b)):
        for jac in (dk.jacfwd, dk.jacrev):
            assert jac(f, argnums=i)(a, b).shape == np.shape(out) + x.shape
    assert dk.vmap(f, in_axes=(0, None))(np.stack([a, a]), b).shape == (2,) + np.shape(out)


def test_linearize_replays_matmul_and_einsum():
    a, b, t = operands([(2, 3), (3, 4), (2, 3)])

    def f(x):
        return dnp.einsum("ij,jk->ik", dnp.sin(x), b) @ b.T

    out, f_jvp = dk.linearize(f, a)
    np.testing.assert_allclose(out, np.sin(a) @ b @ b.T, rtol=RTOL)
    np.testing.assert_allclose(f_jvp(t), dk.jvp(f, (a,), (t,))[1], rtol=RTOL)
    np.testing.assert_allclose(f_jvp(t), (np.cos(a) * t) @ b @ b.T, rtol=RTOL)


# --- Hessians ------------------------------------------------------------------------------


def numeric_hessian(f, x, eps=1e-4):
    return numeric_jacobian(lambda y: dk.grad(f)(y), [x], 0, eps)


@pytest.mark.parametrize("f, shape", [
    (lambda x: dnp.sum(dnp.einsum("ij,jk->ik", x, x) ** 2), (3, 3)),
    (lambda x: dnp.sum(dnp.einsum("ij,jk,kl->il", x, x.T, x) ** 2), (2, 3)),
    (lambda x: dnp.sum(dnp.einsum("ii->i", x) ** 3), (3, 3)),
    (lambda x: dnp.einsum("ii", x) ** 2 + dnp.sum(dnp.sin(dnp.einsum("ij->j", x))), (3, 3)),
    (lambda x: dnp.sum(dnp.einsum("...i,...i", x, dnp.sin(x)) ** 2), (2, 3)),
    (lambda x: dnp.sum(dnp.tanh(x @ x.T) @ x), (2, 3)),
    (lambda x: dnp.sum((dnp.reshape(x, (2, 1, 3)) @ dnp.reshape(x, (1, 3, 2))) ** 2), (6,)),
    (lambda v: dnp.vdot(v, dnp.sin(v)) ** 2, (4,)),
    (lambda x: dnp.sum(dnp.tensordot(x, x, ([0], [1])) ** 2), (3, 3)),
    (lambda x: dnp.sum(dnp.outer(x, x) ** 2) + dnp.inner(x, x) ** 2, (4,)),
])
def test_hessians(f, shape):
    x = rand(*shape)
    h = dk.hessian(f)(x)
    assert h.shape == shape + shape
    np.testing.assert_allclose(h, dk.jacrev(dk.jacrev(f))(x), rtol=RTOL, atol=1e-9)
    np.testing.assert_allclose(h, dk.jacfwd(dk.jacfwd(f))(x), rtol=RTOL, atol=1e-9)
    np.testing.assert_allclose(h, np.swapaxes(h.reshape(x.size, x.size), 0, 1)
                               .reshape(shape + shape), rtol=RTOL, atol=1e-9)
    np.testing.assert_allclose(h, numeric_hessian(f, x), rtol=1e-5, atol=1e-5)


def test_hessian_of_matmul_in_both_arguments():
    def f(a, b):
        return dnp.sum(dnp.sin(a @ b) ** 2)

    a, b = operands([(2, 3), (3, 2)])
    for i, j in itertools.product(range(2), repeat=2):
        h = dk.jacfwd(dk.jacrev(f, argnums=i), argnums=j)(a, b)
        np.testing.assert_allclose(h, dk.jacrev(dk.jacrev(f, argnums=i), argnums=j)(a, b),
                                   rtol=RTOL, atol=1e-9)
        np.testing.assert_allclose(
            h, numeric_jacobian(lambda *xs, i=i: dk.grad(f, argnums=i)(*xs), [a, b], j, 1e-5),
            rtol=1e-5, atol=1e-6)


# --- vmap against a Python loop ------------------------------------------------------------


def _vmap_cases(f, shapes):
    """Every combination of mapped/unmapped operands and batch-axis positions."""
    for axes in itertools.product(*[axis_choices(len(s)) for s in shapes]):
        if all(ax is None for ax in axes):
            continue
        args = [rand(*s, seed=i) if ax is None else batched(rand(*s, seed=i), ax, seed=10 * i)
                for i, (s, ax) in enumerate(zip(shapes, axes))]
        check_vmap(f, args, axes)


@pytest.mark.parametrize("sa, sb", MATMUL_SHAPES)
def test_matmul_vmap(sa, sb):
    _vmap_cases(dnp.matmul, [sa, sb])


@pytest.mark.parametrize("sa, sb", MATMUL_SHAPES)
def test_matmul_batching_is_one_matmul(sa, sb, monkeypatch):
    calls = []
    impl = linalg.matmul_p.impl
    monkeypatch.setattr(linalg.matmul_p, "impl", lambda a, b: calls.append(1) or impl(a, b))
    for axes in [(0, None), (None, 0), (0, 0), (len(sa), len(sb))]:
        args = [batched(rand(*s), ax) if ax is not None else rand(*s)
                for s, ax in zip((sa, sb), axes)]
        calls.clear()
        dk.vmap(dnp.matmul, in_axes=axes)(*args)
        assert len(calls) == 1


@pytest.mark.parametrize("sa, sb", DOT_SHAPES)
def test_dot_vmap(sa, sb):
    _vmap_cases(dnp.dot, [sa, sb])


@pytest.mark.parametrize("f, sa, sb", [(dnp.inner, sa, sb) for sa, sb in INNER_SHAPES[:5]]
                         + [(dnp.outer, sa, sb) for sa, sb in OUTER_SHAPES[:3]]
                         + [(dnp.vdot, sa, sb) for sa, sb in VDOT_SHAPES])
def test_inner_outer_vdot_vmap(f, sa, sb):
    _vmap_cases(f, [sa, sb])


@pytest.mark.parametrize("sa, sb, axes", TENSORDOT_CASES[:6])
def test_tensordot_vmap(sa, sb, axes):
    _vmap_cases(lambda a, b: dnp.tensordot(a, b, axes), [sa, sb])


@pytest.mark.parametrize("subscripts, shapes", [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("ij->", [(2, 3)]),
    ("i,j->", [(3,), (2,)]),
    ("ii,i->i", [(3, 3), (3,)]),
    ("...ij,...jk", [(1, 2, 3), (4, 3, 2)]),
    ("...i,...i", [(2, 3), (3,)]),
    ("ij,jk,kl->il", [(2, 3), (3, 2), (2, 2)]),
    ("ij,ij->ij", [(1, 3), (2, 3)]),
])
def test_einsum_vmap(subscripts, shapes):
    _vmap_cases(lambda *xs: dnp.einsum(subscripts, *xs), shapes)


@pytest.mark.parametrize("f, shapes", [
    (lambda a, b: dnp.sum(dnp.sin(a @ b)), [(2, 3), (3, 4)]),
    (lambda a, b: dnp.sum(dnp.sin(a @ b)), [(3,), (2, 3, 4)]),
    (lambda a, b: dnp.sum(dnp.sin(a @ b)), [(1, 2, 3), (3, 4)]),
    (lambda a, b: dnp.sum(dnp.einsum("ii,ij->j", a, b) ** 2), [(3, 3), (3, 2)]),
    (lambda a, b: dnp.sum(dnp.einsum("ij,k->i", a, b) ** 2), [(2, 3), (4,)]),
    (lambda a, b: dnp.sum(dnp.tensordot(a, b, 1) ** 2), [(2, 3), (3, 4)]),
])
def test_vmap_of_grad_and_of_jvp(f, shapes):
    """Batching the VJP and JVP rules themselves (per-example gradients)."""
    for argnum, axes in itertools.product(range(2), [(0, None), (None, 0), (0, 1)]):
        args = [rand(*s, seed=i) if ax is None else batched(rand(*s, seed=i), ax, seed=5 * i)
                for i, (s, ax) in enumerate(zip(shapes, axes))]
        check_vmap(dk.grad(f, argnums=argnum), args, axes)
        tangent = rand(*shapes[argnum], seed=99)

        def directional(*xs, argnum=argnum, tangent=tangent):
            tangents = tuple(tangent if i == argnum else dnp.zeros_like(x)
                             for i, x in enumerate(xs))
            return dk.jvp(f, xs, tangents)[1]

        check_vmap(directional, args, axes)


def test_nested_vmap_of_matmul_and_einsum():
    a = rand(2, 3, 4, 5)
    b = rand(3, 5, 2)
    f = dk.vmap(dk.vmap(dnp.matmul, in_axes=(0, 0)), in_axes=(0, None))
    np.testing.assert_allclose(f(a, b), a @ b, rtol=RTOL)
    g = dk.vmap(dk.vmap(lambda x, y: dnp.einsum("ij,jk->ik", x, y), in_axes=(1, None)),
                in_axes=(None, 0))
    got = g(rand(4, 3, 5), b)
    np.testing.assert_allclose(got, np.einsum("iaj,bjk->baik", rand(4, 3, 5), b), rtol=RTOL)


# --- only the needed cotangents are computed -------------------------------------------------


def test_reverse_mode_computes_only_the_needed_cotangents(monkeypatch):
    counts = {"matmul": 0, "einsum": 0}
    for name in counts:
        prim = getattr(linalg, f"{name}_p")
        monkeypatch.setattr(prim, "impl",
                            lambda *xs, _impl=prim.impl, _name=name, **kw:
                            counts.__setitem__(_name, counts[_name] + 1) or _impl(*xs, **kw))
    a, w = operands([(4, 3), (3, 2)])
    dk.grad(lambda a: dnp.sum(a @ w))(a)
    assert counts["matmul"] == 2  # forward, and the cotangent of a only
    dk.grad(lambda a, w: dnp.sum(a @ w), argnums=(0, 1))(a, w)
    assert counts["matmul"] == 2 + 3
    dk.grad(lambda a: dnp.sum(dnp.einsum("ij,jk->ik", a, w)))(a)
    assert counts["einsum"] == 2


# --- float32 stays float32 -----------------------------------------------------------------


@pytest.mark.parametrize("f, shapes", [
    (dnp.matmul, [(2, 3), (3, 4)]),
    (dnp.matmul, [(3,), (2, 3, 4)]),
    (dnp.matmul, [(1, 2, 3), (3, 5)]),
    (lambda a, b: dnp.einsum("ij,jk->ik", a, b), [(2, 3), (3, 4)]),
    (lambda a, b: dnp.einsum("ii,i->i", a, b), [(3, 3), (3,)]),
    (lambda a, b: dnp.einsum("...i,...i", a, b), [(2, 3), (3,)]),
    (lambda a, b: dnp.tensordot(a, b, 1), [(2, 3), (3, 4)]),
    (dnp.dot, [(4, 2, 3), (5, 3, 2)]),
    (dnp.outer, [(2,), (3,)]),
    (dnp.inner, [(2, 3), (3,)]),
    (dnp.vdot, [(2, 3), (6,)]),
])
def test_float32_inputs_keep_float32_derivatives(f, shapes):
    a, b = [rand(*s, seed=i, dtype=np.float32) for i, s in enumerate(shapes)]
    assert np.asarray(f(a, b)).dtype == np.float32
    for i in range(2):
        assert dk.jacfwd(f, argnums=i)(a, b).dtype == np.float32
        assert dk.jacrev(f, argnums=i)(a, b).dtype == np.float32
        assert dk.grad(lambda *xs, i=i: dnp.sum(f(*xs) ** 2), argnums=i)(a, b).dtype \
            == np.float32
    assert dk.hessian(lambda x: dnp.sum(f(x, b) ** 2))(a).dtype == np.float32
    assert dk.vmap(f, in_axes=(0, None))(np.stack([a, a]), b).dtype == np.float32
    np.testing.assert_allclose(dk.jacrev(f)(a, b), dk.jacfwd(f)(a, b), rtol=1e-5, atol=1e-6)


# --- hypothesis: random shapes and random subscripts -----------------------------------------


@st.composite
def matmul_shapes(draw):
    k, m, n = (draw(st.integers(1, 3)) for _ in range(3))
    batch = draw(st.lists(st.integers(1, 3), max_size=2))

    def batch_of_rank():
        rank = draw(st.integers(0, len(batch)))
        dims = batch[len(batch) - rank:]
        return tuple(d if draw(st.booleans()) else 1 for d in dims)

    a = (k,) if draw(st.booleans()) else batch_of_rank() + (m, k)
    b = (k,) if draw(st.booleans()) else batch_of_rank() + (k, n)
    return a, b


@settings(max_examples=60, deadline=None)
@given(matmul_shapes(), st.integers(0, 2**16))
def test_matmul_random_shapes(shapes, seed):
    a, b = operands(shapes, seed)
    np.testing.assert_allclose(dnp.matmul(a, b), np.matmul(a, b), rtol=RTOL)
    check_jacobians(dnp.matmul, [a, b])
    check_vmap(dnp.matmul, [batched(a, 0), b], (0, None))
    check_vmap(dnp.matmul, [a, batched(b, b.ndim)], (None, b.ndim))
    check_vmap(dnp.matmul, [batched(a, a.ndim), batched(b, 0)], (a.ndim, 0))


@st.composite
def einsum_problems(draw):
    """Random subscripts: 1-3 operands over the labels 'abcd' (repeats allowed), an
    optional ellipsis, broadcasting size-1 axes, implicit or explicit output."""
    sizes = {c: draw(st.integers(1, 3)) for c in "abcd"}
    n_ops = draw(st.integers(1, 3))
    ellipsis = draw(st.lists(st.integers(1, 3), max_size=2)) if draw(st.booleans()) else None
    terms, shapes = [], []
    for _ in range(n_ops):
        labels = draw(st.lists(st.sampled_from("abcd"), max_size=3))
        dims = [sizes[c] if labels.count(c) > 1 or draw(st.integers(0, 4)) else 1
                for c in labels]
        term = "".join(labels)
        if ellipsis is not None and draw(st.booleans()):
            rank = draw(st.integers(0, len(ellipsis)))
            ell = [d if draw(st.integers(0, 3)) else 1 for d in ellipsis[len(ellipsis) - rank:]]
            at = draw(st.integers(0, len(labels)))
            term = term[:at] + "..." + term[at:]
            dims = dims[:at] + ell + dims[at:]
        terms.append(term)
        shapes.append(tuple(dims))
    subscripts = ",".join(terms)
    if draw(st.booleans()):
        used = sorted(set("".join(terms).replace(".", "")))
        out = draw(st.permutations(used))[:draw(st.integers(0, len(used)))]
        out = "".join(out)
        if "..." in subscripts:
            at = draw(st.integers(0, len(out)))
            out = out[:at] + "..." + out[at:]
        subscripts += "->" + out
    return subscripts, shapes


@settings(max_examples=80, deadline=None)
@given(einsum_problems(), st.integers(0, 2**16))
def test_einsum_random_subscripts(problem, seed):
    subscripts, shapes = problem
    ops = operands(shapes, seed)
    expected = np.einsum(subscripts, *ops)
    got = dnp.einsum(subscripts, *ops)
    assert np.shape(got) == np.shape(expected)
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)
    f = lambda *xs: dnp.einsum(subscripts, *xs)  # noqa: E731
    check_jacobians(f, ops)
    check_vmap(f, [batched(ops[0], 0)] + ops[1:], (0,) + (None,) * (len(ops) - 1))
    check_vmap(f, [batched(x, x.ndim) for x in ops], tuple(x.ndim for x in ops))
