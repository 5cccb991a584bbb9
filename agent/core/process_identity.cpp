#include "agent/core/process_identity.h"

#include "control/process_facts.h"

#include <sys/stat.h>
#include <unistd.h>
#include <cstdlib>
#include <fstream>
#include <iterator>

namespace osc::agent {
namespace {

int firstIntFromEnv(std::initializer_list<const char*> names) {
    for (const char* n : names) {
        const char* v = std::getenv(n);
        if (!v || !*v) continue;
        char* end = nullptr;
        const long x = std::strtol(v, &end, 10);
        if (*end == '\0' && x >= 0 && x < (1L << 30)) return static_cast<int>(x);
    }
    return -1;
}

// Taken when the name or a side file of it is there, links included (lstat):
// a name someone planted in a shared directory is passed over, not fought for.
bool nameTaken(const std::string& path) {
    struct stat st {};
    for (const char* suffix : {"", "-wal", "-shm", "-journal"})
        if (::lstat((path + suffix).c_str(), &st) == 0) return true;
    return false;
}

}  // namespace

ProcessIdentity currentProcessIdentity() {
    ProcessIdentity id;
    char host[256] = {};
    if (::gethostname(host, sizeof(host) - 1) == 0 && host[0])
        id.host = host;
    else
        id.host = "localhost";
    id.pid = ::getpid();
    id.rank = control::firstWholeNumber(control::kRankVariables, [](const char* n) { return std::getenv(n); });
    id.localRank = firstIntFromEnv({"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"});
    id.worldSize = firstIntFromEnv({"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS", "PMI_SIZE"});

    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    bool first = true;
    size_t pos = 0;
    while (pos < raw.size()) {
        size_t next = raw.find('\0', pos);
        if (next == std::string::npos) next = raw.size();
        std::string arg = raw.substr(pos, next - pos);
        if (first) {
            const size_t slash = arg.rfind('/');
            id.executable = slash == std::string::npos ? arg : arg.substr(slash + 1);
            first = false;
        } else {
            id.commandLine += ' ';
        }
        id.commandLine += arg;
        pos = next + 1;
    }
    return id;
}

std::string captureFileName(const std::string& dir, const ProcessIdentity& who, uint64_t sequence) {
    std::string base = dir.empty() ? std::string(".") : dir;
    if (base.back() != '/') base += '/';
    base += who.host + "-" + std::to_string(who.pid);
    if (who.rank >= 0) base += "-rank" + std::to_string(who.rank);
    for (uint64_t n = sequence;; ++n) {
        std::string candidate = n <= 1 ? base + ".sqlite" : base + "-" + std::to_string(n) + ".sqlite";
        if (!nameTaken(candidate)) return candidate;
    }
}

}  // namespace osc::agent
