"""The edge sample and the helpers that make samples.

The op records (``records.ops``) draw well-behaved values, away from zeros, poles, kinks and
ties, so that finite differences can check every rule to order 2. An edge sample visits the
rest: it names an op record (so it runs the same function), gives concrete arguments and
says what holds there:

- ``differentiable=True``: finite differences (central) agree with the Jacobian, and with the
  Hessian (``second_order``, default True) through finite differences of the gradient;
- ``differentiable="one-sided"`` with ``fd_side=+1/-1``: the point is on a domain boundary and
  the one-sided finite difference into the domain agrees;
- ``differentiable=False``: a kink, jump, pole or overflow: no finite differences, and
  ``jacobian`` (when given) is the documented convention (docs/conventions.md) or the exact
  limit that must come out, in the flat real coordinates of ``diffkit.testing.edges``.

Always: the value equals ``reference`` (NumPy's or SciPy's own function, found by name when
not given), jacfwd == jacrev bit for bit, vmap equals a loop (function, jvp and vjp), the
Hessian is symmetric, and float32/complex64 arguments keep their precision.

``known="<branch>: <reason>"`` marks a sample that fails today because of a bug another line
of work is fixing; its test is a strict xfail, so it turns into an error when the fix lands.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.special

from .ops import RECORD_BY_NAME

AUTO = object()


@dataclass(frozen=True, repr=False)
class EdgeSample:
    """One record at one edge point."""

    record: str
    args: tuple
    label: str
    reference: Callable | None
    differentiable: bool | str = True
    fd_side: int = 0
    jacobian: object = None
    hessian: object = None
    second_order: bool | None = None
    known: str | None = None
    batching: bool = True
    dtypes: bool = True
    value_rtol: float = 1e-12
    ulps: int = 0               # > 0 only for compositions (see check_edge)
    fd_rtol: float = 1e-5

    def __repr__(self):
        return f"<edge {self.id}>"

    @property
    def id(self):
        return f"{self.record}[{self.label}]"

    @property
    def fun(self):
        return RECORD_BY_NAME[self.record].fun


def _reference_by_name(name):
    """NumPy's or SciPy's function of the record's name: ``exp`` -> ``np.exp``,
    ``special_erf`` -> ``scipy.special.erf``, ``complex_exp`` -> ``np.exp``,
    ``linalg_det`` -> ``np.linalg.det``."""
    for prefix, module in (("special_", scipy.special), ("linalg_", np.linalg),
                           ("complex_", np), ("", np)):
        if name.startswith(prefix) and hasattr(module, name[len(prefix):]):
            return getattr(module, name[len(prefix):])
    raise LookupError(f"no NumPy or SciPy function named after the record {name!r}: give "
                      "the edge sample a reference")


def _label(args):
    def one(a):
        a = np.asarray(a)
        if a.size <= 4:
            return np.array2string(a.ravel(), separator=",", precision=3).replace(" ", "") \
                if a.ndim else repr(a.item())
        return f"{a.dtype.kind}{a.shape}"
    return ";".join(one(a) for a in args)


def _as_arg(a):
    if isinstance(a, np.ndarray):
        return a
    if isinstance(a, (bool, np.bool_)):
        return np.asarray(a)
    if isinstance(a, (int, np.integer)):
        return np.asarray(float(a))
    return np.asarray(a, dtype=None if np.iscomplexobj(a) or
                      np.asarray(a).dtype.kind in "iub" else np.float64)


def edge(record, *args, label=None, ref=AUTO, **flags):
    """One sample: ``record`` (a record name) at ``args``. Python numbers and lists
    become float64 arrays (pass an ndarray to keep another dtype); ``ref`` is NumPy's or
    SciPy's function (``None``: no value check), found by the record's name by default."""
    if record not in RECORD_BY_NAME:
        raise KeyError(f"edge sample for {record!r}: no such op record in tests/records/ops/")
    args = tuple(_as_arg(a) for a in args)
    if ref is AUTO:
        ref = _reference_by_name(record)
    if flags.get("differentiable") == "one-sided" and flags.get("fd_side") not in (1, -1):
        raise ValueError(f"{record}: a one-sided sample needs fd_side=+1 or -1")
    if RECORD_BY_NAME[record].zero_derivative:
        flags.setdefault("differentiable", False)
        flags.setdefault("jacobian", 0.0)
    return [EdgeSample(record, args, label or _label(args), ref, **flags)]


def kink(record, *args, jacobian, **flags):
    """A sample at a kink, jump or pole: no finite differences, the documented Jacobian."""
    return edge(record, *args, differentiable=False, jacobian=jacobian, **flags)


def boundary(record, *args, side, **flags):
    """A sample on a domain boundary: one-sided finite differences towards ``side``."""
    return edge(record, *args, differentiable="one-sided", fd_side=side, **flags)
