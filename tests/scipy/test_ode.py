"""solve_ivp and odeint: solutions equal SciPy's, derivatives equal closed forms (linear
systems through expm and expm_frechet) and central finite differences of SciPy's own
solution; forward and reverse mode agree; vmap equals a loop; jit and hessian compose."""

import numpy as np
import pytest
import scipy.integrate as si
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.linalg import expm, expm_frechet

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.scipy.integrate import ODESolveError, odeint, solve_ivp

TIGHT = dict(rtol=1e-10, atol=1e-12)


def central(f, x, h=1e-6):
    x = np.asarray(x, float)
    cols = []
    for e in np.eye(x.size):
        e = e.reshape(x.shape)
        cols.append((np.asarray(f(x + h * e)) - np.asarray(f(x - h * e))) / (2 * h))
    return np.stack(cols, axis=-1)


# --- y' = A y: closed forms ---------------------------------------------------------------

A = np.array([[-0.5, 1.0, 0.0], [-1.0, -0.2, 0.3], [0.1, 0.0, -0.8]])
Y0 = np.array([1.0, -0.5, 2.0])
T = 1.7


def linear(t, y, A):
    return A @ y


def linear_end(A, y0, t):
    sol = solve_ivp(linear, (0.0, t), y0, args=(A,), method="DOP853", **TIGHT)
    return sol.y[:, -1]


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_linear_derivative_in_A(mode):
    jac = (dk.jacrev if mode == "rev" else dk.jacfwd)(linear_end)(A, Y0, T)
    for i in range(3):
        for j in range(3):
            E = np.zeros((3, 3))
            E[i, j] = 1.0
            expected = expm_frechet(T * A, T * E, compute_expm=False) @ Y0
            np.testing.assert_allclose(jac[:, i, j], expected, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_linear_derivative_in_y0_and_t(mode):
    jac = (dk.jacrev if mode == "rev" else dk.jacfwd)(linear_end, argnums=(1, 2))(A, Y0, T)
    np.testing.assert_allclose(jac[0], expm(T * A), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(jac[1], A @ expm(T * A) @ Y0, rtol=1e-6)


def test_linear_solution_and_t_eval_derivatives():
    te = np.array([0.3, 0.9, 1.7])

    def at(te):
        return solve_ivp(linear, (0.0, 2.0), Y0, t_eval=te, args=(A,), **TIGHT).y

    np.testing.assert_allclose(at(te), np.stack([expm(t * A) @ Y0 for t in te], 1),
                               rtol=1e-7)
    for jac in (dk.jacrev(at)(te), dk.jacfwd(at)(te)):
        for k, t in enumerate(te):
            np.testing.assert_allclose(jac[:, k, k], A @ expm(t * A) @ Y0, rtol=1e-6)
            other = [j for j in range(3) if j != k]
            np.testing.assert_array_equal(jac[:, k, other], 0.0)


def test_initial_time_derivative():
    def from_t0(t0):
        return solve_ivp(linear, (t0, 2.0), Y0, args=(A,), **TIGHT).y[:, -1]

    expected = -expm((2.0 - 0.4) * A) @ A @ Y0
    np.testing.assert_allclose(dk.jacrev(from_t0)(0.4), expected, rtol=1e-6)
    np.testing.assert_allclose(dk.jacfwd(from_t0)(0.4), expected, rtol=1e-6)


def test_linear_hessian_in_t():
    # d2/dt2 of sum(expm(tA) y0) = sum(A^2 expm(tA) y0)
    def total(t):
        return dnp.sum(solve_ivp(linear, (0.0, t), Y0, args=(A,), **TIGHT).y[:, -1])

    expected = np.sum(A @ A @ expm(T * A) @ Y0)
    np.testing.assert_allclose(dk.hessian(total)(T), expected, rtol=1e-5)
    np.testing.assert_allclose(dk.jacfwd(dk.jacfwd(total))(T), expected, rtol=1e-5)


# --- Lotka-Volterra ------------------------------------------------------------------------

P = np.array([1.5, 1.0, 3.0, 1.0])
LV_Y0 = np.array([1.0, 1.0])
TE = np.linspace(0.0, 4.0, 9)


def lv(t, y, p):
    return dnp.stack([p[0] * y[0] - p[1] * y[0] * y[1], -p[2] * y[1] + p[3] * y[0] * y[1]])


def lv_np(t, y, p):
    return np.array([p[0] * y[0] - p[1] * y[0] * y[1], -p[2] * y[1] + p[3] * y[0] * y[1]])


def lv_loss(p, y0):
    sol = solve_ivp(lv, (0.0, 4.0), y0, t_eval=TE, args=(p,), **TIGHT)
    return dnp.sum(sol.y ** 2)


def lv_loss_scipy(p, y0):
    sol = si.solve_ivp(lv_np, (0.0, 4.0), y0, t_eval=TE, args=(p,), rtol=1e-12, atol=1e-12)
    return np.sum(sol.y ** 2)


def test_lotka_volterra_solution_equals_scipy():
    ours = solve_ivp(lv, (0.0, 4.0), LV_Y0, t_eval=TE, args=(P,), rtol=1e-8, atol=1e-8)
    ref = si.solve_ivp(lv_np, (0.0, 4.0), LV_Y0, t_eval=TE, args=(P,), rtol=1e-8, atol=1e-8)
    np.testing.assert_array_equal(ours.y, ref.y)
    assert ours.nfev == ref.nfev and ours.success and ours.status == 0
    np.testing.assert_array_equal(ours.t, TE)


def test_lotka_volterra_gradients_match_finite_differences():
    gp, gy = dk.grad(lv_loss, argnums=(0, 1))(P, LV_Y0)
    np.testing.assert_allclose(gp, central(lambda p: lv_loss_scipy(p, LV_Y0), P), rtol=1e-5)
    np.testing.assert_allclose(gy, central(lambda y: lv_loss_scipy(P, y), LV_Y0), rtol=1e-5)
    fp, fy = dk.jacfwd(lv_loss, argnums=(0, 1))(P, LV_Y0)
    np.testing.assert_allclose(fp, gp, rtol=1e-6)
    np.testing.assert_allclose(fy, gy, rtol=1e-6)


def test_closure_over_traced_parameters():
    def loss(p):
        def field(t, y):
            return lv(t, y, p * 1.0)
        return dnp.sum(solve_ivp(field, (0.0, 4.0), LV_Y0, t_eval=TE, **TIGHT).y ** 2)

    expected = dk.grad(lv_loss)(P, LV_Y0)
    np.testing.assert_allclose(dk.grad(loss)(P), expected, rtol=1e-8)
    np.testing.assert_allclose(dk.jacfwd(loss)(P), expected, rtol=1e-6)


def test_pytree_args():
    def field(t, y, params):
        return lv(t, y, dnp.concatenate([params["growth"], params["rest"]]))

    def loss(params):
        sol = solve_ivp(field, (0.0, 4.0), LV_Y0, t_eval=TE, args=(params,), **TIGHT)
        return dnp.sum(sol.y ** 2)

    g = dk.grad(loss)({"growth": P[:1], "rest": P[1:]})
    expected = dk.grad(lv_loss)(P, LV_Y0)
    np.testing.assert_allclose(np.concatenate([g["growth"], g["rest"]]), expected, rtol=1e-8)


def test_vmap_over_initial_states_equals_loop():
    starts = np.array([[1.0, 1.0], [0.5, 2.0], [2.0, 0.3]])

    def final(y0):
        return solve_ivp(lv, (0.0, 2.0), y0, t_eval=[1.0, 2.0], args=(P,), rtol=1e-8,
                         atol=1e-8).y[:, -1]

    batched = dk.vmap(final)(starts)
    np.testing.assert_array_equal(batched, np.stack([final(y) for y in starts]))
    grads = dk.vmap(dk.grad(lambda y: dnp.sum(final(y))))(starts)
    np.testing.assert_array_equal(grads, np.stack([dk.grad(lambda y: dnp.sum(final(y)))(y)
                                                   for y in starts]))


def test_jit_composes():
    g = dk.jit(dk.grad(lv_loss))
    np.testing.assert_allclose(g(P, LV_Y0), dk.grad(lv_loss)(P, LV_Y0), rtol=1e-12)
    np.testing.assert_allclose(g(P * 1.01, LV_Y0), dk.grad(lv_loss)(P * 1.01, LV_Y0),
                               rtol=1e-12)


def test_hessian_matches_finite_differences_of_gradient():
    def loss(p):
        sol = solve_ivp(lv, (0.0, 2.0), LV_Y0, t_eval=TE[:5], args=(p,), **TIGHT)
        return dnp.sum(sol.y ** 2)

    H = dk.hessian(loss)(P)
    np.testing.assert_allclose(H, H.T, rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(H, central(dk.grad(loss), P, h=1e-5), rtol=1e-4, atol=1e-6)


# --- odeint --------------------------------------------------------------------------------

def lv_y_first(y, t, a, b, c, d):
    return dnp.stack([a * y[0] - b * y[0] * y[1], -c * y[1] + d * y[0] * y[1]])


def test_odeint_matches_scipy_and_gradients():
    t = np.linspace(0.0, 3.0, 7)
    ours = odeint(lv_y_first, LV_Y0, t, args=tuple(P))
    ref = si.odeint(lambda y, t, *p: lv_np(t, y, p), LV_Y0, t, args=tuple(P))
    assert ours.shape == (7, 2)
    np.testing.assert_allclose(ours, ref, rtol=1e-6)

    def loss(p, y0, t):
        return dnp.sum(odeint(lv_y_first, y0, t, args=tuple(p[i] for i in range(4)),
                              rtol=1e-11, atol=1e-11) ** 2)

    def loss_scipy(p, y0, t):
        return np.sum(si.odeint(lambda y, t, *q: lv_np(t, y, q), y0, t, args=tuple(p),
                                rtol=1e-12, atol=1e-12) ** 2)

    g = dk.grad(loss, argnums=(0, 1, 2))(P, LV_Y0, t)
    np.testing.assert_allclose(g[0], central(lambda p: loss_scipy(p, LV_Y0, t), P), rtol=1e-5)
    np.testing.assert_allclose(g[1], central(lambda y: loss_scipy(P, y, t), LV_Y0), rtol=1e-5)
    np.testing.assert_allclose(g[2], central(lambda s: loss_scipy(P, LV_Y0, s), t, h=1e-4),
                               rtol=1e-5, atol=1e-6)
    f = dk.jacfwd(loss, argnums=(0, 1, 2))(P, LV_Y0, t)
    for a, b in zip(f, g):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-8)


# --- Robertson (stiff) ----------------------------------------------------------------------

K = np.array([0.04, 3e7, 1e4])
ROB_T = np.array([1e-2, 1.0, 10.0, 100.0])


def robertson(t, y, k):
    return dnp.stack([-k[0] * y[0] + k[2] * y[1] * y[2],
                      k[0] * y[0] - k[2] * y[1] * y[2] - k[1] * y[1] ** 2,
                      k[1] * y[1] ** 2])


def robertson_np(t, y, k):
    return np.array([-k[0] * y[0] + k[2] * y[1] * y[2],
                     k[0] * y[0] - k[2] * y[1] * y[2] - k[1] * y[1] ** 2,
                     k[1] * y[1] ** 2])


W = np.array([1.0, 1e4, 1.0])


@pytest.mark.parametrize("method", ["BDF", "Radau", "LSODA"])
def test_robertson_gradients(method):
    y0 = np.array([1.0, 0.0, 0.0])
    opts = dict(rtol=1e-9, atol=1e-13)

    def loss(logk):
        sol = solve_ivp(robertson, (0.0, 100.0), y0, method=method, t_eval=ROB_T,
                        args=(dnp.exp(logk),), **opts)
        return dnp.sum(sol.y.T * W)

    def loss_scipy(logk):
        sol = si.solve_ivp(robertson_np, (0.0, 100.0), y0, method="Radau", t_eval=ROB_T,
                           args=(np.exp(logk),), rtol=1e-12, atol=1e-16)
        return np.sum(sol.y.T * W)

    logk = np.log(K)
    g = dk.grad(loss)(logk)
    np.testing.assert_allclose(g, central(loss_scipy, logk, h=1e-5), rtol=1e-4)
    np.testing.assert_allclose(dk.jacfwd(loss)(logk), g, rtol=1e-4)


# --- errors --------------------------------------------------------------------------------

def test_bad_t_span_and_options():
    with pytest.raises(ValueError, match="t_span"):
        solve_ivp(lv, (1.0, 1.0), LV_Y0, args=(P,))
    with pytest.raises(ValueError, match="t_span"):
        solve_ivp(lv, (0.0,), LV_Y0, args=(P,))
    with pytest.raises(ValueError, match="t_eval"):
        solve_ivp(lv, (0.0, 1.0), LV_Y0, t_eval=[0.5, 2.0], args=(P,))
    with pytest.raises(dk.errors.OptionError, match="events"):
        solve_ivp(lv, (0.0, 1.0), LV_Y0, events=lambda t, y, p: y[0], args=(P,))
    with pytest.raises(dk.errors.OptionError, match="dense_output"):
        solve_ivp(lv, (0.0, 1.0), LV_Y0, dense_output=True, args=(P,))
    with pytest.raises(dk.errors.OptionError, match="method"):
        solve_ivp(lv, (0.0, 1.0), LV_Y0, method="Euler", args=(P,))


def test_failed_solve_raises_never_a_derivative():
    def blowup(t, y):
        return y ** 2

    with pytest.raises(ODESolveError, match="failed"):
        solve_ivp(blowup, (0.0, 2.0), np.array([1.0]))
    with pytest.raises(ODESolveError):
        dk.grad(lambda y0: dnp.sum(solve_ivp(blowup, (0.0, 2.0), y0).y))(np.array([1.0]))


# --- the sparse Jacobian of the implicit methods ---------------------------------------------

def brusselator_1d(t, y, n=32, a=1.0, b=3.0, alpha=0.02):
    u, v = y[:n], y[n:]
    lap_u = dnp.roll(u, 1) + dnp.roll(u, -1) - 2 * u
    lap_v = dnp.roll(v, 1) + dnp.roll(v, -1) - 2 * v
    return dnp.concatenate([a + u * u * v - (b + 1) * u + alpha * (n - 1) ** 2 * lap_u,
                            b * u - u * u * v + alpha * (n - 1) ** 2 * lap_v])


def test_sparse_jacobian_same_solution_fewer_evaluations():
    n = 32
    x = np.linspace(0, 1, n)
    y0 = np.concatenate([1 + np.sin(2 * np.pi * x), np.full(n, 3.0)])
    pattern = dk.jacobian_sparsity(lambda y: brusselator_1d(0.0, y))(y0)
    calls = []

    def counted(t, y):
        calls.append(t)
        return np.asarray(brusselator_1d(t, y))

    opts = dict(method="BDF", rtol=1e-8, atol=1e-10, t_eval=[0.5, 2.0])
    ref = si.solve_ivp(counted, (0.0, 2.0), y0, jac_sparsity=pattern, **opts)
    ours = solve_ivp(brusselator_1d, (0.0, 2.0), y0, **opts)
    forced = solve_ivp(brusselator_1d, (0.0, 2.0), y0, sparse=True, **opts)
    dense = solve_ivp(brusselator_1d, (0.0, 2.0), y0, sparse=False, **opts)
    for sol in (ours, forced, dense):
        np.testing.assert_allclose(sol.y, ref.y, rtol=1e-6, atol=1e-8)
    assert ours.nfev < len(calls)
    np.testing.assert_array_equal(ours.y, forced.y)   # sparse=None picked the sparse path


def test_user_jac_is_used_as_given():
    seen = []

    def jac(t, y, k):
        seen.append(t)
        return np.asarray(dk.jacfwd(lambda y: robertson(t, y, k))(y))

    y0 = np.array([1.0, 0.0, 0.0])
    sol = solve_ivp(robertson, (0.0, 10.0), y0, method="Radau", args=(K,), jac=jac,
                    rtol=1e-6, atol=1e-10)
    assert seen and sol.njev == len(seen)


def test_closure_control_flow_change_raises():
    from diffkit.scipy.integrate import ClosureError

    def loss(p):
        def field(t, y):
            return -p * y if float(y[0]) > 0.5 else -2.0 * p * y
        return dnp.sum(solve_ivp(field, (0.0, 3.0), np.array([1.0]), t_eval=[3.0]).y)

    with pytest.raises(ClosureError, match="args"):
        dk.grad(loss)(1.0)


# --- JAX's odeint (only where JAX is installed) ----------------------------------------------

def test_same_gradients_as_jax_odeint():
    jax = pytest.importorskip(
        "jax", reason="JAX is no dependency of diffkit: this cross-check against "
        "jax.experimental.ode.odeint runs where it is installed (pip install jax)")
    import jax.numpy as jnp
    from jax.experimental.ode import odeint as jax_odeint
    jax.config.update("jax_enable_x64", True)

    def j_lv(y, t, p):
        return jnp.stack([p[0] * y[0] - p[1] * y[0] * y[1], -p[2] * y[1] + p[3] * y[0] * y[1]])

    def j_loss(p):
        return jnp.sum(jax_odeint(j_lv, jnp.asarray(LV_Y0), jnp.asarray(TE), p,
                                  rtol=1e-10, atol=1e-10) ** 2)

    def loss(p):
        return dnp.sum(odeint(lambda y, t, p: lv(t, y, p), LV_Y0, TE, args=(p,),
                              rtol=1e-10, atol=1e-10) ** 2)

    np.testing.assert_allclose(dk.grad(loss)(P), np.asarray(jax.grad(j_loss)(jnp.asarray(P))),
                               rtol=1e-6)


@pytest.mark.parametrize("method", ["BDF", "Radau", "LSODA"])
def test_robertson_jacobian_reverse_equals_forward(method):
    # every unit cotangent (an adjoint starting with zero components included)
    y0 = np.array([1.0, 0.0, 0.0])
    logk = np.log(K) + np.array([0.3, -0.4, 0.25])

    def observe(logk):
        sol = solve_ivp(robertson, (0.0, 100.0), y0, method=method, t_eval=ROB_T,
                        args=(dnp.exp(logk),), rtol=1e-8, atol=1e-12)
        return dnp.ravel(sol.y * W[:, None])

    forward = dk.jacfwd(observe)(logk)
    np.testing.assert_allclose(dk.jacrev(observe)(logk), forward, rtol=1e-5,
                               atol=1e-6 * np.abs(forward).max())


def test_sparsity_pattern_holds_the_jacobian():
    def g(x):
        sol = solve_ivp(lv, (0.0, 1.0), x[:2], t_eval=x[2:4], args=(x[4:],), rtol=1e-8)
        return dnp.ravel(sol.y.T)

    x = np.array([1.0, 2.0, 0.3, 0.8, 1.5, 1.0, 3.0, 1.0])
    pattern = dk.jacobian_sparsity(g)(x).toarray()
    nonzero = np.abs(dk.jacfwd(g)(x)) > 0
    assert not (nonzero & ~pattern).any()
    # output k depends on its own output time only
    np.testing.assert_array_equal(pattern[:, 2:4], np.repeat(np.eye(2, dtype=bool), 2, axis=0))


def test_odeint_adjoint_over_many_outputs_and_when_stiff():
    # non-stiff: the sweep steps back one interval at a time with the previous step size
    t = np.linspace(0.0, 5.0, 60)

    def loss(p):
        return dnp.sum(odeint(lv_y_first, LV_Y0, t, args=tuple(p[i] for i in range(4)),
                              rtol=1e-11, atol=1e-11) ** 2)

    def loss_scipy(p):
        return np.sum(si.odeint(lambda y, s, *q: lv_np(s, y, q), LV_Y0, t, args=tuple(p),
                                rtol=1e-12, atol=1e-12) ** 2)

    g = dk.grad(loss)(P)
    np.testing.assert_allclose(g, central(loss_scipy, P), rtol=1e-5)
    np.testing.assert_allclose(dk.jacfwd(loss)(P), g, rtol=1e-6)

    # stiff: LSODA switches to BDF, and the sweep keeps the stiff solver and interpolant
    y0 = np.array([1.0, 0.0, 0.0])
    times = np.concatenate([[0.0], ROB_T])

    def rob_loss(logk):
        Y = odeint(robertson, y0, times, args=(dnp.exp(logk),), rtol=1e-9, atol=1e-13,
                   tfirst=True)
        return dnp.sum(Y * W)

    def rob_scipy(logk):
        sol = si.solve_ivp(robertson_np, (0.0, 100.0), y0, method="Radau", t_eval=ROB_T,
                           args=(np.exp(logk),), rtol=1e-12, atol=1e-16)
        return np.sum(sol.y.T * W) + np.sum(y0 * W)

    logk = np.log(K)
    g = dk.grad(rob_loss)(logk)
    np.testing.assert_allclose(g, central(rob_scipy, logk, h=1e-5), rtol=1e-4)
    np.testing.assert_allclose(dk.jacfwd(rob_loss)(logk), g, rtol=1e-4)


# --- second order for systems of several states (issue 27) -----------------------------------
#
# hessian (forward over reverse, through the adjoint sweep's own derivative),
# jacfwd(jacfwd(...)) (forward sensitivities of forward sensitivities) and jacfwd(grad(...))
# in the initial state, the parameters and the output times at once, for every method;
# compared with each other and with central differences of the gradient.

SECOND = dict(rtol=1e-8, atol=1e-10)


def predator_prey(t, y, p):
    """Two states, the first two Lotka-Volterra rates as parameters."""
    return dnp.stack([p[0] * y[0] - p[1] * y[0] * y[1], -1.2 * y[1] + 0.3 * y[0] * y[1]])


def food_chain(t, y, p):
    """Three states (prey, predator, top predator), two rates as parameters."""
    return dnp.stack([y[0] * (p[0] - 0.5 * y[1]),
                      y[1] * (-0.6 + 0.4 * y[0] - p[1] * y[2]),
                      y[2] * (-0.5 + 0.4 * y[1])])


SYSTEMS = {2: (predator_prey, np.array([1.0, 0.5]), np.array([1.0, 0.4])),
           3: (food_chain, np.array([1.0, 0.8, 0.5]), np.array([1.0, 0.3]))}
SECOND_T = np.array([0.5, 1.5])


def packed_loss(states, method):
    """The sum of the solution at SECOND_T, as a function of one vector holding the
    initial state, the parameters and the output times."""
    fun, y0, p = SYSTEMS[states]
    n, k = y0.size, p.size

    def loss(x):
        y, q, te = x[:n], x[n:n + k], x[n + k:]
        if method == "odeint":
            Y = odeint(fun, y, dnp.concatenate([dnp.zeros(1), te]), args=(q,), tfirst=True,
                       **SECOND)
            return dnp.sum(Y[1:])
        return dnp.sum(solve_ivp(fun, (0.0, 2.0), y, method=method, t_eval=te, args=(q,),
                                 **SECOND).y)
    return loss, np.concatenate([y0, p, SECOND_T])


def _check_second_order(states, method):
    # the three modes agree to the solver's tolerance (rtol 1e-8); central differences of
    # the gradient (h = 1e-4) to about 1e-4 of the largest entry, given that tolerance
    loss, x = packed_loss(states, method)
    forward = dk.jacfwd(dk.jacfwd(loss))(x)
    scale = np.abs(forward).max()
    np.testing.assert_allclose(forward, forward.T, atol=1e-5 * scale)
    np.testing.assert_allclose(dk.hessian(loss)(x), forward, atol=1e-5 * scale)
    np.testing.assert_allclose(dk.jacfwd(dk.grad(loss))(x), forward, atol=1e-5 * scale)
    np.testing.assert_allclose(central(dk.grad(loss), x, h=1e-4), forward, atol=1e-3 * scale)


def _second_order_cases():
    """Every method for two and three states; the ones taking more than a few seconds (the
    low-order and implicit methods, three states) marked slow."""
    quick = {(2, m) for m in ("RK45", "DOP853", "LSODA", "odeint")} | {(3, "RK45"),
                                                                       (3, "odeint")}
    return [pytest.param(states, method, marks=() if (states, method) in quick
                         else pytest.mark.slow)
            for states in (2, 3)
            for method in ("RK45", "RK23", "DOP853", "Radau", "BDF", "LSODA", "odeint")]


@pytest.mark.parametrize("states, method", _second_order_cases())
def test_second_order_agrees_across_modes_and_with_differences(states, method):
    _check_second_order(states, method)


def test_second_order_three_states_odeint_reverse_over_reverse():
    loss, x = packed_loss(3, "odeint")
    forward = dk.jacfwd(dk.jacfwd(loss))(x)
    np.testing.assert_allclose(dk.jacrev(dk.grad(loss))(x), forward,
                               atol=1e-5 * np.abs(forward).max())


def test_second_order_with_integer_times_and_parameters():
    # t_span=(0, 2) and an integer in args: they are not differentiated, and no longer
    # reach the sweep's derivative as inputs (an InputTypeError blaming the user)
    def scaled(t, y, p, k):
        return lv(t, y, p) * k

    def loss(p, span, k):
        return dnp.sum(solve_ivp(scaled, span, LV_Y0, t_eval=SECOND_T, args=(p, k),
                                 **SECOND).y)

    expected = dk.jacfwd(dk.jacfwd(loss))(P, (0.0, 2.0), 1.0)
    for span, k in (((0, 2), 1.0), ((0.0, 2.0), 1)):
        np.testing.assert_allclose(dk.hessian(loss)(P, span, k), expected, rtol=1e-6)
        np.testing.assert_allclose(dk.jacfwd(dk.grad(loss))(P, span, k), expected, rtol=1e-6)
        np.testing.assert_allclose(dk.jacrev(dk.grad(loss))(P, span, k), expected, rtol=1e-6)


def test_forward_over_forward_in_the_initial_and_output_times():
    # jacfwd(jacfwd) in t0 and t_eval together: a rule's joined arrays stay values of the
    # levels below it (an EscapedTracerError before)
    def loss(t):
        return dnp.sum(solve_ivp(lv, (t[0], 2.5), LV_Y0, t_eval=t[1:], args=(P,), **SECOND).y)

    def loss_odeint(t):
        return dnp.sum(odeint(lv, LV_Y0, t, args=(P,), tfirst=True, **SECOND))

    t = np.array([0.0, 0.5, 1.0, 2.0])
    for f in (loss, loss_odeint):
        forward = dk.jacfwd(dk.jacfwd(f))(t)
        np.testing.assert_allclose(dk.hessian(f)(t), forward, rtol=1e-6,
                                   atol=1e-7 * np.abs(forward).max())
        np.testing.assert_allclose(central(dk.grad(f), t, h=1e-4), forward, rtol=1e-4,
                                   atol=1e-5 * np.abs(forward).max())


def test_second_order_in_the_initial_time_without_output_times():
    # y' = -k y from t0 to 2: y(2) = y0 exp(-k (2 - t0)); without t_eval the first output
    # time is t0 itself, and the sweep's last leg of no length carries t0's derivatives
    def end(x):
        k, t0, y0 = x[0], x[1], x[2]
        return solve_ivp(lambda t, y, k: -k * y, (t0, 2.0), dnp.reshape(y0, (1,)),
                         args=(k,), **TIGHT).y[0, -1]

    def exact_grad(x):
        k, t0, y0 = x
        e = np.exp(-k * (2 - t0))
        return np.array([-(2 - t0) * y0 * e, k * y0 * e, e])

    x = np.array([0.7, 0.4, 1.5])
    expected = central(exact_grad, x, h=1e-5)
    for second in (dk.hessian, lambda f: dk.jacfwd(dk.jacfwd(f)), lambda f: dk.jacrev(dk.grad(f))):
        np.testing.assert_allclose(second(end)(x), expected, rtol=1e-7, atol=1e-9)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::RuntimeWarning", "ignore::scipy.integrate.ODEintWarning")
@pytest.mark.parametrize("method", ["Radau", "BDF", "LSODA", "odeint"])
def test_guide_advice_for_stiff_second_derivatives(method):
    # the guide: second derivatives of stiff systems by jacfwd(jacfwd(...)); hessian's
    # backward re-solve of the state is right or fails with an error that says so
    y0 = np.array([1.0, 0.0, 0.0])
    times = ROB_T[:3]

    def loss(logk):
        if method == "odeint":
            Y = odeint(robertson, y0, np.concatenate([[0.0], times]), args=(dnp.exp(logk),),
                       rtol=1e-8, atol=1e-12, tfirst=True)
            return dnp.sum(Y * W)
        sol = solve_ivp(robertson, (0.0, times[-1]), y0, method=method, t_eval=times,
                        args=(dnp.exp(logk),), rtol=1e-8, atol=1e-12)
        return dnp.sum(sol.y.T * W)

    logk = np.log(K)
    H = dk.jacfwd(dk.jacfwd(loss))(logk)
    scale = np.abs(H).max()
    np.testing.assert_allclose(H, H.T, atol=1e-5 * scale)
    np.testing.assert_allclose(H, central(dk.grad(loss), logk, h=1e-4), atol=1e-3 * scale)
    try:
        reverse = dk.hessian(loss)(logk)
    except ODESolveError as failure:
        assert "jacfwd(jacfwd(...))" in str(failure)
    else:
        np.testing.assert_allclose(reverse, H, atol=1e-3 * scale)


@settings(max_examples=4, deadline=None)
@given(st.floats(0.5, 2.0), st.floats(0.3, 1.5), st.floats(0.5, 1.5), st.floats(0.2, 0.6))
def test_second_order_at_generated_points(y1, y2, a, b):
    # forward over reverse and forward over forward agree wherever the system is
    fun, _, _ = SYSTEMS[2]

    def loss(x):
        return dnp.sum(solve_ivp(fun, (0.0, 2.0), x[:2], method="DOP853", t_eval=SECOND_T,
                                 args=(x[2:],), **SECOND).y)

    x = np.array([y1, y2, a, b])
    forward = dk.jacfwd(dk.jacfwd(loss))(x)
    np.testing.assert_allclose(dk.hessian(loss)(x), forward,
                               atol=1e-5 * np.abs(forward).max())
