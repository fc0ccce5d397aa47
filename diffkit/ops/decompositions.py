"""``numpy.linalg``, differentiable: the public names of its families, re-exported.

Where each family lives (each module states its primitives and derivative conventions):

- ``solves.py``: ``solve``, ``inv``, ``det``, ``slogdet`` (``det_p``'s rules: ``determinant.py``);
- ``cholesky_qr.py``: ``cholesky``, ``qr``;
- ``eigen.py``: ``eigh``, ``eigvalsh``, ``eig``, ``eigvals``;
- ``svd.py``: ``svd``, ``svdvals``;
- ``spectral_ties.py``: repeated eigen/singular values and the vectors' gauge (eigen and svd);
- ``least_squares.py``: ``pinv``, ``lstsq``, ``matrix_rank``;
- ``norms.py``: ``norm``, ``vector_norm``, ``matrix_norm``, ``cond``;
- ``matrix_products.py``: ``matrix_power``, ``multi_dot``, ``tensorsolve``, ``tensorinv``;
- ``array_api_linalg.py``: ``outer``, ``vecdot``, ``matrix_transpose``, ``diagonal``,
  ``trace``, ``cross``; ``matmul`` and ``tensordot`` are in ``linalg.py``;
- ``matrix_helpers.py``: the shared helpers (stacked matrix algebra, argument checks).

Stacks. Like NumPy, every function works on stacks of matrices ``(..., m, n)``; the rules
are written for stacks too, so batching (``vmap``) only adds one more leading stack axis.

Derivatives are the standard matrix-calculus results, written as transposes of the JVPs
(for complex values under the pairing ``Re(sum(cotangent * tangent))``, JAX's convention).
Functions that read one triangle of a Hermitian input (``eigh``, ``eigvalsh``,
``cholesky``, ``pinv(hermitian=True)``, ``svd(hermitian=True)``) have derivative 0 in the
entries they do not read, as the functions NumPy computes.
"""

from .array_api_linalg import *  # noqa: F403
from .array_api_linalg import __all__ as _array_api
from .cholesky_qr import *  # noqa: F403
from .cholesky_qr import __all__ as _cholesky_qr
from .eigen import *  # noqa: F403
from .eigen import __all__ as _eigen
from .least_squares import *  # noqa: F403
from .least_squares import __all__ as _least_squares
from .linalg import matmul, tensordot  # noqa: F401
from .matrix_helpers import LinAlgError  # noqa: F401
from .matrix_products import *  # noqa: F403
from .matrix_products import __all__ as _products
from .norms import *  # noqa: F403
from .norms import __all__ as _norms
from .solves import *  # noqa: F403
from .solves import __all__ as _solves
from .svd import *  # noqa: F403
from .svd import __all__ as _svd

__all__ = ["LinAlgError", "matmul", "tensordot", *_solves, *_cholesky_qr, *_eigen, *_svd,
           *_least_squares, *_norms, *_products, *_array_api]
