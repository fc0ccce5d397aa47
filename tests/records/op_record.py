"""The op record and the helpers that make records.

A record is a function with its static arguments bound, the shapes to call it with (each
case a tuple with one shape per argument, broadcasting pairs and scalars included) and the
domain each argument's values come from. Every helper returns a list with one record, so
that a family module collects its records with ``R += unary(...)``.

Shapes avoid the size 5: it is the batch size of the vmap checks, so a batch axis confused
with a data axis cannot go unnoticed by having the same length.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .domains import REAL


@dataclass(frozen=True, repr=False)
class OpRecord:
    """One function to check.

    ``shapes``: the cases, each a tuple with one shape per argument. ``domains``: one per
    argument (or one for all). ``zero_derivative``: the function has no derivative
    (comparisons, ``sign``, ``argmax``, ``stop_gradient``): its jvp and vjp must be zero
    instead of matching finite differences.
    """

    name: str
    fun: Callable
    shapes: tuple
    domains: tuple = (REAL,)
    zero_derivative: bool = False
    order: int = 2
    elementwise: bool = False   # also checked with shapes drawn by Hypothesis

    def domain(self, i):
        return self.domains[i] if len(self.domains) > 1 else self.domains[0]

    def __repr__(self):
        return f"<record {self.name}>"

    def _repr_pretty_(self, printer, cycle):  # how Hypothesis prints falsifying examples
        printer.text(repr(self))

    @property
    def nargs(self):
        return len(self.shapes[0])


def records(name, fun, shapes, domains=(REAL,), **kw):
    """A record with several shape cases: ``shapes`` is a list of cases, each a tuple with
    one shape per argument; ``domains`` has one domain per argument (or one for all)."""
    return [OpRecord(name, fun, tuple(tuple(tuple(s) for s in case) for case in shapes),
                     tuple(domains), **kw)]


UNARY_SHAPES = [((),), ((3,),), ((2, 3),), ((2, 1, 4),)]
BINARY_SHAPES = [((3,), (3,)), ((3, 1), (4,)), ((), (2, 3)), ((2, 3), ()), ((), ()),
                 ((2, 1, 3), (4, 1))]


def unary(name, fun, domain=REAL, shapes=None, **kw):
    """An elementwise function of one array (or another function of one array, given its
    ``shapes``)."""
    return records(name, fun, shapes or UNARY_SHAPES, (domain,),
                   elementwise=shapes is None, **kw)


def binary(name, fun, domains=(REAL, REAL), shapes=None, **kw):
    """A broadcasting function of two arrays."""
    return records(name, fun, shapes or BINARY_SHAPES, domains, elementwise=shapes is None,
                   **kw)


def one(name, fun, *shapes, domains=(REAL,), **kw):
    """A record with a single shape case; ``shapes`` has one shape per argument."""
    return records(name, fun, [shapes], domains, **kw)
