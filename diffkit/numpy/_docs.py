"""Docstrings of diffkit.numpy's elementwise primitives (NumPy's ufuncs): what each computes,
elementwise with NumPy's broadcasting, and its derivative. The conventions at points with no
derivative are those of docs/conventions.md. Functions written in Python carry their own
docstrings; ``describe`` adds the signature note to every one.
"""

import inspect

_PIECEWISE = "Derivative: 0 everywhere (a piecewise-constant function; 0 at its jumps too)."
_NONE = "No derivative: the result is boolean or integer."

PRIMITIVE_DOCS = {
    "abs": ("Absolute value |x| (the modulus for complex x).",
            "Derivative: sign(x); 0 at x = 0."),
    "fabs": ("Absolute value of real x.", "Derivative: sign(x); 0 at x = 0."),
    "add": ("Sum x1 + x2.", "Derivative: 1 in each argument."),
    "subtract": ("Difference x1 - x2.", "Derivative: 1 in x1, -1 in x2."),
    "multiply": ("Product x1 * x2.", "Derivative: x2 in x1, x1 in x2."),
    "divide": ("Quotient x1 / x2.", "Derivative: 1/x2 in x1, -x1/x2**2 in x2."),
    "negative": ("Negation -x.", "Derivative: -1."),
    "reciprocal": ("Reciprocal 1/x.", "Derivative: -1/x**2."),
    "square": ("Square x**2.", "Derivative: 2x."),
    "sqrt": ("Non-negative square root.",
             "Derivative: 1/(2 sqrt(x)); +inf at x = 0 for a nonzero tangent, and a zero "
             "tangent or cotangent gives 0 there, never NaN."),
    "cbrt": ("Real cube root.", "Derivative: 1/(3 cbrt(x)**2) (infinite at 0)."),
    "exp": ("Exponential e**x.", "Derivative: exp(x)."),
    "exp2": ("Power of two 2**x.", "Derivative: log(2) 2**x."),
    "expm1": ("exp(x) - 1, accurate for small x.", "Derivative: exp(x)."),
    "log": ("Natural logarithm.", "Derivative: 1/x."),
    "log2": ("Base-2 logarithm.", "Derivative: 1/(x log 2)."),
    "log10": ("Base-10 logarithm.", "Derivative: 1/(x log 10)."),
    "log1p": ("log(1 + x), accurate for small x.", "Derivative: 1/(1 + x)."),
    "logaddexp": ("log(exp(x1) + exp(x2)), computed without overflow.",
                  "Derivative: the softmax weights exp(xi - out); half to each argument "
                  "at equal infinities."),
    "logaddexp2": ("log2(2**x1 + 2**x2), computed without overflow.",
                   "Derivative: the weights 2**(xi - out)."),
    "sin": ("Sine.", "Derivative: cos(x)."),
    "cos": ("Cosine.", "Derivative: -sin(x)."),
    "tan": ("Tangent.", "Derivative: 1 + tan(x)**2."),
    "arcsin": ("Inverse sine.", "Derivative: 1/sqrt(1 - x**2)."),
    "arccos": ("Inverse cosine.", "Derivative: -1/sqrt(1 - x**2)."),
    "arctan": ("Inverse tangent.", "Derivative: 1/(1 + x**2)."),
    "arctan2": ("Angle of the point (x2, x1): arctan(x1/x2) in the right quadrant.",
                "Derivative: x2/r**2 in x1 and -x1/r**2 in x2 (r = hypot); 0 at (0, 0)."),
    "hypot": ("sqrt(x1**2 + x2**2), without overflow.",
              "Derivative: xi/hypot in each argument; 0 at (0, 0)."),
    "sinh": ("Hyperbolic sine.", "Derivative: cosh(x)."),
    "cosh": ("Hyperbolic cosine.", "Derivative: sinh(x)."),
    "tanh": ("Hyperbolic tangent.", "Derivative: 1 - tanh(x)**2."),
    "arcsinh": ("Inverse hyperbolic sine.", "Derivative: 1/sqrt(x**2 + 1)."),
    "arccosh": ("Inverse hyperbolic cosine.", "Derivative: 1/sqrt(x**2 - 1)."),
    "arctanh": ("Inverse hyperbolic tangent.", "Derivative: 1/(1 - x**2)."),
    "deg2rad": ("Degrees to radians.", "Derivative: pi/180."),
    "radians": ("Degrees to radians.", "Derivative: pi/180."),
    "rad2deg": ("Radians to degrees.", "Derivative: 180/pi."),
    "degrees": ("Radians to degrees.", "Derivative: 180/pi."),
    "conjugate": ("Complex conjugate (x itself for real x).",
                  "Derivative: the conjugate of the tangent (a linear map)."),
    "maximum": ("Larger of x1 and x2 (NaN if either is NaN).",
                "Derivative: to the larger argument; half to each where x1 == x2."),
    "minimum": ("Smaller of x1 and x2 (NaN if either is NaN).",
                "Derivative: to the smaller argument; half to each where x1 == x2."),
    "fmax": ("Larger of x1 and x2, ignoring a NaN.",
             "Derivative: to the larger argument, half to each on ties, all to the other "
             "argument where one is NaN."),
    "fmin": ("Smaller of x1 and x2, ignoring a NaN.",
             "Derivative: to the smaller argument, half to each on ties, all to the other "
             "argument where one is NaN."),
    "copysign": ("|x1| with the sign of x2.",
                 "Derivative: sign(x1) sign(out) in x1 (0 at x1 = 0), 0 in x2."),
    "fmod": ("Remainder of x1 / x2 with the sign of x1 (C's fmod).",
             "Derivative: 1 in x1, -trunc(x1/x2) in x2 (away from the jumps)."),
    "remainder": ("Remainder of x1 / x2 with the sign of x2 (Python's %).",
                  "Derivative: 1 in x1, -floor(x1/x2) in x2 (away from the jumps)."),
    "floor_divide": ("floor(x1 / x2).", _PIECEWISE),
    "heaviside": ("Step function: 0 for x1 < 0, x2 at x1 == 0, 1 for x1 > 0.",
                  "Derivative: 0 in x1; 1 in x2 where x1 == 0, else 0."),
    "ldexp": ("x1 * 2**x2 (x2 integer).", "Derivative: 2**x2 in x1; none in the integer x2."),
    "nextafter": ("The next floating-point value after x1 towards x2.", _PIECEWISE),
    "spacing": ("Distance from x to the next floating-point value.", _PIECEWISE),
    "floor": ("Largest integer <= x.", _PIECEWISE),
    "ceil": ("Smallest integer >= x.", _PIECEWISE),
    "trunc": ("x rounded towards zero.", _PIECEWISE),
    "fix": ("x rounded towards zero.", _PIECEWISE),
    "rint": ("x rounded to the nearest integer (half to even).", _PIECEWISE),
    "signbit": ("Whether the sign bit of x is set.", _NONE),
    "isfinite": ("Whether x is finite.", _NONE),
    "isinf": ("Whether x is +inf or -inf.", _NONE),
    "isnan": ("Whether x is NaN.", _NONE),
    "equal": ("x1 == x2.", _NONE), "not_equal": ("x1 != x2.", _NONE),
    "less": ("x1 < x2.", _NONE), "less_equal": ("x1 <= x2.", _NONE),
    "greater": ("x1 > x2.", _NONE), "greater_equal": ("x1 >= x2.", _NONE),
    "logical_and": ("Truth of x1 and x2.", _NONE),
    "logical_or": ("Truth of x1 or x2.", _NONE),
    "logical_xor": ("Truth of exactly one of x1, x2.", _NONE),
    "logical_not": ("Truth of not x.", _NONE),
    "bitwise_and": ("Bitwise AND of integers.", _NONE),
    "bitwise_or": ("Bitwise OR of integers.", _NONE),
    "bitwise_xor": ("Bitwise XOR of integers.", _NONE),
    "invert": ("Bitwise NOT of integers (logical not for booleans).", _NONE),
    "bitwise_count": ("Number of 1 bits in |x|.", _NONE),
    "left_shift": ("x1 shifted left by x2 bits.", _NONE),
    "right_shift": ("x1 shifted right by x2 bits.", _NONE),
    "gcd": ("Greatest common divisor of |x1| and |x2|.", _NONE),
    "lcm": ("Least common multiple of |x1| and |x2|.", _NONE),
}

_ALIASES = {"absolute": "abs", "true_divide": "divide", "conj": "conjugate",
            "mod": "remainder", "asin": "arcsin", "acos": "arccos", "atan": "arctan",
            "atan2": "arctan2", "asinh": "arcsinh", "acosh": "arccosh", "atanh": "arctanh",
            "bitwise_not": "invert", "bitwise_invert": "invert",
            "bitwise_left_shift": "left_shift", "bitwise_right_shift": "right_shift",
            "pow": "power"}


def primitive_doc(name):
    """``(summary, derivative)`` of an elementwise primitive, or None."""
    return PRIMITIVE_DOCS.get(_ALIASES.get(name, name))


def describe(name, fn, ref_name, refused, elementwise):
    """The docstring of the wrapper of ``fn`` standing for ``ref_name`` (``numpy.sin``): its
    own text (or the table's), then what the wrapper adds. ``refused``: the reference's
    keywords diffkit takes only at their defaults."""
    text = inspect.cleandoc(getattr(fn, "__doc__", None) or "")
    table = primitive_doc(name)
    if table is not None and (not text or text.startswith("One operation")
                              or getattr(fn, "primitive", None) is not None):
        broadcast = " Elementwise, with broadcasting." if elementwise else ""
        text = f"{table[0]}{broadcast}\n\n{table[1]}"
    elif not text:
        text = f"``{ref_name}`` on traced values and plain arrays."
    note = (f"Signature: ``{ref_name}``'s. Array-like arguments may be (nested) lists or "
            "tuples holding traced values.")
    if refused:
        keys = ", ".join(f"``{k}``" for k in refused)
        note += (f" NumPy's keywords {keys} are accepted only at their default values "
                 "(another value raises ``UnsupportedKeywordError``).")
    return f"{text}\n\n{note}"
