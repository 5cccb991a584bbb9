// `--scheduler tcp://HOST:PORT` (report, check): the job's files analysed on
// a Dask cluster by the Python module (python/overlapscope/distributed.py,
// run as `python3 -m overlapscope.distributed parts`), their partial results
// brought back into a private scratch directory. The command then merges
// them as it merges any partials, so its progress lines, output and exit
// codes are those of the one-process path.
#pragma once

#include "analyzer/job/job.h"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace osc::cli {

struct AnalysisFlags;

struct SchedulerFlag {
    std::string address;
    void addTo(CLI::App* cmd);
    bool given() const { return !address.empty(); }
};

// Leaves the command with this status, its message already printed (by the
// Python module: one line naming the file and the worker).
struct ExitWith {
    int status = 2;
};

// The parts of a job analysed on the cluster; the scratch directory is
// removed with this object. Throws ExitWith when the Python side failed (it
// said why) and std::runtime_error when it could not be started. On Ctrl-C
// the tasks are cancelled, the directory removed and the command ends as
// interrupted.
class ClusterParts {
public:
    ClusterParts(const SchedulerFlag& scheduler, const std::vector<std::string>& inputs, const AnalysisFlags& flags);
    ~ClusterParts();
    ClusterParts(const ClusterParts&) = delete;
    ClusterParts& operator=(const ClusterParts&) = delete;

    // The parts as a job of partial results, in the job's file order.
    job::JobInputs inputs() const;

private:
    std::filesystem::path directory_;
};

}  // namespace osc::cli
