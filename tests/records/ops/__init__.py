"""The op records that drive tests/test_primitives.py: one record per function of
``diffkit.numpy`` and ``diffkit.scipy``, one module per family.

The generic checker runs every record through finite differences in both modes to order 2,
the Jacobian agreement of all the engines, and ``vmap`` against a loop for several
batch-axis placements. Adding a function to diffkit means adding a record to its family's
module here (or a new module, listed in ``FAMILIES``); a primitive that no record exercises
makes ``test_every_primitive_is_exercised_by_a_record`` fail.

Each family module defines ``RECORDS``, a list made with the helpers of
``records.op_record`` from the domains of ``records.domains``.
"""

from __future__ import annotations

from collections import Counter

from . import (
    arrays,
    at,
    comparisons,
    complex_fft,
    contractions,
    conversion,
    creation,
    elementwise,
    indexing,
    joining,
    keywords,
    linalg,
    numpy_extra,
    reductions,
    scipy_linalg,
    scipy_signal,
    scipy_stats,
    shape,
    special,
    special_series,
    statistics,
    strong_zero,
    ufuncs,
)

# In this order, which is the order of the tests.
FAMILIES = (elementwise, reductions, shape, indexing, joining, contractions, conversion,
            comparisons, arrays, at, complex_fft, creation, keywords, linalg, numpy_extra,
            scipy_linalg, scipy_signal, scipy_stats, special, special_series, statistics,
            strong_zero, ufuncs)

RECORDS = tuple(record for family in FAMILIES for record in family.RECORDS)

RECORD_BY_NAME = {record.name: record for record in RECORDS}
_repeated = sorted(n for n, k in Counter(r.name for r in RECORDS).items() if k > 1)
assert not _repeated, f"record names must be unique: {_repeated}"


def cases():
    """Every (record, shapes) pair, in order."""
    for record in RECORDS:
        for shapes in record.shapes:
            yield record, shapes


def case_id(record, shapes):
    """A case's readable test id: ``add[(3, 1)x(4,)]``."""
    return f"{record.name}[{'x'.join(str(s) for s in shapes)}]"
