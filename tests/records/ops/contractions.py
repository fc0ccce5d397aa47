"""Records of the contractions: ``matmul``, ``dot``, ``outer``, ``inner``, ``vdot``,
``einsum`` with many subscripts and ``tensordot`` with every form of ``axes``.
"""

from __future__ import annotations

import numpy as np

import diffkit.numpy as dnp

from ..op_record import one, records

R = []

# --- contractions ---------------------------------------------------------------------------
R += records("matmul", dnp.matmul,
             [((3, 4), (4, 2)), ((4,), (4, 3)), ((3, 4), (4,)), ((4,), (4,)),
              ((2, 3, 4), (4, 2)), ((2, 1, 3, 4), (3, 4, 2)), ((3, 4), (2, 4, 3))])
R += one("matmul_operator", lambda a, b: a @ b, (3, 4), (4, 2))
R += records("dot", dnp.dot,
             [((3, 4), (4,)), ((4,), (4,)), ((2, 3), (3, 2)), ((), (3,)), ((3,), ()),
              ((2, 3, 4), (3, 4, 2))])
# The receiver must be traced: ndarray.dot(tracer) is NumPy's own method and cannot be routed.
R += one("dot_method", lambda a: a.dot(np.array([0.5, -1.0, 2.0])), (2, 3))
R += records("outer", dnp.outer, [((3,), (4,)), ((2, 2), (3,)), ((), (3,))])
R += records("inner", dnp.inner, [((4,), (4,)), ((2, 4), (3, 4)), ((), (2, 3))])
R += records("vdot", dnp.vdot, [((4,), (4,)), ((2, 3), (3, 2))])
for _spec, _shapes in [
        ("ij,jk->ik", ((3, 4), (4, 2))), ("ij->", ((3, 4),)), ("ij->ji", ((3, 4),)),
        ("ii->i", ((3, 3),)), ("ii->", ((3, 3),)), ("i,i->", ((4,), (4,))),
        ("i,j->ij", ((3,), (4,))), ("bij,bjk->bik", ((2, 3, 4), (2, 4, 3))),
        ("ij,kj->ik", ((3, 4), (2, 4))), ("ij,ij->i", ((3, 4), (3, 4))),
        ("...i,i->...", ((2, 3, 4), (4,))), ("ij,jk,kl->il", ((2, 3), (3, 4), (4, 2))),
        ("ijk->kij", ((2, 3, 4),)), (",ij->ij", ((), (2, 3)))]:
    R += one(f"einsum_{_spec}", lambda *xs, s=_spec: dnp.einsum(s, *xs), *_shapes)
for _name, _axes, _shapes in [
        ("1", 1, ((3, 4), (4, 2))), ("2", 2, ((2, 3, 4), (3, 4, 2))),
        ("0", 0, ((3,), (2,))), ("lists", ([0, 2], [1, 0]), ((2, 3, 4), (4, 2, 3))),
        ("ints", ([1], [0]), ((3, 4), (4, 2)))]:
    R += one(f"tensordot_{_name}", lambda a, b, ax=_axes: dnp.tensordot(a, b, axes=ax),
             *_shapes)

RECORDS = R
