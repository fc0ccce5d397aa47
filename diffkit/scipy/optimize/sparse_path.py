"""The sparse path of ``minimize(method="trust-constr")`` and ``least_squares``: exact
derivatives handed to SciPy as ``scipy.sparse`` arrays, each computed in as many batched
passes as its sparsity pattern has colours (``diffkit.sparse``).

For each derivative diffkit computes (the objective's Hessian, each constraint's Jacobian
and Hessian, the residuals' Jacobian), the global pattern is detected at ``x0`` and
coloured once; every later evaluation is one batched pass over the colours (staged with
``diffkit.jit`` when the solver's ``jit`` is on), decompressed into a CSR array with that
same structure. The pattern holds on the path the function's Python control flow took at
``x0``: each batched pass checks its concrete reads against those of that path (when
``jit`` traces it; a replay runs only where a checked trace's guards hold), and a point on
another path gets the pattern of its own path, detected there and kept beside the first
(``_Compressed``). SciPy then receives a CSR array of another structure for that point.

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
from ...core.concrete import watch_reads
from ...errors import DensePatternWarning, DiffkitError, OptionError
from ...ops.sparsity_rules import scipy_sparse
from ...sparse import coloring as col
from ...sparse.derivatives import hessian_coloring, jacobian_coloring
from ...sparse.detection import hessian_pattern, jacobian_pattern
from ...sparse.paths import Path, ReadLog, same_reads

__all__ = ["DENSITY_THRESHOLD", "MIN_SIZE", "COLUMNS_PER_COLOUR", "SparsePathError"]

DENSITY_THRESHOLD = 0.05   # at most 5% of the entries stored,
MIN_SIZE = 200             # at least 200 columns,
COLUMNS_PER_COLOUR = 12    # at most one colour per 12 columns: then sparse pays
PATHS_KEPT = 4             # patterns kept per derivative, one per path of Python's branches


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


def choose(sparse, find, x0, name, what):
    """The pattern ``find(x0)`` gives, when the sparse path is taken for it; else None. Under
    ``MIN_SIZE`` parameters ``sparse=None`` detects nothing."""
    if sparse is False or (sparse is None and x0.size < MIN_SIZE):
        return None
    try:
        with warnings.catch_warnings():
            if sparse is None:   # the user did not ask: no warning about dense blocks
                warnings.simplefilter("ignore", DensePatternWarning)
            pattern = find(x0)
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


def _detector(find, sparse, name, what):
    """``detect(x)``: the pattern ``find(x)`` on a path the function takes at ``x`` that the
    pattern found at ``x0`` was not detected on; an error that says so when it fails."""
    def detect(x):
        try:
            with warnings.catch_warnings():
                if sparse is None:
                    warnings.simplefilter("ignore", DensePatternWarning)
                return find(x)
        except Exception as err:
            raise SparsePathError(
                f"{name}: the function's Python control flow took another path than where "
                f"the sparsity pattern of {what} was detected, and the pattern of the new "
                f"path could not be detected ({type(err).__name__}: {err}). Pass "
                "sparse=False for dense derivatives.") from err
    return detect


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


class PathChanged(Exception):
    """Raised by a batched pass whose concrete reads are not those of its pattern's path
    (inside a ``jit`` trace: the trace is not kept). ``reads``: the reads it made."""

    def __init__(self, reads):
        super().__init__("the function took another path than its pattern's")
        self.reads = reads


class _Route:
    """One path's way to the derivative: its ``coloring`` and ``seeds``, the ``point`` its
    pattern was detected at, and the ``name`` its batched pass is staged under."""

    def __init__(self, coloring, point, name):
        self.coloring, self.point, self.name = coloring, point, name
        self.seeds = np.asarray(coloring.seeds, np.float64)


class _Compressed:
    """A derivative from one batched pass over a colouring's seeds, then decompressed.

    The pattern is kept per path of the function's Python control flow (``diffkit.sparse``'s
    ``paths.py``): the batched pass watches its concrete reads and raises ``PathChanged``
    when they differ from those of the first pass with that pattern, made at the point of
    detection. Staged, the check runs when ``jit`` traces, and a trace that fails it is not
    kept; a replay runs only where the guards of a checked trace hold (the same reads).
    Another path is looked up among those met before, else detected at the point (``detect``)
    and kept beside them (``PATHS_KEPT``, the least recently used dropped)."""

    def __init__(self, pattern, x0, stager, key, detect):
        self.stager, self.key, self.detect = stager, key, detect
        self.made = 0
        self.paths = []
        self._add(pattern, np.array(x0, np.float64))

    def _add(self, pattern, point):
        self.made += 1
        name = self.key if self.made == 1 else f"{self.key} (path {self.made})"
        path = Path(_Route(self._color(pattern), point, name))
        self.paths.insert(0, path)
        for dropped in self.paths[PATHS_KEPT:]:
            getattr(self.stager, "staged", {}).pop(dropped.made.name, None)
        del self.paths[PATHS_KEPT:]
        return path

    @property
    def coloring(self):
        """The colouring of the path met last."""
        return self.paths[0].made.coloring

    @property
    def pattern(self):
        return self.coloring.pattern

    def _checked(self, path):
        """The batched pass of ``path`` (``_make``), raising ``PathChanged`` off its path."""
        compressed = self._make(path.made.coloring)

        def checked(*values):
            log = ReadLog()
            with watch_reads(log):
                out = compressed(*values)
            if not path.accepts(log.reads):
                raise PathChanged(log.reads)
            return out

        return checked

    def _run(self, path, x, *extra):
        route = path.made
        if path.reads is None and not np.array_equal(x, route.point):
            # the first pass sets the path's reads: it must run where the path was found
            self.stager.run(route.name, lambda: self._checked(path), route.point,
                            route.seeds, *extra)
        return self.stager.run(route.name, lambda: self._checked(path), x, route.seeds,
                               *extra)

    def evaluate(self, x, *extra):
        """``(coloring, outputs of the batched pass)`` at the plain ``x`` on the path the
        function takes there."""
        reads = None
        for path in list(self.paths):
            if reads is not None and path.reads is not None \
                    and not same_reads(path.reads, reads):
                continue   # its first pass read other values: another path
            try:
                out = self._run(path, x, *extra)
            except PathChanged as changed:
                reads = changed.reads
                continue
            self.paths.remove(path)
            self.paths.insert(0, path)
            return path.made.coloring, out
        with watch_reads(None):   # detection's reads are not a pass's
            pattern = self.detect(x)
        path = self._add(pattern, np.array(x, copy=True))
        return path.made.coloring, self._run(path, x, *extra)

    @staticmethod
    def decompress(coloring, compressed):
        return col.from_gather(compressed, coloring.take, coloring.pattern)

    @staticmethod
    def zeros(coloring):
        return scipy_sparse().csr_array(coloring.pattern.shape, dtype=np.float64)


def _watched_pass(fun, x):
    """``fun(x)`` computed through a traced pass, so that its concrete reads are seen (a
    pattern without entries has no batched pass to see them in)."""
    return api.vjp(fun, x)[0]


class HessianOf(_Compressed):
    """``hess(x, *extra)``: the Hessian of the scalar ``fun(y, *extra)`` in ``y`` as a CSR
    array with the structure of the pattern of the path taken at ``x``: forward-over-reverse
    products over a star colouring."""

    def __init__(self, fun, pattern, x0, stager, key, detect):
        self.fun = fun
        super().__init__(pattern, x0, stager, key, detect)

    @staticmethod
    def _color(pattern):
        return hessian_coloring(pattern)

    def _make(self, coloring):
        fun = self.fun
        if coloring.num_colors == 0:
            def compressed(x, seeds, *extra):
                _watched_pass(lambda y: fun(y, *extra), x)
                return np.zeros((0, x.size))
            return compressed

        def compressed(x, seeds, *extra):
            gradient = api.grad(lambda y: fun(y, *extra))
            return api.vmap(lambda s: api.jvp(gradient, (x,), (s,))[1])(seeds)

        return compressed

    def __call__(self, x, *extra):
        x = np.asarray(x, np.float64)
        extra = tuple(np.asarray(e, np.float64) for e in extra)
        coloring, compressed = self.evaluate(x, *extra)
        if coloring.num_colors == 0:
            return self.zeros(coloring)
        return self.decompress(coloring, compressed)


class JacobianOf(_Compressed):
    """``values_and_jac(x)``: the values of the vector function ``fun`` and its Jacobian as
    a CSR array with the structure of the pattern of the path taken at ``x`` (column
    colouring and one batched JVP, or row colouring and one batched VJP, whichever needs
    fewer colours)."""

    def __init__(self, fun, pattern, x0, stager, key, detect):
        self.fun = fun
        super().__init__(pattern, x0, stager, key, detect)

    @staticmethod
    def _color(pattern):
        return jacobian_coloring(pattern, "auto")

    def _make(self, coloring):
        fun = self.fun
        if coloring.num_colors == 0:
            def compressed(x, seeds):
                return _watched_pass(fun, x), np.zeros(0)
        elif coloring.mode == "forward":
            def compressed(x, seeds):
                return api.vmap(lambda s: api.jvp(fun, (x,), (s,)), out_axes=(None, 0))(seeds)
        else:
            def compressed(x, seeds):
                out, pull = api.vjp(fun, x)
                return out, api.vmap(pull)(seeds)[0]
        return compressed

    def values_and_jac(self, x):
        x = np.asarray(x, np.float64)
        coloring, (values, compressed) = self.evaluate(x)
        values = np.asarray(values, np.float64)
        if coloring.num_colors == 0:
            return values, self.zeros(coloring)
        return values, self.decompress(coloring, compressed)

    def __call__(self, x):
        return self.values_and_jac(x)[1]


# --- what the solvers use ---------------------------------------------------------------


def _evaluator(kind, fun, find, x0, sparse, stager, key, name, what):
    """A ``kind`` (``HessianOf``, ``JacobianOf``) of ``fun`` on the pattern ``find(x0)``
    when the sparse path is taken for it, else None."""
    pattern = choose(sparse, find, x0, name, what)
    if pattern is None:
        return None
    return _few_colours(kind(fun, pattern, x0, stager, key,
                             _detector(find, sparse, name, what)), sparse)


def objective_hessian(of_flat, x0, sparse, stager, name="minimize"):
    """The sparse Hessian of the objective ``of_flat`` (a ``HessianOf``), or None for the
    dense one."""
    return _evaluator(HessianOf, lambda y: of_flat(y),
                      lambda x: hessian_pattern(_as_row(of_flat), x, name=name), x0, sparse,
                      stager, "sparse hess", name, "the objective's Hessian")


def constraint_derivatives(traced, x0, sparse, stager, index, want=(True, True),
                           name="minimize"):
    """``(jac, hess)`` of the constraint ``traced`` (flat vector -> flat values) on the
    sparse path, each None where the dense one is used (or where ``want`` says it is not
    used): ``jac(x)`` a CSR ``(m, n)``, ``hess(x, v)`` the CSR Hessian of ``v @ traced``
    (its pattern: the union of the constraint entries' Hessian patterns)."""
    what = f"constraint {index}"
    jac = _evaluator(JacobianOf, traced, lambda x: jacobian_pattern(traced, x), x0,
                     sparse if want[0] else False, stager, f"{what} jac", name,
                     f"{what}'s Jacobian")
    hess = _evaluator(HessianOf, lambda y, v: dnp.sum(v * traced(y)),
                      lambda x: hessian_pattern(_as_row(lambda y: dnp.sum(traced(y))), x,
                                                name=name),
                      x0, sparse if want[1] else False, stager, f"{what} hess", name,
                      f"{what}'s Hessian")
    return jac, hess


def residual_jacobian(traced, x0, sparse, stager, name="least_squares"):
    """The sparse Jacobian of the residuals ``traced`` (a ``JacobianOf``), or None."""
    return _evaluator(JacobianOf, traced, lambda x: jacobian_pattern(traced, x), x0, sparse,
                      stager, "sparse jac", name, "the residuals' Jacobian")


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
