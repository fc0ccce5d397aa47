"""Log-likelihood of observations under a multivariate normal whose mean and covariance are
the parameters.

Program: ``log_likelihood(theta)``, ``theta`` of shape ``(D + D*D,)``: the mean, then a
``(D, D)`` matrix whose lower triangle ``L`` gives the covariance ``L L^T + JITTER I`` ->
the total log-likelihood of ``OBSERVATIONS`` (a scalar).
"""

import numpy as np

D = 3
JITTER = 0.5
OBSERVATIONS = np.sin(np.arange(1.0, 19.0)).reshape(6, D) * 2.0  # (n, D)


def unpack(theta):
    """The mean ``(D,)`` and the covariance ``(D, D)`` encoded by ``theta``."""
    mean = theta[:D]
    factor = np.tril(theta[D:].reshape(D, D))
    return mean, factor @ factor.T + JITTER * np.eye(D)


def log_likelihood(theta):
    """``sum_k log N(y_k; mean, cov)`` over the rows ``y_k`` of ``OBSERVATIONS``."""
    mean, cov = unpack(theta)
    n, d = OBSERVATIONS.shape
    centered = OBSERVATIONS - mean                      # (n, D)
    _, logdet = np.linalg.slogdet(cov)
    whitened = np.linalg.solve(cov, centered.T)         # (D, n): cov^-1 (y_k - mean)
    mahalanobis = np.sum(centered.T * whitened)
    return -0.5 * (mahalanobis + n * logdet + n * d * np.log(2.0 * np.pi))
