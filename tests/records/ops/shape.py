"""Records of the functions that change only the shape: reshape, transpose, moveaxis,
swapaxes, expand_dims, squeeze, ravel and broadcast_to.
"""

from __future__ import annotations

import diffkit.numpy as dnp

from ..op_record import one, unary

R = []

# --- shape ----------------------------------------------------------------------------------
R += one("reshape", lambda x: dnp.reshape(x, (3, 2)), (2, 3))
R += one("reshape_infer", lambda x: dnp.reshape(x, (2, -1)), (6,))
R += one("reshape_merge", lambda x: x.reshape(6, 4), (2, 3, 4))
R += one("reshape_to_scalar", lambda x: dnp.reshape(x, ()), (1, 1))
R += one("reshape_from_scalar", lambda x: dnp.reshape(x, (1, 1)), ())
R += unary("transpose", dnp.transpose, shapes=[((2, 3),), ((2, 3, 4),)])
R += one("transpose_axes", lambda x: dnp.transpose(x, (1, 0, 2)), (2, 3, 4))
R += one("transpose_T", lambda x: x.T, (2, 3))
R += one("moveaxis", lambda x: dnp.moveaxis(x, 0, -1), (2, 3, 4))
R += one("moveaxis_many", lambda x: dnp.moveaxis(x, [0, 1], [-1, -3]), (2, 3, 4))
R += one("swapaxes", lambda x: dnp.swapaxes(x, 0, 2), (2, 3, 4))
R += unary("expand_dims", lambda x: dnp.expand_dims(x, 0))
R += one("expand_dims_last", lambda x: dnp.expand_dims(x, -1), (2, 3))
R += one("expand_dims_many", lambda x: dnp.expand_dims(x, (0, 2)), (2, 3))
R += one("squeeze", dnp.squeeze, (1, 3, 1))
R += one("squeeze_axis", lambda x: dnp.squeeze(x, axis=0), (1, 3, 1))
R += one("squeeze_axes", lambda x: dnp.squeeze(x, axis=(0, 2)), (1, 3, 1))
R += one("ravel", dnp.ravel, (2, 3))
R += one("broadcast_to", lambda x: dnp.broadcast_to(x, (2, 3, 4)), (3, 1))
R += one("broadcast_to_scalar", lambda x: dnp.broadcast_to(x, (3,)), ())
R += one("broadcast_to_rows", lambda x: dnp.broadcast_to(x, (3, 4)), (4,))

RECORDS = R
