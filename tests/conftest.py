"""Test-session setup.

Hypothesis wraps a ``@given`` test's settings in one more layer each time pytest runs one of
its parametrized cases, and resolving ``settings.database`` walks that chain recursively.
Under the ``ci`` profile (loaded when ``CI`` is set, as on our CI) the walk goes down the
whole chain, so a test with more than ~950 cases (``test_derivatives`` has thousands)
exceeds Python's default recursion limit. A higher limit is all it needs.

Dask: ``dask_worker_setup.py`` hides ``tests/sparse`` from ``import dask.array``, here and
(as their preload) in the worker processes of any ``LocalCluster`` a test or a guide
example starts.
"""

import os
import sys
from pathlib import Path

import dask_worker_setup  # noqa: F401  (runs its fix in this process)

sys.setrecursionlimit(max(sys.getrecursionlimit(), 20000))

os.environ.setdefault("DASK_DISTRIBUTED__WORKER__PRELOAD",
                      repr([str(Path(__file__).with_name("dask_worker_setup.py"))]))
