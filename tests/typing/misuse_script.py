"""Wrong user code: every marked line must be an error for both type checkers.

tests/test_typing.py checks this file with mypy (``warn_unused_ignores``) and pyright
(``reportUnnecessaryTypeIgnoreComment``): a ``# type: ignore`` that silences no error fails
the check, so each line below proves that diffkit's types catch that mistake (they are not
``Any``). It is never run.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

import diffkit as dk
import diffkit.numpy as dnp
from diffkit import tree_util

Array = NDArray[np.float64]


def loss(w: Array, x: Array) -> np.float64:
    return np.float64(dnp.sum(dnp.tanh(x @ w)))


def misuse(w: Array, x: Array) -> None:
    dk.grad(loss)(w)  # type: ignore[call-arg]
    dk.grad(loss)(w, x, 1.0)  # type: ignore[call-arg]
    dk.grad(loss)(w, "x")  # type: ignore[arg-type]
    dk.jacfwd(loss)(w, y=x)  # type: ignore[call-arg]
    dk.hessian(loss)("w", x)  # type: ignore[arg-type]
    dk.jit(loss)(w)  # type: ignore[call-arg]
    dk.checkpoint(loss)(w)  # type: ignore[call-arg]
    dk.custom_jvp(loss)(w)  # type: ignore[call-arg]
    dk.sparse_jacobian(loss)(w)  # type: ignore[call-arg]
    dk.make_graph(loss)(w)  # type: ignore[call-arg]
    value: str = dk.value_and_grad(loss)(w, x)[0]  # type: ignore[assignment]
    out: str = dk.jvp(loss, (w, x), (w, x))[0]  # type: ignore[assignment]
    primal: str = dk.vjp(loss, w, x)[0]  # type: ignore[assignment]
    jitted: str = dk.jit(loss)(w, x)  # type: ignore[assignment]
    dk.jacobian(loss, mode="sideways")  # type: ignore[arg-type]
    dk.grad(loss, argnums="w")  # type: ignore[arg-type]
    dk.debug.print(3.0)  # type: ignore[arg-type]
    dk.config.traceback_filtering = 0  # type: ignore[assignment]
    dnp.sin(w, w, w, w)  # type: ignore[call-overload]
    dnp.add.reduce(w)  # type: ignore[attr-defined]
    dnp.sum(w, axis="rows")  # type: ignore[arg-type]
    count: str = tree_util.tree_structure(w).num_leaves  # type: ignore[assignment]
    dk.jit(loss).cache_info(1)  # type: ignore[call-arg]
    unused: Any = (value, out, primal, jitted, count)
    print(unused)
