"""Indexing: ``getitem`` (NumPy's ``x[index]``) and its adjoint ``scatter_add``.

How an index reaches the primitives
-----------------------------------
Tracers may only be positional arguments of a primitive, and an index can hold traced
integer arrays (``x[label]`` under ``vmap``). So ``getitem`` splits the index into

- ``arrays``: the integer index arrays, passed positionally after ``x``
  (``getitem_p(x, *arrays, spec=spec)``), and
- ``spec``: a static, hashable tuple with one entry per index position:

  - ``ARRAY``: the next positional index array (an advanced index);
  - an ``int``: an integer, already bounds-checked and made non-negative;
  - ``(start, stop, step)``: a slice, normalised by ``_canonical_slice``;
  - ``None``: ``np.newaxis``;
  - ``Ellipsis``: kept only when it stands for no axis at all, because NumPy still counts
    it as separating advanced indices (otherwise it is expanded into full slices).

The wrapper does all of NumPy's parsing once: an ``Ellipsis`` becomes full slices, lists
and other array-likes (a pandas ``Series`` or ``Index``, a ``range``: ``np.asarray``, as
NumPy reads them) become arrays, a concrete boolean mask becomes integer arrays
(``np.nonzero``), a 0-d boolean becomes a new axis indexed by ``[0]`` or ``[]``, and
indices are bounds-checked. The primitives then only ever see this canonical form.

Where the result's axes go (NumPy's rule)
-----------------------------------------
Integer arrays and, when any array is present, integers are *advanced* indices. Their
broadcast shape ``S`` replaces the indexed axes in place when the advanced indices are
adjacent in the index, and goes to the front of the result when they are separated by a
slice, ``None`` or ``...``. ``_advanced_block`` computes this once; the batching rules use
it to keep the batch axis where the engines want it (axis 0).

Batching without a loop
-----------------------
- ``x`` batched, index arrays not: index with a leading full slice over the batch axis.
- Any index array batched: add ``arange(batch)`` as an advanced index over ``x``'s batch
  axis (when ``x`` is batched) and give each batched index array the batch as its leading
  broadcast axis, so example ``b`` reads ``x[b][index_b]`` in one gather.
``scatter_add`` batches the same way with the cotangent laid out to match. Both rules are
loop-free for every index, so the engine's loop fallback is never used here.
"""

import collections.abc
import operator

import numpy as np

from ..core.concrete import concrete_value, holds_tracer, static_value
from ..core.primitive import Primitive, Traits
from ..core.trace import Tracer, array_likes
from ..core.zeros import Zero, as_array, dtype_of, shape_of, tangent_dtype
from ..errors import TracerConversionError
from . import elementwise as ew
from . import reductions
from . import shape as _shape
from . import sparsity_rules as sr
from . import taylor_arithmetic as ta


class _ArraySlot:
    """Placeholder in a ``spec`` for the next positional index array."""

    __slots__ = ()

    def __repr__(self):
        return "ARRAY"

    def __reduce__(self):
        return "ARRAY"


ARRAY = _ArraySlot()

# --- array-likes NumPy reads through np.asarray -------------------------------------------

_ARRAY_PROTOCOL = ("__array__", "__array_interface__", "__array_struct__")
# Types NumPy takes as they are (or that are no array-likes at all): never converted here.
_NOT_FOREIGN = (Tracer, np.ndarray, np.generic, list, tuple, dict, str, bytes, bytearray,
                type, slice, int, float, complex)
_FOREIGN_TYPES = {}   # type -> whether reads_as_array(type)


def _has_array_data(cls):
    """Whether NumPy reads objects of type ``cls`` as arrays of their own data: the array
    protocol (``__array__``, the array interface), a ``range`` or a ``memoryview``."""
    return issubclass(cls, (range, memoryview)) or any(hasattr(cls, n) for n in _ARRAY_PROTOCOL)


def reads_as_array(cls):
    """Whether an object of type ``cls`` is an array-like that NumPy reads through
    ``np.asarray`` but diffkit's operations would not see as an array: anything with
    ``__array__`` (or the array interface) that is not an ndarray or a traced value (a pandas
    ``Series``, ``DataFrame`` or ``Index``, a dask array ...), a ``range``, a ``memoryview``,
    and any other sequence (a ``deque``). Lists and tuples have their own reading (they may
    hold traced values), as have NumPy's arrays and scalars and Python's numbers."""
    known = _FOREIGN_TYPES.get(cls)
    if known is None:
        known = not issubclass(cls, _NOT_FOREIGN) and (
            _has_array_data(cls) or issubclass(cls, collections.abc.Sequence))
        _FOREIGN_TYPES[cls] = known
    return known


def read_array_like(x):
    """``x`` as NumPy reads it when ``reads_as_array(type(x))``, else ``x`` itself.

    An object with ``__array__`` (or the array interface), a ``range`` or a ``memoryview``
    becomes ``np.asarray(x)`` (a boolean pandas ``Series`` a boolean mask, a ``DataFrame``
    its 2-D values); another sequence becomes the list of its items when one of them is
    traced (a list, which diffkit stacks keeping their derivatives), else
    ``np.asarray(x)``."""
    cls = type(x)
    if not reads_as_array(cls):
        return x
    items = traced_items(x)
    return np.asarray(x) if items is None else items


# traced operations read a foreign array-like argument as NumPy does (core owns the slot)
array_likes.register(reads_as_array, read_array_like)


def traced_items(x):
    """The items of ``x``, a sequence other than a list or tuple (a ``deque``), as a list
    when one of them is traced (NumPy would read them as one array); else None."""
    if not reads_as_array(type(x)) or _has_array_data(type(x)):
        return None
    items = list(x)
    return items if holds_tracer(items) else None


def read_entries(value):
    """Nested lists/tuples with every entry read by ``read_array_like`` (``[series, x]``
    as ``np.array`` reads it); anything else as ``read_array_like`` reads it."""
    if isinstance(value, list):
        return [read_entries(v) for v in value]
    if isinstance(value, tuple):
        return tuple(read_entries(v) for v in value)
    return read_array_like(value)


# --- the canonical index ------------------------------------------------------------------


def _build(spec, arrays):
    """The NumPy index that ``spec`` and ``arrays`` stand for."""
    arrays = iter(arrays)
    index = []
    for entry in spec:
        if entry is ARRAY:
            index.append(next(arrays))
        elif type(entry) is tuple:
            index.append(slice(*entry))
        else:
            index.append(entry)
    return tuple(index)


def _full(size):
    return (0, size, 1)


def _advanced_block(spec, array_shapes):
    """Where NumPy puts the advanced indices' axes in the result of indexing with ``spec``.

    Returns ``None`` for basic indexing, else ``(position, rank, moved)``: the block of
    ``rank`` broadcast axes starts at ``position`` of the result, and ``moved`` says that
    the advanced indices are separated, so NumPy moved the block to the front
    (``position`` is then 0). ``array_shapes`` are the shapes of the index arrays.
    """
    if not array_shapes:
        return None
    positions = [i for i, e in enumerate(spec) if e is ARRAY or type(e) is int]
    rank = len(np.broadcast_shapes(*array_shapes))
    if positions[-1] - positions[0] + 1 != len(positions):
        return 0, rank, True
    before = sum(1 for e in spec[:positions[0]] if e is not Ellipsis)  # slices and Nones
    return before, rank, False


def _plain_bounds(s):
    """Whether the slice's bounds are Python ints or None (no conversion to check)."""
    return all(type(v) is int or v is None for v in (s.start, s.stop, s.step))


def _canonical_slice(s, size):
    """``s`` on an axis of ``size`` as ``(start, stop, step)``: ``start`` is a valid index
    (unless the slice is empty, then ``(0, 0, 1)``) and a negative step that runs past
    index 0 has ``stop`` ``None``."""
    start, stop, step = s.indices(size)
    if not len(range(start, stop, step)):
        return 0, 0, 1
    return start, (None if stop < 0 else stop), step


def _index_error(item):
    return IndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) "
                      f"and integer or boolean arrays are valid indices (got {item!r})")


def _ragged_mask_error(mask):
    return TracerConversionError(
        f"Boolean mask indexing x[mask] with a mask batched by vmap (shape {mask.shape}) "
        "would give each example a result of a different length (its number of True "
        "entries), which one batched array cannot hold. Keep the shape fixed instead: "
        "dnp.where(mask, x, 0) zeroes the unselected entries (e.g. "
        "dnp.sum(dnp.where(mask, x, 0)) for a masked sum).")


def _check_bounds(values, size, axis):
    """NumPy's IndexError when an entry of the concrete index ``values`` is out of range."""
    values = np.asarray(values)
    if values.size == 0:
        return
    bad = (values < -size) | (values >= size)
    if bad.any():
        raise IndexError(f"index {values[bad].flat[0]} is out of bounds for axis {axis} "
                         f"with size {size}")


def _as_int(value, what):
    """``value`` (an int, or a traced 0-d value with a concrete value) as a Python int."""
    value = static_value(value, lambda t: (
        f"{what} is a value traced by {t._trace.name}; it must be a concrete int "
        "because it sets the shape of the result. Under vmap, gather with an integer "
        "array instead, e.g. x[start + dnp.arange(length)]."))
    return operator.index(value)


def _classify(item):
    """One index entry as ``(kind, value)``: kind is 'none', 'ellipsis', 'slice', 'int',
    'array' (integer array or tracer), 'mask' (boolean array) or 'bool0' (0-d boolean)."""
    if item is None:
        return "none", None
    if item is Ellipsis:
        return "ellipsis", None
    if isinstance(item, slice):
        return "slice", item
    if isinstance(item, (bool, np.bool_)):
        return "bool0", bool(item)
    if isinstance(item, (int, np.integer)):
        return "int", int(item)
    if isinstance(item, Tracer):
        kind = dtype_of(item).kind
        if kind == "b":
            mask = concrete_value(item)
            if mask is None:
                raise _ragged_mask_error(item)
            return _classify(np.asarray(mask))
        if kind not in "iu":
            raise IndexError(f"arrays used as indices must be of integer (or boolean) type, "
                             f"got a traced array of dtype {dtype_of(item)}")
        return "array", item
    if reads_as_array(type(item)):   # a pandas Series or Index, a range: NumPy's asarray
        return _classify(read_array_like(item))
    if isinstance(item, (list, tuple)) and any(isinstance(e, Tracer) for e in item):
        return _classify(_shape.stack(list(item)))  # a list of traced scalars
    if isinstance(item, (list, tuple, np.ndarray)):
        array = np.asarray(item)
        if array.dtype.kind == "b":
            return ("bool0", bool(array)) if array.ndim == 0 else ("mask", array)
        if array.dtype.kind not in "iu":
            if array.size == 0:  # NumPy reads x[[]] as an empty integer index
                return "array", array.astype(np.intp)
            raise IndexError("arrays used as indices must be of integer (or boolean) type, "
                             f"got dtype {array.dtype}")
        return "array", array
    try:
        return "int", operator.index(item)
    except TypeError:
        raise _index_error(item) from None


def _consumed(kind, value):
    """How many axes of ``x`` one index entry consumes."""
    if kind in ("int", "slice", "array"):
        return 1
    if kind == "mask":
        return value.ndim
    return 0


def parse_index(x_shape, index):
    """Split ``index`` for an array of shape ``x_shape`` into ``(spec, arrays, new_axes)``.

    ``spec`` and ``arrays`` are the canonical index described in the module docstring, for
    the array ``x`` with size-1 axes inserted at ``new_axes`` (where 0-d booleans stood;
    usually empty). Raises NumPy's ``IndexError`` for invalid or out-of-bounds indices.
    """
    kind = type(index)
    if kind is int and x_shape:   # x[i] and x[a:b:c], the commonest: without the general walk
        _check_bounds(index, x_shape[0], 0)
        return (index % x_shape[0],), [], ()
    if kind is slice and x_shape and _plain_bounds(index):
        return (_canonical_slice(index, x_shape[0]),), [], ()
    if not isinstance(index, tuple):
        index = (index,)
    entries = [_classify(item) for item in index]
    ndim = len(x_shape)
    if sum(kind == "ellipsis" for kind, _ in entries) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(_consumed(kind, value) for kind, value in entries)
    if used > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, but "
                         f"{used} were indexed")
    spec, arrays, new_axes = [], [], []
    axis = 0  # the next axis of x to index
    for kind, value in entries:
        if kind == "none":
            spec.append(None)
        elif kind == "ellipsis":
            count = ndim - used
            spec.extend(_full(x_shape[a]) for a in range(axis, axis + count))
            if count == 0:
                spec.append(Ellipsis)
            axis += count
        elif kind == "slice":
            start, stop, step = (None if v is None else _as_int(v, "a slice bound")
                                 for v in (value.start, value.stop, value.step))
            spec.append(_canonical_slice(slice(start, stop, step), x_shape[axis]))
            axis += 1
        elif kind == "int":
            size = x_shape[axis]
            _check_bounds(value, size, axis)
            spec.append(value % size)
            axis += 1
        elif kind == "array":
            concrete = value if not isinstance(value, Tracer) else concrete_value(value)
            if concrete is not None:
                _check_bounds(concrete, x_shape[axis], axis)
            spec.append(ARRAY)
            arrays.append(value)
            axis += 1
        elif kind == "mask":
            covered = x_shape[axis:axis + value.ndim]
            for i, (size, mask_size) in enumerate(zip(covered, value.shape)):
                if size != mask_size:
                    raise IndexError(
                        f"boolean index did not match indexed array along axis {axis + i}; "
                        f"size of axis is {size} but size of corresponding boolean axis is "
                        f"{mask_size}")
            for positions in np.nonzero(value):
                spec.append(ARRAY)
                arrays.append(positions)
            axis += value.ndim
        else:  # a 0-d boolean: a new axis of size 1, taken (True) or not (False)
            new_axes.append(axis + len(new_axes))
            spec.append(ARRAY)
            arrays.append(np.zeros(1 if value else 0, np.intp))
    if arrays:
        shapes = [shape_of(a) for a in arrays]
        try:
            np.broadcast_shapes(*shapes)
        except ValueError:
            raise IndexError("shape mismatch: indexing arrays could not be broadcast together "
                             "with shapes " + " ".join(str(s) for s in shapes)) from None
    return tuple(spec), arrays, tuple(new_axes)


# --- getitem ------------------------------------------------------------------------------


def _getitem_impl(x, *arrays, spec):
    return x[_build(spec, arrays)]


def _getitem_jvp(primals, tangents, spec):
    x, *arrays = primals
    out = getitem_p(x, *arrays, spec=spec)
    t = tangents[0]
    if type(t) is Zero:  # only an (integer) index array had a tangent: no derivative
        return out, Zero(shape_of(out), tangent_dtype(dtype_of(out)))
    return out, getitem_p(t, *arrays, spec=spec)


def _getitem_vjp(ct, out, x, *arrays, spec):
    return scatter_add_p(ct, *arrays, shape=shape_of(x), spec=spec)


def _batched_index(axis_size, arrays, array_axes, rank):
    """The index arrays with the batch as a leading broadcast axis: a batched array of
    example shape ``s`` becomes ``(batch, 1, ..., 1) + s`` of rank ``1 + rank``."""
    out = []
    for array, axis in zip(arrays, array_axes):
        if axis is not None:
            dims = shape_of(array)
            array = _shape.reshape(array, dims[:1] + (1,) * (rank - len(dims) + 1) + dims[1:])
        out.append(array)
    return out


def _example_shapes(arrays, axes):
    return [shape_of(a)[1:] if ax is not None else shape_of(a) for a, ax in zip(arrays, axes)]


def _arange_for(axis_size, rank):
    return np.arange(axis_size).reshape((axis_size,) + (1,) * rank)


def _block_last_perm(ndim, position, rank):
    """Axes of a ``(batch, S, pre, post)`` value in ``(batch, pre, S, post)`` order, where
    ``pre`` has ``position`` axes and ``S`` has ``rank``."""
    pre = [1 + rank + i for i in range(position)]
    block = [1 + i for i in range(rank)]
    return [0] + pre + block + list(range(1 + rank + position, ndim))


def _getitem_batch(axis_size, values, batch_axes, spec):
    x, *arrays = values
    x_axis, *array_axes = batch_axes
    block = _advanced_block(spec, _example_shapes(arrays, array_axes))
    if all(a is None for a in array_axes):
        # Only x is batched: a full slice over its batch axis. If NumPy moves the advanced
        # block to the front, the batch axis lands just after it.
        out = getitem_p(x, *arrays, spec=(_full(axis_size),) + spec)
        if block is not None and block[2]:
            out = _shape.moveaxis(out, block[1], 0)
        return out, 0
    position, rank, moved = block
    arrays = _batched_index(axis_size, arrays, array_axes, rank)
    if x_axis is None:
        # The batch is the first axis of the advanced block, wherever NumPy puts it.
        out = getitem_p(x, *arrays, spec=spec)
        return (_shape.moveaxis(out, position, 0) if position else out), 0
    # Both batched: arange over x's batch axis joins the advanced indices. That block then
    # always comes first, (batch, S, pre, post); put pre back in front of S if needed.
    out = getitem_p(x, _arange_for(axis_size, rank), *arrays, spec=(ARRAY,) + spec)
    if position:
        out = _shape.transpose(out, _block_last_perm(len(shape_of(out)), position, rank))
    return out, 0


# --- scatter_add: the adjoint of getitem ----------------------------------------------------


def _scatter_add_impl(values, *arrays, shape, spec):
    out = np.zeros(shape, dtype_of(values))
    index = _build(spec, arrays)
    if arrays:
        np.add.at(out, index, values)  # repeated indices accumulate
    else:
        out[index] = values  # basic indexing never repeats an element
    return out


def _scatter_add_jvp(primals, tangents, shape, spec):
    values, *arrays = primals
    out = scatter_add_p(values, *arrays, shape=shape, spec=spec)
    t = tangents[0]
    if type(t) is Zero:
        return out, Zero(shape, tangent_dtype(dtype_of(out)))
    return out, scatter_add_p(t, *arrays, shape=shape, spec=spec)


def _scatter_add_vjp(ct, out, values, *arrays, shape, spec):
    return getitem_p(ct, *arrays, spec=spec)


def _scatter_add_batch(axis_size, values, batch_axes, shape, spec):
    ct, *arrays = values
    ct_axis, *array_axes = batch_axes
    block = _advanced_block(spec, _example_shapes(arrays, array_axes))
    batched_shape = (axis_size,) + shape
    if all(a is None for a in array_axes):
        # Lay the cotangent out as getitem with a leading full slice would produce it.
        if block is not None and block[2]:
            ct = _shape.moveaxis(ct, 0, block[1])
        return scatter_add_p(ct, *arrays, shape=batched_shape,
                             spec=(_full(axis_size),) + spec), 0
    position, rank, _ = block
    if ct_axis is None:
        ct = _shape.broadcast_to(ct, (axis_size,) + shape_of(ct))
    if position:  # (batch, pre, S, post) -> (batch, S, pre, post), as getitem's gather
        perm = _block_last_perm(len(shape_of(ct)), position, rank)
        ct = _shape.transpose(ct, [int(i) for i in np.argsort(perm)])
    arrays = _batched_index(axis_size, arrays, array_axes, rank)
    return scatter_add_p(ct, _arange_for(axis_size, rank), *arrays, shape=batched_shape,
                         spec=(ARRAY,) + spec), 0


def _basic_index(params):
    """The NumPy index of ``params["spec"]`` where it holds no index array (a basic index:
    the primitive's only array argument is ``x``, or the values), else None."""
    spec = params["spec"]
    return None if any(entry is ARRAY for entry in spec) else _build(spec, ())


# Index arrays are integer inputs with no derivative: no vjp entries past the first.
getitem_p = Primitive("getitem", _getitem_impl, _getitem_jvp, (_getitem_vjp,), _getitem_batch,
                      vjp_ignores=(0, "out"),
                      traits=Traits(curvature="linear", reads_index=_basic_index))
scatter_add_p = Primitive("scatter_add", _scatter_add_impl, _scatter_add_jvp,
                          (_scatter_add_vjp,), _scatter_add_batch, vjp_ignores=(0, "out"),
                          traits=Traits(curvature="linear", writes_index=_basic_index))


def _scatter_pairs(args, shape, spec):
    """(output entry, entry of the values) for each value added into the output."""
    values, *arrays = args
    landing = sr.numbered(shape)[_build(spec, [concrete_value(a) if isinstance(a, Tracer)
                                                else a for a in arrays])]
    return landing, np.broadcast_to(sr.numbered(shape_of(values)), shape_of(landing))


getitem_p.sparsity = sr.index_map_sparsity(_getitem_impl)
scatter_add_p.sparsity = sr.scatter_sparsity(_scatter_pairs)
# linear in x (the values); the index arrays pass through as values
getitem_p.jet = ta.linear(getitem_p)
scatter_add_p.jet = ta.linear(scatter_add_p)


# --- the public entry ---------------------------------------------------------------------


def getitem(x, index):
    """``x[index]`` with NumPy's semantics, differentiable in ``x`` and batchable in both.

    Supports integers, slices, ``None``, ``...``, integer arrays and lists (advanced
    indexing, broadcasting together) and concrete boolean masks. Index arrays may be traced
    (e.g. per-example labels under ``vmap``); they have no derivative. Any other array-like
    (a pandas boolean ``Series`` as a mask, a ``pd.Index``, a ``range``) is read through
    ``np.asarray``, as NumPy reads it (``read_array_like``).
    """
    if not isinstance(x, Tracer) and not holds_tracer(index):
        return as_array(read_array_like(x))[index]   # a DataFrame is read as its values
    if not isinstance(x, Tracer):  # a plain ndarray (a subclass's own indexing is not ours)
        x = np.asarray(x)
    spec, arrays, new_axes = parse_index(shape_of(x), index)
    if new_axes:
        x = _shape.expand_dims(x, new_axes)
    return getitem_p(x, *arrays, spec=spec)


# --- functional updates: x.at[index].set(v) and friends ------------------------------------


class At:
    """Functional index updates, JAX's ``x.at[index]``: ``At(x)[index].set(v)``, ``.add``,
    ``.multiply``, ``.min``, ``.max`` and ``.get()`` return new arrays (``x`` is never
    modified) with NumPy's indexing semantics, differentiable in ``x`` and ``v`` and
    batchable in ``x``, ``v`` and the index arrays.

    Repeated indices: ``add`` accumulates (``np.add.at``), ``multiply``/``min``/``max``
    combine every update (``np.multiply.at`` etc.) and ``set`` keeps the last write, as
    NumPy's assignment does. All are compositions of ``getitem``/``scatter_add`` and
    elementwise operations, linear in the number of updated positions (times the largest
    number of repeats of one index for ``multiply``/``min``/``max``). Only with batched
    (traced) index arrays under ``vmap`` are repeats found by pairwise comparison, O(n**2).
    """

    __slots__ = ("_x",)

    def __init__(self, x):
        self._x = x

    def __getitem__(self, index):
        return _AtIndex(self._x, index)


class _AtIndex:
    __slots__ = ("_x", "_index")

    def __init__(self, x, index):
        self._x = x
        self._index = index

    def get(self):
        return getitem(self._x, self._index)

    def _parts(self, v):
        """``(x, spec, arrays, restore, v)``: ``x`` with any 0-d-boolean axes inserted, the
        canonical index, a function that undoes the inserted axes, and ``v`` broadcast to
        the indexed shape."""
        x = self._x if isinstance(self._x, Tracer) else np.asarray(self._x)
        shape = shape_of(x)
        spec, arrays, new_axes = parse_index(shape, self._index)
        if new_axes:
            x = _shape.expand_dims(x, new_axes)
        target = shape_of(getitem_p(np.zeros(shape_of(x), np.int8),
                                    *[np.zeros(shape_of(a), np.intp) for a in arrays],
                                    spec=spec))
        if not isinstance(v, Tracer):
            v = np.asarray(v).astype(dtype_of(x), copy=False)   # x's dtype, as JAX
        v = _shape.broadcast_to(v, target)

        def restore(out):
            return _shape.reshape(out, shape) if new_axes else out
        return x, spec, arrays, restore, v

    def _scatter(self, values, x, spec, arrays):
        return scatter_add_p(values, *arrays, shape=shape_of(x), spec=spec)

    def _ids(self, x, spec, arrays, v):
        """``(flat v, ids)``: the flat index into ``x`` that each position of the indexed
        shape updates (traced when the index arrays are batched)."""
        shape = shape_of(x)
        ids = getitem_p(np.arange(int(np.prod(shape)), dtype=np.intp).reshape(shape),
                        *arrays, spec=spec)
        n = int(np.prod(shape_of(v)))
        return _shape.reshape(v, (n,)), _shape.reshape(ids, (n,))

    def add(self, v):
        x, spec, arrays, restore, v = self._parts(v)
        return restore(x + self._scatter(v, x, spec, arrays))

    def set(self, v):
        x, spec, arrays, restore, v = self._parts(v)
        flat, ids = self._ids(x, spec, arrays, v)
        if isinstance(ids, Tracer):
            after = ew.logical_and_p(_same(ids), np.triu(np.ones((len(flat),) * 2, bool), 1))
            later = ew.greater_p(reductions.sum(ew.astype(after, np.int64), axis=1), 0)
        else:
            ranks, counts = _occurrences(ids)
            later = ranks < counts - 1
        last = ew.where_p(later, 0, flat)   # only the last write of each element counts
        hit = self._scatter(np.ones(shape_of(v)), x, spec, arrays) > 0
        written = self._scatter(_shape.reshape(last, shape_of(v)), x, spec, arrays)
        return restore(ew.where_p(hit, written, x))

    def _combine(self, v, reduce, combine):
        """Each element of ``x`` combined with ``reduce`` of all its updates."""
        x, spec, arrays, restore, v = self._parts(v)
        flat, ids = self._ids(x, spec, arrays, v)
        if isinstance(ids, Tracer):
            out = self._combine_pairwise(x, spec, arrays, v, flat, ids, reduce, combine)
        else:
            # The k-th updates of all elements touch distinct elements: one scatter each, as
            # many rounds as the most repeated index (one, without repeats).
            ranks, _ = _occurrences(ids)
            out = x
            for k in range(int(ranks.max(initial=-1)) + 1):
                round_k = _shape.reshape(ranks == k, shape_of(v))
                hit = self._scatter(round_k.astype(float), x, spec, arrays) > 0
                written = self._scatter(ew.where_p(round_k, v, 0), x, spec, arrays)
                out = ew.where_p(hit, combine(out, written), out)
        if not isinstance(out, Tracer) and out.dtype != dtype_of(x):  # integer x
            out = out.astype(dtype_of(x))
        return restore(out)

    def _combine_pairwise(self, x, spec, arrays, v, flat, ids, reduce, combine):
        """``_combine`` for traced (batched) indices: O(n**2) pairwise comparisons."""
        n = len(flat)
        identity = {"prod": 1.0, "min": np.inf, "max": -np.inf}[reduce]
        group = getattr(reductions, reduce)(
            ew.where_p(_same(ids), _shape.reshape(flat, (1, n)), identity), axis=1)
        # Every position of a group carries the whole group's value: set them.
        start = np.full(shape_of(x), identity, np.result_type(dtype_of(x), float))
        total = At(start)[_build(spec, arrays)].set(_shape.reshape(group, shape_of(v)))
        return combine(x, total)

    def multiply(self, v):
        return self._combine(v, "prod", lambda x, t: x * t)

    def min(self, v):
        return self._combine(v, "min", ew.minimum)

    def max(self, v):
        return self._combine(v, "max", ew.maximum)


def _same(ids):
    """``same[p, q]``: positions ``p`` and ``q`` update the same element."""
    n = shape_of(ids)[0]
    return ew.equal_p(_shape.reshape(ids, (n, 1)), _shape.reshape(ids, (1, n)))


def _occurrences(ids):
    """For concrete flat ``ids``: ``(rank, count)`` per position: how many earlier positions
    update the same element, and how many positions update it in all."""
    n = len(ids)
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    starts = np.flatnonzero(np.r_[True, sorted_ids[1:] != sorted_ids[:-1]])
    sizes = np.diff(np.r_[starts, n])
    rank, count = np.empty(n, np.intp), np.empty(n, np.intp)
    rank[order] = np.arange(n) - np.repeat(starts, sizes)
    count[order] = np.repeat(sizes, sizes)
    return rank, count
