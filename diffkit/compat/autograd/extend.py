"""Extending autograd (``autograd.extend``): primitives with your own derivatives.

::

    from diffkit.compat.autograd.extend import primitive, defvjp

    @primitive
    def logsumexp(x):
        m = np.max(x)
        return m + np.log(np.sum(np.exp(x - m)))

    defvjp(logsumexp, lambda ans, x: lambda g: g * np.exp(x - ans))

The raw function runs on plain arrays; the rules are written with
``diffkit.compat.autograd.numpy`` so they can be differentiated again. Each primitive
gets one diffkit custom rule (``diffkit.custom_vjp`` when a VJP is given, else
``custom_jvp``), built on its first differentiated call and reused after.
"""

from ._primitives import (
    def_linear,
    defjvp,
    defjvp_argnum,
    defjvp_argnums,
    defvjp,
    defvjp_argnum,
    defvjp_argnums,
    notrace_primitive,
    primitive,
)
from ._vspace import SparseObject, VSpace, vspace
from .tracer import Box, register_notrace

__all__ = ["primitive", "notrace_primitive", "defvjp", "defvjp_argnum", "defvjp_argnums",
           "defjvp", "defjvp_argnum", "defjvp_argnums", "def_linear", "Box", "VSpace",
           "vspace", "SparseObject", "register_notrace", "JVPNode", "VJPNode"]


class VJPNode:
    """autograd's reverse-mode graph node; diffkit records its own tape, so this class
    exists only for code that names it."""


class JVPNode:
    """autograd's forward-mode graph node; see ``VJPNode``."""
