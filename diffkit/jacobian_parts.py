"""The unit vectors a Jacobian is swept along, and how the swept rows (or columns) are cut
back into one block per input and output leaf. ``diffkit.api`` builds its Jacobians from
these; a chunk of a Jacobian is the rows ``start:stop`` of ``unit_bases``."""

import math

import numpy as np

from .core.zeros import dtype_of, is_complex, shape_of, tangent_dtype
from .ops import elementwise, shape
from .ops.indexing import getitem

__all__ = ["basis_size", "unit_bases", "split_rows", "split_rows_last", "jacobian_tree"]


def basis_size(leaves, doubled=False):
    """How many unit vectors span ``leaves``: one per element, and with ``doubled`` one
    more (``1j``) per complex element."""
    sizes = [math.prod(shape_of(x)) for x in leaves]
    return sum(sizes) + (sum(s for s, x in zip(sizes, leaves) if is_complex(x))
                         if doubled else 0)


def unit_bases(leaves, first=0, stop=None, doubled=False):
    """Rows ``first:stop`` of the identity of size ``N`` (the leaves' total size), cut into
    one stack per leaf: leaf ``i``'s stack has shape ``(rows,) + leaf.shape``.

    With ``doubled``, rows ``N`` onwards are ``1j`` times the unit vectors of the complex
    leaves' elements, in order (see ``_combine``)."""
    sizes = [math.prod(shape_of(x)) for x in leaves]
    total = sum(sizes)
    stop = basis_size(leaves, doubled) if stop is None else stop
    rows = np.arange(first, stop)
    bases, start, imaginary = [], 0, total
    for x, size in zip(leaves, sizes):
        basis = np.zeros((stop - first, size), tangent_dtype(dtype_of(x)))
        hit = (rows >= start) & (rows < start + size)
        basis[hit, rows[hit] - start] = 1
        if doubled and is_complex(x):
            hit = (rows >= imaginary) & (rows < imaginary + size)
            basis[hit, rows[hit] - imaginary] = 1j
            imaginary += size
        bases.append(basis.reshape((stop - first,) + shape_of(x)))
        start += size
    return bases


def _combine(leaves, take, doubled):
    """Cut the derivatives along the unit vectors of ``leaves`` into one part per leaf:
    ``take(start, stop)`` gives those along unit vectors ``start:stop``. With ``doubled``, a
    complex leaf's part is ``d/dx - i d/dy`` from the derivatives along 1 and along 1j
    (real there, since the other side is real): ``jvp(1) - i jvp(1j)`` for a ``C -> R``
    Jacobian, ``vjp(1) - i vjp(1j)`` for ``R -> C``."""
    parts, start, imaginary = [], 0, sum(math.prod(shape_of(x)) for x in leaves)
    for x in leaves:
        size = math.prod(shape_of(x))
        value = take(start, start + size)
        if doubled and is_complex(x):
            value = elementwise.subtract(
                value, elementwise.multiply(take(imaginary, imaginary + size), 1j))
            imaginary += size
        parts.append(value)
        start += size
    return parts


def split_rows(stacked, leaves, block_shape, doubled=False):
    """Cut ``stacked`` (rows first, one block of rows per leaf) into one Jacobian block per
    leaf, each reshaped to ``block_shape(leaf) `` with the row axis's leaf shape placed by it.
    """
    whole = len(leaves) == 1 and not doubled

    def take(start, stop):
        return stacked if whole else getitem(stacked, slice(start, stop))

    rows = _combine(leaves, take, doubled)
    return [block_shape(r, x) for r, x in zip(rows, leaves)]


def jacobian_tree(out_tree, in_tree, blocks):
    """Nest ``blocks[j][i]`` (output leaf j, input leaf i) as out-structure of in-structure."""
    return out_tree.unflatten([in_tree.unflatten(row) for row in blocks])


def split_rows_last(stacked, leaves, out, doubled=False):
    """Blocks of ``stacked`` (``out.shape + (N,)``) per input leaf, each shaped
    ``out.shape + leaf.shape``."""
    whole = len(leaves) == 1 and not doubled
    out_shape = shape_of(out)

    def take(start, stop):
        return stacked if whole else getitem(stacked, (Ellipsis, slice(start, stop)))

    cols = _combine(leaves, take, doubled)
    return [shape.reshape(c, out_shape + shape_of(x)) for c, x in zip(cols, leaves)]
