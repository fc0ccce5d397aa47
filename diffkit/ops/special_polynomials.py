"""Orthogonal polynomials and associated Legendre functions as primitives: ``eval_jacobi``,
``eval_sh_jacobi``, ``eval_gegenbauer``, ``eval_chebyt``, ``eval_chebyu``, ``eval_chebyc``,
``eval_chebys``, ``eval_sh_chebyt``, ``eval_sh_chebyu``, ``eval_legendre``,
``eval_sh_legendre``, ``eval_genlaguerre``, ``eval_laguerre``, ``eval_hermite``,
``eval_hermitenorm`` and ``lpmv``.

Differentiable in ``x``, each by the family's derivative rule (DLMF 18.9.15-18.9.25), in
terms of a polynomial of degree ``n - 1`` (for a real degree ``n`` SciPy evaluates the
hypergeometric function, for which the same rules hold):

- Jacobi ``P_n^(a,b)' = (n + a + b + 1)/2 P_(n-1)^(a+1,b+1)``; Gegenbauer
  ``C_n^(a)' = 2 a C_(n-1)^(a+1)``; so Chebyshev ``T_n' = n U_(n-1)``, ``U_n' = 2
  C_(n-1)^(2)``, Legendre ``P_n' = C_(n-1)^(3/2)``, and the shifted and scaled forms by the
  chain rule (``sh_*`` at ``2x - 1``, ``chebyc``, ``chebys`` at ``x/2``);
- Laguerre ``L_n^(a)' = -L_(n-1)^(a+1)``; Hermite ``H_n' = 2n H_(n-1)``,
  ``He_n' = n He_(n-1)``;
- ``lpmv``: ``(x^2 - 1) P_v^m' = v x P_v^m - (v + m) P_(v-1)^m`` (DLMF 14.10.5).

The degree ``n`` (``v`` and the order ``m`` of ``lpmv``) and the parameters (``alpha``,
``beta``, ``p``, ``q``) have no closed-form derivative: they are held fixed, and
differentiating with respect to one raises an error naming the function.

Conventions at special points (the same in both engines)
--------------------------------------------------------
=====================  =====================================================================
function               convention
=====================  =====================================================================
degree n == 0          derivative 0 (the polynomial of degree -1 is not evaluated)
lpmv                   at x == +-1 the rule is 0/0: the derivative is nan there (no value
                       is chosen; the limits differ with m)
=====================  =====================================================================
"""


from ..core.zeros import dtype_of
from . import elementwise as ew
from .families import no_derivative
from .special_gamma import binom_p
from .special_helpers import sc, special_function

__all__ = [
    "eval_jacobi", "eval_sh_jacobi", "eval_gegenbauer", "eval_chebyt", "eval_chebyu",
    "eval_chebyc", "eval_chebys", "eval_sh_chebyt", "eval_sh_chebyu", "eval_legendre",
    "eval_sh_legendre", "eval_genlaguerre", "eval_laguerre", "eval_hermite",
    "eval_hermitenorm", "lpmv",
]


def _fixed(name, what):
    return no_derivative(f"scipy.special.{name} has no closed-form derivative in {what}")


def _lowered(n, x, slope):
    """``slope(n_real, n - 1)`` where ``n != 0``, else 0: ``n_real`` is the degree in the
    dtype of ``x`` (an integer degree must not make a float32 slope float64), ``n - 1``
    keeps the degree's own dtype (SciPy's integer loops are its recurrences)."""
    zero = ew.equal_p(n, 0)
    lower = ew.where_p(zero, 1, n) - 1
    return ew.where_p(zero, 0.0, slope(ew.astype(n, dtype_of(x)), lower))


def _polynomial(name, fn, params, x_partial, doc, integer_degree=False):
    """An ``eval_*`` primitive ``fn(n, *params, x)``, differentiable in ``x`` by
    ``x_partial`` (a partial reading ``n``, the parameters and ``x``)."""
    partials = {"n": _fixed(name, "the degree n")}
    for p in params:
        partials[p] = _fixed(name, f"the parameter {p}")
    partials["x"] = x_partial
    held = ", ".join(f"``{a}``" for a in ("n", *params))
    return special_function(
        name, fn, partials, f"{doc} Differentiable in ``x``; {held} held fixed.",
        orders=(0,), integers=(0,) if integer_degree else ())


eval_jacobi_p, eval_jacobi = _polynomial(
    "eval_jacobi", sc.eval_jacobi, ("alpha", "beta"),
    lambda n, alpha, beta, x: _lowered(
        n, x, lambda nf, lower: 0.5 * (nf + alpha + beta + 1)
        * eval_jacobi_p(lower, alpha + 1, beta + 1, x)),
    "The Jacobi polynomial P_n^(alpha, beta)(x).")
# G_n^(p,q)(x) = P_n^(p-q, q-1)(2x - 1) / binom(2n + p - 1, n)
eval_sh_jacobi_p, eval_sh_jacobi = _polynomial(
    "eval_sh_jacobi", sc.eval_sh_jacobi, ("p", "q"),
    lambda n, p, q, x: _lowered(
        n, x, lambda nf, lower: (nf + p) / binom_p(2 * nf + p - 1, nf)
        * eval_jacobi_p(lower, p - q + 1, q, 2 * x - 1)),
    "The shifted Jacobi polynomial G_n^(p, q)(x).")
eval_gegenbauer_p, eval_gegenbauer = _polynomial(
    "eval_gegenbauer", sc.eval_gegenbauer, ("alpha",),
    lambda n, alpha, x: _lowered(
        n, x, lambda nf, lower: 2 * alpha * eval_gegenbauer_p(lower, alpha + 1, x)),
    "The Gegenbauer polynomial C_n^(alpha)(x) (alpha != 0).")
eval_chebyt_p, eval_chebyt = _polynomial(
    "eval_chebyt", sc.eval_chebyt, (),
    lambda n, x: _lowered(
        n, x, lambda nf, lower: nf * eval_chebyu_p(lower, x)),
    "The Chebyshev polynomial of the first kind T_n(x).")
eval_chebyu_p, eval_chebyu = _polynomial(
    "eval_chebyu", sc.eval_chebyu, (),
    lambda n, x: _lowered(
        n, x, lambda nf, lower: 2 * eval_gegenbauer_p(lower, 2.0, x)),
    "The Chebyshev polynomial of the second kind U_n(x).")
eval_chebyc_p, eval_chebyc = _polynomial(
    "eval_chebyc", sc.eval_chebyc, (),
    lambda n, x: _lowered(
        n, x, lambda nf, lower: nf * eval_chebyu_p(lower, 0.5 * x)),
    "The Chebyshev polynomial ``C_n(x) = 2 T_n(x/2)``.")
eval_chebys_p, eval_chebys = _polynomial(
    "eval_chebys", sc.eval_chebys, (),
    lambda n, x: _lowered(
        n, x, lambda nf, lower: eval_gegenbauer_p(lower, 2.0, 0.5 * x)),
    "The Chebyshev polynomial ``S_n(x) = U_n(x/2)``.")
eval_sh_chebyt_p, eval_sh_chebyt = _polynomial(
    "eval_sh_chebyt", sc.eval_sh_chebyt, (),
    lambda n, x: _lowered(
        n, x, lambda nf, lower: 2 * nf * eval_chebyu_p(lower, 2 * x - 1)),
    "The shifted Chebyshev polynomial ``T_n(2x - 1)``.")
eval_sh_chebyu_p, eval_sh_chebyu = _polynomial(
    "eval_sh_chebyu", sc.eval_sh_chebyu, (),
    lambda n, x: _lowered(
        n, x, lambda nf, lower: 4 * eval_gegenbauer_p(lower, 2.0, 2 * x - 1)),
    "The shifted Chebyshev polynomial ``U_n(2x - 1)``.")
eval_legendre_p, eval_legendre = _polynomial(
    "eval_legendre", sc.eval_legendre, (),
    lambda n, x: _lowered(
        n, x, lambda nf, lower: eval_gegenbauer_p(lower, 1.5, x)),
    "The Legendre polynomial P_n(x).")
eval_sh_legendre_p, eval_sh_legendre = _polynomial(
    "eval_sh_legendre", sc.eval_sh_legendre, (),
    lambda n, x: _lowered(
        n, x, lambda nf, lower: 2 * eval_gegenbauer_p(lower, 1.5, 2 * x - 1)),
    "The shifted Legendre polynomial ``P_n(2x - 1)``.")
eval_genlaguerre_p, eval_genlaguerre = _polynomial(
    "eval_genlaguerre", sc.eval_genlaguerre, ("alpha",),
    lambda n, alpha, x: _lowered(
        n, x, lambda nf, lower: -eval_genlaguerre_p(lower, alpha + 1, x)),
    "The generalized Laguerre polynomial L_n^(alpha)(x).")
eval_laguerre_p, eval_laguerre = _polynomial(
    "eval_laguerre", sc.eval_laguerre, (),
    lambda n, x: _lowered(
        n, x, lambda nf, lower: -eval_genlaguerre_p(lower, 1.0, x)),
    "The Laguerre polynomial L_n(x).")
eval_hermite_p, eval_hermite = _polynomial(
    "eval_hermite", sc.eval_hermite, (),
    lambda n, x: _lowered(
        n, x, lambda nf, lower: 2 * nf * eval_hermite_p(lower, x)),
    "The physicists' Hermite polynomial H_n(x) (integer n).", integer_degree=True)
eval_hermitenorm_p, eval_hermitenorm = _polynomial(
    "eval_hermitenorm", sc.eval_hermitenorm, (),
    lambda n, x: _lowered(
        n, x, lambda nf, lower: nf * eval_hermitenorm_p(lower, x)),
    "The probabilists' Hermite polynomial He_n(x) (integer n).", integer_degree=True)


def _lpmv_x(m, v, x, out):
    v = ew.astype(v, dtype_of(x))
    # the term (v + m) P_(v-1)^m is 0 where v + m == 0 (SciPy's P_(v-1)^m may be nan there)
    factor = v + m
    lower = ew.where_p(ew.equal_p(factor, 0), 0.0, lpmv_p(m, v - 1, x))
    return (v * x * out - factor * lower) / (ew.square_p(x) - 1)


lpmv_p, lpmv = special_function(
    "lpmv", sc.lpmv,
    {"m": _fixed("lpmv", "the order m"), "v": _fixed("lpmv", "the degree v"), "x": _lpmv_x},
    "The associated Legendre function P_v^m(x) (with the Condon-Shortley phase). "
    "Differentiable in ``x``; ``m`` and ``v`` held fixed.", orders=(0, 1))
