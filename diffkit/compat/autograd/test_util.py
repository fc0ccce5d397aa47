"""autograd's derivative checks (``autograd.test_util``), on diffkit.

``check_grads(fun, argnum=0, modes=["fwd", "rev"], order=2)(*args)`` checks the
derivatives of ``fun`` with respect to ``args[argnum]`` against central finite
differences, along random directions: the reverse mode through ``<u, vjp(v)>`` against
``<v, J u>`` (one inner product per check, so any input and output structure works), the
forward mode through the whole tangent. For ``order > 1`` the derivative functions
themselves (``(x, v) -> vjp(v)`` and ``(x, v) -> jvp(v)``) are checked the same way, down to
order 1. A failure raises ``AssertionError`` naming the mode and the function (``vjp_f``
for a derivative of ``f``). For diffkit's own checker with tolerances and per-order
reports, see ``diffkit.testing.check_grads``.
"""

from itertools import product

from . import core
from ._values import as_real
from ._vspace import vspace
from .wrap_util import get_name, unary_to_nary

__all__ = ["check_grads", "check_vjp", "check_jvp", "check_equivalent", "combo_check",
           "scalar_close", "make_numerical_jvp", "TOL", "RTOL", "EPS"]

TOL = 1e-6   # absolute tolerance of scalar_close
RTOL = 1e-6  # relative tolerance of scalar_close
EPS = 1e-6   # the finite-difference step


def scalar_close(a, b):
    """Whether the numbers ``a`` and ``b`` agree to TOL absolutely or RTOL relatively."""
    difference = abs(a - b)
    return difference < TOL or difference / abs(a + b) < RTOL


def make_numerical_jvp(f, x):
    """``v -> (f(x + EPS/2 v) - f(x - EPS/2 v)) / EPS``, for any vector space."""
    x_vs = vspace(x)

    def numerical_jvp(v):
        half_step = x_vs.scalar_mul(v, EPS / 2)
        above = f(x_vs.add(x, half_step))
        below = f(x_vs.add(x, x_vs.scalar_mul(half_step, -1.0)))
        y_vs = vspace(above)
        difference = y_vs.add(above, y_vs.scalar_mul(below, -1.0))
        return y_vs.scalar_mul(difference, 1.0 / EPS)

    return numerical_jvp


def check_vjp(f, x):
    """``<u, vjp(v)>`` against ``<v, numerical J u>`` for random ``u`` and ``v``."""
    vjp, y = core.make_vjp(f, x)
    x_vs, y_vs = vspace(x), vspace(y)
    u, v = x_vs.randn(), y_vs.randn()
    pulled = x_vs.covector(vjp(y_vs.covector(v)))
    assert vspace(pulled) == x_vs, (f"the VJP of {get_name(f)} has the space "
                                    f"{vspace(pulled)}, its argument {x_vs}")
    analytic = x_vs.inner_prod(u, pulled)
    numeric = y_vs.inner_prod(v, make_numerical_jvp(f, x)(u))
    assert scalar_close(numeric, analytic), (
        f"Derivative (VJP) check of {get_name(f)} failed with arg {x}:\n"
        f"analytic: {analytic}\nnumeric:  {numeric}")


def check_jvp(f, x):
    """The tangent of ``f`` along a random ``u`` against its finite difference."""
    u = vspace(x).randn()
    _, tangent = core.make_jvp(f, x)(u)
    check_equivalent(tangent, make_numerical_jvp(f, x)(u),
                     f"Derivative (JVP) check of {get_name(f)} failed with arg {x}")


def check_equivalent(x, y, what="Value mismatch"):
    """``x`` and ``y`` live in one space and agree along a random direction."""
    x_vs, y_vs = vspace(x), vspace(y)
    assert x_vs == y_vs, f"VSpace mismatch:\nx: {x_vs}\ny: {y_vs}"
    v = x_vs.randn()
    along_x, along_y = x_vs.inner_prod(x, v), x_vs.inner_prod(y, v)
    assert scalar_close(along_x, along_y), f"{what}:\nx: {x}\ny: {y}"


@unary_to_nary
def check_grads(f, x, modes=("fwd", "rev"), order=2):
    """Check the derivatives of ``f`` up to ``order`` in each of ``modes``."""
    unknown = [m for m in modes if m not in ("fwd", "rev")]
    assert not unknown, f"check_grads: unknown modes {unknown}; use 'fwd' and/or 'rev'"
    x = as_real(x)
    name = get_name(f)
    if "fwd" in modes:
        check_jvp(f, x)
        if order > 1:
            def jvp_f(x, v):
                return core.make_jvp(f, x)(v)[1]
            jvp_f.__name__ = f"jvp_{name}"
            check_grads(jvp_f, (0, 1), modes, order=order - 1)(x, vspace(x).randn())
    if "rev" in modes:
        check_vjp(f, x)
        if order > 1:
            def vjp_f(x, v):
                return core.make_vjp(f, x)[0](v)
            vjp_f.__name__ = f"vjp_{name}"
            check_grads(vjp_f, (0, 1), modes, order=order - 1)(x, vspace(f(x)).randn())


def combo_check(fun, *args, **kwargs):
    """``combo_check(fun, **check_options)(*arg_lists, **kwarg_lists)`` runs
    ``check_grads`` on every combination of the listed argument values."""
    def run(*arg_lists, **kwarg_lists):
        keyword_choices = [[(key, value) for value in values]
                           for key, values in kwarg_lists.items()]
        for positional in product(*arg_lists):
            for keywords in product(*keyword_choices):
                check_grads(fun, *args, **kwargs)(*positional, **dict(keywords))
    return run
