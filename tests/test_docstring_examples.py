"""The examples in the docstrings of diffkit's public API run and print what they show
(doctest), and every public name of these modules has at least one.

A docstring's behavioural claims ("returns a tuple", "float32 stays float32", "raises
ShapeMismatchError when ...") are written as ``>>>`` examples under an ``Examples:`` section
(rendered as code by the reference pages), so a claim that stops being true fails here.
The examples run with ``np`` (NumPy), ``dk`` (diffkit) and ``dnp`` (diffkit.numpy) defined,
as the reference pages assume, under NumPy's default print options.
"""

import doctest
import importlib
import inspect

import numpy as np
import pytest

import diffkit as dk
import diffkit.numpy as dnp

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _jitted_names():
    """``diffkit.jit``'s public names defined in ``jitted.py`` (not those it imports from
    ``graph.py`` and ``randomness.py``)."""
    package = importlib.import_module("diffkit.jit")
    jitted = importlib.import_module("diffkit.jit.jitted")
    return [name for name in package.__all__ if name in vars(jitted)
            and getattr(vars(jitted)[name], "__module__", jitted.__name__) == jitted.__name__]


# Each module whose public names must show examples; None: the names of its __all__.
MODULES = {
    "diffkit.api": None,            # stop_gradient's docstring is diffkit.ops.control's
    "diffkit.custom": None,
    "diffkit.debug": None,
    "diffkit.tree_util": None,
    "diffkit.flatten_util": None,
    "diffkit.config": None,
    "diffkit.jit.jitted": _jitted_names,
    "diffkit.sparse": None,
    "diffkit.testing": None,        # checks.py and edges.py
    "diffkit.errors": None,
}

# Public names without an example of their own, and why.
NO_EXAMPLE = {
    "diffkit.jit.jitted.CacheInfo": "a namedtuple made by one call, with no docstring of its "
                                    "own; the example of Jitted shows its fields",
    "diffkit.jit.jitted.MAX_SPECIALISATIONS": "an int constant, which has no docstring; the "
                                              "example of errors.PerformanceWarning runs "
                                              "past it",
}


def _public_names(module_name):
    names = MODULES[module_name]
    if callable(names):
        return names()
    return names or list(importlib.import_module(module_name).__all__)


def _documented(obj):
    """Whether ``obj`` has a docstring of diffkit's: a function or class, or an instance of
    one of diffkit's classes (``dk.config``); a constant (an int) has only its type's."""
    if inspect.isroutine(obj) or inspect.isclass(obj):
        return True
    return type(obj).__module__.startswith("diffkit.")


def _doctests(module_name, name):
    """The doctests of one public object: its own docstring first, then its methods'."""
    obj = getattr(importlib.import_module(module_name), name)
    if not _documented(obj):
        return []
    finder = doctest.DocTestFinder(exclude_empty=False)
    globs = {"np": np, "dk": dk, "dnp": dnp}
    tests = finder.find(obj, f"{module_name}.{name}", module=inspect.getmodule(obj),
                        globs=globs)
    return sorted(tests, key=lambda test: (test.name != f"{module_name}.{name}", test.name))


# NumPy's default print options (a test elsewhere may have changed them)
_DEFAULT_PRINT = dict(precision=8, threshold=1000, edgeitems=3, linewidth=75, suppress=False,
                      nanstr="nan", infstr="inf", sign="-", floatmode="maxprec", legacy=False)


def _run(test):
    """``(failures, report)`` of one doctest, run under NumPy's default print options and
    diffkit's default settings (whatever the environment variables say), restored
    afterwards."""
    report = []
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    settings = (dk.config.traceback_filtering, dk.config.source_info)
    dk.config.traceback_filtering, dk.config.source_info = "on", "reads"
    try:
        with np.printoptions(**_DEFAULT_PRINT):
            runner.run(test, out=report.append, clear_globs=True)
    finally:
        dk.config.traceback_filtering, dk.config.source_info = settings
    return runner.failures, "".join(report)


@pytest.mark.parametrize("module_name", sorted(MODULES))
def test_docstring_examples_run_and_show_their_output(module_name):
    failed = []
    for name in _public_names(module_name):
        for test in _doctests(module_name, name):
            if test.examples:
                failures, report = _run(test)
                if failures:
                    failed.append(report)
    assert not failed, "\n".join(failed)


@pytest.mark.parametrize("module_name", sorted(MODULES))
def test_every_public_name_has_an_example(module_name):
    missing, needless = [], []
    for name in _public_names(module_name):
        qualified = f"{module_name}.{name}"
        own = _doctests(module_name, name)
        has_example = bool(own) and own[0].name == qualified and bool(own[0].examples)
        if not has_example and qualified not in NO_EXAMPLE:
            missing.append(qualified)
        if has_example and qualified in NO_EXAMPLE:
            needless.append(qualified)
    assert not missing, f"public names whose docstring has no >>> example: {missing}"
    assert not needless, f"NO_EXAMPLE lists names that have an example now: {needless}"


def test_the_exclusions_name_public_names():
    known = {f"{module}.{name}" for module in MODULES for name in _public_names(module)}
    assert set(NO_EXAMPLE) <= known, sorted(set(NO_EXAMPLE) - known)


def test_a_wrong_output_fails():
    """The runner really compares: an example showing the wrong value is a failure."""
    def shows_three():
        """
        >>> print(1 + 1)
        3
        """

    test = doctest.DocTestFinder().find(shows_three, "shows_three", globs={})[0]
    failures, report = _run(test)
    assert failures == 1 and "Expected:\n    3\nGot:\n    2" in report
