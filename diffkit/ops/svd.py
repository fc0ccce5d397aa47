"""The singular value decomposition, differentiable: ``svd`` and ``svdvals``.

Primitives (each with its JVP, VJP and batching rule below it): ``svd_p`` (three outputs)
and ``svd_spectral_p`` (``U diag(c) V^H``, the VJP of the singular values, with its own
derivative). Ties and the vectors' gauge follow ``spectral_ties.py``.

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
from ..core.primitive import Primitive
from ..core.zeros import Zero, dtype_of, is_complex, shape_of
from . import elementwise as ew
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
        spectral = _conj(svd_spectral_p(a, u, s, vh, _cast(s_bar, dtype_of(s)),
                                        full_matrices=full_matrices, hermitian=hermitian))
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
                  may_raise=True)
svd_p.batch = _single_batch(svd_p)


# svd_spectral_p(a, u, s, vh, c): G = U diag(c) V^H over the leading k = min(m, n) singular
# vectors, rotated within tie groups: svd's VJP for the singular values (c = s_bar). With
# P = U^H dA V, H and A its Hermitian and skew-Hermitian parts, its derivative is
#     U (H o K + A o L + diag(dc)) V^H + (I - U U^H) dA V diag(c / s) V^H
#                                      + U diag(c / s) U^H dA (I - V V^H),
# K_ij = (c_j - c_i) / (s_j - s_i) (at ties the limit read off dc, as for eigh) and
# L_ij = (c_j + c_i) / (s_j + s_i), which needs no tie rule: the nuclear norm (c = 1) and
# sum(s**2) (c = 2 s) are exact at repeated singular values. u, s, vh are svd(a); their
# tangents are ignored.


def _svd_leading(u, s, vh, full_matrices):
    m, n = shape_of(u)[-2], shape_of(vh)[-1]
    u1, _, v1h, _ = _svd_split(u, vh, m, n, full_matrices)
    groups = ties.tie_groups_p(s)
    return ties.rotated(u1, groups), ties.rotated(_H(v1h), groups), groups, m, n


def _svd_spectral_impl(a, u, s, vh, c, full_matrices, hermitian):
    k = s.shape[-1]
    groups = ties.tie_groups_impl(s)
    u1 = ties.basis_for(u[..., :, :k], groups, c)
    v1 = ties.basis_for(np.swapaxes(vh[..., :k, :], -1, -2).conj(), groups, c)
    return (u1 * c[..., None, :]) @ np.swapaxes(v1, -1, -2).conj()


def _sum_ratio(s, c):
    """``(c_i + c_j) / (s_i + s_j)`` (0 where both singular values are 0)."""
    return ew.multiply_p(ew.add_p(sh.expand_dims(c, -2), sh.expand_dims(c, -1)),
                       _safe_reciprocal(ew.add_p(sh.expand_dims(s, -2), sh.expand_dims(s, -1))))


def _svd_spectral_jvp(primals, tangents, full_matrices, hermitian):
    a, u, s, vh, c = primals
    ta, _, _, _, tc = tangents
    out = svd_spectral_p(a, u, s, vh, c, full_matrices=full_matrices, hermitian=hermitian)
    u1, v1, groups, m, n = _svd_leading(u, s, vh, full_matrices)
    dc = None if type(tc) is Zero else tc
    x = None if dc is None else _diag_embed(_cast(dc, dtype_of(u)))
    if type(ta) is Zero:
        return out, _mm(u1, _mm(x, _H(v1)))
    ta = _cast(_sym(ta) if hermitian else ta, dtype_of(u))
    p = _mm(_H(u1), _mm(ta, v1))
    herm, skew = ew.multiply_p(ew.add_p(p, _H(p)), 0.5), ew.multiply_p(ew.subtract_p(p, _H(p)), 0.5)
    term = ew.add_p(ties.times_nonzero(ties.tie_limits(s, c, groups, p, dc), herm),
                  ew.multiply_p(_sum_ratio(s, c), skew))
    x = term if x is None else ew.add_p(x, term)
    g = _mm(u1, _mm(x, _H(v1)))
    scale = sh.expand_dims(ew.multiply_p(c, _safe_reciprocal(s)), -2)
    k = min(m, n)
    if m > k:
        outside = ew.subtract_p(_mm(ta, v1), _mm(u1, p))
        g = ew.add_p(g, _mm(ew.multiply_p(outside, scale), _H(v1)))
    if n > k:
        outside = ew.subtract_p(_mm(_H(u1), ta), _mm(p, _H(v1)))
        g = ew.add_p(g, _mm(ew.multiply_p(u1, scale), outside))
    return out, g


def _svd_spectral_vjp_a(ct, out, a, u, s, vh, c, full_matrices, hermitian):
    u1, v1, groups, m, n = _svd_leading(u, s, vh, full_matrices)
    ct = _cast(ct, dtype_of(u))
    n_bar = _mm(_T(u1), _mm(ct, _conj(v1)))
    # the tie limits need the tangent of c, which a cotangent does not carry
    k_tie = ties.tie_limits(s, c, groups, ew.multiply_p(n_bar, 0.0), None)
    herm_bar = ties.times_nonzero(k_tie, ew.multiply_p(ew.add_p(n_bar, _H(n_bar)), 0.5))
    skew_bar = ew.multiply_p(_sum_ratio(s, c), ew.multiply_p(ew.subtract_p(n_bar, _H(n_bar)), 0.5))
    g = _mm(_conj(u1), _mm(ew.add_p(herm_bar, skew_bar), _T(v1)))
    scale = sh.expand_dims(ew.multiply_p(c, _safe_reciprocal(s)), -2)
    k = min(m, n)
    if m > k:   # (I - conj(U) U^T) ct conj(V) diag(c / s) V^T
        y = ew.multiply_p(_mm(ct, _conj(v1)), scale)
        g = ew.add_p(g, _mm(ew.subtract_p(y, _mm(_conj(u1), _mm(_T(u1), y))), _T(v1)))
    if n > k:   # conj(U) diag(c / s) U^T ct (I - conj(V) V^T)
        y = _mm(_T(ew.multiply_p(u1, scale)), ct)
        g = ew.add_p(g, _mm(_conj(u1), ew.subtract_p(y, _mm(_mm(y, _conj(v1)), _T(v1)))))
    if hermitian:
        g = _sym(g)
    return g if is_complex(a) else _real(g)


def _svd_spectral_vjp_c(ct, out, a, u, s, vh, c, full_matrices, hermitian):
    u1, v1, _, _, _ = _svd_leading(u, s, vh, full_matrices)
    return _real(_diag(_mm(_T(u1), _mm(_cast(ct, dtype_of(u)), _conj(v1)))))


def _svd_spectral_batch(axis_size, values, batch_axes, full_matrices, hermitian):
    values = [v if ax is not None else sh.broadcast_to(v, (axis_size,) + shape_of(v))
              for v, ax in zip(values, batch_axes)]
    return svd_spectral_p(*values, full_matrices=full_matrices, hermitian=hermitian), 0


svd_spectral_p = Primitive(
    "svd_spectral", _svd_spectral_impl, _svd_spectral_jvp,
    (_svd_spectral_vjp_a, None, None, None, _svd_spectral_vjp_c), _svd_spectral_batch,
    vjp_ignores=(0, "out"), may_raise=True)


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
        return svd_p(a, full_matrices=False, hermitian=hermitian)[1]
    m, n = shape_of(a)[-2:]
    full = bool(full_matrices) and m != n
    return SVDResult(*svd_p(a, full_matrices=full, hermitian=hermitian))


def svdvals(x, /):
    """The singular values (descending), as ``np.linalg.svdvals``."""
    return svd(x, compute_uv=False)

# Sparsity detection: the factors depend on the whole matrix (per stack index).
svd_p.sparsity = sr.matrix_stack_sparsity()
