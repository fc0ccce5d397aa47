"""Test-session setup.

Hypothesis wraps a ``@given`` test's settings in one more layer each time pytest runs one of
its parametrized cases, and resolving ``settings.database`` walks that chain recursively.
Under the ``ci`` profile (loaded when ``CI`` is set, as on our CI) the walk goes down the
whole chain, so a test with more than ~950 cases (``test_derivatives`` has thousands)
exceeds Python's default recursion limit. A higher limit is all it needs.
"""

import sys

sys.setrecursionlimit(max(sys.getrecursionlimit(), 20000))
