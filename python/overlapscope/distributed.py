"""overlapscope on a Dask cluster: a job's files analysed where they lie.

>>> from distributed import Client
>>> import overlapscope.distributed as od
>>> r = od.report(["run/"], client=Client("tcp://scheduler:8786"))
>>> r.to_json() == overlapscope.report(["run/"]).to_json()   # byte for byte
True

Every capture file (a rank's capture, a trace, an Nsight Systems export)
becomes one task (small files a few to a task: Dask's cost per task would
outweigh their analysis): the worker runs the per-file half of the analysis on it,
the code of ``overlapscope report --partial``, and sends back the file's
part in the binary form ``report --jobs N`` keeps its own files' parts in
(no JSON on either side; every node runs one version of overlapscope). The
client reads each part into the merge as it arrives, while the other tasks
run, and merges them as ``report --jobs N`` merges its threads' parts once
the last came. Dask places the tasks,
reruns those of a worker that dies (each file's part is kept once, by its
task) and keeps them off the client.

Where the files are: a path the client sees (a shared file system) is listed
here and its files go to any worker; ``HOST:PATH`` (or ``hosts=``) names a
path on one node's own disk, listed and analysed by a worker on that host
(preferred: with no worker there, any other tries and names the file it
cannot read). ``hang`` and the HTA drop-in (``trace_analysis``) compare
every rank in one analysis: their files are read by the workers and sent,
and the analysis runs here. docs/cluster.md has the recipes; ``overlapscope report
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
import zlib
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _core, _progress
from ._hang import Hang, hang_documents
from ._errors import CaptureError, warn_all
from ._options import Paths, analysis_settings, paths_of
from ._report import Report

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
    """A capture file, its size (0: unknown) and Dask's restriction to its host."""

    __slots__ = ("path", "placement", "size")

    def __init__(self, path: str, placement: Dict[str, Any], size: int) -> None:
        self.path = path
        self.placement = placement
        self.size = size


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0  # its analysis says what is wrong with it


def _worker_address() -> str:
    from distributed import get_worker

    try:
        return get_worker().address
    except ValueError:  # run outside a worker (a test calling it directly)
        return "this process"


def _list_files(path: str) -> Tuple[str, Optional[List[Tuple[str, int]]], Optional[str]]:
    """On a worker: a node-local directory's capture files, as the one-process
    analysis would list them, and their sizes."""
    try:
        return _worker_address(), [(f, _size(f)) for f in _core.capture_files([path])], None
    except (CaptureError, OSError) as e:
        return _worker_address(), None, str(e)


def _analyse_files(paths: List[str], settings: Dict[str, Any]) -> Tuple[str, str, List[bytes], Optional[str]]:
    """On a worker: each file's part (what ``report --jobs N`` keeps of each
    of its files: device_codec's bytes, not ``report --partial``'s JSON,
    whose writing and parsing cost more than the analysis of a small file),
    with the worker's address and overlapscope version, or the one line
    that says why the first that failed could not be made. Errors come back
    as values: an exception would be pickled with the worker's traceback,
    and a task that raises is not retried anyway."""
    parts: List[bytes] = []
    try:
        for path in paths:
            parts.append(_core.file_part(path, settings))
        return _worker_address(), _core.__version__, parts, None
    except (CaptureError, OSError, ValueError) as e:
        return _worker_address(), _core.__version__, [], str(e)


# Files smaller than this together make one task: a task costs Dask about
# 1.5 ms of scheduling and transfer (more on a machine whose cores the
# analysis uses too), which a small file's analysis (2.4 ms for 180
# kernels) would hardly outweigh. docs/benchmarks.md, "A job on a Dask cluster".
_TASK_BYTES = 32 << 20
# ... but never fewer tasks than this many per worker thread, where there are
# that many files: the work stays spread, and a dead worker takes little with it.
_TASKS_PER_THREAD = 4


def _tasks(units: Sequence[_Unit], threads: int) -> List[List[int]]:
    """The files (indexes into `units`) of each task: consecutive files of
    one placement, up to _TASK_BYTES in all (a larger file alone)."""
    most = max(1, len(units) // (_TASKS_PER_THREAD * max(threads, 1)))
    tasks: List[List[int]] = []
    size = 0
    for i, u in enumerate(units):
        if tasks and len(tasks[-1]) < most and u.placement == units[tasks[-1][0]].placement \
                and size + u.size <= _TASK_BYTES:
            tasks[-1].append(i)
            size += u.size
        else:
            tasks.append([i])
            size = u.size
    return tasks


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
                units.extend(_Unit(f, placement, _size(f)) for f in _core.capture_files([path]))
                continue
            worker, files, error = listings[i].result()
            if error is not None:
                raise _failure(error, worker)
            units.extend(_Unit(f, placement, size) for f, size in files or [])
    finally:
        client.cancel(list(listings.values()))
    return units


def _collect(
    client: Any,
    futures: List[Any],
    names: Callable[[int], str],
    keep: Callable[[int, Any], int],
    total: int,
    on_done: Optional[Callable[[int, int], None]],
) -> None:
    """The tasks' results fetched in batches as they come (a round trip per
    result would dominate small files), each given to ``keep(task, result)``,
    which writes it out and returns how many files it held, and released on
    its worker at once: neither side holds the job. ``on_done(files done,
    total)`` after each batch. A task whose workers died every time is a
    CaptureError naming its files (``names(task)``); the tasks not done are
    cancelled after an error or Ctrl-C."""
    from distributed import as_completed

    index = {f.key: t for t, f in enumerate(futures)}
    taken = set()
    done = 0
    try:
        if on_done:
            on_done(0, total)
        for batch in as_completed(futures, with_results=True, raise_errors=False).batches():
            for future, outcome in batch:
                t = index[future.key]
                if isinstance(outcome, BaseException):  # KilledWorker
                    raise CaptureError(f"{names(t)}: {type(outcome).__name__} on the cluster: {outcome}")
                done += keep(t, outcome)
                taken.add(t)
                future.release()
            if on_done:
                on_done(done, total)
    finally:
        client.cancel([f for t, f in enumerate(futures) if t not in taken])


def _each_part(
    client: Any,
    names: Sequence[str],
    settings: Dict[str, Any],
    hosts: Hosts,
    on_done: Optional[Callable[[int, int], None]],
    take: Callable[[int, str, bytes], None],
) -> int:
    """Each file of the job analysed on the cluster into its part, given to
    ``take(index in the job's file order, the file, its part)`` as it
    arrives, in any order; returns the number of files. The parts are in
    the binary form only this version of overlapscope reads (a worker of
    another version is one line naming it). Raises CaptureError (one line:
    the file's problem and the worker that met it); Ctrl-C
    (KeyboardInterrupt) cancels the tasks not yet done."""
    units = _units(client, names, hosts)
    tasks = _tasks(units, sum(client.nthreads().values()))
    job = uuid.uuid4().hex
    futures = [
        client.submit(
            _analyse_files,
            [units[i].path for i in task],
            settings,
            key=f"overlapscope-part-{job}-{t}",
            pure=False,
            **units[task[0]].placement,
        )
        for t, task in enumerate(tasks)
    ]

    def keep(t: int, outcome: Any) -> int:
        worker, version, parts, error = outcome
        if error is not None:
            raise _failure(error, worker)
        if version != _core.__version__:
            raise CaptureError(
                f"worker {worker} runs overlapscope {version}, this client {_core.__version__}: "
                "install one version on every node"
            )
        for i, part in zip(tasks[t], parts):
            take(i, units[i].path, part)
        return len(tasks[t])

    _collect(client, futures, lambda t: ", ".join(units[i].path for i in tasks[t]), keep, len(units), on_done)
    return len(units)


def analyse_parts(
    client: Any,
    names: Sequence[str],
    settings: Dict[str, Any],
    directory: str,
    hosts: Hosts = None,
    on_done: Optional[Callable[[int, int], None]] = None,
) -> List[str]:
    """Each file of the job analysed on the cluster into its part (one
    ``NNNNNNN.part`` file each), written into ``directory`` as it arrives
    (named in the job's file order, which is the order returned; the
    command line's half of ``report --scheduler``). ``on_done(done, total)``
    as they come. Raises as :func:`_each_part`."""

    def write(i: int, _: str, part: bytes) -> None:
        with open(os.path.join(directory, f"{i:07d}.part"), "wb") as f:
            f.write(part)

    count = _each_part(client, names, settings, hosts, on_done, write)
    return [os.path.join(directory, f"{i:07d}.part") for i in range(count)]


def merge_parts(
    client: Any,
    names: Sequence[str],
    settings: Dict[str, Any],
    hosts: Hosts = None,
    on_done: Optional[Callable[[int, int], None]] = None,
) -> Tuple[Any, int]:
    """Each file of the job analysed on the cluster, and its part read into
    the merge here as it arrives (while the other tasks run, so that little
    is left for after the last). Returns the parts (``_core.ArrivingParts``)
    and their number, for ``ArrivingParts.analysis``. Raises as
    :func:`_each_part`."""
    parts = _core.ArrivingParts(settings, list(names))
    count = _each_part(client, names, settings, hosts, on_done, lambda i, path, part: parts.add(i, part, path))
    return parts, count


# Which rank a stuck job waits for is a question about every rank's calls at
# once: a rank without NCCL plugin rows joins its communicator by rank, kernel
# order numbers every process's kernels together, a capture joins a dump's
# group on time. So `hang` is not split: each worker reads the files it was
# given where they lie and sends them (compressed), and the one hang analysis
# runs on the client over copies laid out as the user named the originals;
# the names in its answer are then the user's again.

Renames = List[Tuple[str, str]]  # (the copies' prefix, the user's)


# Lists an input's files: (files, warnings to give the user).
Lister = Callable[[str], Tuple[List[str], List[str]]]


def _hang_files(path: str) -> Tuple[List[str], List[str]]:
    """The files ``overlapscope hang`` reads of an input."""
    captures, dumps = _core.hang_files([path])
    return list(captures) + list(dumps), []


def _listing(path: str, lister: Lister) -> Tuple[str, Optional[Tuple[List[str], List[str]]], Optional[str]]:
    """On a worker: the files of a node-local input, as ``lister`` lists them."""
    try:
        return _worker_address(), lister(path), None
    except (CaptureError, OSError) as e:
        return _worker_address(), None, str(e)


def _read_file(path: str) -> Tuple[str, Optional[bytes], Optional[str]]:
    """On a worker: one file, compressed for the trip (captures and dumps
    shrink several times; a worker holds one file at a time)."""
    try:
        with open(path, "rb") as f:
            return _worker_address(), zlib.compress(f.read(), 1), None
    except OSError as e:
        return _worker_address(), None, f"{path}: cannot read: {e.strerror or e}"


def gather_files(
    client: Any,
    names: Sequence[str],
    directory: str,
    hosts: Hosts = None,
    on_done: Optional[Callable[[int, int], None]] = None,
    lister: Lister = _hang_files,
) -> Tuple[List[str], Renames]:
    """The files ``lister`` lists of ``names`` (by default those ``overlapscope
    hang`` reads; its warnings are given here, in the user's names), read by the
    cluster's workers (on the file's host for ``HOST:PATH``) and copied into
    ``directory``, laid out as named: input i at ``directory/i/NAME``, a
    directory's files under it with their own names. Returns the inputs to
    give the analysis and the renames that turn the copies' names in its
    answer into the user's. Raises CaptureError (the file and the worker);
    Ctrl-C cancels the tasks."""
    inputs: List[str] = []
    renames: Renames = []
    copies: List[Tuple[str, str, Dict[str, Any]]] = []  # (file, where its copy goes, placement)
    first_copy: Dict[Tuple[Optional[str], str], str] = {}
    placed = [(name, *split_host(name, hosts)) for name in names]
    listings = {
        i: client.submit(_listing, path, lister, key=f"overlapscope-list-{uuid.uuid4().hex}", pure=False,
                         **_placement(host))
        for i, (name, host, path) in enumerate(placed)
        if host is not None
    }
    try:
        for i, (name, host, path) in enumerate(placed):
            root = os.path.join(directory, f"{i:06d}")
            # NAME under root, whether absolute or relative: the answer's
            # names are then root's prefix replaced by what preceded PATH.
            prefix = root if path.startswith("/") else root + "/"
            copy = prefix + path
            renames.append((prefix, name[: len(name) - len(path)]))
            if host is None:
                files, said = lister(path)
            else:
                worker, listed, error = listings[i].result()
                if error is not None or listed is None:
                    raise _failure(error or f"{path}: not listed", worker)
                files, said = listed
                said = [w.replace(path, name) for w in said]
            warn_all(said)
            os.makedirs(copy if files != [path] else os.path.dirname(copy) or ".", exist_ok=True)
            given = copy
            for f in files:
                if not f.startswith(path):
                    raise CaptureError(f"{name}: listed {f}, which is not under it")
                seen = first_copy.get((host, f))
                if seen is not None:  # named twice: read once, as one process does
                    if f == path:
                        given = seen
                    continue
                first_copy[(host, f)] = copy + f[len(path):]
                copies.append((f, copy + f[len(path):], _placement(host)))
            inputs.append(given)
    finally:
        client.cancel(list(listings.values()))
    job = uuid.uuid4().hex
    futures = [
        client.submit(_read_file, f, key=f"overlapscope-file-{job}-{k}", pure=False, **placement)
        for k, (f, _, placement) in enumerate(copies)
    ]

    def keep(k: int, outcome: Any) -> int:
        worker, data, error = outcome
        if error is not None:
            raise _failure(error, worker)
        target = copies[k][1]
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as out:
            out.write(zlib.decompress(data))
        return 1

    _collect(client, futures, lambda k: copies[k][0], keep, len(futures), on_done)
    return inputs, renames


def renamed(text: str, renames: Renames) -> str:
    """The copies' names in ``text`` (an answer, a warning, an error) as the user gave them."""
    for copy, user in renames:
        text = text.replace(copy, user)
    return text


def _client_of(client: Any) -> Tuple[Any, bool]:
    """(client, whether we made it): a Client, a scheduler address, or None
    for the current default client."""
    from distributed import Client, get_client

    if client is None:
        return get_client(), False
    if isinstance(client, str):
        return Client(client), True
    return client, False


def _on_cluster(client: Any, show: Optional[Callable[..., None]], verb: str,
                work: Callable[[Any, Callable[[int, int], None]], Any]) -> Any:
    """``work(dask_client, on_done)`` with ``verb``'s progress line (ended
    after it) and the client closed after it when made here."""
    dask_client, owned = _client_of(client)

    def on_done(done: int, total: int) -> None:
        if show is not None:
            show(f"{verb}: {done}/{total} files", done / max(total, 1))

    try:
        return work(dask_client, on_done)
    finally:
        if show is not None:
            show("", None)
        if owned:
            dask_client.close()


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
    parts, count = _on_cluster(
        client, show, "analyzing", lambda c, on_done: merge_parts(c, names, settings, hosts, on_done)
    )
    handle = parts.analysis(count, settings, int(jobs), None if align is None else align == "collectives", show,
                            list(names))
    warn_all(handle.job_warnings)
    return Report(handle)


def hang(
    paths: Paths,
    client: Any = None,
    *,
    hosts: Hosts = None,
    min_wait_ms: float = 1000.0,
    progress: _progress.Progress = None,
) -> Hang:
    """:func:`overlapscope.hang` with the files read on a Dask cluster.

    ``client``, ``paths`` (``HOST:PATH`` for a path on one node's disk) and
    ``hosts`` as in :func:`report`; ``min_wait_ms`` and ``progress`` are
    :func:`overlapscope.hang`'s. The workers read the captures and Flight
    Recorder dumps where they lie and send them; the hang analysis, which
    compares every rank's calls, runs once here. The :class:`~overlapscope.Hang`
    is the one-process answer, its JSON and text the same, naming the files
    as ``paths`` name them.

    Raises :class:`overlapscope.CaptureError` for a file a worker cannot
    read (naming the file and the worker) or bad input; Ctrl-C cancels the
    job's tasks."""
    if not min_wait_ms >= 0:
        raise ValueError(f"min_wait_ms must be 0 or more, not {min_wait_ms!r}")
    names = paths_of(paths)
    show = _progress.callback(progress)
    with tempfile.TemporaryDirectory(prefix="overlapscope-hang-") as scratch:
        inputs, renames = _on_cluster(
            client, show, "reading", lambda c, on_done: gather_files(c, names, scratch, hosts, on_done)
        )
        # The inputs as the user named them, for the answer's "inputs".
        inputs_named = [renamed(i, renames) for i in inputs]
        try:
            out = hang_documents(inputs, min_wait_ms, progress)
        except CaptureError as e:
            raise CaptureError(renamed(str(e), renames)) from None
    warn_all([renamed(w, renames) for w in out["warnings"]])
    document = renamed(out["json"], renames)
    if inputs_named != list(names):  # a file named twice: the answer lists the names given
        parsed = json.loads(document)
        parsed["inputs"] = list(names)
        document = json.dumps(parsed)
    return Hang(document, renamed(out["text"], renames))


from ._hta_cluster import trace_analysis  # noqa: E402 (it builds on gather_files above)


def _main(argv: Optional[Sequence[str]] = None) -> int:
    """``python3 -m overlapscope.distributed parts|files``: the command
    line's half (``overlapscope report/check/hang --scheduler``). ``parts``
    writes the job's parts into an existing directory; ``files`` copies the
    files ``hang`` reads into it and writes ``manifest.json`` there (the
    inputs to analyse, the renames of gather_files). Both say on stdout
    ``done N TOTAL`` after each file, for the command line to draw its own
    progress line; the analysis and the output are the command line's. Exit
    2 with one line on stderr for bad input, 130 on Ctrl-C."""
    parser = argparse.ArgumentParser(prog="python3 -m overlapscope.distributed")
    sub = parser.add_subparsers(dest="command", required=True)
    parts = sub.add_parser("parts", help="analyse a job's files on a Dask cluster into their parts")
    parts.add_argument("--settings", required=True, help="the analysis settings, as JSON")
    files = sub.add_parser("files", help="bring the files `hang` reads from a Dask cluster's workers")
    for command in (parts, files):
        command.add_argument("--scheduler", required=True, help="the Dask scheduler, tcp://HOST:PORT")
        command.add_argument("--output-dir", required=True, help="an empty directory for the parts or files")
        command.add_argument("--expect-version", help="the overlapscope version that will read them")
        command.add_argument("inputs", nargs="+")
    args = parser.parse_args(argv)
    if args.expect_version is not None and args.expect_version != _core.__version__:
        print(f"overlapscope: --scheduler: the command line is overlapscope {args.expect_version}, its Python "
              f"module {_core.__version__} (OVERLAPSCOPE_PYTHONPATH): the parts need one version", file=sys.stderr)
        return 2
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

        if args.command == "parts":
            made = analyse_parts(client, args.inputs, json.loads(args.settings), args.output_dir, None, done)
            print(f"parts {len(made)}", flush=True)
            return 0
        inputs, renames = gather_files(client, args.inputs, os.path.join(args.output_dir, "files"), None, done)
        with open(os.path.join(args.output_dir, "manifest.json"), "w", encoding="utf-8") as f:
            json.dump({"inputs": inputs, "renames": renames}, f)
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

