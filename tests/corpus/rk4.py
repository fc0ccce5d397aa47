"""The Lotka-Volterra predator-prey equations integrated with the classical fourth-order
Runge-Kutta method (a fixed-step Python loop).

Program: ``final_state(theta)``, ``theta`` of shape ``(6,)``: the initial populations
``(prey, predator)`` then the rates ``(alpha, beta, delta, gamma)`` -> the populations at
``T_FINAL``, shape ``(2,)``.
"""

import numpy as np

T_FINAL = 2.0
N_STEPS = 40


def lotka_volterra(state, rates):
    """d/dt of ``state = (prey, predator)``, shape ``(2,)``."""
    prey, predator = state
    alpha, beta, delta, gamma = rates
    return np.stack([alpha * prey - beta * prey * predator,
                     delta * prey * predator - gamma * predator])


def rk4(field, state, rates, t_final, n_steps):
    """Integrate ``d state/dt = field(state, rates)`` from 0 to ``t_final`` in ``n_steps``."""
    h = t_final / n_steps
    for _ in range(n_steps):
        k1 = field(state, rates)
        k2 = field(state + 0.5 * h * k1, rates)
        k3 = field(state + 0.5 * h * k2, rates)
        k4 = field(state + h * k3, rates)
        state = state + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return state


def final_state(theta):
    """The populations at ``T_FINAL`` from initial state ``theta[:2]`` and rates ``theta[2:]``."""
    return rk4(lotka_volterra, theta[:2], theta[2:], T_FINAL, N_STEPS)
