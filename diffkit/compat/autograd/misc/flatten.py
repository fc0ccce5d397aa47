"""``flatten``: any nesting of lists, tuples and dicts of arrays and numbers as one 1-D
vector, and back. Both directions are diffkit operations, so they work on traced values
(a flattened parameter vector can be differentiated through ``unflatten``)."""

import numpy as np

from .... import numpy as dnp
from .._values import shape_of

__all__ = ["flatten", "flatten_func"]


def _pieces(value, out):
    """Append the raveled leaves of ``value`` to ``out`` (dicts in sorted key order, as
    autograd); return the template that rebuilds it."""
    kind = type(value)
    if kind in (list, tuple):
        return kind, [_pieces(item, out) for item in value]
    if kind is dict:
        keys = sorted(value)
        return dict, (keys, [_pieces(value[k], out) for k in keys])
    shape = tuple(shape_of(value))
    out.append(dnp.ravel(value))
    return None, shape


def _rebuild(template, vector, start):
    """The value of ``template`` read from ``vector`` at ``start``; and the next start."""
    kind, content = template
    if kind is None:
        size = int(np.prod(content))
        return dnp.reshape(vector[start:start + size], content), start + size
    if kind is dict:
        keys, templates = content
        items = {}
        for key, item in zip(keys, templates):
            items[key], start = _rebuild(item, vector, start)
        return items, start
    items = []
    for item in content:
        value, start = _rebuild(item, vector, start)
        items.append(value)
    return kind(items), start


def flatten(value):
    """``(vector, unflatten)``: the leaves of ``value`` raveled and concatenated (dict items
    in sorted key order; NumPy's type promotion, so mixed ints and floats come back as
    floats), and the function rebuilding a value of the same structure from such a
    vector."""
    pieces = []
    template = _pieces(value, pieces)
    vector = dnp.concatenate(pieces) if pieces else np.array([])

    def unflatten(vector):
        return _rebuild(template, vector, 0)[0]

    return vector, unflatten


def flatten_func(func, example):
    """``(flat_func, unflatten, flat_example)``: ``func`` of a structured value as a
    function of its flat vector (extra arguments passed through)."""
    flat_example, unflatten = flatten(example)

    def flat_func(vector, *args):
        return flatten(func(unflatten(vector), *args))[0]

    return flat_func, unflatten, flat_example
