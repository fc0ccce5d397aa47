"""Records for diffkit/ops/creation.py: building arrays from traced values, polynomials."""

import numpy as np

import diffkit.numpy as dnp

from ..domains import REAL
from ..op_record import one

RECORDS = []
RECORDS += one("array_of_traced", lambda x, y: dnp.array([[x[0], y], [x[1] * y, x[2]]]),
               (3,), (), domains=(REAL, REAL))
RECORDS += one("asarray_dtype", lambda x: dnp.asarray([x, x * 2.0], dtype=np.float64), (2,))
RECORDS += one("concat", lambda x, y: dnp.concat([x, y], axis=1), (2, 3), (2, 1),
               domains=(REAL, REAL))
RECORDS += one("permute_dims", lambda x: dnp.permute_dims(x, (1, 2, 0)), (2, 3, 4))
RECORDS += one("matrix_transpose", dnp.matrix_transpose, (2, 3, 4))
RECORDS += one("unstack", lambda x: dnp.unstack(x, axis=1), (2, 3))
RECORDS += one("vander", lambda x: dnp.vander(x, 4), (3,))
RECORDS += one("vander_increasing", lambda x: dnp.vander(x, increasing=True), (3,))
RECORDS += one("polyadd", dnp.polyadd, (2,), (4,), domains=(REAL, REAL))
RECORDS += one("polysub", dnp.polysub, (4,), (2,), domains=(REAL, REAL))
RECORDS += one("polymul", dnp.polymul, (3,), (4,), domains=(REAL, REAL))
RECORDS += one("polyder", lambda p: dnp.polyder(p, 2), (5,))
RECORDS += one("polyint", lambda p: dnp.polyint(p, 2, k=[1.0, -2.0]), (3,))
RECORDS += one("resize", lambda x: dnp.resize(x, (3, 4)), (2, 3))
RECORDS += one("unwrap", dnp.unwrap, (4,))
