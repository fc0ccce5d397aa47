"""Symbolic zeros and the shape/dtype queries every engine needs.

A tangent or cotangent that is known to be zero is carried as ``Zero(shape, dtype)``
instead of an array of zeros: rules whose inputs are all zero are skipped, and zeros
are materialised only at the API boundary (``instantiate``).
"""

import numpy as np


class Zero:
    """A symbolic zero of a given shape and dtype. Never enters NumPy arithmetic."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)

    def __repr__(self):
        return f"Zero({self.shape}, {self.dtype})"


class Placeholder:
    """Stands on the reverse tape for a value whose VJP needs only its shape and dtype."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape = shape
        self.dtype = dtype

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        return f"Placeholder({self.shape}, {self.dtype})"


def placeholder(x):
    return Placeholder(shape_of(x), dtype_of(x))


def shape_of(x):
    """The shape of an array, a tracer, or a Python/NumPy scalar."""
    if type(x) is np.ndarray:  # the hot case: its shape is already a tuple
        return x.shape
    shape = getattr(x, "shape", None)
    return tuple(shape) if shape is not None else ()


def dtype_of(x):
    """The dtype of an array, a tracer, or a Python scalar (Python float -> float64)."""
    if type(x) is np.ndarray:  # the hot case: already a np.dtype
        return x.dtype
    dtype = getattr(x, "dtype", None)
    return np.dtype(dtype) if dtype is not None else np.result_type(x)


def is_complex(x):
    """Whether the array, tracer or scalar ``x`` holds complex numbers."""
    return dtype_of(x).kind == "c"


def as_array(x):
    """``x`` as something with a shape and dtype: arrays (subclasses included), NumPy
    scalars and tracers (anything whose type has a ``shape``) as they are, lists, tuples and
    Python scalars read as NumPy reads them.

    The type is asked rather than ``x`` because a tracer's ``shape`` is computed: asking the
    class keeps this as cheap for a tracer as for an array (it runs on every operand of
    ``matmul``, ``dot``, the reductions...)."""
    return x if type(x) is np.ndarray or hasattr(type(x), "shape") else np.asarray(x)


def sequence_as_array(x):
    """A list or tuple read as NumPy reads it; anything else (a Python scalar included) as it
    is, for the functions that give a scalar back as they got it (``np.real(2.0)`` is
    ``2.0``, not a 0-d array)."""
    return np.asarray(x) if isinstance(x, (list, tuple)) else x


def tangent_dtype(dtype):
    """The dtype of derivatives of a value of ``dtype``: floats keep theirs, ints get float64."""
    dtype = np.dtype(dtype)
    return dtype if dtype.kind in "fc" else np.dtype(np.float64)


def zero_like(x):
    """A symbolic zero shaped like ``x``."""
    return Zero(shape_of(x), tangent_dtype(dtype_of(x)))


def instantiate(t):
    """``t`` itself, or an array of zeros if ``t`` is a symbolic ``Zero``."""
    if type(t) is Zero:
        return np.zeros(t.shape, t.dtype)
    return t


def is_zero(t):
    return t is None or type(t) is Zero


def add_tangents(tangents, term):
    """The tangent of a result that is linear in each argument's tangent (a product rule):
    the sum of ``term(i, t)`` over the tangents ``t`` (of argument ``i``) that are not
    symbolic zeros, in argument order; ``None`` (a zero tangent) when all of them are.

    ``term`` runs only for the nonzero tangents, so a rule never computes with a zero. The
    terms are added with ``+`` (a tracer's ``+`` is the ``add`` primitive) and are not
    broadcast: a rule whose terms may be smaller than its output broadcasts the sum."""
    total = None
    for i, t in enumerate(tangents):
        if t is None or type(t) is Zero:
            continue
        part = term(i, t)
        total = part if total is None else total + part
    return total
