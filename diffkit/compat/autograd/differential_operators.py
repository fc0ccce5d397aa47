"""autograd's differential operators, computed by diffkit's transformations.

Each operator keeps autograd's signature and conventions: ``argnum`` (an int or a tuple of
ints) names the differentiated argument, integer arrays are differentiated as real ones,
``make_vjp`` returns ``(vjp, value)`` and ``make_jvp(fun)(*args)`` a function of the
tangent. The arithmetic is diffkit's: ``jacobian`` and ``hessian`` compute all their rows
in one vectorised pass (autograd loops over them), ``hessian`` is forward-over-reverse and
the Hessian-vector products never form the Hessian. The functions made by ``grad``,
``value_and_grad``, ``elementwise_grad``, ``jacobian`` and ``hessian`` are staged after a
few calls made the same way (``_staging``: a recording replayed while everything that
decided it is unchanged, else the eager call).
"""

import functools
import inspect
import warnings
from collections import OrderedDict

import numpy as np

from ... import api, tree_util
from ... import numpy as dnp
from ...custom import checkpoint as _dk_checkpoint
from ...errors import NonScalarOutputError, ShapeMismatchError
from ._staging import staged_operator
from ._values import as_real, holds_tracer, is_complex_value, ones_like, shape_of
from .wrap_util import check_argnum, select_argument, unary_to_nary, wraps

__all__ = [
    "grad", "elementwise_grad", "value_and_grad", "grad_and_aux", "grad_named", "deriv",
    "jacobian", "hessian", "holomorphic_grad", "make_vjp", "make_jvp", "make_hvp",
    "make_ggnvp", "make_jvp_reversemode", "hessian_tensor_product", "hessian_vector_product",
    "tensor_jacobian_product", "vector_jacobian_product", "multigrad_dict", "checkpoint",
]

_NOT_SCALAR = ("{name} only applies to real scalar-output functions, but the output has "
               "{what}. Try jacobian, elementwise_grad or holomorphic_grad.")


def _scalar(out, name, original_shape=None):
    """``out`` as a real scalar for ``grad``: autograd accepts any output of one element
    (shape ``(1,)`` too); ``original_shape`` collects the shape when it is not ``()``."""
    if isinstance(out, (list, tuple, dict)):
        raise NonScalarOutputError(_NOT_SCALAR.format(name=name, what=f"type "
                                                      f"{type(out).__name__}"))
    shape = shape_of(out)
    if is_complex_value(out):
        raise NonScalarOutputError(_NOT_SCALAR.format(name=name, what="a complex dtype"))
    if int(np.prod(shape)) != 1:
        raise NonScalarOutputError(_NOT_SCALAR.format(name=name, what=f"shape {shape}"))
    if shape != ():
        if original_shape is not None:
            original_shape.append(shape)
        out = dnp.reshape(out, ())
    return out


def _scalar_fun(fun, name, original_shape=None):
    def scalar_fun(x):
        return _scalar(fun(x), name, original_shape)
    return scalar_fun


# --- gradients -------------------------------------------------------------------------


@staged_operator
def grad(fun, x):
    """The gradient of the real scalar ``fun`` with respect to argument ``argnum``: a value
    of that argument's structure and shape (float for an integer argument)."""
    return api.grad(_scalar_fun(fun, "grad"))(as_real(x))


@staged_operator
def value_and_grad(fun, x):
    """``(fun(*args), gradient)`` in one pass, as ``scipy.optimize.minimize(jac=True)``
    wants it."""
    shape = []
    value, gradient = api.value_and_grad(_scalar_fun(fun, "value_and_grad", shape))(as_real(x))
    if shape:   # reshaped here, so that a recording of this function reshapes too
        value = dnp.reshape(value, shape[0])
    return value, gradient


@unary_to_nary
def grad_and_aux(fun, x):
    """For ``fun`` returning ``(value, aux)``: ``(gradient of value, aux)``."""
    def value_aux(x):
        value, aux = fun(x)
        return _scalar(value, "grad_and_aux"), aux
    return api.grad(value_aux, has_aux=True)(as_real(x))


@staged_operator
def elementwise_grad(fun, x):
    """The sum of the Jacobian's rows (one reverse pass): the derivative of each output
    element with respect to its own input element when the Jacobian is diagonal."""
    def total(x):
        leaves = tree_util.tree_leaves(fun(x))
        if any(is_complex_value(leaf) for leaf in leaves):
            raise NonScalarOutputError("elementwise_grad only applies to real-output "
                                       "functions; take the real part or abs first")
        return functools.reduce(lambda a, b: a + b, [dnp.sum(leaf) for leaf in leaves], 0.0)
    return api.grad(total)(as_real(x))


@unary_to_nary
def holomorphic_grad(fun, x):
    """The complex derivative ``f'(z)`` of a holomorphic ``fun``."""
    if not any(is_complex_value(leaf) for leaf in tree_util.tree_leaves(x)):
        warnings.warn("Input to holomorphic_grad is not complex", stacklevel=3)
    return api.grad(lambda z: dnp.real(fun(z)))(as_real(x))


def grad_named(fun, argname):
    """The gradient with respect to the argument named ``argname``."""
    names = [p.name for p in inspect.signature(fun).parameters.values()
             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if argname not in names:
        raise TypeError(f"grad_named: {getattr(fun, '__name__', fun)!r} has no positional "
                        f"argument named {argname!r} (it has {names})")
    return grad(fun, names.index(argname))


# --- Jacobians and Hessians ------------------------------------------------------------


@staged_operator
def jacobian(fun, x):
    """The Jacobian, of shape ``output.shape + input.shape``."""
    return api.jacobian(fun)(as_real(x))


@staged_operator
def hessian(fun, x):
    """The Hessian, of shape ``output.shape + input.shape + input.shape``
    (forward-over-reverse)."""
    return api.hessian(fun)(as_real(x))


@unary_to_nary
def deriv(fun, x):
    """The forward derivative along a tangent of ones: the derivative of each output with
    respect to a common shift of every input element."""
    x = as_real(x)
    return api.jvp(fun, (x,), (ones_like(x),))[1]


# --- products ----------------------------------------------------------------------------


@unary_to_nary
def make_vjp(fun, x):
    """``(vjp, value)``: ``vjp(g)`` pulls a cotangent ``g`` of the output back to the
    argument; it may be called many times."""
    value, pull = api.vjp(fun, as_real(x))
    return (lambda g: pull(as_real(g))[0]), value


@unary_to_nary
def make_jvp(fun, x):
    """A function ``jvp(v) -> (value, tangent)`` pushing a tangent ``v`` of the argument
    forward."""
    x = as_real(x)

    def jvp(v):
        return api.jvp(fun, (x,), (_like(as_real(v), x),))
    return jvp


@unary_to_nary
def make_jvp_reversemode(fun, x):
    """A function ``v -> J v`` (autograd builds it from two reverse passes; diffkit records
    the linear map once with its forward engine and replays it)."""
    _, jvp = api.linearize(fun, as_real(x))
    return lambda v: jvp(as_real(v))


@unary_to_nary
def make_hvp(fun, x):
    """``(hvp, gradient)`` at the point: ``hvp(v)`` is the Hessian-vector product, cheap to
    call many times (the linear map is recorded once)."""
    gradient, hvp = api.linearize(api.grad(_scalar_fun(fun, "make_hvp")), as_real(x))
    return (lambda v: hvp(as_real(v))), gradient


def make_ggnvp(f, g=lambda x: 0.5 * dnp.sum(x ** 2, axis=-1), f_argnum=0):
    """Generalized Gauss-Newton products of ``g(f(x))``: ``make_ggnvp(f, g)(*args)`` returns
    ``v -> J^T H_g J v``, with ``J`` the Jacobian of ``f`` and ``H_g`` the Hessian of ``g`` at
    ``f(x)``."""
    @unary_to_nary
    def _make_ggnvp(f, x):
        x = as_real(x)
        f_x, f_vjp = api.vjp(f, x)
        _, f_jvp = api.linearize(f, x)

        def ggnvp(v):
            u = f_jvp(as_real(v))
            return f_vjp(api.hvp(_scalar_fun(g, "make_ggnvp"), (f_x,), (u,))[0])[0]
        return ggnvp
    return _make_ggnvp(f, f_argnum)


def hessian_tensor_product(fun, argnum=0):
    """A function of ``(*args, tensor)`` returning the Hessian of the scalar ``fun`` applied
    to ``tensor`` (of the argument's shape), without forming the Hessian."""
    argnum = check_argnum(argnum, "hessian_tensor_product")

    @wraps(fun, "hessian_tensor_product_of_{fun}")
    def htp(*args, **kwargs):
        args, tensor = args[:-1], args[-1]
        x = as_real(select_argument(args, argnum, "hessian_tensor_product"))
        unary = _unary(fun, argnum, args, kwargs)
        return api.hvp(_scalar_fun(unary, "hessian_tensor_product"), (x,),
                       (_like(as_real(tensor), x),))[0]
    return htp


hessian_vector_product = hessian_tensor_product


def tensor_jacobian_product(fun, argnum=0):
    """A function of ``(*args, tensor)`` returning ``tensor`` contracted with the leading
    axes of the Jacobian: the vector-Jacobian product when ``tensor`` has the output's
    shape."""
    argnum = check_argnum(argnum, "tensor_jacobian_product")

    @wraps(fun, "tensor_jacobian_product_of_{fun}")
    def tjp(*args, **kwargs):
        args, tensor = args[:-1], args[-1]
        x = as_real(select_argument(args, argnum, "tensor_jacobian_product"))
        unary = _unary(fun, argnum, args, kwargs)
        ndim = len(shape_of(tensor))
        return api.jacobian(lambda x: dnp.tensordot(tensor, unary(x), axes=ndim))(x)
    return tjp


vector_jacobian_product = tensor_jacobian_product


def _unary(fun, argnum, args, kwargs):
    def unary(x):
        if isinstance(argnum, tuple):
            subargs = list(args)
            for i, v in zip(argnum, x):
                subargs[i] = v
        else:
            subargs = list(args)
            subargs[argnum] = x
        return fun(*subargs, **kwargs)
    return unary


def _like(v, x):
    """The tangent ``v`` checked against the argument ``x`` it moves (arrays only)."""
    if not isinstance(x, (list, tuple, dict)) and shape_of(v) != shape_of(x):
        raise ShapeMismatchError(f"the vector has shape {shape_of(v)}, but the argument it "
                                 f"multiplies has shape {shape_of(x)}")
    return v


# --- whole signatures --------------------------------------------------------------------


def multigrad_dict(fun):
    """A function of ``fun``'s arguments returning an ``OrderedDict`` from each parameter
    name (defaults included) to the gradient with respect to it."""
    signature = inspect.signature(fun)

    @wraps(fun, "multigrad_dict_of_{fun}")
    def gradfun(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        arguments = dict(bound.arguments)

        def of_dict(values):
            call = inspect.BoundArguments(signature, OrderedDict(
                (name, values[name]) for name in arguments))
            return fun(*call.args, **call.kwargs)

        gradients = grad(of_dict)(arguments)
        return OrderedDict((name, gradients[name]) for name in arguments)
    return gradfun


def checkpoint(fun):
    """``fun`` whose reverse pass recomputes its intermediate values instead of storing
    them (memory for time); values and derivatives are unchanged."""
    by_static = {}

    @functools.wraps(fun)
    def checkpointed(*args, **kwargs):
        if not holds_tracer(args) or holds_tracer(list(kwargs.values())):
            return fun(*args, **kwargs)  # nothing to checkpoint (or traced keywords)
        static = tuple(i for i, a in enumerate(args) if not _numeric_tree(a))
        wrapped = by_static.get(static)
        if wrapped is None:
            wrapped = by_static.setdefault(static, _dk_checkpoint(
                _with_keywords(fun), static_argnums=(0,) + tuple(i + 1 for i in static)))
        return wrapped(_Keywords(kwargs), *args)
    return checkpointed


class _Keywords(dict):
    """The keyword arguments of one call, passed as a static argument."""


def _with_keywords(fun):
    @functools.wraps(fun)
    def call(keywords, *args):
        return fun(*args, **keywords)
    return call


def _numeric_tree(value):
    leaves = tree_util.tree_leaves(value)
    return all(isinstance(leaf, (np.ndarray, np.generic, int, float, complex)) or
               holds_tracer(leaf) for leaf in leaves)
