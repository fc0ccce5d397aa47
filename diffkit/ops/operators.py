"""Python's operators on traced values: ``x * y``, ``x[i]``, ``-x``, ``x < y`` bind the
primitives of this floor.

They are installed on ``Tracer`` here, on the ops floor, when the ops are imported: the
rules of the primitives are written with operators on tracers (``out / y``, ``t * x``), so
the floor the rules live on provides them. The NumPy-protocol floor adds what maps NumPy's
names and methods onto the namespaces (``x.sum()``, ``x.T``, ``__array_ufunc__``, the
conversion guards).

A primitive called as ``Tracer.__mul__(a, b)`` binds directly (``Primitive.__get__``): no
extra Python frame on the hottest path. Reflected operators swap their operands; an
array-like operand that is not an array (a pandas ``DataFrame``, a ``range``) is read as
NumPy reads it for ``@`` (NumPy's own operators do the same with ``np.asarray``).
"""

from ..core.trace import Tracer
from . import elementwise as ew
from . import indexing, linalg, ufuncs

__all__ = []


def _direct(fn):
    """The primitive a public function binds as it is (``fn.primitive``), else ``fn``: an
    operator that is the primitive itself binds with no Python frame of its own."""
    return getattr(fn, "primitive", fn)


def _reflected(fn):
    return lambda self, other: fn(other, self)


def _reading_other(fn, swap=False):
    """``fn(self, other)`` (``fn(other, self)`` with ``swap``) with a foreign array-like
    ``other`` read as NumPy reads it: ``y @ df`` is a traced array, as ``np.matmul`` of the
    DataFrame's values."""
    def method(self, other, *args, **kwargs):
        if indexing.reads_as_array(type(other)):
            other = indexing.read_array_like(other)
        return fn(other, self) if swap else fn(self, other, *args, **kwargs)
    method.__name__ = getattr(fn, "__name__", "method")
    return method


def _iter(self):
    if not self.shape:
        raise TypeError("iteration over a 0-d traced array")
    return (self[i] for i in range(self.shape[0]))


def install():
    """Set the operators on ``Tracer`` (done once, when this module is imported)."""
    binary = {"add": ew.add, "sub": ew.subtract, "mul": ew.multiply, "truediv": ew.divide,
              "pow": ew.power, "floordiv": ufuncs.floor_divide, "mod": ufuncs.remainder,
              "divmod": ufuncs.divmod,
              # boolean masks: m & k
              "and": ufuncs.bitwise_and, "or": ufuncs.bitwise_or, "xor": ufuncs.bitwise_xor,
              "lshift": ufuncs.left_shift, "rshift": ufuncs.right_shift}
    for name, fn in binary.items():
        fn = _direct(fn)
        setattr(Tracer, f"__{name}__", fn)
        setattr(Tracer, f"__r{name}__", _reflected(fn))
    Tracer.__radd__ = _direct(ew.add)  # commutative: no need to swap
    Tracer.__rmul__ = _direct(ew.multiply)
    Tracer.__matmul__ = _reading_other(linalg.matmul)
    Tracer.__rmatmul__ = _reading_other(linalg.matmul, swap=True)
    comparisons = {"lt": ew.less, "le": ew.less_equal, "gt": ew.greater,
                   "ge": ew.greater_equal, "eq": ew.equal, "ne": ew.not_equal}
    for name, fn in comparisons.items():
        setattr(Tracer, f"__{name}__", _direct(fn))
    Tracer.__hash__ = object.__hash__   # defining __eq__ would otherwise drop it
    negative, absolute, invert = map(_direct, (ew.negative, ew.abs, ufuncs.invert))
    getitem = indexing.getitem
    Tracer.__neg__ = lambda self: negative(self)
    Tracer.__pos__ = lambda self: self
    Tracer.__abs__ = lambda self: absolute(self)
    Tracer.__invert__ = lambda self: invert(self)
    Tracer.__getitem__ = lambda self, index: getitem(self, index)
    Tracer.__iter__ = _iter
    # pandas defers its binary operators to an operand of higher priority (DataFrame's is
    # 4000): ``series * x`` then calls ``x.__rmul__``, which reads the Series as NumPy does
    Tracer.__pandas_priority__ = 5000


install()
