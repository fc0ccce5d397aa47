"""Repeated eigenvalues and singular values ("ties") and the gauge of eigen/singular vectors:
the conventions and the helpers shared by ``eigen.py`` (eigh, eig) and ``svd.py``.

Conventions where a derivative is undefined:

- repeated eigen- and singular values ("ties": equal to ``TIE_RTOL_EPS`` eps relative to
  the largest one, the one tolerance of eigh, eig and svd) make the vector coupling
  ``1 / (w_j - w_i)`` a 0/0 limit that a rule cannot know: it depends on what the caller does
  with the vectors (``sin`` of the matrix needs ``cos(w)``, a projector onto the whole
  eigenspace needs 0, and neither the tangent nor the cotangent of the vectors says which).
  So at a tie the vectors' tangent is NaN (for any nonzero input tangent) and so is the
  cotangent of the input that any nonzero vector cotangent produces, in both modes alike.
  The eigen/singular values' own rules go through ``eigh_spectral_p``/``svd_spectral_p``
  (``W diag(c) W^H``, Daleckii-Krein), exact at ties for functions symmetric in the tied
  values, Hessians (forward over reverse) included: the limit there is read off the tangent
  of the cotangent (see ``tie_limits``). Reverse-over-reverse and forward-over-forward
  second derivatives across a tie are NaN (the limit is not in what those rules see). For
  functions of a symmetric matrix use ``diffkit.scipy.linalg.funm``;
- phases and signs of eigen/singular vectors are only defined up to a choice (a "gauge"):
  the derivatives keep unit norm and set the derivative's component along the vector
  itself to zero (``Re``/``Im(v^H dv) = 0``; for a complex SVD the phase change of
  ``u_k v_k^H`` goes to ``u_k``), so only gauge-invariant functions of the vectors
  (``|v|**2``, projectors ``v v^H``, ``U @ Vh``...) have well-defined derivatives.

Primitives (no derivatives; batching rules): ``tie_groups_p`` (the tie group of each
value), ``tie_mask_p``, ``unknown_at_ties_p`` and ``rotate_ties_p`` (a fixed rotation within
tie groups, so that rules see a basis of each eigenspace that does not favour one vector).
"""

import functools
import math

import numpy as np

from ..core.primitive import Primitive
from ..core.zeros import dtype_of, shape_of
from . import elementwise as ew
from . import reductions as rd
from . import shape as sh
from .matrix_helpers import _T, _diag, _real, _safe_reciprocal

# --- ties: repeated eigenvalues and singular values ----------------------------------------
# Two eigenvalues (singular values) of one matrix are tied when
#     |w_i - w_j| <= TIE_RTOL_EPS * eps(dtype) * max_k |w_k|,
# the one relative tolerance of eigh, eigvalsh, eig and svd. LAPACK returns a repeated
# eigenvalue split by a few eps, so exact ties and computed ones are the same here. At a tie
# the eigenvector coupling 1 / (w_j - w_i) is a 0/0 limit that the rules cannot know (it
# depends on what the caller does with the vectors): see the eigh and svd rules.

TIE_RTOL_EPS = 512


@functools.cache
def tie_tolerance(dtype):
    """The relative tie tolerance for values of ``dtype`` (``TIE_RTOL_EPS`` eps)."""
    return TIE_RTOL_EPS * float(np.finfo(np.empty((), dtype).real.dtype).eps)


def tie_groups_impl(w):
    """Labels ``(..., n)``: entries of a sorted (ascending or descending) ``w`` get the same
    label when they form a chain of ties."""
    w = np.asarray(w)
    scale = np.max(np.abs(w), axis=-1, keepdims=True) if w.shape[-1] else 0
    gaps = np.abs(np.diff(w, axis=-1)) > tie_tolerance(w.dtype) * scale
    first = np.zeros(w.shape[:-1] + (1,), np.int64)
    return np.concatenate([first, np.cumsum(gaps, axis=-1)], axis=-1)


tie_groups_p = Primitive("tie_groups", tie_groups_impl, nondiff=True)
tie_groups_p.batch = lambda axis_size, values, batch_axes: (tie_groups_p(values[0]), 0)


def pairwise_ties(w):
    """``(..., n, n)`` booleans: ``i != j`` with ``|w_i - w_j|`` within the tie tolerance
    (for unsorted, possibly complex ``w``: ``eig``)."""
    n = shape_of(w)[-1]
    gaps = ew.abs_p(ew.subtract_p(sh.expand_dims(w, -2), sh.expand_dims(w, -1)))
    scale = ew.multiply_p(rd.max(ew.abs_p(w), axis=-1, keepdims=True), tie_tolerance(dtype_of(w)))
    return ew.logical_and_p(ew.less_equal_p(gaps, sh.expand_dims(scale, -1)),
                          ~np.eye(n, dtype=bool))


def tied_pairs(groups):
    """``(..., n, n)`` booleans: ``i != j`` in the same tie group."""
    return tie_mask_p(groups, diagonal=False)


def _tie_mask_impl(groups, diagonal):
    same = groups[..., :, None] == groups[..., None, :]
    if not diagonal:
        same &= ~np.eye(groups.shape[-1], dtype=bool)
    return same


tie_mask_p = Primitive("tie_mask", _tie_mask_impl, nondiff=True)
tie_mask_p.batch = lambda axis_size, values, batch_axes, diagonal: (
    tie_mask_p(values[0], diagonal=diagonal), 0)


def _unknown_impl(tied, x):
    return np.any(tied, axis=(-2, -1), keepdims=True) & np.any(x != 0, axis=(-2, -1),
                                                                 keepdims=True)


def _unknown_batch(axis_size, values, batch_axes):
    tied, x = (v if ax is not None else sh.broadcast_to(v, (axis_size,) + shape_of(v))
               for v, ax in zip(values, batch_axes))
    return unknown_at_ties_p(tied, x), 0


# whether the coupling is needed at a tie: some pair is tied and ``x`` (the tangent or
# cotangent reaching the vectors) is nonzero, per matrix of the stack: (..., 1, 1)
unknown_at_ties_p = Primitive("unknown_at_ties", _unknown_impl, batch=_unknown_batch,
                              nondiff=True)


def _fixed_rotation(m):
    """A fixed orthogonal ``(m, m)`` matrix without structure (Q of a QR factorisation of
    ``cos(1 + 2.1 i + 3.7 j + 0.61 i j)``): tied eigenvectors are rotated by it, so that no
    coordinate direction of the input keeps the diagonal of a tied block constant (see
    ``tie_limits``; for m <= 8 every pair of diagonal entries differs by > 4e-5)."""
    i, j = np.arange(m)[:, None], np.arange(m)[None, :]
    q, r = np.linalg.qr(np.cos(1 + 2.1 * i + 3.7 * j + 0.61 * i * j))
    return q * np.sign(np.diag(r))


def _rotation_of_ties(groups, dtype):
    """Block-diagonal ``R`` (``(..., n, n)``): the fixed rotation on each tie group,
    identity elsewhere; ``None`` when nothing is tied."""
    groups = np.asarray(groups)
    n = groups.shape[-1]
    if n < 2 or not np.any(groups[..., 1:] == groups[..., :-1]):
        return None
    rot = np.broadcast_to(np.eye(n, dtype=dtype), groups.shape + (n,)).copy()
    for index in np.ndindex(groups.shape[:-1]):
        labels = groups[index]
        for label in np.unique(labels):
            members = np.flatnonzero(labels == label)
            if len(members) > 1:
                rot[index + np.ix_(members, members)] = _fixed_rotation(len(members))
    return rot


def _rotate_ties_impl(x, groups, inverse):
    """``x @ R`` (``x @ R.T`` with ``inverse``), ``R`` the fixed rotation of each tie group
    of ``groups`` (``x`` itself without ties); linear in ``x``."""
    rot = _rotation_of_ties(groups, np.empty((), x.dtype).real.dtype)
    if rot is None:
        return x
    return x @ (np.swapaxes(rot, -1, -2) if inverse else rot)


def _rotate_ties_batch(axis_size, values, batch_axes, inverse):
    x, groups = (v if ax is not None else sh.broadcast_to(v, (axis_size,) + shape_of(v))
                 for v, ax in zip(values, batch_axes))
    return rotate_ties_p(x, groups, inverse=inverse), 0


rotate_ties_p = Primitive(
    "rotate_ties", _rotate_ties_impl,
    lambda primals, tangents, inverse: (rotate_ties_p(*primals, inverse=inverse),
                                        rotate_ties_p(tangents[0], primals[1],
                                                      inverse=inverse)),
    (lambda ct, out, x, groups, inverse: rotate_ties_p(ct, groups, inverse=not inverse),),
    _rotate_ties_batch, vjp_ignores=(0, "out"))


def rotated_diagonal(m, groups):
    """The diagonal of ``R^T m R``: the perturbation of tied eigenvalues in the rotated
    basis of their eigenspace."""
    return _diag(_T(rotate_ties_p(_T(rotate_ties_p(m, groups, inverse=False)), groups,
                                  inverse=False)))


def inverse_gaps(w, groups):
    """``F[..., i, j] = 1 / (w_j - w_i)`` for untied ``w_i``, ``w_j``, else 0 (the diagonal
    too). ``groups``: tie labels (``tie_groups_p(w)``) of a sorted ``w``, or a ready
    ``(..., n, n)`` tie mask (without the diagonal)."""
    gaps = ew.subtract_p(sh.expand_dims(w, -2), sh.expand_dims(w, -1))
    if len(shape_of(groups)) == len(shape_of(w)):
        skip = tie_mask_p(groups, diagonal=True)
    else:
        skip = ew.logical_or_p(groups, np.eye(shape_of(w)[-1], dtype=bool))
    return ew.where_p(skip, 0.0, ew.divide_p(1.0, ew.where_p(skip, 1.0, gaps)))


def rotated(v, groups):
    return rotate_ties_p(v, groups, inverse=False)


# --- the divided differences of eigh_spectral_p and svd_spectral_p, exact at ties -----------


def tie_limits(w, c, groups, m, dc):
    """``K`` of the Daleckii-Krein formula for ``c`` given at ``w``: off ties the divided
    differences ``(c_j - c_i) / (w_j - w_i)``; on a tie the limit, read from the tangents:
    for ``c`` the gradient of a function symmetric in the tied values, ``dc_j - dc_i =
    K_ij (m_jj - m_ii)`` in the rotated basis (``m`` the perturbation ``W^H dA W``). NaN
    where that is ``0 / 0`` or where ``c`` differs across the tie (the gradient then
    depends on the basis of the eigenspace); 0 on the diagonal."""
    tied = tied_pairs(groups)
    gaps = ew.subtract_p(sh.expand_dims(w, -2), sh.expand_dims(w, -1))
    cdiff = ew.subtract_p(sh.expand_dims(c, -2), sh.expand_dims(c, -1))
    regular = ew.multiply_p(cdiff, _safe_reciprocal(ew.where_p(tied, 1.0, gaps)))
    tol = tie_tolerance(dtype_of(w))
    dm = _real(_diag(m))
    dmdiff = ew.subtract_p(sh.expand_dims(dm, -2), sh.expand_dims(dm, -1))
    scale = rd.max(ew.abs_p(m), axis=(-2, -1), keepdims=True)
    resolved = ew.greater_p(ew.abs_p(dmdiff), ew.multiply_p(scale, math.sqrt(tol)))
    if dc is None:
        limit = ew.where_p(resolved, 0.0, np.nan)
    else:
        dcdiff = ew.subtract_p(sh.expand_dims(dc, -2), sh.expand_dims(dc, -1))
        limit = ew.where_p(resolved, ew.divide_p(dcdiff, ew.where_p(resolved, dmdiff, 1.0)), np.nan)
    cscale = rd.max(ew.abs_p(c), axis=-1, keepdims=True)
    agrees = ew.less_equal_p(ew.abs_p(cdiff), ew.multiply_p(sh.expand_dims(cscale, -1), tol))
    return ew.where_p(tied, ew.where_p(agrees, limit, np.nan), regular)


def times_nonzero(k, m):
    """``k * m``, 0 where ``m`` is exactly 0 (an unknown tie limit times no perturbation)."""
    return ew.where_p(ew.equal_p(m, 0), 0.0, ew.multiply_p(k, m))


def basis_for(v, groups, c):
    """``v`` rotated within tie groups, or ``v`` itself when ``c`` is constant on every
    group (the product ``v diag(c) v^H`` is then the same, and exactly so)."""
    same = groups[..., 1:] == groups[..., :-1]
    if not np.any(same[c[..., 1:] != c[..., :-1]]):
        return v
    return _rotate_ties_impl(v, groups, False)
