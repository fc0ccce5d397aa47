"""Batching (``vmap``): run a function written for one example on a whole batch at once.

A ``BatchTracer`` holds a value whose axis 0 is the batch axis; values of the batched
function that do not depend on the batch stay ordinary arrays (batch axis ``None``).
``BatchTrace.process`` hands each primitive's ``batch`` rule the underlying values with
their batch axes (0 or None) and wraps the batched result, moving its batch axis to 0 if
the rule put it elsewhere. Keeping the batch axis at 0 everywhere means rules never have
to search for it and axes are moved only at the boundary of ``vmap``. A primitive without
a batch rule falls back to a loop over the examples, with a ``PerformanceWarning``.

``batch_flat`` is the engine's one entry point: it runs a function of flat lists of values
with some of them batched and hands back flat outputs with their batch axes.
``diffkit.api.vmap`` adds the pytrees, ``in_axes``/``out_axes`` and the argument checks.
"""

import warnings

from ..core.trace import (
    Trace,
    Tracer,
    bind_custom,
    check_custom_outputs,
    check_not_escaped,
    new_trace,
)
from ..core.zeros import dtype_of, shape_of
from ..errors import PerformanceWarning
from ..ops import shape as shape_ops


class BatchTracer(Tracer):
    __slots__ = ("value",)

    def __init__(self, trace, value):
        self._trace = trace
        self.value = value

    @property
    def shape(self):
        return shape_of(self.value)[1:]

    @property
    def dtype(self):
        return dtype_of(self.value)


class BatchTrace(Trace):
    __slots__ = ("axis_size",)
    name = "vmap"

    def __init__(self, level, axis_size):
        super().__init__(level)
        self.axis_size = axis_size

    def process(self, prim, args, params):
        values = []
        axes = []
        for x in args:
            if type(x) is BatchTracer and x._trace is self:
                values.append(x.value)
                axes.append(0)
            else:
                values.append(x)
                axes.append(None)
        if prim.batch is None:
            out, out_axis = _batch_by_loop(prim, self.axis_size, values, axes, params)
        else:
            out, out_axis = prim.batch(self.axis_size, values, axes, **params)
        if prim.multiple_results:
            return tuple(self.wrap(o, a) for o, a in zip(out, out_axis))
        if out_axis == 0:  # what almost every rule answers: ``wrap`` without the call
            return BatchTracer(self, out)
        return self.wrap(out, out_axis)

    def process_custom(self, call, args):
        axes = [0 if type(x) is BatchTracer and x._trace is self else None for x in args]
        values = [x.value if a == 0 else x for x, a in zip(args, axes)]
        if all(a is None for a in axes):
            return bind_custom(call, values)
        # the batched function keeps its rules: outer transformations still use them
        outs = bind_custom(call.batched(self.axis_size, axes), values)
        check_custom_outputs(self, call, outs)
        return tuple(BatchTracer(self, o) for o in outs)

    def lift(self, value):
        shape = (self.axis_size, *shape_of(value))
        return BatchTracer(self, shape_ops.broadcast_to(value, shape))

    def wrap(self, value, batch_axis):
        if batch_axis is None:
            return value
        if batch_axis != 0:
            value = shape_ops.moveaxis(value, batch_axis, 0)
        return BatchTracer(self, value)


def _batch_by_loop(prim, axis_size, values, axes, params):
    """Fallback for a primitive without a batching rule: one call per example, stacked."""
    warnings.warn(f"primitive {prim.name!r} has no batching rule; vmap loops over the "
                  f"{axis_size} examples", PerformanceWarning, stacklevel=4)
    results = [prim(*[v if a is None else v[i] for v, a in zip(values, axes)], **params)
               for i in range(axis_size)]
    if prim.multiple_results:
        return tuple(shape_ops.stack(list(r)) for r in zip(*results)), (0,) * len(results[0])
    return shape_ops.stack(results), 0


# --- the entry point ---------------------------------------------------------------------


def batch_flat(fun, values, batch_axes, axis_size, *, name="vmap"):
    """Evaluate ``fun`` on a batch of ``axis_size`` examples at once.

    ``fun(*inputs)`` takes one value per entry of ``values`` and returns a list (or tuple)
    of output values. ``batch_axes`` gives, per value, the axis (a non-negative int) along
    which it holds the batch, or ``None`` for a value shared by every example.

    Returns ``(values_out, axes_out)``, one entry per output: a batched output with its batch
    axis at 0 (axis 0), or an output that does not depend on the batch as it is (axis
    ``None``). ``name``, the transformation the user called, is named in the error for a
    traced value of a finished transformation among the outputs.
    """
    with new_trace(BatchTrace, axis_size) as trace:
        inputs = [x if a is None else
                  BatchTracer(trace, x if a == 0 else shape_ops.moveaxis(x, a, 0))
                  for x, a in zip(values, batch_axes)]
        values_out, axes_out = [], []
        for o in fun(*inputs):
            if type(o) is BatchTracer and o._trace is trace:
                values_out.append(o.value)
                axes_out.append(0)
            else:
                values_out.append(check_not_escaped(o, name))
                axes_out.append(None)
    return values_out, axes_out
