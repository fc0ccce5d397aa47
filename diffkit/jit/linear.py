"""``linearize`` of a jitted function: the linear map as a ``Graph``.

``dk.linearize(jit(f), *primals)`` stages the forward-mode derivative of ``f`` at
``primals`` with the tangents as the graph's only inputs. The primal computation runs
once, now, on plain values (the jitted function replays its own graph under the forward
trace, without running the user's Python), so its results are constants of the graph:
what remains are the tangent operations, optimised by the passes and replayed as
generated NumPy like any graph. The linear function keeps the graph in its ``graph``
attribute (``print(jvp_fn.graph)`` lists the linear map).

The tangents are recorded as arrays of ones. Where a rule reads a tangent's values (the
0 x inf rule's NaN checks of its products), the read is a guard like any other: a call
whose tangents read differently (a zero meeting an infinite derivative, a NaN tangent)
computes the JVP eagerly at the recorded primals instead, so no call is answered by a
recording that does not apply to it.
"""

import numpy as np

from ..api import jvp
from ..core.trace import Tracer
from ..core.zeros import dtype_of, instantiate, shape_of, tangent_dtype
from ..interpreters.forward import jvp_flat
from ..interpreters.ir import is_numpy
from ..interpreters.staging import stage_flat
from ..tree_util import tree_flatten, tree_unflatten
from .graph import Graph, GuardFailure, Unverifiable


def linearize_flat(jitted, leaves, in_tree):
    """``(primals_out, jvp_fn, out_tree)`` for the jitted function at the flat primals
    ``leaves`` (of structure ``in_tree``, the tuple of positional arguments), with
    ``jvp_fn(tangents)`` taking and giving flat lists; or None where the staged linear map
    does not apply (a traced primal of an enclosing transformation, or a jitted function
    with static arguments): the caller then records a tape."""
    if any(isinstance(x, Tracer) for x in leaves):
        return None
    if jitted._signature.static_argnums or jitted._signature.static_argnames:
        return None
    out_trees, primals_out = [], []

    def flat_fun(*xs):
        out, tree = tree_flatten(jitted(*tree_unflatten(in_tree, xs)))
        out_trees.append(tree)
        return out

    def tangents_of(*tangents):
        outs, tangents_out = jvp_flat(flat_fun, leaves, list(tangents), name="linearize")
        primals_out.extend(outs)
        return [instantiate(t) for t in tangents_out]

    placeholders = [np.ones(shape_of(x), tangent_dtype(dtype_of(x))) for x in leaves]
    _, recording = stage_flat(tangents_of, placeholders, name="linearize")
    graph = Graph(recording, tree_flatten((tuple(placeholders), {}))[1],
                  tree_flatten(primals_out)[1])

    numpy = recording.numpy

    def jvp_fn(tangents):
        tangents = list(tangents)
        try:   # the generated replay assumes each tangent's kind (NumPy or Python) as recorded
            if any(is_numpy(t) != numpy[i] for i, t in enumerate(tangents)):
                return list(graph.bind_flat(tangents))
            return list(graph.run_flat(tangents))
        except (GuardFailure, Unverifiable):   # a value the recording read differs now
            primals = tree_unflatten(in_tree, leaves)
            return tree_flatten(jvp(jitted, tuple(primals),
                                    tuple(tree_unflatten(in_tree, tangents)))[1])[0]

    jvp_fn.graph = graph
    return primals_out, jvp_fn, out_trees[0]
