"""Where in the user's code something happened: the innermost Python frame outside diffkit,
NumPy and SciPy.

A staged equation and a guard keep the ``Location`` of the user's line that applied the
primitive or read the value (as JAX's ``source_info``), so that a guard failing on a later
call, a graph that no longer applies or a branch that keeps changing can name the line.

Finding it walks the Python stack from the caller outwards, comparing each frame's file
with the libraries' directories (once per file): a few microseconds, which is why
staging keeps the line of every equation only on request (``dk.config.source_info``).
"""

import importlib.util
import linecache
import os
import sys

__all__ = ["Location", "first_outside", "user_location"]


def _package_dir(name):
    """The directory of an installed package, found without importing it."""
    spec = importlib.util.find_spec(name)
    locations = getattr(spec, "submodule_search_locations", None) if spec else None
    return os.path.join(list(locations)[0], "") if locations else None


_DIFFKIT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "")
#: The directories whose frames are not the user's: diffkit's own, NumPy's and SciPy's.
LIBRARIES = tuple(d for d in (_DIFFKIT, _package_dir("numpy"), _package_dir("scipy"),
                              "<diffkit") if d)   # and code diffkit generates (jit replays)


class Location:
    """A line of the user's code: ``filename``, ``lineno`` and the ``function`` it is in.

    Made from the frame's code object and instruction offset; the line number is worked
    out only when asked for (recording it costs less than a dict look-up per frame)."""

    __slots__ = ("code", "offset")

    def __init__(self, code, offset):
        self.code = code
        self.offset = offset

    @property
    def filename(self):
        return self.code.co_filename

    @property
    def function(self):
        return self.code.co_name

    @property
    def lineno(self):
        for start, end, line in self.code.co_lines():
            if start <= self.offset < end:
                return line if line is not None else self.code.co_firstlineno
        return self.code.co_firstlineno

    def source(self):
        """The line's text, stripped ('' where the file cannot be read)."""
        return linecache.getline(self.filename, self.lineno).strip()

    def __str__(self):
        text = self.source()
        where = f"{self.filename}:{self.lineno} (in {self.function})"
        return f"{where}: {text}" if text else where

    def __repr__(self):
        return f"Location({self.filename!r}, {self.lineno}, {self.function!r})"

    def __eq__(self, other):
        return isinstance(other, Location) and self.code is other.code \
            and self.lineno == other.lineno

    def __hash__(self):
        return hash((self.code, self.lineno))


#: file name -> whether it is a library's (diffkit, NumPy, SciPy): asked once per file
_LIBRARY_FILE = {}


def _is_library(code):
    filename = code.co_filename
    known = _LIBRARY_FILE.get(filename)
    if known is None:
        known = _LIBRARY_FILE[filename] = filename.startswith(LIBRARIES)
    return known


def in_library(frame):
    """Whether ``frame`` runs code of diffkit, NumPy or SciPy (or code diffkit generated)."""
    return _is_library(frame.f_code)


def first_outside(frame, inside=in_library):
    """``(outer, passed)``: the innermost frame from ``frame`` outwards for which
    ``inside(frame)`` is false (None when there is none), and how many frames were passed
    to reach it. The one walk behind every "the user's line" in diffkit: staged equations
    and guards, escape errors (``inside``: a frame of a library module) and warnings'
    ``stacklevel`` (``inside``: a frame of diffkit's own files)."""
    passed = 0
    while frame is not None and inside(frame):
        frame, passed = frame.f_back, passed + 1
    return frame, passed


def user_location(skip=1):
    """The ``Location`` of the innermost frame outside diffkit, NumPy and SciPy, starting
    ``skip`` frames above the caller's (None when every frame is theirs: a call from
    diffkit's own code at the top level)."""
    frame, _ = first_outside(sys._getframe(skip + 1))
    return None if frame is None else Location(frame.f_code, frame.f_lasti)
