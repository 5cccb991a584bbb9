// `overlapscope run`: launch a job under the capture agent (the commands that
// control running agents are cmd_control.cpp).
#include "analyzer/capture/printable_text.h"
#include "analyzer/metrics/microbatches.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/help_format.h"
#include "cli/number_option.h"
#include "control/capture_condition.h"
#include "control/control_protocol.h"

#include <arpa/inet.h>

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
    // The look-back ring (docs/agent.md "Look-back") and where triggers are
    // shared across nodes.
    NumberOption lookback;
    std::string triggerDir;

    bool live() const { return !metricsFile.empty() || !metricsPort.text.empty() || !captureWhen.empty(); }
    // The agent records from the start: live metrics, a condition, or a look-back ring.
    bool stream() const { return live() || (lookback.given() && lookback.value > 0); }
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

// `--metrics-address`: a numeric IPv4 or IPv6 address, checked before the
// job starts rather than once per rank after.
void checkListenAddress(const std::string& address) {
    unsigned char buf[sizeof(in6_addr)];
    if (::inet_pton(AF_INET, address.c_str(), buf) == 1 || ::inet_pton(AF_INET6, address.c_str(), buf) == 1) return;
    throw std::invalid_argument("run: --metrics-address " + address +
                                ": expected a numeric IPv4 or IPv6 address (127.0.0.1, 0.0.0.0, ::1), not a name");
}

// One name per `run`, for the agents of its processes to tell each other
// apart from other jobs' when no --job names them (docs/agent.md "Look-back").
std::string runIdentity() {
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    timespec ts{};
    ::clock_gettime(CLOCK_REALTIME, &ts);
    return std::string(host) + "-" + std::to_string(::getpid()) + "-" + std::to_string(ts.tv_sec);
}

int runCommand(RunOptions& o) {
    if (o.command.empty()) throw std::invalid_argument("run: no command given (overlapscope run -- COMMAND...)");
    parseNumber("run", "--delay", o.delay, 0, kMaxSeconds, "seconds");
    parseNumber("run", "--duration", o.duration, 0, kMaxSeconds, "seconds");
    parseNumber("run", "--buffer-mb", o.bufferMb, kMinBufferMb, kMaxBufferMb, "MB");
    parseNumber("run", "--metrics-port", o.metricsPort, 0, 65535, "a port", true);
    parseNumber("run", "--capture-steps", o.captureSteps, 1, 1e6, "steps", true);
    parseNumber("run", "--lookback", o.lookback, 0, kMaxLookbackSteps, "steps", true);
    parseNumber("run", "--capture-cooldown", o.captureCooldown, 0, kMaxSeconds, "seconds");
    if (!o.captureWhen.empty()) parseCaptureCondition(o.captureWhen);  // one line now, not one per process
    if (o.captureWhen.empty() && (!o.captureSteps.text.empty() || !o.captureCooldown.text.empty()))
        throw std::invalid_argument("run: --capture-steps and --capture-cooldown go with --capture-when");
    if (!o.metricsAddress.empty() && o.metricsPort.text.empty())
        throw std::invalid_argument("run: --metrics-address goes with --metrics-port");
    if (!o.metricsAddress.empty()) checkListenAddress(o.metricsAddress);
    std::string triggerDir;
    if (!o.triggerDir.empty()) {
        if (!o.stream())
            throw std::invalid_argument(
                "run: --trigger-dir goes with --capture-when, --lookback or --metrics-* (the agents must record)");
        std::error_code ec;
        if (!fs::is_directory(o.triggerDir, ec))
            throw std::invalid_argument(o.triggerDir + ": --trigger-dir must be an existing directory");
        triggerDir = fs::absolute(o.triggerDir).lexically_normal().string();
    }
    const std::string agent = findAgentLibrary(o.agent);
    std::error_code ec;
    fs::create_directories(o.output, ec);
    if (!fs::is_directory(o.output, ec)) throw std::invalid_argument(o.output + ": cannot create output directory");
    const std::string outDir = fs::absolute(o.output).lexically_normal().string();
    if (::access(outDir.c_str(), W_OK) != 0) throw std::invalid_argument(outDir + ": output directory is not writable");

    // Live metrics alone write no capture file: a capture is asked for
    // (--delay, --duration, attach, --capture-when).
    const bool dormant = o.dormant || (o.stream() && o.delay.text.empty() && o.duration.text.empty());
    std::vector<std::pair<std::string, std::string>> env = {
        {"CUDA_INJECTION64_PATH", agent},
        {"OVERLAPSCOPE_OUTPUT_DIR", outDir},
        {"OVERLAPSCOPE_DELAY", numberText(o.delay.value)},
        {"OVERLAPSCOPE_DURATION", numberText(o.duration.value)},
        {"OVERLAPSCOPE_DORMANT", dormant ? "1" : "0"},
        {"OVERLAPSCOPE_RUN_ID", runIdentity()},
    };
    if (!o.job.empty()) env.emplace_back("OVERLAPSCOPE_JOB", o.job);
    if (o.lookback.given()) env.emplace_back("OVERLAPSCOPE_LOOKBACK_STEPS", numberText(o.lookback.value));
    if (!triggerDir.empty()) env.emplace_back("OVERLAPSCOPE_TRIGGER_DIR", triggerDir);
    // Without the plugin the job's own NCCL_PROFILER_PLUGIN, if any, stays;
    // with it, that plugin is chained behind ours (docs/agent.md).
    if (!o.noNcclPlugin) env.emplace_back("NCCL_PROFILER_PLUGIN", agent);
    const std::string chain = ncclPluginChain(o, agent);
    if (!chain.empty()) env.emplace_back("OVERLAPSCOPE_NCCL_PLUGIN_CHAIN", chain);
    if (!o.bufferMb.text.empty()) env.emplace_back("OVERLAPSCOPE_BUFFER_MB", numberText(o.bufferMb.value));
    if (!o.partial && !o.stream() &&
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
        if (!o.captureWhen.empty()) {
            env.emplace_back("OVERLAPSCOPE_CAPTURE_WHEN", o.captureWhen);
            if (!o.captureSteps.text.empty())
                env.emplace_back("OVERLAPSCOPE_CAPTURE_STEPS", std::to_string(static_cast<int>(o.captureSteps.value)));
            if (!o.captureCooldown.text.empty())
                env.emplace_back("OVERLAPSCOPE_CAPTURE_COOLDOWN", numberText(o.captureCooldown.value));
        }
    }
    if (o.partial || o.stream()) {
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

}  // namespace

void addAgentCommands(CLI::App& app, CommandRunner& selected) {
    auto run = std::make_shared<RunOptions>();
    auto* r = app.add_subcommand("run");
    describe(r, "Run a command with the capture agent injected into every CUDA process",
             "overlapscope run -o caps -- torchrun --nproc-per-node 8 train.py");
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
                  "Serve live metrics at http://127.0.0.1:PORT/metrics (each process on PORT + its local rank; "
                  "0: any free port, printed)")
        ->type_name("PORT");
    r->add_option("--metrics-address", run->metricsAddress,
                  "With --metrics-port: the numeric address to listen on (default 127.0.0.1)")
        ->type_name("ADDR");
    r->add_option("--job", run->job,
                  "The job's name: the metrics' job label, and what `ps --job` and `attach --job` select "
                  "(default: $SLURM_JOB_ID)")
        ->type_name("NAME");
    r->add_option("--capture-when", run->captureWhen,
                  "Capture the next steps once a condition held for some steps, e.g. "
                  "'exposed_comm_ratio>0.3 for 20 steps' (metrics as docs/agent.md lists)")
        ->type_name("CONDITION");
    r->add_option("--capture-steps", run->captureSteps.text,
                  "With --capture-when: steps to capture after the one that made it hold (default 10)")
        ->type_name("N");
    r->add_option("--lookback", run->lookback.text,
                  "Keep the last K steps in memory (0 to 1000; default 5 with --metrics-* or --capture-when, else "
                  "0): a --capture-when capture starts K steps back, `overlapscope dump` writes them now")
        ->type_name("K");
    r->add_option("--trigger-dir", run->triggerDir,
                  "A directory every node of the job sees (a shared file system): one rank's --capture-when "
                  "captures the same steps on the job's ranks of every node")
        ->type_name("DIR");
    r->add_option("--capture-cooldown", run->captureCooldown.text,
                  "With --capture-when: at most one capture per this many seconds (default 600)")
        ->type_name("SECONDS");
    r->add_option("command", run->command, "The command to run, after --")->required();
    r->footer(
        "Files: <output>/<host>-<pid>[-rank<R>][-N].sqlite (with --partial also .partial.json). Exit code: "
        "the command's.");
    r->callback([run, &selected] { selected = [run] { return runCommand(*run); }; });

    addControlCommands(app, selected);
}

}  // namespace osc::cli
