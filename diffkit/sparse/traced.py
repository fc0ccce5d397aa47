"""Sparse derivatives inside another transformation (``vmap``, ``jit``, ``grad``): the
values are traced there, so they cannot go into a SciPy array yet.

The derivative is then a ``TracedSparse``: a pytree node whose one leaf is the traced
vector of stored values (``data``, in the pattern's CSR order) and whose static part is the
pattern. When the transformation hands its results back, the node is rebuilt from plain
values: a ``scipy.sparse.csr_array`` for one vector of values (``jit``), and for values
with leading batch axes (``vmap``, ``out_axes=0``) a ``scipy.sparse.coo_array`` of shape
``(*batch, rows, cols)``, every slice with the pattern's structure.
"""

import numpy as np

from .. import numpy as dnp
from ..core.trace import Tracer
from ..errors import ShapeMismatchError
from ..ops.sparsity_rules import scipy_sparse
from ..tree_util import register_pytree_node
from . import coloring as col

__all__ = ["TracedSparse", "sparse_result", "empty_result"]


class _Structure:
    """The static part of a ``TracedSparse``: its pattern (compared by identity, as the
    cached colourings keep one pattern object per signature and path)."""

    __slots__ = ("pattern",)

    def __init__(self, pattern):
        self.pattern = pattern

    def __repr__(self):
        return f"pattern{self.pattern.shape} with {self.pattern.nnz} entries"

    def build(self, data):
        if isinstance(data, Tracer):
            return TracedSparse(data, self)
        data = np.asarray(data)
        nnz = self.pattern.nnz
        if data.ndim == 0 or data.shape[-1] != nnz:
            raise ShapeMismatchError(
                f"a sparse derivative's {nnz} stored values came back with shape "
                f"{data.shape}: under vmap its batch axis must come first (out_axes=0)")
        if data.ndim == 1:
            return col.from_gather(data, slice(None), self.pattern)
        batch = data.shape[:-1]
        rows = np.repeat(np.arange(self.pattern.shape[0]), np.diff(self.pattern.indptr))
        where = np.indices(batch).reshape(len(batch), -1)
        coords = [np.repeat(axis, nnz) for axis in where]
        count = where.shape[1]
        coords += [np.tile(rows, count), np.tile(self.pattern.indices, count)]
        return scipy_sparse().coo_array((data.ravel(), tuple(coords)),
                                        shape=(*batch, *self.pattern.shape))


class TracedSparse:
    """A sparse derivative whose stored values ``data`` are traced by an outer
    transformation; ``pattern`` gives their places (CSR order)."""

    __slots__ = ("data", "structure")

    def __init__(self, data, structure):
        self.data, self.structure = data, structure

    @property
    def pattern(self):
        return self.structure.pattern

    @property
    def shape(self):
        return self.structure.pattern.shape

    def __repr__(self):
        return f"TracedSparse({self.structure!r}, data={self.data!r})"


register_pytree_node(TracedSparse, lambda t: ((t.data,), t.structure),
                     lambda structure, children: structure.build(children[0]))


def sparse_result(compressed, take, pattern, traced=False):
    """The derivative from its compressed form: a CSR array, or a ``TracedSparse`` inside
    an outer transformation (``traced``: the input is traced there), even where the values
    do not depend on the input (a linear function's), so that the transformation hands
    back the derivative it promises (under ``vmap``, one slice per member)."""
    if traced or isinstance(compressed, Tracer):
        return TracedSparse(dnp.reshape(compressed, (-1,))[take], _Structure(pattern))
    return col.from_gather(compressed, take, pattern)


def empty_result(pattern, dtype, traced):
    """A derivative without stored entries (``traced``: inside another transformation)."""
    if traced:
        return TracedSparse(np.zeros(0, dtype), _Structure(pattern))
    return scipy_sparse().csr_array(pattern.shape, dtype=dtype)
