"""overlapscope for notebooks: how much GPU communication is hidden behind
computation, as pandas DataFrames.

>>> import overlapscope
>>> r = overlapscope.report("run/")          # a capture, a trace, or a directory of ranks
>>> r.devices[["rank", "device", "gpu", "overlap_ratio", "exposed_comm_ns"]]
>>> r.steps, r.collectives, r.to_dict()      # the command line's JSON report, exactly

- :func:`report`: the overlap report (``overlapscope report``) as a :class:`Report`;
- :func:`load`: kernels, copies, ranges, API calls as DataFrames (:class:`Trace`);
- :func:`whatif`: other DDP bucket sizes (``overlapscope whatif``);
- :func:`diff`: two runs side by side (``overlapscope diff``);
- :func:`hang`: which rank a stuck job waits for (``overlapscope hang``);
- :mod:`overlapscope.hta`: a drop-in for Holistic Trace Analysis' ``TraceAnalysis``.

The analysis is overlapscope's C++ engine; it runs without the GIL. See
docs/python.md.
"""

import importlib
from typing import Any, List

from ._core import __version__
from ._errors import CaptureError, OverlapscopeWarning

# The rest is imported on first use (PEP 562): `from overlapscope.hta import
# TraceAnalysis` starts reading traces without importing the report, diff
# and what-if modules first.
_WHERE = {
    "Diff": "._diff",
    "diff": "._diff",
    "Hang": "._hang",
    "hang": "._hang",
    "Report": "._report",
    "report": "._report",
    "write_partial": "._report",
    "Trace": "._trace",
    "load": "._trace",
    "WhatIf": "._whatif",
    "whatif": "._whatif",
}

__all__ = [
    "CaptureError",
    "Diff",
    "Hang",
    "OverlapscopeWarning",
    "Report",
    "Trace",
    "WhatIf",
    "__version__",
    "diff",
    "hang",
    "hta",
    "load",
    "report",
    "whatif",
    "write_partial",
]


def __getattr__(name: str) -> Any:
    if name == "hta":
        return importlib.import_module(".hta", __name__)
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name], __name__), name)
    globals()[name] = value
    return value


def __dir__() -> List[str]:
    return sorted(set(globals()) | set(_WHERE) | {"hta"})
