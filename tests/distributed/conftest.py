"""Fixtures of the distributed tests: a Dask ``LocalCluster`` of two worker processes with
one thread each, and a ``ProcessPoolExecutor`` of two processes, each started once per
module (starting a cluster costs about a second)."""

import concurrent.futures
import sys

import pytest


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed", reason="pip install 'diffkit[distributed]'")
    cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                       dashboard_address=None)
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
    cloudpickle = pytest.importorskip("cloudpickle",
                                      reason="pip install 'diffkit[distributed]'")

    def register(name):
        module = sys.modules[name]
        cloudpickle.register_pickle_by_value(module)
        return module

    return register
