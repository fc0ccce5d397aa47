"""Plain NumPy programs (``tests/corpus/``, ``import numpy as np`` only) differentiated
unchanged.

For each program, at a fixed well-conditioned point, every derivative diffkit gives for the
plain-NumPy source (gradient, ``jacfwd``, ``jacrev``, Hessian) must equal the one it gives for
the *same source* executed with ``numpy`` bound to ``diffkit.numpy`` (and ``scipy.special`` to
``diffkit.scipy.special``), and central finite differences. The twin is made by running the
module's source a second time with its imports redirected, so the two cannot drift apart.
"""

import ast
import builtins
import importlib
import inspect
import types
from dataclasses import dataclass

import numpy as np
import pytest

import diffkit as dk
import diffkit.numpy as dnp
import diffkit.scipy as dscipy
import diffkit.scipy.special as dsp

# The twin and the plain program run the same primitives on the same values (today they agree
# bit for bit), so the bound is far tighter than the 1e-7 the issue asks for. ATOL only
# covers entries that are zero in exact arithmetic (e.g. the upper triangle of the Gaussian's
# factor), should rounding ever differ there.
RTOL = 1e-12
ATOL = 1e-15
# Central differences with step EPS: truncation O(EPS**2 f''') plus rounding O(eps_mach/EPS)
# relative to the function's scale.
EPS = 1e-5
FD_RTOL = 1e-6
FD_ATOL = 1e-6

# What the corpus's imports mean in the twin.
TWIN_MODULES = {"numpy": dnp, "scipy": dscipy, "scipy.special": dsp}


@dataclass(frozen=True)
class Program:
    """One corpus program: ``corpus.<module>.<function>`` at ``point`` (a float array)."""
    module: str
    function: str
    point: np.ndarray
    scalar: bool

    def __repr__(self):
        return f"{self.module}.{self.function}"


# Points: generic (no ties in the MLP's max, no structural zeros in the inputs), with every
# matrix the program inverts well conditioned.
PROGRAMS = [
    Program("mlp", "loss", 0.6 * np.sin(1.0 + np.arange(31)), scalar=True),
    # Rosenbrock's classic start (-1.2, 1) and two more valleys
    Program("rosenbrock", "rosenbrock", np.array([-1.2, 1.0, 0.5, 0.3, 1.1, 1.3]),
            scalar=True),
    # mean, then a factor near the identity: the covariance has eigenvalues in [0.5, 4]
    Program("gaussian", "log_likelihood",
            np.concatenate([[0.1, -0.2, 0.3], np.eye(3).ravel() + 0.5 * np.cos(np.arange(9.0))]),
            scalar=True),
    # initial (prey, predator), then (alpha, beta, delta, gamma)
    Program("rk4", "final_state", np.array([1.0, 0.5, 1.1, 0.4, 0.3, 0.9]), scalar=False),
    Program("heat", "residual", np.linspace(0.9, 0.3, 6), scalar=False),
    Program("contractions", "energy", np.cos(np.arange(9.0) + 0.5).reshape(3, 3),
            scalar=True),
    Program("dirichlet_multinomial", "log_likelihood", np.array([-0.5, 0.2, 0.4, -0.1]),
            scalar=True),
]


# --- the two versions of each program ----------------------------------------------------

def _twin_import(name, globals=None, locals=None, fromlist=(), level=0):
    """``__import__`` that hands out diffkit's namespaces for ``numpy`` and ``scipy.special``."""
    if level == 0 and name in TWIN_MODULES:
        # `import a.b` binds the top package; `from a.b import c` / `import a` want a.b / a
        return TWIN_MODULES[name] if fromlist or "." not in name else \
            TWIN_MODULES[name.split(".")[0]]
    return builtins.__import__(name, globals, locals, fromlist, level)


def load_twin(module_name):
    """``corpus.<module_name>``'s source executed once more with its imports redirected to
    diffkit.numpy / diffkit.scipy.special: a module object holding the diffkit version."""
    original = importlib.import_module(f"corpus.{module_name}")
    path = inspect.getsourcefile(original)
    with open(path) as source_file:
        source = source_file.read()
    twin = types.ModuleType(f"corpus_twin.{module_name}")
    twin.__file__ = path
    twin.__dict__["__builtins__"] = {**vars(builtins), "__import__": _twin_import}
    exec(compile(source, path, "exec"), twin.__dict__)
    return twin


def both_versions(program):
    """``(plain NumPy function, diffkit.numpy twin)`` for ``program``."""
    original = importlib.import_module(f"corpus.{program.module}")
    return (getattr(original, program.function),
            getattr(load_twin(program.module), program.function))


# --- finite differences ------------------------------------------------------------------

def central_difference_jacobian(f, x, eps=EPS):
    """The Jacobian of ``f`` at ``x`` by central differences, shape ``f(x).shape + x.shape``."""
    columns = []
    for index in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[index] = eps
        columns.append((np.asarray(f(x + step)) - np.asarray(f(x - step))) / (2 * eps))
    out_shape = np.shape(columns[0])
    stacked = np.stack(columns, axis=-1)  # out.shape + (x.size,)
    return stacked.reshape(out_shape + x.shape)


def assert_twin_equal(got, expected, what):
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL,
                               err_msg=f"{what}: plain NumPy vs diffkit.numpy twin")


def assert_fd_close(got, expected, what):
    scale = max(1.0, float(np.max(np.abs(expected))))
    np.testing.assert_allclose(got, expected, rtol=FD_RTOL, atol=FD_ATOL * scale,
                               err_msg=f"{what}: diffkit vs central differences")


# --- the corpus is plain NumPy -----------------------------------------------------------

@pytest.mark.parametrize("program", PROGRAMS, ids=repr)
def test_program_imports_only_numpy_and_scipy_special(program):
    module = importlib.import_module(f"corpus.{program.module}")
    tree = ast.parse(inspect.getsource(module))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add(node.module)
    assert imported <= {"numpy", "scipy.special"}, imported
    assert "numpy" in imported


@pytest.mark.parametrize("program", PROGRAMS, ids=repr)
def test_twin_runs_on_diffkit_numpy(program):
    plain, twin = both_versions(program)
    assert plain.__globals__["np"] is np
    assert twin.__globals__["np"] is dnp
    if "gammaln" in twin.__globals__:
        assert twin.__globals__["gammaln"] is dsp.gammaln
    np.testing.assert_allclose(plain(program.point), twin(program.point), rtol=RTOL)


# --- derivatives: plain NumPy == diffkit.numpy twin == finite differences ----------------

@pytest.mark.parametrize("program", PROGRAMS, ids=repr)
def test_jacobians_both_modes(program):
    plain, twin = both_versions(program)
    x = program.point
    fd = central_difference_jacobian(plain, x)
    for name, jacobian in (("jacfwd", dk.jacfwd), ("jacrev", dk.jacrev)):
        got = jacobian(plain)(x)
        assert got.shape == np.shape(plain(x)) + x.shape, name
        assert_twin_equal(got, jacobian(twin)(x), name)
        assert_fd_close(got, fd, name)


@pytest.mark.parametrize("program", [p for p in PROGRAMS if p.scalar], ids=repr)
def test_gradient(program):
    plain, twin = both_versions(program)
    x = program.point
    value, gradient = dk.value_and_grad(plain)(x)
    assert gradient.shape == x.shape and gradient.dtype == x.dtype
    np.testing.assert_allclose(value, plain(x), rtol=RTOL)
    assert_twin_equal(gradient, dk.grad(twin)(x), "grad")
    assert_fd_close(gradient, central_difference_jacobian(plain, x), "grad")


@pytest.mark.parametrize("program", PROGRAMS, ids=repr)
def test_second_derivatives(program):
    """The Hessian (scalar programs) or the second-derivative tensor (vector programs), shape
    ``out.shape + x.shape + x.shape``; the reference differences the first derivative."""
    plain, twin = both_versions(program)
    x = program.point
    got = dk.hessian(plain)(x)
    assert got.shape == np.shape(plain(x)) + x.shape + x.shape
    assert_twin_equal(got, dk.hessian(twin)(x), "hessian")
    assert_twin_equal(got, dk.jacrev(dk.jacfwd(plain))(x), "hessian vs jacrev(jacfwd)")
    assert_fd_close(got, central_difference_jacobian(dk.jacfwd(plain), x), "hessian")


@pytest.mark.parametrize("program", PROGRAMS, ids=repr)
def test_vmap_of_first_derivative_equals_per_point_loop(program):
    plain, _ = both_versions(program)
    points = np.stack([program.point, 0.9 * program.point])
    derivative = dk.grad(plain) if program.scalar else dk.jacrev(plain)
    expected = np.stack([derivative(x) for x in points])
    np.testing.assert_allclose(dk.vmap(derivative)(points), expected, rtol=RTOL, atol=ATOL)


# --- tensordot: autograd's silent zero ---------------------------------------------------

def test_tensordot_gives_the_true_gradient():
    """``f(X) = sum_i tanh(y_i)``, ``y = tensordot(A, X, axes=([1, 2], [0, 1]))``: the
    gradient is ``tensordot(1 - tanh(y)**2, A, axes=1)``, never zero here (autograd's NumPy
    dispatch returns zero for np.tensordot on its boxes)."""
    tensor = np.sin(np.arange(24.0)).reshape(4, 2, 3)       # A: (4, 2, 3)
    x = np.cos(np.arange(6.0)).reshape(2, 3)                # X: (2, 3)

    def f(x):
        return np.sum(np.tanh(np.tensordot(tensor, x, axes=([1, 2], [0, 1]))))

    y = np.einsum("ijk,jk->i", tensor, x)
    expected = np.tensordot(1.0 - np.tanh(y) ** 2, tensor, axes=1)
    assert np.all(np.abs(expected) > 1e-3)
    for name, derivative in (("grad", dk.grad), ("jacfwd", dk.jacfwd), ("jacrev", dk.jacrev)):
        np.testing.assert_allclose(derivative(f)(x), expected, rtol=1e-12, atol=1e-14,
                                   err_msg=name)


def test_tensordot_integer_axes_in_both_argument_positions():
    """``g(X) = tensordot(X, B, axes=2) + tensordot(C, X, axes=2)`` is linear, with gradient
    ``B + C`` for every ``X``; each argument position must carry the derivative."""
    b = np.arange(6.0).reshape(2, 3) + 1.0
    c = np.linspace(-1.0, 1.0, 6).reshape(2, 3)

    def g(x):
        return np.tensordot(x, b, axes=2) + np.tensordot(c, x, axes=2)

    x = np.ones((2, 3))
    for derivative in (dk.grad, dk.jacfwd, dk.jacrev):
        np.testing.assert_allclose(derivative(g)(x), b + c, rtol=1e-14)
