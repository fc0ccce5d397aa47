"""``workers=`` of the ``diffkit.scipy.optimize`` adapters: the Jacobians of
``least_squares`` and ``root`` and the dense Hessian of ``minimize`` computed in chunks on a
process pool or a map-like callable give the solution of the local run, and SciPy's own
``workers`` convention (``Pool.map``-like callables, or a number of processes) is
accepted."""

import concurrent.futures
import os

import numpy as np
import pytest

import diffkit.numpy as dnp
from diffkit import chunking
from diffkit.errors import OptionError
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


class _RecordedPool(concurrent.futures.ProcessPoolExecutor):
    """A process pool that notes its size, its tasks and its shutdown."""

    log = []

    def __init__(self, max_workers):
        super().__init__(max_workers=max_workers)
        self.log.append(("made", max_workers))

    def submit(self, fn, /, *args, **kwargs):
        self.log.append("task")
        return super().submit(fn, *args, **kwargs)

    def shutdown(self, *args, **kwargs):
        self.log.append("shut")
        return super().shutdown(*args, **kwargs)


def test_an_integer_is_a_pool_of_that_many_processes_for_the_solve(monkeypatch):
    """SciPy's integer workers: a pool of that size serves the whole solve and is shut
    down when it returns (-1: one process per CPU)."""
    monkeypatch.setattr(chunking.concurrent.futures, "ProcessPoolExecutor", _RecordedPool)
    _RecordedPool.log = []

    def fun(p):
        return dnp.sum(dnp.log(dnp.cosh(A @ p - B))) + 0.5 * dnp.sum(p ** 2)
    local = dko.minimize(fun, np.zeros(8), method="trust-exact")
    pooled = dko.minimize(fun, np.zeros(8), method="trust-exact", workers=2)
    np.testing.assert_allclose(pooled.x, local.x, rtol=1e-10)
    assert _RecordedPool.log[0] == ("made", 2) and _RecordedPool.log[-1] == "shut"
    assert "task" in _RecordedPool.log and _RecordedPool.log.count(("made", 2)) == 1

    _RecordedPool.log = []
    squares = dko.least_squares(residuals, np.zeros(8), workers=-1)
    np.testing.assert_allclose(squares.x, dko.least_squares(residuals, np.zeros(8)).x,
                               rtol=1e-12)
    assert _RecordedPool.log[0] == ("made", os.cpu_count()) and _RecordedPool.log[-1] == "shut"


@pytest.mark.parametrize("workers", [0, -2])
def test_an_integer_that_is_no_number_of_processes_is_refused(workers):
    with pytest.raises(OptionError, match="positive integer, -1 for one per CPU"):
        dko.root(residuals, np.zeros(8), workers=workers)
