"""Exceptions and warnings of the overlapscope package."""

from __future__ import annotations

import warnings
from typing import Sequence

from . import _core

#: Bad input: a missing or unreadable file, something that is not a capture,
#: a broken trace. The message is one line naming the file and the problem,
#: as the command line prints it before exiting with status 2.
CaptureError = _core.CaptureError


class OverlapscopeWarning(UserWarning):
    """What the command line prints on stderr as a warning: records the agent
    dropped, a capture that never finished, a what-if self-check far off."""


def warn_all(messages: Sequence[str], stacklevel: int = 3) -> None:
    """Each message as an OverlapscopeWarning, from the caller's caller."""
    for message in messages:
        warnings.warn(message, OverlapscopeWarning, stacklevel=stacklevel)
