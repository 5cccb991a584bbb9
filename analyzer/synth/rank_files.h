// What every workload model shares: one process per rank, generated into
// in-memory processes or into capture files (one file for one rank, else a
// directory of <host>-<pid>-rank<R>.sqlite).
#pragma once

#include "analyzer/capture/model.h"
#include "analyzer/synth/process_sinks.h"

#include <functional>
#include <string>
#include <vector>

namespace osc::synth {

using IdentityOf = std::function<ProcessIdentity(int rank)>;
// Runs a model, feeding rank r's rows into sinks[r].
using Generator = std::function<void(const std::vector<RowSink*>& sinks)>;

// The whole job in memory: one finalized Process per rank.
Capture synthesizeRanks(int ranks, const std::string& host, int64_t basePid, const IdentityOf& identity,
                        const Generator& generate);

// Writes the job (one file when ranks == 1, else a directory, created if
// needed). Refuses to replace existing files unless `overwrite`; checks every
// target before writing any. Returns the files written.
std::vector<std::string> writeRankFiles(int ranks, const std::string& host, int64_t basePid, const std::string& out,
                                        bool overwrite, const IdentityOf& identity, const Generator& generate);

}  // namespace osc::synth
