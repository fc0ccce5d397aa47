"""A NumPy-shaped namespace of differentiable functions: ``import diffkit.numpy as dnp``.

Functions take NumPy's arguments and broadcasting and work on plain arrays (returning plain
arrays) as well as on values traced by diffkit's transformations. Functions with no
derivative (``zeros``, ``arange``, ``argmax``, comparisons ...) pass through.

Every public function has NumPy's signature and a docstring stating its derivative, and
reads (nested) lists holding traced values as NumPy reads array-likes
(``diffkit/numpy/_wrap.py``); ``r_`` and ``c_`` (NumPy's own objects) take traced values.
"""

import math as _math

import numpy as _np
from numpy import (  # noqa: F401  (non-differentiable pass-throughs, NumPy's own)
    arange,
    e,
    empty,
    eye,
    float32,
    float64,
    identity,
    inf,
    int32,
    int64,
    linspace,
    nan,
    ndarray,
    newaxis,
    ones,
    pi,
    zeros,
)

from ..core.zeros import shape_of as _shape_of
from ..ops.arrays import *  # noqa: E402, F403
from ..ops.complex import *  # noqa: E402, F403
from ..ops.control import stop_gradient  # noqa: F401
from ..ops.creation import *  # noqa: E402, F403
from ..ops.elementwise import (  # noqa: F401
    abs,
    add,
    arctan,
    astype,
    conj,
    cos,
    cosh,
    divide,
    equal,
    exp,
    expm1,
    greater,
    greater_equal,
    isfinite,
    isinf,
    isnan,
    less,
    less_equal,
    log,
    log1p,
    logical_and,
    logical_not,
    logical_or,
    maximum,
    minimum,
    multiply,
    negative,
    not_equal,
    power,
    sign,
    sin,
    sinh,
    sqrt,
    square,
    subtract,
    tan,
    tanh,
)
from ..ops.elementwise import clip_p as _clip_p
from ..ops.elementwise import where_p as _where_p
from ..ops.functional import *  # noqa: E402, F403
from ..ops.indexing import getitem  # noqa: F401
from ..ops.linalg import dot, einsum, inner, matmul, outer, tensordot, vdot  # noqa: F401
from ..ops.polynomial import *  # noqa: E402, F403
from ..ops.reductions import (  # noqa: F401
    argmax,
    argmin,
    logsumexp,
    max,
    mean,
    min,
    prod,
    sum,
)
from ..ops.selection import *  # noqa: E402, F403
from ..ops.shape import (  # noqa: F401
    broadcast_to,
    concatenate,
    expand_dims,
    moveaxis,
    ravel,
    reshape,
    squeeze,
    stack,
    swapaxes,
    transpose,
)
from ..ops.statistics import *  # noqa: E402, F403
from ..ops.ufuncs import *  # noqa: E402, F403
from . import _index_tricks, _numpy_names, _wrap, fft, linalg  # noqa: E402, F401

true_divide = divide
absolute = abs
conjugate = conj
amax = max
amin = min
pow = power  # noqa: A001 (NumPy 2's name)


def where(condition, x=None, y=None):
    """Elements of ``x`` where ``condition`` holds, else of ``y``, as ``np.where``. The
    one-argument form returns the indices of true elements (no derivative)."""
    if x is None and y is None:
        return _np.nonzero(condition)
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    return _where_p(condition, x, y)


def clip(x, a_min=None, a_max=None, *, min=None, max=None):  # noqa: A002
    """``x`` limited to ``[a_min, a_max]`` (``None``: no bound), as ``np.clip``; ``min`` and
    ``max`` are the array API's (and NumPy 2's) names of the bounds. At a bound the
    derivative goes to ``x``."""
    if min is not None:
        if a_min is not None:
            raise TypeError("clip: pass a_min or min, not both")
        a_min = min
    if max is not None:
        if a_max is not None:
            raise TypeError("clip: pass a_max or max, not both")
        a_max = max
    return _clip_p(x, -_np.inf if a_min is None else a_min, _np.inf if a_max is None else a_max)


def shape(x):
    """The shape of ``x`` (an array or a traced value)."""
    return _shape_of(x)


def ndim(x):
    return len(_shape_of(x))


def size(x):
    return _math.prod(_shape_of(x))


# np.r_ / np.c_ (the same objects as dnp.r_ / dnp.c_) take traced values
_index_tricks.install()
r_, c_, s_, index_exp = _np.r_, _np.c_, _np.s_, _np.index_exp

# The public names get NumPy's signatures, docstrings and array-like inputs (traced values'
# operators and methods, installed by diffkit.numpy_protocol, call the functions underneath).
_wrap.wrap_namespace(globals(), _np, __name__, [n for n in dir() if not n.startswith("_")])

# Every other public name of NumPy: diffkit's dtype- and shape-reading versions, the array
# API's unique_* functions, and NumPy's own objects (dtypes, errstate, random, testing ...).
globals().update(_numpy_names.missing_names(globals()))


def __getattr__(name):
    """NumPy's submodules that NumPy loads on first access (``testing``, ``f2py``, ``ma``
    ...), loaded on first access here too; NumPy's own objects."""
    if name in _numpy_names.LAZY_SUBMODULES:
        module = globals()[name] = getattr(_np, name)
        return module
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | _numpy_names.LAZY_SUBMODULES)
