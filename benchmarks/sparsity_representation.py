"""Which representation of dependence sets makes sparsity detection faster?

    python benchmarks/sparsity_representation.py

Sparsity detection keeps, for every entry of every value, the set of input entries it
depends on. Two candidates:

- a boolean SciPy CSR array of shape ``(size, n_inputs)`` (what
  ``diffkit.interpreters.sparsity`` uses): unions are ``A + B``, moves are row gathers,
  reductions are sparse products;
- a NumPy object array of Python integers used as bit sets (bit ``j`` set: depends on
  input ``j``): unions are ``np.bitwise_or`` on the object array, moves are fancy indexing,
  reductions are ``np.bitwise_or.reduce``.

The three operations that dominate a detection are timed on the dependence sets of the
2-D Brusselator's Laplacian (every entry depends on five inputs), for growing sizes.
"""

import time

import numpy as np
import scipy.sparse as sp


def median_time(thunk, repeat=7):
    samples = []
    for _ in range(repeat):
        calls, start = 0, time.perf_counter()
        while time.perf_counter() - start < 0.01:
            thunk()
            calls += 1
        samples.append((time.perf_counter() - start) / calls)
    return float(np.median(samples))


def stencil(n):
    """The dependence sets of a 5-point periodic stencil on an n x n grid, both ways."""
    cells = np.arange(n * n).reshape(n, n)
    rows, cols = [], []
    for shift, axis in ((0, 0), (1, 0), (-1, 0), (1, 1), (-1, 1)):
        rows.append(cells.ravel())
        cols.append(np.roll(cells, shift, axis=axis).ravel())
    csr = sp.csr_array((np.ones(5 * n * n, bool), (np.concatenate(rows), np.concatenate(cols))),
                       shape=(n * n, n * n))
    bits = np.empty(n * n, dtype=object)
    for r in range(n * n):
        value = 0
        for c in csr.indices[csr.indptr[r]:csr.indptr[r + 1]]:
            value |= 1 << int(c)
        bits[r] = value
    return csr, bits


def cases(n):
    csr, bits = stencil(n)
    shifted = np.roll(np.arange(n * n), 1)
    other_csr, other_bits = csr[shifted], bits[shifted]
    everything = sp.csr_array(np.ones((1, n * n), bool))
    return {
        "union (add)": (lambda: csr + other_csr, lambda: np.bitwise_or(bits, other_bits)),
        "move (roll)": (lambda: csr[shifted], lambda: bits[shifted]),
        "reduce (sum)": (lambda: everything @ csr, lambda: np.bitwise_or.reduce(bits)),
    }


def main():
    print("| grid | operation | CSR | bit sets | bit sets / CSR |")
    print("|---|---|---|---|---|")
    for n in (8, 16, 32, 64):
        for name, (with_csr, with_bits) in cases(n).items():
            a, b = median_time(with_csr), median_time(with_bits)
            print(f"| {n} x {n} | {name} | {a * 1e6:.0f} us | {b * 1e6:.0f} us | "
                  f"{b / a:.2g}x |")


if __name__ == "__main__":
    main()
