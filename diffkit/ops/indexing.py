"""Indexing: getitem and its adjoint scatter-add. (Temporary basic-slicing version.)"""

import numpy as np

from ..core.primitive import Primitive
from ..core.zeros import dtype_of, shape_of


def _scatter_add_impl(ct, shape, index):
    out = np.zeros(shape, dtype_of(ct))
    np.add.at(out, index, ct)
    return out


getitem_p = Primitive("getitem", lambda x, index: x[index])
scatter_add_p = Primitive("scatter_add", _scatter_add_impl)
getitem_p.jvp = lambda primals, tangents, index: (getitem_p(primals[0], index=index),
                                                  getitem_p(tangents[0], index=index))
getitem_p.vjp = (lambda ct, out, x, index: scatter_add_p(ct, shape=shape_of(x), index=index),)
scatter_add_p.jvp = lambda primals, tangents, shape, index: (
    scatter_add_p(primals[0], shape=shape, index=index),
    scatter_add_p(tangents[0], shape=shape, index=index))
scatter_add_p.vjp = (lambda ct, out, x, shape, index: getitem_p(ct, index=index),)
getitem_p.batch = lambda axis_size, values, batch_axes, index: (
    getitem_p(values[0], index=(slice(None),) + index), 0)
scatter_add_p.batch = lambda axis_size, values, batch_axes, shape, index: (
    scatter_add_p(values[0], shape=(axis_size,) + shape, index=(slice(None),) + index), 0)


def getitem(x, index):
    if not isinstance(index, tuple):
        index = (index,)
    return getitem_p(x, index=index)
