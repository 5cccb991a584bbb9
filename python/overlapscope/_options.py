"""The command line's analysis options as keyword arguments, checked once."""

from __future__ import annotations

import math
import os
from typing import Iterable, List, Optional, Sequence, Union

from . import _core

PathLike = Union[str, "os.PathLike[str]"]
Paths = Union[PathLike, Sequence[PathLike]]

ALIGN_MODES = ("session-start", "collectives")


def paths_of(paths: Paths) -> List[str]:
    """One path or several, as the strings the command line would get."""
    if isinstance(paths, (str, os.PathLike)):
        items: Iterable[PathLike] = [paths]
    else:
        items = paths
    out = [os.fspath(p) for p in items]
    if not out:
        raise ValueError("no input: give a capture file or a directory of them")
    return out


def _regex(name: str, value: str) -> str:
    # The analyzer's own regex engine (ECMAScript) judges, before a long load.
    if not _core.valid_regex(value):
        raise ValueError(f"{name}: invalid regex {value!r} (ECMAScript syntax)")
    return value


def analysis_settings(
    comm_kernel: Union[str, Sequence[str], None] = None,
    comm_copies: bool = False,
    step_pattern: Optional[str] = None,
    align: str = "session-start",
    microbatch_pattern: Optional[str] = None,
    pipeline_stages: int = 0,
    peak_busbw_gbps: Optional[float] = None,
) -> dict:
    """The settings dict the compiled part takes (python/src/module.cpp)."""
    if comm_kernel is None:
        kernels: List[str] = []
    elif isinstance(comm_kernel, str):
        kernels = [comm_kernel]
    else:
        kernels = list(comm_kernel)
    if align not in ALIGN_MODES:
        raise ValueError(f"align must be one of {', '.join(ALIGN_MODES)}, not {align!r}")
    if not 0 <= int(pipeline_stages) <= 65536:
        raise ValueError(f"pipeline_stages must be between 0 and 65536, not {pipeline_stages}")
    if peak_busbw_gbps is not None and not (math.isfinite(float(peak_busbw_gbps)) and float(peak_busbw_gbps) > 0):
        raise ValueError(f"peak_busbw_gbps must be a positive number of GB/s, not {peak_busbw_gbps!r}")
    return {
        "comm_kernel": [_regex("comm_kernel", k) for k in kernels],
        "comm_copies": bool(comm_copies),
        "step_pattern": None if step_pattern is None else _regex("step_pattern", step_pattern),
        "align": align,
        "microbatch_pattern": None if microbatch_pattern is None else _regex("microbatch_pattern", microbatch_pattern),
        "pipeline_stages": int(pipeline_stages),
        "peak_busbw_gbps": None if peak_busbw_gbps is None else float(peak_busbw_gbps),
    }
