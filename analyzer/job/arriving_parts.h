// A job's file parts as they arrive from elsewhere, in any order
// (overlapscope.distributed: Dask's tasks, as each finishes), read into a
// merge's set in file order meanwhile, so that little of the merge is left
// for after the last one. The devices are kept as decoded: the caller keeps
// every one anyway (mergedAnalysis).
#pragma once

#include "analyzer/job/job.h"
#include "analyzer/partial/part_set.h"
#include "analyzer/partial/prepared_device.h"

#include <cstddef>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace osc::job {

class ArrivingParts {
public:
    // `inputs`: what the user named, for the report.
    ArrivingParts(const AnalysisSettings& settings, std::vector<std::string> inputs);

    // Part `index` of the job (0, 1, ... in the job's file order): device_codec's
    // bytes of one file (encodeFilePart). Throws CaptureError naming `origin`
    // for bytes that are no part; std::invalid_argument for an index given twice.
    void add(size_t index, std::string_view bytes, const std::string& origin);

    // Once parts 0 to count - 1 all came: the job's analysis, as analyzeJob
    // of them. Throws what filling the set threw (a capture given twice),
    // std::invalid_argument for a part that never came. Once only.
    Analysis analysis(size_t count, const JobRequest& request, const JobProgress& progress = {});

private:
    partial::PartSet set_;
    std::vector<std::unique_ptr<partial::PreparedPart>> waiting_;  // by index, until its turn
    std::vector<char> given_;
    size_t next_ = 0;  // the first part not yet in the set
    std::exception_ptr error_;
};

}  // namespace osc::job
