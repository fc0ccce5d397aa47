"""Loud escapes: where a traced value would lose its derivative by leaving for plain NumPy,
the error is a diffkit error that names the user's line (file, number and source) and says
what to write instead. Truth tests on the concrete value keep working."""

import inspect
import math
import sys

import numpy as np
import pytest
import scipy.linalg
import scipy.special
import scipy.stats

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.errors import DiffkitError, NoRuleError, TracerConversionError

X3 = np.array([0.3, -0.5, 0.7])
MARK = "# escapes here"

RUNS = {
    "grad": lambda f: dk.grad(lambda x: dnp.sum(f(x)))(X3),
    "jvp": lambda f: dk.jvp(f, (X3,), (np.ones(3),)),
}
BOTH_MODES = pytest.mark.parametrize("run", list(RUNS.values()), ids=list(RUNS))


def marked_line(fun):
    """``(line number, source text)`` of the one line of ``fun`` marked with MARK."""
    lines, first = inspect.getsourcelines(fun)
    hits = [i for i, line in enumerate(lines) if MARK in line]
    assert len(hits) == 1, "mark exactly one line"
    return first + hits[0], lines[hits[0]].split(MARK)[0].strip()


def escape_message(fun, run=RUNS["grad"], error=TracerConversionError):
    """The message of the error ``run(fun)`` raises, checked to name the marked line."""
    with pytest.raises(error) as excinfo:
        run(fun)
    assert isinstance(excinfo.value, DiffkitError)
    text = str(excinfo.value)
    lineno, source = marked_line(fun)
    assert f'File "{__file__}", line {lineno}, in {fun.__name__}' in text, text
    assert f"\n    {source}" in text, text
    return text


# --- np.asarray, np.array, __array__ -----------------------------------------------------


@BOTH_MODES
def test_np_asarray(run):
    def f(t):
        return np.asarray(t) * 2.0  # escapes here

    text = escape_message(f, run)
    assert text.startswith("np.asarray(t) would drop the derivative")
    assert "np.sin(t)" in text and "diffkit.numpy" in text and "dk.stop_gradient" in text


def test_np_array():
    def f(t):
        return np.array(t)  # escapes here

    text = escape_message(f)
    assert "np.array(t)" in text and "diffkit.numpy" in text


def test_dunder_array():
    def f(t):
        return t.__array__()  # escapes here

    text = escape_message(f)
    assert "t.__array__()" in text and "diffkit.numpy" in text


def test_under_vmap():
    def f(t):
        return np.asarray(t)  # escapes here

    text = escape_message(f, lambda f: dk.vmap(f)(np.ones((2, 3))))
    assert "vmap" in text


@BOTH_MODES
def test_np_array_of_a_list_suggests_stack(run):
    def f(t):
        return np.array([t[0], t[1] ** 2])  # escapes here

    text = escape_message(f, run)
    assert "np.stack([t[0], t[1] ** 2])" in text


def test_np_stack_is_the_fix():
    # the suggested np.stack routes to diffkit and keeps the derivative
    g = dk.grad(lambda t: np.sum(np.stack([t[0], t[1] ** 2]) * np.array([2.0, 3.0])))(X3)
    np.testing.assert_allclose(g, [2.0, 6.0 * X3[1], 0.0], rtol=1e-12)


# --- Python numbers ----------------------------------------------------------------------


@BOTH_MODES
def test_float(run):
    def f(t):
        return float(t[0]) * t  # escapes here

    text = escape_message(f, run)
    assert text.startswith("float(t[0]) would drop the derivative")
    assert "dk.stop_gradient(t[0])" in text and "np.sin(t[0])" in text


@BOTH_MODES
def test_float_of_a_stopped_value_does_not_suggest_stopping_it_again(run):
    def f(t):
        return float(dk.stop_gradient(t[0])) * t  # escapes here

    text = escape_message(f, run)
    assert "dk.stop_gradient(dk.stop_gradient" not in text
    assert "already a constant" in text and "use dk.stop_gradient(t[0]) itself" in text


def test_complex():
    def f(t):
        return complex(t[1]) * t  # escapes here

    text = escape_message(f)
    assert text.startswith("complex(t[1]) would drop the derivative")
    assert "dk.stop_gradient(t[1])" in text


# --- integer casts are plain integers (issue 10, item 6), float casts keep raising -----------

Y = np.array([2.7, -1.4, 0.6])

INTEGER_CASTS = {
    "int": lambda t: int(t),
    "np.int64": lambda t: np.int64(t),
    "np.intp": lambda t: np.intp(t),
    "np.int32": lambda t: np.int32(t),
    "astype": lambda t: t.astype(np.int32),
    "np.asarray-int": lambda t: np.asarray(t, dtype=np.int64),
}


@pytest.mark.parametrize("cast", list(INTEGER_CASTS.values()), ids=list(INTEGER_CASTS))
def test_integer_casts_are_plain_integers(cast):
    def f(x):   # plain NumPy code: an integer read from a traced value scales the rest
        n = cast(x[0])
        return np.sum(n * x[1:] ** 2)

    expected = np.array([0.0, 2 * int(Y[0]) * Y[1], 2 * int(Y[0]) * Y[2]])
    fd = np.array([(f(Y + e) - f(Y - e)) / 2e-6 for e in np.eye(3) * 1e-6])
    np.testing.assert_allclose(fd, expected, rtol=1e-6, atol=1e-8)   # the NumPy function's
    np.testing.assert_allclose(dk.grad(f)(Y), expected, rtol=1e-12)
    np.testing.assert_allclose(dk.jacfwd(f)(Y), expected, rtol=1e-12)
    hessian = np.zeros((3, 3))
    hessian[1, 1] = hessian[2, 2] = 2 * int(Y[0])
    np.testing.assert_allclose(dk.hessian(f)(Y), hessian, rtol=1e-12, atol=0)


def test_integer_casts_give_python_and_numpy_integers():
    seen = {}

    def f(x):
        seen["int"], seen["int64"], seen["intp"] = int(x[0]), np.int64(x[0]), np.intp(x[1])
        return np.sum(x)

    dk.grad(f)(Y)
    assert type(seen["int"]) is int and seen["int"] == 2
    assert isinstance(seen["int64"], np.int64) and seen["int64"] == 2
    assert isinstance(seen["intp"], np.intp) and seen["intp"] == -1
    dk.jvp(f, (Y,), (np.ones(3),))
    assert seen["int"] == 2


def test_integer_cast_under_vmap_is_a_clear_error():
    with pytest.raises(TracerConversionError, match="batched traced value"):
        dk.vmap(lambda x: int(x[0]) * x)(np.ones((2, 3)))
    with pytest.raises(TracerConversionError, match="batched traced value"):
        dk.vmap(lambda x: np.int64(x[0]) * x)(np.ones((2, 3)))
    # astype stays batched: a traced integer array
    np.testing.assert_array_equal(dk.vmap(lambda x: x.astype(np.int32))(Y.reshape(3, 1)),
                                  Y.reshape(3, 1).astype(np.int32))


@pytest.mark.parametrize("cast", [float, np.float64, np.asarray, lambda t: np.asarray(t, float)],
                         ids=["float", "np.float64", "np.asarray", "np.asarray-float"])
def test_float_casts_keep_raising(cast):
    with pytest.raises(TracerConversionError, match="would drop the derivative"):
        dk.grad(lambda x: np.sum(cast(x[0]) * x))(Y)


@BOTH_MODES
def test_item(run):
    def f(t):
        return t[2].item() * t  # escapes here

    text = escape_message(f, run)
    assert "t[2].item()" in text and "dk.stop_gradient(t[2])" in text


@BOTH_MODES
def test_math_function_suggests_numpy(run):
    def f(t):
        return math.sin(t[0]) + t  # escapes here

    text = escape_message(f, run)
    assert "math.sin works on Python numbers only" in text
    assert "Use np.sin(t[0]) instead" in text and "dk.stop_gradient(t[0])" in text


def test_math_function_imported_by_name():
    from math import exp

    def f(t):
        return exp(t[1]) + t  # escapes here

    assert "Use np.exp(t[1]) instead" in escape_message(f)


def test_stop_gradient_is_the_constant_fix():
    # the suggested dk.stop_gradient keeps an array with zero derivative
    g = dk.grad(lambda t: np.sum(dk.stop_gradient(t[0]) * t))(X3)
    np.testing.assert_allclose(g, np.full(3, X3[0]), rtol=1e-12)


# --- truth tests keep working on the concrete value --------------------------------------


def piecewise(x):
    if x > 0:
        return x ** 3
    return -2.0 * x


@pytest.mark.parametrize("x, slope", [(1.5, 3 * 1.5 ** 2), (-1.0, -2.0)])
def test_if_on_a_traced_value_forward_and_reverse(x, slope):
    np.testing.assert_allclose(dk.grad(piecewise)(x), slope, rtol=1e-12)
    np.testing.assert_allclose(dk.jvp(piecewise, (x,), (1.0,))[1], slope, rtol=1e-12)


def test_truth_tests_in_a_loop_and_on_arrays():
    def halve_until_small(x):
        while x > 1.0:
            x = x / 2.0
        return x * 3.0 if bool(np.all(x > 0)) else x

    # 10 -> 5 -> 2.5 -> 1.25 -> 0.625: derivative 3 / 16
    np.testing.assert_allclose(dk.grad(halve_until_small)(10.0), 3 / 16, rtol=1e-12)
    np.testing.assert_allclose(dk.jvp(halve_until_small, (10.0,), (1.0,))[1], 3 / 16,
                               rtol=1e-12)


# --- in-place writes into an ndarray -----------------------------------------------------


@BOTH_MODES
def test_write_one_element(run):
    def f(t):
        y = np.zeros(3)
        y[1] = t[0] * 2  # escapes here
        return y

    text = escape_message(f, run)
    assert text.startswith("Writing into a NumPy array in place would drop the derivative")
    assert "y = y.at[1].set(t[0] * 2)" in text
    assert "np.stack(values)" in text and "np.concatenate" in text


@BOTH_MODES
def test_write_a_slice(run):
    def f(t):
        y = np.zeros(4)
        y[1:3] = t[:2]  # escapes here
        return y

    text = escape_message(f, run)
    assert "y = y.at[1:3].set(t[:2])" in text and "np.concatenate" in text


def test_write_in_a_loop_into_an_int_array():
    def f(t):
        y = np.zeros(3, dtype=int)
        for i in range(3):
            y[i] = t[i]  # escapes here
        return y

    assert "y = y.at[i].set(t[i])" in escape_message(f, RUNS["jvp"])


def test_write_leaves_tracing_as_it_was():
    def f(t):
        y = np.zeros(3)
        y[0] = t[0]  # escapes here
        return y

    before = sys.gettrace()
    escape_message(f)
    assert sys.gettrace() is before
    # and differentiation still works afterwards
    np.testing.assert_allclose(dk.grad(lambda t: np.sum(t ** 2))(X3), 2 * X3, rtol=1e-12)


def test_write_under_a_running_tracer_keeps_it():
    # Under a debugger or coverage tracer the error cannot be raised from a trace hook
    # (Python would switch the tracer off), so NumPy's ValueError carries it as its cause.
    events = []

    def tracer(frame, event, arg):
        events.append(event)

    def f(t):
        y = np.zeros(3)
        y[0] = t[0]  # escapes here
        return y

    before = sys.gettrace()
    sys.settrace(tracer)
    try:
        with pytest.raises(ValueError) as excinfo:
            RUNS["grad"](f)
        assert sys.gettrace() is tracer
    finally:
        sys.settrace(before)
    cause = excinfo.value.__cause__
    assert isinstance(cause, TracerConversionError)
    lineno, _ = marked_line(f)
    assert f'line {lineno}, in f' in str(cause) and "y = y.at[0].set(t[0])" in str(cause)
    assert "call" in events


def test_concatenate_is_the_fix():
    def f(t):
        y = np.zeros(4)
        y = np.concatenate([y[:1], t[:2], y[3:]])
        return np.sum(y * np.arange(4.0))

    np.testing.assert_allclose(dk.grad(f)(X3), [1.0, 2.0, 0.0], rtol=1e-12)


def test_at_set_is_the_fix_for_a_traced_array():
    def f(t):
        y = t * 1.0
        y = y.at[1:3].set(t[:2] ** 2)
        return np.sum(y * np.arange(1.0, 4.0))

    # y = [t0, t0^2, t1^2]: d/dt = [1 + 2*2 t0, 3*2 t1, 0]
    expected = [1 + 4 * X3[0], 6 * X3[1], 0.0]
    np.testing.assert_allclose(dk.grad(f)(X3), expected, rtol=1e-12)


# --- out= buffers ------------------------------------------------------------------------


@BOTH_MODES
def test_ufunc_with_out(run):
    def f(t):
        y = np.empty(3)
        np.add(t, 1.0, out=y)  # escapes here
        return y

    text = escape_message(f, run)
    assert "y = np.add(t, 1.0) (no out=)" in text


def test_function_with_out():
    def f(t):
        total = np.empty(())
        np.sum(t, out=total)  # escapes here
        return total

    assert "y = np.sum(t) (no out=)" in escape_message(f)


def test_ufunc_at():
    def f(t):
        y = np.zeros(3)
        np.add.at(y, [0, 0], t[:2])  # escapes here
        return y

    assert "y = y.at[[0, 0]].add(t[:2])" in escape_message(f)


# --- functions that call Python code on plain numbers ------------------------------------


def test_vectorize():
    def f(t):
        return np.vectorize(lambda v: v * 2.0)(t)  # escapes here

    text = escape_message(f)
    assert text.startswith("np.vectorize would drop the derivative")
    assert "dk.vmap(f)" in text and "array operations" in text


def test_apply_along_axis_routes_to_diffkit():
    # np.apply_along_axis on a traced value runs diffkit's, which calls the function on
    # traced slices: the derivative is kept (cumsum along axis 0: d/dx_ij = rows - i)
    t = np.arange(6.0).reshape(3, 2)
    got = dk.grad(lambda v: np.sum(np.apply_along_axis(np.cumsum, 0, v)))(t)
    np.testing.assert_array_equal(got, [[3.0, 3.0], [2.0, 2.0], [1.0, 1.0]])


# --- SciPy functions that coerce with asarray --------------------------------------------


@pytest.mark.parametrize("run", [RUNS["grad"], lambda f: dk.jvp(f, (X3,), (np.ones(3),))],
                         ids=["grad", "jvp"])
def test_scipy_linalg_expm(run):
    def f(t):
        return scipy.linalg.expm(np.diag(t))  # escapes here

    text = escape_message(f, run)
    assert "scipy.linalg.expm converts its inputs to plain NumPy arrays" in text
    assert "Use diffkit.scipy.linalg.expm instead" in text


def test_scipy_special_logsumexp():
    def f(t):
        return scipy.special.logsumexp(t)  # escapes here

    assert "Use diffkit.scipy.special.logsumexp instead" in escape_message(f)


def test_scipy_stats_norm_logpdf():
    def f(t):
        return scipy.stats.norm.logpdf(t, loc=0.5)  # escapes here

    text = escape_message(f)
    assert "scipy.stats.norm.logpdf converts" in text
    assert "Use diffkit.scipy.stats.norm.logpdf instead" in text


def test_scipy_linalg_solve():
    A = np.eye(3) * 2.0

    def f(t):
        return scipy.linalg.solve(A, t)  # escapes here

    assert "Use diffkit.scipy.linalg.solve instead" in escape_message(f)


def test_scipy_function_without_a_replacement():
    def f(t):
        return scipy.linalg.sinhm(np.diag(t))  # escapes here

    text = escape_message(f)
    assert "scipy.linalg.sinhm converts traced values to plain NumPy values" in text
    assert "diffkit.scipy has no replacement" in text and "dk.custom_vjp" in text


def test_scipy_ufuncs_dispatch_instead():
    # SciPy's special ufuncs (gammaln) go through __array_ufunc__: no escape, true derivative
    g = dk.grad(lambda t: np.sum(scipy.special.gammaln(t + 2.0)))(X3)
    np.testing.assert_allclose(g, scipy.special.digamma(X3 + 2.0), rtol=1e-12)


def test_scipy_wrapper_of_a_private_ufunc():
    # scipy.special.zeta calls the private ufunc _zeta: the error points to diffkit's zeta
    def f(t):
        return scipy.special.zeta(t + 2.0, 1.0)  # escapes here

    text = escape_message(f, error=NoRuleError)
    assert "scipy.special.zeta calls the ufunc _zeta" in text
    assert "Use diffkit.scipy.special.zeta instead" in text


def test_numpy_python_code_that_coerces():
    def f(t):
        return np.polynomial.polynomial.polyval(2.0, t)  # escapes here

    text = escape_message(f)
    assert "np.polynomial.polynomial.polyval converts its input with np.asarray" in text
    assert "dk.custom_vjp" in text


@pytest.mark.parametrize("run", list(RUNS.values()), ids=list(RUNS))
def test_augmented_write_of_an_element(run):
    def f(t):
        y = np.ones(3)
        y[2] *= t[1]  # escapes here
        return y

    assert "y = y.at[2].multiply(t[1])" in escape_message(f, run)


def test_augmented_assignment_of_a_whole_array():
    def f(t):
        y = np.ones(3)
        y -= t  # escapes here
        return y

    text = escape_message(f)
    assert text.startswith("y -= t would drop the derivative")
    assert "Write y = y - t instead" in text


def test_rebinding_is_the_fix_for_augmented_assignment():
    def f(t):
        y = np.ones(3)
        y = y - t
        return np.sum(y * np.arange(3.0))

    np.testing.assert_allclose(dk.grad(f)(X3), -np.arange(3.0), rtol=1e-12)


def test_branch_on_a_batched_value_names_the_line():
    def f(t):
        if t > 0:  # escapes here
            return t
        return -t

    text = escape_message(f, lambda f: dk.vmap(f)(X3))
    assert "dnp.where(condition, a, b)" in text
