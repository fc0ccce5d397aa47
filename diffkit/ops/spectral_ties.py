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

from ..core.primitive import EachArgument, Primitive
from ..core.zeros import Zero, dtype_of, shape_of
from . import elementwise as ew
from . import reductions as rd
from . import shape as sh
from . import sparsity_rules as sr
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
    # c agrees across a tie up to rounding, or up to the limit times the (split) tie's gap
    slack = ew.multiply_p(sh.expand_dims(cscale, -1), tol)
    if dc is not None:
        spread = ew.multiply_p(ew.abs_p(ew.where_p(resolved, limit, 0.0)), ew.abs_p(gaps))
        slack = ew.add_p(slack, ew.multiply_p(spread, 4.0))
    agrees = ew.less_equal_p(ew.abs_p(cdiff), slack)
    if dc is not None and _may_be_close(w):
        regular = _near_tie_quotients(w, gaps, regular, limit, dmdiff, scale, cscale, dc, tied)
    if dc is not None:
        # a tied pair whose own perturbation m_ij is rounding (a direction that does not
        # couple them) needs no limit: any bounded K (c agrees across the tie) times it is
        # negligible
        n = shape_of(w)[-1]
        coupling = ew.add_p(ew.abs_p(m), ew.abs_p(_T(m)))
        negligible = ew.less_equal_p(coupling, ew.multiply_p(scale, 16 * n * tol / TIE_RTOL_EPS))
        limit = ew.where_p(ew.logical_and_p(negligible, ew.logical_not_p(resolved)), 0.0, limit)
    return ew.where_p(tied, ew.where_p(agrees, limit, np.nan), regular)


_CLOSE = 1e-3   # relative gaps above this: the quotients lose less than 1e-12 of |c| / |w|


def _may_be_close(w):
    """Whether two values of ``w`` may be close enough for ``_near_tie_quotients`` to
    matter (always, for traced values: the rule must hold for every replay)."""
    if type(w) is not np.ndarray:
        return True
    return bool(np.any(_relative_gap_impl(w) <= _CLOSE))


def _clip01(x):
    return ew.minimum_p(ew.maximum_p(x, 0.0), 1.0)


def _near_tie_quotients(w, gaps, quotient, limit, dmdiff, scale, cscale, dc, tied):
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
    n = shape_of(w)[-1]
    pair = ew.logical_and_p(ew.logical_not_p(tied), ~np.eye(n, dtype=bool))
    absgap = ew.abs_p(gaps)
    positive = ew.greater_p(absgap, 0.0)
    absgap = ew.where_p(positive, absgap, 1.0)
    quotient_error = ew.divide_p(ew.multiply_p(sh.expand_dims(cscale, -1), 8 * eps), absgap)
    absw = ew.abs_p(w)
    magnitude = ew.multiply_p(ew.add_p(sh.expand_dims(absw, -2), sh.expand_dims(absw, -1)), 0.5)
    magnitude = ew.where_p(ew.greater_p(magnitude, 0.0), magnitude, 1.0)
    resolved = ew.logical_and_p(ew.equal_p(limit, limit), ew.greater_p(ew.abs_p(dmdiff), 0.0))
    limit = ew.where_p(resolved, limit, 0.0)
    amplification = ew.divide_p(scale, ew.where_p(resolved, ew.abs_p(dmdiff), 1.0))
    hessian_scale = ew.divide_p(sh.expand_dims(rd.max(ew.abs_p(dc), axis=-1, keepdims=True), -1),
                                ew.where_p(ew.greater_p(scale, 0.0), scale, 1.0))
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
