"""diffkit's settings: ``dk.config``.

``dk.config.traceback_filtering``: ``"on"`` (the default) hides diffkit's own frames from
the traceback of an error that diffkit raises for a mistake in the calling code, or that
the calling code raises inside a transformed function, so the traceback shows the user's
lines and the message; ``"off"`` shows every frame (for diffkit's developers, or a bug
report). The environment variable ``DIFFKIT_TRACEBACK_FILTERING`` sets the default
(``off`` or ``on``). Errors that start inside diffkit itself (a bug) always show everything.
"""

from __future__ import annotations

import os

__all__ = ["config"]

_CHOICES = ("on", "off")


class Config:
    """The settings, as attributes; assigning an unknown value raises ``ValueError``."""

    def __init__(self) -> None:
        self.traceback_filtering = os.environ.get("DIFFKIT_TRACEBACK_FILTERING", "on").lower()

    @property
    def traceback_filtering(self) -> str:
        return self._traceback_filtering

    @traceback_filtering.setter
    def traceback_filtering(self, value: str) -> None:
        if value not in _CHOICES:
            raise ValueError(f"dk.config.traceback_filtering must be 'on' or 'off', "
                             f"got {value!r}")
        self._traceback_filtering = value

    def __repr__(self) -> str:
        return f"Config(traceback_filtering={self.traceback_filtering!r})"


config = Config()
