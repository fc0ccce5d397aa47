"""Values as autograd sees them: traced or plain, integers as reals, ones and zeros.

autograd's conventions that differ from diffkit's live here and apply only inside the
compatibility layer:

- an integer or boolean array (or number) being differentiated is treated as real: it is
  converted to float64 before tracing (diffkit, like JAX, refuses integer primals);
- a "box" is any diffkit traced value (``Tracer``); containers are never boxed themselves,
  a list of traced values is a plain list.
"""

import numpy as np

from ... import numpy as dnp
from ... import tree_util
from ...core.concrete import concrete_value, holds_tracer
from ...core.trace import Tracer
from ...core.zeros import dtype_of, shape_of
from ...errors import TracerConversionError

__all__ = ["Tracer", "holds_tracer", "as_real", "is_traced", "plain_value", "ones_like",
           "zeros_like", "shape_of", "dtype_of", "is_complex_value"]


def is_traced(x):
    """Whether ``x`` is a traced value (autograd: a box)."""
    return isinstance(x, Tracer)


def _real_leaf(x):
    if isinstance(x, (bool, int, np.integer, np.bool_)):
        return float(x)
    if isinstance(x, np.ndarray) and x.dtype.kind in "biu":
        return x.astype(np.float64)
    if isinstance(x, Tracer) and dtype_of(x).kind in "biu":
        return dnp.astype(x, np.float64)
    return x


def as_real(tree):
    """``tree`` with every integer or boolean leaf (array, NumPy or Python number) converted
    to float64: autograd differentiates integer arrays as real ones."""
    return tree_util.tree_map(_real_leaf, tree)


def plain_value(x, what):
    """The plain value of ``x`` (itself when not traced); a traced value batched by ``vmap``
    (inside ``jacobian``/``hessian``) has none, which raises ``TracerConversionError``
    naming ``what`` needed it."""
    if not isinstance(x, Tracer):
        return x
    value = concrete_value(x)
    if value is None:
        raise TracerConversionError(
            f"{what} needs the plain value of its argument, but it was called on a value "
            "batched by jacobian/hessian (diffkit computes their rows in one vectorised "
            "pass, where no single value exists). Call it outside the differentiated "
            "function, or on values that are not differentiated.")
    return value


def is_complex_value(x):
    return np.dtype(dtype_of(x)).kind == "c"


def _ones_leaf(x):
    return np.ones(shape_of(x), dtype_of(x) if not isinstance(x, (int, bool)) else float)


def _zeros_leaf(x):
    return np.zeros(shape_of(x), dtype_of(x) if not isinstance(x, (int, bool)) else float)


def ones_like(tree):
    """Plain arrays of ones with the structure, shapes and dtypes of ``tree``'s leaves."""
    return tree_util.tree_map(_ones_leaf, tree)


def zeros_like(tree):
    """Plain arrays of zeros with the structure, shapes and dtypes of ``tree``'s leaves."""
    return tree_util.tree_map(_zeros_leaf, tree)
