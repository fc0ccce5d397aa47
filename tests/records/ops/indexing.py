"""Records of indexing: integers, slices, ellipsis, new axes, integer arrays (repeated, so
that the adjoint must accumulate) and boolean masks; index arrays also as arguments, which
``vmap`` batches too.
"""

from __future__ import annotations

import numpy as np

import diffkit.numpy as dnp

from ..domains import (
    INDEX,
    REAL,
)
from ..op_record import one, records

R = []

# --- indexing -------------------------------------------------------------------------------
_INT_INDEX = np.array([0, 2, 2, 1])           # repeated: the adjoint must accumulate
_INT_INDEX_2D = np.array([[0, 1], [3, 3]])
_MASK = np.array([[True, False, True, True], [False, False, True, False],
                  [True, True, False, False]])
_ROW_MASK = np.array([True, False, True])
for _name, _index in [
        ("int", 1), ("negative_int", -1), ("slice", slice(1, 3)),
        ("step_slice", (slice(None), slice(None, None, 2))),
        ("reverse_slice", slice(None, None, -1)), ("ellipsis", (Ellipsis, 1)),
        ("newaxis", (None, slice(1, None))), ("int_and_slice", (1, slice(1, 3))),
        ("int_array", _INT_INDEX[:3]), ("int_array_axis1", (slice(None), _INT_INDEX)),
        ("int_array_2d", (slice(None), _INT_INDEX_2D)),
        ("int_arrays_pair", (np.array([0, 2, 2]), np.array([3, 0, 3]))),
        ("bool_mask", _MASK), ("bool_row_mask", _ROW_MASK),
        ("mixed_int_array_slice", (_INT_INDEX[:3], slice(1, 3)))]:
    R += one(f"getitem_{_name}", lambda x, i=_index: x[i], (3, 4))
R += one("getitem_function", lambda x: dnp.getitem(x, (slice(None), 2)), (3, 4))
R += one("getitem_separated_int_arrays",
         lambda x: x[np.array([0, 1, 1]), :, np.array([2, 0, 2])], (2, 3, 4))
R += one("getitem_scalar_int", lambda x: x[()], ())
# Index arrays as arguments: under vmap they are batched too (a different gather per example).
# dnp.getitem, not x[i]: with x a plain ndarray (in_axes None) NumPy's own x[i] would see the
# traced index.
R += records("getitem_index_argument", dnp.getitem,
             [((4,), (3,)), ((3, 4), (2,)), ((3, 4), (2, 2)), ((3,), ())], (REAL, INDEX))
R += one("getitem_index_argument_axis1", lambda x, i: dnp.getitem(x, (slice(None), i)),
         (3, 4), (3,), domains=(REAL, INDEX))
R += one("getitem_index_argument_pair", lambda x, i, j: dnp.getitem(x, (i, j)), (3, 4), (2,),
         (2,), domains=(REAL, INDEX, INDEX))
R += one("getitem_index_argument_separated",
         lambda x, i, j: dnp.getitem(x, (i, slice(None), j)), (3, 2, 4), (2,), (2,),
         domains=(REAL, INDEX, INDEX))

RECORDS = R
