"""Records for diffkit.ops.indexing.At, functional updates ``x.at[index].method(v)`` (see
tests/records/ops/__init__.py for what each record is checked for)."""

import numpy as np

from diffkit.ops.indexing import At

from ..domains import EVEN, INDEX, Domain
from ..op_record import one

R = []
# x on one grid, v on another (distinct): min/max never tie.
_ODD_DISTINCT = Domain("distinct grid 1/8 + 1/16", grid=0.125, offset=0.0625, distinct=True)
_REPEATED = np.array([0, 2, 2])
for _m in ("set", "add", "multiply", "min", "max"):
    R += one(f"at_{_m}_repeated", lambda x, v, m=_m: getattr(At(x)[_REPEATED], m)(v),
             (3, 2), (3, 2), domains=(EVEN, _ODD_DISTINCT))
    R += one(f"at_{_m}_index_argument", lambda x, i, v, m=_m: getattr(At(x)[i], m)(v),
             (4,), (3,), (3,), domains=(EVEN, INDEX, _ODD_DISTINCT))
R += one("at_get", lambda x: At(x)[1:, _REPEATED].get(), (2, 3))

RECORDS = R
