"""``numpy.linalg``, differentiable: solves, inverses, determinants and the decompositions.

Primitives (each with its JVP, VJP and batching rule below it):

- ``solve_p(a, b)``, ``inv_p``, ``pinv_p``, ``det_p``: one output each;
- ``slogdet_p``, ``cholesky_p``, ``qr_p``, ``eigh_p``, ``eig_p``, ``svd_p``: the
  decompositions, with several outputs (``multiple_results``);
- ``matrix_rank_p``: an integer, no derivative.

Everything else (``eigvalsh``, ``eigvals``, ``svdvals``, ``norm``, ``cond``, ``lstsq``,
``matrix_power``, ``multi_dot``, ``tensorsolve``, ``tensorinv`` ...) is a composition.

Stacks. Like NumPy, every function works on stacks of matrices ``(..., m, n)``; the rules
are written for stacks too, so batching (``vmap``) only adds one more leading stack axis.

Derivatives are the standard matrix-calculus results, written as transposes of the JVPs
(for complex values under the pairing ``Re(sum(cotangent * tangent))``, JAX's convention).
Where a derivative is undefined the conventions are:

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
  of the cotangent (see ``_tie_limits``). Reverse-over-reverse and forward-over-forward
  second derivatives across a tie are NaN (the limit is not in what those rules see). For
  functions of a symmetric matrix use ``diffkit.scipy.linalg.funm``;
- phases and signs of eigen/singular vectors are only defined up to a choice (a "gauge"):
  the derivatives keep unit norm and set the derivative's component along the vector
  itself to zero (``Re``/``Im(v^H dv) = 0``; for a complex SVD the phase change of
  ``u_k v_k^H`` goes to ``u_k``), so only gauge-invariant functions of the vectors
  (``|v|**2``, projectors ``v v^H``, ``U @ Vh``...) have well-defined derivatives;
- the extra columns of ``Q`` (``qr(mode='complete')``) and of ``U``/``Vh``
  (``svd(full_matrices=True)``) of a non-square matrix span the orthogonal complement, which
  is defined but whose basis is not: their derivative moves them with the complement
  (it is exact for functions of the projector ``Q2 @ Q2.T``);
- ``eigh`` and ``eigvalsh`` read the ``UPLO`` triangle (and the real diagonal) of their
  input, as NumPy: the derivative is that of this function, so the other triangle has
  derivative 0 and the read off-diagonal entries count for both;
- ``cholesky``, ``pinv(hermitian=True)`` and ``svd(hermitian=True)`` are differentiated as
  NumPy computes them: as functions of the Hermitian matrix that one triangle defines
  (``triangles.py``), so the entries not read have derivative 0 and Hessians are those of a
  real function (symmetric);
- ``norm`` has derivative 0 at the zero vector (matrix), and ``ord=inf`` shares the
  derivative equally between tied entries (as ``max``); ``1/s`` factors of zero singular
  values (rank-deficient non-square ``svd``) are taken as 0;
- ``pinv``/``lstsq``: the derivative for a constant rank (Golub and Pereyra's formula);
- ``det``: every derivative exists everywhere (``determinant.py``: the cofactor matrix and
  the Hessian without inverting at singular matrices; third and higher orders are NaN at
  singular or ill-conditioned matrices); ``slogdet``: NaN derivatives at an exactly singular matrix
  (``logabsdet = -inf``, a pole); ``inv``/``solve``: the functions themselves raise
  ``LinAlgError`` at a singular matrix, as NumPy's.
"""

import functools
import math
import operator
from collections import namedtuple

import numpy as np

from ..core.primitive import Primitive
from ..core.trace import Tracer
from ..core.zeros import Zero, dtype_of, shape_of
from . import elementwise as ew
from . import reductions as rd
from . import shape as sh
from .indexing import getitem
from .determinant import det_p
from .families import times
from .linalg import einsum, matmul, matmul_p, tensordot
from .triangles import hermitian_from_triangle, hermitian_from_triangle_adjoint

__all__ = [
    "LinAlgError", "solve", "inv", "pinv", "lstsq", "det", "slogdet", "cholesky", "qr",
    "eigh", "eigvalsh", "eig", "eigvals", "svd", "svdvals", "norm", "vector_norm",
    "matrix_norm", "matrix_power", "multi_dot", "tensorsolve", "tensorinv", "matrix_rank",
    "cond", "matmul", "tensordot", "outer", "vecdot", "matrix_transpose", "diagonal", "trace",
    "cross", "EigResult", "EighResult", "QRResult", "SlogdetResult", "SVDResult",
]

LinAlgError = np.linalg.LinAlgError

EigResult = namedtuple("EigResult", ["eigenvalues", "eigenvectors"])
EighResult = namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
QRResult = namedtuple("QRResult", ["Q", "R"])
SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])
SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])


# === helpers: stacked matrix algebra in diffkit operations ================================


def _traced(x):
    return isinstance(x, Tracer)


def _scalar_if_plain(x):
    """A plain 0-d array as a NumPy scalar, as NumPy's reductions return it."""
    return x[()] if type(x) is np.ndarray and x.ndim == 0 else x


def _T(x):
    """The transpose of the last two axes (of every matrix in a stack)."""
    return sh.swapaxes(x, -1, -2)


def _is_complex(x):
    return dtype_of(x).kind == "c"


def _complex_module():
    from . import complex as cx
    return cx


def _real(x):
    """The real part (the value itself for real ``x``)."""
    if not _is_complex(x):
        return x
    real = getattr(_complex_module(), "real", None)
    if real is not None:
        return real(x)
    return ew.astype(x, np.empty((), dtype_of(x)).real.dtype)  # keeps the real part


def _conj(x):
    return ew.conj(x) if _is_complex(x) else x


def _H(x):
    """The conjugate transpose of the last two axes."""
    return _conj(_T(x))


def _cast(x, dtype):
    return ew.astype(x, dtype)


def _diag(x):
    """The diagonals of a stack of square matrices: ``(..., n, n) -> (..., n)``."""
    return einsum("...ii->...i", x)


def _trace(x):
    return einsum("...ii->...", x)


def _diag_embed(v):
    """Diagonal matrices from a stack of vectors: ``(..., n) -> (..., n, n)``."""
    n = shape_of(v)[-1]
    return ew.multiply(sh.expand_dims(v, -2), np.eye(n, dtype=dtype_of(v)))


def _sym(x):
    """``(x + x^H) / 2``: the (Hermitian) symmetric part."""
    return ew.multiply(ew.add(x, _H(x)), 0.5)


def _mm(a, b):
    return matmul_p(a, b)


def _safe_reciprocal(x):
    """``1 / x`` where ``x != 0``, else 0, without dividing by zero (also in derivatives)."""
    ok = ew.not_equal(x, 0)
    return ew.where(ok, ew.divide(1.0, ew.where(ok, x, 1.0)), 0.0)


# --- ties: repeated eigenvalues and singular values ----------------------------------------
# Two eigenvalues (singular values) of one matrix are tied when
#     |w_i - w_j| <= TIE_RTOL_EPS * eps(dtype) * max_k |w_k|,
# the one relative tolerance of eigh, eigvalsh, eig and svd. LAPACK returns a repeated
# eigenvalue split by a few eps, so exact ties and computed ones are the same here. At a tie
# the eigenvector coupling 1 / (w_j - w_i) is a 0/0 limit that the rules cannot know (it
# depends on what the caller does with the vectors): see the eigh and svd rules.

TIE_RTOL_EPS = 512


@functools.lru_cache(maxsize=None)
def tie_tolerance(dtype):
    """The relative tie tolerance for values of ``dtype`` (``TIE_RTOL_EPS`` eps)."""
    return TIE_RTOL_EPS * float(np.finfo(np.empty((), dtype).real.dtype).eps)


def _tie_groups_impl(w):
    """Labels ``(..., n)``: entries of a sorted (ascending or descending) ``w`` get the same
    label when they form a chain of ties."""
    w = np.asarray(w)
    scale = np.max(np.abs(w), axis=-1, keepdims=True) if w.shape[-1] else 0
    gaps = np.abs(np.diff(w, axis=-1)) > tie_tolerance(w.dtype) * scale
    first = np.zeros(w.shape[:-1] + (1,), np.int64)
    return np.concatenate([first, np.cumsum(gaps, axis=-1)], axis=-1)


tie_groups_p = Primitive("tie_groups", _tie_groups_impl, nondiff=True)
tie_groups_p.batch = lambda axis_size, values, batch_axes: (tie_groups_p(values[0]), 0)


def _pairwise_ties(w):
    """``(..., n, n)`` booleans: ``i != j`` with ``|w_i - w_j|`` within the tie tolerance
    (for unsorted, possibly complex ``w``: ``eig``)."""
    n = shape_of(w)[-1]
    gaps = ew.abs(ew.subtract(sh.expand_dims(w, -2), sh.expand_dims(w, -1)))
    scale = ew.multiply(rd.max(ew.abs(w), axis=-1, keepdims=True), tie_tolerance(dtype_of(w)))
    return ew.logical_and(ew.less_equal(gaps, sh.expand_dims(scale, -1)),
                          ~np.eye(n, dtype=bool))


def _tied(groups):
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
    ``_tie_limits``; for m <= 8 every pair of diagonal entries differs by > 4e-5)."""
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


def _rotated_diagonal(m, groups):
    """The diagonal of ``R^T m R``: the perturbation of tied eigenvalues in the rotated
    basis of their eigenspace."""
    return _diag(_T(rotate_ties_p(_T(rotate_ties_p(m, groups, inverse=False)), groups,
                                  inverse=False)))


def _inverse_gaps(w, groups):
    """``F[..., i, j] = 1 / (w_j - w_i)`` for untied ``w_i``, ``w_j``, else 0 (the diagonal
    too). ``groups``: tie labels (``tie_groups_p(w)``) of a sorted ``w``, or a ready
    ``(..., n, n)`` tie mask (without the diagonal)."""
    gaps = ew.subtract(sh.expand_dims(w, -2), sh.expand_dims(w, -1))
    if len(shape_of(groups)) == len(shape_of(w)):
        skip = tie_mask_p(groups, diagonal=True)
    else:
        skip = ew.logical_or(groups, np.eye(shape_of(w)[-1], dtype=bool))
    return ew.where(skip, 0.0, ew.divide(1.0, ew.where(skip, 1.0, gaps)))


def _nan_where(flag, x):
    """``x``, NaN in every matrix of the stack where ``flag`` (``(..., 1, 1)``) is true."""
    return ew.where(flag, np.nan, x)


def _mask(n, k, dtype):
    """A constant ``(n, n)`` mask of the entries on or below diagonal ``k`` (as np.tril)."""
    return np.tril(np.ones((n, n), dtype=dtype), k)


def _solve_right(x, r):
    """``x @ inv(r)`` for stacks, as a solve."""
    return _T(solve_p(_T(r), _T(x)))


def _single_batch(prim):
    """Batching rule of a one-argument primitive: the batch axis is one more stack axis."""
    if prim.multiple_results:
        def batch(axis_size, values, batch_axes, **params):
            out = prim(values[0], **params)
            return out, (0,) * len(out)
    else:
        def batch(axis_size, values, batch_axes, **params):
            return prim(values[0], **params), 0
    return batch


def _operand(x):
    if isinstance(x, (Tracer, np.ndarray)):
        return x
    return np.asarray(x)


def _inexact(x):
    """``x``, converted to float64 when it is an integer or boolean array (as NumPy does)."""
    x = _operand(x)
    if dtype_of(x).kind not in "fc":
        return ew.astype(x, np.float64)
    return x


def _common(*xs):
    """The arrays converted to their common floating-point (or complex) dtype."""
    xs = [_operand(x) for x in xs]
    dtype = np.result_type(*[dtype_of(x) for x in xs])
    if dtype.kind not in "fc":
        dtype = np.dtype(np.float64)
    return [x if dtype_of(x) == dtype else ew.astype(x, dtype) for x in xs]


def _assert_stacked_2d(*arrays):
    for a in arrays:
        if len(shape_of(a)) < 2:
            raise LinAlgError(f"{len(shape_of(a))}-dimensional array given. Array must be at "
                              "least two-dimensional")


def _assert_stacked_square(*arrays):
    for a in arrays:
        m, n = shape_of(a)[-2:]
        if m != n:
            raise LinAlgError(f"Last 2 dimensions of the array must be square (got shape "
                              f"{shape_of(a)})")


def _square_stack(a):
    a = _inexact(a)
    _assert_stacked_2d(a)
    _assert_stacked_square(a)
    return a


def _real_dtype(x):
    return np.empty((), dtype_of(x)).real.dtype


# === solve ================================================================================
# solve_p(a, b): a (..., n, n), b (..., n, k) with the same stack shape; the wrapper does
# NumPy's broadcasting and vector right-hand sides.


def _solve_jvp(primals, tangents):
    a, b = primals
    ta, tb = tangents
    x = solve_p(a, b)
    if type(ta) is Zero:
        rhs = tb
    elif type(tb) is Zero:
        rhs = ew.negative(_mm(ta, x))
    else:
        rhs = ew.subtract(tb, _mm(ta, x))
    return x, solve_p(a, rhs)


def _solve_vjp_a(ct, x, a, b):
    return ew.negative(_mm(solve_p(_T(a), ct), _T(x)))


def _solve_vjp_b(ct, x, a, b):
    return solve_p(_T(a), ct)


def _solve_batch(axis_size, values, batch_axes):
    a, b = values
    if batch_axes[0] is None:
        sa, sb = shape_of(a), shape_of(b)
        if len(sa) == 2 and sa[0]:
            # One matrix for the whole batch: the examples are more right-hand sides.
            n, k = sb[-2], sb[-1]
            columns = sh.reshape(sh.moveaxis(b, -2, 0), (n, math.prod(sb) // n))
            x = sh.reshape(solve_p(a, columns), (n,) + sb[:-2] + (k,))
            return sh.moveaxis(x, 0, -2), 0
        a = sh.broadcast_to(a, (axis_size,) + sa)
    elif batch_axes[1] is None:
        b = sh.broadcast_to(b, (axis_size,) + shape_of(b))
    return solve_p(a, b), 0


def _solve_impl(a, b):
    try:
        return np.linalg.solve(a, b)
    except LinAlgError:
        raise LinAlgError(_singular_message("solve", a)) from None


solve_p = Primitive("solve", _solve_impl, _solve_jvp, (_solve_vjp_a, _solve_vjp_b),
                    _solve_batch, vjp_ignores=(1,),
                    vjp_reads=(frozenset({0, "out"}), frozenset({0})))


def solve(a, b):
    """The solution ``x`` of ``a @ x = b``, as ``np.linalg.solve`` (NumPy 2's rules): ``b``
    is a vector ``(n,)`` when it is 1-D, else a stack of matrices ``(..., n, k)``; the stack
    axes of ``a`` and ``b`` broadcast. Raises ``LinAlgError`` for a singular matrix."""
    a, b = _common(a, b)
    _assert_stacked_2d(a)
    _assert_stacked_square(a)
    sa, sb = shape_of(a), shape_of(b)
    n = sa[-1]
    vector = len(sb) == 1
    if len(sb) == 0:
        raise ValueError("solve: b must be at least one-dimensional (got a 0-d array)")
    if vector:
        if sb[0] != n:
            raise ValueError(f"solve: a has shape {sa} but b has shape {sb}; b's length must "
                             f"be {n}")
        b = sh.reshape(b, (n, 1))
    elif sb[-2] != n:
        raise ValueError(f"solve: a has shape {sa} but b has shape {sb}; b's second-to-last "
                         f"axis must have length {n} (a 1-D b is a vector, an N-D b a stack "
                         "of matrices)")
    sb = shape_of(b)
    try:
        stack = np.broadcast_shapes(sa[:-2], sb[:-2])
    except ValueError:
        raise ValueError(f"solve: the stack shapes of a {sa} and b {sb} cannot be broadcast "
                         "together") from None
    a = sh.broadcast_to(a, stack + sa[-2:])
    b = sh.broadcast_to(b, stack + sb[-2:])
    x = solve_p(a, b)
    if vector:
        x = sh.reshape(x, shape_of(x)[:-1])
    return x


# === inv ==================================================================================
# inv_p(a, nan_if_singular): NumPy's inverse; an exactly singular matrix raises, or with
# nan_if_singular=True (for derivative rules of functions defined there, as slogdet's)
# gives NaN for that matrix alone.


def _inv_impl(a, nan_if_singular=False):
    try:
        return np.linalg.inv(a)
    except LinAlgError:
        if not nan_if_singular:
            raise LinAlgError(_singular_message("inv", a)) from None
    flat = a.reshape((-1,) + a.shape[-2:])
    out = np.full(flat.shape, np.nan, dtype=np.result_type(a.dtype, np.float64)
                  if a.dtype.kind not in "fc" else a.dtype)
    for k in range(flat.shape[0]):
        try:
            out[k] = np.linalg.inv(flat[k])
        except LinAlgError:
            pass
    return out.reshape(a.shape)


def _singular_message(name, a):
    """Which matrix of a stack is singular, and what to use instead."""
    where = ""
    if a.ndim > 2:
        for index in np.ndindex(a.shape[:-2]):
            if np.linalg.matrix_rank(a[index]) < a.shape[-1]:
                where = f" (the matrix at stack index {index})"
                break
    return (f"{name}: Singular matrix{where}: it has no inverse. For a least-squares or "
            "minimum-norm answer use pinv or lstsq; the determinant and its derivatives are "
            "defined at singular matrices (det)")


def _inv_jvp(primals, tangents, nan_if_singular=False):
    x = inv_p(primals[0], nan_if_singular=nan_if_singular)
    return x, ew.negative(_mm(_mm(x, tangents[0]), x))


def _inv_vjp(ct, x, a, nan_if_singular=False):
    xt = _T(x)
    return ew.negative(_mm(_mm(xt, ct), xt))


inv_p = Primitive("inv", _inv_impl, _inv_jvp, (_inv_vjp,), vjp_ignores=(0,))
inv_p.batch = _single_batch(inv_p)


def inv(a):
    """The inverse of a (stack of) square matrices, as ``np.linalg.inv``. A singular matrix
    raises ``LinAlgError`` (its inverse does not exist), naming it in a stack."""
    return inv_p(_square_stack(a))


# === det and slogdet ======================================================================
# det_p and its derivatives (defined at singular matrices too) are in determinant.py.


def det(a):
    """The determinant of a (stack of) square matrices, as ``np.linalg.det``. Its
    derivatives of every order exist everywhere: the gradient is the cofactor matrix
    ``adj(a)^T`` (computed without inverting at singular matrices, see
    ``determinant.py``)."""
    return det_p(_square_stack(a))


def _slogdet_impl(a):
    sign, logabsdet = np.linalg.slogdet(a)
    return sign, logabsdet


def _inverse_transpose(a):
    """``a^-T``: the gradient of ``log det a``; NaN at an exactly singular matrix, where
    ``log|det|`` is -inf and has no derivative."""
    return _T(inv_p(a, nan_if_singular=True))


def _slogdet_jvp(primals, tangents):
    (a,), (ta,) = primals, tangents
    sign, logabsdet = slogdet_p(a)
    t = einsum("...ij,...ij->...", _inverse_transpose(a), ta)   # d log det a = tr(a^-1 da)
    if not _is_complex(a):
        return (sign, logabsdet), (Zero(shape_of(sign), dtype_of(sign)), t)
    # complex: d|det| / |det| is Re(t), and the phase turns by i Im(t) = (t - conj t) / 2
    return (sign, logabsdet), (ew.multiply(sign, ew.multiply(ew.subtract(t, ew.conj(t)), 0.5)),
                               _real(t))


def _slogdet_vjp(cts, out, a):
    ct_sign, ct_log = cts
    sign, _ = out
    t_bar = None
    if type(ct_log) is not Zero:
        t_bar = ct_log
    if _is_complex(a) and type(ct_sign) is not Zero:
        c = ew.multiply(ct_sign, sign)
        phase = ew.multiply(ew.subtract(c, ew.conj(c)), 0.5)
        t_bar = phase if t_bar is None else ew.add(t_bar, phase)
    if t_bar is None:
        return None
    if _is_complex(a):
        t_bar = _cast(t_bar, dtype_of(a))
    # a zero cotangent (the sign's row of a Jacobian) gives 0 even at a singular matrix,
    # where the inverse is NaN: the 0 x inf rule, as the forward rule's symbolic zero does
    return times(sh.expand_dims(t_bar, (-2, -1)), _inverse_transpose(a))


slogdet_p = Primitive("slogdet", _slogdet_impl, _slogdet_jvp, (_slogdet_vjp,),
                      multiple_results=True)
slogdet_p.batch = _single_batch(slogdet_p)


def slogdet(a):
    """``(sign, logabsdet)`` of the determinant, as ``np.linalg.slogdet``: a named tuple
    ``SlogdetResult``. ``sign`` has no derivative (for real matrices), ``logabsdet`` has
    ``inv(a).T``; at an exactly singular matrix (``logabsdet = -inf``) the derivatives are
    NaN, in both engines and at every order."""
    return SlogdetResult(*slogdet_p(_square_stack(a)))


# === cholesky =============================================================================


def _phi(x):
    """The lower triangle of ``x`` with its diagonal halved."""
    n = shape_of(x)[-1]
    return ew.multiply(x, (_mask(n, 0, np.float64) - 0.5 * np.eye(n)).astype(_real_dtype(x)))


def _cholesky_jvp(primals, tangents, upper):
    (a,), (ta,) = primals, tangents
    out = cholesky_p(a, upper=upper)
    lower = _H(out) if upper else out
    # dL = L Phi(L^-1 dH L^-H), dH the perturbation of the Hermitian matrix actually read
    dh = hermitian_from_triangle(ta, lower=not upper)
    x = solve_p(lower, _H(solve_p(lower, dh)))
    d_lower = _mm(lower, _phi(x))
    return out, _H(d_lower) if upper else d_lower


def _cholesky_vjp(ct, out, a, upper):
    lower = _H(out) if upper else out
    if upper:   # out = L^H, so the cotangent of L is ct^H
        ct = _H(ct)
    # the adjoint of dH -> dL is L^-T Phi(L^T Lbar) conj(L)^-1; then that of the triangle
    y = solve_p(_T(lower), _phi(_mm(_T(lower), ct)))
    return hermitian_from_triangle_adjoint(_T(solve_p(_H(lower), _T(y))), lower=not upper)


def _cholesky_impl(a, upper):
    return np.linalg.cholesky(a, upper=upper)


cholesky_p = Primitive("cholesky", _cholesky_impl, _cholesky_jvp, (_cholesky_vjp,),
                       vjp_ignores=(0,))
cholesky_p.batch = _single_batch(cholesky_p)


def cholesky(a, /, *, upper=False):
    """The Cholesky factor of a (stack of) symmetric (Hermitian) positive-definite matrices:
    lower triangular ``L`` with ``a = L @ L^H``, or upper ``U = L^H`` with ``upper=True``,
    as ``np.linalg.cholesky``. Like NumPy, only the lower (``upper=True``: the upper)
    triangle of ``a`` and the real part of its diagonal are read; the derivative is that of
    this function of ``a``, so the entries not read have derivative 0."""
    return cholesky_p(_square_stack(a), upper=bool(upper))


# === qr ===================================================================================
# qr_p(a, complete): a (..., m, n) with m >= n (the wrapper reduces the wide case to a square
# one). Outputs Q (..., m, n) and R (..., n, n), or with complete=True Q (..., m, m) and
# R (..., m, n).


def _qr_impl(a, complete):
    q, r = np.linalg.qr(a, mode="complete" if complete else "reduced")
    return q, r


def _tril_strict(x):
    n = shape_of(x)[-1]
    return ew.multiply(x, _mask(n, -1, _real_dtype(x)))


def _imaginary_part_times_i(z):
    """``i Im(z)`` for complex ``z`` (``None`` for real ``z``: it would be zero)."""
    if not _is_complex(z):
        return None
    return ew.multiply(ew.subtract(z, ew.conj(z)), 0.5)


def _qr_split(q, r, m, n, complete):
    """The leading n columns of Q and rows of R, and the extra columns of Q (or None)."""
    if not (complete and m > n):
        return q, r, None
    return (getitem(q, (Ellipsis, slice(None), slice(0, n))),
            getitem(r, (Ellipsis, slice(0, n), slice(None))),
            getitem(q, (Ellipsis, slice(None), slice(n, None))))


def _qr_jvp(primals, tangents, complete):
    (a,), (ta,) = primals, tangents
    q, r = qr_p(a, complete=complete)
    m, n = shape_of(a)[-2:]
    q1, r1, q2 = _qr_split(q, r, m, n, complete)
    ta = _cast(ta, dtype_of(q))
    da_rinv = _solve_right(ta, r1)                  # dA R^-1
    c = _mm(_H(q1), da_rinv)                        # C = Q^H dA R^-1 = Q^H dQ + dR R^-1
    low = _tril_strict(c)
    omega = ew.subtract(low, _H(low))               # Q^H dQ: skew-Hermitian, from C's lower
    phase = _imaginary_part_times_i(_diag(c))       # part; its diagonal is i Im(diag C) (the
    if phase is not None:                           # diagonal of R stays real)
        omega = ew.add(omega, _diag_embed(phase))
    upper = ew.subtract(c, omega)                   # dR R^-1, upper triangular
    dr = _mm(upper, r1)
    dq = ew.subtract(da_rinv, _mm(q1, upper))
    if q2 is not None:  # the complement moves with span Q: dQ2 = -Q1 dQ1^H Q2
        dq = sh.concatenate([dq, ew.negative(_mm(q1, _mm(_H(dq), q2)))], axis=-1)
        dr = sh.concatenate([dr, np.zeros(shape_of(dr)[:-2] + (m - n, n), dtype_of(dr))],
                            axis=-2)
    return (q, r), (dq, dr)


def _qr_vjp(cts, out, a, complete):
    q_bar, r_bar = cts
    q, r = out
    m, n = shape_of(a)[-2:]
    q1, r1, q2 = _qr_split(q, r, m, n, complete)
    if type(q_bar) is not Zero and q2 is not None:
        q2_bar = getitem(q_bar, (Ellipsis, slice(None), slice(n, None)))
        q_bar = ew.subtract(getitem(q_bar, (Ellipsis, slice(None), slice(0, n))),
                            _conj(_mm(q2, _mm(_T(q2_bar), q1))))
    if type(r_bar) is not Zero and q2 is not None:
        r_bar = getitem(r_bar, (Ellipsis, slice(0, n), slice(None)))
    # M = Rbar R^T - Q^T Qbar pairs with X = dR R^-1; its adjoint through X = C - Omega(C)
    # is N = triu(M) + strict lower part of M^H, with the imaginary diagonal dropped
    parts = []
    if type(r_bar) is not Zero:
        parts.append(_mm(_cast(r_bar, dtype_of(r)), _T(r1)))
    if type(q_bar) is not Zero:
        parts.append(ew.negative(_mm(_T(q1), _cast(q_bar, dtype_of(q)))))
    mm = parts[0] if len(parts) == 1 else ew.add(parts[0], parts[1])
    nn = ew.add(ew.multiply(mm, _mask(n, 0, _real_dtype(mm)).T), _tril_strict(_H(mm)))
    phase = _imaginary_part_times_i(_diag(mm))
    if phase is not None:
        nn = ew.subtract(nn, _diag_embed(phase))
    g = _mm(_conj(q1), nn)
    if type(q_bar) is not Zero:
        g = ew.add(g, q_bar)
    g = _T(solve_p(r1, _T(g)))                    # (Qbar + conj(Q) N) R^-T
    return g if _is_complex(a) else _real(g)


qr_p = Primitive("qr", _qr_impl, _qr_jvp, (_qr_vjp,), multiple_results=True,
                 vjp_ignores=(0,))
qr_p.batch = _single_batch(qr_p)


def qr(a, mode="reduced"):
    """The QR decomposition, as ``np.linalg.qr``: ``mode`` 'reduced' (``QRResult(Q, R)``
    with ``Q`` of shape ``(..., m, k)``, k = min(m, n)), 'complete' (``Q`` square), 'r' (``R``
    only) or 'raw' (LAPACK's reflectors; no derivative). Differentiable where the leading
    ``k`` columns of ``a`` are linearly independent. The extra columns of a complete ``Q``
    (m > n) follow the orthogonal complement of the others (see the module docstring)."""
    if mode not in ("reduced", "complete", "r", "raw"):
        raise ValueError(f"Unrecognized mode '{mode}'")
    a = _inexact(a)
    _assert_stacked_2d(a)
    if mode == "raw":
        if _traced(a):
            raise ValueError("qr(mode='raw') returns LAPACK's Householder reflectors, which "
                             "have no derivative here; use mode='reduced' or 'complete'")
        return np.linalg.qr(a, mode="raw")
    m, n = shape_of(a)[-2:]
    if m >= n:
        q, r = qr_p(a, complete=(mode == "complete" and m > n))
    else:
        # wide: a = [X Y] with X square, so Q is X's and R = [R_X, Q^T Y]
        x = getitem(a, (Ellipsis, slice(None), slice(0, m)))
        y = getitem(a, (Ellipsis, slice(None), slice(m, None)))
        q, r_x = qr_p(x, complete=False)
        r = sh.concatenate([r_x, _mm(_H(q), y)], axis=-1)
    if mode == "r":
        return r
    return QRResult(q, r)


# === eigh =================================================================================


def _eigh_impl(a, UPLO):
    w, v = np.linalg.eigh(a, UPLO=UPLO)
    return w, v


def _from_triangle(x, UPLO):
    """The Hermitian matrix that ``eigh`` reads from the ``UPLO`` triangle of ``x``: the
    strict triangle, its conjugate transpose and the real part of the diagonal."""
    n = shape_of(x)[-1]
    real = _real_dtype(x)
    if not _is_complex(x):   # x M + (x M)^T, M the strict triangle and half the diagonal
        half = _mask(n, -1, real) + 0.5 * np.eye(n, dtype=real)
        part = ew.multiply(x, half if UPLO == "L" else half.T)
        return ew.add(part, _T(part))
    strict = ew.multiply(x, _mask(n, -1, real) if UPLO == "L" else _mask(n, -1, real).T)
    diagonal = ew.multiply(_real(x), np.eye(n, dtype=real))
    return ew.add(ew.add(strict, _H(strict)), _cast(diagonal, dtype_of(x)) if
                  _is_complex(x) else diagonal)


def _triangle_adjoint(g, UPLO, dtype):
    """The transpose of ``_from_triangle`` (pairing ``Re(sum(ct * t))``): the strict
    triangle of ``g + g^H`` and the real part of ``g``'s diagonal, as ``dtype``."""
    n = shape_of(g)[-1]
    real = _real_dtype(g)
    both = ew.add(g, _H(g))
    if not _is_complex(g):   # (g + g^T) M on the read triangle, by where, not a product:
        half = _mask(n, -1, real) + 0.5 * np.eye(n, dtype=real)   # it stays 0 when g is NaN
        half = half if UPLO == "L" else half.T
        out = ew.where(half > 0, ew.multiply(both, half), 0.0)
        return out if np.dtype(dtype).kind != "c" else _cast(out, dtype)
    read = np.tril(np.ones((n, n), bool), -1)   # where, not a product: the unread
    read = read if UPLO == "L" else read.T       # triangle stays 0 when g is NaN
    strict = ew.where(read, both, 0.0)
    diagonal = ew.where(np.eye(n, dtype=bool), _real(g), 0.0)
    out = ew.add(strict, _cast(diagonal, dtype_of(g)) if _is_complex(g) else diagonal)
    return out if np.dtype(dtype).kind == "c" else _real(out)


def _rotated(v, groups):
    return rotate_ties_p(v, groups, inverse=False)


def _eigh_jvp(primals, tangents, UPLO):
    (a,), (ta,) = primals, tangents
    w, v = eigh_p(a, UPLO=UPLO)
    groups = tie_groups_p(w)
    ta = _from_triangle(_cast(ta, dtype_of(v)), UPLO)
    m = _mm(_H(v), _mm(ta, v))                       # V^H dA V
    dw = _real(_rotated_diagonal(m, groups))
    dv = _mm(v, ew.multiply(_inverse_gaps(w, groups), m))
    # at a tie the eigenvectors have no derivative the rule can know (a 0/0 coupling)
    unknown = unknown_at_ties_p(_tied(groups), ta)
    return (w, v), (dw, _nan_where(unknown, dv))


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
    scale = tie_tolerance(w.dtype) * np.max(np.abs(w), axis=-1, keepdims=True)
    return not np.any(np.abs(w[..., 1:] - w[..., :-1]) <= scale)   # w is sorted


def _eigh_vjp(cts, out, a, UPLO):
    w_bar, v_bar = cts
    w, v = out
    if _plain_without_ties(w, v, *(c for c in cts if type(c) is not Zero)):
        return _eigh_vjp_plain(w_bar, v_bar, w, v, a, UPLO)
    g = None
    if type(v_bar) is not Zero:
        groups = tie_groups_p(w)
        tied = _tied(groups)
        v_bar = _cast(v_bar, dtype_of(v))
        inner = ew.multiply(_inverse_gaps(w, tied), _mm(_T(v), v_bar))
        g = _mm(_conj(v), _mm(inner, _T(v)))
        g = _nan_where(unknown_at_ties_p(tied, v_bar), g)
    if type(w_bar) is not Zero:
        gw = _conj(eigh_spectral_p(a, w, v, _cast(w_bar, dtype_of(w)), UPLO=UPLO))
        g = gw if g is None else ew.add(g, gw)
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


eigh_p = Primitive("eigh", _eigh_impl, _eigh_jvp, (_eigh_vjp,), multiple_results=True)
eigh_p.batch = _single_batch(eigh_p)


# eigh_spectral_p(a, w, v, c): G = W diag(c) W^H with (w, v) = eigh(a) and W = v rotated
# within tie groups: eigh's VJP for the eigenvalues (c = w_bar). Its derivative in a is
# Daleckii-Krein's, W (K o W^H dA W + diag(dc)) W^H with K_ij = (c_j - c_i) / (w_j - w_i);
# at a tie K_ij is the limit f'' of the c = f'(w) that produced c, which the JVP reads off
# the tangent of c (see _tie_limits). w and v are eigh(a), passed in so that no rule
# decomposes a again; their tangents are ignored (all of G's derivative is through a).


def _tie_limits(w, c, groups, m, dc):
    """``K`` of the Daleckii-Krein formula for ``c`` given at ``w``: off ties the divided
    differences ``(c_j - c_i) / (w_j - w_i)``; on a tie the limit, read from the tangents:
    for ``c`` the gradient of a function symmetric in the tied values, ``dc_j - dc_i =
    K_ij (m_jj - m_ii)`` in the rotated basis (``m`` the perturbation ``W^H dA W``). NaN
    where that is ``0 / 0`` or where ``c`` differs across the tie (the gradient then
    depends on the basis of the eigenspace); 0 on the diagonal."""
    tied = _tied(groups)
    gaps = ew.subtract(sh.expand_dims(w, -2), sh.expand_dims(w, -1))
    cdiff = ew.subtract(sh.expand_dims(c, -2), sh.expand_dims(c, -1))
    regular = ew.multiply(cdiff, _safe_reciprocal(ew.where(tied, 1.0, gaps)))
    tol = tie_tolerance(dtype_of(w))
    dm = _real(_diag(m))
    dmdiff = ew.subtract(sh.expand_dims(dm, -2), sh.expand_dims(dm, -1))
    scale = rd.max(ew.abs(m), axis=(-2, -1), keepdims=True)
    resolved = ew.greater(ew.abs(dmdiff), ew.multiply(scale, math.sqrt(tol)))
    if dc is None:
        limit = ew.where(resolved, 0.0, np.nan)
    else:
        dcdiff = ew.subtract(sh.expand_dims(dc, -2), sh.expand_dims(dc, -1))
        limit = ew.where(resolved, ew.divide(dcdiff, ew.where(resolved, dmdiff, 1.0)), np.nan)
    cscale = rd.max(ew.abs(c), axis=-1, keepdims=True)
    agrees = ew.less_equal(ew.abs(cdiff), ew.multiply(sh.expand_dims(cscale, -1), tol))
    return ew.where(tied, ew.where(agrees, limit, np.nan), regular)


def _times_nonzero(k, m):
    """``k * m``, 0 where ``m`` is exactly 0 (an unknown tie limit times no perturbation)."""
    return ew.where(ew.equal(m, 0), 0.0, ew.multiply(k, m))


def _basis_for(v, groups, c):
    """``v`` rotated within tie groups, or ``v`` itself when ``c`` is constant on every
    group (the product ``v diag(c) v^H`` is then the same, and exactly so)."""
    same = groups[..., 1:] == groups[..., :-1]
    if not np.any(same[c[..., 1:] != c[..., :-1]]):
        return v
    return _rotate_ties_impl(v, groups, False)


def _eigh_spectral_impl(a, w, v, c, UPLO):
    rotated = _basis_for(v, _tie_groups_impl(w), c)
    return (rotated * c[..., None, :]) @ np.swapaxes(rotated.conj(), -1, -2)


def _eigh_spectral_jvp(primals, tangents, UPLO):
    a, w, v, c = primals
    ta, _, _, tc = tangents
    out = eigh_spectral_p(a, w, v, c, UPLO=UPLO)
    groups = tie_groups_p(w)
    rot = _rotated(v, groups)
    dc = None if type(tc) is Zero else tc
    x = None if dc is None else _diag_embed(_cast(dc, dtype_of(v)))
    if type(ta) is not Zero:
        m = _mm(_H(rot), _mm(_from_triangle(_cast(ta, dtype_of(v)), UPLO), rot))
        term = _times_nonzero(_tie_limits(w, c, groups, m, dc), m)
        x = term if x is None else ew.add(x, term)
    return out, _mm(rot, _mm(x, _H(rot)))


def _eigh_spectral_vjp_a(ct, out, a, w, v, c, UPLO):
    groups = tie_groups_p(w)
    rot = _rotated(v, groups)
    n_bar = _mm(_T(rot), _mm(_cast(ct, dtype_of(v)), _conj(rot)))
    # the tie limits need the tangent of c, which a cotangent does not carry
    k = _tie_limits(w, c, groups, ew.multiply(n_bar, 0.0), None)
    m_bar = _times_nonzero(k, ew.add(n_bar, _H(n_bar)))
    m_bar = ew.multiply(m_bar, 0.5)
    return _triangle_adjoint(_mm(_conj(rot), _mm(m_bar, _T(rot))), UPLO, dtype_of(a))


def _eigh_spectral_vjp_c(ct, out, a, w, v, c, UPLO):
    rot = _rotated(v, tie_groups_p(w))
    return _real(_diag(_mm(_T(rot), _mm(_cast(ct, dtype_of(v)), _conj(rot)))))


def _eigh_spectral_batch(axis_size, values, batch_axes, UPLO):
    values = [v if ax is not None else sh.broadcast_to(v, (axis_size,) + shape_of(v))
              for v, ax in zip(values, batch_axes)]
    return eigh_spectral_p(*values, UPLO=UPLO), 0


eigh_spectral_p = Primitive(
    "eigh_spectral", _eigh_spectral_impl, _eigh_spectral_jvp,
    (_eigh_spectral_vjp_a, None, None, _eigh_spectral_vjp_c), _eigh_spectral_batch,
    vjp_ignores=(0, "out"))


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
    if not _traced(a):
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
    tied = _pairwise_ties(w)
    dv = _mm(v, ew.multiply(_inverse_gaps(w, tied), m))
    # keep unit norm and fix the phase: Re(v^H dv) = 0 and Im(v^H dv) = 0 column by column
    along = _real(rd.sum(ew.multiply(_conj(v), dv), axis=-2))
    dv = ew.subtract(dv, ew.multiply(v, sh.expand_dims(along, -2)))
    unknown = unknown_at_ties_p(tied, ta)
    return (w, v), (dw, _nan_where(unknown, dv))


def _eig_vjp(cts, out, a):
    w_bar, v_bar = cts
    w, v = out
    parts = []
    if type(v_bar) is not Zero:
        v_bar = _cast(v_bar, dtype_of(v))
        along = _real(rd.sum(ew.multiply(v_bar, v), axis=-2))
        v_bar = ew.subtract(v_bar, ew.multiply(_conj(v), sh.expand_dims(along, -2)))
        tied = _pairwise_ties(w)
        inner = ew.multiply(_inverse_gaps(w, tied), _mm(_T(v), v_bar))
        unknown = unknown_at_ties_p(tied, v_bar)
        parts.append(_nan_where(unknown, inner))
    if type(w_bar) is not Zero:
        parts.append(_diag_embed(_cast(w_bar, dtype_of(v))))
    inner = parts[0] if len(parts) == 1 else ew.add(parts[0], parts[1])
    g = solve_p(_T(v), _mm(inner, _T(v)))            # V^-T inner V^T
    return g if _is_complex(a) else _real(g)


eig_p = Primitive("eig", _eig_impl, _eig_jvp, (_eig_vjp,), multiple_results=True,
                  vjp_ignores=(0,))
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
    if not _traced(a):
        return np.linalg.eigvals(a)
    return eig_p(a)[0]


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
    groups = tie_groups_p(s)
    ds = _real(_rotated_diagonal(dp, groups))
    f = _inverse_gaps(ew.square(s), groups)          # 1 / (s_j^2 - s_i^2)
    s_row, s_col = sh.expand_dims(s, -2), sh.expand_dims(s, -1)
    dph = _H(dp)
    omega_u = ew.multiply(f, ew.add(ew.multiply(dp, s_row), ew.multiply(s_col, dph)))
    omega_v = ew.multiply(f, ew.add(ew.multiply(s_col, dp), ew.multiply(dph, s_row)))
    phase = _imaginary_part_times_i(_diag(dp))
    if phase is not None:  # the phase of u_k v_k^H turns by i Im(dP_kk) / s_k, given to U
        omega_u = ew.add(omega_u, _diag_embed(ew.multiply(phase, _safe_reciprocal(s))))
    du = _mm(u1, omega_u)
    dv = _mm(v1, omega_v)
    if m > k:   # the component of dU outside span U: (I - U U^H) dA V S^-1
        outside = ew.subtract(_mm(ta, v1), _mm(u1, dp))
        du = ew.add(du, ew.multiply(outside, sh.expand_dims(_safe_reciprocal(s), -2)))
    if n > k:
        outside = ew.subtract(_mm(_H(ta), u1), _mm(v1, dph))
        dv = ew.add(dv, ew.multiply(outside, sh.expand_dims(_safe_reciprocal(s), -2)))
    if u2 is not None:  # the complement moves with span U: dU2 = -U1 dU1^H U2
        du = sh.concatenate([du, ew.negative(_mm(u1, _mm(_H(du), u2)))], axis=-1)
    if v2h is not None:
        dv = sh.concatenate([dv, ew.negative(_mm(v1, _mm(_H(dv), _H(v2h))))], axis=-1)
    # at a tie the singular vectors have no derivative the rule can know (a 0/0 coupling)
    unknown = unknown_at_ties_p(_tied(groups), ta)
    return (u, s, vh), (_nan_where(unknown, du), ds, _nan_where(unknown, _H(dv)))


def _gram(x):
    """``|x|^T |x|`` (k, k): nonzero exactly where a column of ``x`` is, for any row count."""
    ax = ew.abs(x)
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
            u_bar = ew.subtract(getitem(u_bar, (Ellipsis, slice(None), slice(0, k))),
                                _conj(_mm(u2, _mm(_T(u2_bar), u1))))
    v_bar = vh_bar if type(vh_bar) is Zero else _H(_cast(vh_bar, dtype_of(vh)))
    if type(v_bar) is not Zero and v2h is not None:
        v2 = _H(v2h)
        v2_bar = getitem(v_bar, (Ellipsis, slice(None), slice(k, None)))
        v_bar = ew.subtract(getitem(v_bar, (Ellipsis, slice(None), slice(0, k))),
                            _conj(_mm(v2, _mm(_T(v2_bar), v1))))
    spectral = None
    if type(s_bar) is not Zero:
        spectral = _conj(svd_spectral_p(a, u, s, vh, _cast(s_bar, dtype_of(s)),
                                        full_matrices=full_matrices, hermitian=hermitian))
        spectral = spectral if _is_complex(a) else _real(spectral)
        if type(u_bar) is Zero and type(v_bar) is Zero:
            return spectral
    groups = tie_groups_p(s)
    f = _inverse_gaps(ew.square(s), groups)
    s_row, s_col = sh.expand_dims(s, -2), sh.expand_dims(s, -1)
    s_inv = _safe_reciprocal(s)
    inner = []          # the cotangent of dP = U^H dA V
    outer = []          # the parts outside span U / span V
    moving = None       # whether a cotangent reaches the singular vectors
    if type(u_bar) is not Zero:
        moving = u_bar
        g0 = _mm(_T(u1), u_bar)
        g = ew.multiply(f, g0)
        inner.append(ew.multiply(ew.add(g, _H(g)), s_row))
        phase = _imaginary_part_times_i(_diag(g0))
        if phase is not None:
            inner.append(_diag_embed(ew.multiply(phase, s_inv)))
        if m > k:   # (I - conj(U) U^T) Ubar S^-1 V^T
            proj = ew.subtract(u_bar, _mm(_conj(u1), g0))
            outer.append(_mm(ew.multiply(proj, sh.expand_dims(s_inv, -2)), _T(v1)))
    if type(v_bar) is not Zero:
        moving = v_bar if moving is None else ew.add(_gram(moving), _gram(v_bar))
        h = ew.multiply(f, _mm(_T(v1), v_bar))
        inner.append(ew.multiply(s_col, ew.add(h, _H(h))))
        if n > k:   # conj(U) S^-1 (Vbar^H - Vbar^H conj(V) V^T)
            vbh = _H(v_bar)
            proj = ew.subtract(vbh, _mm(_mm(vbh, _conj(v1)), _T(v1)))
            outer.append(_mm(_conj(u1), ew.multiply(sh.expand_dims(s_inv, -1), proj)))
    total = inner[0]
    for part in inner[1:]:
        total = ew.add(total, part)
    g = _mm(_conj(u1), _mm(total, _T(v1)))
    for part in outer:
        g = ew.add(g, part)
    g = _nan_where(unknown_at_ties_p(_tied(groups), moving), g)
    if hermitian:
        g = _sym(g)
    g = g if _is_complex(a) else _real(g)
    return g if spectral is None else ew.add(g, spectral)


svd_p = Primitive("svd", _svd_impl, _svd_jvp, (_svd_vjp,), multiple_results=True)
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
    groups = tie_groups_p(s)
    return _rotated(u1, groups), _rotated(_H(v1h), groups), groups, m, n


def _svd_spectral_impl(a, u, s, vh, c, full_matrices, hermitian):
    k = s.shape[-1]
    groups = _tie_groups_impl(s)
    u1 = _basis_for(u[..., :, :k], groups, c)
    v1 = _basis_for(np.swapaxes(vh[..., :k, :], -1, -2).conj(), groups, c)
    return (u1 * c[..., None, :]) @ np.swapaxes(v1, -1, -2).conj()


def _sum_ratio(s, c):
    """``(c_i + c_j) / (s_i + s_j)`` (0 where both singular values are 0)."""
    return ew.multiply(ew.add(sh.expand_dims(c, -2), sh.expand_dims(c, -1)),
                       _safe_reciprocal(ew.add(sh.expand_dims(s, -2), sh.expand_dims(s, -1))))


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
    herm, skew = ew.multiply(ew.add(p, _H(p)), 0.5), ew.multiply(ew.subtract(p, _H(p)), 0.5)
    term = ew.add(_times_nonzero(_tie_limits(s, c, groups, p, dc), herm),
                  ew.multiply(_sum_ratio(s, c), skew))
    x = term if x is None else ew.add(x, term)
    g = _mm(u1, _mm(x, _H(v1)))
    scale = sh.expand_dims(ew.multiply(c, _safe_reciprocal(s)), -2)
    k = min(m, n)
    if m > k:
        outside = ew.subtract(_mm(ta, v1), _mm(u1, p))
        g = ew.add(g, _mm(ew.multiply(outside, scale), _H(v1)))
    if n > k:
        outside = ew.subtract(_mm(_H(u1), ta), _mm(p, _H(v1)))
        g = ew.add(g, _mm(ew.multiply(u1, scale), outside))
    return out, g


def _svd_spectral_vjp_a(ct, out, a, u, s, vh, c, full_matrices, hermitian):
    u1, v1, groups, m, n = _svd_leading(u, s, vh, full_matrices)
    ct = _cast(ct, dtype_of(u))
    n_bar = _mm(_T(u1), _mm(ct, _conj(v1)))
    # the tie limits need the tangent of c, which a cotangent does not carry
    k_tie = _tie_limits(s, c, groups, ew.multiply(n_bar, 0.0), None)
    herm_bar = _times_nonzero(k_tie, ew.multiply(ew.add(n_bar, _H(n_bar)), 0.5))
    skew_bar = ew.multiply(_sum_ratio(s, c), ew.multiply(ew.subtract(n_bar, _H(n_bar)), 0.5))
    g = _mm(_conj(u1), _mm(ew.add(herm_bar, skew_bar), _T(v1)))
    scale = sh.expand_dims(ew.multiply(c, _safe_reciprocal(s)), -2)
    k = min(m, n)
    if m > k:   # (I - conj(U) U^T) ct conj(V) diag(c / s) V^T
        y = ew.multiply(_mm(ct, _conj(v1)), scale)
        g = ew.add(g, _mm(ew.subtract(y, _mm(_conj(u1), _mm(_T(u1), y))), _T(v1)))
    if n > k:   # conj(U) diag(c / s) U^T ct (I - conj(V) V^T)
        y = _mm(_T(ew.multiply(u1, scale)), ct)
        g = ew.add(g, _mm(_conj(u1), ew.subtract(y, _mm(_mm(y, _conj(v1)), _T(v1)))))
    if hermitian:
        g = _sym(g)
    return g if _is_complex(a) else _real(g)


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
    vjp_ignores=(0, "out"))


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """Singular value decomposition, as ``np.linalg.svd``: ``SVDResult(U, S, Vh)`` with
    ``a = U @ diag(S) @ Vh`` (``full_matrices``: square ``U`` and ``Vh``), or the singular
    values alone (descending) with ``compute_uv=False``. Singular vectors are differentiable
    for distinct nonzero singular values, through sign-invariant functions (e.g. ``U @ Vh``
    or ``u u^T``); singular values everywhere they are distinct (and at ties, through
    symmetric functions of them). With ``hermitian=True`` NumPy reads the lower triangle
    (``eigh``): the derivative is that of the Hermitian matrix this triangle defines, so the
    upper triangle has derivative 0."""
    a = _inexact(a)
    _assert_stacked_2d(a)
    if hermitian and _traced(a):
        _assert_stacked_square(a)
        a = hermitian_from_triangle(a)
    if not compute_uv:
        if not _traced(a):
            return np.linalg.svd(a, compute_uv=False, hermitian=hermitian)
        return svd_p(a, full_matrices=False, hermitian=hermitian)[1]
    m, n = shape_of(a)[-2:]
    full = bool(full_matrices) and m != n
    return SVDResult(*svd_p(a, full_matrices=full, hermitian=hermitian))


def svdvals(x, /):
    """The singular values (descending), as ``np.linalg.svdvals``."""
    return svd(x, compute_uv=False)


# === pinv =================================================================================


def _pinv_impl(a, rcond, hermitian):
    return np.linalg.pinv(a, rcond=rcond, hermitian=hermitian)


def _pinv_jvp(primals, tangents, rcond, hermitian):
    (a,), (ta,) = primals, tangents
    x = pinv_p(a, rcond=rcond, hermitian=hermitian)
    if hermitian:   # NumPy reads the lower triangle (through eigh): pinv of E(a)
        a, ta = hermitian_from_triangle(a), hermitian_from_triangle(ta)
    # Golub & Pereyra: -X dA X + X X^H dA^H (I - A X) + (I - X A) dA^H X^H X
    dah = _H(ta)
    first = ew.negative(_mm(_mm(x, ta), x))
    second = _mm(_mm(x, _H(x)), dah)
    second = ew.subtract(second, _mm(_mm(second, a), x))
    third = _mm(dah, _mm(_H(x), x))
    third = ew.subtract(third, _mm(x, _mm(a, third)))
    return x, ew.add(first, ew.add(second, third))


def _pinv_vjp(ct, x, a, rcond, hermitian):
    # -X^T G X^T + conj((I - A X) G^T X X^H) + conj(X^H X G^T (I - X A)), the transpose
    # of the JVP under Re(sum(ct * t))
    if hermitian:
        a = hermitian_from_triangle(a)
    xt = _T(x)
    g = ew.negative(_mm(_mm(xt, ct), xt))
    cth = _H(ct)
    second = _mm(cth, _mm(_conj(x), xt))
    second = ew.subtract(second, _mm(_conj(a), _mm(_conj(x), second)))
    third = _mm(_mm(xt, _conj(x)), cth)
    third = ew.subtract(third, _mm(_mm(third, _conj(x)), _conj(a)))
    g = ew.add(g, ew.add(second, third))
    return hermitian_from_triangle_adjoint(g, lower=True) if hermitian else g


pinv_p = Primitive("pinv", _pinv_impl, _pinv_jvp, (_pinv_vjp,))
pinv_p.batch = _single_batch(pinv_p)

_NO_VALUE = object()


def pinv(a, rcond=None, hermitian=False, *, rtol=_NO_VALUE):
    """The Moore-Penrose pseudo-inverse, as ``np.linalg.pinv``: singular values at most
    ``rcond`` (or ``rtol``) times the largest are dropped (default 1e-15; ``rtol=None``:
    ``max(m, n) * eps``). Differentiable where the rank (the number of kept singular values)
    is locally constant."""
    a = _inexact(a)
    _assert_stacked_2d(a)
    if rcond is None:
        if rtol is _NO_VALUE:
            rcond = 1e-15
        elif rtol is None:
            rcond = max(shape_of(a)[-2:]) * np.finfo(dtype_of(a)).eps
        else:
            rcond = rtol
    elif rtol is not _NO_VALUE:
        raise ValueError("`rtol` and `rcond` can't be both set.")
    rcond = np.asarray(rcond)
    return pinv_p(a, rcond=float(rcond) if rcond.ndim == 0 else rcond,
                  hermitian=bool(hermitian))


# === lstsq ================================================================================


def lstsq(a, b, rcond=None):
    """Least-squares solution of ``a @ x = b``, as ``np.linalg.lstsq``: the tuple
    ``(x, residuals, rank, s)``. ``x = pinv(a, rcond) @ b`` is differentiable where the rank
    is constant, and so are the residuals (sums of squares of ``b - a @ x`` per column,
    empty when the rank is below n or m <= n) and the singular values ``s``; ``rank`` is an
    integer. ``rcond`` defaults to ``max(m, n) * eps``."""
    a, b = _common(a, b)
    vector = len(shape_of(b)) == 1
    if len(shape_of(a)) != 2 or len(shape_of(b)) not in (1, 2):
        raise LinAlgError(f"{len(shape_of(a)) if len(shape_of(a)) != 2 else len(shape_of(b))}"
                          "-dimensional array given. Array must be two-dimensional")
    m, n = shape_of(a)
    if shape_of(b)[0] != m:
        raise LinAlgError("Incompatible dimensions")
    real_dtype = _real_dtype(a)
    eps = np.finfo(real_dtype).eps
    if rcond is None:
        rcond = eps * max(m, n)
    elif rcond < 0:
        rcond = eps
    x = matmul(pinv_p(a, rcond=float(rcond), hermitian=False), b)
    s = svd(a, compute_uv=False)
    rank = matrix_rank_p(a, np.asarray(rcond, real_dtype), mode="rtol", hermitian=False)
    if not _traced(rank):
        rank = int(rank)
    known = rank if isinstance(rank, int) else None
    if m > n and (known is None or known == n):
        r = ew.subtract(b, matmul(a, x))
        squares = _real(ew.multiply(_conj(r), r)) if _is_complex(r) else ew.square(r)
        residuals = rd.sum(squares, axis=0)
        if vector:
            residuals = sh.reshape(residuals, (1,))
    else:
        residuals = np.array([], real_dtype)
    return x, residuals, rank, s


# === matrix_rank (no derivative) ===========================================================


def _matrix_rank_impl(a, *threshold, mode, hermitian):
    if mode == "tol":
        return np.asarray(np.linalg.matrix_rank(a, tol=threshold[0], hermitian=hermitian))
    if mode == "rtol":
        return np.asarray(np.linalg.matrix_rank(a, rtol=threshold[0], hermitian=hermitian))
    return np.asarray(np.linalg.matrix_rank(a, hermitian=hermitian))


def _matrix_rank_batch(axis_size, values, batch_axes, mode, hermitian):
    a, *threshold = values
    a_axis, *t_axes = batch_axes
    if not threshold:
        return matrix_rank_p(a, mode=mode, hermitian=hermitian), 0
    (t,), (t_axis,) = threshold, t_axes
    # stack shapes of one example, padded to a common rank after the batch axis
    a_stack = shape_of(a)[(a_axis is not None):-2]
    t_shape = shape_of(t)[(t_axis is not None):]
    rank = max(len(a_stack), len(t_shape))
    if a_axis is not None:
        dims = shape_of(a)
        a = sh.reshape(a, dims[:1] + (1,) * (rank - len(a_stack)) + dims[1:])
    else:
        a = sh.reshape(a, (1,) * (1 + rank - len(a_stack)) + shape_of(a))
    if t_axis is not None:
        dims = shape_of(t)
        t = sh.reshape(t, dims[:1] + (1,) * (rank - len(t_shape)) + dims[1:])
    return matrix_rank_p(a, t, mode=mode, hermitian=hermitian), 0


matrix_rank_p = Primitive("matrix_rank", _matrix_rank_impl, batch=_matrix_rank_batch,
                          nondiff=True)


def matrix_rank(A, tol=None, hermitian=False, *, rtol=None):
    """The rank (number of singular values above a threshold), as
    ``np.linalg.matrix_rank``: an integer (an integer array for a stack). No derivative."""
    A = _inexact(A)
    if not _traced(A) and not _traced(tol) and not _traced(rtol):
        return np.linalg.matrix_rank(A, tol=tol, hermitian=hermitian, rtol=rtol)
    if len(shape_of(A)) < 2:
        return ew.astype(ew.greater(rd.max(ew.abs(A)) if shape_of(A) != (0,) else 0.0, 0),
                         np.int64)
    if tol is not None and rtol is not None:
        raise ValueError("`tol` and `rtol` can't be both set.")
    if tol is not None:
        return matrix_rank_p(A, _operand(tol), mode="tol", hermitian=bool(hermitian))
    if rtol is not None:
        return matrix_rank_p(A, _operand(rtol), mode="rtol", hermitian=bool(hermitian))
    return matrix_rank_p(A, mode="default", hermitian=bool(hermitian))


# === norms ================================================================================


def _abs(x):
    return ew.abs(x)


def _abs_squared(x):
    if _is_complex(x):
        return _real(ew.multiply(_conj(x), x))
    return ew.square(x)


def _root_of_sum_of_squares(x, axis, keepdims):
    """``sqrt(sum(|x|^2))`` over ``axis``, with derivative 0 where it is 0."""
    total = rd.sum(_abs_squared(x), axis=axis, keepdims=keepdims)
    nonzero = ew.greater(total, 0)
    return ew.where(nonzero, ew.sqrt(ew.where(nonzero, total, 1.0)), 0.0)


def _p_norm(x, p, axis, keepdims):
    """``sum(|x|^p)^(1/p)``, with derivative 0 at zero entries (for p < 1) and at 0."""
    ax = _abs(x)
    nonzero = ew.greater(ax, 0)
    if p > 0:
        powered = ew.where(nonzero, ew.power(ew.where(nonzero, ax, 1.0), p), 0.0)
    else:
        powered = ew.power(ax, p)   # NumPy gives inf at zero entries; so do we
    total = rd.sum(powered, axis=axis, keepdims=keepdims)
    positive = ew.greater(total, 0)
    if p > 0:
        return ew.where(positive, ew.power(ew.where(positive, total, 1.0), 1.0 / p), 0.0)
    return ew.power(total, 1.0 / p)


def _vector_norm(x, ord, axis, keepdims):
    if ord is None or (not isinstance(ord, str) and ord == 2):
        return _root_of_sum_of_squares(x, axis, keepdims)
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order '{ord}' for vectors")
    if ord == np.inf:
        return rd.max(_abs(x), axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return rd.min(_abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        return rd.sum(ew.astype(ew.not_equal(x, 0), _real_dtype(x)), axis=axis,
                      keepdims=keepdims)
    if ord == 1:
        return rd.sum(_abs(x), axis=axis, keepdims=keepdims)
    return _p_norm(x, float(ord), axis, keepdims)


def _zero_at_zero(value):
    """``value`` with derivative 0 where it is 0 (norms of the zero matrix)."""
    return ew.where(ew.greater(value, 0), value, 0.0)


def _svd_norm(x, row, col, reduce):
    x = sh.moveaxis(x, (row, col), (-2, -1))
    return reduce(svd(x, compute_uv=False), axis=-1)


def _matrix_norm(x, ord, row, col):
    nd = len(shape_of(x))
    if ord == 2:
        return _zero_at_zero(_svd_norm(x, row, col, rd.max))
    if ord == -2:
        return _svd_norm(x, row, col, rd.min)
    if ord == "nuc":
        return _zero_at_zero(_svd_norm(x, row, col, rd.sum))
    if ord in (None, "fro", "f"):
        return _root_of_sum_of_squares(x, (row, col), False)
    if ord in (1, -1):
        sums = rd.sum(_abs(x), axis=row)
        reduce = rd.max if ord == 1 else rd.min
        return reduce(sums, axis=col - 1 if col > row else col)
    if ord in (np.inf, -np.inf):
        sums = rd.sum(_abs(x), axis=col)
        reduce = rd.max if ord == np.inf else rd.min
        return reduce(sums, axis=row - 1 if row > col else row)
    del nd
    raise ValueError("Invalid norm order for matrices.")


def norm(x, ord=None, axis=None, keepdims=False):
    """Vector or matrix norm, as ``np.linalg.norm``: vector ``ord`` None/2, 1, inf, -inf,
    0 (count of nonzeros, no derivative) or any other p; matrix ``ord`` 'fro' (None), 'nuc',
    1, -1, 2, -2, inf, -inf; ``axis`` None, an int (vectors) or a pair (matrices).
    Derivative 0 at the zero vector or matrix; ``inf`` norms share it between tied
    entries; the spectral and nuclear norms through the SVD's."""
    x = _inexact(x)
    nd = len(shape_of(x))
    if axis is None:
        if ord is None or (ord in ("f", "fro") and nd == 2) or \
                (not isinstance(ord, str) and ord == 2 and nd == 1):
            out = _root_of_sum_of_squares(x, None, False)
            return sh.reshape(out, (1,) * nd) if keepdims else _scalar_if_plain(out)
        axis = tuple(range(nd))
    elif not isinstance(axis, tuple):
        try:
            axis = (operator.index(axis),)
        except TypeError:
            raise TypeError("'axis' must be None, an integer or a tuple of integers") from None
    if len(axis) == 1:
        return _scalar_if_plain(_vector_norm(x, ord, rd.normalize_axes(axis, nd), keepdims))
    if len(axis) == 2:
        row, col = (sh._normalize_axis(a, nd) for a in axis)
        if row == col:
            raise ValueError("Duplicate axes given.")
        out = _matrix_norm(x, ord, row, col)
        if keepdims:
            dims = list(shape_of(x))
            dims[row] = dims[col] = 1
            out = sh.reshape(out, tuple(dims))
        return _scalar_if_plain(out)
    raise ValueError("Improper number of dimensions to norm.")


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """The vector norm over ``axis`` (all axes when None; a tuple of axes is treated as one
    flattened vector), as ``np.linalg.vector_norm``."""
    x = _inexact(x)
    nd = len(shape_of(x))
    dims = shape_of(x)
    if axis is None:
        out = norm(sh.reshape(x, (-1,)), ord=ord, axis=0)
        return sh.reshape(out, (1,) * nd) if keepdims else out
    if isinstance(axis, tuple) and len(axis) > 1:
        axes = rd.normalize_axes(axis, nd)
        rest = [a for a in range(nd) if a not in axes]
        moved = sh.transpose(x, rest + list(axes))
        moved = sh.reshape(moved, tuple(dims[a] for a in rest) + (-1,))
        out = norm(moved, ord=ord, axis=-1)
        if keepdims:
            out = sh.reshape(out, tuple(1 if a in axes else d for a, d in enumerate(dims)))
        return out
    return norm(x, ord=ord, axis=axis, keepdims=keepdims)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """The matrix norm over the last two axes, as ``np.linalg.matrix_norm``."""
    x = _inexact(x)
    _assert_stacked_2d(x)
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


def cond(x, p=None):
    """The condition number in the norm ``p`` (None/2/-2: ratio of singular values; 'fro',
    'nuc', 1, -1, inf, -inf: ``norm(x, p) * norm(inv(x), p)``), as ``np.linalg.cond``."""
    x = _inexact(x)
    _assert_stacked_2d(x)
    if not _traced(x):
        return np.linalg.cond(x, p)
    if p is None or p == 2 or p == -2:
        s = svd(x, compute_uv=False)
        first = getitem(s, (Ellipsis, 0))
        last = getitem(s, (Ellipsis, -1))
        return ew.divide(last, first) if p == -2 else ew.divide(first, last)
    _assert_stacked_square(x)
    return ew.multiply(norm(x, p, axis=(-2, -1)), norm(inv_p(x), p, axis=(-2, -1)))


# === products, powers and tensor equations (compositions) =================================


def matrix_power(a, n):
    """``a`` to the integer power ``n`` (negative: powers of the inverse), as
    ``np.linalg.matrix_power``, by repeated squaring."""
    a = _operand(a)
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError("exponent must be an integer") from None
    _assert_stacked_2d(a)
    _assert_stacked_square(a)
    if n == 0:
        m = shape_of(a)[-1]
        eye = np.broadcast_to(np.eye(m, dtype=dtype_of(a)), shape_of(a)).copy()
        if _traced(a):  # keep it a value of the trace (vmap: one identity per example)
            return ew.add(ew.multiply(a, 0), eye)
        return eye
    if n < 0:
        a = inv(a)
        n = -n
    result = None
    square = a
    while n:
        if n & 1:
            result = square if result is None else matmul_p(result, square)
        n >>= 1
        if n:
            square = matmul_p(square, square)
    return result


def _chain_order(dims):
    """NumPy's dynamic programme for the cheapest multiplication order: ``s[i][j]`` is
    where to split the product of matrices ``i..j``."""
    count = len(dims) - 1
    cost = [[0] * count for _ in range(count)]
    split = [[0] * count for _ in range(count)]
    for length in range(1, count):
        for i in range(count - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def multi_dot(arrays, *, out=None):
    """The product of two or more matrices in the cheapest order, as
    ``np.linalg.multi_dot``: the first array may be 1-D (a row), the last 1-D (a column)."""
    if out is not None:
        raise TypeError("multi_dot: out= is not supported (diffkit functions return new "
                        "arrays)")
    arrays = [_operand(x) for x in arrays]
    if len(arrays) < 2:
        raise ValueError("Expecting at least two arrays.")
    if len(arrays) == 2:
        return matmul(arrays[0], arrays[1])
    first, last = shape_of(arrays[0]), shape_of(arrays[-1])
    if len(first) == 1:
        arrays[0] = sh.reshape(arrays[0], (1, first[0]))
    if len(last) == 1:
        arrays[-1] = sh.reshape(arrays[-1], (last[0], 1))
    for x in arrays:
        if len(shape_of(x)) != 2:
            raise LinAlgError(f"{len(shape_of(x))}-dimensional array given. Array must be "
                              "two-dimensional")
    dims = [shape_of(x)[0] for x in arrays] + [shape_of(arrays[-1])[1]]
    for i in range(len(arrays) - 1):
        if shape_of(arrays[i])[1] != shape_of(arrays[i + 1])[0]:
            raise ValueError(f"multi_dot: shapes {shape_of(arrays[i])} and "
                             f"{shape_of(arrays[i + 1])} (arrays {i} and {i + 1}) not aligned")
    split = _chain_order(dims)

    def product(i, j):
        if i == j:
            return arrays[i]
        k = split[i][j]
        return matmul_p(product(i, k), product(k + 1, j))

    result = product(0, len(arrays) - 1)
    if len(first) == 1 and len(last) == 1:
        return sh.reshape(result, ())
    if len(first) == 1:
        return sh.reshape(result, shape_of(result)[1:])
    if len(last) == 1:
        return sh.reshape(result, shape_of(result)[:1])
    return result


def tensorsolve(a, b, axes=None):
    """The ``x`` with ``tensordot(a, x, axes=x.ndim) = b``, as ``np.linalg.tensorsolve``:
    ``a`` is reshaped to a square matrix and solved."""
    a, b = _common(a, b)
    an = len(shape_of(a))
    if axes is not None:
        order = list(range(an))
        for k in axes:
            order.remove(k)
            order.insert(an, k)
        a = sh.transpose(a, order)
    bn = len(shape_of(b))
    old = shape_of(a)[-(an - bn):]
    size = math.prod(old)
    if math.prod(shape_of(a)) != size ** 2:
        raise LinAlgError("Input arrays must satisfy the requirement "
                          "prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])")
    x = solve(sh.reshape(a, (size, size)), sh.reshape(b, (-1,)))
    return sh.reshape(x, old)


def tensorinv(a, ind=2):
    """The inverse of ``a`` for ``tensordot`` over ``ind`` axes, as
    ``np.linalg.tensorinv``: shape ``a.shape[ind:] + a.shape[:ind]``."""
    a = _inexact(a)
    if ind <= 0:
        raise ValueError("Invalid ind argument.")
    dims = shape_of(a)
    size = math.prod(dims[ind:])
    return sh.reshape(inv(sh.reshape(a, (size, -1))), dims[ind:] + dims[:ind])


# === the array-API names of numpy.linalg ==================================================


def outer(x1, x2, /):
    """The outer product of two vectors, as ``np.linalg.outer`` (1-D inputs only)."""
    x1, x2 = _operand(x1), _operand(x2)
    for name, x in (("x1", x1), ("x2", x2)):
        if len(shape_of(x)) != 1:
            raise ValueError(f"Input arrays must be one-dimensional, but {name} has shape "
                             f"{shape_of(x)}")
    return ew.multiply(sh.reshape(x1, (-1, 1)), sh.reshape(x2, (1, -1)))


def vecdot(x1, x2, /, *, axis=-1):
    """``sum(conj(x1) * x2)`` over ``axis``, broadcasting, as ``np.linalg.vecdot``."""
    x1, x2 = _operand(x1), _operand(x2)
    n1, n2 = len(shape_of(x1)), len(shape_of(x2))
    if shape_of(x1)[axis] != shape_of(x2)[axis]:
        raise ValueError(f"vecdot: x1 has shape {shape_of(x1)} and x2 {shape_of(x2)}; axis "
                         f"{axis} must have the same length")
    del n1, n2
    return rd.sum(ew.multiply(_conj(x1), x2), axis=axis)


def matrix_transpose(x, /):
    """The transpose of the last two axes, as ``np.linalg.matrix_transpose``."""
    x = _operand(x)
    if len(shape_of(x)) < 2:
        raise ValueError(f"Input array must be at least 2-dimensional, got shape {shape_of(x)}")
    return _T(x)


def _diagonal_index(dims, offset):
    rows, cols = dims[-2:]
    start_r, start_c = (0, offset) if offset >= 0 else (-offset, 0)
    length = max(0, min(rows - start_r, cols - start_c))
    return (Ellipsis, np.arange(start_r, start_r + length), np.arange(start_c, start_c + length))


def diagonal(x, /, *, offset=0):
    """The diagonals of the last two axes, as ``np.linalg.diagonal``."""
    x = _operand(x)
    if len(shape_of(x)) < 2:
        raise ValueError(f"diagonal requires an array of at least two dimensions, got shape "
                         f"{shape_of(x)}")
    if offset == 0 and shape_of(x)[-1] == shape_of(x)[-2]:
        return _diag(x)
    return getitem(x, _diagonal_index(shape_of(x), operator.index(offset)))


def trace(x, /, *, offset=0, dtype=None):
    """The sums of the diagonals of the last two axes, as ``np.linalg.trace``."""
    out = rd.sum(diagonal(x, offset=offset), axis=-1)
    return out if dtype is None else ew.astype(out, dtype)


def cross(x1, x2, /, *, axis=-1):
    """The cross product of 3-vectors along ``axis``, broadcasting, as
    ``np.linalg.cross``."""
    x1, x2 = _operand(x1), _operand(x2)
    if shape_of(x1)[axis] != 3 or shape_of(x2)[axis] != 3:
        raise ValueError(f"Both input arrays must be (arrays of) 3-dimensional vectors, but "
                         f"they have {shape_of(x1)[axis]} and {shape_of(x2)[axis]} dimensions")
    a = sh.moveaxis(x1, axis, -1)
    b = sh.moveaxis(x2, axis, -1)

    def part(v, i):
        return getitem(v, (Ellipsis, i))

    c = [ew.subtract(ew.multiply(part(a, (i + 1) % 3), part(b, (i + 2) % 3)),
                     ew.multiply(part(a, (i + 2) % 3), part(b, (i + 1) % 3))) for i in range(3)]
    shape = np.broadcast_shapes(shape_of(c[0]), shape_of(c[1]), shape_of(c[2]))
    out = sh.stack([sh.broadcast_to(ci, shape) for ci in c], axis=-1)
    return sh.moveaxis(out, -1, axis)
