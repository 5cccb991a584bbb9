"""The HTA drop-in loaded through a Dask cluster (issue 44):
``overlapscope.distributed.trace_analysis``.

HTA's answers compare ranks (the overlap table, the temporal breakdown over
the job, the idle-time breakdown's per-rank rows all come from one
``TraceAnalysis``), so the traces are not analysed apart: as for ``hang``,
the workers read each rank's trace where it lies and send it compressed,
and the one load runs here. The copies live as long as the
``TraceAnalysis`` does, since some of its methods read a trace again
(``get_frequent_cuda_kernel_sequences`` marks patterns in it)."""

from __future__ import annotations

import os
import tempfile
import warnings
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _progress
from ._errors import CaptureError, OverlapscopeWarning, warn_all

Traces = Union[str, Sequence[str], Mapping[int, str]]


def _listed(path: str) -> Tuple[List[str], List[str]]:
    """On a worker (or here): the traces HTA reads of a directory, or the file."""
    from .hta import _listed_traces, _required

    kept, said = _listed_traces(path)
    return _required(kept, path), said


def trace_analysis(
    traces: Traces,
    client: Any = None,
    *,
    hosts: Any = None,
    include_last_profiler_step: bool = False,
    written_into: Optional[str] = None,
    progress: _progress.Progress = None,
) -> Any:
    """:class:`overlapscope.hta.TraceAnalysis` for traces on a cluster's nodes.

    ``traces``: a trace directory, a list of trace files or directories, or
    a dict rank -> trace file, as ``TraceAnalysis`` takes them; each may be
    ``HOST:PATH`` for a path on one node's own disk (``hosts`` as in
    :func:`overlapscope.distributed.report`). ``client``: a
    ``distributed.Client``, a scheduler address or None for the current
    client. The answers are those of ``TraceAnalysis`` on the same traces in
    one process. Warnings and errors name the traces as given. What HTA
    writes beside a trace (``generate_trace_with_counters``) goes to
    ``written_into`` (default: the current directory), since the trace's own
    directory is on another machine.

    Raises :class:`overlapscope.CaptureError` for a trace a worker cannot
    read (naming it and the worker) or bad input; Ctrl-C cancels the tasks."""
    from .distributed import _on_cluster, gather_files, renamed
    from .hta import TraceAnalysis

    ranks: Optional[List[int]] = None
    if isinstance(traces, Mapping):
        ranks = [int(r) for r in traces.keys()]
        names = [str(p) for p in traces.values()]
    elif isinstance(traces, (str, os.PathLike)):
        names = [os.fspath(traces)]
    else:
        names = [os.fspath(p) for p in traces]
    if not names:
        raise CaptureError("no trace named")
    show = _progress.callback(progress)
    copies = tempfile.TemporaryDirectory(prefix="overlapscope-hta-")
    try:
        inputs, renames = _on_cluster(
            client, show, "reading",
            lambda c, on_done: gather_files(c, names, copies.name, hosts, on_done, lister=_listed),
        )
        files = _traces_of(inputs)
        if ranks is not None and len(files) != len(ranks):
            raise CaptureError(f"{len(ranks)} ranks named, but their paths hold {len(files)} traces")
        trace_files: Union[List[str], Dict[int, str]] = files if ranks is None else dict(zip(ranks, files))
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always", OverlapscopeWarning)
            try:
                analysis = TraceAnalysis(
                    trace_files=trace_files, trace_dir=copies.name,
                    include_last_profiler_step=include_last_profiler_step, progress=progress,
                )
            except CaptureError as e:
                raise CaptureError(renamed(str(e), renames)) from None
    except BaseException:
        copies.cleanup()
        raise
    warn_all([renamed(str(w.message), renames) for w in said if issubclass(w.category, OverlapscopeWarning)])
    analysis._copies = copies  # removed with the analysis
    analysis._written_into = os.path.abspath(written_into or os.curdir)
    return analysis


def _traces_of(inputs: Sequence[str]) -> List[str]:
    """The copied inputs' traces, in the order one process lists them."""
    out: List[str] = []
    for given in inputs:
        out.extend(_listed(given)[0] if os.path.isdir(given) else [given])
    return out
