# The types of diffkit.sparse.detection's public names (detection.py holds the code and
# docstrings; tests/test_typing.py checks that the names and signatures agree).

from collections.abc import Callable
from typing import Any

from scipy.sparse import csr_array  # type: ignore[import-untyped, unused-ignore]

from .._types import ArgNums, P

__all__ = ["jacobian_sparsity", "hessian_sparsity"]

def jacobian_sparsity(fun: Callable[P, Any], argnums: ArgNums = 0, local: bool = False
                      ) -> Callable[P, csr_array]: ...
def hessian_sparsity(fun: Callable[P, Any], argnums: ArgNums = 0, local: bool = False
                     ) -> Callable[P, csr_array]: ...
