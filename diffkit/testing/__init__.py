"""Tools for testing derivatives, for diffkit's own tests and for users' code.

- :func:`check_grads`: derivatives up to some order in forward and reverse mode against
  central finite differences and against each other.
- :func:`assert_jacobians_agree`: the Jacobian from unit-vector VJPs equals the one from
  unit-vector JVPs, and ``jacfwd``, ``jacrev`` and ``jacobian`` equal them.
- :func:`check_vmap`: ``vmap`` equals a Python loop over slices.
- :func:`check_edge`: every check at one edge point (a zero, a pole, a tie, a singular
  matrix): the value against NumPy's, ``jacfwd == jacrev`` bit for bit, finite differences
  or a documented convention, ``vmap`` against loops, a symmetric Hessian, float32 kept.
- ``diffkit.testing.strategies``: Hypothesis strategies (well-conditioned arrays, shapes,
  broadcastable shapes, random differentiable programs). It needs ``hypothesis``
  (``pip install 'diffkit[test]'``); this package itself does not.
"""

from __future__ import annotations

import importlib
from typing import Any

from .checks import assert_jacobians_agree, check_grads, check_vmap
from .edges import check_edge

__all__ = ["check_grads", "assert_jacobians_agree", "check_vmap", "check_edge"]


def __getattr__(name: str) -> Any:
    # ``diffkit.testing.strategies`` imports hypothesis, so it is loaded only when asked for.
    if name == "strategies":
        return importlib.import_module(f"{__name__}.strategies")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
