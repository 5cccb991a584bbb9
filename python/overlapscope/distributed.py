"""overlapscope on a Dask cluster: a job's files analysed where they lie.

>>> from distributed import Client
>>> import overlapscope.distributed as od
>>> r = od.report(["run/"], client=Client("tcp://scheduler:8786"))
>>> r.to_json() == overlapscope.report(["run/"]).to_json()   # byte for byte
True

Every capture file (a rank's capture, a trace, an Nsight Systems export)
becomes one task: the worker runs the per-file half of the analysis on it,
the code of ``overlapscope report --partial``, and sends back the partial
result (about the size of the file's devices in the report JSON). The client
merges the parts as ``overlapscope merge`` does. Dask places the tasks,
reruns those of a worker that dies (each file's part is kept once, by its
task) and keeps them off the client.

Where the files are: a path the client sees (a shared file system) is listed
here and its files go to any worker; ``HOST:PATH`` (or ``hosts=``) names a
path on one node's own disk, listed and analysed by a worker on that host
(preferred: with no worker there, any other tries and names the file it
cannot read). docs/cluster.md has the recipes; ``overlapscope report
--scheduler`` runs this module as ``python3 -m overlapscope.distributed``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import socket
import sys
import tempfile
import uuid
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _core, _progress
from ._errors import CaptureError
from ._options import Paths, analysis_settings, paths_of
from ._report import Report, warn_all

Hosts = Union[None, Mapping[str, str], Callable[[str], Optional[str]]]

# HOST:PATH, as scp and rsync write a path on another machine; a host name
# has no "/" (tcp:// worker addresses go through hosts=).
_HOST_PATH = re.compile(r"^([A-Za-z0-9_.\-\[\]]+):(.+)$")


def split_host(name: str, hosts: Hosts = None) -> Tuple[Optional[str], str]:
    """(host, path on that host) of an input as the user wrote it: ``hosts``
    first (a mapping or a callable from the name), then ``HOST:PATH`` for a
    name that is no file here; (None, name) for a path the client sees."""
    host: Optional[str] = None
    if callable(hosts):
        host = hosts(name)
    elif hosts is not None:
        host = hosts.get(name)
    if host is not None:
        return host, name
    match = _HOST_PATH.match(name)
    if match and not os.path.lexists(name):
        return match.group(1), match.group(2)
    return None, name


class _Unit:
    """One task: a capture file and Dask's restriction to its host."""

    __slots__ = ("path", "placement")

    def __init__(self, path: str, placement: Dict[str, Any]) -> None:
        self.path = path
        self.placement = placement


def _worker_address() -> str:
    from distributed import get_worker

    try:
        return get_worker().address
    except ValueError:  # run outside a worker (a test calling it directly)
        return "this process"


def _list_files(path: str) -> Tuple[str, Optional[List[str]], Optional[str]]:
    """On a worker: a node-local directory's capture files, as the one-process
    analysis would list them."""
    try:
        return _worker_address(), _core.capture_files([path]), None
    except (CaptureError, OSError) as e:
        return _worker_address(), None, str(e)


def _analyse_file(path: str, settings: Dict[str, Any]) -> Tuple[str, Optional[bytes], Optional[str]]:
    """On a worker: one file's partial result (``report --partial FILE``), as
    bytes, or the one line that says why it could not be made. Errors come
    back as values: an exception would be pickled with the worker's
    traceback, and a task that raises is not retried anyway."""
    worker = _worker_address()
    with tempfile.TemporaryDirectory(prefix="overlapscope-part-") as scratch:
        out = os.path.join(scratch, "file.partial.json")
        try:
            _core.write_partial([path], out, False, settings, 1, None)
            with open(out, "rb") as f:
                return worker, f.read(), None
        except (CaptureError, OSError, ValueError) as e:
            return worker, None, str(e)


def _failure(message: str, worker: str) -> CaptureError:
    return CaptureError(f"{message} (on worker {worker})")


def _placement(host: Optional[str]) -> Dict[str, Any]:
    """Dask's worker restriction for a file on `host`: a worker's name,
    address or host, and the address the name resolves to (workers usually
    listen on an address, users name nodes). Loose: with no worker there
    another tries (and names the file it cannot read)."""
    if host is None:
        return {}
    workers = [host]
    if "://" not in host:
        try:
            address = socket.gethostbyname(host)
            if address != host:
                workers.append(address)
        except OSError:
            pass
    return {"workers": workers, "allow_other_workers": True}


def _units(client: Any, names: Sequence[str], hosts: Hosts) -> List[_Unit]:
    """The job's files in the order one process reads them (captureFiles):
    directories the client sees are listed here, node-local ones by a
    worker on their host."""
    placed = [(host, path, _placement(host)) for host, path in (split_host(name, hosts) for name in names)]
    listings = {
        i: client.submit(_list_files, path, key=f"overlapscope-list-{uuid.uuid4().hex}", pure=False, **placement)
        for i, (host, path, placement) in enumerate(placed)
        if host is not None
    }
    units: List[_Unit] = []
    try:
        for i, (host, path, placement) in enumerate(placed):
            if host is None:
                units.extend(_Unit(f, placement) for f in _core.capture_files([path]))
                continue
            worker, files, error = listings[i].result()
            if error is not None:
                raise _failure(error, worker)
            units.extend(_Unit(f, placement) for f in files or [])
    finally:
        client.cancel(list(listings.values()))
    return units


def analyse_parts(
    client: Any,
    names: Sequence[str],
    settings: Dict[str, Any],
    directory: str,
    hosts: Hosts = None,
    on_done: Optional[Callable[[int, int], None]] = None,
) -> List[str]:
    """Each file of the job analysed on the cluster into its partial result,
    written into ``directory`` as it arrives (named in the job's file order,
    which is the order returned). ``on_done(done, total)`` as they come.
    Raises CaptureError (one line: the file's problem and the worker that
    met it); Ctrl-C (KeyboardInterrupt) cancels the tasks not yet done."""
    from distributed import as_completed

    units = _units(client, names, hosts)
    job = uuid.uuid4().hex
    futures = [
        client.submit(
            _analyse_file, u.path, settings, key=f"overlapscope-part-{job}-{i}", pure=False, **u.placement
        )
        for i, u in enumerate(units)
    ]
    index = {f.key: i for i, f in enumerate(futures)}
    files = [os.path.join(directory, f"{i:07d}.partial.json") for i in range(len(futures))]
    taken = set()
    try:
        if on_done:
            on_done(0, len(futures))
        # Results fetched in batches as they come (a round trip per part would
        # dominate small files), each written out and released on its worker
        # at once: neither side holds the job's parts.
        for batch in as_completed(futures, with_results=True, raise_errors=False).batches():
            for future, outcome in batch:
                i = index[future.key]
                if isinstance(outcome, BaseException):  # KilledWorker: its workers died every time
                    raise CaptureError(f"{units[i].path}: {type(outcome).__name__} on the cluster: {outcome}")
                worker, part, error = outcome
                if error is not None:
                    raise _failure(error, worker)
                with open(files[i], "wb") as f:
                    f.write(part)
                taken.add(i)
                future.release()
            if on_done:
                on_done(len(taken), len(futures))
    finally:
        client.cancel([f for i, f in enumerate(futures) if i not in taken])  # after an error or Ctrl-C
    return files


def _client_of(client: Any) -> Tuple[Any, bool]:
    """(client, whether we made it): a Client, a scheduler address, or None
    for the current default client."""
    from distributed import Client, get_client

    if client is None:
        return get_client(), False
    if isinstance(client, str):
        return Client(client), True
    return client, False


def report(
    paths: Paths,
    client: Any = None,
    *,
    hosts: Hosts = None,
    align: Optional[str] = None,
    jobs: int = 0,
    progress: _progress.Progress = None,
    **options: Any,
) -> Report:
    """:func:`overlapscope.report` with the files analysed on a Dask cluster.

    ``client``: a ``distributed.Client``, a scheduler address
    (``"tcp://host:8786"``) or None for the current client. ``paths``:
    capture files, directories of them, or ``HOST:PATH`` for a path on one
    node's disk; ``hosts`` maps an input (a mapping, or a callable returning
    None where the client sees it) to the host or worker address that holds
    it. ``align``, ``progress`` and the other keyword arguments
    (``comm_kernel``, ``comm_copies``, ``step_pattern``,
    ``microbatch_pattern``, ``pipeline_stages``, ``peak_busbw_gbps``) are
    :func:`overlapscope.report`'s; ``jobs`` is the merge's threads here. The :class:`~overlapscope.Report`
    is the one-process report, its JSON byte for byte; its ``inputs`` are
    ``paths`` as given.

    Raises :class:`overlapscope.CaptureError` for a file a worker cannot
    read or analyse (naming the file and the worker); Ctrl-C cancels the
    job's tasks.
    """
    settings = analysis_settings(align=align or "session-start", **options)
    if jobs < 0:
        raise ValueError(f"jobs must be 0 (every core) or more, not {jobs}")
    names = paths_of(paths)
    show = _progress.callback(progress)
    dask_client, owned = _client_of(client)

    def on_done(done: int, total: int) -> None:
        if show is not None:
            show(f"analyzing: {done}/{total} files", done / max(total, 1))

    with tempfile.TemporaryDirectory(prefix="overlapscope-parts-") as scratch:
        try:
            parts = analyse_parts(dask_client, names, settings, scratch, hosts, on_done)
        finally:
            if show is not None:
                show("", None)
            if owned:
                dask_client.close()
        handle = _core.analyze_job(
            parts, settings, int(jobs), None if align is None else align == "collectives", show, names
        )
    warn_all(handle.job_warnings)
    return Report(handle)


def _main(argv: Optional[Sequence[str]] = None) -> int:
    """``python3 -m overlapscope.distributed parts``: the command line's
    half (``overlapscope report/check --scheduler``). Writes the job's parts
    into an existing directory and says on stdout ``done N TOTAL`` after
    each, for the command line to draw its own progress line; the merge and
    the output are the command line's. Exit 2 with one line on stderr for
    bad input, 130 on Ctrl-C."""
    parser = argparse.ArgumentParser(prog="python3 -m overlapscope.distributed")
    sub = parser.add_subparsers(dest="command", required=True)
    parts = sub.add_parser("parts", help="analyse a job's files on a Dask cluster into partial results")
    parts.add_argument("--scheduler", required=True, help="the Dask scheduler, tcp://HOST:PORT")
    parts.add_argument("--settings", required=True, help="the analysis settings, as JSON")
    parts.add_argument("--output-dir", required=True, help="an empty directory for the parts")
    parts.add_argument("inputs", nargs="+")
    args = parser.parse_args(argv)
    client = None
    try:
        from distributed import Client

        # The command's stderr is the one-process command's: Dask's own log
        # lines (slow event loops, garbage collection) stay out of it, errors
        # stay in. After the import, which sets Dask's levels.
        for name in ["distributed", *logging.root.manager.loggerDict]:
            if name == "distributed" or name.startswith("distributed."):
                logging.getLogger(name).setLevel(logging.ERROR)

        try:
            client = Client(args.scheduler, timeout="30s")
        except (OSError, TimeoutError) as e:
            print(f"overlapscope: cannot reach the Dask scheduler {args.scheduler}: {e}", file=sys.stderr)
            return 2

        def done(n: int, total: int) -> None:
            print(f"done {n} {total}", flush=True)

        files = analyse_parts(client, args.inputs, json.loads(args.settings), args.output_dir, None, done)
        print(f"parts {len(files)}", flush=True)
        return 0
    except CaptureError as e:
        print(f"overlapscope: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    finally:
        if client is not None:
            client.close()


if __name__ == "__main__":
    sys.exit(_main())
