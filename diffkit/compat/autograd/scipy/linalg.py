"""``autograd.scipy.linalg``: every name of ``scipy.linalg``, diffkit's differentiable
function where diffkit has one (``sqrtm``, ``solve_triangular``, ``solve_sylvester``,
``cho_factor``/``cho_solve``, ``expm`` ...), and ``solve_banded`` as an autograd primitive
with its VJP defined here; SciPy's own function otherwise (a traced value passed to one
of those raises an error naming it)."""

import numpy as np
import scipy.linalg as _scipy_linalg

from .... import numpy as dnp
from .. import _namespaces
from .._primitives import defvjp, primitive

__all__ = _namespaces.copy_like(_scipy_linalg, "diffkit.scipy.linalg", globals())


@primitive
def solve_banded(l_and_u, ab, b, **options):
    """SciPy's ``solve_banded((l, u), ab, b)``: solves ``A x = b`` for the banded ``A``
    stored as ``ab[u + i - j, j] = A[i, j]``; differentiable in ``ab`` and ``b``."""
    return _scipy_linalg.solve_banded(l_and_u, ab, b, **options)


def _band_positions(l_and_u, n):
    """For band storage with ``(l, u)`` of an ``n x n`` matrix: ``rows[r, j] = u + i - j``'s
    matrix row ``i = j + r - u`` (clipped into range) and the mask of entries inside it."""
    lower, upper = l_and_u
    r = np.arange(lower + upper + 1)[:, None]
    j = np.arange(n)[None, :]
    i = j + r - upper
    inside = (i >= 0) & (i < n)
    return np.clip(i, 0, n - 1), inside


def _transposed_band(l_and_u, ab):
    """The band storage of ``A.T`` (bandwidths ``(u, l)``) from that of ``A``."""
    lower, upper = l_and_u
    n = dnp.shape(ab)[1]
    rows, inside = _band_positions((upper, lower), n)
    # A.T[i, j] = A[j, i], stored in ab at row u + j - i, column i
    source_rows = upper + np.arange(n)[None, :] - rows
    source_rows = np.clip(source_rows, 0, lower + upper)
    return dnp.where(inside, ab[source_rows, rows], 0.0)


def _vjp_solve_banded_b(ans, l_and_u, ab, b, **options):
    transposed = _transposed_band(l_and_u, ab)
    return lambda g: solve_banded(l_and_u[::-1], transposed, g, **options)


def _vjp_solve_banded_ab(ans, l_and_u, ab, b, **options):
    transposed = _transposed_band(l_and_u, ab)
    rows, inside = _band_positions(l_and_u, dnp.shape(ab)[1])

    def vjp(g):
        # dA = -(A^-T g) x^T, read on the band: entry (r, j) is matrix entry (j + r - u, j)
        adjoint = solve_banded(l_and_u[::-1], transposed, g, **options)
        if dnp.ndim(ans) == 1:
            band = adjoint[rows] * ans[None, :]
        else:
            band = dnp.sum(adjoint[rows] * ans[None, :, :], axis=-1)
        return -dnp.where(inside, band, 0.0)

    return vjp


defvjp(solve_banded, _vjp_solve_banded_ab, _vjp_solve_banded_b, argnums=(1, 2))
__all__ = sorted(set(__all__) | {"solve_banded"})
