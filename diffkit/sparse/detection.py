"""Sparsity patterns of Jacobians and Hessians, detected from a function's program
(``diffkit.interpreters.sparsity`` tracks, for every value, the input entries it depends
on, with each primitive's structural rule).

The Hessian pattern is the Jacobian pattern of the gradient program (``grad`` run under
detection): linear operations create no interaction between inputs, products and
nonlinear functions do, exactly as the reverse pass writes them. Programs of elementwise
and linear primitives take a shorter route with the same result: one forward pass that
records where nonlinear primitives make dependence rows meet
(``diffkit.interpreters.interactions``).
"""

import functools

from ..api import grad
from ..api_checks import check_argnums, check_callable
from ..core.zeros import shape_of
from ..errors import ShapeMismatchError
from ..interpreters.interactions import interaction_pattern
from ..interpreters.sparsity import sparsity_flat
from ..ops.sparsity_rules import scipy_sparse
from .flat import flat_problem

__all__ = ["jacobian_sparsity", "hessian_sparsity"]


def jacobian_pattern(g, x, local=False):
    """The ``(m, n)`` boolean CSR pattern of the vector function ``g`` at the vector ``x``."""
    return sparsity_flat(g, x, local=local)[1]


def scalar_output(g, name):
    """``g`` (a function of a vector returning a vector) as a function returning its one
    entry; an error when it returns more."""
    def scalar(vector):
        out = g(vector)
        if shape_of(out) != (1,):
            raise ShapeMismatchError(
                f"{name}: the function must return a scalar (one number), but it returned "
                f"{shape_of(out)[0]} numbers")
        return out[0]

    return scalar


def hessian_pattern(g, x, local=False, name="hessian_sparsity"):
    """The symmetric ``(n, n)`` pattern of the Hessian of the scalar ``g`` at ``x``."""
    sp = scipy_sparse()
    pattern = interaction_pattern(g, x, local)   # elementwise and linear programs
    scalar = scalar_output(g, name)
    if pattern is not None:
        return pattern
    gradient = grad(scalar)
    pattern = sparsity_flat(gradient, x, local=local, name=name)[1]
    return sp.csr_array(pattern + pattern.T)   # canonical: sorted, no duplicates


def jacobian_sparsity(fun, argnums=0, local=False):
    """A function returning the sparsity pattern of the Jacobian of ``fun`` at its
    arguments: a boolean ``scipy.sparse.csr_array`` of shape ``(out.size, in.size)``,
    pytrees flattened as ``ravel_pytree`` does (as ``sparse_jacobian``).

    The pattern is *global* by default: derived from the program's structure, it holds
    for every input of these shapes, so it never misses a nonzero (a ``where`` keeps both
    branches, a ``maximum`` both arguments). Python control flow on values in ``fun``
    runs as at the given arguments. ``local=True`` gives the pattern at this point: the
    branch a ``where`` takes, the winner of a ``maximum`` or ``max``.

    Each primitive contributes its exact structure (elementwise: the diagonal; indexing,
    reshapes, ``concatenate``, ``roll``, ``transpose``: where each entry moves;
    reductions, ``matmul``, ``einsum``: what is combined). A primitive without a
    structural rule makes each of its output entries depend on all of its inputs' entries,
    with a ``diffkit.errors.DensePatternWarning`` naming it.

    Examples:
        >>> def f(x):
        ...     return dnp.where(x > 0, x, 2 * dnp.roll(x, 1))
        >>> x = np.array([1.0, 2.0, 3.0])
        >>> pattern = dk.jacobian_sparsity(f)(x)
        >>> type(pattern).__name__, pattern.dtype, pattern.shape
        ('csr_array', dtype('bool'), (3, 3))
        >>> pattern.toarray().astype(int).tolist()    # both branches of the where
        [[1, 0, 1], [1, 1, 0], [0, 1, 1]]
        >>> dk.jacobian_sparsity(f, local=True)(x).toarray().astype(int).tolist()
        [[1, 0, 0], [0, 1, 0], [0, 0, 1]]

        Pytrees are flattened as ``ravel_pytree`` flattens them:

        >>> dk.jacobian_sparsity(lambda p: p["a"] * p["b"][0])(
        ...     {"a": np.ones(2), "b": np.ones(3)}).toarray().astype(int).tolist()
        [[1, 0, 1, 0, 0], [0, 1, 1, 0, 0]]
    """
    check_callable(fun, "jacobian_sparsity")
    check_argnums(argnums, "jacobian_sparsity")

    @functools.wraps(fun)
    def pattern_fun(*args, **kwargs):
        g, x = flat_problem(fun, args, kwargs, argnums, "jacobian_sparsity")
        return jacobian_pattern(g, x, local)

    return pattern_fun


def hessian_sparsity(fun, argnums=0, local=False):
    """A function returning the sparsity pattern of the Hessian of the scalar ``fun``: a
    symmetric boolean ``scipy.sparse.csr_array`` of shape ``(in.size, in.size)``, the
    Jacobian pattern of the gradient program (``local`` and pytrees as in
    ``jacobian_sparsity``). Inputs that enter only linearly have no entries. A program of
    elementwise and linear primitives is read in one forward pass instead, which also
    drops the products whose entries never reach the output (a slice of a nonlinear
    value): never coarser than the gradient program's pattern.

    Examples:
        >>> def h(x):
        ...     return dnp.sum(x[:-1] ** 2 * x[1:]) + dnp.sum(x)
        >>> pattern = dk.hessian_sparsity(h)(np.ones(4))
        >>> pattern.shape, pattern.toarray().astype(int).tolist()
        ((4, 4), [[1, 1, 0, 0], [1, 1, 1, 0], [0, 1, 1, 1], [0, 0, 1, 0]])
        >>> pattern = dk.hessian_sparsity(lambda x: x[0] * x[1] + 3 * x[2])(np.ones(3))
        >>> pattern.toarray().astype(int).tolist()    # x[2] enters only linearly
        [[0, 1, 0], [1, 0, 0], [0, 0, 0]]
    """
    check_callable(fun, "hessian_sparsity")
    check_argnums(argnums, "hessian_sparsity")

    @functools.wraps(fun)
    def pattern_fun(*args, **kwargs):
        g, x = flat_problem(fun, args, kwargs, argnums, "hessian_sparsity")
        return hessian_pattern(g, x, local)

    return pattern_fun

