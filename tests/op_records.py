"""The table that drives tests/test_primitives.py: one record per function of diffkit.numpy.

A record is a function with its static arguments bound, the shapes to call it with (each
case a tuple with one shape per argument, broadcasting pairs and scalars included) and the
domain each argument's values come from (positive for ``log``, away from the kink for
``abs``, on interleaved grids for ``maximum`` so the two arguments never tie). The generic
checker runs every record through finite differences in both modes to order 2, the
Jacobian agreement of all the engines, and ``vmap`` against a loop for several batch-axis
placements. Adding a function to diffkit.numpy means adding a record here; a primitive that
no record exercises makes ``test_every_primitive_is_exercised`` fail.

Shapes avoid the size 5: it is the batch size of the vmap checks, so a batch axis confused
with a data axis cannot go unnoticed by having the same length.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.testing import strategies as dks

# --- domains ------------------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class Domain:
    """Where the values of one argument come from."""

    name: str
    min_value: float = -2.0
    max_value: float = 2.0
    avoid: tuple = ()           # points to stay ``margin`` away from
    margin: float = 0.1
    distinct: bool = False      # entries pairwise ``margin`` apart (no ties)
    grid: float | None = None   # entries on ``offset + k * grid``
    offset: float = 0.0
    dtype: type = np.float64
    kind: str = "float"         # "float", "bool" or "int" (integers in the range)

    def __repr__(self):
        return f"<domain {self.name}>"

    def _repr_pretty_(self, printer, cycle):
        printer.text(repr(self))

    def strategy(self, shape):
        """A Hypothesis strategy of arrays of ``shape`` from this domain."""
        if self.kind in ("bool", "int"):
            elements = st.booleans() if self.kind == "bool" else \
                st.integers(int(self.min_value), int(self.max_value))
            return st.lists(elements, min_size=math.prod(shape), max_size=math.prod(shape)).map(
                lambda v: np.array(v, bool if self.kind == "bool" else np.int64).reshape(shape))
        if self.grid is not None:
            points = self._grid_points()
            size = math.prod(shape)
            values = st.permutations(points).map(lambda p: p[:size]) if self.distinct else \
                st.lists(st.sampled_from(points), min_size=size, max_size=size)
            return values.map(lambda v: np.array(v, self.dtype).reshape(shape))
        return dks.arrays(shape, self.dtype, self.min_value, self.max_value,
                          avoid=self.avoid, margin=self.margin, distinct=self.distinct)

    def sample(self, shape, rng):
        """Values from a NumPy generator instead of Hypothesis (for batched arrays, which
        are large, and for the coverage test)."""
        size = math.prod(shape)
        if self.kind == "bool":
            return np.asarray(rng.random(shape) < 0.5)
        if self.kind == "int":
            return np.asarray(rng.integers(int(self.min_value), int(self.max_value) + 1, shape))
        if self.grid is not None or self.distinct:
            points = self._grid_points() if self.grid is not None else [
                self.min_value + k * self.margin
                for k in range(int((self.max_value - self.min_value) / self.margin) + 1)]
            values = rng.permutation(points)[:size] if self.distinct else rng.choice(points, size)
            return np.asarray(values, self.dtype).reshape(shape)
        values = rng.uniform(self.min_value, self.max_value, shape)
        for p in self.avoid:
            close = np.abs(values - p) < self.margin
            values = np.where(close, np.where(values >= p, p + self.margin, p - self.margin),
                              values)
        return np.asarray(values, self.dtype)

    def _grid_points(self):
        first = math.ceil((self.min_value - self.offset) / self.grid)
        last = math.floor((self.max_value - self.offset) / self.grid)
        return [self.offset + k * self.grid for k in range(first, last + 1)]


REAL = Domain("real")
POSITIVE = Domain("positive", 0.2, 3.0)
NONZERO = Domain("nonzero", avoid=(0.0,), margin=0.2)
SMALL = Domain("small", -1.0, 1.0)
LOG1P = Domain("above -1", -0.6, 2.0)
DISTINCT = Domain("distinct", distinct=True, margin=1 / 32)   # room for 129 entries
# Interleaved grids: values of EVEN, ODD and QUARTER never come within 1/16 of each other.
EVEN = Domain("grid", grid=0.25)
ODD = Domain("grid + 1/8", grid=0.25, offset=0.125)
QUARTER = Domain("grid + 1/16", grid=0.25, offset=0.0625)
COARSE = Domain("coarse grid", -1.0, 1.0, grid=0.5)   # ties on purpose (comparisons)
BOOL = Domain("bool", kind="bool")
INDEX = Domain("index 0..2", 0, 2, kind="int")        # valid along any axis of size >= 3
REAL32 = Domain("real float32", dtype=np.float32)


# --- records ------------------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class OpRecord:
    """One function to check.

    ``shapes``: the cases, each a tuple with one shape per argument. ``domains``: one per
    argument (or one for all). ``zero_derivative``: the function has no derivative
    (comparisons, ``sign``, ``argmax``, ``stop_gradient``): its jvp and vjp must be zero
    instead of matching finite differences.
    """

    name: str
    fun: Callable
    shapes: tuple
    domains: tuple = (REAL,)
    zero_derivative: bool = False
    order: int = 2
    elementwise: bool = False   # also checked with shapes drawn by Hypothesis

    def domain(self, i):
        return self.domains[i] if len(self.domains) > 1 else self.domains[0]

    def __repr__(self):
        return f"<record {self.name}>"

    def _repr_pretty_(self, printer, cycle):  # how Hypothesis prints falsifying examples
        printer.text(repr(self))

    @property
    def nargs(self):
        return len(self.shapes[0])


def _records(name, fun, shapes, domains=(REAL,), **kw):
    return [OpRecord(name, fun, tuple(tuple(tuple(s) for s in case) for case in shapes),
                     tuple(domains), **kw)]


UNARY_SHAPES = [((),), ((3,),), ((2, 3),), ((2, 1, 4),)]
BINARY_SHAPES = [((3,), (3,)), ((3, 1), (4,)), ((), (2, 3)), ((2, 3), ()), ((), ()),
                 ((2, 1, 3), (4, 1))]


def unary(name, fun, domain=REAL, shapes=None, **kw):
    """An elementwise function of one array (or another function of one array, given its
    ``shapes``)."""
    return _records(name, fun, shapes or UNARY_SHAPES, (domain,),
                    elementwise=shapes is None, **kw)


def binary(name, fun, domains=(REAL, REAL), shapes=None, **kw):
    """A broadcasting function of two arrays."""
    return _records(name, fun, shapes or BINARY_SHAPES, domains, elementwise=shapes is None,
                    **kw)


def _one(name, fun, *shapes, domains=(REAL,), **kw):
    """A record with a single shape case; ``shapes`` has one shape per argument."""
    return _records(name, fun, [shapes], domains, **kw)


R = []

# --- elementwise arithmetic -----------------------------------------------------------------
R += binary("add", dnp.add)
R += binary("subtract", dnp.subtract)
R += binary("multiply", dnp.multiply)
R += binary("divide", dnp.divide, (REAL, NONZERO))
R += binary("operators", lambda x, y: (x + y) * x - y / (1.5 + x * x) + (-x),
            shapes=[((3,), (3,)), ((2, 3), (3,))])
R += unary("negative", dnp.negative)
R += binary("power", dnp.power, (POSITIVE, REAL))
R += unary("power_int_exponent", lambda x: dnp.power(x, 3))
R += unary("power_float_exponent", lambda x: dnp.power(x, 2.5), POSITIVE)
R += unary("power_negative_exponent", lambda x: x ** -1.5, POSITIVE)
R += unary("power_zero_exponent", lambda x: dnp.power(x, 0))
R += unary("power_scalar_base", lambda y: dnp.power(2.0, y))
R += unary("square", dnp.square)
R += unary("sqrt", dnp.sqrt, POSITIVE)
R += unary("abs", dnp.abs, NONZERO)
R += unary("sign", dnp.sign, NONZERO, zero_derivative=True)
R += unary("conj", dnp.conj)   # the identity on real arrays

# --- exponentials, logarithms, trigonometry -------------------------------------------------
R += unary("exp", dnp.exp)
R += unary("log", dnp.log, POSITIVE)
R += unary("log1p", dnp.log1p, LOG1P)
R += unary("expm1", dnp.expm1)
R += unary("sin", dnp.sin)
R += unary("cos", dnp.cos)
R += unary("tan", dnp.tan, SMALL)
R += unary("tanh", dnp.tanh)
R += unary("sinh", dnp.sinh)
R += unary("cosh", dnp.cosh)
R += unary("arctan", dnp.arctan)

# --- selections -----------------------------------------------------------------------------
R += binary("maximum", dnp.maximum, (EVEN, ODD))
R += binary("minimum", dnp.minimum, (EVEN, ODD))
R += unary("maximum_scalar", lambda x: dnp.maximum(x, 0.0), NONZERO)
R += unary("maximum_tie", lambda x: dnp.maximum(x, x))   # ties share the derivative
R += unary("minimum_tie", lambda x: dnp.minimum(x, x))
R += _records("where", dnp.where,
              [((3,), (3,), (3,)), ((2, 3), (3,), ()), ((3, 1), (1, 4), (4,)),
               ((), (2, 3), (2, 3)), ((2, 3), (), ())],
              (BOOL, REAL, REAL), elementwise=True)
R += unary("where_of_comparison", lambda x: dnp.where(x > 0, x, 0.3 * x), NONZERO)
R += unary("clip_scalar_bounds", lambda x: dnp.clip(x, -0.5, 0.7),
           Domain("away from -0.5, 0.7", avoid=(-0.5, 0.7), margin=0.1))
R += unary("clip_one_sided", lambda x: dnp.clip(x, None, 0.5), Domain(
    "away from 0.5", avoid=(0.5,), margin=0.1))
R += _records("clip_array_bounds", dnp.clip,
              [((3,), (3,), (3,)), ((2, 3), (3,), ()), ((4,), (3, 1), (1,))],
              (EVEN, ODD, QUARTER), elementwise=True)

# --- reductions -----------------------------------------------------------------------------
REDUCE_SHAPES = [((2, 3),), ((2, 3, 4),)]
for _name, _fn, _domain in [("sum", dnp.sum, REAL), ("mean", dnp.mean, REAL),
                            ("prod", dnp.prod, NONZERO), ("max", dnp.max, DISTINCT),
                            ("min", dnp.min, DISTINCT), ("logsumexp", dnp.logsumexp, REAL)]:
    R += unary(f"{_name}_all", _fn, _domain, shapes=[((),), ((3,),), ((2, 3),)])
    R += unary(f"{_name}_axis0", lambda x, f=_fn: f(x, axis=0), _domain, shapes=REDUCE_SHAPES)
    R += unary(f"{_name}_axis-1_keepdims", lambda x, f=_fn: f(x, axis=-1, keepdims=True),
               _domain, shapes=REDUCE_SHAPES)
    R += _one(f"{_name}_axes02", lambda x, f=_fn: f(x, axis=(0, 2)), (2, 3, 4),
              domains=(_domain,))
R += unary("max_ties", lambda x: dnp.max(dnp.stack([x, x, 0.5 * x - 3.0]), axis=0))
R += unary("min_ties", lambda x: dnp.min(dnp.stack([x, x, 0.5 * x + 3.0]), axis=0))
R += unary("methods", lambda x: x.sum(axis=0) + x.mean() + x.max(axis=1).sum() * x.min(),
           DISTINCT, shapes=[((2, 3),)])

# --- shape ----------------------------------------------------------------------------------
R += _one("reshape", lambda x: dnp.reshape(x, (3, 2)), (2, 3))
R += _one("reshape_infer", lambda x: dnp.reshape(x, (2, -1)), (6,))
R += _one("reshape_merge", lambda x: x.reshape(6, 4), (2, 3, 4))
R += _one("reshape_to_scalar", lambda x: dnp.reshape(x, ()), (1, 1))
R += _one("reshape_from_scalar", lambda x: dnp.reshape(x, (1, 1)), ())
R += unary("transpose", dnp.transpose, shapes=[((2, 3),), ((2, 3, 4),)])
R += _one("transpose_axes", lambda x: dnp.transpose(x, (1, 0, 2)), (2, 3, 4))
R += _one("transpose_T", lambda x: x.T, (2, 3))
R += _one("moveaxis", lambda x: dnp.moveaxis(x, 0, -1), (2, 3, 4))
R += _one("moveaxis_many", lambda x: dnp.moveaxis(x, [0, 1], [-1, -3]), (2, 3, 4))
R += _one("swapaxes", lambda x: dnp.swapaxes(x, 0, 2), (2, 3, 4))
R += unary("expand_dims", lambda x: dnp.expand_dims(x, 0))
R += _one("expand_dims_last", lambda x: dnp.expand_dims(x, -1), (2, 3))
R += _one("expand_dims_many", lambda x: dnp.expand_dims(x, (0, 2)), (2, 3))
R += _one("squeeze", dnp.squeeze, (1, 3, 1))
R += _one("squeeze_axis", lambda x: dnp.squeeze(x, axis=0), (1, 3, 1))
R += _one("squeeze_axes", lambda x: dnp.squeeze(x, axis=(0, 2)), (1, 3, 1))
R += _one("ravel", dnp.ravel, (2, 3))
R += _one("broadcast_to", lambda x: dnp.broadcast_to(x, (2, 3, 4)), (3, 1))
R += _one("broadcast_to_scalar", lambda x: dnp.broadcast_to(x, (3,)), ())
R += _one("broadcast_to_rows", lambda x: dnp.broadcast_to(x, (3, 4)), (4,))

# --- indexing -------------------------------------------------------------------------------
_INT_INDEX = np.array([0, 2, 2, 1])           # repeated: the adjoint must accumulate
_INT_INDEX_2D = np.array([[0, 1], [3, 3]])
_MASK = np.array([[True, False, True, True], [False, False, True, False],
                  [True, True, False, False]])
_ROW_MASK = np.array([True, False, True])
for _name, _index in [
        ("int", 1), ("negative_int", -1), ("slice", slice(1, 3)),
        ("step_slice", (slice(None), slice(None, None, 2))),
        ("reverse_slice", slice(None, None, -1)), ("ellipsis", (Ellipsis, 1)),
        ("newaxis", (None, slice(1, None))), ("int_and_slice", (1, slice(1, 3))),
        ("int_array", _INT_INDEX[:3]), ("int_array_axis1", (slice(None), _INT_INDEX)),
        ("int_array_2d", (slice(None), _INT_INDEX_2D)),
        ("int_arrays_pair", (np.array([0, 2, 2]), np.array([3, 0, 3]))),
        ("bool_mask", _MASK), ("bool_row_mask", _ROW_MASK),
        ("mixed_int_array_slice", (_INT_INDEX[:3], slice(1, 3)))]:
    R += _one(f"getitem_{_name}", lambda x, i=_index: x[i], (3, 4))
R += _one("getitem_function", lambda x: dnp.getitem(x, (slice(None), 2)), (3, 4))
R += _one("getitem_separated_int_arrays",
          lambda x: x[np.array([0, 1, 1]), :, np.array([2, 0, 2])], (2, 3, 4))
R += _one("getitem_scalar_int", lambda x: x[()], ())
# Index arrays as arguments: under vmap they are batched too (a different gather per example).
# dnp.getitem, not x[i]: with x a plain ndarray (in_axes None) NumPy's own x[i] would see the
# traced index.
R += _records("getitem_index_argument", dnp.getitem,
              [((4,), (3,)), ((3, 4), (2,)), ((3, 4), (2, 2)), ((3,), ())], (REAL, INDEX))
R += _one("getitem_index_argument_axis1", lambda x, i: dnp.getitem(x, (slice(None), i)),
          (3, 4), (3,), domains=(REAL, INDEX))
R += _one("getitem_index_argument_pair", lambda x, i, j: dnp.getitem(x, (i, j)), (3, 4), (2,),
          (2,), domains=(REAL, INDEX, INDEX))
R += _one("getitem_index_argument_separated",
          lambda x, i, j: dnp.getitem(x, (i, slice(None), j)), (3, 2, 4), (2,), (2,),
          domains=(REAL, INDEX, INDEX))

# --- joining --------------------------------------------------------------------------------
R += _records("concatenate", lambda a, b: dnp.concatenate([a, b]),
              [((2, 3), (1, 3)), ((3,), (4,))])
R += _one("concatenate_axis1", lambda a, b: dnp.concatenate([a, b], axis=1), (2, 3), (2, 1))
R += _one("concatenate_axis-1_three", lambda a, b, c: dnp.concatenate([a, b, c], axis=-1),
          (2, 2), (2, 1), (2, 3))
R += _one("concatenate_flat", lambda a, b: dnp.concatenate([a, b], axis=None), (2, 2), (3,))
R += _one("concatenate_same", lambda a: dnp.concatenate([a, a], axis=0), (2, 3))
R += _records("stack", lambda a, b: dnp.stack([a, b]), [((3,), (3,)), ((), ())])
R += _one("stack_axis1", lambda a, b: dnp.stack([a, b], axis=1), (2, 3), (2, 3))
R += _one("stack_axis-1_three", lambda a, b, c: dnp.stack([a, b, c], axis=-1),
          (2, 3), (2, 3), (2, 3))

# --- contractions ---------------------------------------------------------------------------
R += _records("matmul", dnp.matmul,
              [((3, 4), (4, 2)), ((4,), (4, 3)), ((3, 4), (4,)), ((4,), (4,)),
               ((2, 3, 4), (4, 2)), ((2, 1, 3, 4), (3, 4, 2)), ((3, 4), (2, 4, 3))])
R += _one("matmul_operator", lambda a, b: a @ b, (3, 4), (4, 2))
R += _records("dot", dnp.dot,
              [((3, 4), (4,)), ((4,), (4,)), ((2, 3), (3, 2)), ((), (3,)), ((3,), ()),
               ((2, 3, 4), (3, 4, 2))])
# The receiver must be traced: ndarray.dot(tracer) is NumPy's own method and cannot be routed.
R += _one("dot_method", lambda a: a.dot(np.array([0.5, -1.0, 2.0])), (2, 3))
R += _records("outer", dnp.outer, [((3,), (4,)), ((2, 2), (3,)), ((), (3,))])
R += _records("inner", dnp.inner, [((4,), (4,)), ((2, 4), (3, 4)), ((), (2, 3))])
R += _records("vdot", dnp.vdot, [((4,), (4,)), ((2, 3), (3, 2))])
for _spec, _shapes in [
        ("ij,jk->ik", ((3, 4), (4, 2))), ("ij->", ((3, 4),)), ("ij->ji", ((3, 4),)),
        ("ii->i", ((3, 3),)), ("ii->", ((3, 3),)), ("i,i->", ((4,), (4,))),
        ("i,j->ij", ((3,), (4,))), ("bij,bjk->bik", ((2, 3, 4), (2, 4, 3))),
        ("ij,kj->ik", ((3, 4), (2, 4))), ("ij,ij->i", ((3, 4), (3, 4))),
        ("...i,i->...", ((2, 3, 4), (4,))), ("ij,jk,kl->il", ((2, 3), (3, 4), (4, 2))),
        ("ijk->kij", ((2, 3, 4),)), (",ij->ij", ((), (2, 3)))]:
    R += _one(f"einsum_{_spec}", lambda *xs, s=_spec: dnp.einsum(s, *xs), *_shapes)
for _name, _axes, _shapes in [
        ("1", 1, ((3, 4), (4, 2))), ("2", 2, ((2, 3, 4), (3, 4, 2))),
        ("0", 0, ((3,), (2,))), ("lists", ([0, 2], [1, 0]), ((2, 3, 4), (4, 2, 3))),
        ("ints", ([1], [0]), ((3, 4), (4, 2)))]:
    R += _one(f"tensordot_{_name}", lambda a, b, ax=_axes: dnp.tensordot(a, b, axes=ax),
              *_shapes)

# --- control and conversion -----------------------------------------------------------------
R += unary("stop_gradient", dnp.stop_gradient, zero_derivative=True)
R += unary("stop_gradient_api", dk.stop_gradient, zero_derivative=True,
           shapes=[((3,),)])
R += unary("astype_float32", lambda x: dnp.astype(x, np.float32))
R += unary("astype_float64", lambda x: dnp.astype(x, np.float64), REAL32)
R += unary("astype_method", lambda x: x.astype(np.float32), shapes=[((2, 3),)])
R += unary("astype_int", lambda x: dnp.astype(x, np.int64), zero_derivative=True)

# --- float32 stays float32 in tangents and cotangents (looser tolerances apply) -------------
R += unary("sin_float32", dnp.sin, REAL32, shapes=[((3,),), ((2, 3),)])
# NumPy 1.x casts a 0-d float64 operand by value (the result stays float32); under vmap that
# operand is a batched array, so only NumPy 2's rules (NEP 50) can be followed there.
_NEP50 = np.lib.NumpyVersion(np.__version__) >= "2.0.0"
R += binary("multiply_float32_float64", dnp.multiply, (REAL32, REAL),
            shapes=[((3,), (3,))] + ([((2, 3), ())] if _NEP50 else []))
R += binary("add_float32", dnp.add, (REAL32, REAL32), shapes=[((3, 1), (4,))])
R += _one("sum_float32", lambda x: dnp.sum(x, axis=1), (2, 3), domains=(REAL32,))
R += _one("matmul_float32", dnp.matmul, (3, 4), (4, 2), domains=(REAL32, REAL32))
R += _one("getitem_float32", lambda x: x[np.array([0, 2, 2])], (3, 4), domains=(REAL32,))

# --- no derivative: comparisons, predicates, argmax -----------------------------------------
for _name in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
              "logical_and", "logical_or"):
    R += binary(_name, getattr(dnp, _name), (COARSE, COARSE), zero_derivative=True,
                shapes=BINARY_SHAPES[:3])
R += unary("logical_not", dnp.logical_not, COARSE, zero_derivative=True)
R += unary("comparison_operators", lambda x: (x < 0.3, x >= 0.5, x == 0.0, x != 0.5),
           COARSE, zero_derivative=True, shapes=[((2, 3),)])
for _name in ("isfinite", "isnan", "isinf"):
    R += unary(_name, getattr(dnp, _name), zero_derivative=True, shapes=UNARY_SHAPES[:3])
for _name, _fn in (("argmax", dnp.argmax), ("argmin", dnp.argmin)):
    R += unary(_name, _fn, DISTINCT, zero_derivative=True, shapes=UNARY_SHAPES[1:3])
    R += _one(f"{_name}_axis1", lambda x, f=_fn: f(x, axis=1), (2, 3, 4),
              domains=(DISTINCT,), zero_derivative=True)



def _more_records():
    """Records of further families, one module each in tests/more_records/ (each defines
    ``RECORDS`` with the helpers above), so families can grow without editing this file."""
    import importlib
    import pkgutil

    import more_records

    found = []
    for module in sorted(m.name for m in pkgutil.iter_modules(more_records.__path__)):
        found += importlib.import_module(f"more_records.{module}").RECORDS
    return found


R += _more_records()
RECORDS = tuple(R)

_names = [r.name for r in RECORDS]
assert len(set(_names)) == len(_names), "record names must be unique"


def cases():
    """Every (record, shapes) pair, with a readable id: ``add[(3, 1)x(4,)]``."""
    for record in RECORDS:
        for shapes in record.shapes:
            yield record, shapes


def case_id(record, shapes):
    return f"{record.name}[{'x'.join(str(s) for s in shapes)}]"
