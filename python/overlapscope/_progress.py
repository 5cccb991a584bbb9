"""Progress of long work: a line on stderr in a terminal, an output redrawn
in place in a notebook.

The compiled part calls ``callback(message, fraction)`` about ten times a
second while it loads or analyses (``fraction`` is None for work of unknown
length), and ``callback("", None)`` once at the end."""

from __future__ import annotations

import sys
import time
from typing import Any, Callable, Optional, TextIO, Union

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


class NotebookProgress:
    """In a notebook: one output under the cell, redrawn in place as the work
    advances and emptied when it ends, so nothing is left behind (a stream
    line would stay as a blank stderr box). ``display`` is IPython's."""

    def __init__(self, display: Callable, delay: float = 1.0) -> None:
        self._display = display
        self._delay = delay
        self._started = time.monotonic()
        self._handle: Any = None
        self._last = ""

    def __call__(self, message: str, fraction: Optional[float]) -> None:
        if not message:
            if self._handle is not None:
                self._handle.update({"text/plain": ""}, raw=True)
                self._handle = None
            return
        if time.monotonic() - self._started < self._delay:
            return
        line = message if fraction is None else f"{message} {100.0 * fraction:5.1f}%"
        if line == self._last:
            return
        self._last = line
        if self._handle is None:
            self._handle = self._display({"text/plain": line}, raw=True, display_id=True)
        else:
            self._handle.update({"text/plain": line}, raw=True)


def _notebook() -> bool:
    """A Jupyter kernel runs this code (IPython in a terminal is not one)."""
    shell = sys.modules.get("IPython")
    try:
        ip = shell.get_ipython() if shell is not None else None  # type: ignore[attr-defined]
    except Exception:
        return False
    return ip is not None and "ipykernel" in sys.modules and hasattr(ip, "kernel")


def _interactive() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _shown() -> ProgressCallback:
    if _notebook():
        from IPython.display import display

        return NotebookProgress(display)
    return ProgressLine()


def callback(progress: Progress) -> Optional[ProgressCallback]:
    """What ``progress=`` means: None shows progress where someone is
    watching (a notebook: an output redrawn in place; a terminal: a line on
    stderr), True always, False never; a callable gets every update."""
    if progress is None:
        return _shown() if _notebook() or _interactive() else None
    if progress is True:
        return _shown()
    if progress is False:
        return None
    if callable(progress):
        return progress
    raise TypeError("progress must be None, True, False or a callable(message, fraction)")
