"""Hide ``tests/sparse`` from ``import sparse``, in the test process and in the Dask
workers the tests start.

``tests/`` is on ``sys.path`` while the tests run (pytest puts it there to import
``conftest.py`` and the test modules), and ``tests/sparse`` has no ``__init__``, so
``import sparse`` finds it as a namespace package. ``import dask.array`` takes any
importable ``sparse`` for pydata's sparse arrays and fails on it. The worker processes of
a ``LocalCluster`` start with the test process's ``sys.path``; ``tests/conftest.py`` names
this file as their preload (``distributed.worker.preload``), so it runs there too.
"""

import importlib.util
import sys


def hide_tests_sparse():
    spec = importlib.util.find_spec("sparse")
    if spec is not None and spec.origin is None and all(
            "tests" in str(p) for p in spec.submodule_search_locations or []):
        sys.modules["sparse"] = None


hide_tests_sparse()
