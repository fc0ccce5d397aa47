# %% [markdown]
# # Testing your own derivatives: `diffkit.testing` and Hypothesis
#
# diffkit's own rules are tested, but the derivative of *your* function can still be wrong:
# a `stop_gradient` in the wrong place, a hand-written gradient for SciPy with a sign slip in
# one branch, a "numerically stable" rewrite that changes the derivative at one point. Three
# kinds of check catch these:
#
# 1. **finite differences**: `check_grads(f, args, order=2)` compares forward and reverse
#    derivatives, up to second order, with central differences;
# 2. **cross-mode consistency**: `assert_jacobians_agree(f, *args)` builds the Jacobian from
#    unit-vector VJPs and from unit-vector JVPs (and `jacfwd`, `jacrev`) and compares them to
#    rounding, which also works where finite differences are too inaccurate;
# 3. **special points**: kinks, ties, zeros, where finite differences straddle the kink and
#    a derivative is a convention: check that the value is the one you intend, in both modes.
#
# Hypothesis then runs these checks on many generated inputs and shrinks any failure to a
# small example. `diffkit.testing.strategies` provides input strategies suited to
# derivatives: arrays of well-conditioned floats, away from given kinks, without ties.

# %%
import numpy as np
from hypothesis import Phase, given, settings

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.testing import assert_jacobians_agree, check_grads
from diffkit.testing.strategies import arrays, programs

# Reproducible runs for a notebook: a fixed seed, no example database, no time limit, and
# failure reports without the coverage-based "explanation" (it lists file paths).
settings.register_profile("notebook", derandomize=True, database=None, deadline=None,
                          max_examples=40, phases=[Phase.explicit, Phase.generate, Phase.shrink])
settings.load_profile("notebook")
rng = np.random.default_rng(0)

# %% [markdown]
# ## 1. Finite differences with `check_grads`
#
# A logistic-regression loss in three arguments. `check_grads` perturbs every floating-point
# argument along a random direction and compares `jvp` and `vjp` with central differences,
# then does the same for the derivative functions themselves (order 2: forward-over-forward,
# reverse-over-forward, forward-over-reverse, reverse-over-reverse). It returns nothing when
# all agree.

# %%
def logistic_loss(w, X, y):
    z = X @ w
    return dnp.mean(dnp.logaddexp(0.0, z) - y * z)

w = rng.normal(size=3)
X = rng.normal(size=(8, 3))
y = (rng.random(8) < 0.5).astype(float)

check_grads(logistic_loss, (w, X, y), order=2)
assert_jacobians_agree(logistic_loss, w, X, y)

# And the gradient has the closed form Xᵀ (σ(Xw) − y) / N:
sigma = 1 / (1 + np.exp(-X @ w))
np.testing.assert_allclose(dk.grad(logistic_loss)(w, X, y), X.T @ (sigma - y) / len(y),
                           rtol=1e-12)
print("logistic_loss: derivatives agree with finite differences and across modes")

# %% [markdown]
# A bug it catches: normalising a vector while treating the norm as a constant
# (`stop_gradient`) gives the wrong derivative. The message names the argument, the mode,
# the order and the output entry that differ, with both numbers.

# %%
def normalize(x):
    return x / dk.stop_gradient(dnp.sqrt(dnp.sum(x ** 2)))    # bug: the norm depends on x

try:
    check_grads(normalize, (np.array([0.3, -1.2, 2.0]),), order=2)
except AssertionError as error:
    message = str(error)
    print(message)
else:
    raise AssertionError("check_grads should have caught the stop_gradient")
assert "forward mode" in message and "args[0]" in message

def normalize_fixed(x):
    return x / dnp.sqrt(dnp.sum(x ** 2))

check_grads(normalize_fixed, (np.array([0.3, -1.2, 2.0]),), order=2)

# %% [markdown]
# ## 2. Property tests with Hypothesis
#
# One input is an anecdote. A property test states what must hold for *every* input and
# lets Hypothesis search for a counterexample. Calling a `@given` function runs the search.
#
# **Finite differences, everywhere.** A softmax cross-entropy, on logit vectors of length 5
# with entries in [-3, 3]:

# %%
def cross_entropy(logits, target):
    return -dnp.sum(target * (logits - dnp.log(dnp.sum(dnp.exp(logits)))))

@given(arrays(shape=(5,), min_value=-3.0, max_value=3.0))
def test_cross_entropy_matches_finite_differences(logits):
    target = np.eye(5)[1]
    check_grads(cross_entropy, (logits, target), order=2)
    # closed form: softmax(logits) - target
    p = np.exp(logits - logits.max())
    np.testing.assert_allclose(dk.grad(cross_entropy)(logits, target), p / p.sum() - target,
                               rtol=1e-10, atol=1e-12)

test_cross_entropy_matches_finite_differences()
print("cross_entropy: 40 inputs checked")

# %% [markdown]
# **Cross-mode consistency, for programs you did not write.** `programs()` draws random
# straight-line programs of diffkit.numpy calls (elementwise functions, reductions,
# reshapes, indexing, `matmul`, `einsum`, with broadcasting) with inputs for them. Every
# program's forward and reverse Jacobians must agree. (A `Program`'s `repr` is its source
# code, so a failing example that Hypothesis prints can be pasted and run.)

# %%
longer_programs = []

@given(programs(max_steps=6))
def test_forward_and_reverse_agree(case):
    program, args = case
    assert_jacobians_agree(program, *args)
    if len(program.steps) >= 5:
        longer_programs.append(program)

test_forward_and_reverse_agree()
assert longer_programs
print("one of the programs checked:\n")
print(longer_programs[0])
print("\n40 random programs: jacfwd == jacrev == unit VJPs == unit JVPs")

# %% [markdown]
# **Your hand-written gradient against diffkit's.** Suppose SciPy gets a gradient written
# by hand, for speed or because it came from a paper: the Huber loss, quadratic for
# `|r| ≤ δ` and linear outside. This version has a slip in the branch for large negative
# residuals (it forgot the sign). A test on a few positive residuals would pass. The
# property test compares it with `dk.grad` of the loss itself and finds the bug:

# %%
DELTA = 1.0

def huber(r):
    small = dnp.abs(r) <= DELTA
    return dnp.sum(dnp.where(small, 0.5 * r ** 2, DELTA * (dnp.abs(r) - 0.5 * DELTA)))

def huber_gradient_by_hand(r):
    return np.where(np.abs(r) <= DELTA, r, DELTA)        # bug: should be DELTA * sign(r)

tried = []

@given(arrays(shape=(3,), min_value=-3.0, max_value=3.0, avoid=(-DELTA, DELTA)))
def test_huber_gradient(r):
    tried.append(r)
    np.testing.assert_allclose(huber_gradient_by_hand(r), dk.grad(huber)(r), rtol=1e-12)

try:
    test_huber_gradient()
except AssertionError as error:
    print("\n".join(getattr(error, "__notes__", [])))   # Hypothesis's report of the input
else:
    raise AssertionError("the property test should have found the sign bug")
# Hypothesis runs the shrunk failing example last: it has an entry below -δ.
smallest_failure = tried[-1]
assert np.any(smallest_failure < -DELTA), smallest_failure

# %% [markdown]
# Hypothesis shrinks the failing input towards a simple one: zeros, and one entry below
# `-δ` (the margin `avoid=(-δ, δ)` keeps entries 0.1 away from the kinks, where finite
# differences and hand rules are ambiguous). With the sign restored, the property holds:

# %%
def huber_gradient_fixed(r):
    return np.where(np.abs(r) <= DELTA, r, DELTA * np.sign(r))

@given(arrays(shape=(3,), min_value=-3.0, max_value=3.0, avoid=(-DELTA, DELTA)))
def test_huber_gradient_fixed(r):
    np.testing.assert_allclose(huber_gradient_fixed(r), dk.grad(huber)(r), rtol=1e-12)
    check_grads(huber, (r,), order=2)

test_huber_gradient_fixed()
print("huber: the fixed gradient matches diffkit on 40 inputs away from the kinks")

# %% [markdown]
# ## 3. Special points
#
# At a kink there is no derivative, finite differences straddle it, and the property tests
# above deliberately stayed away. Test these points on their own, with the value you
# intend. diffkit picks one convention per point and uses it in every mode (the table is
# `docs/conventions.md`): `abs` has derivative 0 at 0, `maximum(x, y)` splits a tie half and
# half, a norm has derivative 0 at the zero vector. For the Huber loss at `r = ±δ` both
# branches have slope `±δ`, so the derivative there is unambiguous and must be exactly that,
# from both engines:

# %%
at_kinks = np.array([-DELTA, DELTA, 0.0])
expected = np.array([-DELTA, DELTA, 0.0])
np.testing.assert_allclose(dk.grad(huber)(at_kinks), expected, rtol=1e-12)
np.testing.assert_allclose(dk.jacfwd(huber)(at_kinks), expected, rtol=1e-12)
assert_jacobians_agree(huber, at_kinks)

conventions = {
    "d/dx |x| at 0": (dk.grad(dnp.abs)(0.0), 0.0),
    "d/dx maximum(x, 1) at x = 1": (dk.grad(lambda x: dnp.maximum(x, 1.0))(1.0), 0.5),
    "d/dx maximum(x, x)": (dk.grad(lambda x: dnp.maximum(x, x))(2.0), 1.0),
    "grad of ||x|| at x = 0": (dk.grad(dnp.linalg.norm)(np.zeros(3)), np.zeros(3)),
}
for name, (got, want) in conventions.items():
    print(f"{name:30s} = {got}")
    np.testing.assert_array_equal(got, want)

# %% [markdown]
# A property test can cover special points too, by drawing them on purpose: here inputs
# with ties (`distinct=False` is the default, and small integers make ties likely), where
# the gradient of `max` must still sum to 1 (it is split among the tied entries), in both
# modes.

# %%
@given(arrays(shape=(4,), min_value=-2.0, max_value=2.0).map(np.round))
def test_max_gradient_sums_to_one(x):
    g_rev = dk.grad(dnp.max)(x)
    g_fwd = dk.jacfwd(dnp.max)(x)
    np.testing.assert_allclose(g_rev, g_fwd, rtol=1e-12)
    np.testing.assert_allclose(g_rev.sum(), 1.0, rtol=1e-12)
    ties = x == x.max()
    np.testing.assert_allclose(g_rev[ties], 1.0 / ties.sum(), rtol=1e-12)

test_max_gradient_sums_to_one()
print("max: the gradient is split evenly among ties, in both modes")

# %% [markdown]
# ## In a test suite
#
# The same functions go into a `tests/test_my_model.py` unchanged: drop the explicit calls
# and let pytest collect the `test_*` functions. `check_grads` and `assert_jacobians_agree`
# raise `AssertionError`, so they work under pytest, unittest or a plain script.
