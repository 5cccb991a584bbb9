#include "cli/cluster_parts.h"

#include "cli/cli_common.h"

#include <nlohmann/json.hpp>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <stdexcept>

extern char** environ;

namespace osc::cli {
namespace {

namespace fs = std::filesystem;

volatile sig_atomic_t g_child = 0;

// Ctrl-C reaches us (the terminal's foreground group) and is passed to the
// Python side, in a group of its own so that it hears it once: it cancels
// the job's tasks on the cluster and exits 130.
void forwardSignal(int signal) {
    if (g_child > 0) ::kill(static_cast<pid_t>(g_child), signal);
}

// What `python3 -m overlapscope.distributed parts` reads: the settings dict
// of python/overlapscope/_options.py.
std::string settingsJson(const AnalysisFlags& f) {
    nlohmann::json s;
    s["comm_kernel"] = f.commKernels;
    s["comm_copies"] = f.commCopies;
    s["step_pattern"] = f.stepPattern.empty() ? nlohmann::json() : nlohmann::json(f.stepPattern);
    s["align"] = f.align;
    s["microbatch_pattern"] = f.microbatchPattern.empty() ? nlohmann::json() : nlohmann::json(f.microbatchPattern);
    s["pipeline_stages"] = f.pipelineStages;
    s["peak_busbw_gbps"] = f.peakBusBwGbps > 0 ? nlohmann::json(f.peakBusBwGbps) : nlohmann::json();
    return s.dump();
}

std::string envOr(const char* name, const std::string& fallback) {
    const char* v = std::getenv(name);
    return v && *v ? std::string(v) : fallback;
}

// The interpreter and the module: OVERLAPSCOPE_PYTHON and
// OVERLAPSCOPE_PYTHONPATH when set; else the interpreter the build used and
// the build tree's package when it is still there; else `python3` and
// whatever it imports (a `pip install ./python`).
std::string pythonProgram() {
#ifdef OSC_PYTHON_EXECUTABLE
    return envOr("OVERLAPSCOPE_PYTHON", OSC_PYTHON_EXECUTABLE);
#else
    return envOr("OVERLAPSCOPE_PYTHON", "python3");
#endif
}

std::string modulePath() {
    std::string path = envOr("OVERLAPSCOPE_PYTHONPATH", "");
#ifdef OSC_PYTHON_BUILD_DIR
    std::error_code ec;
    if (path.empty() && fs::exists(fs::path(OSC_PYTHON_BUILD_DIR) / "overlapscope" / "distributed.py", ec))
        path = OSC_PYTHON_BUILD_DIR;
#endif
    return path;
}

std::vector<std::string> environment() {
    std::vector<std::string> env;
    std::string pythonPath = modulePath();
    for (char** e = environ; *e; ++e) {
        const std::string entry = *e;
        if (entry.starts_with("PYTHONPATH=")) {
            const std::string old = entry.substr(11);
            if (!old.empty()) pythonPath = pythonPath.empty() ? old : pythonPath + ":" + old;
            continue;
        }
        env.push_back(entry);
    }
    if (!pythonPath.empty()) env.push_back("PYTHONPATH=" + pythonPath);
    return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
    std::vector<char*> out;
    for (auto& s : strings) out.push_back(s.data());
    out.push_back(nullptr);
    return out;
}

// Runs the Python side; its stdout says "done N TOTAL" after each file,
// shown as `verb`'s progress line.
int runModule(std::vector<std::string> argv, const char* verb) {
    std::vector<std::string> env = environment();
    int pipeFds[2];
    if (::pipe(pipeFds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipeFds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, pipeFds[0]);
    posix_spawn_file_actions_addclose(&actions, pipeFds[1]);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);

    struct sigaction fwd {
    }, oldInt{}, oldTerm{};
    fwd.sa_handler = forwardSignal;
    fwd.sa_flags = SA_RESTART;
    sigemptyset(&fwd.sa_mask);
    ::sigaction(SIGINT, &fwd, &oldInt);
    ::sigaction(SIGTERM, &fwd, &oldTerm);
    auto restore = [&] {
        g_child = 0;
        ::sigaction(SIGINT, &oldInt, nullptr);
        ::sigaction(SIGTERM, &oldTerm, nullptr);
    };

    std::fflush(nullptr);
    pid_t child = 0;
    auto args = pointers(argv);
    auto envp = pointers(env);
    const int spawned = ::posix_spawnp(&child, args[0], &actions, &attr, args.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    ::close(pipeFds[1]);
    if (spawned != 0) {
        ::close(pipeFds[0]);
        restore();
        throw std::runtime_error("--scheduler: cannot start " + argv[0] + ": " + std::strerror(spawned) +
                                 " (set OVERLAPSCOPE_PYTHON to a Python 3 with python3-distributed)");
    }
    g_child = child;

    std::optional<RateProgress> progress;
    FILE* in = ::fdopen(pipeFds[0], "r");
    char line[256];
    while (in && std::fgets(line, sizeof line, in)) {
        size_t done = 0, total = 0;
        if (std::sscanf(line, "done %zu %zu", &done, &total) == 2) {
            if (!progress) progress.emplace(verb, "files");
            progress->update(done, total);
        }
    }
    if (in) std::fclose(in);
    progress.reset();
    int status = 0;
    while (::waitpid(child, &status, 0) < 0)
        if (errno != EINTR) break;
    restore();
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

}  // namespace

void SchedulerFlag::addTo(CLI::App* cmd, const std::string& what) {
    cmd->add_option("--scheduler", address,
                    what.empty() ? "Analyse the files on the Dask cluster of this scheduler (tcp://HOST:PORT): one "
                                   "task per file (small files a few to a task), placed on a worker on the file's host "
                                   "for HOST:PATH inputs, "
                                   "merged here (needs python3-distributed and the overlapscope Python module; "
                                   "docs/cluster.md)"
                                 : what)
        ->type_name("ADDRESS");
}

namespace {

fs::path scratchDirectory(const char* name) {
    std::string pattern = (fs::temp_directory_path() / (std::string(name) + "-XXXXXX")).string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("cannot make a scratch directory: " + pattern);
    return pattern;
}

// `python3 -m overlapscope.distributed COMMAND` writing into `directory`,
// which is removed when it fails. Ctrl-C ends this command as interrupted.
void runInto(const std::string& command, const SchedulerFlag& scheduler, const fs::path& directory,
             std::vector<std::string> options, const std::vector<std::string>& inputs, const char* verb) {
    std::vector<std::string> argv = {pythonProgram(),
                                     "-m",
                                     "overlapscope.distributed",
                                     command,
                                     "--scheduler",
                                     scheduler.address,
                                     "--output-dir",
                                     directory.string(),
                                     "--expect-version",
                                     OSC_VERSION};
    argv.insert(argv.end(), options.begin(), options.end());
    argv.push_back("--");
    argv.insert(argv.end(), inputs.begin(), inputs.end());
    int status = 0;
    try {
        status = runModule(argv, verb);
    } catch (...) {
        std::error_code ec;
        fs::remove_all(directory, ec);
        throw;
    }
    if (status == 0) return;
    std::error_code ec;
    fs::remove_all(directory, ec);
    if (status == 130) {
        // Interrupted as the one-process path is: by the signal itself.
        std::signal(SIGINT, SIG_DFL);
        std::raise(SIGINT);
    }
    if (status != 2)
        std::fprintf(stderr,
                     "overlapscope: --scheduler: python3 -m overlapscope.distributed failed (exit status %d; "
                     "it needs python3-distributed and the overlapscope module: OVERLAPSCOPE_PYTHONPATH)\n",
                     status);
    throw ExitWith{status == 2 ? 2 : 3};
}

}  // namespace

ClusterParts::ClusterParts(const SchedulerFlag& scheduler, const std::vector<std::string>& inputs,
                           const AnalysisFlags& flags)
    : directory_(scratchDirectory("overlapscope-parts")) {
    runInto("parts", scheduler, directory_, {"--settings", settingsJson(flags)}, inputs, "analyzing");
}

ClusterParts::~ClusterParts() {
    std::error_code ec;
    fs::remove_all(directory_, ec);
}

job::JobInputs ClusterParts::inputs() const {
    job::JobInputs in;
    in.kind = job::JobKind::FileParts;
    for (const auto& entry : fs::directory_iterator(directory_))
        if (entry.path().extension() == ".part") in.paths.push_back(entry.path().string());
    std::sort(in.paths.begin(), in.paths.end());  // NNNNNNN.part: the job's file order
    return in;
}

ClusterFiles::ClusterFiles(const SchedulerFlag& scheduler, const std::vector<std::string>& inputs)
    : directory_(scratchDirectory("overlapscope-hang")) {
    runInto("files", scheduler, directory_, {}, inputs, "reading");
    try {
        std::ifstream in(directory_ / "manifest.json");
        const nlohmann::json manifest = nlohmann::json::parse(in);
        inputs_ = manifest.at("inputs").get<std::vector<std::string>>();
        renames_ = manifest.at("renames").get<std::vector<std::pair<std::string, std::string>>>();
    } catch (const nlohmann::json::exception& e) {
        std::error_code ec;
        fs::remove_all(directory_, ec);
        throw std::runtime_error(std::string("--scheduler: the Python side left no readable manifest: ") + e.what());
    }
}

ClusterFiles::~ClusterFiles() {
    std::error_code ec;
    fs::remove_all(directory_, ec);
}

std::string ClusterFiles::named(std::string text) const {
    for (const auto& [copy, user] : renames_)
        for (size_t at = text.find(copy); at != std::string::npos; at = text.find(copy, at + user.size()))
            text.replace(at, copy.size(), user);
    return text;
}

}  // namespace osc::cli
