"""Hypothesis strategies for property tests of differentiable code.

    from hypothesis import given
    from diffkit.testing import assert_jacobians_agree
    from diffkit.testing.strategies import arrays, programs

    @given(programs())
    def test_engines_agree(case):
        program, args = case
        assert_jacobians_agree(program, *args)

- :func:`shapes`: array shapes.
- :func:`arrays`: NumPy arrays of well-conditioned floats (no NaN, infinity or subnormals),
  optionally positive, away from given points, or with entries spaced apart (no ties).
- :func:`broadcastable_shapes`: tuples of shapes that broadcast together, as in
  ``(3, 1)`` with ``(4,)`` or ``()`` with ``(2, 3)``.
- :func:`programs`: random differentiable programs built from diffkit.numpy functions,
  with matching input arrays; a program's ``repr`` is Python source that reproduces it.

This module needs ``hypothesis`` (``pip install 'diffkit[test]'``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import strategies as st
from numpy.typing import DTypeLike, NDArray

from .. import numpy as dnp

__all__ = ["shapes", "arrays", "broadcastable_shapes", "programs", "Program", "PROGRAM_OPS"]


def shapes(min_dims: int = 0, max_dims: int = 3, min_side: int = 1, max_side: int = 4,
           max_size: int | None = None) -> st.SearchStrategy[tuple[int, ...]]:
    """Shapes with ``min_dims..max_dims`` axes of ``min_side..max_side`` each (and at most
    ``max_size`` elements). Shrinks towards fewer and smaller axes."""
    strategy = st.lists(st.integers(min_side, max_side), min_size=min_dims,
                        max_size=max_dims).map(tuple)
    if max_size is not None:
        strategy = strategy.filter(lambda s: math.prod(s) <= max_size)
    return strategy


@st.composite
def broadcastable_shapes(draw: st.DrawFn, num_shapes: int = 2, min_dims: int = 0,
                         max_dims: int = 3, min_side: int = 1, max_side: int = 4,
                         base_shape: Sequence[int] | None = None
                         ) -> tuple[tuple[int, ...], ...]:
    """A tuple of ``num_shapes`` shapes that broadcast together.

    Each shape takes a random number of trailing axes of a common shape (``base_shape``, or
    a drawn one) and turns some of them into 1, giving pairs such as ``(3, 1)`` and
    ``(4,)``, ``()`` and ``(2, 3)``, or ``(2, 1, 3)`` and ``(4, 1)``.
    """
    base = tuple(base_shape) if base_shape is not None else draw(
        shapes(min_dims, max_dims, min_side, max_side))
    result = []
    for _ in range(num_shapes):
        ndim = draw(st.integers(min(min_dims, len(base)), len(base)))
        dims = base[len(base) - ndim:]
        result.append(tuple(1 if draw(st.booleans()) else d for d in dims))
    return tuple(result)


def _inward(value, width, up):
    """``value`` as a float representable at ``width`` bits, rounded into the interval."""
    if width == 64:
        return float(value)
    kind = np.float32 if width == 32 else np.float16
    rounded = kind(value)
    if (up and float(rounded) < value) or (not up and float(rounded) > value):
        rounded = np.nextafter(rounded, kind(np.inf if up else -np.inf))
    return float(rounded)


def _push_away(value, avoid, margin):
    for point in avoid:
        if abs(value - point) < margin:
            value = point + margin if value >= point else point - margin
    return value


def arrays(shape: Sequence[int] | st.SearchStrategy[tuple[int, ...]],
           dtype: DTypeLike = np.float64, min_value: float = -2.0, max_value: float = 2.0, *,
           positive: bool = False, avoid: Sequence[float] = (), margin: float = 0.1,
           distinct: bool = False) -> st.SearchStrategy[NDArray[Any]]:
    """NumPy arrays of ``shape`` (a tuple or a strategy of tuples) holding well-conditioned
    floats in ``[min_value, max_value]``: never NaN, infinite or subnormal.

    - ``positive=True``: entries at least ``margin`` (away from 0, for ``log``, ``sqrt``).
    - ``avoid``: points to stay at least ``margin`` away from (kinks and poles: ``avoid=(0,)``
      for ``abs`` or a divisor).
    - ``distinct=True``: any two entries at least ``margin`` apart (no ties for ``max``,
      ``sort``); entries then lie on a grid of step ``margin``.
    """
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        raise ValueError(f"arrays() draws floating-point arrays, not {dtype}")
    if positive:
        min_value = max(min_value, margin)
    if not min_value <= max_value:
        raise ValueError(f"empty range [{min_value}, {max_value}]")
    avoid = tuple(float(p) for p in avoid)
    width = dtype.itemsize * 8
    shape_strategy = shape if isinstance(shape, st.SearchStrategy) else st.just(tuple(shape))

    def ok(v):
        return min_value <= v <= max_value and all(abs(v - p) >= margin * 0.999 for p in avoid)

    if distinct:
        grid = [min_value + k * margin for k in range(int((max_value - min_value) / margin) + 1)]
        grid = [v for v in grid if ok(v)]
        elements = st.permutations(grid)
    else:
        elements = st.floats(_inward(min_value, width, True), _inward(max_value, width, False),
                             allow_nan=False, allow_infinity=False, allow_subnormal=False,
                             width=width)
        if avoid:
            elements = elements.map(lambda v: _push_away(v, avoid, margin)).filter(ok)

    @st.composite
    def draw_array(draw):
        dims = draw(shape_strategy)
        size = math.prod(dims)
        if distinct and size > len(grid):
            raise ValueError(f"cannot draw {size} entries at least {margin} apart from "
                             f"[{min_value}, {max_value}]")
        if distinct:
            values = draw(elements)[:size]
        else:
            values = draw(st.lists(elements, min_size=size, max_size=size))
        return np.array(values, dtype=dtype).reshape(dims)

    return draw_array()


# --- random programs ----------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One operation of a program: ``code`` formats its call from operand names."""

    op: str
    operands: tuple[int, ...]
    params: tuple[tuple[str, Any], ...]   # sorted (name, value) pairs
    shape: tuple[int, ...]                # of the result


def _apply(op, operands, params):
    p = dict(params)
    if op in _UNARY:
        return getattr(dnp, op)(*operands)
    if op in _BINARY:
        return getattr(dnp, op)(*operands)
    if op in ("sum", "mean", "logsumexp"):
        return getattr(dnp, op)(operands[0], axis=p["axis"], keepdims=p["keepdims"])
    if op == "reshape":
        return dnp.reshape(operands[0], p["shape"])
    if op == "transpose":
        return dnp.transpose(operands[0], p["axes"])
    if op == "broadcast_to":
        return dnp.broadcast_to(operands[0], p["shape"])
    if op == "getitem":
        return operands[0][p["index"]]
    if op in ("concatenate", "stack"):
        return getattr(dnp, op)(list(operands), axis=p["axis"])
    if op == "matmul":
        return dnp.matmul(*operands)
    if op == "einsum":
        return dnp.einsum(p["spec"], *operands)
    raise ValueError(f"unknown program op {op!r}")


def _format_index(index):
    parts = []
    for item in index:
        if isinstance(item, slice):
            text = ("" if item.start is None else str(item.start)) + ":" + \
                ("" if item.stop is None else str(item.stop))
            if item.step is not None:
                text += f":{item.step}"
            parts.append(text)
        elif item is Ellipsis:
            parts.append("...")
        else:
            parts.append(str(item))
    return ", ".join(parts) if len(parts) != 1 or parts[0] != "" else ":"


def _code(step, names):
    ops = [names[i] for i in step.operands]
    p = dict(step.params)
    if step.op in _UNARY or step.op in _BINARY or step.op == "matmul":
        return f"dnp.{step.op}({', '.join(ops)})"
    if step.op in ("sum", "mean", "logsumexp"):
        return f"dnp.{step.op}({ops[0]}, axis={p['axis']!r}, keepdims={p['keepdims']!r})"
    if step.op in ("reshape", "broadcast_to"):
        return f"dnp.{step.op}({ops[0]}, {p['shape']!r})"
    if step.op == "transpose":
        return f"dnp.transpose({ops[0]}, {p['axes']!r})"
    if step.op == "getitem":
        return f"{ops[0]}[{_format_index(p['index'])}]"
    if step.op in ("concatenate", "stack"):
        return f"dnp.{step.op}([{', '.join(ops)}], axis={p['axis']!r})"
    if step.op == "einsum":
        return f"dnp.einsum({p['spec']!r}, {', '.join(ops)})"
    raise ValueError(step.op)


class Program:
    """A straight-line program of diffkit.numpy calls; call it like a function.

    ``repr(program)`` is Python source defining the same function, so a failing example
    printed by Hypothesis can be pasted and run.
    """

    def __init__(self, input_shapes: Iterable[Sequence[int]], steps: Iterable[Step],
                 output: int | tuple[int, ...]) -> None:
        self.input_shapes = tuple(tuple(s) for s in input_shapes)
        self.steps = tuple(steps)
        self.output = output      # index of the result, or a tuple of indices

    @property
    def num_inputs(self) -> int:
        return len(self.input_shapes)

    def __call__(self, *args: Any) -> Any:
        if len(args) != self.num_inputs:
            raise TypeError(f"this program takes {self.num_inputs} arguments, got {len(args)}")
        values = list(args)
        for step in self.steps:
            values.append(_apply(step.op, [values[i] for i in step.operands], step.params))
        if isinstance(self.output, tuple):
            return tuple(values[i] for i in self.output)
        return values[self.output]

    def _names(self):
        return [f"x{i}" for i in range(self.num_inputs)] + \
            [f"v{i}" for i in range(len(self.steps))]

    @property
    def source(self) -> str:
        names = self._names()
        lines = ["def program(" + ", ".join(names[:self.num_inputs]) + "):"]
        lines += [f"    # {names[i]}: shape {s}" for i, s in enumerate(self.input_shapes)]
        for k, step in enumerate(self.steps):
            code = f"    {names[self.num_inputs + k]} = {_code(step, names)}"
            lines.append(f"{code:<60}  # {step.shape}")
        out = self.output
        lines.append("    return " + (", ".join(names[i] for i in out) + ("," if len(out) == 1
                                                                            else "")
                                      if isinstance(out, tuple) else names[out]))
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.source


# op name -> minimum rank of its first operand
_UNARY = ("sin", "cos", "tanh", "arctan", "negative", "square", "exp")
_BINARY = ("add", "subtract", "multiply")
PROGRAM_OPS = _UNARY + _BINARY + (
    "sum", "mean", "logsumexp", "reshape", "transpose", "broadcast_to", "getitem",
    "concatenate", "stack", "matmul", "einsum")
"""The operations :func:`programs` draws from by default: all smooth (no kinks), so
finite differences apply, with ``exp`` and ``square`` only of bounded values."""

_LETTERS = "abcdefgh"


@dataclass
class _Value:
    shape: tuple
    bound: float          # |value| <= bound, so exp and products stay moderate


def _draw_step(draw, op, x, values, new_input, max_size, max_side):
    """A step applying ``op`` with first operand ``values[x]``, or None if it does not apply.
    ``new_input(shape)`` adds an input and returns its index."""
    v = values[x]
    shape, ndim, size = v.shape, len(v.shape), math.prod(v.shape)
    if op in _UNARY:
        if (op == "exp" and v.bound > 3) or (op == "square" and v.bound > 10):
            return None
        bound = {"sin": 1.0, "cos": 1.0, "tanh": 1.0, "arctan": math.pi / 2}.get(op) or (
            v.bound if op == "negative" else v.bound ** 2 if op == "square" else
            math.exp(v.bound))
        return Step(op, (x,), (), shape), bound
    if op in _BINARY:
        partners = [i for i, w in enumerate(values) if _broadcasts(shape, w.shape, max_size)]
        if draw(st.booleans()) or not partners:
            other = tuple(1 if draw(st.booleans()) else d
                          for d in shape[len(shape) - draw(st.integers(0, ndim)):])
            y = new_input(other)
        else:
            y = draw(st.sampled_from(partners))
        if draw(st.booleans()):
            x, y = y, x
        bound = values[x].bound * values[y].bound if op == "multiply" else \
            values[x].bound + values[y].bound
        if bound > 1e3:
            return None
        result = np.broadcast_shapes(values[x].shape, values[y].shape)
        return Step(op, (x, y), (), result), bound
    if op in ("sum", "mean", "logsumexp"):
        if ndim == 0:
            return None
        axis = draw(st.one_of(st.none(), st.integers(0, ndim - 1)))
        keepdims = draw(st.booleans())
        axes = range(ndim) if axis is None else (axis,)
        count = math.prod(shape[a] for a in axes)
        result = tuple(1 if i in axes else d for i, d in enumerate(shape)) if keepdims else \
            tuple(d for i, d in enumerate(shape) if i not in axes)
        bound = {"sum": v.bound * count, "mean": v.bound,
                 "logsumexp": v.bound + math.log(count)}[op]
        if bound > 1e3:
            return None
        return Step(op, (x,), (("axis", axis), ("keepdims", keepdims)), result), bound
    if op == "reshape":
        options = {(size,), shape[::-1], (1,) + shape}
        options |= {(a, size // a) for a in range(2, size) if size % a == 0}
        options.discard(shape)
        if not options:
            return None
        new = draw(st.sampled_from(sorted(options)))
        return Step(op, (x,), (("shape", new),), new), v.bound
    if op == "transpose":
        if ndim < 2:
            return None
        axes = tuple(draw(st.permutations(range(ndim))))
        if axes == tuple(range(ndim)):
            axes = axes[::-1]
        return Step(op, (x,), (("axes", axes),), tuple(shape[a] for a in axes)), v.bound
    if op == "broadcast_to":
        k = draw(st.integers(2, 3))
        if size * k > max_size:
            return None
        ones = tuple(i for i, d in enumerate(shape) if d == 1)
        new = list(shape)
        if ones and draw(st.booleans()):
            new[draw(st.sampled_from(ones))] = k
        else:
            new = [k] + new
        return Step(op, (x,), (("shape", tuple(new)),), tuple(new)), v.bound
    if op == "getitem":
        axes = [a for a, d in enumerate(shape) if d >= 2]
        if not axes:
            return None
        axis = draw(st.sampled_from(axes))
        d = shape[axis]
        if draw(st.booleans()):
            item = draw(st.integers(-d, d - 1))
            result = shape[:axis] + shape[axis + 1:]
        else:
            start = draw(st.integers(0, d - 1))
            stop = draw(st.integers(start + 1, d))
            step = draw(st.sampled_from([None, 2])) if stop - start > 2 else None
            item = slice(start, stop, step)
            result = shape[:axis] + (len(range(start, stop, step or 1)),) + shape[axis + 1:]
        index = (slice(None),) * axis + (item,)
        return Step(op, (x,), (("index", index),), result), v.bound
    if op in ("concatenate", "stack"):
        if op == "concatenate" and ndim == 0:
            return None
        same = [i for i, w in enumerate(values) if w.shape == shape]
        y = draw(st.sampled_from(same))
        axis = draw(st.integers(0, ndim - (op == "concatenate")))
        result = (shape[:axis] + (2 * shape[axis],) + shape[axis + 1:] if op == "concatenate"
                  else shape[:axis] + (2,) + shape[axis:])
        if 2 * size > max_size:
            return None
        return Step(op, (x, y), (("axis", axis),), result), max(v.bound, values[y].bound)
    if op == "matmul":
        if ndim == 0 or ndim > 3:
            return None
        k = shape[-1]
        other = (k,) if draw(st.booleans()) else (k, draw(st.integers(1, max_side)))
        result = shape[:-1] + other[1:]
        if math.prod(result) > max_size:
            return None
        y = new_input(other)
        return Step(op, (x, y), (), tuple(result)), v.bound * values[y].bound * k
    if op == "einsum":
        if ndim == 0:
            return None
        letters = _LETTERS[:ndim]
        sizes = dict(zip(letters, shape))
        shared = [c for c in letters if draw(st.booleans())]
        extra = "z" if draw(st.booleans()) or not shared else ""
        if extra:
            sizes["z"] = draw(st.integers(1, max_side))
        other = "".join(draw(st.permutations(shared + list(extra))))
        available = sorted(set(letters) | set(other))
        out = "".join(draw(st.permutations([c for c in available if draw(st.booleans())])))
        result = tuple(sizes[c] for c in out)
        y_shape = tuple(sizes[c] for c in other)
        if math.prod(result) > max_size or math.prod(y_shape) > max_size:
            return None
        y = new_input(y_shape)
        summed = math.prod(sizes[c] for c in available if c not in out)
        return (Step(op, (x, y), (("spec", f"{letters},{other}->{out}"),), result),
                v.bound * values[y].bound * summed)
    raise ValueError(f"unknown program op {op!r}")


def _broadcasts(a, b, max_size):
    try:
        return math.prod(np.broadcast_shapes(a, b)) <= max_size
    except ValueError:
        return False


@st.composite
def programs(draw: st.DrawFn, max_inputs: int = 3, max_steps: int = 8,
             ops: Iterable[str] | None = None, dtype: DTypeLike = np.float64,
             min_value: float = -2.0, max_value: float = 2.0, max_side: int = 4,
             max_size: int = 24, max_outputs: int = 1
             ) -> tuple[Program, tuple[NDArray[Any], ...]]:
    """``(program, args)``: a random differentiable :class:`Program` and input arrays for it.

    The program is a straight line of ``1..max_steps`` calls drawn from ``ops`` (default
    :data:`PROGRAM_OPS`: elementwise ``add``, ``subtract``, ``multiply``, ``sin``, ``cos``,
    ``tanh``, ``arctan``, ``negative``, ``square`` and ``exp`` of bounded values; ``sum``,
    ``mean`` and ``logsumexp`` over an axis; ``reshape``, ``transpose``, ``broadcast_to``,
    slicing and integer indexing, ``concatenate``, ``stack``; ``matmul`` and ``einsum``),
    with broadcasting between operands of different shapes. Operations that need a
    partner of a particular shape (``matmul``, ``einsum``, some broadcasts) get a new input.
    Values stay bounded (``exp`` only of values known to be at most 3 in size). Inputs have
    at most ``max_inputs`` arrays to begin with, entries in ``[min_value, max_value]``,
    and no value has more than ``max_size`` elements. With ``max_outputs > 1`` the program
    may return a tuple of values.
    """
    ops = PROGRAM_OPS if ops is None else tuple(ops)
    unknown = sorted(set(ops) - set(PROGRAM_OPS))
    if unknown or not ops:
        raise ValueError(f"programs: unknown ops {unknown}; choose from {PROGRAM_OPS}")
    bound = max(abs(min_value), abs(max_value))
    input_shapes = [draw(shapes(0, 3, 1, max_side, max_size))
                    for _ in range(draw(st.integers(1, max_inputs)))]
    values = [_Value(s, bound) for s in input_shapes]
    # Inputs are indices 0..n-1 of ``values``; steps follow. A new input created mid-way is
    # appended to ``values`` too, so indices are renumbered at the end.
    kinds = ["input"] * len(values)
    steps = []

    def new_input(shape):
        values.append(_Value(tuple(shape), bound))
        kinds.append("input")
        input_shapes.append(tuple(shape))
        return len(values) - 1

    target = draw(st.integers(1, max_steps))
    attempts = 0
    while len(steps) < target and attempts < 4 * max_steps:
        attempts += 1
        last = len(values) - 1
        # Mostly continue from the latest value, so programs are chains rather than
        # scattered dead ends.
        x = last if draw(st.integers(0, 3)) else draw(st.integers(0, last))
        op = draw(st.sampled_from(ops))
        drawn = _draw_step(draw, op, x, values, new_input, max_size, max_side)
        if drawn is None:
            continue
        step, step_bound = drawn
        values.append(_Value(step.shape, step_bound))
        kinds.append("step")
        steps.append((len(values) - 1, step))
    # Renumber: inputs first (in creation order), then steps.
    order = [i for i, k in enumerate(kinds) if k == "input"] + [i for i, _ in steps]
    position = {old: new for new, old in enumerate(order)}
    steps = [Step(s.op, tuple(position[i] for i in s.operands), s.params, s.shape)
             for _, s in steps]
    n_inputs = len(input_shapes)
    last = n_inputs + len(steps) - 1
    output = last
    if max_outputs > 1 and n_inputs + len(steps) > 1:
        extra = draw(st.lists(st.integers(0, last - 1), max_size=max_outputs - 1, unique=True))
        if extra:
            output = (last, *extra)
    program = Program(input_shapes, steps, output)
    args = tuple(draw(arrays(s, dtype, min_value, max_value)) for s in input_shapes)
    return program, args
