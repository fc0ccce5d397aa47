"""The adjoint sweeps of ODE solutions (diffkit/scipy/integrate/ode_sweeps.py): each route
gives the closed-form derivatives of linear systems (through expm and expm_frechet) and
finite differences of SciPy's own solution; the transition route restarts where its matrix
becomes ill-conditioned and hands over to the explicit route where even one interval is
too much. Also the fields' staged functions shared across solves of one program
(ode_field.program_cache): reused when the program is the same, never when a closed-over
value changed."""

import numpy as np
import pytest
import scipy.integrate as si
from scipy.linalg import expm, expm_frechet

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.jit.randomness import RandomDrawError
from diffkit.scipy.integrate import ode_field, ode_sweeps, odeint

# y' = A y, dissipative and non-normal: eigenvalues -1 and -3, so over [0, 20] the
# transition matrix's condition number grows far past CONDITION_LIMIT
A = np.array([[-1.0, 0.7], [0.0, -3.0]])
Y0 = np.array([1.0, -2.0])
T = np.linspace(0.0, 20.0, 81)
WEIGHTS = np.cos(np.arange(T.size * 2.0)).reshape(T.size, 2)
TOL = dict(rtol=1e-11, atol=1e-13)


def linear(y, t, A):
    return A @ y


def linear_loss(A, y0):
    return dnp.sum(odeint(linear, y0, T, args=(A,), **TOL) * WEIGHTS)


def closed_forms():
    """d loss / d A and d loss / d y0 from expm and expm_frechet."""
    d_y0 = sum(expm(t * A).T @ w for t, w in zip(T, WEIGHTS))
    d_A = np.zeros((2, 2))
    for i in range(2):
        for j in range(2):
            E = np.zeros((2, 2))
            E[i, j] = 1.0
            d_A[i, j] = sum(w @ expm_frechet(t * A, t * E, compute_expm=False) @ Y0
                            for t, w in zip(T, WEIGHTS))
    return d_A, d_y0


@pytest.fixture
def calls(monkeypatch):
    """Counts of the routes taken and of the transition route's segments."""
    counts = {"transition": 0, "explicit": 0, "dense": 0, "segments": 0, "restarts": 0}
    for name in ("transition", "explicit", "dense"):
        real = getattr(ode_sweeps, f"{name}_sweep")

        def spy(*args, _real=real, _name=name, **kwargs):
            counts[_name] += 1
            return _real(*args, **kwargs)
        monkeypatch.setattr(ode_sweeps, f"{name}_sweep", spy)
    real_conditioned = ode_sweeps._well_conditioned

    def conditioned(W):
        good = real_conditioned(W)
        counts["segments"] += 1
        counts["restarts"] += good < len(W) - 1
        return good
    monkeypatch.setattr(ode_sweeps, "_well_conditioned", conditioned)
    return counts


def test_transition_route_restarts_and_equals_closed_forms(calls):
    d_A, d_y0 = closed_forms()
    g_A, g_y0 = dk.grad(linear_loss, argnums=(0, 1))(A, Y0)
    assert calls["transition"] == 1 and calls["explicit"] == calls["dense"] == 0
    assert calls["restarts"] >= 2           # several segments over the 80 intervals
    np.testing.assert_allclose(g_y0, d_y0, rtol=1e-7)
    np.testing.assert_allclose(g_A, d_A, rtol=1e-7)


def test_transition_route_hands_over_to_the_explicit_route(calls, monkeypatch):
    monkeypatch.setattr(ode_sweeps, "CONDITION_LIMIT", 1.0)   # no interval is good enough
    d_A, d_y0 = closed_forms()
    g_A, g_y0 = dk.grad(linear_loss, argnums=(0, 1))(A, Y0)
    assert calls["transition"] == 1 and calls["explicit"] == 1
    np.testing.assert_allclose(g_y0, d_y0, rtol=1e-7)
    np.testing.assert_allclose(g_A, d_A, rtol=1e-7)


def test_larger_states_take_the_explicit_route(calls, monkeypatch):
    monkeypatch.setattr(ode_sweeps, "TRANSITION_MAX", 1)
    d_A, d_y0 = closed_forms()
    g_A, g_y0 = dk.grad(linear_loss, argnums=(0, 1))(A, Y0)
    assert calls["transition"] == 0 and calls["explicit"] == 1
    np.testing.assert_allclose(g_y0, d_y0, rtol=1e-7)
    np.testing.assert_allclose(g_A, d_A, rtol=1e-7)


def lotka_volterra(y, t, p):
    return dnp.stack([p[0] * y[0] - p[1] * y[0] * y[1], -p[2] * y[1] + p[3] * y[0] * y[1]])


LV_P = np.array([1.5, 1.0, 3.0, 1.0])
LV_T = np.linspace(0.0, 10.0, 100)


def test_transition_route_many_parameters_and_outputs(calls):
    # 40 parameters (the last 36 scale the first rate weakly), 100 output times
    p = np.concatenate([LV_P, np.linspace(0.5, 1.5, 36)])

    def field(y, t, p):
        scale = 1.0 + 1e-2 * dnp.sum(p[4:] ** 2) / p[4:].size
        return lotka_volterra(y, t, dnp.concatenate([p[:1] * scale, p[1:4]]))

    def loss(p):
        return dnp.sum(odeint(field, np.array([1.0, 1.0]), LV_T, args=(p,), **TOL) ** 2)

    def loss_scipy(p):
        def f(y, t):
            scale = 1.0 + 1e-2 * np.sum(p[4:] ** 2) / p[4:].size
            return [p[0] * scale * y[0] - p[1] * y[0] * y[1], -p[2] * y[1] + p[3] * y[0] * y[1]]
        return np.sum(si.odeint(f, [1.0, 1.0], LV_T, rtol=1e-12, atol=1e-12) ** 2)

    g = dk.grad(loss)(p)
    assert calls["transition"] == 1 and calls["restarts"] == 0
    for i in (0, 1, 2, 3, 4, 39):
        e = np.zeros_like(p)
        e[i] = 1e-4
        fd = (loss_scipy(p + e) - loss_scipy(p - e)) / 2e-4
        np.testing.assert_allclose(g[i], fd, rtol=1e-5, atol=1e-6 * np.abs(g).max())
    np.testing.assert_allclose(dk.jacfwd(loss)(p), g, rtol=1e-6, atol=1e-9 * np.abs(g).max())


def test_transition_route_without_parameters_and_under_vmap(calls):
    def end(y0):
        return odeint(lotka_volterra, y0, LV_T[:30], args=(LV_P,), **TOL)[-1]

    y0 = np.array([1.0, 1.0])
    jac = dk.jacrev(end)(y0)      # args are constants: no parameter cotangent
    np.testing.assert_allclose(jac, dk.jacfwd(end)(y0), rtol=1e-6)
    batch = np.array([[1.0, 1.0], [0.5, 2.0], [2.0, 0.7]])
    grads = dk.vmap(dk.grad(lambda y0: dnp.sum(end(y0))))(batch)
    for row, y0 in zip(grads, batch):
        np.testing.assert_allclose(row, dk.grad(lambda y0: dnp.sum(end(y0)))(y0), rtol=1e-12)
    assert calls["transition"] >= 5


# --- staged functions shared across solves -------------------------------------------------

def count_recordings(monkeypatch):
    made = []
    real = ode_field.make_graph

    def counting(fn):
        made.append(fn)
        return real(fn)
    monkeypatch.setattr(ode_field, "make_graph", counting)
    return made


def test_a_second_solve_of_the_same_program_records_nothing(monkeypatch):
    made = count_recordings(monkeypatch)

    def loss(p):
        return dnp.sum(odeint(lotka_volterra, np.array([1.0, 1.0]), LV_T[:20], args=(p,)))

    first = dk.grad(loss)(LV_P)
    recorded = len(made)
    assert recorded >= 2                     # the field and its adjoint system
    second = dk.grad(loss)(LV_P * 1.01)      # new parameter values: the same program
    assert len(made) == recorded
    assert not np.allclose(first, second)
    np.testing.assert_array_equal(dk.grad(loss)(LV_P), first)


def test_a_changed_closed_over_array_or_number_is_seen(monkeypatch):
    made = count_recordings(monkeypatch)
    rates = np.array([-0.5, -2.0])
    t = np.array([0.0, 1.0])

    def decay(y, t):
        return rates * y

    y0 = np.array([1.0, 1.0])
    np.testing.assert_allclose(odeint(decay, y0, t, **TOL)[-1], np.exp(rates), rtol=1e-9)
    rates[1] = -1.0                          # changed in place
    np.testing.assert_allclose(odeint(decay, y0, t, **TOL)[-1], np.exp(rates), rtol=1e-9)
    assert len(made) == 2                    # a new program, recorded anew

    def make(k):
        def f(y, t):
            return -k * y
        return f

    for k in (0.5, 0.25):
        g = dk.grad(lambda y0, k=k: dnp.sum(odeint(make(k), y0, t, **TOL)[-1]))(y0)
        np.testing.assert_allclose(g, np.exp(-k) * np.ones(2), rtol=1e-9)


def test_program_keys_tell_constants_apart_by_their_bits():
    from diffkit.interpreters.staging import stage_flat

    def key(c):
        _, rec = stage_flat(lambda y: [y * c], [np.ones(2)])
        return ode_field.program_key(rec, [])

    assert key(0.0) == key(0.0)
    assert key(0.0) != key(-0.0)
    assert key(np.array([1.0, 2.0])) != key(np.array([1.0, 2.5]))
    assert key(np.array([1.0, 2.0])) == key(np.array([1.0, 2.0]))


def test_a_field_that_draws_random_numbers_is_refused():
    rng = np.random.default_rng(0)

    def noisy(y, t):
        return -y + rng.normal(size=2)

    with pytest.raises(RandomDrawError, match="random"):
        odeint(noisy, np.ones(2), np.array([0.0, 1.0]))


@pytest.mark.parametrize("hint", [True, False])
def test_long_output_intervals_get_more_gauss_panels(calls, monkeypatch, hint):
    # three output times over [0, 5]: each interval spans many of LSODA's steps, so its
    # parameter integral needs several panels: the forward solve's steps ask for them, or
    # without that hint the interval is solved again alone with more panels
    from diffkit.scipy.integrate import ode_rules

    monkeypatch.setattr(ode_sweeps, "OUTPUTS_PER_STEP", 0.0)   # the transition route
    refined, layouts = [], []
    real_refine, real_times = ode_sweeps._Segment._refine, ode_sweeps.gauss_times

    def refine(self, j, edges, panels, z0):
        refined.append(panels)
        return real_refine(self, j, edges, panels, z0)

    def gauss_times(edges, panels):
        layouts.append(list(panels))
        return real_times(edges, panels)
    monkeypatch.setattr(ode_sweeps._Segment, "_refine", refine)
    monkeypatch.setattr(ode_sweeps, "gauss_times", gauss_times)
    if not hint:
        monkeypatch.setattr(ode_rules, "panels_needed", lambda lengths, *_: np.ones(
            len(lengths), dtype=int))
    t = np.array([0.0, 2.5, 5.0])

    def loss(p):
        return dnp.sum(odeint(lotka_volterra, np.array([1.0, 1.0]), t, args=(p,), **TOL) ** 2)

    def loss_scipy(p):
        return np.sum(si.odeint(lambda y, s: [p[0] * y[0] - p[1] * y[0] * y[1],
                                              -p[2] * y[1] + p[3] * y[0] * y[1]],
                                [1.0, 1.0], t, rtol=1e-12, atol=1e-12) ** 2)

    g = dk.grad(loss)(LV_P)
    assert calls["transition"] == 1
    if hint:
        assert min(layouts[0]) > 3       # from the forward solve's steps
    else:
        assert layouts[0] == [1, 1] and len(refined) == 2 and min(refined) > 3
    forward = dk.jacfwd(loss)(LV_P)
    np.testing.assert_allclose(g, forward, rtol=1e-7)
    fd = [(loss_scipy(LV_P + e) - loss_scipy(LV_P - e)) / 2e-5 for e in 1e-5 * np.eye(4)]
    np.testing.assert_allclose(g, fd, rtol=1e-5)


def test_the_route_follows_the_density_of_output_times(calls):
    def loss(t):
        return lambda p: dnp.sum(odeint(lotka_volterra, np.array([1.0, 1.0]), t, args=(p,)))

    dk.grad(loss(np.linspace(0.0, 10.0, 4)))(LV_P)      # few outputs: explicit
    assert calls["explicit"] == 1 and calls["transition"] == 0
    dk.grad(loss(np.linspace(0.0, 10.0, 200)))(LV_P)    # many: transition
    assert calls["explicit"] == 1 and calls["transition"] == 1


def test_rows_written_out_or_batched_give_the_same_gradient(monkeypatch):
    # Lotka-Volterra computes with numbers: its transition products are written out row by
    # row; batched over the rows they are the same products
    def loss(p):
        return dnp.sum(odeint(lotka_volterra, np.array([1.0, 1.0]), LV_T, args=(p,), **TOL))

    unrolled = dk.grad(loss)(LV_P)
    monkeypatch.setattr(ode_field, "UNROLLED_ROWS", 0)
    monkeypatch.setattr(ode_field, "_PROGRAMS", type(ode_field._PROGRAMS)())
    np.testing.assert_allclose(dk.grad(loss)(LV_P), unrolled, rtol=1e-12)
    np.testing.assert_allclose(unrolled, dk.jacfwd(loss)(LV_P), rtol=1e-7)


@pytest.mark.parametrize("method", ["RK45", "DOP853"])
def test_explicit_methods_with_dense_outputs_take_the_transition_route(calls, monkeypatch,
                                                                      method):
    # solve_ivp's output times need not start at t0: the sweep ends at t0 without a jump
    from diffkit.scipy.integrate import solve_ivp

    monkeypatch.setattr(ode_sweeps, "OUTPUTS_PER_STEP", 0.0)   # dense enough at any rtol
    t_eval = np.linspace(0.5, 8.0, 80)

    def loss(p, y0):
        sol = solve_ivp(lambda t, y, p: lotka_volterra(y, t, p), (0.0, 8.0), y0,
                        method=method, t_eval=t_eval, args=(p,), rtol=1e-10, atol=1e-12)
        return dnp.sum(sol.y ** 2)

    y0 = np.array([1.0, 1.0])
    g_p, g_y0 = dk.grad(loss, argnums=(0, 1))(LV_P, y0)
    assert calls["transition"] == 1 and calls["explicit"] == 0
    f_p, f_y0 = dk.jacfwd(loss, argnums=(0, 1))(LV_P, y0)
    np.testing.assert_allclose(g_p, f_p, rtol=1e-6)
    np.testing.assert_allclose(g_y0, f_y0, rtol=1e-6)

    def loss_scipy(p):
        sol = si.solve_ivp(lambda t, y: [p[0] * y[0] - p[1] * y[0] * y[1],
                                         -p[2] * y[1] + p[3] * y[0] * y[1]],
                           (0.0, 8.0), y0, method="DOP853", t_eval=t_eval, rtol=1e-12,
                           atol=1e-13)
        return np.sum(sol.y ** 2)

    fd = [(loss_scipy(LV_P + e) - loss_scipy(LV_P - e)) / 2e-5 for e in 1e-5 * np.eye(4)]
    np.testing.assert_allclose(g_p, fd, rtol=1e-5)


def test_a_chaotic_system_shortens_its_segments(calls):
    # Lorenz over [0, 5]: the adjoint's transition matrix grows by orders of magnitude
    # within a few intervals, so LSODA cannot follow it over the whole span at once; the
    # segments shorten and restart, and the gradient still equals forward mode
    def lorenz(y, t, p):
        return dnp.stack([p[0] * (y[1] - y[0]), y[0] * (p[1] - y[2]) - y[1],
                          y[0] * y[1] - p[2] * y[2]])

    t = np.linspace(0.0, 5.0, 200)

    def loss(p):
        return dnp.sum(odeint(lorenz, np.ones(3), t, args=(p,), rtol=1e-10, atol=1e-10) ** 2)

    p = np.array([10.0, 28.0, 8 / 3])
    g = dk.grad(loss)(p)
    assert calls["transition"] == 1 and calls["segments"] > 5
    np.testing.assert_allclose(g, dk.jacfwd(loss)(p), rtol=1e-6)


# --- second order: the transition route written with the solve primitive ----------------

@pytest.fixture
def resolved(monkeypatch):
    from diffkit.scipy.integrate import ode_rules

    counts = {"transition": 0, "intervals": 0}
    for name in ("transition", "intervals"):
        real = getattr(ode_rules, f"_resolve_{name}")

        def spy(*args, _real=real, _name=name, **kwargs):
            counts[_name] += 1
            return _real(*args, **kwargs)
        monkeypatch.setattr(ode_rules, f"_resolve_{name}", spy)
    return counts


def test_hessian_through_the_transition_route(resolved):
    def loss(p, t):
        return dnp.sum(odeint(lotka_volterra, np.array([1.0, 1.0]), t, args=(p,), **TOL) ** 2)

    t = np.linspace(0.0, 6.0, 60)
    forward = dk.jacfwd(dk.jacfwd(loss))(LV_P, t)
    np.testing.assert_allclose(dk.hessian(loss)(LV_P, t), forward, rtol=1e-6)
    assert resolved["transition"] >= 1 and resolved["intervals"] == 0
    # reverse over reverse, and the mixed derivative in the output times
    np.testing.assert_allclose(dk.jacrev(dk.grad(loss))(LV_P, t), forward, rtol=1e-6)
    mixed = dk.jacfwd(dk.grad(loss), argnums=1)(LV_P, t)
    for k in (5, 30, 59):
        e = np.zeros_like(t)
        e[k] = 1e-5
        column = (dk.jacfwd(loss)(LV_P, t + e) - dk.jacfwd(loss)(LV_P, t - e)) / 2e-5
        np.testing.assert_allclose(mixed[:, k], column, rtol=1e-5,
                                   atol=1e-7 * np.abs(mixed).max())


def test_second_order_follows_restarts_and_the_hand_over(resolved, monkeypatch):
    # the damped system restarts its segments; with a limit that one interval reaches the
    # sweep hands over to the explicit route, and second order follows the same plan
    def first(A):
        return dk.grad(linear_loss, argnums=1)(A, Y0)

    forward = dk.jacfwd(lambda A: dk.jacfwd(linear_loss, argnums=1)(A, Y0))(A)
    np.testing.assert_allclose(dk.jacfwd(first)(A), forward, rtol=1e-6,
                               atol=1e-9 * np.abs(forward).max())
    assert resolved["transition"] >= 1 and resolved["intervals"] == 0
    monkeypatch.setattr(ode_sweeps, "CONDITION_LIMIT", 1.0)
    calls_before = resolved["intervals"]
    np.testing.assert_allclose(dk.jacfwd(first)(A), forward, rtol=1e-6,
                               atol=1e-9 * np.abs(forward).max())
    assert resolved["intervals"] > calls_before
