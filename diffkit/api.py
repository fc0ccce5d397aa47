"""The functional transformations: what each computes, and the checks users rely on (their
messages live in ``diffkit.api_checks``).

Conventions shared by every function here:

- Arguments are NumPy arrays, NumPy or Python scalars, or pytrees of them (tuples, lists,
  dicts, namedtuples, ``None``, registered types). Differentiated leaves must be float or
  complex; results are NumPy arrays shaped like what they stand for.
- ``argnums`` (an int or a tuple of ints) picks the positional arguments to differentiate;
  an int gives one result, a tuple a tuple of results.
- ``has_aux=True``: the function returns ``(output, aux)``; ``aux`` is passed through
  undifferentiated.
- A Jacobian of ``f: in.shape -> out.shape`` has shape ``out.shape + in.shape``; with pytrees
  on both sides it nests as the output's structure of the input's structure.

Every transformation has the same shape: check the arguments and flatten their pytrees
(``api_checks``), wrap ``fun`` as a function of flat lists (``_FlatFun``), run one engine's
entry point (``jvp_flat``, ``vjp_flat``, ``linearize_flat``, ``batch_flat`` in
``diffkit.interpreters``), then rebuild the output pytrees and materialise the symbolic
zeros the engine hands back. Jacobians, Hessians and ``hvp`` compose these.

Complex numbers (JAX's convention)
----------------------------------
A complex number is a pair of reals and every function is differentiated as a real-linear
map. ``jvp`` maps a tangent ``t`` to the directional derivative along ``t``. A cotangent
``w`` stands for the functional ``t -> Re(w t)`` (a bilinear pairing, no conjugation), so
``vjp`` is characterised by ``Re(sum(w * jvp(t))) == Re(sum(vjp(w) * t))``; for a
holomorphic ``f`` both are multiplication by ``f'(z)``. The cotangent of a real value is
real, and tangents and cotangents keep their value's precision (complex64 stays complex64).

- ``grad`` of a real-valued ``f`` of a complex ``z = x + iy`` is ``vjp`` with cotangent 1:
  ``df/dx - i df/dy``, the *conjugate* of the steepest-ascent direction, so that
  ``f(z + t) ~ f(z) + Re(grad(f)(z) * t)``. For ``f(z) = |z|**2`` it is ``2 conj(z)``
  (``6 - 8j`` at ``3 + 4j``); gradient descent steps along ``-conj(grad(f)(z))``.
- ``holomorphic=True`` (``grad``, ``value_and_grad``, ``jacfwd``, ``jacrev``, ``jacobian``,
  ``hessian``) promises a holomorphic function of complex inputs with complex outputs; the
  result is the complex derivative ``f'(z)``. Without it a complex output is an error for
  ``grad``.
- Jacobians without ``holomorphic``: real to complex (``R -> C``) gives ``df/dx`` (complex),
  complex to real (``C -> R``) gives ``df/dx - i df/dy`` per element (``grad``'s
  convention), in both modes: ``jacfwd`` and ``jacrev`` agree. JAX computes the first only
  in forward mode and the second only in reverse mode; diffkit pushes (or pulls) ``1j`` as
  well as 1 through the complex side in the other mode. A function with complex inputs
  *and* complex outputs has no complex Jacobian unless it is holomorphic: that is an error
  (use ``jvp``/``vjp`` along 1 and 1j, or split real and imaginary parts).
"""

import numpy as np

from . import tree_util
from .api_checks import (
    LeafNames,
    argnum_positions,
    as_array,
    batch_input,
    batch_size,
    broadcast_axes,
    check_argnums,
    check_axes_spec,
    check_axis,
    check_axis_size,
    check_callable,
    check_chunk_size,
    check_in_axes,
    check_scalar,
    flat_inputs,
    output_leaf,
    require_complex,
    split_aux,
)
from .api_checks import (
    matching_leaves as _matching_leaves,
)
from .chunking import lazy_array_handler, require_concrete, rows_check, run_chunks
from .core.trace import Tracer
from .core.zeros import dtype_of, instantiate, is_complex, shape_of
from .errors import BatchingError, ChunkError, InputTypeError, OptionError
from .interpreters.batching import batch_flat
from .interpreters.forward import jvp_flat
from .interpreters.reverse import vjp_flat
from .interpreters.staging import linearize_flat
from .jacobian_parts import (
    basis_size,
    jacobian_tree,
    split_rows,
    split_rows_last,
    unit_bases,
)
from .ops import shape
from .ops.control import stop_gradient
from .ops.indexing import getitem
from .tracebacks import api_boundary, public

__all__ = ["grad", "value_and_grad", "vjp", "jvp", "linearize", "jacfwd", "jacrev",
           "jacobian", "hessian", "hvp", "vmap", "stop_gradient"]


# --- the bridge to the engines: pytrees outside, flat lists inside -----------------------


class _FlatFun:
    """``fun`` as the engines call it: a function of a flat list of input leaves (rebuilt
    into ``fun``'s arguments by ``in_tree``) returning a flat list of output leaves, or
    ``(leaves, aux)`` with ``has_aux``. The output's structure is ``out_tree`` once it has
    run. Output leaves that are not traced values are checked and converted here
    (``output_leaf``: arrays of numbers); the engines check the traced ones."""

    __slots__ = ("fun", "in_tree", "has_aux", "name", "out_tree")

    def __init__(self, fun, in_tree, has_aux, name):
        self.fun, self.in_tree, self.has_aux, self.name = fun, in_tree, has_aux, name
        self.out_tree = None

    def __call__(self, *leaves):
        out = self.fun(*self.in_tree.unflatten(leaves))
        if self.has_aux:
            out, aux = split_aux(out, True, self.name)
        outs, self.out_tree = tree_util.tree_flatten(out)
        for i, o in enumerate(outs):
            if not isinstance(o, Tracer):
                outs[i] = output_leaf(o, self.name)
        return (outs, aux) if self.has_aux else outs


# --- which arguments, and which kind of Jacobian --------------------------------------


def _select_args(fun, args, kwargs, argnums, name, seen=None):
    """Split the call into the differentiated arguments and a function of them alone.

    Returns ``(f, dyn, is_tuple)`` where ``f(dyn)`` is ``fun(*args, **kwargs)`` with the
    arguments named by ``argnums`` taken from ``dyn`` (one argument, or a tuple of them).
    ``seen``, if given, is a dict the caller keeps for its fixed ``argnums``: the checked
    positions are remembered there per number of arguments.
    """
    is_tuple = isinstance(argnums, (tuple, list))
    nums = None if seen is None else seen.get(len(args))
    if nums is None:
        nums = argnum_positions(argnums, is_tuple, len(args), name, fun)
        if seen is not None:
            seen[len(args)] = nums

    def f(dyn):
        full = list(args)
        for n, value in zip(nums, dyn if is_tuple else (dyn,)):
            full[n] = value
        return fun(*full, **kwargs)

    dyn = tuple(args[n] for n in nums) if is_tuple else args[nums[0]]
    return f, dyn, is_tuple


def _jacobian_inputs(fun, args, kwargs, argnums, holomorphic, name):
    """``(f, dyn, leaves, in_tree)``: the function of the differentiated arguments, those
    arguments, their checked leaves and their structure."""
    f, dyn, _ = _select_args(fun, args, kwargs, argnums, name)
    leaves, in_tree = flat_inputs(dyn, f"{name} argument")
    if holomorphic:
        require_complex(leaves, name, "inputs")
    return f, dyn, leaves, in_tree


def _doubled_side(in_leaves, out_leaves, holomorphic, name):
    """Whether the Jacobian needs the unit vectors 1j as well as 1 on its complex side.

    Without ``holomorphic``, complex inputs with real outputs (``C -> R``) or real inputs
    with complex outputs (``R -> C``) have a complex Jacobian, which one engine gets
    directly and the other from two sweeps; complex on both sides has none.
    """
    if holomorphic:
        require_complex(out_leaves, name, "outputs")
        return False
    complex_in = any(is_complex(x) for x in in_leaves)
    complex_out = any(is_complex(o) for o in out_leaves)
    if complex_in and complex_out:
        raise InputTypeError(
            f"{name} of a function with complex inputs and complex outputs needs "
            "holomorphic=True (for a holomorphic function, giving f'(z)). A function that is "
            "not holomorphic has no complex Jacobian: use jvp or vjp directly along 1 and 1j, "
            "or write it in terms of the real and imaginary parts of its inputs and outputs.")
    return complex_in or complex_out


# --- forward mode ----------------------------------------------------------------------


@api_boundary
def jvp(fun, primals, tangents, has_aux=False):
    """Evaluate ``fun(*primals)`` and its directional derivative along ``tangents``.

    ``primals`` and ``tangents`` are tuples (or lists) of the same structure and shapes.
    Returns ``(out, tangent_out)``, or ``(out, tangent_out, aux)`` with ``has_aux``.
    Uses the forward engine: one pass, cost a small multiple of ``fun``'s.

    Examples:
        >>> out, tangent = dk.jvp(lambda x: x ** 3, (2.0,), (1.0,))
        >>> print(float(out), float(tangent))
        8.0 12.0
        >>> out, tangent = dk.jvp(lambda x, y: x * y, (np.array([1.0, 2.0]), 3.0),
        ...                       (np.array([1.0, 0.0]), 1.0))
        >>> tangent.tolist()
        [4.0, 2.0]
        >>> out, tangent, aux = dk.jvp(lambda x: (dnp.sin(x), "aux"), (0.0,), (2.0,),
        ...                            has_aux=True)
        >>> print(float(tangent), aux)
        2.0 aux

        Tangents keep the precision of their values (float32 stays float32):

        >>> dk.jvp(dnp.sin, (np.float32(0.5),), (np.float32(1.0),))[1].dtype
        dtype('float32')

        ``primals`` and ``tangents`` must be tuples, of matching shapes:

        >>> dk.jvp(dnp.sin, 0.5, 1.0)
        Traceback (most recent call last):
            ...
        diffkit.errors.InputTypeError: jvp expects primals and tangents as tuples (or lists), ...
        >>> dk.jvp(dnp.sin, (np.zeros(2),), (np.zeros(3),))
        Traceback (most recent call last):
            ...
        diffkit.errors.ShapeMismatchError: tangent leaf 0 has shape (3,), expected (2,)
    """
    return _jvp(check_callable(fun, "jvp"), primals, tangents, has_aux, "jvp")


def _jvp(fun, primals, tangents, has_aux, name):
    """``jvp``, for the transformation ``name`` (named in its errors)."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise InputTypeError(f"{name} expects primals and tangents as tuples (or lists), "
                             "e.g. jvp(f, (x,), (v,))")
    flat_primals, in_tree = flat_inputs(tuple(primals), f"{name} primal")
    flat_tangents = _matching_leaves(tuple(tangents), in_tree, flat_primals, "tangent")
    flat_fun = _FlatFun(fun, in_tree, has_aux, name)
    result = jvp_flat(flat_fun, flat_primals, flat_tangents, has_aux=has_aux, name=name)
    out_tree = flat_fun.out_tree
    out = (out_tree.unflatten(result[0]),
           out_tree.unflatten([instantiate(t) for t in result[1]]))
    return out + (result[2],) if has_aux else out


@api_boundary
def linearize(fun, *primals):
    """Evaluate ``fun(*primals)`` and return ``(out, jvp_fn)`` where ``jvp_fn(*tangents)``
    is the JVP at ``primals``.

    The linear part of the forward pass is recorded once, in the staged IR; each call of
    ``jvp_fn`` replays only that recording (no evaluation of ``fun``), except for a
    tangent whose values the recording read differently (a rule's 0 x inf check meeting a
    zero, NaN or infinite entry): that call computes the JVP at the recorded primals,
    running ``fun`` again (``StaleLinearMapError`` if ``fun`` no longer gives the values
    of the call). For a jitted ``fun`` the recording is a ``Graph`` of the tangent
    operations (``jvp_fn.graph``), replayed as generated NumPy.

    Examples:
        >>> calls = []
        >>> def cube(x):
        ...     calls.append(x)
        ...     return x ** 3
        >>> out, jvp_fn = dk.linearize(cube, 2.0)
        >>> print(float(out), float(jvp_fn(1.0)), float(jvp_fn(0.5)), len(calls))
        8.0 12.0 6.0 1

        A jitted function's linear map is a ``Graph``:

        >>> out, jvp_fn = dk.linearize(dk.jit(cube), np.array(2.0))
        >>> print(float(jvp_fn(np.array(1.0))), type(jvp_fn.graph).__name__)
        12.0 Graph
    """
    check_callable(fun, "linearize")
    flat_primals, in_tree = flat_inputs(primals, "linearize primal")
    # a function that can record its linear map itself (a jitted one: as a Graph)
    staged = getattr(fun, "_linearize_flat", None)
    staged = staged(flat_primals, in_tree) if staged is not None else None
    if staged is not None:
        primals_out, flat_jvp_fn, out_tree = staged
    else:
        flat_fun = _FlatFun(fun, in_tree, False, "linearize")
        primals_out, flat_jvp_fn = linearize_flat(flat_fun, flat_primals)
        out_tree = flat_fun.out_tree

    @api_boundary
    def jvp_fn(*tangents):
        flat = _matching_leaves(tangents, in_tree, flat_primals, "tangent")
        return out_tree.unflatten([instantiate(t) for t in flat_jvp_fn(flat)])

    if staged is not None:
        jvp_fn.graph = flat_jvp_fn.graph   # the linear map, to read or call
    return out_tree.unflatten(primals_out), jvp_fn


# --- reverse mode ----------------------------------------------------------------------


@api_boundary
def vjp(fun, *primals, has_aux=False):
    """Evaluate ``fun(*primals)`` and return ``(out, vjp_fn)`` (``(out, vjp_fn, aux)``).

    ``vjp_fn(cotangent)`` takes a cotangent with ``out``'s exact structure and shapes and
    returns a tuple with one cotangent per primal: ``cotangent @ J``. It may be called any
    number of times. This is PyTorch's ``y.backward(gradient=v)`` as a function.

    ``vjp_fn`` uses the values of this call even if the caller later writes into its arrays
    in place (``x[:] = ...`` on an input, a closed-over weight, the output or ``aux``): the
    arrays the tape shares with the caller are copied when ``vjp`` returns. (Writing into
    an array inside ``fun`` after using it is not covered: the operations that read it
    record the array, not a copy.) ``linearize`` keeps its values the same way.

    Examples:
        >>> x, y = np.array([1.0, 2.0]), np.array([3.0, 4.0])
        >>> out, vjp_fn = dk.vjp(lambda x, y: x * y, x, y)
        >>> cotangents = vjp_fn(np.array([1.0, 10.0]))
        >>> type(cotangents).__name__, [c.tolist() for c in cotangents]
        ('tuple', [[3.0, 40.0], [1.0, 20.0]])
        >>> [c.tolist() for c in vjp_fn(np.array([1.0, 0.0]))]    # called again
        [[3.0, 0.0], [1.0, 0.0]]

        The pullback keeps the values of the call, whatever the caller writes afterwards:

        >>> out, vjp_fn = dk.vjp(lambda x: x ** 2, x)
        >>> out, jvp_fn = dk.linearize(lambda x: x ** 2, x)
        >>> x[:] = 10.0
        >>> vjp_fn(np.ones(2))[0].tolist(), jvp_fn(np.ones(2)).tolist()
        ([2.0, 4.0], [2.0, 4.0])

        ``has_aux``, and a cotangent that does not match the output:

        >>> out, vjp_fn, aux = dk.vjp(lambda x: (x ** 2, "aux"), 3.0, has_aux=True)
        >>> print(float(vjp_fn(1.0)[0]), aux)
        6.0 aux
        >>> dk.vjp(lambda x: x ** 2, np.ones(2))[1](np.ones(3))
        Traceback (most recent call last):
            ...
        diffkit.errors.ShapeMismatchError: cotangent leaf 0 has shape (3,), expected (2,)
    """
    return _vjp(check_callable(fun, "vjp"), primals, has_aux, retain=True, keep=True)


def _vjp(fun, primals, has_aux, retain, name="vjp", keep=False):
    """``vjp`` for the transformation ``name``; with ``retain=False`` the pullback may be
    called only once, and frees the tape as it sweeps (what ``grad`` and ``jacrev`` use).
    ``keep``: the pullback is handed to the user, who may mutate arrays before calling it:
    the tape keeps copies of the arrays it shares with them."""
    out_tree, primals_out, pull, aux = _vjp_tree(fun, primals, has_aux, retain, name,
                                                 keep=keep)

    @api_boundary
    def vjp_fn(cotangent):
        return pull(_matching_leaves(cotangent, out_tree, primals_out, "cotangent"))

    out = out_tree.unflatten(primals_out)
    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


def _vjp_tree(fun, primals, has_aux, retain, name, what=None, keep=False):
    """The forward pass of ``_vjp``: ``(out_tree, out_leaves, pull, aux)`` where
    ``pull(cotangents)`` takes one checked cotangent per output leaf (``_matching_leaves``)
    and returns the cotangents of ``primals``, structured like them. ``name`` is the
    transformation the user called; ``what`` names the primals in errors."""
    flat_primals, in_tree = flat_inputs(primals, what or f"{name} primal")
    flat_fun = _FlatFun(fun, in_tree, has_aux, name)
    result = vjp_flat(flat_fun, flat_primals, has_aux=has_aux, retain=retain, keep=keep,
                      name=name)
    pullback = result[1]

    def pull(cotangents):
        return in_tree.unflatten([instantiate(ct) for ct in pullback(cotangents)])

    return flat_fun.out_tree, result[0], pull, (result[2] if has_aux else None)


def value_and_grad(fun, argnums=0, has_aux=False, holomorphic=False):
    """A function returning ``(fun(*args), gradient)``; ``((value, aux), gradient)`` with
    ``has_aux``. The gradient has the structure, shapes and dtypes of the arguments named
    by ``argnums``. ``holomorphic`` as in ``grad``.

    Examples:
        >>> value, gradient = dk.value_and_grad(lambda x: dnp.sum(x ** 2))(np.array([1.0, 2.0]))
        >>> print(float(value), gradient.tolist())
        5.0 [2.0, 4.0]
        >>> (value, aux), gradient = dk.value_and_grad(lambda x: (x ** 2, "aux"),
        ...                                            has_aux=True)(3.0)
        >>> print(float(value), aux, float(gradient))
        9.0 aux 6.0

        The gradient of a pytree is a pytree of the same structure, shapes and dtypes:

        >>> params = {"w": np.ones(2, np.float32), "b": 0.5}
        >>> value, gradient = dk.value_and_grad(lambda p: dnp.sum(p["w"] * p["b"]))(params)
        >>> sorted(gradient), gradient["w"].dtype, gradient["w"].tolist(), float(gradient["b"])
        (['b', 'w'], dtype('float32'), [0.5, 0.5], 2.0)
    """
    return _value_and_grad(fun, argnums, has_aux, holomorphic, "value_and_grad")


def _value_and_grad(fun, argnums, has_aux, holomorphic, name):
    check_callable(fun, name)
    check_argnums(argnums, name)
    # argnums checked per number of arguments (not for a list, which the caller may change)
    positions = None if isinstance(argnums, list) else {}

    @public(fun)
    def value_and_grad_fun(*args, **kwargs):
        f, dyn, is_tuple = _select_args(fun, args, kwargs, argnums, name, positions)
        if holomorphic:
            require_complex(tree_util.tree_leaves(dyn), name, "inputs")
        out_tree, out_leaves, pull, aux = _vjp_tree(f, (dyn,), has_aux, False, name,
                                                    f"{name} argument")
        out = out_tree.unflatten(out_leaves)
        check_scalar(out, name, holomorphic)
        seed = np.ones((), dtype_of(out))
        if out_tree.node is None:
            # one array, just checked to be a scalar of a float (or complex) dtype: the
            # seed matches it by construction, so the cotangent checks are skipped
            (gradient,) = pull([seed])
        else:
            (gradient,) = pull(_matching_leaves(seed, out_tree, out_leaves, "cotangent"))
        return ((out, aux) if has_aux else out), gradient

    return value_and_grad_fun


def grad(fun, argnums=0, has_aux=False, holomorphic=False):
    """A function returning the gradient of the real scalar ``fun`` (with ``has_aux``:
    ``(gradient, aux)``): ``vjp`` with the cotangent 1.

    At a complex argument ``z = x + iy`` the gradient of a real ``fun`` is
    ``dfun/dx - i dfun/dy`` (JAX's convention), the conjugate of the steepest-ascent
    direction: ``grad(lambda z: dnp.abs(z) ** 2)(3 + 4j)`` is ``6 - 8j`` (to rounding), and
    ``fun(z + t) ~ fun(z) + Re(grad(fun)(z) * t)``. Step along ``-conj(gradient)`` to
    descend.

    ``holomorphic=True``: ``fun`` is a holomorphic function of complex arguments with a
    complex scalar output, and the result is its complex derivative ``f'(z)``
    (``grad(dnp.sin, holomorphic=True)(z) == cos(z)``). Without it, a complex output is an
    error.

    Examples:
        >>> dk.grad(lambda x: dnp.sum(x ** 3))(np.array([1.0, 2.0])).tolist()
        [3.0, 12.0]

        A tuple ``argnums`` gives a tuple; ``has_aux`` returns ``aux`` beside the gradient;
        the gradient keeps the argument's dtype:

        >>> grads = dk.grad(lambda x, y: x * y ** 2, argnums=(0, 1))(2.0, 3.0)
        >>> type(grads).__name__, [float(g) for g in grads]
        ('tuple', [9.0, 12.0])
        >>> gradient, aux = dk.grad(lambda x: (x ** 2, "aux"), has_aux=True)(3.0)
        >>> print(float(gradient), aux)
        6.0 aux
        >>> dk.grad(lambda x: x ** 2)(np.float32(3.0)).dtype
        dtype('float32')

        Complex arguments:

        >>> print(np.round(dk.grad(lambda z: dnp.abs(z) ** 2)(3 + 4j), 12))
        (6-8j)
        >>> z = 1.0 + 1.0j
        >>> bool(dk.grad(dnp.sin, holomorphic=True)(z) == np.cos(z))
        True

        A non-scalar or complex output, or an integer argument, is an error:

        >>> dk.grad(lambda x: x ** 2)(np.array([1.0, 2.0]))
        Traceback (most recent call last):
            ...
        diffkit.errors.NonScalarOutputError: grad needs a ... scalar output, ... shape (2,)...
        >>> dk.grad(lambda x: x * 1j)(1.0)
        Traceback (most recent call last):
            ...
        diffkit.errors.ComplexOutputError: grad needs a real-valued output, but it returned ...
        >>> dk.grad(lambda x: x ** 2)(3)
        Traceback (most recent call last):
            ...
        diffkit.errors.InputTypeError: grad argument has dtype int...; derivatives are defined ...
    """
    value_and_grad_fun = _value_and_grad(fun, argnums, has_aux, holomorphic, "grad")

    @public(fun)
    def grad_fun(*args, **kwargs):
        (value, aux), gradient = value_and_grad_fun(*args, **kwargs) if has_aux else \
            ((None, None), value_and_grad_fun(*args, **kwargs)[1])
        return (gradient, aux) if has_aux else gradient

    return grad_fun


# --- Jacobians -------------------------------------------------------------------------
#
# ``chunk_size``, ``executor`` and ``progress`` (see ``diffkit.chunking``): the unit vectors
# are swept ``chunk_size`` at a time, here or as tasks on an executor. A task is one of the
# picklable classes below; on an executor it recomputes what it needs from ``fun`` and the
# point (the forward pass of ``jacrev``), so nothing but the function and arrays travels.


class _ForwardColumns:
    """Task: the Jacobian's columns ``start:stop`` (one ``jvp`` per unit vector, batched).
    Returns ``(tangents, out, aux)``, the tangents with the columns on their last axis."""

    def __init__(self, f, dyn, leaves, in_tree, has_aux, doubled, name):
        self.f, self.dyn, self.leaves, self.in_tree = f, dyn, leaves, in_tree
        self.has_aux, self.doubled, self.name = has_aux, doubled, name

    def pushforward(self, *basis):
        result = _jvp(self.f, (self.dyn,), (self.in_tree.unflatten(basis),), self.has_aux,
                      self.name)
        return result[1], result[0], (result[2] if self.has_aux else None)

    def __call__(self, start, stop, data=None):
        bases = unit_bases(self.leaves, start, stop, self.doubled)
        return vmap(self.pushforward, out_axes=(-1, None, None))(*bases)


def jacfwd(fun, argnums=0, has_aux=False, holomorphic=False, chunk_size=None, executor=None,
           progress=False):
    """A function returning the Jacobian of ``fun``, built by forward mode: ``vmap`` of
    ``jvp`` over the input's unit vectors, one batched pass (``chunk_size`` unit vectors at
    a time, if given, to bound memory).

    ``executor``: run the chunks as tasks on a ``concurrent.futures.Executor``, a
    ``dask.distributed.Client`` or a map-like ``workers(fun, iterable)``; ``progress=True``
    shows a progress bar (see the guide page *Distributed*).

    ``holomorphic=True``: complex inputs and outputs, and the result is ``f'(z)``. Without
    it, complex inputs need real outputs (and get ``d/dx - i d/dy``, see the module notes).

    Examples:
        >>> f = lambda x: x[:2] * x[2]
        >>> x = np.array([1.0, 2.0, 3.0])
        >>> dk.jacfwd(f)(x).tolist()
        [[3.0, 0.0, 1.0], [0.0, 3.0, 2.0]]
        >>> dk.jacfwd(f, chunk_size=2, executor=map)(x).tolist()
        [[3.0, 0.0, 1.0], [0.0, 3.0, 2.0]]
        >>> dk.jacfwd(lambda m: m.sum(axis=0))(np.ones((2, 3))).shape    # out + in shape
        (3, 2, 3)

        Complex inputs:

        >>> np.round(dk.jacfwd(lambda z: dnp.abs(z) ** 2)(np.array([3 + 4j])), 12).tolist()
        [[(6-8j)]]
        >>> dk.jacfwd(lambda z: z ** 2, holomorphic=True)(np.array([1j, 2.0])).tolist()
        [[2j, 0j], [0j, (4+0j)]]
        >>> dk.jacfwd(lambda z: 2 * z)(np.array([1j]))
        Traceback (most recent call last):
            ...
        diffkit.errors.InputTypeError: jacfwd ... complex outputs needs holomorphic=True...
    """
    return _jacfwd(fun, argnums, has_aux, holomorphic, "jacfwd", chunk_size, executor,
                   progress)


def _jacfwd(fun, argnums, has_aux, holomorphic, name, chunk_size=None, executor=None,
            progress=False):
    check_callable(fun, name)
    check_argnums(argnums, name)
    check_chunk_size(chunk_size, name)

    @public(fun)
    def jacfwd_fun(*args, **kwargs):
        f, dyn, leaves, in_tree = _jacobian_inputs(fun, args, kwargs, argnums, holomorphic,
                                                   name)
        if executor is not None:
            require_concrete(leaves, executor, name)
        doubled = not holomorphic and any(is_complex(x) for x in leaves)
        task = _ForwardColumns(f, dyn, leaves, in_tree, has_aux, doubled, name)
        total = basis_size(leaves, doubled)
        if not leaves or total == 1:  # one input element (or no input): no vmap
            tangents, out, aux = task.pushforward(*[b[0] for b in unit_bases(leaves)])
            tangents = tree_util.tree_map(lambda t: shape.expand_dims(t, -1), tangents)
        elif (chunk_size is None and executor is None) or total == 0:
            tangents, out, aux = task(0, total)
        else:
            done = [r for _, _, r in run_chunks(task, total, chunk_size, executor, progress,
                                                name, check=rows_check(-1))]
            tangents, out, aux = done[0]
            if len(done) > 1:
                tangents = tree_util.tree_map(
                    lambda *parts: shape.concatenate(parts, axis=-1),
                    *[d[0] for d in done])
        out_leaves, out_tree = tree_util.tree_flatten(out)
        _doubled_side(leaves, out_leaves, holomorphic, name)
        blocks = [split_rows_last(t, leaves, o, doubled)
                  for t, o in zip(tree_util.tree_leaves(tangents), out_leaves)]
        jac = jacobian_tree(out_tree, in_tree, blocks)
        return (jac, aux) if has_aux else jac

    return jacfwd_fun


def jacrev(fun, argnums=0, has_aux=False, chunk_size=None, holomorphic=False, executor=None,
           progress=False):
    """A function returning the Jacobian of ``fun``, built by reverse mode: one forward pass,
    then ``vmap`` of the pullback over the output's unit vectors, one batched sweep
    (``chunk_size`` unit vectors at a time, if given, to bound memory).

    ``executor``: run the chunks as tasks (each task repeats the forward pass, then sweeps
    its chunk) on a ``concurrent.futures.Executor``, a ``dask.distributed.Client`` or a
    map-like ``workers(fun, iterable)``; ``progress=True`` shows a progress bar.

    ``holomorphic=True``: complex inputs and outputs, and the result is ``f'(z)``. Without
    it, complex outputs need real inputs (and get ``df/dx``, see the module notes).

    Examples:
        >>> f = lambda x: x[:2] * x[2]
        >>> x = np.array([1.0, 2.0, 3.0])
        >>> dk.jacrev(f)(x).tolist()
        [[3.0, 0.0, 1.0], [0.0, 3.0, 2.0]]
        >>> dk.jacrev(f, chunk_size=1)(x).tolist()
        [[3.0, 0.0, 1.0], [0.0, 3.0, 2.0]]
        >>> jac, aux = dk.jacrev(lambda x: (x ** 2, "aux"), has_aux=True)(np.array([1.0, 2.0]))
        >>> jac.tolist(), aux
        ([[2.0, 0.0], [0.0, 4.0]], 'aux')

        A complex output of real inputs gives ``df/dx``:

        >>> dk.jacrev(lambda x: x * (1 + 2j))(np.array([1.0])).tolist()
        [[(1+2j)]]
    """
    return _jacrev(fun, argnums, has_aux, chunk_size, holomorphic, "jacrev", executor,
                   progress)


def _jacrev(fun, argnums, has_aux, chunk_size, holomorphic, name, executor=None,
            progress=False):
    check_callable(fun, name)
    check_argnums(argnums, name)
    check_chunk_size(chunk_size, name)

    @public(fun)
    def jacrev_fun(*args, **kwargs):
        f, dyn, leaves, in_tree = _jacobian_inputs(fun, args, kwargs, argnums, holomorphic,
                                                   name)
        if executor is not None:
            require_concrete(leaves, executor, name)
        chunked = chunk_size is not None or executor is not None
        result = _vjp(f, (dyn,), has_aux, chunked, name)
        doubled = _doubled_side(leaves, tree_util.tree_leaves(result[0]), holomorphic, name)
        doubled = doubled and not any(is_complex(x) for x in leaves)
        remote = None if executor is None else \
            _ReverseRows(_DropAux(f) if has_aux else f, dyn, doubled, name)
        jac = _jacobian_from_pullback(result[0], result[1], leaves, in_tree, chunk_size,
                                      doubled, remote, executor, progress, name)
        return (jac, result[2]) if has_aux else jac

    return jacrev_fun


class _PullRows:
    """Task (here): the Jacobian's rows ``start:stop``, the pullback of this process swept
    over those output unit vectors. One stack of rows per input leaf."""

    def __init__(self, pullback, out_leaves, out_tree, doubled):
        self.pullback, self.out_leaves, self.out_tree = pullback, out_leaves, out_tree
        self.doubled = doubled

    def pull(self, *basis):
        return tree_util.tree_leaves(self.pullback(self.out_tree.unflatten(basis))[0])

    def __call__(self, start, stop, data=None):
        return vmap(self.pull)(*unit_bases(self.out_leaves, start, stop, self.doubled))


class _ReverseRows:
    """Task (on a worker): the Jacobian's rows ``start:stop`` from ``f`` and the point: its
    own forward pass, then the sweep of ``_PullRows``."""

    def __init__(self, f, dyn, doubled, name):
        self.f, self.dyn, self.doubled, self.name = f, dyn, doubled, name

    def __call__(self, start, stop, data=None):
        out, pullback = _vjp(self.f, (self.dyn,), False, False, self.name)
        out_leaves, out_tree = tree_util.tree_flatten(out)
        return _PullRows(pullback, out_leaves, out_tree, self.doubled)(start, stop)


class _DropAux:
    """``f`` without its aux (the tasks of ``jacrev`` need only the output)."""

    def __init__(self, f):
        self.f = f

    def __call__(self, x):
        return self.f(x)[0]


def _jacobian_from_pullback(out, pullback, in_leaves, in_tree, chunk_size, doubled=False,
                            remote=None, executor=None, progress=False, name="jacrev"):
    out_leaves, out_tree = tree_util.tree_flatten(out)
    if not out_leaves:  # an output with no arrays (None, ()): nothing to sweep
        return jacobian_tree(out_tree, in_tree, [])
    local = _PullRows(pullback, out_leaves, out_tree, doubled)
    total = basis_size(out_leaves, doubled)
    if total == 1:  # one output element (every Hessian's inner jacrev): no vmap needed
        stacked = [shape.expand_dims(c, 0) for c in local.pull(*[b[0] for b in
                                                                unit_bases(out_leaves)])]
    elif (chunk_size is None and executor is None) or total == 0:
        stacked = local(0, total)
    else:  # each chunk's unit vectors are made only when it is swept, bounding memory
        chunks = [r for _, _, r in run_chunks(remote or local, total, chunk_size, executor,
                                              progress, name, check=rows_check(0),
                                              local=local)]
        stacked = chunks[0] if len(chunks) == 1 else \
            [shape.concatenate(parts, axis=0) for parts in zip(*chunks)]
    per_input = [split_rows(s, out_leaves,
                            lambda rows, o, x=x: shape.reshape(rows, shape_of(o) + shape_of(x)),
                            doubled)
                 for s, x in zip(stacked, in_leaves)]
    blocks = [[per_input[i][j] for i in range(len(in_leaves))] for j in range(len(out_leaves))]
    return jacobian_tree(out_tree, in_tree, blocks)


def jacobian(fun, argnums=0, has_aux=False, mode="auto", holomorphic=False, chunk_size=None,
             executor=None, progress=False):
    """``jacfwd`` (``mode="fwd"``) or ``jacrev`` (``mode="rev"``); ``"auto"`` picks forward
    mode when the input has fewer elements than the output, else reverse mode.
    ``holomorphic``, ``chunk_size``, ``executor`` and ``progress`` as in ``jacfwd`` and
    ``jacrev``.

    Examples:
        >>> f = lambda x: x[:2] * x[2]
        >>> x = np.array([1.0, 2.0, 3.0])
        >>> for mode in ("auto", "fwd", "rev"):
        ...     print(mode, dk.jacobian(f, mode=mode)(x).tolist())
        auto [[3.0, 0.0, 1.0], [0.0, 3.0, 2.0]]
        fwd [[3.0, 0.0, 1.0], [0.0, 3.0, 2.0]]
        rev [[3.0, 0.0, 1.0], [0.0, 3.0, 2.0]]
        >>> dk.jacobian(f, mode="sideways")
        Traceback (most recent call last):
            ...
        diffkit.errors.OptionError: jacobian: mode must be 'auto', 'fwd' or 'rev', got 'sideways'
    """
    check_callable(fun, "jacobian")
    check_argnums(argnums, "jacobian")
    check_chunk_size(chunk_size, "jacobian")
    options = (chunk_size, executor, progress)
    if mode == "fwd":
        return _jacfwd(fun, argnums, has_aux, holomorphic, "jacobian", *options)
    if mode == "rev":
        return _jacrev(fun, argnums, has_aux, chunk_size, holomorphic, "jacobian", executor,
                       progress)
    if mode != "auto":
        raise OptionError(f"jacobian: mode must be 'auto', 'fwd' or 'rev', got {mode!r}")

    @public(fun)
    def jacobian_fun(*args, **kwargs):
        f, dyn, leaves, in_tree = _jacobian_inputs(fun, args, kwargs, argnums, holomorphic,
                                                   "jacobian")
        if executor is not None:
            require_concrete(leaves, executor, "jacobian")
        chunked = chunk_size is not None or executor is not None
        result = _vjp(f, (dyn,), has_aux, chunked, "jacobian")
        out_leaves = tree_util.tree_leaves(result[0])
        doubled = _doubled_side(leaves, out_leaves, holomorphic, "jacobian")
        in_size = basis_size(leaves, doubled)
        out_size = basis_size(out_leaves, doubled)
        if in_size < out_size:
            return _jacfwd(fun, argnums, has_aux, holomorphic, "jacobian", *options)(
                *args, **kwargs)
        doubled = doubled and not any(is_complex(x) for x in leaves)
        remote = None if executor is None else \
            _ReverseRows(_DropAux(f) if has_aux else f, dyn, doubled, "jacobian")
        jac = _jacobian_from_pullback(result[0], result[1], leaves, in_tree, chunk_size,
                                      doubled, remote, executor, progress, "jacobian")
        return (jac, result[2]) if has_aux else jac

    return jacobian_fun


def hessian(fun, argnums=0, has_aux=False, holomorphic=False, chunk_size=None, executor=None,
            progress=False):
    """A function returning the Hessian of the scalar ``fun``, shape ``in.shape + in.shape``:
    forward over reverse, ``jacfwd(jacrev(fun))``.

    ``chunk_size`` is given to both passes (the outer forward pass sweeps the input's unit
    vectors ``chunk_size`` at a time: Hessian-vector products); ``executor`` and
    ``progress`` to the outer pass, whose chunks are the tasks.

    ``holomorphic=True``: ``fun`` is a holomorphic function of complex arguments with a
    complex output, and the result is ``f''(z)``. A real-valued function of complex
    arguments has no complex Hessian (its gradient is not holomorphic): that is an error;
    take the Hessian in the real and imaginary parts instead.

    Examples:
        >>> f = lambda x: x[0] ** 2 * x[1]
        >>> dk.hessian(f)(np.array([1.0, 2.0])).tolist()
        [[4.0, 2.0], [2.0, 0.0]]
        >>> dk.hessian(f, chunk_size=1)(np.array([1.0, 2.0])).tolist()
        [[4.0, 2.0], [2.0, 0.0]]
        >>> dk.hessian(lambda x: dnp.sum(x ** 3))(np.ones((2, 3))).shape    # in + in shape
        (2, 3, 2, 3)

        Complex arguments:

        >>> print(complex(dk.hessian(lambda z: z ** 3, holomorphic=True)(2.0 + 0j)))
        (12+0j)
        >>> dk.hessian(lambda z: dnp.abs(z) ** 2)(np.array([1j]))
        Traceback (most recent call last):
            ...
        diffkit.errors.InputTypeError: hessian ... of complex arguments needs holomorphic=True...
    """
    inner = _jacrev(fun, argnums, has_aux, chunk_size, holomorphic, "hessian")
    outer = _jacfwd(inner, argnums, has_aux, holomorphic, "hessian", chunk_size, executor,
                    progress)
    if holomorphic:
        return outer

    @public(fun)
    def hessian_fun(*args, **kwargs):
        _, dyn, _ = _select_args(fun, args, kwargs, argnums, "hessian")
        if any(is_complex(as_array(x, "hessian argument"))
               for x in tree_util.tree_leaves(dyn)):
            raise InputTypeError(
                "hessian of a function of complex arguments needs holomorphic=True (for a "
                "holomorphic function with a complex output). A real-valued function of "
                "complex z has no complex Hessian: write it as a function of x and y with "
                "z = x + 1j * y and take the Hessian in (x, y).")
        return outer(*args, **kwargs)

    return hessian_fun


@api_boundary
def hvp(fun, primals, tangents):
    """The Hessian of the scalar ``fun`` at ``primals`` times ``tangents``, a tuple with one
    entry per primal, by forward over reverse; the Hessian is never formed.

    Examples:
        >>> f = lambda x: x[0] ** 2 * x[1]
        >>> (hv,) = dk.hvp(f, (np.array([1.0, 2.0]),), (np.array([1.0, 0.0]),))
        >>> hv.tolist()
        [4.0, 2.0]
        >>> hvs = dk.hvp(lambda x, y: x ** 2 * y, (1.0, 2.0), (1.0, 0.0))   # one per primal
        >>> [float(h) for h in hvs]
        [4.0, 2.0]
    """
    check_callable(fun, "hvp")
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise InputTypeError("hvp expects primals and tangents as tuples (or lists), e.g. "
                             "hvp(f, (x,), (v,))")
    primals, tangents = tuple(primals), tuple(tangents)
    gradient = _value_and_grad(fun, tuple(range(len(primals))), False, False, "hvp")
    return _jvp(lambda *xs: gradient(*xs)[1], primals, tangents, False, "hvp")[1]


# --- batching --------------------------------------------------------------------------


def vmap(fun, in_axes=0, out_axes=0, axis_size=None, chunk_size=None, executor=None,
         progress=False):
    """Vectorise ``fun`` over an axis of its arguments.

    ``in_axes``: for each positional argument (an int, ``None`` for "not mapped", or a pytree
    prefix of them) the axis holding the batch; keyword arguments are always mapped over
    axis 0, as in JAX. ``out_axes``: where the batch axis goes in each output.
    ``axis_size`` is needed only when no argument is mapped.

    ``chunk_size``: map ``chunk_size`` examples at a time (one batched call each), bounding
    peak memory. ``executor``: run the chunks as tasks on a ``concurrent.futures.Executor``,
    a ``dask.distributed.Client`` or a map-like ``workers(fun, iterable)``; each task gets
    its slice of the mapped arguments. ``progress=True`` shows a progress bar.

    A ``dask.array.Array`` argument, chunked along its mapped axis, makes the result lazy:
    dask arrays whose blocks are this function mapped over the input's blocks (computed
    when you call ``.compute()``, out of core, on whatever scheduler dask uses).

    Examples:
        >>> dk.vmap(lambda x, y: x @ y)(np.ones((3, 2)), np.arange(6.0).reshape(3, 2)).tolist()
        [1.0, 5.0, 9.0]
        >>> dk.vmap(lambda x, y: x * y, in_axes=(0, None))(np.arange(3.0), 10.0).tolist()
        [0.0, 10.0, 20.0]
        >>> dk.vmap(lambda column: column.sum(), in_axes=1)(np.arange(6.0).reshape(2, 3)).tolist()
        [3.0, 5.0, 7.0]
        >>> dk.vmap(lambda x: 2 * x, out_axes=1)(np.ones((3, 2))).shape
        (2, 3)
        >>> dk.vmap(lambda x, k: x + k)(np.ones(2), k=np.array([10.0, 20.0])).tolist()
        [11.0, 21.0]
        >>> dk.vmap(lambda: np.ones(2), axis_size=3)().shape
        (3, 2)
        >>> dk.vmap(lambda x: 2 * x, chunk_size=2)(np.arange(5.0)).tolist()
        [0.0, 2.0, 4.0, 6.0, 8.0]

        A dask array gives a lazy result:

        >>> import dask.array as da
        >>> rows = da.from_array(np.arange(8.0).reshape(4, 2), chunks=(2, 2))
        >>> lazy = dk.vmap(lambda row: dnp.sum(row ** 2))(rows)
        >>> type(lazy).__name__, lazy.compute().tolist()
        ('Array', [1.0, 13.0, 41.0, 85.0])

        Batch sizes must agree, and something must be mapped:

        >>> dk.vmap(lambda x, y: x + y)(np.ones(2), np.ones(3))
        Traceback (most recent call last):
            ...
        diffkit.errors.BatchingError: vmap got different batch sizes [2, 3]: ...
        >>> dk.vmap(lambda: 1.0)()
        Traceback (most recent call last):
            ...
        diffkit.errors.BatchingError: vmap needs at least one mapped argument (in_axes not None)...
    """
    check_callable(fun, "vmap")
    in_axes, out_axes = check_axes_spec(in_axes, "in_axes"), check_axes_spec(out_axes,
                                                                              "out_axes")
    axis_size = check_axis_size(axis_size)
    check_chunk_size(chunk_size, "vmap")
    if isinstance(in_axes, list):  # the positional arguments are a tuple
        in_axes = tuple(in_axes)

    # The axes of every leaf depend on the arguments (outputs) only through their structure,
    # and working them out walks both trees: they are remembered per structure.
    in_axes_seen, out_axes_seen = {}, {}

    def output_axes(out_tree, values):
        axes = out_axes_seen.get(out_tree)
        if axes is None:
            axes = _remember(out_axes_seen, out_tree,
                             broadcast_axes(out_axes, out_tree.unflatten(values), "out_axes",
                                             "outputs"))
        return axes

    @public(fun)
    def vmapped(*args, **kwargs):
        # without keywords (the usual call) only the positional arguments are flattened
        flat_args, in_tree = tree_util.tree_flatten((args, kwargs) if kwargs else args)
        # (the flag keeps f((x,), {"k": y}) apart from f(x, k=y): their trees are equal)
        structure = (bool(kwargs), in_tree)
        flat_axes = in_axes_seen.get(structure)
        if flat_axes is None:
            flat_axes = check_in_axes(in_axes, args, fun)
            flat_axes += [0] * (len(flat_args) - len(flat_axes))  # keyword arguments: axis 0
            flat_axes = _remember(in_axes_seen, structure, flat_axes)
        lazy = lazy_array_handler(flat_args)
        if lazy is not None:  # a dask array: a lazy result, built by diffkit.distributed
            if executor is not None:
                raise OptionError("vmap: executor= does not apply to dask array arguments "
                                  "(the result is lazy: compute it on the client you like)")
            call = fun if not kwargs else lambda a, k: fun(*a, **k)
            return lazy(lambda consts, axes: _BatchRows(call, in_tree, consts, axes),
                        flat_args, flat_axes, chunk_size, output_axes)
        names = LeafNames(fun, args, kwargs)
        flat_args = [batch_input(x, names.at(i, "vmap ")) for i, x in enumerate(flat_args)]
        flat_axes = [check_axis(x, a, i, names) for i, (x, a) in enumerate(zip(flat_args,
                                                                              flat_axes))]
        size = batch_size(flat_args, flat_axes, axis_size, names)
        call = fun if not kwargs else lambda a, k: fun(*a, **k)
        if (chunk_size is None and executor is None) or size == 0:
            flat_fun = _FlatFun(call, in_tree, False, "vmap")
            values, batched = batch_flat(flat_fun, flat_args, flat_axes, size)
            out_tree = flat_fun.out_tree
        else:
            require_concrete(flat_args, executor, "vmap")
            values, batched, out_tree = _chunked_batch(call, in_tree, flat_args, flat_axes,
                                                       size, chunk_size, executor, progress)
        axes = output_axes(out_tree, values)
        return out_tree.unflatten([_place_batch_axis(v, b, a, size)
                                   for v, b, a in zip(values, batched, axes)])

    return vmapped


class _BatchRows:
    """Task: ``fun`` mapped over the examples ``start:stop``, whose mapped argument leaves
    are ``data`` (sliced by the caller; the unmapped ones travel once, in the task).
    Returns ``(outputs, batched)``: the outputs in ``fun``'s structure, batch axis 0 where
    ``batched[i]`` is 0, and the unbatched outputs as they are."""

    def __init__(self, call, in_tree, flat_args, flat_axes):
        self.call, self.in_tree, self.axes = call, in_tree, flat_axes
        self.consts = [x if a is None else None for x, a in zip(flat_args, flat_axes)]

    def __call__(self, start, stop, data):
        data = iter(data)
        args = [c if a is None else next(data) for c, a in zip(self.consts, self.axes)]
        flat_fun = _FlatFun(self.call, self.in_tree, False, "vmap")
        values, batched = batch_flat(flat_fun, args, self.axes, stop - start)
        return flat_fun.out_tree.unflatten(values), batched


def _take_rows(x, axis, start, stop):
    index = (slice(None),) * axis + (slice(start, stop),)
    return x[index] if isinstance(x, np.ndarray) else getitem(x, index)


def _chunked_batch(call, in_tree, flat_args, flat_axes, size, chunk_size, executor,
                   progress):
    """``batch_flat`` by chunks of examples: ``(values, batched, out_tree)``."""
    task = _BatchRows(call, in_tree, flat_args, flat_axes)

    def data(start, stop):
        return [_take_rows(x, a, start, stop) for x, a in zip(flat_args, flat_axes)
                if a is not None]

    def check(result, start, stop):
        for value, b in zip(tree_util.tree_leaves(result[0]), result[1]):
            if b is not None and shape_of(value)[0] != stop - start:
                raise ChunkError(f"vmap: the chunk of examples {start}:{stop} came back with "
                                 f"{shape_of(value)[0]} of them")

    done = run_chunks(task, size, chunk_size, executor, progress, "vmap", data, check)
    parts = []
    for start, stop, (out, batched) in done:
        leaves, out_tree = tree_util.tree_flatten(out)
        parts.append((start, stop, leaves, batched))
    if len(parts) == 1:
        return parts[0][2], parts[0][3], out_tree
    values, flags = [], []
    for i in range(len(parts[0][2])):
        if all(p[3][i] is None for p in parts):  # the same for every example: any chunk's
            values.append(parts[0][2][i])
            flags.append(None)
            continue
        pieces = [p[2][i] if p[3][i] is not None else
                  shape.broadcast_to(p[2][i], (p[1] - p[0],) + shape_of(p[2][i]))
                  for p in parts]
        values.append(shape.concatenate(pieces, axis=0))
        flags.append(0)
    return values, flags, out_tree


_STRUCTURES_REMEMBERED = 64  # per vmapped function; more distinct structures start afresh


def _remember(seen, structure, flat_axes):
    """Store ``flat_axes`` (as a tuple) as the axes of ``structure``; return them."""
    if len(seen) >= _STRUCTURES_REMEMBERED:
        seen.clear()
    seen[structure] = flat_axes = tuple(flat_axes)
    return flat_axes


def _place_batch_axis(value, batch_axis, axis, size):
    """An output of ``batch_flat`` (batch axis 0, or ``None``: the same for every example)
    with its batch at ``axis`` of ``out_axes`` (``None``: no batch axis)."""
    if axis is None:
        if batch_axis is not None:
            raise BatchingError("vmap out_axes is None for an output that depends on the "
                                "mapped inputs; give it an axis to put the batch on")
        return value
    if batch_axis is None:
        value = shape.broadcast_to(value, (size,) + shape_of(value))
    ndim = len(shape_of(value))
    if not -ndim <= axis < ndim:
        raise BatchingError(f"vmap out_axes {axis} is out of range for an output with "
                            f"{ndim} axes (batch axis included)")
    return value if axis in (0, -ndim) else shape.moveaxis(value, 0, axis)
