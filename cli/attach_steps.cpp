#include "cli/attach_steps.h"

#include "analyzer/capture/printable_text.h"
#include "control/control_client.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <thread>

namespace osc::cli {
namespace {

using namespace osc::control;
using Clock = std::chrono::steady_clock;

// Each request's wait: 10 s, or $OVERLAPSCOPE_ANSWER_TIMEOUT_MS when set.
int requestTimeoutMs() { return answerTimeoutMs(10000); }

struct Target {
    std::string socket;
    AgentStatus status;
    bool failed = false;
    std::string lastProgress;
    std::string silence;  // why its last status request went unanswered (waitForCaptures)
};

// A status request. An agent that does not answer is failed, unless
// `askAgain` (while the captures run): then it is asked again until the wait
// gives up, so a process that stops for a while (a loaded machine, a
// debugger) finishes its capture all the same, and only one that stays
// silent is named, at the end.
bool refresh(Target& t, bool askAgain = false) {
    try {
        t.status = sendRequest(t.socket, ControlRequest{}, requestTimeoutMs()).status;
        t.silence.clear();
        return true;
    } catch (const std::runtime_error& e) {
        if (askAgain && dynamic_cast<const NoAnswer*>(&e)) {
            if (t.silence.empty())
                std::fprintf(stderr, "overlapscope: %s; asking again\n", printable(e.what()).c_str());
            t.silence = e.what();
            return false;
        }
        std::fprintf(stderr, "overlapscope: %s\n", printable(e.what()).c_str());
        t.failed = true;
        return false;
    }
}

bool request(Target& t, const ControlRequest& r, std::string* error = nullptr) {
    try {
        const ControlReply reply = sendRequest(t.socket, r, requestTimeoutMs());
        t.status = reply.status;
        if (reply.ok) return true;
        if (error) *error = reply.error;
        std::fprintf(stderr, "overlapscope: %s: %s\n", agentName(reply.status).c_str(), printable(reply.error).c_str());
    } catch (const std::runtime_error& e) {
        std::fprintf(stderr, "overlapscope: %s\n", printable(e.what()).c_str());
    }
    t.failed = true;
    return false;
}

// Why an agent shows no whole step yet, once the wait is over.
std::string noStepsReason(const AgentStatus& s, double waitedS) {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.0f s", waitedS);
    if (s.sawSteps)
        return std::string("no whole step in ") + seconds + " (steps are longer than that?); try a longer --timeout";
    if (s.rowsSeen == 0)
        return std::string("no GPU activity recorded in ") + seconds + " (is the job running on a GPU?)";
    return std::string("no step ranges in ") + seconds +
           " of GPU activity: steps are NVTX or profiler ranges named like ProfilerStep#N, step N or iteration N "
           "(--step-pattern at `overlapscope run`; NVTX reaches the agent only when the job was started by "
           "`overlapscope run`)";
}

// The first step every agent holds whole and has not passed, with `leadS`
// to spare for the requests to reach them all.
int64_t plannedStep(const std::vector<Target>& targets, double leadS) {
    int64_t first = 0;
    double shortest = 0;
    for (const Target& t : targets) {
        if (t.failed) continue;
        first = std::max({first, t.status.step + 1, t.status.firstWholeStep});
        if (t.status.stepSeconds > 0 && (shortest == 0 || t.status.stepSeconds < shortest))
            shortest = t.status.stepSeconds;
    }
    const double lead = shortest > 0 ? std::ceil(leadS / shortest) : 1;
    return first + static_cast<int64_t>(std::clamp(lead, 1.0, 1e6));
}

std::string progressText(const StepCaptureStatus& c) {
    std::string text = c.state + " " + std::to_string(c.written) + "/" + std::to_string(c.requested) + " steps";
    if (c.first >= 0) text += " from step " + std::to_string(c.first);
    return text;
}

bool ended(const StepCaptureStatus& c) { return c.state == "done" || c.state == "failed" || c.state == "stopped"; }

std::string partialPathOf(const std::string& capture) {
    const std::string suffix = ".sqlite";
    std::string base = capture;
    if (base.size() > suffix.size() && base.compare(base.size() - suffix.size(), suffix.size(), suffix) == 0)
        base.resize(base.size() - suffix.size());
    return base + ".partial.json";
}

int waitForCaptures(std::vector<Target>& targets, const StepAttachOptions& o) {
    // Steps, then the partial (about a second per million kernels): the
    // deadline grows with every step that comes.
    auto deadline = Clock::now() + std::chrono::duration<double>(o.timeoutS);
    std::map<std::string, size_t> written;
    for (;;) {
        bool all = true;
        for (Target& t : targets) {
            if (t.failed) continue;
            if (!refresh(t, /*askAgain=*/true)) {
                all = all && t.failed;
                continue;
            }
            const auto& c = t.status.stepCapture;
            if (!c) {
                std::fprintf(stderr, "overlapscope: %s: no step capture\n", agentName(t.status).c_str());
                t.failed = true;
                continue;
            }
            const std::string now = progressText(*c);
            if (now != t.lastProgress) {
                std::printf("%s: %s\n", agentName(t.status).c_str(), printable(now).c_str());
                std::fflush(stdout);
                t.lastProgress = now;
                deadline = Clock::now() + std::chrono::duration<double>(o.timeoutS);
            }
            if (!ended(*c)) {
                all = false;
                continue;
            }
            if (c->state != "done") {
                std::fprintf(stderr, "overlapscope: %s: step capture %s: %s\n", agentName(t.status).c_str(),
                             c->state.c_str(), printable(c->error).c_str());
                t.failed = true;
                continue;
            }
            std::error_code ec;
            if (o.partial && !std::filesystem::exists(partialPathOf(c->path), ec)) all = false;
        }
        if (all) break;
        if (Clock::now() > deadline) {
            for (const Target& t : targets)
                if (!t.failed && !t.silence.empty())
                    std::fprintf(stderr, "overlapscope: %s\n", printable(t.silence).c_str());
            std::fprintf(stderr, "overlapscope: step captures still running after %.0f s without progress\n",
                         o.timeoutS);
            return 1;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    int failures = 0;
    for (const Target& t : targets) {
        if (t.failed) {
            ++failures;
            continue;
        }
        const auto& c = *t.status.stepCapture;
        std::printf("%s: wrote %s (steps %lld to %lld)\n", agentName(t.status).c_str(), printable(c.path).c_str(),
                    static_cast<long long>(c.first), static_cast<long long>(c.first + c.written - 1));
    }
    return failures ? 1 : 0;
}

// Every agent records (a dormant one starts now) until it has shown a whole
// step, so that one step number can be chosen for all. With
// `giveUpWithoutStepsS`, the wait ends early once that long has passed
// without any agent showing a step range at all (a job without steps).
enum class StepsSeen { All, None, Some };

StepsSeen watchForSteps(std::vector<Target>& targets, double timeoutS, std::optional<double> giveUpWithoutStepsS,
                        bool needStepTime) {
    ControlRequest watch;
    watch.command = ControlCommand::Watch;
    watch.watchS = timeoutS + 120;
    for (Target& t : targets)
        if (refresh(t) && !t.status.streaming) request(t, watch);
    const auto ready = [&](const Target& t) {
        return t.status.firstWholeStep >= 0 && (!needStepTime || t.status.stepSeconds > 0);
    };
    const auto start = Clock::now();
    const auto deadline = start + std::chrono::duration<double>(timeoutS);
    for (;;) {
        bool all = true, anySteps = false;
        for (Target& t : targets) {
            if (t.failed || !refresh(t)) continue;
            all = all && ready(t);
            anySteps = anySteps || t.status.sawSteps;
        }
        if (all) break;
        const double waited = std::chrono::duration<double>(Clock::now() - start).count();
        if (giveUpWithoutStepsS && !anySteps && waited >= *giveUpWithoutStepsS) return StepsSeen::None;
        if (Clock::now() > deadline) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    bool all = true, none = true;
    for (const Target& t : targets) {
        if (t.failed) continue;
        all = all && ready(t);
        none = none && !t.status.sawSteps;
    }
    return all ? StepsSeen::All : (none ? StepsSeen::None : StepsSeen::Some);
}

bool anyFailed(const std::vector<Target>& targets) {
    return std::any_of(targets.begin(), targets.end(), [](const Target& t) { return t.failed; });
}

// Sends every agent not failed the step capture `start` and says what each began.
void startStepCaptures(std::vector<Target>& targets, const ControlRequest& start) {
    for (Target& t : targets) {
        if (t.failed || !request(t, start)) continue;
        const int64_t at = start.atStep.value_or(-1);
        std::printf("%s: capturing steps %lld to %lld to %s\n", agentName(t.status).c_str(), static_cast<long long>(at),
                    static_cast<long long>(at + start.steps.value_or(1) - 1),
                    t.status.stepCapture ? printable(t.status.stepCapture->path).c_str() : "?");
    }
    std::fflush(stdout);
}

std::vector<Target> targetsOf(const std::vector<std::string>& sockets) {
    std::vector<Target> targets;
    for (const auto& s : sockets) targets.push_back({s, {}, false, {}, {}});
    return targets;
}

}  // namespace

std::string agentName(const AgentStatus& s) {
    std::string text = "pid " + std::to_string(s.pid);
    if (s.rank >= 0) text += " rank " + std::to_string(s.rank);
    return text;
}

int attachSteps(const std::vector<std::string>& sockets, const StepAttachOptions& o) {
    std::vector<Target> targets = targetsOf(sockets);
    std::optional<int64_t> at = o.atStep;
    if (!at) {
        const auto start = Clock::now();
        watchForSteps(targets, o.timeoutS, std::nullopt, false);
        const double waited = std::chrono::duration<double>(Clock::now() - start).count();
        for (Target& t : targets)
            if (!t.failed && t.status.firstWholeStep < 0) {
                std::fprintf(stderr, "overlapscope: %s: %s\n", agentName(t.status).c_str(),
                             noStepsReason(t.status, waited).c_str());
                t.failed = true;
            }
        if (std::all_of(targets.begin(), targets.end(), [](const Target& t) { return t.failed; })) return 1;
        at = plannedStep(targets, o.leadS);
        if (o.plan) {
            std::printf("%lld\n", static_cast<long long>(*at));
            return anyFailed(targets) ? 1 : 0;
        }
    }
    ControlRequest start;
    start.command = ControlCommand::Start;
    start.steps = o.steps;
    start.atStep = at;
    start.partial = o.partial;
    start.outputDir = o.outputDir;
    startStepCaptures(targets, start);
    if (o.wait) return waitForCaptures(targets, o);
    return anyFailed(targets) ? 1 : 0;
}

int attachAligned(const std::vector<std::string>& sockets, double durationS, const StepAttachOptions& o,
                  const std::function<int()>& plainAttach) {
    // A job without step ranges shows none in this long, whatever its rate.
    constexpr double kNoStepsS = 3;
    std::vector<Target> targets = targetsOf(sockets);
    const StepsSeen seen = watchForSteps(targets, o.timeoutS, kNoStepsS, true);
    if (anyFailed(targets)) return 1;  // an agent went away: nothing started anywhere
    if (seen != StepsSeen::All) {
        std::fprintf(stderr,
                     seen == StepsSeen::None
                         ? "overlapscope: no step ranges seen in %.0f s: every rank captures from now on\n"
                         : "overlapscope: not every rank showed a whole step in %.0f s: every rank captures from "
                           "now on (their windows may begin at different steps)\n",
                     seen == StepsSeen::None ? kNoStepsS : o.timeoutS);
        return plainAttach();
    }
    double stepS = 0;
    for (const Target& t : targets) stepS = std::max(stepS, t.status.stepSeconds);
    const int64_t steps =
        durationS > 0 ? std::clamp<int64_t>(static_cast<int64_t>(std::ceil(durationS / stepS - 1e-9)), 1, kMaxSteps)
                      : kMaxSteps;
    const int64_t at = plannedStep(targets, o.leadS);
    if (durationS > 0)
        std::printf(
            "the job has steps of about %.3g s: every rank captures steps %lld to %lld (about %.3g s); "
            "--now for a window that starts at once on each rank\n",
            stepS, static_cast<long long>(at), static_cast<long long>(at + steps - 1), durationS);
    else
        std::printf(
            "the job has steps of about %.3g s: every rank captures from step %lld until detach; --now for "
            "a capture that starts at once on each rank\n",
            stepS, static_cast<long long>(at));
    ControlRequest start;
    start.command = ControlCommand::Start;
    start.steps = steps;
    start.atStep = at;
    start.outputDir = o.outputDir;
    startStepCaptures(targets, start);
    return anyFailed(targets) ? 1 : 0;
}

}  // namespace osc::cli
