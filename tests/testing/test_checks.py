"""diffkit.testing's checkers fail, with a message naming the mode, when a rule is wrong."""

import numpy as np
import pytest

import diffkit.numpy as dnp
from diffkit.core.primitive import Primitive
from diffkit.testing import assert_jacobians_agree, check_grads


def _sine(name, jvp_scale, vjp_scale):
    """sin with its JVP and VJP scaled: (1, 1) is right, anything else is a broken rule."""
    prim = Primitive(name, np.sin, register=False)
    prim.jvp = lambda primals, tangents: (prim(primals[0]),
                                          tangents[0] * (jvp_scale * dnp.cos(primals[0])))
    prim.vjp = (lambda ct, out, x: ct * (vjp_scale * dnp.cos(x)),)
    prim.batch = lambda size, values, axes: (prim(values[0]), axes[0])
    return prim


X = np.array([0.3, -0.5, 1.1])


def test_correct_rules_pass():
    good = _sine("good_sin", 1.0, 1.0)
    check_grads(good, (X,), order=2)
    assert_jacobians_agree(good, X)


@pytest.mark.parametrize("modes, jvp_scale, vjp_scale, expected", [
    (("fwd",), 2.0, 1.0, "forward mode \\(jvp\\) at order 1"),
    (("rev",), 1.0, 2.0, "reverse mode \\(vjp\\) at order 1"),
    (("fwd", "rev"), 1.0, 2.0, "adjoint identity fails"),
])
def test_a_wrong_rule_is_reported(modes, jvp_scale, vjp_scale, expected):
    bad = _sine(f"bad_sin_{jvp_scale}_{vjp_scale}", jvp_scale, vjp_scale)
    with pytest.raises(AssertionError, match=expected):
        check_grads(bad, (X,), order=1, modes=modes)


def test_jacobian_disagreement_is_reported():
    bad = _sine("bad_sin_jac", 1.0, 3.0)
    with pytest.raises(AssertionError):
        assert_jacobians_agree(bad, X)
