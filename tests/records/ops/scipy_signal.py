"""Records for diffkit.scipy.signal and diffkit.scipy.integrate (see
tests/records/ops/__init__.py for what each record is checked for). The convolutions are all
compositions over the ``convolve_nd`` primitive (diffkit/ops/signal.py); complex inputs are
checked as functions of their real and imaginary parts, a complex output returned as
``(real, imag)``."""

import numpy as np

import diffkit.numpy as dnp
from diffkit.scipy import integrate as dint
from diffkit.scipy import signal as dsig

from ..domains import POSITIVE, REAL
from ..op_record import one, records

R = []

# --- convolve, correlate (N-D, every mode and method) ---------------------------------------
_ND = [((4,), (3,)), ((3,), (4,)), ((3, 4), (2, 2)), ((2, 3), (3, 4))]
for _mode in ("full", "same", "valid"):
    for _method in ("direct", "fft"):
        R += records(f"signal_convolve_{_mode}_{_method}",
                     lambda a, v, m=_mode, k=_method: dsig.convolve(a, v, m, k), _ND)
        R += records(f"signal_correlate_{_mode}_{_method}",
                     lambda a, v, m=_mode, k=_method: dsig.correlate(a, v, m, k), _ND)
R += one("signal_convolve_3d", lambda a, v: dsig.convolve(a, v, "same"), (3, 2, 4), (2, 2, 3))
R += one("signal_convolve_scalar", dsig.convolve, (), ())


def _complex(fun):
    def wrapped(ar, ai, vr, vi):
        out = fun(ar + 1j * ai, vr + 1j * vi)
        return dnp.real(out), dnp.imag(out)
    return wrapped


for _mode in ("full", "same", "valid"):
    R += one(f"signal_correlate_complex_{_mode}",
             _complex(lambda a, v, m=_mode: dsig.correlate(a, v, m)), (3, 4), (3, 4), (2, 3),
             (2, 3))
    R += one(f"signal_correlate2d_complex_{_mode}",
             _complex(lambda a, v, m=_mode: dsig.correlate2d(a, v, m)), (2, 3), (2, 3), (3, 4),
             (3, 4))
R += one("signal_convolve_complex", _complex(dsig.convolve), (4,), (4,), (2,), (2,))

# --- fftconvolve, oaconvolve (axes broadcast) -----------------------------------------------
for _mode in ("full", "same", "valid"):
    R += records(f"signal_fftconvolve_{_mode}", lambda a, v, m=_mode: dsig.fftconvolve(a, v, m),
                 [((4,), (3,)), ((3, 4), (2, 3))])
    R += one(f"signal_fftconvolve_axes_{_mode}",
             lambda a, v, m=_mode: dsig.fftconvolve(a, v, m, axes=-1), (3, 4), (1, 3))
    R += one(f"signal_oaconvolve_{_mode}",
             lambda a, v, m=_mode: dsig.oaconvolve(a, v, m, axes=[0]), (6, 2), (3, 2))
R += one("signal_fftconvolve_axes_middle", lambda a, v: dsig.fftconvolve(a, v, axes=1),
         (2, 4, 3), (2, 2, 1))

# --- convolve2d, correlate2d (modes, boundaries, fillvalue) ---------------------------------
for _name in ("convolve2d", "correlate2d"):
    _f = getattr(dsig, _name)
    for _mode in ("full", "same", "valid"):
        R += records(f"signal_{_name}_{_mode}", lambda a, v, f=_f, m=_mode: f(a, v, m),
                     [((3, 4), (2, 3)), ((2, 2), (3, 4))])
        for _b in ("wrap", "symm"):
            R += one(f"signal_{_name}_{_mode}_{_b}",
                     lambda a, v, f=_f, m=_mode, b=_b: f(a, v, m, boundary=b), (3, 4), (2, 3))
    R += one(f"signal_{_name}_fillvalue",
             lambda a, v, f=_f: f(a, v, "same", fillvalue=1.5), (3, 4), (2, 3))
    R += one(f"signal_{_name}_traced_fillvalue",
             lambda a, v, c, f=_f: f(a, v, "full", fillvalue=c), (2, 3), (2, 2), ())
    R += one(f"signal_{_name}_large_kernel_wrap",
             lambda a, v, f=_f: f(a, v, "full", boundary="wrap"), (2, 3), (3, 4))

# --- lfilter (derivatives in b, a and x) and welch ------------------------------------------


def stable_lfilter(b, a, x, axis=-1, xp=dsig):
    """lfilter with the denominator kept away from 0 and from instability: a0 = 1 + 0.3 a[0],
    the other coefficients scaled by 0.3."""
    scale = np.full(a.shape[-1:] if hasattr(a, "shape") else (), 0.3)
    shift = np.zeros_like(scale)
    shift[0] = 1.0
    return xp.lfilter(b, a * scale + shift, x, axis=axis)


R += records("signal_lfilter", stable_lfilter, [((2,), (2,), (5,)), ((3,), (3,), (2, 4)),
                                                ((1,), (2,), (3,))])
R += one("signal_lfilter_axis0", lambda b, a, x: stable_lfilter(b, a, x, axis=0), (2,), (2,),
         (4, 2))
R += one("signal_lfilter_fir", lambda b, x: dsig.lfilter(b, [1.0], x), (3,), (5,))
for _kw in ({"nperseg": 4}, {"nperseg": 5, "noverlap": 1, "nfft": 6, "detrend": "linear"},
            {"nperseg": 4, "scaling": "spectrum", "return_onesided": False}):
    _label = "_".join(f"{k}_{v}" for k, v in _kw.items())
    R += one(f"signal_welch_{_label}", lambda x, kw=_kw: dsig.welch(x, **kw)[1], (12,))
R += one("signal_welch_axis0", lambda x: dsig.welch(x, nperseg=4, axis=0)[1], (10, 2))

# --- integrate ------------------------------------------------------------------------------
R += records("integrate_trapezoid", lambda y: dint.trapezoid(y, dx=0.3), [((4,),), ((2, 3),)])
R += one("integrate_trapezoid_x", lambda y, x: dint.trapezoid(y, x, axis=0), (4, 2), (4,),
         domains=(REAL, POSITIVE))
for _n in (1, 2, 3, 4, 7):
    R += one(f"integrate_simpson_{_n}", lambda y: dint.simpson(y, dx=0.7), (2, _n))
R += one("integrate_simpson_traced_dx", lambda y, d: dint.simpson(y, dx=d), (4,), (),
         domains=(REAL, POSITIVE))
for _n in (3, 4, 6, 7):
    # Sorted sample points: x = cumsum of positive spacings.
    R += one(f"integrate_simpson_x_{_n}",
             lambda y, h: dint.simpson(y, x=dnp.cumsum(h), axis=0), (_n, 2), (_n,),
             domains=(REAL, POSITIVE))
R += one("integrate_simpson_x_nd", lambda y, h: dint.simpson(y, x=dnp.cumsum(h, axis=-1)),
         (2, 4), (2, 4), domains=(REAL, POSITIVE))
R += records("integrate_cumulative_trapezoid", dint.cumulative_trapezoid,
             [((4,),), ((2, 3),)])
R += one("integrate_cumulative_trapezoid_x",
         lambda y, x: dint.cumulative_trapezoid(y, x, axis=0, initial=0), (4, 2), (4, 2))
R += one("integrate_cumulative_trapezoid_dx",
         lambda y, d: dint.cumulative_trapezoid(y, dx=d, initial=0), (3,), ())

RECORDS = R

# --- ODE solutions (the solve primitive forwards; its adjoint in reverse mode) ----------------


def decaying_solution(y0, k):
    """y' = -k * y + 0.1 * sin(y), solved tightly, at two output times: derivatives in the
    initial state and in the rates."""
    fun = lambda t, y, k: -k * y + 0.1 * dnp.sin(y)  # noqa: E731
    return dint.solve_ivp(fun, (0.0, 1.0), y0, t_eval=[0.5, 1.0], args=(k,), rtol=1e-11,
                          atol=1e-12).y


R += one("integrate_solve_ivp", decaying_solution, (2,), (2,), domains=(REAL, POSITIVE))
