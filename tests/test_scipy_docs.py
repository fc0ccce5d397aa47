"""docs/scipy.md cannot rot: every ``diffkit.scipy`` name it mentions exists, every public
name of the ``diffkit.scipy`` modules is on it, and its tables agree with SciPy."""

import importlib
import pathlib
import re

import numpy as np
import pytest
import scipy.special

PAGE = (pathlib.Path(__file__).parent.parent / "docs" / "scipy.md").read_text()
MODULES = ("special", "linalg", "stats", "signal", "integrate")
DOTTED = re.compile(r"\b(diffkit\.scipy(?:\.\w+)+)")
ROW = re.compile(r"^\| `(scipy\.(\w+)\.(\w+))` \| (?:[^|]*\| )?`diffkit\.scipy\.(\w+)\.(\w+)` \|",
                 re.MULTILINE)


def lookup(dotted):
    """The object ``dotted`` names (importing its module), or None."""
    parts = dotted.split(".")
    for split in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for part in parts[split:]:
            obj = getattr(obj, part, None)
            if obj is None:
                return None
        return obj
    return None


def section(module):
    """The text of the page's ``## `scipy.<module>` `` section."""
    start = PAGE.index(f"## `scipy.{module}`")
    end = PAGE.find("\n## ", start + 1)
    return PAGE[start:end if end != -1 else None]


def test_every_mentioned_name_exists():
    mentioned = set(DOTTED.findall(PAGE))
    assert len(mentioned) > 100
    missing = sorted(name for name in mentioned if lookup(name) is None)
    assert not missing, f"docs/scipy.md names what diffkit.scipy lacks: {missing}"


@pytest.mark.parametrize("module", MODULES)
def test_every_public_name_is_mentioned(module):
    namespace = importlib.import_module(f"diffkit.scipy.{module}")
    mentioned = set(DOTTED.findall(PAGE))
    absent = [name for name in namespace.__all__
              if f"diffkit.scipy.{module}.{name}" not in mentioned]
    assert not absent, f"docs/scipy.md does not mention diffkit.scipy.{module}: {absent}"


def test_rows_pair_a_scipy_name_with_the_diffkit_name_of_the_same_name():
    rows = ROW.findall(PAGE)
    assert len(rows) > 40
    for scipy_name, module, name, dk_module, dk_name in rows:
        assert lookup(scipy_name) is not None, scipy_name
        assert (module, name) == (dk_module, dk_name), scipy_name


def test_ufunc_paragraph_lists_ufuncs_and_coerce_table_does_not():
    special = section("special")
    ufuncs_part, coerce_part = special.split("**Functions that coerce")
    listed = [n.rsplit(".", 1)[1] for n in DOTTED.findall(ufuncs_part)
              if n.count(".") == 3]
    assert len(listed) > 50
    not_ufuncs = [n for n in listed if not isinstance(getattr(scipy.special, n), np.ufunc)]
    assert not not_ufuncs, f"listed as dispatching ufuncs but are not: {not_ufuncs}"
    coerced = re.findall(r"^\| `scipy\.special\.(\w+)`", coerce_part, re.MULTILINE)
    assert "logsumexp" in coerced and "softmax" in coerced and "log_softmax" in coerced
    ufuncs = [n for n in coerced if isinstance(getattr(scipy.special, n), np.ufunc)]
    assert not ufuncs, f"listed as coercing but are ufuncs (they dispatch): {ufuncs}"


def test_stats_methods_exist_on_both_sides():
    rows = re.findall(r"^\| `scipy\.stats\.(\w+)` \| `diffkit\.scipy\.stats\.(\w+)` \| (.+) \|$",
                      section("stats"), re.MULTILINE)
    assert len(rows) == len(importlib.import_module("diffkit.scipy.stats").__all__)
    for scipy_name, dk_name, methods in rows:
        assert scipy_name == dk_name
        for method in re.findall(r"`(\w+)`", methods):
            assert callable(lookup(f"diffkit.scipy.stats.{dk_name}.{method}")), (dk_name, method)
            assert callable(lookup(f"scipy.stats.{scipy_name}.{method}")), (scipy_name, method)
