"""Records of the NumPy functions in diffkit.ops.polynomial, .functional and .selection:
roots (symmetric functions of distinct roots), polyfit and polydiv, piecewise with fixed
and value-dependent conditions, apply_along_axis/apply_over_axes/vectorize over diffkit
functions, choose/extract/put_along_axis/fill_diagonal, histogram/histogram2d/bincount
weights, kaiser and poly. ``unique`` and ``union1d`` have no record: their values set the
result's shape, so they cannot be batched by vmap (tested in tests/ops/test_numpy_extra.py
and tests/ops/test_issue31_numpy_functions.py)."""

import dataclasses

import numpy as np

import diffkit.numpy as dnp

from ..domains import INDEX, NONZERO, REAL, Domain
from ..op_record import one, records, unary

SPREAD = Domain("spread", -3.0, 3.0, distinct=True, margin=0.15)
SAMPLES = np.array([0.1, 0.35, 0.6, 0.62, 0.9, 0.99])
_CHOICE = np.array([[0, 2, 1, 1], [2, 0, 0, 1]])
_MASK = np.array([[True, False, True], [False, True, True]])


def _cubic(r):
    """Coefficients of the monic cubic with roots ``r`` (3,), plus a scale."""
    return dnp.polymul(dnp.polymul(dnp.stack([1.0, -r[0]]), dnp.stack([1.0, -r[1]])),
                       dnp.stack([2.0, -2.0 * r[2]]))


R = []
# symmetric functions of the roots: the order eigvals lists them in is not smooth
R += one("roots_real", lambda r: dnp.sum(dnp.real(dnp.roots(_cubic(r))) ** 3), (3,),
         domains=(SPREAD,))
R += one("roots_complex", lambda p: dnp.sum(dnp.imag(dnp.roots(p)) ** 2),
         (3,), domains=(Domain("quadratic, complex roots", 1.0, 2.0),))
# x near a spread grid (a fit through clustered points is too ill-conditioned for the
# finite differences of second derivatives)
R += records("polyfit", lambda x, y: dnp.polyfit(np.linspace(-2.0, 2.0, x.size) + 0.2 * x, y, 2),
             [((6,), (6,)), ((5,), (5, 2))], (REAL, REAL))
R += one("polyfit_weights", lambda y, w: dnp.polyfit(np.linspace(0, 1, 6), y, 1, w=w),
         (6,), (6,), domains=(REAL, Domain("weights", 0.5, 2.0)))
R += records("polydiv", lambda u, v: dnp.concatenate(dnp.polydiv(u, v)),
             [((4,), (2,)), ((5,), (3,))], (NONZERO, Domain("leading", 1.0, 2.0)))
R += unary("piecewise_fixed", lambda x: dnp.piecewise(
    x, [np.arange(x.size).reshape(x.shape) % 2 == 0], [dnp.sin, lambda v: v ** 2]),
    shapes=[((4,),), ((2, 3),)])
R += unary("piecewise_by_value", lambda x: dnp.piecewise(
    x, [x < 0, x >= 0], [lambda v: v ** 3, dnp.exp]), NONZERO, shapes=[((4,),), ((2, 3),)])
R += unary("piecewise_otherwise", lambda x: dnp.piecewise(
    x, [x < -0.5], [dnp.cos, lambda v: 2.0 * v]), Domain("away from -0.5", avoid=(-0.5,)),
    shapes=[((4,),)])
R += one("apply_along_axis", lambda a: dnp.apply_along_axis(
    lambda r: dnp.stack([dnp.sum(r ** 2), r[0] * r[-1]]), 1, a), (2, 3))
R += one("apply_along_axis_axis0", lambda a: dnp.apply_along_axis(dnp.cumsum, 0, a), (3, 2))
R += one("apply_over_axes", lambda a: dnp.apply_over_axes(dnp.sum, dnp.sin(a), [0, 2]),
         (2, 3, 4))
R += records("vectorize", dnp.vectorize(lambda a, b: a * dnp.sin(b)),
             [((3,), (3,)), ((2, 1), (3,))])
R += one("vectorize_signature", dnp.vectorize(lambda a, b: dnp.dot(a, b),
                                              signature="(n),(n)->()"), (3, 2), (2,))
R += records("choose", lambda c0, c1, c2: dnp.choose(_CHOICE, [c0, c1, c2]),
             [((2, 4), (4,), ())])
R += one("choose_index_argument", lambda a, c: dnp.choose(a, c), (4,), (3, 4),
         domains=(INDEX, REAL))
R += one("extract", lambda a: dnp.extract(_MASK, a), (2, 3))
R += one("put_along_axis", lambda a, v: dnp.put_along_axis(
    a, np.array([[2], [0]]), v, 1, inplace=False), (2, 3), (2, 1))
R += one("put_along_axis_flat", lambda a, v: dnp.put_along_axis(
    a, np.array([4, 1]), v, None, inplace=False), (2, 3), (2,))
R += records("fill_diagonal", lambda a, v: dnp.fill_diagonal(a, v, inplace=False),
             [((3, 3), (3,)), ((3, 3), ()), ((5, 2), (2,))])
R += one("fill_diagonal_wrap", lambda a, v: dnp.fill_diagonal(a, v, wrap=True, inplace=False),
         (7, 2), (1,))
R += one("histogram_weights", lambda w: dnp.histogram(SAMPLES, 4, weights=w)[0], (6,))
R += one("histogram_density", lambda w: dnp.histogram(
    SAMPLES, np.array([0.0, 0.3, 0.5, 1.0]), weights=w, density=True)[0], (6,),
    domains=(Domain("positive", 0.5, 2.0),))

# issue 31: bincount/histogram2d in their weights, kaiser in beta, poly of roots or a matrix
R += one("bincount_weights", lambda w: dnp.bincount(np.array([0, 2, 2, 3, 0, 6]), weights=w,
                                                    minlength=8), (6,))
X2, Y2 = np.array([0.1, 0.5, 0.9, 0.5, 0.3, 0.7]), np.array([0.2, 0.4, 0.6, 0.45, 0.9, 0.1])
R += one("histogram2d_weights", lambda w: dnp.histogram2d(X2, Y2, bins=[2, 3], weights=w)[0],
         (6,))
R += one("histogram2d_density", lambda w: dnp.histogram2d(
    X2, Y2, bins=(np.array([0.0, 0.4, 1.0]), 2), weights=w, density=True)[0], (6,),
    domains=(Domain("positive", 0.5, 2.0),))
R += one("kaiser", lambda b: dnp.kaiser(6, b), (), domains=(Domain("beta", 0.5, 8.0),))
R += one("poly", dnp.poly, (4,))
# the value through eigvals (NumPy's), the derivative of the coefficients as polynomials in
# the entries: any matrix, and one with its eigenvalues far apart
R += one("poly_matrix", lambda a: dnp.poly(a + np.diag([0.0, 8.0, 16.0])), (3, 3),
         domains=(Domain("(-1, 1)", -1.0, 1.0),))
R += one("poly_any_matrix", dnp.poly, (3, 3), domains=(Domain("(-1, 1)", -1.0, 1.0),))

RECORDS = [dataclasses.replace(r, name=f"numpy_extra_{r.name}") for r in R]
