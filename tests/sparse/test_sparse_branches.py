"""A cached sparsity pattern is reused only on the path it was detected on.

Each test changes exactly one thing a pattern depended on (a Python branch on the inputs,
an integer read, a mask, a plain argument that is not differentiated, a traced argument
under jit or vmap) and checks that the second call equals the dense derivative (jacfwd,
jacrev, hessian) and central finite differences; Hypothesis does the same for random small
programs with random branches. The caches: sparse_jacobian and sparse_hessian (every mode,
chunked, with an executor, under jit), the sparse path of least_squares and minimize
(staged and eager), and the sparse Jacobian solve_ivp gives its implicit methods.
"""

import concurrent.futures

import numpy as np
import pytest
import scipy.optimize
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.scipy import optimize as dko
from diffkit.scipy.optimize import sparse_path
from diffkit.scipy.optimize.staged import Stager

RTOL = 1e-12


def central_jacobian(fun, x, step=1e-6):
    """Central differences, one column per input entry (for smooth paths: each test keeps
    its points away from the branch boundaries)."""
    columns = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = step
        columns.append((np.ravel(fun(x + e)) - np.ravel(fun(x - e))) / (2 * step))
    return np.stack(columns, axis=1)


def assert_jacobian(jac_fn, fun, x):
    """The sparse Jacobian at ``x`` equals jacfwd, jacrev and finite differences."""
    sparse = jac_fn(x).toarray()
    np.testing.assert_allclose(sparse, dk.jacfwd(fun)(x), rtol=RTOL, atol=1e-14)
    np.testing.assert_allclose(sparse, dk.jacrev(fun)(x), rtol=RTOL, atol=1e-14)
    np.testing.assert_allclose(sparse, central_jacobian(fun, x), rtol=1e-6, atol=1e-7)


def assert_hessian(hess_fn, fun, x):
    sparse = hess_fn(x).toarray()
    np.testing.assert_allclose(sparse, dk.hessian(fun)(x), rtol=RTOL, atol=1e-13)
    np.testing.assert_allclose(sparse, central_jacobian(dk.grad(fun), x), rtol=1e-6,
                               atol=1e-6)


# Branch A reads each entry's left neighbour, branch B its mirror image: neither pattern
# holds the other, so a pattern kept from one branch is wrong on the other's diagonal too.
def branching(x):
    if x[0] > 0:
        return x * dnp.roll(x, 1)
    return dnp.sin(x) * x[::-1]


X_A = np.linspace(0.5, 1.5, 7)   # x[0] > 0: branch A
X_B = -X_A                        # branch B


@pytest.mark.parametrize("mode", ["auto", "forward", "reverse"])
def test_jacobian_branch_changes(mode):
    jac_fn = dk.sparse_jacobian(branching, mode=mode)
    assert_jacobian(jac_fn, branching, X_A)
    assert_jacobian(jac_fn, branching, X_B)
    assert_jacobian(jac_fn, branching, X_A)   # the first branch again: its own pattern
    np.testing.assert_array_equal(jac_fn.coloring(X_B).pattern.toarray(),
                                  dk.jacobian_sparsity(branching)(X_B).toarray())


def test_patterns_of_both_branches_are_kept():
    jac_fn = dk.sparse_jacobian(branching)
    first_a, first_b = jac_fn.coloring(X_A), jac_fn.coloring(X_B)
    assert first_a.pattern.nnz != first_b.pattern.nnz or \
        (first_a.pattern != first_b.pattern).nnz > 0
    for _ in range(2):   # alternating: each call uses the pattern kept for its branch
        assert jac_fn.coloring(X_A) is first_a
        assert jac_fn.coloring(X_B) is first_b


@pytest.mark.parametrize("chunk_size", [1, 2])
def test_jacobian_branch_changes_chunked(chunk_size):
    jac_fn = dk.sparse_jacobian(branching, chunk_size=chunk_size)
    assert_jacobian(jac_fn, branching, X_B)
    assert_jacobian(jac_fn, branching, X_A)


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_jacobian_branch_changes_with_an_executor(mode):
    # the passes run in worker threads, where no read is seen: a watched pass runs here
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        jac_fn = dk.sparse_jacobian(branching, mode=mode, chunk_size=1, executor=pool)
        assert_jacobian(jac_fn, branching, X_A)
        assert_jacobian(jac_fn, branching, X_B)


def test_output_size_changes_with_the_branch():
    def head_or_all(x):
        return x[:3] ** 2 if x[0] > 0 else x * dnp.roll(x, 2)

    jac_fn = dk.sparse_jacobian(head_or_all)
    assert jac_fn(X_A).shape == (3, 7)
    assert_jacobian(jac_fn, head_or_all, X_B)
    assert jac_fn(X_B).shape == (7, 7)


def test_integer_read_moves_the_dependence():
    def scaled_by_largest(x):
        k = int(dnp.argmax(x))           # an integer read: which column every row reads
        return x * x[k]

    jac_fn = dk.sparse_jacobian(scaled_by_largest)
    x = np.array([0.3, 1.2, 0.5, 0.7, 0.1])
    assert_jacobian(jac_fn, scaled_by_largest, x)
    assert_jacobian(jac_fn, scaled_by_largest, x[::-1].copy())


def test_mask_read_changes_the_rows():
    def positive_entries(x):
        return dnp.sin(x[x > 0]) * x[0]   # a mask read: which entries are kept

    jac_fn = dk.sparse_jacobian(positive_entries)
    x = np.array([0.4, -0.3, 0.8, -0.2, 0.6, 0.9])
    assert_jacobian(jac_fn, positive_entries, x)
    y = np.array([0.4, 0.3, -0.8, -0.2, 0.6, -0.9])   # as many entries, other places
    assert_jacobian(jac_fn, positive_entries, y)


def test_nested_branches_take_a_third_path():
    def nested(x):
        if x[0] > 0:
            if x[1] > 0:
                return x * dnp.roll(x, 1)
            return x * dnp.roll(x, -2)
        return x ** 3

    jac_fn = dk.sparse_jacobian(nested)
    for x in (X_A, X_B, X_A * np.array([1, -1, 1, 1, 1, 1, 1]), X_A):
        assert_jacobian(jac_fn, nested, x)


# --- Hessians ----------------------------------------------------------------------------


def branching_energy(x):
    if x[0] > 0:
        return dnp.sum(x * dnp.roll(x, 1) ** 2)
    return dnp.sum(dnp.cos(x) * x[::-1])


def linear_or_cubic(x):
    if x[0] > 0:
        return dnp.sum(3.0 * x)           # linear: a Hessian pattern without entries
    return dnp.sum(x ** 3 * dnp.roll(x, 1))


@pytest.mark.parametrize("fun", [branching_energy, linear_or_cubic])
def test_hessian_branch_changes(fun):
    hess_fn = dk.sparse_hessian(fun)
    assert_hessian(hess_fn, fun, X_A)
    assert_hessian(hess_fn, fun, X_B)
    assert_hessian(hess_fn, fun, X_A)


def test_hessian_branch_changes_chunked():
    hess_fn = dk.sparse_hessian(branching_energy, chunk_size=1)
    assert_hessian(hess_fn, branching_energy, X_B)
    assert_hessian(hess_fn, branching_energy, X_A)


def test_hessian_branch_changes_with_an_executor():
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        hess_fn = dk.sparse_hessian(branching_energy, chunk_size=1, executor=pool)
        assert_hessian(hess_fn, branching_energy, X_A)
        assert_hessian(hess_fn, branching_energy, X_B)


def test_jacobian_without_entries_on_the_first_branch():
    def constant_or_shift(x):
        return dnp.zeros(7) + 1.0 if x[0] > 0 else x * dnp.roll(x, 3)

    jac_fn = dk.sparse_jacobian(constant_or_shift)
    assert jac_fn(X_A).nnz == 0
    assert_jacobian(jac_fn, constant_or_shift, X_B)


# --- what else a pattern depends on ---------------------------------------------------------


def test_plain_argument_not_differentiated_changes():
    # a constant matrix keeps its zeros in the pattern: another matrix, another pattern
    def product(x, a):
        return a @ x

    jac_fn = dk.sparse_jacobian(product)
    x = np.linspace(0.1, 0.9, 4)
    for a in (np.eye(4), np.triu(np.ones((4, 4))), np.eye(4)):
        np.testing.assert_allclose(jac_fn(x, a).toarray(), a, rtol=RTOL, atol=0)
        assert jac_fn(x, a).nnz == np.count_nonzero(a)


def test_branch_on_a_plain_number_argument():
    def signed(x, s):
        return x * dnp.roll(x, 1) if s > 0 else x * x[::-1]

    jac_fn = dk.sparse_jacobian(signed)
    for s in (1.0, -1.0, 1.0):
        np.testing.assert_allclose(jac_fn(X_A, s).toarray(), dk.jacfwd(signed)(X_A, s),
                                   rtol=RTOL, atol=0)
        np.testing.assert_allclose(jac_fn(X_A, s).toarray(),
                                   central_jacobian(lambda y: signed(y, s), X_A),  # noqa: B023
                                   rtol=1e-6, atol=1e-7)


def test_where_on_a_fixed_mask_argument():
    # a where whose condition does not depend on the inputs keeps only its branch: the
    # mask is a plain argument, compared on every call
    def select(x, mask):
        return dnp.where(mask, x ** 2, dnp.roll(x, 1) * x)

    jac_fn = dk.sparse_jacobian(select)
    for mask in (X_A > 1.0, X_A < 1.0):
        np.testing.assert_allclose(jac_fn(X_A, mask).toarray(),
                                   dk.jacfwd(select)(X_A, mask), rtol=RTOL, atol=0)


def test_under_jit_a_branch_change_is_traced_again():
    staged = dk.jit(dk.sparse_jacobian(branching))
    for x in (X_A, X_B, X_A, X_B):
        np.testing.assert_allclose(staged(x).toarray(), dk.jacfwd(branching)(x),
                                   rtol=RTOL, atol=1e-14)
    staged_hess = dk.jit(dk.sparse_hessian(branching_energy))
    for x in (X_B, X_A, X_B):
        np.testing.assert_allclose(staged_hess(x).toarray(),
                                   dk.hessian(branching_energy)(x), rtol=RTOL, atol=1e-13)


def test_traced_matrix_under_jit_and_vmap():
    # a matrix traced by jit or batched by vmap changes with no read to check: its zeros
    # are not used, and the pattern holds for every matrix
    def product(x, a):
        return a @ x

    x = np.linspace(0.1, 0.9, 4)
    eye, upper = np.eye(4), np.triu(np.ones((4, 4)))
    staged = dk.jit(dk.sparse_jacobian(product))
    for a in (eye, upper):
        np.testing.assert_allclose(staged(x, a).toarray(), a, rtol=RTOL, atol=0)
    batch = dk.vmap(dk.sparse_jacobian(product), in_axes=(None, 0))(x, np.stack([eye, upper]))
    np.testing.assert_allclose(batch.toarray(), np.stack([eye, upper]), rtol=RTOL, atol=0)


def test_a_given_pattern_is_the_users_promise():
    # sparsity= is not checked against the path: the result keeps its structure
    pattern = dk.jacobian_sparsity(branching)(X_A)
    jac_fn = dk.sparse_jacobian(branching, sparsity=pattern)
    assert_jacobian(jac_fn, branching, X_A)
    on_b = jac_fn(X_B)
    np.testing.assert_array_equal(on_b.toarray() != 0, (on_b.toarray() != 0) & pattern.toarray())
    assert on_b.nnz == pattern.nnz


def test_random_draw_falls_back_to_the_dense_derivative():
    # a drawn value decides nothing a read could check: the dense derivative, with a warning
    rng = np.random.default_rng(0)

    def noisy(x):
        return x ** 2 * dnp.roll(x, 1) + rng.normal()

    def coin(x):
        return x * dnp.roll(x, 1) if rng.uniform() > 0.5 else dnp.sin(x) * x[::-1]

    with pytest.warns(dk.errors.PerformanceWarning, match="drew random numbers"):
        jac = dk.sparse_jacobian(noisy)(X_A)
    assert jac.nnz == X_A.size ** 2
    np.testing.assert_allclose(jac.toarray(), dk.jacfwd(noisy)(X_A), rtol=RTOL, atol=0)
    with pytest.warns(dk.errors.PerformanceWarning, match="drew random numbers"):
        hess = dk.sparse_hessian(lambda x: dnp.sum(noisy(x)))(X_A)
    np.testing.assert_allclose(hess.toarray(), dk.hessian(lambda x: dnp.sum(noisy(x)))(X_A),
                               rtol=RTOL, atol=1e-14)
    branch_a = dk.jacfwd(lambda x: x * dnp.roll(x, 1))(X_A)
    branch_b = dk.jacfwd(lambda x: dnp.sin(x) * x[::-1])(X_A)
    jac_fn = dk.sparse_jacobian(coin)
    for _ in range(4):
        with pytest.warns(dk.errors.PerformanceWarning):
            jac = jac_fn(X_A).toarray()
        assert np.allclose(jac, branch_a, rtol=RTOL, atol=0) or \
            np.allclose(jac, branch_b, rtol=RTOL, atol=0)


# --- the sparse path of the optimizers -----------------------------------------------------


def branching_residuals(x):
    # x0 = -0.5 takes the first branch, the solution x = 1 the second
    r = 10.0 * (x[1:] - x[:-1] ** 2)
    if x[0] > 0.5:
        r = r + 0.1 * x[1:] * x[:-1][::-1]
    return dnp.concatenate([r, 1.0 - x[:-1]])


@pytest.mark.parametrize("jit", [True, False])
def test_least_squares_jacobian_at_the_solution(jit):
    x0 = np.full(30, -0.5)
    fit = dko.least_squares(branching_residuals, x0, sparse=True, jit=jit)
    assert fit.x[0] > 0.5 and x0[0] < 0.5   # the solution is on the other branch
    dense = dk.jacfwd(branching_residuals)(fit.x)
    np.testing.assert_allclose(fit.jac.toarray(), dense, rtol=RTOL, atol=1e-14)
    np.testing.assert_allclose(fit.jac.toarray(), central_jacobian(branching_residuals, fit.x),
                               rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("stage", [True, False])
def test_sparse_path_evaluators_follow_the_branch(stage):
    stager = Stager(stage)
    jac = sparse_path.residual_jacobian(branching, X_A, True, stager)
    hess = sparse_path.objective_hessian(branching_energy, X_A, True, stager)
    for x in (X_A, X_B, X_A, X_B):
        values, jacobian = jac.values_and_jac(x)
        np.testing.assert_allclose(values, branching(x), rtol=RTOL)
        np.testing.assert_allclose(jacobian.toarray(), dk.jacfwd(branching)(x), rtol=RTOL,
                                   atol=1e-14)
        np.testing.assert_allclose(hess(x).toarray(), dk.hessian(branching_energy)(x),
                                   rtol=RTOL, atol=1e-13)
    assert len(jac.paths) == 2 and len(hess.paths) == 2


def test_sparse_path_first_evaluation_elsewhere_than_detection():
    # detected at X_A, first asked at X_B: the first pass runs at X_A to learn its path
    jac = sparse_path.residual_jacobian(branching, X_A, True, Stager(True))
    np.testing.assert_allclose(jac(X_B).toarray(), dk.jacfwd(branching)(X_B), rtol=RTOL,
                               atol=1e-14)


def test_constraint_derivatives_follow_the_branch():
    def constraint(x):
        return x[1:] ** 2 * x[:-1] if x[0] > 0 else dnp.sin(x[1:]) + x[:-1][::-1] ** 2

    jac, hess = sparse_path.constraint_derivatives(constraint, X_A, True, Stager(True), 0)
    v = np.linspace(1.0, 2.0, 6)
    for x in (X_A, X_B):
        np.testing.assert_allclose(jac(x).toarray(), dk.jacfwd(constraint)(x), rtol=RTOL,
                                   atol=1e-14)
        np.testing.assert_allclose(hess(x, v).toarray(),
                                   dk.hessian(lambda y: dnp.sum(v * constraint(y)))(x),
                                   rtol=RTOL, atol=1e-13)


def test_minimize_trust_constr_hessian_on_a_branching_objective(monkeypatch):
    def objective(x):   # x0 on the second branch, the minimum (x = 1) on the first
        base = dnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
        if x[0] > 0.5:
            return base + 0.5 * dnp.sum(x ** 2 * dnp.roll(x, 3) ** 2)
        return base

    given = {}
    real = scipy.optimize.minimize

    def recording(*args, **kwargs):
        given.update(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(scipy.optimize, "minimize", recording)
    result = dko.minimize(objective, np.full(12, 0.3), method="trust-constr", sparse=True,
                          options={"gtol": 1e-10, "xtol": 1e-12})
    assert result.x[0] > 0.5   # the minimiser is on the other branch than x0
    for x in (result.x, np.full(12, 0.3)):   # the Hessian SciPy was given, at both
        np.testing.assert_allclose(given["hess"](x).toarray(), dk.hessian(objective)(x),
                                   rtol=RTOL, atol=1e-10)


# --- solve_ivp -----------------------------------------------------------------------------


def ode_branching(t, y):
    if y[0] > 0.5:
        return -y * dnp.roll(y, 1)
    return -2.0 * y ** 2


def test_solve_ivp_sparse_jacobian_follows_the_branch():
    # the Jacobian the implicit methods get, on the branch where it was set up and on the
    # other one (ode_field keeps it per field: a field that branches on the state must not
    # keep the first branch's pattern)
    from diffkit.scipy.integrate import ode_field, solve_ivp

    y0 = np.full(20, 0.2)   # the second branch
    field, params = ode_field.as_field(ode_branching, 0.0, y0, ())
    jac = ode_field.Jacobian(field, params, y0, 0.0, True)
    for y in (np.linspace(0.6, 1.0, 20), y0, np.linspace(0.6, 1.0, 20)):
        np.testing.assert_allclose(jac(0.0, y).toarray(),
                                   dk.jacfwd(lambda z: ode_branching(0.0, z))(y), rtol=RTOL)
    start = np.linspace(0.6, 1.0, 20)   # y[0] falls below 0.5 during the solve
    opts = {"method": "BDF", "rtol": 1e-9, "atol": 1e-12, "t_eval": [0.5, 1.0, 2.0]}
    sparse = solve_ivp(ode_branching, (0.0, 2.0), start, sparse=True, **opts)
    dense = solve_ivp(ode_branching, (0.0, 2.0), start, sparse=False, **opts)
    assert sparse.status == 0
    np.testing.assert_allclose(sparse.y, dense.y, rtol=1e-6)


def test_sparse_jacobian_of_a_field_with_time_differentiated_too():
    # the way the solvers can use sparse_jacobian with detection: time among the inputs
    # (a plain argument that changes on every call would be detected again each time)
    def g(y, t):
        return ode_branching(t, y)

    jac_fn = dk.sparse_jacobian(g, argnums=(0, 1))
    for y in (np.full(20, 0.2), np.linspace(0.6, 1.0, 20)):
        full = jac_fn(y, np.asarray(0.3)).toarray()
        np.testing.assert_allclose(full[:, :20], dk.jacfwd(g)(y, 0.3), rtol=RTOL, atol=0)


# --- random programs with random branches --------------------------------------------------


STEPS = {
    "roll": lambda v, k: dnp.roll(v, k),
    "flip": lambda v, k: v[::-1],
    "sin": lambda v, k: dnp.sin(v),
    "neighbour": lambda v, k: v * dnp.roll(v, k),
    "cumsum": lambda v, k: dnp.cumsum(v) * 0.1,
    "square": lambda v, k: v ** 2,
    "pick": lambda v, k: v * v[k % v.shape[0]],
}


@st.composite
def programs(draw):
    """A program: a list of blocks, each either a step ``(name, k)`` or a branch
    ``("if", i, then_steps, else_steps)`` on the sign of entry ``i`` of the current value
    (or, for ``"ifmax"``, on which entry is largest: an integer read)."""
    step = st.tuples(st.sampled_from(sorted(STEPS)), st.integers(1, 4))
    block = st.one_of(
        step,
        st.tuples(st.just("if"), st.integers(0, 5), st.lists(step, min_size=1, max_size=3),
                  st.lists(step, min_size=1, max_size=3)),
        st.tuples(st.just("ifmax"), st.integers(0, 5), st.lists(step, min_size=1, max_size=2),
                  st.lists(step, min_size=1, max_size=2)))
    return draw(st.lists(block, min_size=1, max_size=4))


def run_program(program, x):
    v = x
    for block in program:
        if block[0] in STEPS:
            v = STEPS[block[0]](v, block[1])
            continue
        kind, i, then, other = block
        taken = (v[i] > 0) if kind == "if" else (int(dnp.argmax(v)) == i)
        for name, k in (then if taken else other):
            v = STEPS[name](v, k)
    return v + x   # the output always depends on every input


@given(program=programs(), seed=st.integers(0, 2**16), mode=st.sampled_from(
    ["auto", "forward", "reverse"]))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_random_branching_programs(program, seed, mode):
    rng = np.random.default_rng(seed)
    first = rng.uniform(0.2, 1.0, 6) * rng.choice([-1.0, 1.0], 6)
    second = -first[::-1].copy()   # other signs and another largest entry: other paths

    def fun(x):
        return run_program(program, x)

    jac_fn = dk.sparse_jacobian(fun, mode=mode)
    hess_fn = dk.sparse_hessian(lambda x: dnp.sum(fun(x) ** 2))
    for x in (first, second, first):
        np.testing.assert_allclose(jac_fn(x).toarray(), dk.jacfwd(fun)(x), rtol=1e-10,
                                   atol=1e-12)
        np.testing.assert_allclose(hess_fn(x).toarray(),
                                   dk.hessian(lambda y: dnp.sum(fun(y) ** 2))(x),
                                   rtol=1e-10, atol=1e-10)


def _cholesky_or_square(x):
    """Dense where the matrix is positive definite (every output reads every input through
    the Cholesky factor), diagonal where the factorisation raises and the function falls
    back."""
    a = np.diag(x) + 0.5 * (np.ones((x.size, x.size)) - np.eye(x.size))
    try:
        chol = np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        return x ** 2
    return x * np.sum(np.diag(chol))


@pytest.mark.parametrize("order", [("bad", "good", "bad"), ("good", "bad", "good")])
def test_a_path_chosen_by_an_exception_is_detected_again(order):
    points = {"bad": np.array([0.1, -1.0, 0.3]), "good": np.array([2.0, 3.0, 4.0])}
    jac = dk.sparse_jacobian(_cholesky_or_square)
    for name in order:
        x = points[name]
        np.testing.assert_allclose(jac(x).toarray(), dk.jacfwd(_cholesky_or_square)(x),
                                   rtol=1e-12, atol=1e-14)
