"""One test per row of docs/conventions.md: both engines give the documented derivative at
points where the function has none.

Each case is a function of one array, a point, and the Jacobian there; ``jacfwd`` and
``jacrev`` must both give it exactly (NaN only where the table says so).
"""

import numpy as np
import pytest

import diffkit as dk
import diffkit.numpy as dnp
import diffkit.scipy.special as dsp

inf = np.inf

CASES = [
    # (row, function, point, Jacobian)
    ("abs at 0", dnp.abs, [0.0, -2.0], np.diag([0.0, -1.0])),
    ("fabs at 0", dnp.fabs, [0.0, 3.0], np.diag([0.0, 1.0])),
    ("sign everywhere", dnp.sign, [0.0, -2.0], np.zeros((2, 2))),
    ("floor at a jump", dnp.floor, [1.0, 0.5], np.zeros((2, 2))),
    ("round at a jump", dnp.round, [0.5, 1.2], np.zeros((2, 2))),
    ("sqrt at 0", dnp.sqrt, [0.0, 4.0], np.diag([inf, 0.25])),
    ("maximum tie", lambda x: dnp.maximum(x, 1.0), [1.0, 2.0], np.diag([0.5, 1.0])),
    ("minimum tie", lambda x: dnp.minimum(x[0], x[1]), [1.0, 1.0], np.array([0.5, 0.5])),
    ("fmax tie", lambda x: dnp.fmax(x[0], x[1]), [2.0, 2.0], np.array([0.5, 0.5])),
    ("fmax with NaN", lambda x: dnp.fmax(x, np.array([np.nan, 1.0])), [2.0, 3.0], np.eye(2)),
    ("clip at the lower bound", lambda x: dnp.clip(x, 0.0, 1.0), [0.0, 1.0], np.eye(2)),
    ("clip with lo > hi", lambda x: dnp.clip(x[0], x[1], 0.0), [0.5, 2.0],
     np.array([0.0, 0.0])),
    ("copysign", lambda x: dnp.copysign(x[0], x[1]), [0.0, -1.0], np.array([0.0, 0.0])),
    ("hypot at the origin", lambda x: dnp.hypot(x[0], x[1]), [0.0, 0.0], np.zeros(2)),
    ("arctan2 at the origin", lambda x: dnp.arctan2(x[0], x[1]), [0.0, 0.0], np.zeros(2)),
    ("nan_to_num replaced", lambda x: dnp.nan_to_num(x / x[1]), [1.0, 0.0],
     np.array([[0.0, 0.0], [0.0, 0.0]])),
    ("max tie", dnp.max, [1.0, 1.0, 0.0], np.array([0.5, 0.5, 0.0])),
    ("min tie", dnp.min, [0.0, 2.0, 0.0], np.array([0.5, 0.0, 0.5])),
    ("ptp ties", dnp.ptp, [1.0, 1.0, 0.0], np.array([0.5, 0.5, -1.0])),
    ("sort ties (stable order)", dnp.sort, [1.0, 0.0, 1.0],
     np.array([[0, 1, 0], [1, 0, 0], [0, 0, 1.0]])),
    ("median ties", dnp.median, [1.0, 1.0, 3.0], np.array([0.5, 0.5, 0.0])),
    ("std of constant data", dnp.std, [2.0, 2.0, 2.0], np.zeros(3)),
    ("prod with a zero", dnp.prod, [0.0, 2.0, 3.0], np.array([6.0, 0.0, 0.0])),
    ("nansum NaN entry", dnp.nansum, [1.0, np.nan], np.array([1.0, 0.0])),
    ("norm at the zero vector", dnp.linalg.norm, [0.0, 0.0], np.zeros(2)),
    ("inf-norm ties", lambda x: dnp.linalg.norm(x, np.inf), [1.0, -1.0],
     np.array([0.5, -0.5])),
    ("xlogy at x = 0", lambda x: dsp.xlogy(x[0], x[1]), [0.0, 0.0], np.array([-inf, 0.0])),
    ("where: untaken sqrt", lambda x: dnp.where(x > 0, dnp.sqrt(x), 0.0), [-1.0, 4.0],
     np.diag([0.0, 0.25])),
    # the 0 x inf rule
    ("0 x inf: t * sqrt(t)", lambda x: x * dnp.sqrt(x), [0.0, 4.0], np.diag([0.0, 3.0])),
    ("0 x inf: sqrt(x) ** 2 (a convention)", lambda x: dnp.sqrt(x) ** 2, [0.0, 4.0],
     np.diag([0.0, 1.0])),
    ("0 x inf: overflowing exp", dnp.exp, [1.0, 1e5], np.diag([np.exp(1.0), inf])),
    ("0 x inf: hand-written norm", lambda x: dnp.sqrt(dnp.sum(x * x)), [0.0, 0.0],
     np.zeros(2)),
    # poles and domain boundaries: the one-sided limit
    ("reciprocal at 0", dnp.reciprocal, [0.0, 2.0], np.diag([-inf, -0.25])),
    ("cbrt at 0", dnp.cbrt, [0.0, 8.0], np.diag([inf, 1 / 12])),
    ("log2 at 0", dnp.log2, [0.0], np.array([[inf]])),
    ("gammaln at 0", dsp.gammaln, [0.0], np.array([[-inf]])),
    ("ndtri at 0 and 1", dsp.ndtri, [0.0, 1.0], np.diag([inf, inf])),
    ("spence at 0", dsp.spence, [0.0], np.array([[-inf]])),
    ("entr at 0 and for x < 0", dsp.entr, [-0.5, 0.0], np.diag([0.0, inf])),
    ("logaddexp2 at equal infinities", lambda x: dnp.logaddexp2(x[0], x[1]), [-inf, -inf],
     np.array([0.5, 0.5])),
    ("complex sqrt at 0", lambda x: dnp.real(dnp.sqrt(x + 0j)), [0.0], np.array([[np.nan]])),
]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("row, f, x, expected", CASES, ids=[c[0] for c in CASES])
def test_both_engines_give_the_documented_value(row, f, x, expected):
    x = np.array(x)
    for jacobian in (dk.jacfwd(f), dk.jacrev(f)):
        np.testing.assert_array_equal(jacobian(x), expected)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("f, x, expected", [
    (lambda v: dnp.sum(dnp.reciprocal(v)), [0.0, 2.0], np.array([[inf, 0.0], [0.0, 0.25]])),
    (dnp.cbrt, 0.0, -inf),
    (dsp.spence, 0.0, inf),
    (dsp.digamma, 0.0, -inf),
], ids=["reciprocal", "cbrt", "spence", "digamma"])
def test_hessians_at_poles_are_the_one_sided_limit(f, x, expected):
    x = np.array(x)
    for hessian in (dk.jacfwd(dk.jacrev(f)), dk.jacrev(dk.jacfwd(f)), dk.jacrev(dk.jacrev(f))):
        np.testing.assert_array_equal(hessian(x), expected)


def test_eigh_repeated_eigenvalues_give_finite_symmetric_gradients():
    a = np.eye(3)  # every eigenvalue repeated
    grad = dk.grad(lambda m: dnp.sum(dnp.linalg.eigvalsh(m) ** 2))(a)
    np.testing.assert_allclose(grad, 2 * a, rtol=1e-12)
