"""The residual of one backward-Euler step of the 1-D nonlinear heat equation
``u_t = (k(u) u_x)_x`` with ``k(u) = 1 + u**2 / 2``, on a uniform grid of ``N`` interior
points: a fixed temperature at the left end (Dirichlet), no flux at the right (Neumann, by a
mirrored ghost point).

Program: ``residual(u)``, ``u`` of shape ``(N,)`` (the interior temperatures after the step)
-> the residual of the discrete equations, shape ``(N,)``; zero at the step's solution.
"""

import numpy as np

N = 6
DX = 1.0 / N
DT = 0.01
T_LEFT = 1.0
U_PREVIOUS = np.linspace(0.8, 0.2, N)


def conductivity(u):
    return 1.0 + 0.5 * u**2


def residual(u):
    """``(u - U_PREVIOUS) / DT - d/dx (k(u) du/dx)`` by central differences in flux form."""
    full = np.concatenate([[T_LEFT], u, u[-1:]])            # (N + 2,) with boundary values
    face_k = conductivity(0.5 * (full[1:] + full[:-1]))     # (N + 1,) at cell faces
    flux = -face_k * (full[1:] - full[:-1]) / DX
    return (u - U_PREVIOUS) / DT + (flux[1:] - flux[:-1]) / DX
