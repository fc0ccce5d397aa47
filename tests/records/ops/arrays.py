"""Records for diffkit.ops.arrays: splitting, tiling, padding, rolling, diagonals, sorting,
interp, convolution, joining (see tests/records/ops/__init__.py for what each record is
checked for).
"""

import numpy as np

import diffkit.numpy as dnp

from ..domains import DISTINCT, INDEX, REAL, Domain
from ..op_record import one, records, unary

R = []

# --- split ----------------------------------------------------------------------------------
R += records("split", lambda x: dnp.split(x, 2), [((4,),), ((4, 3),)])
R += one("split_points_axis1", lambda x: dnp.split(x, [1, 3], axis=1), (2, 4))
R += records("array_split", lambda x: dnp.array_split(x, 3), [((7,),), ((4, 2),)])
R += one("array_split_axis-1", lambda x: dnp.array_split(x, 2, axis=-1), (2, 3))
R += one("array_split_overlapping", lambda x: dnp.array_split(x, [3, 1]), (4,))
R += one("split_one_piece", lambda x: dnp.split(x, 1), (3,))
R += one("hsplit", lambda x: dnp.hsplit(x, 2), (2, 4))
R += one("hsplit_1d", lambda x: dnp.hsplit(x, [1]), (3,))
R += one("vsplit", lambda x: dnp.vsplit(x, [1]), (3, 2))
R += one("dsplit", lambda x: dnp.dsplit(x, 2), (2, 3, 4))
# Only some pieces reach the output: the others get symbolic zero cotangents.
R += one("split_some_pieces", lambda x: dnp.split(x, 3)[1] * 2.0, (6,))

# --- tile, repeat ---------------------------------------------------------------------------
R += records("tile", lambda x: dnp.tile(x, 2), [((3,),), ((2, 3),), ((),)])
R += one("tile_more_reps", lambda x: dnp.tile(x, (2, 1, 2)), (2, 3))
R += one("tile_fewer_reps", lambda x: dnp.tile(x, (3,)), (2, 2))
R += records("repeat", lambda x: dnp.repeat(x, 2), [((3,),), ((2, 3),), ((),)])
R += one("repeat_axis1", lambda x: dnp.repeat(x, 3, axis=1), (2, 3))
R += one("repeat_counts", lambda x: dnp.repeat(x, [1, 0, 2], axis=0), (3, 2))

# --- pad ------------------------------------------------------------------------------------
R += records("pad_constant", lambda x: dnp.pad(x, 2), [((3,),), ((2, 3),)])
R += one("pad_constant_values", lambda x: dnp.pad(
    x, ((1, 0), (2, 1)), constant_values=((1.0, 2.0), (3.0, 4.0))), (2, 3))
R += records("pad_traced_constant", lambda x, c: dnp.pad(x, 1, constant_values=c),
             [((2, 3), ()), ((3,), ())])
R += one("pad_traced_constant_pairs", lambda x, c: dnp.pad(x, (1, 2), constant_values=c),
         (3,), (2,))
for _mode in ("edge", "reflect", "symmetric", "wrap"):
    R += one(f"pad_{_mode}", lambda x, m=_mode: dnp.pad(x, (1, 2), mode=m), (2, 3))
    R += one(f"pad_{_mode}_long", lambda x, m=_mode: dnp.pad(x, (4, 7), mode=m), (3,))
R += one("pad_reflect_axes", lambda x: dnp.pad(x, ((0, 1), (2, 0)), mode="reflect"), (2, 3))
R += one("pad_dict", lambda x: dnp.pad(x, {1: (1, 2)}, mode="wrap"), (2, 3))
for _mode, _shape in (("reflect", (2, 4)), ("symmetric", (3,))):
    R += one(f"pad_{_mode}_odd",
             lambda x, m=_mode: dnp.pad(x, (3, 7), mode=m, reflect_type="odd"), _shape)
R += one("pad_linear_ramp", lambda x: dnp.pad(x, 2, mode="linear_ramp", end_values=(1.0, -1.0)),
         (2, 3))
R += one("pad_linear_ramp_traced", lambda x, e: dnp.pad(x, (2, 1), mode="linear_ramp",
                                                        end_values=e), (3,), ())
for _mode in ("maximum", "minimum", "mean", "median"):
    # (3, 4) for the median: each statistic is then one entry, or the mean of two, of
    # distinct values (a median of averages could tie, a kink).
    R += one(f"pad_{_mode}", lambda x, m=_mode: dnp.pad(x, 2, mode=m),
             (3, 4) if _mode == "median" else (2, 3), domains=(DISTINCT,))
    if _mode in ("mean", "median"):
        R += one(f"pad_{_mode}_stat_length",
                 lambda x, m=_mode: dnp.pad(x, (1, 2), mode=m, stat_length=2), (4,),
                 domains=(DISTINCT,))
# Integer arrays under vmap: statistics rounded half to even, ramps rounded down, as NumPy.
R += one("pad_integer_statistics", lambda x, i: (
    dnp.pad(i, 2, "mean"), dnp.pad(i, (1, 2), "median"),
    dnp.pad(i, 2, "linear_ramp", end_values=7)), (2,), (3, 4),
    domains=(REAL, Domain("int 0..9", 0, 9, kind="int")), zero_derivative=True)

# --- roll, flip, rot90 ----------------------------------------------------------------------
R += records("roll", lambda x: dnp.roll(x, 1), [((4,),), ((2, 3),)])
R += one("roll_axis", lambda x: dnp.roll(x, -1, axis=1), (2, 3))
R += one("roll_tuple", lambda x: dnp.roll(x, (1, 2), axis=(0, 1)), (2, 3))
R += one("roll_same_axis_twice", lambda x: dnp.roll(x, (1, 1), axis=(1, 1)), (2, 4))
R += records("flip", dnp.flip, [((3,),), ((2, 3),)])
R += one("flip_axes", lambda x: dnp.flip(x, (0, 2)), (2, 3, 4))
R += one("flip_axis-1", lambda x: dnp.flip(x, -1), (2, 3))
R += one("fliplr", dnp.fliplr, (2, 3))
R += one("flipud", dnp.flipud, (3,))
R += one("rot90", dnp.rot90, (2, 3))
R += one("rot90_k3_axes", lambda x: dnp.rot90(x, 3, axes=(1, 2)), (2, 3, 4))
R += one("rot90_k2", lambda x: dnp.rot90(x, 2), (2, 3))
R += one("rollaxis", lambda x: dnp.rollaxis(x, 2), (2, 3, 4))

# --- atleast_nd -----------------------------------------------------------------------------
R += records("atleast_1d", dnp.atleast_1d, [((),), ((3,),)])
R += records("atleast_2d", dnp.atleast_2d, [((),), ((3,),)])
R += records("atleast_3d", dnp.atleast_3d, [((),), ((3,),), ((2, 3),)])
R += one("atleast_2d_several", lambda a, b: dnp.atleast_2d(a, b), (3,), ())

# --- diagonals and triangles ----------------------------------------------------------------
R += records("diag_vector", dnp.diag, [((3,),), ((1,),)])
R += one("diag_vector_k1", lambda v: dnp.diag(v, 1), (3,))
R += one("diag_vector_k-2", lambda v: dnp.diag(v, -2), (2,))
R += records("diag_matrix", dnp.diag, [((3, 3),), ((3, 4),)])
R += one("diag_matrix_k1", lambda x: dnp.diag(x, 1), (3, 4))
R += one("diagflat", lambda x: dnp.diagflat(x, -1), (2, 2))
R += one("diagonal", dnp.diagonal, (3, 4))
R += one("diagonal_offset", lambda x: dnp.diagonal(x, 1), (3, 4))
R += one("diagonal_axes", lambda x: dnp.diagonal(x, -1, axis1=2, axis2=0), (2, 3, 4))
R += records("trace", dnp.trace, [((3, 3),), ((2, 4),)])
R += one("trace_axes", lambda x: dnp.trace(x, 1, axis1=1, axis2=2), (2, 3, 4))
for _name, _fn in (("tril", dnp.tril), ("triu", dnp.triu)):
    R += records(_name, _fn, [((3, 4),), ((2, 3, 3),)])
    R += one(f"{_name}_k-1", lambda x, f=_fn: f(x, -1), (3, 3))
    R += one(f"{_name}_vector_k1", lambda x, f=_fn: f(x, 1), (3,))
R += records("kron", dnp.kron, [((2, 3), (2, 2)), ((3,), (2,)), ((), (2,)),
                                ((2, 1, 3), (3, 2))])

# --- take, select, append, delete, insert ---------------------------------------------------
WIDE_INDEX = Domain("index -4..6", -4, 6, kind="int")  # out of range for wrap/clip
R += one("take_flat", lambda x: dnp.take(x, [0, 2, 2]), (2, 3))
R += one("take_axis1", lambda x: dnp.take(x, np.array([[2, 0], [1, 1]]), axis=1), (2, 3))
R += one("take_scalar_index", lambda x: dnp.take(x, 1, axis=0), (3, 2))
R += one("take_wrap", lambda x: dnp.take(x, [4, -1, 7], axis=1, mode="wrap"), (2, 3))
R += one("take_clip", lambda x: dnp.take(x, [4, -1, 1], mode="clip"), (3,))
R += records("take_index_argument", lambda x, i: dnp.take(x, i, axis=0),
             [((3, 2), (4,)), ((3,), ())], (REAL, INDEX))
R += one("take_index_argument_wrap", lambda x, i: dnp.take(x, i, axis=1, mode="wrap"),
         (2, 3), (4,), domains=(REAL, WIDE_INDEX))
R += one("take_index_argument_clip", lambda x, i: dnp.take(x, i, mode="clip"),
         (4,), (3,), domains=(REAL, WIDE_INDEX))
R += one("take_along_axis", lambda x: dnp.take_along_axis(
    x, np.array([[0, 2], [3, 3], [1, 0]]), axis=1), (3, 4))
R += one("take_along_axis_broadcast", lambda x: dnp.take_along_axis(
    x, np.array([[2, 0, 1, 2]]), axis=0), (3, 4))
R += one("take_along_axis_none", lambda x: dnp.take_along_axis(
    x, np.array([5, 0, 5]), axis=None), (2, 3))
R += records("take_along_axis_index_argument",
             lambda x, i: dnp.take_along_axis(x, i, axis=1),
             [((3, 4), (3, 2)), ((3, 4), (1, 2))], (REAL, INDEX))
R += one("compress", lambda x: dnp.compress([True, False, True], x, axis=1), (2, 3))
AWAY = Domain("away from -0.5, 0.5", avoid=(-0.5, 0.5), margin=0.1)
R += records("select", lambda x, y: dnp.select([x > 0.5, x < -0.5], [x * y, y], 0.3),
             [((3,), (3,)), ((2, 3), (3,)), ((3,), ())], (AWAY, REAL))
R += records("append", dnp.append, [((2, 3), (2,)), ((3,), ())])
R += one("append_axis0", lambda a, b: dnp.append(a, b, axis=0), (2, 3), (1, 3))
R += one("delete", lambda x: dnp.delete(x, 1), (4,))
R += one("delete_axis1", lambda x: dnp.delete(x, [0, 2], axis=1), (2, 4))
R += one("delete_slice", lambda x: dnp.delete(x, slice(0, 3, 2)), (2, 2))
R += records("insert", lambda a, v: dnp.insert(a, 1, v), [((4,), ()), ((3,), (2,))])
R += one("insert_many_axis1", lambda a, v: dnp.insert(a, [0, 2, 2], v, axis=1), (2, 3), (2, 1))
R += one("insert_block_axis1", lambda a, v: dnp.insert(a, 1, v, axis=1), (2, 3), (2, 1))
R += one("insert_constant_values", lambda a: dnp.insert(a, [3, 0], 0.5), (3,))

# --- sorting --------------------------------------------------------------------------------
R += records("sort", dnp.sort, [((4,),), ((3, 4),)], (DISTINCT,))
R += one("sort_axis0", lambda x: dnp.sort(x, axis=0), (3, 4), domains=(DISTINCT,))
R += one("sort_flat", lambda x: dnp.sort(x, axis=None), (2, 3), domains=(DISTINCT,))
# Exact ties: each copy follows its own input, so the derivative matches finite differences.
R += one("sort_ties", lambda x: dnp.sort(dnp.concatenate([x, x, x[:1]])), (3,),
         domains=(DISTINCT,))
R += records("partition", lambda x: dnp.partition(x, 2), [((6,),), ((2, 4),)], (DISTINCT,))
R += one("partition_kths_axis0", lambda x: dnp.partition(x, (0, 2), axis=0), (3, 4),
         domains=(DISTINCT,))
R += records("argsort", dnp.argsort, [((4,),), ((3, 4),)], (DISTINCT,), zero_derivative=True)
R += one("argsort_axis0", lambda x: dnp.argsort(x, axis=0), (3, 4), domains=(DISTINCT,),
         zero_derivative=True)
R += one("argpartition", lambda x: dnp.argpartition(x, 1), (3, 4), domains=(DISTINCT,),
         zero_derivative=True)
R += records("searchsorted", lambda a, v: dnp.searchsorted(dnp.sort(a), v),
             [((4,), (3,)), ((4,), (2, 3)), ((4,), ())], (DISTINCT, REAL),
             zero_derivative=True)
R += one("searchsorted_right", lambda a, v: dnp.searchsorted(dnp.sort(a), v, side="right"),
         (6,), (3,), domains=(DISTINCT, REAL), zero_derivative=True)

# --- interp ---------------------------------------------------------------------------------
XP = np.array([-1.5, -0.4, 0.3, 1.1])
OFF_KNOTS = Domain("away from the knots", avoid=tuple(XP), margin=0.1)
R += records("interp", lambda x, fp: dnp.interp(x, XP, fp),
             [((3,), (4,)), ((2, 3), (4,)), ((), (4,))], (OFF_KNOTS, REAL))
R += one("interp_left_right", lambda x, fp, lo, hi: dnp.interp(x, XP, fp, lo, hi),
         (6,), (4,), (), (), domains=(OFF_KNOTS, REAL, REAL, REAL))
# Knots at least 1/4 apart and x at least 1/8 away from them: finite differences of the
# second derivatives (which grow like 1/distance**3) stay accurate. 21 grid points: enough
# for the batched cases.
KNOTS = Domain("distinct knots", -2.5, 2.5, grid=0.25, distinct=True)
BETWEEN = Domain("between knots", -3.0, 3.0, grid=0.25, offset=0.125)
R += records("interp_xp", lambda x, d, fp: dnp.interp(x, dnp.sort(d), fp),
             [((3,), (4,), (4,)), ((2, 2), (3,), (3,))], (BETWEEN, KNOTS, REAL))
R += one("interp_one_point", lambda x, fp: dnp.interp(x, np.array([0.25]), fp), (4,), (1,),
         domains=(OFF_KNOTS, REAL))
PERIODIC_KNOTS = np.array([0.3, -0.4, 1.7, 1.1])  # modulo 2: 0.3, 1.6, 1.7, 1.1
R += one("interp_period", lambda x, fp: dnp.interp(x, PERIODIC_KNOTS, fp, period=2.0),
         (4,), (4,), domains=(Domain("off periodic knots", -3.0, 3.0, margin=0.03, avoid=tuple(
              k + 2 * j for k in (0.3, 1.6, 1.7, 1.1) for j in (-2, -1, 0, 1))), REAL))

# --- convolve, correlate --------------------------------------------------------------------
for _mode in ("full", "same", "valid"):
    R += records(f"convolve_{_mode}", lambda a, v, m=_mode: dnp.convolve(a, v, m),
                 [((4,), (3,)), ((3,), (4,)), ((), (2,))])
    R += records(f"correlate_{_mode}", lambda a, v, m=_mode: dnp.correlate(a, v, m),
                 [((4,), (3,)), ((2,), (4,)), ((3,), (3,))])
R += one("convolve_long", dnp.convolve, (40,), (9,))

# --- cross, polyval, meshgrid ---------------------------------------------------------------
R += records("cross", dnp.cross, [((3,), (3,)), ((2, 3), (3,)), ((4, 3), (1, 3))])
R += one("cross_axes", lambda a, b: dnp.cross(a, b, axisa=0, axisb=0, axisc=0), (3, 2), (3, 2))
R += one("cross_axis", lambda a, b: dnp.cross(a, b, axis=1), (2, 3, 2), (2, 3, 2))
R += records("polyval", dnp.polyval, [((4,), (3,)), ((1,), (2, 2)), ((3,), ()),
                                      ((3, 2), (2,))])
R += one("meshgrid", dnp.meshgrid, (3,), (4,))
R += one("meshgrid_three", dnp.meshgrid, (2,), (3,), (4,))
R += one("meshgrid_ij_sparse", lambda a, b: dnp.meshgrid(a, b, indexing="ij", sparse=True),
         (3,), (4,))

# --- joining --------------------------------------------------------------------------------
R += one("block", lambda a, b, c, d: dnp.block([[a, b], [c, d]]), (2, 2), (2, 3), (1, 2),
         (1, 3))
R += one("block_1d", lambda a, b: dnp.block([a, b]), (3,), (2,))
R += one("block_promotes", lambda a, b: dnp.block([[a], [b]]), (3,), (2, 3))
for _name in ("hstack", "vstack", "dstack", "column_stack"):
    R += records(_name, lambda a, b, n=_name: getattr(dnp, n)([a, b]),
                 [((3,), (3,)), ((2, 3), (2, 3))])
R += one("hstack_2d", lambda a, b: dnp.hstack((a, b)), (2, 3), (2, 1))
R += one("vstack_rows", lambda a, b: dnp.vstack([a, b]), (2, 3), (3,))
R += one("column_stack_mixed", lambda a, b: dnp.column_stack([a, b]), (3,), (3, 2))
R += records("broadcast_arrays", dnp.broadcast_arrays, [((3, 1), (4,)), ((), (2,))])
R += unary("copy", dnp.copy, shapes=[((2, 3),)])

RECORDS = R
