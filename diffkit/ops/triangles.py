"""The Hermitian matrix that one triangle of a square matrix defines, and its adjoint.

LAPACK's symmetric and Hermitian routines (``potrf`` behind ``cholesky``, ``heevd`` behind
``eigh`` and ``pinv(hermitian=True)``) read only one triangle of their input and take the
other from it by (conjugate) symmetry; for a complex matrix the imaginary part of the
diagonal is not read either. As a function of the whole input ``a (..., n, n)`` they
therefore compute ``f(hermitian_from_triangle(a, lower))``, and the exact derivative of
what they compute (entries not read have derivative 0) comes from the linear map

    E(t) = tri(t) + tri(t)^H + diag(Re diag t)        (tri: the strict triangle read)

and its adjoint under diffkit's pairing ``Re(sum(cotangent * tangent))``

    E*(c) = tri(c + c^H) + diag(Re diag c).

Both are written with diffkit's operations, so rules that use them can be differentiated
and batched again. Masks are constants built once per size.
"""

import functools

import numpy as np

from ..core.zeros import dtype_of, shape_of
from . import elementwise as ew
from . import shape as sh

__all__ = ["hermitian_from_triangle", "hermitian_from_triangle_adjoint"]


@functools.lru_cache(maxsize=64)
def _masks(n, lower, dtype):
    """The strict triangle that is read and the diagonal, as constant ``(n, n)`` masks."""
    ones = np.ones((n, n), dtype)
    strict = np.tril(ones, -1) if lower else np.triu(ones, 1)
    strict.flags.writeable = False
    eye = np.eye(n, dtype=dtype)
    eye.flags.writeable = False
    return strict, eye


def _real_dtype(x):
    return np.empty((), dtype_of(x)).real.dtype


def _H(x):
    xt = sh.swapaxes(x, -1, -2)
    return ew.conj_p(xt) if dtype_of(x).kind == "c" else xt


def _real_diagonal(x, eye):
    """``diag(Re diag x)`` as a matrix of ``x``'s dtype."""
    if dtype_of(x).kind == "c":
        x = ew.multiply_p(ew.add_p(x, ew.conj_p(x)), 0.5)
    return ew.multiply_p(x, eye)


def hermitian_from_triangle(t, lower=True):
    """``E(t)``: the Hermitian (real: symmetric) matrix that the ``lower`` (else upper)
    triangle of ``t (..., n, n)`` defines, with the real part of its diagonal."""
    strict, eye = _masks(shape_of(t)[-1], bool(lower), _real_dtype(t))
    part = ew.multiply_p(t, strict)
    return ew.add_p(ew.add_p(part, _H(part)), _real_diagonal(t, eye))


def hermitian_from_triangle_adjoint(c, lower=True):
    """``E*(c)``: the adjoint of ``hermitian_from_triangle`` under ``Re(sum(c * t))``; zero
    outside the triangle read (and in the imaginary part of the diagonal)."""
    strict, eye = _masks(shape_of(c)[-1], bool(lower), _real_dtype(c))
    return ew.add_p(ew.multiply_p(ew.add_p(c, _H(c)), strict), _real_diagonal(c, eye))
