#include "control/control_protocol.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <stdexcept>

namespace osc::control {
namespace {

using nlohmann::json;

json statusToJson(const AgentStatus& s) {
    return json{{"pid", s.pid},       {"rank", s.rank},         {"host", s.host},       {"state", s.state},
                {"output", s.output}, {"captures", s.captures}, {"dropped", s.dropped}, {"command", s.commandLine}};
}

template <typename T>
void readIfPresent(const json& j, const char* key, T& out) {
    auto it = j.find(key);
    if (it != j.end() && !it->is_null()) out = it->get<T>();
}

}  // namespace

std::string encodeRequest(const ControlRequest& request) {
    json j;
    switch (request.command) {
        case ControlCommand::Status:
            j["cmd"] = "status";
            break;
        case ControlCommand::Start:
            j["cmd"] = "start";
            break;
        case ControlCommand::Stop:
            j["cmd"] = "stop";
            break;
    }
    if (request.durationS) j["duration_s"] = *request.durationS;
    if (request.outputDir) j["output_dir"] = *request.outputDir;
    return j.dump() + "\n";
}

ControlRequest parseRequest(const std::string& line) {
    if (line.size() > kMaxMessageBytes) throw std::invalid_argument("message too long");
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) throw std::invalid_argument("not a JSON object");
    auto cmd = j.find("cmd");
    if (cmd == j.end() || !cmd->is_string()) throw std::invalid_argument("missing \"cmd\"");
    ControlRequest r;
    const std::string name = cmd->get<std::string>();
    if (name == "status")
        r.command = ControlCommand::Status;
    else if (name == "start")
        r.command = ControlCommand::Start;
    else if (name == "stop")
        r.command = ControlCommand::Stop;
    else
        throw std::invalid_argument("unknown command \"" + name + "\"");
    if (auto d = j.find("duration_s"); d != j.end() && !d->is_null()) {
        if (!d->is_number()) throw std::invalid_argument("duration_s must be a number");
        const double v = d->get<double>();
        if (!std::isfinite(v) || v < 0 || v > kMaxSeconds)
            throw std::invalid_argument("duration_s must be from 0 to " +
                                        std::to_string(static_cast<int64_t>(kMaxSeconds)));
        if (v > 0) r.durationS = v;
    }
    if (auto o = j.find("output_dir"); o != j.end() && !o->is_null()) {
        if (!o->is_string() || o->get<std::string>().empty())
            throw std::invalid_argument("output_dir must be a non-empty string");
        r.outputDir = o->get<std::string>();
    }
    return r;
}

std::string encodeReply(const ControlReply& reply) {
    json j = statusToJson(reply.status);
    j["ok"] = reply.ok;
    if (!reply.error.empty()) j["error"] = reply.error;
    return j.dump() + "\n";
}

ControlReply parseReply(const std::string& line) {
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) throw std::invalid_argument("malformed reply from agent");
    ControlReply r;
    try {
        readIfPresent(j, "ok", r.ok);
        readIfPresent(j, "error", r.error);
        readIfPresent(j, "pid", r.status.pid);
        readIfPresent(j, "rank", r.status.rank);
        readIfPresent(j, "host", r.status.host);
        readIfPresent(j, "state", r.status.state);
        readIfPresent(j, "output", r.status.output);
        readIfPresent(j, "captures", r.status.captures);
        readIfPresent(j, "dropped", r.status.dropped);
        readIfPresent(j, "command", r.status.commandLine);
    } catch (const json::exception&) {
        throw std::invalid_argument("malformed reply from agent");
    }
    return r;
}

}  // namespace osc::control
