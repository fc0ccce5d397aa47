"""The shared helpers of ``diffkit.core.zeros`` that the ops, the SciPy namespace and the
testing tools all use: ``as_array`` and ``sequence_as_array`` (array-likes as the ops read
them), ``is_complex``, and ``add_tangents`` (the product rule's sum over the nonzero
tangents). Values are checked against closed forms (rtol 1e-7) and NumPy itself."""

import numpy as np
import pytest

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.core.zeros import Zero, add_tangents, as_array, is_complex, sequence_as_array

RNG = np.random.default_rng(11)

# --- as_array ---------------------------------------------------------------------------


class _ComputedShape:
    """An array-like whose ``shape`` is computed on each read, as a tracer's is."""

    reads = 0

    @property
    def shape(self):
        type(self).reads += 1
        return (2,)

    dtype = np.dtype(np.float64)


def test_as_array_asks_the_type_so_a_computed_shape_is_not_read():
    x = _ComputedShape()
    _ComputedShape.reads = 0
    assert as_array(x) is x
    assert _ComputedShape.reads == 0


@pytest.mark.parametrize("value", [np.arange(3.0), np.float64(2.5), np.int32(3),
                                   np.ma.masked_array([1.0, 2.0], mask=[0, 1])])
def test_as_array_keeps_arrays_subclasses_and_numpy_scalars(value):
    assert as_array(value) is value


@pytest.mark.parametrize("value", [[1.0, 2.0], (1, 2, 3), 2.5, 3, 1j, [[True], [False]]])
def test_as_array_reads_lists_and_python_scalars_as_numpy_does(value):
    got = as_array(value)
    expected = np.asarray(value)
    assert type(got) is np.ndarray and got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


def test_as_array_keeps_a_tracer():
    seen = []

    def f(x):
        seen.append(as_array(x) is x)
        return dnp.sum(x * x)

    np.testing.assert_allclose(dk.grad(f)(np.array([1.0, -2.0])), [2.0, -4.0], rtol=1e-7)
    assert seen == [True]


def test_sequence_as_array_converts_lists_only():
    np.testing.assert_array_equal(sequence_as_array([1.0, 2.0]), np.array([1.0, 2.0]))
    assert type(sequence_as_array((1, 2))) is np.ndarray
    assert sequence_as_array(2.0) == 2.0 and type(sequence_as_array(2.0)) is float
    array = np.arange(2.0)
    assert sequence_as_array(array) is array
    # the functions built on it give a scalar back as NumPy does
    assert dnp.real(2.0) == np.real(2.0) and type(dnp.real(2.0)) is type(np.real(2.0))


@pytest.mark.parametrize("value, expected", [(np.ones(2, np.complex64), True), (1j, True),
                                             (np.ones(2), False), (3, False), (2.5, False)])
def test_is_complex(value, expected):
    assert is_complex(value) is expected


# --- add_tangents -------------------------------------------------------------------------


def test_add_tangents_skips_symbolic_zeros_and_sums_in_argument_order():
    calls = []

    def term(i, t):
        calls.append(i)
        return t * (i + 1.0)

    tangents = [np.array([1.0, 2.0]), Zero((2,), np.float64), None, np.array([3.0, -1.0])]
    np.testing.assert_allclose(add_tangents(tangents, term), [1.0 + 12.0, 2.0 - 4.0],
                               rtol=1e-7)
    assert calls == [0, 3]  # never called on a zero


def test_add_tangents_of_only_zeros_is_a_zero_tangent():
    def term(i, t):
        raise AssertionError("called on a zero tangent")

    assert add_tangents([Zero((3,), np.float64), None], term) is None


def test_product_rule_of_matmul_with_both_tangents():
    a, b = RNG.normal(size=(3, 4)), RNG.normal(size=(4, 2))
    da, db = RNG.normal(size=(3, 4)), RNG.normal(size=(4, 2))
    out, tangent = dk.jvp(lambda x, y: x @ y, (a, b), (da, db))
    np.testing.assert_allclose(out, a @ b, rtol=1e-7)
    np.testing.assert_allclose(tangent, da @ b + a @ db, rtol=1e-7)


def test_product_rule_of_a_three_operand_einsum():
    x, y, z = RNG.normal(size=3), RNG.normal(size=(3, 4)), RNG.normal(size=4)
    dx, dy, dz = RNG.normal(size=3), RNG.normal(size=(3, 4)), RNG.normal(size=4)
    _, tangent = dk.jvp(lambda p, q, r: dnp.einsum("i,ij,j->", p, q, r), (x, y, z),
                        (dx, dy, dz))
    expected = dx @ y @ z + x @ dy @ z + x @ y @ dz
    np.testing.assert_allclose(tangent, expected, rtol=1e-7)


def test_product_rule_of_convolve_matches_the_closed_form_and_jacrev():
    a, v = RNG.normal(size=5), RNG.normal(size=3)
    da, dv = RNG.normal(size=5), RNG.normal(size=3)
    _, tangent = dk.jvp(lambda p, q: dnp.convolve(p, q), (a, v), (da, dv))
    np.testing.assert_allclose(tangent, np.convolve(da, v) + np.convolve(a, dv), rtol=1e-7)

    def joined(w):
        return dnp.convolve(w[:5], w[5:])

    w = np.concatenate([a, v])
    forward, reverse = dk.jacfwd(joined)(w), dk.jacrev(joined)(w)
    np.testing.assert_array_equal(forward, reverse)
