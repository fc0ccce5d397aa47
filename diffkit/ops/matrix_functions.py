"""Functions of symmetric (Hermitian) matrices, ``f(A) = V diag(f(w)) V^H``, with every
derivative exact at repeated eigenvalues.

``spectral_function_p(a, *directions, derivative)`` is the k-th derivative of ``f`` at ``a``
(k = number of directions ``E_1..E_k``; k = 0 is ``f(a)`` itself), by the Daleckii-Krein
formula

    D^k f(A)[E_1, ..., E_k] = sum over orderings s of the E's of
        V ( sum_{i_0..i_k} f[w_i0, ..., w_ik] M_s1[i0, i1] M_s2[i1, i2] ... ) V^H,

with ``(w, V) = eigh(A)``, ``M = V^H E V`` and ``f[...]`` the divided differences of ``f``.
Divided differences over tied eigenvalues (the tolerance of ``spectral_ties.TIE_RTOL_EPS``)
are the confluent ones, ``f^(m)(w) / m!``, so there is no 0/0 at a tie. The formula holds
for any direction ``E`` (symmetric or not) at a Hermitian ``A``, which is where it is used.

Rules, all by the primitive itself, so every order is available:
- JVP: ``D^(k+1) f(A)[E.., dA] + sum_j D^k f(A)[.., dE_j, ..]``;
- VJP (pairing ``Re(sum(ct * t))``): the (k+1)-linear form ``<G, D^k f(A)[E..]>`` is
  symmetric up to transposes, so ``A_bar = D^(k+1) f(A^T)[G, E_1^T, ..]`` and
  ``E_j_bar = D^k f(A^T)[G, E_{-j}^T]``.

``derivative(m, x)`` gives ``f^(m)`` elementwise on plain arrays; ``diffkit.scipy.linalg.funm``
builds it by differentiating ``f`` with diffkit's forward mode (this module sits below the
interpreters and never imports them).
"""

import functools
import itertools
import math

import numpy as np

from ..core.primitive import EachArgument, Primitive
from ..core.zeros import add_tangents, dtype_of, shape_of
from . import elementwise as ew
from . import shape as sh
from .matrix_helpers import _T
from .spectral_ties import tie_tolerance

__all__ = ["spectral_function_p"]

_LETTERS = "abcdefghijklmnopqrstuvw"


def _divided_differences(points, derivative, tol):
    """``f[x_0, ..., x_k]`` over the last axis of ``points`` (``(..., k+1)``), sorted.

    The table of quotients ``(f[x_(i+1)..] - f[x_i..]) / (x_(i+m) - x_i)`` loses about
    ``eps |f| / gap^m`` to cancellation when points are close: wherever that estimated
    loss is not negligible, the entry is also computed as the Hermite-Genocchi integral of
    ``f^(m)`` over the simplex of its points (``_simplex_integral``: no division, accurate
    when the points are close on the scale over which ``f^(m)`` varies) and the two are
    blended by their estimated errors, smoothly, so that the more accurate one wins at
    every gap. Runs whose ends are within ``tol`` (ties) take the confluent value
    ``f^(m)(x) / m!``."""
    x = np.sort(points, axis=-1)
    k = x.shape[-1] - 1
    eps = float(np.finfo(x.dtype).eps)
    table = [np.asarray(derivative(0, x[..., i])) for i in range(k + 1)]
    errors = [eps * np.abs(t) for t in table]          # f's own rounding
    for order in range(1, k + 1):
        nxt, nxt_errors = [], []
        for i in range(k + 1 - order):
            gap = x[..., i + order] - x[..., i]
            tied = np.abs(gap) <= tol
            safe = np.where(tied, 1.0, gap)
            quotient = (table[i + 1] - table[i]) / safe
            error = ((errors[i] + errors[i + 1] + eps * (np.abs(table[i]) +
                     np.abs(table[i + 1]))) / np.abs(safe) + eps * np.abs(quotient))
            if np.any(tied):
                confluent = derivative(order, x[..., i]) / math.factorial(order)
                quotient = np.where(tied, confluent, quotient)
                error = np.where(tied, eps * np.abs(confluent), error)
            quotient, error = _refine_close(quotient, error, x[..., i:i + order + 1],
                                            ~tied, derivative, order, eps)
            nxt.append(quotient)
            nxt_errors.append(error)
        table, errors = nxt, nxt_errors
    return table[0]


def _refine_close(quotient, error, runs, candidates, derivative, order, eps):
    """Where the quotient's estimated error is more than ``_NEGLIGIBLE`` eps of its size
    (close points), blend it with the simplex integral by their error estimates."""
    quotient, error = np.broadcast_arrays(quotient, error)
    doubtful = candidates & ~(error <= _NEGLIGIBLE * eps * np.abs(quotient))
    if not np.any(doubtful):
        return quotient, error
    runs = np.broadcast_to(runs, doubtful.shape + runs.shape[-1:])
    value, value_error = _simplex_integral(derivative, runs[doubtful], order, eps)
    with np.errstate(invalid="ignore", divide="ignore"):
        # 1 where the integral's error is at most half the quotient's, 0 where it is no
        # smaller, linear between: a continuous switch
        weight = np.clip(2.0 - 2.0 * value_error / error[doubtful], 0.0, 1.0)
    weight = np.where(np.isfinite(value) & np.isfinite(value_error),
                      np.where(np.isfinite(error[doubtful]), weight, 1.0), 0.0)
    old = quotient[doubtful]
    blended = np.where(weight == 1.0, value, np.where(weight == 0.0, old,
                                                      weight * value + (1 - weight) * old))
    quotient, error = quotient.copy(), error.copy()
    quotient[doubtful] = blended
    error[doubtful] = np.where(weight == 0.0, error[doubtful], weight * value_error +
                               (1 - weight) * np.where(weight == 1.0, 0.0, error[doubtful]))
    return quotient, error


_NEGLIGIBLE = 16          # a quotient within 16 eps of its size needs no second opinion
_RULES = (4, 6)           # Gauss points per simplex direction: the estimate and the value


@functools.cache
def _simplex_rule(dim, points):
    """Barycentric nodes ``(N, dim + 1)`` and weights ``(N,)`` of the conical product Gauss
    rule on the standard ``dim``-simplex (weights sum to its volume ``1 / dim!``): exact
    for polynomials of degree ``2 points - 1 - (dim - 1)`` and more in each direction."""
    t, w = np.polynomial.legendre.leggauss(points)
    t, w = (t + 1) / 2, w / 2
    u = [g.ravel() for g in np.meshgrid(*([t] * dim), indexing="ij")]
    weights = np.prod([g.ravel() for g in np.meshgrid(*([w] * dim), indexing="ij")], axis=0)
    barycentric, run = [], np.ones_like(u[0])
    for j in range(dim):   # lambda_j = u_1 .. u_(j-1) (1 - u_j), Jacobian u_1^(dim-1) ...
        barycentric.append(run * (1 - u[j]))
        weights = weights * u[j] ** (dim - 1 - j)
        run = run * u[j]
    barycentric.append(run)
    return np.stack(barycentric, axis=-1), weights


def _simplex_integral(derivative, runs, order, eps):
    """The Hermite-Genocchi form ``f[x_0..x_m] = integral of f^(m)(sum l_j x_j)`` over the
    ``m``-simplex, for ``runs`` ``(M, m + 1)``: the value by the finer product Gauss rule,
    and its error estimated by the difference from the coarser one (plus rounding)."""
    results = []
    for points in _RULES:
        nodes, weights = _simplex_rule(order, points)
        values = np.asarray(derivative(order, runs @ nodes.T))        # (M, N)
        results.append((values @ weights, np.abs(values) @ weights))
    (coarse, _), (fine, magnitude) = results
    return fine, np.abs(fine - coarse) + 4 * eps * magnitude


def _points(w, k):
    """``(..., n, ..., n, k+1)``: every (k+1)-tuple of eigenvalues of each matrix."""
    n = w.shape[-1]
    axes = []
    for i in range(k + 1):
        shape = w.shape[:-1] + (1,) * i + (n,) + (1,) * (k - i)
        axes.append(w.reshape(shape))
    full = np.broadcast_shapes(*(a.shape for a in axes))
    return np.stack([np.broadcast_to(a, full) for a in axes], axis=-1)


def _check_hermitian(a):
    if not np.allclose(a, np.swapaxes(a, -1, -2).conj(), rtol=1e-10, atol=1e-12 *
                       max(1.0, float(np.max(np.abs(a), initial=0.0)))):
        raise ValueError("funm: derivatives are implemented for symmetric (Hermitian) "
                         "matrices, and this one is not; for a general matrix differentiate "
                         "expm/logm/sqrtm (or cosm/sinm/tanm, which use expm) instead")


def _spectral_function_impl(a, *directions, derivative):
    a = np.asarray(a)
    _check_hermitian(a)
    w, v = np.linalg.eigh(a)
    k = len(directions)
    scale = np.max(np.abs(w), axis=-1)
    tol = (tie_tolerance(w.dtype) * scale).reshape(scale.shape + (1,) * (k + 1))
    dd = np.asarray(_divided_differences(_points(w, k), derivative, tol))
    vh = np.swapaxes(v.conj(), -1, -2)
    if k == 0:
        return (v * dd[..., None, :]) @ vh
    ms = [vh @ e @ v for e in directions]
    idx = _LETTERS[:k + 1]
    terms = ",".join(f"...{idx[i]}{idx[i + 1]}" for i in range(k))
    spec = f"...{idx},{terms}->...{idx[0]}{idx[-1]}"
    inner = sum(np.einsum(spec, dd, *(ms[p] for p in order))
                for order in itertools.permutations(range(k)))
    return v @ inner @ vh


def _common_dtype(*xs):
    return np.result_type(*(dtype_of(x) for x in xs))


def _spectral_function_jvp(primals, tangents, derivative):
    a, *directions = primals
    out = spectral_function_p(a, *directions, derivative=derivative)
    dtype = _common_dtype(out, *primals)

    def term(i, t):
        if i == 0:  # the derivative in a: one more direction, the tangent itself
            t = ew.astype(t, dtype) if dtype_of(t) != dtype else t
            return spectral_function_p(a, *directions, t, derivative=derivative)
        replaced = list(directions)  # linear in each direction: replace it by its tangent
        replaced[i - 1] = t
        return spectral_function_p(a, *replaced, derivative=derivative)

    return out, add_tangents(tangents, term)


def _adjoint_a(ct, out, a, *directions, derivative):
    return spectral_function_p(_T(a), ct, *(_T(e) for e in directions),
                               derivative=derivative)


def _adjoint_direction(j):
    def rule(ct, out, a, *directions, derivative):
        others = [_T(e) for i, e in enumerate(directions) if i != j]
        return spectral_function_p(_T(a), ct, *others, derivative=derivative)
    return rule


def _spectral_function_vjp(i):
    """The rule of argument ``i``: the matrix ``a`` first, then each direction."""
    return _adjoint_a if i == 0 else _adjoint_direction(i - 1)


def _spectral_function_batch(axis_size, values, batch_axes, derivative):
    values = [v if ax is not None else sh.broadcast_to(v, (axis_size,) + shape_of(v))
              for v, ax in zip(values, batch_axes)]
    return spectral_function_p(*values, derivative=derivative), 0


spectral_function_p = Primitive("spectral_function", _spectral_function_impl,
                                _spectral_function_jvp, EachArgument(_spectral_function_vjp),
                                _spectral_function_batch)
