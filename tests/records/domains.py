"""Domains: where the values of a record's arguments come from.

A record's checks draw its arguments from one ``Domain`` per argument: positive for ``log``,
away from the kink for ``abs``, on interleaved grids for ``maximum`` so that two arguments
never tie. The standard domains below are shared by every family; a family keeps the domains
only it uses in its own module.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

from diffkit.testing import strategies as dks


@dataclass(frozen=True, repr=False)
class Domain:
    """Where the values of one argument come from."""

    name: str
    min_value: float = -2.0
    max_value: float = 2.0
    avoid: tuple = ()           # points to stay ``margin`` away from
    margin: float = 0.1
    distinct: bool = False      # entries pairwise ``margin`` apart (no ties)
    grid: float | None = None   # entries on ``offset + k * grid``
    offset: float = 0.0
    dtype: type = np.float64
    kind: str = "float"         # "float", "bool" or "int" (integers in the range)

    def __repr__(self):
        return f"<domain {self.name}>"

    def _repr_pretty_(self, printer, cycle):
        printer.text(repr(self))

    def strategy(self, shape):
        """A Hypothesis strategy of arrays of ``shape`` from this domain."""
        if self.kind in ("bool", "int"):
            elements = st.booleans() if self.kind == "bool" else \
                st.integers(int(self.min_value), int(self.max_value))
            return st.lists(elements, min_size=math.prod(shape), max_size=math.prod(shape)).map(
                lambda v: np.array(v, bool if self.kind == "bool" else np.int64).reshape(shape))
        if self.grid is not None:
            points = self._grid_points()
            size = math.prod(shape)
            values = st.permutations(points).map(lambda p: p[:size]) if self.distinct else \
                st.lists(st.sampled_from(points), min_size=size, max_size=size)
            return values.map(lambda v: np.array(v, self.dtype).reshape(shape))
        return dks.arrays(shape, self.dtype, self.min_value, self.max_value,
                          avoid=self.avoid, margin=self.margin, distinct=self.distinct)

    def sample(self, shape, rng):
        """Values from a NumPy generator instead of Hypothesis (for batched arrays, which
        are large, and for the coverage test)."""
        size = math.prod(shape)
        if self.kind == "bool":
            return np.asarray(rng.random(shape) < 0.5)
        if self.kind == "int":
            return np.asarray(rng.integers(int(self.min_value), int(self.max_value) + 1, shape))
        if self.grid is not None or self.distinct:
            points = self._grid_points() if self.grid is not None else [
                self.min_value + k * self.margin
                for k in range(int((self.max_value - self.min_value) / self.margin) + 1)]
            values = rng.permutation(points)[:size] if self.distinct else rng.choice(points, size)
            return np.asarray(values, self.dtype).reshape(shape)
        values = rng.uniform(self.min_value, self.max_value, shape)
        for p in self.avoid:
            close = np.abs(values - p) < self.margin
            values = np.where(close, np.where(values >= p, p + self.margin, p - self.margin),
                              values)
        return np.asarray(values, self.dtype)

    def _grid_points(self):
        first = math.ceil((self.min_value - self.offset) / self.grid)
        last = math.floor((self.max_value - self.offset) / self.grid)
        return [self.offset + k * self.grid for k in range(first, last + 1)]


REAL = Domain("real")
POSITIVE = Domain("positive", 0.2, 3.0)
NONZERO = Domain("nonzero", avoid=(0.0,), margin=0.2)
SMALL = Domain("small", -1.0, 1.0)
LOG1P = Domain("above -1", -0.6, 2.0)
DISTINCT = Domain("distinct", distinct=True, margin=1 / 32)   # room for 129 entries
# Interleaved grids: values of EVEN, ODD and QUARTER never come within 1/16 of each other.
EVEN = Domain("grid", grid=0.25)
ODD = Domain("grid + 1/8", grid=0.25, offset=0.125)
QUARTER = Domain("grid + 1/16", grid=0.25, offset=0.0625)
COARSE = Domain("coarse grid", -1.0, 1.0, grid=0.5)   # ties on purpose (comparisons)
BOOL = Domain("bool", kind="bool")
INDEX = Domain("index 0..2", 0, 2, kind="int")        # valid along any axis of size >= 3
REAL32 = Domain("real float32", dtype=np.float32)
