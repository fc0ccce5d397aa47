# The types of diffkit.sparse's public names (the package holds the code and docstrings;
# tests/test_typing.py checks that the names and signatures agree). A sparse derivative
# keeps the parameters of the function it wraps, as dk.jacobian does; its result is a
# scipy.sparse array (a CSR array for a plain call).

from collections.abc import Callable
from typing import Any, Generic, Literal, NamedTuple

import numpy as np
from numpy.typing import NDArray
from scipy.sparse import csr_array  # type: ignore[import-untyped, unused-ignore]

from .._types import ArgNums, Executor, P

__all__ = ["jacobian_sparsity", "hessian_sparsity", "sparse_jacobian", "sparse_hessian",
           "column_coloring", "row_coloring", "star_coloring", "Coloring"]

class Coloring(NamedTuple):
    pattern: Any
    mode: str
    colors: NDArray[np.integer[Any]]
    num_colors: int
    seeds: NDArray[Any]
    take: NDArray[Any]

class _SparseDerivative(Generic[P]):
    """What sparse_jacobian and sparse_hessian return: call it as the function (a CSR
    array of the derivative), or ask for the colouring it uses."""
    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> csr_array: ...
    def coloring(self, *args: P.args, **kwargs: P.kwargs) -> Coloring: ...

def jacobian_sparsity(fun: Callable[P, Any], argnums: ArgNums = 0, local: bool = False
                      ) -> Callable[P, csr_array]: ...
def hessian_sparsity(fun: Callable[P, Any], argnums: ArgNums = 0, local: bool = False
                     ) -> Callable[P, csr_array]: ...
def sparse_jacobian(fun: Callable[P, Any], argnums: ArgNums = 0, sparsity: Any = None,
                    mode: Literal["auto", "forward", "reverse"] = "auto",
                    chunk_size: int | None = None, executor: Executor = None,
                    progress: bool = False) -> _SparseDerivative[P]: ...
def sparse_hessian(fun: Callable[P, Any], argnums: ArgNums = 0, sparsity: Any = None,
                   chunk_size: int | None = None, executor: Executor = None,
                   progress: bool = False) -> _SparseDerivative[P]: ...
def column_coloring(pattern: Any, order: str = "best") -> NDArray[np.integer[Any]]: ...
def row_coloring(pattern: Any, order: str = "best") -> NDArray[np.integer[Any]]: ...
def star_coloring(pattern: Any, order: str = "best") -> NDArray[np.integer[Any]]: ...
