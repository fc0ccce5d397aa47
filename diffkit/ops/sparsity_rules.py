"""Building blocks of the structural (sparsity) rules of primitives.

A primitive's ``sparsity(args, out, local, **params)`` rule says which entries of each
argument each entry of the output depends on: the nonzero structure of the Jacobian of
the primitive, valid for every value of the arguments (``local=False``), or at these
values (``local=True``: the branch a ``where`` takes, the winner of a ``maximum``). It
answers, per argument, one of:

- ``None``: the output does not depend on this argument (an integer index array, a
  condition);
- ``IDENTITY``: the argument has the output's shape and output entry ``r`` depends on its
  entry ``r`` alone;
- a 1-D integer array ``g`` of the output's size (a *gather*): output entry ``r``
  depends on argument entry ``g[r]`` alone (on nothing where ``g[r]`` is -1), or a
  ``Lazy`` that makes one when needed;
- ``ALL``: the output has one entry and it depends on every entry of the argument (a
  full reduction);
- a boolean SciPy sparse array of shape ``(out.size, arg.size)``: the general case.

Entries are numbered in C order (``np.ravel``). A primitive of several outputs answers one
such tuple per output. A rule whose answer depends on the values of integer arguments
(index arrays) has the attribute ``reads_values = True``; one with ``reads_constants = True``
is also given ``constant``, per argument whether it is independent of the inputs (its
zeros then hold for every input): where such a value is computed
from the inputs, a global pattern cannot trust it and takes a dense block instead. ``args``
are the primitive's arguments as it received them; a rule reads their shapes, and their
values only for integer index arrays or, with ``local``, to decide a branch.

Rules of index-moving primitives (``reshape``, ``transpose``, ``getitem`` ...) are derived
by running the primitive's own ``impl`` on an array holding each entry's number: what comes
out says where each output entry comes from.
"""

import math

import numpy as np

from ..core.concrete import underlying
from ..core.zeros import dtype_of, shape_of

IDENTITY = "identity"
ALL = "all"


def scipy_sparse():
    """``scipy.sparse``, imported on first use. ``import diffkit`` does not load it (it
    costs about 10 ms); sparsity detection and the sparse derivatives, which build its
    arrays, call this (here, in ``interpreters.sparsity`` and in ``diffkit.sparse``)."""
    import scipy.sparse

    return scipy.sparse


class Lazy:
    """A gather computed only if the argument carries a dependence (a constant broadcast
    against a large output needs none): ``make()`` returns the gather."""

    __slots__ = ("make",)

    def __init__(self, make):
        self.make = make


def numbered(shape):
    """An integer array of ``shape`` holding each entry's flat (C-order) number."""
    return np.arange(math.prod(shape), dtype=np.intp).reshape(shape)


def matrix(rows, cols, shape):
    """The boolean CSR array of ``shape`` with ones at ``(rows, cols)`` (repeats merged)."""
    sp = scipy_sparse()
    rows = np.asarray(rows, np.intp).ravel()
    cols = np.asarray(cols, np.intp).ravel()
    out = sp.csr_array((np.ones(rows.size, bool), (rows, cols)), shape=shape)
    out.sum_duplicates()
    return out


def dense(out_size, arg_size):
    """Every output entry depends on every argument entry."""
    sp = scipy_sparse()
    return sp.csr_array(np.ones((out_size, arg_size), bool))


def differentiable(x):
    """Whether ``x`` can carry a derivative (a float or complex value)."""
    return dtype_of(x).kind in "fc"


def _broadcast_source(arg_shape, out_shape):
    """The gather (or ``IDENTITY``) of an argument broadcast to the output's shape."""
    if tuple(arg_shape) == tuple(out_shape):
        return IDENTITY
    return np.broadcast_to(numbered(arg_shape), out_shape).ravel()


def _lazy_source(arg_shape, out_shape):
    if tuple(arg_shape) == tuple(out_shape):
        return IDENTITY
    return Lazy(lambda: _broadcast_source(arg_shape, out_shape))


def elementwise_sparsity(select=None, deciding=None, dropped=()):
    """The rule of an elementwise primitive of broadcasting arguments: output entry ``r``
    depends on the entry each differentiable argument broadcasts to ``r``.

    ``select(args, out, **params)``, for ``local=True``, returns one boolean mask per
    argument (broadcastable to the output; ``True`` for "all") saying where the output
    depends on that argument at these values (``where``'s condition, a ``maximum``'s
    winner); ``None`` for a primitive whose local structure is its global one.
    ``deciding``: the positions of the arguments ``select`` reads, when it reads no other
    (``where``'s condition), set as the rule's attribute: where none of them depends on
    the inputs, the selection holds for every input, and detection asks for the local
    rule even for a global pattern. ``dropped``: the positions of the arguments whose
    partial derivative is zero everywhere (``copysign``'s sign source): the output depends
    on none of their entries."""
    dropped = frozenset(dropped)

    def rule(args, out, local, **params):
        out_shape = shape_of(out)
        masks = select(args, out, **params) if (local and select is not None) else None
        result = []
        for i, arg in enumerate(args):
            if i in dropped or not differentiable(arg):
                result.append(None)
                continue
            mask = True if masks is None else masks[i]
            if mask is True:
                result.append(_lazy_source(shape_of(arg), out_shape))
                continue
            source = _broadcast_source(shape_of(arg), out_shape)
            rows = np.flatnonzero(np.broadcast_to(mask, out_shape))
            cols = rows if source is IDENTITY else source[rows]
            result.append(matrix(rows, cols, (math.prod(out_shape), math.prod(shape_of(arg)))))
        return tuple(result)

    rule.deciding = deciding
    return rule


def selection_values(args):
    """The plain arrays under ``args``, for a ``select`` function that reads them."""
    return [np.asarray(underlying(a)) for a in args]


def per_output(rule):
    """The rule of a primitive of several outputs, each of which ``rule`` describes alone
    (``sici``: each output elementwise in the input)."""

    def several(args, outs, local, **params):
        return tuple(rule(args, out, local, **params) for out in outs)

    return several


def index_map_sparsity(impl, moved=(0,)):
    """The rule of a primitive that only moves, copies or drops entries of its arguments
    at positions ``moved`` (``reshape``, ``transpose``, ``broadcast_to``, ``getitem``,
    ``concatenate``, ``split``): ``impl`` applied to the arguments' entry numbers (offset
    so that the numbers of different arguments differ) says where each output entry comes
    from. Other arguments (index arrays) are passed as their values."""

    def rule(args, out, local, **params):
        numbers = list(args)
        offsets = []
        start = 0
        for i in moved:
            shape = shape_of(args[i])
            numbers[i] = numbered(shape) + start
            offsets.append((start, math.prod(shape)))
            start += math.prod(shape)
        numbers = [n if i in moved else underlying(n) for i, n in enumerate(numbers)]
        sources = impl(*numbers, **params)
        if isinstance(sources, tuple):
            return tuple(_per_argument(np.asarray(s).ravel(), args, moved, offsets)
                         for s in sources)
        return _per_argument(np.asarray(sources).ravel(), args, moved, offsets)

    rule.reads_values = len(moved) == 1   # other arguments are index arrays
    return rule


def _per_argument(sources, args, moved, offsets):
    result = [None] * len(args)
    if len(moved) == 1:
        (i,), ((_, size),) = moved, offsets
        if differentiable(args[i]):
            result[i] = IDENTITY if sources.size == size and \
                np.array_equal(sources, np.arange(size)) else sources.astype(np.intp)
        return tuple(result)
    for i, (start, size) in zip(moved, offsets):
        if not differentiable(args[i]):
            continue
        rows = np.flatnonzero((sources >= start) & (sources < start + size))
        result[i] = matrix(rows, sources[rows] - start, (sources.size, size))
    return tuple(result)


def scatter_sparsity(pairs):
    """The rule of a primitive that adds the entries of argument 0 into a new array
    (``scatter_add``): ``pairs(args, **params)`` gives two arrays, the output entry and
    the entry of argument 0 of each addition."""

    def rule(args, out, local, **params):
        values = args[0]
        first = None
        if differentiable(values):
            rows, cols = pairs(args, **params)
            rows, cols = np.ravel(rows), np.ravel(cols)
            out_size = math.prod(shape_of(out))
            first = np.full(out_size, -1, np.intp)
            first[rows] = cols
            if np.count_nonzero(first >= 0) != rows.size:   # some entry gets several values
                first = matrix(rows, cols, (out_size, math.prod(shape_of(values))))
        return (first,) + (None,) * (len(args) - 1)

    rule.reads_values = True
    return rule


def reduction_sparsity(local_select=None):
    """The rule of a reduction over ``axis`` (``sum``, ``prod``, ``max``, ``logsumexp``):
    each output entry depends on the entries reduced into it. ``local_select(x, out,
    axis, keepdims)`` gives, for ``local=True``, the mask of the entries that matter at
    these values (the maxima of ``max``)."""

    def rule(args, out, local, axis, keepdims, **params):
        sp = scipy_sparse()
        (x,) = args
        x_shape = shape_of(x)
        size, out_size = math.prod(x_shape), math.prod(shape_of(out))
        selecting = local and local_select is not None
        if out_size == 1 and not selecting:
            return (ALL,)
        kept = tuple(1 if (axis is None or i in _axes(axis, len(x_shape))) else d
                     for i, d in enumerate(x_shape))
        targets = np.broadcast_to(numbered(kept), x_shape).ravel()
        if selecting:
            mask = np.asarray(local_select(x, out, axis, keepdims), bool).ravel()
            return (matrix(targets[mask], np.flatnonzero(mask), (out_size, size)),)
        # one nonzero per column: built as CSC directly, no sorting of coordinates
        return (sp.csc_array((np.ones(size, bool), targets, np.arange(size + 1)),
                             shape=(out_size, size)).tocsr(),)

    return rule


def _axes(axis, ndim):
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    return {int(a) % ndim for a in axes}


def cumulative_sparsity(args, out, local, axis, reverse, **params):
    """The rule of a cumulative reduction along ``axis`` (``cumsum``, ``cumprod``): entry
    ``i`` depends on entries ``0..i`` (``i..`` with ``reverse``) of its line."""
    (x,) = args
    shape = shape_of(x)
    length = shape[axis]
    i, j = np.tril_indices(length) if not reverse else np.triu_indices(length)
    numbers = np.moveaxis(numbered(shape), axis, -1)   # (..., length)
    rows = numbers[..., i].ravel()
    cols = numbers[..., j].ravel()
    size = math.prod(shape)
    return (matrix(rows, cols, (size, size)),)


def _einsum_pairs(terms, out_term, shapes, out_shape, known):
    """For each operand, the (output entry, operand entry) pairs that meet in a term of
    the contraction ``terms -> out_term``. ``known`` maps operand positions to their values
    where they are constants: a term with a zero constant factor is dropped."""
    sizes = {}
    for term, shape in zip(terms, shapes):
        for letter, d in zip(term, shape):
            sizes[letter] = max(sizes.get(letter, 1), d)
    letters = sorted(sizes)
    grid = np.ix_(*[np.arange(sizes[c]) for c in letters])
    axis_of = {c: k for k, c in enumerate(letters)}
    full = tuple(sizes[c] for c in letters)

    def entries(term, shape):
        index = tuple(grid[axis_of[c]] if d != 1 else np.zeros((1,) * len(letters), np.intp)
                      for c, d in zip(term, shape))
        return np.broadcast_to(numbered(shape)[index] if index else numbered(shape), full)

    rows = entries(out_term, out_shape).ravel()
    cols = [entries(term, shape).ravel() for term, shape in zip(terms, shapes)]
    if known:
        keep = np.ones(rows.size, bool)
        for i, value in known.items():
            keep &= np.asarray(value).ravel()[cols[i]] != 0
        rows, cols = rows[keep], [c[keep] for c in cols]
    return [(rows, c) for c in cols]


def einsum_sparsity(args, out, local, subscripts, constant=(), **params):
    """The rule of ``einsum`` (explicit ``->`` subscripts): an output entry depends on each
    operand entry that appears with it in one product of the sum. Products with a zero
    factor from a constant operand (``constant[i]``: operand ``i`` does not depend on the
    inputs) are left out: ``A @ x`` with a constant sparse ``A`` keeps ``A``'s pattern."""
    sp = scipy_sparse()
    inputs, out_term = subscripts.split("->")
    terms = inputs.split(",")
    if "." in subscripts:
        return tuple(dense(math.prod(shape_of(out)), math.prod(shape_of(a)))
                     if differentiable(a) else None for a in args)
    shapes = [shape_of(a) for a in args]
    out_size = math.prod(shape_of(out))
    if out_size == 0 or not all(math.prod(s) for s in shapes):   # nothing meets
        return tuple(sp.csr_array((out_size, math.prod(s)), dtype=bool)
                     if differentiable(a) else None for a, s in zip(args, shapes))
    known = {i: underlying(a) for i, a in enumerate(args) if i < len(constant) and constant[i]}
    pairs = _einsum_pairs(terms, out_term, shapes, shape_of(out), known)
    return tuple(matrix(rows, cols, (out_size, math.prod(s))) if differentiable(a) else None
                 for (rows, cols), a, s in zip(pairs, args, shapes))


_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def matmul_sparsity(args, out, local, constant=(), **params):
    """The rule of ``matmul``: ``out[..., i, k]`` depends on row ``i`` of ``a`` and column
    ``k`` of ``b`` (batch axes broadcast), as the contraction it is."""
    a, b = args
    a_shape, b_shape = shape_of(a), shape_of(b)
    a_term = "ij" if len(a_shape) >= 2 else "j"
    b_term = "jk" if len(b_shape) >= 2 else "j"
    batch = max(len(a_shape) - 2, len(b_shape) - 2, 0)
    letters = _LETTERS[3:3 + batch]
    a_batch = letters[batch - (len(a_shape) - 2):] if len(a_shape) > 2 else ""
    b_batch = letters[batch - (len(b_shape) - 2):] if len(b_shape) > 2 else ""
    out_term = letters + ("i" if len(a_shape) >= 2 else "") + ("k" if len(b_shape) >= 2 else "")
    subscripts = f"{a_batch}{a_term},{b_batch}{b_term}->{out_term}"
    return einsum_sparsity(args, out, local, subscripts, constant)


einsum_sparsity.reads_constants = matmul_sparsity.reads_constants = True


# --- blocks: every output entry depends on every entry of its block -------------------------


def _one_hot_rows(index, width):
    """CSR ``(len(index), width)`` with a one in row ``r`` at column ``index[r]``."""
    sp = scipy_sparse()
    index = np.asarray(index, np.intp).ravel()
    return sp.csr_array((np.ones(index.size, bool), index, np.arange(index.size + 1)),
                        shape=(index.size, width))


def _batch_numbers(shape, core, batch):
    """For each entry of an array of ``shape`` (C order), the number of its batch index in
    the (right-aligned, broadcast) batch shape ``batch``, when ``core`` are its core axes."""
    own = tuple(d for i, d in enumerate(shape) if i not in core)
    numbers = np.broadcast_to(numbered(own).reshape((1,) * (len(batch) - len(own)) + own),
                              batch) if own != batch else numbered(batch)
    placed = tuple(1 if i in core else d for i, d in enumerate(shape))
    return numbers, own, placed


def grouped_sparsity(core_axes):
    """The rule of a primitive that works on blocks: ``core_axes(i, shape, params)`` gives
    the core axes of argument ``i`` (``"out"`` for an output), or None for an argument the
    output does not depend on (an index array). The other axes are batch axes,
    right-aligned and broadcasting: each output entry depends on every entry of the same
    batch index in each argument (a stack of matrices for ``inv`` or ``solve``, the lines
    along the transformed axes of an FFT)."""

    def rule(args, out, local, **params):
        sp = scipy_sparse()
        outs = out if isinstance(out, tuple) else (out,)
        answers = []
        for o in outs:
            o_shape = shape_of(o)
            o_core = {a % max(len(o_shape), 1) for a in core_axes("out", o_shape, params)}
            batch = tuple(d for i, d in enumerate(o_shape) if i not in o_core)
            out_numbers, _, placed = _batch_numbers(o_shape, o_core, batch)
            group = np.broadcast_to(numbered(batch).reshape(placed), o_shape).ravel()
            per_arg = []
            for i, arg in enumerate(args):
                axes = core_axes(i, shape_of(arg), params) if differentiable(arg) else None
                if axes is None:
                    per_arg.append(None)
                    continue
                shape = shape_of(arg)
                core = {a % max(len(shape), 1) for a in axes}
                of_group, own, placed = _batch_numbers(shape, core, batch)
                entry = np.broadcast_to(numbered(own).reshape(placed), shape).ravel()
                width = math.prod(own)
                rows = _one_hot_rows(of_group.ravel()[group], width)
                cols = sp.csc_array((np.ones(entry.size, bool), entry,
                                     np.arange(entry.size + 1)), shape=(width, entry.size))
                per_arg.append(sp.csr_array(rows @ cols.tocsr()))
            answers.append(tuple(per_arg))
        return tuple(answers) if isinstance(out, tuple) else answers[0]

    return rule


def trailing(counts, out_count=None):
    """``core_axes`` for stacks of matrices: argument ``i`` has ``counts[i]`` trailing core
    axes (None: no dependence); an output has ``out_count(shape, params)`` of them, by
    default all but those of the first argument's stack."""

    def core_axes(i, shape, params):
        if i == "out":
            return () if out_count is None else tuple(range(-out_count(shape, params), 0))
        count = counts[i] if i < len(counts) else None
        if count is None:
            return None
        return tuple(range(len(shape) - min(count, len(shape)), len(shape)))

    return core_axes


def matrix_stack_sparsity(counts=(2,), out_cores=None):
    """A stack-of-matrices primitive (``inv``, ``det``, ``eigh``, ``solve`` ...): each
    output block depends on the whole matrix (and right-hand side) of its stack index.
    ``out_cores``: the number of core axes of each output (one per output; by default the
    axes beyond the first argument's stack)."""

    def rule(args, out, local, **params):
        stack = len(shape_of(args[0])) - counts[0]
        outs = out if isinstance(out, tuple) else (out,)
        results = []
        for k, o in enumerate(outs):
            o_count = len(shape_of(o)) - stack if out_cores is None else out_cores[k]
            sub = grouped_sparsity(trailing(counts, lambda shape, params, c=o_count: c))
            results.append(sub(args, o, local, **params))
        return tuple(results) if isinstance(out, tuple) else results[0]

    return rule


def along_axes_sparsity(axes_of):
    """Each output entry depends on the entries of its line (or plane) along the axes
    ``axes_of(params)`` of each differentiable argument (an FFT, an order statistic along
    ``axis``, a linear recurrence)."""

    def core_axes(i, shape, params):
        axes = axes_of(params)
        return tuple(axes) if isinstance(axes, (tuple, list)) else (axes,)

    return grouped_sparsity(core_axes)


def convolve_sparsity(args, out, local, mode, **params):
    """The rule of ``convolve`` along the last axis (``'full'`` or ``'valid'``), leading
    axes broadcasting: ``out[k]`` depends on ``a[i]`` and ``v[j]`` with ``i + j = k +
    start``."""
    a, v = args
    a_shape, v_shape, o_shape = shape_of(a), shape_of(v), shape_of(out)
    n, m, length = a_shape[-1], v_shape[-1], o_shape[-1]
    start = 0 if mode == "full" else min(n, m) - 1
    i, j = np.meshgrid(np.arange(n), np.arange(m), indexing="ij")
    k = (i + j - start).ravel()
    keep = (k >= 0) & (k < length)
    i, j, k = i.ravel()[keep], j.ravel()[keep], k[keep]
    lead = o_shape[:-1]
    rows = numbered(o_shape)[..., k].ravel()
    result = []
    for arg, shape, index in ((a, a_shape, i), (v, v_shape, j)):
        if not differentiable(arg):
            result.append(None)
            continue
        cols = np.broadcast_to(numbered(shape), lead + shape[-1:])[..., index].ravel()
        result.append(matrix(rows, cols, (math.prod(o_shape), math.prod(shape))))
    return tuple(result)
