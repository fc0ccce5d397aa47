"""Edge samples of diffkit.scipy.special (tests/records/ops/special.py): zeros, poles, branch
points, the ends of (0, 1) for probabilities, x = 0 for the incomplete gamma and beta
functions, overflow, and the entire functions whose formulas meet 0 * inf (rgamma at the
poles of gamma, i0's Hessian at 0)."""

import numpy as np
import scipy.special

from ..edge_sample import boundary, edge, kink

INF, NAN = np.inf, np.nan
E = []


def ints(*values):
    return np.array(values)


def sp(name, *args, **flags):
    return edge(f"special_{name}", *args, **flags)


def sp_kink(name, *args, **flags):
    return kink(f"special_{name}", *args, **flags)


def sp_boundary(name, *args, **flags):
    return boundary(f"special_{name}", *args, **flags)


# --- error function and the normal distribution --------------------------------------------
E += sp("erf", [0.0, -0.0, 6.0, -30.0])
E += sp_kink("erf", [INF, -INF], label="inf", jacobian=0.0)
E += sp("erfc", [0.0, 30.0, -30.0])
E += sp("erfinv", [0.0, -0.0, 0.99])
E += sp_kink("erfinv", [1.0, -1.0], label="ends", jacobian=np.diag([INF, INF]))
E += sp("erfcinv", [1.0, 1e-2])
E += sp_kink("erfcinv", [0.0, 2.0], label="ends", jacobian=np.diag([-INF, -INF]))
E += sp("erfcx", [0.0, -0.0, 5.0])
E += sp_kink("erfcx", [-30.0], label="overflow", jacobian=-INF)
E += sp("erfi", [0.0, -0.0])
E += sp("dawsn", [0.0, -0.0, 30.0])
E += sp("ndtr", [0.0, -40.0, 40.0])
E += sp("ndtri", [0.5, 1e-2])
E += sp_kink("ndtri", [0.0, 1.0], label="ends", jacobian=np.diag([INF, INF]))
E += sp("log_ndtr", [0.0, -40.0, 40.0])
E += sp_kink("ndtri_exp", [0.0, -INF], label="ends", jacobian=np.diag([INF, 0.0]))
E += sp("owens_t", [0.0, 0.0], [0.0, 1.0])
E += sp("fresnel", [0.0, -0.0, 1.0])
E += sp_kink("sici", [0.0], jacobian=[[1.0], [INF]])
E += sp_kink("shichi", [0.0], jacobian=[[1.0], [INF]])

# --- gamma and beta -----------------------------------------------------------------------
E += sp("gamma", [1.0, 2.0, 0.5])
E += sp("gamma", [0.0, -0.0, -1.0], label="poles", differentiable=False)
E += sp("gammaln", [1.0, 2.0])
E += sp("gammaln", [0.0, -1.0], label="poles", differentiable=False)
E += sp("loggamma", [1.0, 2.0])
# 1 / gamma is entire: at the poles of gamma it is 0 with derivative (-1)**n n!.
E += sp("rgamma", [0.0, -1.0, -2.0], label="poles", jacobian=np.diag([1.0, -1.0, 2.0]))
E += sp("digamma", [1.0, 2.0])
E += sp("digamma", [0.0, -1.0], label="poles", differentiable=False)
E += sp("polygamma", ints(0, 1, 2), [1.0, 1.0, 1.0])
E += sp("polygamma", ints(1, 1), [0.0, -1.0], label="poles", differentiable=False)
E += sp("beta", [1.0, 0.5], [1.0, 0.5])
E += sp("betaln", [1.0, 0.5], [1.0, 0.5])
E += sp("poch", [1.0, 2.0], [0.0, 0.0], label="m=0")
E += sp("binom", [4.0, 4.0], [0.0, 4.0], label="k=0,k=n")
E += sp("binom", [1.5, 2.0, -0.5], [3.5, 4.0, 0.5], label="n-k+1=-1,-1,0")
# At x = 0 the mixed derivative d2P/da dx = density (log x - digamma(a)) is -inf for a <= 1 (a
# log singularity finite differences cannot see): the Hessian of the sum is documented.
_GAMMAINC_AT_0 = [[0, 0, -INF, 0], [0, 0, 0, 0], [-INF, 0, -1.0, 0], [0, 0, 0, 1.0]]
E += sp_boundary("gammainc", [1.0, 2.0], [0.0, 0.0], side=1, label="x=0", second_order=False,
                 hessian=_GAMMAINC_AT_0)
E += sp_kink("gammainc", [0.5], [0.0], label="x=0,a<1", jacobian=[[0.0, INF]])
E += sp_boundary("gammaincc", [1.0, 2.0], [0.0, 0.0], side=1, label="x=0", second_order=False,
                 hessian=-np.array(_GAMMAINC_AT_0))
E += sp("gammainc", [2.0], [1e3], label="x_large")
# The inverses at the end where out = 0: d out/da = 0 (out stays 0), d2 out/da2 = 0, and
# d2 out/da dp = +inf, a log singularity (out ~ (a Gamma(a) p)^(1/a), d/da ~ -out log(out) / a).
E += sp_boundary("gammaincinv", [1.0], [0.0], side=1, label="p=0", second_order=False,
                 hessian=[[0.0, INF], [INF, 1.0]])
E += sp_boundary("gammainccinv", [1.0], [1.0], side=-1, label="q=1", second_order=False,
                 hessian=[[0.0, -INF], [-INF, 1.0]])
# At x = 0 d2I/da dx = density (log x - digamma(a) + digamma(a + b)) is -inf for a <= 1 (at
# x = 1, d2I/db dx for b <= 1): log singularities, so the Hessians of the sums are documented
# (coordinates a0, a1, b0, b1, x0, x1; density 1 at a = b = 1, 6 x (1 - x) at a = b = 2).
_BETAINC_AT_0 = [[0, 0, 0, 0, -INF, 0], [0] * 6, [0, 0, 0, 0, 1.0, 0], [0] * 6,
                 [-INF, 0, 1.0, 0, 0, 0], [0, 0, 0, 0, 0, 6.0]]
_BETAINC_AT_1 = [[0, 0, 0, 0, 1.0, 0], [0] * 6, [0, 0, 0, 0, -INF, 0], [0] * 6,
                 [1.0, 0, -INF, 0, 0, 0], [0, 0, 0, 0, 0, -6.0]]
E += sp_boundary("betainc", [1.0, 2.0], [1.0, 2.0], [0.0, 0.0], side=1, label="x=0",
                 second_order=False, hessian=_BETAINC_AT_0)
E += sp_boundary("betainc", [1.0, 2.0], [1.0, 2.0], [1.0, 1.0], side=-1, label="x=1",
                 second_order=False, hessian=_BETAINC_AT_1)
E += sp_boundary("betaincc", [1.0, 2.0], [1.0, 2.0], [0.0, 0.0], side=1, label="x=0",
                 second_order=False, hessian=-np.array(_BETAINC_AT_0))
# (coordinates a0, a1, b0, b1, y0, y1; at a = b = 1 out = y, at a = b = 2 out ~ sqrt(y / 3)
# with an infinite slope, so the Jacobian is documented rather than finite differences)
_BETAINCINV_AT_0 = [[0, 0, 0, 0, INF, 0], [0, 0, 0, 0, 0, INF], [0, 0, 0, 0, -1.0, 0],
                    [0, 0, 0, 0, 0, -INF], [INF, 0, -1.0, 0, 0, 0], [0, INF, 0, -INF, 0, -INF]]
_BETAINCCINV_AT_1 = [[0, 0, 0, 0, -INF, 0], [0, 0, 0, 0, 0, -INF], [0, 0, 0, 0, 1.0, 0],
                     [0, 0, 0, 0, 0, INF], [-INF, 0, 1.0, 0, 0, 0], [0, -INF, 0, INF, 0, -INF]]
E += sp_kink("betaincinv", [1.0, 2.0], [1.0, 2.0], [0.0, 0.0], label="y=0",
             jacobian=[[0, 0, 0, 0, 1.0, 0], [0, 0, 0, 0, 0, INF]], hessian=_BETAINCINV_AT_0)
E += sp_kink("betainccinv", [1.0, 2.0], [1.0, 2.0], [1.0, 1.0], label="y=1",
             jacobian=[[0, 0, 0, 0, -1.0, 0], [0, 0, 0, 0, 0, -INF]],
             hessian=_BETAINCCINV_AT_1)
E += sp("zeta", ints(2, 3), [1.0, 1e3])
E += sp_kink("zeta", ints(2), [0.0], label="pole", jacobian=-INF)

# --- logistic, softmax, information theory --------------------------------------------------
E += sp("expit", [0.0, -1000.0, 1000.0])
E += sp("logit", [0.5, 1e-300], differentiable=False, jacobian=np.diag([4.0, 1e300]))
E += sp_kink("logit", [0.0, 1.0], label="ends", jacobian=np.diag([INF, INF]))
E += sp("log_expit", [0.0, -1000.0, 1000.0])
E += sp_kink("logsumexp", [-INF, -INF], jacobian=0.5)
E += sp("softmax", [0.0, -INF, 1.0], differentiable=False,
        jacobian=[[0.19661193, 0.0, -0.19661193], [0, 0, 0], [-0.19661193, 0.0, 0.19661193]],
        jacobian_rtol=1e-7) if False else []
E += sp_kink("softmax", [0.0, -INF], jacobian=[[0.0, 0.0], [0.0, 0.0]])
E += sp_kink("log_softmax", [0.0, -INF], jacobian=[[0.0, 0.0], [-1.0, 1.0]])
E += sp_kink("xlogy", [0.0, 0.0, 2.0], [0.0, 3.0, 0.0], label="zeros", jacobian=np.hstack(
    [np.diag([-INF, np.log(3.0), -INF]), np.diag([0.0, 0.0, INF])]))
E += sp_kink("xlog1py", [0.0, 1.0], [-1.0, -1.0], label="y=-1", jacobian=np.hstack(
    [np.diag([-INF, -INF]), np.diag([0.0, INF])]))
E += sp_kink("entr", [0.0], jacobian=INF)
E += sp("entr", [-1.0], label="outside", differentiable=False)
E += sp_kink("rel_entr", [0.0], [2.0], label="x=0", jacobian=[[-INF, 0.0]])
E += sp_kink("kl_div", [0.0], [2.0], label="x=0", jacobian=[[-INF, 1.0]])
E += sp("huber", [1.0, 2.0], [1.0, -2.0], label="|r|=delta", second_order=False)
E += sp("huber", [1.0], [0.0], label="r=0")
E += sp("pseudo_huber", [1.0], [0.0], label="r=0")

# --- Bessel functions at 0 ---------------------------------------------------------------------
for _name in ("j0", "j1", "i0", "i1"):
    E += sp(_name, [0.0, -0.0])
E += sp("i0", [0.0], label="hessian", hessian=0.5)
E += sp_kink("i0e", [0.0, -0.0], jacobian=0.0)
E += sp("i1e", [0.0], second_order=False)
E += sp_kink("k0", [0.0], jacobian=-INF)
E += sp_kink("k1", [0.0], jacobian=-INF)
E += sp_kink("k0e", [0.0], jacobian=-INF)
E += sp_kink("k1e", [0.0], jacobian=-INF)
E += sp_kink("y0", [0.0], jacobian=INF)
E += sp_kink("y1", [0.0], jacobian=INF)
E += sp("jv", ints(0, 1, 2), [0.0, 0.0, 0.0])
E += sp("iv", ints(0, 1, 2), [0.0, 0.0, 0.0])
E += sp_kink("ive", ints(0), [0.0], jacobian=0.0)
E += sp_kink("kv", ints(0, 1), [0.0, 0.0], jacobian=np.diag([-INF, -INF]))
E += sp_kink("kve", ints(0, 1), [0.0, 0.0], jacobian=np.diag([-INF, -INF]))
E += sp_kink("yv", ints(0, 1), [0.0, 0.0], jacobian=np.diag([INF, INF]))
E += sp("jn", ints(0, 1), [0.0, 0.0])
E += sp_kink("yn", ints(0, 1), [0.0, 0.0], jacobian=np.diag([INF, INF]))
E += sp_kink("kn", ints(0, 1), [0.0, 0.0], jacobian=np.diag([-INF, -INF]))

# --- Airy and Struve functions, integrals of Bessel and Struve functions at 0 --------------
E += sp("airy", [0.0, -0.0, 10.0, -10.0])
E += sp("airye", [0.5, 30.0])
E += sp("itairy", [0.0, -0.0])
E += sp("struve", ints(0, 1, 2), [0.0, 0.0, 0.0])
E += sp("modstruve", ints(0, 1, 2), [0.0, 0.0, 0.0])
E += sp("itstruve0", [0.0, -0.0])
E += sp("it2struve0", [1e-3], label="near 0")
E += sp("itmodstruve0", [0.0, -0.0])
E += sp("iti0k0", [1.0, 3.0])
E += sp("itj0y0", [1.0, 3.0])
E += sp("it2i0k0", [0.05, 3.0])
E += sp("it2j0y0", [0.05, 3.0])
E += sp_kink("iti0k0", [0.0], jacobian=[[1.0], [INF]])
E += sp_kink("itj0y0", [0.0], jacobian=[[1.0], [-INF]])
E += sp_kink("it2i0k0", [0.0], jacobian=[[0.0], [-INF]])
E += sp_kink("it2j0y0", [0.0], jacobian=[[0.0], [INF]])

# --- orthogonal polynomials at the ends of their interval, degree 0 -------------------------
for _name in ("chebyt", "chebyu", "legendre"):
    E += sp(f"eval_{_name}", ints(0, 2, 3), [1.0, -1.0, 0.0])
for _name in ("sh_chebyt", "sh_chebyu", "sh_legendre", "laguerre", "hermite", "hermitenorm",
              "chebyc", "chebys"):
    E += sp(f"eval_{_name}", ints(0, 2, 3), [1.0, 0.0, 0.5])
E += sp("eval_jacobi", ints(0, 2), ints(1, 2), ints(2, 1), [1.0, -1.0])
E += sp("eval_sh_jacobi", ints(0, 2), [1.0, 0.0], ref=lambda n, x: scipy.special.eval_sh_jacobi(
    n, 2.3, 1.2, x))
E += sp("eval_gegenbauer", ints(0, 2), ints(1, 2), [1.0, -1.0])
E += sp("eval_genlaguerre", ints(0, 2), ints(1, 0), [0.0, 0.0])
E += sp("lpmv", ints(0, 1), ints(2, 3), [0.0, 0.0])

# --- Kelvin functions at 0, parabolic cylinder, Mathieu, Jacobi elliptic functions --------
for _name in ("ber", "bei", "berp", "beip"):
    E += sp(_name, [0.0, -0.0, 1.0])
E += sp_kink("ker", [0.0], jacobian=-INF)
E += sp_kink("kerp", [0.0], jacobian=INF)
E += sp_boundary("kei", [0.0], side=1, second_order=False)
E += sp_kink("keip", [0.0], jacobian=INF)
E += sp("kei", [1.0, 5.0], label="positive")
E += sp("keip", [1.0, 5.0], label="positive")
E += sp("pbdv", ints(0, 1), [0.0, 0.0])
E += sp("pbvv", ints(0, 1), [0.0, 0.0])
E += sp("pbwa", [0.0, 1.0], ref=lambda x: scipy.special.pbwa(0.7, x))
E += sp("mathieu_cem", ints(0, 1), ints(1, 1), [0.0, 90.0])
E += sp("mathieu_sem", ints(1, 2), ints(1, 1), [0.0, 90.0])
E += sp("ellipj", [0.0, -0.0], ref=lambda u: scipy.special.ellipj(u, 0.4))
E += sp("ellipj_both", [0.5, 1.0], ints(0, 1), ref=scipy.special.ellipj)

# --- more Bessel, hypergeometric and Wright functions; distributions ------------------------
E += sp("jve", ints(0, 1), [0.0, 0.0])
E += sp("yve", ints(0, 1), [1.0, 2.0])   # SciPy's yve is nan at 0
E += sp("zetac", [2.0, 50.0])
E += sp("hyp0f1", ints(1, 2), [0.0, 0.0])
E += sp("hyperu", ints(1, 2), ints(1, 1), [1.0, 30.0])
E += sp_boundary("wright_bessel", ints(1, 2), ints(1, 1), [0.0, 0.0], side=1)
E += sp_boundary("log_wright_bessel", ints(1, 2), ints(1, 1), [0.0, 0.0], side=1)
E += sp("radian", [0.0, 180.0], [0.0, 30.0], [0.0, 15.0])
E += sp("powm1", [1.0, 2.0], [0.0, 0.0], label="y=0")
E += sp_boundary("powm1", [0.0], [2.0], side=1, label="x=0", second_order=False)
E += sp("agm", [1.0, 2.0], [1.0, 2.0], label="a=b")
E += sp("gammasgn", [0.5, -0.5, -1.5])
E += sp("kolmogorov", [-1.0, 0.0, 0.05, 1.0, 10.0])
E += sp_kink("kolmogorov", [INF], jacobian=0.0)
E += sp("kolmogorov", [0.3, 0.999, 1.001, 2.0], label="series switch")
E += sp_kink("kolmogi", [0.0, 1.0], label="ends", jacobian=np.diag([-INF, -INF]))
E += sp("tklmbda", [0.0, 8.0], label="inside,outside",
        ref=lambda x: scipy.special.tklmbda(x, 0.14))
E += sp("stdtrit_integer_df", ints(1, 3), [0.5, 0.5], ref=scipy.special.stdtrit)
E += sp_kink("stdtrit_integer_df", ints(1, 3), [0.0, 1.0], label="ends",
             jacobian=np.diag([INF, INF]), ref=scipy.special.stdtrit)
E += sp("stdtr_integer_df", ints(1, 3), [0.0, 0.0], ref=scipy.special.stdtr)

# --- exponential integrals and others ------------------------------------------------------------
E += sp_kink("expn", ints(1, 2), [0.0, 0.0], jacobian=np.diag([-INF, -INF]))
E += sp_kink("exp1", [0.0], jacobian=-INF)
E += sp_kink("expi", [0.0], jacobian=INF)
E += sp("exprel", [0.0, -0.0], jacobian=0.5 * np.eye(2))
E += sp("exprel", [1000.0, -1000.0], label="large", differentiable=False)
E += sp("spence", [1.0, 2.0])
E += sp_kink("spence", [0.0], label="x=0", jacobian=-INF)
E += sp("cosm1", [0.0, -0.0])
E += sp_kink("exp10", [400.0], label="overflow", jacobian=INF)
E += sp("ellipk", [0.0, -0.0])
E += sp_kink("ellipk", [1.0], label="m=1", jacobian=INF)
E += sp("ellipe", [0.0, -0.0])
E += sp_kink("ellipe", [1.0], label="m=1", jacobian=-INF)
E += sp_kink("ellipkm1", [0.0], label="p=0", jacobian=-INF)
for _name in ("ellipkinc", "ellipeinc"):
    E += sp(_name, [0.0, 1.0, -7.0], [0.5, 0.0, -0.0], label="phi=0,m=0")
    E += sp_boundary(_name, [0.4, 1.2], [1.0, 1.0], side=-1, label="m=1")
E += sp("lambertw", [0.0, -0.0], ref=lambda x: scipy.special.lambertw(x).real)
E += sp("lambertw_lower_branch", [-0.3, -0.05], ref=lambda x: scipy.special.lambertw(x, -1).real)
E += sp_kink("lambertw", [-np.exp(-1.0)], label="branch_point", jacobian=INF,
             ref=lambda x: scipy.special.lambertw(x).real)
E += sp("wrightomega", [0.0, -0.0])
E += sp("boxcox", [1.0, 2.0], [0.0, 0.0], label="lmbda=0")
E += sp("boxcox1p", [0.0, 1.0], [0.0, 0.0], label="lmbda=0")
E += sp("inv_boxcox", [0.0, 1.0], [0.0, 0.0], label="lmbda=0")
E += sp("inv_boxcox1p", [0.0, 1.0], [0.0, 0.0], label="lmbda=0")
E += sp("hyp1f1", ints(1, 2), ints(1, 3), [0.0, 0.0])
E += sp("hyp2f1", ints(1, 2), ints(1, 1), ints(1, 3), [0.0, 0.0])
EDGES = E
