"""Truncated multivariate Taylor series ("jets") evaluated at many points at once.

Special functions without closed-form derivatives in their parameters (the shape
parameters of ``gammainc``/``betainc``, the parameters of ``hyp1f1``/``hyp2f1``, the
exponent of ``zeta``) are computed by series, continued fractions or Euler-Maclaurin sums
whose recurrences only add, multiply and divide by simple functions of the parameters.
Running the recurrence on jets instead of numbers carries every derivative in the
parameters along: the coefficient of monomial ``t`` in the result is ``d^t f / t!``.

This is plain NumPy inside primitives' implementations (it never sees a tracer); the
primitives' rules are what make derivatives of derivatives work.
"""

import itertools
import math

import numpy as np

__all__ = []


def _monomials(nvars, degree):
    """Exponent tuples of total ``degree`` in ``nvars`` variables, the first variable's
    exponent decreasing (for two variables: (d, 0), (d-1, 1), ..., (0, d))."""
    return sorted((t for t in itertools.product(range(degree + 1), repeat=nvars)
                   if sum(t) == degree), reverse=True)


class Jets:
    """Truncated Taylor series in ``nvars`` variables to total degree ``order``, at many
    points at once: a jet is an array whose axis 0 runs over the monomials ``terms`` (by
    increasing degree), entry k holding the derivative d^t f over t! (t = terms[k]) at
    each point."""

    def __init__(self, nvars, order):
        self.nvars = nvars
        self.order = order
        self.terms = [t for d in range(order + 1) for t in _monomials(nvars, d)]
        self.index = {t: i for i, t in enumerate(self.terms)}
        size = len(self.terms)
        self.table = np.zeros((size, size, size))  # monomial p times monomial q -> k
        for p, s in enumerate(self.terms):
            for q, u in enumerate(self.terms):
                k = self.index.get(tuple(i + j for i, j in zip(s, u)))
                if k is not None:
                    self.table[p, q, k] = 1
        # multiplying by variable v shifts each monomial t to t + e_v: _below[v][k] is the
        # index of t_k - e_v (or the zero row appended at the end)
        self._below = [np.array([self.index.get(tuple(n - (i == v) for i, n in enumerate(t)),
                                                size) for t in self.terms])
                       for v in range(nvars)]

    def constant(self, value):
        jet = np.zeros((len(self.terms),) + np.shape(value))
        jet[0] = value
        return jet

    def linear(self, value, slopes):
        """The jet of ``value + sum_v slopes[v] e_v``."""
        jet = self.constant(value)
        if self.order:
            for v, slope in enumerate(slopes):
                jet[self.index[tuple(int(i == v) for i in range(self.nvars))]] = slope
        return jet

    def mul(self, f, g):
        return np.einsum("pqk,p...,q...->k...", self.table, f, g)

    def mul_linear(self, f, value, slopes):
        """``f`` times the jet ``value + sum_v slopes[v] e_v`` (a linear function of the
        variables, like a + b + m): cheaper than ``mul``."""
        padded = np.concatenate([f, np.zeros((1,) + f.shape[1:])])
        out = value * f
        for v, slope in enumerate(slopes):
            if slope:
                out = out + slope * padded[self._below[v]]
        return out

    def reciprocal_linear(self, value, slopes):
        """The jet of ``1 / (value + sum_v slopes[v] e_v)``: with u = sum_v slopes[v] e_v,
        the geometric series sum_n (-u)^n / value^(n+1), a direct formula per monomial."""
        jet = np.empty((len(self.terms),) + np.shape(value))
        inverse = 1 / np.asarray(value, np.float64)
        for k, t in enumerate(self.terms):
            n = sum(t)  # coefficient of prod e_v^t_v in (-u)^n: multinomial * prod slope^t
            coefficient = math.factorial(n) * (-1) ** n
            for v, power in enumerate(t):
                coefficient = coefficient * slopes[v] ** power / math.factorial(power)
            jet[k] = coefficient * inverse ** (n + 1)
        return jet

    def _lower(self, t, s):
        """The index of monomial t - s, or None when s does not divide t."""
        return self.index.get(tuple(i - j for i, j in zip(t, s)))

    def div(self, f, g):
        quotient = np.empty_like(f)  # q_t = (f_t - sum_{s > 0} g_s q_{t-s}) / g_0
        for k, t in enumerate(self.terms):
            value = f[k]
            for p, s in enumerate(self.terms[1:], 1):
                r = self._lower(t, s)
                if r is not None:
                    value = value - g[p] * quotient[r]
            quotient[k] = value / g[0]
        return quotient

    def exp(self, f):
        e = np.empty_like(f)  # from d e = e d f along the first variable t depends on
        e[0] = np.exp(f[0])
        for k, t in enumerate(self.terms[1:], 1):
            v = next(i for i, n in enumerate(t) if n)
            total = 0
            for p, s in enumerate(self.terms[1:], 1):
                r = self._lower(t, s)
                if r is not None and s[v]:
                    total = total + s[v] * f[p] * e[r]
            e[k] = total / t[v]
        return e

    def derivative(self, jet, orders):
        """The partial derivative d^orders f (not divided by orders!) from ``jet``."""
        factor = math.prod(math.factorial(n) for n in orders)
        return jet[self.index[tuple(orders)]] * factor
