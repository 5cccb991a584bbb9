#include "control/control_protocol.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <ctime>
#include <stdexcept>

namespace osc::control {
namespace {

using nlohmann::json;

json statusToJson(const AgentStatus& s) {
    json j{{"pid", s.pid},
           {"rank", s.rank},
           {"host", s.host},
           {"state", s.state},
           {"output", s.output},
           {"captures", s.captures},
           {"dropped", s.dropped},
           {"command", s.commandLine},
           {"streaming", s.streaming},
           {"telemetry", s.telemetry},
           {"saw_steps", s.sawSteps},
           {"step", s.step},
           {"first_whole_step", s.firstWholeStep},
           {"last_closed_step", s.lastClosedStep},
           {"step_seconds", s.stepSeconds},
           {"rows_seen", s.rowsSeen},
           {"job", s.job},
           {"run_id", s.runId},
           {"lookback_first", s.lookbackFirst},
           {"lookback_last", s.lookbackLast},
           {"lookback_steps", s.lookbackSteps}};
    if (s.stepCapture) {
        const StepCaptureStatus& c = *s.stepCapture;
        json sc{{"state", c.state}, {"requested", c.requested}, {"written", c.written},
                {"first", c.first}, {"path", c.path},           {"error", c.error}};
        if (c.atStep) sc["at_step"] = *c.atStep;
        j["step_capture"] = std::move(sc);
    }
    return j;
}

// A whole number from lo to hi, or invalid_argument naming the field.
int64_t wholeNumber(const json& v, const char* field, int64_t lo, int64_t hi) {
    if (!v.is_number()) throw std::invalid_argument(std::string(field) + " must be a number");
    const double d = v.get<double>();
    if (!std::isfinite(d) || d != std::floor(d) || d < static_cast<double>(lo) || d > static_cast<double>(hi))
        throw std::invalid_argument(std::string(field) + " must be a whole number from " + std::to_string(lo) + " to " +
                                    std::to_string(hi));
    return static_cast<int64_t>(d);
}

template <typename T>
void readIfPresent(const json& j, const char* key, T& out) {
    auto it = j.find(key);
    if (it != j.end() && !it->is_null()) out = it->get<T>();
}

}  // namespace

int64_t unixNowMs() {
    timespec ts{};
    ::clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

bool clientGaveUp(const ControlRequest& request) {
    // The deadline is the client's end of waiting rounded down to the
    // millisecond, so from that millisecond on it may be gone: a request read
    // in the very millisecond its client gave up (a stopped rank resumed at
    // once) was acted on when this compared with `>`.
    return request.deadlineUnixMs && unixNowMs() >= *request.deadlineUnixMs;
}

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
        case ControlCommand::Watch:
            j["cmd"] = "watch";
            break;
        case ControlCommand::Dump:
            j["cmd"] = "dump";
            break;
    }
    if (request.durationS) j["duration_s"] = *request.durationS;
    if (request.outputDir) j["output_dir"] = *request.outputDir;
    if (request.steps) j["steps"] = *request.steps;
    if (request.atStep) j["at_step"] = *request.atStep;
    if (request.partial) j["partial"] = true;
    if (request.watchS) j["seconds"] = *request.watchS;
    if (request.deadlineUnixMs) j["deadline_ms"] = *request.deadlineUnixMs;
    if (!request.trigger.empty()) j["trigger"] = request.trigger;
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
    else if (name == "watch")
        r.command = ControlCommand::Watch;
    else if (name == "dump")
        r.command = ControlCommand::Dump;
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
    if (auto v = j.find("steps"); v != j.end() && !v->is_null()) r.steps = wholeNumber(*v, "steps", 1, kMaxSteps);
    if (auto v = j.find("at_step"); v != j.end() && !v->is_null())
        r.atStep = wholeNumber(*v, "at_step", 0, kMaxStepNumber);
    if (auto v = j.find("partial"); v != j.end() && !v->is_null()) {
        if (!v->is_boolean()) throw std::invalid_argument("partial must be true or false");
        r.partial = v->get<bool>();
    }
    if (auto v = j.find("seconds"); v != j.end() && !v->is_null()) {
        if (!v->is_number()) throw std::invalid_argument("seconds must be a number");
        const double s = v->get<double>();
        if (!std::isfinite(s) || s < 0 || s > kMaxSeconds)
            throw std::invalid_argument("seconds must be from 0 to " +
                                        std::to_string(static_cast<int64_t>(kMaxSeconds)));
        r.watchS = s;
    }
    if (auto v = j.find("deadline_ms"); v != j.end() && !v->is_null())
        r.deadlineUnixMs = wholeNumber(*v, "deadline_ms", 0, kMaxStepNumber);
    if (auto v = j.find("trigger"); v != j.end() && !v->is_null()) {
        if (!v->is_string() || v->get<std::string>().size() > kMaxTriggerText)
            throw std::invalid_argument("trigger must be a string of at most " + std::to_string(kMaxTriggerText) +
                                        " bytes");
        r.trigger = v->get<std::string>();
    }
    if (r.steps && r.durationS) throw std::invalid_argument("steps and duration_s exclude each other");
    if ((r.atStep || r.partial) && !r.steps) throw std::invalid_argument("at_step and partial need steps");
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
        readIfPresent(j, "streaming", r.status.streaming);
        readIfPresent(j, "telemetry", r.status.telemetry);
        readIfPresent(j, "saw_steps", r.status.sawSteps);
        readIfPresent(j, "step", r.status.step);
        readIfPresent(j, "first_whole_step", r.status.firstWholeStep);
        readIfPresent(j, "last_closed_step", r.status.lastClosedStep);
        readIfPresent(j, "step_seconds", r.status.stepSeconds);
        readIfPresent(j, "rows_seen", r.status.rowsSeen);
        readIfPresent(j, "job", r.status.job);
        readIfPresent(j, "run_id", r.status.runId);
        readIfPresent(j, "lookback_first", r.status.lookbackFirst);
        readIfPresent(j, "lookback_last", r.status.lookbackLast);
        readIfPresent(j, "lookback_steps", r.status.lookbackSteps);
        if (auto sc = j.find("step_capture"); sc != j.end() && sc->is_object()) {
            StepCaptureStatus c;
            readIfPresent(*sc, "state", c.state);
            readIfPresent(*sc, "requested", c.requested);
            readIfPresent(*sc, "written", c.written);
            readIfPresent(*sc, "first", c.first);
            readIfPresent(*sc, "path", c.path);
            readIfPresent(*sc, "error", c.error);
            if (auto a = sc->find("at_step"); a != sc->end() && a->is_number()) c.atStep = a->get<int64_t>();
            r.status.stepCapture = std::move(c);
        }
    } catch (const json::exception&) {
        throw std::invalid_argument("malformed reply from agent");
    }
    return r;
}

}  // namespace osc::control
