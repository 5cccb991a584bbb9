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
// user). Its directories are walked as every output's are (analyzer/output):
// a symbolic link on the way that another user could have planted is
// refused, never followed. The temporary file is created exclusively beside
// it and renamed over it, so a link at `path` itself is replaced, not
// written through. Throws std::runtime_error naming the path.
void writeMetricsFile(const std::string& path, const std::string& text);

// In a directory `spec` (one file per process), the files of this host's
// processes that are gone: a job killed before it could remove its file
// leaves it, and the collector would serve its last figures for ever.
// Only this user's regular files named as metricsFilePath names them.
void removeStaleMetricsFiles(const std::string& spec, const ProcessIdentity& who);

}  // namespace osc::agent::live
