"""The Dirichlet-multinomial log-likelihood of count vectors, as a function of the
log-concentrations.

Program: ``log_likelihood(log_alpha)``, ``log_alpha`` of shape ``(K,)`` -> the total log pmf
of the rows of ``COUNTS`` (a scalar).
"""

import numpy as np
from scipy.special import gammaln

COUNTS = np.array([[3, 0, 2, 5],
                   [1, 4, 4, 0],
                   [2, 2, 1, 3],
                   [0, 6, 1, 1],
                   [5, 1, 0, 2]], dtype=float)   # (observations, K)


def log_pmf(counts, alpha):
    """log P(counts | alpha) for each row of ``counts`` (n, K); shape ``(n,)``."""
    total = np.sum(counts, axis=-1)
    concentration = np.sum(alpha)
    return (gammaln(concentration) + gammaln(total + 1.0) - gammaln(total + concentration)
            + np.sum(gammaln(counts + alpha) - gammaln(alpha) - gammaln(counts + 1.0),
                     axis=-1))


def log_likelihood(log_alpha):
    return np.sum(log_pmf(COUNTS, np.exp(log_alpha)))
