"""Fixtures of the distributed tests: a Dask ``LocalCluster`` of two worker processes with
one thread each, and a ``ProcessPoolExecutor`` of two processes, each started once per
module (starting a cluster costs about a second)."""

import concurrent.futures
import importlib.util
import sys
from pathlib import Path

import pytest

TESTS = str(Path(__file__).resolve().parents[1])


def _hide_the_tests_sparse_directory():
    """``tests/sparse`` (no ``__init__``) is importable as a namespace package ``sparse``
    from ``tests/``, and ``import dask.array`` takes it for pydata's sparse: hide it here,
    and keep ``tests/`` off the path the worker processes start with."""
    spec = importlib.util.find_spec("sparse")
    if spec is not None and spec.origin is None:
        sys.modules["sparse"] = None


_hide_the_tests_sparse_directory()


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed", reason="pip install 'diffkit[distributed]'")
    path = sys.path[:]
    sys.path[:] = [p for p in path if p != TESTS]   # what the spawned workers start with
    try:
        cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                           dashboard_address=None)
    finally:
        sys.path[:] = path
    with distributed.Client(cluster) as client:
        yield client
    cluster.close()


@pytest.fixture(scope="module")
def pool():
    with concurrent.futures.ProcessPoolExecutor(2) as executor:
        yield executor


@pytest.fixture(scope="module")
def by_value():
    """Test modules are pickled by value (as a user's script is): the worker processes need
    not import them."""
    cloudpickle = pytest.importorskip("cloudpickle")

    def register(name):
        module = sys.modules[name]
        cloudpickle.register_pickle_by_value(module)
        return module

    return register
