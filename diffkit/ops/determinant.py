"""The determinant and its derivatives, defined at singular matrices too.

``det`` is a polynomial in the entries, so every derivative exists everywhere. The
textbook rules ``d det = det tr(a^-1 da)`` divide by zero at a singular matrix; here the
derivatives are primitives of their own, computed without inverting where needed:

- ``det_p(a)``: ``(..., n, n) -> (...)``, ``np.linalg.det``. JVP ``<cof(a), da>``, VJP
  ``ct cof(a)`` (``<x, y>`` is ``sum(x * y)`` over the matrix axes: bilinear, no conjugate;
  ``det`` is holomorphic, so complex matrices follow the same formulas).
- ``cofactor_p(a)``: the cofactor matrix ``cof(a) = adj(a)^T``, the gradient of ``det``.
  JVP ``det_hessian_p(a, da)``; VJP ``det_hessian_p(a, ct)`` (the Hessian is symmetric).
- ``det_hessian_p(a, e)``: ``d cof(a)[e]``, the Hessian of ``det`` applied to ``e``
  (linear in ``e``; ``a`` and ``e`` broadcast, so a batch of directions shares one
  factorisation of ``a``). Its derivative in ``e`` is itself; its derivative in ``a``
  (third derivatives of ``det``) is written from the identity
  ``det(a) d cof(a)[e] = <cof, e> cof - cof e^T cof`` and so divides by ``det(a)``: it is
  NaN where ``a`` is not well conditioned (as below), never a finite wrong number.

How the impls compute, per matrix (so a matrix gets the same numbers alone, in a stack, in
``jacfwd`` and in ``jacrev``): when ``a`` is well conditioned (1-norm condition number at
most ``eps**-0.5``) from its inverse, ``cof = det a^-T`` and
``d cof[e] = det (tr(a^-1 e) a^-T - (a^-1 e a^-1)^T``); otherwise from the SVD
``a = U S V^H``: with ``c = det(U) det(V^H)``, ``p1_i = prod_{j != i} s_j`` and
``p2_ij = prod_{l != i, j} s_l`` (``p2_ii = 0``),

    cof(a) = c conj(U) diag(p1) V^T,
    d cof(a)[e] = c conj(U) (diag(p2 diag(B)) - p2 * B^T) V^T,   B = U^H e V,

which are exact at every rank (the products vanish as they should: ``cof = 0`` at rank
``<= n - 2`` while the Hessian is not).
"""

import numpy as np

from ..core.primitive import Primitive
from ..core.zeros import add_tangents, shape_of
from . import elementwise as ew
from . import reductions as rd
from . import shape as sh
from . import sparsity_rules as sr
from .linalg import einsum, matmul_p

__all__ = ["det_p", "cofactor_p", "det_hessian_p", "well_conditioned_p"]


# === the numerics (plain NumPy, inside the impls) ==========================================


def _swap(x):
    return np.swapaxes(x, -1, -2)


def _condition_limit(dtype):
    return np.finfo(dtype).eps ** -0.5


def _norm1(x):
    return np.abs(x).sum(axis=-2).max(axis=-1)


def _inverses(a):
    """``(a^-1, well_conditioned)`` for a flat stack ``(k, n, n)``: the inverse per matrix
    (NaN for an exactly singular one) and whether it is accurate enough to use."""
    with np.errstate(all="ignore"):
        try:
            x = np.linalg.inv(a)
        except np.linalg.LinAlgError:   # some matrix is exactly singular: one at a time
            x = np.full(a.shape, np.nan, dtype=np.linalg.inv(np.eye(1, dtype=a.dtype)).dtype)
            for k in range(a.shape[0]):
                try:
                    x[k] = np.linalg.inv(a[k])
                except np.linalg.LinAlgError:
                    pass
        condition = _norm1(a) * _norm1(x)
    return x, condition <= _condition_limit(x.real.dtype)


def _products_but_one(s):
    """``p[..., i] = prod_{j != i} s[..., j]``, without dividing (zeros allowed)."""
    ones = np.ones_like(s[..., :1])
    before = np.cumprod(np.concatenate([ones, s[..., :-1]], axis=-1), axis=-1)
    after = np.cumprod(np.concatenate([ones, s[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    return before * after


def _products_but_two(s):
    """``p[..., i, j] = prod_{l != i, j} s[..., l]`` for ``i != j``, and 0 on the diagonal."""
    n = s.shape[-1]
    rows = np.broadcast_to(s[..., None, :], s.shape + (n,)).copy()
    diagonal = np.arange(n)
    rows[..., diagonal, diagonal] = 1
    p = _products_but_one(rows)
    p[..., diagonal, diagonal] = 0
    return p


def _svd_parts(a):
    """``conj(U)``, ``V^T``, the unit scalar ``c = det(U) det(V^H)`` and the singular values."""
    u, s, vh = np.linalg.svd(a)
    c = np.linalg.det(u) * np.linalg.det(vh)
    return np.conj(u), np.conj(vh), c[..., None, None], s


def _flat(a):
    n = a.shape[-1]
    return a.reshape((-1, n, n))


def _cofactor_impl(a):
    n = a.shape[-1]
    if a.size == 0 or n == 1:
        return np.ones_like(a)
    flat = _flat(a)
    x, good = _inverses(flat)
    out = np.empty_like(x)
    if good.any():
        out[good] = np.linalg.det(flat[good])[:, None, None] * _swap(x[good])
    if not good.all():
        u_c, v_t, c, s = _svd_parts(flat[~good])
        out[~good] = c * (u_c * _products_but_one(s)[..., None, :]) @ v_t
    return out.reshape(a.shape)


def _hessian_from_inverse(d, x, e):
    """``det (tr(x e) x^T - (x e x)^T)`` with ``x = a^-1``, broadcasting ``e``."""
    xe = x @ e
    trace = np.einsum("...ii->...", xe)[..., None, None]
    return d[..., None, None] * (trace * _swap(x) - _swap(xe @ x))


def _hessian_from_svd(u_c, v_t, c, p2, e):
    """``c conj(U) (diag(p2 diag(B)) - p2 * B^T) V^T`` with ``B = U^H e V``."""
    b = _swap(u_c) @ e @ _swap(v_t)
    inner = -p2 * _swap(b)
    n = e.shape[-1]
    diagonal = np.arange(n)
    inner[..., diagonal, diagonal] = np.einsum("...ij,...j->...i", p2,
                                               np.einsum("...ii->...i", b))
    return c * (u_c @ inner @ v_t)


def _symmetric_hessian_from_svd(u_c, v_t, c, p2):
    """The whole Hessian ``(..., n*n, n*n)`` from the SVD, made exactly symmetric, so that
    its rows (``jacrev``) and columns (``jacfwd``) are the same numbers bit for bit:
    ``h[ij, kl] = c (w_ij^T p2 w_kl - w_il^T p2 w_kj)`` with ``w_ij[p] = conj(U)_ip V_jp``."""
    n = u_c.shape[-1]
    w = u_c[..., :, None, :] * np.swapaxes(v_t, -1, -2)[..., None, :, :]   # (..., i, j, p)
    y = w @ p2[..., None, :, :]                      # p2 is symmetric: y_kl = p2 w_kl
    flat = lambda x: x.reshape(x.shape[:-3] + (n * n, n))   # noqa: E731
    first = (flat(w) @ np.swapaxes(flat(y), -1, -2)).reshape(w.shape[:-3] + (n,) * 4)
    h = c[..., None, None, None, None] * (first - np.swapaxes(first, -1, -3))   # - (i,l,k,j)
    h = h.reshape(w.shape[:-3] + (n * n, n * n))
    return (h + np.swapaxes(h, -1, -2)) / 2


def _hessian_by_contraction(h, e):
    """``h`` applied to the directions ``e`` (broadcasting); a unit direction picks
    entries of ``h`` exactly."""
    n = e.shape[-1]
    flat = e.reshape(e.shape[:-2] + (n * n, 1))
    return (h @ flat).reshape(np.broadcast_shapes(h.shape[:-2], e.shape[:-2]) + (n, n))


def _det_hessian_impl(a, e):
    shape = np.broadcast_shapes(a.shape, e.shape)
    n = a.shape[-1]
    dtype = np.result_type(a.dtype, e.dtype)
    if n <= 1 or 0 in shape:
        return np.zeros(shape, dtype)
    stack = a.shape[:-2]
    flat = _flat(a)
    x, good = _inverses(flat)
    parts = []
    if good.any():
        d = np.linalg.det(flat).reshape(stack)
        with np.errstate(all="ignore"):   # NaN for the matrices that take the SVD path
            parts.append(_hessian_from_inverse(d, x.reshape(a.shape), e))
    if not good.all():
        factors = [np.zeros((flat.shape[0], n, n), dtype), np.zeros((flat.shape[0], n, n), dtype),
                   np.zeros((flat.shape[0], 1, 1), dtype), np.zeros((flat.shape[0], n, n))]
        u_c, v_t, c, s = _svd_parts(flat[~good])
        for whole, part in zip(factors, (u_c, v_t, c, _products_but_two(s))):
            whole[~good] = part
        u_c, v_t, c, p2 = (f.reshape(stack + f.shape[1:]) for f in factors)
        if np.prod(shape[:-2], dtype=int) >= n * n * flat.shape[0]:
            # a whole Jacobian's worth of directions: build the symmetric Hessian once
            h = _symmetric_hessian_from_svd(u_c, v_t, c[..., 0, 0], p2)
            parts.append(_hessian_by_contraction(h, e))
        else:
            parts.append(_hessian_from_svd(u_c, v_t, c, p2, e))
    if len(parts) == 1:
        return np.broadcast_to(parts[0], shape).astype(dtype, copy=False)
    return np.where(good.reshape(stack)[..., None, None], parts[0], parts[1]).astype(dtype)


# === the primitives ========================================================================


def _pair(x, y):
    """``<x, y> = sum(x * y)`` over the matrix axes, as ``(..., 1, 1)`` to scale matrices."""
    return sh.expand_dims(einsum("...ij,...ij->...", x, y), (-2, -1))


def _T(x):
    return sh.swapaxes(x, -1, -2)


def _det_jvp(primals, tangents):
    (a,), (ta,) = primals, tangents
    return det_p(a), einsum("...ij,...ij->...", cofactor_p(a), ta)


def _det_vjp(ct, d, a):
    return ew.multiply_p(sh.expand_dims(ct, (-2, -1)), cofactor_p(a))


def _single_batch(prim):
    def batch(axis_size, values, batch_axes):
        return prim(values[0]), 0
    return batch


det_p = Primitive("det", np.linalg.det, _det_jvp, (_det_vjp,), vjp_ignores=("out",))
det_p.batch = _single_batch(det_p)


def _cofactor_jvp(primals, tangents):
    (a,), (ta,) = primals, tangents
    return cofactor_p(a), det_hessian_p(a, ta)


def _cofactor_vjp(ct, cof, a):
    return det_hessian_p(a, ct)   # the Hessian of det is symmetric


cofactor_p = Primitive("det_cofactor", _cofactor_impl, _cofactor_jvp, (_cofactor_vjp,),
                       vjp_ignores=("out",))
cofactor_p.batch = _single_batch(cofactor_p)


def _well_conditioned_impl(a):
    """1 where the matrix is well conditioned (as the impls above decide), else NaN."""
    dtype = np.empty((), a.dtype).real.dtype if a.dtype.kind in "fc" else np.float64
    if a.size == 0:
        return np.ones(a.shape[:-2], dtype)
    _, good = _inverses(_flat(a))
    return np.where(good, 1.0, np.nan).astype(dtype).reshape(a.shape[:-2])


well_conditioned_p = Primitive("det_well_conditioned", _well_conditioned_impl, nondiff=True)
well_conditioned_p.batch = _single_batch(well_conditioned_p)


def _divided_by_det(numerator, a):
    """``numerator / det(a)``, NaN where ``a`` is not well conditioned (the division would
    turn rounding errors into finite wrong numbers there)."""
    d = ew.multiply_p(det_p(a), well_conditioned_p(a))
    return ew.divide_p(numerator, sh.expand_dims(d, (-2, -1)))


def _third_derivative(a, e, f, g):
    """``d(d cof(a)[e])[f]`` with ``g = d cof(a)[e]``, from
    ``det d cof[e] = <cof, e> cof - cof e^T cof`` (needs ``det(a) != 0``)."""
    cof, h_f = cofactor_p(a), det_hessian_p(a, f)
    et = _T(e)
    numerator = ew.add_p(ew.multiply_p(_pair(h_f, e), cof), ew.multiply_p(_pair(cof, e), h_f))
    numerator = ew.subtract_p(numerator, ew.add_p(matmul_p(h_f, matmul_p(et, cof)),
                                              matmul_p(cof, matmul_p(et, h_f))))
    numerator = ew.subtract_p(numerator, ew.multiply_p(_pair(cof, f), g))
    return _divided_by_det(numerator, a)


def _third_derivative_adjoint(a, e, c, g):
    """The adjoint of ``f -> _third_derivative(a, e, f, g)`` at cotangent ``c``."""
    cof = cofactor_p(a)
    cof_t = _T(cof)
    numerator = ew.add_p(ew.multiply_p(_pair(c, cof), det_hessian_p(a, e)),
                       ew.multiply_p(_pair(cof, e), det_hessian_p(a, c)))
    numerator = ew.subtract_p(numerator, ew.add_p(det_hessian_p(a, matmul_p(c, matmul_p(cof_t, e))),
                                              det_hessian_p(a, matmul_p(e, matmul_p(cof_t, c)))))
    numerator = ew.subtract_p(numerator, ew.multiply_p(_pair(c, g), cof))
    return _divided_by_det(numerator, a)


def _det_hessian_jvp(primals, tangents):
    a, e = primals
    g = det_hessian_p(a, e)
    tangent = add_tangents(tangents, lambda i, t: _third_derivative(a, e, t, g) if i == 0 else
                           det_hessian_p(a, t))
    return g, sh.broadcast_to(tangent, shape_of(g))


def _det_hessian_vjp_a(ct, g, a, e):
    return rd.unbroadcast(_third_derivative_adjoint(a, e, ct, g), shape_of(a))


def _det_hessian_vjp_e(ct, g, a, e):
    return rd.unbroadcast(det_hessian_p(a, ct), shape_of(e))


def _det_hessian_batch(axis_size, values, batch_axes):
    """The batch axis leads; the unbatched value broadcasts (one factorisation of an
    unbatched ``a`` serves every direction)."""
    ranks = [len(shape_of(v)) - (ax is not None) for v, ax in zip(values, batch_axes)]
    rank = max(ranks)
    padded = []
    for v, ax, r in zip(values, batch_axes, ranks):
        if ax is not None and r < rank:
            dims = shape_of(v)
            v = sh.reshape(v, dims[:1] + (1,) * (rank - r) + dims[1:])
        padded.append(v)
    return det_hessian_p(*padded), 0


det_hessian_p = Primitive("det_hessian", _det_hessian_impl, _det_hessian_jvp,
                          (_det_hessian_vjp_a, _det_hessian_vjp_e), _det_hessian_batch)

# Sparsity detection: the determinant (and its cofactors) of each matrix of a stack depends
# on that whole matrix.
det_p.sparsity = cofactor_p.sparsity = sr.matrix_stack_sparsity()
