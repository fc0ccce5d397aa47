"""The advice of an error on a SciPy function that converts its input is followed, and it
works: each recommendation an error gives (a diffkit.scipy replacement, or setting
SCIPY_ARRAY_API=1 before SciPy is imported) is run, and none is given that fails the same
way. Each case runs in a fresh interpreter, with or without the variable."""

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PRELUDE = """
import json, sys
import numpy as np
import scipy.integrate, scipy.optimize, scipy.signal, scipy.special, scipy.stats
import diffkit as dk
import diffkit.scipy.integrate, diffkit.scipy.signal, diffkit.scipy.special, diffkit.scipy.stats
x = np.array([0.3, -1.2, 0.8, 1.1])
def fd(f, x, h=1e-6):
    return np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(len(x))])
def run(name, code):
    scope = dict(globals())
    try:
        exec(code, scope)
        print(json.dumps({"name": name, "error": scope["error"]}))
    except Exception as e:
        print(json.dumps({"name": name, "message": f"{type(e).__name__}: {e}"}))
"""

# name -> (code setting ``error``, the recommendations its message must give)
CASES = {
    "rosen": ("g = dk.grad(scipy.optimize.rosen)(x)\n"
              "error = float(np.max(np.abs(g - scipy.optimize.rosen_der(x))))",
              {"array_api"}),
    # the culprit is rosen (called by dk.grad inside minimize), not minimize
    "minimize(rosen, jac=dk.grad(rosen))": (
        "r = scipy.optimize.minimize(scipy.optimize.rosen, x, jac=dk.grad("
        "scipy.optimize.rosen), method='BFGS')\nerror = float(np.max(np.abs(r.x - 1)))",
        {"array_api"}),
    "logsumexp": ("g = dk.grad(scipy.special.logsumexp)(x)\n"
                  "error = float(np.max(np.abs(g - np.exp(x) / np.exp(x).sum())))",
                  {"replacement", "array_api"}),
    "skew": ("g = dk.grad(scipy.stats.skew)(x)\n"
             "error = float(np.max(np.abs(g - fd(scipy.stats.skew, x))))", {"array_api"}),
    # SciPy converts these with np.asarray whatever the variable says: no array-API advice
    "simpson": ("g = dk.grad(scipy.integrate.simpson)(x)\n"
                "error = float(np.max(np.abs(g - fd(scipy.integrate.simpson, x))))",
                {"replacement"}),
    "norm.logpdf": ("g = dk.grad(lambda x: scipy.stats.norm.logpdf(x).sum())(x)\n"
                    "error = float(np.max(np.abs(g + x)))", {"replacement"}),
    "lfilter": ("f = lambda x: scipy.signal.lfilter([1.0], [1.0, -0.5], x).sum()\n"
                "g = dk.grad(f)(x)\nerror = float(np.max(np.abs(g - fd(f, x))))",
                {"replacement"}),
    "welch": ("f = lambda x: scipy.signal.welch(x, nperseg=4)[1][1]\n"
              "g = dk.grad(f)(x)\nerror = float(np.max(np.abs(g - fd(f, x))))",
              {"replacement"}),
    # zi (initial conditions) is not taken by the replacement: it is not recommended
    "lfilter(zi=...)": ("f = lambda x: scipy.signal.lfilter([1.0], [1.0, -0.5], x, "
                        "zi=[0.5])[0].sum()\n"
                        "g = dk.grad(f)(x)\nerror = float(np.max(np.abs(g - fd(f, x))))",
                        set()),
}

REPLACEMENT = re.compile(r"Use (diffkit\.scipy\.[\w.]+) instead")


def _run(cases, array_api):
    env = dict(os.environ,
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    env.pop("SCIPY_ARRAY_API", None)
    if array_api:
        env["SCIPY_ARRAY_API"] = "1"
    script = PRELUDE + "".join(f"run({name!r}, {code!r})\n" for name, code in cases.items())
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    return {r["name"]: r for r in map(json.loads, done.stdout.splitlines())}


def _advice(message):
    given = set()
    if REPLACEMENT.search(message):
        given.add("replacement")
    if "SCIPY_ARRAY_API=1" in message:
        given.add("array_api")
    return given


@pytest.fixture(scope="module")
def outcomes():
    plain = _run({name: code for name, (code, _) in CASES.items()}, array_api=False)
    replaced = {}
    for name, (code, _) in CASES.items():
        found = REPLACEMENT.search(plain[name].get("message", ""))
        if found:
            original = found.group(1).removeprefix("diffkit.")
            replaced[name] = re.sub(rf"(?<!diffkit\.){re.escape(original)}\b",
                                    found.group(1), code)
    with_replacements = _run(replaced, array_api=False) if replaced else {}
    with_variable = _run({name: code for name, (code, _) in CASES.items()}, array_api=True)
    return plain, with_replacements, with_variable


@pytest.mark.parametrize("name", CASES)
def test_each_recommendation_works_and_none_fails_the_same_way(outcomes, name):
    plain, with_replacements, with_variable = outcomes
    message = plain[name].get("message")
    assert message is not None and "would drop the derivative" in message, plain[name]
    assert _advice(message) == CASES[name][1], message
    if "replacement" in CASES[name][1]:
        assert with_replacements[name].get("error", 1.0) < 1e-6, with_replacements[name]
    if "array_api" in CASES[name][1]:
        assert with_variable[name].get("error", 1.0) < 1e-6, with_variable[name]
    else:   # the variable would not help: the call fails with it too
        assert "message" in with_variable[name], with_variable[name]
        again = with_variable[name]["message"]
        assert "SCIPY_ARRAY_API=1" not in again.split("(it does so even")[0]


def test_the_culprit_is_named_not_the_solver(outcomes):
    message = outcomes[0]["minimize(rosen, jac=dk.grad(rosen))"]["message"]
    assert message.startswith("TracerConversionError: scipy.optimize.rosen would drop")
    assert "diffkit.scipy.optimize.minimize" not in message


def test_the_advice_list_is_the_tested_list():
    """ARRAY_API_FUNCTIONS (the functions an error sends to SCIPY_ARRAY_API=1) are exactly
    the ones test_array_api_scipy.py shows to differentiate under it."""
    from diffkit.numpy_protocol.escapes import ARRAY_API_FUNCTIONS

    sys.path.insert(0, str(Path(__file__).parent))
    try:
        from array_api_cases import BEYOND
        from test_array_api_scipy import NAMES
    finally:
        sys.path.pop(0)
    tested = set(NAMES) | set(BEYOND)
    assert tested == set(ARRAY_API_FUNCTIONS), textwrap.shorten(
        str(tested ^ set(ARRAY_API_FUNCTIONS)), 300)
