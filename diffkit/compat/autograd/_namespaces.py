"""Building the compatibility namespaces from diffkit's (names copied, not wrapped: a call
of ``autograd.numpy.sin`` is a call of ``diffkit.numpy.sin``)."""

import importlib

import numpy as np

__all__ = ["copy_public", "numpy_version"]


def copy_public(source, namespace, skip=()):
    """Put every public name of the module ``source`` (a module or its name) into the
    dict ``namespace``, except those in ``skip``; returns the names copied."""
    module = importlib.import_module(source) if isinstance(source, str) else source
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in dir(module) if not n.startswith("_")]
    copied = [n for n in names if n not in skip]
    namespace.update({n: getattr(module, n) for n in copied})
    return copied


def numpy_version():
    return np.__version__


def copy_like(reference, source, namespace):
    """Put every public name of the module ``reference`` (SciPy's) into ``namespace``:
    the object of the same name in ``source`` (diffkit's module, or its name) where it has
    one, else the reference's own. Returns the names."""
    source = importlib.import_module(source) if isinstance(source, str) else source
    names = getattr(reference, "__all__", None) or [n for n in dir(reference)
                                                     if not n.startswith("_")]
    for name in names:
        namespace[name] = getattr(source, name, None) or getattr(reference, name)
    return list(names)


def copy_methods(distribution, namespace):
    """Put the public methods of a diffkit distribution object (``logpdf``, ``cdf`` ...)
    into ``namespace`` as functions; returns their names."""
    names = [n for n in dir(distribution)
             if not n.startswith("_") and callable(getattr(distribution, n))]
    namespace.update({n: getattr(distribution, n) for n in names})
    return names
