"""Test problems with sparse derivatives, shared by the sparse tests."""

import numpy as np

import diffkit as dk
import diffkit.numpy as dnp

RTOL = 1e-12   # sparse against dense derivatives: the same arithmetic, regrouped


def dense_jacobian(fun, x):
    """The dense Jacobian of ``fun`` at ``x`` as an ``(out.size, x.size)`` array."""
    return np.asarray(dk.jacfwd(fun)(x)).reshape(-1, np.size(x))


def brusselator(y, n=6, a=3.4, b=1.0, alpha=0.02):
    """The right-hand side of the 2-D Brusselator on a periodic n x n grid, unknowns
    ``y = (u, v)`` flattened: ``2 n**2`` of them."""
    u = dnp.reshape(y[:n * n], (n, n))
    v = dnp.reshape(y[n * n:], (n, n))

    def laplacian(w):
        return (dnp.roll(w, 1, axis=0) + dnp.roll(w, -1, axis=0) + dnp.roll(w, 1, axis=1)
                + dnp.roll(w, -1, axis=1) - 4.0 * w) * (n - 1) ** 2

    du = b + u * u * v - (a + 1.0) * u + alpha * laplacian(u)
    dv = a * u - u * u * v + alpha * laplacian(v)
    return dnp.concatenate([dnp.reshape(du, (-1,)), dnp.reshape(dv, (-1,))])


def brusselator_pattern(n):
    """The exact Jacobian pattern of ``brusselator``: each equation reads its own cell's
    u and v, and its four neighbours' value of its own field."""
    cells = np.arange(n * n).reshape(n, n)
    pattern = np.zeros((2 * n * n, 2 * n * n), dtype=bool)
    for field in (0, 1):
        for shift, axis in ((1, 0), (-1, 0), (1, 1), (-1, 1)):
            rows = field * n * n + cells.ravel()
            pattern[rows, field * n * n + np.roll(cells, shift, axis=axis).ravel()] = True
        for other in (0, 1):
            pattern[field * n * n + cells.ravel(), other * n * n + cells.ravel()] = True
    return pattern


def banded(x):
    """A tridiagonal Jacobian: each output reads its neighbours."""
    inner = x[1:-1] * dnp.sin(x[:-2]) - dnp.exp(0.3 * x[2:])
    return dnp.concatenate([x[:1] ** 2, inner, dnp.tanh(x[-1:])])


def chained_rosenbrock(x):
    return dnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def band_pattern(n, width=1):
    return np.abs(np.subtract.outer(np.arange(n), np.arange(n))) <= width


def flat_args(fun, args):
    """``fun`` of the arrays ``args`` as a function of one vector holding them all, its
    output flattened (what the dense references differentiate)."""
    sizes = [np.size(a) for a in args]
    shapes = [np.shape(a) for a in args]

    def flat(v):
        pieces, start = [], 0
        for size, shape in zip(sizes, shapes):
            pieces.append(dnp.reshape(v[start:start + size], shape))
            start += size
        return dnp.reshape(fun(*pieces), (-1,))

    return flat
