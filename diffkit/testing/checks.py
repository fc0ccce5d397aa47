"""Checkers for derivatives and batching: finite differences, engine against engine, loops.

Three checks, each raising ``AssertionError`` with a message that says what differs:

- :func:`check_grads` compares forward mode (``jvp``) and reverse mode (``vjp``) with central
  finite differences and with each other, and recurses on the derivative functions
  themselves up to ``order``.
- :func:`assert_jacobians_agree` builds the whole Jacobian twice by loops (one ``vjp``
  pullback call per output unit vector, one ``jvp`` per input unit vector) and compares
  them with each other and with ``jacfwd``, ``jacrev`` and ``jacobian``.
- :func:`check_vmap` compares ``vmap`` with a Python loop over slices.

All three take a function and its arguments the way the transformations do: positional
arguments that are arrays, scalars or pytrees of them. Only floating-point and complex leaves
are differentiated; integer and boolean leaves (indices, masks) are held fixed, and only
floating-point and complex outputs are compared.

Complex values follow diffkit's convention (JAX's, see :mod:`diffkit.api`): a complex number
is a pair of reals and every derivative is a real-linear map. Directions for complex
arguments and cotangents for complex outputs are random complex numbers, finite differences
are taken along those complex directions, and a cotangent ``u`` is paired with a tangent
``t`` by ``Re(sum(u * t))`` (bilinear, no conjugation). Jacobians are compared in real
coordinates, a complex entry counting as its real and imaginary parts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from .. import api, tree_util
from .._types import Axes, PyTree
from ..core.zeros import dtype_of, is_complex

__all__ = ["check_grads", "assert_jacobians_agree", "check_vmap"]

_MODES = ("fwd", "rev")
_MODE_NAMES = {"fwd": "forward mode (jvp)", "rev": "reverse mode (vjp)"}


class _Tolerances(NamedTuple):
    eps: float         # finite-difference step, relative to max(1, |x|)
    rtol: float        # finite differences against derivatives
    atol: float
    exact_rtol: float  # one engine against another (no truncation error, only rounding)
    exact_atol: float


# Keyed by the machine epsilon of the least precise floating-point dtype involved.
_DEFAULTS = {
    np.finfo(np.float64).eps: _Tolerances(1e-4, 1e-5, 1e-5, 1e-9, 1e-12),
    np.finfo(np.float32).eps: _Tolerances(3e-3, 5e-3, 5e-3, 1e-4, 1e-6),
    np.finfo(np.float16).eps: _Tolerances(3e-2, 5e-2, 5e-2, 1e-2, 1e-3),
}


def _tolerances(dtypes, eps=None, rtol=None, atol=None):
    machine = max((np.finfo(d).eps for d in dtypes), default=np.finfo(np.float64).eps)
    base = min(((m, t) for m, t in _DEFAULTS.items() if m >= machine),
               default=max(_DEFAULTS.items()), key=lambda mt: mt[0])[1]
    return base._replace(eps=base.eps if eps is None else float(eps),
                         rtol=base.rtol if rtol is None else float(rtol),
                         atol=base.atol if atol is None else float(atol))


# --- naming the leaves of arguments and outputs ----------------------------------------


def _leaf_names(tree, prefix):
    """A readable name per leaf of ``tree`` in flattening order: ``args[1]['w']``."""
    kind = type(tree)
    if tree is None:
        return []
    if issubclass(kind, tuple) and hasattr(kind, "_fields"):
        return [n for f, v in zip(kind._fields, tree) for n in _leaf_names(v, f"{prefix}.{f}")]
    if kind in (tuple, list):
        return [n for i, v in enumerate(tree) for n in _leaf_names(v, f"{prefix}[{i}]")]
    if kind is dict:
        return [n for k in sorted(tree) for n in _leaf_names(tree[k], f"{prefix}[{k!r}]")]
    leaves = tree_util.tree_leaves(tree)
    if len(leaves) == 1 and leaves[0] is tree:
        return [prefix]
    return [f"{prefix} leaf {j}" for j in range(len(leaves))]


def _is_float(x):
    """Whether ``x`` is differentiated (inputs) or compared (outputs): real or complex."""
    return dtype_of(x).kind in "fc"


def _wide(x):
    """``x`` as a float64 array, or complex128 when it is complex."""
    x = np.asarray(x)
    return x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)


def _scalar(x):
    """A NumPy element as a Python float, or a Python complex when it is complex."""
    return complex(x) if np.iscomplexobj(x) else float(x)


def _as_leaf(x):
    if isinstance(x, (np.ndarray, np.generic)) or hasattr(x, "_trace"):
        return x
    return np.asarray(x)


class _Flat:
    """``fun`` as a function of its floating-point and complex argument leaves alone,
    returning a tuple of its floating-point and complex output leaves: the shape every check
    below works on."""

    def __init__(self, fun, args, who):
        if not isinstance(args, (tuple, list)):
            raise TypeError(f"{who} takes the arguments as a tuple, e.g. {who}(f, (x, y)); got "
                            f"a {type(args).__name__}")
        self.fun = fun
        leaves, self.treedef = tree_util.tree_flatten(tuple(args))
        self.leaves = [_as_leaf(x) for x in leaves]
        names = _leaf_names(tuple(args), "args")
        self.diff = [i for i, x in enumerate(self.leaves) if _is_float(x)]
        if not self.diff:
            raise ValueError(f"{who}: no argument has a floating-point dtype, so there is "
                             "nothing to differentiate")
        self.names = [names[i] for i in self.diff]
        self.out_names = None

    @property
    def primals(self):
        return tuple(self.leaves[i] for i in self.diff)

    def full_args(self, values):
        full = list(self.leaves)
        for i, v in zip(self.diff, values):
            full[i] = v
        return tree_util.tree_unflatten(self.treedef, full)

    def __call__(self, *values):
        out = self.fun(*self.full_args(values))
        if self.out_names is None:
            names = _leaf_names(out, "out") if not _is_leafish(out) else ["out"]
            self.out_names = [n for n, o in zip(names, tree_util.tree_leaves(out))
                              if _is_float(o)]
        return tuple(o for o in tree_util.tree_leaves(out) if _is_float(o))


def _is_leafish(out):
    leaves = tree_util.tree_leaves(out)
    return len(leaves) == 1 and leaves[0] is out


def _evaluate(fun, xs):
    return tuple(np.asarray(o) for o in fun(*xs))


# --- comparing arrays --------------------------------------------------------------------


def _worst(got, expected, atol, rtol, equal_nan=False):
    """The worst element of ``|got - expected| <= atol + rtol |expected|`` over leaves
    (``|.|`` the modulus for complex values; with ``equal_nan``, NaN on both sides at the
    same place counts as equal):
    ``(excess, leaf, index, got, expected)`` with ``excess > 1`` meaning a violation, or
    None when every leaf is empty."""
    worst = None
    for leaf, (g, e) in enumerate(zip(got, expected)):
        g, e = _wide(g), _wide(e)
        if g.dtype != e.dtype:  # one side complex: compare both as complex
            g, e = g.astype(np.complex128), e.astype(np.complex128)
        if g.size == 0:
            continue
        err = np.abs(g - e)
        bound = atol + rtol * np.abs(e)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where((err == 0) | (g == e), 0.0, err / bound)  # equal infinities too
        ratio = np.where(np.isnan(g) != np.isnan(e), np.inf, np.nan_to_num(ratio, nan=np.inf))
        if equal_nan:
            ratio = np.where(np.isnan(g) & np.isnan(e), 0.0, ratio)
        k = int(np.argmax(ratio))
        index = np.unravel_index(k, g.shape) if g.ndim else ()
        if worst is None or ratio.flat[k] > worst[0]:
            worst = (float(ratio.flat[k]), leaf, tuple(int(i) for i in index),
                     _scalar(g.flat[k]), _scalar(e.flat[k]))
    return worst


def _dot(a, b):
    """The pairing of cotangents ``a`` with tangents ``b``: ``Re(sum(a * b))`` over leaves
    (bilinear, no conjugation; the plain dot product for real leaves)."""
    return float(sum(np.real(np.dot(_wide(x).ravel(), _wide(y).ravel())) for x, y in zip(a, b)))


def _abs_dot(a, b):
    return float(sum(np.sum(np.abs(_wide(x)) * np.abs(_wide(y))) for x, y in zip(a, b)))


def _total_abs(a):
    return float(sum(np.sum(np.abs(_wide(x))) for x in a))


def _format_index(index):
    return "" if index == () else "[" + ", ".join(map(str, index)) + "]"


# --- check_grads -------------------------------------------------------------------------


def check_grads(fun: Callable[..., Any], args: Sequence[PyTree], order: int = 2,
                modes: str | Sequence[str] = ("fwd", "rev"), atol: float | None = None,
                rtol: float | None = None, eps: float | None = None) -> None:
    """Check the derivatives of ``fun`` at ``args`` up to ``order``, in each of ``modes``.

    ``args`` is a tuple of arguments (arrays, scalars or pytrees). At each order:

    - forward mode: the ``jvp`` along a random direction ``v`` equals the central finite
      difference ``(f(x + eps v) - f(x - eps v)) / 2 eps``, element by element;
    - reverse mode: for a random cotangent ``u``, ``<J^T u, v>`` from ``vjp`` equals
      ``<u, J v>`` from ``jvp`` (to rounding, when both modes are checked) and
      ``<u, finite difference>``;
    - the primal outputs of ``jvp`` and ``vjp`` equal ``fun(*args)``, and tangents and
      cotangents have the shapes and dtypes of the values they stand for.

    Then, for ``order > 1``, the derivative functions themselves, ``x -> jvp(f, x, v)`` and
    ``x -> vjp(f, x)(u)``, are checked the same way with one order less: order 2 covers
    forward-over-forward, reverse-over-forward, forward-over-reverse and reverse-over-reverse.

    Only floating-point and complex leaves of ``args`` are perturbed (integer and boolean
    leaves are held fixed) and only floating-point and complex outputs are compared. The
    direction ``v`` is random with entries scaled by ``max(1, |x|)``, so ``eps`` is a relative
    step. Defaults depend on the least precise dtype involved: float64 and complex128
    ``eps=1e-4, rtol=atol=1e-5``; float32 and complex64 ``eps=3e-3, rtol=atol=5e-3``. The
    random draws are seeded, so a check is reproducible.

    Complex arguments and outputs (``R -> C``, ``C -> R``, ``C -> C``, holomorphic or not)
    are checked as real-linear maps, following diffkit's convention: ``v`` has random real
    and imaginary parts for a complex argument, ``u`` for a complex output, the finite
    difference is taken along the complex ``v``, and ``<u, t>`` is ``Re(sum(u * t))``
    (bilinear, no conjugation), so the reverse-mode check is
    ``Re(sum(vjp(u) * v)) == Re(sum(u * jvp(v)))``. Complex errors are moduli.

    Raises ``AssertionError`` naming the argument, the mode and the order whose derivative
    differs, with the largest error.

    Examples:
        >>> from diffkit.testing import check_grads
        >>> check_grads(lambda x, y: dnp.sin(x) * y ** 2, (np.array([0.5, 1.0]), 2.0))
        >>> check_grads(lambda z: dnp.abs(z) ** 2, (np.array([1 + 2j]),), order=1)

        A wrong rule fails, naming the mode, the order and the argument:

        >>> @dk.custom_jvp
        ... def bad_sin(x):
        ...     return dnp.sin(x)
        >>> @bad_sin.defjvp
        ... def bad_sin_jvp(primals, tangents):    # 1 % too large
        ...     (x,), (t,) = primals, tangents
        ...     return dnp.sin(x), 1.01 * dnp.cos(x) * t
        >>> check_grads(bad_sin, (np.array([0.5, 1.0]),), order=1)
        Traceback (most recent call last):
            ...
        AssertionError: check_grads: forward mode (jvp) at order 1 differs for argument args[0]: ...
        >>> check_grads(bad_sin, (np.array([0.5, 1.0]),), order=1, modes="rev")
        Traceback (most recent call last):
            ...
        AssertionError: check_grads: reverse mode (vjp) at order 1 differs for argument args[0]: ...
    """
    if isinstance(modes, str):
        modes = (modes,)
    modes = tuple(modes)
    unknown = [m for m in modes if m not in _MODES]
    if unknown or not modes:
        raise ValueError(f"check_grads: modes must be a non-empty subset of {_MODES}, got "
                         f"{modes!r}")
    if not isinstance(order, (int, np.integer)) or order < 1:
        raise ValueError(f"check_grads: order must be a positive int, got {order!r}")
    flat = _Flat(fun, args, "check_grads")
    xs = flat.primals
    out = _evaluate(flat, xs)
    if not out:
        raise ValueError("check_grads: the function has no floating-point output to check")
    tol = _tolerances([dtype_of(x) for x in xs] + [o.dtype for o in out], eps, rtol, atol)
    rng = np.random.default_rng(0)
    _check_order(flat, xs, flat.names, list(flat.out_names), int(order), modes, tol, rng, ())


def _describe_chain(chain, mode):
    """'reverse mode (vjp) at order 2, applied to the forward-mode derivative (jvp)'."""
    text = f"{_MODE_NAMES[mode]} at order {len(chain) + 1}"
    if chain:
        inner = " of the ".join(f"{'forward' if m == 'fwd' else 'reverse'}-mode derivative "
                                f"({'jvp' if m == 'fwd' else 'vjp'})" for m in reversed(chain))
        text += f", applied to the {inner}"
    return text


def _check_order(fun, xs, names, out_names, order, modes, tol, rng, chain):
    out = _evaluate(fun, xs)
    w = [_direction(x, rng) for x in xs]
    u = tuple(_uniform(o.shape, o.dtype, rng).astype(o.dtype) for o in out)
    failure = _compare(fun, xs, out, w, u, modes, tol, chain, names, out_names)
    if failure is not None:
        mode, detail, culprits = failure
        if culprits is None:
            culprits = _localize(fun, xs, out, w, u, modes, tol, chain, names, out_names, mode)
        raise AssertionError(f"check_grads: {_describe_chain(chain, mode)} differs for "
                             f"{culprits}: {detail}")
    if order == 1:
        return
    if "fwd" in modes:
        directions = tuple(_direction(x, rng).astype(dtype_of(x)) for x in xs)

        def pushforward(*primals):
            return api.jvp(fun, primals, directions)[1]

        _check_order(pushforward, xs, names, [f"jvp of {n}" for n in out_names], order - 1,
                     modes, tol, rng, chain + ("fwd",))
    if "rev" in modes:

        def pullback(*primals):
            return api.vjp(fun, *primals)[1](u)

        _check_order(pullback, xs, names, [f"vjp for {n}" for n in names], order - 1, modes,
                     tol, rng, chain + ("rev",))


def _direction(x, rng):
    """A random direction with entries (real and imaginary parts, for complex ``x``) in
    [-1, 1] scaled by max(1, |x|); float64 or complex128, shaped like ``x``."""
    x = _wide(x)
    return _uniform(x.shape, x.dtype, rng) * np.maximum(1.0, np.abs(x))


def _uniform(shape, dtype, rng):
    """Entries uniform in [-1, 1]; for a complex ``dtype`` both parts are (complex128)."""
    values = np.asarray(rng.uniform(-1.0, 1.0, shape))
    if np.dtype(dtype).kind == "c":
        values = values + 1j * np.asarray(rng.uniform(-1.0, 1.0, shape))
    return values


def _localize(fun, xs, out, w, u, modes, tol, chain, names, out_names, mode):
    """Name the argument(s) whose own derivative fails, by rechecking one at a time."""
    if len(xs) == 1:
        return f"argument {names[0]}"
    failing = []
    for i in range(len(xs)):
        masked = [wi if j == i else np.zeros_like(wi) for j, wi in enumerate(w)]
        try:
            result = _compare(fun, xs, out, masked, u, (mode,) if mode == "fwd" else modes,
                              tol, chain, names, out_names)
        except Exception:  # an engine that raises for this argument is failing for it too
            result = (mode, "raised", None)
        if result is not None:
            failing.append(names[i])
    if failing:
        return "argument" + ("s " if len(failing) > 1 else " ") + ", ".join(failing)
    return "the arguments " + ", ".join(names) + " together (each alone passes)"


def _compare(fun, xs, out, w, u, modes, tol, chain, names, out_names):
    """Run the checks of one order along direction ``w`` and cotangent ``u``; return
    ``(mode, detail, culprit)`` for the first failure (``culprit`` names the argument when
    the failure itself identifies it, else None), or None."""
    eps = tol.eps
    plus = tuple(np.asarray(_wide(x) + eps * d).astype(dtype_of(x)) for x, d in zip(xs, w))
    minus = tuple(np.asarray(_wide(x) - eps * d).astype(dtype_of(x)) for x, d in zip(xs, w))
    # The direction actually taken once the perturbed points are rounded to the input dtype.
    w = [(_wide(p) - _wide(m)) / (2 * eps) for p, m in zip(plus, minus)]
    tangents = tuple(np.asarray(d).astype(dtype_of(x)) for d, x in zip(w, xs))
    fd = [(_wide(p) - _wide(m)) / (2 * eps)
          for p, m in zip(_evaluate(fun, plus), _evaluate(fun, minus))]
    jvp_out = None
    if "fwd" in modes:
        primal_out, jvp_out = _run("fwd", chain, lambda: api.jvp(fun, xs, tangents))
        problem = (_check_primal(primal_out, out, tol, out_names)
                   or _check_like(jvp_out, out, "tangent", out_names))
        if problem:
            return "fwd", problem[0], _all(names)
        worst = _worst(jvp_out, fd, tol.atol, tol.rtol)
        if worst is not None and worst[0] > 1:
            _, leaf, index, got, expected = worst
            return "fwd", (f"largest error {abs(got - expected):.3g} in the jvp of "
                           f"{out_names[leaf]}{_format_index(index)}: jvp gives {got:.10g}, "
                           f"finite differences {expected:.10g} (eps={eps:g}, "
                           f"atol={tol.atol:g}, rtol={tol.rtol:g})"), None
    if "rev" in modes:
        primal_out, pullback = _run("rev", chain, lambda: api.vjp(fun, *xs))
        problem = _check_primal(primal_out, out, tol, out_names)
        if problem:
            return "rev", problem[0], _all(names)
        cts = _run("rev", chain, lambda: pullback(u))
        problem = _check_like(cts, xs, "cotangent", names)
        if problem:
            return "rev", problem[0], problem[1] or _all(names)
        vjp_side = _dot(cts, w)
        if jvp_out is not None:
            jvp_side = _dot(u, jvp_out)
            bound = tol.exact_rtol * (_abs_dot(cts, w) + _abs_dot(u, jvp_out)) \
                + tol.exact_atol * _total_abs(u)
            if not abs(vjp_side - jvp_side) <= bound:
                return "rev", (f"the adjoint identity fails: <J^T u, v> from vjp is "
                               f"{vjp_side:.12g} but <u, J v> from jvp is {jvp_side:.12g} "
                               f"(error {abs(vjp_side - jvp_side):.3g}, allowed {bound:.3g})"), None
        fd_side = _dot(u, fd)
        bound = tol.atol * _total_abs(u) + tol.rtol * _abs_dot(u, fd)
        if not abs(vjp_side - fd_side) <= bound:
            message = (f"<J^T u, v> from vjp is {vjp_side:.10g} but finite differences give "
                       f"<u, J v> = {fd_side:.10g} (error {abs(vjp_side - fd_side):.3g}, "
                       f"allowed {bound:.3g}; eps={eps:g})")
            return "rev", message, None
    return None


def _all(names):
    return "argument " + names[0] if len(names) == 1 else "arguments " + ", ".join(names)


def _run(mode, chain, thunk):
    try:
        return thunk()
    except Exception as error:
        if hasattr(error, "add_note"):
            error.add_note(f"(raised by check_grads in {_describe_chain(chain, mode)})")
        raise


def _check_primal(got, expected, tol, out_names):
    got = tree_util.tree_leaves(got)
    if len(got) != len(expected):
        return (f"the transformation returned {len(got)} outputs, the function "
                f"{len(expected)}", None)
    worst = _worst(got, expected, tol.exact_atol, tol.exact_rtol)
    if worst is not None and worst[0] > 1:
        _, leaf, index, g, e = worst
        return (f"its primal output {out_names[leaf]}{_format_index(index)} is {g:.12g} but "
                f"the function gives {e:.12g}", None)
    return None


def _check_like(values, like, what, names):
    """``(problem, name of the leaf)`` when a shape or dtype is wrong, else None."""
    values = tree_util.tree_leaves(values)
    if len(values) != len(like):
        return f"got {len(values)} {what}s for {len(like)} values", None
    for v, ref, name in zip(values, like, names):
        v = np.asarray(v)
        if v.shape != np.shape(ref) or v.dtype != dtype_of(ref):
            return (f"the {what} of {name} has shape {v.shape} and dtype {v.dtype}, expected "
                    f"{np.shape(ref)} and {dtype_of(ref)}", f"argument {name}")
    return None


# --- assert_jacobians_agree ----------------------------------------------------------------


def assert_jacobians_agree(fun: Callable[..., Any], *args: PyTree, rtol: float | None = None,
                           atol: float | None = None) -> None:
    """Assert that every way diffkit has of computing the Jacobian of ``fun`` at ``args``
    gives the same matrix.

    The reference Jacobians are built by loops, independently of the batched
    ``jacfwd``/``jacrev``: one call of the pullback from ``vjp`` per output unit vector (rows)
    and one ``jvp`` per input unit vector (columns). They must agree with each other, and
    ``jacfwd``, ``jacrev`` (also with ``chunk_size``) and ``jacobian`` must agree with them
    and give blocks of shape ``out.shape + in.shape``.

    ``rtol`` defaults to 1e-9 for float64 (1e-4 for float32); ``atol`` to ``1e-12`` (1e-6)
    times the largest entry of the Jacobian (at least 1). Floating-point and complex leaves
    of ``args`` are the inputs; integer and boolean leaves are held fixed.

    With complex leaves the matrices are real Jacobians in real coordinates: a complex leaf
    of n elements counts as n real parts then n imaginary parts, on either side. The loops
    push tangents ``1`` and ``1j`` and pull cotangents ``1`` (for a real part) and ``-1j``
    (for an imaginary part, since ``Im t = Re(-1j t)``). ``jacfwd``, ``jacrev`` and
    ``jacobian`` are compared on the function of the real and imaginary parts and, when no
    output and input are both complex, also directly with diffkit's complex Jacobian
    convention: ``df/dx`` for a real input and complex output, ``df/dx - i df/dy`` for a
    complex input ``x + iy`` and real output.

    Examples:
        >>> from diffkit.testing import assert_jacobians_agree
        >>> assert_jacobians_agree(lambda x, i: dnp.sin(x) * x[i], np.array([0.5, 1.0]), 1)
        >>> assert_jacobians_agree(lambda z: z * dnp.conj(z), np.array([1 + 2j, 3.0]))

        A JVP rule that is not linear in its tangents gives reverse mode (its transpose)
        another Jacobian:

        >>> @dk.custom_jvp
        ... def sine(x):
        ...     return dnp.sin(x)
        >>> @sine.defjvp
        ... def sine_jvp(primals, tangents):
        ...     return dnp.sin(primals[0]), tangents[0] ** 2
        >>> assert_jacobians_agree(sine, np.array([0.5, 1.0]))
        Traceback (most recent call last):
            ...
        AssertionError: assert_jacobians_agree: the Jacobian from unit-vector VJPs differs from ...
    """
    flat = _Flat(fun, args, "assert_jacobians_agree")
    xs = flat.primals
    out = _evaluate(flat, xs)
    if not out:
        raise ValueError("assert_jacobians_agree: the function has no floating-point output")
    tol = _tolerances([dtype_of(x) for x in xs] + [o.dtype for o in out])
    rtol = tol.exact_rtol if rtol is None else float(rtol)
    in_sizes = [_real_size(x) for x in xs]
    out_sizes = [_real_size(o) for o in out]
    n_in, n_out = sum(in_sizes), sum(out_sizes)

    def where(row, col):
        return (f"d {_coordinate_name(row, out, out_sizes, flat.out_names)} / "
                f"d {_coordinate_name(col, xs, in_sizes, flat.names)}")

    primal, pullback = api.vjp(flat, *xs)
    by_vjp = np.zeros((n_out, n_in))
    for row in range(n_out):
        cts = pullback(_unit(row, out, cotangent=True))
        by_vjp[row] = _ravel_all(cts, cotangent=True)
    by_jvp = np.zeros((n_out, n_in))
    for col in range(n_in):
        by_jvp[:, col] = _ravel_all(api.jvp(flat, xs, _unit(col, xs))[1])
    scale = max(1.0, float(np.max(np.abs(by_jvp), initial=0.0)))
    atol = tol.exact_atol * scale if atol is None else float(atol)
    _assert_matrix(by_vjp, by_jvp, "the Jacobian from unit-vector VJPs",
                   "the one from unit-vector JVPs", rtol, atol, where)

    for name, matrix in _builder_jacobians(fun, args, flat, xs, out, n_out):
        _assert_matrix(matrix, by_jvp, name, "the Jacobian from unit-vector JVPs", rtol, atol,
                       where)


def _builder_jacobians(fun, args, flat, xs, out, n_out):
    """``(name, real Jacobian)`` from ``jacfwd``, ``jacrev`` and ``jacobian``, laid out as
    the loops in :func:`assert_jacobians_agree` lay theirs out."""
    if all(_is_float(x) for x in flat.leaves) and len(out) == len(
            tree_util.tree_leaves(fun(*args))):
        target, call_args = fun, tuple(args)
    else:
        target, call_args = flat, xs
    complex_in = any(is_complex(x) for x in xs)
    complex_out = any(is_complex(o) for o in out)
    results = []
    if not (complex_in and complex_out):
        for name, build in _builders(target, len(call_args), n_out):
            blocks = tree_util.tree_leaves(build(*call_args))
            results.append((name, _assemble(blocks, out, xs, name)))
    if complex_in or complex_out:
        parts_fun, parts = _in_parts(flat, xs), _split(xs)
        for name, build in _builders(parts_fun, len(parts), n_out):
            label = f"{name} of the real and imaginary parts"
            blocks = tree_util.tree_leaves(build(*parts))
            matrix = _assemble(blocks, _split(out), parts, label)
            results.append((label, matrix))
    return results


def _builders(target, n_args, n_out):
    argnums = 0 if n_args == 1 else tuple(range(n_args))
    builders = [("jacfwd", api.jacfwd(target, argnums)), ("jacrev", api.jacrev(target, argnums)),
                ("jacobian", api.jacobian(target, argnums))]
    if n_out > 1:
        chunk = max(1, (n_out + 1) // 2)
        builders.append((f"jacrev(chunk_size={chunk})",
                         api.jacrev(target, argnums, chunk_size=chunk)))
    return builders


def _split(values):
    """Each complex leaf replaced by its real and imaginary parts (two real arrays)."""
    parts = []
    for v in values:
        v = np.asarray(v)
        parts.extend([v.real, v.imag] if v.dtype.kind == "c" else [v])
    return tuple(parts)


def _in_parts(flat, xs):
    """``flat`` as a real function of the parts given by :func:`_split`, returning the
    parts of its outputs."""
    kinds = [is_complex(x) for x in xs]
    dtypes = [dtype_of(x) for x in xs]

    def fun(*parts):
        values, k = [], 0
        for complex_input, dtype in zip(kinds, dtypes):
            if complex_input:
                values.append(parts[k] + parts[k + 1] * np.asarray(1j, dtype))
                k += 2
            else:
                values.append(parts[k])
                k += 1
        outs = []
        for o in flat(*values):
            outs.extend([o.real, o.imag] if is_complex(o) else [o])
        return tuple(outs)

    return fun


def _real_size(x):
    return int(np.size(x)) * (2 if is_complex(x) else 1)


def _coordinate_name(k, leaves, sizes, names):
    """The name of real coordinate ``k``: ``args[0][1, 2]``, or ``Im args[0][1, 2]``."""
    leaf, offset = _locate(k, sizes)
    x = leaves[leaf]
    if not is_complex(x):
        return f"{names[leaf]}{_format_index(_unravel(offset, np.shape(x)))}"
    part, offset = divmod(offset, int(np.size(x)))
    return (f"{'Im' if part else 'Re'} {names[leaf]}"
            f"{_format_index(_unravel(offset, np.shape(x)))}")


def _unit(k, like, cotangent=False):
    """The k-th unit vector of the real coordinates of ``like`` (see
    :func:`assert_jacobians_agree`), split back per leaf with the leaves' dtypes. In a
    complex leaf the imaginary coordinates are ``1j`` for a tangent and ``-1j`` for a
    cotangent."""
    parts, start = [], 0
    for x in like:
        size = int(np.size(x))
        part = np.zeros(size, dtype_of(x))
        offset = k - start
        if 0 <= offset < size:
            part[offset] = 1
        elif is_complex(x) and size <= offset < 2 * size:
            part[offset - size] = -1j if cotangent else 1j
        parts.append(part.reshape(np.shape(x)))
        start += _real_size(x)
    return tuple(parts)


def _ravel_all(values, cotangent=False):
    """The real coordinates of tangents, concatenated: a complex leaf ``t`` gives ``Re t``
    then ``Im t``; a complex cotangent ``c`` (the functional ``t -> Re(c t)``) gives ``Re c``
    then ``-Im c``."""
    leaves = tree_util.tree_leaves(values)
    if not leaves:
        return np.zeros(0)
    coordinates = []
    for v in leaves:
        v = np.asarray(v)
        if v.dtype.kind == "c":
            imag = -v.imag if cotangent else v.imag
            coordinates += [v.real.astype(np.float64).ravel(), imag.astype(np.float64).ravel()]
        else:
            coordinates.append(np.asarray(v, np.float64).ravel())
    return np.concatenate(coordinates)


def _locate(k, sizes):
    """``(leaf, offset in that leaf)`` of position ``k`` of the concatenated leaves."""
    start = 0
    for leaf, size in enumerate(sizes):
        if k < start + size:
            return leaf, k - start
        start += size
    raise IndexError(k)


def _unravel(offset, shape):
    return tuple(int(i) for i in np.unravel_index(offset, shape))


def _assemble(blocks, out, xs, name):
    """The real (n_out, n_in) matrix from Jacobian blocks, output-major, checking their
    shapes. Complex blocks follow diffkit's convention: ``df/dx`` (real input, complex
    output) gives rows for the real and imaginary parts, ``df/dx - i df/dy`` (complex input,
    real output) columns for the real and imaginary parts of the input."""
    if len(blocks) != len(out) * len(xs):
        raise AssertionError(f"assert_jacobians_agree: {name} returned {len(blocks)} blocks, "
                             f"expected {len(out)} outputs x {len(xs)} inputs")
    rows = []
    for j, o in enumerate(out):
        row = []
        for i, x in enumerate(xs):
            block = np.asarray(blocks[j * len(xs) + i])
            expected = o.shape + np.shape(x)
            if block.shape != expected:
                raise AssertionError(f"assert_jacobians_agree: {name} gave a block of shape "
                                     f"{block.shape} for output {j} and input {i}, expected "
                                     f"{expected} (out.shape + in.shape)")
            row.append(_real_block(block.reshape(o.size, int(np.size(x))), is_complex(o),
                                   is_complex(x)))
        rows.append(np.concatenate(row, axis=1) if row else np.zeros((_real_size(o), 0)))
    return np.concatenate(rows, axis=0)


def _real_block(block, complex_out, complex_in):
    """A (out.size, in.size) Jacobian block in real coordinates (float64)."""
    if complex_out:   # df/dx: d Re f/dx and d Im f/dx
        return np.concatenate([block.real, block.imag]).astype(np.float64)
    if complex_in:    # df/dx - i df/dy
        return np.concatenate([block.real, -block.imag], axis=1).astype(np.float64)
    return block.astype(np.float64)


def _assert_matrix(got, expected, got_name, expected_name, rtol, atol, where):
    worst = _worst([got], [expected], atol, rtol)
    if worst is not None and worst[0] > 1:
        _, _, (row, col), g, e = worst
        raise AssertionError(
            f"assert_jacobians_agree: {got_name} differs from {expected_name}: largest error "
            f"{abs(g - e):.3g} at {where(row, col)}: {g:.12g} vs {e:.12g} (rtol={rtol:g}, "
            f"atol={atol:g})")


# --- check_vmap ---------------------------------------------------------------------------


def check_vmap(fun: Callable[..., Any], args: Sequence[PyTree], in_axes: Axes = 0, *,
               rtol: float | None = None, atol: float | None = None) -> None:
    """Check that ``vmap(fun, in_axes)(*args)`` equals a Python loop that calls ``fun`` on
    each slice of the mapped arguments and stacks the results along axis 0.

    ``in_axes`` is an int, ``None`` or a pytree prefix of ``args`` (a tuple), as in ``vmap``.
    Structures, shapes and dtypes must match exactly; values to ``rtol`` (default 1e-10 for
    float64, 1e-5 for float32) and ``atol`` (default ``1e-12`` times the largest result,
    at least 1), since batched NumPy calls may sum in a different order. Complex results are
    compared by the modulus of the difference. NaN in both at the same place is equal.

    Examples:
        >>> from diffkit.testing import check_vmap
        >>> check_vmap(lambda x, y: dnp.sum(x * y), (np.ones((3, 2)), np.arange(2.0)),
        ...            in_axes=(0, None))

        A function that keeps state between calls gives another result per example:

        >>> calls = []
        >>> def stateful(x):
        ...     calls.append(x)
        ...     return x * len(calls)
        >>> check_vmap(stateful, (np.ones(3),))
        Traceback (most recent call last):
            ...
        AssertionError: check_vmap: for in_axes=0 (argument shapes [(3,)]), out: vmap and the ...
    """
    if not isinstance(args, (tuple, list)):
        raise TypeError(f"check_vmap takes the arguments as a tuple, e.g. check_vmap(f, (x,)); "
                        f"got a {type(args).__name__}")
    args = tuple(args)
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    leaves, treedef = tree_util.tree_flatten(args)
    leaves = [_as_leaf(x) for x in leaves]
    axes = tree_util.broadcast_prefix(in_axes, args)
    sizes = {np.shape(x)[a] for x, a in zip(leaves, axes) if a is not None}
    if len(sizes) != 1:
        raise ValueError(f"check_vmap needs mapped arguments with one batch size, got sizes "
                         f"{sorted(sizes)} for in_axes={in_axes!r}")
    size = sizes.pop()
    batched = api.vmap(fun, in_axes=in_axes)(*args)
    results = []
    for b in range(size):
        sliced = [x if a is None else np.take(x, b, axis=a) for x, a in zip(leaves, axes)]
        results.append(fun(*tree_util.tree_unflatten(treedef, sliced)))
    got_leaves, got_tree = tree_util.tree_flatten(batched)
    loop_trees = [tree_util.tree_structure(r) for r in results]
    if size and loop_trees[0] != got_tree:
        raise AssertionError(f"check_vmap: vmap returned structure {got_tree}, the loop "
                             f"{loop_trees[0]}")
    out_names = _leaf_names(results[0], "out") if size else []
    if size and _is_leafish(results[0]):
        out_names = ["out"]
    for k, got in enumerate(got_leaves):
        expected = np.stack([np.asarray(tree_util.tree_leaves(r)[k]) for r in results])
        got = np.asarray(got)
        what = (f"check_vmap: for in_axes={in_axes!r} (argument shapes "
                f"{[np.shape(x) for x in leaves]}), {out_names[k]}")
        if got.shape != expected.shape or got.dtype != expected.dtype:
            raise AssertionError(f"{what}: vmap gives shape {got.shape} and dtype {got.dtype}, "
                                 f"the loop {expected.shape} and {expected.dtype}")
        if got.dtype.kind not in "fc":
            if not np.array_equal(got, expected):
                bad = np.argwhere(got != expected)[0]
                raise AssertionError(f"{what}: vmap and the loop differ at {tuple(bad)}: "
                                     f"{got[tuple(bad)]} vs {expected[tuple(bad)]}")
            continue
        tol = _tolerances([got.dtype])
        r = (1e-10 if tol.exact_rtol < 1e-6 else 1e-5) if rtol is None else float(rtol)
        finite = np.abs(expected[np.isfinite(expected)])   # an infinity sets no scale
        scale = max(1.0, float(np.max(finite, initial=0.0)))
        a = tol.exact_atol * scale if atol is None else float(atol)
        worst = _worst([got], [expected], a, r, equal_nan=True)
        if worst is not None and worst[0] > 1:
            _, _, index, g, e = worst
            raise AssertionError(f"{what}: vmap and the loop differ, largest error "
                                 f"{abs(g - e):.3g} at {_format_index(index)} (batch index "
                                 f"first): vmap {g:.12g}, loop {e:.12g}")
