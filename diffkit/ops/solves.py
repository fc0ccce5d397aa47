"""``solve``, ``inv``, ``det`` and ``slogdet``, differentiable.

Primitives (each with its JVP, VJP and batching rule below it): ``solve_p(a, b)``,
``inv_p``, ``slogdet_p`` (two outputs); ``det_p`` and its rules are in ``determinant.py``.

Conventions: ``det``: every derivative exists everywhere (``determinant.py``: the cofactor
matrix and the Hessian without inverting at singular matrices; third and higher orders are
NaN at singular or ill-conditioned matrices); ``slogdet``: NaN derivatives at an exactly
singular matrix (``logabsdet = -inf``, a pole); ``inv``/``solve``: the functions themselves
raise ``LinAlgError`` at a singular matrix, as NumPy's.
"""

import math
from collections import namedtuple

import numpy as np

from ..core.primitive import RAISES, Primitive
from ..core.zeros import Zero, dtype_of, is_complex, shape_of
from . import elementwise as ew
from . import shape as sh
from . import sparsity_rules as sr
from .determinant import det_p
from .families import times
from .linalg import einsum
from .matrix_helpers import (
    _T,
    LinAlgError,
    _assert_stacked_2d,
    _assert_stacked_square,
    _cast,
    _common,
    _mm,
    _real,
    _single_batch,
    _square_stack,
)

__all__ = ["solve", "inv", "det", "slogdet", "SlogdetResult"]


SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])
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
        rhs = ew.negative_p(_mm(ta, x))
    else:
        rhs = ew.subtract_p(tb, _mm(ta, x))
    return x, solve_p(a, rhs)


def _solve_vjp_a(ct, x, a, b):
    return ew.negative_p(_mm(solve_p(_T(a), ct), _T(x)))


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
                    vjp_reads=(frozenset({0, "out"}), frozenset({0})), traits=RAISES)


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
    return x, ew.negative_p(_mm(_mm(x, tangents[0]), x))


def _inv_vjp(ct, x, a, nan_if_singular=False):
    xt = _T(x)
    return ew.negative_p(_mm(_mm(xt, ct), xt))


inv_p = Primitive("inv", _inv_impl, _inv_jvp, (_inv_vjp,), vjp_ignores=(0,),
                  traits=RAISES)
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
    if not is_complex(a):
        return (sign, logabsdet), (Zero(shape_of(sign), dtype_of(sign)), t)
    # complex: d|det| / |det| is Re(t), and the phase turns by i Im(t) = (t - conj t) / 2
    half_imaginary = ew.multiply_p(ew.subtract_p(t, ew.conj_p(t)), 0.5)
    return (sign, logabsdet), (ew.multiply_p(sign, half_imaginary), _real(t))


def _slogdet_vjp(cts, out, a):
    ct_sign, ct_log = cts
    sign, _ = out
    t_bar = None
    if type(ct_log) is not Zero:
        t_bar = ct_log
    if is_complex(a) and type(ct_sign) is not Zero:
        c = ew.multiply_p(ct_sign, sign)
        phase = ew.multiply_p(ew.subtract_p(c, ew.conj_p(c)), 0.5)
        t_bar = phase if t_bar is None else ew.add_p(t_bar, phase)
    if t_bar is None:
        return None
    if is_complex(a):
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

# Sparsity detection: per stack index, the solution depends on the whole matrix and the
# whole right-hand side (a vector when b is 1-D, else a matrix); inverses and determinants
# on the whole matrix.
def _solve_sparsity(args, out, local):
    counts = (2, 1 if len(shape_of(args[1])) == 1 else 2)
    return sr.matrix_stack_sparsity(counts)(args, out, local)


solve_p.sparsity = _solve_sparsity
inv_p.sparsity = slogdet_p.sparsity = sr.matrix_stack_sparsity()
