"""Eigendecompositions, differentiable: ``eigh``, ``eigvalsh``, ``eig`` and ``eigvals``.

Primitives (each with its JVP, VJP and batching rule below it): ``eigh_p`` and ``eig_p``
(two outputs each), and ``eigh_spectral_p`` (``W diag(c) W^H``, the VJP of the eigenvalues
of ``eigh``, with its own Daleckii-Krein derivative). Ties and the vectors' gauge follow
``spectral_ties.py``.

``eigh`` and ``eigvalsh`` read the ``UPLO`` triangle (and the real diagonal) of their input,
as NumPy: the derivative is that of this function, so the other triangle has derivative 0
and the read off-diagonal entries count for both.
"""

import functools
from collections import namedtuple

import numpy as np

from ..core.concrete import holds_tracer
from ..core.primitive import Primitive
from ..core.zeros import Zero, dtype_of, is_complex, shape_of
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
        gw = _conj(eigh_spectral_p(a, w, v, _cast(w_bar, dtype_of(w)), UPLO=UPLO))
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
                  may_raise=True)
eigh_p.batch = _single_batch(eigh_p)


# eigh_spectral_p(a, w, v, c): G = W diag(c) W^H with (w, v) = eigh(a) and W = v rotated
# within tie groups: eigh's VJP for the eigenvalues (c = w_bar). Its derivative in a is
# Daleckii-Krein's, W (K o W^H dA W + diag(dc)) W^H with K_ij = (c_j - c_i) / (w_j - w_i);
# at a tie K_ij is the limit f'' of the c = f'(w) that produced c, which the JVP reads off
# the tangent of c (see ties.tie_limits). w and v are eigh(a), passed in so that no rule
# decomposes a again; their tangents are ignored (all of G's derivative is through a).


def _eigh_spectral_impl(a, w, v, c, UPLO):
    rotated = ties.basis_for(v, ties.tie_groups_impl(w), c)
    return (rotated * c[..., None, :]) @ np.swapaxes(rotated.conj(), -1, -2)


def _eigh_spectral_jvp(primals, tangents, UPLO):
    a, w, v, c = primals
    ta, _, _, tc = tangents
    out = eigh_spectral_p(a, w, v, c, UPLO=UPLO)
    groups = ties.tie_groups_p(w)
    rot = ties.rotated(v, groups)
    dc = None if type(tc) is Zero else tc
    x = None if dc is None else _diag_embed(_cast(dc, dtype_of(v)))
    if type(ta) is not Zero:
        m = _mm(_H(rot), _mm(_from_triangle(_cast(ta, dtype_of(v)), UPLO), rot))
        term = ties.times_nonzero(ties.tie_limits(w, c, groups, m, dc), m)
        x = term if x is None else ew.add_p(x, term)
    return out, _mm(rot, _mm(x, _H(rot)))


def _eigh_spectral_vjp_a(ct, out, a, w, v, c, UPLO):
    groups = ties.tie_groups_p(w)
    rot = ties.rotated(v, groups)
    n_bar = _mm(_T(rot), _mm(_cast(ct, dtype_of(v)), _conj(rot)))
    # the tie limits need the tangent of c, which a cotangent does not carry
    k = ties.tie_limits(w, c, groups, ew.multiply_p(n_bar, 0.0), None)
    m_bar = ties.times_nonzero(k, ew.add_p(n_bar, _H(n_bar)))
    m_bar = ew.multiply_p(m_bar, 0.5)
    return _triangle_adjoint(_mm(_conj(rot), _mm(m_bar, _T(rot))), UPLO, dtype_of(a))


def _eigh_spectral_vjp_c(ct, out, a, w, v, c, UPLO):
    rot = ties.rotated(v, ties.tie_groups_p(w))
    return _real(_diag(_mm(_T(rot), _mm(_cast(ct, dtype_of(v)), _conj(rot)))))


def _eigh_spectral_batch(axis_size, values, batch_axes, UPLO):
    values = [v if ax is not None else sh.broadcast_to(v, (axis_size,) + shape_of(v))
              for v, ax in zip(values, batch_axes)]
    return eigh_spectral_p(*values, UPLO=UPLO), 0


eigh_spectral_p = Primitive(
    "eigh_spectral", _eigh_spectral_impl, _eigh_spectral_jvp,
    (_eigh_spectral_vjp_a, None, None, _eigh_spectral_vjp_c), _eigh_spectral_batch,
    vjp_ignores=(0, "out"), may_raise=True)


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
    return EighResult(*eigh_p(_square_stack(a), UPLO=UPLO))


def eigvalsh(a, UPLO="L"):
    """Eigenvalues (ascending) of a symmetric (Hermitian) matrix, as ``np.linalg.eigvalsh``
    (read from the ``UPLO`` triangle). Symmetric functions of them are exact at ties, the
    Hessian (forward over reverse) included."""
    _check_uplo(UPLO)
    a = _square_stack(a)
    if not holds_tracer(a):
        return np.linalg.eigvalsh(a, UPLO=UPLO)
    return eigh_p(a, UPLO=UPLO)[0]


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
                  vjp_ignores=(0,), may_raise=True)
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
