"""The sparse path of ``minimize(method="trust-constr")`` and ``least_squares``: exact
derivatives handed to SciPy as ``scipy.sparse`` arrays, each computed in as many batched
passes as its sparsity pattern has colours (``diffkit.sparse``).

For each derivative diffkit computes (the objective's Hessian, each constraint's Jacobian
and Hessian, the residuals' Jacobian), the global pattern is detected once, at ``x0``, and
coloured once; every later evaluation is one batched pass over the colours (staged with
``diffkit.jit`` when the solver's ``jit`` is on), decompressed into a CSR array with that
same structure.

The choice, per derivative: ``sparse=True`` takes the sparse path (an error when the
pattern cannot be detected), ``sparse=False`` never does, and ``sparse=None`` takes it when
the pattern has at least ``MIN_SIZE`` columns, a density (stored entries over all entries) of
at most ``DENSITY_THRESHOLD``, and at most one colour (one batched pass) per
``COLUMNS_PER_COLOUR`` columns. The figures come from measurements (``benchmarks/sparse.py``,
the "dense or sparse" table): outside them the dense derivative, staged, is about as fast
as the sparse one, and SciPy's dense linear algebra (an SVD for ``least_squares``) is
faster than its sparse one (LSMR iterations).

trust-constr forms the Lagrangian's Hessian as the sum of the objective's Hessian and, for
each constraint, the Hessian of ``v @ c``, each asked for separately. Each is computed on
its own pattern, so the Lagrangian's pattern is the union of theirs (SciPy sums the
products). That is exact and the cheapest split: one pattern for the union could need more
colours than any part, and every part is asked for anyway.
"""

import warnings

import numpy as np

from ... import api
from ... import numpy as dnp
from ...errors import DensePatternWarning, DiffkitError, OptionError
from ...ops.sparsity_rules import scipy_sparse
from ...sparse import coloring as col
from ...sparse.derivatives import hessian_coloring, jacobian_coloring
from ...sparse.detection import hessian_pattern, jacobian_pattern

__all__ = ["DENSITY_THRESHOLD", "MIN_SIZE", "COLUMNS_PER_COLOUR", "SparsePathError"]

DENSITY_THRESHOLD = 0.05   # at most 5% of the entries stored,
MIN_SIZE = 200             # at least 200 columns,
COLUMNS_PER_COLOUR = 12    # at most one colour per 12 columns: then sparse pays


class SparsePathError(DiffkitError, ValueError):
    """``sparse=True`` was asked for where the sparse path cannot run."""


def check_option(sparse, name):
    if sparse is not None and not isinstance(sparse, bool):
        raise OptionError(f"{name}: sparse={sparse!r}; use True (sparse derivatives), False "
                          "(dense ones) or None (sparse when the detected pattern is sparse "
                          f"enough: density <= {DENSITY_THRESHOLD:g} and at least "
                          f"{MIN_SIZE} columns, at most one colour per "
                          f"{COLUMNS_PER_COLOUR} columns)")


def density(pattern):
    rows, cols = pattern.shape
    return pattern.nnz / (rows * cols) if rows * cols else 1.0


def worth_it(pattern):
    """Whether ``sparse=None`` takes the sparse path for this pattern."""
    return pattern.shape[1] >= MIN_SIZE and density(pattern) <= DENSITY_THRESHOLD


def choose(sparse, detect, name, what, columns):
    """The pattern ``detect()`` finds, when the sparse path is taken for it; else None.
    ``columns``: the number of parameters (under ``MIN_SIZE``, ``None`` detects nothing)."""
    if sparse is False or (sparse is None and columns < MIN_SIZE):
        return None
    try:
        with warnings.catch_warnings():
            if sparse is None:   # the user did not ask: no warning about dense blocks
                warnings.simplefilter("ignore", DensePatternWarning)
            pattern = detect()
    except Exception as err:
        if sparse is None:
            return None   # the dense path runs the function again (and raises its error)
        raise SparsePathError(
            f"{name}: sparse=True, but the sparsity pattern of {what} could not be "
            f"detected ({type(err).__name__}: {err}). Pass sparse=False for dense "
            "derivatives.") from err
    if sparse is None and not worth_it(pattern):
        return None
    return pattern


def _few_colours(evaluator, sparse):
    """``evaluator``, unless ``sparse=None`` and its colouring needs too many passes."""
    if evaluator is None or sparse is not None:
        return evaluator
    coloring = evaluator.coloring
    if coloring.num_colors * COLUMNS_PER_COLOUR > coloring.pattern.shape[1]:
        return None
    return evaluator


def _as_row(fun):
    """A scalar function of the flat vector as one returning a vector of one entry."""
    return lambda y: dnp.reshape(fun(y), (1,))


# --- evaluation -------------------------------------------------------------------------


class _Compressed:
    """A derivative from one batched pass over a colouring's seeds, then decompressed."""

    def __init__(self, coloring, stager, key):
        self.coloring, self.stager, self.key = coloring, stager, key
        self.seeds = np.asarray(coloring.seeds, np.float64)

    @property
    def pattern(self):
        return self.coloring.pattern

    def decompress(self, compressed):
        return col.from_gather(compressed, self.coloring.take, self.coloring.pattern)

    def zeros(self):
        return scipy_sparse().csr_array(self.coloring.pattern.shape, dtype=np.float64)


class HessianOf(_Compressed):
    """``hess(x, *extra)``: the Hessian of the scalar ``fun(y, *extra)`` in ``y`` as a CSR
    array with the structure of ``pattern``: forward-over-reverse products over a star
    colouring."""

    def __init__(self, fun, pattern, stager, key):
        super().__init__(hessian_coloring(pattern), stager, key)
        self.fun = fun

    def _make(self):
        fun = self.fun

        def compressed(x, seeds, *extra):
            gradient = api.grad(lambda y: fun(y, *extra))
            return api.vmap(lambda s: api.jvp(gradient, (x,), (s,))[1])(seeds)

        return compressed

    def __call__(self, x, *extra):
        if self.coloring.num_colors == 0:
            return self.zeros()
        x = np.asarray(x, np.float64)
        extra = tuple(np.asarray(e, np.float64) for e in extra)
        return self.decompress(self.stager.run(self.key, self._make, x, self.seeds, *extra))


class JacobianOf(_Compressed):
    """``values_and_jac(x)``: the values of the vector function ``fun`` and its Jacobian as
    a CSR array with the structure of ``pattern`` (column colouring and one batched JVP, or
    row colouring and one batched VJP, whichever needs fewer colours)."""

    def __init__(self, fun, pattern, stager, key):
        super().__init__(jacobian_coloring(pattern, "auto"), stager, key)
        self.fun = fun

    def _make(self):
        fun = self.fun
        if self.coloring.mode == "forward":
            def compressed(x, seeds):
                return api.vmap(lambda s: api.jvp(fun, (x,), (s,)), out_axes=(None, 0))(seeds)
        else:
            def compressed(x, seeds):
                out, pull = api.vjp(fun, x)
                return out, api.vmap(pull)(seeds)[0]
        return compressed

    def values_and_jac(self, x):
        x = np.asarray(x, np.float64)
        if self.coloring.num_colors == 0:
            return np.asarray(self.stager.run(self.key + "/values", lambda: self.fun, x),
                              np.float64), self.zeros()
        values, compressed = self.stager.run(self.key, self._make, x, self.seeds)
        return np.asarray(values, np.float64), self.decompress(compressed)

    def __call__(self, x):
        return self.values_and_jac(x)[1]


# --- what the solvers use ---------------------------------------------------------------


def objective_hessian(of_flat, x0, sparse, stager, name="minimize"):
    """The sparse Hessian of the objective ``of_flat`` (a ``HessianOf``), or None for the
    dense one."""
    pattern = choose(sparse, lambda: hessian_pattern(_as_row(of_flat), x0, name=name),
                     name, "the objective's Hessian", x0.size)
    if pattern is None:
        return None
    return _few_colours(HessianOf(lambda y: of_flat(y), pattern, stager, "sparse hess"),
                        sparse)


def constraint_derivatives(traced, x0, sparse, stager, index, want=(True, True),
                           name="minimize"):
    """``(jac, hess)`` of the constraint ``traced`` (flat vector -> flat values) on the
    sparse path, each None where the dense one is used (or where ``want`` says it is not
    used): ``jac(x)`` a CSR ``(m, n)``, ``hess(x, v)`` the CSR Hessian of ``v @ traced``
    (its pattern: the union of the constraint entries' Hessian patterns)."""
    what = f"constraint {index}"
    jac_pattern = choose(sparse if want[0] else False, lambda: jacobian_pattern(traced, x0),
                         name, f"{what}'s Jacobian", x0.size)
    hess_pattern = choose(
        sparse if want[1] else False,
        lambda: hessian_pattern(_as_row(lambda y: dnp.sum(traced(y))), x0, name=name),
        name, f"{what}'s Hessian", x0.size)
    jac = None if jac_pattern is None else \
        JacobianOf(traced, jac_pattern, stager, f"constraint {index} jac")
    hess = None if hess_pattern is None else \
        HessianOf(lambda y, v: dnp.sum(v * traced(y)), hess_pattern, stager,
                  f"constraint {index} hess")
    return _few_colours(jac, sparse), _few_colours(hess, sparse)


def residual_jacobian(traced, x0, sparse, stager, name="least_squares"):
    """The sparse Jacobian of the residuals ``traced`` (a ``JacobianOf``), or None."""
    pattern = choose(sparse, lambda: jacobian_pattern(traced, x0), name,
                     "the residuals' Jacobian", x0.size)
    return None if pattern is None else \
        _few_colours(JacobianOf(traced, pattern, stager, "sparse jac"), sparse)


def minimize_hessian(objective, method, hess, hessp, sparse, x0, stager):
    """The sparse Hessian ``minimize`` gives SciPy for the objective, or None: only
    trust-constr takes a sparse ``hess``, and only the automatic one is made sparse."""
    name = method.lower() if isinstance(method, str) else None
    if name != "trust-constr":
        if sparse:
            raise SparsePathError(
                f"minimize: sparse=True, but method={method!r} takes no sparse Hessian; use "
                "method='trust-constr' (sparse Hessians and constraint Jacobians)")
        return None
    if hess is not None or hessp is not None:
        return None   # the user's Hessian
    return objective_hessian(objective.of_flat, x0, sparse, stager)


def least_squares_jacobian(residuals, x0, jac, sparse, options):
    """The sparse Jacobian of ``least_squares`` (a ``JacobianOf``), or None; on the sparse
    path SciPy's ``tr_solver`` becomes ``"lsmr"`` unless the user set it (``options``)."""
    method, solver = options.get("method", "trf"), options.get("tr_solver")
    if sparse:
        if jac is not None:
            raise SparsePathError("least_squares: sparse=True makes the Jacobian diffkit "
                                  "computes sparse, but jac= was given; drop one of them")
        if method == "lm":
            raise SparsePathError("least_squares: sparse=True, but method='lm' takes only "
                                  "dense Jacobians; use method='trf' or 'dogbox'")
        if solver == "exact":
            raise SparsePathError("least_squares: sparse=True, but tr_solver='exact' works "
                                  "only with dense Jacobians; use tr_solver='lsmr' (or "
                                  "leave it unset)")
    if jac is not None or method == "lm" or solver == "exact":
        return None
    found = residual_jacobian(residuals._traced, x0, sparse, residuals.stager)
    if found is not None and solver is None:
        options["tr_solver"] = "lsmr"
    return found
