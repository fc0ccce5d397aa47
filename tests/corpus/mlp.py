"""A one-hidden-layer tanh MLP classifier with softmax cross-entropy.

Program: ``loss(theta)``, ``theta`` of shape ``(N_PARAMS,)`` (all weights and biases, flat)
-> the mean cross-entropy over ``INPUTS`` (a scalar).
"""

import numpy as np

N_FEATURES, N_HIDDEN, N_CLASSES = 3, 4, 3
N_PARAMS = N_FEATURES * N_HIDDEN + N_HIDDEN + N_HIDDEN * N_CLASSES + N_CLASSES

INPUTS = np.cos(np.arange(15.0)).reshape(5, N_FEATURES)  # (examples, features)
LABELS = np.array([0, 2, 1, 2, 0])


def unpack(theta):
    """Split the flat ``(N_PARAMS,)`` vector into ``W1 (F, H), b1 (H,), W2 (H, C), b2 (C,)``."""
    sizes = [N_FEATURES * N_HIDDEN, N_HIDDEN, N_HIDDEN * N_CLASSES, N_CLASSES]
    w1, b1, w2, b2 = np.split(theta, np.cumsum(sizes)[:-1])
    return (w1.reshape(N_FEATURES, N_HIDDEN), b1,
            w2.reshape(N_HIDDEN, N_CLASSES), b2)


def log_softmax(logits):
    """Row-wise log-softmax of ``(n, C)`` logits; subtracting the row maximum keeps exp finite."""
    shifted = logits - logits.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


def loss(theta):
    """Mean softmax cross-entropy of the MLP with parameters ``theta`` on ``INPUTS``."""
    w1, b1, w2, b2 = unpack(theta)
    hidden = np.tanh(INPUTS @ w1 + b1)
    logits = hidden @ w2 + b2
    one_hot = np.eye(N_CLASSES)[LABELS]
    return -np.mean(np.sum(one_hot * log_softmax(logits), axis=1))
