"""The jet rules of Taylor arithmetic (diffkit.ops.taylor_arithmetic) against the two
references that do not use them:

- the fallback of Taylor mode, ``taylor_from_jvp``, from the primitive's JVP rule, with
  every jet rule switched off (``fallback_only``): called on exactly the values, series and
  parameters each rule was called with (recorded during a ``jet_flat`` run);
- nested ``dk.jvp`` of ``t -> fun(x(t))`` along the curve ``x(t) = x_0 + Σ x_k t^k``:
  the k-th derivative at 0 over k! (orders up to 6; the fallback alone at 8).

Cases are generated: points in each function's domain, shapes (broadcasting ones for the
functions of several arguments), series with symbolic ``Zero`` coefficients between
nonzero ones, constant arguments (no series), float32 and complex values. Coefficients are
compared normwise: within ``rtol`` times the largest entry of the output's series
(value included), rtol 1e-7 in float64 and 2e-4 in float32 (the rounding of ~K² float32
products; the nested references run in float64). Output coefficients must have the
output's shape and, for float32, stay float32.
"""

import contextlib
import math
from typing import NamedTuple

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import diffkit as dk
import diffkit.numpy as dnp
import diffkit.scipy.special as dsp
from diffkit.core.primitive import PRIMITIVES
from diffkit.core.zeros import Zero, instantiate
from diffkit.interpreters.taylor import jet_flat, taylor_from_jvp
from diffkit.ops.elementwise import astype
from diffkit.ops.indexing import ARRAY, scatter_add_p

RTOL = {np.dtype(np.float64): 1e-7, np.dtype(np.complex128): 1e-7,
        np.dtype(np.float32): 2e-4, np.dtype(np.complex64): 2e-4}


# --- the references -------------------------------------------------------------------------


@contextlib.contextmanager
def fallback_only():
    """Every primitive without its jet rule: Taylor mode runs on the JVP rules alone."""
    saved = {name: prim.jet for name, prim in PRIMITIVES.items()}
    try:
        for prim in PRIMITIVES.values():
            prim.jet = None
        yield
    finally:
        for name, rule in saved.items():
            PRIMITIVES[name].jet = rule


@contextlib.contextmanager
def recorded(name):
    """The calls of primitive ``name``'s jet rule: ``(primals, series, params, result)``."""
    prim = PRIMITIVES[name]
    rule = prim.jet
    assert rule is not None, f"{name} has no jet rule"
    calls = []

    def spy(primals, series, **params):
        result = rule(primals, series, **params)
        calls.append((primals, series, params, result))
        return result

    prim.jet = spy
    try:
        yield calls
    finally:
        prim.jet = rule


def fallback(name, primals, series, params):
    prim = PRIMITIVES[name]
    with fallback_only():
        return taylor_from_jvp(lambda p, t: prim.jvp(p, t, **params), list(primals),
                               list(series), len(series[0]), prim.multiple_results)


def nested_jvp(fun, primals, series):
    """The Taylor coefficients 1..K of ``fun(x(t))`` at 0 by nested forward mode: all
    derivatives from one call of depth K (each level carries the lower ones)."""
    order = len(series[0])

    def curve(t):
        xs = []
        for x0, coefficients in zip(primals, series):
            poly = None   # Horner: x_0 + t (x_1 + t (x_2 + ...)), zero terms skipped
            for c in reversed(coefficients):
                term = None if type(c) is Zero else c
                if poly is not None:
                    poly = poly * t if term is None else term + poly * t
                else:
                    poly = term
            xs.append(x0 if poly is None else x0 + poly * t)
        return xs

    def level0(t):
        return (fun(*curve(t)),)

    levels = [level0]
    for _ in range(order):
        previous = levels[-1]

        def next_level(t, previous=previous):
            values, tangents = dk.jvp(previous, (t,), (1.0,))
            return (*values, tangents[-1])
        levels.append(next_level)
    derivatives = levels[-1](0.0)
    return [np.asarray(d) / math.factorial(k) for k, d in enumerate(derivatives)][1:]


def assert_series_close(got, want, value, rtol, what):
    """Each coefficient of ``got`` within ``rtol`` times the largest entry of the series
    ``want`` (and of the value) of ``want``'s."""
    got = [np.asarray(instantiate(c)) for c in got]
    want = [np.asarray(instantiate(c)) for c in want]
    scale = max([float(np.max(np.abs(w), initial=0.0)) for w in want]
                + [float(np.max(np.abs(np.asarray(value)), initial=0.0))])
    for k, (g, w) in enumerate(zip(got, want), start=1):
        assert g.shape == w.shape, f"{what}: coefficient {k} has shape {g.shape}, not {w.shape}"
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * scale, equal_nan=True,
                                   err_msg=f"{what}: coefficient {k}")


# --- generated inputs ------------------------------------------------------------------------


def _floats(low, high):
    return st.floats(low, high, allow_nan=False, allow_infinity=False)


def real_values(low, high, signed=False):
    """A maker of arrays with entries in [low, high] (also [-high, -low] if ``signed``)."""
    elements = _floats(low, high)
    if signed:
        elements = st.one_of(elements, _floats(-high, -low))

    def make(draw, shape, dtype):
        return draw(hnp.arrays(np.float64, shape, elements=elements)).astype(dtype)
    return make


def complex_values(low, high, imaginary=0.5):
    """Complex entries: real part in [low, high], imaginary part in [-imaginary, imaginary]."""
    def make(draw, shape, dtype):
        re = draw(hnp.arrays(np.float64, shape, elements=_floats(low, high)))
        im = draw(hnp.arrays(np.float64, shape, elements=_floats(-imaginary, imaginary)))
        return (re + 1j * im).astype(dtype)
    return make


def draw_coefficient(draw, shape, dtype):
    c = draw(hnp.arrays(np.float64, shape, elements=_floats(-1, 1)))
    if dtype.kind == "c":
        c = c + 1j * draw(hnp.arrays(np.float64, shape, elements=_floats(-1, 1)))
    return c.astype(dtype)


def draw_series(draw, value, order, nonzero_first=False):
    """K coefficients shaped like ``value``: each a ``Zero`` about a third of the time
    (not the first with ``nonzero_first``)."""
    dtype = np.asarray(value).dtype
    shape = np.shape(value)
    coefficients = []
    for k in range(order):
        if draw(st.integers(0, 2)) == 0 and not (nonzero_first and k == 0):
            coefficients.append(Zero(shape, dtype))
        else:
            coefficients.append(draw_coefficient(draw, shape, dtype))
    return tuple(coefficients)


def draw_all_series(draw, args, moving, order):
    """The series of the moving arguments, at least one coefficient nonzero."""
    series = [draw_series(draw, args[i], order) for i in moving]
    if all(type(c) is Zero for s in series for c in s):
        series[0] = draw_series(draw, args[moving[0]], order, nonzero_first=True)
    return series


class Case(NamedTuple):
    """Primitive ``prim``'s rule, run by ``fun(*args)``; ``args(draw, dtype)`` gives the
    arguments and the positions of those that may move (the others are values: indices,
    conditions); ``dtypes`` the dtypes to try."""

    prim: str
    fun: object
    args: object
    dtypes: tuple = (np.float64, np.float32)


SHAPES = hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3)


def unary(prim, fun, values, complex_ok=False):
    def args(draw, dtype):
        return [values(draw, draw(SHAPES), dtype)], (0,)
    dtypes = (np.float64, np.float32) + ((np.complex128,) if complex_ok else ())
    return Case(prim, fun, args, dtypes)


def complex_unary(prim, fun, low, high, imaginary=0.5):
    """A holomorphic function at complex points (the real ones are the ``unary`` case)."""
    values = complex_values(low, high, imaginary)

    def args(draw, dtype):
        return [values(draw, draw(SHAPES), dtype)], (0,)
    return Case(prim, fun, args, (np.complex128,))


def binary(prim, fun, x_values, y_values, complex_ok=False):
    """Two broadcasting arguments."""
    def args(draw, dtype):
        shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2,
                                                        max_side=3)).input_shapes
        return [x_values(draw, shapes[0], dtype), y_values(draw, shapes[1], dtype)], (0, 1)
    dtypes = (np.float64, np.float32) + ((np.complex128,) if complex_ok else ())
    return Case(prim, fun, args, dtypes)


def shaped(prim, fun, make_args, dtypes=(np.float64, np.float32)):
    return Case(prim, fun, make_args, dtypes)


WIDE = real_values(-1.5, 1.5)
POSITIVE = real_values(0.3, 2.5)
AWAY_FROM_ZERO = real_values(0.3, 2.5, signed=True)
INSIDE_UNIT = real_values(-0.7, 0.7)
ANY = real_values(-2, 2)


def _power_args(draw, dtype):
    exponent = draw(st.sampled_from([2, 3, -1, 0.5, -1.5, 2.5, 1 / 3, 0, 1, 4]))
    signed = float(exponent).is_integer()
    x = real_values(0.3, 2.0, signed=signed)(draw, draw(SHAPES), dtype)
    return [x, exponent], (0,)


def _power_fun(x, exponent):
    return x ** exponent


def _moving_exponent_args(draw, dtype):
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2,
                                                    max_side=3)).input_shapes
    if draw(st.booleans()):   # a positive base: exp(y log x)
        x = POSITIVE(draw, shapes[0], dtype)
        y = ANY(draw, shapes[1], dtype)
    else:   # any sign, whole exponents: the exponent held where x <= 0, as the JVP does
        x = real_values(0.3, 2.0, signed=True)(draw, shapes[0], dtype)
        y = draw(hnp.arrays(np.float64, shapes[1], elements=st.sampled_from(
            [1.0, 2.0, 3.0, -1.0]))).astype(dtype)
    return [x, y], (0, 1)


def _where_args(draw, dtype):
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=2,
                                                    max_side=3)).input_shapes
    condition = draw(hnp.arrays(np.bool_, shapes[0]))
    return [condition, ANY(draw, shapes[1], dtype), ANY(draw, shapes[2], dtype)], (1, 2)


def _matmul_args(draw, dtype):
    n, k, m = (draw(st.integers(1, 3)) for _ in range(3))
    pair = draw(st.sampled_from([((n, k), (k, m)), ((k,), (k, m)), ((n, k), (k,)),
                                 ((2, n, k), (k, m)), ((1, n, k), (2, k, m))]))
    return [ANY(draw, pair[0], dtype), ANY(draw, pair[1], dtype)], (0, 1)


EINSUMS = {"ij,jk->ik": ((2, 3), (3, 2)), "ij,ij->i": ((2, 3), (2, 3)),
           "i,i,i->": ((3,), (3,), (3,)), "ij,j,jk->ik": ((2, 3), (3,), (3, 2)),
           "ii->i": ((3, 3),)}


def _einsum_args(draw, dtype):
    subscripts = draw(st.sampled_from(sorted(EINSUMS)))
    operands = [ANY(draw, s, dtype) for s in EINSUMS[subscripts]]
    return [subscripts, *operands], tuple(range(1, len(operands) + 1))


def _einsum_fun(subscripts, *operands):
    return dnp.einsum(subscripts, *operands)


def _convolve_args(draw, dtype):
    a = ANY(draw, (draw(st.integers(1, 4)),), dtype)
    v = ANY(draw, (draw(st.integers(1, 4)),), dtype)
    return [a, v, draw(st.sampled_from(["full", "same", "valid"]))], (0, 1)


def _one_array(values=ANY, min_dims=1):
    def args(draw, dtype):
        shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=3, min_side=1, max_side=3))
        return [values(draw, shape, dtype)], (0,)
    return args


def _sum_fun(x):
    return dnp.sum(x, axis=0)


def _reshape_fun(x):
    return dnp.reshape(x, (-1,)) if x.ndim != 1 else dnp.reshape(x, (1, -1))


def _broadcast_fun(x):
    return dnp.broadcast_to(x, (2,) + x.shape)


def _concatenate_args(draw, dtype):
    rows = [draw(st.integers(1, 3)) for _ in range(draw(st.integers(2, 3)))]
    width = draw(st.integers(1, 3))
    return [ANY(draw, (r, width), dtype) for r in rows], tuple(range(len(rows)))


def _concatenate_fun(*xs):
    return dnp.concatenate(xs, axis=0)


def _getitem_fun(x):
    return x[1:, np.array([0, 2, 0])] if x.shape[1:] == (3,) else x[::-1]


def _getitem_args(draw, dtype):
    shape = draw(st.sampled_from([(3, 3), (2, 3), (3,), (2, 2)]))
    return [ANY(draw, shape, dtype)], (0,)


def _scatter_fun(v):
    return scatter_add_p(v, np.array([0, 2, 0]), shape=(4,), spec=(ARRAY,))


def _scatter_args(draw, dtype):
    return [ANY(draw, (3,), dtype)], (0,)


def _split_fun(x):
    return dnp.split(x, [1], axis=0)[1]


def _split_args(draw, dtype):
    return [ANY(draw, (draw(st.integers(2, 4)), 2), dtype)], (0,)


def _astype_args(draw, dtype):
    target = draw(st.sampled_from([t for t in (np.float32, np.float64, np.complex128,
                                               np.int64) if np.dtype(t) != dtype]))
    return [ANY(draw, draw(SHAPES), dtype), target], (0,)


def _radian_args(draw, dtype):
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=2,
                                                    max_side=3)).input_shapes
    return [ANY(draw, s, dtype) for s in shapes], (0, 1, 2)


def _complex_args(draw, dtype):
    return [complex_values(-2, 2, 2)(draw, draw(SHAPES), dtype)], (0,)


def _complex_vector_args(draw, dtype):
    return [complex_values(-2, 2, 2)(draw, (draw(st.integers(1, 4)),), dtype)], (0,)


CASES = [
    # linear
    binary("add", lambda x, y: x + y, ANY, ANY, complex_ok=True),
    binary("subtract", lambda x, y: x - y, ANY, ANY, complex_ok=True),
    unary("negative", lambda x: -x, ANY, complex_ok=True),
    unary("deg2rad", dnp.deg2rad, ANY),
    unary("rad2deg", dnp.rad2deg, ANY),
    unary("modf_fraction", lambda x: dnp.modf(x)[0], real_values(0.1, 0.9, signed=True)),
    binary("nextafter", dnp.nextafter, ANY, ANY),
    shaped("radian", dsp.radian, _radian_args),
    unary("gammasgn", dsp.gammasgn, real_values(0.2, 2.5, signed=True)),
    shaped("sum", _sum_fun, _one_array()),
    shaped("cumsum", lambda x: dnp.cumsum(x, axis=-1), _one_array()),
    shaped("reshape", _reshape_fun, _one_array()),
    shaped("transpose", lambda x: dnp.transpose(x), _one_array(min_dims=2)),
    shaped("broadcast_to", _broadcast_fun, _one_array(min_dims=0)),
    shaped("concatenate", _concatenate_fun, _concatenate_args),
    shaped("getitem", _getitem_fun, _getitem_args),
    shaped("scatter_add", _scatter_fun, _scatter_args),
    shaped("split", _split_fun, _split_args),
    shaped("astype", astype, _astype_args, (np.float64, np.float32, np.complex128)),
    shaped("where", dnp.where, _where_args),
    shaped("real", dnp.real, _complex_args, (np.complex128,)),
    shaped("imag", dnp.imag, _complex_args, (np.complex128,)),
    shaped("conj", dnp.conj, _complex_args, (np.complex128,)),
    shaped("fft", lambda x: dnp.fft.fft(x), _one_array(), (np.complex128, np.float64)),
    shaped("rfft", lambda x: dnp.fft.rfft(x), _one_array()),
    shaped("irfft", lambda x: dnp.fft.irfft(x, n=4), _complex_vector_args, (np.complex128,)),
    # products and quotients
    binary("multiply", lambda x, y: x * y, ANY, ANY, complex_ok=True),
    unary("multiply", lambda x: x * x, ANY, complex_ok=True),   # x * x: squared
    binary("divide", lambda x, y: x / y, ANY, AWAY_FROM_ZERO, complex_ok=True),
    shaped("matmul", lambda a, b: a @ b, _matmul_args),
    shaped("einsum", _einsum_fun, _einsum_args),
    shaped("convolve", dnp.convolve, _convolve_args),
    # elementwise recurrences
    unary("exp", dnp.exp, WIDE, complex_ok=True),
    unary("expm1", dnp.expm1, WIDE, complex_ok=True),
    unary("exp2", dnp.exp2, WIDE),
    unary("log", dnp.log, POSITIVE),
    complex_unary("log", dnp.log, 0.3, 2.5, 2.0),
    unary("log1p", dnp.log1p, real_values(-0.6, 2.0)),
    unary("log2", dnp.log2, POSITIVE),
    unary("log10", dnp.log10, POSITIVE),
    unary("sin", dnp.sin, WIDE, complex_ok=True),
    unary("cos", dnp.cos, WIDE, complex_ok=True),
    unary("tan", dnp.tan, real_values(-1.2, 1.2), complex_ok=True),
    unary("sinh", dnp.sinh, WIDE, complex_ok=True),
    unary("cosh", dnp.cosh, WIDE, complex_ok=True),
    unary("tanh", dnp.tanh, WIDE, complex_ok=True),
    unary("expit", dsp.expit, real_values(-3, 3)),
    unary("sqrt", dnp.sqrt, POSITIVE),
    complex_unary("sqrt", dnp.sqrt, 0.3, 2.5, 2.0),
    unary("cbrt", dnp.cbrt, AWAY_FROM_ZERO),
    unary("square", dnp.square, ANY, complex_ok=True),
    unary("reciprocal", dnp.reciprocal, AWAY_FROM_ZERO, complex_ok=True),
    shaped("scalar_power", _power_fun, _power_args),
    binary("power", dnp.power, POSITIVE, ANY),    # the exponent moving or constant
    shaped("power", dnp.power, _moving_exponent_args),
    unary("arctan", dnp.arctan, WIDE, complex_ok=True),
    unary("arcsin", dnp.arcsin, INSIDE_UNIT),
    complex_unary("arcsin", dnp.arcsin, -0.6, 0.6),
    unary("arccos", dnp.arccos, INSIDE_UNIT),
    unary("arcsinh", dnp.arcsinh, WIDE),
    complex_unary("arcsinh", dnp.arcsinh, -1.0, 1.0),
    unary("arccosh", dnp.arccosh, real_values(1.3, 3.0)),
    complex_unary("arccosh", dnp.arccosh, 1.3, 3.0, 1.0),
    unary("arctanh", dnp.arctanh, INSIDE_UNIT),
    unary("erf", dsp.erf, WIDE),
    unary("erfc", dsp.erfc, WIDE),
    unary("erfi", dsp.erfi, WIDE),
]


def _case_id(case):
    return f"{case.prim}-{getattr(case.fun, '__name__', 'fun')}"


def draw_inputs(data, case, max_order=6):
    dtype = np.dtype(data.draw(st.sampled_from(case.dtypes)))
    args, movable = case.args(data.draw, dtype)
    order = data.draw(st.integers(1, max_order))
    moving = [i for i in movable if data.draw(st.integers(0, 3)) > 0]
    if not moving:
        moving = [movable[0]]
    return dtype, args, moving, order


def run_recorded(case, args, moving, series):
    """``jet_flat`` of ``case.fun`` in the moving arguments, recording its rule's calls."""
    def fun(*moving_values):
        full = list(args)
        for i, v in zip(moving, moving_values):
            full[i] = v
        return [case.fun(*full)]
    with recorded(case.prim) as calls:
        outs, out_series = jet_flat(fun, [args[i] for i in moving], series, len(series[0]))
    return outs[0], out_series[0], calls


def check_calls(case, calls, dtype):
    assert calls, f"the rule of {case.prim} did not run"
    rtol = RTOL[dtype]
    for primals, series, params, result in calls:
        if result is NotImplemented:   # declined: the fallback itself answers
            continue
        out, series_out = result
        want_out, want = fallback(case.prim, primals, series, params)
        outs = out if PRIMITIVES[case.prim].multiple_results else [out]
        wants = want if PRIMITIVES[case.prim].multiple_results else [want]
        gots = series_out if PRIMITIVES[case.prim].multiple_results else [series_out]
        for o, g, w in zip(outs, gots, wants):
            assert len(g) == len(series[0])
            for c in g:   # the output's shape; float32 stays float32
                assert tuple(np.shape(c)) == tuple(np.shape(o))
                if np.asarray(o).dtype == np.float32:
                    assert np.asarray(instantiate(c)).dtype == np.float32
            assert_series_close(g, w, o, rtol, f"{case.prim} rule vs fallback")


_SETTINGS = settings(max_examples=10, deadline=None, derandomize=True,
                     suppress_health_check=[HealthCheck.too_slow,
                                            HealthCheck.data_too_large])


@pytest.mark.parametrize("case", CASES, ids=_case_id)
@given(data=st.data())
@_SETTINGS
def test_rule_equals_fallback_and_nested_jvp(case, data):
    dtype, args, moving, order = draw_inputs(data, case)
    series = draw_all_series(data.draw, args, moving, order)
    out, got, calls = run_recorded(case, args, moving, series)
    check_calls(case, calls, dtype)
    want = nested_jvp(lambda *values: case.fun(*[
        values[moving.index(i)] if i in moving else a for i, a in enumerate(args)]),
        [args[i] for i in moving], series)
    assert_series_close(got, want, out, RTOL[dtype], f"{case.prim} jet vs nested jvp")


@pytest.mark.parametrize("case", [c for c in CASES if c.prim in (
    "multiply", "divide", "exp", "sin", "log", "scalar_power", "tanh", "matmul", "getitem")],
    ids=_case_id)
@given(data=st.data())
@settings(max_examples=2, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
def test_order_8_equals_fallback(case, data):
    dtype, args, moving, _ = draw_inputs(data, case)
    series = draw_all_series(data.draw, args, moving, 8)
    _, _, calls = run_recorded(case, args, moving, series)
    check_calls(case, calls, dtype)


def test_every_rule_is_tested():
    with_rules = {name for name, prim in PRIMITIVES.items() if prim.jet is not None}
    assert with_rules <= {case.prim for case in CASES}


# --- symbolic zeros ---------------------------------------------------------------------------


def _is_zero(c, shape):
    return type(c) is Zero and c.shape == shape


def test_zero_coefficients_stay_symbolic():
    x = np.array([0.5, 1.0])
    v = np.array([1.0, -2.0])
    z = Zero((2,), np.float64)
    constant = (z, z, z)
    # a constant times a series whose x_2 is zero: y_2 is zero, y_1 and y_3 are not
    _, series = PRIMITIVES["multiply"].jet([np.array([3.0, 4.0]), x], [constant, (v, z, v)])
    assert _is_zero(series[1], (2,))
    np.testing.assert_array_equal(series[0], np.array([3.0, 4.0]) * v)
    # x(t) = x_0 + v t^2 is even in t, so is f(x(t)): every odd coefficient is zero
    for name in ("exp", "sin", "cos", "tanh", "log", "sqrt", "arctan", "reciprocal"):
        _, series = PRIMITIVES[name].jet([x], [(z, v, z, v, z)])
        assert [type(c) is Zero for c in series] == [True, False, True, False, True], name
    # a linear map of a zero coefficient is zero; a sum is zero where both terms are
    _, series = PRIMITIVES["reshape"].jet([x], [(z, v)], shape=(2, 1))
    assert _is_zero(series[0], (2, 1)) and np.shape(series[1]) == (2, 1)
    _, series = PRIMITIVES["add"].jet([np.ones((3, 2)), x], [(z, z), (z, v)])
    assert _is_zero(series[0], (3, 2))
    np.testing.assert_array_equal(series[1], np.broadcast_to(v, (3, 2)))   # broadcast
    _, series = PRIMITIVES["matmul"].jet([np.eye(2), x], [(Zero((2, 2), np.float64),) * 2,
                                                         (z, v)])
    assert _is_zero(series[0], (2,))
    _, series = PRIMITIVES["concatenate"].jet([x, x], [(z, v), (z, z)], axis=0)
    assert _is_zero(series[0], (4,))
    np.testing.assert_array_equal(series[1], np.concatenate([v, np.zeros(2)]))


def test_float32_stays_float32_with_python_scalars():
    x = np.array([0.25, 0.5], np.float32)
    v = np.array([1.0, -2.0], np.float32)
    for name, params in (("exp", {}), ("sin", {}), ("log", {}), ("arcsin", {}), ("erf", {}),
                         ("scalar_power", {"exponent": 2.5}), ("expit", {})):
        out, series = PRIMITIVES[name].jet([x], [(v, v, v)], **params)
        assert np.asarray(out).dtype == np.float32
        assert all(np.asarray(c).dtype == np.float32 for c in series), name


# --- where the recurrences would divide by zero -------------------------------------------------


POWERS_AT_ZERO = [
    ("scalar_power", lambda x: x ** 3), ("scalar_power", lambda x: x ** 4),
    ("scalar_power", lambda x: x ** 5.5), ("scalar_power", lambda x: x ** 2.5),
    ("scalar_power", lambda x: x ** -1), ("sqrt", dnp.sqrt), ("cbrt", dnp.cbrt),
    ("reciprocal", dnp.reciprocal), ("log", dnp.log), ("log1p", lambda x: dnp.log1p(x - 1)),
    ("divide", lambda x: 2.0 / x), ("divide", lambda x: (x + 1.0) / (x - x[0])),
    ("arcsin", lambda x: dnp.arcsin(x - 1)), ("arccos", lambda x: dnp.arccos(1 - x)),
    ("power", lambda x: dnp.power(x, x[:1] + 3.0)),
]


@pytest.mark.parametrize("name, fun", POWERS_AT_ZERO)
@pytest.mark.filterwarnings("ignore:(divide by zero|invalid value) encountered:RuntimeWarning")
@given(data=st.data())
@settings(max_examples=4, deadline=None, derandomize=True)
def test_singular_values_follow_the_fallback(name, fun, data):
    """At a zero of the divisor the series is built from the derivative (as the fallback builds it;
    ``divide`` declines there and the fallback itself answers): every coefficient the
    fallback gives as a number is equal, and where it is infinite or NaN (the singular
    entries that move) the rule's is not finite either; the entries that do not move have
    zero coefficients. (Not at 0 / 0, where the JVP's slope is NaN: beyond order 1 the
    fallback's coefficient there depends on which of its nested products meets the NaN
    first; the rule's is NaN wherever the NaN slope meets a moving coefficient.)"""
    order = data.draw(st.integers(1, 5))
    x0 = data.draw(hnp.arrays(np.float64, 4, elements=st.sampled_from([0.0, 0.0, 0.5, 1.5])))
    x0[0] = 0.0
    series = [tuple(draw_coefficient(data.draw, (4,), np.dtype(np.float64))
                    * data.draw(hnp.arrays(np.float64, 4, elements=st.sampled_from([0.0, 1.0])))
                    for _ in range(order))]
    _, _, calls = run_recorded(Case(name, fun, None), [x0], [0], series)
    assert calls
    for primals, s, params, result in calls:
        if result is NotImplemented:   # declined (a zero divisor): the fallback answers
            continue
        _, got = result
        _, want = fallback(name, primals, s, params)
        scale = max(1.0, *[float(np.max(np.abs(np.nan_to_num(instantiate(w), posinf=0,
                                                              neginf=0)))) for w in want])
        for g, w in zip(got, want):
            g, w = np.asarray(instantiate(g)), np.asarray(instantiate(w))
            finite = np.isfinite(w)
            np.testing.assert_allclose(g[finite], w[finite], rtol=1e-7, atol=1e-7 * scale)
            assert not np.isfinite(g[~finite]).any()


# --- inside other transformations -------------------------------------------------------------


def _chain(x):
    y = dnp.sin(x) * dnp.exp(x) / (1 + x ** 2) + dnp.sqrt(x) * dnp.log(x)
    return dnp.sum(dnp.tanh(y) @ np.arange(1.0, 4.0)) + dnp.arctan(x[0]) ** 3


def _third_derivative(x):
    v = np.array([1.0, -0.5, 0.25])
    _, series = dk.jet(_chain, (x,), ((v, v, 0.0 * v),))
    return series[2]


def test_jet_under_grad_vmap_and_jit():
    x = np.array([0.7, 1.3, 0.4])
    xs = np.stack([x, x + 0.1])
    with fallback_only():
        want = (_third_derivative(x), dk.grad(_third_derivative)(x),
                dk.vmap(_third_derivative)(xs), dk.jit(_third_derivative)(x))
    got = (_third_derivative(x), dk.grad(_third_derivative)(x),
           dk.vmap(_third_derivative)(xs), dk.jit(_third_derivative)(x))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-9)
    # the third derivative against nested forward mode
    v = np.array([1.0, -0.5, 0.25])
    nested = nested_jvp(_chain, [x], [(v, v / 2, 0.0 * v)])
    np.testing.assert_allclose(got[0], nested[2] * 6, rtol=1e-9)
