"""pandas and numpy, imported when first used.

``import pandas`` costs about 0.2 s, as much as the engine needs to read
200 MB of traces. The package's modules reach pandas and numpy through the
stand-ins here, so importing overlapscope costs little, and a call that
starts the engine imports them on a thread of its own while the engine
works without the GIL (:func:`while_engine_works`): the two overlap.
"""

from __future__ import annotations

import importlib
import sys
import threading
from typing import Any, Callable, Optional, TypeVar

_T = TypeVar("_T")


class Deferred:
    """A module imported on first attribute access; then its attributes."""

    __slots__ = ("_name", "_module")

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: Any = None

    def __getattr__(self, attribute: str) -> Any:
        module = self._module
        if module is None:
            module = self._module = importlib.import_module(self._name)
        return getattr(module, attribute)

    def __repr__(self) -> str:
        return f"<{self._name}, imported on first use>"


pandas = Deferred("pandas")
numpy = Deferred("numpy")

_HEAVY = ("numpy", "pandas")


def _import_heavy(imported: Optional[Callable[[], Any]]) -> None:
    try:
        for name in _HEAVY:
            importlib.import_module(name)
    except Exception:  # noqa: BLE001 - the first real use says what is wrong
        pass
    finally:
        if imported is not None:
            imported()


def while_engine_works(call: Callable[..., _T], *args: Any, imported: Optional[Callable[[], Any]] = None) -> _T:
    """``call(*args)``, a compiled function that releases the GIL while it
    works, with pandas and numpy imported meanwhile on another thread (the
    tables it returns need them). Waits for that import before returning,
    also when the call raises: no import is left half done. ``imported``
    is called once the import is over (at once when there is none): an
    ``ImportGate``'s ``open``, for a call that leaves a core to the import
    until then."""
    if all(name in sys.modules for name in _HEAVY):
        if imported is not None:
            imported()
        return call(*args)
    importing = threading.Thread(
        target=_import_heavy, args=(imported,), name="overlapscope: importing pandas", daemon=True
    )
    importing.start()
    try:
        return call(*args)
    finally:
        importing.join()
