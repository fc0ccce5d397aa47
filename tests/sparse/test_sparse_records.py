"""Pattern detection on every op record: the detected global pattern holds every nonzero of
the dense Jacobian at random points, and for elementwise, linear and indexing functions
it is exactly their structure. Then completeness: which primitives have structural
rules, and which fall back to dense blocks."""

import warnings

import numpy as np
import pytest
from records import RECORDS, case_id, cases

import diffkit as dk
from diffkit.core.primitive import PRIMITIVES
from diffkit.errors import DensePatternWarning
from diffkit.interpreters import sparsity  # noqa: F401 (sets the elementwise rules)
from diffkit.sparse.flat import flat_problem

POINTS = 2   # random points per case; a derivative vanishing at all of them is no accident

# Records whose pattern must equal the structure exactly: every elementwise record, and
# the linear and indexing functions among the others.
LINEAR_AND_INDEXING = {
    "sum_all", "sum_axis0", "sum_axis-1_keepdims", "sum_axes02", "mean_all", "mean_axis0",
    "mean_axis-1_keepdims", "mean_axes02", "reshape", "reshape_infer", "reshape_merge",
    "reshape_to_scalar", "reshape_from_scalar", "transpose", "transpose_axes",
    "transpose_T", "moveaxis", "moveaxis_many", "swapaxes", "expand_dims_last",
    "expand_dims_many", "squeeze", "squeeze_axis", "squeeze_axes", "ravel", "broadcast_to",
    "broadcast_to_scalar", "broadcast_to_rows", "getitem_int", "getitem_negative_int",
    "getitem_slice", "getitem_step_slice", "getitem_reverse_slice", "getitem_ellipsis",
    "getitem_newaxis", "getitem_int_and_slice", "getitem_int_array", "getitem_int_array_axis1",
    "getitem_int_array_2d", "getitem_int_arrays_pair", "getitem_bool_mask",
    "getitem_bool_row_mask", "getitem_mixed_int_array_slice", "getitem_separated_int_arrays",
    "getitem_scalar_int", "concatenate", "concatenate_axis1", "concatenate_axis-1_three",
    "concatenate_flat", "concatenate_same", "stack", "stack_axis1", "stack_axis-1_three",
    "split", "split_points_axis1", "array_split", "array_split_axis-1", "hsplit", "vsplit",
    "dsplit", "tile", "tile_more_reps", "tile_fewer_reps", "repeat", "repeat_axis1",
    "repeat_counts", "pad_constant", "pad_edge", "pad_reflect", "pad_symmetric", "pad_wrap",
    "roll", "roll_axis", "roll_tuple", "roll_same_axis_twice", "flip", "flip_axes",
    "flip_axis-1", "fliplr", "flipud", "rot90", "rot90_k3_axes", "rot90_k2", "rollaxis",
    "diag_vector", "diag_matrix", "diagflat", "diagonal", "diagonal_offset", "trace", "tril",
    "triu", "take_flat", "take_axis1", "take_wrap", "take_clip", "take_along_axis",
    "cumsum_flat", "cumsum_axis0", "cumsum_axis-1", "matmul", "einsum_ij,jk->ik",
    "einsum_ij->", "einsum_ij->ji", "einsum_ii->i", "einsum_bij,bjk->bik", "at_add_repeated",
    "at_get", "diff", "diff_n2_axis0", "cross",
}
# Elementwise records whose derivative vanishes where the structure cannot know it.
NOT_EXACT = {
    "power_zero_exponent": "x ** 0 has derivative 0 everywhere",
    "fmod": "the derivative in y, -trunc(x / y), vanishes where |x| < |y|",
    "remainder": "the derivative in y, -floor(x / y), vanishes where 0 <= x / y < 1",
    "median_ties": "order_statistics has no rule (a dense block)",
}
# Piecewise records: their global pattern keeps every branch, their local pattern (at the
# point) is exact.
PIECEWISE = ("maximum", "minimum", "fmax", "fmin", "clip", "heaviside", "where")


def _problem(record, shapes, rng):
    args = tuple(record.domain(i).sample(s, rng) for i, s in enumerate(shapes))
    argnums = tuple(i for i, a in enumerate(args) if np.asarray(a).dtype.kind == "f")
    return args, argnums


def _dense(record, args, argnums):
    g, x = flat_problem(record.fun, args, {}, argnums, "test")
    out = np.asarray(g(x))
    if out.dtype.kind != "f":
        return None
    return np.asarray(dk.jacfwd(g)(x)).reshape(out.size, x.size)


def _has_real_input(record, shapes):
    """A record with a real input to differentiate (the others, integer and boolean inputs
    or a zero derivative, have no Jacobian pattern to check)."""
    return not record.zero_derivative and any(
        np.dtype(record.domain(i).dtype).kind == "f" for i in range(len(shapes)))


CASES = [(r, s) for r, s in cases() if _has_real_input(r, s)]


@pytest.mark.parametrize("record, shapes", CASES, ids=[case_id(r, s) for r, s in CASES])
def test_pattern_holds_every_nonzero(record, shapes):
    rng = np.random.default_rng(7)
    args, argnums = _problem(record, shapes, rng)
    assert argnums, "a real input is drawn for every case kept"
    try:
        dense = _dense(record, args, argnums)
    except Exception as err:   # complex outputs, integer outputs: not for sparse patterns
        pytest.skip(f"no real Jacobian ({type(err).__name__}): a sparse pattern is of a real "
                    "Jacobian; tests/test_primitives.py checks this record's derivatives")
    if dense is None:
        pytest.skip("integer output: no Jacobian to find a pattern of (tests/test_primitives.py "
                    "checks this record)")
    exact = (record.elementwise or record.name in LINEAR_AND_INDEXING) and \
        record.name not in NOT_EXACT
    with warnings.catch_warnings():
        warnings.simplefilter("error" if exact else "ignore", DensePatternWarning)
        pattern = dk.jacobian_sparsity(record.fun, argnums=argnums)(*args).toarray()
        local = dk.jacobian_sparsity(record.fun, argnums=argnums, local=True)(*args).toarray() \
            if exact else pattern
    assert not (local & ~pattern).any(), "the local pattern is not within the global one"
    if exact:
        extra = np.argwhere(local & (dense == 0))
        assert not len(extra), f"the local pattern has structural zeros at {extra[:5].tolist()}"
        missed = np.argwhere(~local & (dense != 0))
        assert not len(missed), f"the local pattern misses {missed[:5].tolist()}"
    nonzero = dense != 0
    for _ in range(POINTS - 1):   # new values of the real inputs, the same index arrays
        more, _ = _problem(record, shapes, rng)
        more = tuple(more[i] if i in argnums else a for i, a in enumerate(args))
        nonzero |= _dense(record, more, argnums) != 0
    missed = np.argwhere(nonzero & ~pattern)
    assert not len(missed), f"the pattern misses {missed[:5].tolist()}"
    if exact and not record.name.startswith(PIECEWISE):
        extra = np.argwhere(pattern & ~nonzero)
        assert not len(extra), f"the pattern has structural zeros at {extra[:5].tolist()}"


# Primitives with a derivative that have no structural rule yet: detection gives each a
# dense block (with a DensePatternWarning). Adding a rule removes a name from this list.
DENSE_FALLBACK = {
    "convolve_nd", "det_hessian", "eigh_spectral", "polyroots", "rotate_ties",
    "spectral_function", "svd_spectral",
}


def test_which_primitives_have_sparsity_rules():
    import diffkit.scipy  # noqa: F401 (registers every primitive)
    without = {name for name, prim in PRIMITIVES.items()
               if not prim.nondiff and prim.sparsity is None}
    assert without == DENSE_FALLBACK, (
        f"new primitives without a rule: {sorted(without - DENSE_FALLBACK)}; "
        f"rules added (remove from the list): {sorted(DENSE_FALLBACK - without)}")
    with_rules = [name for name, prim in PRIMITIVES.items() if prim.sparsity is not None]
    assert len(with_rules) > 150
    assert {"sum", "prod", "max", "min", "reshape", "transpose", "broadcast_to",
            "concatenate", "getitem", "scatter_add", "where", "matmul", "einsum", "split",
            "cumsum", "multiply", "sin"} <= set(with_rules)


def test_a_primitive_without_a_rule_warns_and_goes_dense():
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    import diffkit.scipy.signal as dsig
    with pytest.warns(DensePatternWarning, match="'convolve_nd'"):
        pattern = dk.jacobian_sparsity(lambda x: dsig.convolve(x, np.ones((2, 2))))(np.ones((3, 3)))
    assert pattern.shape == (16, 9) and pattern.toarray().all()
    # a stack of linear systems has a block-diagonal pattern, with no warning
    stack = np.stack([a, 2 * a, 3 * a])
    pattern = dk.jacobian_sparsity(lambda b: dk.numpy.linalg.solve(stack, b))(np.ones((3, 2, 1)))
    np.testing.assert_array_equal(pattern.toarray(), np.kron(np.eye(3), np.ones((2, 2))))


def test_records_cover_the_rules():
    assert len(RECORDS) > 500
