"""``sin(pi x**2 / 2)`` and ``cos(pi x**2 / 2)`` with the argument reduced exactly.

These are the derivatives of the Fresnel integrals S and C. Computing ``pi / 2 * x**2``
first rounds the phase: at x = 1e5 the phase is 5e9 pi, whose rounding error (about 1e-6)
is the whole value of the sine (exactly 0). Here ``x**2`` is reduced modulo 4 (the period
of the phase in units of pi/2) before anything is rounded: Dekker's split writes
``x = hi + lo`` with at most 26 significant bits in each part, so ``hi**2``, ``2 hi lo``
and ``lo**2`` are exact in float64 and so are their remainders modulo 4. Only the sum of
three numbers below 4 rounds, so the phase is right to about 1e-15 however large x is.

Each function is a primitive: its derivative is ``pi x`` times the other one, so
derivatives of every order keep the exact reduction.
"""

import math

import numpy as np

from .families import elementwise

__all__ = []

_SPLIT = 134217729.0  # 2**27 + 1: Dekker's constant for splitting a float64
_HUGE = 2.0 ** 60     # above this x is a multiple of 256, so x**2 = 0 mod 4


def _square_mod_4(x):
    """``x**2 mod 4`` for float64 ``x``, exact up to one rounding of a number below 12
    (0 for infinite or huge ``x``; the caller masks the infinite ones)."""
    x = np.where(np.abs(x) < _HUGE, x, 0.0)
    scaled = _SPLIT * x
    hi = scaled - (scaled - x)
    lo = x - hi
    total = np.fmod(hi * hi, 4.0) + np.fmod(2.0 * hi * lo, 4.0) + np.fmod(lo * lo, 4.0)
    return np.fmod(total, 4.0)


def _half_pi_square(x, which):
    """sin (``which`` 0) or cos (``which`` 1) of ``pi x**2 / 2`` in x's float dtype."""
    x = np.asarray(x)
    dtype = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    r = _square_mod_4(x.astype(np.float64))
    quarter = np.rint(r)                    # phase = (quarter + f) pi / 2, |f| <= 1/2
    angle = (r - quarter) * (math.pi / 2)
    s, c = np.sin(angle), np.cos(angle)
    turn = quarter.astype(np.int64) % 4 + which  # cos(t) = sin(t + pi/2)
    value = np.choose(turn % 4, [s, c, -s, -c])
    value = np.where(np.isfinite(x), value, np.nan)  # (beyond 2**60, x**2 = 0 mod 4)
    return value.astype(dtype)[()]


def _sin_impl(x):
    return _half_pi_square(x, 0)


def _cos_impl(x):
    return _half_pi_square(x, 1)


# d/dx sin(pi x^2 / 2) = pi x cos(pi x^2 / 2), and d/dx cos(...) = -pi x sin(...).
sin_half_pi_square_p, sin_half_pi_square = elementwise(
    "sin_half_pi_square", _sin_impl,
    {"x": lambda x: math.pi * x * cos_half_pi_square_p(x)},
    doc="``sin(pi x**2 / 2)``, exact for large ``x``.", module=__name__)
cos_half_pi_square_p, cos_half_pi_square = elementwise(
    "cos_half_pi_square", _cos_impl,
    {"x": lambda x: -math.pi * x * sin_half_pi_square_p(x)},
    doc="``cos(pi x**2 / 2)``, exact for large ``x``.", module=__name__)
