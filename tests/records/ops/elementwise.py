"""Records of the elementwise functions of ``diffkit.numpy``: arithmetic, powers,
exponentials, logarithms, trigonometry, and the selections (``maximum``, ``where``,
``clip``), whose arguments come from interleaved grids so that they never tie.
"""

from __future__ import annotations

import diffkit.numpy as dnp

from ..domains import (
    BOOL,
    EVEN,
    LOG1P,
    NONZERO,
    ODD,
    POSITIVE,
    QUARTER,
    REAL,
    SMALL,
    Domain,
)
from ..op_record import binary, records, unary

R = []

# --- elementwise arithmetic -----------------------------------------------------------------
R += binary("add", dnp.add)
R += binary("subtract", dnp.subtract)
R += binary("multiply", dnp.multiply)
R += binary("divide", dnp.divide, (REAL, NONZERO))
R += binary("operators", lambda x, y: (x + y) * x - y / (1.5 + x * x) + (-x),
            shapes=[((3,), (3,)), ((2, 3), (3,))])
R += unary("negative", dnp.negative)
R += binary("power", dnp.power, (POSITIVE, REAL))
R += unary("power_int_exponent", lambda x: dnp.power(x, 3))
R += unary("power_float_exponent", lambda x: dnp.power(x, 2.5), POSITIVE)
R += unary("power_negative_exponent", lambda x: x ** -1.5, POSITIVE)
R += unary("power_zero_exponent", lambda x: dnp.power(x, 0))
R += unary("power_scalar_base", lambda y: dnp.power(2.0, y))
R += unary("square", dnp.square)
R += unary("sqrt", dnp.sqrt, POSITIVE)
R += unary("abs", dnp.abs, NONZERO)
R += unary("sign", dnp.sign, NONZERO, zero_derivative=True)
R += unary("conj", dnp.conj)   # the identity on real arrays

# --- exponentials, logarithms, trigonometry -------------------------------------------------
R += unary("exp", dnp.exp)
R += unary("log", dnp.log, POSITIVE)
R += unary("log1p", dnp.log1p, LOG1P)
R += unary("expm1", dnp.expm1)
R += unary("sin", dnp.sin)
R += unary("cos", dnp.cos)
R += unary("tan", dnp.tan, SMALL)
R += unary("tanh", dnp.tanh)
R += unary("sinh", dnp.sinh)
R += unary("cosh", dnp.cosh)
R += unary("arctan", dnp.arctan)

# --- selections -----------------------------------------------------------------------------
R += binary("maximum", dnp.maximum, (EVEN, ODD))
R += binary("minimum", dnp.minimum, (EVEN, ODD))
R += unary("maximum_scalar", lambda x: dnp.maximum(x, 0.0), NONZERO)
R += unary("maximum_tie", lambda x: dnp.maximum(x, x))   # ties share the derivative
R += unary("minimum_tie", lambda x: dnp.minimum(x, x))
R += records("where", dnp.where,
             [((3,), (3,), (3,)), ((2, 3), (3,), ()), ((3, 1), (1, 4), (4,)),
              ((), (2, 3), (2, 3)), ((2, 3), (), ())],
             (BOOL, REAL, REAL), elementwise=True)
R += unary("where_of_comparison", lambda x: dnp.where(x > 0, x, 0.3 * x), NONZERO)
R += unary("clip_scalar_bounds", lambda x: dnp.clip(x, -0.5, 0.7),
           Domain("away from -0.5, 0.7", avoid=(-0.5, 0.7), margin=0.1))
R += unary("clip_one_sided", lambda x: dnp.clip(x, None, 0.5), Domain(
    "away from 0.5", avoid=(0.5,), margin=0.1))
R += records("clip_array_bounds", dnp.clip,
             [((3,), (3,), (3,)), ((2, 3), (3,), ()), ((4,), (3, 1), (1,))],
             (EVEN, ODD, QUARTER), elementwise=True)

RECORDS = R
