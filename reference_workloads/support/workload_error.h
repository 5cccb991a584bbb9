// Error types shared by the reference workloads. Each carries the single line
// the user sees; main() maps them to exit codes (usage 2, runtime/check 1).
#pragma once

#include <stdexcept>
#include <string>

namespace oscwl {

// A bad command line or launch environment: printed as one line, exit 2.
class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Something failed while running (CUDA, NCCL, rendezvous, result check): exit 1.
class WorkloadError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Thrown by the parser for --help so that main() prints usage and exits 0.
class HelpRequested : public std::runtime_error {
public:
    explicit HelpRequested(const std::string& usage) : std::runtime_error(usage) {}
};

}  // namespace oscwl
