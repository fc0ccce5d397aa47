"""Complex numbers: real and imaginary parts, the argument, and NumPy's predicates.

Derivatives of complex values follow JAX's convention. A complex number is a pair of reals
and every function is differentiated as a real-linear map:

- the JVP of ``f`` at ``z`` maps a tangent ``t`` (complex for a complex input) to the
  directional derivative ``lim (f(z + h t) - f(z)) / h`` over real ``h``;
- a cotangent ``w`` stands for the real-linear functional ``t -> Re(w t)`` (a bilinear
  pairing: no conjugation), and the VJP is the transpose of the JVP for that pairing:
  ``Re(w * jvp(t)) == Re(vjp(w) * t)`` for all ``t`` and ``w`` (summed over elements).

For a holomorphic ``f`` both are multiplication by ``f'(z)``. The cotangent of a real value
is real. ``grad`` of a real-valued function of complex ``z = x + iy`` is therefore
``df/dx - i df/dy`` (the conjugate of the steepest-ascent direction), e.g. ``2 conj(z)``
for ``|z|**2``; see ``diffkit.grad``.

``conj`` lives with the other elementwise primitives (``diffkit.ops.elementwise``).
"""

import math

import numpy as np
from numpy import complex64, complex128

from ..core.primitive import Primitive, Traits
from ..core.zeros import Zero, dtype_of, sequence_as_array, shape_of
from . import elementwise as ew
from . import sparsity_rules as sr
from . import taylor_arithmetic as ta

__all__ = ["real", "imag", "angle", "iscomplexobj", "isrealobj", "iscomplex", "isreal",
           "complex64", "complex128"]


def _elementwise_batch(prim):
    def batch(axis_size, values, batch_axes, **params):
        return prim(values[0], **params), batch_axes[0]
    return batch


def real_part(ct):
    """The real part of a cotangent that stands for a real value: a complex cotangent of a
    real value carries no information in its imaginary part."""
    if type(ct) is Zero or dtype_of(ct).kind != "c":
        return ct
    return real_p(ct)


# --- real and imaginary parts: linear ----------------------------------------------------
# real: Re(w Re(t)) = Re(Re(w) t) for a real w, so the transpose embeds w as w + 0i.
# imag: w Im(t) = Re(-i w t), so the transpose is w -> -i w.

real_p = Primitive(
    "real", lambda x: np.real(x),
    lambda primals, tangents: (real_p(primals[0]), real_p(tangents[0])),
    (lambda ct, out, x: ew.astype(real_part(ct), dtype_of(x)),),
    vjp_ignores=(0, "out"), traits=Traits(elementwise=True, curvature="linear"))
real_p.batch = _elementwise_batch(real_p)
real_p.sparsity = sr.elementwise_sparsity()
real_p.jet = ta.linear(real_p)

imag_p = Primitive(
    "imag", lambda x: np.imag(x),
    lambda primals, tangents: (imag_p(primals[0]), imag_p(tangents[0])),
    (lambda ct, out, x: ew.multiply_p(ew.astype(real_part(ct), dtype_of(x)), -1j),),
    vjp_ignores=(0, "out"), traits=Traits(elementwise=True, curvature="linear"))
imag_p.batch = _elementwise_batch(imag_p)
imag_p.sparsity = sr.elementwise_sparsity()
imag_p.jet = ta.linear(imag_p)


def real(val):
    """The real part of ``val``, as ``np.real`` (a real input is returned as it is)."""
    val = sequence_as_array(val)
    return real_p(val) if dtype_of(val).kind == "c" else val


def imag(val):
    """The imaginary part of ``val``, as ``np.imag``: zeros, with no derivative, for a real
    input."""
    val = sequence_as_array(val)
    if dtype_of(val).kind == "c":
        return imag_p(val)
    return np.zeros(shape_of(val), dtype_of(val))


# --- the argument --------------------------------------------------------------------------
# angle(z) = atan2(Im z, Re z) has d angle = Im(t / z); its transpose is w -> -i w / z.
# At z = 0 the angle has no derivative; both rules give 0 there. On real inputs the angle is
# piecewise constant (0 or pi): zero derivative.


def _inverse_or_zero(z):
    """``1 / z``, and 0 where ``z == 0``."""
    zero = ew.equal_p(z, 0)
    return ew.where_p(zero, 0.0, 1.0 / ew.where_p(zero, 1.0, z))


def _angle_scale(deg):
    return 180.0 / math.pi if deg else 1.0


def _angle_jvp(primals, tangents, deg):
    (z,), (t,) = primals, tangents
    out = angle_p(z, deg=deg)
    if dtype_of(z).kind != "c":
        return out, Zero(shape_of(out), dtype_of(out))
    tangent = imag_p(t * _inverse_or_zero(z))
    return out, tangent * _angle_scale(deg) if deg else tangent


def _angle_vjp(ct, out, z, deg):
    if dtype_of(z).kind != "c":
        return None
    return real_part(ct) * (_inverse_or_zero(z) * (-1j * _angle_scale(deg)))


angle_p = Primitive("angle", lambda z, deg: np.angle(z, deg=deg), _angle_jvp, (_angle_vjp,),
                    vjp_ignores=("out",), traits=Traits(elementwise=True, curvature="unary"))
angle_p.batch = _elementwise_batch(angle_p)
angle_p.sparsity = sr.elementwise_sparsity()


def angle(z, deg=False):
    """The counterclockwise angle from the positive real axis, as ``np.angle`` (in degrees
    with ``deg=True``). Its derivative is 0 at ``z == 0`` and for real inputs."""
    return angle_p(sequence_as_array(z), deg=bool(deg))


# --- predicates (no derivative) ------------------------------------------------------------


def iscomplexobj(x):
    """Whether ``x`` has a complex dtype, as ``np.iscomplexobj``."""
    return dtype_of(sequence_as_array(x)).kind == "c"


def isrealobj(x):
    """Whether ``x`` does not have a complex dtype, as ``np.isrealobj``."""
    return not iscomplexobj(x)


def _constant(x, value):
    out = np.full(shape_of(x), value, bool)
    return out[()] if out.ndim == 0 else out


def iscomplex(x):
    """Elementwise: whether the imaginary part is nonzero, as ``np.iscomplex``."""
    x = sequence_as_array(x)
    return ew.not_equal_p(imag_p(x), 0) if dtype_of(x).kind == "c" else _constant(x, False)


def isreal(x):
    """Elementwise: whether the imaginary part is zero, as ``np.isreal``."""
    x = sequence_as_array(x)
    return ew.equal_p(imag_p(x), 0) if dtype_of(x).kind == "c" else _constant(x, True)
