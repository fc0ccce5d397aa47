"""The checks diffkit makes at edge points: zeros, domain boundaries, poles, ties, overflow,
NaN entries, singular matrices.

:func:`check_edge` runs every check of one function at one point, where the generic checks
(:func:`~diffkit.testing.check_grads` at random, well-behaved points) would be too strict or
too lax:

- the value equals the reference (NumPy's or SciPy's own function), NaN for NaN;
- ``jacfwd == jacrev`` bit for bit, NaN for NaN (no tolerance: the two engines must make the
  same choices at singular points, see ``docs/conventions.md``);
- where the function is differentiable, the Jacobian equals finite differences (central, or
  one-sided at a domain boundary); where it is not, it equals the documented convention;
- ``vmap`` equals a loop, for the function and for its forward and reverse derivatives;
- the Hessian of ``<u, f>`` (``u`` a fixed random cotangent) is symmetric to rounding
  (``max|H - H^T| <= 1e-10 max(1, max|H|)``, non-finite entries identical) and, at a point of
  second-order differentiability, equals finite differences of the gradient;
- float32 (complex64) arguments give the reference's dtype, and tangents and cotangents keep
  the dtypes of the values they stand for.

Near repeated eigenvalues and singular values (``docs/conventions.md``, the tie rule at
every order) two more checks, in flat real coordinates too:

- :func:`check_nan_propagates`: a NaN first derivative (the tie rule's unknown coupling)
  stays NaN at second order in every route (``hessian``, ``hvp``, ``jvp`` of ``grad`` and
  the four nested Jacobians), never a finite guess;
- :func:`check_near_tie`: first and second derivatives in both engines and every route
  against a reference (finite differences of NumPy's function at a larger, smooth scale,
  or an exact formula), within a stated error bound, or NaN where the tie rule of that
  order says so.

Every check works on the function as a map between flat real vectors: float and complex
argument leaves are the input (a complex leaf counts as its real then imaginary parts),
float and complex output leaves the output, in the same coordinates. Integer and boolean
leaves are held fixed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import api, tree_util
from .. import numpy as dnp
from .._types import PyTree
from ..core.zeros import dtype_of
from .checks import check_vmap

__all__ = ["check_edge", "assert_jacobians_identical", "assert_hessian_symmetric",
           "second_derivatives", "check_nan_propagates", "check_near_tie"]

_FD_RTOL = 1e-5   # finite differences of float64 functions (truncation ~ h**2, h = 1e-5)
_FD_STEP = 1e-5   # relative to max(1, |x|)
_SYMMETRY = 1e-10


class _Vector:
    """``fun`` as a map from a flat float64 vector to a flat float64 vector (real
    coordinates), with every other argument leaf held fixed."""

    def __init__(self, fun, args):
        self.fun = fun
        leaves, self.treedef = tree_util.tree_flatten(tuple(args))
        self.leaves = [np.asarray(x) for x in leaves]
        self.diff = [i for i, x in enumerate(self.leaves) if x.dtype.kind in "fc"]
        if not self.diff:
            raise ValueError("check_edge: no argument has a floating-point or complex dtype")
        parts = []
        for i in self.diff:
            x = self.leaves[i]
            parts += [x.real.ravel(), x.imag.ravel()] if x.dtype.kind == "c" else [x.ravel()]
        self.point = np.concatenate(parts).astype(np.float64)

    def args(self, v):
        """The arguments at the flat point ``v`` (an array or a traced vector)."""
        full, start = list(self.leaves), 0
        for i in self.diff:
            x = self.leaves[i]
            n = x.size
            piece = v[start:start + n].reshape(x.shape)
            start += n
            if x.dtype.kind == "c":
                piece = piece + 1j * v[start:start + n].reshape(x.shape)
                start += n
            if dtype_of(piece) != x.dtype:
                piece = dnp.astype(piece, x.dtype)
            full[i] = piece
        return tree_util.tree_unflatten(self.treedef, full)

    def __call__(self, v):
        outs = [o for o in tree_util.tree_leaves(self.fun(*self.args(v)))
                if dtype_of(o).kind in "fc"]
        if not outs:
            raise ValueError("check_edge: the function has no floating-point output")
        parts = []
        for o in outs:
            if dtype_of(o).kind == "c":
                parts += [dnp.ravel(dnp.real(o)), dnp.ravel(dnp.imag(o))]
            else:
                parts.append(dnp.ravel(o))
        flat = parts[0] if len(parts) == 1 else dnp.concatenate(parts)
        return dnp.astype(flat, np.float64) if dtype_of(flat) != np.float64 else flat


def _float_leaves(tree):
    return [np.asarray(x) for x in tree_util.tree_leaves(tree) if dtype_of(x).kind in "fc"]


def _fail(what, detail):
    raise AssertionError(f"check_edge: {what}: {detail}")


def _assert_close(got, expected, rtol, atol, what):
    """``|got - expected| <= atol + rtol |expected|``; non-finite entries must be identical
    (NaN for NaN, infinities of the same sign)."""
    got, expected = np.asarray(got), np.asarray(expected)
    if got.shape != expected.shape:
        _fail(what, f"shape {got.shape}, expected {expected.shape}")
    finite = np.isfinite(expected)
    same = (got == expected) | (np.isnan(got) & np.isnan(expected))
    bad = ~same & (~finite | ~np.isfinite(got))
    with np.errstate(invalid="ignore"):
        bad |= finite & np.isfinite(got) & ~(np.abs(got - expected)
                                             <= atol + rtol * np.abs(expected))
    if np.any(bad):
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        _fail(what, f"{got[index]!r} vs {expected[index]!r} at {index} "
                    f"(rtol={rtol:g}, atol={atol:g});\n got {got!r}\n expected {expected!r}")


def assert_jacobians_identical(fun: Callable[..., Any], *args: PyTree, ulps: int = 0
                               ) -> NDArray[Any]:
    """``jacfwd(fun)`` and ``jacrev(fun)`` at ``args`` are equal bit for bit (NaN for NaN,
    in the real coordinates of check_edge's flat vectors). Returns the (m, n) Jacobian.

    ``ulps > 0`` lets finite entries differ by that many units of rounding (relative to the
    largest finite entry), for compositions: the chain rule multiplies the factors of a chain
    in opposite orders in the two modes. Non-finite entries must still be identical."""
    vec = _Vector(fun, args)
    forward = np.asarray(api.jacfwd(vec)(vec.point))
    reverse = np.asarray(api.jacrev(vec)(vec.point))
    same = (forward == reverse) | (np.isnan(forward) & np.isnan(reverse))
    if ulps and forward.shape == reverse.shape:
        finite = np.isfinite(forward) & np.isfinite(reverse)
        scale = float(np.max(np.abs(forward[finite]), initial=0.0))
        bound = ulps * np.finfo(np.float64).eps * scale
        same |= finite & (np.abs(np.where(finite, forward - reverse, 0.0)) <= bound)
    if forward.shape != reverse.shape or not np.all(same):
        differ = ~same
        index = tuple(int(i) for i in np.argwhere(differ)[0])
        _fail("jacfwd and jacrev differ", f"{forward[index]!r} vs {reverse[index]!r} at "
              f"(output, input) {index};\n jacfwd {forward!r}\n jacrev {reverse!r}")
    return forward


def assert_hessian_symmetric(hessian: ArrayLike, what: str = "the Hessian") -> None:
    """``max|H - H^T| <= 1e-10 max(1, max|H|)`` over finite entries; non-finite entries equal
    their mirror images (NaN for NaN)."""
    h = np.asarray(hessian)
    finite = np.isfinite(h) & np.isfinite(h.T)
    scale = max(1.0, float(np.max(np.abs(h[finite]), initial=0.0)))
    mirror_ok = (h == h.T) | (np.isnan(h) & np.isnan(h.T))
    bad = (~finite & ~mirror_ok) | (finite & (np.abs(np.where(finite, h - h.T, 0.0))
                                              > _SYMMETRY * scale))
    if np.any(bad):
        i, j = (int(k) for k in np.argwhere(bad)[0])
        _fail(f"{what} is not symmetric", f"H[{i}, {j}] = {h[i, j]!r} but H[{j}, {i}] = "
              f"{h[j, i]!r};\n H = {h!r}")


def _finite_differences(fun, point, side, step):
    """The (m, n) Jacobian of ``fun`` at ``point`` by central differences (``side`` 0) or
    second-order one-sided differences towards ``side`` (+1 or -1)."""
    columns = []
    for j in range(point.size):
        h = step * max(1.0, abs(point[j]))
        e = np.zeros_like(point)
        e[j] = h

        def at(k, e=e):
            return np.asarray(fun(point + k * e), np.float64)

        if side == 0:
            columns.append((at(1) - at(-1)) / (2 * h))
        else:
            columns.append(side * (-3 * at(0) + 4 * at(side) - at(2 * side)) / (2 * h))
    return np.stack(columns, axis=-1)


def _check_value(fun, args, reference, rtol):
    got = _float_leaves(fun(*args))
    expected = _float_leaves(reference(*args))
    if len(got) != len(expected):
        _fail("the value", f"{len(got)} floating-point outputs, the reference has "
                           f"{len(expected)}")
    for k, (g, e) in enumerate(zip(got, expected)):
        if g.dtype != e.dtype:
            _fail(f"the value (output {k})", f"dtype {g.dtype}, the reference gives {e.dtype}")
        _assert_close(g, e, rtol, 0.0, f"the value (output {k}) against the reference")


def _stacked(args, count=2):
    return tuple(tree_util.tree_map(lambda x: np.stack([np.asarray(x)] * count), a)
                 for a in args)


def _check_batching(fun, args, vec, u, w):
    check_vmap(fun, _stacked(args))
    points = np.stack([vec.point, vec.point])
    check_vmap(lambda v: api.jvp(vec, (v,), (w,))[1], (points,))
    check_vmap(lambda v: api.vjp(vec, v)[1](u)[0], (points,))


def _check_hessian(vec, u, second_order, side, step, fd_rtol):
    def pairing(v):
        return dnp.sum(vec(v) * u)

    h = np.asarray(api.hessian(pairing)(vec.point))
    assert_hessian_symmetric(h)
    if second_order:
        gradient = api.grad(pairing)
        fd = _finite_differences(gradient, vec.point, side, step)
        scale = max(1.0, float(np.max(np.abs(fd), initial=0.0)))
        _assert_close(h, fd, fd_rtol, fd_rtol * scale,
                      "the Hessian against finite differences of the gradient")


def _narrow(x):
    """float64 -> float32, complex128 -> complex64, and integers (orders, indices) to int16
    when they fit, so that NumPy's promotion keeps the floats single precision."""
    x = np.asarray(x)
    if x.dtype == np.float64:
        return x.astype(np.float32)
    if x.dtype == np.complex128:
        return x.astype(np.complex64)
    if x.dtype.kind == "i" and (x.size == 0 or np.abs(x).max() < 2 ** 15):
        return x.astype(np.int16)
    return x


def _check_dtypes(fun, args, reference):
    """float32/complex64 arguments: the value has the reference's dtypes, tangents and
    cotangents the dtypes of their values."""
    with np.errstate(over="ignore", under="ignore"):
        narrow = tuple(tree_util.tree_map(_narrow, a) for a in args)
    wide, small = _float_leaves(args), _float_leaves(narrow)
    if any(np.any(np.isfinite(a) & ~np.isfinite(b)) or np.any((a != 0) & (b == 0))
           for a, b in zip(wide, small)):
        return   # the point itself does not exist in single precision
    expected = [o.dtype for o in _float_leaves(reference(*narrow))]
    got = [o.dtype for o in _float_leaves(fun(*narrow))]
    # Where the reference widens single precision (SciPy's polygamma, expn, ...), diffkit
    # may keep it: its contract is that float32 stays float32.
    kept = {np.dtype(np.float64): np.dtype(np.float32),
            np.dtype(np.complex128): np.dtype(np.complex64)}
    if len(got) != len(expected) or any(g != e and g != kept.get(e)
                                        for g, e in zip(got, expected)):
        _fail("single precision", f"float32/complex64 arguments give dtypes {got}, the "
                                  f"reference {expected}")
    vec = _Vector(fun, narrow)
    xs = vec.args(vec.point)
    floats = [i for i, x in enumerate(tree_util.tree_leaves(xs)) if dtype_of(x).kind in "fc"]
    leaves, treedef = tree_util.tree_flatten(xs)

    def of_floats(*values):
        full = list(leaves)
        for i, v in zip(floats, values):
            full[i] = v
        return tuple(_float_leaves_traced(fun(*tree_util.tree_unflatten(treedef, full))))

    primals = tuple(leaves[i] for i in floats)
    tangents = tuple(np.ones_like(p) for p in primals)
    out, tangent_out = api.jvp(of_floats, primals, tangents)
    for o, t in zip(out, tangent_out):
        if np.asarray(t).dtype != np.asarray(o).dtype:
            _fail("single precision", f"a tangent of dtype {np.asarray(t).dtype} for an output "
                                      f"of dtype {np.asarray(o).dtype}")
    out, pullback = api.vjp(of_floats, *primals)
    cotangents = pullback(tuple(np.ones_like(np.asarray(o)) for o in out))
    for p, c in zip(primals, cotangents):
        if np.asarray(c).dtype != np.asarray(p).dtype:
            _fail("single precision", f"a cotangent of dtype {np.asarray(c).dtype} for an "
                                      f"argument of dtype {np.asarray(p).dtype}")


def _float_leaves_traced(tree):
    return [x for x in tree_util.tree_leaves(tree) if dtype_of(x).kind in "fc"]


def check_edge(fun: Callable[..., Any], args: Sequence[PyTree], *,
               reference: Callable[..., Any] | None = None, differentiable: bool = True,
               fd_side: int = 0, jacobian: ArrayLike | None = None,
               hessian: ArrayLike | None = None, second_order: bool | None = None,
               batching: bool = True, dtypes: bool = True, value_rtol: float = 1e-12,
               ulps: int = 0, fd_rtol: float = _FD_RTOL, fd_step: float = _FD_STEP,
               jacobian_rtol: float = 1e-12) -> NDArray[Any] | None:
    """Check ``fun`` at the edge point ``args`` (a tuple of arguments).

    ``reference``: NumPy's or SciPy's function, called with the same arguments: the values
    must match (``value_rtol``, NaN for NaN, same dtypes). ``differentiable``: compare the
    Jacobian with finite differences, central (``fd_side=0``) or one-sided towards
    ``fd_side`` (+1 or -1, for a point on a domain boundary). ``ulps``: see
    :func:`assert_jacobians_identical` (0, bit for bit, unless a composition needs more).
    ``jacobian``: the documented Jacobian at a kink (array-like, broadcast to ``(m, n)`` in
    flat real coordinates), which must match to ``jacobian_rtol``. ``hessian``: the
    documented Hessian (broadcast to ``(n, n)``) of the sum of the flat outputs, likewise.
    ``second_order`` (default: ``differentiable``): compare the Hessian of ``<u, f>`` with
    finite differences of its gradient. ``batching``: vmap against loops. ``dtypes``: repeat
    in float32/complex64 and check the dtypes. A function with no floating-point argument or
    output (integer functions, predicates) gets the value and batching checks only.

    Raises ``AssertionError`` naming the check that fails. Returns the Jacobian (or None).

    Examples:
        >>> from diffkit.testing import check_edge
        >>> check_edge(dnp.sin, (np.array([0.0, 1.0]),), reference=np.sin).shape
        (2, 2)

        At a kink the Jacobian is the documented convention (``abs'(0) = 0``):

        >>> check_edge(dnp.abs, (np.array([0.0, 2.0]),), reference=np.abs,
        ...            differentiable=False, jacobian=[[0, 0], [0, 1]]).tolist()
        [[0.0, 0.0], [0.0, 1.0]]
        >>> check_edge(dnp.abs, (np.array([0.0, 2.0]),), reference=np.abs,
        ...            differentiable=False, jacobian=[[1, 0], [0, 1]])
        Traceback (most recent call last):
            ...
        AssertionError: check_edge: the Jacobian against the documented convention: ...
        >>> print(check_edge(dnp.sign, (np.array([0.0, -1.0]),), reference=np.sign,
        ...                  differentiable=False, jacobian=0.0))
        [[0. 0.]
         [0. 0.]]
    """
    args = tuple(args)
    if reference is not None:
        _check_value(fun, args, reference, value_rtol)
    if not _float_leaves(args) or not _float_leaves(fun(*args)):
        # Nothing to differentiate (integer functions, predicates): values and batching only.
        if batching:
            check_vmap(fun, _stacked(args))
        return None
    vec = _Vector(fun, args)
    jac = assert_jacobians_identical(fun, *args, ulps=ulps)
    if differentiable:
        fd = _finite_differences(vec, vec.point, fd_side, fd_step)
        scale = max(1.0, float(np.max(np.abs(fd[np.isfinite(fd)]), initial=0.0)))
        _assert_close(jac, fd, fd_rtol, fd_rtol * scale,
                      "the Jacobian against finite differences")
    if jacobian is not None:
        expected = np.broadcast_to(np.asarray(jacobian, np.float64), jac.shape)
        _assert_close(jac, expected, jacobian_rtol, 0.0,
                      "the Jacobian against the documented convention")
    rng = np.random.default_rng(0)
    u = rng.uniform(0.5, 1.5, jac.shape[0]) * rng.choice([-1.0, 1.0], jac.shape[0])
    w = rng.uniform(0.5, 1.5, jac.shape[1]) * rng.choice([-1.0, 1.0], jac.shape[1])
    if batching:
        _check_batching(fun, args, vec, u, w)
    _check_hessian(vec, u, differentiable if second_order is None else second_order,
                   fd_side, fd_step, fd_rtol * 10)
    if hessian is not None:
        h = np.asarray(api.hessian(lambda v: dnp.sum(vec(v)))(vec.point))
        _assert_close(h, np.broadcast_to(np.asarray(hessian, np.float64), h.shape),
                      jacobian_rtol, 0.0, "the Hessian against the documented convention")
    if dtypes and reference is not None:
        _check_dtypes(fun, args, reference)
    return jac


# --- near ties: the tie rule at every order ---------------------------------------------------

_ROUTES = ("hessian", "jacfwd(jacrev)", "jacrev(jacfwd)", "jacfwd(jacfwd)", "jacrev(jacrev)")


def second_derivatives(scalar: Callable[..., Any], point: NDArray[Any]
                       ) -> dict[str, NDArray[Any]]:
    """``{route: (n, n) matrix}``: the Hessian of ``scalar`` (flat vector to a number) at
    ``point`` by ``hessian`` (forward over reverse) and the four nested Jacobians."""
    nest = {"hessian": api.hessian(scalar),
            "jacfwd(jacrev)": api.jacfwd(api.jacrev(scalar)),
            "jacrev(jacfwd)": api.jacrev(api.jacfwd(scalar)),
            "jacfwd(jacfwd)": api.jacfwd(api.jacfwd(scalar)),
            "jacrev(jacrev)": api.jacrev(api.jacrev(scalar))}
    return {route: np.asarray(nest[route](point), np.float64).reshape(point.size, point.size)
            for route in _ROUTES}


def _pairing(fun, args, seed=0):
    """``<u, f>`` as a function of check_edge's flat vector, ``u`` a fixed random cotangent."""
    vec = _Vector(fun, args)
    out = np.asarray(vec(vec.point))
    rng = np.random.default_rng(seed)
    u = rng.uniform(0.5, 1.5, out.shape) * rng.choice([-1.0, 1.0], out.shape)
    return vec, (lambda v: dnp.sum(vec(v) * u))


def check_nan_propagates(fun: Callable[..., Any], args: Sequence[PyTree]) -> NDArray[Any]:
    """Where the gradient of ``<u, f>`` (``u`` a fixed random cotangent) at ``args`` is NaN,
    every second derivative of that entry is NaN or exactly 0 (0 only towards inputs that
    no route finds it depends on), in ``hessian``, ``hvp``, ``jvp`` of ``grad`` and the four
    nested Jacobians alike: all routes give the same NaN pattern, and ``hvp`` in a dense
    direction is NaN in every row that has a NaN. Raises ``AssertionError``; returns the
    Hessian."""
    vec, scalar = _pairing(fun, args)
    gradient = np.asarray(api.grad(scalar)(vec.point))
    unknown = np.isnan(gradient)
    if not np.any(unknown):
        _fail("NaN propagation", f"the gradient has no NaN to propagate: {gradient!r}")
    routes = second_derivatives(scalar, vec.point)
    pattern = np.isnan(routes["hessian"])
    for route, h in routes.items():
        guessed = unknown[:, None] & np.isfinite(h) & (h != 0)
        guessed |= unknown[None, :] & np.isfinite(h) & (h != 0)
        if np.any(guessed):
            i, j = (int(k) for k in np.argwhere(guessed)[0])
            _fail(f"NaN propagation ({route})", f"H[{i}, {j}] = {h[i, j]!r} is a finite "
                  f"guess where the gradient entry is NaN;\n H = {h!r}")
        if not np.array_equal(np.isnan(h), pattern):
            _fail(f"NaN propagation ({route})", f"NaN pattern differs from hessian's:\n "
                  f"{route} {np.isnan(h)!r}\n hessian {pattern!r}")
    if not np.any(pattern[unknown]):
        _fail("NaN propagation", "no second derivative of a NaN gradient entry is NaN")
    direction = np.random.default_rng(1).uniform(0.5, 1.5, vec.point.size)
    expected = np.any(pattern, axis=1)
    products = {"hvp": api.hvp(scalar, (vec.point,), (direction,))[0],
                "jvp(grad)": api.jvp(api.grad(scalar), (vec.point,), (direction,))[1]}
    for name, product in products.items():
        product = np.asarray(product, np.float64)
        if not np.array_equal(np.isnan(product), expected):
            _fail(f"NaN propagation ({name})", f"NaN in rows {np.isnan(product)!r}, the "
                  f"Hessian has NaN in rows {expected!r}")
        finite = ~expected
        _assert_close(product[finite], (np.where(pattern, 0.0, routes["hessian"]) @
                                        direction)[finite], 1e-10, 1e-12,
                      f"{name} against the Hessian")
    return routes["hessian"]


def check_near_tie(fun: Callable[..., Any], args: Sequence[PyTree], *, jacobian: ArrayLike,
                   hessian: ArrayLike | Callable[[NDArray[Any]], ArrayLike] | None = None,
                   first_error: float = 0.0, second_error: float | dict[str, float] = 0.0,
                   second_nan: bool = False, fd_error: float = 0.0) -> None:
    """First and second derivatives of ``fun`` at the near-tie point ``args`` against a
    reference, in both engines and every route.

    ``jacobian``: the reference ``(m, n)`` Jacobian in flat real coordinates (an exact
    formula or finite differences of NumPy's function at a larger, smooth scale);
    ``hessian``: the reference ``(n, n)`` Hessian of ``<u, f>`` for check_edge's fixed
    cotangent ``u`` (``_pairing``), or a callable ``u -> (n, n)``. ``first_error`` /
    ``second_error``: the stated error bound of the derivative (absolute, relative to the
    largest reference entry, at least 1) on top of ``fd_error``, the reference's own error;
    ``second_error`` may be a dict by route (``"hessian"``, ``"jacrev(jacrev)"``, ...).
    ``second_nan``: the tie rule of order 2 holds here, so every second derivative must be
    NaN (no finite guess). ``jacfwd`` and ``jacrev`` must both meet the bound (bit for bit
    equality is not expected near a tie: they round differently)."""
    vec, scalar = _pairing(fun, args)
    jacobian = np.broadcast_to(np.asarray(jacobian, np.float64), (np.asarray(vec(vec.point)).size,
                                                                    vec.point.size))
    scale = max(1.0, float(np.max(np.abs(jacobian))))
    for name, engine in (("jacfwd", api.jacfwd), ("jacrev", api.jacrev)):
        got = np.asarray(engine(vec)(vec.point), np.float64)
        _assert_close(got, jacobian, 0.0, (first_error + fd_error) * scale,
                      f"the near-tie Jacobian ({name}) against the reference")
    if hessian is None and not second_nan:
        return
    routes = second_derivatives(scalar, vec.point)
    if second_nan:
        for route, h in routes.items():
            if not np.all(np.isnan(h) | (h == 0)) or not np.any(np.isnan(h)):
                _fail(f"the near-tie Hessian ({route})", f"expected NaN (the tie rule of "
                      f"order 2), got {h!r}")
        return
    if callable(hessian):
        out = np.asarray(vec(vec.point))
        rng = np.random.default_rng(0)
        u = rng.uniform(0.5, 1.5, out.shape) * rng.choice([-1.0, 1.0], out.shape)
        hessian = hessian(u)
    hessian = np.asarray(hessian, np.float64)
    scale = max(1.0, float(np.max(np.abs(hessian))))
    for route, h in routes.items():
        bound = second_error.get(route, 0.0) if isinstance(second_error, dict) else \
            second_error
        _assert_close(h, hessian, 0.0, (bound + fd_error) * scale,
                      f"the near-tie Hessian ({route}) against the reference")
