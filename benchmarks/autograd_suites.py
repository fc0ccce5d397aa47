"""Run autograd's and lifelines' own test suites on ``diffkit.compat.autograd``.

The proof of issue 32: code written for autograd runs unchanged on diffkit when
``autograd`` resolves to the compatibility module. This script

1. makes a fresh virtual environment (or reuses ``--venv``) and installs autograd 1.9.1,
   lifelines 0.30.3 and their test dependencies into it (the diffkit of this checkout is
   put on ``PYTHONPATH``, so the run tests this checkout);
2. fetches both projects' source distributions (their tests are not in the wheels);
3. runs each suite twice in that environment, once on the real autograd and once with
   ``diffkit.compat.autograd.install()`` called first (a pytest plugin), and records every
   test's outcome;
4. prints (and with ``--markdown`` writes) the counts on each engine and every test that
   passes on autograd but not on diffkit, with its error.

lifelines is run on its parametric fitters (univariate and regression, AFT, cure and
piecewise models) and on the Cox model's spline and piecewise baselines: the tests of
those classes, and the Cox tests that use the ``cph_spline``/``cph_pieces`` fixtures.

Not part of the default CI run: it needs the network (PyPI) and takes several minutes::

    python benchmarks/autograd_suites.py                       # both suites, both engines
    python benchmarks/autograd_suites.py --suites autograd --engines diffkit
    python benchmarks/autograd_suites.py --venv /tmp/agvenv --markdown suites.md
"""

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
AUTOGRAD = "autograd==1.9.1"
LIFELINES = "lifelines==0.30.3"
TEST_REQUIREMENTS = ["pytest", "hypothesis", "flaky", "dill", "joblib", "jinja2"]

# the lifelines test classes of parametric models (plus Cox tests with a parametric baseline)
LIFELINES_CLASSES = [
    "TestBaseFitter", "TestParametricUnivariateFitters", "TestUnivariateFitters",
    "TestPiecewiseExponentialFitter", "TestLogNormalFitter", "TestLogLogisticFitter",
    "TestWeibullFitter", "TestGeneralizedGammaFitter", "TestExponentialFitter",
    "TestParametricRegressionFitter", "TestCustomRegressionModel", "TestRegressionFitters",
    "TestPiecewiseExponentialRegressionFitter", "TestAFTFitters", "TestLogNormalAFTFitter",
    "TestLogLogisticAFTFitter", "TestWeibullAFTFitter", "TestCoxPHFitterPieces",
    "TestMixtureCureFitter",
]
LIFELINES_FIXTURES = ["cph_spline", "cph_pieces"]

# The pytest plugin: resolves ``autograd`` to diffkit's module for the diffkit engine,
# selects lifelines' parametric tests, and records each test's outcome as JSON.
PLUGIN = '''
import json
import os

if os.environ["SUITE_ENGINE"] == "diffkit":
    import diffkit.compat.autograd

    diffkit.compat.autograd.install()

CLASSES = set(json.loads(os.environ.get("SUITE_CLASSES", "[]")))
FIXTURES = set(json.loads(os.environ.get("SUITE_FIXTURES", "[]")))
OUTCOMES = {}


def pytest_collection_modifyitems(config, items):
    if not CLASSES:
        return
    kept, dropped = [], []
    for item in items:
        cls = getattr(item, "cls", None)
        chosen = (cls is not None and cls.__name__ in CLASSES) or (
            FIXTURES & set(getattr(item, "fixturenames", ())))
        (kept if chosen else dropped).append(item)
    items[:] = kept
    config.hook.pytest_deselected(items=dropped)


def pytest_runtest_logreport(report):
    if report.when != "call" and report.outcome == "passed":
        return
    if report.when == "teardown" and report.nodeid in OUTCOMES:
        return
    if hasattr(report, "wasxfail"):
        outcome = "xfailed" if report.skipped else "xpassed"
    else:
        outcome = report.outcome
    message = ""
    if report.outcome != "passed":
        crash = getattr(report.longrepr, "reprcrash", None)
        message = crash.message if crash is not None else str(report.longrepr)[-300:]
    OUTCOMES[report.nodeid] = {"outcome": outcome, "message": message.strip()[:400],
                               "seconds": round(report.duration, 3)}
    # one line per report as it comes, so a run cut short still leaves its outcomes
    with open(os.environ["SUITE_OUT"] + "l", "a") as out:
        out.write(json.dumps({report.nodeid: OUTCOMES[report.nodeid]}) + "\\n")


def pytest_sessionfinish(session):
    with open(os.environ["SUITE_OUT"], "w") as out:
        json.dump(OUTCOMES, out, indent=1, sort_keys=True)
'''


def run(command, **kwargs):
    print("$", " ".join(str(c) for c in command), flush=True)
    return subprocess.run(command, check=True, **kwargs)


def make_venv(venv):
    """A virtual environment holding autograd, lifelines and the test requirements."""
    python = Path(venv) / "bin" / "python"
    if not python.exists():
        run([sys.executable, "-m", "venv", str(venv)])
    run([python, "-m", "pip", "install", "-q", AUTOGRAD, LIFELINES, *TEST_REQUIREMENTS])
    return python


def fetch_sources(python, workdir):
    """Unpack the source distributions (which hold the test suites); their directories."""
    downloads = Path(workdir) / "sdists"
    downloads.mkdir(parents=True, exist_ok=True)
    run([python, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
         "-d", str(downloads), AUTOGRAD, LIFELINES])
    sources = {}
    for archive in sorted(downloads.glob("*.tar.gz")):
        with tarfile.open(archive) as tar:
            try:
                tar.extractall(downloads, filter="data")
            except TypeError:  # Python without extraction filters
                tar.extractall(downloads)
        name = archive.name[: -len(".tar.gz")]
        sources[name.split("-")[0]] = downloads / name
    return sources


def suite_command(suite, engine, sources, workdir):
    """(test paths, environment additions, working directory) of one suite."""
    if suite == "autograd":
        # the tests only: the sdist's own autograd package must not shadow either engine
        tests = Path(workdir) / "autograd_tests"
        if not tests.exists():
            run(["cp", "-r", str(sources["autograd"] / "tests"), str(tests)])
        return [str(tests)], {}, tests
    tests = sources["lifelines"] / "lifelines" / "tests" / "test_estimation.py"
    # lifelines' tests write files into the cwd: one directory per engine
    scratch = Path(workdir) / f"lifelines_cwd_{engine}"
    scratch.mkdir(exist_ok=True)
    return [str(tests)], {"SUITE_CLASSES": json.dumps(LIFELINES_CLASSES),
                          "SUITE_FIXTURES": json.dumps(LIFELINES_FIXTURES)}, scratch


def run_suite(python, suite, engine, sources, workdir, timeout):
    """Run one suite on one engine; ``{nodeid: outcome record}`` and the wall time."""
    paths, extra_env, cwd = suite_command(suite, engine, sources, workdir)
    out = Path(workdir) / f"{suite}-{engine}.json"
    env = dict(os.environ, SUITE_ENGINE=engine, SUITE_OUT=str(out), MPLBACKEND="Agg",
               PYTHONPATH=os.pathsep.join([str(ROOT), str(workdir)]), **extra_env)
    command = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
               "_diffkit_suite_plugin", "-o", "addopts=", "-o", "required_plugins=",
               "-W", "ignore::DeprecationWarning", *paths]
    partial = Path(str(out) + "l")
    partial.unlink(missing_ok=True)
    start = time.perf_counter()
    print("$", " ".join(map(str, command)), f"(engine {engine})", flush=True)
    try:
        subprocess.run(command, env=env, cwd=cwd, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        print(f"{suite} on {engine}: cut at {timeout:.0f} s; reporting the tests run so far")
    seconds = time.perf_counter() - start
    if out.exists():
        return json.loads(out.read_text()), seconds
    outcomes = {}
    if partial.exists():
        for line in partial.read_text().splitlines():
            outcomes.update(json.loads(line))
    return outcomes, seconds


def counts(outcomes):
    tally = {}
    for record in outcomes.values():
        tally[record["outcome"]] = tally.get(record["outcome"], 0) + 1
    return tally


def compare(results):
    """Markdown: counts per suite and engine, and each test that passes on autograd but
    not on diffkit."""
    lines = ["| suite | engine | passed | failed | skipped | xfailed | xpassed | time (s) |",
             "|---|---|---|---|---|---|---|---|"]
    for (suite, engine), (outcomes, seconds) in results.items():
        tally = counts(outcomes)
        lines.append(f"| {suite} | {engine} | " + " | ".join(
            str(tally.get(k, 0)) for k in ("passed", "failed", "skipped", "xfailed",
                                           "xpassed")) + f" | {seconds:.0f} |")
    for suite in sorted({s for s, _ in results}):
        if (suite, "autograd") not in results or (suite, "diffkit") not in results:
            continue
        reference = results[suite, "autograd"][0]
        ours = results[suite, "diffkit"][0]
        worse = [(nodeid, ours.get(nodeid, {"outcome": "missing", "message": ""}))
                 for nodeid, record in sorted(reference.items())
                 if record["outcome"] == "passed" and
                 ours.get(nodeid, {}).get("outcome") != "passed"]
        lines += ["", f"### {suite}: passing on autograd, not on diffkit ({len(worse)})", ""]
        lines += [f"- `{nodeid}`: {record['outcome']}: {record['message'].splitlines()[0]}"
                  if record["message"] else f"- `{nodeid}`: {record['outcome']}"
                  for nodeid, record in worse]
        better = [nodeid for nodeid, record in sorted(ours.items())
                  if record["outcome"] == "passed" and
                  reference.get(nodeid, {}).get("outcome") not in ("passed", None)]
        lines += ["", f"### {suite}: passing on diffkit, not on autograd ({len(better)})", ""]
        lines += [f"- `{nodeid}`" for nodeid in better]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--venv", help="virtual environment to use (made if missing; "
                        "default: a fresh one in a temporary directory)")
    parser.add_argument("--workdir", help="where sources and results go (default: temp)")
    parser.add_argument("--suites", default="autograd,lifelines")
    parser.add_argument("--engines", default="autograd,diffkit")
    parser.add_argument("--timeout", type=float, default=4 * 3600,
                        help="seconds per run; a run cut short reports the tests run so far")
    parser.add_argument("--markdown", help="also write the comparison to this file")
    args = parser.parse_args()

    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="autograd-suites-"))
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "_diffkit_suite_plugin.py").write_text(PLUGIN)
    python = make_venv(args.venv or workdir / "venv")
    sources = fetch_sources(python, workdir)
    results = {}
    for suite in args.suites.split(","):
        for engine in args.engines.split(","):
            results[suite, engine] = run_suite(python, suite, engine, sources, workdir,
                                               args.timeout)
    report = compare(results)
    print(report)
    if args.markdown:
        Path(args.markdown).write_text(report)
    print(f"outcomes per test: {workdir}/<suite>-<engine>.json")


if __name__ == "__main__":
    main()
