"""autograd's core names (``autograd.core``): the one-argument ``make_vjp``/``make_jvp``,
vector spaces, and the rule definitions and tables. Everything here is diffkit's."""

from ... import api
from ._primitives import (
    def_linear,
    defjvp,
    defjvp_argnum,
    defjvp_argnums,
    defvjp,
    defvjp_argnum,
    defvjp_argnums,
    primitive,
    primitive_jvps,
    primitive_vjps,
)
from ._values import as_real
from ._vspace import SparseObject, VSpace, vspace

__all__ = ["make_vjp", "make_jvp", "vspace", "VSpace", "SparseObject", "primitive",
           "defvjp", "defvjp_argnum", "defvjp_argnums", "defjvp", "defjvp_argnum",
           "defjvp_argnums", "def_linear", "primitive_vjps", "primitive_jvps"]


def make_vjp(fun, x):
    """``(vjp, fun(x))`` for a function of one argument."""
    value, pull = api.vjp(fun, as_real(x))
    return (lambda g: pull(as_real(g))[0]), value


def make_jvp(fun, x):
    """``v -> (fun(x), tangent)`` for a function of one argument."""
    x = as_real(x)
    return lambda v: api.jvp(fun, (x,), (as_real(v),))
