"""``const_graph``: a function recorded on its first call and replayed after.

autograd records the primitives of the first call and replays them on later calls
without running the Python function again. diffkit's ``jit`` does the same, and also
checks on every call that the recording still applies (the same branches taken on
values, the same shapes), recording again when it does not, where autograd would replay
a stale graph.
"""

import functools

from ....jit import jit

__all__ = ["const_graph"]


def const_graph(fun, *args, **kwargs):
    """``fun`` with ``args`` and ``kwargs`` bound first (``const_graph(f, a)(b) ==
    f(a, b)``), recorded on its first call and replayed on the next ones."""
    staged = jit(functools.partial(fun, *args, **kwargs))

    @functools.wraps(fun)
    def constant_graph_fun(*more_args):
        return staged(*more_args)

    return constant_graph_fun
