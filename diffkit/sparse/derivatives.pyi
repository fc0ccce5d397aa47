# The types of diffkit.sparse.derivatives' public names (derivatives.py holds the code and
# docstrings; tests/test_typing.py checks that the names and signatures agree). A sparse
# derivative keeps the parameters of the function it wraps, as dk.jacobian does; its result
# is a scipy.sparse array (a CSR array for a plain call).

from collections.abc import Callable
from typing import Any, Generic, Literal, NamedTuple

import numpy as np
from numpy.typing import NDArray
from scipy.sparse import csr_array  # type: ignore[import-untyped, unused-ignore]

from .._types import ArgNums, Executor, P

__all__ = ["sparse_jacobian", "sparse_hessian", "Coloring"]

class Coloring(NamedTuple):
    pattern: Any
    mode: str
    colors: NDArray[np.integer[Any]]
    num_colors: int
    seeds: NDArray[Any]
    take: NDArray[Any]
    row_colors: NDArray[np.integer[Any]] | None = None
    row_seeds: NDArray[Any] | None = None

class _SparseDerivative(Generic[P]):
    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> csr_array: ...
    def coloring(self, *args: P.args, **kwargs: P.kwargs) -> Coloring: ...

def sparse_jacobian(fun: Callable[P, Any], argnums: ArgNums = 0, sparsity: Any = None,
                    mode: Literal["auto", "forward", "reverse", "bidirectional"] = "auto",
                    chunk_size: int | None = None, executor: Executor = None,
                    progress: bool = False) -> _SparseDerivative[P]: ...
def sparse_hessian(fun: Callable[P, Any], argnums: ArgNums = 0, sparsity: Any = None,
                   chunk_size: int | None = None, executor: Executor = None,
                   progress: bool = False) -> _SparseDerivative[P]: ...
