# The types of diffkit.api's transformations, as users see them (api.py holds the code and
# the docstrings; tests/test_typing.py checks that the two signatures agree).
#
# A transformation that returns a function keeps the wrapped function's parameters (P):
# grad(f) takes what f takes. What it returns is typed as the user sees it: the wrapped
# function's own result type (R) where the transformation passes it through (the value of
# value_and_grad, the output of jvp and vjp), else a pytree of NumPy arrays (PyTree, which
# is Any: Python's typing cannot follow a pytree's structure through a derivative).
# vmap changes the types of the parameters (a per-example float receives an array), which
# Python's typing cannot say, so the mapped function takes any arguments.

from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar, overload

from ._types import ArgNums, Aux, Axes, Executor, P, PyTree, R

__all__ = ["grad", "value_and_grad", "vjp", "jvp", "linearize", "jacfwd", "jacrev",
           "jacobian", "hessian", "hvp", "vmap", "stop_gradient"]

_T = TypeVar("_T")

@overload
def jvp(fun: Callable[..., R], primals: Sequence[PyTree], tangents: Sequence[PyTree],
        has_aux: Literal[False] = False) -> tuple[R, R]: ...
@overload
def jvp(fun: Callable[..., tuple[R, Aux]], primals: Sequence[PyTree],
        tangents: Sequence[PyTree], has_aux: Literal[True]) -> tuple[R, R, Aux]: ...
@overload
def jvp(fun: Callable[..., Any], primals: Sequence[PyTree], tangents: Sequence[PyTree],
        has_aux: bool = False) -> tuple[Any, ...]: ...
def linearize(fun: Callable[..., R], *primals: PyTree) -> tuple[R, Callable[..., R]]: ...
@overload
def vjp(fun: Callable[..., R], *primals: PyTree, has_aux: Literal[False] = False
        ) -> tuple[R, Callable[[PyTree], tuple[PyTree, ...]]]: ...
@overload
def vjp(fun: Callable[..., tuple[R, Aux]], *primals: PyTree, has_aux: Literal[True]
        ) -> tuple[R, Callable[[PyTree], tuple[PyTree, ...]], Aux]: ...
@overload
def vjp(fun: Callable[..., Any], *primals: PyTree, has_aux: bool = False
        ) -> tuple[Any, ...]: ...
def value_and_grad(fun: Callable[P, R], argnums: ArgNums = 0, has_aux: bool = False,
                   holomorphic: bool = False) -> Callable[P, tuple[R, PyTree]]: ...
def grad(fun: Callable[P, Any], argnums: ArgNums = 0, has_aux: bool = False,
         holomorphic: bool = False) -> Callable[P, PyTree]: ...
def jacfwd(fun: Callable[P, Any], argnums: ArgNums = 0, has_aux: bool = False,
           holomorphic: bool = False, chunk_size: int | None = None,
           executor: Executor = None, progress: bool = False) -> Callable[P, PyTree]: ...
def jacrev(fun: Callable[P, Any], argnums: ArgNums = 0, has_aux: bool = False,
           chunk_size: int | None = None, holomorphic: bool = False,
           executor: Executor = None, progress: bool = False) -> Callable[P, PyTree]: ...
def jacobian(fun: Callable[P, Any], argnums: ArgNums = 0, has_aux: bool = False,
             mode: Literal["auto", "fwd", "rev"] = "auto", holomorphic: bool = False,
             chunk_size: int | None = None, executor: Executor = None,
             progress: bool = False) -> Callable[P, PyTree]: ...
def hessian(fun: Callable[P, Any], argnums: ArgNums = 0, has_aux: bool = False,
            holomorphic: bool = False, chunk_size: int | None = None,
            executor: Executor = None, progress: bool = False) -> Callable[P, PyTree]: ...
def hvp(fun: Callable[..., Any], primals: Sequence[PyTree], tangents: Sequence[PyTree]
        ) -> tuple[PyTree, ...]: ...
def vmap(fun: Callable[..., Any], in_axes: Axes = 0, out_axes: Axes = 0,
         axis_size: int | None = None, chunk_size: int | None = None,
         executor: Executor = None, progress: bool = False) -> Callable[..., PyTree]: ...
def stop_gradient(x: _T) -> _T: ...
