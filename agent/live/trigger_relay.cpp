#include "agent/live/trigger_relay.h"

#include "analyzer/capture/background_thread.h"
#include "analyzer/output/safe_output.h"
#include "control/control_client.h"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <map>
#include <set>

namespace osc::agent::live {
namespace {

std::string fileSafe(const std::string& key) {
    std::string out;
    for (char c : key)
        out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') ? c : '_';
    return out.substr(0, 128);
}

}  // namespace

TriggerRelay::TriggerRelay(Options options, Arm arm) : options_(std::move(options)), arm_(std::move(arm)) {
    const std::string key = !options_.job.empty() ? options_.job : options_.runId;
    file_ = options_.triggerDir.empty() ? std::string() : triggerFile(options_.triggerDir, key);
}

TriggerRelay::~TriggerRelay() { stop(); }

std::string TriggerRelay::triggerText(const std::string& host, int rank, int64_t step) {
    std::string text = "capture-when on " + host;
    if (rank >= 0) text += " rank " + std::to_string(rank);
    return text + " at step " + std::to_string(step);
}

std::string TriggerRelay::triggerFile(const std::string& dir, const std::string& jobKey) {
    if (jobKey.empty()) return {};
    return dir + (dir.back() == '/' ? "" : "/") + "overlapscope-trigger-" + fileSafe(jobKey) + ".json";
}

void TriggerRelay::start() {
    readTriggerFile(false);  // a trigger from before this process started is not ours to serve
    thread_ = startBackgroundThread([this] { loop(); });
}

void TriggerRelay::stop() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void TriggerRelay::announce(const CaptureTrigger& trigger) {
    {
        std::lock_guard lock(mutex_);
        if (queue_.size() < 16) queue_.push_back(trigger);
    }
    cv_.notify_all();
}

void TriggerRelay::loop() {
    ::pthread_setname_np(::pthread_self(), "osc-triggers");
    std::unique_lock lock(mutex_);
    while (!stopping_) {
        if (file_.empty())
            cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        else
            cv_.wait_for(lock, std::chrono::milliseconds(options_.pollMs),
                         [&] { return stopping_ || !queue_.empty(); });
        if (stopping_) return;
        std::deque<CaptureTrigger> todo;
        todo.swap(queue_);
        lock.unlock();
        for (const CaptureTrigger& t : todo) {
            const std::string text = triggerText(options_.host, options_.rank, t.triggerStep);
            if (!file_.empty()) writeTriggerFile(t, text);
            tellThisNode(t, text);
        }
        if (!file_.empty()) readTriggerFile(true);
        lock.lock();
    }
}

bool TriggerRelay::sameJob(const std::string& job, const std::string& runId) const {
    if (!options_.job.empty()) return job == options_.job;
    return !options_.runId.empty() && runId == options_.runId;
}

// Each agent of the job here is asked until it answers or the trigger's
// deadline passes: on a busy node an agent's control thread may not run for
// seconds, and one missed request is a rank without the steps. A start that
// is asked twice (its answer was late) is served once: the agent knows the
// triggers it has served.
void TriggerRelay::tellThisNode(const CaptureTrigger& t, const std::string& text) {
    using Clock = std::chrono::steady_clock;
    control::ControlRequest start;
    start.command = control::ControlCommand::Start;
    start.steps = t.steps;
    start.atStep = t.firstStep;
    start.trigger = text;
    const auto deadline = Clock::now() + std::chrono::milliseconds(options_.deadlineMs);
    std::set<int64_t> done;                 // answered: captured or refused
    std::map<int64_t, std::string> silent;  // not yet, and why
    int asked = 0, refused = 0;
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        const int perTry = static_cast<int>(std::clamp<int64_t>(left, 100, control::answerTimeoutMs()));
        silent.clear();
        for (const auto& a : control::surveyAgents(options_.socketDir, nullptr, control::kThisUser, perTry)) {
            if (a.pid == options_.pid || done.count(a.pid)) continue;
            if (!a.answered) {
                // Its job, as /proc tells it, when that says it is another.
                if (!options_.job.empty() && !a.reply.status.job.empty() && a.reply.status.job != options_.job)
                    continue;
                silent[a.pid] = a.problem;
                continue;
            }
            if (!sameJob(a.reply.status.job, a.reply.status.runId)) continue;
            try {
                const control::ControlReply r = control::sendRequest(a.socketPath, start, perTry);
                done.insert(a.pid);
                ++asked;
                if (!r.ok) {
                    ++refused;
                    std::fprintf(stderr, "overlapscope-agent: --capture-when: pid %lld did not capture: %s\n",
                                 static_cast<long long>(a.pid), r.error.c_str());
                }
            } catch (const std::exception& e) {
                silent[a.pid] = e.what();
            }
        }
        if (silent.empty() || Clock::now() >= deadline) break;
        std::unique_lock lock(mutex_);
        if (cv_.wait_for(lock, std::chrono::milliseconds(options_.retryMs), [&] { return stopping_; })) break;
    }
    for (const auto& [pid, why] : silent)
        std::fprintf(stderr, "overlapscope-agent: --capture-when: pid %lld did not take the trigger in %.0f s: %s\n",
                     static_cast<long long>(pid), options_.deadlineMs / 1000.0, why.c_str());
    if (asked > 0)
        std::fprintf(stderr, "overlapscope-agent: --capture-when: %d other rank%s here capture%s steps %lld to %lld\n",
                     asked - refused, asked - refused == 1 ? "" : "s", asked - refused == 1 ? "s" : "",
                     static_cast<long long>(t.firstStep), static_cast<long long>(t.firstStep + t.steps - 1));
}

void TriggerRelay::writeTriggerFile(const CaptureTrigger& t, const std::string& text) {
    const nlohmann::json j = {{"job", options_.job}, {"run_id", options_.runId}, {"first_step", t.firstStep},
                              {"steps", t.steps},    {"trigger", text},          {"host", options_.host},
                              {"pid", options_.pid}};
    try {
        output::writeFileSafely(
            file_, [&](std::ostream& out) { out << j.dump() << "\n"; },
            output::WriteOptions{.overwrite = true, .removeOnSignal = false});
    } catch (const std::exception& e) {
        std::fprintf(stderr, "overlapscope-agent: --trigger-dir: %s\n", e.what());
        return;
    }
    readTriggerFile(false);  // our own: not to be served again
}

void TriggerRelay::readTriggerFile(bool act) {
    if (file_.empty()) return;
    // Only a regular file of ours, never through a link: the directory is shared.
    const int fd = ::open(file_.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid() || st.st_size > 4096) {
        ::close(fd);
        return;
    }
    const Signature now{st.st_ino, static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
                        st.st_size};
    if (now == seen_) {
        ::close(fd);
        return;
    }
    seen_ = now;
    std::string text(static_cast<size_t>(st.st_size), '\0');
    const ssize_t n = ::read(fd, text.data(), text.size());
    ::close(fd);
    if (!act || n <= 0) return;
    const nlohmann::json j = nlohmann::json::parse(text.substr(0, static_cast<size_t>(n)), nullptr, false);
    if (!j.is_object()) return;
    try {
        if (!sameJob(j.value("job", std::string()), j.value("run_id", std::string()))) return;
        if (j.value("host", std::string()) == options_.host && j.value("pid", int64_t{0}) == options_.pid) return;
        const int64_t first = j.at("first_step").get<int64_t>();
        const int steps = j.at("steps").get<int>();
        if (first < 0 || steps < 1 || steps > 1000000) return;
        arm_(first, steps, j.value("trigger", std::string("capture-when on another node")));
    } catch (const nlohmann::json::exception&) {
        // Not a trigger of ours after all.
    }
}

}  // namespace osc::agent::live
