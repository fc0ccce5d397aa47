"""``linearize`` of a jitted function: the linear map as a ``Graph``.

``dk.linearize(jit(f), *primals)`` records the tangent map of ``f`` at ``primals`` as every
``linearize`` does (``interpreters.staging.stage_linear``): the primal computation runs
once, now, on plain values (the jitted function replays its own graph under the forward
trace, without running the user's Python), so its results are constants of the recording,
whose inputs are the tangents. Here that recording becomes a graph: the tangent operations,
optimised by the passes and replayed as generated NumPy like any graph. The linear function
keeps the graph in its ``graph`` attribute (``print(jvp_fn.graph)`` lists the linear map).

The tangents are recorded as arrays of ones. Where a rule reads a tangent's values (the
0 x inf rule's NaN checks of its products), the read is a guard like any other: a call
whose tangents read differently (a zero meeting an infinite derivative, a NaN tangent)
computes the JVP eagerly at the recorded primals instead (``LinearMap.recompute``), so no
call is answered by a recording that does not apply to it.
"""

from ..core.trace import Tracer
from ..interpreters.ir import is_numpy
from ..interpreters.staging import stage_linear
from ..tree_util import tree_flatten, tree_unflatten
from .graph import Graph, GuardFailure, Unverifiable


def linearize_flat(jitted, leaves, in_tree):
    """``(primals_out, jvp_fn, out_tree)`` for the jitted function at the flat primals
    ``leaves`` (of structure ``in_tree``, the tuple of positional arguments), with
    ``jvp_fn(tangents)`` taking and giving flat lists; or None where the compiled linear map
    does not apply (a traced primal of an enclosing transformation, whose values are
    constants of the recording valid for this call only, or a jitted function with static
    arguments): the caller then replays the recording without compiling it."""
    if any(isinstance(x, Tracer) for x in leaves):
        return None
    if jitted._signature.static_argnums or jitted._signature.static_argnames:
        return None
    out_trees = []

    def flat_fun(*xs):
        out, tree = tree_flatten(jitted(*tree_unflatten(in_tree, xs)))
        out_trees.append(tree)
        return out

    linear = stage_linear(flat_fun, leaves)
    recording = linear.recording
    graph = Graph(recording, tree_flatten((tuple(leaves), {}))[1],
                  tree_flatten(linear.primals_out)[1])
    numpy = recording.numpy

    def jvp_fn(tangents):
        tangents = list(tangents)
        try:   # the generated replay assumes each tangent's kind (NumPy or Python) as recorded
            if any(is_numpy(t) != numpy[i] for i, t in enumerate(tangents)):
                return list(graph.bind_flat(tangents))
            return list(graph.run_flat(tangents))
        except (GuardFailure, Unverifiable):   # a value the recording read differs now
            return linear.recompute(tangents)

    jvp_fn.graph = graph
    return linear.primals_out, jvp_fn, out_trees[0]
