"""``autograd.numpy.numpy_wrapper``: autograd's own additions to NumPy's namespace."""

import numpy as np

try:
    from numpy._core.einsumfunc import _parse_einsum_input
except ImportError:  # NumPy 1.x
    from numpy.core.einsumfunc import _parse_einsum_input

from .... import numpy as dnp
from ....core.trace import Tracer
from .._primitives import notrace_primitive
from .._values import dtype_of, shape_of

__all__ = ["metadata", "make_diagonal", "array_from_args", "concatenate_args",
           "parse_einsum_input", "where", "numpy_version"]

numpy_version = np.__version__


def metadata(A):
    """``(shape, ndim, result dtype, is complex)`` of an array, number or traced value."""
    shape = tuple(shape_of(A))
    dtype = np.dtype(dtype_of(A))
    return shape, len(shape), dtype, dtype.kind == "c"


def make_diagonal(D, offset=0, axis1=0, axis2=1):
    """The complement of ``diagonal`` on the last two axes: an array of shape
    ``D.shape + D.shape[-1:]`` with ``D`` on the diagonal of its last two axes (autograd
    supports only ``offset=0, axis1=-1, axis2=-2``)."""
    if not (offset == 0 and axis1 == -1 and axis2 == -2):
        raise NotImplementedError("make_diagonal supports only offset=0, axis1=-1, axis2=-2")
    n = shape_of(D)[-1]
    return D[..., None] * dnp.eye(n, dtype=dtype_of(D))


def array_from_args(array_args, array_kwargs, *args):
    """``np.array(args, *array_args, **array_kwargs)``, differentiable in ``args``."""
    return dnp.array(list(args), *array_args, **array_kwargs)


def concatenate_args(axis, *args):
    """``np.concatenate(args, axis)``, differentiable in ``args``."""
    return dnp.concatenate(list(args), axis)


@notrace_primitive
def parse_einsum_input(*args):
    """NumPy's parse of ``einsum``'s operands into ``(input subscripts, output subscript,
    operands)``."""
    return _parse_einsum_input(args)


def _holds_array(value):
    """Whether ``value`` is (or is a list/tuple holding) an array or a traced value."""
    if isinstance(value, (np.ndarray, np.generic, Tracer)):
        return True
    return isinstance(value, (list, tuple)) and any(_holds_array(v) for v in value)


def where(condition, *args, **kwargs):
    """NumPy's ``where``, with autograd's keywords (``x=``, ``y=``) and its Python-in,
    Python-out rule: when none of ``condition``, ``x``, ``y`` is an array, the result is a
    Python number or list, as ``np.where(...).tolist()``."""
    unknown = set(kwargs) - {"x", "y"}
    if unknown:
        raise TypeError(f"where() got unexpected keyword arguments {sorted(unknown)}")
    if not args and not kwargs:
        return dnp.where(condition)
    if len(args) + len(kwargs) != 2:
        raise ValueError("either both or neither of x and y should be given")
    x = args[0] if args else kwargs["x"]
    y = args[1] if len(args) > 1 else kwargs["y"]
    result = dnp.where(condition, x, y)
    if any(_holds_array(v) for v in (condition, x, y)):
        return result
    return result.tolist() if isinstance(result, (np.ndarray, np.generic)) else result
