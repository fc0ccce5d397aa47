"""Contractions (temporary matmul only; being written)."""
import numpy as np

from ..core.primitive import Primitive
from ..core.zeros import Zero

matmul_p = Primitive("matmul", np.matmul)


def _matmul_jvp(primals, tangents):
    a, b = primals
    ta, tb = tangents
    out = matmul(a, b)
    parts = []
    if type(ta) is not Zero:
        parts.append(matmul(ta, b))
    if type(tb) is not Zero:
        parts.append(matmul(a, tb))
    return out, parts[0] if len(parts) == 1 else parts[0] + parts[1]


matmul_p.jvp = _matmul_jvp
matmul_p.vjp = (lambda ct, out, a, b: matmul(ct, b.T), lambda ct, out, a, b: matmul(a.T, ct))
matmul = matmul_p
dot = einsum = inner = outer = tensordot = vdot = None
