"""One pass over a matrix for a forward-over-reverse product: ``A x``, ``A v``, the
elementwise work on them, and ``u A``, in blocks of rows.

In a Hessian-vector product of ``sum(g(A x))`` the replay computes ``A x`` and ``A v``
(merged: ``products.shared_matvecs``), a few elementwise operations giving ``u`` (for
``tanh``: ``u = -2 t (1 - t**2) (A v)`` with ``t = tanh(A x)``), and then ``u A``. Entry
``i`` of ``u`` depends only on row ``i`` of ``A``: so a loop over blocks of rows can compute
the block's entries of ``A x`` and ``A v``, of every elementwise value, and add the
block's share ``u_b A_b`` of ``u A``, while the block is still in the level-2 cache. The
matrix is read from memory once instead of twice.

``fuse`` finds that shape in a program (after ``products.merge``): a left
``shared_matvecs`` of a matrix, then only elementwise operations on vectors of its rows
(NumPy ufuncs without parameters, with constants of no dimension or vectors computed
before), then ``matmul(u, matrix)`` with the same matrix (or a right ``shared_matvecs``
of it: ``u0 A`` and ``u A`` when the gradient is returned too). It replaces them by one
equation whose implementation is generated Python (a loop with ``out=`` slices): every
intermediate vector is still computed whole, so guards and later equations read it as
before. Only ``u A`` changes: it is summed block by block, so it may differ from the
single product in the last bits (the order of the additions). Where the matrix is not
C-contiguous the loop runs as one block (the operations as recorded).

Guards on the fused values are checked after the loop; a value that fails its check
(a NaN) has then flowed through the rest of the block's arithmetic, quietly, before the
call traces again.
"""

import numpy as np

from ..core.primitive import Primitive
from ..interpreters.ir import Equation, Program
from .buffers import writes_out
from .products import BLOCK_BYTES, MIN_BLOCK_ROWS


def _row_blocks_primitive(impl):
    """The primitive of one fused equation (listing and replay only: no rules)."""
    return Primitive("row_blocks", impl, multiple_results=True, register=False)


def _elementwise(eqn):
    """An elementwise equation the loop can run as ``impl(*inputs, out=rows)``."""
    return not eqn.params and not eqn.errstate and writes_out(eqn)


def _products_side(eqn):
    """``"left"`` for an equation computing ``matrix @ v`` for vectors ``v`` (its first
    input the matrix: the ``matrix_products`` trait), ``"right"`` for ``v @ matrix``,
    else None."""
    side = eqn.prim.traits.matrix_products
    return None if side is None else side(eqn.params)


def _same_ref(a, b):
    if type(a) is int or type(b) is int:
        return a == b
    return a.value is b.value


def fuse(program):
    """A copy of ``program`` with each fusable stretch as one ``row_blocks`` equation, or
    the program itself where there is none."""
    equations = program.equations
    avals = program.avals
    fused_equations = []
    i = 0
    while i < len(equations):
        found = _stretch(equations, i, avals)
        if found is None:
            fused_equations.append(equations[i])
            i += 1
            continue
        end, fused = found
        fused_equations.append(fused)
        i = end + 1
    if len(fused_equations) == len(equations):
        return program
    copy = Program.__new__(Program)
    copy.__dict__.update(program.__dict__)
    copy.equations = fused_equations
    return copy


def _stretch(equations, i, avals):
    """``(index of the final product, fused equation)`` for a stretch starting at ``i``."""
    first = equations[i]
    if _products_side(first) != "left":
        return None
    matrix = first.inputs[0]
    n = first.avals[0][0][0]
    dtype = np.dtype(first.avals[0][1])
    local = set(first.outs)   # the values the stretch computes so far
    region = []
    j = i + 1
    while j < len(equations):
        eqn = equations[j]
        if not _elementwise(eqn) or eqn.avals[0] != ((n,), dtype):
            break
        ok = True
        for ref in eqn.inputs:
            if type(ref) is int:
                shape, dt = avals[ref]
                ok = ok and (ref in local or shape == (n,)) and np.dtype(dt).kind in "fc"
            else:
                ok = ok and np.ndim(ref.value) == 0
        if not ok:
            break
        region.append(eqn)
        local.add(eqn.outs[0])
        j += 1
    if j == len(equations):
        return None
    last = equations[j]
    if last.prim.traits.operator == "@" and not last.params and not last.errstate \
            and len(last.inputs) == 2:
        vectors, right = last.inputs[:1], last.inputs[1]
    elif _products_side(last) == "right":
        vectors, right = last.inputs[1:], last.inputs[0]
    else:
        return None
    if not _same_ref(right, matrix) or any(type(u) is not int or u not in local
                                           for u in vectors):
        return None
    if any(np.dtype(d) != dtype or len(shape) != 1 for shape, d in last.avals):
        return None
    return j, _fused(first, region, last, vectors, matrix, dtype)


def _fused(first, region, last, vectors, matrix, dtype):
    """The fused equation: inputs the matrix and every outside value read; outputs the
    merged products', the elementwise values and the final product."""
    local = set(first.outs) | {e.outs[0] for e in region}
    outside = {}   # the values read from before the stretch, in order (a dict as a set)
    for eqn in [first] + region:
        for ref in eqn.inputs[1:] if eqn is first else eqn.inputs:
            if type(ref) is int and ref not in local:
                outside[ref] = None
    consts = {}
    names = {"_np": np, "_empty": np.empty, "_zeros": np.zeros, "_dtype": dtype,
             "_matmul": np.matmul, "_add": np.add, "_STEP": BLOCK_BYTES,
             "_MIN": MIN_BLOCK_ROWS}

    def ref_name(ref):
        if type(ref) is int:
            return f"v{ref}"
        key = f"c{len(consts)}"
        consts[key] = ref.value
        return key

    def sliced(ref):   # this block's part of a vector: a view made once per block
        if type(ref) is int:
            return f"w{ref}"
        return ref_name(ref)

    params = ["m"] + [f"v{r}" for r in outside]
    body = ["n, k = m.shape",
            "step = max(_MIN, _STEP // max(1, k * m.itemsize)) if m.flags.c_contiguous "
            "else n"]
    for v in sorted(local):
        body.append(f"v{v} = _empty(n, _dtype)")
    for o in last.outs:
        body.append(f"v{o} = _zeros(k, _dtype)")
    loop = ["e = s + step", "b = m[s:e]"]
    views = sorted(local | {r for e in region for r in e.inputs if type(r) is int})
    loop += [f"w{v} = v{v}[s:e]" for v in views]
    for vec, o in zip(first.inputs[1:], first.outs):
        loop.append(f"_matmul(b, {ref_name(vec)}, out=w{o})")
    for eqn in region:
        f = f"f{len(names)}"
        names[f] = eqn.prim.impl
        args = ", ".join(sliced(r) for r in eqn.inputs)
        loop.append(f"{f}({args}, out=w{eqn.outs[0]})")
    for u, o in zip(vectors, last.outs):
        loop.append(f"_add(v{o}, _matmul(w{u}, b), out=v{o})")
    body.append("for s in range(0, n, step):")
    body += ["    " + line for line in loop]
    results = [f"v{o}" for o in first.outs + tuple(e.outs[0] for e in region) + last.outs]
    body.append(f"return ({', '.join(results)},)")
    names.update(consts)
    source = (f"def make({', '.join(names)}):\n"
              f"    def row_blocks({', '.join(params)}):\n"
              + "".join(f"        {line}\n" for line in body) + "    return row_blocks\n")
    namespace = {}
    exec(compile(source, "<diffkit.jit row blocks>", "exec"), namespace)  # noqa: S102
    impl = namespace["make"](*names.values())   # by position: keywords cost n**2 to bind
    impl.source = source
    outs = first.outs + tuple(e.outs[0] for e in region) + last.outs
    avals = first.avals + tuple(e.avals[0] for e in region) + last.avals
    return Equation(_row_blocks_primitive(impl), {}, (matrix, *outside), outs, avals, None)
