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
- ``mode="auto"`` takes the side with fewer colours (forward on a tie).
- Hessian: star-colour the symmetric pattern; one ``vmap`` of forward-over-reverse
  Hessian-vector products gives ``H @ S``, each entry read directly.

With ``sparsity=None`` the pattern is detected (``jacobian_sparsity``,
``hessian_sparsity``: global patterns, valid at every point) on the first call for each
input signature, the structure and shapes and dtypes of all arguments, and kept with its
colouring. A known pattern can be passed instead: a SciPy sparse array (or a 2-D NumPy
array) of the right shape.

Under ``jit`` the batched pass is staged (one trace per signature) and the result is a
CSR array; under ``vmap`` it is a ``scipy.sparse.coo_array`` of shape
``(*batch, rows, cols)``, batch axes first (``traced.py``).
"""

import functools
from typing import NamedTuple

import numpy as np

from ..api import grad, jvp, vjp, vmap
from ..api_checks import check_argnums, check_callable, check_chunk_size, describe
from ..core.trace import Tracer
from ..core.zeros import dtype_of, shape_of
from ..errors import OptionError, ShapeMismatchError
from ..ops.sparsity_rules import scipy_sparse
from . import coloring as col
from .detection import hessian_pattern, jacobian_pattern, scalar_output
from .flat import flat_problem, signature
from .traced import empty_result, sparse_result

__all__ = ["sparse_jacobian", "sparse_hessian", "Coloring"]

MODES = ("auto", "forward", "reverse")
_SIGNATURES_KEPT = 32   # per function: more signatures start the cache afresh


class Coloring(NamedTuple):
    """How a sparse derivative is computed for one input signature: the ``pattern``
    (boolean CSR), the ``mode`` (``"forward"``, ``"reverse"`` or ``"star"``), one colour
    per column (forward, star) or row (reverse) in ``colors``, and ``num_colors``, the
    number of derivative passes batched into one. ``seeds`` (one row per colour) and
    ``take`` (where each stored entry is read in the compressed result) are what the
    evaluation uses."""

    pattern: object
    mode: str
    colors: np.ndarray
    num_colors: int
    seeds: np.ndarray
    take: np.ndarray


def _coloring(pattern, mode, colors, gather):
    return Coloring(pattern, mode, colors, int(colors.max(initial=-1)) + 1,
                    col.seed_matrix(colors).T.copy(), gather(pattern, colors))


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


def jacobian_coloring(pattern, mode):
    """The ``Coloring`` of a Jacobian pattern for ``mode`` (``"auto"``: fewer colours)."""
    forward = reverse = None
    if mode in ("auto", "forward"):
        forward = col.column_coloring(pattern)
    if mode in ("auto", "reverse"):
        reverse = col.row_coloring(pattern)
    if forward is not None and (reverse is None
                                or forward.max(initial=-1) <= reverse.max(initial=-1)):
        return _coloring(pattern, "forward", forward, col.gather_columns)
    return _coloring(pattern, "reverse", reverse, col.gather_rows)


def hessian_coloring(pattern):
    colors = col.star_coloring(pattern)
    return _coloring(pattern, "star", colors, col.gather_star)


# --- the transformations ------------------------------------------------------------------


class _SparseDerivative:
    """A function computing a sparse derivative; ``coloring(*args)`` tells how."""

    def __init__(self, fun, argnums, sparsity, name, chunks=(None, None, False)):
        self.fun, self.argnums, self.sparsity, self.name = fun, argnums, sparsity, name
        # (chunk_size, executor, progress): the colours are swept by vmap's chunks
        self.chunk_size, self.executor, self.progress = chunks
        self._cache = {}
        functools.update_wrapper(self, fun, updated=())

    def _cached(self, args, kwargs, make):
        key = signature(args, kwargs)   # (a given pattern is checked once per signature)
        try:
            found = self._cache.get(key)
        except TypeError:   # an unhashable static argument: no caching
            return make()
        if found is None:
            if len(self._cache) >= _SIGNATURES_KEPT:
                self._cache.clear()
            found = self._cache[key] = make()
        return found

    def _chunks(self):
        return {"chunk_size": self.chunk_size, "executor": self.executor,
                "progress": self.progress}

    def coloring(self, *args, **kwargs):
        """The ``Coloring`` used at these arguments: the pattern, the mode (``"forward"``,
        ``"reverse"``, or ``"star"`` for a Hessian) and the colours."""
        g, x = flat_problem(self.fun, args, kwargs, self.argnums, self.name)
        return self._coloring(g, x, args, kwargs)


class SparseJacobian(_SparseDerivative):
    def __init__(self, fun, argnums, sparsity, mode, chunks=(None, None, False)):
        super().__init__(fun, argnums, sparsity, "sparse_jacobian", chunks)
        self.mode = mode

    def _coloring(self, g, x, args, kwargs):
        def make():
            if self.sparsity is None:
                pattern = jacobian_pattern(g, x)
            else:
                out_size = int(np.prod(shape_of(g(x))))
                pattern = _check_pattern(self.sparsity, (out_size, x.size), self.name)
            return jacobian_coloring(pattern, self.mode)

        return self._cached(args, kwargs, make)

    def __call__(self, *args, **kwargs):
        g, x = flat_problem(self.fun, args, kwargs, self.argnums, self.name)
        info = self._coloring(g, x, args, kwargs)
        pattern, k = info.pattern, info.num_colors
        if k == 0 or pattern.nnz == 0:
            return empty_result(pattern, np.result_type(dtype_of(x), np.float64),
                                isinstance(x, Tracer))
        if info.mode == "forward":
            out, compressed = vmap(lambda s: jvp(g, (x,), (s,)), out_axes=(None, 0),
                                   **self._chunks())(info.seeds.astype(dtype_of(x), copy=False))
            _check_rows(out, pattern, self.name)
            return sparse_result(compressed, info.take, pattern)
        out, pull = vjp(g, x)
        _check_rows(out, pattern, self.name)
        if self.executor is not None:   # a task on a worker makes its own forward pass
            pull = _Pullback(g, x)
        (compressed,) = vmap(pull, **self._chunks())(info.seeds.astype(dtype_of(out), copy=False))
        return sparse_result(compressed, info.take, pattern)


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

    def _coloring(self, g, x, args, kwargs):
        def make():
            if self.sparsity is None:
                pattern = hessian_pattern(g, x)
            else:
                pattern = _check_pattern(self.sparsity, (x.size, x.size), self.name, True)
                pattern = col.as_pattern(pattern + pattern.T)
            return hessian_coloring(pattern)

        return self._cached(args, kwargs, make)

    def __call__(self, *args, **kwargs):
        g, x = flat_problem(self.fun, args, kwargs, self.argnums, self.name)
        scalar = scalar_output(g, self.name)
        info = self._coloring(g, x, args, kwargs)
        pattern, k = info.pattern, info.num_colors
        if k == 0 or pattern.nnz == 0:
            scalar(x)   # still checks that the output is a scalar
            return empty_result(pattern, np.result_type(dtype_of(x), np.float64),
                                isinstance(x, Tracer))
        gradient = grad(scalar)
        compressed = vmap(lambda s: jvp(gradient, (x,), (s,))[1], **self._chunks())(
            info.seeds.astype(dtype_of(x), copy=False))
        return sparse_result(compressed, info.take, pattern)


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
    signature (kept for later calls). ``mode``: ``"forward"`` (column colouring, one batched
    JVP), ``"reverse"`` (row colouring, one batched VJP) or ``"auto"``, the side with fewer
    colours. Every entry of the pattern is stored, zeros included.

    ``chunk_size``, ``executor``, ``progress``: the colours are swept ``chunk_size`` at a
    time, as tasks on an executor if given (as ``vmap`` does them).

    The returned function has a method ``coloring(*args)`` giving the ``Coloring`` it uses:
    the pattern, the mode, the colours and their number. It composes with ``jit`` (a CSR
    array, replayed) and ``vmap`` (an n-D ``coo_array`` of shape ``(*batch, m, n)``)."""
    _check_options(fun, argnums, sparsity, "sparse_jacobian")
    if mode not in MODES:
        raise OptionError(f"sparse_jacobian: mode={mode!r}; use 'auto', 'forward' or "
                          "'reverse'")
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
    on the first call for each input signature. ``chunk_size``, ``executor``, ``progress``
    as in ``sparse_jacobian``. ``coloring(*args)`` on the returned function gives the
    ``Coloring`` it uses. Under ``vmap`` the result is an n-D ``coo_array`` of shape
    ``(*batch, n, n)``, under ``jit`` a CSR array."""
    _check_options(fun, argnums, sparsity, "sparse_hessian")
    check_chunk_size(chunk_size, "sparse_hessian")
    return SparseHessian(fun, argnums, sparsity, (chunk_size, executor, progress))
