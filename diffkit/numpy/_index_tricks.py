"""``r_`` and ``c_`` that take traced values: ``dnp.r_[t, 0.0, 1:4]``, ``np.c_[a, t]``.

NumPy's ``r_``/``c_`` convert every entry with ``np.array`` before joining, which drops a
traced value's derivative (and NumPy's dispatch never sees it). ``concatenate_entries`` reads
the same forms NumPy documents and joins the entries with diffkit's ``concatenate``:

- arrays and (nested) lists, raised to ``ndmin`` dimensions (new axes placed by ``trans1d``);
- scalars, cast to the common dtype;
- slices as ranges: ``start:stop:step`` is ``arange``, ``start:stop:Nj`` is ``linspace``
  with ``N`` points (differentiable in traced end points; a traced ``start`` of an
  ``arange`` is differentiable too, the number of points comes from its value);
- a first string entry: ``'axis'``, ``'axis,ndmin'``, ``'axis,ndmin,trans1d'``, or ``'r'``/
  ``'c'`` (NumPy returns an ``np.matrix`` row or column; diffkit returns the 2-D array of
  that shape, since a traced value cannot be a matrix subclass).

``install()`` makes NumPy's own ``np.r_`` and ``np.c_`` objects use it for keys holding a
traced value; any other key takes NumPy's own code path. ``diffkit.numpy.r_`` and ``c_`` are
those same objects.
"""

import numpy as np

from ..core.concrete import holds_tracer, static_value
from ..core.trace import Tracer
from ..core.zeros import dtype_of, shape_of
from ..ops import elementwise as ew
from ..ops import shape as sh
from ..ops.creation import asarray, linspace

_SCALARS = (int, float, complex, bool, np.generic)


def concatenate_entries(key, axis, ndmin, trans1d):
    """``r_[key]`` for ``r_``'s settings ``axis``, ``ndmin``, ``trans1d``."""
    entries = key if isinstance(key, tuple) else (key,)
    matrix = None
    pieces, kinds = [], []     # kinds: the value standing for each piece's dtype
    for k, entry in enumerate(entries):
        if isinstance(entry, str):
            if k != 0:
                raise ValueError("special directives must be the first entry.")
            if entry in ("r", "c"):
                matrix = entry
                continue
            axis, ndmin, trans1d = _directive(entry, ndmin, trans1d)
            continue
        if isinstance(entry, slice):
            piece = _raised(_range(entry), ndmin, trans1d, 1)
        elif isinstance(entry, _SCALARS):
            pieces.append(entry)
            kinds.append(entry)
            continue
        else:
            value = asarray(entry)
            piece = _raised(value, ndmin, trans1d, len(shape_of(value)))
        pieces.append(piece)
        kinds.append(dtype_of(piece))
    dtype = np.result_type(*kinds) if kinds else None
    pieces = [_scalar_piece(p, dtype, ndmin) if isinstance(p, _SCALARS) else p
              for p in pieces]
    result = sh.concatenate(pieces, axis=axis)
    if matrix is not None and len(shape_of(result)) == 1:
        result = sh.reshape(result, (1, -1) if matrix == "r" else (-1, 1))
    return result


def _directive(text, ndmin, trans1d):
    """``'axis[,ndmin[,trans1d]]'`` -> the three integers."""
    try:
        numbers = [int(part) for part in text.split(",")]
    except ValueError:
        raise ValueError(f"unknown special directive {text!r}") from None
    if not 1 <= len(numbers) <= 3:
        raise ValueError(f"unknown special directive {text!r}")
    axis = numbers[0]
    ndmin = numbers[1] if len(numbers) > 1 else ndmin
    trans1d = numbers[2] if len(numbers) > 2 else trans1d
    return axis, ndmin, trans1d


def _plain(value, what):
    return static_value(value, lambda t: f"the {what} of a range in r_/c_ sets the number "
                                         "of points, so it cannot be batched by vmap")


def _range(entry):
    """A slice entry as its range: ``arange``, or ``linspace`` for a complex step."""
    start = 0 if entry.start is None else entry.start
    stop, step = entry.stop, 1 if entry.step is None else entry.step
    if isinstance(step, complex):
        return linspace(start, stop, num=int(abs(step)))
    plain = np.arange(_plain(start, "start"), _plain(stop, "stop"), _plain(step, "step"))
    if not isinstance(start, Tracer):
        return plain
    # start + k * step: differentiable in start (and in a traced step)
    offsets = np.arange(plain.shape[0], dtype=np.result_type(plain.dtype, float))
    return ew.add_p(start, ew.multiply_p(offsets, step))


def _raised(value, ndmin, trans1d, ndim):
    """``value`` with at least ``ndmin`` axes; the original axes end where ``trans1d`` puts
    them (NumPy's rule: new axes first, then the old ones moved to position ``trans1d``)."""
    if ndim >= ndmin:
        return value
    value = sh.reshape(value, (1,) * (ndmin - ndim) + shape_of(value))
    if trans1d == -1:
        return value
    k2 = ndmin - ndim
    k1 = trans1d + k2 + 1 if trans1d < 0 else trans1d
    order = list(range(ndmin))
    return sh.transpose(value, order[:k1] + order[k2:] + order[k1:k2])


def _scalar_piece(value, dtype, ndmin):
    return np.array(value, dtype=dtype, ndmin=ndmin)


def install():
    """Let NumPy's ``np.r_`` and ``np.c_`` take traced values: their class gets a subclass
    whose ``__getitem__`` handles keys holding a traced value and leaves every other key to
    NumPy."""
    for instance in (np.r_, np.c_):
        base = type(instance)
        if getattr(base, "_diffkit", False):
            continue
        instance.__class__ = type(base.__name__, (base,), {
            "__getitem__": _traced_getitem, "_diffkit": True, "__slots__": (),
            "__module__": base.__module__, "__doc__": base.__doc__})


def _traced_getitem(self, key):
    if not holds_tracer(key):
        return super(type(self), self).__getitem__(key)
    return concatenate_entries(key, self.axis, self.ndmin, self.trans1d)

