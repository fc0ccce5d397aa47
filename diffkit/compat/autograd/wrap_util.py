"""autograd's helpers for writing differential operators: ``unary_to_nary`` turns an
operator of a one-argument function into one that takes ``argnum``, and ``wraps`` names
the functions it makes."""

import numpy as np

from ...errors import ArgnumsError

__all__ = ["unary_to_nary", "wraps", "get_name", "get_doc", "subvals", "subval"]


def subvals(x, ivs):
    """The tuple ``x`` with ``x[i] = v`` for each ``(i, v)`` in ``ivs``."""
    x = list(x)
    for i, v in ivs:
        x[i] = v
    return tuple(x)


def subval(x, i, v):
    """The tuple ``x`` with ``x[i] = v``."""
    return subvals(x, [(i, v)])


def get_name(fun):
    return getattr(fun, "__name__", "[unknown name]")


def get_doc(fun):
    return getattr(fun, "__doc__", "")


def wraps(fun, namestr="{fun}", docstr="{doc}", **kwargs):
    """A decorator that names (and documents) a function after ``fun``."""
    def name_it(f):
        try:
            f.__name__ = namestr.format(fun=get_name(fun), **kwargs)
            f.__doc__ = docstr.format(fun=get_name(fun), doc=get_doc(fun), **kwargs)
        except (AttributeError, TypeError, KeyError, IndexError, ValueError):
            pass  # an object whose name cannot be set keeps its own
        return f
    return name_it


def _is_int(n):
    return isinstance(n, (int, np.integer)) and not isinstance(n, (bool, np.bool_))


def check_argnum(argnum, name):
    """``argnum``: an int, or a tuple/list of ints (autograd's single "argnum" argument)."""
    if _is_int(argnum):
        return int(argnum)
    if isinstance(argnum, (tuple, list)) and all(_is_int(n) for n in argnum):
        return tuple(int(n) for n in argnum)
    raise ArgnumsError(f"{name}: argnum={argnum!r}, but argnum must be an int or a tuple of "
                       "ints (the positions of the arguments to differentiate)")


def select_argument(args, argnum, name):
    """``args[argnum]``, or the tuple of them for a tuple ``argnum``."""
    try:
        if isinstance(argnum, tuple):
            return tuple(args[i] for i in argnum)
        return args[argnum]
    except IndexError:
        raise ArgnumsError(f"{name}: argnum={argnum!r}, but the function was called with "
                           f"{len(args)} positional argument(s)") from None


def named_as_operator(nary_f, fun, op_name, argnum):
    """``nary_f`` named and documented as autograd names an operator's result:
    ``grad_of_f_wrt_argnum_0``."""
    wraps(fun, "{op}_of_{fun}_wrt_argnum_{argnum}",
          "{op} of function {fun} with respect to argument number {argnum}. Takes the "
          "same arguments as {fun} but returns the {op}.",
          op=op_name, argnum=argnum)(nary_f)
    return nary_f


def unary_to_nary(unary_operator):
    """``unary_operator(fun, x, *op_args, **op_kwargs)`` acts on a function of one
    argument; the result, ``nary_operator(fun, argnum=0, *op_args, **op_kwargs)``, acts on
    a function of many and returns a function of the same arguments as ``fun``, where the
    argument (or tuple of arguments) at ``argnum`` plays ``x``."""
    op_name = get_name(unary_operator)

    def nary_operator(fun, argnum=0, *op_args, **op_kwargs):
        argnum = check_argnum(argnum, op_name)

        def nary_f(*args, **kwargs):
            def unary_f(x):
                if isinstance(argnum, tuple):
                    subargs = subvals(args, zip(argnum, x))
                else:
                    subargs = subvals(args, [(argnum, x)])
                return fun(*subargs, **kwargs)

            unary_f.__name__ = get_name(fun)  # named for messages (check_grads)
            x = select_argument(args, argnum, op_name)
            return unary_operator(unary_f, x, *op_args, **op_kwargs)

        return named_as_operator(nary_f, fun, op_name, argnum)

    wraps(unary_operator)(nary_operator)
    return nary_operator
