"""Progress of long work: a line on stderr in a terminal or a notebook.

The compiled part calls ``callback(message, fraction)`` about ten times a
second while it loads or analyses (``fraction`` is None for work of unknown
length), and ``callback("", None)`` once at the end."""

from __future__ import annotations

import sys
import time
from typing import Callable, Optional, TextIO, Union

ProgressCallback = Callable[[str, Optional[float]], None]
Progress = Union[None, bool, ProgressCallback]


class ProgressLine:
    """Draws ``loading: kernels  42.0%`` in place on a stream, only once the
    work has lasted ``delay`` seconds: quick calls print nothing."""

    def __init__(self, stream: Optional[TextIO] = None, delay: float = 1.0) -> None:
        self._stream = stream
        self._delay = delay
        self._started = time.monotonic()
        self._shown = False

    def __call__(self, message: str, fraction: Optional[float]) -> None:
        stream = self._stream or sys.stderr
        if not message:
            if self._shown:
                stream.write("\r\033[K" if stream.isatty() else "\r" + " " * 60 + "\r")
                stream.flush()
                self._shown = False
            return
        if time.monotonic() - self._started < self._delay:
            return
        line = message if fraction is None else f"{message} {100.0 * fraction:5.1f}%"
        stream.write("\r" + line[:100].ljust(60))
        stream.flush()
        self._shown = True


def _interactive() -> bool:
    if "ipykernel" in sys.modules:
        return True
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def callback(progress: Progress) -> Optional[ProgressCallback]:
    """What ``progress=`` means: None shows a line where someone is watching
    (a terminal or a notebook), True always, False never; a callable gets
    every update."""
    if progress is None:
        return ProgressLine() if _interactive() else None
    if progress is True:
        return ProgressLine()
    if progress is False:
        return None
    if callable(progress):
        return progress
    raise TypeError("progress must be None, True, False or a callable(message, fraction)")
