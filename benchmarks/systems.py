"""The systems compared: plain NumPy (the primal baseline), diffkit, and the optional peers.

Each system offers the same small interface so that one workload definition serves all:

- ``ns``: a namespace of the array functions the workloads use (``sin``, ``exp``, ``tanh``,
  ``log1p``, ``sum``, ``mean``, ``logsumexp``, ``eigvalsh``, ``svdvals``), bound to the
  system's own functions;
- ``convert(tree)``: the workload's NumPy inputs as the system's arrays (done once, untimed);
- the transformations ``grad``, ``jacrev``, ``jacfwd``, ``hessian``, ``hvp`` and
  ``per_example_grad`` (each raises ``NotAvailable`` where the system has none);
- ``finish(fn)``: what is applied to the finished derivative function (``jax.jit`` for the
  JAX jit column, ``diffkit.jit`` for the diffkit-jit column, nothing elsewhere);
- ``sync(out)``: waits for the result (JAX dispatches asynchronously);
- ``leaves(out)``: the result as a flat list of NumPy arrays, for the agreement check.

Peers are imported only if installed; ``available_systems`` says which are.
"""

import importlib.metadata
import os

import numpy as np


class NotAvailable(Exception):
    """The system has no such transformation (the cell is shown as n/a)."""


def _flatten(tree, convert):
    if isinstance(tree, (tuple, list)):
        out = []
        for t in tree:
            out.extend(_flatten(t, convert))
        return out
    return [convert(tree)]


def _map(tree, fn):
    if isinstance(tree, tuple):
        return tuple(_map(t, fn) for t in tree)
    if isinstance(tree, list):
        return [_map(t, fn) for t in tree]
    return fn(tree)


def _version(dist):
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "?"


def numpy_logsumexp(z, axis):
    """The stable log-sum-exp a NumPy user writes by hand (the primal's own)."""
    m = np.max(z, axis=axis, keepdims=True)
    return np.log(np.sum(np.exp(z - m), axis=axis)) + np.squeeze(m, axis=axis)


class System:
    key = name = "?"
    is_peer = True

    def __init__(self):
        self.ns = None

    def version(self):
        return ""

    def convert(self, tree):
        return tree

    def leaves(self, out):
        return _flatten(out, np.asarray)

    def sync(self, out):
        return out

    def finish(self, fn):
        return fn

    def _missing(self, what):
        raise NotAvailable(f"{self.name} has no {what}")

    def grad(self, f):
        self._missing("grad")

    def jacrev(self, f):
        self._missing("reverse-mode Jacobian")

    def jacfwd(self, f):
        self._missing("forward-mode Jacobian")

    def hessian(self, f):
        self._missing("hessian")

    def hvp(self, f):
        """``h(x, v, *consts)``: the Hessian of ``f(x, *consts)`` in ``x``, times ``v``."""
        self._missing("Hessian-vector product")

    def per_example_grad(self, loss):
        """``g(w, X, y)``: row ``i`` is the gradient in ``w`` of ``loss(w, X[i], y[i])``."""
        self._missing("per-example gradients")


class _Namespace:
    def __init__(self, **fns):
        self.__dict__.update(fns)


class NumPySystem(System):
    """Plain NumPy, no derivatives: evaluates the primal that all ratios divide by."""

    key, name, is_peer = "numpy", "NumPy primal", False

    def __init__(self):
        super().__init__()
        self.ns = _Namespace(sin=np.sin, cos=np.cos, exp=np.exp, tanh=np.tanh,
                             log1p=np.log1p, sum=np.sum, mean=np.mean,
                             logsumexp=numpy_logsumexp, eigvalsh=np.linalg.eigvalsh,
                             svdvals=lambda a: np.linalg.svd(a, compute_uv=False))

    def version(self):
        return np.__version__


class DiffkitSystem(System):
    key, name, is_peer = "diffkit", "diffkit", False

    def __init__(self):
        super().__init__()
        import diffkit
        import diffkit.numpy as dnp
        self.dk = diffkit
        self.ns = _Namespace(sin=dnp.sin, cos=dnp.cos, exp=dnp.exp, tanh=dnp.tanh,
                             log1p=dnp.log1p, sum=dnp.sum, mean=dnp.mean,
                             logsumexp=dnp.logsumexp, eigvalsh=dnp.linalg.eigvalsh,
                             svdvals=lambda a: dnp.linalg.svd(a, compute_uv=False))

    def version(self):
        return getattr(self.dk, "__version__", "?")

    def grad(self, f):
        return self.dk.grad(f)

    def jacrev(self, f):
        return self.dk.jacrev(f)

    def jacfwd(self, f):
        return self.dk.jacfwd(f)

    def hessian(self, f):
        return self.dk.hessian(f)

    def hvp(self, f):
        hvp = self.dk.hvp

        def h(x, v, *consts):
            return hvp(lambda x: f(x, *consts), (x,), (v,))[0]
        return h

    def per_example_grad(self, loss):
        return self.dk.vmap(self.dk.grad(loss), in_axes=(None, 0, 0))


class DiffkitJitSystem(DiffkitSystem):
    """The same diffkit derivative functions under ``diffkit.jit``: the first call traces
    (timed separately, see ``run.py``), later calls replay the recorded graph."""

    key, name = "diffkitjit", "diffkit-jit"

    def finish(self, fn):
        return self.dk.jit(fn)


class AutogradSystem(System):
    key, name = "autograd", "autograd"

    def __init__(self):
        super().__init__()
        import autograd
        import autograd.numpy as anp
        import autograd.scipy.special as asp
        self.ag = autograd
        self.ns = _Namespace(sin=anp.sin, cos=anp.cos, exp=anp.exp, tanh=anp.tanh,
                             log1p=anp.log1p, sum=anp.sum, mean=anp.mean,
                             logsumexp=lambda z, axis: asp.logsumexp(z, axis=axis),
                             eigvalsh=lambda a: anp.linalg.eigh(a)[0],
                             svdvals=lambda a: anp.linalg.svd(a, compute_uv=False))

    def version(self):
        return _version("autograd")

    def grad(self, f):
        return self.ag.grad(f)

    def jacrev(self, f):
        return self.ag.jacobian(f)

    def jacfwd(self, f):
        raise NotAvailable("autograd has no forward-mode Jacobian")

    def hessian(self, f):
        return self.ag.hessian(f)

    def hvp(self, f):
        product = self.ag.hessian_vector_product(f)   # reverse-over-reverse

        def h(x, v, *consts):
            return product(x, *consts, v)
        return h

    def per_example_grad(self, loss):
        g = self.ag.grad(loss)

        def per_example(w, X, y):   # autograd has no vmap: a Python loop over examples
            return np.stack([g(w, X[i], y[i]) for i in range(len(X))])
        return per_example


class JaxSystem(System):
    """JAX run eagerly (op by op, no ``jit``), float64 on the CPU."""

    key, name = "jax", "JAX eager"

    def __init__(self):
        super().__init__()
        import jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp
        self.jax, self.jnp = jax, jnp
        self.ns = _Namespace(sin=jnp.sin, cos=jnp.cos, exp=jnp.exp, tanh=jnp.tanh,
                             log1p=jnp.log1p, sum=jnp.sum, mean=jnp.mean,
                             logsumexp=lambda z, axis: jax.nn.logsumexp(z, axis=axis),
                             eigvalsh=jnp.linalg.eigvalsh,
                             svdvals=lambda a: jnp.linalg.svd(a, compute_uv=False))

    def version(self):
        return f"jax {_version('jax')}, jaxlib {_version('jaxlib')}"

    def convert(self, tree):
        return _map(tree, lambda a: self.jax.device_put(np.asarray(a)))

    def sync(self, out):
        return self.jax.block_until_ready(out)

    def grad(self, f):
        return self.jax.grad(f)

    def jacrev(self, f):
        return self.jax.jacrev(f)

    def jacfwd(self, f):
        return self.jax.jacfwd(f)

    def hessian(self, f):
        return self.jax.hessian(f)

    def hvp(self, f):
        jax = self.jax
        gradient = jax.grad(f)

        def h(x, v, *consts):   # forward over reverse
            return jax.jvp(lambda x: gradient(x, *consts), (x,), (v,))[1]
        return h

    def per_example_grad(self, loss):
        return self.jax.vmap(self.jax.grad(loss), in_axes=(None, 0, 0))


class JaxJitSystem(JaxSystem):
    """The same JAX derivative functions, compiled once with ``jax.jit`` (compile untimed)."""

    key, name = "jaxjit", "JAX jit"

    def finish(self, fn):
        return self.jax.jit(fn)


class TorchFuncSystem(System):
    """torch.func transformations on float64 CPU tensors, one thread."""

    key, name = "torch", "torch.func"

    def __init__(self):
        super().__init__()
        import torch
        import torch.func
        torch.set_num_threads(1)
        try:
            torch.set_num_interop_threads(1)
        except RuntimeError:   # only allowed before any parallel work has started
            pass
        self.torch, self.func = torch, torch.func

        def reduce(fn):
            return lambda x, axis=None: fn(x) if axis is None else fn(x, dim=axis)

        self.ns = _Namespace(sin=torch.sin, cos=torch.cos, exp=torch.exp, tanh=torch.tanh,
                             log1p=torch.log1p, sum=reduce(torch.sum), mean=reduce(torch.mean),
                             logsumexp=lambda z, axis: torch.logsumexp(z, dim=axis),
                             eigvalsh=torch.linalg.eigvalsh, svdvals=torch.linalg.svdvals)

    def version(self):
        return self.torch.__version__

    def convert(self, tree):
        return _map(tree, lambda a: self.torch.from_numpy(
            np.array(a, dtype=np.float64, copy=True)))

    def leaves(self, out):
        return _flatten(out, lambda t: t.detach().cpu().numpy()
                        if hasattr(t, "detach") else np.asarray(t))

    def grad(self, f):
        return self.func.grad(f)

    def jacrev(self, f):
        return self.func.jacrev(f)

    def jacfwd(self, f):
        return self.func.jacfwd(f)

    def hessian(self, f):
        return self.func.hessian(f)

    def hvp(self, f):
        func = self.func
        gradient = func.grad(f)

        def h(x, v, *consts):   # forward over reverse
            return func.jvp(lambda x: gradient(x, *consts), (x,), (v,))[1]
        return h

    def per_example_grad(self, loss):
        return self.func.vmap(self.func.grad(loss), in_dims=(None, 0, 0))


PEERS = (AutogradSystem, JaxSystem, TorchFuncSystem, JaxJitSystem)


class _Broken:
    """A namespace whose every function raises the error that stopped the system loading."""

    def __init__(self, message):
        self._message = message

    def __getattr__(self, name):
        raise RuntimeError(self._message)


class BrokenDiffkit(System):
    """Stands in for diffkit when it cannot even be imported (say, mid-edit), so that the
    run goes on: every diffkit cell then fails with the import error."""

    key, name, is_peer = "diffkit", "diffkit", False

    def __init__(self, error):
        super().__init__()
        self.message = f"diffkit failed to import: {type(error).__name__}: {error}"
        self.ns = _Broken(self.message)

    def version(self):
        return self.message


def available_systems(wanted=None):
    """``(systems, skipped)``: the NumPy and diffkit systems and every importable peer (of
    ``wanted`` keys, if given); ``skipped`` maps a peer's name to why it is missing."""
    try:
        diffkit = DiffkitSystem()
    except Exception as error:   # noqa: BLE001 - report it in every diffkit cell instead
        diffkit = BrokenDiffkit(error)
    systems, skipped = [NumPySystem(), diffkit], {}
    if not isinstance(diffkit, BrokenDiffkit) and hasattr(diffkit.dk, "jit"):
        systems.append(DiffkitJitSystem())
    for cls in PEERS:
        if wanted is not None and cls.key not in wanted:
            continue
        try:
            systems.append(cls())
        except ImportError as error:
            skipped[cls.name] = f"not installed ({error.name or error})"
        except Exception as error:   # noqa: BLE001 - a broken install must not stop the run
            skipped[cls.name] = f"failed to start: {type(error).__name__}: {error}"
    return systems, skipped


def pinned_threads():
    """The thread-count variables as set for this run (for the report)."""
    names = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "XLA_FLAGS")
    return {n: os.environ.get(n, "") for n in names}
