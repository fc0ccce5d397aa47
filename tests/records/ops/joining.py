"""Records of ``concatenate`` and ``stack``.
"""

from __future__ import annotations

import diffkit.numpy as dnp

from ..op_record import one, records

R = []

# --- joining --------------------------------------------------------------------------------
R += records("concatenate", lambda a, b: dnp.concatenate([a, b]),
             [((2, 3), (1, 3)), ((3,), (4,))])
R += one("concatenate_axis1", lambda a, b: dnp.concatenate([a, b], axis=1), (2, 3), (2, 1))
R += one("concatenate_axis-1_three", lambda a, b, c: dnp.concatenate([a, b, c], axis=-1),
         (2, 2), (2, 1), (2, 3))
R += one("concatenate_flat", lambda a, b: dnp.concatenate([a, b], axis=None), (2, 2), (3,))
R += one("concatenate_same", lambda a: dnp.concatenate([a, a], axis=0), (2, 3))
R += records("stack", lambda a, b: dnp.stack([a, b]), [((3,), (3,)), ((), ())])
R += one("stack_axis1", lambda a, b: dnp.stack([a, b], axis=1), (2, 3), (2, 3))
R += one("stack_axis-1_three", lambda a, b, c: dnp.stack([a, b, c], axis=-1),
         (2, 3), (2, 3), (2, 3))

RECORDS = R
