"""Covariance and correlation with NumPy's signatures: ``cov`` and ``corrcoef``,
compositions of ``average``, ``matmul`` and arithmetic.
"""

import warnings

import numpy as np

from ..core.trace import Tracer
from ..core.zeros import as_array, dtype_of, shape_of
from . import complex as cx
from . import elementwise as ew
from . import linalg
from . import reductions as rd
from . import shape as sh
from .indexing import getitem
from .moments import average

__all__ = ["cov", "corrcoef"]


# --- covariance and correlation ------------------------------------------------------------


def _observations(m, rowvar, what):
    m = as_array(m)
    rank = len(shape_of(m))
    if rank > 2:
        raise ValueError(f"{what} has more than 2 dimensions")
    if rank < 2:
        m = sh.reshape(m, (1, -1) if rank == 1 else (1, 1))
    if not rowvar and shape_of(m)[0] != 1:
        m = sh.transpose(m)
    return m


def _frequency_weights(fweights, n):
    fweights = np.asarray(fweights, dtype=float)
    if not np.all(fweights == np.around(fweights)):
        raise TypeError("fweights must be integer")
    if fweights.ndim > 1:
        raise RuntimeError("cannot handle multidimensional fweights")
    if fweights.shape[0] != n:
        raise RuntimeError("incompatible numbers of samples and fweights")
    if np.any(fweights < 0):
        raise ValueError("fweights cannot be negative")
    return fweights


def _analytic_weights(aweights, n):
    aweights = as_array(aweights)
    if len(shape_of(aweights)) > 1:
        raise RuntimeError("cannot handle multidimensional aweights")
    if shape_of(aweights)[0] != n:
        raise RuntimeError("incompatible numbers of samples and aweights")
    if not isinstance(aweights, Tracer) and np.any(aweights < 0):
        raise ValueError("aweights cannot be negative")
    return aweights


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
        dtype=None):
    """Covariance matrix of the variables in the rows of ``m`` (columns if not ``rowvar``),
    and of ``y``'s, as ``np.cov``, with frequency and analytic weights. Differentiable in
    ``m``, ``y`` and ``aweights``."""
    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    if dtype is None:
        dtype = np.result_type(dtype_of(as_array(m)), np.float64) if y is None else \
            np.result_type(dtype_of(as_array(m)), dtype_of(as_array(y)), np.float64)
    data = ew.astype(_observations(m, rowvar, "m"), dtype)
    if y is not None:
        other = ew.astype(_observations(y, rowvar, "y"), dtype)
        data = sh.concatenate([data, other], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    samples = shape_of(data)[1]
    w = None
    if fweights is not None:
        w = _frequency_weights(fweights, samples)
    if aweights is not None:
        aweights = _analytic_weights(aweights, samples)
        w = aweights if w is None else w * aweights
    avg, w_sum = average(data, axis=1, weights=w, returned=True)
    w_sum = getitem(w_sum, 0)
    if w is None:
        fact = samples - ddof
    elif ddof == 0:
        fact = w_sum
    elif aweights is None:
        fact = w_sum - ddof
    else:
        fact = w_sum - ddof * rd.sum(w * aweights) / w_sum
    if not isinstance(fact, Tracer) and fact <= 0:
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=2)
        fact = 0.0
    centred = data - sh.reshape(avg, (-1, 1))
    weighted = centred if w is None else centred * w
    if dtype_of(weighted).kind == "c":
        weighted = ew.conj_p(weighted)
    product = linalg.matmul(centred, sh.transpose(weighted))
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = 1.0 / fact if isinstance(fact, Tracer) else np.true_divide(1.0, fact)
        return sh.squeeze(product * scale)


def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """Pearson correlation coefficients, as ``np.corrcoef``: ``cov`` normalised by the
    standard deviations, clipped to [-1, 1] (the clip passes the derivative of values
    inside, as ``clip`` does)."""
    c = cov(x, y, rowvar, dtype=dtype)
    if len(shape_of(c)) == 0:
        with np.errstate(divide="ignore", invalid="ignore"):
            return c / c
    k = shape_of(c)[0]
    diagonal = getitem(c, (np.arange(k), np.arange(k)))
    if dtype_of(diagonal).kind == "c":
        diagonal = cx.real(diagonal)
    spread = ew.sqrt_p(diagonal)
    c = c / sh.reshape(spread, (k, 1))
    c = c / sh.reshape(spread, (1, k))
    if dtype_of(c).kind == "c":
        return ew.clip_p(cx.real(c), -1.0, 1.0) + 1j * ew.clip_p(cx.imag(c), -1.0, 1.0)
    return ew.clip_p(c, -1.0, 1.0)
