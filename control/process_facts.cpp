#include "control/process_facts.h"

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>

namespace osc::control {
namespace {

std::string readAll(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

int firstWholeNumber(const char* const* names, size_t count, const VariableLookup& lookup) {
    for (size_t i = 0; i < count; ++i) {
        const char* v = lookup(names[i]);
        if (!v || !*v) continue;
        char* end = nullptr;
        const long x = std::strtol(v, &end, 10);
        if (*end == '\0' && x >= 0 && x < (1L << 30)) return static_cast<int>(x);
    }
    return -1;
}

std::string firstText(const char* const* names, size_t count, const VariableLookup& lookup) {
    for (size_t i = 0; i < count; ++i)
        if (const char* v = lookup(names[i]); v && *v) return v;
    return {};
}

std::optional<ProcessFacts> processFacts(int64_t pid) {
    const std::string dir = "/proc/" + std::to_string(pid);
    const std::string stat = readAll(dir + "/stat");
    if (stat.empty()) return std::nullopt;
    ProcessFacts f;
    // "PID (COMM) S ...": the command may hold spaces and parentheses.
    if (const size_t close = stat.rfind(')'); close != std::string::npos && close + 2 < stat.size())
        f.state = stat[close + 2];
    std::map<std::string, std::string> environment;
    const std::string environ = readAll(dir + "/environ");
    for (size_t pos = 0; pos < environ.size();) {
        size_t end = environ.find('\0', pos);
        if (end == std::string::npos) end = environ.size();
        const std::string entry = environ.substr(pos, end - pos);
        if (const size_t eq = entry.find('='); eq != std::string::npos)
            environment.emplace(entry.substr(0, eq), entry.substr(eq + 1));
        pos = end + 1;
    }
    const VariableLookup lookup = [&](const char* name) -> const char* {
        const auto it = environment.find(name);
        return it == environment.end() ? nullptr : it->second.c_str();
    };
    f.rank = firstWholeNumber(kRankVariables, lookup);
    f.job = firstText(kJobVariables, std::size(kJobVariables), lookup);
    const std::string cmdline = readAll(dir + "/cmdline");
    for (size_t pos = 0; pos < cmdline.size();) {
        size_t end = cmdline.find('\0', pos);
        if (end == std::string::npos) end = cmdline.size();
        if (!f.commandLine.empty()) f.commandLine += ' ';
        f.commandLine += cmdline.substr(pos, end - pos);
        pos = end + 1;
    }
    return f;
}

}  // namespace osc::control
