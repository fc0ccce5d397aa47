"""Records that send a zero derivative through an infinite or undefined partial (see
tests/records/ops/__init__.py and the 0 x inf rule in docs/conventions.md).

The branch a ``where`` does not take overflows (``exp(1000 x)``) or leaves the domain
(``sqrt`` of a negative number): its cotangent, and in ``jacfwd`` some of its tangents,
are 0 there and must give 0, not NaN, so the functions are smooth (they equal ``x``, or
``x * x``) and the generic checker's finite differences apply.
"""

import numpy as np

import diffkit.numpy as dnp

from ..domains import REAL
from ..op_record import unary


def _untaken_overflow(x):
    with np.errstate(over="ignore", invalid="ignore"):
        return dnp.where(x > 10.0, dnp.exp(1000.0 * x), x)


def _untaken_domain_error(x):
    with np.errstate(over="ignore", invalid="ignore"):
        return dnp.where(x > 10.0, dnp.sqrt(x - 10.0), x * x)


RECORDS = []
RECORDS += unary("where_untaken_overflow", _untaken_overflow, REAL)
RECORDS += unary("where_untaken_domain_error", _untaken_domain_error, REAL)
