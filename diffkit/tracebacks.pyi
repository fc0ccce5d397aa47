# The types of diffkit.tracebacks' decorators (tracebacks.py holds the code): both return
# the function they decorate with its own signature, so the public entry points they wrap
# keep their types.

from collections.abc import Callable
from typing import Any

from ._types import F

__all__ = ["api_boundary", "public"]

def api_boundary(fun: F) -> F: ...
def public(fun: Callable[..., Any]) -> Callable[[F], F]: ...
