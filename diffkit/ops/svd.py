"""The singular value decomposition, differentiable: ``svd`` and ``svdvals``.

Primitives (each with its JVP, VJP and batching rule below it): ``svd_p`` (three outputs);
``svd_values_p`` (the singular values ``svd`` and ``svdvals`` return, with rules of their
own for every order), ``svd_spectral_p`` (``U diag(c) V^H``, the VJP of the singular values,
with its own derivative) and ``svd_values_jvp_p`` (the singular values' JVP, with its own
derivatives). Ties and the vectors' gauge follow ``spectral_ties.py``.

Conventions: the extra columns of ``U``/``Vh`` (``svd(full_matrices=True)``) of a
non-square matrix span the orthogonal complement, whose basis is not defined: their
derivative moves them with the complement. ``1 / s`` factors of zero singular values
(rank-deficient non-square ``svd``) are taken as 0. ``svd(hermitian=True)`` is
differentiated as NumPy computes it: as a function of the Hermitian matrix that one
triangle defines (``triangles.py``).
"""

from collections import namedtuple

import numpy as np

from ..core.concrete import holds_tracer
from ..core.primitive import RAISES, EachArgument, Primitive
from ..core.zeros import Zero, dtype_of, is_complex, shape_of, zero_like
from . import elementwise as ew
from . import reductions as rd
from . import shape as sh
from . import sparsity_rules as sr
from . import spectral_ties as ties
from .indexing import getitem
from .matrix_helpers import (
    _H,
    _T,
    _assert_stacked_square,
    _cast,
    _conj,
    _diag,
    _diag_embed,
    _imaginary_part_times_i,
    _matrix_stack,
    _mm,
    _real,
    _safe_reciprocal,
    _single_batch,
    _sym,
)
from .triangles import hermitian_from_triangle

__all__ = ["svd", "svdvals", "SVDResult"]


SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])


# === svd ==================================================================================
# svd_p(a, full_matrices, hermitian) -> (U, S, Vh), as np.linalg.svd with compute_uv=True.


def _svd_impl(a, full_matrices, hermitian):
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices, hermitian=hermitian)
    return u, s, vh


def _svd_split(u, vh, m, n, full_matrices):
    """The leading k = min(m, n) singular vectors, and the extra ones (or None)."""
    k = min(m, n)
    u1, u2, v1h, v2h = u, None, vh, None
    if full_matrices and m > k:
        u1 = getitem(u, (Ellipsis, slice(None), slice(0, k)))
        u2 = getitem(u, (Ellipsis, slice(None), slice(k, None)))
    if full_matrices and n > k:
        v1h = getitem(vh, (Ellipsis, slice(0, k), slice(None)))
        v2h = getitem(vh, (Ellipsis, slice(k, None), slice(None)))
    return u1, u2, v1h, v2h


def _svd_jvp(primals, tangents, full_matrices, hermitian):
    (a,), (ta,) = primals, tangents
    u, s, vh = svd_p(a, full_matrices=full_matrices, hermitian=hermitian)
    if hermitian:
        ta = _sym(ta)
    ta = _cast(ta, dtype_of(u))
    m, n = shape_of(a)[-2:]
    k = min(m, n)
    u1, u2, v1h, v2h = _svd_split(u, vh, m, n, full_matrices)
    v1 = _H(v1h)
    dp = _mm(_H(u1), _mm(ta, v1))                    # U^H dA V  (k, k)
    groups = ties.tie_groups_p(s)
    ds = _real(ties.rotated_diagonal(dp, groups))
    f = ties.inverse_gaps(ew.square_p(s), groups)          # 1 / (s_j^2 - s_i^2)
    s_row, s_col = sh.expand_dims(s, -2), sh.expand_dims(s, -1)
    dph = _H(dp)
    omega_u = ew.multiply_p(f, ew.add_p(ew.multiply_p(dp, s_row), ew.multiply_p(s_col, dph)))
    omega_v = ew.multiply_p(f, ew.add_p(ew.multiply_p(s_col, dp), ew.multiply_p(dph, s_row)))
    phase = _imaginary_part_times_i(_diag(dp))
    if phase is not None:  # the phase of u_k v_k^H turns by i Im(dP_kk) / s_k, given to U
        omega_u = ew.add_p(omega_u, _diag_embed(ew.multiply_p(phase, _safe_reciprocal(s))))
    du = _mm(u1, omega_u)
    dv = _mm(v1, omega_v)
    if m > k:   # the component of dU outside span U: (I - U U^H) dA V S^-1
        outside = ew.subtract_p(_mm(ta, v1), _mm(u1, dp))
        du = ew.add_p(du, ew.multiply_p(outside, sh.expand_dims(_safe_reciprocal(s), -2)))
    if n > k:
        outside = ew.subtract_p(_mm(_H(ta), u1), _mm(v1, dph))
        dv = ew.add_p(dv, ew.multiply_p(outside, sh.expand_dims(_safe_reciprocal(s), -2)))
    if u2 is not None:  # the complement moves with span U: dU2 = -U1 dU1^H U2
        du = sh.concatenate([du, ew.negative_p(_mm(u1, _mm(_H(du), u2)))], axis=-1)
    if v2h is not None:
        dv = sh.concatenate([dv, ew.negative_p(_mm(v1, _mm(_H(dv), _H(v2h))))], axis=-1)
    # at a tie the singular vectors have no derivative the rule can know (a 0/0 coupling)
    unknown = ties.unknown_at_ties_p(ties.tied_pairs(groups), ta)
    return (u, s, vh), (ties.guard(du, unknown, s, ta, u, s, vh), ds,
                        ties.guard(_H(dv), unknown, s, ta, u, s, vh))


def _gram(x):
    """``|x|^T |x|`` (k, k): nonzero exactly where a column of ``x`` is, for any row count."""
    ax = ew.abs_p(x)
    return _mm(_T(ax), ax)


def _svd_vjp(cts, out, a, full_matrices, hermitian):
    u_bar, s_bar, vh_bar = cts
    u, s, vh = out
    m, n = shape_of(a)[-2:]
    k = min(m, n)
    u1, u2, v1h, v2h = _svd_split(u, vh, m, n, full_matrices)
    v1 = _H(v1h)
    if type(u_bar) is not Zero:
        u_bar = _cast(u_bar, dtype_of(u))
        if u2 is not None:
            u2_bar = getitem(u_bar, (Ellipsis, slice(None), slice(k, None)))
            u_bar = ew.subtract_p(getitem(u_bar, (Ellipsis, slice(None), slice(0, k))),
                                _conj(_mm(u2, _mm(_T(u2_bar), u1))))
    v_bar = vh_bar if type(vh_bar) is Zero else _H(_cast(vh_bar, dtype_of(vh)))
    if type(v_bar) is not Zero and v2h is not None:
        v2 = _H(v2h)
        v2_bar = getitem(v_bar, (Ellipsis, slice(None), slice(k, None)))
        v_bar = ew.subtract_p(getitem(v_bar, (Ellipsis, slice(None), slice(0, k))),
                            _conj(_mm(v2, _mm(_T(v2_bar), v1))))
    spectral = None
    if type(s_bar) is not Zero:
        c = _cast(s_bar, dtype_of(s))
        spectral = _conj(svd_spectral_p(a, u, s, vh, c, full_matrices=full_matrices,
                                        hermitian=hermitian, mode=ties.spectral_mode(c, None)))
        spectral = spectral if is_complex(a) else _real(spectral)
        if type(u_bar) is Zero and type(v_bar) is Zero:
            return spectral
    groups = ties.tie_groups_p(s)
    f = ties.inverse_gaps(ew.square_p(s), groups)
    s_row, s_col = sh.expand_dims(s, -2), sh.expand_dims(s, -1)
    s_inv = _safe_reciprocal(s)
    inner = []          # the cotangent of dP = U^H dA V
    outer = []          # the parts outside span U / span V
    moving = None       # whether a cotangent reaches the singular vectors
    if type(u_bar) is not Zero:
        moving = u_bar
        g0 = _mm(_T(u1), u_bar)
        g = ew.multiply_p(f, g0)
        inner.append(ew.multiply_p(ew.add_p(g, _H(g)), s_row))
        phase = _imaginary_part_times_i(_diag(g0))
        if phase is not None:
            inner.append(_diag_embed(ew.multiply_p(phase, s_inv)))
        if m > k:   # (I - conj(U) U^T) Ubar S^-1 V^T
            proj = ew.subtract_p(u_bar, _mm(_conj(u1), g0))
            outer.append(_mm(ew.multiply_p(proj, sh.expand_dims(s_inv, -2)), _T(v1)))
    if type(v_bar) is not Zero:
        moving = v_bar if moving is None else ew.add_p(_gram(moving), _gram(v_bar))
        h = ew.multiply_p(f, _mm(_T(v1), v_bar))
        inner.append(ew.multiply_p(s_col, ew.add_p(h, _H(h))))
        if n > k:   # conj(U) S^-1 (Vbar^H - Vbar^H conj(V) V^T)
            vbh = _H(v_bar)
            proj = ew.subtract_p(vbh, _mm(_mm(vbh, _conj(v1)), _T(v1)))
            outer.append(_mm(_conj(u1), ew.multiply_p(sh.expand_dims(s_inv, -1), proj)))
    total = inner[0]
    for part in inner[1:]:
        total = ew.add_p(total, part)
    g = _mm(_conj(u1), _mm(total, _T(v1)))
    for part in outer:
        g = ew.add_p(g, part)
    witnesses = [c for c in (u_bar, v_bar) if type(c) is not Zero]
    g = ties.guard(g, ties.unknown_at_ties_p(ties.tied_pairs(groups), moving), s, moving, u,
                   s, vh, *witnesses)
    if hermitian:
        g = _sym(g)
    g = g if is_complex(a) else _real(g)
    return g if spectral is None else ew.add_p(g, spectral)


svd_p = Primitive("svd", _svd_impl, _svd_jvp, (_svd_vjp,), multiple_results=True,
                  traits=RAISES)
svd_p.batch = _single_batch(svd_p)


# svd_spectral_p(a, u, s, vh, c[, channel]): G = U diag(c) V^H over the leading k = min(m, n)
# singular vectors, rotated within tie groups: svd's VJP for the singular values (c = s_bar). With
# P = U^H dA V, H and A its Hermitian and skew-Hermitian parts, its derivative is
#     U (H o K + A o L + diag(dc)) V^H + (I - U U^H) dA V diag(c / s) V^H
#                                      + U diag(c / s) U^H dA (I - V V^H),
# K_ij = (c_j - c_i) / (s_j - s_i) (at ties the limit read off dc, as for eigh) and
# L_ij = (c_j + c_i) / (s_j + s_i), which needs no tie rule: the nuclear norm (c = 1) and
# sum(s**2) (c = 2 s) are exact at repeated singular values. u, s, vh are svd(a); their
# tangents are ignored. ``mode`` and the channel argument: as eigh_spectral_p's (eigen.py).


def _svd_leading(u, s, vh, full_matrices):
    m, n = shape_of(u)[-2], shape_of(vh)[-1]
    u1, _, v1h, _ = _svd_split(u, vh, m, n, full_matrices)
    groups = ties.tie_groups_p(s)
    return ties.rotated(u1, groups), ties.rotated(_H(v1h), groups), groups, m, n


def _svd_spectral_impl(a, u, s, vh, c, *channel, full_matrices, hermitian, mode):
    k = s.shape[-1]
    groups = ties.tie_groups_impl(s)
    u1 = ties.basis_for(u[..., :, :k], groups, c)
    v1 = ties.basis_for(np.swapaxes(vh[..., :k, :], -1, -2).conj(), groups, c)
    return (u1 * c[..., None, :]) @ np.swapaxes(v1, -1, -2).conj()


def _sum_ratio(s, c):
    """``(c_i + c_j) / (s_i + s_j)`` (0 where both singular values are 0)."""
    return ew.multiply_p(ew.add_p(sh.expand_dims(c, -2), sh.expand_dims(c, -1)),
                       _safe_reciprocal(ew.add_p(sh.expand_dims(s, -2), sh.expand_dims(s, -1))))


def _perturbations(u1, v1, t, hermitian):
    """``t`` as the rules read it, ``P = U^H t V`` and its Hermitian and skew parts."""
    t = _cast(_sym(t) if hermitian else t, dtype_of(u1))
    p = _mm(_H(u1), _mm(t, v1))
    return t, p, ew.multiply_p(ew.add_p(p, _H(p)), 0.5), ew.multiply_p(ew.subtract_p(p, _H(p)),
                                                                       0.5)


def _spectral_tangent(u1, v1, s, c, parts, k_tie, dc, shape):
    """The tangent of ``U diag(c) V^H`` along ``t`` (``parts``: ``_perturbations``), with
    ``k_tie`` the K of its Hermitian part and ``dc`` the tangent of ``c`` (or None)."""
    t, p, herm, skew = parts
    x = ew.add_p(ties.times_nonzero(k_tie, herm), ew.multiply_p(_sum_ratio(s, c), skew))
    if dc is not None:
        x = ew.add_p(x, _diag_embed(_cast(dc, dtype_of(u1))))
    g = _mm(u1, _mm(x, _H(v1)))
    scale = sh.expand_dims(ew.multiply_p(c, _safe_reciprocal(s)), -2)
    m, n = shape
    k = min(m, n)
    if m > k:
        outside = ew.subtract_p(_mm(t, v1), _mm(u1, p))
        g = ew.add_p(g, _mm(ew.multiply_p(outside, scale), _H(v1)))
    if n > k:
        outside = ew.subtract_p(_mm(_H(u1), t), _mm(p, _H(v1)))
        g = ew.add_p(g, _mm(ew.multiply_p(u1, scale), outside))
    return g


def _svd_spectral_jvp(primals, tangents, full_matrices, hermitian, mode):
    a, u, s, vh, c = primals[:5]
    ta, tc = tangents[0], tangents[4]
    out = svd_spectral_p(*primals, full_matrices=full_matrices, hermitian=hermitian, mode=mode)
    u1, v1, groups, m, n = _svd_leading(u, s, vh, full_matrices)
    dc = None if type(tc) is Zero else tc
    if type(ta) is Zero:
        return out, _mm(u1, _mm(_diag_embed(_cast(dc, dtype_of(u))), _H(v1)))
    parts = _perturbations(u1, v1, ta, hermitian)
    k_tie = ties.tie_limits(s, c, groups, parts[1], dc)
    return out, _spectral_tangent(u1, v1, s, c, parts, k_tie, dc, (m, n))


def _outer_cotangent(ct, u1, v1):
    """``N = U^T ct conj(V)`` and its Hermitian part."""
    n_bar = _mm(_T(u1), _mm(ct, _conj(v1)))
    return n_bar, ew.multiply_p(ew.add_p(n_bar, _H(n_bar)), 0.5)


def _as_cotangent(g, a, hermitian):
    """A gradient ``g`` (Hermitian pairing) as the cotangent of ``a``."""
    g = _sym(g) if hermitian else g
    return g if is_complex(a) else _real(g)


def _svd_spectral_vjp(i):
    def vjp_a(ct, out, a, u, s, vh, c, *channel, full_matrices, hermitian, mode):
        u1, v1, groups, m, n = _svd_leading(u, s, vh, full_matrices)
        ct = _cast(ct, dtype_of(u))
        n_bar, herm = _outer_cotangent(ct, u1, v1)
        # the tie limits need the tangent of c, which a cotangent does not carry
        herm_bar = ties.times_nonzero(ties.spectral_limits(s, c, groups, mode), herm)
        skew_bar = ew.multiply_p(_sum_ratio(s, c), ew.multiply_p(ew.subtract_p(n_bar, _H(n_bar)),
                                                                 0.5))
        g = _mm(_conj(u1), _mm(ew.add_p(herm_bar, skew_bar), _T(v1)))
        scale = sh.expand_dims(ew.multiply_p(c, _safe_reciprocal(s)), -2)
        k = min(m, n)
        if m > k:   # (I - conj(U) U^T) ct conj(V) diag(c / s) V^T
            y = ew.multiply_p(_mm(ct, _conj(v1)), scale)
            g = ew.add_p(g, _mm(ew.subtract_p(y, _mm(_conj(u1), _mm(_T(u1), y))), _T(v1)))
        if n > k:   # conj(U) diag(c / s) U^T ct (I - conj(V) V^T)
            y = _mm(_T(ew.multiply_p(u1, scale)), ct)
            g = ew.add_p(g, _mm(_conj(u1), ew.subtract_p(y, _mm(_mm(y, _conj(v1)), _T(v1)))))
        return _as_cotangent(g, a, hermitian)

    def vjp_c(ct, out, a, u, s, vh, c, *channel, full_matrices, hermitian, mode):
        u1, v1, _, _, _ = _svd_leading(u, s, vh, full_matrices)
        return _real(_diag(_mm(_T(u1), _mm(_cast(ct, dtype_of(u)), _conj(v1)))))

    def vjp_channel(ct, out, a, u, s, vh, c, channel, full_matrices, hermitian, mode):
        if mode != "channel" or not ties.may_be_close(s):
            return None
        u1, v1, _, _, _ = _svd_leading(u, s, vh, full_matrices)
        return ties.encode_channel(_outer_cotangent(_cast(ct, dtype_of(u)), u1, v1)[1], c)

    return {0: vjp_a, 4: vjp_c, 5: vjp_channel}.get(i)


def _svd_spectral_batch(axis_size, values, batch_axes, full_matrices, hermitian, mode):
    values = [v if ax is not None else sh.broadcast_to(v, (axis_size,) + shape_of(v))
              for v, ax in zip(values, batch_axes)]
    mode = ties.batched_mode(mode, values[:1] + values[2:])   # (a, s, vh, c[, channel])
    return svd_spectral_p(*values, full_matrices=full_matrices, hermitian=hermitian,
                          mode=mode), 0


svd_spectral_p = Primitive(
    "svd_spectral", _svd_spectral_impl, _svd_spectral_jvp, EachArgument(_svd_spectral_vjp),
    _svd_spectral_batch, vjp_ignores=(0, "out"), traits=RAISES)


# svd_values_p(a, u, s, vh) -> (s, channel): the singular values as svd and svdvals return
# them, s itself, with rules of their own (all of their derivative is through a), as
# eigh_values_p (eigen.py) for the eigenvalues: the JVP goes through svd_values_jvp_p, the
# VJP through svd_spectral_p, whose channel argument is the second output.


def _svd_values_impl(a, u, s, vh, full_matrices, hermitian):
    return s, ties.channel_zeros(s, u.dtype)


def _svd_values_jvp(primals, tangents, full_matrices, hermitian):
    a, u, s, vh = primals
    ta, ts = tangents[0], tangents[2]
    channel = ties.channel_zeros(s, dtype_of(u))
    if type(ta) is Zero:
        return (s, channel), (zero_like(s), zero_like(channel))
    if type(ts) is Zero:
        u1, v1, groups, _, _ = _svd_leading(u, s, vh, full_matrices)
        ts = _real(ties.rotated_diagonal(_perturbations(u1, v1, ta, hermitian)[1], groups))
    # svd_p's tangent of s is the first order already: the primitive carries the rules of
    # the orders above
    s, ts = svd_values_jvp_p(a, u, s, vh, ta, ts, full_matrices=full_matrices,
                             hermitian=hermitian)
    return (s, channel), (ts, zero_like(channel))


def _first_order(cts, *values):
    """Whether a VJP of the values' primitive is plain first order (every value a plain
    array, no channel cotangent): the cotangent of the values then passes through to
    svd_p's own VJP, which pulls it back with the vectors' in one product."""
    return type(cts[1]) is Zero and not holds_tracer(cts[0], *values)


def _svd_values_vjp_s(cts, out, a, u, s, vh, full_matrices, hermitian):
    return cts[0] if _first_order(cts, a, u, s, vh) else None


def _svd_values_vjp_a(cts, out, a, u, s, vh, full_matrices, hermitian):
    if _first_order(cts, a, u, s, vh):
        return None
    s_bar, channel_bar = cts
    params = dict(full_matrices=full_matrices, hermitian=hermitian)
    g = None
    if type(s_bar) is not Zero:
        c = _cast(s_bar, dtype_of(s))
        g = _conj(svd_spectral_p(a, u, s, vh, c, out[1], **params,
                                 mode=ties.spectral_mode(c, out[1])))
    if type(channel_bar) is not Zero:
        u1, v1, groups, _, _ = _svd_leading(u, s, vh, full_matrices)
        dc = None if type(s_bar) is Zero else _cast(s_bar, dtype_of(s))
        m_bar = ties.channel_correction(s, groups, _cast(channel_bar, dtype_of(u)), dc)
        part = _mm(_conj(u1), _mm(m_bar, _T(v1)))
        g = part if g is None else ew.add_p(g, part)
    return _as_cotangent(g, a, hermitian)


def _svd_values_batch(axis_size, values, batch_axes, full_matrices, hermitian):
    values = [v if ax is not None else sh.broadcast_to(v, (axis_size,) + shape_of(v))
              for v, ax in zip(values, batch_axes)]
    return svd_values_p(*values, full_matrices=full_matrices, hermitian=hermitian), (0, 0)


svd_values_p = Primitive("svd_values", _svd_values_impl, _svd_values_jvp,
                         (_svd_values_vjp_a, None, _svd_values_vjp_s), _svd_values_batch,
                         multiple_results=True)


# svd_values_jvp_p(a, u, s, vh, ta, d) -> (s, d): the JVP of svd_values_p along ta (leading
# axes of directions allowed, as eigh_values_jvp_p), d = Re diag(U^H ta V) (svd_p's own
# tangent of s, passed in), and s itself.
# Forward over forward: d's derivative along da is the second derivative of the singular
# values, sum_k 2 Re(conj(H1_ik) H2_ik) / (s_i - s_k) (untied pairs; NaN for a tied pair
# the direction moves), + sum_k 2 Re(conj(A1_ik) A2_ik) / (s_i + s_k) (H, A the Hermitian
# and skew parts of P = U^H t V) and, for a non-square matrix, the parts of both directions
# outside span U (span V) over s_i. Reverse over forward: the tangent of U diag(c) V^H along
# ta with c = d's cotangent and dc = s's, K read as hessian's (ties.direction_limits).


def _svd_values_jvp_impl(a, u, s, vh, ta, d, full_matrices, hermitian):
    return s, d


def _outside_products(u1, v1, parts1, parts2, shape):
    """``sum`` of ``Re(conj(x1) x2)`` over the parts of two directions outside span U
    (columns) and span V (rows): ``(..., k)``, or None for a square matrix."""
    m, n = shape
    k = min(m, n)
    total = None
    if m > k:
        o1, o2 = (ew.subtract_p(_mm(t, v1), _mm(u1, p)) for t, p, _, _ in (parts1, parts2))
        total = rd.sum(ties.pair_products(o1, o2), axis=-2)
    if n > k:
        o1, o2 = (ew.subtract_p(_mm(_H(u1), t), _mm(p, _H(v1))) for t, p, _, _ in (parts1,
                                                                                    parts2))
        part = rd.sum(ties.pair_products(o1, o2), axis=-1)
        total = part if total is None else ew.add_p(total, part)
    return total


def _svd_values_jvp_jvp(primals, tangents, full_matrices, hermitian):
    a, u, s, vh, ta, _ = primals
    da, dta = tangents[0], tangents[4]
    out = svd_values_jvp_p(*primals, full_matrices=full_matrices, hermitian=hermitian)
    u1, v1, groups, m, n = _svd_leading(u, s, vh, full_matrices)
    ds, dd = zero_like(s), zero_like(out[1])
    if type(da) is not Zero:
        parts1 = _perturbations(u1, v1, ta, hermitian)
        parts2 = _perturbations(u1, v1, da, hermitian)
        ds = _real(_diag(parts2[1]))
        couplings = ew.where_p(ties.tied_pairs(groups), np.nan, ew.multiply_p(
            ties.inverse_gaps(s, groups), -2.0))                    # 2 / (s_i - s_k)
        dd = ties.contract_couplings(couplings, ties.pair_products(parts1[2], parts2[2]))
        sums = _sum_ratio(s, np.ones(shape_of(s)[-1:], dtype_of(s)))   # 2 / (s_i + s_k)
        dd = ew.add_p(dd, rd.sum(ew.multiply_p(sums, ties.pair_products(parts1[3], parts2[3])),
                                 axis=-1))
        outside = _outside_products(u1, v1, parts1, parts2, (m, n))
        if outside is not None:
            dd = ew.add_p(dd, ew.multiply_p(outside, _safe_reciprocal(s)))
    if type(dta) is not Zero:
        part = _real(_diag(_perturbations(u1, v1, dta, hermitian)[1]))
        dd = part if type(dd) is Zero else ew.add_p(dd, part)
    return out, (ds, dd)


def _svd_values_jvp_vjp_a(cts, out, a, u, s, vh, ta, d, full_matrices, hermitian):
    s_bar, d_bar = cts
    u1, v1, groups, m, n = _svd_leading(u, s, vh, full_matrices)
    x = None if type(s_bar) is Zero else _diag_embed(_cast(s_bar, dtype_of(u)))
    g = None
    if type(d_bar) is not Zero:
        # the tangent of U diag(c) V^H along ta (c = d_bar), summed over the directions
        t, p, herm, skew = _perturbations(u1, v1, ta, hermitian)
        dirs = len(shape_of(ta)) - len(shape_of(s)) - 1
        inner = ties.direction_products(s, d_bar, groups, p, herm,
                                        None if type(s_bar) is Zero else s_bar, dirs)
        sums = _sum_ratio(s, np.full(shape_of(s)[-1:], 0.5, dtype_of(s)))   # 1 / (s_i + s_k)
        inner = ew.add_p(inner, ew.multiply_p(sums, ew.add_p(
            ties.contract_directions(skew, d_bar, "i", dirs),
            ties.contract_directions(skew, d_bar, "k", dirs))))
        x = inner if x is None else ew.add_p(x, inner)
        inverse = _safe_reciprocal(s)
        k = min(m, n)
        if m > k:   # (I - U U^H) ta V diag(c / s) V^H
            outside = ties.contract_directions(ew.subtract_p(_mm(t, v1), _mm(u1, p)), d_bar, "k",
                                               dirs)
            g = _mm(ew.multiply_p(outside, sh.expand_dims(inverse, -2)), _H(v1))
        if n > k:   # U diag(c / s) U^H ta (I - V V^H)
            outside = ties.contract_directions(ew.subtract_p(_mm(_H(u1), t), _mm(p, _H(v1))),
                                               d_bar, "i", dirs)
            part = _mm(u1, ew.multiply_p(sh.expand_dims(inverse, -1), outside))
            g = part if g is None else ew.add_p(g, part)
    core = _mm(u1, _mm(x, _H(v1)))
    g = core if g is None else ew.add_p(g, core)
    return _as_cotangent(_conj(g), a, hermitian)


def _svd_values_jvp_vjp_ta(cts, out, a, u, s, vh, ta, d, full_matrices, hermitian):
    d_bar = cts[1]
    if type(d_bar) is Zero:
        return None
    g = svd_spectral_p(a, u, s, vh, d_bar, full_matrices=full_matrices, hermitian=hermitian,
                       mode=ties.spectral_mode(d_bar, None))
    return _as_cotangent(_conj(g), ta, hermitian)


def _svd_values_jvp_batch(axis_size, values, batch_axes, full_matrices, hermitian):
    params = dict(full_matrices=full_matrices, hermitian=hermitian)
    return ties.batch_directions(svd_values_jvp_p, axis_size, values, batch_axes, 4, **params)


svd_values_jvp_p = Primitive(
    "svd_values_jvp", _svd_values_jvp_impl, _svd_values_jvp_jvp,
    (_svd_values_jvp_vjp_a, None, None, None, _svd_values_jvp_vjp_ta), _svd_values_jvp_batch,
    multiple_results=True)


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """Singular value decomposition, as ``np.linalg.svd``: ``SVDResult(U, S, Vh)`` with
    ``a = U @ diag(S) @ Vh`` (``full_matrices``: square ``U`` and ``Vh``), or the singular
    values alone (descending) with ``compute_uv=False``. Singular vectors are differentiable
    for distinct nonzero singular values, through sign-invariant functions (e.g. ``U @ Vh``
    or ``u u^T``); singular values everywhere they are distinct (and at ties, through
    symmetric functions of them). With ``hermitian=True`` NumPy reads the lower triangle
    (``eigh``): the derivative is that of the Hermitian matrix this triangle defines, so the
    upper triangle has derivative 0."""
    a = _matrix_stack(a)
    if hermitian and holds_tracer(a):
        _assert_stacked_square(a)
        a = hermitian_from_triangle(a)
    if not compute_uv:
        if not holds_tracer(a):
            return np.linalg.svd(a, compute_uv=False, hermitian=hermitian)
        parts = svd_p(a, full_matrices=False, hermitian=hermitian)
        if not ties.values_need_rules(a):
            return parts[1]
        return svd_values_p(a, *parts, full_matrices=False, hermitian=hermitian)[0]
    m, n = shape_of(a)[-2:]
    full = bool(full_matrices) and m != n
    u, s, vh = svd_p(a, full_matrices=full, hermitian=hermitian)
    if holds_tracer(a) and ties.values_need_rules(a):
        s = svd_values_p(a, u, s, vh, full_matrices=full, hermitian=hermitian)[0]
    return SVDResult(u, s, vh)


def svdvals(x, /):
    """The singular values (descending), as ``np.linalg.svdvals``."""
    return svd(x, compute_uv=False)

# Sparsity detection: the factors depend on the whole matrix (per stack index).
svd_p.sparsity = sr.matrix_stack_sparsity()
svd_values_p.sparsity = sr.matrix_stack_sparsity(counts=(2, None, None, None))
svd_values_jvp_p.sparsity = sr.matrix_stack_sparsity(counts=(2, None, None, None, 2, 1))
