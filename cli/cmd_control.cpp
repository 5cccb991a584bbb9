// `overlapscope attach | detach | ps | dump`: the agents of running jobs,
// through their control sockets (control/). Every agent found is accounted
// for: one that does not answer is listed and named, never skipped.
#include "analyzer/capture/printable_text.h"
#include "cli/attach_steps.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/help_format.h"
#include "cli/number_option.h"
#include "control/control_client.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace osc::cli {
namespace {

namespace fs = std::filesystem;
using namespace osc::control;

void printRefused(const std::vector<std::string>& refused) {
    for (const auto& line : refused) std::fprintf(stderr, "overlapscope: %s\n", printable(line).c_str());
}

// Which agents a command acts on: PIDs, --all, or --job NAME (with --all or alone).
struct Selection {
    std::vector<int64_t> pids;
    bool all = false;
    std::string job;
};

// The agents chosen that answered, and how many did not (each told on stderr).
struct Chosen {
    std::vector<DiscoveredAgent> agents;
    int silent = 0;
};

void checkSelection(const char* command, const Selection& s) {
    if (!s.pids.empty() && (s.all || !s.job.empty()))
        throw std::invalid_argument(std::string(command) + ": give PIDs, or --all / --job NAME, not both");
    if (s.pids.empty() && !s.all && s.job.empty())
        throw std::invalid_argument(std::string(command) + ": give a PID, --all or --job NAME");
}

void tellSilent(const DiscoveredAgent& a, const char* consequence) {
    std::fprintf(stderr, "overlapscope: %s: %s%s\n", agentName(a.reply.status).c_str(), printable(a.problem).c_str(),
                 consequence);
}

// `consequence` ends the line about an agent that did not answer ("; not attached").
Chosen chooseAgents(const char* command, const Selection& s, const char* consequence) {
    checkSelection(command, s);
    const std::string dir = socketDirectory();
    std::vector<std::string> refused;
    Chosen chosen;
    if (s.pids.empty()) {
        std::vector<DiscoveredAgent> found = surveyAgents(dir, &refused);
        printRefused(refused);
        size_t matching = 0;
        for (DiscoveredAgent& a : found) {
            if (!s.job.empty() && a.reply.status.job != s.job) continue;
            ++matching;
            if (a.answered) {
                chosen.agents.push_back(std::move(a));
            } else {
                tellSilent(a, consequence);
                ++chosen.silent;
            }
        }
        if (matching == 0)
            throw std::invalid_argument(dir + ": no running agents found" +
                                        (s.job.empty() ? std::string() : " of job " + s.job));
        return chosen;
    }
    for (int64_t pid : s.pids) {
        // The same directories for every pid: their problems are told once.
        const auto path = findAgentSocket(pid, dir, chosen.agents.empty() && !chosen.silent ? &refused : nullptr);
        printRefused(refused);
        refused.clear();
        if (!path)
            throw std::invalid_argument(socketPathFor(dir, pid) + ": no agent for pid " + std::to_string(pid) +
                                        " (was it started with `overlapscope run`?)");
        DiscoveredAgent a;
        a.pid = pid;
        a.socketPath = *path;
        a.reply.status.pid = pid;
        // A short status first: a stopped process is named at once, not after a minute.
        try {
            a.reply = sendRequest(*path, ControlRequest{}, answerTimeoutMs());
            chosen.agents.push_back(std::move(a));
        } catch (const NoAnswer&) {
            a.problem = silenceReason(pid, answerTimeoutMs());
            tellSilent(a, consequence);
            ++chosen.silent;
        } catch (const std::runtime_error& e) {
            std::fprintf(stderr, "overlapscope: %s\n", printable(e.what()).c_str());
            ++chosen.silent;
        }
    }
    return chosen;
}

std::vector<std::string> socketsOf(const Chosen& c) {
    std::vector<std::string> sockets;
    for (const auto& a : c.agents) sockets.push_back(a.socketPath);
    return sockets;
}

std::string stepSpan(int64_t first, int64_t last) {
    return first == last ? "step " + std::to_string(first)
                         : "steps " + std::to_string(first) + " to " + std::to_string(last);
}

int controlAll(const std::vector<std::string>& sockets, const ControlRequest& request) {
    // Stopping writes what is waiting, closes the file and builds its indexes.
    constexpr int kTimeoutMs = 60000;
    int failures = 0;
    for (const auto& path : sockets) {
        try {
            const ControlReply r = sendRequest(path, request, kTimeoutMs);
            const std::string who = agentName(r.status);
            if (!r.ok) {
                std::fprintf(stderr, "overlapscope: %s: %s\n", who.c_str(), printable(r.error).c_str());
                ++failures;
            } else if (request.command == ControlCommand::Start) {
                std::printf("%s: capturing to %s\n", who.c_str(), printable(r.status.output).c_str());
            } else if (request.command == ControlCommand::Dump) {
                std::printf("%s: wrote %s (%s)\n", who.c_str(), printable(r.status.output).c_str(),
                            stepSpan(r.status.lookbackFirst, r.status.lookbackLast).c_str());
            } else if (r.status.output.empty()) {
                std::printf("%s: stopped before its first step; no file written\n", who.c_str());
            } else {
                std::printf("%s: stopped, wrote %s (%llu records dropped)\n", who.c_str(),
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

nlohmann::json psItem(const DiscoveredAgent& a) {
    const auto& s = a.reply.status;
    nlohmann::json item = {{"pid", s.pid},           {"rank", s.rank},           {"job", s.job},
                           {"answered", a.answered}, {"command", s.commandLine}, {"socket", a.socketPath}};
    if (!a.answered) {
        item["problem"] = a.problem;
        return item;
    }
    item.update({{"host", s.host},
                 {"state", s.state},
                 {"captures", s.captures},
                 {"output", s.output},
                 {"dropped", s.dropped},
                 {"streaming", s.streaming},
                 {"telemetry", s.telemetry},
                 {"step", s.step},
                 {"step_seconds", s.stepSeconds},
                 {"lookback_steps", s.lookbackSteps},
                 {"lookback_first", s.lookbackFirst},
                 {"lookback_last", s.lookbackLast}});
    if (const auto& c = s.stepCapture) {
        item["step_capture"] = {{"state", c->state}, {"requested", c->requested}, {"written", c->written},
                                {"first", c->first}, {"path", c->path},           {"error", c->error}};
        if (c->atStep) item["step_capture"]["at_step"] = *c->atStep;
    }
    return item;
}

// Exit code 1 when an agent did not answer: it is listed all the same.
int psCommand(bool json, const std::string& job) {
    std::vector<std::string> refused;
    std::vector<DiscoveredAgent> agents = surveyAgents(socketDirectory(), &refused);
    printRefused(refused);
    if (!job.empty()) std::erase_if(agents, [&](const DiscoveredAgent& a) { return a.reply.status.job != job; });
    int silent = 0;
    for (const auto& a : agents)
        if (!a.answered) {
            tellSilent(a, "");
            ++silent;
        }
    if (json) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& a : agents) list.push_back(psItem(a));
        std::printf("%s\n", list.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
        return silent ? 1 : 0;
    }
    if (agents.empty()) {
        std::printf("no running agents%s in %s\n", job.empty() ? "" : (" of job " + printable(job)).c_str(),
                    printable(socketDirectory()).c_str());
        return 0;
    }
    std::printf("%-8s %-5s %-10s %-8s %-8s %-22s %-40s %s\n", "PID", "RANK", "STATE", "STEP", "CAPTURES", "STEPS",
                "OUTPUT", "COMMAND");
    for (const auto& a : agents) {
        const auto& s = a.reply.status;
        const std::string rank = s.rank >= 0 ? std::to_string(s.rank) : "-";
        if (!a.answered) {
            std::printf("%-8lld %-5s %-10s %-8s %-8s %-22s %-40s %.60s\n", static_cast<long long>(s.pid), rank.c_str(),
                        "silent", "-", "-", "-", printable(a.problem).c_str(), printable(s.commandLine).c_str());
            continue;
        }
        std::printf("%-8lld %-5s %-10s %-8s %-8llu %-22s %-40s %.60s\n", static_cast<long long>(s.pid), rank.c_str(),
                    printable(s.state).c_str(), s.step >= 0 ? std::to_string(s.step).c_str() : "-",
                    static_cast<unsigned long long>(s.captures), stepsColumn(s).c_str(),
                    s.output.empty() ? "-" : printable(s.output).c_str(), printable(s.commandLine).c_str());
    }
    return silent ? 1 : 0;
}

std::optional<std::string> outputDirectory(const std::string& output) {
    if (output.empty()) return std::nullopt;
    std::error_code ec;
    fs::create_directories(output, ec);
    return fs::absolute(output).lexically_normal().string();
}

void addSelection(CLI::App* cmd, Selection& s) {
    cmd->add_option("pid", s.pids, "Process ids (see `overlapscope ps`)");
    cmd->add_flag("--all", s.all, "Every running agent of this user");
    cmd->add_option("--job", s.job, "Every running agent of the job with this name (`run --job`, $SLURM_JOB_ID)")
        ->type_name("NAME");
}

struct AttachOptions {
    Selection targets;
    NumberOption duration;
    std::string output;
    NumberOption steps, atStep, lead, timeout;
    bool partial = false, plan = false, wait = false, now = false;
};

int attachCommand(AttachOptions& at) {
    parseNumber("attach", "--duration", at.duration, 0, kMaxSeconds, "seconds");
    parseNumber("attach", "--steps", at.steps, 1, static_cast<double>(kMaxSteps), "a whole number of steps", true);
    parseNumber("attach", "--at-step", at.atStep, 0, static_cast<double>(kMaxStepNumber), "a step number", true);
    parseNumber("attach", "--lead", at.lead, 0, 3600, "seconds");
    parseNumber("attach", "--timeout", at.timeout, 1, kMaxSeconds, "seconds");
    const bool steps = at.steps.given();
    if (!steps && (at.atStep.given() || at.partial || at.plan || at.wait))
        throw std::invalid_argument("attach: --at-step, --partial, --plan and --wait go with --steps");
    if (steps && at.duration.given()) throw std::invalid_argument("attach: --steps and --duration exclude each other");
    if (steps && at.now) throw std::invalid_argument("attach: --now is for a capture of --duration, not --steps");
    if (at.plan && at.atStep.given())
        throw std::invalid_argument("attach: --plan chooses the step; it does not take --at-step");
    checkSelection("attach", at.targets);
    StepAttachOptions o;
    o.outputDir = outputDirectory(at.output);
    if (at.lead.given()) o.leadS = at.lead.value;
    if (at.timeout.given()) o.timeoutS = at.timeout.value;
    const Chosen chosen = chooseAgents("attach", at.targets, "; not attached");
    const int silent = chosen.silent ? 1 : 0;
    if (chosen.agents.empty()) return 1;
    const std::vector<std::string> sockets = socketsOf(chosen);
    if (steps) {
        o.steps = static_cast<int64_t>(at.steps.value);
        if (at.atStep.given()) o.atStep = static_cast<int64_t>(at.atStep.value);
        o.partial = at.partial;
        o.plan = at.plan;
        o.wait = at.wait;
        return attachSteps(sockets, o) | silent;
    }
    ControlRequest req;
    req.command = ControlCommand::Start;
    if (at.duration.value > 0) req.durationS = at.duration.value;
    req.outputDir = o.outputDir;
    const auto plain = [&] { return controlAll(sockets, req); };
    if (sockets.size() < 2 || at.now) return plain() | silent;
    // Aligned by default: a job with steps starts every rank at one step.
    if (!at.timeout.given()) o.timeoutS = 10;
    return attachAligned(sockets, at.duration.value, o, plain) | silent;
}

}  // namespace

void addControlCommands(CLI::App& app, CommandRunner& selected) {
    auto at = std::make_shared<AttachOptions>();
    auto* a = app.add_subcommand("attach");
    describe(a, "Start a capture in running agents (jobs launched with `run`)",
             "overlapscope attach --all --duration 5");
    addSelection(a, at->targets);
    a->add_option("--duration", at->duration.text,
                  "Stop after this many seconds (0: until detach or exit; up to 1e6). Several agents of a job with "
                  "steps capture the same steps: as many whole steps as take about this long")
        ->type_name("SECONDS");
    a->add_flag("--now", at->now,
                "Several agents: start each capture as the request reaches it, even in a job with steps "
                "(their windows then begin at different steps)");
    a->add_option("--output,-o", at->output, "Directory for the capture files (default: the run's)")
        ->check(nonEmptyFileName());
    a->add_option("--steps", at->steps.text,
                  "Capture this many whole steps, the same step numbers on every agent (1 to 1e6)")
        ->type_name("N");
    a->add_option("--at-step", at->atStep.text,
                  "With --steps: start at the step with this number in its range name (default: a step "
                  "every agent reaches after the request; a step already past is taken from the look-back "
                  "ring while it holds it)")
        ->type_name("S");
    a->add_flag("--partial", at->partial, "With --steps: also write each capture's partial result");
    a->add_flag("--plan", at->plan,
                "With --steps: only print the step number such a capture would start at here (attach nothing); "
                "the largest over a job's nodes goes to --at-step");
    a->add_flag("--wait", at->wait, "With --steps: return once every capture (and partial) is written");
    a->add_option("--lead", at->lead.text,
                  "Without --at-step: seconds between the newest step seen and the first captured (default 3)")
        ->type_name("SECONDS");
    a->add_option("--timeout", at->timeout.text,
                  "Seconds to wait for steps to show (default 60 with --steps, else 10), and with --wait for "
                  "progress")
        ->type_name("SECONDS");
    a->footer(
        "More examples: overlapscope attach --job llama-70b --steps 10 --partial --wait\n"
        "               S=$(overlapscope attach --all --steps 10 --plan); overlapscope attach --all --steps 10 "
        "--at-step $S\n"
        "Exit code 1 when an agent refused, failed or did not answer (each named on stderr).");
    a->callback([at, &selected] { selected = [at] { return attachCommand(*at); }; });

    auto dt = std::make_shared<Selection>();
    auto* d = app.add_subcommand("detach");
    describe(d, "Stop the capture in running agents and close their files", "overlapscope detach --all",
             "A step capture (attach --steps) too.");
    addSelection(d, *dt);
    d->callback([dt, &selected] {
        selected = [dt] {
            ControlRequest req;
            req.command = ControlCommand::Stop;
            const Chosen chosen = chooseAgents("detach", *dt, "; not detached");
            return controlAll(socketsOf(chosen), req) | (chosen.silent ? 1 : 0);
        };
    });

    struct DumpOptions {
        Selection targets;
        std::string output;
    };
    auto du = std::make_shared<DumpOptions>();
    auto* u = app.add_subcommand("dump");
    describe(u, "Write the steps in the agents' look-back rings to capture files now", "overlapscope dump --all",
             "The steps each agent holds in its look-back ring (`run --lookback`), to a capture file per agent: "
             "each rank writes the steps its ring holds, e.g. the last 5.");
    addSelection(u, du->targets);
    u->add_option("--output,-o", du->output, "Directory for the capture files (default: the run's)")
        ->check(nonEmptyFileName());
    u->footer("Exit code 1 when an agent holds no step, failed or did not answer.");
    u->callback([du, &selected] {
        selected = [du] {
            ControlRequest req;
            req.command = ControlCommand::Dump;
            req.outputDir = outputDirectory(du->output);
            const Chosen chosen = chooseAgents("dump", du->targets, "; nothing written");
            return controlAll(socketsOf(chosen), req) | (chosen.silent ? 1 : 0);
        };
    });

    struct PsOptions {
        bool json = false;
        std::string job;
    };
    auto ps = std::make_shared<PsOptions>();
    auto* p = app.add_subcommand("ps");
    describe(p, "List running agents of this user: pid, rank, state, output file", "overlapscope ps --job llama-70b");
    p->add_flag("--json", ps->json, "One JSON array instead of a table");
    p->add_option("--job", ps->job, "Only the agents of the job with this name")->type_name("NAME");
    p->footer(
        "An agent whose process does not answer in 2 s ($OVERLAPSCOPE_ANSWER_TIMEOUT_MS) is listed as silent, "
        "with why when /proc says (a stopped process), and the exit code is 1.");
    p->callback([ps, &selected] { selected = [ps] { return psCommand(ps->json, ps->job); }; });
}

}  // namespace osc::cli
