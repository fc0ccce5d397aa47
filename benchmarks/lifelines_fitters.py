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

On diffkit, the optimizer's ``value_and_grad`` calls are staged (recorded on the second
call, replayed after: docs/guide/autograd.md, "Staged calls"). ``--eager`` adds a column
with diffkit's time when every call runs eagerly (``set_staging(False)``), measured in
the same rounds, so the table shows what staging brings.

Needs autograd, autograd-gamma and lifelines installed (``pip install lifelines==0.30.3``
brings the other two); not part of the default CI run::

    python benchmarks/lifelines_fitters.py                 # 5 rounds
    python benchmarks/lifelines_fitters.py --rounds 9 --markdown fitters.md
    python benchmarks/lifelines_fitters.py --eager         # and diffkit without staging
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


def time_fit(fit, staging=True):
    """``(seconds, parameters)`` of one fit; ``staging`` sets diffkit's staging for it."""
    import diffkit.compat.autograd as compat

    previous = compat.set_staging(staging)
    try:
        start = time.perf_counter()
        params = fit()
        return time.perf_counter() - start, np.asarray(params, dtype=float)
    finally:
        compat.set_staging(previous)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--markdown", help="also write the table to this file")
    parser.add_argument("--eager", action="store_true",
                        help="also time diffkit with staging off (every call eager)")
    args = parser.parse_args()
    warnings.simplefilter("ignore")

    fits = {engine: models(*load_lifelines(engine)) for engine in ("autograd", "diffkit")}
    # (column, engine, staging): the diffkit columns run the same fitter classes
    columns = [("autograd", "autograd", True), ("diffkit", "diffkit", True)]
    if args.eager:
        columns.append(("diffkit eager", "diffkit", False))
    times = {(column, name): [] for column, _, _ in columns for name in fits["autograd"]}
    params, errors = {}, {}
    for name in fits["autograd"]:  # warm-up: imports, first-call costs
        for column, engine, staging in columns:
            try:
                params[column, name] = time_fit(fits[engine][name], staging)[1]
            except Exception as error:  # reported in the table, not fatal to the others
                errors[column, name] = f"{type(error).__name__}: {str(error)[:120]}"
    for round_ in range(args.rounds):
        for name in fits["autograd"]:
            order = columns if round_ % 2 == 0 else columns[::-1]
            for column, engine, staging in order:
                if (column, name) not in errors:
                    times[column, name].append(time_fit(fits[engine][name], staging)[0])
    table = _table(fits["autograd"], [c for c, _, _ in columns], times, params, errors)
    print(f"median of {args.rounds} rounds per fit\n\n{table}")
    if args.markdown:
        Path(args.markdown).write_text(table)


def _table(names, columns, times, params, errors):
    """The markdown table: the median time of each column, autograd's time over each
    diffkit column's, the geometric means, and whether the parameters agree."""
    others = columns[1:]
    lines = ["| fitter | " + " | ".join(f"{c} (s)" for c in columns) + " | " +
             " | ".join(f"speed-up ({c})" for c in others) + " | same parameters |",
             "|---" * (2 * len(columns) + 1) + "|"]
    ratios = {c: [] for c in others}
    for name in names:
        failed = [errors[c, name] for c in columns if (c, name) in errors]
        if failed:
            lines.append(f"| {name} |" + " |" * (2 * len(columns) - 1) +
                         f" fails: {failed[0]} |")
            continue
        medians = {c: statistics.median(times[c, name]) for c in columns}
        speedups = []
        for c in others:
            ratios[c].append(medians["autograd"] / medians[c])
            speedups.append(f"{ratios[c][-1]:.2f}x")
        same = all(np.allclose(params["autograd", name], params[c, name], rtol=1e-5,
                               atol=1e-8) for c in others)
        lines.append(f"| {name} | " + " | ".join(f"{medians[c]:.3f}" for c in columns) +
                     " | " + " | ".join(speedups) + f" | {'yes' if same else 'NO'} |")
    if all(ratios.values()):
        means = [math.exp(sum(map(math.log, r)) / len(r)) for r in ratios.values()]
        count = len(next(iter(ratios.values())))
        lines.append(f"| geometric mean ({count} fitters) |" + " |" * len(columns) + " " +
                     " | ".join(f"{m:.2f}x" for m in means) + " | |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
