// `overlapscope run | attach | detach | ps`: launch a job under the capture
// agent and control the agents of running jobs through their sockets.
#include "analyzer/capture/printable_text.h"
#include "analyzer/metrics/microbatches.h"
#include "cli/attach_steps.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "control/capture_condition.h"
#include "control/control_client.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

namespace osc::cli {
namespace {

namespace fs = std::filesystem;
using namespace osc::control;

constexpr const char* kAgentFile = "liboverlapscope-agent.so";

std::string executableDir() {
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    return ec ? std::string(".") : self.parent_path().string();
}

// --agent, $OVERLAPSCOPE_AGENT, next to the binary, ../lib, the build tree.
std::string findAgentLibrary(const std::string& explicitPath) {
    auto usable = [](const fs::path& p) {
        std::error_code ec;
        return fs::is_regular_file(p, ec);
    };
    if (!explicitPath.empty()) {
        if (!usable(explicitPath)) throw std::invalid_argument(explicitPath + ": agent library not found");
        return fs::absolute(explicitPath).string();
    }
    if (const char* env = std::getenv("OVERLAPSCOPE_AGENT"); env && *env) {
        if (!usable(env))
            throw std::invalid_argument(std::string(env) + ": agent library (OVERLAPSCOPE_AGENT) not found");
        return fs::absolute(env).string();
    }
    const fs::path dir = executableDir();
    std::vector<fs::path> candidates = {dir / kAgentFile, dir / ".." / "lib" / kAgentFile};
#ifdef OSC_AGENT_BUILD_DIR
    candidates.push_back(fs::path(OSC_AGENT_BUILD_DIR) / kAgentFile);
#endif
    for (const auto& c : candidates)
        if (usable(c)) return fs::weakly_canonical(c).string();
    throw std::invalid_argument(std::string(kAgentFile) +
                                ": not found next to overlapscope, in ../lib or in the build tree "
                                "(build with the CUDA toolkit, or pass --agent PATH)");
}

std::string findCuptiLibrary(const std::string& agentPath) {
    if (const char* env = std::getenv("OVERLAPSCOPE_CUPTI"); env && *env) return env;
    std::vector<fs::path> candidates = {fs::path(agentPath).parent_path() / "libcupti.so"};
#ifdef OSC_CUPTI_LIBRARY
    candidates.emplace_back(OSC_CUPTI_LIBRARY);
#endif
    for (const auto& c : candidates) {
        std::error_code ec;
        if (fs::exists(c, ec)) return c.string();
    }
    return {};
}

std::string secondsText(double s) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.15g", s);
    return buf;
}

// A number option, checked here rather than by CLI11 so that a bad value is
// one line and exit 2, like every bad input.
struct NumberOption {
    std::string text;
    double value = 0;
};

void parseNumber(const char* command, const char* option, NumberOption& o, double lo, double hi, const char* unit) {
    if (o.text.empty()) return;
    char* end = nullptr;
    const double v = std::strtod(o.text.c_str(), &end);
    if (end == o.text.c_str() || *end != '\0' || !std::isfinite(v) || v < lo || v > hi) {
        char range[96];
        std::snprintf(range, sizeof range, "%.15g to %.15g", lo, hi);
        throw std::invalid_argument(std::string(command) + ": " + option + " " + o.text + ": expected " + unit +
                                    " from " + range);
    }
    o.value = v;
}

// ---- run ----------------------------------------------------------------

volatile sig_atomic_t g_child = 0;

void forwardSignal(int signo, siginfo_t* info, void*) {
    // A terminal's Ctrl-C already reached the whole process group, the child
    // included; only signals sent to us alone are passed on.
    if (g_child > 0 && (!info || info->si_code != SI_KERNEL)) ::kill(g_child, signo);
}

struct RunOptions {
    std::string output = ".";
    NumberOption delay, duration, bufferMb;
    bool dormant = false;
    bool noNcclPlugin = false;
    std::string ncclPluginChain;  // another NCCL profiler plugin behind ours
    std::string agent;
    std::vector<std::string> command;
    // --partial: each process writes its capture's partial result at close.
    bool partial = false;
    std::vector<std::string> commKernels;
    bool commCopies = false;
    std::string stepPattern;
    std::string microbatchPattern;
    int pipelineStages = 0;
    // Live metrics (docs/agent.md "Live metrics").
    std::string metricsFile, metricsAddress, job;
    NumberOption metricsPort;
    std::string captureWhen;
    NumberOption captureSteps, captureCooldown;

    bool live() const { return !metricsFile.empty() || !metricsPort.text.empty() || !captureWhen.empty(); }
};

// The profiler plugin NCCL would have loaded without us: --nccl-plugin-chain,
// else a NCCL_PROFILER_PLUGIN set before us. "" when there is none.
std::string ncclPluginChain(const RunOptions& o, const std::string& agent) {
    std::string chain = o.ncclPluginChain;
    if (!chain.empty() && o.noNcclPlugin)
        throw std::invalid_argument("run: --nccl-plugin-chain needs the agent as NCCL's plugin (not --no-nccl-plugin)");
    if (chain.empty() && !o.noNcclPlugin) {
        const char* named = std::getenv("NCCL_PROFILER_PLUGIN");
        if (!named || !*named || ::strcasecmp(named, "none") == 0 || agent == named) return {};
        chain = named;
        std::fprintf(stderr, "overlapscope: NCCL_PROFILER_PLUGIN=%s is chained behind the agent's plugin\n",
                     chain.c_str());
    }
    if (chain.empty() || chain.find('/') == std::string::npos) return chain;  // NCCL's name for a library
    std::error_code ec;
    if (!fs::is_regular_file(chain, ec))
        throw std::invalid_argument("run: NCCL profiler plugin " + chain + ": no such file");
    return fs::absolute(chain).lexically_normal().string();
}

int runCommand(RunOptions& o) {
    if (o.command.empty()) throw std::invalid_argument("run: no command given (overlapscope run -- COMMAND...)");
    parseNumber("run", "--delay", o.delay, 0, kMaxSeconds, "seconds");
    parseNumber("run", "--duration", o.duration, 0, kMaxSeconds, "seconds");
    parseNumber("run", "--buffer-mb", o.bufferMb, kMinBufferMb, kMaxBufferMb, "MB");
    parseNumber("run", "--metrics-port", o.metricsPort, 0, 65535, "a port");
    if (!o.metricsPort.text.empty() && o.metricsPort.value != std::floor(o.metricsPort.value))
        throw std::invalid_argument("run: --metrics-port " + o.metricsPort.text + ": expected a whole number");
    parseNumber("run", "--capture-steps", o.captureSteps, 1, 1e6, "steps");
    parseNumber("run", "--capture-cooldown", o.captureCooldown, 0, kMaxSeconds, "seconds");
    if (!o.captureWhen.empty()) parseCaptureCondition(o.captureWhen);  // one line now, not one per process
    if (o.captureWhen.empty() && (!o.captureSteps.text.empty() || !o.captureCooldown.text.empty()))
        throw std::invalid_argument("run: --capture-steps and --capture-cooldown go with --capture-when");
    if (!o.live() && (!o.metricsAddress.empty() || !o.job.empty()))
        throw std::invalid_argument("run: --metrics-address and --job go with --metrics-file or --metrics-port");
    if (!o.metricsAddress.empty() && o.metricsPort.text.empty())
        throw std::invalid_argument("run: --metrics-address goes with --metrics-port");
    const std::string agent = findAgentLibrary(o.agent);
    std::error_code ec;
    fs::create_directories(o.output, ec);
    if (!fs::is_directory(o.output, ec)) throw std::invalid_argument(o.output + ": cannot create output directory");
    const std::string outDir = fs::absolute(o.output).lexically_normal().string();
    if (::access(outDir.c_str(), W_OK) != 0) throw std::invalid_argument(outDir + ": output directory is not writable");

    // Live metrics alone write no capture file: a capture is asked for
    // (--delay, --duration, attach, --capture-when).
    const bool dormant = o.dormant || (o.live() && o.delay.text.empty() && o.duration.text.empty());
    std::vector<std::pair<std::string, std::string>> env = {
        {"CUDA_INJECTION64_PATH", agent},
        {"OVERLAPSCOPE_OUTPUT_DIR", outDir},
        {"OVERLAPSCOPE_DELAY", secondsText(o.delay.value)},
        {"OVERLAPSCOPE_DURATION", secondsText(o.duration.value)},
        {"OVERLAPSCOPE_DORMANT", dormant ? "1" : "0"},
    };
    // Without the plugin the job's own NCCL_PROFILER_PLUGIN, if any, stays;
    // with it, that plugin is chained behind ours (docs/agent.md).
    if (!o.noNcclPlugin) env.emplace_back("NCCL_PROFILER_PLUGIN", agent);
    const std::string chain = ncclPluginChain(o, agent);
    if (!chain.empty()) env.emplace_back("OVERLAPSCOPE_NCCL_PLUGIN_CHAIN", chain);
    if (!o.bufferMb.text.empty()) env.emplace_back("OVERLAPSCOPE_BUFFER_MB", secondsText(o.bufferMb.value));
    if (!o.partial && !o.live() &&
        (!o.commKernels.empty() || o.commCopies || !o.stepPattern.empty() || !o.microbatchPattern.empty() ||
         o.pipelineStages != 0))
        throw std::invalid_argument(
            "run: --comm-kernel, --comm-copies, --step-pattern, --microbatch-pattern and "
            "--pipeline-stages set up the partial results and live metrics; give --partial or --metrics-* too");
    if (o.live()) {
        if (!o.metricsFile.empty()) {
            // Relative to where `run` was started, not to each process's directory.
            const bool dir = o.metricsFile.back() == '/';
            std::string abs = fs::absolute(o.metricsFile).lexically_normal().string();
            if (dir && abs.back() != '/') abs += '/';
            env.emplace_back("OVERLAPSCOPE_METRICS_FILE", abs);
        }
        if (!o.metricsPort.text.empty())
            env.emplace_back("OVERLAPSCOPE_METRICS_PORT", std::to_string(static_cast<int>(o.metricsPort.value)));
        if (!o.metricsAddress.empty()) env.emplace_back("OVERLAPSCOPE_METRICS_ADDRESS", o.metricsAddress);
        if (!o.job.empty()) env.emplace_back("OVERLAPSCOPE_JOB", o.job);
        if (!o.captureWhen.empty()) {
            env.emplace_back("OVERLAPSCOPE_CAPTURE_WHEN", o.captureWhen);
            if (!o.captureSteps.text.empty())
                env.emplace_back("OVERLAPSCOPE_CAPTURE_STEPS", std::to_string(static_cast<int>(o.captureSteps.value)));
            if (!o.captureCooldown.text.empty())
                env.emplace_back("OVERLAPSCOPE_CAPTURE_COOLDOWN", secondsText(o.captureCooldown.value));
        }
    }
    if (o.partial || o.live()) {
        // Checked here, so a bad pattern is one line now rather than one per process later.
        std::vector<std::string> patterns = o.commKernels;
        if (!o.stepPattern.empty()) patterns.push_back(o.stepPattern);
        for (const auto& p : patterns) {
            if (p.find('\n') != std::string::npos)
                throw std::invalid_argument("run: a pattern may not hold a line break: '" + p + "'");
            try {
                std::regex check(p, std::regex::ECMAScript);
            } catch (const std::regex_error& e) {
                throw std::invalid_argument("run: invalid pattern '" + p + "': " + e.what());
            }
        }
        if (!o.microbatchPattern.empty()) {
            if (o.microbatchPattern.find('\n') != std::string::npos)
                throw std::invalid_argument("run: a pattern may not hold a line break: '" + o.microbatchPattern + "'");
            try {
                compileMicrobatchPattern(o.microbatchPattern);
            } catch (const std::invalid_argument& e) {
                throw std::invalid_argument(std::string("run: ") + e.what());
            }
        }
        std::string joined;
        for (const auto& p : o.commKernels) joined += (joined.empty() ? "" : "\n") + p;
        if (o.partial) env.emplace_back("OVERLAPSCOPE_PARTIAL", "1");
        env.emplace_back("OVERLAPSCOPE_COMM_KERNEL", joined);
        env.emplace_back("OVERLAPSCOPE_COMM_COPIES", o.commCopies ? "1" : "0");
        env.emplace_back("OVERLAPSCOPE_STEP_PATTERN", o.stepPattern);
        env.emplace_back("OVERLAPSCOPE_MICROBATCH_PATTERN", o.microbatchPattern);
        env.emplace_back("OVERLAPSCOPE_PIPELINE_STAGES", std::to_string(o.pipelineStages));
    }
    // NVTX ranges reach CUPTI only when NVTX loads libcupti at the job's first NVTX call.
    if (const char* nvtx = std::getenv("NVTX_INJECTION64_PATH"); !nvtx || !*nvtx) {
        const std::string cupti = findCuptiLibrary(agent);
        if (!cupti.empty()) env.emplace_back("NVTX_INJECTION64_PATH", cupti);
    }
    if (const char* prev = std::getenv("CUDA_INJECTION64_PATH"); prev && *prev && agent != prev)
        std::fprintf(stderr, "overlapscope: replacing CUDA_INJECTION64_PATH=%s\n", prev);
    if (o.live())
        std::fprintf(stderr, "overlapscope: live metrics%s%s%s%s; captures go to %s\n",
                     o.metricsFile.empty() ? "" : " to ", o.metricsFile.c_str(),
                     o.metricsPort.text.empty() ? "" : " on port ", o.metricsPort.text.c_str(), outDir.c_str());
    else
        std::fprintf(stderr, "overlapscope: %s to %s\n", dormant ? "agent dormant, attach to capture" : "capturing",
                     outDir.c_str());

    struct sigaction fwd {
    }, oldInt{}, oldTerm{}, oldHup{};
    fwd.sa_sigaction = forwardSignal;
    fwd.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&fwd.sa_mask);
    ::sigaction(SIGINT, &fwd, &oldInt);
    ::sigaction(SIGTERM, &fwd, &oldTerm);
    ::sigaction(SIGHUP, &fwd, &oldHup);

    std::fflush(nullptr);
    const pid_t child = ::fork();
    if (child < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    if (child == 0) {
        ::sigaction(SIGINT, &oldInt, nullptr);
        ::sigaction(SIGTERM, &oldTerm, nullptr);
        ::sigaction(SIGHUP, &oldHup, nullptr);
        for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
        std::vector<char*> argv;
        for (const auto& a : o.command) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        ::execvp(argv[0], argv.data());
        std::fprintf(stderr, "overlapscope: %s: %s\n", o.command[0].c_str(), std::strerror(errno));
        ::_exit(127);
    }
    g_child = child;
    int status = 0;
    while (::waitpid(child, &status, 0) < 0) {
        if (errno != EINTR) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
    }
    g_child = 0;
    ::sigaction(SIGINT, &oldInt, nullptr);
    ::sigaction(SIGTERM, &oldTerm, nullptr);
    ::sigaction(SIGHUP, &oldHup, nullptr);
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return 1;
}

// ---- attach / detach / ps ---------------------------------------------------

void printRefused(const std::vector<std::string>& refused) {
    for (const auto& line : refused) std::fprintf(stderr, "overlapscope: %s\n", printable(line).c_str());
}

std::vector<std::string> targetSockets(const std::vector<int64_t>& pids, bool all) {
    const std::string dir = socketDirectory();
    std::vector<std::string> refused;
    std::vector<std::string> sockets;
    if (all) {
        for (const auto& a : discoverAgents(dir, &refused)) sockets.push_back(a.socketPath);
        printRefused(refused);
        if (sockets.empty()) throw std::invalid_argument(dir + ": no running agents found");
        return sockets;
    }
    if (pids.empty()) throw std::invalid_argument("give a PID or --all");
    for (int64_t pid : pids) {
        // The same directories for every pid: their problems are told once.
        const auto path = findAgentSocket(pid, dir, sockets.empty() ? &refused : nullptr);
        printRefused(refused);
        refused.clear();
        if (!path)
            throw std::invalid_argument(socketPathFor(dir, pid) + ": no agent for pid " + std::to_string(pid) +
                                        " (was it started with `overlapscope run`?)");
        sockets.push_back(*path);
    }
    return sockets;
}

int controlAll(const std::vector<std::string>& sockets, const ControlRequest& request) {
    // Stopping writes what is waiting, closes the file and builds its indexes.
    constexpr int kTimeoutMs = 60000;
    int failures = 0;
    for (const auto& path : sockets) {
        try {
            const ControlReply r = sendRequest(path, request, kTimeoutMs);
            if (!r.ok) {
                std::fprintf(stderr, "overlapscope: %s: %s\n", agentName(r.status).c_str(), printable(r.error).c_str());
                ++failures;
            } else if (request.command == ControlCommand::Start) {
                std::printf("%s: capturing to %s\n", agentName(r.status).c_str(), printable(r.status.output).c_str());
            } else {
                std::printf("%s: stopped, wrote %s (%llu records dropped)\n", agentName(r.status).c_str(),
                            printable(r.status.output).c_str(), static_cast<unsigned long long>(r.status.dropped));
            }
        } catch (const std::runtime_error& e) {
            std::fprintf(stderr, "overlapscope: %s\n", printable(e.what()).c_str());
            ++failures;
        }
    }
    return failures ? 1 : 0;
}

// A step capture's progress in a few characters: "wait@120", "3/10@120", "done 10@120".
std::string stepsColumn(const AgentStatus& s) {
    if (!s.stepCapture) return "-";
    const auto& c = *s.stepCapture;
    const int64_t from = c.first >= 0 ? c.first : c.atStep.value_or(-1);
    const std::string at = from >= 0 ? "@" + std::to_string(from) : "";
    if (c.state == "waiting") return "wait" + at;
    if (c.state == "capturing") return std::to_string(c.written) + "/" + std::to_string(c.requested) + at;
    return printable(c.state) + " " + std::to_string(c.written) + "/" + std::to_string(c.requested) + at;
}

int psCommand(bool json) {
    std::vector<std::string> refused;
    const auto agents = discoverAgents(socketDirectory(), &refused);
    printRefused(refused);
    if (json) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& a : agents) {
            const auto& s = a.reply.status;
            nlohmann::json item = {{"pid", s.pid},
                                   {"rank", s.rank},
                                   {"host", s.host},
                                   {"state", s.state},
                                   {"captures", s.captures},
                                   {"output", s.output},
                                   {"dropped", s.dropped},
                                   {"command", s.commandLine},
                                   {"socket", a.socketPath},
                                   {"streaming", s.streaming},
                                   {"telemetry", s.telemetry},
                                   {"step", s.step},
                                   {"step_seconds", s.stepSeconds}};
            if (const auto& c = s.stepCapture) {
                item["step_capture"] = {{"state", c->state}, {"requested", c->requested}, {"written", c->written},
                                        {"first", c->first}, {"path", c->path},           {"error", c->error}};
                if (c->atStep) item["step_capture"]["at_step"] = *c->atStep;
            }
            list.push_back(std::move(item));
        }
        std::printf("%s\n", list.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
        return 0;
    }
    if (agents.empty()) {
        std::printf("no running agents in %s\n", printable(socketDirectory()).c_str());
        return 0;
    }
    std::printf("%-8s %-5s %-10s %-8s %-8s %-22s %-40s %s\n", "PID", "RANK", "STATE", "STEP", "CAPTURES", "STEPS",
                "OUTPUT", "COMMAND");
    for (const auto& a : agents) {
        const auto& s = a.reply.status;
        std::printf("%-8lld %-5s %-10s %-8s %-8llu %-22s %-40s %.60s\n", static_cast<long long>(s.pid),
                    s.rank >= 0 ? std::to_string(s.rank).c_str() : "-", printable(s.state).c_str(),
                    s.step >= 0 ? std::to_string(s.step).c_str() : "-", static_cast<unsigned long long>(s.captures),
                    stepsColumn(s).c_str(), s.output.empty() ? "-" : printable(s.output).c_str(),
                    printable(s.commandLine).c_str());
    }
    return 0;
}

}  // namespace

void addAgentCommands(CLI::App& app, CommandRunner& selected) {
    auto run = std::make_shared<RunOptions>();
    auto* r = app.add_subcommand("run", "Run a command with the capture agent injected into every CUDA process");
    r->add_option("--output,-o", run->output, "Directory for the capture files (one per process)")
        ->check(nonEmptyFileName());
    r->add_option("--delay", run->delay.text, "Start capturing this many seconds after CUDA starts (0 to 1e6)")
        ->type_name("SECONDS");
    r->add_option("--duration", run->duration.text, "Stop capturing after this many seconds (0: until exit; up to 1e6)")
        ->type_name("SECONDS");
    r->add_flag("--dormant", run->dormant, "Do not capture until `overlapscope attach`");
    r->add_flag("--no-nccl-plugin", run->noNcclPlugin,
                "Do not load the agent as NCCL's profiler plugin: no per-collective rows (sizes, sequence numbers, "
                "peers), kernels and ranges only; for a job with its own NCCL profiler plugin, or to tell a "
                "problem of the plugin from one of the CUDA side");
    r->add_option("--nccl-plugin-chain", run->ncclPluginChain,
                  "Another NCCL profiler plugin (NCCL Inspector, your own) that the agent loads and forwards every "
                  "event to, so both see them (default: a NCCL_PROFILER_PLUGIN already set)")
        ->check(nonEmptyFileName())
        ->type_name("PATH");
    r->add_option("--buffer-mb", run->bufferMb.text,
                  "Memory bound for in-flight records per process (default 64; 1 to 65536)")
        ->type_name("MB");
    r->add_option("--agent", run->agent, "Agent library to inject (default: found next to overlapscope)");
    r->add_flag("--partial", run->partial,
                "Each process also writes its capture's partial result when the capture closes "
                "(<capture>.partial.json, for `overlapscope merge`; at exit the process waits for it, "
                "about a second per million kernels)");
    r->add_option("--comm-kernel", run->commKernels,
                  "With --partial: also count kernels matching REGEX as communication (repeatable)")
        ->type_name("REGEX");
    r->add_flag("--comm-copies", run->commCopies, "With --partial: count host<->device copies as communication");
    r->add_option("--step-pattern", run->stepPattern, "With --partial: regex for step range names")->type_name("REGEX");
    r->add_option("--microbatch-pattern", run->microbatchPattern,
                  "With --partial: regex for pipeline micro-batch range names (as for `report`)")
        ->type_name("REGEX");
    r->add_option("--pipeline-stages", run->pipelineStages,
                  "With --partial: pipeline stages S for the theoretical bubble (as for `report`)")
        ->check(CLI::Range(0, 65536))
        ->type_name("S");
    r->add_option("--metrics-file", run->metricsFile,
                  "Live overlap metrics in Prometheus text format, rewritten atomically every second "
                  "(a directory: one file per process, for node_exporter's textfile collector; "
                  "{rank}, {local_rank}, {pid}, {host} are replaced). No capture file unless asked")
        ->type_name("PATH");
    r->add_option("--metrics-port", run->metricsPort.text,
                  "Serve live metrics at http://127.0.0.1:PORT/metrics (each process on PORT + its local rank)")
        ->type_name("PORT");
    r->add_option("--metrics-address", run->metricsAddress,
                  "With --metrics-port: the numeric address to listen on (default 127.0.0.1)")
        ->type_name("ADDR");
    r->add_option("--job", run->job, "The metrics' job label (default: $SLURM_JOB_ID)")->type_name("NAME");
    r->add_option("--capture-when", run->captureWhen,
                  "Capture the next steps once a condition held for some steps, e.g. "
                  "'exposed_comm_ratio>0.3 for 20 steps' (metrics as docs/agent.md lists)")
        ->type_name("CONDITION");
    r->add_option("--capture-steps", run->captureSteps.text, "With --capture-when: steps to capture (default 10)")
        ->type_name("N");
    r->add_option("--capture-cooldown", run->captureCooldown.text,
                  "With --capture-when: at most one capture per this many seconds (default 600)")
        ->type_name("SECONDS");
    r->add_option("command", run->command, "The command to run, after --")->required();
    r->footer(
        "Example: overlapscope run -o caps -- torchrun --nproc-per-node 8 train.py\n"
        "Files: <output>/<host>-<pid>[-rank<R>][-N].sqlite (with --partial also .partial.json). Exit code: "
        "the command's.");
    r->callback([run, &selected] { selected = [run] { return runCommand(*run); }; });

    struct Target {
        std::vector<int64_t> pids;
        bool all = false;
        NumberOption duration;
        std::string output;
        NumberOption steps, atStep, lead, timeout;
        bool partial = false, plan = false, wait = false;
    };
    auto at = std::make_shared<Target>();
    auto* a = app.add_subcommand("attach", "Start a capture in running agents (jobs launched with `run`)");
    a->add_option("pid", at->pids, "Process ids (see `overlapscope ps`)");
    a->add_flag("--all", at->all, "Every running agent of this user");
    a->add_option("--duration", at->duration.text, "Stop after this many seconds (0: until detach or exit; up to 1e6)")
        ->type_name("SECONDS");
    a->add_option("--output,-o", at->output, "Directory for the capture files (default: the run's)")
        ->check(nonEmptyFileName());
    a->add_option("--steps", at->steps.text,
                  "Capture this many whole steps, the same step numbers on every agent (1 to 1e6)")
        ->type_name("N");
    a->add_option("--at-step", at->atStep.text,
                  "With --steps: start at the step with this number in its range name (default: a step "
                  "every agent reaches after the request)")
        ->type_name("S");
    a->add_flag("--partial", at->partial, "With --steps: also write each capture's partial result");
    a->add_flag("--plan", at->plan,
                "With --steps: only print the step number such a capture would start at here (attach nothing); "
                "the largest over a job's nodes goes to --at-step");
    a->add_flag("--wait", at->wait, "With --steps: return once every capture (and partial) is written");
    a->add_option("--lead", at->lead.text,
                  "With --steps and no --at-step: seconds between the newest step seen and the first captured "
                  "(default 3)")
        ->type_name("SECONDS");
    a->add_option("--timeout", at->timeout.text,
                  "With --steps: seconds to wait for steps to show, and with --wait for progress (default 60)")
        ->type_name("SECONDS");
    a->footer(
        "Examples: overlapscope attach --all --duration 5\n"
        "          overlapscope attach --all --steps 10 --partial --wait\n"
        "          S=$(overlapscope attach --all --steps 10 --plan); overlapscope attach --all --steps 10 --at-step "
        "$S");
    a->callback([at, &selected] {
        selected = [at] {
            parseNumber("attach", "--duration", at->duration, 0, kMaxSeconds, "seconds");
            parseNumber("attach", "--steps", at->steps, 1, static_cast<double>(kMaxSteps), "a whole number of steps");
            parseNumber("attach", "--at-step", at->atStep, 0, static_cast<double>(kMaxStepNumber), "a step number");
            parseNumber("attach", "--lead", at->lead, 0, 3600, "seconds");
            parseNumber("attach", "--timeout", at->timeout, 1, kMaxSeconds, "seconds");
            for (const NumberOption* n : {&at->steps, &at->atStep})
                if (!n->text.empty() && n->value != std::floor(n->value))
                    throw std::invalid_argument("attach: " + n->text + ": expected a whole number");
            const bool steps = !at->steps.text.empty();
            if (!steps && (!at->atStep.text.empty() || at->partial || at->plan || at->wait || !at->lead.text.empty() ||
                           !at->timeout.text.empty()))
                throw std::invalid_argument(
                    "attach: --at-step, --partial, --plan, --wait, --lead and --timeout go with --steps");
            if (steps && !at->duration.text.empty())
                throw std::invalid_argument("attach: --steps and --duration exclude each other");
            if (at->plan && !at->atStep.text.empty())
                throw std::invalid_argument("attach: --plan chooses the step; it does not take --at-step");
            std::optional<std::string> outputDir;
            if (!at->output.empty()) {
                std::error_code ec;
                fs::create_directories(at->output, ec);
                outputDir = fs::absolute(at->output).lexically_normal().string();
            }
            if (steps) {
                StepAttachOptions o;
                o.steps = static_cast<int64_t>(at->steps.value);
                if (!at->atStep.text.empty()) o.atStep = static_cast<int64_t>(at->atStep.value);
                o.outputDir = outputDir;
                o.partial = at->partial;
                o.plan = at->plan;
                o.wait = at->wait;
                if (!at->lead.text.empty()) o.leadS = at->lead.value;
                if (!at->timeout.text.empty()) o.timeoutS = at->timeout.value;
                return attachSteps(targetSockets(at->pids, at->all), o);
            }
            ControlRequest req;
            req.command = ControlCommand::Start;
            if (at->duration.value > 0) req.durationS = at->duration.value;
            req.outputDir = outputDir;
            return controlAll(targetSockets(at->pids, at->all), req);
        };
    });

    auto dt = std::make_shared<Target>();
    auto* d =
        app.add_subcommand("detach", "Stop the capture (or step capture) in running agents and close their files");
    d->add_option("pid", dt->pids, "Process ids (see `overlapscope ps`)");
    d->add_flag("--all", dt->all, "Every running agent of this user");
    d->callback([dt, &selected] {
        selected = [dt] {
            ControlRequest req;
            req.command = ControlCommand::Stop;
            return controlAll(targetSockets(dt->pids, dt->all), req);
        };
    });

    auto psJson = std::make_shared<bool>(false);
    auto* p = app.add_subcommand("ps", "List running agents of this user: pid, rank, state, output file");
    p->add_flag("--json", *psJson, "One JSON array instead of a table");
    p->callback([psJson, &selected] { selected = [psJson] { return psCommand(*psJson); }; });
}

}  // namespace osc::cli
