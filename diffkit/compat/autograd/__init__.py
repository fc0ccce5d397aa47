"""autograd's API on diffkit: ``import diffkit.compat.autograd as autograd``.

Code written for HIPS autograd runs on diffkit's engines by changing one import::

    import diffkit.compat.autograd as autograd
    import diffkit.compat.autograd.numpy as np
    from diffkit.compat.autograd import grad, elementwise_grad, value_and_grad, hessian

For code that cannot be edited (a library that imports ``autograd`` itself),
``diffkit.compat.autograd.install()`` makes ``import autograd`` and ``import
autograd.<submodule>`` resolve to this package; ``uninstall()`` undoes it.

The operators keep autograd's signatures and conventions (``argnum``, integer arrays
differentiated as real, ``make_vjp`` returning ``(vjp, value)``); docs/guide/autograd.md
lists every remaining difference. Submodules: ``numpy`` (``linalg``, ``fft``,
``random``), ``scipy`` (``special``, ``stats``, ``linalg``, ``signal``, ``integrate``,
``misc``), ``extend``, ``builtins``, ``misc`` (``flatten``, ``optimizers``) and
``test_util``.

The functions made by ``grad``, ``value_and_grad``, ``elementwise_grad``, ``jacobian`` and
``hessian`` are staged (recorded with ``diffkit.jit`` and replayed) once they have been
called a few times the same way, while everything that decided the recording is
unchanged; ``set_staging(False)`` turns that off (``_staging`` says what is checked).
"""

from . import builtins, extend, numpy, test_util  # noqa: F401
from ._install import install, installed, uninstall
from ._primitives import primitive
from ._staging import set_staging, staging_enabled
from .builtins import dict, isinstance, list, tuple, type
from .differential_operators import (
    checkpoint,
    deriv,
    elementwise_grad,
    grad,
    grad_and_aux,
    grad_named,
    hessian,
    hessian_tensor_product,
    hessian_vector_product,
    holomorphic_grad,
    jacobian,
    make_ggnvp,
    make_hvp,
    make_jvp,
    make_jvp_reversemode,
    make_vjp,
    multigrad_dict,
    tensor_jacobian_product,
    value_and_grad,
    vector_jacobian_product,
)
from .numpy.numpy_boxes import ArrayBox

__all__ = [
    "grad", "elementwise_grad", "value_and_grad", "grad_and_aux", "grad_named", "deriv",
    "jacobian", "hessian", "hessian_tensor_product", "hessian_vector_product",
    "tensor_jacobian_product", "vector_jacobian_product", "holomorphic_grad", "make_vjp",
    "make_jvp", "make_hvp", "make_ggnvp", "make_jvp_reversemode", "multigrad_dict",
    "checkpoint", "primitive", "ArrayBox", "tuple", "list", "dict", "isinstance", "type",
    "install", "uninstall", "installed", "set_staging", "staging_enabled",
]
