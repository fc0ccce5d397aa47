"""Correct user code calling every public transformation of diffkit the way users do.

tests/test_typing.py runs it (so it is correct code) and type-checks it with
``mypy --strict`` and with pyright: both must pass clean. Annotations here are what a user
writes; a false error from either checker means diffkit's types are wrong.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

import diffkit as dk
import diffkit.numpy as dnp
import diffkit.scipy.linalg as dsl
import diffkit.scipy.special as dsp
import diffkit.scipy.stats as dst
from diffkit import tree_util
from diffkit.flatten_util import ravel_pytree
from diffkit.scipy.optimize import minimize
from diffkit.testing import check_grads, check_vmap

Array = NDArray[np.float64]


def loss(w: Array, x: Array) -> Any:
    """A scalar loss of the weights ``w`` on the data ``x``."""
    prediction = dnp.tanh(x @ w)
    return dnp.sum(prediction**2) + 0.5 * dnp.sum(w**2)


def loss_with_aux(w: Array, x: Array) -> tuple[Any, dict[str, Any]]:
    value = loss(w, x)
    return value, {"norm": dnp.linalg.norm(w)}


def residuals(w: Array) -> Array:
    return dnp.sin(w) * w[::-1]


def scalar(t: float) -> float:
    return t * t


class Params(NamedTuple):
    weight: Array
    bias: Array


def model(params: Params, x: Array) -> Any:
    return dnp.sum(dnp.exp(x @ params.weight + params.bias))


@dk.custom_jvp
def softplus(x: Array) -> Array:
    return dnp.log1p(dnp.exp(x))


@softplus.defjvp
def softplus_jvp(primals: tuple[Array], tangents: tuple[Array]) -> tuple[Array, Array]:
    (x,), (x_dot,) = primals, tangents
    return softplus(x), x_dot * dsp.expit(x)


@dk.custom_vjp
def clip_gradient(x: Array) -> Array:
    return x


def clip_fwd(x: Array) -> tuple[Array, None]:
    return x, None


def clip_bwd(residual: None, g: Array) -> tuple[Array]:
    return (dnp.clip(g, -1.0, 1.0),)


clip_gradient.defvjp(clip_fwd, clip_bwd)


@dk.checkpoint
def block(x: Array) -> Array:
    return dnp.cos(dnp.sin(x))


def noisy_loss(v: Array) -> Any:
    dk.debug.print("v = {v}", v=v)
    return dnp.sum(v**2)


@dk.jit
def jitted_loss(w: Array, x: Array) -> Any:
    return loss(w, x)


def main() -> None:
    rng = np.random.default_rng(0)
    w: Array = rng.standard_normal(3)
    x: Array = rng.standard_normal((4, 3))

    # grad and value_and_grad keep the parameters of the function they wrap
    grad_loss = dk.grad(loss)
    g: NDArray[np.float64] = grad_loss(w, x)
    value, g2 = dk.value_and_grad(loss)(w, x)
    print(value + 1.0, float(value), g.shape, g2 * 2.0)
    (value_aux, aux), g3 = dk.value_and_grad(loss_with_aux, has_aux=True)(w, x)
    g4, aux2 = dk.grad(loss_with_aux, has_aux=True)(w, x)
    gw, gx = dk.grad(loss, argnums=(0, 1))(w, x)
    print(value_aux - 1.0, aux["norm"], g3.sum(), g4.shape, aux2["norm"], gw.shape, gx.shape)
    print(dk.grad(scalar)(3.0) + 1.0)

    # forward and reverse mode
    out, tangent = dk.jvp(residuals, (w,), (np.ones_like(w),))
    out2, vjp_fn = dk.vjp(residuals, w)
    (cotangent,) = vjp_fn(np.ones_like(out2))
    out3, jvp_fn = dk.linearize(residuals, w)
    print(out + tangent, cotangent.shape, out3.shape, jvp_fn(np.ones_like(w)))
    value4, vjp_aux, aux4 = dk.vjp(loss_with_aux, w, x, has_aux=True)
    print(value4 + 1.0, vjp_aux(1.0)[0].shape, aux4["norm"])

    # Jacobians, Hessians, Hessian-vector products
    jac_f: Array = dk.jacfwd(residuals)(w)
    jac_r: Array = dk.jacrev(residuals)(w)
    jac_a: Array = dk.jacobian(residuals, mode="rev", chunk_size=2)(w)
    hess: Array = dk.hessian(loss)(w, x)
    (hvp_w,) = dk.hvp(lambda v: loss(v, x), (w,), (np.ones_like(w),))
    print(jac_f.shape, jac_r.T @ jac_a, np.trace(hess), hvp_w.shape)

    # vmap and jit
    per_example = dk.vmap(loss, in_axes=(None, 0))(w, x[:, None, :])
    batched_scalar = dk.vmap(scalar)(np.linspace(0.0, 1.0, 5))
    print(per_example.shape, batched_scalar.sum())
    jitted_value = jitted_loss(w, x)
    print(jitted_value + 1.0, jitted_loss.cache_info().traces, len(jitted_loss.graphs()))
    graph = dk.make_graph(loss)(w, x)
    print(graph.num_ops > 0)

    # custom rules and checkpoint
    print(dk.grad(lambda v: dnp.sum(softplus(v)))(w).shape,
          dk.grad(lambda v: dnp.sum(clip_gradient(v) * 10.0))(w).max(),
          dk.grad(lambda v: dnp.sum(block(v)))(w).shape,
          dk.stop_gradient(w).shape)

    # sparse Jacobians
    sparse_jac = dk.sparse_jacobian(residuals)
    matrix = sparse_jac(w)
    print(matrix.shape, sparse_jac.coloring(w).num_colors, dk.jacobian_sparsity(residuals)(w).nnz)

    # pytrees
    params = Params(weight=w, bias=np.zeros(()))
    grads = dk.grad(model)(params, x)
    leaves, treedef = tree_util.tree_flatten(grads)
    doubled = tree_util.tree_map(lambda a: 2.0 * a, params)
    rebuilt = tree_util.tree_unflatten(treedef, leaves)
    flat, unravel = ravel_pytree({"w": w, "b": np.ones(2)})
    restored = unravel(flat)
    print(len(leaves), treedef.num_leaves, doubled.weight.shape, rebuilt.bias,
          flat.shape, restored["w"].shape)

    # debugging
    dk.debug.print("w = {}", w)
    dk.grad(noisy_loss)(w)

    # diffkit.numpy and diffkit.scipy
    y = dnp.exp(dnp.linspace(0.0, 1.0, 3)) + dnp.pi
    z = dnp.einsum("ij,j->i", x, w)
    m = dnp.linalg.inv(np.eye(3) + 0.1 * np.outer(w, w))
    print(y.sum(), z.shape, m[0, 0] + 1.0)
    special = dsp.gammaln(np.array([1.5, 2.5])) + dsp.logsumexp(w)
    log_density = dst.norm.logpdf(x, loc=0.0, scale=2.0)
    cholesky = dsl.cholesky(np.eye(3) * 2.0, lower=True)
    print(special.shape, log_density.sum(), cholesky[1, 1])
    result = minimize(lambda v: loss(v, x), np.zeros(3), method="BFGS")
    print(result.x, result.fun + 0.0, bool(result.success))

    # derivative checks
    check_grads(loss, (w, x), order=2)
    check_vmap(residuals, (x,))


if __name__ == "__main__":
    main()
