"""What the ODE solvers remember between calls is reused only where everything that decided
it is the same (issue 27): vector fields whose Python branches on values (a derivative
across a switch of branch is refused with the switching time, a field that keeps its branch
differentiates as SciPy's solve does under finite differences), the adjoint sweep shared by
the rules of one backward pass (never by the next pass), and the patterns of exact sparse
Jacobians. Values are checked against SciPy's own solve, closed forms and finite
differences."""

import math
import re

import numpy as np
import pytest
import scipy.integrate as si
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.scipy.integrate import (
    BranchSwitchError,
    ClosureError,
    ode_branches,
    ode_field,
    ode_rules,
    odeint,
    solve_ivp,
)

TOL = dict(rtol=1e-10, atol=1e-12)
METHODS = ["RK45", "RK23", "DOP853", "Radau", "BDF", "LSODA", "odeint"]
TE = np.array([0.5, 1.0, 2.0])
Y0 = np.array([1.0, 2.0])


def switching(t, y, a):
    """Decays at rate a until y[0] falls to 0.5, then at 2a: the switch is at ln 2 / a."""
    return -a * y if y[0] > 0.5 else -2 * a * y


def keeping(t, y, a):
    """A branch on the state that y0 > 0 never leaves."""
    return -a * y if y[0] > 0 else a * y


def solution(fun, a, y0, te, method, **extra):
    """The solution at te (from t = 0), through diffkit."""
    if method == "odeint":
        t = dnp.concatenate([dnp.zeros(1), te])
        return odeint(fun, y0, t, args=(a,), tfirst=True, **TOL, **extra)[1:].T
    return solve_ivp(fun, (0.0, 2.5), y0, method=method, t_eval=te, args=(a,), **TOL,
                     **extra).y


def scipy_solution(fun, a, y0, te, method):
    """The same solution from SciPy alone (the field called on plain values)."""
    def f(t, y):
        return np.asarray(fun(t, y, a), float)
    if method == "odeint":
        return si.odeint(f, y0, np.concatenate([[0.0], te]), tfirst=True, **TOL)[1:].T
    return si.solve_ivp(f, (0.0, 2.5), y0, method=method, t_eval=te, **TOL).y


def central(f, x, h=1e-6):
    x = np.asarray(x, float)
    cols = []
    for e in np.eye(x.size):
        e = e.reshape(x.shape)
        cols.append((np.asarray(f(x + h * e)) - np.asarray(f(x - h * e))) / (2 * h))
    return np.stack(cols, axis=-1)


def reported_time(error):
    """The switching time an error message names."""
    return float(re.search(r"at t = ([-0-9.e+]+)", str(error.value)).group(1))


# --- a switch of branch: the solution is SciPy's, a derivative is refused ------------------

@pytest.mark.parametrize("method", METHODS)
def test_switching_field_solves_as_scipy_and_refuses_derivatives(method):
    a = 0.7
    np.testing.assert_allclose(solution(switching, a, Y0, TE, method),
                               scipy_solution(switching, a, Y0, TE, method), rtol=1e-7)

    def loss(a, y0):
        return dnp.sum(solution(switching, a, y0, TE, method))

    switch = math.log(2) / a     # y[0] = exp(-a t) reaches 0.5
    routes = [dk.grad(loss), dk.jacfwd(loss), dk.grad(loss, argnums=1),
              dk.jacrev(loss, argnums=1), dk.hessian(loss)]
    for route in routes:
        with pytest.raises(BranchSwitchError, match="events route") as error:
            route(a, Y0)
        # the time of the first evaluation on the other branch: within a step of the switch
        assert abs(reported_time(error) - switch) < 0.1


def test_refused_under_vmap_jit_and_second_order_modes():
    def loss(a, y0):
        return dnp.sum(solution(switching, a, y0, TE, "RK45"))

    rates = np.array([0.6, 0.8])
    routes = [lambda: dk.vmap(dk.grad(loss), (0, None))(rates, Y0),
              lambda: dk.vmap(dk.grad(loss, argnums=1), (None, 0))(0.7, np.stack([Y0, Y0])),
              lambda: dk.jit(dk.grad(loss))(0.7, Y0),
              lambda: dk.jacfwd(dk.jacfwd(loss))(0.7, Y0),
              lambda: dk.jacfwd(dk.grad(loss))(0.7, Y0),
              lambda: dk.jacrev(dk.grad(loss))(0.7, Y0)]
    for route in routes:
        with pytest.raises(BranchSwitchError, match=r"at t = "):
            route()
    # without a derivative, vmap and jit solve as a loop of SciPy's solves does
    expected = [np.sum(scipy_solution(switching, r, Y0, TE, "RK45")) for r in rates]
    np.testing.assert_allclose(dk.vmap(loss, (0, None))(rates, Y0), expected, rtol=1e-7)
    np.testing.assert_allclose(dk.jit(loss)(0.6, Y0), expected[0], rtol=1e-7)


def test_output_times_alone_differentiate_across_a_switch():
    # d y(t_k) / d t_k = f(t_k, y(t_k)) on whichever branch t_k is: no jump term
    def at(te):
        return solution(switching, 0.7, Y0, te, "DOP853")

    expected = central(lambda te: scipy_solution(switching, 0.7, Y0, te, "DOP853"), TE)
    np.testing.assert_allclose(dk.jacfwd(at)(TE), expected, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(dk.jacrev(at)(TE), expected, rtol=1e-6, atol=1e-9)


def test_a_closure_over_traced_values_that_switches():
    def loss(a):
        def field(t, y):
            return -a * y if y[0] > 0.5 else -2 * a * y
        return solve_ivp(field, (0.0, 2.0), np.array([1.0]), **TOL).y[0, -1]

    for route in (dk.grad, dk.jacfwd):
        with pytest.raises(BranchSwitchError, match="through args") as error:
            route(loss)(0.7)
        assert isinstance(error.value, ClosureError)
        assert abs(reported_time(error) - math.log(2) / 0.7) < 0.1
    # staged without a derivative the replay cannot follow the branch either: it says so
    # (never the first branch's formula replayed past the switch)
    with pytest.raises(ClosureError, match="through args"):
        dk.jit(loss)(0.7)


def test_a_closure_whose_branch_on_time_changes_names_args_only():
    # replayed with its traced values as parameters, the recording holds on its own branch
    # only; a branch on the time is no switch of the state: the advice is args alone
    def loss(a):
        def field(t, y):
            return -a * y + (1.0 if t < 1.0 else 0.0)
        return solve_ivp(field, (0.0, 2.0), np.array([0.3]), **TOL).y[0, -1]

    with pytest.raises(ClosureError, match=r"on the time changed at t = ") as error:
        dk.grad(loss)(0.7)
    assert not isinstance(error.value, BranchSwitchError)


def test_a_branch_on_time_alone_differentiates():
    # a switch at a fixed time has no jump term: the derivative is the branches' own.
    # y' = -a y + 1 until t = 1, then y' = -a y: y(2) = (y0 e^-a + (1 - e^-a) / a) e^-a
    def forced(t, y, a):
        return -a * y + (1.0 if t < 1.0 else 0.0)

    def end(a, y0):
        return solve_ivp(forced, (0.0, 2.0), y0, args=(a,), method="DOP853", **TOL).y[0, -1]

    def exact(a, y0):
        return (y0 * np.exp(-a) + (1 - np.exp(-a)) / a) * np.exp(-a)

    a, y0 = 0.7, np.array([0.3])
    np.testing.assert_allclose(end(a, y0), exact(a, 0.3), rtol=1e-8)
    # (finite differences of SciPy's solve are off by 5e-4 here: its steps across the
    # jump change with a; those of the closed form are not)
    np.testing.assert_allclose(dk.grad(end)(a, y0), central(lambda a: exact(a, 0.3), a),
                               rtol=1e-7)
    np.testing.assert_allclose(dk.jacfwd(end)(a, y0), central(lambda a: exact(a, 0.3), a),
                               rtol=1e-7)
    np.testing.assert_allclose(dk.grad(end, argnums=1)(a, y0), [np.exp(-2 * a)], rtol=1e-8)

    # ... but a switching time that moves with a parameter is refused
    def moving(t, y, a):
        return -y + (1.0 if t < a else 0.0)

    with pytest.raises(BranchSwitchError):
        dk.grad(lambda a: solve_ivp(moving, (0.0, 2.0), y0, args=(a,)).y[0, -1])(1.0)


def test_a_field_whose_reads_never_repeat_is_still_followed(monkeypatch):
    # math.sin(t) reads the time's value: every call is a new graph, past MAX_GRAPHS the
    # derivative's solves record each call (its branch still seen), the plain solve calls
    # the function itself
    def wobbly(t, y, a):
        return -a * y * (1 + 0.5 * math.sin(t))

    def wobbly_switch(t, y, a):
        return wobbly(t, y, a) if y[0] > 0.5 else -2 * a * y

    def end(fun):
        return lambda a: solve_ivp(fun, (0.0, 3.0), np.array([1.0]), args=(a,), **TOL).y[0, -1]

    def scipy_end(a):
        return si.solve_ivp(lambda t, y: wobbly(t, y, a), (0.0, 3.0), np.array([1.0]),
                            **TOL).y[0, -1]

    recorded = []
    real = ode_field.stage_flat
    monkeypatch.setattr(ode_field, "stage_flat",
                        lambda *a, **k: recorded.append(1) or real(*a, **k))
    expected = central(scipy_end, 0.7)
    np.testing.assert_allclose(dk.grad(end(wobbly))(0.7), expected, rtol=1e-6)
    np.testing.assert_allclose(dk.jacfwd(end(wobbly))(0.7), expected, rtol=1e-6)
    assert len(recorded) > 10      # the strict path past MAX_GRAPHS was taken
    with pytest.raises(BranchSwitchError):
        dk.grad(end(wobbly_switch))(0.7)


# --- a branch that never changes: derivatives as finite differences of SciPy's solve -------

@pytest.mark.parametrize("method", METHODS)
def test_a_kept_branch_differentiates_like_scipy(method):
    def loss(a, y0, te):
        return dnp.sum(solution(keeping, a, y0, te, method))

    def scipy_loss(a, y0, te):
        return np.sum(scipy_solution(keeping, a, y0, te, method))

    args = (0.7, Y0, TE)
    for argnum in range(3):
        def plain(x, argnum=argnum):
            return scipy_loss(*[x if k == argnum else v for k, v in enumerate(args)])
        expected = central(plain, args[argnum])
        for mode in (dk.grad, dk.jacfwd):
            np.testing.assert_allclose(mode(loss, argnums=argnum)(*args), expected,
                                       rtol=2e-6, atol=1e-8)


def test_a_kept_branch_under_vmap_equals_a_loop():
    def loss(a, y0):
        return dnp.sum(solution(keeping, a, y0, TE, "RK45"))

    starts = np.array([[1.0, 2.0], [2.0, 3.0]])
    loop = np.stack([dk.grad(loss, argnums=1)(0.7, y0) for y0 in starts])
    np.testing.assert_allclose(dk.vmap(dk.grad(loss, argnums=1), (None, 0))(0.7, starts),
                               loop, rtol=1e-12)
    np.testing.assert_allclose(dk.vmap(loss, (None, 0))(0.7, starts),
                               [loss(0.7, y0) for y0 in starts], rtol=1e-12)


def test_a_kept_branch_records_its_graph_once(monkeypatch):
    # the solver's calls replay one graph per staged function: none recorded per call
    made = []
    real = ode_field.make_graph
    monkeypatch.setattr(ode_field, "make_graph", lambda fn: made.append(fn) or real(fn))
    dk.grad(lambda a: dnp.sum(solution(keeping, a, Y0, TE, "RK45")))(0.7)
    assert 1 <= len(made) <= 3      # the field and its adjoint system, each once


def test_a_second_solve_on_the_other_branch_from_the_start():
    # the same function object, started on either side: each solve follows its own branch
    def decay(t, y):
        return -y if y[0] > 0 else -3 * y

    for y0 in (np.array([1.0, 1.0]), np.array([-1.0, 1.0]), np.array([1.0, 1.0])):
        np.testing.assert_allclose(
            solve_ivp(decay, (0.0, 1.0), y0, method="BDF", **TOL).y[:, -1],
            si.solve_ivp(lambda t, y: np.asarray(decay(t, y)), (0.0, 1.0), y0, method="BDF",
                         **TOL).y[:, -1], rtol=1e-7)


def test_a_changed_constant_on_the_other_branch_is_seen():
    # the staged replays of a field with branches belong to one solve: a constant that only
    # the other branch reads, changed between two solves, is never replayed stale
    rate = [1.0]

    def field(t, y):
        return -y if y[0] > 0.5 else -rate[0] * y

    def scipy_end():
        return si.solve_ivp(lambda t, y: np.asarray(field(t, y)), (0.0, 2.0), np.array([1.0]),
                            **TOL).y[0, -1]

    for value in (1.0, 3.0):
        rate[0] = value
        ours = solve_ivp(field, (0.0, 2.0), np.array([1.0]), **TOL).y[0, -1]
        np.testing.assert_allclose(ours, scipy_end(), rtol=1e-8)
        np.testing.assert_allclose(ours, 0.5 * np.exp(-value * (2 - math.log(2))), rtol=1e-8)


@settings(max_examples=12, deadline=None)
@given(st.floats(0.2, 1.5), st.floats(0.2, 3.0))
def test_refused_exactly_when_the_trajectory_switches(a, y0):
    # y[0] = y0 exp(-a t) crosses 0.5 before t = 2 iff y0 > 0.5 > y0 exp(-2a)
    crossing = math.log(y0 / 0.5) / a
    assume(abs(y0 - 0.5) > 0.05 and abs(crossing - 2.0) > 0.05)   # clear of the edges

    def end(a):
        return solve_ivp(switching, (0.0, 2.0), np.array([y0]), args=(a,), **TOL).y[0, -1]

    if 0 < crossing < 2.0:
        with pytest.raises(BranchSwitchError) as error:
            dk.grad(end)(a)
        assert abs(reported_time(error) - crossing) < 0.1
    else:
        def scipy_end(a):
            return si.solve_ivp(lambda t, y: np.asarray(switching(t, y, a)), (0.0, 2.0),
                                np.array([y0]), **TOL).y[0, -1]
        np.testing.assert_allclose(dk.grad(end)(a), central(scipy_end, a), rtol=1e-5,
                                   atol=1e-9)


# --- the field's evaluation at single points under transformations -------------------------

def test_field_call_rules_equal_the_plain_function():
    def kinked(t, y, a):     # Python branches on the values it receives
        return y * a ** 2 if y[0] > 0 else -y * a

    def call(t, y, a):
        return ode_branches.field_call_p(t, y, a, fn=kinked)

    y, a = np.array([0.5, 2.0]), 1.5
    np.testing.assert_allclose(call(0.0, y, a), y * a ** 2)
    np.testing.assert_allclose(dk.jacfwd(call, argnums=1)(0.0, y, a), a ** 2 * np.eye(2))
    np.testing.assert_allclose(dk.jacrev(call, argnums=2)(0.0, y, a), 2 * a * y)
    np.testing.assert_allclose(dk.hessian(lambda a: dnp.sum(call(0.0, y, a)))(a),
                               2 * np.sum(y))
    # under vmap each member takes its own branch
    ys = np.array([[0.5, 2.0], [-0.5, 2.0]])
    np.testing.assert_allclose(dk.vmap(call, (None, 0, None))(0.0, ys, a),
                               [ys[0] * a ** 2, -ys[1] * a])
    np.testing.assert_allclose(
        dk.vmap(dk.grad(lambda y: dnp.sum(call(0.0, y, a))))(ys),
        [np.full(2, a ** 2), np.full(2, -a)])


# --- one adjoint sweep per backward pass ------------------------------------------------

def lotka_volterra(y, t, p):
    return dnp.stack([p[0] * y[0] - p[1] * y[0] * y[1], -p[2] * y[1] + p[3] * y[0] * y[1]])


LV_P = np.array([1.0, 0.4, 1.2, 0.3])
LV_T = np.array([0.0, 1.0, 2.0])


def test_a_pullback_called_again_after_its_cotangent_changed():
    out, pull = dk.vjp(lambda p: odeint(lotka_volterra, Y0, LV_T, args=(p,), **TOL), LV_P)
    ct = np.ones((3, 2))
    first = pull(ct)[0].copy()
    ct *= 2.0                              # in place: the same object, another value
    np.testing.assert_allclose(pull(ct)[0], 2 * first, rtol=1e-8)
    ct[:] = np.arange(6.0).reshape(3, 2)
    _, fresh = dk.vjp(lambda p: odeint(lotka_volterra, Y0, LV_T, args=(p,), **TOL), LV_P)
    np.testing.assert_allclose(pull(ct)[0], fresh(ct.copy())[0], rtol=1e-10)


def test_one_sweep_serves_every_argument_of_one_pass(monkeypatch):
    sweeps = []
    real = ode_rules.sweep
    monkeypatch.setattr(ode_rules, "sweep", lambda *a: sweeps.append(1) or real(*a))

    def loss(p, y0):
        return dnp.sum(odeint(lotka_volterra, y0, LV_T, args=(p,), **TOL))

    dk.grad(loss, argnums=(0, 1))(LV_P, Y0)
    assert len(sweeps) == 1
    dk.grad(loss, argnums=(0, 1))(LV_P, Y0)
    assert len(sweeps) == 2



# --- Jacobians of a field with branches ----------------------------------------------------

def test_jacobian_of_a_field_with_branches_holds_on_every_branch():
    # the coupling differs by branch: a pattern found on one branch is wrong on the other,
    # so a field with branches is never compressed with a pattern of one branch
    n = 20

    def coupled(t, y):
        if y[0] > 0:
            return -y
        return -y + dnp.roll(y, 1)

    field, params = ode_field.as_field(coupled, 0.0, np.ones(n), ())
    for sparse in (None, True):
        jac = ode_field.Jacobian(field, params, np.ones(n), 0.0, sparse)
        for y in (np.ones(n), -np.ones(n)):
            J = jac(0.0, y)
            J = J.toarray() if hasattr(J, "toarray") else np.asarray(J)
            np.testing.assert_array_equal(J, dk.jacfwd(lambda y: coupled(0.0, y))(y))
