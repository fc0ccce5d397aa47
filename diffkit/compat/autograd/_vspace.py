"""autograd's vector spaces: what a value's derivatives look like.

``vspace(x)`` describes the space a value lives in (shape and dtype of an array, the
spaces of a container's items) with the operations derivative checks need: zeros, ones,
a random vector, the standard basis, sums, scaling and the real inner product. The
arithmetic is written with ``diffkit.numpy``, so it works on traced values and can itself
be differentiated (``check_grads`` of order 2 and more needs that).
"""

import numpy as np

from ... import numpy as dnp
from ...core.trace import Tracer
from ._values import dtype_of, shape_of

__all__ = ["VSpace", "vspace", "ArrayVSpace", "ComplexArrayVSpace", "ContainerVSpace",
           "SequenceVSpace", "ListVSpace", "TupleVSpace", "DictVSpace", "NamedTupleVSpace",
           "SparseObject"]


class VSpace:
    """The base class: subclasses implement the underscored operations."""

    mappings = {}
    iscomplex = False

    def __init__(self, value):
        pass

    def zeros(self):
        raise NotImplementedError(repr(self))

    def ones(self):
        raise NotImplementedError(repr(self))

    def standard_basis(self):
        raise NotImplementedError(repr(self))

    def randn(self):
        raise NotImplementedError(repr(self))

    def add(self, x, y):
        return self._add(x, y)

    def mut_add(self, x_prev, x_new):
        return self._add(self.zeros() if x_prev is None else x_prev, x_new)

    def scalar_mul(self, x, a):
        return self._scalar_mul(x, a)

    def inner_prod(self, x, y):
        return self._inner_prod(x, y)

    def covector(self, x):
        return self._covector(x)

    def _add(self, x, y):
        return x + y

    def _mut_add(self, x, y):
        return self._add(x, y)

    def _scalar_mul(self, x, a):
        return x * a

    def _inner_prod(self, x, y):
        raise NotImplementedError(repr(self))

    def _covector(self, x):
        return x

    def __eq__(self, other):
        return type(self) is type(other) and self._key() == other._key()

    def __hash__(self):
        return hash((type(self), repr(self._key())))

    def _key(self):
        return dict(vars(self))

    def __repr__(self):
        return f"{type(self).__name__}_{self._key()}"

    @classmethod
    def register(cls, value_type, vspace_maker=None):
        """Use ``vspace_maker(value)`` (by default this class) for values of
        ``value_type``."""
        VSpace.mappings[value_type] = vspace_maker or cls


def vspace(value):
    """The vector space of ``value`` (an array, a number, a traced value, or a list, tuple
    or dict of them)."""
    maker = VSpace.mappings.get(type(value))
    if maker is not None:
        return maker(value)
    if isinstance(value, (Tracer, np.ndarray)):
        return _array_vspace(value)
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return NamedTupleVSpace(value)
    raise TypeError(f"Can't find vector space for value {value!r} of type {type(value)}. "
                    f"Valid types are arrays, numbers, lists, tuples, dicts and "
                    f"{list(VSpace.mappings)}")


class ArrayVSpace(VSpace):
    """The space of real arrays of one shape and dtype."""

    def __init__(self, value):
        self.shape = tuple(shape_of(value))
        self.dtype = np.dtype(dtype_of(value))

    @property
    def size(self):
        return int(np.prod(self.shape))

    @property
    def ndim(self):
        return len(self.shape)

    def zeros(self):
        return np.zeros(self.shape, dtype=self.dtype)

    def ones(self):
        return np.ones(self.shape, dtype=self.dtype)

    def standard_basis(self):
        for index in np.ndindex(*self.shape):
            e = np.zeros(self.shape, dtype=self.dtype)
            e[index] = 1
            yield e

    def randn(self):
        return np.array(np.random.randn(*self.shape)).astype(self.dtype)

    def _inner_prod(self, x, y):
        return dnp.dot(dnp.ravel(x), dnp.ravel(y))


class ComplexArrayVSpace(ArrayVSpace):
    """Complex arrays, a real space of twice the size (real and imaginary parts)."""

    iscomplex = True

    @property
    def size(self):
        return 2 * int(np.prod(self.shape))

    def ones(self):
        return np.ones(self.shape, dtype=self.dtype) * (1 + 1j)

    def standard_basis(self):
        for index in np.ndindex(*self.shape):
            for unit in (1.0, 1.0j):
                e = np.zeros(self.shape, dtype=self.dtype)
                e[index] = unit
                yield e

    def randn(self):
        real = np.array(np.random.randn(*self.shape))
        imag = np.array(np.random.randn(*self.shape))
        return (real + 1j * imag).astype(self.dtype)

    def _inner_prod(self, x, y):
        return dnp.real(dnp.dot(dnp.conj(dnp.ravel(x)), dnp.ravel(y)))

    def _covector(self, x):
        return dnp.conj(x)


def _array_vspace(value):
    kind = np.dtype(dtype_of(value)).kind
    return ComplexArrayVSpace(value) if kind == "c" else ArrayVSpace(value)


class ContainerVSpace(VSpace):
    """A container whose items have vector spaces of their own."""

    def __init__(self, value):
        self.shape = self._map_items(vspace, value)

    @property
    def size(self):
        return sum(vs.size for vs in self._items(self.shape))

    def zeros(self):
        return self._map(lambda vs: vs.zeros())

    def ones(self):
        return self._map(lambda vs: vs.ones())

    def randn(self):
        return self._map(lambda vs: vs.randn())

    def standard_basis(self):
        zero = self.zeros()
        for key, vs in self._pairs(self.shape):
            for e in vs.standard_basis():
                yield self._replace(zero, key, e)

    def _map(self, f, *values):
        return self._map_items(f, self.shape, *values)

    def _add(self, xs, ys):
        return self._map(lambda vs, x, y: vs._add(x, y), xs, ys)

    def _scalar_mul(self, xs, a):
        return self._map(lambda vs, x: vs._scalar_mul(x, a), xs)

    def _inner_prod(self, xs, ys):
        parts = self._items(self._map(lambda vs, x, y: vs._inner_prod(x, y), xs, ys))
        return sum(parts, 0.0)

    def _covector(self, xs):
        return self._map(lambda vs, x: vs._covector(x), xs)


class SequenceVSpace(ContainerVSpace):
    seq_type = tuple

    def _items(self, xs):
        return list(xs)

    def _pairs(self, xs):
        return enumerate(xs)

    def _map_items(self, f, xs, *rest):
        return self.seq_type(f(*items) for items in zip(xs, *rest))

    def _replace(self, xs, i, x):
        xs = list(xs)
        xs[i] = x
        return self.seq_type(xs)


class ListVSpace(SequenceVSpace):
    seq_type = list


class TupleVSpace(SequenceVSpace):
    seq_type = tuple


class NamedTupleVSpace(SequenceVSpace):
    """A namedtuple: a tuple rebuilt with its own type."""

    def __init__(self, value):
        self.seq_type = type(value)
        super().__init__(value)

    def _map_items(self, f, xs, *rest):
        return self.seq_type(*[f(*items) for items in zip(xs, *rest)])

    def _replace(self, xs, i, x):
        xs = list(xs)
        xs[i] = x
        return self.seq_type(*xs)


class DictVSpace(ContainerVSpace):
    def _items(self, xs):
        return list(xs.values())

    def _pairs(self, xs):
        return xs.items()

    def _map_items(self, f, xs, *rest):
        return {k: f(v, *[r[k] for r in rest]) for k, v in xs.items()}

    def _replace(self, xs, key, x):
        xs = dict(xs)
        xs[key] = x
        return xs


class SparseObject:
    """autograd's sparse cotangent (a space and an in-place add); diffkit's engines keep
    their own symbolic zeros, so this exists only for code that names it."""

    __slots__ = ("vs", "mut_add")

    def __init__(self, vs, mut_add):
        self.vs = vs
        self.mut_add = mut_add


for _type in (float, np.float64, np.float32, np.float16, np.longdouble):
    ArrayVSpace.register(_type)
for _type in (complex, np.complex128, np.complex64, np.clongdouble):
    ComplexArrayVSpace.register(_type)
VSpace.register(np.ndarray, _array_vspace)
ListVSpace.register(list)
TupleVSpace.register(tuple)
DictVSpace.register(dict)
VSpace.register(SparseObject, lambda x: x.vs)
