"""SciPy's own array-API functions (SCIPY_ARRAY_API=1) differentiate unchanged: their
inputs ask a traced value for its namespace and get diffkit.numpy. The variable must be set
before SciPy is first imported, so the cases run in a fresh interpreter."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

CASES = Path(__file__).with_name("array_api_cases.py")


@pytest.fixture(scope="module")
def results():
    root = Path(__file__).resolve().parents[2]
    # the checkout's diffkit, not an installed one: the script's own folder is on sys.path
    env = dict(os.environ, SCIPY_ARRAY_API="1",
               PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, str(CASES)], capture_output=True, text=True,
                          env=env, timeout=600, cwd=root)
    assert done.returncode == 0, done.stderr[-2000:]
    return {r["name"]: r for r in map(json.loads, done.stdout.splitlines())}


NAMES = ["optimize.rosen", "special.softmax", "special.entr", "special.erf",
         "special.gammaln", "special.expit", "special.i0e", "stats.skew", "stats.kurtosis",
         "stats.moment", "stats.gmean", "stats.hmean", "stats.pmean", "stats.entropy",
         "stats.sem", "stats.trim_mean", "integrate.trapezoid",
         "integrate.cumulative_trapezoid", "fft.rfft", "special.logsumexp",
         "special.log_softmax", "stats.zscore", "cluster.vq.whiten", "special.xlogy",
         "signal.convolve", "stats.differential_entropy", "stats.variation",
         "stats.pearsonr"]


# SciPy itself reads these inputs' values in Python (``if xp.any(a < 0)``: a warning for
# negative data), which a batch of values cannot answer: vmap refuses with the error that
# says so; grad and jacfwd of one input work.
# (signal.convolve with method="fft" checks its first output for NaN to warn.)
BRANCHES_ON_VALUES = {"stats.hmean", "stats.pmean", "signal.convolve"}


@pytest.mark.parametrize("name", NAMES)
def test_scipy_array_api_function_differentiates(results, name):
    """Reverse mode against central differences of SciPy's function (step 1e-6: agreement to
    about 1e-7 relative), forward mode equal to reverse mode to rounding, and vmap(grad)
    against differences row by row."""
    result = results[name]
    assert "error" not in result, result.get("error")
    assert result["reverse_vs_fd"] < 1e-6
    assert result["forward_vs_reverse"] < 1e-12
    if name in BRANCHES_ON_VALUES:
        assert "truth value of a batched traced value" in result["vmap_error"]
    else:
        assert result["vmap_vs_fd"] < 1e-6


# Beyond the list (array_api_cases.BEYOND): SciPy's other array-API functions.
# These read values in Python as well: trimmed statistics and sigmaclip select with a
# boolean mask (a batch of examples would select different numbers of entries), and
# correlate checks its output for NaN; quantile (which iqr and median_abs_deviation use)
# checks its probabilities and the data in Python.
BEYOND_BRANCHES = {"stats.tvar", "stats.tstd", "stats.tsem", "stats.sigmaclip",
                   "signal.correlate", "stats.iqr", "stats.median_abs_deviation",
                   "stats.quantile"}


def test_more_scipy_array_api_functions_differentiate(results):
    """The same checks for every function of the BEYOND list: 122 more."""
    names = results["beyond"]["names"]
    assert len(names) >= 122
    failures = {}
    for name in names:
        result = results[name]
        ok = ("error" not in result and result["reverse_vs_fd"] < 1e-6
              and result["forward_vs_reverse"] < 1e-12)
        if name in BEYOND_BRANCHES:
            ok = ok and "vmap_error" in result
        else:
            ok = ok and result.get("vmap_vs_fd", 1.0) < 1e-6
        if not ok:
            failures[name] = result
    assert not failures, failures


@pytest.mark.parametrize("name", ["stats.ttest_1samp (p-value)", "stats.ttest_ind (p-value)",
                                  "stats.pearsonr (p-value)"])
def test_p_values_differentiate(results, name):
    """A p-value: SciPy's distribution function of the traced statistic, its shape
    parameters constants SciPy makes with xp.asarray."""
    result = results[name]
    assert "error" not in result, result.get("error")
    assert result["reverse_vs_fd"] < 1e-6
    assert result["forward_vs_reverse"] < 1e-12
    assert result["vmap_vs_fd"] < 1e-6


def test_rosen_gradient_and_hessian_are_scipys_closed_forms(results):
    result = results["optimize.rosen (exact)"]
    assert result["gradient"] < 1e-12 and result["hessian"] < 1e-12


def test_the_case_list_is_the_one_tested():
    text = CASES.read_text()
    assert all(f'"{name}"' in text for name in NAMES)


CONVERTS = "would drop the derivative"
FAILING = {"signal.welch": CONVERTS,
           "signal.lfilter": CONVERTS, "integrate.simpson": CONVERTS,
           "stats.norm.logpdf": CONVERTS, "signal.convolve (direct)": CONVERTS}


@pytest.mark.parametrize("name", FAILING)
def test_what_does_not_differentiate_fails_for_the_documented_reason(results, name):
    """SciPy's own code stops these (docs/array_api.md): it converts with np.asarray. If one
    starts to pass, move it to NAMES and the docs' list."""
    error = results[name]["known_error"]
    assert error is not None and FAILING[name] in error, error
