"""Eigendecompositions, differentiable: ``eigh``, ``eigvalsh``, ``eig`` and ``eigvals``.

Primitives (each with its JVP, VJP and batching rule below it): ``eigh_p`` and ``eig_p``
(two outputs each); ``eigh_values_p`` (the eigenvalues ``eigh`` and ``eigvalsh`` return,
with rules of their own for every order), ``eigh_spectral_p`` (``W diag(c) W^H``, the VJP of
the eigenvalues, with its own Daleckii-Krein derivative) and ``eigh_values_jvp_p`` (the
eigenvalues' JVP, with its own derivatives). Ties and the vectors' gauge follow
``spectral_ties.py``.

``eigh`` and ``eigvalsh`` read the ``UPLO`` triangle (and the real diagonal) of their input,
as NumPy: the derivative is that of this function, so the other triangle has derivative 0
and the read off-diagonal entries count for both.
"""

import functools
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
from .matrix_helpers import (
    _H,
    _T,
    _cast,
    _conj,
    _diag,
    _diag_embed,
    _mask,
    _mm,
    _real,
    _real_dtype,
    _single_batch,
    _square_stack,
)
from .solves import solve_p

__all__ = ["eigh", "eigvalsh", "eig", "eigvals", "EigResult", "EighResult"]


EigResult = namedtuple("EigResult", ["eigenvalues", "eigenvectors"])
EighResult = namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
# === eigh =================================================================================


def _eigh_impl(a, UPLO):
    w, v = np.linalg.eigh(a, UPLO=UPLO)
    return w, v


def _from_triangle(x, UPLO):
    """The Hermitian matrix that ``eigh`` reads from the ``UPLO`` triangle of ``x``: the
    strict triangle, its conjugate transpose and the real part of the diagonal."""
    n = shape_of(x)[-1]
    real = _real_dtype(x)
    if not is_complex(x):   # x M + (x M)^T, M the strict triangle and half the diagonal
        half = _mask(n, -1, real) + 0.5 * np.eye(n, dtype=real)
        part = ew.multiply_p(x, half if UPLO == "L" else half.T)
        return ew.add_p(part, _T(part))
    strict = ew.multiply_p(x, _mask(n, -1, real) if UPLO == "L" else _mask(n, -1, real).T)
    diagonal = ew.multiply_p(_real(x), np.eye(n, dtype=real))
    return ew.add_p(ew.add_p(strict, _H(strict)), _cast(diagonal, dtype_of(x)) if
                  is_complex(x) else diagonal)


def _triangle_adjoint(g, UPLO, dtype):
    """The transpose of ``_from_triangle`` (pairing ``Re(sum(ct * t))``): the strict
    triangle of ``g + g^H`` and the real part of ``g``'s diagonal, as ``dtype``."""
    n = shape_of(g)[-1]
    real = _real_dtype(g)
    both = ew.add_p(g, _H(g))
    if not is_complex(g):   # (g + g^T) M on the read triangle, by where, not a product:
        half = _mask(n, -1, real) + 0.5 * np.eye(n, dtype=real)   # it stays 0 when g is NaN
        half = half if UPLO == "L" else half.T
        out = ew.where_p(half > 0, ew.multiply_p(both, half), 0.0)
        return out if np.dtype(dtype).kind != "c" else _cast(out, dtype)
    read = np.tril(np.ones((n, n), bool), -1)   # where, not a product: the unread
    read = read if UPLO == "L" else read.T       # triangle stays 0 when g is NaN
    strict = ew.where_p(read, both, 0.0)
    diagonal = ew.where_p(np.eye(n, dtype=bool), _real(g), 0.0)
    out = ew.add_p(strict, _cast(diagonal, dtype_of(g)) if is_complex(g) else diagonal)
    return out if np.dtype(dtype).kind == "c" else _real(out)


def _eigh_jvp(primals, tangents, UPLO):
    (a,), (ta,) = primals, tangents
    w, v = eigh_p(a, UPLO=UPLO)
    groups = ties.tie_groups_p(w)
    ta = _from_triangle(_cast(ta, dtype_of(v)), UPLO)
    m = _mm(_H(v), _mm(ta, v))                       # V^H dA V
    dw = _real(ties.rotated_diagonal(m, groups))
    dv = _mm(v, ew.multiply_p(ties.inverse_gaps(w, groups), m))
    # at a tie the eigenvectors have no derivative the rule can know (a 0/0 coupling)
    unknown = ties.unknown_at_ties_p(ties.tied_pairs(groups), ta)
    return (w, v), (dw, ties.guard(dv, unknown, w, ta, w, v))


@functools.lru_cache(maxsize=64)
def _half_triangle(n, UPLO, dtype):
    """The read strict triangle with ones, the diagonal with 1/2 (a constant)."""
    half = _mask(n, -1, dtype) + 0.5 * np.eye(n, dtype=dtype)
    return half if UPLO == "L" else half.T


def _plain_without_ties(w, *values):
    """Whether every value is a plain array (a first-order rule: nothing differentiates
    it again) and ``w`` has no tie: the rule may then skip the tie bookkeeping."""
    if type(w) is not np.ndarray or any(type(x) is not np.ndarray for x in values):
        return False
    if w.shape[-1] < 2:
        return True
    scale = ties.tie_tolerance(w.dtype) * np.max(np.abs(w), axis=-1, keepdims=True)
    return not np.any(np.abs(w[..., 1:] - w[..., :-1]) <= scale)   # w is sorted


def _eigh_vjp(cts, out, a, UPLO):
    w_bar, v_bar = cts
    w, v = out
    if _plain_without_ties(w, v, *(c for c in cts if type(c) is not Zero)):
        return _eigh_vjp_plain(w_bar, v_bar, w, v, a, UPLO)
    g = None
    if type(v_bar) is not Zero:
        groups = ties.tie_groups_p(w)
        tied = ties.tied_pairs(groups)
        v_bar = _cast(v_bar, dtype_of(v))
        inner = ew.multiply_p(ties.inverse_gaps(w, tied), _mm(_T(v), v_bar))
        g = _mm(_conj(v), _mm(inner, _T(v)))
        g = ties.guard(g, ties.unknown_at_ties_p(tied, v_bar), w, v_bar, w, v)
    if type(w_bar) is not Zero:
        c = _cast(w_bar, dtype_of(w))
        gw = _conj(eigh_spectral_p(a, w, v, c, UPLO=UPLO, mode=ties.spectral_mode(c, None)))
        g = gw if g is None else ew.add_p(g, gw)
    # the transpose of dA -> V^H T(dA) V, T the Hermitian matrix of the UPLO triangle
    return _triangle_adjoint(g, UPLO, dtype_of(a))


def _eigh_vjp_plain(w_bar, v_bar, w, v, a, UPLO):
    """The same VJP on plain arrays without ties, in NumPy (first order only)."""
    n = w.shape[-1]
    diagonal = (Ellipsis, np.arange(n), np.arange(n))
    if type(v_bar) is not Zero:
        gaps = w[..., None, :] - w[..., :, None]
        gaps[diagonal] = np.inf                           # 1 / inf = 0 on the diagonal
        inner = (np.swapaxes(v, -1, -2) @ np.asarray(v_bar, v.dtype)) / gaps
    else:
        inner = np.zeros(v.shape, v.dtype)
    if type(w_bar) is not Zero:
        inner[diagonal] += w_bar
    g = v.conj() @ inner @ np.swapaxes(v, -1, -2)
    if np.iscomplexobj(g):
        return _triangle_adjoint(g, UPLO, dtype_of(a))
    return (g + np.swapaxes(g, -1, -2)) * _half_triangle(n, UPLO, g.dtype)


eigh_p = Primitive("eigh", _eigh_impl, _eigh_jvp, (_eigh_vjp,), multiple_results=True,
                  traits=RAISES)
eigh_p.batch = _single_batch(eigh_p)


# eigh_spectral_p(a, w, v, c[, channel]): G = W diag(c) W^H with (w, v) = eigh(a) and W =
# v rotated within tie groups: eigh's VJP for the eigenvalues (c = w_bar). Its derivative
# in a is Daleckii-Krein's, W (K o W^H dA W + diag(dc)) W^H with K_ij = (c_j - c_i) /
# (w_j - w_i); at a tie K_ij is the limit f'' of the c = f'(w) that produced c, which the
# JVP reads off the tangent of c (see ties.tie_limits). w and v are eigh(a), passed in so
# that no rule decomposes a again; their tangents are ignored (all of G's derivative is
# through a). ``mode`` (see ties.spectral_mode) says what the VJP knows of K on ties:
# "fixed" (c is a constant: 0), "channel" (0 here, the channel argument carries the rest
# to eigh_values_p's VJP, see spectral_ties.py) or "plain" (NaN).


def _eigh_spectral_impl(a, w, v, c, *channel, UPLO, mode):
    rotated = ties.basis_for(v, ties.tie_groups_impl(w), c)
    return (rotated * c[..., None, :]) @ np.swapaxes(rotated.conj(), -1, -2)


def _perturbation(rot, t, UPLO):
    """``R^H T(t) R``: the perturbation of the read Hermitian matrix in the basis ``rot``."""
    return _mm(_H(rot), _mm(_from_triangle(_cast(t, dtype_of(rot)), UPLO), rot))


def _spectral_tangent(w, rot, groups, c, ta, dc, UPLO):
    """The tangent of ``W diag(c) W^H`` (``W = rot``) along ``ta``, with ``dc`` the tangent
    of ``c`` (``None`` for zero): ``W (K o m + diag(dc)) W^H``."""
    x = None if dc is None else _diag_embed(_cast(dc, dtype_of(rot)))
    if type(ta) is not Zero:
        m = _perturbation(rot, ta, UPLO)
        term = ties.times_nonzero(ties.tie_limits(w, c, groups, m, dc), m)
        x = term if x is None else ew.add_p(x, term)
    return _mm(rot, _mm(x, _H(rot)))


def _eigh_spectral_jvp(primals, tangents, UPLO, mode):
    a, w, v, c = primals[:4]
    ta, tc = tangents[0], tangents[3]
    out = eigh_spectral_p(*primals, UPLO=UPLO, mode=mode)
    groups = ties.tie_groups_p(w)
    dc = None if type(tc) is Zero else tc
    return out, _spectral_tangent(w, ties.rotated(v, groups), groups, c, ta, dc, UPLO)


def _outer_cotangent(ct, v, groups):
    """The basis ``rot`` and ``(n_bar + n_bar^H) / 2``, ``n_bar = R^T ct conj(R)``."""
    rot = ties.rotated(v, groups)
    n_bar = _mm(_T(rot), _mm(_cast(ct, dtype_of(v)), _conj(rot)))
    return rot, ew.multiply_p(ew.add_p(n_bar, _H(n_bar)), 0.5)


def _eigh_spectral_vjp(i):
    def vjp_a(ct, out, a, w, v, c, *channel, UPLO, mode):
        groups = ties.tie_groups_p(w)
        rot, sym = _outer_cotangent(ct, v, groups)
        # the tie limits need the tangent of c, which a cotangent does not carry
        m_bar = ties.times_nonzero(ties.spectral_limits(w, c, groups, mode), sym)
        return _triangle_adjoint(_mm(_conj(rot), _mm(m_bar, _T(rot))), UPLO, dtype_of(a))

    def vjp_c(ct, out, a, w, v, c, *channel, UPLO, mode):
        rot = ties.rotated(v, ties.tie_groups_p(w))
        return _real(_diag(_mm(_T(rot), _mm(_cast(ct, dtype_of(v)), _conj(rot)))))

    def vjp_channel(ct, out, a, w, v, c, channel, UPLO, mode):
        if mode != "channel" or not ties.may_be_close(w):
            return None
        _, sym = _outer_cotangent(ct, v, ties.tie_groups_p(w))
        return ties.encode_channel(sym, c)

    return {0: vjp_a, 3: vjp_c, 4: vjp_channel}.get(i)


def _eigh_spectral_batch(axis_size, values, batch_axes, UPLO, mode):
    values = [v if ax is not None else sh.broadcast_to(v, (axis_size,) + shape_of(v))
              for v, ax in zip(values, batch_axes)]
    return eigh_spectral_p(*values, UPLO=UPLO, mode=ties.batched_mode(mode, values)), 0


eigh_spectral_p = Primitive(
    "eigh_spectral", _eigh_spectral_impl, _eigh_spectral_jvp, EachArgument(_eigh_spectral_vjp),
    _eigh_spectral_batch, vjp_ignores=(0, "out"), traits=RAISES)


# eigh_values_p(a, w, v) -> (w, channel): the eigenvalues as eigh and eigvalsh return them,
# w = eigh(a)[0] itself, with rules of their own (all of their derivative is through a):
# first order as eigh_p's, and at second order by every route exact on ties and accurate
# near them where the route can be (see spectral_ties.py): the JVP goes through
# eigh_values_jvp_p, the VJP through eigh_spectral_p, whose channel argument is the
# second output (zeros nobody reads).


def _eigh_values_impl(a, w, v, UPLO):
    return w, ties.channel_zeros(w, v.dtype)


def _eigh_values_jvp(primals, tangents, UPLO):
    a, w, v = primals
    ta, tw = tangents[0], tangents[1]
    channel = ties.channel_zeros(w, dtype_of(v))
    if type(ta) is Zero:
        return (w, channel), (zero_like(w), zero_like(channel))
    if type(tw) is Zero:
        tw = _real(ties.rotated_diagonal(_mm(_H(v), _mm(_from_triangle(
            _cast(ta, dtype_of(v)), UPLO), v)), ties.tie_groups_p(w)))
    # eigh_p's tangent of w is the first order already: the primitive carries the rules of
    # the orders above
    w, tw = eigh_values_jvp_p(a, w, v, ta, tw, UPLO=UPLO)
    return (w, channel), (tw, zero_like(channel))


def _first_order(cts, *values):
    """Whether a VJP of the values' primitive is plain first order (every value a plain
    array, no channel cotangent): the cotangent of the values then passes through to the
    decomposition's own VJP, which pulls it back with the vectors' in one product."""
    return type(cts[1]) is Zero and not holds_tracer(cts[0], *values)


def _eigh_values_vjp_w(cts, out, a, w, v, UPLO):
    return cts[0] if _first_order(cts, a, w, v) else None


def _eigh_values_vjp_a(cts, out, a, w, v, UPLO):
    if _first_order(cts, a, w, v):
        return None
    w_bar, channel_bar = cts
    g = None
    if type(w_bar) is not Zero:
        c = _cast(w_bar, dtype_of(w))
        g = _conj(eigh_spectral_p(a, w, v, c, out[1], UPLO=UPLO,
                                  mode=ties.spectral_mode(c, out[1])))
    if type(channel_bar) is not Zero:
        groups = ties.tie_groups_p(w)
        rot = ties.rotated(v, groups)
        dc = None if type(w_bar) is Zero else _cast(w_bar, dtype_of(w))
        m_bar = ties.channel_correction(w, groups, _cast(channel_bar, dtype_of(v)), dc)
        part = _mm(_conj(rot), _mm(m_bar, _T(rot)))
        g = part if g is None else ew.add_p(g, part)
    return _triangle_adjoint(g, UPLO, dtype_of(a))


def _eigh_values_batch(axis_size, values, batch_axes, UPLO):
    values = [v if ax is not None else sh.broadcast_to(v, (axis_size,) + shape_of(v))
              for v, ax in zip(values, batch_axes)]
    return eigh_values_p(*values, UPLO=UPLO), (0, 0)


eigh_values_p = Primitive("eigh_values", _eigh_values_impl, _eigh_values_jvp,
                          (_eigh_values_vjp_a, _eigh_values_vjp_w), _eigh_values_batch,
                          multiple_results=True)


# eigh_values_jvp_p(a, w, v, ta, d) -> (w, d): the JVP of eigh_values_p along ta, d =
# Re diag(W^H T(ta) W) (eigh_p's own tangent of w, passed in), and w itself. ``ta`` (and d)
# may carry leading axes of directions beyond a's stack (a batch of jvp directions, as
# jacfwd makes): d has them, w does not (it is one value for every direction, as jacfwd
# needs of a primal). Second order:
# - its JVP (forward over forward): w's derivative is d's first order; d's has the
#   couplings 2 Re(conj(m1_ik) m2_ik) / (w_i - w_k) of untied pairs and NaN for a tied
#   pair the direction moves (the limit needs the caller's f'', which no forward rule
#   sees; a function that does not read the tied values, eigvalsh(X)[-1], is exact);
# - its VJP in a (reverse over forward) is the Daleckii-Krein tangent of W diag(c) W^H
#   along ta with c = d's cotangent and dc = w's cotangent (f'' d c_bar): the same K as
#   hessian's, exact on ties and blended near them (ties.tie_limits), when one direction
#   carries d's cotangent; when several do, w's cotangent is their sum: NaN on ties, the
#   quotients elsewhere.


def _directions(x, w):
    """The number of leading direction axes of ``x`` (beyond the stack of ``w``)."""
    return len(shape_of(x)) - len(shape_of(w)) - 1


def _eigh_values_jvp_impl(a, w, v, ta, d, UPLO):
    return w, d


def _eigh_values_jvp_jvp(primals, tangents, UPLO):
    a, w, v, ta, _ = primals
    da, dta = tangents[0], tangents[3]
    out = eigh_values_jvp_p(*primals, UPLO=UPLO)
    groups = ties.tie_groups_p(w)
    rot = ties.rotated(v, groups)
    dw, dd = zero_like(w), zero_like(out[1])
    if type(da) is not Zero:
        m2 = _perturbation(rot, da, UPLO)
        dw = _real(_diag(m2))
        couplings = ew.where_p(ties.tied_pairs(groups), np.nan, ew.multiply_p(
            ties.inverse_gaps(w, groups), -2.0))                    # 2 / (w_i - w_k)
        dd = ties.contract_couplings(couplings, ties.pair_products(
            _perturbation(rot, ta, UPLO), m2))
    if type(dta) is not Zero:
        part = _real(_diag(_perturbation(rot, dta, UPLO)))
        dd = part if type(dd) is Zero else ew.add_p(dd, part)
    return out, (dw, dd)


def _eigh_values_jvp_vjp_a(cts, out, a, w, v, ta, d, UPLO):
    w_bar, d_bar = cts
    groups = ties.tie_groups_p(w)
    rot = ties.rotated(v, groups)
    x = None
    if type(d_bar) is not Zero:
        m = _perturbation(rot, ta, UPLO)
        x = ties.direction_products(w, d_bar, groups, m, m,
                                    None if type(w_bar) is Zero else w_bar, _directions(ta, w))
    if type(w_bar) is not Zero:
        part = _diag_embed(_cast(w_bar, dtype_of(v)))
        x = part if x is None else ew.add_p(x, part)
    return _triangle_adjoint(_conj(_mm(rot, _mm(x, _H(rot)))), UPLO, dtype_of(a))


def _eigh_values_jvp_vjp_ta(cts, out, a, w, v, ta, d, UPLO):
    d_bar = cts[1]
    if type(d_bar) is Zero:
        return None
    g = eigh_spectral_p(a, w, v, d_bar, UPLO=UPLO, mode=ties.spectral_mode(d_bar, None))
    return _triangle_adjoint(_conj(g), UPLO, dtype_of(ta))


def _eigh_values_jvp_batch(axis_size, values, batch_axes, UPLO):
    return ties.batch_directions(eigh_values_jvp_p, axis_size, values, batch_axes, 3,
                                 UPLO=UPLO)


eigh_values_jvp_p = Primitive(
    "eigh_values_jvp", _eigh_values_jvp_impl, _eigh_values_jvp_jvp,
    (_eigh_values_jvp_vjp_a, None, None, _eigh_values_jvp_vjp_ta), _eigh_values_jvp_batch,
    multiple_results=True)


def _check_uplo(UPLO):
    if UPLO not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")


def eigh(a, UPLO="L"):
    """Eigenvalues (ascending) and eigenvectors of a (stack of) symmetric (Hermitian)
    matrices, as ``np.linalg.eigh``: ``EighResult(eigenvalues, eigenvectors)``. Only the
    ``UPLO`` triangle (and the real part of the diagonal) is read, and the derivative is
    that of this function: the other triangle has derivative 0. At repeated eigenvalues
    (``TIE_RTOL_EPS``) the eigenvectors' derivative is NaN; functions of the eigenvalues
    symmetric in the tied ones are exact (see the module docstring)."""
    _check_uplo(UPLO)
    a = _square_stack(a)
    w, v = eigh_p(a, UPLO=UPLO)
    if holds_tracer(a) and ties.values_need_rules(a):
        w = eigh_values_p(a, w, v, UPLO=UPLO)[0]
    return EighResult(w, v)


def eigvalsh(a, UPLO="L"):
    """Eigenvalues (ascending) of a symmetric (Hermitian) matrix, as ``np.linalg.eigvalsh``
    (read from the ``UPLO`` triangle). Symmetric functions of them are exact at ties, second
    derivatives included (``jacfwd(jacfwd)``: NaN across a tie; docs/conventions.md)."""
    _check_uplo(UPLO)
    a = _square_stack(a)
    if not holds_tracer(a):
        return np.linalg.eigvalsh(a, UPLO=UPLO)
    if not ties.values_need_rules(a):
        return eigh_p(a, UPLO=UPLO)[0]
    return eigh_values_p(a, *eigh_p(a, UPLO=UPLO), UPLO=UPLO)[0]


# === eig ==================================================================================


def _eig_impl(a):
    w, v = np.linalg.eig(a)
    return w, v


def _eig_jvp(primals, tangents):
    (a,), (ta,) = primals, tangents
    w, v = eig_p(a)
    ta = _cast(ta, dtype_of(v))
    m = solve_p(v, _mm(ta, v))                       # V^-1 dA V
    dw = _diag(m)
    tied = ties.pairwise_ties(w)
    dv = _mm(v, ew.multiply_p(ties.inverse_gaps(w, tied), m))
    # keep unit norm and fix the phase: Re(v^H dv) = 0 and Im(v^H dv) = 0 column by column
    along = _real(rd.sum(ew.multiply_p(_conj(v), dv), axis=-2))
    dv = ew.subtract_p(dv, ew.multiply_p(v, sh.expand_dims(along, -2)))
    unknown = ties.unknown_at_ties_p(tied, ta)
    return (w, v), (dw, ties.guard(dv, unknown, w, ta, w, v))


def _eig_vjp(cts, out, a):
    w_bar, v_bar = cts
    w, v = out
    parts = []
    if type(v_bar) is not Zero:
        v_bar = _cast(v_bar, dtype_of(v))
        along = _real(rd.sum(ew.multiply_p(v_bar, v), axis=-2))
        v_bar = ew.subtract_p(v_bar, ew.multiply_p(_conj(v), sh.expand_dims(along, -2)))
        tied = ties.pairwise_ties(w)
        inner = ew.multiply_p(ties.inverse_gaps(w, tied), _mm(_T(v), v_bar))
        unknown = ties.unknown_at_ties_p(tied, v_bar)
        parts.append(ties.guard(inner, unknown, w, v_bar, w, v))
    if type(w_bar) is not Zero:
        parts.append(_diag_embed(_cast(w_bar, dtype_of(v))))
    inner = parts[0] if len(parts) == 1 else ew.add_p(parts[0], parts[1])
    g = solve_p(_T(v), _mm(inner, _T(v)))            # V^-T inner V^T
    return g if is_complex(a) else _real(g)


eig_p = Primitive("eig", _eig_impl, _eig_jvp, (_eig_vjp,), multiple_results=True,
                  vjp_ignores=(0,), traits=RAISES)
eig_p.batch = _single_batch(eig_p)


def eig(a):
    """Eigenvalues and right eigenvectors (unit norm) of a (stack of) square matrices, as
    ``np.linalg.eig``: ``EigResult(eigenvalues, eigenvectors)``. As in NumPy the results of
    a real matrix are complex unless every eigenvalue is real. Differentiable where the
    eigenvalues are distinct; eigenvectors only through phase-invariant functions."""
    return EigResult(*eig_p(_square_stack(a)))


def eigvals(a):
    """Eigenvalues of a (stack of) square matrices, as ``np.linalg.eigvals``."""
    a = _square_stack(a)
    if not holds_tracer(a):
        return np.linalg.eigvals(a)
    return eig_p(a)[0]

# Sparsity detection: eigenvalues and eigenvectors depend on the whole matrix (per stack
# index).
eigh_p.sparsity = eig_p.sparsity = sr.matrix_stack_sparsity()
eigh_values_p.sparsity = sr.matrix_stack_sparsity(counts=(2, None, None))
eigh_values_jvp_p.sparsity = sr.matrix_stack_sparsity(counts=(2, None, None, 2, 1))
