"""The tables of the generic checkers, as one package.

- ``RECORDS`` (``records.ops``): one op record per function of ``diffkit.numpy`` and
  ``diffkit.scipy``, checked by tests/test_primitives.py on well-behaved values; ``cases()``
  and ``case_id`` list its (record, shapes) cases with their test ids.
- ``EDGES`` (``records.edges``): edge samples, the same functions at the points where they
  stop being generic, checked by tests/test_edges.py; ``EXEMPT`` lists the primitives that
  need no edge sample, with the reason.

The building blocks are public names of their own modules: ``domains`` (where argument
values come from), ``op_record`` (the record and ``records``/``one``/``unary``/``binary``),
``edge_sample`` (the sample and ``edge``/``kink``/``boundary``), ``matrices`` (well-conditioned
matrices built from drawn values, and their inverses) and ``masks`` (the fixed NaN masks).
Family modules import only these, never each other.
"""

from .edges import EDGES, EXEMPT
from .ops import RECORD_BY_NAME, RECORDS, case_id, cases

__all__ = ["EDGES", "EXEMPT", "RECORDS", "RECORD_BY_NAME", "case_id", "cases"]
