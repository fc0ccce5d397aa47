"""``debug_callback``: a call out to Python with the plain values of its arguments, made
wherever the function runs: eagerly, under every transformation (with the values under the
tracers: the primal values under ``grad`` and ``jvp``, one call per example under ``vmap``),
and at every replay of a ``jit`` recording, in the program's order.

The primitive returns a token (a 0-d boolean array) that nothing reads; it is ``effectful``,
so a staged program keeps it, runs it on every replay and never folds or merges it.
"""

import numpy as np

from ..core.primitive import Primitive, Traits

TOKEN = np.array(False)
TOKEN.flags.writeable = False


def _impl(*values, callback):
    callback(*values)
    return TOKEN


def _batch(axis_size, values, batch_axes, callback):
    """One call per example, in order (the values of example ``i`` are the slices at ``i``
    of the batched arguments and the unbatched arguments as they are)."""
    for i in range(axis_size):
        debug_callback_p(*[v[i] if axis is not None else v
                           for v, axis in zip(values, batch_axes)], callback=callback)
    return TOKEN, None


debug_callback_p = Primitive("debug_callback", _impl, batch=_batch, nondiff=True,
                             traits=Traits(effectful=True))
