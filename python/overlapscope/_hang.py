"""overlapscope.hang(): which rank a stuck job waits for, as ``overlapscope hang``."""

from __future__ import annotations

import json
from typing import Any, Dict, List

from ._lazy import pandas as pd
from ._lazy import while_engine_works

from . import _core, _frames, _progress
from ._options import Paths, paths_of
from ._errors import warn_all


class Hang(_frames.Document):
    """The hang analysis of a job (docs/cli.md, ``overlapscope hang``).

    ``verdict`` is ``"healthy"``, ``"hang"`` or ``"desync"``; ``to_dict()``
    is ``overlapscope hang --format json``'s document and ``text()`` its text.
    The tables are made from that document, a column per field, nested
    objects flattened as ``parent_field`` (``last_entered_seq``,
    ``host_last_api_call_name``); a JSON null is <NA> or NaN.
    """

    def __init__(self, document: str, text: str) -> None:
        super().__init__(json.loads(document), text)

    @property
    def verdict(self) -> str:
        return self._document["verdict"]

    @property
    def summary(self) -> str:
        """The verdict's paragraph: what to do."""
        return self._document["summary"]

    @property
    def communicators(self) -> pd.DataFrame:
        """One row per communicator: ``id``, ``source``, ``size``, and the
        collective its ranks wait in (``hung_seq``, ``hung_collective``,
        ``hung_waiting_ranks``, ``hung_waited_ns``; missing when none hangs)."""
        rows = []
        for c in self._document["communicators"]:
            hung = c.get("hung") or dict.fromkeys(("seq", "collective", "waiting_ranks", "waiting_since_ns", "waited_ns"))
            rows.append(_frames.flat("", {**{k: v for k, v in c.items() if k not in ("ranks", "hung")}, "hung": hung}))
        return _frames.records(rows)

    @property
    def ranks(self) -> pd.DataFrame:
        """One row per communicator and member: how far it got
        (``last_entered_*``, ``last_completed_*``), its calls and unfinished launches."""
        rows = []
        for c in self._document["communicators"]:
            for r in c["ranks"]:
                rows.append({"communicator": c["id"], **_calls_flat(r)})
        return _frames.records(rows)

    @property
    def stuck_ranks(self) -> pd.DataFrame:
        """One row per rank that never entered the hung collective, with what its host did last."""
        return _frames.records([_calls_flat(r) for r in self._document["stuck_ranks"]])

    @property
    def desyncs(self) -> pd.DataFrame:
        """One row per rank of each call the ranks made differently (``field``
        says what differed: collective, bytes or dtype)."""
        rows = []
        for index, d in enumerate(self._document["desyncs"]):
            head = {"desync_index": index, **{k: v for k, v in d.items() if k != "ranks"}}
            rows += [{**head, **{f"rank_{k}" if k in head else k: v for k, v in r.items()}} for r in d["ranks"]]
        return _frames.records(rows)

    @property
    def warnings(self) -> pd.DataFrame:
        return pd.DataFrame({"message": pd.Series(self._document["warnings"], dtype=object)})

    def _repr_html_(self) -> str:
        import html

        return f"<pre>{html.escape(self._text)}</pre>"


_CALL_FIELDS = ("seq", "collective", "label", "bytes", "dtype", "entered_ns", "completed", "completed_ns", "evidence")


def _calls_flat(row: Dict[str, Any]) -> Dict[str, Any]:
    # A call that never happened is null in the JSON: its fields are missing here.
    filled = {k: (dict.fromkeys(_CALL_FIELDS) if v is None and k in ("last_entered", "last_completed", "waiting_in") else v)
              for k, v in row.items()}
    return _frames.flat("", filled)


def hang(paths: Paths, *, min_wait_ms: float = 1000.0, progress: _progress.Progress = None) -> Hang:
    """``overlapscope hang``: captures of a stuck or killed job (ours, Nsight
    Systems exports, PyTorch traces), PyTorch Flight Recorder dumps, or
    directories of them. ``min_wait_ms`` is ``--min-wait-ms``: a collective
    waited on for less before a capture ends is in flight, not hung.

    Raises :class:`overlapscope.CaptureError` for bad input."""
    out = hang_documents(paths_of(paths), min_wait_ms, progress)
    warn_all(out["warnings"])
    return Hang(out["json"], out["text"])


def hang_documents(names: List[str], min_wait_ms: float, progress: _progress.Progress) -> Dict[str, Any]:
    """The analysis behind :func:`hang`: ``json``, ``text`` and ``warnings``
    (not yet shown); overlapscope.distributed runs it on the files it gathered."""
    if not min_wait_ms >= 0:
        raise ValueError(f"min_wait_ms must be 0 or more, not {min_wait_ms!r}")
    return while_engine_works(_core.hang, names, float(min_wait_ms), _progress.callback(progress))
