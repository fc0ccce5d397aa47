"""A small tensor network: ``np.einsum`` and ``np.tensordot`` contractions of a matrix of
weights with fixed tensors.

Program: ``energy(w)``, ``w`` of shape ``(3, 3)`` -> a scalar: a ring contraction through
the 3-tensor ``CORE``, a bilinear form, a Gram-matrix contraction and ``trace(w^3)``.
"""

import numpy as np

CORE = np.cos(np.arange(18.0)).reshape(3, 2, 3)          # (bond, physical, bond)
COUPLING = np.sin(np.arange(1.0, 10.0)).reshape(3, 3)
LEFT, RIGHT = np.array([1.0, -0.5, 0.25]), np.array([0.3, 0.2, -1.0])


def energy(w):
    """The sum of four contractions of ``w`` (3, 3), a scalar."""
    ring = np.einsum("ab,bxc,cd,dxa->", w, CORE, w, CORE)
    bilinear = np.einsum("i,ij,j->", LEFT, w, RIGHT)
    gram = np.tensordot(w, w, axes=([0], [0]))           # w^T w, (3, 3)
    coupled = np.tensordot(gram, COUPLING, axes=2)
    cubic = np.trace(np.tensordot(np.tensordot(w, w, axes=1), w, axes=1))
    return ring + bilinear + coupled + 0.1 * cubic
