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

from ._core import __version__
from ._errors import CaptureError, OverlapscopeWarning
from ._diff import Diff, diff
from ._hang import Hang, hang
from ._report import Report, report, write_partial
from ._trace import Trace, load
from ._whatif import WhatIf, whatif
from . import hta

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
