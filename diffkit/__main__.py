"""A short tour of diffkit: ``python -m diffkit``.

Each section computes a derivative with one of diffkit's transformations, prints it next to
the answer worked out by hand, and checks that the two agree, so a wrong number stops the
tour with an error instead of scrolling past.
"""

import numpy as np

import diffkit as dk
import diffkit.numpy as dnp

RULE = "-" * 72


def check(got, expected, what):
    """Stop the tour loudly if diffkit's number differs from the closed form."""
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12,
                               err_msg=f"the tour's {what} is wrong")


def heading(title, explanation):
    print(RULE)
    print(title)
    print(RULE)
    print(explanation.strip("\n"))
    print()


def derivative_at_many_points():
    heading("1. A derivative at many points: a VJP with a cotangent of ones", """
f(x) = sin(x) * x acts elementwise, so its Jacobian is diagonal and pulling back a vector
of ones gives f'(x) at every point at once. This is PyTorch's
y.backward(gradient=torch.ones_like(y)), written as a function call:
    y, pullback = dk.vjp(f, x);  (dydx,) = pullback(np.ones_like(y))
""")

    def f(x):
        return dnp.sin(x) * x

    x = np.linspace(-2.0, 2.0, 5)
    y, pullback = dk.vjp(f, x)
    (dydx,) = pullback(np.ones_like(y))
    closed_form = np.cos(x) * x + np.sin(x)
    print("x                    ", x)
    print("f(x)                 ", y)
    print("f'(x) from the VJP   ", dydx)
    print("cos(x) x + sin(x)    ", closed_form)
    check(y, np.sin(x) * x, "f(x)")
    check(dydx, closed_form, "derivative")


def gradient():
    heading("2. A gradient of plain NumPy code: dk.grad", """
f(x) = 3 x1^2 + 5 x2^2 has gradient (6 x1, 10 x2); at (-1, 2) that is (-6, 20).
f is written with `import numpy as np` only: diffkit differentiates it unchanged.
""")

    def f(x):
        return np.sum(np.array([3.0, 5.0]) * x ** 2)

    x = np.array([-1.0, 2.0])
    g = dk.grad(f)(x)
    print("x          ", x)
    print("grad f(x)  ", g)
    check(g, [-6.0, 20.0], "gradient")


def jacobian_both_engines():
    heading("3. A Jacobian from both engines: dk.jacfwd and dk.jacrev", """
f(x) = (x1 x2 x3, x1^2 + sin(x2)) maps R^3 to R^2, so its Jacobian has shape (2, 3).
jacfwd pushes the 3 input unit vectors forward (dual numbers); jacrev pulls the 2 output
unit vectors back (tape). Both run as one batched pass and must agree.
""")

    def f(x):
        return dnp.stack([x[0] * x[1] * x[2], x[0] ** 2 + dnp.sin(x[1])])

    x = np.array([1.0, 2.0, 3.0])
    forward = dk.jacfwd(f)(x)
    reverse = dk.jacrev(f)(x)
    closed_form = np.array([[x[1] * x[2], x[0] * x[2], x[0] * x[1]],
                            [2 * x[0], np.cos(x[1]), 0.0]])
    difference = np.max(np.abs(forward - reverse))
    print("x", x)
    print("jacfwd:\n", forward, sep="")
    print("jacrev:\n", reverse, sep="")
    print(f"max |jacfwd - jacrev| = {difference:.1e}")
    check(forward, closed_form, "forward-mode Jacobian")
    check(reverse, closed_form, "reverse-mode Jacobian")
    check(difference, 0.0, "engine disagreement")


def hessian():
    heading("4. A Hessian: dk.hessian (forward over reverse)", """
The Rosenbrock function f(x) = (1 - x1)^2 + 100 (x2 - x1^2)^2 has Hessian
    [[2 - 400 (x2 - 3 x1^2), -400 x1],
     [-400 x1,                200   ]],
which at its minimum (1, 1) is [[802, -400], [-400, 200]].
""")

    def rosenbrock(x):
        return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2

    def closed_form(x):
        return np.array([[2 - 400 * (x[1] - 3 * x[0] ** 2), -400 * x[0]],
                         [-400 * x[0], 200.0]])

    at_minimum = dk.hessian(rosenbrock)(np.array([1.0, 1.0]))
    check(at_minimum, [[802.0, -400.0], [-400.0, 200.0]], "Hessian at the minimum")
    for x in (np.array([1.0, 1.0]), np.array([-1.2, 1.0])):
        h = dk.hessian(rosenbrock)(x)
        print(f"x = {x}:\n{h}")
        check(h, closed_form(x), "Hessian")


def per_example_gradients():
    heading("5. Per-example gradients: dk.vmap(dk.grad(loss))", """
For a squared error loss(w, x, y) = (w . x - y)^2, the gradient with respect to w is
2 (w . x - y) x. vmap runs grad over a batch of 4 examples in one pass, giving one
gradient row per example instead of only their sum. Their mean is the gradient of the
mean loss, which grad of the vmapped loss computes directly.
""")

    def loss(w, x, y):
        return (dnp.sum(w * x) - y) ** 2

    w = np.array([0.5, -1.0, 2.0])
    xs = np.array([[1.0, 2.0, 0.5],
                   [0.5, -1.0, 1.0],
                   [2.0, 0.5, 1.0],
                   [-1.0, 1.0, 1.5]])
    ys = np.array([1.0, 0.0, 2.0, -1.0])
    grads = dk.vmap(dk.grad(loss), in_axes=(None, 0, 0))(w, xs, ys)
    closed_form = 2 * (xs @ w - ys)[:, None] * xs

    def mean_loss(w):
        return dnp.mean(dk.vmap(loss, in_axes=(None, 0, 0))(w, xs, ys))

    batch_gradient = dk.grad(mean_loss)(w)
    print("per-example gradients, shape", grads.shape)
    print(grads)
    print("their mean          ", grads.mean(axis=0))
    print("grad of mean loss   ", batch_gradient)
    check(grads, closed_form, "per-example gradients")
    check(batch_gradient, closed_form.mean(axis=0), "batch gradient")


# The notebooks of the repository's notebooks/ folder, one line each (the docs site shows
# them too, with their outputs and plots).
NOTEBOOKS = [
    ("01_backward_is_a_vjp", "PyTorch's backward() as a VJP, examples redone"),
    ("02_jacobians_and_hessians", "forward vs reverse mode; Hessians four ways"),
    ("03_scipy", "exact jac, hess, hessp for SciPy's solvers"),
    ("04_property_testing", "testing your own derivatives (Hypothesis)"),
    ("05_vmap", "per-example gradients, batched Jacobians"),
    ("06_jit", "jit: staged derivatives, speed-up against size"),
    ("07_solvers", "fitting a stiff ODE; a neural ODE by adjoints"),
    ("08_sparse", "sparse Jacobians and Hessians, colourings"),
    ("09_bilevel", "a bilevel problem: implicit differentiation"),
    ("10_taylor", "Taylor mode: a PINN trained with dk.laplacian"),
]


def next_steps():
    """Where to go after the tour: the notebooks and the documentation."""
    width = max(len(name) for name, _ in NOTEBOOKS) + len("notebooks/.ipynb") + 2
    lines = ["Where next: the notebooks, in the notebooks/ folder of the diffkit repository",
             "(shown with their outputs in the documentation site, under Notebooks):"]
    lines += [f"  {f'notebooks/{name}.ipynb':<{width}} {what}" for name, what in NOTEBOOKS]
    lines += ["and the user guide and API reference in docs/ (pip install '.[docs]' &&",
              "mkdocs serve, or mkdocs build for a site that works offline)."]
    return "\n".join(lines)


def main():
    with np.printoptions(precision=4, suppress=True):
        derivative_at_many_points()
        gradient()
        jacobian_both_engines()
        hessian()
        per_example_gradients()
        print(RULE)
        print("Every number above matched its closed form.")
        print()
        print(next_steps())


if __name__ == "__main__":
    main()
