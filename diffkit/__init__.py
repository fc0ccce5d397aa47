"""diffkit: JAX-style automatic differentiation for NumPy code.

    import diffkit as dk
    import diffkit.numpy as dnp

    dk.grad(lambda x: dnp.sum(dnp.sin(x) ** 2))(x)

Transformations: ``grad``, ``value_and_grad``, ``vjp``, ``jvp``, ``linearize``, ``jacfwd``,
``jacrev``, ``jacobian``, ``hessian``, ``hvp``, ``vmap``, and ``stop_gradient``; user-defined
derivatives with ``custom_jvp`` and ``custom_vjp``; ``checkpoint`` to trade time for memory;
``jit`` to record a function once and replay it (``make_graph`` shows the recording);
``jacobian_sparsity``, ``hessian_sparsity``, ``sparse_jacobian`` and ``sparse_hessian`` for
sparse derivatives in a few batched passes.
"""

# numpy registers the primitives; numpy_protocol then gives traced values NumPy's operators,
# methods and dispatch protocols (Tracer itself, in core, knows no namespace). distributed
# fills the executor and lazy-array slots of diffkit.chunking (dask is imported on use only).
from . import (  # noqa: F401
    debug,
    distributed,
    errors,
    flatten_util,
    numpy,
    numpy_protocol,
    tree_util,
)
from .api import (  # noqa: F401
    grad,
    hessian,
    hvp,
    jacfwd,
    jacobian,
    jacrev,
    jvp,
    linearize,
    stop_gradient,
    value_and_grad,
    vjp,
    vmap,
)
from .config import config  # noqa: F401
from .custom import checkpoint, custom_jvp, custom_vjp  # noqa: F401
from .jit import jit, make_graph  # noqa: F401
from .sparse import (  # noqa: F401
    hessian_sparsity,
    jacobian_sparsity,
    sparse_hessian,
    sparse_jacobian,
)
from .taylor import (  # noqa: F401
    biharmonic,
    hessian_diagonal,
    jet,
    laplacian,
    weighted_laplacian,
)

__version__ = "0.1.0"

# The public names (and, for type checkers, what `import diffkit` exports).
__all__ = [
    "grad", "value_and_grad", "vjp", "jvp", "linearize", "jacfwd", "jacrev", "jacobian",
    "hessian", "hvp", "vmap", "stop_gradient",
    "custom_jvp", "custom_vjp", "checkpoint",
    "jit", "make_graph",
    "jacobian_sparsity", "hessian_sparsity", "sparse_jacobian", "sparse_hessian",
    "jet", "laplacian", "weighted_laplacian", "hessian_diagonal", "biharmonic",
    "config", "debug", "errors", "flatten_util", "numpy", "tree_util", "__version__",
]


def __dir__():
    # dir(diffkit) lists the public names, not the machinery (api_checks, interpreters, ...)
    return sorted(__all__)
