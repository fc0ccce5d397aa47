"""The generic checker at the edges: every sample of tests/edge_records.py through
``diffkit.testing.edges.check_edge`` (value against NumPy/SciPy, jacfwd == jacrev bit for
bit, finite differences or the documented convention, vmap against loops, a symmetric Hessian
equal to finite differences of the gradient, float32 and complex64 kept).

A sample marked ``known`` fails today because of a bug another line of work is fixing: it is a
strict xfail, so the fix turning it green fails this test until the mark is removed.
"""

from __future__ import annotations

import numpy as np
import pytest
from edge_records import EDGES

from diffkit.testing.edges import check_edge


def _param(sample):
    marks = [pytest.mark.xfail(strict=True, reason=sample.known)] if sample.known else []
    return pytest.param(sample, id=sample.id, marks=marks)


@pytest.mark.filterwarnings("error::diffkit.errors.PerformanceWarning")
@pytest.mark.parametrize("sample", [_param(s) for s in EDGES])
def test_edge(sample):
    with np.errstate(all="ignore"):
        check_edge(sample.fun, sample.args, reference=sample.reference,
                   differentiable=bool(sample.differentiable), fd_side=sample.fd_side,
                   jacobian=sample.jacobian, hessian=sample.hessian, second_order=sample.second_order,
                   batching=sample.batching, dtypes=sample.dtypes,
                   value_rtol=sample.value_rtol, ulps=sample.ulps, fd_rtol=sample.fd_rtol)


def test_prod_with_an_infinite_entry_first_order():
    """The partials of prod([inf, 0, 2]) are (0 * 2, inf * 2, inf * 0): both engines give
    them, with no NaN leaking from the zero tangents of the other entries."""
    import diffkit as dk
    import diffkit.numpy as dnp

    x = np.array([np.inf, 0.0, 2.0])
    expected = np.array([0.0, np.inf, np.nan])
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(dk.jacfwd(dnp.prod)(x), expected)
        np.testing.assert_array_equal(dk.jacrev(dnp.prod)(x), expected)


# --- completeness: every primitive is visited at an edge -----------------------------------------


def _reached_by_edges():
    """The primitives whose implementation runs when each edge sample's function is
    evaluated, batched, pushed forward and pulled back at its point (rules included)."""
    import diffkit as dk
    from diffkit.core.primitive import PRIMITIVES
    from diffkit.testing.edges import _Vector

    reached = set()
    originals = {name: prim.impl for name, prim in PRIMITIVES.items()}

    def counting(name, impl):
        def impl_and_count(*args, **params):
            reached.add(name)
            return impl(*args, **params)
        return impl_and_count

    try:
        for name, prim in PRIMITIVES.items():
            prim.impl = counting(name, prim.impl)
        for sample in EDGES:
            with np.errstate(all="ignore"):
                try:
                    sample.fun(*sample.args)
                    dk.vmap(sample.fun)(*(np.stack([a, a]) for a in sample.args))
                    vec = _Vector(sample.fun, sample.args)
                    out, pullback = dk.vjp(vec, vec.point)
                    pullback(np.ones_like(out))
                    dk.jvp(vec, (vec.point,), (np.ones_like(vec.point),))
                except Exception:  # no float input or output; the sample's own test reports
                    pass           # anything else
    finally:
        for name, impl in originals.items():
            PRIMITIVES[name].impl = impl
    return reached


def test_every_primitive_has_an_edge_sample():
    """Every registered primitive is reached by some edge sample, or is in EXEMPT with the
    reason it has no edge of its own."""
    import test_primitives

    from edge_records import EXEMPT
    from diffkit.core.primitive import PRIMITIVES

    test_primitives._import_all_of_diffkit()
    missing = sorted(set(PRIMITIVES) - _reached_by_edges() - set(EXEMPT))
    assert not missing, f"primitives with no edge sample in tests/edge_records.py: {missing}"
    stale = sorted(set(EXEMPT) - set(PRIMITIVES))
    assert not stale, f"EXEMPT names primitives that no longer exist: {stale}"
