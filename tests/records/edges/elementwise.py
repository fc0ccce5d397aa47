"""Edge samples of the elementwise functions of tests/records/ops/elementwise.py
and ufuncs.py: zeros and signed zeros, domain boundaries, poles, kinks, ties,
overflow and underflow, infinities and NaN."""

import numpy as np

from ..edge_sample import boundary, edge, kink

INF, NAN = np.inf, np.nan
E = []

# --- arithmetic -------------------------------------------------------------------------------
E += edge("add", [0.0, -0.0, INF], [-0.0, -0.0, 1.0], differentiable=False, jacobian=np.hstack(
    [np.eye(3), np.eye(3)]))
E += edge("subtract", [0.0, -0.0, 1e308], [0.0, 0.0, -1e308], differentiable=False,
          jacobian=np.hstack([np.eye(3), -np.eye(3)]))
E += edge("multiply", [0.0, -0.0, 2.0], [-0.0, 3.0, 0.0])
E += kink("multiply", [INF, 0.0], [0.0, INF], label="inf*0",
          jacobian=np.hstack([np.diag([0.0, INF]), np.diag([INF, 0.0])]))
E += edge("divide", [0.0, -0.0, 1.0], [2.0, -3.0, 0.1], label="zero_numerator")
E += kink("divide", [1.0], [1e-300], label="tiny_divisor", jacobian=[[1e300, -INF]])
E += kink("divide", [1.0, -1.0], [0.0, 0.0], label="pole",
          jacobian=np.hstack([np.diag([INF, INF]), np.diag([-INF, INF])]))
E += edge("divide", [0.0], [0.0], label="0/0", differentiable=False)
E += edge("negative", [0.0, -0.0, INF], differentiable=False, jacobian=-np.eye(3))
E += edge("square", [0.0, -0.0, 1e150])
E += kink("square", [1e200], label="overflow", jacobian=2e200)
E += edge("conj", [0.0, -0.0])

# --- powers -------------------------------------------------------------------------------------
E += kink("power", [0.0, 0.0, 0.0, 0.0], [0.0, 1.0, 2.0, 3.0], label="zero_base",
          jacobian=np.hstack([np.diag([0.0, 1.0, 0.0, 0.0]), np.zeros((4, 4))]))
E += kink("power", [0.0], [0.5], label="zero_base_sqrt", jacobian=[[INF, 0.0]])
E += kink("power", [0.0], [-1.0], label="zero_base_pole", jacobian=[[-INF, 0.0]])
E += edge("power", [1.0, 2.0], [0.0, 0.0], label="zero_exponent")
E += kink("power", [-2.0], [3.0], label="negative_base_integer_exponent", jacobian=[[12.0, 0.0]])
E += edge("power_int_exponent", [0.0, -0.0, -2.0], ref=lambda x: np.power(x, 3))
# second order: finite differences of x**1.5 converge like sqrt(h) at 0
E += boundary("power_float_exponent", [0.0], side=1, second_order=False,
              ref=lambda x: np.power(x, 2.5))
E += kink("power_negative_exponent", [0.0], jacobian=-INF, ref=lambda x: x ** -1.5)
E += kink("power_zero_exponent", [0.0, -0.0, 3.0], jacobian=0.0,
          ref=lambda x: np.power(x, 0))
E += edge("power_scalar_base", [0.0, -1100.0, 1.0], ref=lambda y: np.power(2.0, y))
E += kink("power_scalar_base", [1100.0], label="overflow", jacobian=INF,
          ref=lambda y: np.power(2.0, y), dtypes=False)
E += kink("sqrt", [0.0], jacobian=INF)
E += kink("sqrt", [-0.0], label="-0.0", jacobian=INF)
E += kink("sqrt", [1e-300, 1e300], label="tiny,huge", jacobian=np.diag([5e149, 5e-151]))
E += kink("cbrt", [0.0], jacobian=INF)
E += edge("cbrt", [-8.0, 1e-3])
E += kink("cbrt", [1e-300], label="tiny", jacobian=1e200 / 3)
E += kink("reciprocal", [0.0, -0.0], jacobian=np.diag([-INF, -INF]))
E += kink("reciprocal", [1e-150, -1e150], jacobian=np.diag([-1e300, -1e-300]))
E += kink("float_power", [0.0, 0.0], [2.0, 0.0], label="zero_base",
          jacobian=np.hstack([np.zeros((2, 2)), np.zeros((2, 2))]))
E += boundary("float_power_scalar", [0.0], side=1, ref=lambda x: np.float_power(x, 3))

# --- exponentials and logarithms ------------------------------------------------------------------
E += edge("exp", [0.0, -0.0, -1e5, 709.0])
E += kink("exp", [1e5], label="overflow", jacobian=INF)
E += kink("exp2", [1e5], label="overflow", jacobian=INF)
E += edge("exp2", [0.0, -1100.0])
E += edge("expm1", [0.0, -0.0, -1e5, 1e-300])
E += kink("expm1", [1e5], label="overflow", jacobian=INF)
E += kink("log", [0.0], jacobian=INF)
E += kink("log", [-0.0], label="-0.0", jacobian=INF)
E += edge("log", [1e-300, 1e300, INF], differentiable=False, jacobian=np.diag([1e300, 1e-300,
                                                                                0.0]))
E += edge("log", [-1.0], label="outside", differentiable=False)
E += kink("log2", [0.0], jacobian=INF)
E += kink("log10", [0.0], jacobian=INF)
E += kink("log1p", [-1.0], jacobian=INF)
E += edge("log1p", [0.0, -0.0, 1e-300])
E += kink("logaddexp", [-INF, INF, 0.0], [-INF, INF, -INF], label="infinities",
          jacobian=np.hstack([np.diag([0.5, 0.5, 1.0]), np.diag([0.5, 0.5, 0.0])]))
E += edge("logaddexp", [30.0, -40.0], [30.0, 0.0], label="large")
E += kink("logaddexp", [1e5, -1e5], [1e5, 0.0], label="huge",
          jacobian=np.hstack([np.diag([0.5, 0.0]), np.diag([0.5, 1.0])]))
E += kink("logaddexp2", [-INF, INF], [-INF, INF], label="infinities",
          jacobian=np.hstack([np.diag([0.5, 0.5]), np.diag([0.5, 0.5])]))
E += kink("logaddexp_tie", [-INF, INF, 0.0], jacobian=np.diag([1.0, 1.0, 1.0]),
          ref=lambda x: np.logaddexp(x, x))

# --- trigonometric and hyperbolic -----------------------------------------------------------------
for _name in ("sin", "cos", "tan", "sinh", "cosh", "tanh", "arctan", "arcsinh", "sinc"):
    E += edge(_name, [0.0, -0.0])
E += edge("tanh", [1e5, -1e5, 20.0], label="saturated")
E += edge("arctan", [1e200, -1e200], label="huge")
E += kink("sinh", [1e5], label="overflow", jacobian=INF)
E += kink("cosh", [1e5], label="overflow", jacobian=INF)
E += edge("sinc_near_zero", [1e-10, -1e-8, 1e-4], ref=np.sinc)
E += kink("arcsin", [1.0, -1.0], jacobian=np.diag([INF, INF]))
E += edge("arcsin", [0.0, -0.0, 0.999])
E += kink("arccos", [1.0, -1.0], jacobian=np.diag([-INF, -INF]))
E += kink("arccosh", [1.0], jacobian=INF)
E += kink("arctanh", [1.0, -1.0], jacobian=np.diag([INF, INF]))
E += edge("arctanh", [0.0, -0.0])
E += kink("arctan2", [0.0, -0.0], [0.0, 0.0], label="origin", jacobian=np.zeros((2, 4)))
E += kink("arctan2", [0.0, -0.0], [-1.0, -1.0], label="branch_cut",
          jacobian=np.hstack([np.diag([-1.0, -1.0]), np.zeros((2, 2))]))
E += edge("arctan2", [1.0, 0.0], [0.0, 1.0], label="axes")
E += kink("hypot", [0.0, 0.0], [0.0, -0.0], label="origin", jacobian=np.zeros((2, 4)))
E += edge("hypot", [1e200, -3e200], [1e200, 4e200], label="overflow")
E += kink("hypot", [3e-200], [4e-200], label="underflow", jacobian=[[0.6, 0.8]])
E += edge("hypot", [0.0, 3.0], [2.0, 0.0], label="axis")
E += edge("deg2rad", [0.0, 1e308])
E += edge("rad2deg", [0.0, 1e300])

# --- kinks, ties and selections -------------------------------------------------------------------
E += kink("abs", [0.0, -0.0, 2.0], jacobian=np.diag([0.0, 0.0, 1.0]))
E += kink("fabs", [0.0, -0.0, -2.0], jacobian=np.diag([0.0, 0.0, -1.0]))
E += edge("sign", [0.0, -0.0, NAN])
E += edge("sign", [0.0, -2.0], label="kink")
E += kink("maximum", [1.0, 0.0, -0.0], [1.0, -0.0, 0.0], label="ties",
          jacobian=np.hstack([0.5 * np.eye(3), 0.5 * np.eye(3)]))
E += kink("minimum", [1.0, 0.0, -0.0], [1.0, -0.0, 0.0], label="ties",
          jacobian=np.hstack([0.5 * np.eye(3), 0.5 * np.eye(3)]))
E += edge("maximum", [NAN, 1.0], [1.0, NAN], label="nan", differentiable=False)
E += kink("maximum_scalar", [0.0, -0.0], jacobian=0.5 * np.eye(2),
          ref=lambda x: np.maximum(x, 0.0))
E += kink("maximum_tie", [0.0, INF], jacobian=np.eye(2), ref=lambda x: np.maximum(x, x))
E += kink("minimum_tie", [0.0, -INF], jacobian=np.eye(2), ref=lambda x: np.minimum(x, x))
E += kink("fmax", [1.0, NAN, 2.0], [1.0, 3.0, NAN], label="ties,nan", jacobian=np.hstack(
    [np.diag([0.5, 0.0, 1.0]), np.diag([0.5, 1.0, 0.0])]))
E += kink("fmin", [1.0, NAN, 2.0], [1.0, 3.0, NAN], label="ties,nan", jacobian=np.hstack(
    [np.diag([0.5, 0.0, 1.0]), np.diag([0.5, 1.0, 0.0])]))
E += kink("fmax_tie", [0.0, NAN], jacobian=np.eye(2), ref=lambda x: np.fmax(x, x))
E += kink("fmin_tie", [0.0, NAN], jacobian=np.eye(2), ref=lambda x: np.fmin(x, x))
E += kink("clip_scalar_bounds", [-0.5, 0.7, 2.0], ref=lambda x: np.clip(x, -0.5, 0.7),
          jacobian=np.diag([1.0, 1.0, 0.0]))
E += kink("clip_one_sided", [0.5], ref=lambda x: np.clip(x, None, 0.5), jacobian=1.0)
E += kink("clip_array_bounds", [0.0, 1.0, 2.0], [0.0, 0.5, 0.0], [1.0, 1.0, 1.0], ref=np.clip,
          jacobian=np.hstack([np.diag([1.0, 1.0, 0.0]), np.zeros((3, 3)),
                              np.diag([0.0, 0.0, 1.0])]))
E += kink("clip_array_bounds", [0.5], [1.0], [0.0], label="lo>hi", ref=np.clip,
          jacobian=[[0.0, 0.0, 1.0]])
E += edge("where", np.array([True, False]), [1.0, INF], [INF, 2.0], differentiable=False,
          jacobian=np.hstack([np.diag([1.0, 0.0]), np.diag([0.0, 1.0])]))
E += kink("where_of_comparison", [0.0, -0.0], ref=lambda x: np.where(x > 0, x, 0.3 * x),
          jacobian=0.3 * np.eye(2))
E += kink("copysign", [0.0, 2.0, -2.0], [-1.0, -0.0, 0.0], label="zeros", jacobian=np.hstack(
    [np.diag([0.0, -1.0, -1.0]), np.zeros((3, 3))]))
E += kink("heaviside", np.array([0, 0, 1, -1]), [0.5, 2.0, 0.5, 0.5],
          jacobian=np.diag([1.0, 1.0, 0.0, 0.0]))
E += kink("nan_to_num", [NAN, INF, -INF, 1.0], jacobian=np.diag([0.0, 0.0, 0.0, 1.0]))
E += kink("fmod", [2.0, -2.0, 0.0], [1.0, 1.0, 1.0], label="jumps",
          jacobian=np.hstack([np.eye(3), np.diag([-2.0, 2.0, 0.0])]))
E += kink("remainder", [2.0, -2.0, 0.0], [1.0, 1.0, 1.0], label="jumps",
          jacobian=np.hstack([np.eye(3), np.diag([-2.0, 2.0, 0.0])]))
E += edge("fmod", [1.0], [0.0], label="zero_divisor", differentiable=False)
E += kink("divmod", [2.0, -0.5], [1.0, 0.5], ref=np.divmod, label="jumps",
          jacobian=np.vstack([np.zeros((2, 4)), np.hstack([np.eye(2), np.diag([-2.0, 1.0])])]))
E += kink("modf", [0.0, -0.0, 2.0, -1.0], jacobian=np.vstack([np.eye(4), np.zeros((4, 4))]))
E += kink("frexp", [0.0, 1.0, -0.5, INF], jacobian=np.diag([1.0, 0.5, 1.0, 1.0]))
E += kink("ldexp", [0.0, 1.0, 1e300], np.array([3, -1, 10]),
          jacobian=np.diag([8.0, 0.5, 1024.0]))
E += edge("nextafter", [0.0, 1.0], [1.0, 1.0])
E += edge("positive", [-0.0, INF], differentiable=False, jacobian=np.eye(2))

# --- piecewise constant (derivative 0 everywhere, jumps included) ---------------------------------
for _name in ("floor", "ceil", "trunc", "fix", "rint", "round"):
    E += edge(_name, [0.0, -0.0, 1.0, -2.5, 0.5, 1.5])
E += edge("spacing", [0.0, -0.0, 1.0])
E += edge("signbit", [0.0, -0.0, NAN, -INF])
E += edge("floor_divide", [2.0, -2.0, 1.0], [1.0, 1.0, 0.0])
E += edge("around_decimals", [0.05, 0.15, -0.25], ref=lambda x: np.around(x, 1))
# comparisons at signed zeros and NaN: values as NumPy's, no derivative
for _name in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal"):
    E += edge(_name, [0.0, -0.0, NAN], [-0.0, NAN, NAN], label="zeros_nan")
EDGES = E
