"""scikit-learn's array-API code differentiates unchanged (``array_api_dispatch=True``):
its kernels, distances, ``normalize`` and two regression metrics write into arrays they
have just made, which traced values support (``tests/test_in_place.py``). SciPy, which
scikit-learn calls, needs SCIPY_ARRAY_API=1 before it is imported: the cases run in a fresh
interpreter (``sklearn_array_api_cases.py``)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("sklearn", reason="scikit-learn is in the test extra (pip install -e "
                    "'.[test]'): these tests run its array-API code on traced values")

CASES = Path(__file__).with_name("sklearn_array_api_cases.py")
ROOT = Path(__file__).resolve().parents[1]

NAMES = ["rbf_kernel", "rbf_kernel(X)", "polynomial_kernel", "euclidean_distances",
         "cosine_similarity", "normalize", "mean_squared_error", "r2_score"]


@pytest.fixture(scope="module")
def results():
    env = dict(os.environ, SCIPY_ARRAY_API="1",
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, str(CASES)], capture_output=True, text=True,
                          env=env, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    return {r["name"]: r for r in map(json.loads, done.stdout.splitlines())}


@pytest.mark.parametrize("name", NAMES)
def test_sklearn_array_api_function_differentiates(results, name):
    """Reverse mode in both arguments against central differences (step 1e-6), forward mode
    equal to reverse mode to rounding (the chain rule sums the same products in another
    order), and vmap(grad) against differences example by example."""
    result = results[name]
    assert "error" not in result, result.get("error")
    assert result["reverse_vs_fd"] < 1e-6
    assert result["forward_vs_reverse"] < 1e-13
    assert result["vmap_vs_fd"] < 1e-6


def test_the_case_list_is_the_one_tested():
    text = CASES.read_text()
    assert all(f'"{name}"' in text for name in NAMES)
