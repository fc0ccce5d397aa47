"""Time lifelines' fitters on autograd and on diffkit (``diffkit.compat.autograd``), in one
process.

lifelines fits its parametric models with autograd (``value_and_grad`` in the optimizer,
``hessian`` for the standard errors, autograd-gamma's primitives for the generalized
gamma). The script imports lifelines twice: once on the real autograd, then, after
dropping lifelines, autograd-gamma and autograd from ``sys.modules``, once with
``diffkit.compat.autograd.install()`` in force; the two sets of fitter classes live side
by side, and each round fits every model on both engines in alternating order. It reports
the median fit time per engine, the ratio, the geometric mean of the ratios, and whether
the fitted parameters agree.

Needs autograd, autograd-gamma and lifelines installed (``pip install lifelines==0.30.3``
brings the other two); not part of the default CI run::

    python benchmarks/lifelines_fitters.py                 # 5 rounds
    python benchmarks/lifelines_fitters.py --rounds 9 --markdown fitters.md
"""

import argparse
import importlib
import math
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the diffkit of this checkout

DROPPED = ("lifelines", "autograd", "autograd_gamma")


def load_lifelines(engine):
    """lifelines' fitter classes and datasets, imported on ``engine``."""
    import diffkit.compat.autograd as compat

    for name in list(sys.modules):
        if name.split(".")[0] in DROPPED:
            del sys.modules[name]
    compat.uninstall()
    if engine == "diffkit":
        compat.install()
    lifelines = importlib.import_module("lifelines")
    datasets = importlib.import_module("lifelines.datasets")
    return lifelines, datasets


def models(lifelines, datasets):
    """``{name: fit()}``: each fit builds a fresh fitter and returns its parameters."""
    waltons, rossi = datasets.load_waltons(), datasets.load_rossi()

    def univariate(cls):
        return lambda: cls().fit(waltons["T"], waltons["E"]).params_

    return {
        "WeibullFitter": univariate(lifelines.WeibullFitter),
        "GeneralizedGammaFitter": univariate(lifelines.GeneralizedGammaFitter),
        "WeibullAFTFitter": lambda: lifelines.WeibullAFTFitter().fit(
            rossi, "week", "arrest").params_,
        "CoxPHFitter(spline)": lambda: lifelines.CoxPHFitter(
            baseline_estimation_method="spline", n_baseline_knots=3).fit(
            rossi, "week", "arrest").params_,
    }


def time_fit(fit):
    start = time.perf_counter()
    params = fit()
    return time.perf_counter() - start, np.asarray(params, dtype=float)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--markdown", help="also write the table to this file")
    args = parser.parse_args()
    warnings.simplefilter("ignore")

    fits = {engine: models(*load_lifelines(engine)) for engine in ("autograd", "diffkit")}
    times = {(engine, name): [] for engine in fits for name in fits[engine]}
    params, errors = {}, {}
    for name in fits["autograd"]:  # warm-up: imports, first-call costs
        for engine in fits:
            try:
                params[engine, name] = time_fit(fits[engine][name])[1]
            except Exception as error:  # reported in the table, not fatal to the others
                errors[engine, name] = f"{type(error).__name__}: {str(error)[:120]}"
    for round_ in range(args.rounds):
        for name in fits["autograd"]:
            order = ("autograd", "diffkit") if round_ % 2 == 0 else ("diffkit", "autograd")
            for engine in order:
                if (engine, name) not in errors:
                    times[engine, name].append(time_fit(fits[engine][name])[0])

    lines = ["| fitter | autograd (s) | diffkit (s) | speed-up | same parameters |",
             "|---|---|---|---|---|"]
    ratios = []
    for name in fits["autograd"]:
        if ("diffkit", name) in errors or ("autograd", name) in errors:
            failed = errors.get(("diffkit", name)) or errors.get(("autograd", name))
            lines.append(f"| {name} | | | fails: {failed} | |")
            continue
        slow = statistics.median(times["autograd", name])
        fast = statistics.median(times["diffkit", name])
        ratios.append(slow / fast)
        same = np.allclose(params["autograd", name], params["diffkit", name], rtol=1e-5,
                           atol=1e-8)
        lines.append(f"| {name} | {slow:.3f} | {fast:.3f} | {slow / fast:.2f}x | "
                     f"{'yes' if same else 'NO'} |")
    if ratios:
        geomean = math.exp(sum(map(math.log, ratios)) / len(ratios))
        lines.append(f"| geometric mean ({len(ratios)} fitters) | | | {geomean:.2f}x | |")
    table = "\n".join(lines) + "\n"
    print(f"median of {args.rounds} rounds per fit\n\n{table}")
    if args.markdown:
        Path(args.markdown).write_text(table)


if __name__ == "__main__":
    main()
