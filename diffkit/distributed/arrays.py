"""``vmap`` over ``dask.array.Array`` arguments: a lazy dask array (see the package notes).

The mapped arrays are lined up block for block along their mapped axis (the first dask
array's blocks: the user chose them, and a persisted array stays where it is) and kept in
one block along every other axis. One ``blockwise`` task per block of examples runs the
vmapped function on that block: in one batched call, or with ``chunk_size`` in batched
calls of at most that many examples, which bounds the memory a worker needs for a block
as it bounds it in one process; each output is then a ``map_blocks`` taking its part of
the block's results. Nothing is computed when the array is built: the shapes and dtypes
of the outputs come from a trace over a batch of no examples (``np.empty`` blocks). So
``.compute()`` (or ``.sum(...).compute()``, or ``.to_zarr(...)``) runs it block by block,
holding a few blocks at a time, on whatever scheduler dask uses, a cluster included.

Unmapped arguments are constants: a dask array among them is computed once, when the
array is built.

Task names: every task of the graph is named ``diffkit-vmap-<token>`` (and
``diffkit-vmap-out<j>-<token>`` for output ``j``), the token being dask's ``tokenize`` of
the task (the function, its closure, the constants and the structure of the arguments),
the values of the module globals the function reads (``keys.py``), the chunk size and the
names of the input arrays (which dask derives from their contents or their graphs), as
``map_blocks`` names its tasks. The same function on the same inputs gives the same names
(dask computes it once); anything else gives other names, so two graphs computed together,
or one after the other on a cluster that still holds the first one's results, never take
each other's blocks. A function that draws random numbers, or anything dask cannot
tokenize deterministically, gets a random token: a graph of its own, never shared.
"""

import uuid

import numpy as np

from .. import tree_util
from ..core.zeros import shape_of
from ..errors import BatchingError
from .keys import walk_task

__all__ = ["is_dask_array", "vmap_dask_arrays"]


def is_dask_array(x):
    """Whether ``x`` is a ``dask.array.Array`` (recognised without importing dask)."""
    cls = type(x)
    return cls.__name__ == "Array" and cls.__module__.startswith("dask.array") and \
        hasattr(x, "chunks")


class _Block:
    """One block of examples: the vmapped function on it (in passes of at most
    ``chunk_size`` examples when given), the outputs as a flat tuple with the batch on axis
    0 (an output that is the same for every example is repeated)."""

    def __init__(self, task, chunk_size):
        self.task = task
        self.chunk_size = chunk_size

    def outputs(self, blocks):
        """``(out_tree, leaves)`` of the function mapped over ``blocks``."""
        size = shape_of(blocks[0])[0]
        if self.chunk_size is None or self.chunk_size >= size:
            return self._pass(list(blocks), size)
        parts = [self._pass([b[start:start + self.chunk_size] for b in blocks],
                            min(self.chunk_size, size - start))
                 for start in range(0, size, self.chunk_size)]
        return parts[0][0], tuple(np.concatenate(leaf) for leaf in zip(*(p[1] for p in parts)))

    def _pass(self, blocks, size):
        out, batched = self.task(0, size, blocks)
        leaves, out_tree = tree_util.tree_flatten(out)
        return out_tree, tuple(np.asarray(v) if b is not None else
                               np.broadcast_to(v, (size,) + shape_of(v)).copy()
                               for v, b in zip(leaves, batched))

    def __call__(self, *blocks):
        return self.outputs(blocks)[1]


def _leaf(results, j):
    return results[j]


def graph_token(tokenize, task, chunk_size, arrays):
    """The token naming the tasks of a ``vmap`` graph (see the module notes): ``tokenize``
    is dask's, ``task`` what each block runs, ``arrays`` the mapped dask arrays as the
    blocks see them. Random when the function draws random numbers (``keys.py``) or when
    dask cannot tokenize a part deterministically."""
    walk = walk_task(task)
    if walk.draws:
        return uuid.uuid4().hex
    try:
        return tokenize("diffkit-vmap", task, walk.reads, chunk_size,
                        [a.name for a in arrays], ensure_deterministic=True)
    except Exception:   # whatever cannot be tokenized deterministically: names no graph shares
        return uuid.uuid4().hex


def vmap_dask_arrays(make_task, flat_args, flat_axes, chunk_size, output_axes):
    """The lazy result of ``vmap`` when an argument leaf is a dask array.

    ``make_task(flat_args)`` gives the task computing a batch (``diffkit.api``'s): it is
    called with the unmapped leaves as constants, and run on each block with the mapped
    leaves' block, batch axis first. ``output_axes(out_tree, leaves)`` gives where each
    output's batch axis goes."""
    import dask.array  # optional dependency: only a dask array argument gets here

    da = dask.array

    axes = []
    for i, (x, a) in enumerate(zip(flat_args, flat_axes)):
        ndim = len(np.shape(x))
        if a is not None and not -ndim <= a < ndim:
            raise BatchingError(f"vmap was asked to map argument leaf {i} (shape "
                                f"{np.shape(x)}) over axis {a}, but it has only {ndim} axes")
        axes.append(None if a is None else a % ndim)
    mapped = [i for i, a in enumerate(axes) if a is not None]
    if not mapped:
        raise BatchingError("vmap of dask arrays needs a mapped argument (in_axes not None)")
    sizes = {np.shape(flat_args[i])[axes[i]] for i in mapped}
    if len(sizes) > 1:
        raise BatchingError(f"vmap got different batch sizes {sorted(sizes)}; every mapped "
                            "axis must have the same size")
    arrays = [da.asarray(flat_args[i]) for i in mapped]
    arrays = [a if axes[i] == 0 else da.moveaxis(a, axes[i], 0) for i, a in zip(mapped, arrays)]
    lead = next((a for i, a in zip(mapped, arrays) if is_dask_array(flat_args[i])), arrays[0])
    arrays = [a.rechunk((lead.chunks[0],) + (-1,) * (a.ndim - 1)) for a in arrays]
    consts = [None if a is not None else
              (np.asarray(x.compute()) if is_dask_array(x) else x)
              for x, a in zip(flat_args, axes)]
    # the task sees the mapped leaves with their batch axis first
    task = make_task(consts, [None if a is None else 0 for a in axes])
    block = _Block(task, chunk_size)
    token = graph_token(dask.base.tokenize, task, chunk_size, arrays)

    # shapes and dtypes of the outputs: a trace over a batch of no examples
    out_tree, probe = block.outputs([np.empty((0,) + a.shape[1:], a.dtype) for a in arrays])
    places = output_axes(out_tree, list(probe))

    indexed = []
    for k, a in enumerate(arrays):
        indexed += [a, ("batch",) + tuple(f"arg{k}-axis{d}" for d in range(1, a.ndim))]
    results = da.blockwise(block, ("batch",), *indexed, concatenate=True, dtype=object,
                           meta=np.empty((0,), object), name=f"diffkit-vmap-{token}")
    outs = []
    for j, (p, place) in enumerate(zip(probe, places)):
        if place is None:
            raise BatchingError("vmap of dask arrays: out_axes=None is not supported (every "
                                "output gets the batch axis)")
        leaf = results.map_blocks(
            _leaf, j, dtype=p.dtype, chunks=(results.chunks[0],) + tuple((s,) for s in
                                                                          p.shape[1:]),
            new_axis=list(range(1, p.ndim)), meta=np.empty((0,) * p.ndim, p.dtype),
            name=f"diffkit-vmap-out{j}-{token}")
        outs.append(leaf if place in (0, -p.ndim) else da.moveaxis(leaf, 0, place))
    return out_tree.unflatten(outs)
