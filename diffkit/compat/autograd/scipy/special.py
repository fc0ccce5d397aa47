"""``autograd.scipy.special``: every name of ``scipy.special``, diffkit's differentiable
function where diffkit has one (all of autograd's do), SciPy's own otherwise (a traced
value passed to one of those raises an error naming it)."""

import scipy.special as _scipy_special

from .... import scipy as _diffkit_scipy  # noqa: F401 (loads diffkit.scipy.special)
from .. import _namespaces

__all__ = _namespaces.copy_like(_scipy_special, "diffkit.scipy.special", globals())
