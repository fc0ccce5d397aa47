"""Compressed evaluation: a whole sparse Jacobian or Hessian from one batched pass over the
colours of its pattern.

Pytrees are flattened as ``diffkit.flatten_util.ravel_pytree`` flattens them: the inputs
named by ``argnums`` (one argument, or a tuple of them taken as one pytree) become one
vector of ``n`` entries, the output one vector of ``m`` entries, leaves in
``tree_leaves`` order, each in C order. The result is a ``scipy.sparse.csr_array`` of shape
``(m, n)`` (``(n, n)`` for a Hessian) whose stored entries are exactly the pattern's (an
entry of the pattern whose derivative is 0 at this point is stored as an explicit 0, so
the structure does not change from one point to the next).

- Forward (``mode="forward"``): colour the columns; one ``vmap`` of ``jvp`` over the seed
  matrix ``S`` (``n`` by the number of colours) gives ``J @ S``.
- Reverse (``mode="reverse"``): colour the rows; one ``vmap`` of the pullback over the
  row seeds gives ``S.T @ J``.
- Bidirectional (``mode="bidirectional"``): colour columns and rows together
  (``coloring.bicoloring``: the dense rows read from reverse products, the rest from
  forward ones, or the same with dense columns); one batched JVP and one batched VJP.
- ``mode="auto"`` takes the side with fewer colours (forward on a tie), or the
  bidirectional colouring when it needs clearly fewer products
  (``coloring.jacobian_scheme``).
- Hessian: star-colour the symmetric pattern; one ``vmap`` of forward-over-reverse
  Hessian-vector products gives ``H @ S``, each entry read directly.

With ``sparsity=None`` the pattern is detected (``jacobian_sparsity``,
``hessian_sparsity``: global patterns, valid at every point of the path the function's
Python control flow takes) on the first call for each input signature, the structure and
shapes and dtypes of all arguments, and kept with its colouring and the concrete reads of
its first evaluation (``paths.py``). Every later call compares the reads its evaluation
makes (truth tests, ``int``, indices, masks of traced values) with those, and the values of
the plain arguments not differentiated with those the pattern was detected with; a call on
another path is evaluated again with that path's pattern (detected there, kept beside the
others). A known pattern can be passed instead: a SciPy sparse array (or a 2-D NumPy array)
of the right shape, taken as it is (the user's promise; no path is checked).

Under ``jit`` the batched pass is staged (one trace per signature) and the result is a
CSR array; under ``vmap`` it is a ``scipy.sparse.coo_array`` of shape
``(*batch, rows, cols)``, batch axes first (``traced.py``).
"""

import functools
import warnings
from typing import NamedTuple

import numpy as np

from .. import numpy as dnp
from ..api import grad, hessian, jacfwd, jvp, vjp, vmap
from ..api_checks import (
    argnum_positions,
    check_argnums,
    check_callable,
    check_chunk_size,
    describe,
)
from ..core.concrete import watch_reads
from ..core.trace import Tracer
from ..core.zeros import dtype_of, shape_of
from ..errors import OptionError, PerformanceWarning, ShapeMismatchError
from ..jit import randomness
from ..ops.sparsity_rules import scipy_sparse
from . import coloring as col
from .detection import hessian_pattern, jacobian_pattern, scalar_output
from .flat import flat_problem, signature
from .paths import Path, PathCache, ReadLog, fixed_values, same_reads
from .traced import empty_result, sparse_result

__all__ = ["sparse_jacobian", "sparse_hessian", "Coloring"]

MODES = ("auto", "forward", "reverse", "bidirectional")
_SIGNATURES_KEPT = 32   # per function: more signatures start the cache afresh
_PATHS_KEPT = 8         # per signature: the least recently used path is dropped


class Coloring(NamedTuple):
    """How a sparse derivative is computed for one input signature: the ``pattern``
    (boolean CSR), the ``mode`` (``"forward"``, ``"reverse"``, ``"bidirectional"`` or
    ``"star"``), one colour per column (forward, bidirectional, star) or row (reverse) in
    ``colors``, and ``num_colors``, the number of derivative passes batched (for
    ``"bidirectional"``: the forward ones plus the reverse ones). ``seeds`` (one row per
    colour) and ``take`` (where each stored entry is read in the compressed result) are
    what the evaluation uses. A bidirectional colouring also has ``row_colors`` and
    ``row_seeds`` (its reverse side); a colour of -1 puts a line in no seed.

    Examples:
        >>> coloring = dk.sparse_jacobian(lambda x: x[1:] * x[:-1]).coloring(np.ones(4))
        >>> coloring.mode, coloring.num_colors, coloring.colors.tolist()
        ('forward', 2, [0, 1, 0, 1])
        >>> coloring.pattern.toarray().astype(int).tolist()
        [[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1]]
        >>> coloring.seeds.tolist()    # one row per colour
        [[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0]]
    """

    pattern: object
    mode: str
    colors: np.ndarray
    num_colors: int
    seeds: np.ndarray
    take: np.ndarray
    row_colors: np.ndarray | None = None
    row_seeds: np.ndarray | None = None


def _coloring(pattern, mode, colors, gather):
    return Coloring(pattern, mode, colors, int(colors.max(initial=-1)) + 1,
                    col.seed_matrix(colors).T.copy(), gather(pattern, colors))


def _bidirectional(pattern, colors, rows):
    seeds, row_seeds = col.seed_matrix(colors).T.copy(), col.seed_matrix(rows).T.copy()
    return Coloring(pattern, "bidirectional", colors, len(seeds) + len(row_seeds), seeds,
                    col.gather_bidirectional(pattern, colors, rows), rows, row_seeds)


def _check_pattern(sparsity, shape, name, square=False):
    try:
        pattern = col.as_pattern(sparsity, f"{name}: sparsity", square=square)
    except ShapeMismatchError as err:
        raise ShapeMismatchError(str(err)) from None
    if pattern.shape != shape:
        raise ShapeMismatchError(
            f"{name}: sparsity has shape {pattern.shape}, but the derivative has shape "
            f"{shape} (outputs x inputs, pytrees flattened as ravel_pytree does)")
    return pattern


def _check_sparsity_type(sparsity, name):
    if sparsity is None or (isinstance(sparsity, np.ndarray) and sparsity.ndim == 2) \
            or scipy_sparse().issparse(sparsity):
        return
    raise ShapeMismatchError(
        f"{name}: sparsity must be None (detect it) or a 2-D SciPy sparse array (or a 2-D "
        f"NumPy array) of booleans, not {describe(sparsity)}")


# --- the colourings -----------------------------------------------------------------------


def jacobian_coloring(pattern, mode, bidirectional=False):
    """The ``Coloring`` of a Jacobian pattern for ``mode`` (``"auto"``: fewer colours, a
    bidirectional colouring among the candidates only with ``bidirectional=True``)."""
    sides = {"forward": ("forward",), "reverse": ("reverse",),
             "bidirectional": ("bidirectional",)}.get(mode, ("forward", "reverse"))
    if mode == "auto" and bidirectional:
        sides += ("bidirectional",)
    chosen, colors, rows = col.jacobian_scheme(pattern, sides)
    if chosen == "bidirectional":
        return _bidirectional(pattern, colors, rows)
    gather = col.gather_columns if chosen == "forward" else col.gather_rows
    return _coloring(pattern, chosen, colors, gather)


def hessian_coloring(pattern):
    colors = col.star_coloring(pattern)
    return _coloring(pattern, "star", colors, col.gather_star)


# --- the transformations ------------------------------------------------------------------


class _SparseDerivative:
    """A function computing a sparse derivative; ``coloring(*args)`` tells how.

    A given ``sparsity`` is coloured once per input signature (``_given``). A detected one
    is kept per signature and path (``paths.py``): each call evaluates with the most
    recent pattern whose path the call takes, checked by the concrete reads the evaluation
    makes, and detects again on a path not seen before."""

    def __init__(self, fun, argnums, sparsity, name, chunks=(None, None, False)):
        self.fun, self.argnums, self.sparsity, self.name = fun, argnums, sparsity, name
        # (chunk_size, executor, progress): the colours are swept by vmap's chunks
        self.chunk_size, self.executor, self.progress = chunks
        self._given = {}
        self._paths = PathCache(_SIGNATURES_KEPT, _PATHS_KEPT)
        functools.update_wrapper(self, fun, updated=())

    def _chunks(self):
        return {"chunk_size": self.chunk_size, "executor": self.executor,
                "progress": self.progress}

    def __call__(self, *args, **kwargs):
        return self._run(args, kwargs)[0]

    def coloring(self, *args, **kwargs):
        """The ``Coloring`` used at these arguments: the pattern, the mode (``"forward"``,
        ``"reverse"``, or ``"star"`` for a Hessian) and the colours. It is the colouring
        of the path the function takes at these arguments, so the derivative is computed
        (as a call computes it) to find out."""
        return self._run(args, kwargs)[1]

    def _run(self, args, kwargs):
        """``(derivative, coloring)`` at these arguments."""
        g, x = flat_problem(self.fun, args, kwargs, self.argnums, self.name)
        if self.sparsity is not None:   # the user's pattern: no detection, no guard
            info = self._given_coloring(g, x, args, kwargs)
            return self._finish(info, self._evaluate(info, g, x, ReadLog()), x), info
        key = signature(args, kwargs)
        positions = argnum_positions(self.argnums, isinstance(self.argnums, (tuple, list)),
                                     len(args), self.name)
        fixed = fixed_values(args, kwargs, positions)
        reads = None
        for path in self._paths.candidates(key, fixed):
            if reads is not None and not same_reads(path.reads, reads):
                continue   # its first evaluation read other values: another path
            log = ReadLog()
            raw = self._evaluate(path.made, g, x, log)
            if path.accepts(log.reads):
                self._paths.use(key, path)
                return self._finish(path.made, raw, x), path.made
            reads = log.reads
        generators = randomness.reachable_generators(self.fun)
        before = randomness.snapshot(generators)
        with watch_reads(None):   # detection's reads are not the evaluation's
            info = self._detect(g, x)
        log = ReadLog()
        raw = self._evaluate(info, g, x, log)
        where = randomness.changed(before, generators)
        if where is not None:   # the two passes may have taken different paths
            return self._dense_instead(g, x, where), info
        self._paths.use(key, Path(info, fixed, log.reads))
        return self._finish(info, raw, x), info

    def _dense_instead(self, g, x, where):
        """The dense derivative of ``g`` at ``x``, every entry stored, with a warning: the
        function drew random numbers, so no pattern can be known to hold for this call."""
        warnings.warn(
            f"{self.name}: the function drew random numbers ({where}) while its sparsity "
            "pattern was detected and evaluated; a pattern found on one draw may not hold "
            "for another (a branch on a drawn value is no read of a traced value), so the "
            "dense derivative is computed instead, every entry stored. Draw the numbers "
            "outside and pass them in as an argument to get the sparse one.",
            PerformanceWarning, stacklevel=3)
        dense = self._dense(g, x)
        rows, cols = shape_of(dense)
        full = scipy_sparse().csr_array(np.ones((rows, cols), bool))
        return sparse_result(dense, np.arange(rows * cols), full)

    def _given_coloring(self, g, x, args, kwargs):
        key = signature(args, kwargs)   # a given pattern is checked once per signature
        try:
            found = self._given.get(key)
        except TypeError:   # an unhashable static argument: no caching
            return self._from_given(g, x)
        if found is None:
            if len(self._given) >= _SIGNATURES_KEPT:
                self._given.clear()
            found = self._given[key] = self._from_given(g, x)
        return found

    def _watched_pass(self, g, x, log):
        """Run ``g`` at ``x`` under ``log`` only to see its path: for a pattern without
        entries (nothing to evaluate) and for passes an executor makes elsewhere. A given
        pattern has no path to check (``g`` still runs: its errors are raised)."""
        if self.sparsity is not None:
            g(x)
            return
        with watch_reads(log):
            vjp(g, x)


class SparseJacobian(_SparseDerivative):
    def __init__(self, fun, argnums, sparsity, mode, chunks=(None, None, False)):
        super().__init__(fun, argnums, sparsity, "sparse_jacobian", chunks)
        self.mode = mode

    def _detect(self, g, x):
        return jacobian_coloring(jacobian_pattern(g, x), self.mode, bidirectional=True)

    @staticmethod
    def _dense(g, x):
        return jacfwd(g)(x)

    def _from_given(self, g, x):
        out_size = int(np.prod(shape_of(g(x))))
        pattern = _check_pattern(self.sparsity, (out_size, x.size), self.name)
        return jacobian_coloring(pattern, self.mode, bidirectional=True)

    def _evaluate(self, info, g, x, log):
        """The evaluation pass, its concrete reads kept in ``log``: ``None`` (nothing to
        evaluate), ``("forward", out, compressed)``, ``("reverse", out, pull)`` or
        ``("bidirectional", out, (compressed, pull))`` (the pullback is applied once the
        path is known to be the pattern's)."""
        if info.num_colors == 0 or info.pattern.nnz == 0:
            self._watched_pass(g, x, log)
            return None
        if info.mode == "bidirectional":
            return self._evaluate_both(info, g, x, log)
        if info.mode == "forward":
            batched = vmap(lambda s: jvp(g, (x,), (s,)), out_axes=(None, 0), **self._chunks())
            seeds = info.seeds.astype(dtype_of(x), copy=False)
            if self.executor is not None:   # the passes run elsewhere
                self._watched_pass(g, x, log)
                return ("forward", *batched(seeds))
            with watch_reads(log):
                return ("forward", *batched(seeds))
        with watch_reads(log):
            out, pull = vjp(g, x)
        if self.executor is not None:   # a task on a worker makes its own forward pass
            pull = _Pullback(g, x)
        return "reverse", out, pull

    def _evaluate_both(self, info, g, x, log):
        """A bidirectional colouring's passes: the pullback (and the output), and the
        batched JVP over the column seeds when there are any."""
        forward = None
        batched = vmap(lambda s: jvp(g, (x,), (s,))[1], **self._chunks())
        seeds = info.seeds.astype(dtype_of(x), copy=False)
        with watch_reads(log):
            out, pull = vjp(g, x)
            if len(seeds) and self.executor is None:
                forward = batched(seeds)
        if self.executor is not None:   # the passes run elsewhere; the path was watched
            pull = _Pullback(g, x)
            forward = batched(seeds) if len(seeds) else None
        return "bidirectional", out, (forward, pull)

    def _finish(self, info, raw, x):
        pattern = info.pattern
        if raw is None:
            return empty_result(pattern, np.result_type(dtype_of(x), np.float64),
                                isinstance(x, Tracer))
        mode, out, compressed = raw
        _check_rows(out, pattern, self.name)
        if mode == "reverse":   # ``compressed`` is the pullback
            (compressed,) = vmap(compressed, **self._chunks())(
                info.seeds.astype(dtype_of(out), copy=False))
        elif mode == "bidirectional":
            compressed = self._join(info, out, *compressed)
        return sparse_result(compressed, info.take, pattern, isinstance(x, Tracer))

    def _join(self, info, out, forward, pull):
        """The forward products (colour first) and the reverse ones, as one flat vector:
        the layout of ``coloring.gather_bidirectional``."""
        parts = [] if forward is None else [forward]
        if len(info.row_seeds):
            (backward,) = vmap(pull, **self._chunks())(
                info.row_seeds.astype(dtype_of(out), copy=False))
            parts.append(backward)
        if any(isinstance(p, Tracer) for p in parts):
            return dnp.concatenate([dnp.reshape(p, (-1,)) for p in parts])
        return np.concatenate([np.ravel(p) for p in parts])


class _Pullback:
    """The pullback of ``g`` at ``x``, its forward pass made where it is called."""

    def __init__(self, g, x):
        self.g, self.x = g, x

    def __call__(self, seed):
        return vjp(self.g, self.x)[1](seed)


def _check_rows(out, pattern, name):
    if shape_of(out)[0] != pattern.shape[0]:
        raise ShapeMismatchError(f"{name}: the function has {shape_of(out)[0]} outputs but "
                                 f"the pattern has {pattern.shape[0]} rows")


class SparseHessian(_SparseDerivative):
    def __init__(self, fun, argnums, sparsity, chunks=(None, None, False)):
        super().__init__(fun, argnums, sparsity, "sparse_hessian", chunks)

    def _detect(self, g, x):
        return hessian_coloring(hessian_pattern(g, x))

    def _dense(self, g, x):
        return hessian(scalar_output(g, self.name))(x)

    def _from_given(self, g, x):
        pattern = _check_pattern(self.sparsity, (x.size, x.size), self.name, True)
        return hessian_coloring(col.as_pattern(pattern + pattern.T))

    def _evaluate(self, info, g, x, log):
        """The compressed Hessian-vector products (None: nothing to evaluate), their
        concrete reads kept in ``log``."""
        scalar = scalar_output(g, self.name)
        if info.num_colors == 0 or info.pattern.nnz == 0:
            self._watched_pass(scalar, x, log)   # also checks that the output is a scalar
            return None
        gradient = grad(scalar)
        batched = vmap(lambda s: jvp(gradient, (x,), (s,))[1], **self._chunks())
        seeds = info.seeds.astype(dtype_of(x), copy=False)
        if self.executor is not None:   # the passes run elsewhere
            self._watched_pass(scalar, x, log)
            return batched(seeds)
        with watch_reads(log):
            return batched(seeds)

    def _finish(self, info, compressed, x):
        if compressed is None:
            return empty_result(info.pattern, np.result_type(dtype_of(x), np.float64),
                                isinstance(x, Tracer))
        return sparse_result(compressed, info.take, info.pattern,
                             isinstance(x, Tracer))


def _check_options(fun, argnums, sparsity, name):
    check_callable(fun, name)
    check_argnums(argnums, name)
    _check_sparsity_type(sparsity, name)


def sparse_jacobian(fun, argnums=0, sparsity=None, mode="auto", chunk_size=None,
                    executor=None, progress=False):
    """A function returning the Jacobian of ``fun`` as a ``scipy.sparse.csr_array`` of shape
    ``(out.size, in.size)``, computed in as many batched passes as its pattern has colours.

    Inputs and outputs are flattened as ``diffkit.flatten_util.ravel_pytree`` flattens
    them (with a tuple ``argnums``, the tuple of those arguments is one pytree). Inputs are
    real floating-point arrays; outputs real arrays. ``sparsity``: a known pattern (a SciPy
    sparse array, or a 2-D NumPy array, of shape ``(out.size, in.size)``), or ``None`` to
    detect the global pattern (``jacobian_sparsity``) on the first call for each input
    signature and path of the function's Python control flow (kept for later calls: a
    call whose evaluation reads other values, or whose plain non-differentiated arguments
    differ, gets a pattern detected on its own path). ``mode``: ``"forward"`` (column
    colouring, one batched JVP), ``"reverse"`` (row colouring, one batched VJP),
    ``"bidirectional"`` (columns and rows coloured together, one batched JVP and one
    batched VJP: for dense rows and columns) or ``"auto"``, the side with fewer colours, or
    the bidirectional colouring when it needs clearly fewer products (at least two fewer,
    and a quarter). Every entry of the pattern is stored, zeros included.

    ``chunk_size``, ``executor``, ``progress``: the colours are swept ``chunk_size`` at a
    time, as tasks on an executor if given (as ``vmap`` does them).

    The returned function has a method ``coloring(*args)`` giving the ``Coloring`` it uses:
    the pattern, the mode, the colours and their number. It composes with ``jit`` (a CSR
    array, replayed) and ``vmap`` (an n-D ``coo_array`` of shape ``(*batch, m, n)``).

    Examples:
        >>> def residual(x):
        ...     return x[1:] ** 2 - x[:-1]
        >>> jac = dk.sparse_jacobian(residual)
        >>> J = jac(np.array([1.0, 2.0, 3.0, 4.0]))
        >>> type(J).__name__, J.shape
        ('csr_array', (3, 4))
        >>> J.toarray().tolist()
        [[-1.0, 4.0, 0.0, 0.0], [0.0, -1.0, 6.0, 0.0], [0.0, 0.0, -1.0, 8.0]]
        >>> coloring = jac.coloring(np.ones(4))
        >>> coloring.mode, coloring.num_colors
        ('forward', 2)

        Every entry of the pattern is stored, zeros included:

        >>> J0 = jac(np.zeros(4))
        >>> J0.nnz, J0.data.tolist()
        (6, [-1.0, 0.0, -1.0, 0.0, -1.0, 0.0])
        >>> dk.sparse_jacobian(residual, mode="reverse")(np.array([1.0, 2.0, 3.0, 4.0])).nnz
        6

        Under ``vmap`` and ``jit``:

        >>> batch = dk.vmap(jac)(np.ones((2, 4)))
        >>> type(batch).__name__, batch.shape
        ('coo_array', (2, 3, 4))
        >>> type(dk.jit(jac)(np.ones(4))).__name__
        'csr_array'
        >>> dk.sparse_jacobian(residual, mode="sideways")
        Traceback (most recent call last):
            ...
        diffkit.errors.OptionError: sparse_jacobian: mode='sideways'; use 'auto', 'forward', ...
    """
    _check_options(fun, argnums, sparsity, "sparse_jacobian")
    if mode not in MODES:
        raise OptionError(f"sparse_jacobian: mode={mode!r}; use 'auto', 'forward', "
                          "'reverse' or 'bidirectional'")
    check_chunk_size(chunk_size, "sparse_jacobian")
    return SparseJacobian(fun, argnums, sparsity, mode, (chunk_size, executor, progress))


def sparse_hessian(fun, argnums=0, sparsity=None, chunk_size=None, executor=None,
                   progress=False):
    """A function returning the Hessian of the scalar ``fun`` as a symmetric
    ``scipy.sparse.csr_array`` of shape ``(in.size, in.size)``: forward-over-reverse
    Hessian-vector products batched over a star colouring of the pattern, each entry read
    directly from one product.

    Inputs are flattened as ``ravel_pytree`` does. ``sparsity``: a known symmetric pattern
    (an unsymmetric one is symmetrised), or ``None`` to detect it (``hessian_sparsity``)
    on the first call for each input signature and path, as ``sparse_jacobian`` does.
    ``chunk_size``, ``executor``, ``progress``
    as in ``sparse_jacobian``. ``coloring(*args)`` on the returned function gives the
    ``Coloring`` it uses. Under ``vmap`` the result is an n-D ``coo_array`` of shape
    ``(*batch, n, n)``, under ``jit`` a CSR array.

    Examples:
        >>> def h(x):
        ...     return dnp.sum(x[:-1] ** 2 * x[1:]) + dnp.sum(x)
        >>> hess = dk.sparse_hessian(h)
        >>> x = np.array([1.0, 2.0, 3.0, 4.0])
        >>> H = hess(x)
        >>> type(H).__name__, H.shape
        ('csr_array', (4, 4))
        >>> H.toarray().tolist()
        [[4.0, 2.0, 0.0, 0.0], [2.0, 6.0, 4.0, 0.0], [0.0, 4.0, 8.0, 6.0], [0.0, 0.0, 6.0, 0.0]]
        >>> np.array_equal(H.toarray(), dk.hessian(h)(x)), (H != H.T).nnz
        (True, 0)
        >>> coloring = hess.coloring(x)
        >>> coloring.mode, coloring.num_colors
        ('star', 3)
        >>> dk.vmap(hess)(np.ones((2, 4))).shape
        (2, 4, 4)
    """
    _check_options(fun, argnums, sparsity, "sparse_hessian")
    check_chunk_size(chunk_size, "sparse_hessian")
    return SparseHessian(fun, argnums, sparsity, (chunk_size, executor, progress))
