"""The edge samples that drive tests/test_edges.py, one module per family: points where
functions stop being generic (0 and -0, domain boundaries, poles, ties, overflow, NaN
entries, singular matrices, repeated eigenvalues and singular values).

Each family module defines ``EDGES``, a list made with the helpers of
``records.edge_sample``; a new module must be listed in ``FAMILIES``.
"""

from __future__ import annotations

from collections import Counter

from . import elementwise, linalg, misc, reductions, series, special

FAMILIES = (elementwise, linalg, misc, reductions, series, special)

EDGES = tuple(sample for family in FAMILIES for sample in family.EDGES)

_repeated = sorted(i for i, k in Counter(e.id for e in EDGES).items() if k > 1)
assert not _repeated, f"edge sample ids must be unique (give a label): {_repeated}"

# Primitives no edge sample needs to reach, with the reason.
EXEMPT = {
    "odesolve": "an ODE solution has no singular point of its own: SciPy's solver reports a "
                "failed solve, which tests/scipy/test_ode.py checks raises ODESolveError",
    "odesolve_adjoint": "the reverse rule of odesolve, reached by its record in "
                        "records/ops/scipy_signal.py; failed backward solves raise as above",
    "debug_callback": "calls the user's function with its arguments' values and returns a "
                      "constant: no value of its own to be singular at; its record in "
                      "records/ops/conversion.py checks every engine passes values through",
}
