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
  The eigen/singular values have primitives of their own (``eigh_values_p``,
  ``svd_values_p``, whose rules go through ``eigh_spectral_p``/``svd_spectral_p``, ``W
  diag(c) W^H`` with Daleckii-Krein's derivative, and the values' JVP primitives), exact at
  ties for functions symmetric in the tied values, second derivatives included: the limit
  is read off the tangent of the values' cotangent (forward over reverse, ``tie_limits``)
  or off the cotangent of the values (the reverse-outer routes, see "second derivatives of
  the values by the other routes" below); forward over forward cannot read it and is NaN
  across a tie. For functions of a symmetric matrix use ``diffkit.scipy.linalg.funm``;
- phases and signs of eigen/singular vectors are only defined up to a choice (a "gauge"):
  the derivatives keep unit norm and set the derivative's component along the vector
  itself to zero (``Re``/``Im(v^H dv) = 0``; for a complex SVD the phase change of
  ``u_k v_k^H`` goes to ``u_k``), so only gauge-invariant functions of the vectors
  (``|v|**2``, projectors ``v v^H``, ``U @ Vh``...) have well-defined derivatives.

Primitives (no derivatives; batching rules): ``tie_groups_p`` (the tie group of each
value), ``tie_mask_p``, ``unknown_at_ties_p``, ``relative_gap_p``, ``nonzero_entries_p`` and
``rotate_ties_p`` (a fixed rotation within tie groups, so that rules see a basis of each
eigenspace that does not favour one vector); ``tie_guard_p`` marks the output of a vectors'
rule so that the tie rule holds at every order (NaN has NaN derivatives; the k-th
derivative is NaN within the order-k tolerance ``(TIE_RTOL_EPS eps) ** (1/k)``, where the
rounding of the couplings ``(|w| / gap)^k`` would leave no accuracy).
"""

import functools
import math

import numpy as np

from ..core.concrete import holds_tracer
from ..core.primitive import EachArgument, Primitive
from ..core.trace import PrimalTracer
from ..core.zeros import Zero, dtype_of, is_complex, shape_of
from . import elementwise as ew
from . import reductions as rd
from . import shape as sh
from . import sparsity_rules as sr
from .indexing import getitem
from .linalg import einsum, matmul_p
from .matrix_helpers import _T, _conj, _diag, _real, _safe_reciprocal

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


# --- the tie rule at every order: derivatives of the vectors' rules ------------------------
# The rules of the eigen/singular vectors divide by gaps w_j - w_i. Their k-th derivative
# carries k such factors, and functions of the vectors whose derivatives are moderate (a
# projector onto a cluster of close values) get them as differences of terms of size
# (|w| / gap)^k, so the rounding left over is about eps (|w| / gap)^k: the first derivative
# loses |w| / gap, the second (|w| / gap)^2. The k-th derivative through a vector rule is
# therefore NaN where the smallest relative gap is within the order-k tolerance
# (TIE_RTOL_EPS eps)^(1/k) (the tie tolerance itself at k = 1), so that the error left is at
# most about 1/TIE_RTOL_EPS of the derivative's scale at every order, or NaN. The rules
# mark their output with ``tie_guard_p`` (value: NaN at a tie, as at first order), whose
# own derivatives apply the next order's tolerance, and make every derivative of a NaN the
# tie rule put in NaN as well: a NaN coupling has no known tangent or cotangent.


def order_tolerance(order, dtype):
    """The relative gap at or below which the ``order``-th derivative through the vectors'
    rules is NaN: ``(TIE_RTOL_EPS eps) ** (1 / order)``."""
    return tie_tolerance(dtype) ** (1.0 / order)


def _relative_gap_impl(w):
    """``(..., 1, 1)``: the smallest ``|w_i - w_j|`` (``i != j``) over ``max_k |w_k|`` of
    each vector of values (``inf`` for a single value, 0 for all-zero values)."""
    w = np.asarray(w)
    n = w.shape[-1]
    if n < 2:
        return np.full(w.shape[:-1] + (1, 1), np.inf, np.abs(w).dtype)
    if np.iscomplexobj(w):
        gaps = np.abs(w[..., :, None] - w[..., None, :])
        gaps[..., np.arange(n), np.arange(n)] = np.inf
        gap = np.min(gaps, axis=(-2, -1))
    else:
        gap = np.min(np.diff(np.sort(w, axis=-1), axis=-1), axis=-1)
    scale = np.max(np.abs(w), axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(scale > 0, gap / np.where(scale > 0, scale, 1), 0)
    return ratio[..., None, None]


relative_gap_p = Primitive("relative_gap", _relative_gap_impl, nondiff=True)
relative_gap_p.batch = lambda axis_size, values, batch_axes: (relative_gap_p(values[0]), 0)


def _guard_impl(x, unknown, gap, *witnesses, order):
    return np.where(unknown, np.nan, x)


def _nonzero_impl(x, core):
    """``(..., 1, 1)``: whether each stack entry of ``x`` (its last ``core`` axes) has a
    nonzero (or NaN) entry."""
    x = np.asarray(x)
    stack = x.shape[:x.ndim - core]
    return np.any((x != 0).reshape(stack + (-1,)), axis=-1).reshape(stack + (1, 1))


nonzero_entries_p = Primitive("nonzero_entries", _nonzero_impl, nondiff=True)
nonzero_entries_p.batch = lambda axis_size, values, batch_axes, core: (
    nonzero_entries_p(values[0], core=core), 0)


def _core(x, stack):
    """The number of trailing (core) axes of ``x`` after ``stack`` stack axes."""
    return len(shape_of(x)) - stack


def _nonzero(x, stack):
    return nonzero_entries_p(x, core=_core(x, stack))


def _moved(values, stack):
    """``(..., 1, 1)``: whether any of the (co)tangents ``values`` is nonzero in a stack
    entry (``None`` when every one is a symbolic zero)."""
    flag = None
    for v in values:
        if type(v) is not Zero:
            flag = _nonzero(v, stack) if flag is None else ew.logical_or_p(flag,
                                                                           _nonzero(v, stack))
    return flag


def _next_flag(unknown, gap, order, moved):
    """Where a derivative of order ``order + 1`` through a guarded value is NaN: the value
    was unknown or the values are within that order's tolerance, and the direction moves
    the matrix."""
    near = ew.less_equal_p(gap, order_tolerance(order + 1, dtype_of(gap)))
    return ew.logical_and_p(ew.logical_or_p(unknown, near), moved)


def _guard_jvp(primals, tangents, order):
    x, unknown, gap, *witnesses = primals
    out = tie_guard_p(x, unknown, gap, *witnesses, order=order)
    tx = tangents[0]
    moved = _moved([tx, *tangents[3:]], len(shape_of(unknown)) - 2)
    if moved is None:
        return out, tx
    if type(tx) is Zero:   # the value's own tangent is 0, a witness moved
        tx = np.zeros(shape_of(x), dtype_of(x))
    flag = _next_flag(unknown, gap, order, moved)
    return out, tie_guard_p(tx, flag, gap, *witnesses, order=order + 1)


def _guard_vjp(i):
    """The VJP rule of argument ``i``: the guarded value passes its cotangent on at the next
    order; each witness gets NaN where that cotangent meets an unknown (or too close)
    matrix, else 0, so reverse mode sees the unknown derivative of everything the value
    depends on."""
    if i in (1, 2):
        return None

    def rule(ct, out, x, unknown, gap, *witnesses, order):
        stack = len(shape_of(unknown)) - 2
        flag = _next_flag(unknown, gap, order, _nonzero(ct, stack))
        if i == 0:
            return tie_guard_p(ct, flag, gap, *witnesses, order=order + 1)
        witness = witnesses[i - 3]
        nan = ew.where_p(flag, np.nan, 0.0)   # (..., 1, 1): as many core axes as witness
        nan = sh.reshape(nan, shape_of(nan)[:stack] + (1,) * _core(witness, stack))
        nan = sh.broadcast_to(nan, shape_of(witness))
        return ew.astype(nan, dtype_of(witness)) if dtype_of(nan) != dtype_of(witness) else nan
    return rule


def _guard_batch(axis_size, values, batch_axes, order):
    values = [v if ax is not None else sh.broadcast_to(v, (axis_size,) + shape_of(v))
              for v, ax in zip(values, batch_axes)]
    return tie_guard_p(*values, order=order), 0


# tie_guard_p(x, unknown, gap, *witnesses, order): x, NaN in the matrices where ``unknown``
# ((..., 1, 1) booleans); ``gap`` is ``relative_gap_p`` of the values; ``x`` is a derivative
# of order ``order`` computed by a vectors' rule from the ``witnesses`` (the matrix and the
# tangent or cotangent the rule was given): the derivatives of ``x`` are NaN, in each
# matrix, where the next order's tie rule holds and the direction moves ``x`` or a witness.
# (Inside the rule the couplings of tied pairs are 0 placeholders, so the derivative the
# rule's own operations give there says nothing: it may well be 0.)
tie_guard_p = Primitive("tie_guard", _guard_impl, _guard_jvp, EachArgument(_guard_vjp),
                        _guard_batch, vjp_ignores=(0, "out"))
tie_guard_p.sparsity = sr.elementwise_sparsity(dropped=range(1, 64))


def guard(x, unknown, w, linear, *witnesses):
    """The output ``x`` of a vectors' rule (first order) for the values ``w``, linear in
    ``linear`` (the tangent or cotangent the rule was given): NaN where ``unknown`` (a tie),
    and derivatives of every order NaN where the tie rule of that order holds, ``linear``
    is nonzero and the direction moves ``x``, ``linear`` or one of the ``witnesses`` (the
    values the rule read; see above)."""
    stack = len(shape_of(unknown)) - 2
    gap = ew.where_p(_nonzero(linear, stack), relative_gap_p(w), np.inf)
    return tie_guard_p(x, unknown, gap, linear, *witnesses, order=1)


# --- the divided differences of eigh_spectral_p and svd_spectral_p, exact at ties -----------


def tie_limits(w, c, groups, m, dc, *, unknown=False, several=None):
    """``K`` of the Daleckii-Krein formula for ``c`` given at ``w``: off ties the divided
    differences ``(c_j - c_i) / (w_j - w_i)``; on a tie the limit, read from the tangents:
    for ``c`` the gradient of a function symmetric in the tied values, ``dc_j - dc_i =
    K_ij (m_jj - m_ii)`` in the rotated basis (``m`` the perturbation ``W^H dA W``). NaN
    where that is ``0 / 0`` or where ``c`` differs across the tie (the gradient then
    depends on the basis of the eigenspace); 0 on the diagonal.

    ``dc=None``: ``c`` does not move (a symbolic zero tangent: ``c`` is a constant along
    the direction), so the limit on a tie is 0 (``c_j - c_i`` stays 0 as the tie splits).
    ``unknown=True`` (reverse rules, which see no tangent of ``c``): the limit on a tie is
    NaN wherever it is needed. ``several`` (booleans ``(..., 1, 1)``): where true, ``dc`` is
    not ``c``'s own (it sums several contributions): the quotients, and NaN on ties.

    Only tied and close pairs differ from the quotients: for concrete values they are
    worked out alone (gathered, then put back), so that a large stack of directions or
    cotangents costs about one quotient matrix."""
    tied = tied_pairs(groups)
    every = _Pairs(shape_of(w)[-1])
    quotient = ew.multiply_p(every.diff(c), _safe_reciprocal(ew.where_p(tied, 1.0,
                                                                         every.diff(w))))
    index = _close_pairs(w)
    if index is None:
        return _pair_limits(every, w, c, m, dc, tied, quotient, unknown, several)
    if not len(index[0]):
        return quotient
    pairs = _Pairs(shape_of(w)[-1], index)
    k = _pair_limits(pairs, w, c, m, dc, pairs.entry(tied), pairs.entry(quotient), unknown,
                     None if several is None else pairs.per_matrix(several))
    return _put_back(quotient, k, index)


class _Pairs:
    """The pairs ``(i, k)`` ``tie_limits`` works on: every ordered pair, as ``(..., n, n)``
    matrices (``index=None``), or the listed pairs ``i < k`` along a last axis of length P
    (``index``: two integer arrays)."""

    def __init__(self, n, index=None):
        self.n, self.index = n, index

    def diff(self, x):
        """``x_k - x_i`` of a vector ``x`` (``(..., n)``)."""
        if self.index is None:
            return ew.subtract_p(sh.expand_dims(x, -2), sh.expand_dims(x, -1))
        i, k = self.index
        return ew.subtract_p(getitem(x, (Ellipsis, k)), getitem(x, (Ellipsis, i)))

    def mean_abs(self, x):
        """``(|x_i| + |x_k|) / 2``."""
        ax = ew.abs_p(x)
        if self.index is None:
            both = ew.add_p(sh.expand_dims(ax, -2), sh.expand_dims(ax, -1))
        else:
            both = ew.add_p(getitem(ax, (Ellipsis, self.index[0])),
                            getitem(ax, (Ellipsis, self.index[1])))
        return ew.multiply_p(both, 0.5)

    def entry(self, x, transposed=False):
        """``x_ik`` (``x_ki`` when ``transposed``) of a matrix ``x`` (``(..., n, n)``)."""
        if self.index is None:
            return _T(x) if transposed else x
        i, k = self.index
        return getitem(x, (Ellipsis, k, i) if transposed else (Ellipsis, i, k))

    def per_matrix(self, x):
        """A value per matrix, ``(..., 1, 1)``, shaped to broadcast against the pairs."""
        return x if self.index is None else sh.reshape(x, shape_of(x)[:-1])

    def off_diagonal(self):
        return ~np.eye(self.n, dtype=bool) if self.index is None else True


_CLOSE = 1e-3   # relative gaps above this: the quotients lose less than 1e-12 of |c| / |w|


def may_be_close(w):
    """Whether two values of ``w`` may be close enough for ``_near_tie_quotients`` to
    matter (always, for traced values: the rule must hold for every replay)."""
    if type(w) is not np.ndarray:
        return True
    return bool(np.any(_relative_gap_impl(w) <= _CLOSE))


def _close_pairs(w):
    """The pairs ``i < k`` of the concrete ``w`` that are tied or close (relative gap within
    ``_CLOSE`` in some matrix of the stack), or None (traced values, or so many such pairs
    that the whole matrices cost less)."""
    if type(w) is not np.ndarray:
        return None
    n = w.shape[-1]
    scale = np.max(np.abs(w), axis=-1, keepdims=True)[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        close = np.abs(w[..., :, None] - w[..., None, :]) <= _CLOSE * scale
    close = np.triu(np.any(close.reshape((-1, n, n)), axis=0), 1)
    index = np.nonzero(close)
    return None if len(index[0]) > n else index


def _put_back(quotient, k, index, symmetric=True):
    """``quotient`` with the pairs of ``index`` (``(i, k)``, and ``(k, i)`` if
    ``symmetric``) set to ``k`` (``(..., P)``): through products with constant 0/1 spots,
    NaN apart."""
    n = shape_of(quotient)[-1]
    spots = np.zeros((len(index[0]), n * n), dtype_of(k))
    rows = np.arange(len(index[0]))
    spots[rows, index[0] * n + index[1]] = 1
    if symmetric:
        spots[rows, index[1] * n + index[0]] = 1
    stack = shape_of(k)[:-1]

    def spread(x):
        return sh.reshape(matmul_p(sh.expand_dims(x, -2), spots), stack + (n, n))

    finite = ew.isfinite_p(k)
    values = spread(ew.where_p(finite, k, 0.0))
    unknown = ew.greater_p(spread(ew.where_p(finite, 0.0, 1.0)), 0.0)
    placed = np.any(spots, axis=0).reshape(n, n)
    return ew.where_p(placed, ew.where_p(unknown, np.nan, values), quotient)


def _pair_limits(pairs, w, c, m, dc, tied, quotient, unknown, several):
    """``tie_limits`` on ``pairs`` (``tied``, ``quotient``: theirs)."""
    tol = tie_tolerance(dtype_of(w))
    gaps = pairs.diff(w)
    cdiff = pairs.diff(c)
    cscale = pairs.per_matrix(sh.expand_dims(rd.max(ew.abs_p(c), axis=-1, keepdims=True), -1))
    # c agrees across a tie up to rounding, or up to the limit times the (split) tie's gap
    slack = ew.multiply_p(cscale, tol)
    regular = quotient
    if dc is None:
        limit = np.nan if unknown else 0.0
    else:
        dmdiff = pairs.diff(_real(_diag(m)))
        scale = pairs.per_matrix(rd.max(ew.abs_p(m), axis=(-2, -1), keepdims=True))
        resolved = ew.greater_p(ew.abs_p(dmdiff), ew.multiply_p(scale, math.sqrt(tol)))
        limit = ew.where_p(resolved, ew.divide_p(pairs.diff(dc), ew.where_p(resolved, dmdiff,
                                                                            1.0)), np.nan)
        spread = ew.multiply_p(ew.abs_p(ew.where_p(resolved, limit, 0.0)), ew.abs_p(gaps))
        slack = ew.add_p(slack, ew.multiply_p(spread, 4.0))
        if may_be_close(w):
            hessian_scale = ew.divide_p(
                pairs.per_matrix(sh.expand_dims(rd.max(ew.abs_p(dc), axis=-1, keepdims=True), -1)),
                ew.where_p(ew.greater_p(scale, 0.0), scale, 1.0))
            regular = _near_tie_quotients(pairs, w, gaps, quotient, limit, dmdiff, scale, cscale,
                                          hessian_scale, tied)
        # a tied pair whose own perturbation m_ij is rounding (a direction that does not
        # couple them) needs no limit: any bounded K (c agrees across the tie) times it is
        # negligible
        coupling = ew.add_p(ew.abs_p(pairs.entry(m)), ew.abs_p(pairs.entry(m, transposed=True)))
        negligible = ew.less_equal_p(coupling, ew.multiply_p(
            scale, 16 * shape_of(w)[-1] * tol / TIE_RTOL_EPS))
        limit = ew.where_p(ew.logical_and_p(negligible, ew.logical_not_p(resolved)), 0.0, limit)
        if several is not None:
            regular = ew.where_p(several, quotient, regular)
            limit = ew.where_p(several, np.nan, limit)
    agrees = ew.less_equal_p(ew.abs_p(cdiff), slack)
    return ew.where_p(tied, ew.where_p(agrees, limit, np.nan), regular)


def _clip01(x):
    return ew.minimum_p(ew.maximum_p(x, 0.0), 1.0)


def _near_tie_quotients(pairs, w, gaps, quotient, limit, dmdiff, scale, cscale, hessian_scale,
                        tied):
    """The quotients ``(c_j - c_i) / (w_j - w_i)`` of untied pairs, refined near ties.

    ``c`` arrives rounded (a cotangent), so the quotient of a close pair loses about
    ``eps max|c| / gap``. The limit read off the tangents (``dc_j - dc_i`` over
    ``m_jj - m_ii``, as on ties) is what the quotient tends to for ``c`` the gradient of a
    function symmetric in ``w_i`` and ``w_j``, up to ``O(gap)``. Where the two agree within
    their estimated errors and the limit's is the smaller, the limit is taken, blended
    continuously (a function that is not symmetric disagrees, and keeps its quotient,
    which is then accurate since ``c_j - c_i`` is not small). The result is never further
    than about three times the quotient's own error bound from the truth."""
    eps = tie_tolerance(dtype_of(w)) / TIE_RTOL_EPS
    pair = ew.logical_and_p(ew.logical_not_p(tied), pairs.off_diagonal())
    absgap = ew.abs_p(gaps)
    positive = ew.greater_p(absgap, 0.0)
    absgap = ew.where_p(positive, absgap, 1.0)
    quotient_error = ew.divide_p(ew.multiply_p(cscale, 8 * eps), absgap)
    magnitude = pairs.mean_abs(w)
    magnitude = ew.where_p(ew.greater_p(magnitude, 0.0), magnitude, 1.0)
    resolved = ew.logical_and_p(ew.equal_p(limit, limit), ew.greater_p(ew.abs_p(dmdiff), 0.0))
    limit = ew.where_p(resolved, limit, 0.0)
    amplification = ew.divide_p(scale, ew.where_p(resolved, ew.abs_p(dmdiff), 1.0))
    size = ew.maximum_p(ew.abs_p(limit), hessian_scale)
    limit_error = ew.multiply_p(ew.multiply_p(amplification, size),
                                ew.add_p(ew.divide_p(absgap, magnitude), 4 * eps))
    both = ew.add_p(quotient_error, limit_error)
    consistent = _clip01(ew.subtract_p(2.0, ew.divide_p(ew.abs_p(ew.subtract_p(
        quotient, limit)), ew.where_p(ew.greater_p(both, 0.0), both, 1.0))))
    better = _clip01(ew.subtract_p(2.0, ew.multiply_p(ew.divide_p(
        limit_error, ew.where_p(ew.greater_p(quotient_error, 0.0), quotient_error, 1.0)), 2.0)))
    weight = ew.where_p(ew.logical_and_p(ew.logical_and_p(pair, resolved), positive),
                        ew.multiply_p(consistent, better), 0.0)
    return ew.where_p(ew.greater_p(weight, 0.0), ew.add_p(quotient, ew.multiply_p(
        weight, ew.subtract_p(limit, quotient))), quotient)


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


# --- second derivatives of the values by the other routes ----------------------------------
# ``hessian`` (forward over reverse) reads the tie limits off the tangent of the values'
# cotangent (``tie_limits``). The other routes never see that tangent:
# - reverse over forward: the VJP of the values' JVP ``d = diag(W^H dA W)`` sees ``d``'s
#   cotangent (the caller's ``c``) and that of the values the JVP returned (the caller's
#   ``f''`` applied to ``d``): it reads the limits as ``hessian`` does, while one jvp
#   direction carries the cotangent (the values are one value for every direction);
# - forward over forward cannot: the couplings ``2 Re(conj(m1_ik) m2_ik) / (w_i - w_k)``
#   of ``d``'s derivative only meet ``c`` in the caller's ``sum_i c_i t_i``, and ``f''``
#   only the diagonal tangents (NaN for a tied pair the direction moves; ``eps |c| / gap``
#   near one, from the caller's rounded ``c``);
# - reverse over reverse: ``N`` (the outer cotangent) meets ``c`` in ``eigh_spectral_p``'s
#   VJP, ``f''`` meets ``diag(N)`` later, in the values' cotangent. A channel carries ``N``
#   and ``c`` from the one rule to the other (``encode_channel``): the values' primitive
#   has a second output nobody reads, an argument of ``eigh_spectral_p``, whose cotangent
#   reaches the values' VJP with ``f'' diag(N)`` (``channel_correction``). Several summed
#   pullbacks of one decomposition (``vmap`` of a pullback, a Jacobian's rows under one
#   outer cotangent) cannot be told apart: the channel counts its contributions and only
#   a single one is corrected (else NaN on ties, the quotients near them).


def direction_limits(w, c, groups, m, dc, dirs):
    """``K`` (``tie_limits``) for the VJP of a values' JVP along directions with
    perturbations ``m`` (``(D..., S..., n, n)``, ``dirs`` leading direction axes): ``c``
    is the cotangent of the JVP (per direction) and ``dc`` that of the values (one for all
    directions; ``None`` for zero). Where one direction carries ``c``, ``dc`` is its own
    and the limits are read as ``hessian`` reads them; where several do, NaN on ties."""
    own, several = _own_cotangent(c, dc, dirs)
    return tie_limits(w, c, groups, m, own, several=several)


def _own_cotangent(c, dc, dirs):
    """``dc`` where a direction carries ``c``, else 0, and where several do (``(..., 1,
    1)``); ``(None, None)`` for ``dc=None``."""
    if dc is None:
        return None, None
    moved = nonzero_entries_p(c, core=1)                       # (D..., S..., 1, 1)
    count = rd.sum(ew.astype(moved, dtype_of(c)), axis=tuple(range(dirs)), keepdims=True)
    return (ew.where_p(sh.reshape(moved, shape_of(moved)[:-1]), dc, 0.0),
            ew.greater_p(count, 1.5))


def direction_products(w, c, groups, m, x, dc, dirs):
    """``sum`` over the ``dirs`` leading direction axes of ``K o x`` (0 where ``x`` is 0),
    ``K = direction_limits(w, c, groups, m, dc, dirs)``. For concrete values the quotients'
    part is two contractions over the directions, ``F o sum_j (x_j c_jk - c_ji x_j)``
    (``F = 1 / (w_k - w_i)``), and only the tied and close pairs are worked out per
    direction (their contracted entries, differences of large sums, are replaced): no
    ``K`` is formed for every direction (and outer cotangent)."""
    index = _close_pairs(w)
    if index is None or not dirs:
        k = times_nonzero(direction_limits(w, c, groups, m, dc, dirs), x)
        return rd.sum(k, axis=tuple(range(dirs))) if dirs else k
    f = inverse_gaps(w, groups)                       # 0 on ties and on the diagonal
    quotients = ew.multiply_p(f, ew.subtract_p(contract_directions(x, c, "k", dirs),
                                               contract_directions(x, c, "i", dirs)))
    if not len(index[0]):
        return quotients
    pairs = _Pairs(shape_of(w)[-1], index)
    tied = pairs.entry(tied_pairs(groups))
    quotient = ew.multiply_p(pairs.diff(c), pairs.entry(f))
    own, several = _own_cotangent(c, dc, dirs)
    k = _pair_limits(pairs, w, c, m, own, tied, quotient, False,
                     None if several is None else pairs.per_matrix(several))
    # the contraction's entries of close pairs are differences of large sums: replaced,
    # (i, k) and (k, i) each from its own entries of x (K is symmetric, x need not be)
    axes = tuple(range(dirs))
    upper = rd.sum(times_nonzero(k, pairs.entry(x)), axis=axes)
    lower = rd.sum(times_nonzero(k, pairs.entry(x, transposed=True)), axis=axes)
    return _put_back(_put_back(quotients, upper, index, symmetric=False), lower,
                     index[::-1], symmetric=False)


def contract_directions(x, c, side, dirs):
    """``sum_j x_j o c_j`` over the ``dirs`` leading direction axes, ``c_j`` (``(..., n)``)
    along the columns (``side="k"``: ``x_ik c_k``) or the rows (``"i"``: ``c_i x_ik``)."""
    directions = math.prod(shape_of(c)[:dirs])
    x = sh.reshape(x, (directions,) + shape_of(x)[dirs:])
    c = sh.reshape(c, (directions,) + shape_of(c)[dirs:])
    return einsum("j...ik,j...k->...ik" if side == "k" else "j...ik,j...i->...ik", x, c)


def batch_directions(prim, axis_size, values, batch_axes, first, **params):
    """The batching rule of a values' JVP primitive (``values[first:]``: the direction and
    the first-order tangent, whose leading axes beyond the matrices' stack are directions).
    A batch of directions only: one more direction axis, and the values stay one value for
    the whole batch. Batched matrices: the batch becomes one more stack axis, after the
    directions."""
    moving = values[first:]
    if all(ax is None for ax in batch_axes[:first]):
        moving = [x if ax is not None else sh.broadcast_to(x, (axis_size,) + shape_of(x))
                  for x, ax in zip(moving, batch_axes[first:])]
        return prim(*values[:first], *moving, **params), (None, 0)
    fixed = [x if ax is not None else sh.broadcast_to(x, (axis_size,) + shape_of(x))
             for x, ax in zip(values[:first], batch_axes[:first])]
    stack = len(shape_of(fixed[-2]))          # w (or s), batched: (B, ..., n)
    dirs = len(shape_of(moving[0])) - (batch_axes[first] is not None) - stack
    placed = []
    for x, ax in zip(moving, batch_axes[first:]):
        if ax is not None:
            placed.append(sh.moveaxis(x, 0, dirs))
        else:
            x = sh.expand_dims(x, dirs)
            placed.append(sh.broadcast_to(x, shape_of(x)[:dirs] + (axis_size,) +
                                          shape_of(x)[dirs + 1:]))
    w, d = prim(*fixed, *placed, **params)
    return (w, sh.moveaxis(d, dirs, 0)), (0, 0)


def pair_products(m1, m2):
    """``Re(conj(m1) * m2)`` entrywise."""
    return _real(ew.multiply_p(_conj(m1), m2)) if is_complex(m1) or is_complex(m2) else \
        ew.multiply_p(m1, m2)


def contract_couplings(coupling, products):
    """``sum_k coupling_ik products_ik`` (``(..., n)``), 0 where ``products`` is exactly 0
    (an unknown coupling of a pair the direction does not move)."""
    return rd.sum(times_nonzero(coupling, products), axis=-1)


def values_need_rules(a):
    """Whether eigenvalues (singular values) of the traced ``a`` go through the values' own
    primitive (``eigh_values_p``, ``svd_values_p``): always, except for a value traced by
    one reverse-mode transformation of plain arrays (``grad``, ``vjp``, ``jacrev`` at first
    order: a tracer with a plain primal whose transformation does not push derivatives
    forward, ``Trace.pushes_forward``), whose rules run once, on plain cotangents, where
    the decomposition's own VJP gives the same gradient with one primitive fewer on the
    tape."""
    first_order_reverse = isinstance(a, PrimalTracer) and type(a.primal) is np.ndarray and \
        not a._trace.pushes_forward
    return not first_order_reverse


def channel_zeros(w, dtype):
    """The value of the channel output: ``(..., n + 2, n)`` zeros (read-only, shared)."""
    shape = shape_of(w)
    return _zeros(shape[:-1] + (shape[-1] + 2, shape[-1]), np.dtype(dtype))


@functools.lru_cache(maxsize=64)
def _zeros(shape, dtype):
    zeros = np.broadcast_to(np.zeros((), dtype), shape)   # a view: no memory
    return zeros


def encode_channel(sym, c):
    """The channel's cotangent (``(..., n + 2, n)``) from ``eigh_spectral_p``'s (or
    ``svd_spectral_p``'s) VJP: ``sym`` (the Hermitian part of the outer cotangent in the
    rotated basis, whose diagonal is ``c``'s cotangent), ``c`` and a count, 1 where
    ``sym`` is nonzero (``c`` only there)."""
    n = shape_of(sym)[-1]
    dtype = dtype_of(sym)
    moved = nonzero_entries_p(sym, core=2)                       # (..., 1, 1)
    c = ew.where_p(sh.reshape(moved, shape_of(moved)[:-1]), _cast_to(c, dtype), 0.0)
    count = ew.multiply_p(ew.astype(moved, dtype), np.eye(1, n, dtype=dtype))
    return sh.concatenate([sym, sh.expand_dims(c, -2), count], axis=-2)


def _cast_to(x, dtype):
    return x if dtype_of(x) == dtype else ew.astype(x, dtype)


def spectral_mode(c, channel):
    """What the VJP of ``eigh_spectral_p`` (``svd_spectral_p``) with the values' cotangent
    ``c`` knows of the tie limits: ``"fixed"`` where ``c`` is not traced (a constant: the
    limits are 0), ``"channel"`` where the channel is traced (the values' VJP completes
    them), else ``"plain"`` (NaN)."""
    if not holds_tracer(c):
        return "fixed"
    return "channel" if channel is not None and holds_tracer(channel) else "plain"


def batched_mode(mode, values):
    """``mode`` again for the unbatched ``values`` (``a, w, v, c[, channel]``) of a batching
    rule: what the batch tracers hid may be constant."""
    if mode == "fixed":
        return mode
    return spectral_mode(values[3], values[4] if len(values) > 4 and mode == "channel"
                         else None)


def spectral_limits(w, c, groups, mode):
    """``K`` for the VJP of ``eigh_spectral_p`` (``svd_spectral_p``) by ``mode``."""
    if mode == "channel":
        return deferred_limits(w, c, groups)
    return tie_limits(w, c, groups, None, None, unknown=mode == "plain")


def deferred_limits(w, c, groups):
    """``K`` as ``eigh_spectral_p``'s (``svd_spectral_p``'s) VJP uses it when the channel
    will correct it: the quotients off ties, 0 on ties."""
    tied = tied_pairs(groups)
    every = _Pairs(shape_of(w)[-1])
    return ew.where_p(tied, 0.0, ew.multiply_p(every.diff(c), _safe_reciprocal(
        ew.where_p(tied, 1.0, every.diff(w)))))


def channel_correction(w, groups, channel, dc):
    """``(..., n, n)``: what the K-part of ``eigh_spectral_p``'s (``svd_spectral_p``'s) VJP
    lacks, in its rotated basis, given the channel's cotangent and ``dc``, the cotangent of
    the values (``f''`` applied to ``c``'s cotangent; ``None`` for zero): the K of
    ``tie_limits`` read off ``dc`` minus ``deferred_limits``, times ``sym``. Where the
    channel holds several contributions: NaN on ties, 0 elsewhere. Only tied and close
    pairs change: for concrete values they alone are worked out."""
    n = shape_of(w)[-1]
    sym = _part(channel, slice(0, n))
    c = _real(sh.reshape(_part(channel, slice(n, n + 1)), shape_of(w)))
    count = _real(_part(_part(channel, slice(n + 1, n + 2)), slice(0, 1), axis=-1))
    several = ew.greater_p(ew.abs_p(ew.subtract_p(count, 1.0)), 0.5)     # (..., 1, 1)
    tied = tied_pairs(groups)
    index = _close_pairs(w)
    if index is None:
        change = ew.subtract_p(tie_limits(w, c, groups, sym, dc, several=several),
                               deferred_limits(w, c, groups))
        return times_nonzero(change, sym)
    if not len(index[0]):
        return ew.multiply_p(sym, 0.0)
    pairs = _Pairs(n, index)
    tied_pairs_ = pairs.entry(tied)
    gaps = pairs.diff(w)
    quotient = ew.multiply_p(pairs.diff(c), _safe_reciprocal(ew.where_p(tied_pairs_, 1.0, gaps)))
    k = _pair_limits(pairs, w, c, sym, dc, tied_pairs_, quotient, False,
                     pairs.per_matrix(several))
    change = ew.subtract_p(k, ew.where_p(tied_pairs_, 0.0, quotient))
    return times_nonzero(_put_back(ew.multiply_p(sym, 0.0), change, index), sym)


def _part(x, index, axis=-2):
    """``x[..., index, :]`` (``axis=-2``) or ``x[..., index]`` (``axis=-1``)."""
    return getitem(x, (Ellipsis, index, slice(None)) if axis == -2 else (Ellipsis, index))
