"""Taylor mode (``dk.jet``) against nested forward mode, over the op records of
tests/records/ (the table tests/test_primitives.py checks) and at the edge points of
tests/records/edges/ (the table tests/test_edges.py checks); special functions against
mpmath's Taylor coefficients; completeness of the rules.

For a case of a record, with arguments drawn by Hypothesis from the record's domains, every
floating-point argument moves along a curve ``x(t) = x0 + Σ_k s_k t^k / k!`` (the first
term random, each higher one random or zero, as Hypothesis draws) and

- ``dk.jet`` gives ``fun(x0)`` and the derivatives ``d^k/dt^k fun(x(t))`` at 0 for
  k = 1..K (K = 1..4), whichever path each primitive takes (its jet rule or the fallback
  through its jvp rule);
- the reference nests ``dk.jvp`` K times in the scalar ``t`` of ``t -> fun(x(t))``, a
  route that never enters the Taylor interpreter (``derivatives_along``).

Tolerances. float64: ``rtol`` 1e-7, entry by entry, with an absolute floor of ``rtol`` times
the largest entry of the same derivative (an entry that cancels to near zero is judged on
the scale of its array) and of 2^12 eps times the largest entry of the lower derivatives
(a term that is 0 in exact arithmetic, ``|z|^2`` differentiated three times, is rounding
noise of that size by either route). float32 arguments: ``rtol`` 2e-5 and 2^12 float32
eps: the routes round differently, and a fourth derivative sums tens of float32 products.
The value: 1e-12 against the plain function (a traced evaluation composes some functions
from other primitives than NumPy's own). Functions without a derivative: every term is
exactly zero, and so are the terms of integer outputs. A primitive whose jvp rule stops at
some order (``NoRuleError``) stops jet at that order too, with the same error type: never
a silent wrong answer.

The quick test takes each case once, at an order cycling over the table; the slow one
draws order 3 or 4 for the cases of the costly families, whose quick order stops at 2.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from records import EDGES, RECORD_BY_NAME, case_id, cases
from records.ops import FAMILIES
from test_primitives import _import_all_of_diffkit, draw_args, primitives_reached

import diffkit as dk
import diffkit.numpy as dnp
import diffkit.scipy.special as dsp
from diffkit.core.primitive import PRIMITIVES
from diffkit.errors import NoRuleError

RTOL = {np.dtype(np.float64): 1e-7, np.dtype(np.complex128): 1e-7,
        np.dtype(np.float32): 2e-5, np.dtype(np.complex64): 2e-5}
# The rounding noise a term may carry, relative to the size of the lower derivatives (the
# products that make it are of their size; the value's size does not enter), for each rtol:
# 2^12 units in the last place of the precision.
NOISE = {1e-7: 2**12 * np.finfo(np.float64).eps, 2e-5: 2**12 * np.finfo(np.float32).eps}
MAX_ORDER = 4
VALUE_RTOL = 1e-12
OVERFLOW = 1e150

# --- the reference: nested jvp in the scalar t ---------------------------------------------


def _is_float(x):
    return np.asarray(x).dtype.kind in "fc"


def curve(x0, terms, t):
    """``x0 + Σ_k terms[k-1] t^k / k!``, in Horner form (no powers of t, whose rules would
    be part of what is checked), written ``x0 - (t q(t) + 0.0)`` so that it is ``x0``
    exactly at ``t = 0``: ``t q(0)`` may be -0.0, and ``-0.0 + 0.0`` is 0.0, whereas
    ``x0 + t q(0)`` would turn an ``x0`` of -0.0 into 0.0 (log and 1/x tell them apart)."""
    minus_q = 0
    for k in range(len(terms), 1, -1):
        minus_q = (minus_q - terms[k - 1] / math.factorial(k)) * t
    minus_q = minus_q - terms[0]
    return x0 - (t * minus_q + 0.0)


def _time_dtype(xs):
    """float32 when every moving argument is single precision (a float64 ``t`` would
    promote them), float64 otherwise."""
    single = all(np.asarray(x).dtype in (np.float32, np.complex64) for x in _leaves(xs))
    return np.float32 if single else np.float64


def derivatives_along(fun, xs, series, order):
    """``[fun(x(0)), d/dt fun(x(t)), ..., d^order/dt^order fun(x(t))]`` at ``t = 0`` (each
    a pytree like ``fun``'s output), for ``x_i(t) = curve(xs[i], series[i], t)``, by
    nesting ``dk.jvp`` in the scalar ``t`` ``order`` times. Each ``xs[i]`` may be a pytree,
    ``series[i]`` then a sequence of pytrees like it."""
    def along(t):
        return fun(*[dk.tree_util.tree_map(lambda leaf, *terms: curve(leaf, terms, t), x, *s)
                     for x, s in zip(xs, series)])

    def value(t):
        return [along(t)]

    derivatives = value
    for _ in range(order):
        derivatives = _one_more(derivatives)
    return derivatives(np.zeros((), _time_dtype(xs)))


def _one_more(derivatives):
    """From ``t -> [f(t), ..., f^(k)(t)]`` to ``t -> [f(t), ..., f^(k+1)(t)]``."""
    def more(t):
        values, tangents = dk.jvp(derivatives, (t,), (np.ones_like(t),))
        return [*values, tangents[-1]]
    return more


# --- the comparison ----------------------------------------------------------------------


def of_floats(fun, args):
    """``(g, xs)``: ``fun`` as a function of its floating-point arguments alone (the others
    bound to their values), and those arguments."""
    floats = [i for i, x in enumerate(args) if _is_float(x)]

    def g(*xs):
        full = list(args)
        for i, x in zip(floats, xs):
            full[i] = x
        return fun(*full)
    return g, tuple(args[i] for i in floats)


def random_series(rng, xs, order, zero_terms=()):
    """One sequence of ``order`` terms per argument, shaped and typed like it: normal
    entries (complex ones for a complex argument), zero for the orders in ``zero_terms``
    (never the first)."""
    def term(x, k):
        x = np.asarray(x)
        if k + 1 in zero_terms:
            return np.zeros_like(x)
        if x.dtype.kind == "c":
            return (rng.normal(size=x.shape) + 1j * rng.normal(size=x.shape)).astype(x.dtype)
        return rng.normal(size=x.shape).astype(x.dtype)
    return tuple(tuple(term(x, k) for k in range(order)) for x in xs)


def _leaves(tree):
    return dk.tree_util.tree_leaves(tree)


def _per_leaf(series_out, count, order):
    """jet's series (each output leaf replaced by its list of ``order`` terms) as one list of
    terms per output leaf."""
    flat = _leaves(series_out)
    assert len(flat) == count * order, f"jet gave {len(flat)} terms for {count} outputs"
    return [flat[j * order:(j + 1) * order] for j in range(count)]


def assert_close(actual, expected, rtol, what, scale=0.0, lower=None):
    """Entry by entry, to ``rtol`` with an absolute floor of ``rtol`` times the largest
    finite entry of ``expected`` and ``NOISE`` times ``scale`` (the largest entry of the
    lower derivatives, whose rounding the term inherits: a term that is 0 in exact
    arithmetic comes out as rounding noise of that size by either route); NaN exactly where
    ``expected`` is NaN, the same infinities.

    At an edge point, ``lower`` holds the entries' largest magnitude over the value and the
    lower derivatives. Where ``expected`` is infinite, ``actual`` may be NaN instead (never
    finite or of the other sign): at a pole or branch point a term combines infinite
    derivatives (``f'' s1^2 + f' s2`` with ``f'' = -inf``, ``f' = inf``), and whether a
    route meets ``inf - inf`` depends on the order in which it adds. For the same reason,
    where ``expected`` is NaN and the lower derivatives are already beyond ``OVERFLOW``
    (1/1e-300, hypot at 1e-200), ``actual`` may be an infinity: the term overflows, and
    nested jvp met ``inf - inf`` on the way."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape}, expected " \
                                           f"{expected.shape}"
    if lower is not None:
        infinite = np.isinf(expected)
        assert not np.any(np.isfinite(actual[infinite])), \
            f"{what}: finite {actual[infinite]} where nested jvp is {expected[infinite]}"
        overflow = np.isnan(expected) & np.isinf(actual) & (lower >= OVERFLOW)
        actual = np.where((infinite & np.isnan(actual)) | overflow, expected, actual)
    floor = max(rtol * _largest(expected), NOISE[rtol] * scale)
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=floor, equal_nan=True,
                               err_msg=what)


def _largest(x):
    finite = np.abs(np.asarray(x)[np.isfinite(x)])
    return float(finite.max()) if finite.size else 0.0


def check_jet(fun, args, series_for, order, zero_derivative=False, at_edge=False):
    """``dk.jet`` of ``fun`` (as a function of its float arguments) along
    ``series_for(xs, order)`` equals nested jvp to ``order``; all zeros for a function
    without derivative. A ``NoRuleError`` of the reference at this order must be jet's too;
    the check then goes on one order lower."""
    g, xs = of_floats(fun, args)
    series = series_for(xs, order)
    if zero_derivative:
        value, terms = dk.jet(g, xs, series)
        _assert_value(value, g(*xs))
        for term in _leaves(terms):
            assert not np.any(term), f"a function without derivative has the term {term}"
        return
    try:
        expected = derivatives_along(g, xs, series, order)
    except NoRuleError as error:
        # only the documented order limits (CANNOT_EXPAND) may stop a record
        assert "implemented to order" in str(error), f"undocumented NoRuleError: {error}"
        with pytest.raises(NoRuleError, match=f"order {order} was asked for"):
            dk.jet(g, xs, series)
        assert order > 1, "no first derivative: the record says it has one"
        check_jet(fun, args, lambda xs, k: tuple(s[:k] for s in series), order - 1,
                  at_edge=at_edge)
        return
    value, terms = dk.jet(g, xs, series)
    _assert_value(value, g(*xs))
    moving = max(1.0, *(_largest(a) for a in _leaves((xs, series))))
    outputs = _leaves(expected[0])
    for j, (out, jet_terms) in enumerate(zip(outputs, _per_leaf(terms, len(outputs),
                                                                  order))):
        if not _is_float(out):
            for k, term in enumerate(jet_terms, start=1):
                assert not np.any(term), f"output {j} is not floating-point: term {k} " \
                                         f"must be zero, got {term}"
            continue
        rtol = RTOL.get(np.asarray(out).dtype, 1e-7)
        scale = 0.0   # the largest lower derivative (the value does not count: see NOISE)
        lower = np.abs(out) if at_edge else None
        for k, term in enumerate(jet_terms, start=1):
            reference = _leaves(expected[k])[j]
            if scale == 0 and _largest(reference) <= NOISE[rtol] * moving:
                # nothing moved below this order and this one is rounding noise: the
                # function is constant along the curve in exact arithmetic (det of a rank-2
                # product); both routes give noise on the scale of the arguments
                scale = moving
            assert_close(term, reference, rtol, f"output {j}, derivative {k} of {order}",
                         scale=scale, lower=lower)
            scale = max(scale, _largest(reference))
            if at_edge:
                lower = np.fmax(lower, np.abs(reference))


def _assert_value(value, expected):
    """jet's value is the function's, to ``VALUE_RTOL`` with a floor of ``VALUE_RTOL`` times
    its largest entry (a traced evaluation composes some functions from other primitives
    than NumPy's own function: funm, welch)."""
    for v, e in zip(_leaves(value), _leaves(expected), strict=True):
        np.testing.assert_allclose(v, e, rtol=VALUE_RTOL, atol=VALUE_RTOL * _largest(e),
                                   equal_nan=True, err_msg="jet's value is not the function's")


# --- the records -------------------------------------------------------------------------


def _has_float_argument(record, shapes):
    rng = np.random.default_rng(0)
    return any(_is_float(record.domain(i).sample(s, rng)) for i, s in enumerate(shapes))


# Cases with no floating-point argument (bitwise operations, gcd) have nothing to move.
CASES = [(r, s) for r, s in cases() if _has_float_argument(r, s)]
IDS = [case_id(r, s) for r, s in CASES]

# The quick test takes each case at one order, cycling through 1..4 over the table (so every
# order meets every family); in the families whose rules are long compositions (a matrix
# function's jvp rule, a series in its parameters) the cost of both routes grows
# geometrically with the order, so the quick test cycles through 1..2 there and leaves
# orders 3 and 4 to the slow test.
_COSTLY = {"linalg", "scipy_linalg", "scipy_signal", "scipy_stats", "special",
           "special_series"}
_FAMILY = {r.name: f.__name__.rsplit(".", 1)[-1] for f in FAMILIES for r in f.RECORDS}


def _quick_order(index, record):
    cycle = 2 if _FAMILY[record.name] in _COSTLY else MAX_ORDER
    return 1 + index % cycle


QUICK = [pytest.param(r, s, _quick_order(i, r), id=f"{case_id(r, s)}-order{_quick_order(i, r)}")
         for i, (r, s) in enumerate(CASES)]


def drawn(examples):
    """Run the decorated check ``check(data)`` now, on ``examples`` Hypothesis examples.

    A ``@given`` test parametrized over the ~2000 cases would pay Hypothesis's settings
    chain, which grows by one layer per case run (see tests/conftest.py), so that the
    overhead grows quadratically with the table; a fresh ``@given`` function per case
    costs the same for every case."""
    def run(check):
        settings(max_examples=examples, deadline=None, database=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                        HealthCheck.function_scoped_fixture])(
            given(data=st.data())(check))()
    return run


def _drawn_series(data, order):
    """The series of a check: a seed and, per order above 1, whether that term is zero
    (drawn by Hypothesis); the entries from a generator with that seed."""
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    zero_terms = {k for k in range(2, order + 1) if data.draw(st.booleans(), label=f"s{k}=0")}

    def series_for(xs, k):
        return random_series(np.random.default_rng(seed), xs, k, zero_terms)
    return series_for


@pytest.mark.parametrize(("record", "shapes", "order"), QUICK)
def test_jet_matches_nested_jvp(record, shapes, order):
    """One example per case, at the case's order."""
    @drawn(1)
    def check(data):
        args = draw_args(data, record, shapes)
        with np.errstate(all="ignore"):
            check_jet(record.fun, args, _drawn_series(data, order), order,
                      zero_derivative=record.zero_derivative)


COSTLY_CASES = [(r, s) for r, s in CASES if _FAMILY[r.name] in _COSTLY]


@pytest.mark.slow
@pytest.mark.parametrize(("record", "shapes"), COSTLY_CASES,
                         ids=[case_id(r, s) for r, s in COSTLY_CASES])
def test_jet_matches_nested_jvp_every_order(record, shapes):
    """The orders the quick test leaves out: one example per case of the costly families
    (whose quick order cycles through 1..2), at order 3 or 4 drawn by Hypothesis. (Cheap
    families already meet orders 1..4 in the quick test, a different order per case.)"""
    @drawn(1)
    def check(data):
        args = draw_args(data, record, shapes)
        order = data.draw(st.integers(3, MAX_ORDER), label="order")
        with np.errstate(all="ignore"):
            check_jet(record.fun, args, _drawn_series(data, order), order,
                      zero_derivative=record.zero_derivative)


# --- the edges -----------------------------------------------------------------------------
# Every edge sample along a random series (seeded by the sample's position), at an order
# cycling through 2..4 over the table: the terms of nested jvp where those are finite, the
# same NaN and infinities (see assert_close for the two overflow allowances).

# Edge samples where jet differs from nested jvp today because of a rule outside Taylor mode:
# strict xfails, so that the fix turns them into errors until the mark is removed.
KNOWN_AT_EDGES = {
    "linalg_eigh_projector[double]": (
        "a double eigenvalue's projector: the third-order terms of matmul's jet rule meet the "
        "eigenvector rules' NaN (the 0/0 of the tie) where nested jvp's contraction keeps a "
        "structural 0 in one entry; jet answers NaN there (never a finite wrong number)"),
}


def _edge_param(index, sample):
    order = 2 + index % 3
    reason = KNOWN_AT_EDGES.get(sample.id)
    marks = [pytest.mark.xfail(strict=True, raises=AssertionError, reason=reason)] \
        if reason else []
    return pytest.param(sample, index, order, id=f"{sample.id}-order{order}", marks=marks)


@pytest.mark.parametrize(("sample", "seed", "order"),
                         [_edge_param(i, s) for i, s in enumerate(EDGES)])
def test_jet_at_the_edges(sample, seed, order):
    def series_for(xs, k):
        return random_series(np.random.default_rng(seed), xs, k)
    with np.errstate(all="ignore"):
        check_jet(sample.fun, sample.args, series_for, order,
                  zero_derivative=RECORD_BY_NAME[sample.record].zero_derivative,
                  at_edge=True)


def test_known_edge_failures_name_edge_samples():
    stale = sorted(set(KNOWN_AT_EDGES) - {sample.id for sample in EDGES})
    assert not stale, f"KNOWN_AT_EDGES names no edge sample: {stale}"


# --- powers at a tiny base ---------------------------------------------------------------------
# Hypothesis finds bases like 1e-246 in the records' domains: x**3 underflows to 0 there while
# its third derivative along x0 + s t is 6 s^3. A recurrence that divides by the base (or reads
# the underflowed value) loses every term.


def _cube(x):
    return x ** 3


@pytest.mark.parametrize("base", [1e-200, -1e-200, 1e-120, 5e-324])
@pytest.mark.parametrize("power", [_cube, lambda x: dnp.float_power(x, 3.0),
                                   lambda x: dnp.power(x, np.full_like(x, 3.0))],
                         ids=["int_exponent", "float_power", "power_of_arrays"])
def test_powers_at_a_tiny_base(power, base):
    x, s = np.array([base, 0.5]), np.array([1.5, -2.0])
    _, terms = dk.jet(power, (x,), ((s, np.zeros(2), np.zeros(2)),))
    exact = [3 * x ** 2 * s, 6 * x * s ** 2, 6 * s ** 3]
    for term, expected in zip(terms, exact):
        np.testing.assert_allclose(term, expected, rtol=1e-12, atol=1e-300)


# --- special functions against mpmath's Taylor coefficients ---------------------------------
# Along x(t) = x0 + t the k-th derivative of f(x(t)) is f^(k)(x0) = k! c_k, c_k the Taylor
# coefficient mpmath computes at 40 digits. Tolerance: 1e-12 relative, with an absolute floor
# of 64 eps times the largest coefficient (a coefficient that cancels to a small value inherits
# the rounding of the larger ones it is computed from). The points and the drawn intervals stay
# where the rules keep the coefficients accurate in float64 (erfcx's start to lose digits
# above x = 3, log_ndtr's below -8); KNOWN_SPECIAL below holds the points where they do not.

SPECIAL_ORDER = 6


def _mp_log_abs_gamma(x):
    return mpmath.log(abs(mpmath.gamma(x)))


def _mp_erfcx(x):
    return mpmath.exp(x * x) * mpmath.erfc(x)


def _mp_expit(x):
    return 1 / (1 + mpmath.exp(-x))


def _mp_log_ndtr(x):
    return mpmath.log(mpmath.ncdf(x))


# name: (mpmath function, fixed points, interval for drawn points)
SPECIAL = {
    "erf": (lambda x: mpmath.erf(x), (-2.5, -0.5, 0.0, 0.7, 3.0), (-4.0, 4.0)),
    "erfc": (lambda x: mpmath.erfc(x), (-1.5, 0.0, 0.5, 2.0, 5.0), (-3.0, 8.0)),
    "erfcx": (_mp_erfcx, (-2.0, 0.0, 1.0, 2.0, 60.0, 1e3), (-3.0, 2.0)),
    "gamma": (lambda x: mpmath.gamma(x), (-1.5, 0.3, 1.0, 2.5, 6.2), (0.1, 10.0)),
    "gammaln": (_mp_log_abs_gamma, (-2.5, 0.2, 1.0, 3.5, 30.0), (0.1, 50.0)),
    "digamma": (lambda x: mpmath.digamma(x), (-0.5, 0.25, 1.0, 4.0, 50.0), (0.1, 50.0)),
    "expit": (_mp_expit, (-20.0, -3.0, 0.0, 1.5, 30.0), (-30.0, 30.0)),
    "ndtr": (lambda x: mpmath.ncdf(x), (-6.0, -1.0, 0.0, 0.5, 4.0), (-6.0, 6.0)),
    "log_ndtr": (_mp_log_ndtr, (-8.0, -3.0, -1.0, 0.0, 2.0, 7.0), (-3.0, 8.0)),
    "j0": (lambda x: mpmath.besselj(0, x), (0.0, 0.5, 2.4, 7.0, 30.0), (-30.0, 30.0)),
    "j1": (lambda x: mpmath.besselj(1, x), (0.0, 0.5, 3.8, 7.0, 30.0), (-30.0, 30.0)),
    "i0": (lambda x: mpmath.besseli(0, x), (0.0, 0.5, 3.0, -7.0, 20.0), (-20.0, 20.0)),
    "i1": (lambda x: mpmath.besseli(1, x), (0.0, -0.5, 3.0, 7.0, 20.0), (-20.0, 20.0)),
}


def mpmath_derivatives(mp_fun, points, order):
    """``(order + 1, len(points))``: ``k! c_k`` at each point, ``c_k`` from mpmath."""
    with mpmath.workdps(40):
        coefficients = [mpmath.taylor(mp_fun, mpmath.mpf(float(x)), order) for x in points]
    return np.array([[float(c[k]) * math.factorial(k) for c in coefficients]
                     for k in range(order + 1)])


def check_special(name, points, order=SPECIAL_ORDER):
    """jet of ``diffkit.scipy.special.<name>`` along ``x0 + t`` at every point at once
    (the functions are elementwise) against mpmath."""
    points = np.asarray(points, np.float64)
    expected = mpmath_derivatives(SPECIAL[name][0], points, order)
    unit = (np.ones_like(points),) + (np.zeros_like(points),) * (order - 1)
    value, terms = dk.jet(getattr(dsp, name), (points,), (unit,))
    got = np.array([value, *terms])
    coefficients = np.abs(expected) / np.array([math.factorial(k) for k in
                                                range(order + 1)])[:, None]
    floor = 64 * np.finfo(np.float64).eps * coefficients.max(axis=0)
    bound = 1e-12 * np.abs(expected) + floor * np.array(
        [math.factorial(k) for k in range(order + 1)])[:, None]
    error = np.abs(got - expected)
    assert np.all(error <= bound), (
        f"{name}: derivatives at {points} differ from mpmath's by {error} (bound {bound})")


@pytest.mark.parametrize("name", sorted(SPECIAL))
def test_special_function_jets_match_mpmath(name):
    check_special(name, SPECIAL[name][1])


@pytest.mark.parametrize("name", sorted(SPECIAL))
def test_special_function_jets_match_mpmath_at_drawn_points(name):
    low, high = SPECIAL[name][2]

    @drawn(3)
    def check(data):
        points = data.draw(st.lists(st.floats(low, high), min_size=1, max_size=4),
                           label="points")
        if name in _TINY_NAN:   # see KNOWN_SPECIAL
            points = [x for x in points if x == 0 or abs(x) > 1e-300] or [0.0]
        check_special(name, points)


# Points where the coefficients are wrong today (in nested jvp as in jet): strict xfails, so
# that the fix turns them into errors until the mark is removed.
_ERFCX_TAIL = (
    "erfcx'(x) = 2 x erfcx(x) - 2/sqrt(pi) cancels to a relative 1/(2 x^2) for large x, and "
    "the rule switches to the asymptotic series only from x = 50: each higher derivative "
    "differentiates the cancelling form again (the 6th is 10% off at x = 21); log_ndtr's "
    "left tail, whose slope is sqrt(2/pi) / erfcx(-x/sqrt 2), inherits it (40% at x = -30). "
    "Needs erfcx derivatives of every order that stay accurate there "
    "(diffkit/ops/special_error.py)")
_IV_TINY = (
    "scipy.special.iv(v, x) is NaN for 0 < |x| < ~4e-308 (SciPy 1.17: iv(2, 2.2e-308)), and "
    "i1's derivative 0.5 (i0 + iv(2, x)) reads it: i0'' and i1' are NaN there instead of "
    "1/2 (diffkit/ops/special_bessel.py could take the series below 1e-150)")
KNOWN_SPECIAL = [("erfcx", 21.2, _ERFCX_TAIL), ("log_ndtr", -30.0, _ERFCX_TAIL),
                 ("i0", 2.2250738585072014e-308, _IV_TINY),
                 ("i1", 2.2250738585072014e-308, _IV_TINY)]
# The drawn points stay out of the known failures' regions.
_TINY_NAN = {"i0", "i1"}


@pytest.mark.parametrize(("name", "point"), [
    pytest.param(name, point, id=f"{name}-{point:g}",
                 marks=pytest.mark.xfail(strict=True, raises=AssertionError, reason=reason))
    for name, point, reason in KNOWN_SPECIAL])
def test_known_inaccurate_points(name, point):
    check_special(name, [point])


# --- completeness ----------------------------------------------------------------------------

# The primitives whose series stop at some order, with the reason. Beyond it jet raises
# NoRuleError, as nested jvp does (their jvp rules raise it): never a silent wrong answer.
CANNOT_EXPAND = {
    "gammainc_da": "the derivatives of gammainc/gammaincc (and their inverses, gdtr, chdtr, "
                   "the gamma and chi2 distributions) in the shape 'a' are series in 'a' "
                   "implemented to order 3 (special_incomplete._JET_ORDER)",
    "betainc_partial": "the derivatives of betainc/betaincc (and their inverses, fdtr, "
                       "stdtr, the beta, F and t distributions) in 'a' and 'b' are "
                       "implemented to order 3 in total (special_incomplete._JET_ORDER)",
    "hyp1f1_partial": "hyp1f1's derivatives in the parameters a, b: series on jets "
                      "implemented to order 3 in total (special_series.PARAMETER_ORDER)",
    "hyp2f1_partial": "hyp2f1's derivatives in the parameters a, b, c: as hyp1f1's",
    "zeta_partial": "zeta's derivatives in the exponent x (Euler-Maclaurin on jets), zetac's "
                    "and riemann_zeta's with them: to order 3",
}
# For each: a function of one float reaching the primitive through the limited argument,
# and a point.
_EXPANSION_PROBES = {
    "gammainc_da": (lambda a: dsp.gammainc(a, 1.3), 1.7),
    "betainc_partial": (lambda a: dsp.betainc(a, 2.0, 0.4), 1.5),
    "hyp1f1_partial": (lambda a: dsp.hyp1f1(a, 1.5, 0.7), 0.8),
    "hyp2f1_partial": (lambda c: dsp.hyp2f1(0.5, 0.7, c, 0.3), 1.8),
    "zeta_partial": (lambda x: dsp.zeta(x, 1.5), 2.5),
}
LIMITED_ORDER = 3


def test_every_primitive_can_be_expanded():
    """Every registered primitive has a jet rule, or a jvp rule (the fallback derives the
    series from it), or is nondiff (its series are zero)."""
    _import_all_of_diffkit()
    missing = sorted(name for name, prim in PRIMITIVES.items()
                     if prim.jet is None and prim.jvp is None and not prim.nondiff)
    assert not missing, f"primitives Taylor mode cannot expand: {missing}"
    stale = sorted(set(CANNOT_EXPAND) - set(PRIMITIVES))
    assert not stale, f"CANNOT_EXPAND names primitives that no longer exist: {stale}"
    assert set(_EXPANSION_PROBES) == set(CANNOT_EXPAND)


@pytest.mark.parametrize("name", sorted(CANNOT_EXPAND))
def test_limited_primitives_expand_to_their_order_and_refuse_beyond(name):
    """At the documented order the series equals nested jvp's; one order more raises
    NoRuleError naming that order, from jet as from nested jvp; the probe reaches the
    primitive."""
    fun, point = _EXPANSION_PROBES[name]
    x = np.float64(point)
    with primitives_reached() as reached:
        check_jet(fun, (x,), lambda xs, k: ((1.0,) + (0.5,) * (k - 1),), LIMITED_ORDER)
    assert name in reached, f"the probe of {name} does not reach it"
    beyond = ((1.0,) + (0.0,) * LIMITED_ORDER,)
    with pytest.raises(NoRuleError, match=f"order {LIMITED_ORDER + 1}"):
        dk.jet(fun, (x,), beyond)
    with pytest.raises(NoRuleError, match=f"order {LIMITED_ORDER + 1}"):
        derivatives_along(fun, (x,), beyond, LIMITED_ORDER + 1)
