// `--scheduler tcp://HOST:PORT` (report, check, hang): the job's files analysed on
// a Dask cluster by the Python module (python/overlapscope/distributed.py,
// run as `python3 -m overlapscope.distributed parts`), their parts (binary,
// as `report --jobs N` keeps its threads' parts) brought back into a private
// scratch directory. The command then merges them as it merges its threads'
// parts, so its progress lines, output and exit codes are those of the
// one-process path.
#pragma once

#include "analyzer/job/job.h"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace osc::cli {

struct AnalysisFlags;

struct SchedulerFlag {
    std::string address;
    // `what`: the option's help, when not report's and check's.
    void addTo(CLI::App* cmd, const std::string& what = {});
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

    // The parts as a job of file parts, in the job's file order.
    job::JobInputs inputs() const;

private:
    std::filesystem::path directory_;
};

// `hang --scheduler`: the files `hang` reads, brought from the workers
// (overlapscope.distributed's gather_files) into a private scratch directory
// laid out as the inputs name them; the one hang analysis runs here on them
// (it compares every rank's calls: it is not split). Removed with this
// object; throws as ClusterParts does.
class ClusterFiles {
public:
    ClusterFiles(const SchedulerFlag& scheduler, const std::vector<std::string>& inputs);
    ~ClusterFiles();
    ClusterFiles(const ClusterFiles&) = delete;
    ClusterFiles& operator=(const ClusterFiles&) = delete;

    // What to give the analysis: the copies, as the inputs named the originals.
    const std::vector<std::string>& inputs() const { return inputs_; }
    // `text` (the answer, a warning, an error) naming the originals again.
    std::string named(std::string text) const;

private:
    std::filesystem::path directory_;
    std::vector<std::string> inputs_;
    std::vector<std::pair<std::string, std::string>> renames_;  // (the copies' prefix, the user's)
};

}  // namespace osc::cli
