"""Small helpers of autograd's public internals (``autograd.util``)."""

import warnings

from .test_util import check_grads
from .wrap_util import subval, subvals

__all__ = ["subvals", "subval", "func", "quick_grad_check"]


def func(f):
    """The plain function of a method (autograd registers rules on them)."""
    return getattr(f, "__func__", f)


def quick_grad_check(fun, arg0, extra_args=(), kwargs=None, verbose=True, eps=1e-4,
                     rtol=1e-4, atol=1e-6, rs=None):
    """Deprecated (as in autograd): ``check_grads(fun)(arg0, *extra_args, **kwargs)``."""
    warnings.warn("quick_grad_check is deprecated (as in autograd); use "
                  "autograd.test_util.check_grads", DeprecationWarning, stacklevel=2)
    check_grads(fun)(arg0, *extra_args, **(kwargs or {}))
