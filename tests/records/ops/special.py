"""Records of diffkit.scipy.special for the generic checker (tests/test_primitives.py).

Domains keep away from poles, branch points and kinks: positive arguments for the gamma
family and the Bessel functions of the second kind, (0, 1) for probabilities, interleaved
grids for ``huber`` (|r| never meets delta). Integer orders (``n`` of ``polygamma``,
``expn``; Bessel orders; the shape parameters of ``betainc``) are integer arguments: they
are held fixed by the derivative checks and batched by the vmap checks.
"""

import dataclasses

import numpy as np

import diffkit.numpy as dnp
import diffkit.scipy.special as sp

from ..domains import NONZERO, POSITIVE, REAL, REAL32, Domain
from ..op_record import binary, one, records, unary

UNARY = [((),), ((3,),), ((2, 3),)]
BINARY = [((3,), (3,)), ((2, 1), (3,)), ((), (2, 3))]
TERNARY = [((3,), (3,), (3,)), ((2, 1), (), (3,))]

WIDE = Domain("wide", -4.0, 4.0)
SMALL = Domain("(-1, 1)", -1.0, 1.0)
INSIDE = Domain("(-0.9, 0.9)", -0.9, 0.9)
UNIT = Domain("(0, 1)", 0.05, 0.95)
ERFC = Domain("(0, 2)", 0.1, 1.9)
SHAPE = Domain("shape", 0.5, 4.0)
LARGE = Domain("(1.5, 4)", 1.5, 4.0)
NEGATIVE_NONINTEGER = Domain("negative non-integer", -2.8, -0.2, avoid=(-2.0, -1.0),
                             margin=0.2)
LOG1P = Domain("above -1", -0.6, 2.0)
TAIL = Domain("lower tail", -40.0, 3.0)
LOG_PROBABILITY = Domain("log probability", -4.0, -0.1)
NONZERO_M = Domain("m away from 0", -1.0, 0.9, avoid=(0.0,), margin=0.05)
P_BELOW_1 = Domain("p in (0, 1.5), not 1", 0.1, 1.5, avoid=(1.0,), margin=0.05)
LAMBERT = Domain("above -1/e", -0.3, 3.0)
ZERO_TO_2 = Domain("(0, 2)", 0.1, 2.0)
# huber: delta on a positive grid, r on a grid offset by 1/8, so |r| stays 1/8 from delta
DELTA = Domain("delta grid", 0.25, 2.0, grid=0.25)
R_OFFSET = Domain("r grid + 1/8", grid=0.25, offset=0.125)
ORDER = Domain("order 0..3", 0, 3, kind="int")
ORDER_1 = Domain("order 1..3", 1, 3, kind="int")
ZETA_S = Domain("zeta exponent 2..4", 2, 4, kind="int")

R = []

# --- error function and the normal distribution ------------------------------------------
R += unary("erf", sp.erf, shapes=UNARY)
R += unary("erfc", sp.erfc, shapes=UNARY)
R += unary("erfinv", sp.erfinv, INSIDE, shapes=UNARY)
R += unary("erfcinv", sp.erfcinv, ERFC, shapes=UNARY)
R += unary("erfcx", sp.erfcx, WIDE, shapes=UNARY)
R += unary("erfi", sp.erfi, SMALL, shapes=UNARY)
R += unary("dawsn", sp.dawsn, WIDE, shapes=UNARY)
R += unary("ndtr", sp.ndtr, WIDE, shapes=UNARY)
R += unary("ndtri", sp.ndtri, UNIT, shapes=UNARY)
R += unary("log_ndtr", sp.log_ndtr, TAIL, shapes=UNARY)
R += unary("ndtri_exp", sp.ndtri_exp, LOG_PROBABILITY, shapes=UNARY)
R += binary("owens_t", sp.owens_t, (REAL, REAL), shapes=BINARY)
R += unary("fresnel", sp.fresnel, REAL, shapes=UNARY[1:])
R += unary("fresnel_first", lambda z: sp.fresnel(z)[0], REAL, shapes=[((3,),)])
R += unary("sici", sp.sici, POSITIVE, shapes=UNARY[1:])
R += unary("sici_second", lambda x: sp.sici(x)[1], POSITIVE, shapes=[((3,),)])
R += unary("shichi", sp.shichi, POSITIVE, shapes=UNARY[1:])

# --- gamma and beta functions -------------------------------------------------------------
R += unary("gamma", sp.gamma, SHAPE, shapes=UNARY)
R += unary("gamma_negative", sp.gamma, NEGATIVE_NONINTEGER, shapes=UNARY[1:2])
R += unary("gammaln", sp.gammaln, SHAPE, shapes=UNARY)
R += unary("gammaln_negative", sp.gammaln, NEGATIVE_NONINTEGER, shapes=UNARY[1:2])
R += unary("loggamma", sp.loggamma, SHAPE, shapes=UNARY[1:])
R += unary("rgamma", sp.rgamma, SHAPE, shapes=UNARY[1:])
R += unary("rgamma_negative", sp.rgamma, NEGATIVE_NONINTEGER, shapes=UNARY[1:2])
R += unary("digamma", sp.digamma, SHAPE, shapes=UNARY)
R += unary("psi", sp.psi, SHAPE, shapes=UNARY[1:2])
R += binary("polygamma", sp.polygamma, (ORDER, SHAPE), shapes=BINARY)
R += unary("polygamma_fixed_order", lambda x: sp.polygamma(2, x), SHAPE, shapes=UNARY[1:2])
R += unary("multigammaln", lambda a: sp.multigammaln(a, 3), LARGE, shapes=UNARY[1:])
R += binary("beta", sp.beta, (SHAPE, SHAPE), shapes=BINARY)
R += binary("betaln", sp.betaln, (SHAPE, SHAPE), shapes=BINARY)
R += binary("poch", sp.poch, (SHAPE, ZERO_TO_2), shapes=BINARY)
R += binary("binom", sp.binom, (Domain("(3, 6)", 3.0, 6.0), Domain("(0.5, 2.5)", 0.5, 2.5)),
            shapes=BINARY)
R += binary("gammainc", sp.gammainc, (SHAPE, Domain("(0.2, 6)", 0.2, 6.0)), shapes=BINARY)
R += binary("gammaincc", sp.gammaincc, (SHAPE, Domain("(0.2, 6)", 0.2, 6.0)),
            shapes=BINARY[:2])
R += unary("gammainc_in_x", lambda x: sp.gammainc(2.5, x), POSITIVE, shapes=UNARY[1:2])
R += binary("gammaincinv", sp.gammaincinv, (SHAPE, UNIT), shapes=BINARY[:2])
R += binary("gammainccinv", sp.gammainccinv, (SHAPE, UNIT), shapes=BINARY[:2])
R += records("betainc", sp.betainc, TERNARY, (SHAPE, SHAPE, UNIT))
R += records("betaincc", sp.betaincc, TERNARY[:1], (SHAPE, SHAPE, UNIT))
R += unary("betainc_in_x", lambda x: sp.betainc(1.5, 2.5, x), UNIT, shapes=UNARY[1:2])
R += records("betainc_integer_shapes", sp.betainc, TERNARY[1:], (ORDER_1, ORDER_1, UNIT))
R += records("betaincinv", sp.betaincinv, TERNARY, (SHAPE, SHAPE, UNIT))
R += records("betainccinv", sp.betainccinv, TERNARY[:1], (SHAPE, SHAPE, UNIT))
R += binary("zeta", sp.zeta, (ZETA_S, SHAPE), shapes=BINARY)
R += binary("zeta_riemann", lambda s, y: sp.zeta(s) * y, (ZETA_S, REAL), shapes=BINARY[:2])

# --- logistic, softmax, information theory ------------------------------------------------
R += unary("expit", sp.expit, WIDE, shapes=UNARY)
R += unary("logit", sp.logit, UNIT, shapes=UNARY)
R += unary("log_expit", sp.log_expit, WIDE, shapes=UNARY)
R += unary("logsumexp", sp.logsumexp, shapes=UNARY)
R += one("logsumexp_axis", lambda a: sp.logsumexp(a, axis=-1, keepdims=True), (2, 3))
R += records("logsumexp_b", lambda a, b: sp.logsumexp(a, axis=0, b=b),
             [((3,), (3,)), ((2, 3), (3,)), ((3, 1), (3, 4))], (REAL, POSITIVE))
# b of mixed signs, the sum kept away from 0: row 0 positive, row 1 negative
_SIGNS = np.array([[1.0, -0.05, 2.0], [-1.0, 0.05, -2.0]])
R += records("logsumexp_b_sign",
             lambda a, b: sp.logsumexp(a, axis=1, b=b * _SIGNS, return_sign=True),
             [((2, 3), (2, 3)), ((3,), (2, 1))], (SMALL, Domain("(1, 2)", 1.0, 2.0)))
R += one("logsumexp_sign_no_b",
         lambda a: sp.logsumexp(a, axis=(0, 2), return_sign=True), (2, 3, 4))
R += unary("softmax", sp.softmax, shapes=UNARY[1:])
R += one("softmax_axis", lambda x: sp.softmax(x, axis=0), (3, 4))
R += unary("log_softmax", sp.log_softmax, shapes=UNARY[1:])
R += one("log_softmax_axis", lambda x: sp.log_softmax(x, axis=-1), (2, 3, 4))
R += binary("xlogy", sp.xlogy, (REAL, POSITIVE), shapes=BINARY)
R += binary("xlog1py", sp.xlog1py, (REAL, LOG1P), shapes=BINARY)
R += unary("entr", sp.entr, POSITIVE, shapes=UNARY)
R += binary("rel_entr", sp.rel_entr, (POSITIVE, POSITIVE), shapes=BINARY)
R += binary("kl_div", sp.kl_div, (POSITIVE, POSITIVE), shapes=BINARY)
R += binary("huber", sp.huber, (DELTA, R_OFFSET), shapes=BINARY)
R += binary("pseudo_huber", sp.pseudo_huber, (POSITIVE, REAL), shapes=BINARY)

# --- Bessel functions ------------------------------------------------------------------------
for _name in ("j0", "j1", "i0", "i1", "k0", "k0e", "k1", "k1e", "y0", "y1"):
    R += unary(_name, getattr(sp, _name), POSITIVE, shapes=UNARY[1:])
R += unary("j0_negative", sp.j0, Domain("negative", -3.0, -0.2), shapes=UNARY[1:2])
R += unary("i0e", sp.i0e, NONZERO, shapes=UNARY[1:])
R += unary("i1e", sp.i1e, NONZERO, shapes=UNARY[1:])
for _name in ("jv", "yv", "iv", "ive", "kv", "kve"):
    _fn = getattr(sp, _name)
    R += binary(_name, _fn, (ORDER, POSITIVE), shapes=BINARY)
    R += unary(f"{_name}_real_order", lambda x, f=_fn: f(1.5, x), POSITIVE, shapes=UNARY[1:2])
R += binary("ive_negative_x", sp.ive, (ORDER, Domain("negative", -3.0, -0.2)),
            shapes=BINARY[:1])
for _name in ("jn", "yn", "kn"):
    R += binary(_name, getattr(sp, _name), (ORDER, POSITIVE), shapes=BINARY[:1])

# --- Airy and Struve functions, integrals of Bessel and Struve functions -------------------
AIRY = Domain("(-3, 3)", -3.0, 3.0)
R += unary("airy", sp.airy, AIRY, shapes=UNARY[1:])
R += unary("airy_second", lambda z: sp.airy(z)[2], AIRY, shapes=[((3,),)])
R += unary("airye", sp.airye, POSITIVE, shapes=UNARY[1:])
R += unary("airye_negative", lambda z: sp.airye(z)[2:], Domain("negative", -3.0, -0.2),
           shapes=[((3,),)])
# SciPy's itairy is accurate to about 1e-9 relative: small arguments, where it is best
R += unary("itairy", sp.itairy, Domain("(0.05, 1)", 0.05, 1.0), shapes=UNARY[1:2])
R += binary("struve", sp.struve, (ORDER, AIRY), shapes=BINARY)
R += unary("struve_real_order", lambda x: sp.struve(1.5, x), POSITIVE, shapes=UNARY[1:2])
R += binary("modstruve", sp.modstruve, (ORDER, AIRY), shapes=BINARY)
R += unary("modstruve_real_order", lambda x: sp.modstruve(0.5, x), POSITIVE,
           shapes=UNARY[1:2])
R += unary("itstruve0", sp.itstruve0, AIRY, shapes=UNARY)
R += unary("it2struve0", sp.it2struve0, POSITIVE, shapes=UNARY)
R += unary("itmodstruve0", sp.itmodstruve0, AIRY, shapes=UNARY)
for _name in ("iti0k0", "itj0y0", "it2i0k0", "it2j0y0"):
    R += unary(_name, getattr(sp, _name), POSITIVE, shapes=UNARY[1:])
R += unary("it2i0k0_near_0", lambda x: sp.it2i0k0(x)[0], Domain("(-0.1, 0.1)", -0.1, 0.1),
           shapes=UNARY[1:2])

# --- orthogonal polynomials, lpmv -----------------------------------------------------------
for _name, _domain in [("chebyt", SMALL), ("chebyu", SMALL), ("chebyc", WIDE),
                       ("chebys", WIDE), ("sh_chebyt", UNIT), ("sh_chebyu", UNIT),
                       ("legendre", SMALL), ("sh_legendre", UNIT), ("laguerre", WIDE),
                       ("hermite", WIDE), ("hermitenorm", WIDE)]:
    R += binary(f"eval_{_name}", getattr(sp, f"eval_{_name}"), (ORDER, _domain),
                shapes=BINARY[:2])
for _name in ("chebyt", "chebyu", "legendre", "laguerre"):
    _fn = getattr(sp, f"eval_{_name}")
    R += unary(f"eval_{_name}_real_degree", lambda x, f=_fn: f(2.5, x), INSIDE,
               shapes=UNARY[1:2])
R += records("eval_jacobi", sp.eval_jacobi, [((3,), (3,), (3,), (3,)), ((2, 1), (), (), (3,))],
             (ORDER, ORDER_1, ORDER_1, SMALL))
R += records("eval_sh_jacobi", lambda n, x: sp.eval_sh_jacobi(n, 2.3, 1.2, x),
             [((3,), (3,)), ((2, 1), (3,))], (ORDER, UNIT))
R += records("eval_gegenbauer", sp.eval_gegenbauer, TERNARY, (ORDER, ORDER_1, SMALL))
R += unary("eval_gegenbauer_real", lambda x: sp.eval_gegenbauer(2.5, 0.7, x), INSIDE,
           shapes=UNARY[1:2])
R += records("eval_genlaguerre", sp.eval_genlaguerre, TERNARY, (ORDER, ORDER, WIDE))
R += unary("eval_jacobi_real", lambda x: sp.eval_jacobi(3, 0.3, 1.2, x), SMALL,
           shapes=UNARY[1:2])
R += records("lpmv", sp.lpmv, [((3,), (3,), (3,)), ((2, 1), (), (3,))],
             (Domain("order -1..2", -1, 2, kind="int"), ORDER_1, INSIDE))
R += unary("lpmv_real_degree", lambda x: sp.lpmv(1, 2.5, x), INSIDE, shapes=UNARY[1:2])

# --- Kelvin, parabolic cylinder, Mathieu, Jacobi elliptic functions ------------------------
for _name in ("ber", "bei", "berp", "beip"):
    R += unary(_name, getattr(sp, _name), AIRY, shapes=UNARY[1:])
for _name in ("ker", "kei", "kerp", "keip"):
    R += unary(_name, getattr(sp, _name), POSITIVE, shapes=UNARY[1:])
R += binary("pbdv", sp.pbdv, (ORDER, SMALL), shapes=BINARY)
R += unary("pbdv_real_order", lambda x: sp.pbdv(1.5, x), SMALL, shapes=UNARY[1:2])
R += binary("pbvv", sp.pbvv, (ORDER, SMALL), shapes=BINARY[:2])
R += unary("pbwa", lambda x: sp.pbwa(0.7, x), SMALL, shapes=UNARY[1:])
R += binary("pbwa_integer_a", sp.pbwa, (ORDER, SMALL), shapes=BINARY[:1])
R += records("mathieu_cem", sp.mathieu_cem, TERNARY,
             (ORDER, ORDER_1, Domain("degrees", -90.0, 90.0)))
R += unary("mathieu_cem_real_q", lambda x: sp.mathieu_cem(2, 1.5, x),
           Domain("degrees", -90.0, 90.0), shapes=UNARY[1:2])
R += records("mathieu_sem", sp.mathieu_sem, TERNARY[:1],
             (ORDER_1, ORDER_1, Domain("degrees", -90.0, 90.0)))
R += unary("ellipj", lambda u: sp.ellipj(u, 0.4), AIRY, shapes=UNARY[1:])
R += binary("ellipj_both", sp.ellipj, (AIRY, Domain("m grid", 0, 0, kind="int")),
            shapes=BINARY[:2])

# --- more Bessel, hypergeometric and Wright functions; distributions ------------------------
R += binary("jve", sp.jve, (ORDER, POSITIVE), shapes=BINARY[:2])
R += binary("yve", sp.yve, (ORDER, POSITIVE), shapes=BINARY[:2])
for _name in ("jvp", "yvp", "ivp", "kvp"):
    _fn = getattr(sp, _name)
    R += unary(_name, lambda x, f=_fn: f(1.5, x, 2), POSITIVE, shapes=UNARY[1:2])
R += unary("zetac", sp.zetac, LARGE, shapes=UNARY[1:])
R += binary("hyp0f1", sp.hyp0f1, (ORDER_1, WIDE), shapes=BINARY)
R += unary("hyp0f1_real_v", lambda z: sp.hyp0f1(1.5, z), WIDE, shapes=UNARY[1:2])
R += records("hyperu", sp.hyperu, TERNARY, (ORDER_1, ORDER_1, POSITIVE))
R += unary("hyperu_real", lambda x: sp.hyperu(0.5, 1.3, x), POSITIVE, shapes=UNARY[1:2])
R += records("wright_bessel", sp.wright_bessel, TERNARY, (ORDER_1, ORDER_1, POSITIVE))
R += unary("wright_bessel_real", lambda x: sp.wright_bessel(0.5, 1.3, x), POSITIVE,
           shapes=UNARY[1:2])
R += records("log_wright_bessel", sp.log_wright_bessel, TERNARY,
             (ORDER_1, ORDER_1, POSITIVE))
R += records("radian", sp.radian, TERNARY, (REAL, REAL, REAL))
R += binary("powm1", sp.powm1, (POSITIVE, REAL), shapes=BINARY)
R += binary("agm", sp.agm, (POSITIVE, POSITIVE), shapes=BINARY)
R += unary("gammasgn", sp.gammasgn, NEGATIVE_NONINTEGER, shapes=UNARY[1:2])
R += unary("softplus", sp.softplus, WIDE, shapes=UNARY[1:])
R += unary("kolmogorov", sp.kolmogorov, Domain("(0.1, 2.5)", 0.1, 2.5), shapes=UNARY)
R += unary("kolmogi", sp.kolmogi, UNIT, shapes=UNARY)
R += unary("tklmbda", lambda x: sp.tklmbda(x, 0.14), WIDE, shapes=UNARY[1:])
R += binary("tklmbda_integer_lmbda", sp.tklmbda, (SMALL, Domain("lmbda -1..0", -1, 0,
                                                                 kind="int")),
            shapes=BINARY[:2])
R += unary("stdtr", lambda t: sp.stdtr(3.5, t), WIDE, shapes=UNARY[1:])
R += binary("stdtr_integer_df", sp.stdtr, (ORDER_1, WIDE), shapes=BINARY[:2])
for _name in ("chdtr", "chdtrc"):
    R += binary(_name, getattr(sp, _name), (SHAPE, POSITIVE), shapes=BINARY[:2])
for _name in ("gdtr", "gdtrc", "fdtr", "fdtrc"):
    R += records(_name, getattr(sp, _name), TERNARY, (SHAPE, SHAPE, POSITIVE))
for _name in ("pdtr", "pdtrc"):
    _fn = getattr(sp, _name)
    R += unary(_name, lambda m, f=_fn: f(3, m), POSITIVE, shapes=UNARY[1:2])
for _name in ("bdtr", "bdtrc", "nbdtr", "nbdtrc", "bdtri", "nbdtri"):
    _fn = getattr(sp, _name)
    R += unary(_name, lambda p, f=_fn: f(2, 6, p), UNIT, shapes=UNARY[1:2])
R += binary("chdtri", sp.chdtri, (SHAPE, UNIT), shapes=BINARY[:2])
R += unary("pdtri", lambda y: sp.pdtri(3, y), UNIT, shapes=UNARY[1:2])
# probabilities away from the ends, where the inverses' curvature defeats finite differences
P_MID = Domain("(0.15, 0.85)", 0.15, 0.85)
R += records("gdtrix", sp.gdtrix, TERNARY, (LARGE, LARGE, P_MID))
R += records("fdtri", sp.fdtri, TERNARY, (SHAPE, LARGE, P_MID))
R += unary("stdtrit", lambda p: sp.stdtrit(3.5, p), P_MID, shapes=UNARY[1:])
R += binary("stdtrit_integer_df", sp.stdtrit, (ORDER_1, P_MID), shapes=BINARY[:2])

# --- exponential integrals and others --------------------------------------------------------
R += binary("expn", sp.expn, (ORDER, POSITIVE), shapes=BINARY)
R += unary("exp1", sp.exp1, POSITIVE, shapes=UNARY)
R += unary("expi", sp.expi, NONZERO, shapes=UNARY)
R += unary("exprel", sp.exprel, WIDE, shapes=UNARY)
R += unary("exprel_near_0", sp.exprel, Domain("(-0.01, 0.01)", -0.01, 0.01), shapes=UNARY[1:2])
R += unary("spence", sp.spence, Domain("(0.2, 3)", 0.2, 3.0), shapes=UNARY)
R += unary("spence_near_1", sp.spence, Domain("near 1", 0.995, 1.005), shapes=UNARY[1:2])
R += unary("cosm1", sp.cosm1, shapes=UNARY[1:])
R += unary("exp10", sp.exp10, SMALL, shapes=UNARY[1:])
R += unary("ellipk", sp.ellipk, NONZERO_M, shapes=UNARY)
R += unary("ellipe", sp.ellipe, NONZERO_M, shapes=UNARY)
R += unary("ellipkm1", sp.ellipkm1, P_BELOW_1, shapes=UNARY)
PHI = Domain("(-3, 3)", -3.0, 3.0)
NEAR_0 = Domain("(-0.09, 0.09)", -0.09, 0.09)
for _name in ("ellipkinc", "ellipeinc"):
    R += binary(_name, getattr(sp, _name), (PHI, NONZERO_M), shapes=BINARY)
    R += binary(f"{_name}_small_m", getattr(sp, _name), (PHI, NEAR_0), shapes=BINARY[:1])
# lambertw is complex128 as SciPy's: its real branches' real parts, and a complex branch
R += unary("lambertw", lambda x: dnp.real(sp.lambertw(x)), LAMBERT, shapes=UNARY)
R += unary("lambertw_lower_branch", lambda x: dnp.real(sp.lambertw(x, k=-1)),
           Domain("(-0.3, -0.05)", -0.3, -0.05), shapes=UNARY)
R += unary("lambertw_branch_1", lambda x: dnp.imag(sp.lambertw(x, k=1)) ** 2,
           Domain("(0.2, 3)", 0.2, 3.0), shapes=UNARY)
R += unary("wrightomega", sp.wrightomega, WIDE, shapes=UNARY)
R += binary("boxcox", sp.boxcox, (POSITIVE, REAL), shapes=BINARY)
R += binary("boxcox_small_lmbda", sp.boxcox,
            (POSITIVE, Domain("(-0.002, 0.002)", -0.002, 0.002)), shapes=BINARY[:1])
R += binary("boxcox1p", sp.boxcox1p, (LOG1P, REAL), shapes=BINARY)
R += binary("inv_boxcox", sp.inv_boxcox, (SMALL, INSIDE), shapes=BINARY)
R += binary("inv_boxcox_small_lmbda", sp.inv_boxcox,
            (SMALL, Domain("(-0.005, 0.005)", -0.005, 0.005)), shapes=BINARY[:1])
R += binary("inv_boxcox1p", sp.inv_boxcox1p, (SMALL, INSIDE), shapes=BINARY)
R += records("hyp1f1", sp.hyp1f1, TERNARY, (ORDER_1, ORDER_1, SMALL))
R += unary("hyp1f1_in_x", lambda x: sp.hyp1f1(0.5, 1.5, x), SMALL, shapes=UNARY[1:2])
R += records("hyp2f1", sp.hyp2f1, [((3,), (3,), (3,), (3,)), ((2, 1), (), (3,), (3,))],
             (ORDER_1, ORDER_1, ORDER_1, Domain("(-0.5, 0.5)", -0.5, 0.5)))
# Gauss's theorem at z = 1 (c - a - b > 0 on these domains)
R += records("hyp2f1_at_1", lambda a, b, c: sp.hyp2f1(a, b, c, 1.0), [((2,), (2,), (2,))],
             (Domain("(0.1, 0.5)", 0.1, 0.5), Domain("(0.1, 0.5)", 0.1, 0.5),
              Domain("(1.5, 2.5)", 1.5, 2.5)))

# --- float32 stays float32 ----------------------------------------------------------------
R += unary("erf_float32", sp.erf, REAL32, shapes=UNARY[1:2])
R += unary("gammaln_float32", sp.gammaln, Domain("positive float32", 0.5, 3.0,
                                                 dtype=np.float32), shapes=UNARY[1:2])
R += binary("jv_float32", sp.jv, (ORDER, Domain("positive float32", 0.5, 3.0,
                                                    dtype=np.float32)), shapes=BINARY[:1])

# Every name gets the family's prefix (``-k special_`` selects them; no clash with NumPy's).
RECORDS = [dataclasses.replace(r, name=f"special_{r.name}") for r in R]
