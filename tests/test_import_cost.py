"""What importing diffkit loads: SciPy's heavy submodules and dask are imported when first
used, not by ``import diffkit`` (issue 28: ``import diffkit`` and ``from
diffkit.scipy.optimize import minimize`` must stay cheap).

These checks are structural, never timings: each runs a statement in a fresh interpreter and
reads ``sys.modules``. The special functions name SciPy's functions at registration and look
them up on their first call (``diffkit/ops/special_helpers.py``); the checks below make sure
every such name exists in ``scipy.special``, every one reaches its primitive through that
mechanism (so no call pays a lookup after the first), and the values are SciPy's own.
"""

import importlib
import json
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import scipy.special
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import diffkit.ops.special
import diffkit.scipy as dsp
from diffkit.core.primitive import PRIMITIVES, Primitive
from diffkit.ops.special_helpers import SciPyFunction, on_first_call
from diffkit.ops.special_series import _BERNOULLI

ROOT = Path(__file__).resolve().parents[1]

# SciPy's submodules that take tens to hundreds of milliseconds each, and the optional
# dependencies diffkit imports on use only.
HEAVY = ("scipy.special", "scipy.stats", "scipy.optimize", "scipy.integrate", "scipy.signal",
         "scipy.interpolate", "scipy.sparse", "dask", "distributed")
NAMESPACES = tuple(f"diffkit.scipy.{name}" for name in
                   ("special", "linalg", "signal", "stats", "integrate", "optimize"))


def run_fresh(code):
    """Run ``code`` in a fresh interpreter importing this checkout's diffkit; returns the
    JSON value of its last line of output."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def loaded_after(statement, watched):
    """The modules of ``watched`` in ``sys.modules`` after ``statement`` runs in a fresh
    interpreter."""
    return set(run_fresh(f"""
        import json, sys
        {statement}
        print(json.dumps([m for m in {list(watched)!r} if m in sys.modules]))
    """))


# --- what each import loads ---------------------------------------------------------------


def test_import_diffkit_loads_no_heavy_scipy_module_nor_dask():
    assert loaded_after("import diffkit", HEAVY + NAMESPACES + ("diffkit.scipy",)) == set()


def test_minimize_loads_neither_stats_nor_integrate_nor_signal():
    loaded = loaded_after("from diffkit.scipy.optimize import minimize",
                          HEAVY + NAMESPACES)
    assert "diffkit.scipy.optimize" in loaded   # the statement did run
    assert loaded.isdisjoint({"scipy.stats", "scipy.integrate", "scipy.signal",
                              "scipy.interpolate", "dask", "distributed",
                              "diffkit.scipy.stats", "diffkit.scipy.integrate",
                              "diffkit.scipy.signal", "diffkit.scipy.special",
                              "diffkit.scipy.linalg"}), loaded


@pytest.mark.parametrize("statement, expected", [
    ("import diffkit.scipy", set()),
    ("import diffkit.scipy.special", {"scipy.special", "diffkit.scipy.special"}),
    ("import diffkit.scipy.linalg", {"diffkit.scipy.linalg"}),
])
def test_a_namespace_loads_its_own_scipy_module_only(statement, expected):
    assert loaded_after(statement, HEAVY + NAMESPACES) == expected


def test_submodules_load_on_first_attribute_access():
    code = """
        import json, sys
        import diffkit.scipy as dsp
        before = "diffkit.scipy.stats" in sys.modules
        norm = dsp.stats.norm
        print(json.dumps([before, "diffkit.scipy.stats" in sys.modules,
                          type(norm).__module__]))
    """
    before, after, module = run_fresh(code)
    assert (before, after) == (False, True)
    assert module.startswith("diffkit.scipy.stats")


def test_the_package_lists_its_submodules_and_rejects_other_names():
    for name in ("special", "linalg", "signal", "stats", "integrate", "optimize"):
        assert name in dir(dsp) and name in dsp.__all__
        assert getattr(dsp, name) is importlib.import_module(f"diffkit.scipy.{name}")
    with pytest.raises(AttributeError, match="diffkit.scipy.*no attribute 'nonexistent'"):
        dsp.nonexistent  # noqa: B018
    assert not hasattr(dsp, "nonexistent")


# --- SciPy's special functions looked up on first use ------------------------------------

_STAND_INS = """
    import json, sys
    import numpy as np
    import diffkit
    from diffkit.core.primitive import PRIMITIVES
    stand_ins = {name: prim.impl.scipy_function.name for name, prim in PRIMITIVES.items()
                 if hasattr(prim.impl, "scipy_function")}
    loaded_before = "scipy.special" in sys.modules
    erf_p = PRIMITIVES["erf"]
    stand_in = erf_p.impl
    value = erf_p(np.array([0.5, -2.0])).tolist()
    print(json.dumps([stand_ins, loaded_before, "scipy.special" in sys.modules,
                      erf_p.impl is not stand_in, value]))
"""


def test_special_primitives_look_up_scipy_on_their_first_call():
    stand_ins, loaded_before, loaded_after_call, replaced, value = run_fresh(_STAND_INS)
    assert not loaded_before and loaded_after_call and replaced
    np.testing.assert_array_equal(value, scipy.special.erf(np.array([0.5, -2.0])))
    # every special function of SciPy that a primitive runs directly is named, and exists
    assert {"erf", "gammaln", "jv", "airy", "fresnel", "sici",
            "mathieu_characteristic_a"} <= set(stand_ins)
    missing = {prim: name for prim, name in stand_ins.items()
               if not callable(getattr(scipy.special, name, None))}
    assert not missing, f"primitives naming no scipy.special function: {missing}"


def _holds_scipy_name(fn, depth=3):
    """Whether a ``SciPyFunction`` sits in the closure of ``fn`` (up to ``depth`` nested
    closures): an implementation that would look SciPy's function up at every call."""
    if isinstance(fn, SciPyFunction):
        return True
    if depth == 0:
        return False
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            content = cell.cell_contents
        except ValueError:   # an empty cell
            continue
        if content is not fn and _holds_scipy_name(content, depth - 1):
            return True
    return False


def test_no_primitive_calls_a_scipy_name_at_every_call():
    # this process may have run some of them: resolved or stand-in, never a name in a closure
    slow = [name for name, prim in PRIMITIVES.items()
            if not hasattr(prim.impl, "scipy_function") and _holds_scipy_name(prim.impl)]
    assert not slow


def test_a_resolved_implementation_is_scipys_function_itself():
    prim = on_first_call(Primitive("lookup_check", None, nondiff=True, register=False),
                         SciPyFunction("ndtr"))
    stand_in = prim.impl
    x = np.linspace(-3.0, 3.0, 7)
    np.testing.assert_array_equal(prim.impl(x), scipy.special.ndtr(x))
    assert prim.impl is scipy.special.ndtr and prim.impl is not stand_in
    np.testing.assert_array_equal(stand_in(x), scipy.special.ndtr(x))   # still works


def test_a_wrapped_stand_in_is_left_in_place():
    """A test that wraps ``prim.impl`` (tests/test_primitives.py counts calls that way) keeps
    its wrapper: the stand-in replaces only itself."""
    prim = on_first_call(Primitive("wrap_check", None, nondiff=True, register=False),
                         SciPyFunction("expit"), lambda f: lambda x: 2.0 * f(x))
    calls = []
    inner = prim.impl

    def counting(*args):
        calls.append(args)
        return inner(*args)

    prim.impl = counting
    for x in (0.0, 1.0):
        assert prim.impl(np.float64(x)) == 2.0 * scipy.special.expit(x)
    assert prim.impl is counting and len(calls) == 2


def test_every_other_name_is_left_alone():
    prim = Primitive("plain_check", np.negative, nondiff=True, register=False)
    assert on_first_call(prim, np.negative) is prim and prim.impl is np.negative


UNARY = ("erf", "erfc", "gammaln", "digamma", "expit", "logit", "ndtr", "log_ndtr", "i0e",
         "j0", "k1", "dawsn", "spence", "exp1", "ellipk", "entr")


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(UNARY),
       x=hnp.arrays(st.sampled_from([np.float64, np.float32]),
                    hnp.array_shapes(min_dims=0, max_dims=2, max_side=4),
                    elements=st.floats(-30, 30, width=32)))
def test_special_functions_give_scipys_values_in_the_arguments_dtype(name, x):
    # the primitive itself (diffkit.scipy.special's wrapper would call SciPy directly here)
    with np.errstate(all="ignore"):
        expected = getattr(scipy.special, name)(x)
        got = getattr(diffkit.ops.special, name)(x)
    assert np.asarray(got).dtype == x.dtype
    np.testing.assert_array_equal(got, np.asarray(expected).astype(x.dtype))


# --- values computed at import without SciPy ------------------------------------------


def test_bernoulli_numbers_are_exact():
    """B_2n = (-1)^(n+1) 2 (2n)! zeta(2n) / (2 pi)^(2n); the odd ones past B_1 vanish."""
    assert _BERNOULLI[0] == 1.0 and _BERNOULLI[1] == -0.5
    assert np.all(_BERNOULLI[3::2] == 0.0)
    for n in range(1, len(_BERNOULLI) // 2 + 1):
        closed = (-1) ** (n + 1) * 2 * math.factorial(2 * n) * scipy.special.zeta(2 * n) \
            / (2 * math.pi) ** (2 * n)
        assert _BERNOULLI[2 * n] == pytest.approx(closed, rel=1e-14, abs=0)
