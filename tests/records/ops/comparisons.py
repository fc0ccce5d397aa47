"""Records of the functions without a derivative: comparisons, logical functions,
predicates, ``argmax``/``argmin``. Their tangents and cotangents must be zero.
"""

from __future__ import annotations

import diffkit.numpy as dnp

from ..domains import (
    COARSE,
    DISTINCT,
)
from ..op_record import BINARY_SHAPES, UNARY_SHAPES, binary, one, unary

R = []

# --- no derivative: comparisons, predicates, argmax -----------------------------------------
for _name in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
              "logical_and", "logical_or"):
    R += binary(_name, getattr(dnp, _name), (COARSE, COARSE), zero_derivative=True,
                shapes=BINARY_SHAPES[:3])
R += unary("logical_not", dnp.logical_not, COARSE, zero_derivative=True)
R += unary("comparison_operators", lambda x: (x < 0.3, x >= 0.5, x == 0.0, x != 0.5),
           COARSE, zero_derivative=True, shapes=[((2, 3),)])
for _name in ("isfinite", "isnan", "isinf"):
    R += unary(_name, getattr(dnp, _name), zero_derivative=True, shapes=UNARY_SHAPES[:3])
for _name, _fn in (("argmax", dnp.argmax), ("argmin", dnp.argmin)):
    R += unary(_name, _fn, DISTINCT, zero_derivative=True, shapes=UNARY_SHAPES[1:3])
    R += one(f"{_name}_axis1", lambda x, f=_fn: f(x, axis=1), (2, 3, 4),
             domains=(DISTINCT,), zero_derivative=True)

RECORDS = R
