"""``workers=`` of the ``diffkit.scipy.optimize`` adapters: the Jacobians of
``least_squares`` and ``root`` and the dense Hessian of ``minimize`` computed in chunks on a
process pool or a map-like callable give the solution of the local run, and SciPy's own
``workers`` convention (``Pool.map``-like callables) is accepted."""

import numpy as np
import pytest

import diffkit.numpy as dnp
from diffkit import chunking
from diffkit.scipy import optimize as dko

pytest.importorskip("cloudpickle", reason="pip install 'diffkit[distributed]'")

RNG = np.random.default_rng(5)
A = RNG.normal(size=(30, 8))
B = RNG.normal(size=30)


@pytest.fixture(scope="module", autouse=True)
def _by_value(by_value):
    by_value(__name__)


@pytest.fixture(autouse=True)
def _no_pilot(monkeypatch):
    """The pilot run here stops after one row, so that the rest of these small Jacobians
    goes to the workers (by default, work this small stays in the calling process)."""
    monkeypatch.setattr(chunking, "PILOT_SECONDS", 0.0)


def residuals(p):
    return dnp.tanh(A @ p) - B * 0.5


def counting_map(log):
    def workers(fun, iterable):
        items = list(iterable)
        log.append(len(items))
        return map(fun, items)
    return workers


def test_least_squares_jacobian_on_a_pool(pool):
    local = dko.least_squares(residuals, np.zeros(8))
    remote = dko.least_squares(residuals, np.zeros(8), workers=pool)
    np.testing.assert_allclose(remote.x, local.x, rtol=1e-12)
    np.testing.assert_allclose(remote.jac, local.jac, rtol=1e-12)
    assert remote.nfev == local.nfev


def test_least_squares_takes_scipys_map_like_workers():
    log = []
    local = dko.least_squares(residuals, np.zeros(8))
    mapped = dko.least_squares(residuals, np.zeros(8), workers=counting_map(log))
    np.testing.assert_allclose(mapped.x, local.x, rtol=1e-12)
    assert log, "the Jacobian's chunks did not go through workers"


def test_root_jacobian_on_a_map_like_callable():
    log = []
    M = np.eye(6) * 3 + RNG.normal(size=(6, 6)) * 0.2
    fun = lambda x: M @ x + 0.1 * dnp.sin(x) - 1.0  # noqa: E731
    local = dko.root(fun, np.zeros(6))
    mapped = dko.root(fun, np.zeros(6), workers=counting_map(log))
    np.testing.assert_allclose(mapped.x, local.x, rtol=1e-12)
    np.testing.assert_allclose(M @ mapped.x + 0.1 * np.sin(mapped.x), 1.0, atol=1e-10)
    assert log


def test_minimize_dense_hessian_on_a_pool(pool):
    def fun(p):
        return dnp.sum(dnp.log(dnp.cosh(A @ p - B))) + 0.5 * dnp.sum(p ** 2)
    local = dko.minimize(fun, np.zeros(8), method="trust-exact")
    remote = dko.minimize(fun, np.zeros(8), method="trust-exact", workers=pool)
    np.testing.assert_allclose(remote.x, local.x, rtol=1e-10)
    assert remote.nit == local.nit
