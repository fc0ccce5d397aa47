"""The extended Rosenbrock function (Moré, Garbow and Hillstrom's problem 21): independent
Rosenbrock valleys on the pairs ``(x[0], x[1]), (x[2], x[3]), ...``.

Program: ``rosenbrock(x)``, ``x`` of shape ``(2m,)`` -> a scalar, zero at ``x = 1``.
"""

import numpy as np


def rosenbrock(x):
    """``sum_i 100 (x[2i+1] - x[2i]**2)**2 + (1 - x[2i])**2``."""
    odd, even = x[0::2], x[1::2]
    return np.sum(100.0 * (even - odd**2) ** 2 + (1.0 - odd) ** 2)
