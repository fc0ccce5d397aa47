"""Transformations composed with each other, across threads, and on long programs.

The closed forms here are the oracle: a composition that confuses two perturbations, drops a
term of a mixed derivative, or leaks state between threads gives a different number.
"""

import sys
import threading

import numpy as np
import pytest
from numpy.testing import assert_allclose

import diffkit as dk
import diffkit.numpy as dnp
from diffkit.interpreters import reverse

X3 = np.array([0.3, -1.2, 2.0])


# --- perturbation confusion (Siskind & Pearlmutter) ------------------------------------
#
# d/dx [ x * (d/dy (x + y))|_{y=1} ] at x = 1 is 1: the inner derivative is 1 whatever x is.
# An implementation that mixes up the two perturbations treats x's perturbation as y's
# inside the inner derivative, gets d/dy (x + y) = 2, and answers 2.


def test_perturbation_confusion_jvp_of_jvp():
    def inner_derivative(x):
        _, t = dk.jvp(lambda y: x + y, (1.0,), (1.0,))
        return t

    def f(x):
        return x * inner_derivative(x)

    _, t = dk.jvp(f, (1.0,), (1.0,))
    assert_allclose(t, 1.0)
    assert_allclose(f(1.0), 1.0)


def test_perturbation_confusion_grad_of_grad():
    def f(x):
        return x * dk.grad(lambda y: x + y)(1.0)

    assert_allclose(dk.grad(f)(1.0), 1.0)


def test_perturbation_confusion_mixed_modes():
    # jvp outside, grad inside, and the other way round.
    def f_grad_inside(x):
        return x * dk.grad(lambda y: x + y)(1.0)

    def f_jvp_inside(x):
        return x * dk.jvp(lambda y: x + y, (1.0,), (1.0,))[1]

    assert_allclose(dk.jvp(f_grad_inside, (1.0,), (1.0,))[1], 1.0)
    assert_allclose(dk.grad(f_jvp_inside)(1.0), 1.0)


@pytest.mark.parametrize("x", [0.5, 2.0, -3.0])
def test_inner_derivative_depends_on_outer_variable(x):
    # d/dx [ x * d/dy (x * y) ] = d/dx [x * x] = 2x, in all four mode pairings.
    def inner_grad(x):
        return dk.grad(lambda y: x * y)(1.0)

    def inner_jvp(x):
        return dk.jvp(lambda y: x * y, (1.0,), (1.0,))[1]

    for inner in (inner_grad, inner_jvp):
        def f(x, inner=inner):
            return x * inner(x)

        assert_allclose(dk.grad(f)(x), 2 * x)
        assert_allclose(dk.jvp(f, (x,), (1.0,))[1], 2 * x)


# --- Hessians by every composition ------------------------------------------------------


def sin_x2(x):
    return dnp.sum(dnp.sin(x) * x ** 2)


def sin_x2_hessian(x):
    return np.diag((2 - x ** 2) * np.sin(x) + 4 * x * np.cos(x))


def rosenbrock(x):
    return dnp.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def rosenbrock_hessian(x):
    n = len(x)
    h = np.zeros((n, n))
    for i in range(n - 1):
        h[i, i] += 1200 * x[i] ** 2 - 400 * x[i + 1] + 2
        h[i + 1, i + 1] += 200
        h[i, i + 1] = h[i + 1, i] = -400 * x[i]
    return h


def coupled(x):
    # x0 x1 x2 + exp(x0 x1): every mixed term non-zero.
    return x[0] * x[1] * x[2] + dnp.exp(x[0] * x[1])


def coupled_hessian(x):
    a, b, c = x
    e = np.exp(a * b)
    return np.array([[b * b * e, c + e + a * b * e, b],
                     [c + e + a * b * e, a * a * e, a],
                     [b, a, 0.0]])


def matrix_cubic(m):
    # sum(M^3) + M00 M11 on a 2x2 input: Hessian of shape (2, 2, 2, 2).
    return dnp.sum(m ** 3) + m[0, 0] * m[1, 1]


def matrix_cubic_hessian(m):
    h = np.diag((6 * m).ravel())
    h[0, 3] = h[3, 0] = 1.0
    return h.reshape(2, 2, 2, 2)


HESSIAN_CASES = [
    (sin_x2, sin_x2_hessian, X3),
    (rosenbrock, rosenbrock_hessian, np.array([1.2, -0.7, 0.4, 2.0])),
    (coupled, coupled_hessian, np.array([0.5, -1.5, 2.0])),
    (matrix_cubic, matrix_cubic_hessian, np.array([[0.5, -1.0], [2.0, 0.25]])),
]

COMPOSITIONS = {
    "hessian": dk.hessian,
    "jacrev(jacrev)": lambda f: dk.jacrev(dk.jacrev(f)),
    "jacfwd(jacfwd)": lambda f: dk.jacfwd(dk.jacfwd(f)),
    "jacrev(jacfwd)": lambda f: dk.jacrev(dk.jacfwd(f)),
    "jacfwd(jacrev)": lambda f: dk.jacfwd(dk.jacrev(f)),
    "jacfwd(grad)": lambda f: dk.jacfwd(dk.grad(f)),
    "jacrev(grad)": lambda f: dk.jacrev(dk.grad(f)),
}


@pytest.mark.parametrize("name", sorted(COMPOSITIONS))
@pytest.mark.parametrize("f, closed_form, x", HESSIAN_CASES,
                         ids=[case[0].__name__ for case in HESSIAN_CASES])
def test_hessian_compositions_match_closed_form(name, f, closed_form, x):
    h = COMPOSITIONS[name](f)(x)
    assert h.shape == x.shape + x.shape
    assert_allclose(h, closed_form(x), rtol=1e-10, atol=1e-12)


def test_hessian_compositions_agree_with_each_other():
    f, _, x = HESSIAN_CASES[2]
    results = [COMPOSITIONS[name](f)(x) for name in sorted(COMPOSITIONS)]
    for r in results[1:]:
        assert_allclose(r, results[0], rtol=1e-12, atol=1e-14)


# --- vmap and differentiation composed --------------------------------------------------


def test_vmap_of_grad():
    xs = np.array([[0.1, 0.2, 0.3], [1.0, -1.0, 0.5], [2.0, 0.0, -2.0]])
    g = dk.vmap(dk.grad(sin_x2))(xs)
    assert_allclose(g, np.cos(xs) * xs ** 2 + 2 * xs * np.sin(xs))


def test_vmap_of_grad_of_scalar_function():
    ts = np.linspace(-2.0, 2.0, 7)
    assert_allclose(dk.vmap(dk.grad(lambda t: dnp.sin(t) * t))(ts),
                    np.cos(ts) * ts + np.sin(ts))


def test_grad_of_vmapped_function():
    def per_row(w, x):
        return dnp.sum(dnp.tanh(w * x))

    xs = np.array([[0.1, 0.2, 0.3], [1.0, -1.0, 0.5]])
    w = np.array([0.5, 2.0, -1.0])

    def total(w):
        return dnp.sum(dk.vmap(per_row, in_axes=(None, 0))(w, xs))

    expected = np.sum(xs * (1 - np.tanh(w * xs) ** 2), axis=0)
    assert_allclose(dk.grad(total)(w), expected)


def test_grad_with_respect_to_mapped_argument():
    def total(xs):
        return dnp.sum(dk.vmap(lambda r: dnp.sum(r ** 3))(xs))

    xs = np.array([[0.1, 0.2, 0.3], [1.0, -1.0, 0.5]])
    assert_allclose(dk.grad(total)(xs), 3 * xs ** 2)


def test_vmap_of_jvp_builds_jacobian_columns():
    def f(x):
        return dnp.stack([x[0] * x[1], dnp.sin(x[2]), dnp.sum(x ** 2)])

    x = X3
    columns = dk.vmap(lambda v: dk.jvp(f, (x,), (v,))[1])(np.eye(3))
    expected = np.array([[x[1], x[0], 0.0],
                         [0.0, 0.0, np.cos(x[2])],
                         2 * x])
    assert_allclose(columns.T, expected)


def test_vmap_of_jvp_over_primals():
    ts = np.array([0.0, 0.5, 1.0, 1.5])
    out, tangents = dk.vmap(lambda t: dk.jvp(dnp.exp, (t,), (1.0,)))(ts)
    assert_allclose(out, np.exp(ts))
    assert_allclose(tangents, np.exp(ts))


def test_vmap_of_vjp_pullback():
    def f(x):
        return dnp.sin(x) * x[0]

    x = X3
    _, pullback = dk.vjp(f, x)
    rows = dk.vmap(lambda u: pullback(u)[0])(np.eye(3))
    jac = np.diag(np.cos(x) * x[0])
    jac[:, 0] += np.sin(x)
    assert_allclose(rows, jac)


def test_vmap_of_linearized_function():
    out, jvp_fn = dk.linearize(lambda x: dnp.exp(x) * x, X3)
    columns = dk.vmap(jvp_fn)(np.eye(3))
    assert_allclose(columns, np.diag(np.exp(X3) * (1 + X3)))


def test_jvp_of_vjp():
    # d/dε [ vjp(f)(x + εv)[1](u) ] = u^T f''(x) v, here with f elementwise so the
    # result is u * f''(x) * v with f = sin(x) x^2.
    def f(x):
        return dnp.sin(x) * x ** 2

    u = np.array([1.0, 2.0, -1.0])
    v = np.array([0.5, -1.0, 3.0])

    def pulled(x):
        return dk.vjp(f, x)[1](u)[0]

    second = (2 - X3 ** 2) * np.sin(X3) + 4 * X3 * np.cos(X3)
    _, t = dk.jvp(pulled, (X3,), (v,))
    assert_allclose(t, u * second * v)


def test_jvp_of_vjp_with_vjp_outside_and_inside():
    # vjp of a function that computes a jvp: the transpose of a forward derivative.
    def directional(x):
        return dk.jvp(lambda z: z ** 3, (x,), (np.ones(3),))[1]  # 3 x^2

    _, pullback = dk.vjp(directional, X3)
    assert_allclose(pullback(np.ones(3))[0], 6 * X3)


@pytest.mark.parametrize("x", [-1.0, 0.3, 2.0])
def test_third_derivatives(x):
    # f = exp(x) sin(x): f' = e^x (sin + cos), f'' = 2 e^x cos, f''' = 2 e^x (cos - sin)
    def f(x):
        return dnp.exp(x) * dnp.sin(x)

    e = np.exp(x)
    d1 = dk.grad(f)
    d2 = dk.grad(d1)
    d3 = dk.grad(d2)
    assert_allclose(d1(x), e * (np.sin(x) + np.cos(x)))
    assert_allclose(d2(x), 2 * e * np.cos(x))
    assert_allclose(d3(x), 2 * e * (np.cos(x) - np.sin(x)))
    # The same third derivative with forward mode on the outside.
    assert_allclose(dk.jvp(d2, (x,), (1.0,))[1], 2 * e * (np.cos(x) - np.sin(x)))


def test_third_derivative_tensor():
    # f = sum(x^4): third-derivative tensor is 24 x_i on the diagonal i == j == k.
    t = dk.jacfwd(dk.hessian(lambda x: dnp.sum(x ** 4)))(X3)
    expected = np.zeros((3, 3, 3))
    for i in range(3):
        expected[i, i, i] = 24 * X3[i]
    assert t.shape == (3, 3, 3)
    assert_allclose(t, expected)


def test_vmap_of_hessian():
    xs = np.array([[1.0, 2.0], [-0.5, 0.3], [1.2, 1.2]])

    def f(x):
        return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2

    hs = dk.vmap(dk.hessian(f))(xs)
    assert hs.shape == (3, 2, 2)
    for x, h in zip(xs, hs):
        assert_allclose(h, rosenbrock_hessian(x))


# --- threads ----------------------------------------------------------------------------


@pytest.fixture
def frequent_thread_switches():
    """Make the interpreter switch threads every few microseconds, so that one thread's
    transformation is interrupted by the others many times instead of running to the end
    within one time slice."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


def test_threads_differentiating_at_once(frequent_thread_switches):
    """Four threads, each with its own function, compute gradients and Hessians in lock step.

    The trace stack is thread-local. If it were shared, the levels of one thread's nested
    transformations would be taken from a stack the other threads push and pop, so a
    Hessian's inner trace could get its outer trace's level: an error, or a wrong number.
    """
    iterations = 100
    tanh = np.tanh
    cases = [  # f, f', f'' (all elementwise, summed)
        (lambda x: dnp.sum(dnp.sin(x) * x), lambda x: np.cos(x) * x + np.sin(x),
         lambda x: 2 * np.cos(x) - x * np.sin(x)),
        (lambda x: dnp.sum(x ** 3), lambda x: 3 * x ** 2, lambda x: 6 * x),
        (lambda x: dnp.sum(dnp.exp(x) * 2.0), lambda x: 2 * np.exp(x), lambda x: 2 * np.exp(x)),
        (lambda x: dnp.sum(dnp.tanh(x)), lambda x: 1 - tanh(x) ** 2,
         lambda x: -2 * tanh(x) * (1 - tanh(x) ** 2)),
    ]
    barrier = threading.Barrier(len(cases))
    failures = []

    def work(index):
        f, df, d2f = cases[index]
        grad_f = dk.grad(f)
        hess_f = dk.hessian(f)
        try:
            for i in range(iterations):
                x = np.array([0.1, -0.4, 0.7]) + 0.01 * (i + index)
                barrier.wait(timeout=30)
                assert_allclose(grad_f(x), df(x), rtol=1e-12)
                assert_allclose(hess_f(x), np.diag(d2f(x)), rtol=1e-12, atol=1e-15)
        except BaseException as error:  # report every thread's failure, not just the first
            failures.append((index, repr(error)))
            barrier.abort()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(cases))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    assert not failures, failures


def test_threads_nested_transformations(frequent_thread_switches):
    """Threads mixing jvp, vjp and vmap with the nesting depths interleaved."""
    barrier = threading.Barrier(4)
    failures = []
    x = np.array([0.2, 0.5, -0.3])

    jobs = [
        lambda: (dk.hessian(lambda z: dnp.sum(z ** 3))(x), np.diag(6 * x)),
        lambda: (dk.jvp(lambda z: z * dk.grad(lambda y: z + y)(1.0), (2.0,), (1.0,))[1],
                 1.0),
        lambda: (dk.vmap(dk.grad(lambda z: dnp.sum(z ** 2)))(np.outer(x, x)),
                 2 * np.outer(x, x)),
        lambda: (dk.jacrev(lambda z: dnp.exp(z))(x), np.diag(np.exp(x))),
    ]

    def work(job):
        try:
            for _ in range(60):
                barrier.wait(timeout=30)
                got, expected = job()
                assert_allclose(got, expected, rtol=1e-12)
        except BaseException as error:
            failures.append(repr(error))
            barrier.abort()

    threads = [threading.Thread(target=work, args=(job,)) for job in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    assert not failures, failures


# --- long programs ----------------------------------------------------------------------


def test_reverse_mode_on_a_100000_operation_chain():
    steps = 50_000  # two primitives per step: 100,000 taped operations
    factor = 1.0000001

    def f(x):
        for _ in range(steps):
            x = x * factor + 0.0
        return x

    value, g = dk.value_and_grad(f)(1.5)
    assert_allclose(value, 1.5 * factor ** steps, rtol=1e-9)
    assert_allclose(g, factor ** steps, rtol=1e-9)


def test_long_chain_of_sines():
    # x_{k+1} = sin(x_k), 20,000 times; d x_n / d x_0 = prod cos(x_k).
    steps = 20_000

    def f(x):
        for _ in range(steps):
            x = dnp.sin(x)
        return x

    x, slope = 1.0, 1.0
    for _ in range(steps):
        slope *= np.cos(x)
        x = np.sin(x)
    assert_allclose(dk.grad(f)(1.0), slope, rtol=1e-9)


# --- cost: one backward sweep per Jacobian ----------------------------------------------


@pytest.mark.parametrize("m", [1, 2, 7, 40])
def test_jacrev_makes_one_backward_sweep(m):
    weights = np.linspace(0.5, 2.0, m)

    def f(x):  # R^3 -> R^m
        return dnp.sum(dnp.sin(x)) * weights + x[0] * x[1]

    x = X3
    before = reverse.sweep_count
    j = dk.jacrev(f)(x)
    assert reverse.sweep_count - before == 1
    expected = np.outer(weights, np.cos(x)) + np.array([x[1], x[0], 0.0])
    assert_allclose(j, expected)


@pytest.mark.parametrize("chunk_size, sweeps", [(1, 10), (3, 4), (10, 1), (50, 1)])
def test_jacrev_chunks_make_ceil_m_over_k_sweeps(chunk_size, sweeps):
    before = reverse.sweep_count
    j = dk.jacrev(lambda x: dnp.exp(x), chunk_size=chunk_size)(np.linspace(0, 1, 10))
    assert reverse.sweep_count - before == sweeps
    assert_allclose(j, np.diag(np.exp(np.linspace(0, 1, 10))))


def test_hessian_makes_one_backward_sweep():
    before = reverse.sweep_count
    h = dk.hessian(sin_x2)(np.linspace(-1, 1, 6))
    assert reverse.sweep_count - before == 1
    assert_allclose(h, sin_x2_hessian(np.linspace(-1, 1, 6)), atol=1e-12)
