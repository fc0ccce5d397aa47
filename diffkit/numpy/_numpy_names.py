"""The rest of NumPy's public names, so that ``import diffkit.numpy as np`` is a drop-in.

Three kinds:

- functions of dtypes and shapes that must see through a traced value (``result_type``,
  ``can_cast``, ``finfo``, ``iinfo``, ``common_type``, ``isfortran``, the ``*_indices_from``
  family): a traced value stands for its dtype or shape;
- functions with a derivative, written with diffkit's operations: the array API's
  ``unique_values``, ``unique_counts``, ``unique_inverse`` and ``unique_all`` (``unique``'s
  values carry the derivative), ``sort_complex``, and the conversions ``ascontiguousarray``,
  ``asfortranarray``, ``require`` and ``asarray_chkfinite`` (the identity on values);
- everything else is NumPy's own object: dtypes and scalar types, ``errstate``,
  ``printoptions``, submodules (``random``, ``testing`` ...), constants, and functions
  without a derivative. Such a function given a traced value refuses it through NumPy's
  dispatch, with the error that names it (``np.digitize has no diffkit rule ...``).

On plain arrays every function here is NumPy's.
"""

import numpy as np

from ..core.concrete import concrete_test, holds_tracer
from ..core.trace import Tracer
from ..core.zeros import dtype_of, shape_of
from ..ops.array_sorting import sort
from ..ops.creation import asarray
from ..ops.elementwise import astype
from ..ops.selection import unique

_UNIQUE_ALL = type(np.unique_all(np.zeros(1)))
_UNIQUE_COUNTS = type(np.unique_counts(np.zeros(1)))
_UNIQUE_INVERSE = type(np.unique_inverse(np.zeros(1)))


def _stand_in(x):
    """A traced value's dtype (what dtype functions read of an array), else ``x``."""
    return dtype_of(x) if isinstance(x, Tracer) else x


def result_type(*arrays_and_dtypes):
    return np.result_type(*map(_stand_in, arrays_and_dtypes))


def can_cast(from_, to, casting="safe"):
    return np.can_cast(_stand_in(from_), to, casting)


def finfo(dtype):
    """``np.finfo`` of a dtype, an array or a traced value (the array API's ``finfo``)."""
    return np.finfo(_dtype_of_array(dtype))


def iinfo(int_type):
    """``np.iinfo`` of a dtype, an array or a traced value (the array API's ``iinfo``)."""
    return np.iinfo(_dtype_of_array(int_type))


def _dtype_of_array(x):
    """The dtype of an array, NumPy scalar or traced value; anything else as it is."""
    return x.dtype if isinstance(x, (Tracer, np.ndarray, np.generic)) else x


def common_type(*arrays):
    return np.common_type(*(np.empty(0, dtype_of(a)) if isinstance(a, Tracer) else a
                            for a in arrays))


def isfortran(a):
    """Whether ``a`` is Fortran-ordered and not C-ordered: never for a traced value (it has
    no memory layout of its own)."""
    return False if isinstance(a, Tracer) else np.isfortran(a)


def tril_indices_from(arr, k=0):
    rows, cols = _matrix_shape(arr, "tril_indices_from")
    return np.tril_indices(rows, k=k, m=cols)


def triu_indices_from(arr, k=0):
    rows, cols = _matrix_shape(arr, "triu_indices_from")
    return np.triu_indices(rows, k=k, m=cols)


def diag_indices_from(arr):
    shape = shape_of(arr) if isinstance(arr, Tracer) else np.shape(arr)
    if len(shape) < 2 or len(set(shape)) != 1:
        raise ValueError(f"diag_indices_from: the array must be at least 2-d with all axes of "
                         f"one length, not of shape {shape}")
    return np.diag_indices(shape[0], len(shape))


def _matrix_shape(arr, where):
    shape = shape_of(arr) if isinstance(arr, Tracer) else np.shape(arr)
    if len(shape) != 2:
        raise ValueError(f"{where}: the input array must be 2-d, not of shape {shape}")
    return shape


def unique_values(x):
    """The sorted distinct values of ``x`` (flattened), as ``np.unique_values``; each value's
    derivative is that of (one of) the entries holding it, as in ``unique``."""
    return unique(x) if holds_tracer(x) else np.unique_values(x)


def unique_counts(x):
    if not holds_tracer(x):
        return np.unique_counts(x)
    return _UNIQUE_COUNTS(*unique(x, return_counts=True))


def unique_inverse(x):
    if not holds_tracer(x):
        return np.unique_inverse(x)
    values, inverse = unique(x, return_inverse=True)
    return _UNIQUE_INVERSE(values, np.reshape(inverse, shape_of(x)))


def unique_all(x):
    if not holds_tracer(x):
        return np.unique_all(x)
    values, indices, inverse, counts = unique(x, return_index=True, return_inverse=True,
                                              return_counts=True)
    return _UNIQUE_ALL(values, indices, np.reshape(inverse, shape_of(x)), counts)


def sort_complex(a):
    """``a`` sorted by real part, then imaginary part, as a complex array (``np.sort_complex``)."""
    if not holds_tracer(a):
        return np.sort_complex(a)
    dtype = dtype_of(a)
    if dtype.kind != "c":
        dtype = np.dtype(np.complex64 if dtype.char in "bhBH" else
                         np.clongdouble if dtype.char == "g" else np.complex128)
    return sort(astype(a, dtype))


def ascontiguousarray(a, dtype=None, *, like=None):
    """``a`` as an array (a traced value stays traced: it has no memory layout of its own)."""
    if not holds_tracer(a):
        return np.ascontiguousarray(a, dtype=dtype, like=like)
    return asarray(a, dtype=dtype)


def asfortranarray(a, dtype=None, *, like=None):
    if not holds_tracer(a):
        return np.asfortranarray(a, dtype=dtype, like=like)
    return asarray(a, dtype=dtype)


def require(a, dtype=None, requirements=None, *, like=None):
    if not holds_tracer(a):
        return np.require(a, dtype=dtype, requirements=requirements, like=like)
    return asarray(a, dtype=dtype)


def asarray_chkfinite(a, dtype=None, order=None):
    if not holds_tracer(a):
        return np.asarray_chkfinite(a, dtype=dtype, order=order)
    a = asarray(a, dtype=dtype)
    if not concrete_test(a, lambda value: bool(np.isfinite(value).all())):
        raise ValueError("array must not contain infs or NaNs")
    return a


_OWN = {f.__name__: f for f in (
    result_type, can_cast, finfo, iinfo, common_type, isfortran, tril_indices_from,
    triu_indices_from, diag_indices_from, unique_values, unique_counts, unique_inverse,
    unique_all, sort_complex, ascontiguousarray, asfortranarray, require, asarray_chkfinite)}

# NumPy's names that diffkit.numpy leaves out on purpose (tests/test_numpy_namespace.py
# compares the namespaces): none today.
ABSENT = frozenset()


#: NumPy's submodules that NumPy itself imports on first access (``np.testing``, ``np.f2py``,
#: ``np.ma`` ...; tens of milliseconds together): ``diffkit.numpy`` resolves them on first
#: access too (its module ``__getattr__``), so ``import diffkit`` does not load them.
LAZY_SUBMODULES = frozenset(
    name for name in dir(np) if not name.startswith("_") and name not in vars(np))


def missing_names(namespace):
    """``{name: object}`` for NumPy's public names that ``namespace`` (the globals of
    ``diffkit.numpy``) lacks: diffkit's versions above where there is one, else NumPy's own."""
    names = {}
    for name in dir(np):
        if name.startswith("_") or name in namespace or name in ABSENT \
                or name in LAZY_SUBMODULES:
            continue
        if name in _OWN:
            own = _OWN[name]
            own.__module__ = "diffkit.numpy"
            if own.__doc__ is None:
                own.__doc__ = (f"NumPy's ``{name}``, reading a traced value's dtype or "
                               "shape.")
            names[name] = own
        else:
            names[name] = getattr(np, name)
    return names
