"""``diffkit.numpy.linalg``: NumPy's linear algebra, differentiable.

Every public name of ``numpy.linalg`` (NumPy 2): the decompositions (``cholesky``, ``qr``,
``eig``, ``eigh``, ``svd`` ...), solves and inverses, determinants, norms, ``lstsq``,
``matrix_power``, ``multi_dot``, ``tensorsolve``, ``tensorinv``, ``matrix_rank`` (no
derivative), ``cond`` and the array-API names (``vecdot``, ``matrix_transpose``,
``vector_norm`` ...), with NumPy's signatures, stacking (``(..., m, n)``) and result types.
The primitives and their derivative conventions are in the family modules that
``diffkit/ops/decompositions.py`` lists.
"""

import numpy as _np  # noqa: E402

from ..ops.decompositions import *  # noqa: F403
from ..ops.decompositions import __all__  # noqa: F401
from ._wrap import wrap_namespace as _wrap_namespace  # noqa: E402

# NumPy's signatures, docstrings and array-like inputs (diffkit/numpy/_wrap.py)
_wrap_namespace(globals(), _np.linalg, __name__, __all__)
