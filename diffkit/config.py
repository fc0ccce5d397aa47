"""diffkit's settings: ``dk.config``.

``dk.config.traceback_filtering``: ``"on"`` (the default) hides diffkit's own frames from
the traceback of an error that diffkit raises for a mistake in the calling code, or that
the calling code raises inside a transformed function, so the traceback shows the user's
lines and the message; ``"off"`` shows every frame (for diffkit's developers, or a bug
report). The environment variable ``DIFFKIT_TRACEBACK_FILTERING`` sets the default
(``off`` or ``on``). Errors that start inside diffkit itself (a bug) always show everything.

``dk.config.source_info``: which staged operations keep the user's line that made them.
``"reads"`` (the default): the values Python read while jit or ``make_graph`` recorded
(an ``if`` on an array, ``float(x)``), whose guards a later call may fail; the errors and
warnings about a recording that no longer applies name that line. ``"all"``: every staged
equation too (``str(graph)`` then lists each operation's line), at a cost of a few
microseconds per operation when jit traces. The environment variable
``DIFFKIT_SOURCE_INFO`` sets the default.
"""

from __future__ import annotations

import os

__all__ = ["config"]

_CHOICES = ("on", "off")
_SOURCE_INFO = ("reads", "all")


class Config:
    """The settings, as attributes; assigning an unknown value raises ``ValueError``.

    Examples:
        >>> import traceback
        >>> def diffkit_frames():
        ...     try:
        ...         dk.grad(lambda x: 2 * x)(np.ones(2))    # not a scalar: an error
        ...     except dk.errors.NonScalarOutputError as error:
        ...         frames = traceback.extract_tb(error.__traceback__)
        ...         return [frame.name for frame in frames if frame.filename.endswith(".py")]
        >>> saved = dk.config.traceback_filtering
        >>> dk.config.traceback_filtering = "on"
        >>> diffkit_frames()    # the traceback shows the user's lines only
        []
        >>> dk.config.traceback_filtering = "off"
        >>> len(diffkit_frames()) > 0    # and diffkit's own with "off"
        True
        >>> dk.config.traceback_filtering = "sometimes"
        Traceback (most recent call last):
            ...
        ValueError: dk.config.traceback_filtering must be 'on' or 'off', got 'sometimes'
        >>> dk.config.traceback_filtering = saved

        ``source_info = "all"``: each staged operation keeps the line that made it.

        >>> def double_sine(x):
        ...     return dnp.sin(x) * 2
        >>> saved = dk.config.source_info
        >>> dk.config.source_info = "all"
        >>> print(dk.make_graph(double_sine)(np.ones(2)))
        graph(v0: f64[2]) {
          v1: f64[2] = sin v0  # <doctest ...>:2
          v2: f64[2] = multiply v1 2  # <doctest ...>:2
          return v2
        }
        >>> dk.config.source_info = saved
    """

    def __init__(self) -> None:
        self.traceback_filtering = os.environ.get("DIFFKIT_TRACEBACK_FILTERING", "on").lower()
        self.source_info = os.environ.get("DIFFKIT_SOURCE_INFO", "reads").lower()

    @property
    def traceback_filtering(self) -> str:
        return self._traceback_filtering

    @traceback_filtering.setter
    def traceback_filtering(self, value: str) -> None:
        if value not in _CHOICES:
            raise ValueError(f"dk.config.traceback_filtering must be 'on' or 'off', "
                             f"got {value!r}")
        self._traceback_filtering = value

    @property
    def source_info(self) -> str:
        return self._source_info

    @source_info.setter
    def source_info(self, value: str) -> None:
        if value not in _SOURCE_INFO:
            raise ValueError(f"dk.config.source_info must be 'reads' or 'all', got {value!r}")
        self._source_info = value

    def __repr__(self) -> str:
        return (f"Config(traceback_filtering={self.traceback_filtering!r}, "
                f"source_info={self.source_info!r})")


config = Config()
