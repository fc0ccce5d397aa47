"""Well-conditioned matrices built from drawn values, for the linear algebra records, and
their inverses, for the edge samples.

A record draws entries in [-1, 1] and builds its matrix with one of the maps below: a small
perturbation of a fixed matrix with well-separated eigen- or singular values, so that no
draw (Hypothesis likes zeros and repeated values) reaches a singular matrix, a tie or a kink.
Each map is affine in the drawn values; ``*_at`` inverts one, so that an edge sample can put
a record exactly at the matrix it names (a singular matrix, a repeated eigenvalue, ...).
"""

import numpy as np

import diffkit.numpy as dnp


def _eye(shape):
    """``n I`` for the last two axes of ``shape``, plus 1 (diagonally dominant)."""
    n = shape[-1]
    return (n + 1.0) * np.eye(n)


def well(a):
    """A well-conditioned square matrix (stack) from entries in [-1, 1]."""
    return a + _eye(a.shape)


def spread(a, step=5.0):
    """A symmetric matrix with eigenvalues about 0, step, 2 step, ... (gaps >= 1)."""
    n = a.shape[-1]
    return 0.25 * (a + dnp.swapaxes(a, -1, -2)) + np.diag(step * np.arange(n))


def rect(a, step=3.0):
    """A matrix with singular values about step, 2 step, ... (gaps and minimum >= 1)."""
    m, n = a.shape[-2:]
    base = np.zeros((m, n))
    k = min(m, n)
    base[np.arange(k), np.arange(k)] = step * np.arange(k, 0, -1)
    return 0.25 * a + base


def dense(a):
    """``rect(a)`` plus 1 everywhere: never triangular (LAPACK's QR picks the signs of R
    differently for a column that is already zero below the diagonal)."""
    return rect(a) + 1.0


# Dense (not triangular, not reducible) bases for eig: at a triangular matrix LAPACK's
# balancing permutes, so the order of the eigenvalues jumps under perturbation.
EIG_BASIS = np.array([[1.0, 0.5, 0.2], [0.3, 1.0, 0.4], [0.2, 0.1, 1.0]])  # condition 2.6
REAL_SPECTRUM = EIG_BASIS @ np.diag([0.0, 3.0, 6.0]) @ np.linalg.inv(EIG_BASIS)
COMPLEX_SPECTRUM = EIG_BASIS @ np.array([[1.0, -2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 5.0]]) \
    @ np.linalg.inv(EIG_BASIS)


def general(a):
    """A dense non-symmetric 3x3 matrix with eigenvalues within 1.2 of 0, 3 and 6 (so real,
    by Bauer-Fike: each disc holds one eigenvalue, and with it its conjugate)."""
    return 0.15 * a + REAL_SPECTRUM


def rotation(a):
    """A dense real 3x3 matrix with eigenvalues within 1.6 of 1 +- 2i and 5."""
    return 0.2 * a + COMPLEX_SPECTRUM


def spd(a):
    """A symmetric positive-definite matrix (eigenvalues >= 1)."""
    return a @ dnp.swapaxes(a, -1, -2) + np.eye(a.shape[-1])


# A cyclic permutation of a diagonally dominant matrix: partial pivoting picks the rows
# (1, 2, 0) with wide margins, so the pivots stay constant under the perturbation.
PIVOTED = np.array([[0.5, 1.0, 4.0], [4.0, 0.5, 1.0], [1.0, 4.0, 0.5]])


def pivoted(a):
    """A 3x3 matrix whose LU factorisation pivots the rows (1, 2, 0) for every draw."""
    return 0.2 * a + PIVOTED


# --- inverses: the drawn values that give a named matrix -------------------------------------


def well_at(m):
    """``a`` with ``well(a) == m``."""
    m = np.asarray(m, float)
    return m - (m.shape[-1] + 1.0) * np.eye(m.shape[-1])


def spread_at(t):
    """A symmetric ``a`` with ``spread(a) == t`` (``t`` symmetric)."""
    t = np.asarray(t, float)
    return 2.0 * (t - np.diag(5.0 * np.arange(t.shape[-1])))


def rect_at(t):
    """``a`` with ``rect(a) == t``."""
    t = np.asarray(t, float)
    m, n = t.shape
    base = np.zeros((m, n))
    k = min(m, n)
    base[np.arange(k), np.arange(k)] = 3.0 * np.arange(k, 0, -1)
    return 4.0 * (t - base)


def general_at(m):
    """``a`` with ``general(a) == m``."""
    return (m - REAL_SPECTRUM) / 0.15


def pivoted_at(m):
    """``a`` with ``pivoted(a) == m``."""
    return (m - PIVOTED) / 0.2
