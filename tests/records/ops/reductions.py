"""Records of the reductions (``sum``, ``mean``, ``prod``, ``max``, ``min``, ``logsumexp``)
over all axes, one axis, several axes and with ``keepdims``; ties built on purpose along
a direction where the reduction stays smooth.
"""

from __future__ import annotations

import diffkit.numpy as dnp

from ..domains import (
    DISTINCT,
    NONZERO,
    REAL,
)
from ..op_record import one, unary

R = []

# --- reductions -----------------------------------------------------------------------------
REDUCE_SHAPES = [((2, 3),), ((2, 3, 4),)]
for _name, _fn, _domain in [("sum", dnp.sum, REAL), ("mean", dnp.mean, REAL),
                            ("prod", dnp.prod, NONZERO), ("max", dnp.max, DISTINCT),
                            ("min", dnp.min, DISTINCT), ("logsumexp", dnp.logsumexp, REAL)]:
    R += unary(f"{_name}_all", _fn, _domain, shapes=[((),), ((3,),), ((2, 3),)])
    R += unary(f"{_name}_axis0", lambda x, f=_fn: f(x, axis=0), _domain, shapes=REDUCE_SHAPES)
    R += unary(f"{_name}_axis-1_keepdims", lambda x, f=_fn: f(x, axis=-1, keepdims=True),
               _domain, shapes=REDUCE_SHAPES)
    R += one(f"{_name}_axes02", lambda x, f=_fn: f(x, axis=(0, 2)), (2, 3, 4),
             domains=(_domain,))
R += unary("max_ties", lambda x: dnp.max(dnp.stack([x, x, 0.5 * x - 3.0]), axis=0))
R += unary("min_ties", lambda x: dnp.min(dnp.stack([x, x, 0.5 * x + 3.0]), axis=0))
R += unary("methods", lambda x: x.sum(axis=0) + x.mean() + x.max(axis=1).sum() * x.min(),
           DISTINCT, shapes=[((2, 3),)])

RECORDS = R
