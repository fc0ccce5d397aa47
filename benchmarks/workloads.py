"""The benchmark workloads.

Each workload is written once, as a function of a namespace ``ns`` of array functions
(``systems.System.ns``), so NumPy, diffkit and every peer run the same arithmetic with their
own array functions. A workload says:

- ``setup(rng)``: its inputs, a tuple of NumPy arrays (or tuples of them) in call order;
- ``function(ns)``: the function being differentiated;
- ``primal(ns, args)``: the plain-NumPy computation its ratios divide by (by default the
  function itself; the per-example workload evaluates all examples' losses at once);
- ``derivative(system, args)``: the derivative function to time, called as ``fn(*args)``;
- ``probe(args, leaves)``: an independent check of a result (central finite differences
  of the NumPy primal, or of a hand-written NumPy gradient for second derivatives);
  returns the relative error.
"""

import numpy as np


def _tree_map2(a, b, fn):
    if isinstance(a, (tuple, list)):
        return type(a)(_tree_map2(x, y, fn) for x, y in zip(a, b))
    return fn(a, b)


def _leaves(tree):
    if isinstance(tree, (tuple, list)):
        return [leaf for t in tree for leaf in _leaves(t)]
    return [tree]


def _rel_err(approx, exact):
    approx, exact = np.ravel(approx), np.ravel(exact)
    return float(np.linalg.norm(approx - exact) / max(np.linalg.norm(exact), 1e-300))


def _random_like(tree, rng):
    if isinstance(tree, (tuple, list)):
        return type(tree)(_random_like(t, rng) for t in tree)
    return rng.standard_normal(np.shape(tree))


FD_STEP = 1e-6


class Workload:
    key = title = kind = ""

    def setup(self, rng):
        raise NotImplementedError

    def function(self, ns):
        raise NotImplementedError

    def primal(self, ns, args):
        f = self.function(ns)
        return lambda: f(*args)

    def derivative(self, system, args):
        f = self.function(system.ns)
        transform = getattr(system, self.kind)
        return system.finish(transform(f))

    # --- independent checks -----------------------------------------------------------

    def probe(self, args, leaves):
        return None

    def _directional_fd(self, args, v):
        """``(f(x + h v) - f(x - h v)) / 2h`` for the NumPy function in its first argument."""
        from systems import NumPySystem
        f = self.function(NumPySystem().ns)
        x = args[0]
        plus = _tree_map2(x, v, lambda a, b: a + FD_STEP * b)
        minus = _tree_map2(x, v, lambda a, b: a - FD_STEP * b)
        return (np.asarray(f(plus, *args[1:])) - np.asarray(f(minus, *args[1:]))) / (2 * FD_STEP)


class ScalarChain(Workload):
    key, kind = "chain", "grad"
    title = "grad: 200-op scalar chain"
    repeats = 50   # x = sin(x) * c + x * d: 4 primitive operations each, 200 in all

    def setup(self, rng):
        return (np.array(0.3),)

    def function(self, ns):
        sin, repeats = ns.sin, self.repeats

        def chain(x):
            for _ in range(repeats):
                x = sin(x) * 0.9 + x * 0.1
            return x
        return chain

    def probe(self, args, leaves):
        return _rel_err(leaves[0], self._directional_fd(args, np.array(1.0)))


class MLPLoss(Workload):
    key, kind = "mlp", "grad"
    title = "grad: tanh MLP loss, batch 128, 64-256-256-10"
    sizes, batch = (64, 256, 256, 10), 128

    def setup(self, rng):
        params = []
        for fan_in, fan_out in zip(self.sizes[:-1], self.sizes[1:]):
            params.append(rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in))
            params.append(0.1 * rng.standard_normal(fan_out))
        X = rng.standard_normal((self.batch, self.sizes[0]))
        Y = np.eye(self.sizes[-1])[rng.integers(0, self.sizes[-1], self.batch)]
        return tuple(params), X, Y

    def function(self, ns):
        tanh, logsumexp, sum, mean = ns.tanh, ns.logsumexp, ns.sum, ns.mean

        def loss(params, X, Y):   # softmax cross-entropy with one-hot labels Y
            W1, b1, W2, b2, W3, b3 = params
            h = tanh(X @ W1 + b1)
            h = tanh(h @ W2 + b2)
            z = h @ W3 + b3
            return mean(logsumexp(z, axis=1) - sum(z * Y, axis=1))
        return loss

    def probe(self, args, leaves):
        v = _random_like(args[0], np.random.default_rng(1))
        exact = sum(float(np.sum(g * d)) for g, d in zip(leaves, _leaves(v)))
        return _rel_err(self._directional_fd(args, v), exact)


class RosenbrockHessian(Workload):
    key, kind = "hessian", "hessian"
    title = "hessian: extended Rosenbrock, n=400"
    n = 400

    def setup(self, rng):
        return (rng.uniform(-1.5, 1.5, self.n),)

    def function(self, ns):
        sum = ns.sum

        def rosenbrock(x):   # Moré-Garbow-Hillstrom's extended Rosenbrock: pairs (x1, x2)
            x1, x2 = x[0::2], x[1::2]
            return sum(100.0 * (x2 - x1 ** 2) ** 2 + (1.0 - x1) ** 2)
        return rosenbrock

    @staticmethod
    def numpy_gradient(x):
        x1, x2 = x[0::2], x[1::2]
        g = np.empty_like(x)
        g[0::2] = -400.0 * x1 * (x2 - x1 ** 2) - 2.0 * (1.0 - x1)
        g[1::2] = 200.0 * (x2 - x1 ** 2)
        return g

    def probe(self, args, leaves):
        (x,), H = args, leaves[0]
        v = np.random.default_rng(1).standard_normal(x.shape)
        fd = (self.numpy_gradient(x + FD_STEP * v) - self.numpy_gradient(x - FD_STEP * v)) \
            / (2 * FD_STEP)
        return _rel_err(H.reshape(len(x), len(x)) @ v, fd)


class Jacobian(Workload):
    n = 300

    def setup(self, rng):
        A = rng.standard_normal((self.n, self.n)) / np.sqrt(self.n)
        return rng.standard_normal(self.n), A

    def function(self, ns):
        tanh, sin = ns.tanh, ns.sin

        def f(x, A):
            return tanh(A @ x) * x + sin(x)
        return f

    def probe(self, args, leaves):
        x, J = args[0], leaves[0]
        v = np.random.default_rng(1).standard_normal(x.shape)
        return _rel_err(J @ v, self._directional_fd(args, v))


class JacobianRev(Jacobian):
    key, kind = "jacrev", "jacrev"
    title = "jacrev: tanh(A x)*x + sin(x), n=300"


class JacobianFwd(Jacobian):
    key, kind = "jacfwd", "jacfwd"
    title = "jacfwd: tanh(A x)*x + sin(x), n=300"


class HessianVectorProduct(Workload):
    key, kind = "hvp", "hvp"
    title = "hvp: sum(tanh(A x)), n=2000"
    n = 2000

    def setup(self, rng):
        A = rng.standard_normal((self.n, self.n)) / np.sqrt(self.n)
        return rng.standard_normal(self.n), rng.standard_normal(self.n), A

    def function(self, ns):
        tanh, sum = ns.tanh, ns.sum

        def f(x, A):
            return sum(tanh(A @ x))
        return f

    def primal(self, ns, args):
        f, (x, _, A) = self.function(ns), args
        return lambda: f(x, A)

    def probe(self, args, leaves):
        x, v, A = args

        def gradient(x):
            return A.T @ (1.0 - np.tanh(A @ x) ** 2)
        fd = (gradient(x + FD_STEP * v) - gradient(x - FD_STEP * v)) / (2 * FD_STEP)
        return _rel_err(leaves[0], fd)


class PerExampleGrad(Workload):
    key, kind = "per_example", "per_example_grad"
    title = "vmap(grad): logistic loss, 256 x 100"
    examples, features = 256, 100

    def setup(self, rng):
        w = 0.1 * rng.standard_normal(self.features)
        X = rng.standard_normal((self.examples, self.features))
        y = rng.integers(0, 2, self.examples).astype(np.float64)
        return w, X, y

    def function(self, ns):
        log1p, exp = ns.log1p, ns.exp

        def loss(w, x, y):   # logistic loss of one example: softplus(z) - y z
            z = x @ w
            return log1p(exp(z)) - y * z
        return loss

    def primal(self, ns, args):
        # The primal is every example's loss at once, in plain vectorised NumPy.
        w, X, y = args

        def losses():
            z = X @ w
            return np.log1p(np.exp(z)) - y * z
        return losses

    def probe(self, args, leaves):
        w, X, y = args
        G = leaves[0]
        v = np.random.default_rng(1).standard_normal(w.shape)

        def losses(w):
            z = X @ w
            return np.log1p(np.exp(z)) - y * z
        fd = (losses(w + FD_STEP * v) - losses(w - FD_STEP * v)) / (2 * FD_STEP)
        return _rel_err(G @ v, fd)


class PerExampleLoop(PerExampleGrad):
    """The gradient of one example's loss, called in a Python loop over the examples: what
    an optimiser or a sampler does when it asks for one derivative at a time. The primal is
    the NumPy loss of one example in the same loop, so the ratio is the cost of one
    derivative call over one loss call (per-call overhead, mostly)."""

    key, kind = "per_example_loop", "grad"
    title = "grad per example in a Python loop: logistic loss, 64 x 100"
    examples = 64

    def setup(self, rng):
        w, X, y = super().setup(rng)
        return w, tuple(X), tuple(np.array(v) for v in y)   # one argument set per example

    def primal(self, ns, args):
        w, xs, ys = args

        def losses():
            out = []
            for x, y in zip(xs, ys):
                z = x @ w
                out.append(np.log1p(np.exp(z)) - y * z)
            return out
        return losses

    def derivative(self, system, args):
        gradient = system.finish(system.grad(self.function(system.ns)))

        def per_example(w, xs, ys):
            return [gradient(w, x, y) for x, y in zip(xs, ys)]
        return per_example

    def probe(self, args, leaves):
        w, xs, ys = args
        return super().probe((w, np.stack(xs), np.array(ys)), [np.stack(leaves)])


class LargeElementwise(Workload):
    key, kind = "elementwise", "grad"
    title = "grad: sum(sin(x)*exp(-x**2)), n=10**6"
    n = 10 ** 6

    def setup(self, rng):
        return (rng.standard_normal(self.n),)

    def function(self, ns):
        sin, exp, sum = ns.sin, ns.exp, ns.sum

        def f(x):
            return sum(sin(x) * exp(-x ** 2))
        return f

    def probe(self, args, leaves):
        v = np.random.default_rng(1).standard_normal(args[0].shape)
        return _rel_err(self._directional_fd(args, v), float(np.dot(leaves[0], v)))


class EigenvalueHessian(Workload):
    key, kind = "eigh", "hessian"
    title = "hessian: sum(eigvalsh(sym(A))**3), 16x16"
    n = 16

    def setup(self, rng):
        return (rng.standard_normal((self.n, self.n)),)

    def function(self, ns):
        eigvalsh, sum = ns.eigvalsh, ns.sum

        def cubes(a):
            return sum(eigvalsh((a + a.T) * 0.5) ** 3)
        return cubes

    @staticmethod
    def numpy_gradient(a):
        w, v = np.linalg.eigh((a + a.T) * 0.5)
        g = (v * 3 * w ** 2) @ v.T   # d sum(w^3) / dS, symmetric
        return g   # dS / dA = (E + E^T) / 2 maps a symmetric g to itself

    def probe(self, args, leaves):
        (a,), H = args, leaves[0]
        v = np.random.default_rng(1).standard_normal(a.shape)
        fd = (self.numpy_gradient(a + FD_STEP * v) - self.numpy_gradient(a - FD_STEP * v)) \
            / (2 * FD_STEP)
        return _rel_err(H.reshape(a.size, a.size) @ v.ravel(), fd.ravel())


class NuclearNormGrad(Workload):
    key, kind = "svd", "grad"
    title = "grad: sum(svdvals(A)), 100x60"
    shape = (100, 60)

    def setup(self, rng):
        return (rng.standard_normal(self.shape),)

    def function(self, ns):
        svdvals, sum = ns.svdvals, ns.sum

        def nuclear(a):
            return sum(svdvals(a))
        return nuclear

    def probe(self, args, leaves):
        u, _, vt = np.linalg.svd(args[0], full_matrices=False)
        return _rel_err(leaves[0], u @ vt)   # the gradient of the nuclear norm: U V^T


WORKLOADS = (ScalarChain(), MLPLoss(), RosenbrockHessian(), JacobianRev(), JacobianFwd(),
             HessianVectorProduct(), PerExampleGrad(), PerExampleLoop(), LargeElementwise(),
             EigenvalueHessian(), NuclearNormGrad())
