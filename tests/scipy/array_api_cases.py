"""Run in a subprocess with SCIPY_ARRAY_API=1 by test_array_api_scipy.py: SciPy's own
array-API functions differentiated unchanged. Prints one JSON line per case."""

import json
import sys

import numpy as np
import scipy.cluster.vq as vq
import scipy.fft as sf
import scipy.integrate as si
import scipy.optimize as so
import scipy.signal as ss
import scipy.special as sp
import scipy.stats as st

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.errors import TracerConversionError

X = np.array([1.0, 2.0, 0.5, 1.7])
WEIGHTS = np.array([[0.3, -1.1], [0.7, 2.0]])

CASES = {
    "optimize.rosen": so.rosen,
    "special.softmax": lambda x: sp.softmax(x)[0],
    "special.entr": lambda x: sp.entr(x).sum(),
    "special.erf": lambda x: sp.erf(x).sum(),
    "special.gammaln": lambda x: sp.gammaln(x).sum(),
    "special.expit": lambda x: sp.expit(x).sum(),
    "special.i0e": lambda x: sp.i0e(x).sum(),
    "stats.skew": st.skew,
    "stats.kurtosis": st.kurtosis,
    "stats.moment": lambda x: st.moment(x, 3),
    "stats.gmean": st.gmean,
    "stats.hmean": st.hmean,
    "stats.pmean": lambda x: st.pmean(x, 2.5),
    "stats.entropy": st.entropy,
    "stats.sem": st.sem,
    "stats.trim_mean": lambda x: st.trim_mean(x, 0.1),
    "integrate.trapezoid": si.trapezoid,
    "integrate.cumulative_trapezoid": lambda x: si.cumulative_trapezoid(x)[-1],
    "fft.rfft": lambda x: sf.rfft(x)[1].real,
    # SciPy writes into a copy (array_api_extra's at(x, idx).set(v) is x[idx] = v for a
    # namespace it does not know): in-place writes on traced values
    "special.logsumexp": sp.logsumexp,
    "special.log_softmax": lambda x: sp.log_softmax(x)[0],
    "stats.zscore": lambda x: st.zscore(x)[0],
    "cluster.vq.whiten": lambda x: (vq.whiten(dnp.reshape(x, (2, 2))) * WEIGHTS).sum(),
    # SciPy refuses NumPy arrays next to traced ones: the second operand is traced too
    # (made from x here; a user passes it as a differentiated argument)
    "special.xlogy": lambda x: sp.xlogy(x, x[::-1] + 0.5).sum(),
    # method="direct" on 1-d inputs is NumPy's np.convolve (SciPy converts with np.asarray)
    "signal.convolve": lambda x: (ss.convolve(x, x[::-1] ** 2, method="fft")
                                  * dnp.arange(1.0, 8.0)).sum(),
    # SciPy needs more values than four for its default window: twelve distinct ones made
    # from x (with four, SciPy returns NaN whatever x is: a constant, derivative 0)
    "stats.differential_entropy": lambda x: st.differential_entropy(
        dnp.concatenate([x, 1.3 * x + 0.1, x ** 2 + 0.05])),
    # SciPy makes constants with xp.asarray(<Python number>) and compares them with traced
    # values: the namespace's constants are values of the running transformation, and the
    # comparisons traced bools, so nothing mixes NumPy arrays with traced ones
    "stats.variation": st.variation,
    "stats.pearsonr": lambda x: st.pearsonr(x, x[::-1] ** 2).statistic,
}




def _special(name, *before, scale=1.0, shift=0.0):
    """``scipy.special.<name>(*before, scale * x + shift)`` summed: the last argument traced
    (in the function's domain), the others Python numbers."""
    f = getattr(sp, name)
    return lambda x: f(*before, scale * x + shift).sum()


# Beyond the list: SciPy's other array-API functions that differentiate unchanged.
BEYOND = {
    **{f"special.{n}": _special(n) for n in (
        "cbrt", "cosm1", "erfc", "erfcx", "exp1", "exp10", "exp2", "expi", "exprel", "gamma",
        "gammasgn", "i0", "i1", "i1e", "j0", "j1", "k0", "k0e", "k1", "k1e", "log_ndtr",
        "loggamma", "ndtr", "psi", "rgamma", "spence", "y0", "y1", "sinc", "softplus")},
    **{f"special.{n}": _special(n, scale=0.4) for n in (
        "ellipk", "ellipkm1", "erfinv", "logit", "ndtri")},
    **{f"special.{n}": _special(n, 1.5) for n in (
        "betaln", "binom", "boxcox", "boxcox1p", "chdtr", "chdtrc", "gammainc", "gammaincc",
        "huber", "inv_boxcox", "kl_div", "poch", "pseudo_huber", "rel_entr", "stdtr",
        "xlog1py", "pdtr", "pdtrc")},
    **{f"special.{n}": _special(n, 1.5, scale=0.4) for n in ("gammaincinv", "gammainccinv")},
    **{f"special.{n}": _special(n, 1.5, 2.5) for n in ("fdtr", "fdtrc", "gdtr", "gdtrc",
                                                      "hyp1f1", "radian")},
    **{f"special.{n}": _special(n, 1.5, 2.5, scale=0.4) for n in (
        "betainc", "betaincc", "betaincinv")},
    **{f"special.{n}": _special(n, 2, 5, scale=0.4) for n in ("bdtr", "bdtrc", "nbdtr",
                                                             "nbdtrc", "bdtri", "nbdtri")},
    "special.chdtri": _special("chdtri", 2.5, scale=0.4),
    "special.pdtri": _special("pdtri", 3, scale=0.4),
    "special.fdtri": _special("fdtri", 2.5, 3.5, scale=0.4),
    "special.stdtrit": _special("stdtrit", 3.5, scale=0.4),
    "special.expn": _special("expn", 2), "special.yn": _special("yn", 2),
    "special.polygamma": _special("polygamma", 1),
    "special.lpmv": _special("lpmv", 1, 2.5, scale=0.4),
    "special.zeta": _special("zeta", 1.2, shift=1.5), "special.zetac": _special("zetac",
                                                                              shift=1.5),
    "stats.kstat": lambda x: st.kstat(x, 2), "stats.kstatvar": st.kstatvar,
    "stats.gstd": st.gstd, "stats.circmean": st.circmean,
    # (SciPy clips with the array API's keywords: xp.clip(x, max=1.0))
    "stats.circvar": st.circvar, "stats.circstd": st.circstd,
    "stats.skewtest": lambda x: st.skewtest(dnp.concatenate([x, x ** 2, x + 1])).statistic,
    "stats.kurtosistest": lambda x: st.kurtosistest(
        dnp.concatenate([x, x ** 2, x + 1, x ** 3, 2 * x])).statistic,
    "stats.describe": lambda x: st.describe(x).variance,
    "stats.directional_stats": lambda x: st.directional_stats(
        dnp.reshape(x, (2, 2))).mean_resultant_length,
    "stats.zmap": lambda x: st.zmap(x[:2], x[2:])[0],
    "stats.gzscore": lambda x: st.gzscore(x)[0],
    "stats.lmoment": lambda x: st.lmoment(x, order=2),
    "stats.tvar": st.tvar, "stats.tstd": st.tstd, "stats.tsem": st.tsem,
    "stats.sigmaclip": lambda x: st.sigmaclip(x).clipped.sum(),
    "fft.fft": lambda x: sf.fft(x)[1].real, "fft.ifft": lambda x: sf.ifft(x)[1].imag,
    "fft.irfft": lambda x: sf.irfft(x)[1],
    "fft.fftn": lambda x: sf.fftn(dnp.reshape(x, (2, 2)))[1, 1].real,
    "fft.rfftn": lambda x: sf.rfftn(dnp.reshape(x, (2, 2)))[1, 0].real,
    "fft.fftshift": lambda x: (sf.fftshift(x) * X).sum(),
    "fft.hfft": lambda x: sf.hfft(x)[1], "fft.ihfft": lambda x: sf.ihfft(x)[1].real,
    "signal.fftconvolve": lambda x: (ss.fftconvolve(x, x ** 2) * dnp.arange(1.0, 8.0)).sum(),
    "signal.oaconvolve": lambda x: (ss.oaconvolve(x, x ** 2) * dnp.arange(1.0, 8.0)).sum(),
    "signal.correlate": lambda x: (ss.correlate(x, x ** 2, method="fft")
                                   * dnp.arange(1.0, 8.0)).sum(),
    "signal.hilbert": lambda x: dnp.imag(ss.hilbert(x))[1],
    "integrate.romb": lambda x: si.romb(dnp.concatenate([x, x[:1] ** 2])),
    # these make constants with xp.asarray and compare them with traced values (as
    # variation and pearsonr do): the second sample is made from x
    "stats.tmean": st.tmean,
    "stats.iqr": st.iqr,
    "stats.median_abs_deviation": st.median_abs_deviation,
    "stats.quantile": lambda x: st.quantile(x, 0.3),
    "stats.ttest_1samp": lambda x: st.ttest_1samp(x, 0.2).statistic,
    "stats.ttest_ind": lambda x: st.ttest_ind(x, x[::-1] ** 2 + 0.3).statistic,
    "stats.ttest_rel": lambda x: st.ttest_rel(x, x[::-1] ** 2 + 0.3).statistic,
    "stats.jarque_bera": lambda x: st.jarque_bera(x).statistic,
    "stats.chisquare": lambda x: st.chisquare(x).statistic,
    "stats.power_divergence": lambda x: st.power_divergence(
        x, lambda_="log-likelihood").statistic,
    "stats.bartlett": lambda x: st.bartlett(x, x[::-1] ** 2 + 0.3).statistic,
    # normaltest needs eight values at least: twenty made from x
    "stats.normaltest": lambda x: st.normaltest(dnp.concatenate(
        [x, 1.3 * x + 0.1, x ** 2 + 0.05, 0.5 * x - 0.2, x ** 3])).statistic,
}
CASES.update(BEYOND)

# p-values: SciPy's distribution functions (betaincc, stdtr) of a traced statistic with
# shape parameters it makes with xp.asarray
PVALUES = {
    "stats.ttest_1samp (p-value)": lambda x: st.ttest_1samp(x, 0.2).pvalue,
    "stats.ttest_ind (p-value)": lambda x: st.ttest_ind(x, x[::-1] ** 2 + 0.3).pvalue,
    "stats.pearsonr (p-value)": lambda x: st.pearsonr(x, x[::-1] ** 2 + 0.3).pvalue,
}
CASES.update(PVALUES)


# Not differentiable through the array API, because of SciPy's own code (docs/array_api.md
# says why): each still fails, with the error the test expects.
FAILING = {
    # SciPy converts with np.asarray whatever SCIPY_ARRAY_API says
    "signal.welch": lambda x: ss.welch(x, nperseg=4)[1][1],
    "signal.lfilter": lambda x: ss.lfilter(x[:2], x[2:], x)[-1],
    "integrate.simpson": si.simpson,
    "stats.norm.logpdf": lambda x: st.norm.logpdf(x).sum(),
    "signal.convolve (direct)": lambda x: ss.convolve(x, x[::-1], method="direct")[1],
}


def known_failure(name, f):
    try:
        dk.grad(f)(X)
    except Exception as error:   # the reason, checked by the test
        return {"name": name, "known_error": f"{type(error).__name__}: {error}"}
    return {"name": name, "known_error": None}


def central_differences(f, x, step=1e-6):
    return np.array([(f(x + step * e) - f(x - step * e)) / (2 * step) for e in np.eye(x.size)])


def check(name, f):
    reference = central_differences(f, X)
    reverse = dk.grad(f)(X)
    forward = dk.jacfwd(f)(X)
    result = {"name": name,
              "reverse_vs_fd": float(np.max(np.abs(reverse - reference)
                                            / (1 + np.abs(reference)))),
              "forward_vs_reverse": float(np.max(np.abs(forward - reverse)))}
    batch = np.stack([X, X[::-1] + 0.25])
    try:
        batched = dk.vmap(dk.grad(f))(batch)
    except TracerConversionError as error:   # SciPy branched on the values
        result["vmap_error"] = str(error).splitlines()[0]
        return result
    looped = np.stack([central_differences(f, row) for row in batch])
    result["vmap_vs_fd"] = float(np.max(np.abs(batched - looped) / (1 + np.abs(looped))))
    return result


def rosen_second_order():
    x = np.array([0.3, -1.2, 0.8, 1.1, 0.5])
    return {"name": "optimize.rosen (exact)",
            "gradient": float(np.max(np.abs(dk.grad(so.rosen)(x) - so.rosen_der(x)))),
            "hessian": float(np.max(np.abs(dk.hessian(so.rosen)(x) - so.rosen_hess(x))))}


if __name__ == "__main__":
    names = sys.argv[1:] or list(CASES)
    for name in names:
        try:
            print(json.dumps(check(name, CASES[name])))
        except Exception as error:   # reported, and the test fails naming it
            print(json.dumps({"name": name, "error": f"{type(error).__name__}: {error}"}))
    print(json.dumps(rosen_second_order()))
    if not sys.argv[1:]:
        print(json.dumps({"name": "beyond", "names": list(BEYOND)}))
        for name, f in FAILING.items():
            print(json.dumps(known_failure(name, f)))
