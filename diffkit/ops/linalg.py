"""Contractions: ``matmul`` and ``einsum`` primitives, and NumPy's products built from them.

Two primitives carry all of linear algebra's products:

- ``matmul_p``: ``np.matmul`` itself (the hot path of every dense network). Its JVP is the
  product rule, each VJP is one more ``matmul`` (with the 1-D promotion undone and the
  broadcast batch dimensions summed away), and its batching rule is one ``matmul`` call
  whatever is batched.
- ``einsum_p``: ``np.einsum`` on *normalised* subscripts: explicit ``'->'``, no ``'...'``,
  and no size-1 broadcasting (the wrapper expands the ellipsis to concrete letters and
  squeezes away the size-1 axes a label broadcasts over). Its JVP replaces one operand by its
  tangent, its VJP for an operand is another einsum of the cotangent with the other
  operands, and batching adds a fresh leading letter.

``dot``, ``tensordot``, ``inner``, ``outer`` and ``vdot`` are compositions of these with
reshapes and transposes, so they need no rules of their own.
"""

import functools
import math
import string

import numpy as np

from ..core.primitive import Primitive, Traits
from ..core.zeros import add_tangents, as_array, dtype_of, shape_of
from . import elementwise as ew
from . import families
from . import shape as sh
from . import sparsity_rules as sr
from . import taylor_arithmetic as ta
from .reductions import sum_p, unbroadcast

__all__ = ["matmul", "dot", "outer", "inner", "vdot", "tensordot", "einsum"]


def _size(dims):
    return math.prod(dims)


# === matmul =============================================================================
# NumPy's rules: a 1-D first operand is a row (1, k) and a 1-D second operand a column
# (k, 1), the promoted axis being dropped from the result; axes before the last two are batch
# axes and broadcast.


def _promoted(sa, sb):
    """The operand shapes after 1-D promotion."""
    return ((1,) + sa if len(sa) == 1 else sa), (sb + (1,) if len(sb) == 1 else sb)


def rule_contraction(contract, *operands):
    """``contract(*operands)``, a sum of products (``matmul_p``, ``einsum_p``), inside a
    derivative rule where one operand is a tangent or a cotangent: the 0 x inf rule of
    elementwise products (``families.zero_safe``) holds for each term of the sum, so a term
    with a zero factor is 0 even when another factor is NaN or infinite.

    Without it the engines disagree wherever an unknown (NaN) derivative meets a structural
    zero: forward mode multiplies the NaN tangent by the zero inside a later product, while
    reverse mode has already met the zero in the cotangent and never forms the NaN (the
    projector ``V V^T`` built from eigenvectors at a repeated eigenvalue).

    Fast path: a result without NaN is returned as computed (one read of the result). Else
    an entry whose non-finite terms all have a zero factor is recomputed without them (the
    non-finite entries of the operands set to 0); an entry with a non-finite term and no
    zero factor keeps the IEEE result. A term has no zero factor and a non-finite one when
    it is counted by the contraction of the operands' nonzero indicators but not by that of
    their nonzero finite indicators."""
    out = contract(*operands)
    if not families.holds_nan(out):
        return out
    finite = [ew.isfinite_p(x) for x in operands]
    nonzero = [ew.not_equal_p(x, 0) for x in operands]
    clean = contract(*(ew.where_p(ok, x, 0.0) for ok, x in zip(finite, operands)))
    terms = contract(*(_indicator(nz) for nz in nonzero))
    finite_terms = contract(*(_indicator(ew.logical_and_p(nz, ok))
                              for nz, ok in zip(nonzero, finite)))
    return ew.where_p(ew.greater_p(terms, finite_terms), out, clean)


def rule_matmul(x, y):
    """``matmul_p(x, y)`` in a derivative rule, under the 0 x inf rule (``rule_contraction``)."""
    return rule_contraction(matmul_p, x, y)


def _indicator(mask):
    return ew.where_p(mask, 1.0, 0.0)


def _matmul_jvp(primals, tangents):
    a, b = primals
    return matmul_p(a, b), add_tangents(
        tangents, lambda i, t: rule_matmul(t, b) if i == 0 else rule_matmul(a, t))


def _matmul_vjp_general(ct, a, b, argnum):
    """Cotangent of ``a`` (argnum 0) or ``b`` (1) when both operands may carry batch axes:
    one batched ``matmul`` on the promoted shapes, then summed over broadcast axes."""
    sa, sb = shape_of(a), shape_of(b)
    pa, pb = _promoted(sa, sb)
    batch = np.broadcast_shapes(pa[:-2], pb[:-2])
    ct = sh.reshape(ct, batch + (pa[-2], pb[-1]))
    if argnum == 0:
        g = rule_matmul(ct, sh.swapaxes(sh.reshape(b, pb), -1, -2))
        return sh.reshape(unbroadcast(g, pa), sa)
    g = rule_matmul(sh.swapaxes(sh.reshape(a, pa), -1, -2), ct)
    return sh.reshape(unbroadcast(g, pb), sb)


def _matmul_vjp_a(ct, out, a, b):
    sa, sb = shape_of(a), shape_of(b)
    if len(sb) == 1:  # out[..., m] = sum_k a[..., m, k] b[k]: an outer product
        return families.times(ct if len(sa) == 1 else sh.expand_dims(ct, -1), b)
    if len(sb) == 2:  # no batch axes in b: a's are the output's, nothing to sum over
        return rule_matmul(b, ct) if len(sa) == 1 else rule_matmul(ct, sh.swapaxes(b, 0, 1))
    return _matmul_vjp_general(ct, a, b, 0)


def _matmul_vjp_b(ct, out, a, b):
    sa, sb = shape_of(a), shape_of(b)
    if len(sa) == 1:  # out[..., n] = sum_k a[k] b[..., k, n]: an outer product
        if len(sb) == 1:
            return families.times(ct, a)
        return families.times(sh.expand_dims(ct, -2), sh.reshape(a, (sa[0], 1)))
    if len(sb) <= 2:
        # b has no batch axes: fold a's batch axes into its rows, so the sum over them
        # happens inside one matrix product instead of after a batched one.
        count = _size(sa[:-1])  # not -1, which cannot be resolved when k is 0
        rows = sh.reshape(a, (count, sa[-1]))
        ct = sh.reshape(ct, (count,) + sb[1:])
        return rule_matmul(ct, rows) if len(sb) == 1 else rule_matmul(sh.swapaxes(rows, 0, 1),
                                                                       ct)
    return _matmul_vjp_general(ct, a, b, 1)


def _matmul_batch(axis_size, values, batch_axes):
    a, b = values
    a_batched, b_batched = batch_axes[0] is not None, batch_axes[1] is not None
    sa = shape_of(a)[1:] if a_batched else shape_of(a)  # one example's shapes
    sb = shape_of(b)[1:] if b_batched else shape_of(b)
    if not b_batched and len(sb) <= 2:
        # b has no batch axes: the stacked a's leading axis is just one more batch (or row)
        # axis of a, whatever a's rank.
        return matmul_p(a, b), 0
    if not a_batched and len(sb) == 1:
        # a @ b_i for every column b_i: one product with the stacked columns.
        return sh.moveaxis(matmul_p(a, sh.swapaxes(b, 0, 1)), -1, 0), 0
    # General case: promote 1-D examples to matrices, and give each batched operand
    # enough size-1 axes after its batch axis that the batch axis lines up with the
    # result's axis 0 instead of broadcasting against the other operand's batch axes.
    pa, pb = _promoted(sa, sb)
    rank = max(len(pa), len(pb))
    if a_batched:
        a = sh.reshape(a, (axis_size,) + (1,) * (rank - len(pa)) + pa)
    elif pa != sa:
        a = sh.reshape(a, pa)
    if b_batched:
        b = sh.reshape(b, (axis_size,) + (1,) * (rank - len(pb)) + pb)
    elif pb != sb:
        b = sh.reshape(b, pb)
    return sh.reshape(matmul_p(a, b), (axis_size,) + _matmul_shape(sa, sb)), 0


matmul_p = Primitive("matmul", np.matmul, _matmul_jvp, (_matmul_vjp_a, _matmul_vjp_b),
                     _matmul_batch, vjp_ignores=("out",), sparsity=sr.matmul_sparsity,
                     traits=Traits(operator="@"))
matmul_p.jet = ta.multilinear(matmul_p, safe=rule_contraction)   # the Cauchy product


def _matmul_shape(sa, sb):
    """The shape of ``a @ b``, or a NumPy-like ``ValueError`` naming both shapes."""
    for i, s in enumerate((sa, sb)):
        if not s:
            raise ValueError(f"matmul: input operand {i} does not have enough dimensions "
                             f"(it is 0-d, shapes {sa} and {sb}); use multiply for scalars")
    pa, pb = _promoted(sa, sb)
    if pa[-1] != pb[-2]:
        raise ValueError(f"matmul: contraction dimension mismatch for shapes {sa} and {sb}: "
                         f"the last axis of the first operand has size {pa[-1]}, the "
                         f"{'only' if len(sb) == 1 else 'second-to-last'} axis of the second "
                         f"has size {pb[-2]}")
    try:
        batch = np.broadcast_shapes(pa[:-2], pb[:-2])
    except ValueError:
        raise ValueError(f"matmul: the batch dimensions of shapes {sa} and {sb} "
                         f"({pa[:-2]} and {pb[:-2]}) cannot be broadcast together") from None
    return batch + pa[-2:-1] * (len(sa) > 1) + pb[-1:] * (len(sb) > 1)


def matmul(a, b):
    """Matrix product with NumPy's rules, as ``np.matmul`` (and ``a @ b``): 1-D operands are
    promoted to a row / column and the promoted axis dropped; batch axes broadcast."""
    a, b = as_array(a), as_array(b)
    sa, sb = shape_of(a), shape_of(b)
    if not (len(sa) == 2 and len(sb) == 2 and sa[1] == sb[0]):  # the common case is valid
        _matmul_shape(sa, sb)
    return matmul_p(a, b)


# === einsum =============================================================================
# Normalised subscripts are "t1,t2,...->out": every term lists one letter per axis of its
# operand, and a letter has the same size wherever it occurs.

_LETTERS = string.ascii_uppercase + string.ascii_lowercase  # sublist label k is _LETTERS[k]

# Above this many iterations of the naive nested loop (the product of all label sizes),
# np.einsum's path optimisation (which hands pairs to BLAS) outweighs its ~10-30us overhead.
_OPTIMIZE_ABOVE = 1 << 15


def _split(subscripts):
    inputs, out = subscripts.split("->")
    return inputs.split(","), out


def _join(terms, out):
    return ",".join(terms) + "->" + out


def _fresh_letters(used, count):
    fresh = [c for c in _LETTERS if c not in used][:count]
    if len(fresh) < count:
        raise ValueError(f"einsum: too many distinct indices (at most {len(_LETTERS)} letters "
                         "can be used, including the axes covered by '...' and by vmap)")
    return fresh


@functools.lru_cache(maxsize=1024)
def _optimize(subscripts, shapes):
    """Whether ``np.einsum`` should plan a contraction path for these operands."""
    terms, out = _split(subscripts)
    if len(terms) < 2:
        return False
    sizes = {}
    for term, dims in zip(terms, shapes):
        sizes.update(zip(term, dims))
    if all(label in out for label in sizes):  # nothing is summed: no BLAS to gain
        return False
    if len(terms) == 2 and set(terms[0]) == set(terms[1]):
        return False   # a product summed entry by entry ('Aab,Aab->Ab'): a planned path
        # would go through a batched dot, ten times slower than the single pass
    return int(np.prod(list(sizes.values()), dtype=float)) > _OPTIMIZE_ABOVE


def _einsum_impl(*operands, subscripts):
    return np.einsum(subscripts, *operands,
                     optimize=_optimize(subscripts, tuple(np.shape(x) for x in operands)))


def _einsum_jvp(primals, tangents, subscripts):
    return einsum_p(*primals, subscripts=subscripts), add_tangents(
        tangents, lambda i, t: rule_contraction(
            functools.partial(einsum_p, subscripts=subscripts), *primals[:i], t, *primals[i + 1:]))


def _einsum_vjp(i, ct, out, *operands, subscripts):
    """Cotangent of operand ``i``: the einsum of the cotangent with the other operands that
    produces operand ``i``'s subscripts.

    Two kinds of labels of operand ``i`` need care. A repeated label ('ii') picks a
    diagonal, so its cotangent is zero off the diagonal: each repeat gets a fresh letter tied
    to the first by an identity matrix ('ia' with ``eye``). A label found nowhere else was
    summed over, so the cotangent is constant along it: computed without it, then broadcast.
    """
    terms, out_term = _split(subscripts)
    dims = shape_of(operands[i])
    fresh = iter(_fresh_letters(set(subscripts), len(terms[i]) - len(set(terms[i]))))
    target, seen = [], set()
    in_terms = [out_term] + terms[:i] + terms[i + 1:]
    in_ops = [ct, *operands[:i], *operands[i + 1:]]
    for label, size in zip(terms[i], dims):
        if label in seen:
            new = next(fresh)
            in_terms.append(label + new)
            in_ops.append(np.eye(size, dtype=dtype_of(ct)))
            label = new
        seen.add(label)
        target.append(label)
    available = set("".join(in_terms))
    kept = "".join(label for label in target if label in available)
    g = rule_contraction(lambda *ops: _contract(in_terms, kept, ops), *in_ops)
    if len(kept) < len(target):
        g = sh.reshape(g, tuple(d if label in available else 1
                                for label, d in zip(target, dims)))
        g = sh.broadcast_to(g, dims)
    return g


def _einsum_batch(axis_size, values, batch_axes, subscripts):
    terms, out = _split(subscripts)
    (b,) = _fresh_letters(set(subscripts), 1)
    terms = [b + t if axis is not None else t for t, axis in zip(terms, batch_axes)]
    return einsum_p(*values, subscripts=_join(terms, b + out)), 0


# np.einsum accepts at most 64 operands; a VJP rule per position lets the reverse engine
# compute only the cotangents of the operands being differentiated.
_MAX_OPERANDS = 64
einsum_p = Primitive("einsum", _einsum_impl, _einsum_jvp,
                     tuple(functools.partial(_einsum_vjp, i) for i in range(_MAX_OPERANDS)),
                     _einsum_batch, vjp_ignores=("out",), sparsity=sr.einsum_sparsity)
einsum_p.jet = ta.multilinear(einsum_p, safe=rule_contraction)   # linear in each operand


def _contract(terms, out, operands):
    """``einsum`` of normalised ``terms -> out``, as a sum and/or transpose when that is all
    it is (one operand without repeated labels)."""
    if len(operands) == 1 and len(set(terms[0])) == len(terms[0]):
        (x,), (term,) = operands, terms
        summed = tuple(p for p, label in enumerate(term) if label not in out)
        if summed:
            x = sum_p(x, axis=summed, keepdims=False)
            term = "".join(label for label in term if label in out)
        return sh.transpose(x, tuple(term.index(label) for label in out))
    return einsum_p(*operands, subscripts=_join(terms, out))


def _parse_term(term, where):
    """Labels of one subscript term, with ``None`` standing for its ellipsis."""
    labels, i = [], 0
    while i < len(term):
        c = term[i]
        if c == ".":
            if term[i:i + 3] != "..." or None in labels:
                raise ValueError(f"einsum: {where} '{term}' contains a '.' that is not part "
                                 "of a single ellipsis ('...')")
            labels.append(None)
            i += 3
        elif c in _LETTERS:
            labels.append(c)
            i += 1
        else:
            raise ValueError(f"einsum: invalid subscript {c!r} in {where} '{term}'; "
                             "subscripts must be letters")
    return labels


@functools.lru_cache(maxsize=1024)
def _normalize(subscripts, shapes):
    """Normalised ``(terms, out)`` for ``shapes``, and for each operand the axes to squeeze
    (size-1 axes of a label that is larger elsewhere: the operand broadcasts along it)."""
    subscripts = subscripts.replace(" ", "")
    described = f"subscripts {subscripts!r} with operand shapes {list(shapes)}"
    if subscripts.count("->") > 1:
        raise ValueError(f"einsum: {described} contain more than one '->'")
    inputs, _, out = subscripts.partition("->")
    explicit = "->" in subscripts
    raw = inputs.split(",")
    if len(raw) != len(shapes):
        raise ValueError(f"einsum: {described} name {len(raw)} operand(s), but "
                         f"{len(shapes)} were given")
    parsed = [_parse_term(t, f"the subscripts of operand {k}") for k, t in enumerate(raw)]
    ellipsis_ndim = []
    for k, (labels, dims) in enumerate(zip(parsed, shapes)):
        named = len(labels) - (None in labels)
        if None in labels and named <= len(dims):
            ellipsis_ndim.append(len(dims) - named)
        elif named == len(dims):
            ellipsis_ndim.append(0)
        else:
            raise ValueError(f"einsum: operand {k} has {len(dims)} dimension(s) but its "
                             f"subscripts '{raw[k]}' name {named} ({described})")
    n_ell = max(ellipsis_ndim, default=0)
    ell = _fresh_letters(set(subscripts), n_ell)
    terms = []
    for labels, e in zip(parsed, ellipsis_ndim):
        terms.append("".join("".join(ell[n_ell - e:]) if label is None else label
                             for label in labels))
    if explicit:
        out_labels = _parse_term(out, "the output subscripts")
        if None not in out_labels and n_ell:
            raise ValueError(f"einsum: {described}: the operands have dimensions covered by "
                             "'...' but the output has no '...' to hold them")
        out = "".join("".join(ell) if label is None else label for label in out_labels)
        for label in out:
            if out.count(label) > 1:
                raise ValueError(f"einsum: output subscript {label!r} repeated ({described})")
            if not any(label in t for t in terms):
                raise ValueError(f"einsum: output subscript {label!r} appears in no input "
                                 f"({described})")
    else:
        named = "".join(label for labels in parsed for label in labels if label is not None)
        out = "".join(ell) + "".join(sorted(c for c in set(named) if named.count(c) == 1))
    # Sizes: a label has one size; size 1 broadcasts against it (NumPy allows that too).
    sizes, first = {}, {}
    for k, (term, dims) in enumerate(zip(terms, shapes)):
        for label, d in zip(term, dims):
            in_operand = {dd for ll, dd in zip(term, dims) if ll == label}
            if len(in_operand) > 1:
                raise ValueError(f"einsum: index {label!r} is repeated in operand {k} over "
                                 f"axes of different sizes ({described})")
            if sizes.get(label, 1) == 1:
                sizes[label] = d
                first[label] = k
            elif d not in (1, sizes[label]):
                what = f"index {label!r}" if label not in ell else "the '...' dimensions"
                raise ValueError(
                    f"einsum: {what} has size {sizes[label]} in operand {first[label]} "
                    f"(shape {shapes[first[label]]}) but size {d} in operand {k} (shape "
                    f"{dims}), which cannot be broadcast together ({described})")
    squeeze = []
    for k, (term, dims) in enumerate(zip(terms, shapes)):
        drop = tuple(p for p, (label, d) in enumerate(zip(term, dims))
                     if d == 1 and sizes[label] != 1)
        squeeze.append(drop)
        if drop:
            terms[k] = "".join(label for p, label in enumerate(term) if p not in drop)
    return tuple(terms), out, tuple(squeeze)


def _sublist_subscripts(args):
    """``(subscripts, operands)`` from NumPy's interleaved form ``einsum(op0, sublist0,
    op1, sublist1, ..., [sublistout])``."""

    def term(sublist):
        try:
            return "".join("..." if s is Ellipsis else _LETTERS[s] for s in sublist)
        except (IndexError, TypeError):
            raise ValueError(f"einsum: a sublist holds ints in [0, {len(_LETTERS)}) and "
                             f"Ellipsis, got {sublist!r}") from None

    operands, terms = list(args[0::2]), [term(s) for s in args[1::2]]
    if len(args) % 2:
        return ",".join(terms[:len(operands) - 1]) + "->" + term(operands[-1]), operands[:-1]
    return ",".join(terms), operands


def einsum(subscripts, *operands, optimize=None):
    """Einstein summation, as ``np.einsum``: implicit or explicit ('->') output, '...'
    broadcasting, repeated indices (diagonals), any number of operands, and the interleaved
    ``einsum(op0, sublist0, op1, sublist1, ...)`` form. ``optimize`` is accepted for
    compatibility; the contraction path is chosen from the operand sizes."""
    if not isinstance(subscripts, str):
        subscripts, operands = _sublist_subscripts((subscripts,) + operands)
    if not operands:
        raise ValueError("einsum: no operands given")
    operands = [as_array(x) for x in operands]
    terms, out, squeeze = _normalize(subscripts, tuple(shape_of(x) for x in operands))
    for k, drop in enumerate(squeeze):
        if drop:
            operands[k] = sh.squeeze(operands[k], drop)
    return _contract(list(terms), out, operands)


# === compositions =======================================================================


def tensordot(a, b, axes=2):
    """Sum of products over the last ``axes`` axes of ``a`` and the first of ``b`` (an int),
    or over the axes ``axes = (axes_a, axes_b)``, as ``np.tensordot``; the result has the
    remaining axes of ``a`` then those of ``b``. Computed as one matrix product."""
    a, b = as_array(a), as_array(b)
    sa, sb = shape_of(a), shape_of(b)
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0 or n > len(sa) or n > len(sb):
            raise ValueError(f"tensordot: axes={n} is invalid for shapes {sa} and {sb}")
        axes_a, axes_b = list(range(len(sa) - n, len(sa))), list(range(n))
    else:
        try:
            axes_a, axes_b = axes
        except (TypeError, ValueError):
            raise ValueError(f"tensordot: axes must be an int or a pair of sequences, got "
                             f"{axes!r}") from None
        axes_a = [axes_a] if isinstance(axes_a, (int, np.integer)) else list(axes_a)
        axes_b = [axes_b] if isinstance(axes_b, (int, np.integer)) else list(axes_b)
        if len(axes_a) != len(axes_b):
            raise ValueError(f"tensordot: axes {axes!r} name {len(axes_a)} axes of the first "
                             f"operand but {len(axes_b)} of the second")
        axes_a = [sh._normalize_axis(x, len(sa)) for x in axes_a]
        axes_b = [sh._normalize_axis(x, len(sb)) for x in axes_b]
        if len(set(axes_a)) != len(axes_a) or len(set(axes_b)) != len(axes_b):
            raise ValueError(f"tensordot: repeated axis in axes={axes!r}")
    for i, j in zip(axes_a, axes_b):
        if sa[i] != sb[j]:
            raise ValueError(f"tensordot: shape-mismatch for sum: axis {i} of shape {sa} has "
                             f"size {sa[i]} but axis {j} of shape {sb} has size {sb[j]}")
    free_a = [i for i in range(len(sa)) if i not in axes_a]
    free_b = [j for j in range(len(sb)) if j not in axes_b]
    out_a, out_b = tuple(sa[i] for i in free_a), tuple(sb[j] for j in free_b)
    contracted = _size([sa[i] for i in axes_a])
    a = sh.reshape(sh.transpose(a, free_a + axes_a), (_size(out_a), contracted))
    b = sh.reshape(sh.transpose(b, axes_b + free_b), (contracted, _size(out_b)))
    return sh.reshape(matmul_p(a, b), out_a + out_b)


def dot(a, b):
    """Dot product, as ``np.dot``: a product for 0-d operands, ``matmul`` for 1-D and 2-D
    ones, and for N-D a sum over the last axis of ``a`` and the second-to-last of ``b``."""
    a, b = as_array(a), as_array(b)
    sa, sb = shape_of(a), shape_of(b)
    if not sa or not sb:
        return ew.multiply_p(a, b)
    if len(sb) <= 2 or len(sa) == 1:
        # For these, np.dot and np.matmul agree (a 1-D ``a`` meets b's second-to-last axis).
        if sa[-1] != sb[max(len(sb) - 2, 0)]:
            raise ValueError(f"dot: shapes {sa} and {sb} not aligned: {sa[-1]} (dim "
                             f"{len(sa) - 1}) != {sb[max(len(sb) - 2, 0)]} (dim "
                             f"{max(len(sb) - 2, 0)})")
        return matmul_p(a, b)
    if sa[-1] != sb[-2]:
        raise ValueError(f"dot: shapes {sa} and {sb} not aligned: {sa[-1]} (dim "
                         f"{len(sa) - 1}) != {sb[-2]} (dim {len(sb) - 2})")
    return tensordot(a, b, axes=([len(sa) - 1], [len(sb) - 2]))


def inner(a, b):
    """Sum of products over the last axes, as ``np.inner``: shape ``a.shape[:-1] +
    b.shape[:-1]`` (a plain product for 0-d operands)."""
    a, b = as_array(a), as_array(b)
    sa, sb = shape_of(a), shape_of(b)
    if not sa or not sb:
        return ew.multiply_p(a, b)
    if sa[-1] != sb[-1]:
        raise ValueError(f"inner: shapes {sa} and {sb} not aligned: {sa[-1]} (dim "
                         f"{len(sa) - 1}) != {sb[-1]} (dim {len(sb) - 1})")
    if len(sb) == 1:
        return matmul_p(a, b)
    if len(sa) == 1:
        return matmul_p(b, a)
    return tensordot(a, b, axes=([len(sa) - 1], [len(sb) - 1]))


def outer(a, b):
    """Outer product of the flattened inputs, as ``np.outer``: shape ``(a.size, b.size)``."""
    a, b = as_array(a), as_array(b)
    return ew.multiply_p(sh.reshape(a, (-1, 1)), sh.reshape(b, (1, -1)))



def vdot(a, b):
    """Dot product of the flattened inputs, conjugating the first if complex, as
    ``np.vdot``."""
    a, b = as_array(a), as_array(b)
    sa, sb = shape_of(a), shape_of(b)
    size_a, size_b = _size(sa), _size(sb)
    if size_a != size_b:
        raise ValueError(f"vdot: the inputs have different sizes ({size_a} for shape {sa}, "
                         f"{size_b} for shape {sb})")
    if dtype_of(a).kind == "c":
        a = ew.conj_p(a)
    return matmul_p(sh.reshape(a, (size_a,)), sh.reshape(b, (size_b,)))
