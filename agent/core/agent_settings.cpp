#include "agent/core/agent_settings.h"

#include "control/control_protocol.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string_view>

namespace osc::agent {
namespace {

const char* env(const char* name) {
    const char* v = std::getenv(name);
    return (v && *v) ? v : nullptr;
}

bool parseNumber(const char* text, double& out) {
    char* end = nullptr;
    const double v = std::strtod(text, &end);
    if (end == text || *end != '\0' || !std::isfinite(v) || v < 0) return false;
    out = v;
    return true;
}

void readSeconds(const char* name, double& out, std::string& warnings) {
    if (const char* v = env(name)) {
        if (!parseNumber(v, out)) warnings += std::string(name) + "=" + v + " is not a number of seconds; ignored. ";
    }
}

bool truthy(std::string_view v) { return v == "1" || v == "true" || v == "yes" || v == "on"; }

}  // namespace

AgentSettings settingsFromEnvironment(std::string& warnings) {
    AgentSettings s;
    if (const char* v = env("OVERLAPSCOPE_OUTPUT_DIR")) s.outputDir = v;
    readSeconds("OVERLAPSCOPE_DELAY", s.delayS, warnings);
    readSeconds("OVERLAPSCOPE_DURATION", s.durationS, warnings);
    if (const char* v = env("OVERLAPSCOPE_DORMANT")) s.dormant = truthy(v);
    if (const char* v = env("OVERLAPSCOPE_CONTROL")) s.control = !(std::string_view(v) == "0");
    if (const char* v = env("OVERLAPSCOPE_BUFFER_MB")) {
        double mb = 0;
        if (parseNumber(v, mb) && mb > 0)
            s.bufferBytes = static_cast<size_t>(mb * 1024.0 * 1024.0);
        else
            warnings += std::string("OVERLAPSCOPE_BUFFER_MB=") + v + " is not a positive number; ignored. ";
    }
    if (const char* v = env("OVERLAPSCOPE_COMMIT_MS")) {
        double ms = 0;
        if (parseNumber(v, ms) && ms >= 10) s.commitIntervalMs = static_cast<int>(std::min(ms, 60000.0));
    }
    s.socketDir = socketDirectory();
    return s;
}

size_t activityBufferBytes(size_t boundBytes) {
    constexpr size_t kPreferred = 4u << 20;
    size_t size = std::min(kPreferred, boundBytes / 2);
    size = std::max<size_t>(size, 4096);
    return size & ~size_t{7};
}

}  // namespace osc::agent
