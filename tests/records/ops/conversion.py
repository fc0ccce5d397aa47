"""Records of ``stop_gradient`` and the dtype conversions, and float32 staying float32 in
tangents and cotangents (looser tolerances apply).
"""

from __future__ import annotations

import numpy as np

import diffkit as dk
import diffkit.numpy as dnp

from ..domains import (
    REAL,
    REAL32,
)
from ..op_record import binary, one, unary

R = []

# --- control and conversion -----------------------------------------------------------------
R += unary("stop_gradient", dnp.stop_gradient, zero_derivative=True)
R += unary("stop_gradient_api", dk.stop_gradient, zero_derivative=True,
           shapes=[((3,),)])
SEEN = []   # what the debugging callback received (plain values, not traced ones)
R += unary("debug_callback", lambda x: (dk.debug.callback(SEEN.append, x), x * 1.0)[1],
           shapes=[((3,),), ((2, 3),)])
R += unary("astype_float32", lambda x: dnp.astype(x, np.float32))
R += unary("astype_float64", lambda x: dnp.astype(x, np.float64), REAL32)
R += unary("astype_method", lambda x: x.astype(np.float32), shapes=[((2, 3),)])
R += unary("astype_int", lambda x: dnp.astype(x, np.int64), zero_derivative=True)

# --- float32 stays float32 in tangents and cotangents (looser tolerances apply) -------------
R += unary("sin_float32", dnp.sin, REAL32, shapes=[((3,),), ((2, 3),)])
# NumPy 1.x casts a 0-d float64 operand by value (the result stays float32); under vmap that
# operand is a batched array, so only NumPy 2's rules (NEP 50) can be followed there.
_NEP50 = np.lib.NumpyVersion(np.__version__) >= "2.0.0"
R += binary("multiply_float32_float64", dnp.multiply, (REAL32, REAL),
            shapes=[((3,), (3,))] + ([((2, 3), ())] if _NEP50 else []))
R += binary("add_float32", dnp.add, (REAL32, REAL32), shapes=[((3, 1), (4,))])
R += one("sum_float32", lambda x: dnp.sum(x, axis=1), (2, 3), domains=(REAL32,))
R += one("matmul_float32", dnp.matmul, (3, 4), (4, 2), domains=(REAL32, REAL32))
R += one("getitem_float32", lambda x: x[np.array([0, 2, 2])], (3, 4), domains=(REAL32,))

RECORDS = R
