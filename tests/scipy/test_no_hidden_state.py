"""No hidden state in the solvers' derivatives (issue 30, item 3): Jacobians of ODE solutions
and of optima computed by tasks on a thread pool equal the serial ones exactly; a retained
pullback, a staged (``jit``) derivative and ``linear_solve_options`` can be used from several
threads at once; the ODE options cannot be changed, and the solve's statistics (an output of
the solve primitive) equal SciPy's own."""

import dataclasses
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import scipy.integrate as si
from hypothesis import given, settings
from hypothesis import strategies as st

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.scipy import optimize as dko
from diffkit.scipy.integrate import ode_field, ode_rules, ode_sweeps, odeint, solve_ivp

THREADS = 8
REPEATS = 3
TOL = dict(rtol=1e-9, atol=1e-9)
T = np.linspace(0.0, 2.0, 5)
P = np.array([1.0, 0.4, 1.2, 0.3])
Y0 = np.array([1.0, 0.8])


@pytest.fixture(scope="module")
def pool():
    with ThreadPoolExecutor(max_workers=THREADS) as executor:
        yield executor


def lotka_volterra(t, y, p):
    return dnp.stack([p[0] * y[0] - p[1] * y[0] * y[1], -p[2] * y[1] + p[3] * y[0] * y[1]])


def ivp_solution(p, y0):
    """The solution at the output times, flattened: 10 rows for jacrev."""
    return dnp.ravel(solve_ivp(lotka_volterra, (0.0, 2.0), y0, t_eval=T, args=(p,),
                               **TOL).y)


def odeint_solution(p, y0):
    return dnp.ravel(odeint(lotka_volterra, y0, T, args=(p,), tfirst=True, **TOL))


def stiff_solution(k, y0):
    """A stiff linear system through odeint (LSODA switches to its stiff method) and BDF."""
    def field(t, y, k):
        return dnp.stack([-k[0] * y[0] + y[1], -k[1] * y[1]])
    a = odeint(field, y0, T, args=(k,), tfirst=True, **TOL)
    b = solve_ivp(field, (0.0, 2.0), y0, method="BDF", t_eval=T[1::2], args=(k,), **TOL).y
    return dnp.concatenate([a[-1], b[:, -1]])


A0 = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])


def minimiser(b):
    """argmin 0.5 x'A0 x - b'x + 0.1 sum(x^4)/4: a nonlinear optimum (4 rows)."""
    return dko.minimize(lambda x, b: 0.5 * x @ A0 @ x - b @ x + 0.025 * dnp.sum(x ** 4),
                        np.zeros(3), args=(b,), options={"gtol": 1e-12}).x


def root_of(p):
    """The root of x^3 + a x - c for each entry (p = (a, c))."""
    return dko.root(lambda x, a, c: x ** 3 + a * x - c, np.ones(2), args=(p[:2], p[2:]),
                    tol=1e-13).x


CASES = {
    "solve_ivp": (ivp_solution, (0, 1), (P, Y0)),
    "odeint": (odeint_solution, (0, 1), (P, Y0)),
    "stiff": (stiff_solution, (0, 1), (np.array([50.0, 0.5]), np.array([1.0, 1.0]))),
    "minimize": (minimiser, 0, (np.array([1.0, -2.0, 0.5]),)),
    "root": (root_of, 0, (np.array([1.0, 2.0, 1.5, -0.5]),)),
}


def assert_same(got, expected):
    for g, e in zip(dk.tree_util.tree_leaves(got), dk.tree_util.tree_leaves(expected)):
        np.testing.assert_array_equal(g, e)


# --- Jacobians by tasks on a thread pool ----------------------------------------------------


@pytest.mark.parametrize("case", list(CASES))
def test_jacrev_on_a_thread_pool_equals_the_serial_jacobian(case, pool):
    fun, argnums, args = CASES[case]
    serial = dk.jacrev(fun, argnums=argnums)(*args)
    for _ in range(REPEATS):
        # one row per task: every thread runs its own forward pass and sweep at once
        threaded = dk.jacrev(fun, argnums=argnums, executor=pool, chunk_size=1)(*args)
        assert_same(threaded, serial)
    # and the value: forward mode agrees (to the solvers' tolerances)
    forward = dk.jacfwd(fun, argnums=argnums)(*args)
    for f, r in zip(dk.tree_util.tree_leaves(forward), dk.tree_util.tree_leaves(serial)):
        np.testing.assert_allclose(r, f, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("case", ["odeint", "minimize"])
def test_jacrev_with_the_automatic_chunks_on_a_thread_pool(case, pool):
    fun, argnums, args = CASES[case]
    serial = dk.jacrev(fun, argnums=argnums)(*args)
    for _ in range(REPEATS):
        assert_same(dk.jacrev(fun, argnums=argnums, executor=pool)(*args), serial)


# --- one tape, one staged program, used by several threads at once -----------------------


def run_together(tasks):
    """Run the thunks ``tasks`` on as many threads, started together; their results."""
    start = threading.Barrier(len(tasks))

    def run(task):
        start.wait()
        return task()

    with ThreadPoolExecutor(max_workers=len(tasks)) as executor:
        return list(executor.map(run, tasks))


@pytest.mark.parametrize("case", [pytest.param(case, marks=pytest.mark.slow)
                                  if case == "stiff" else case for case in CASES])
def test_one_pullback_called_from_several_threads_at_once(case):
    # the joint rules keep nothing between calls: each thread's sweep is its own
    fun, argnums, args = CASES[case]
    out, pull = dk.vjp(fun, *args)
    cotangents = [np.random.default_rng(k).normal(size=np.shape(out)) for k in range(THREADS)]
    serial = [pull(ct) for ct in cotangents]
    for _ in range(REPEATS):
        threaded = run_together([lambda ct=ct: pull(ct) for ct in cotangents])
        for got, expected in zip(threaded, serial):
            assert_same(got, expected)


def test_one_staged_gradient_replayed_from_several_threads_at_once():
    # the staged program holds one options object for every replay: a replay's statistics
    # and route hints are its own outputs, not attributes another replay may overwrite
    def loss(p, y0):
        return dnp.sum(odeint_solution(p, y0) ** 2)

    staged = dk.jit(dk.grad(loss, argnums=(0, 1)))
    points = [P * (1.0 + 0.05 * k) for k in range(THREADS)]
    serial = [staged(p, Y0) for p in points]      # recorded once, then replayed
    for got, p in zip(serial, points):
        for g, e in zip(got, dk.grad(loss, argnums=(0, 1))(p, Y0)):
            np.testing.assert_allclose(g, e, rtol=1e-10)
    for _ in range(REPEATS):
        threaded = run_together([lambda p=p: staged(p, Y0) for p in points])
        for got, expected in zip(threaded, serial):
            assert_same(got, expected)


def test_linear_solve_options_of_one_thread_leave_the_others_alone():
    b = np.array([1.0, -2.0, 0.5])
    dense = dk.jacrev(minimiser)(b)
    with dko.linear_solve_options(dense_max=0, rtol=1e-13):
        iterative = dk.jacrev(minimiser)(b)
    assert not np.array_equal(iterative, dense)      # CG's answer differs in its last bits
    np.testing.assert_allclose(iterative, dense, rtol=1e-9)
    entered, done = threading.Event(), threading.Event()

    def with_cg():
        with dko.linear_solve_options(dense_max=0, rtol=1e-13):
            entered.set()
            result = dk.jacrev(minimiser)(b)
            done.wait(timeout=60)      # still inside the block while the other one solves
        return result

    def with_defaults():
        entered.wait(timeout=60)
        try:
            return dk.jacrev(minimiser)(b)
        finally:
            done.set()

    with ThreadPoolExecutor(max_workers=2) as executor:
        cg, default = executor.submit(with_cg), executor.submit(with_defaults)
        np.testing.assert_array_equal(default.result(), dense)
        np.testing.assert_array_equal(cg.result(), iterative)
    np.testing.assert_array_equal(dk.jacrev(minimiser)(b), dense)   # restored here too


def test_a_block_around_jacrev_reaches_its_thread_pool_tasks():
    b = np.array([1.0, -2.0, 0.5])
    with dko.linear_solve_options(dense_max=0, rtol=1e-13):
        iterative = dk.jacrev(minimiser)(b)
        with ThreadPoolExecutor(max_workers=4) as pool:
            for _ in range(REPEATS):   # every task solves with CG, as the caller does
                np.testing.assert_array_equal(
                    dk.jacrev(minimiser, executor=pool, chunk_size=1)(b), iterative)
    assert not np.array_equal(iterative, dk.jacrev(minimiser)(b))


def test_linear_solve_options_nest_and_restore():
    settings_of = dko.implicit._SETTINGS.get
    before = dict(settings_of())
    with dko.linear_solve_options(dense_max=5):
        with dko.linear_solve_options(rtol=1e-12):
            assert settings_of()["dense_max"] == 5 and settings_of()["rtol"] == 1e-12
        assert settings_of()["rtol"] == before["rtol"]
        with pytest.raises(TypeError):
            settings_of()["dense_max"] = 0       # read-only: only a block replaces it
    assert dict(settings_of()) == before


# --- the options are frozen; the statistics are outputs -----------------------------------


def test_the_options_cannot_be_changed():
    options = ode_rules.Options("RK45", 1e-6, 1e-9, [("max_step", 0.5)])
    for name, value in (("rtol", 1e-3), ("stats", {}), ("steps", 3), ("stiff", True)):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(options, name, value)
    derived = options.derived([2])
    assert derived is not options and derived.items == (("max_step", 0.5),)
    assert options.rtol == 1e-6 and options.items == (("max_step", 0.5),)


def linear_field(t, y, a):
    return a @ y


A = np.array([[-1.0, 2.0], [-3.0, -4.0]])


def scipy_ivp(method, a=A):
    """SciPy's own solve (with the exact Jacobian, which diffkit gives the implicit
    methods)."""
    jac = {} if method in ("RK45", "DOP853") else {"jac": lambda t, y: a}
    return si.solve_ivp(lambda t, y: a @ y, (0.0, 3.0), Y0, method=method, t_eval=T * 1.5,
                        rtol=1e-8, atol=1e-10, **jac)


@pytest.mark.parametrize("method", ["RK45", "DOP853", "Radau", "BDF", "LSODA"])
def test_statistics_equal_scipys_with_and_without_derivatives(method):
    ref = scipy_ivp(method)
    expected = (ref.nfev, ref.njev, ref.nlu, ref.status)
    seen = []

    def solve(a, y0):
        sol = solve_ivp(linear_field, (0.0, 3.0), y0, method=method, t_eval=T * 1.5,
                        args=(a,), rtol=1e-8, atol=1e-10)
        seen.append((sol.nfev, sol.njev, sol.nlu, sol.status))
        assert sol.success and sol.message == ref.message
        return sol.y

    solve(A, Y0)
    dk.jacrev(solve, argnums=(0, 1))(A, Y0)
    dk.jvp(solve, (A, Y0), (np.ones((2, 2)), np.ones(2)))
    for counts in seen:
        assert all(type(c) is int for c in counts)   # Python integers, as SciPy's
        assert counts == expected


def test_statistics_of_a_batch_and_of_a_staged_solve_are_each_solves_own():
    scales = np.array([0.5, 1.0, 2.0])
    expected = [scipy_ivp("RK45", s * A).nfev for s in scales]
    assert len(set(expected)) > 1     # the members take different steps

    def nfev(s):
        return solve_ivp(linear_field, (0.0, 3.0), Y0, t_eval=T * 1.5, args=(s * A,),
                         rtol=1e-8, atol=1e-10).nfev

    np.testing.assert_array_equal(dk.vmap(nfev)(scales), expected)
    staged = dk.jit(nfev)
    assert [int(staged(s)) for s in scales] == expected   # each replay's own count


def test_odeint_statistics_are_lsodas():
    def field(t, y, k):
        return dnp.stack([-k[0] * y[0] + y[1], -k[1] * y[1]])

    k, y0 = np.array([50.0, 0.5]), np.array([1.0, 1.0])
    ts = np.linspace(0.0, 2.0, 9)
    _, info = si.odeint(lambda y, t: [-k[0] * y[0] + y[1], -k[1] * y[1]], y0, ts,
                        Dfun=lambda y, t: np.array([[-k[0], 1.0], [0.0, -k[1]]]),
                        rtol=1e-9, atol=1e-9, full_output=True)
    field_of, params = ode_field.as_field(field, 0.0, y0, (k,))
    options = ode_rules.Options("odeint", 1e-9, 1e-9, name="odeint")
    Y, stats, panels = ode_rules.odesolve(y0, 0.0, ts, params, field_of, options)
    counts = dict(zip(ode_sweeps.STATS, stats.tolist()))
    assert counts["nfev"] == info["nfe"][-1] and counts["njev"] == info["nje"][-1]
    assert counts["steps"] == info["nst"][-1] and counts["status"] == 0
    assert counts["stiff"] == int(np.any(info["mused"] == 2)) == 1   # LSODA went stiff
    assert panels.shape == (len(ts),) and panels[0] == 1 and np.all(panels >= 1)
    np.testing.assert_allclose(Y, si.odeint(lambda y, t: [-k[0] * y[0] + y[1], -k[1] * y[1]],
                                            y0, ts, rtol=1e-12, atol=1e-12), atol=1e-7)


# --- the route hint of a batch --------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 500), st.sampled_from([-1, 0, 1]),
                          st.lists(st.integers(1, 9), min_size=4, max_size=4)),
                min_size=1, max_size=5))
def test_the_hint_of_a_batch_takes_the_most_steps_and_panels(members):
    stats = np.stack([ode_sweeps.statistics(steps=steps, stiff=stiff)
                      for steps, stiff, _ in members])
    panels = np.array([p for _, _, p in members])
    info = ode_sweeps.SolveInfo.of(stats, panels)
    assert info.steps == max(steps for steps, _, _ in members)
    codes = {stiff for _, stiff, _ in members}
    assert info.stiff is (None if codes == {-1} else 1 in codes)
    np.testing.assert_array_equal(info.panels, panels.max(axis=0))
    one = ode_sweeps.SolveInfo.of(stats[0], panels[0])      # a single solve: its own
    assert one.steps == members[0][0]
    np.testing.assert_array_equal(one.panels, panels[0])
