"""Tracebacks in the user's terms: the public entry points hide diffkit's own frames.

A transformation calls the user's function through several layers of diffkit (the API, an
engine, a trace, a primitive's rule). When that call fails because of the user's code (an
exception raised in it, or a ``DiffkitError`` that diffkit raises for a mistake in it, such
as ``float(x)`` of a traced value), those layers are noise between the user's lines: each
entry point wrapped by ``api_boundary`` removes them from the traceback as the exception
leaves it, keeping the user's frames, the libraries' frames and its own one frame, whose
source line says how to see everything (``dk.config.traceback_filtering = "off"`` or
``DIFFKIT_TRACEBACK_FILTERING=off``). An exception that starts inside diffkit and is not a
``DiffkitError`` is a bug: its traceback is left whole.
"""

import functools
import os

import numpy
import scipy

from .config import config
from .errors import DiffkitError

__all__ = ["api_boundary", "public"]

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep
# NumPy's, SciPy's and Python's own code: an error raised there was handed to them by the
# frame that called them, which decides whose error it is.
_NUMERIC = tuple(os.path.dirname(os.path.abspath(m.__file__)) + os.sep for m in (numpy, scipy))
_STANDARD = os.path.dirname(os.path.abspath(os.__file__)) + os.sep


def _internal(tb):
    name = tb.tb_frame.f_code.co_filename
    return name.startswith(_PACKAGE) or name.startswith("<diffkit")


def _library(tb):
    name = tb.tb_frame.f_code.co_filename
    if name.startswith(_NUMERIC) or name.startswith("<frozen"):
        return True
    return name.startswith(_STANDARD) and "site-packages" not in name


def _frames(tb):
    while tb is not None:
        yield tb
        tb = tb.tb_next


def _user_error(exc):
    """Whether ``exc`` comes from the user's code or is diffkit's message about it: a
    ``DiffkitError``, or raised where the innermost frame that is not NumPy's, SciPy's or
    Python's own is the user's."""
    if isinstance(exc, DiffkitError):
        return True
    for tb in reversed(list(_frames(exc.__traceback__))):
        if not _library(tb):
            return not _internal(tb)
    return False


def _without_internal_frames(tb):
    kept = [t for t in _frames(tb) if not _internal(t)]
    for a, b in zip(kept, kept[1:]):
        a.tb_next = b
    if kept:
        kept[-1].tb_next = None
    return kept[0] if kept else None


def api_boundary(fun):
    """``fun`` (a public entry point) with diffkit's frames hidden from the traceback of a
    user's error that leaves it (see the module docstring)."""
    @functools.wraps(fun)
    def entry(*args, **kwargs):
        try:
            return fun(*args, **kwargs)
        except Exception as exc:
            if config.traceback_filtering == "on" and _user_error(exc):
                exc.__traceback__ = _without_internal_frames(exc.__traceback__)
            raise  # diffkit's frames hidden: dk.config.traceback_filtering = "off" shows them
    entry.__wrapped__ = fun
    return entry


def public(fun):
    """A decorator for the function a transformation returns: ``functools.wraps(fun)`` and
    ``api_boundary`` in one."""
    def decorate(entry):
        return functools.wraps(fun)(api_boundary(entry))
    return decorate
