// What one capture file leaves behind once its devices are analysed and the
// capture itself is freed: the per-device results (docs/design.md section 4,
// everything a device can know alone) plus what the cross-rank part needs.
// The pipeline, `report --partial` and the agent make these; the merge
// (merge.h) puts many of them on one timeline and finishes the analysis.
#pragma once

#include "analyzer/capture/model.h"
#include "analyzer/metrics/analysis.h"

#include <string>
#include <vector>

namespace osc::partial {

// A process as Capture::finalize orders them: known ranks first, by rank,
// then host, then pid.
struct PartProcess {
    int rank = -1;
    std::string host;
    int64_t pid = 0;
};
bool processBefore(const PartProcess& a, const PartProcess& b);

struct FilePart {
    std::string path;
    int64_t originUtcNs = 0;                // wall-clock ns of the file's time 0
    std::vector<PartProcess> processes;     // in the file's own order
    std::vector<std::string> loadWarnings;  // Capture::warnings
    bool savedNothing = false;              // the file is in Capture::savedNothing
    // Devices with processIndex into `processes`, their times on the file's
    // timeline, no cross-rank fields; warnings of the per-process phase.
    Analysis analysis;
    std::vector<int> warningProcess;  // process of each analysis warning
    // Per device what the cross-rank half needs besides its operations: M ∖ C
    // (waiting versus transfer, all-to-all), micro-batches and compute (the
    // pipeline bubble).
    std::vector<DeviceIntervals> intervals;
};

// `capture` holds the processes of one file, aligned and finalized as
// loadCaptures({path}) makes it. --align collectives is a cross-rank step:
// it is ignored here (the merge applies it).
FilePart analyzeFilePart(const Capture& capture, const std::string& path, const AnalysisSettings& settings);
// The same for a capture the caller gives up: what the analysis has read is
// freed as it goes (analyzeProcesses' `spent`).
FilePart analyzeFilePart(Capture&& capture, const std::string& path, const AnalysisSettings& settings);

}  // namespace osc::partial
