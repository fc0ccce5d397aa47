"""``fixed_point``: a fixed point found by iteration, differentiated by the implicit
function theorem (``autograd.misc.fixed_points``).

``fixed_point(f, a, x0, distance, tol)`` iterates ``x <- f(a)(x)`` from ``x0`` until
``distance(x, previous x) <= tol``. Its derivative with respect to ``a`` does not follow
the iterations: at the fixed point ``x* = f(a)(x*)``, a cotangent ``g`` of ``x*`` pulls back
to ``a`` as ``(df/da)^T u`` where ``u = g + (df/dx)^T u``, itself a fixed point, found by the
same iteration.
"""

from .... import api
from .._primitives import defvjp, primitive

__all__ = ["fixed_point"]


@primitive
def fixed_point(f, a, x0, distance, tol):
    """The fixed point of ``f(a)`` reached from ``x0`` (see the module docstring)."""
    step = f(a)
    previous, x = x0, step(x0)
    while distance(x, previous) > tol:
        previous, x = x, step(x)
    return x


def _adjoint_step(f, packed):
    """The map ``u -> g + (df/dx)^T u`` at the fixed point, as ``fixed_point`` iterates
    it (``packed`` holds ``a``, ``x*`` and ``g``)."""
    a, x_star, g = packed
    _, pull = api.vjp(f(a), x_star)
    return lambda u: g + pull(u)[0]


def _vjp_a(x_star, f, a, x0, distance, tol):
    _, pull_a = api.vjp(lambda a: f(a)(x_star), a)

    def vjp(g):
        u = fixed_point(lambda packed: _adjoint_step(f, packed), (a, x_star, g), g,
                        distance, tol)
        return pull_a(u)[0]

    return vjp


defvjp(fixed_point, None, _vjp_a, None, None, None)
