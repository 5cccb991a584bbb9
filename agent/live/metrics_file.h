// `--metrics-file`: the telemetry as a Prometheus text file, rewritten the
// way node_exporter's textfile collector expects: written under a temporary
// name in the same directory (not ending in .prom, so the collector never
// reads half a file) and renamed over the old one, so a reader sees the
// previous text or the new one and nothing between.
#pragma once

#include "agent/core/process_identity.h"

#include <string>

namespace osc::agent::live {

// Where this process writes. A directory (one that exists, or a path ending
// in '/') gets "overlapscope-<host>-<pid>[-rank<R>].prom" in it, so every
// process of a node can share one collector directory; otherwise {rank},
// {local_rank}, {pid} and {host} in the path are replaced ({rank} by "" for
// a process without one).
std::string metricsFilePath(const std::string& spec, const ProcessIdentity& who);

// Replaces `path` with `text` (mode 0644: the collector may run as another
// user). The temporary file is created exclusively (mkstemp), so a planted
// symbolic link is never followed, and rename() replaces a link at `path`
// rather than writing through it. Throws std::runtime_error naming the path.
void writeMetricsFile(const std::string& path, const std::string& text);

}  // namespace osc::agent::live
