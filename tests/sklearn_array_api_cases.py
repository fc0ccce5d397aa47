"""Run in a subprocess with SCIPY_ARRAY_API=1 by test_array_api_sklearn.py: scikit-learn's
array-API code (``array_api_dispatch=True``) differentiated unchanged. It writes into arrays
it has made (``K[mask] = 0``, ``X /= norms``), which traced values support. Prints one JSON
line per case.

scikit-learn refuses a mix of namespaces (a NumPy array next to a traced one), so every
array argument is traced: each case is differentiated in both of its arguments."""

import json
import sys

import numpy as np
import sklearn
from sklearn.metrics import mean_squared_error, r2_score
from sklearn.metrics.pairwise import (
    cosine_similarity,
    euclidean_distances,
    polynomial_kernel,
    rbf_kernel,
)
from sklearn.preprocessing import normalize

import diffkit as dk
import diffkit.numpy as dnp

RNG = np.random.default_rng(0)
X = RNG.normal(size=(4, 3))
Y = RNG.normal(size=(5, 3))
W = RNG.normal(size=(4, 5))   # weights turning a kernel matrix into one number

CASES = {
    "rbf_kernel": lambda x, y: dnp.sum(rbf_kernel(x, y, gamma=0.3) * W),
    "rbf_kernel(X)": lambda x, y: dnp.sum(rbf_kernel(x) * W[:, :4]),   # X is Y: a diagonal
    "polynomial_kernel": lambda x, y: dnp.sum(polynomial_kernel(x, y, degree=3) * W),
    "euclidean_distances": lambda x, y: dnp.sum(euclidean_distances(x, y) * W),
    "cosine_similarity": lambda x, y: dnp.sum(cosine_similarity(x, y) * W),
    "normalize": lambda x, y: dnp.sum(normalize(x) * W[:, :3]) + dnp.sum(normalize(y, "l1")),
    # the default returns float(...) (a Python number: no derivative); raw_values keeps it
    "mean_squared_error": lambda x, y: dnp.sum(
        mean_squared_error(x, y[:4], multioutput="raw_values")),
    # force_finite=False: the default writes the scores into xp.ones(...), a NumPy array
    "r2_score": lambda x, y: dnp.sum(
        r2_score(y[:4], x, multioutput="raw_values", force_finite=False)),
}


def central_differences(f, args, k, step=1e-6):
    x = args[k]
    out = np.empty(x.shape)
    for i in np.ndindex(x.shape):
        e = np.zeros(x.shape)
        e[i] = step
        up = list(args)
        down = list(args)
        up[k], down[k] = x + e, x - e
        out[i] = (float(f(*up)) - float(f(*down))) / (2 * step)
    return out


def relative(a, b):
    return float(np.max(np.abs(a - b) / (1 + np.abs(b))))


def check(name, f):
    reverse = dk.grad(f, argnums=(0, 1))(X, Y)
    forward = dk.jacfwd(f, argnums=(0, 1))(X, Y)
    result = {"name": name,
              "reverse_vs_fd": max(relative(reverse[k], central_differences(f, (X, Y), k))
                                   for k in (0, 1)),
              "forward_vs_reverse": max(relative(forward[k], reverse[k]) for k in (0, 1))}
    # Under vmap, Y is batched too (a shared NumPy Y would mix namespaces). scikit-learn
    # writes into copies of it (normalize): a copy belongs to grad, the innermost
    # transformation, so it is written in place although Y is vmap's. scikit-learn is told
    # the data are finite: its check branches on xp.isfinite(xp.sum(X)), one truth value
    # that a batch of examples does not have.
    xs, ys = np.stack([X, X[::-1] * 0.5]), np.stack([Y, Y + 0.25])
    with sklearn.config_context(assume_finite=True):
        batched = dk.vmap(dk.grad(f))(xs, ys)
    result["vmap_vs_fd"] = max(relative(batched[i], central_differences(f, (xs[i], ys[i]), 0))
                               for i in range(2))
    return result


if __name__ == "__main__":
    names = sys.argv[1:] or list(CASES)
    with sklearn.config_context(array_api_dispatch=True):
        for name in names:
            try:
                print(json.dumps(check(name, CASES[name])))
            except Exception as error:   # reported, and the test fails naming it
                print(json.dumps({"name": name, "error": f"{type(error).__name__}: {error}"}))
