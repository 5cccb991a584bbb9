// Writes a capture as a Chrome trace (JSON) that opens in Perfetto and
// chrome://tracing, and that our own Kineto reader reads back:
// - one trace process per capture process (rank), named "rank 0 (host:pid)";
// - one thread per GPU stream, named "stream 7 (compute)" by what runs on it,
//   plus one per CPU thread that made CUDA calls or annotations;
// - per device a lane "overlap / exposed comm" with the windows where
//   communication is hidden behind compute (C ∩ M) and where it is exposed (M ∖ C);
// - flow arrows (ph s/f, cat ac2g) from each API call to the GPU work it launched.
// Events use Kineto's categories and argument names ("kernel", args.device,
// args.stream, args.correlation), which is what makes the round trip work.
#pragma once

#include "analyzer/capture/model.h"
#include "analyzer/metrics/analysis.h"

#include <functional>
#include <ostream>

namespace osc {

struct ChromeExportOptions {
    AnalysisSettings settings;  // which kernels count as communication
    bool overlapLanes = true;
    bool flows = true;
    // Called with the fraction of processes written (may be empty).
    std::function<void(double)> progress;
};

// Throws std::invalid_argument for an invalid pattern in settings.
void writeChromeTrace(const Capture& capture, std::ostream& out, const ChromeExportOptions& options = {});

// The trace thread id we give a GPU lane, and the ids of the two extra lanes.
int64_t chromeStreamTid(uint32_t device, uint32_t stream);
int64_t chromeOverlapTid(uint32_t device);
int64_t chromeGpuRangeTid(uint32_t device);

}  // namespace osc
