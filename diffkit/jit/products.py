"""Merging matrix-vector products that share their matrix, for the plain replay.

A forward-over-reverse derivative multiplies one matrix by several vectors that do not
depend on each other: ``A @ x`` and ``A @ v`` in a Hessian-vector product (the primal and
its tangent). Each product reads all of ``A`` from memory; for a matrix larger than the
processor's caches, that read is the whole cost of a matrix-vector product. ``merge``
turns such a pair into one equation that reads ``A`` once.

How the merged products run (``shared_matvecs``) was chosen by measurement with
OpenBLAS on one thread (``benchmarks/RESULTS.md``): a single matrix product with the
vectors as the columns of an n x 2 matrix (``A @ np.stack([x, v], axis=1)``, in either
memory order, or ``np.stack([x, v]) @ A.T``) is about twice as slow as two matrix-vector
products, since the general product packs ``A`` into buffers first. What reads ``A`` once
at matrix-vector speed is a loop over blocks of rows small enough to stay in the level-2
cache: each block multiplies every vector while it is there. That is faster only when
``A`` is C-contiguous (its rows are the blocks) and does not fit in the caches anyway, so:

- the pass merges only products whose shared matrix has at least ``MIN_ENTRIES`` entries
  (24 MiB of float64, three quarters of the measuring machine's 32 MiB level-3 cache;
  on smaller matrices the products stay as they are). Measured in processor time on one
  thread: 2000 x 2000, 1.18 ms merged against 1.52 ms for the two products; 2500 x 2500,
  2.1 ms against 2.8 ms; 1750 x 1750, even; 1500 x 1500 and smaller, slower merged (the
  matrix stays in the level-3 cache between two separate products);
- at run time the merged products use the blocks when the matrix (``A`` for ``A @ x``,
  ``A.T`` for ``x @ A``) is C-contiguous, and otherwise the separate products, exactly as
  recorded. Each entry of a block's product is the same dot product as in the whole
  product, computed by the same kernel.

Only the plain replay runs merged products; a graph bound under an enclosing
transformation keeps its products as recorded.
"""

import math

import numpy as np

from ..core.primitive import Primitive, Traits
from ..interpreters.ir import Equation, Program

MIN_ENTRIES = 3 * 2 ** 20   # 24 MiB of float64
BLOCK_BYTES = 2 ** 19       # the rows of one block: 512 KiB, half of a 1 MiB level-2 cache
MIN_BLOCK_ROWS = 16


def shared_matvecs(matrix, *vectors, side):
    """``matrix @ v`` for each vector (``side="left"``) or ``v @ matrix``
    (``side="right"``), reading the matrix once where it is C-contiguous (as
    ``matrix.T`` for the right side): a tuple of results."""
    rows = matrix if side == "left" else matrix.T
    if not rows.flags.c_contiguous or rows.ndim != 2:
        if side == "left":
            return tuple(np.matmul(matrix, v) for v in vectors)
        return tuple(np.matmul(v, matrix) for v in vectors)
    n, k = rows.shape
    outs = tuple(np.empty(n, np.result_type(rows, v)) for v in vectors)
    step = max(MIN_BLOCK_ROWS, BLOCK_BYTES // max(1, k * rows.itemsize))
    for start in range(0, n, step):
        block = rows[start:start + step]
        for v, out in zip(vectors, outs):
            np.matmul(block, v, out=out[start:start + step])
    return outs


#: The primitive of a merged equation (listing and replay only: no rules).
SHARED_MATVECS = Primitive("shared_matvecs", shared_matvecs, multiple_results=True,
                           register=False,
                           traits=Traits(matrix_products=lambda params: params["side"]))


def _operand(program, ref):
    """``(shape, dtype)`` of an input."""
    if type(ref) is int:
        return program.avals[ref]
    value = ref.value
    return np.shape(value), np.asarray(value).dtype if not hasattr(value, "dtype") \
        else value.dtype


def _candidate(program, eqn):
    """``(side, matrix ref key, matrix ref, vector ref)`` for a float matrix-vector product
    with a large matrix, else None."""
    if eqn.prim.traits.operator != "@" or eqn.params or eqn.errstate or len(eqn.inputs) != 2:
        return None
    a, b = eqn.inputs
    (sa, da), (sb, db) = _operand(program, a), _operand(program, b)
    if len(sa) == 2 and len(sb) == 1:
        side, matrix, vector, shape = "left", a, b, sa
    elif len(sa) == 1 and len(sb) == 2:
        side, matrix, vector, shape = "right", b, a, sb
    else:
        return None
    dtype = np.dtype(eqn.avals[0][1])
    if dtype.kind != "f" or np.dtype(da) != dtype or np.dtype(db) != dtype \
            or math.prod(shape) < MIN_ENTRIES:
        return None
    key = (side, matrix if type(matrix) is int else ("const", id(matrix.value)))
    return key, matrix, vector


def merge(program):
    """A copy of ``program`` in which each pair of independent matrix-vector products with
    the same large matrix (on the same side) is one ``shared_matvecs`` equation, placed
    where the earlier product was (when the later one's vector is known there) or where
    the later one was (when nothing in between reads the earlier result); the program
    itself when there is no such pair."""
    candidates = [(j, found) for j, found in enumerate(
        _candidate(program, eqn) for eqn in program.equations) if found is not None]
    if len(candidates) < 2:   # no pair (most programs: no large matrix at all)
        return program
    equations = list(program.equations)
    index = program.def_use()
    open_products = {}   # key -> index of an unpaired product
    dropped = set()
    for j, (key, matrix, vector) in candidates:
        eqn = equations[j]
        i = open_products.pop(key, None)
        if i is None:
            open_products[key] = j
            continue
        first = equations[i]
        first_vector = _candidate(program, first)[2]
        merged = Equation(SHARED_MATVECS, {"side": key[0]}, (matrix, first_vector, vector),
                          first.outs + eqn.outs, first.avals + eqn.avals, None)
        made_at = index.maker(vector) if type(vector) is int else None
        if made_at is None or made_at < i:
            equations[i] = merged            # the later product moves up
            dropped.add(j)
        elif all(not i < r <= j for r in index.readers(first.outs[0])):
            equations[j] = merged            # the earlier product moves down
            dropped.add(i)
        else:
            open_products[key] = j
    if not dropped:
        return program
    copy = Program.__new__(Program)
    copy.__dict__.update(program.__dict__)
    copy.equations = [e for i, e in enumerate(equations) if i not in dropped]
    return copy
