"""Taylor mode: ``jet`` and the differential operators built on it.

``jet(fun, primals, series)`` pushes a truncated Taylor polynomial through ``fun`` in one
pass (``diffkit.interpreters.taylor``): given the derivatives of a curve ``x(t)`` at
``t = 0`` up to order K, it returns those of ``fun(x(t))``. K nested ``jvp``s would cost
a number of passes that doubles with each order; a jet's cost grows with K².

The operators sum second (or fourth) directional derivatives over a set of directions,
which is what a Laplacian, ``tr(σσᵀ ∇²f)`` or the biharmonic operator is, without forming a
Hessian:

- ``laplacian(f)``: ``Σ_i ∂²f/∂x_i²``, along the D unit vectors;
- ``weighted_laplacian(f, sigma)``: ``tr(σσᵀ ∇²f) = Σ_r σ_rᵀ ∇²f σ_r`` over the columns
  ``σ_r`` of ``sigma``;
- ``hessian_diagonal(f)``: ``∂²f/∂x_i²`` for each ``i``;
- ``biharmonic(f)``: ``Δ²f = Σ_ij ∂⁴f/∂x_i²∂x_j²``, from fourth directional derivatives
  along ``e_i`` and ``e_i ± e_j`` (``∂_i²∂_j² f = (D⁴_{e_i+e_j} + D⁴_{e_i-e_j}
  - 2 D⁴_{e_i} - 2 D⁴_{e_j}) / 12``, the interpolation of Griewank, Utke & Walther 2000).

Each takes ``stochastic=k`` with a NumPy ``Generator`` as ``rng`` for an unbiased estimate
from k random directions (or ``stochastic=V``, the k directions drawn by the caller, which
may be an argument of a jitted function: ``jit`` refuses draws while it traces):
Rademacher vectors ``v`` (``E[v vᵀ] = I``) for the Laplacians and the diagonal (``E[v ⊙
∇²f v] = diag ∇²f``), Gaussian ones for the biharmonic (``E[D⁴_v f] = 3 Δ²f``). The
generator is the only source of randomness: the same generator state gives the same
estimate.
"""

import math

import numpy as np

from .api import _FlatFun, hvp, vmap
from .api_checks import argnum_positions, check_callable, check_scalar, flat_inputs
from .api_checks import matching_leaves as _matching_leaves
from .core.trace import Tracer
from .core.zeros import Zero, instantiate
from .errors import InputTypeError, OptionError, ShapeMismatchError
from .interpreters.collapsed import collapsed_flat
from .interpreters.interactions import interaction_pattern
from .interpreters.taylor import jet_flat
from .ops import reductions, shape
from .sparse.detection import hessian_pattern
from .sparse.graphs import Adjacency, distance1_coloring
from .tracebacks import api_boundary, public
from .tree_util import tree_leaves

__all__ = ["jet", "laplacian", "weighted_laplacian", "hessian_diagonal", "biharmonic"]


# --- jet ---------------------------------------------------------------------------------


@api_boundary
def jet(fun, primals, series, *, factorial_scaled=True):
    """Taylor-mode propagation: the derivatives of ``fun(*x(t))`` at ``t = 0`` up to order
    K, for the curve ``x(t)`` given by ``primals`` and ``series``.

    ``primals`` is a tuple with one entry (a pytree of arrays) per positional argument;
    ``series`` a tuple with one sequence of K terms per primal, each term shaped like it:
    ``series[i][k-1]`` is the k-th derivative of ``x_i(t)`` at 0, so that
    ``x_i(t) = primals[i] + Σ_k series[i][k-1] t^k / k!``.

    Returns ``(primal_out, series_out)``: ``fun(*primals)``, and for each leaf of the
    output the list of its K derivatives (``d^k/dt^k fun(x(t))`` at 0), in the output's
    structure, as ``jax.experimental.jet`` does. With ``factorial_scaled=False`` both
    ``series`` and ``series_out`` hold Taylor coefficients instead (the k-th derivative
    over k!).

    With ``series = ((v, 0, ..., 0),)`` the k-th term is the k-th directional derivative
    ``∂^k f(x)[v, ..., v]``. Each primitive propagates the series by its Taylor
    recurrence where it has one, else through its ``jvp`` rule (custom rules included).
    """
    check_callable(fun, "jet")
    if not isinstance(primals, (tuple, list)) or not isinstance(series, (tuple, list)):
        raise InputTypeError("jet expects primals and series as tuples (or lists), e.g. "
                             "jet(f, (x,), ((v, w),))")
    if len(series) != len(primals):
        raise ShapeMismatchError(f"jet got {len(primals)} primals but {len(series)} series: "
                                 "give one sequence of terms per primal")
    flat_primals, in_tree = flat_inputs(tuple(primals), "jet primal")
    order = _order_of(series)
    flat_series = _flat_series(series, order, in_tree, flat_primals, factorial_scaled)
    flat_fun = _FlatFun(fun, in_tree, False, "jet")
    outs, out_series = jet_flat(flat_fun, flat_primals, flat_series, order)
    scaled = [[_scaled(c, o, k + 1, factorial_scaled, out=True) for k, c in enumerate(s)]
              for o, s in zip(outs, out_series)]
    out_tree = flat_fun.out_tree
    return out_tree.unflatten(outs), out_tree.unflatten(scaled)


def _order_of(series):
    orders = set()
    for i, terms in enumerate(series):
        if not isinstance(terms, (tuple, list)):
            raise InputTypeError(f"jet: series[{i}] must be a sequence of terms (the first, "
                                 f"second, ... derivative of primal {i}), got "
                                 f"{type(terms).__name__}")
        orders.add(len(terms))
    if len(orders) > 1:
        raise ShapeMismatchError(f"jet: every primal needs the same number of terms; got "
                                 f"{sorted(orders)}")
    return orders.pop() if orders else 0


def _flat_series(series, order, in_tree, flat_primals, factorial_scaled):
    """One tuple of ``order`` Taylor coefficients per flat primal."""
    per_term = []
    for k in range(order):
        term = tuple(terms[k] for terms in series)
        leaves = _matching_leaves(term, in_tree, flat_primals, f"series term {k + 1}")
        per_term.append([_scaled(c, p, k + 1, factorial_scaled) for c, p in
                         zip(leaves, flat_primals)])
    return [tuple(per_term[k][i] for k in range(order)) for i in range(len(flat_primals))]


def _scaled(coefficient, like, k, factorial_scaled, out=False):
    """A k-th derivative as a Taylor coefficient (``/ k!``), or back (``out``); zeros
    instantiated on the way out."""
    if out:
        coefficient = instantiate(coefficient)
        return coefficient * math.factorial(k) if factorial_scaled else coefficient
    if not factorial_scaled:
        return coefficient
    return coefficient / math.factorial(k)


# --- the operators -----------------------------------------------------------------------


def _directional(fun, x, directions, order):
    """The ``order``-th Taylor coefficient of ``fun(x + t v)`` for each direction ``v`` of
    ``directions`` (shape ``(R,) + x.shape``): shape ``(R,) + out.shape``."""
    def along(v):
        series = (v,) + (Zero(np.shape(x), np.result_type(x)),) * (order - 1)
        outs, out_series = jet_flat(lambda y: [fun(y)], [x], [series], order)
        return instantiate(out_series[0][order - 1])
    return vmap(along)(directions)


def _summed(fun, x, directions, order):
    """The sum over the directions ``v`` of ``directions`` (shape ``(R,) + x.shape``) of
    the ``order``-th Taylor coefficient of ``fun(x + t v)``, by collapsed Taylor mode:
    shaped like ``fun``'s output."""
    zero = Zero(np.shape(x), np.result_type(x))
    lowers = (directions,) + (zero,) * (order - 2)
    _, _, tops = collapsed_flat(lambda y: [fun(y)], [x], [lowers], [zero], order,
                                np.shape(directions)[0])
    return instantiate(tops[0])


def _unit_directions(x):
    size = np.size(x)
    return np.eye(size, dtype=np.result_type(x)).reshape((size, *np.shape(x)))


# --- sparsity: coordinates that never meet share a direction ------------------------------

#: With sparsity="auto", the Hessian pattern is detected for arguments of at least this
#: many entries (and only when nothing is traced): below it a pass of the detector costs
#: more than the directions it can save.
SPARSITY_MIN_SIZE = 128
#: ... by the one-pass route only (elementwise, linear and indexing programs), which gives
#: up once the coordinates would meet more than DENSE_DEGREE others on average: a denser
#: pattern needs nearly as many colours as coordinates, and building and colouring it
#: costs more than the directions it saves.
DENSE_DEGREE = 32


def _check_sparsity(name, sparsity):
    if sparsity not in ("auto", True, False):
        raise OptionError(f"{name}: sparsity must be 'auto', True or False, got "
                          f"{sparsity!r}")


def _interactions(name, of_x, x, args, sparsity):
    """The ``Adjacency`` of the coordinates of ``x`` that meet in a second derivative of
    some output entry of ``of_x`` (its Hessian pattern, detected once per call), or None
    where the operator takes every coordinate separately."""
    if sparsity is False or (sparsity == "auto" and np.size(x) < SPARSITY_MIN_SIZE):
        return None
    if any(isinstance(a, Tracer) for a in tree_leaves(args)):
        if sparsity == "auto":
            return None
        raise OptionError(
            f"{name}(sparsity=True) detects the Hessian's pattern from the arguments, but "
            "some are traced by an enclosing transformation (vmap, grad, jit): call the "
            "operator on concrete arrays, or use sparsity='auto' (dense under "
            "transformations)")
    shape_x = np.shape(x)

    def summed(vector):
        return shape.reshape(reductions.sum(of_x(shape.reshape(vector, shape_x))), (1,))
    if sparsity == "auto":
        # only the one-pass route (elementwise, linear and indexing programs): the general
        # one reads the gradient program, which for a dense function (a network's matrix
        # product) costs tens of times the operator it would save
        pattern = interaction_pattern(summed, np.ravel(x),
                                      max_pairs=DENSE_DEGREE * np.size(x))
        if pattern is None:   # not that route, or so many coordinates meet that
            return None       # colouring would save little
    else:
        pattern = hessian_pattern(summed, np.ravel(x), name=name)
    return Adjacency.of(pattern)


def _groups(graph, size):
    """Colours of the coordinates such that two of one colour never meet (each its own
    colour without a graph)."""
    if graph is None:
        return np.arange(size)
    order = np.argsort(-graph.degree(), kind="stable")
    return distance1_coloring(graph, order)


def _indicators(colors, x, weights=None):
    """One direction per colour: the sum of the unit vectors of its coordinates (times
    ``weights``), shape ``(colours,) + x.shape``."""
    count = int(colors.max()) + 1 if colors.size else 0
    directions = np.zeros((count, colors.size), np.result_type(x))
    directions[colors, np.arange(colors.size)] = 1 if weights is None else weights
    return directions.reshape((count, *np.shape(x)))


def _operator(name, fun, argnums, stochastic, rng):
    check_callable(fun, name)
    if not isinstance(argnums, int):
        raise InputTypeError(f"{name}: argnums must be one int (the argument the operator "
                             f"acts on), got {argnums!r}")
    if stochastic is None:
        if rng is not None:
            raise OptionError(f"{name}: rng= is used only with stochastic=k")
        return
    if _is_count(stochastic):
        if stochastic < 1:
            raise OptionError(f"{name}: stochastic must be a positive int (the number of "
                              f"random directions), got {stochastic!r}")
        if not isinstance(rng, np.random.Generator):
            raise OptionError(f"{name}(stochastic={stochastic}) needs rng=, a "
                              "numpy.random.Generator (np.random.default_rng(seed)): the "
                              "estimate draws its directions from it and from nothing else")
    elif isinstance(stochastic, bool) or not hasattr(stochastic, "shape") \
            and not isinstance(stochastic, (list, tuple)):
        raise OptionError(f"{name}: stochastic must be a positive int k (with rng=) or an "
                          f"array of k directions drawn by the caller, got {stochastic!r}")
    elif rng is not None:
        raise OptionError(f"{name}: stochastic= is an array of directions already drawn; "
                          "rng= draws them and goes with stochastic=k only")


def _is_count(stochastic):
    return isinstance(stochastic, (int, np.integer)) and not isinstance(stochastic, bool)


def _probes(name, stochastic, rng, shape, dtype, gaussian=False):
    """The ``(k,) + shape`` random directions of a stochastic estimate: drawn from ``rng``
    (Rademacher, or standard Gaussian), or the caller's array ``stochastic`` (which may be
    traced: passed in as an argument of a jitted function)."""
    if _is_count(stochastic):
        if gaussian:
            return rng.standard_normal((int(stochastic), *shape)).astype(dtype)
        signs = rng.integers(0, 2, size=(int(stochastic), *shape)) * 2 - 1
        return signs.astype(dtype)
    probes = stochastic if hasattr(stochastic, "shape") else np.asarray(stochastic, dtype)
    if tuple(np.shape(probes))[1:] != tuple(shape) or len(np.shape(probes)) != len(shape) + 1:
        raise ShapeMismatchError(
            f"{name}: the directions given as stochastic= have shape {np.shape(probes)}, "
            f"expected (k,) + {tuple(shape)}: k directions, each shaped like the "
            + ("argument" if name != "weighted_laplacian" else "columns of sigma (R,)"))
    if np.shape(probes)[0] == 0:
        raise OptionError(f"{name}: stochastic= holds no directions (shape "
                          f"{np.shape(probes)}): the estimate is a mean over at least one")
    return probes


def _bind_argument(fun, args, argnums, name):
    """``fun`` as a function of argument ``argnums`` alone (a negative one counted from the
    end, as ``grad`` does), and that argument as a float array."""
    (index,) = argnum_positions(argnums, False, len(args), name, fun)
    x = args[index]

    def of_x(y):
        return fun(*args[:index], y, *args[index + 1:])
    return of_x, _float_array(x)


def _float_array(x):
    x = np.asarray(x) if not hasattr(x, "shape") else x
    if np.result_type(x).kind not in "fc":
        x = np.asarray(x, dtype=np.float64)
    return x


def laplacian(fun, argnums=0, *, stochastic=None, rng=None, sparsity="auto"):
    """The Laplacian ``Σ_i ∂²fun/∂x_i²`` in argument ``argnums`` (over all its entries),
    for each entry of ``fun``'s output: a function of ``fun``'s arguments returning an
    array shaped like ``fun``'s output.

    ``stochastic=k`` (with ``rng``, a NumPy ``Generator``): the unbiased Hutchinson
    estimate ``mean_r v_rᵀ ∇²f v_r`` over k Rademacher vectors; ``stochastic=V`` (shape
    ``(k,) + x.shape``): the same over the caller's directions (unbiased when
    ``E[v vᵀ] = I``).

    ``sparsity``: coordinates that never meet in a second derivative (a separable
    function, a stencil) can share a direction, ``(e_i + e_j)ᵀ ∇²f (e_i + e_j) =
    ∂_i²f + ∂_j²f`` when ``∂_i∂_j f`` is structurally zero: with ``True`` the Hessian's
    pattern is detected (``hessian_sparsity``) and the coordinates coloured so that one
    direction serves each colour; ``"auto"`` (the default) does so for concrete
    arguments of at least ``SPARSITY_MIN_SIZE`` entries whose pattern the one-pass
    detection reads (elementwise, linear and indexing programs) and finds sparse (at most
    ``DENSE_DEGREE`` neighbours per coordinate on average), so that a dense function
    (a network) pays no detection; ``False`` never."""
    _operator("laplacian", fun, argnums, stochastic, rng)
    _check_sparsity("laplacian", sparsity)

    @public(fun)
    def laplacian_fun(*args):
        of_x, x = _bind_argument(fun, args, argnums, "laplacian")
        if stochastic is None:
            graph = _interactions("laplacian", of_x, x, args, sparsity)
            directions = (_unit_directions(x) if graph is None
                          else _indicators(_groups(graph, np.size(x)), x))
        else:
            directions = _probes("laplacian", stochastic, rng, np.shape(x), _dtype(x))
        total = _summed(of_x, x, directions, 2) * 2
        return total if stochastic is None else total / np.shape(directions)[0]
    return laplacian_fun


def weighted_laplacian(fun, sigma, argnums=0, *, stochastic=None, rng=None):
    """``tr(σσᵀ ∇²fun) = Σ_r σ_rᵀ ∇²fun σ_r`` in argument ``argnums``, the generator of a
    diffusion ``dX = ... + σ dW`` applied to ``fun``, for each entry of ``fun``'s output.

    ``sigma`` has shape ``x.shape + (R,)`` (its columns ``σ_r`` are the directions; R may
    differ from the size of ``x``), or is a function of ``fun``'s arguments returning one.
    ``stochastic=k`` (with ``rng``): the unbiased estimate over k Rademacher
    combinations ``σ v`` of the columns."""
    _operator("weighted_laplacian", fun, argnums, stochastic, rng)

    @public(fun)
    def weighted_laplacian_fun(*args):
        of_x, x = _bind_argument(fun, args, argnums, "weighted_laplacian")
        s = sigma(*args) if callable(sigma) else sigma
        directions = _columns(s, x)
        if stochastic is not None:
            v = _probes("weighted_laplacian", stochastic, rng, np.shape(directions)[:1],
                        _dtype(x))
            directions = _combined(v, directions)
        total = _summed(of_x, x, directions, 2) * 2
        return total if stochastic is None else total / np.shape(directions)[0]
    return weighted_laplacian_fun


def _columns(sigma, x):
    """The columns of ``sigma`` (shape ``x.shape + (R,)``) as directions ``(R,) + x.shape``."""
    if not hasattr(sigma, "shape"):
        sigma = np.asarray(sigma, _dtype(x))
    if tuple(sigma.shape[:-1]) != np.shape(x) or len(sigma.shape) != np.ndim(x) + 1:
        raise ShapeMismatchError(
            f"weighted_laplacian: sigma has shape {tuple(sigma.shape)}, expected x.shape + "
            f"(R,) = {np.shape(x)} + (R,): one column per direction of the diffusion")
    return shape.moveaxis(sigma, -1, 0)


def hessian_diagonal(fun, argnums=0, *, stochastic=None, rng=None, sparsity="auto"):
    """The diagonal of the Hessian of the scalar ``fun`` in argument ``argnums``:
    ``∂²fun/∂x_i²`` for each entry ``i``, shaped like the argument.

    ``stochastic=k`` (with ``rng``): the unbiased estimate ``mean_r v_r ⊙ ∇²f v_r`` over
    k Rademacher vectors (Bekas, Kokiopoulou & Saad 2007), by Hessian-vector products.

    ``sparsity`` as for ``laplacian``: coordinates of one colour never meet, so one
    Hessian-vector product along the sum of their unit vectors gives each of their
    diagonal entries (``(∇²f Σ_c e_j)_i = ∂_i²f`` for ``i`` in the colour)."""
    _operator("hessian_diagonal", fun, argnums, stochastic, rng)
    _check_sparsity("hessian_diagonal", sparsity)

    @public(fun)
    def hessian_diagonal_fun(*args):
        of_x, x = _bind_argument(fun, args, argnums, "hessian_diagonal")
        of_x = _scalar_valued(of_x, "hessian_diagonal")
        if stochastic is None:
            graph = _interactions("hessian_diagonal", of_x, x, args, sparsity)
            if graph is not None:
                colors = _groups(graph, np.size(x))
                products = vmap(lambda d: hvp(of_x, (x,), (d,))[0])(_indicators(colors, x))
                flat = shape.reshape(products, (products.shape[0], np.size(x)))
                return shape.reshape(flat[colors, np.arange(np.size(x))], np.shape(x))
            second = _directional(of_x, x, _unit_directions(x), 2) * 2
            return shape.reshape(second, np.shape(x))
        v = _probes("hessian_diagonal", stochastic, rng, np.shape(x), _dtype(x))
        products = vmap(lambda d: hvp(of_x, (x,), (d,))[0])(v)
        return reductions.sum(products * v, axis=0) / np.shape(v)[0]
    return hessian_diagonal_fun


def _scalar_valued(fun, name):
    """``fun`` with its output checked to be a real scalar (``check_scalar``)."""
    def scalar(*args):
        out = fun(*args)
        check_scalar(out, name)
        return out
    return scalar


def biharmonic(fun, argnums=0, *, stochastic=None, rng=None, sparsity="auto"):
    """The biharmonic operator ``Δ²fun = Σ_ij ∂⁴fun/∂x_i²∂x_j²`` in argument ``argnums``,
    for each entry of ``fun``'s output.

    Exactly, from fourth directional derivatives along the D unit vectors and the
    D(D-1) vectors ``e_i ± e_j``. ``stochastic=k`` (with ``rng``): the unbiased estimate
    ``mean_r D⁴_{v_r} fun / 3`` over k standard Gaussian vectors.

    ``sparsity`` as for ``laplacian``: a pair of coordinates that never meet in a second
    derivative has ``∂_i²∂_j² f = 0`` and needs no direction ``e_i ± e_j``, and
    coordinates of one colour share their unit direction."""
    _operator("biharmonic", fun, argnums, stochastic, rng)
    _check_sparsity("biharmonic", sparsity)

    @public(fun)
    def biharmonic_fun(*args):
        of_x, x = _bind_argument(fun, args, argnums, "biharmonic")
        if stochastic is not None:
            v = _probes("biharmonic", stochastic, rng, np.shape(x), _dtype(x), gaussian=True)
            return _summed(of_x, x, v, 4) * 24 / (3 * np.shape(v)[0])
        graph = _interactions("biharmonic", of_x, x, args, sparsity)
        return _exact_biharmonic(of_x, x, graph)
    return biharmonic_fun


def _exact_biharmonic(of_x, x, graph):
    """``Δ²f = Σ_i ∂_i⁴f + 2 Σ_{i<j} ∂_i²∂_j²f`` with ``12 ∂_i²∂_j² f = D⁴_{e_i+e_j} +
    D⁴_{e_i-e_j} - 2 D⁴_{e_i} - 2 D⁴_{e_j}`` over the pairs that meet (every pair without a
    ``graph``): ``Σ_i (1 - deg_i / 3) D⁴_{e_i} + Σ_{i~j} (D⁴_{e_i+e_j} + D⁴_{e_i-e_j}) / 6``.
    A unit direction's weight ``w`` is folded into it as ``|w|^(1/4)`` (``D⁴`` is quartic),
    positive and negative weights in two collapsed passes."""
    size = np.size(x)
    i, j = _pairs(graph, size)
    degree = np.bincount(np.concatenate([i, j]), minlength=size)
    weights = 1 - degree / 3
    colors = _groups(graph, size)
    total = None
    for sign in (1, -1):
        chosen = sign * weights > 0
        if not chosen.any():
            continue
        scale = np.where(chosen, np.abs(weights) ** 0.25, 0.0)
        directions = _indicators(colors, x, scale)
        directions = directions[np.any(directions.reshape(len(directions), -1) != 0, axis=1)]
        part = _summed(of_x, x, directions, 4) * (24 * sign)
        total = part if total is None else total + part
    if len(i):
        units = _unit_directions(x)
        pairs = np.concatenate([units[i] + units[j], units[i] - units[j]])
        part = _summed(of_x, x, pairs, 4) * 4    # 24 / 6
        total = part if total is None else total + part
    return total if total is not None else _summed(of_x, x, _unit_directions(x), 4) * 0


def _pairs(graph, size):
    """The pairs ``i < j`` of coordinates that meet (all of them without a graph)."""
    if graph is None:
        return np.triu_indices(size, k=1)
    rows = np.repeat(np.arange(size), graph.degree())
    upper = graph.idx > rows
    return rows[upper], graph.idx[upper]


def _dtype(x):
    return np.result_type(x)


def _combined(weights, directions):
    """``weights @ directions`` over the first axis of ``directions``: (k, R) with
    (R,) + shape gives (k,) + shape (the weights may be traced)."""
    flat = shape.reshape(directions, (np.shape(directions)[0], -1))
    return shape.reshape(weights @ flat, (np.shape(weights)[0], *np.shape(directions)[1:]))


