"""Records for complex numbers and ``diffkit.numpy.fft``.

The generic checker works on real arguments and real outputs, so a function of complex
values is checked as a function of their real and imaginary parts: ``z = re + 1j * im`` is
built inside the record and a complex output is returned as ``(real, imag)``. This runs the
complex rules (and the real/complex boundaries ``x * 1j``, ``real``, ``imag``) through
finite differences to order 2 in both modes, ``jacfwd == jacrev`` and ``vmap``.
"""

import numpy as np

import diffkit.numpy as dnp

from ..domains import BOOL, COARSE, LOG1P, NONZERO, POSITIVE, REAL, REAL32, SMALL, Domain
from ..op_record import one, records, unary

HALF = Domain("half", -0.5, 0.5)
NEGATIVE = Domain("negative", -3.0, -0.2)
MODERATE = Domain("moderate", -1.2, 1.2)
AWAY = Domain("|x| >= 0.5", avoid=(0.0,), margin=0.5)    # keeps |z| >= 0.5 as the real part
BASE = Domain("base in [0.5, 2]", 0.5, 2.0)  # z ** w with Re w < 0 near |z| = 0.25 curves too
# steeply for the order-2 finite differences (truncation error ~1e-4 at eps = 1e-4)
AWAY32 = Domain("|x| >= 0.5, float32", avoid=(0.0,), margin=0.5, dtype=np.float32)


def _parts(out):
    """A complex output as its real and imaginary parts; a real one as it is."""
    if isinstance(out, tuple):
        return tuple(p for o in out for p in (_parts(o) if dnp.iscomplexobj(o) else (o,)))
    return (dnp.real(out), dnp.imag(out)) if dnp.iscomplexobj(out) else out


def of_complex(f, n=1):
    """``f`` of ``n`` complex arguments as a function of ``2 n`` real ones
    (``re_0, im_0, re_1, im_1, ...``)."""
    def g(*parts):
        return _parts(f(*[parts[2 * i] + 1j * parts[2 * i + 1] for i in range(n)]))
    return g


COMPLEX_SHAPES = [((3,), (3,)), ((), ()), ((2, 3), (3,))]   # the last: z broadcasts
FEW_SHAPES = [((3,), (3,)), ((2, 3), (2, 3))]


def complex_unary(name, f, re=REAL, im=REAL, shapes=None, **kw):
    return records(name, of_complex(f), shapes or COMPLEX_SHAPES, (re, im), **kw)


def complex_binary(name, f, domains=(REAL, REAL, REAL, REAL), shapes=None, **kw):
    shapes = shapes or [((3,), (3,), (3,), (3,)), ((2, 3), (2, 3), (3,), (3,)),
                        ((), (), (2, 3), (2, 3))]
    return records(name, of_complex(f, 2), shapes, domains, **kw)


R = []

# --- holomorphic elementwise functions -----------------------------------------------------
R += complex_unary("complex_exp", dnp.exp)
R += complex_unary("complex_log", dnp.log, POSITIVE)           # away from the branch cut
R += complex_unary("complex_log1p", dnp.log1p, LOG1P)
R += complex_unary("complex_expm1", dnp.expm1, shapes=FEW_SHAPES)
R += complex_unary("complex_sqrt", dnp.sqrt, POSITIVE)
R += complex_unary("complex_square", dnp.square, shapes=FEW_SHAPES)
R += complex_unary("complex_sin", dnp.sin)
R += complex_unary("complex_cos", dnp.cos, shapes=FEW_SHAPES)
R += complex_unary("complex_tan", dnp.tan, SMALL, SMALL, shapes=FEW_SHAPES)
R += complex_unary("complex_sinh", dnp.sinh, shapes=FEW_SHAPES)
R += complex_unary("complex_cosh", dnp.cosh, shapes=FEW_SHAPES)
R += complex_unary("complex_tanh", dnp.tanh, SMALL, SMALL, shapes=FEW_SHAPES)
R += complex_unary("complex_arctan", dnp.arctan, REAL, HALF, shapes=FEW_SHAPES)
R += complex_unary("complex_negative_operators", lambda z: -z * 2.0 + 1.5j - z / (2 + 1j),
                   shapes=FEW_SHAPES)
R += complex_unary("complex_power_int", lambda z: z ** 3)
R += complex_unary("complex_power_float", lambda z: dnp.power(z, 2.5), POSITIVE,
                   shapes=FEW_SHAPES)
# the base kept at Re z >= 0.5 (BASE): near |z| = 0.25 the third derivative of z ** -1.5 is
# ~5000 and the order-2 finite differences (step 1e-4) miss their 1e-5 tolerance
R += complex_unary("complex_power_negative", lambda z: z ** -1.5, BASE, shapes=FEW_SHAPES)
R += complex_unary("complex_reciprocal", lambda z: 1.0 / z, AWAY, shapes=FEW_SHAPES)
R += complex_binary("complex_add", dnp.add)
R += complex_binary("complex_subtract", dnp.subtract)
R += complex_binary("complex_multiply", dnp.multiply)
R += complex_binary("complex_divide", dnp.divide, (REAL, REAL, AWAY, REAL))
R += complex_binary("complex_power", dnp.power, (BASE, REAL, MODERATE, MODERATE))

# --- not holomorphic -------------------------------------------------------------------------
R += complex_unary("complex_conj", dnp.conj)
R += complex_unary("complex_conj_product", lambda z: dnp.conj(z) * z ** 2, shapes=FEW_SHAPES)
R += complex_unary("complex_abs", dnp.abs, AWAY)            # |z| away from 0
R += complex_unary("complex_abs_squared", lambda z: dnp.abs(z) ** 2, AWAY, shapes=FEW_SHAPES)
R += complex_unary("complex_sign", dnp.sign, AWAY)
R += complex_unary("complex_angle", dnp.angle, REAL, AWAY)   # away from 0 and the cut
R += complex_unary("complex_angle_deg", lambda z: dnp.angle(z, deg=True), POSITIVE,
                   shapes=FEW_SHAPES)
R += complex_unary("complex_real", dnp.real)
R += complex_unary("complex_imag", dnp.imag)
R += complex_unary("complex_real_imag_mix",
                   lambda z: dnp.real(z) * dnp.imag(z) + dnp.abs(z * 1j + 3.0) * z,
                   shapes=FEW_SHAPES)
R += unary("angle_of_real", dnp.angle, NONZERO, zero_derivative=True)
R += unary("real_of_real", dnp.real, shapes=[((3,),)])
R += unary("imag_of_real", lambda x: dnp.imag(x) + x, shapes=[((3,),)])
R += records("iscomplex", of_complex(lambda z: (dnp.iscomplex(z), dnp.isreal(z))),
             [((3,), (3,))], (COARSE, COARSE), zero_derivative=True)

# --- real and complex together ---------------------------------------------------------------
R += records("real_times_complex", lambda x, re, im: _parts(x * (re + 1j * im)),
             [((3,), (3,), (3,)), ((2, 3), (3,), (3,)), ((3,), (), ())])
R += records("real_to_complex_power", lambda x, re, im: _parts(dnp.power(x, re + 1j * im)),
             [((3,), (3,), (3,)), ((2, 3), (3,), (3,))], (POSITIVE, MODERATE, MODERATE))
R += records("negative_base_complex_exponent",
             lambda x, re, im: _parts(dnp.power(x, re + 1j * im)),
             [((3,), (3,), (3,))], (NEGATIVE, MODERATE, MODERATE))
R += records("complex_where", lambda c, x, re, im: _parts(dnp.where(c, x, re + 1j * im)),
             [((3,), (3,), (3,), (3,)), ((2, 3), (3,), (), ())], (BOOL, REAL, REAL, REAL))
R += one("complex_where_mask", lambda x, re, im: _parts(dnp.where(x > 0, x, re + 1j * im)),
         (2, 3), (2, 3), (2, 3), domains=(NONZERO, REAL, REAL))
R += unary("astype_complex", lambda x: _parts(dnp.astype(x, np.complex128)),
           shapes=[((3,),), ((2, 3),)])
R += complex_unary("astype_complex_to_real", lambda z: dnp.astype(z, np.float64) * dnp.imag(z),
                   shapes=FEW_SHAPES)
R += complex_unary("complex64", lambda z: dnp.exp(z) * dnp.abs(z), AWAY32, REAL32,
                   shapes=FEW_SHAPES)

# --- reductions, shapes, contractions on complex values ------------------------------------
R += complex_unary("complex_sum", lambda z: dnp.sum(z * z, axis=0), shapes=FEW_SHAPES)
R += complex_unary("complex_mean", dnp.mean, shapes=FEW_SHAPES)
R += complex_unary("complex_prod", lambda z: dnp.prod(z, axis=-1), AWAY, shapes=FEW_SHAPES)
R += records("complex_reshape_index", of_complex(lambda z: z.reshape(3, 2)[1:, ::-1].T),
             [((2, 3), (2, 3))])
R += records("complex_concatenate",
             lambda x, re, im: _parts(dnp.concatenate([x, re + 1j * im])),
             [((3,), (2,), (2,))])
R += complex_binary("complex_matmul", dnp.matmul,
                    shapes=[((2, 3), (2, 3), (3, 2), (3, 2)), ((3,), (3,), (3, 2), (3, 2))])
R += complex_binary("complex_vdot", dnp.vdot, shapes=[((3,), (3,), (3,), (3,))])

# --- fft -------------------------------------------------------------------------------------
F = dnp.fft
SIGNALS = [((4,),), ((2, 3),), ((3, 4),)]
R += unary("fft_of_real", lambda x: _parts(F.fft(x)), shapes=SIGNALS)
R += complex_unary("fft", F.fft, shapes=[((4,), (4,)), ((2, 3), (2, 3)), ((3, 4), ())])
R += complex_unary("ifft", F.ifft, shapes=[((4,), (4,)), ((2, 3), (3,))])
for _norm in ("ortho", "forward"):
    R += complex_unary(f"fft_{_norm}", lambda z, m=_norm: F.fft(z, norm=m), shapes=[((3,), (3,))])
    R += complex_unary(f"ifft_{_norm}", lambda z, m=_norm: F.ifft(z, norm=m),
                       shapes=[((4,), (4,))])
R += complex_unary("fft_n_pad", lambda z: F.fft(z, n=6), shapes=[((4,), (4,)), ((2, 3), (2, 3))])
R += complex_unary("fft_n_crop", lambda z: F.fft(z, n=3, axis=0), shapes=[((4, 2), (4, 2))])
R += complex_unary("ifft_axis0", lambda z: F.ifft(z, axis=0, n=4), shapes=[((3, 2), (3, 2))])
R += unary("rfft", lambda x: _parts(F.rfft(x)), shapes=SIGNALS)
R += unary("rfft_odd", lambda x: _parts(F.rfft(x, n=7)), shapes=[((4,),), ((2, 9),)])
R += unary("rfft_axis0_ortho", lambda x: _parts(F.rfft(x, axis=0, norm="ortho")),
           shapes=[((4, 3),)])
R += unary("rfft_forward", lambda x: _parts(F.rfft(x, norm="forward")), shapes=[((6,),)])
R += complex_unary("irfft", F.irfft, shapes=[((3,), (3,)), ((2, 4), (2, 4))])
R += complex_unary("irfft_odd", lambda z: F.irfft(z, n=5), shapes=[((3,), (3,)), ((2, 3), (3,))])
R += complex_unary("irfft_pad", lambda z: F.irfft(z, n=8), shapes=[((3,), (3,))])
R += complex_unary("irfft_crop", lambda z: F.irfft(z, n=3), shapes=[((4,), (4,))])
R += unary("irfft_of_real", lambda x: F.irfft(x, n=6), shapes=[((4,),)])
for _norm in ("ortho", "forward"):
    R += complex_unary(f"irfft_{_norm}", lambda z, m=_norm: F.irfft(z, axis=0, norm=m),
                       shapes=[((4, 2), (4, 2))])
R += complex_unary("hfft", F.hfft, shapes=[((3,), (3,)), ((2, 4), (2, 4))])
R += complex_unary("hfft_odd_ortho", lambda z: F.hfft(z, n=7, norm="ortho"),
                   shapes=[((4,), (4,))])
R += unary("ihfft", lambda x: _parts(F.ihfft(x)), shapes=[((4,),), ((2, 3),)])
R += unary("ihfft_n_forward", lambda x: _parts(F.ihfft(x, n=6, norm="forward")),
           shapes=[((4,),)])
R += complex_unary("fft2", F.fft2, shapes=[((2, 3), (2, 3)), ((2, 3, 4), (4,))])
R += complex_unary("ifft2_s", lambda z: F.ifft2(z, s=(3, 2), norm="ortho"),
                   shapes=[((2, 3), (2, 3))])
R += complex_unary("fftn", F.fftn, shapes=[((2, 3), (2, 3)), ((2, 3, 2), (2, 3, 2))])
R += complex_unary("fftn_axes_s", lambda z: F.fftn(z, s=(4, 2), axes=(0, 2)),
                   shapes=[((3, 2, 3), (3, 2, 3))])
R += complex_unary("ifftn_axis1", lambda z: F.ifftn(z, axes=(1,), norm="forward"),
                   shapes=[((2, 3), (2, 3))])
R += complex_unary("fftn_repeated_axis", lambda z: F.fftn(z, axes=(1, 0, 1)),
                   shapes=[((2, 3), (2, 3))])
R += unary("rfftn", lambda x: _parts(F.rfftn(x)), shapes=[((2, 4),), ((2, 3, 3),)])
R += unary("rfft2_s", lambda x: _parts(F.rfft2(x, s=(3, 5), norm="ortho")),
           shapes=[((2, 4),)])
R += unary("rfftn_axes", lambda x: _parts(F.rfftn(x, axes=(2, 0))), shapes=[((2, 3, 4),)])
R += complex_unary("irfftn", F.irfftn, shapes=[((2, 3), (2, 3)), ((2, 3, 3), (2, 3, 3))])
R += complex_unary("irfft2_s", lambda z: F.irfft2(z, s=(3, 5), norm="forward"),
                   shapes=[((2, 3), (2, 3))])
R += complex_unary("irfftn_axes_odd", lambda z: F.irfftn(z, s=(3, 2), axes=(1, 0)),
                   shapes=[((2, 3), (2, 3))])
R += unary("fftshift", F.fftshift, shapes=[((4,),), ((3, 4),)])
R += unary("fftshift_axis", lambda x: F.fftshift(x, axes=0), shapes=[((3, 2),)])
R += unary("ifftshift", F.ifftshift, shapes=[((3,),), ((3, 4),)])
R += unary("ifftshift_axes", lambda x: F.ifftshift(x, axes=(-1,)), shapes=[((2, 3),)])
R += unary("rfft_float32", lambda x: _parts(F.rfft(x)), REAL32, shapes=[((4,),)])
R += complex_unary("fft_complex64", F.fft, REAL32, REAL32, shapes=[((4,), (4,))])
R += complex_unary("irfft_complex64", F.irfft, REAL32, REAL32, shapes=[((3,), (3,))])
R += unary("power_spectrum", lambda x: dnp.real(F.rfft(x) * dnp.conj(F.rfft(x))),
           shapes=[((6,),)])

RECORDS = R
