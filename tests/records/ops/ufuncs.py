"""Records of diffkit.ops.ufuncs: the rest of NumPy's ufuncs (see tests/records/ops/__init__.py).

Domains keep the finite differences away from singular points and jumps: the open unit
interval for ``arcsin``, interleaved grids for ``fmax`` and for the remainders (``x / y`` at
least 1/72 from an integer), points away from powers of two for ``frexp``.
"""

import numpy as np

import diffkit.numpy as dnp

from ..domains import EVEN, NONZERO, ODD, POSITIVE, REAL, REAL32, Domain
from ..op_record import binary, one, records, unary

UNIT = Domain("inside (-1, 1)", -0.8, 0.8)
ABOVE_ONE = Domain("above 1", 1.2, 3.0)
# x on 1/8 + k/4, y on 1/5 + 2k/5 (times 2): x / y = 5 (2k + 1) / (8 (2m + 1)) is never
# within 1/72 of an integer.
DIVIDEND = ODD
DIVISOR = Domain("grid 0.4 + 0.2", grid=0.4, offset=0.2)
# Every power of two in range: the ones below 0.05 lie within the margin around 0.
AWAY_FROM_POWERS_OF_2 = Domain("away from powers of 2", -1.9, 1.9,
                               avoid=(-1.0, -0.5, -0.25, -0.125, -0.0625, 0.0, 0.0625, 0.125,
                                      0.25, 0.5, 1.0), margin=0.05)
AWAY_FROM_INTEGERS = Domain("away from integers", -1.9, 1.9, avoid=(-1.0, 0.0, 1.0))
SMALL_INTS = Domain("ints -3..3", -3, 3, kind="int")
SIGN_INTS = Domain("ints -1..1", -1, 1, kind="int")
NATURALS = Domain("ints 1..9", 1, 9, kind="int")
SHIFTS = Domain("ints 0..3", 0, 3, kind="int")

# Fewer cases than the default shapes (records.op_record) keep this family fast;
# broadcasting stays covered.
UNARY = [((),), ((2, 3),), ((2, 1, 4),)]
BINARY = [((3,), (3,)), ((3, 1), (4,)), ((), (2, 3)), ((2, 1, 3), (4, 1))]
NONDIFF_BINARY = [((3,), (3,)), ((2, 3), ()), ((3, 1), (4,))]


def elementwise(name, fun, domains, shapes, **kw):
    """An elementwise record with chosen shape cases (also checked with drawn shapes)."""
    return records(name, fun, shapes, domains, elementwise=True, **kw)


R = []

# --- inverse trigonometric and hyperbolic -----------------------------------------------------
for _name, _domain in [("arcsin", UNIT), ("arccos", UNIT), ("arcsinh", REAL),
                       ("arccosh", ABOVE_ONE), ("arctanh", UNIT)]:
    R += elementwise(_name, getattr(dnp, _name), (_domain,), UNARY)
# y (the first argument) away from 0: arctan2 jumps across the negative x axis.
R += elementwise("arctan2", dnp.arctan2, (NONZERO, REAL), BINARY)
R += elementwise("hypot", dnp.hypot, (NONZERO, REAL), BINARY)

# --- exponentials, logarithms, powers -----------------------------------------------------------
R += elementwise("exp2", dnp.exp2, (REAL,), UNARY)
R += elementwise("log2", dnp.log2, (POSITIVE,), UNARY)
R += elementwise("log10", dnp.log10, (POSITIVE,), UNARY)
R += elementwise("reciprocal", dnp.reciprocal, (NONZERO,), UNARY)
R += elementwise("cbrt", dnp.cbrt, (NONZERO,), UNARY)
R += elementwise("logaddexp", dnp.logaddexp, (REAL, REAL), BINARY)
R += elementwise("logaddexp2", dnp.logaddexp2, (REAL, REAL), BINARY)
R += unary("logaddexp_tie", lambda x: dnp.logaddexp(x, x), shapes=[((3,),)])
R += elementwise("float_power", dnp.float_power, (POSITIVE, REAL), BINARY[:3])
R += unary("float_power_scalar", lambda x: dnp.float_power(x, 3), shapes=[((3,),)])
R += unary("float_power_float32", lambda x: dnp.float_power(x, 2.5), Domain(
    "positive float32", 0.2, 3.0, dtype=np.float32), shapes=[((3,),)])
R += elementwise("ldexp", dnp.ldexp, (REAL, SMALL_INTS), BINARY[:3])
R += unary("frexp", dnp.frexp, AWAY_FROM_POWERS_OF_2, shapes=[((),), ((2, 3),)])

# --- angles and sinc --------------------------------------------------------------------------
R += elementwise("deg2rad", dnp.deg2rad, (REAL,), UNARY[:2])
R += elementwise("rad2deg", dnp.rad2deg, (REAL,), UNARY[:2])
R += elementwise("sinc", dnp.sinc, (Domain("real, wide", -3.0, 3.0),), UNARY)
R += unary("sinc_near_zero", dnp.sinc, Domain("near zero", -0.6, 0.6), shapes=[((4,),)])

# --- remainders and signs ---------------------------------------------------------------------
R += elementwise("fmod", dnp.fmod, (DIVIDEND, DIVISOR), BINARY)
R += elementwise("remainder", dnp.remainder, (DIVIDEND, DIVISOR), BINARY)
R += binary("divmod", dnp.divmod, (DIVIDEND, DIVISOR), shapes=[((3,), (3,)), ((2, 3), ())])
R += unary("modf", dnp.modf, AWAY_FROM_INTEGERS, shapes=[((),), ((2, 3),)])
R += elementwise("copysign", dnp.copysign, (NONZERO, NONZERO), BINARY)
R += elementwise("fabs", dnp.fabs, (NONZERO,), UNARY[:2])
R += unary("positive", dnp.positive, shapes=[((2, 3),)])
R += elementwise("nextafter", dnp.nextafter, (REAL, REAL), BINARY[:3])
# Integer x1 (held fixed) with zeros, where the derivative in x2 is 1.
R += elementwise("heaviside", dnp.heaviside, (SIGN_INTS, REAL), BINARY[:3])

# --- selections and cleaning ------------------------------------------------------------------
R += elementwise("fmax", dnp.fmax, (EVEN, ODD), BINARY)
R += elementwise("fmin", dnp.fmin, (EVEN, ODD), BINARY)
R += unary("fmax_tie", lambda x: dnp.fmax(x, x), shapes=[((3,),)])
R += unary("fmin_tie", lambda x: dnp.fmin(x, x), shapes=[((3,),)])
R += elementwise("nan_to_num", dnp.nan_to_num, (REAL,), UNARY[:2])
_INFINITIES = np.array([np.inf, 0.0, -np.inf, 0.0])
R += unary("nan_to_num_replacing",
           lambda x: dnp.nan_to_num(x + _INFINITIES, posinf=7.0, neginf=-7.0) * x,
           shapes=[((4,),)])

# --- piecewise constant -----------------------------------------------------------------------
for _name in ("floor", "ceil", "trunc", "fix", "rint", "spacing", "signbit"):
    R += unary(_name, getattr(dnp, _name), AWAY_FROM_INTEGERS, zero_derivative=True,
               shapes=UNARY[:2])
R += unary("round", dnp.round, AWAY_FROM_INTEGERS, zero_derivative=True, shapes=UNARY[:2])
R += unary("around_decimals", lambda x: dnp.around(x, 1), zero_derivative=True,
           shapes=[((2, 3),)])
R += binary("floor_divide", dnp.floor_divide, (DIVIDEND, DIVISOR), zero_derivative=True,
            shapes=NONDIFF_BINARY)
R += unary("floor_float32", dnp.floor, REAL32, zero_derivative=True, shapes=[((3,),)])

# --- logical and integer ufuncs ---------------------------------------------------------------
R += binary("logical_xor", dnp.logical_xor, (SIGN_INTS, SIGN_INTS), zero_derivative=True,
            shapes=NONDIFF_BINARY)
for _name in ("bitwise_and", "bitwise_or", "bitwise_xor", "gcd", "lcm"):
    R += binary(_name, getattr(dnp, _name), (NATURALS, NATURALS), zero_derivative=True,
                shapes=NONDIFF_BINARY)
for _name in ("left_shift", "right_shift"):
    R += binary(_name, getattr(dnp, _name), (NATURALS, SHIFTS), zero_derivative=True,
                shapes=NONDIFF_BINARY)
for _name in ("invert", "bitwise_count"):
    R += unary(_name, getattr(dnp, _name), NATURALS, zero_derivative=True,
               shapes=UNARY[:2])

# --- vector and matrix gufuncs ----------------------------------------------------------------
R += records("vecdot", dnp.vecdot, [((3,), (3,)), ((2, 3), (3,)), ((4, 1, 3), (2, 3))])
R += one("vecdot_axis0", lambda a, b: dnp.vecdot(a, b, axis=0), (3, 2), (3, 1))
R += records("matvec", dnp.matvec, [((2, 3), (3,)), ((4, 2, 3), (1, 3))])
R += records("vecmat", dnp.vecmat, [((3,), (3, 2)), ((4, 1, 3), (2, 3, 2))])

RECORDS = R
