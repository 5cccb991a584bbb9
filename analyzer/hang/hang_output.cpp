#include "analyzer/hang/hang_output.h"

#include "analyzer/capture/printable_text.h"
#include "analyzer/hang/hang_output_parts.h"
#include "analyzer/metrics/bottleneck.h"
#include "analyzer/report/report_format.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace osc::hang {
namespace {

using report::formatBytes;
using report::formatDuration;

// At most this many lines of each kind in the verdict; the rest is --verbose's.
constexpr size_t kGroupLines = 5;
constexpr size_t kRankLines = 4;

std::string capitalized(std::string s) {
    if (!s.empty()) s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
    return s;
}

// The hung communicators that stuck ranks hold up: the one to look at first, then by id.
std::vector<size_t> hungGroups(const HangAnalysis& a) {
    std::vector<size_t> out;
    for (size_t c = 0; c < a.hung.size(); ++c)
        if (a.hung[c] && std::any_of(a.stuck.begin(), a.stuck.end(),
                                     [&](const StuckRank& s) { return s.communicator == static_cast<int>(c); }))
            out.push_back(c);
    std::stable_sort(out.begin(), out.end(), [&](size_t x, size_t y) {
        return (static_cast<int>(x) == a.firstMissingCommunicator) >
               (static_cast<int>(y) == a.firstMissingCommunicator);
    });
    return out;
}

std::vector<int> stuckIn(const HangAnalysis& a, size_t c, bool present) {
    std::vector<int> out;
    for (const StuckRank& s : a.stuck)
        if (s.communicator == static_cast<int>(c) && (s.member >= 0) == present) out.push_back(shownRank(s));
    return out;
}

std::vector<int> waitingIn(const HangAnalysis& a, size_t c) {
    std::vector<int> out;
    for (int m : a.hung[c]->waitingRanks) out.push_back(shownRank(a.communicators[c].ranks[static_cast<size_t>(m)]));
    return out;
}

// "since 14:03:22.470 UTC (12.0 s before the inputs end)", or less where less is known.
std::string since(const HangAnalysis& a, const HungCollective& h) {
    if (!h.sinceKnown) return "";
    return " since " + wallClock(a, h.waitingSinceNs) +
           (a.endKnown ? " (" + formatDuration(h.waitedNs) + " before the inputs end)" : std::string());
}

// What one group waits in, and who holds it up.
std::string groupClause(const HangAnalysis& a, size_t c, bool withGroup) {
    const CommunicatorProgress& comm = a.communicators[c];
    const HungCollective& h = *a.hung[c];
    const std::vector<int> present = stuckIn(a, c, true), absent = stuckIn(a, c, false);
    const std::vector<int> waiting = waitingIn(a, c);
    std::string who;
    if (!present.empty()) who = rankList(present);
    if (!absent.empty()) who += (who.empty() ? "" : " and ") + rankList(absent) + " (in no input)";
    const std::string what = p(describeSlot(comm, h.slot, h.collective)) + (withGroup ? " of " + p(comm.id) : "");
    return who + " never entered " + what + ", which " + rankList(waiting) + (waiting.size() == 1 ? " has" : " have") +
           " waited in" + since(a, h);
}

std::string statusText(const GroupStatus& s) {
    std::vector<std::string> parts;
    if (s.enqueued) parts.push_back(std::to_string(*s.enqueued) + " enqueued");
    if (s.completed) parts.push_back(std::to_string(*s.completed) + " completed");
    if (parts.empty()) parts.push_back("none enqueued");
    return "pg_status: " + listInWords(parts);
}

std::string frameText(const FlightRecorderFrame& f) {
    const size_t slash = f.filename.find_last_of('/');
    std::string out = p(slash == std::string::npos ? f.filename : f.filename.substr(slash + 1));
    if (f.line >= 0) out += ":" + std::to_string(f.line);
    if (!f.name.empty()) out += " (" + p(f.name) + ")";
    return out;
}

std::string gpuText(const HangAnalysis& a, const GpuState& g) {
    const std::string at = g.at ? " at " + wallClock(a, *g.at) : std::string();
    const std::string kernel = g.call.empty() ? std::string("its kernel") : "the kernel of its " + p(g.call);
    switch (g.kind) {
        case GpuState::Kind::Finished:
            return kernel + " finished" + at;
        case GpuState::Kind::Running:
            return kernel + " has run since" + (g.at ? " " + wallClock(a, *g.at) : std::string(" the capture saw it")) +
                   ", unfinished";
        case GpuState::Kind::NotStarted:
            return "NCCL had " + (g.call.empty() ? std::string("it") : p(g.call)) + at + ", its kernel never began";
        case GpuState::Kind::NeverLaunched:
            return "its capture holds no launch of it";
        case GpuState::Kind::CaptureEnded:
            return "its capture ended before it";
    }
    return {};
}

const GpuState* gpuOf(const HangAnalysis& a, size_t c, int member) {
    for (const GpuState& g : a.gpu)
        if (g.communicator == static_cast<int>(c) && g.member == member) return &g;
    return nullptr;
}

// What one stuck rank last did, in one line.
std::string stuckRankLine(const HangAnalysis& a, const StuckRank& s) {
    const CommunicatorProgress& comm = a.communicators[static_cast<size_t>(s.communicator)];
    const RankProgress& r = comm.ranks[static_cast<size_t>(s.member)];
    std::vector<std::string> parts;
    const Call* done = lastCall(r, true);
    if (r.status && r.status->completed)
        parts.push_back("last completed #" + std::to_string(*r.status->completed) + " of " + p(comm.id) + " by its " +
                        statusText(*r.status));
    else if (done)
        parts.push_back("last completed " + p(describeSlot(comm, done->slot, done->collective)) + " of " + p(comm.id));
    else if (r.ringBuffer)
        parts.push_back("its dump holds no completed call of " + p(comm.id));
    else
        parts.push_back("completed nothing of " + p(comm.id));
    if (s.waitingIn)
        parts.push_back("waits in " + p(describeSlot(comm, s.waitingIn->slot, s.waitingIn->collective)) +
                        " instead (the ranks disagree on what to call next)");
    if (r.host.flightRecorderEntry) {
        std::string last = "newest entry " + p(r.host.flightRecorderEntry->name);
        if (r.host.flightRecorderFrame) last += ", called from " + frameText(*r.host.flightRecorderFrame);
        parts.push_back(last);
    } else {
        parts.push_back(hostSentence(a, r));
    }
    if (const GpuState* g = gpuOf(a, static_cast<size_t>(s.communicator), s.member)) parts.push_back(gpuText(a, *g));
    std::string out = "  " + p(r.label) + ": ";
    for (size_t i = 0; i < parts.size(); ++i) out += (i ? "; " : "") + parts[i];
    return out + ".";
}

// Where the waiting ranks called it from, and what their GPUs did with it.
std::string waitersLine(const HangAnalysis& a, size_t c) {
    const CommunicatorProgress& comm = a.communicators[c];
    const HungCollective& h = *a.hung[c];
    std::map<std::string, std::vector<int>> byWhat;
    for (int m : h.waitingRanks) {
        const RankProgress& r = comm.ranks[static_cast<size_t>(m)];
        std::vector<std::string> what;
        for (const Call& call : r.calls)
            if (call.slot == h.slot && call.frame) what.push_back("called it from " + frameText(*call.frame));
        if (const GpuState* g = gpuOf(a, c, m)) what.push_back(gpuText(a, *g));
        if (!what.empty()) byWhat[listInWords(what)].push_back(shownRank(r));
    }
    if (byWhat.empty()) return {};
    std::string out = "  waiting:";
    for (const auto& [what, ranks] : byWhat) out += " " + rankList(ranks) + " " + what + ";";
    out.back() = '.';
    return out;
}

// Groups where every member present waits and none is stuck: their
// collective waits on something else (NCCL, the network, a rank stuck
// elsewhere), worth a line in a hang's verdict.
std::string othersWaitingLine(const HangAnalysis& a) {
    std::vector<std::string> parts;
    size_t more = 0;
    for (size_t c = 0; c < a.hung.size(); ++c) {
        if (!a.hung[c] || std::any_of(a.stuck.begin(), a.stuck.end(),
                                      [&](const StuckRank& s) { return s.communicator == static_cast<int>(c); }))
            continue;
        if (parts.size() < 3)
            parts.push_back(p(a.communicators[c].id) + " in " +
                            p(describeSlot(a.communicators[c], a.hung[c]->slot, a.hung[c]->collective)));
        else
            ++more;
    }
    if (parts.empty()) return {};
    if (more) parts.push_back(std::to_string(more) + " more");
    return "  also waiting, with every member in it: " + listInWords(parts) + ".";
}

// Members of the inputs' groups that no input holds, over all groups.
std::string absentLine(const HangAnalysis& a) {
    std::set<int> absent;
    std::vector<std::string> unnamed;
    std::set<int> inputs(a.inputRanks.begin(), a.inputRanks.end());
    for (size_t c = 0; c < a.communicators.size(); ++c) {
        const CommunicatorProgress& comm = a.communicators[c];
        if (comm.size <= 0 || comm.source == Source::KernelOrder || !comm.joinedTo.empty()) continue;
        if (!comm.memberRanks.empty()) {
            for (int64_t m : comm.memberRanks)
                if (!inputs.count(static_cast<int>(m))) absent.insert(static_cast<int>(m));
            continue;
        }
        std::set<int> present;
        for (const RankProgress& r : comm.ranks)
            if (r.commRank >= 0) present.insert(r.commRank);
        const size_t missing =
            static_cast<size_t>(comm.size) - std::min(present.size(), static_cast<size_t>(comm.size));
        if (missing > 0)
            unnamed.push_back(std::to_string(missing) + " of " + p(comm.id) + "'s " + std::to_string(comm.size) +
                              " members");
    }
    if (absent.empty() && unnamed.empty()) return {};
    std::vector<std::string> parts;
    if (!absent.empty()) parts.push_back(rankList(std::vector<int>(absent.begin(), absent.end())));
    for (auto& u : unnamed) parts.push_back(u);
    const size_t shown = std::min<size_t>(parts.size(), 3);
    std::string out = "  not in the inputs: " + listInWords(std::vector<std::string>(
                                                    parts.begin(), parts.begin() + static_cast<std::ptrdiff_t>(shown)));
    if (parts.size() > shown) out += " and " + std::to_string(parts.size() - shown) + " more";
    return out + ": add their dumps or captures, or check that their processes are alive.";
}

std::string unknownLine(const HangAnalysis& a) {
    std::map<size_t, std::vector<int>> byComm;
    for (const StuckRank& s : a.unknown) byComm[static_cast<size_t>(s.communicator)].push_back(shownRank(s));
    if (byComm.empty()) return {};
    std::vector<std::string> parts;
    for (const auto& [c, ranks] : byComm) parts.push_back(rankList(ranks) + " of " + p(a.communicators[c].id));
    return "  unknown: whether " + listInWords(parts) +
           " entered the call the others wait in (their dumps hold nothing of the group and no status tied to it).";
}

std::string desyncLine(const HangAnalysis& a, const Desync& d, const char* prefix) {
    const CommunicatorProgress& comm = a.communicators[static_cast<size_t>(d.communicator)];
    std::vector<std::pair<std::string, std::vector<int>>> groups;
    for (const auto& part : d.parts) {
        const std::string what = d.field == "collective" ? part.collective
                                 : d.field == "dtype"    ? part.dtype
                                                         : formatBytes(part.bytes);
        const int rank = shownRank(comm.ranks[static_cast<size_t>(part.member)]);
        auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == what; });
        if (it == groups.end())
            groups.push_back({what, {rank}});
        else
            it->second.push_back(rank);
    }
    std::string out = prefix + p(describeSlot(comm, d.slot, d.parts.front().collective)) + " of " + p(comm.id) + ": ";
    if (!d.note.empty()) return out + p(d.note) + ".";
    std::vector<std::string> parts;
    for (const auto& [what, ranks] : groups) parts.push_back(rankList(ranks) + " with " + p(what));
    const std::string kind = d.field == "collective" ? "collectives" : d.field == "dtype" ? "datatypes" : "sizes";
    return out + "different " + kind + ": " + listInWords(parts) + ".";
}

}  // namespace

std::string describeSlot(const CommunicatorProgress&, const SlotKey& slot, const std::string& collective) {
    return (collective.empty() ? std::string("collective") : collective) + " #" + std::to_string(slot.seq);
}

std::vector<std::string> verdictLines(const HangAnalysis& a) {
    std::vector<std::string> out;
    const std::vector<size_t> groups = hungGroups(a);
    if (a.verdict == Verdict::Hang) {
        std::vector<int> allStuck;
        for (const StuckRank& s : a.stuck) allStuck.push_back(shownRank(s));
        if (groups.size() == 1) {
            out.push_back("HANG: " + groupClause(a, groups[0], true) + ".");
        } else {
            out.push_back("HANG: " + std::to_string(groups.size()) + " groups wait for " + rankList(allStuck) + ":");
            for (size_t i = 0; i < groups.size() && i < kGroupLines; ++i)
                out.push_back("  " + p(a.communicators[groups[i]].id) + ": " + groupClause(a, groups[i], false) + ".");
            if (groups.size() > kGroupLines)
                out.push_back("  and " + std::to_string(groups.size() - kGroupLines) + " more groups (--verbose).");
        }
        size_t shown = 0;
        std::set<int> said;
        for (const StuckRank& s : a.stuck) {
            if (s.member < 0 || !said.insert(shownRank(s)).second) continue;
            if (shown++ < kRankLines) out.push_back(stuckRankLine(a, s));
        }
        if (shown > kRankLines)
            out.push_back("  and " + std::to_string(shown - kRankLines) + " more stuck ranks (--verbose).");
        if (!groups.empty())
            if (std::string w = waitersLine(a, groups[0]); !w.empty()) out.push_back(w);
        if (std::string o = othersWaitingLine(a); !o.empty()) out.push_back(o);
    } else if (a.verdict == Verdict::Desync) {
        out.push_back(desyncLine(a, a.desyncs.front(), "DESYNC: "));
        out.push_back(
            "  NCCL does not check this: it corrupts results or hangs. Find why the ranks disagree (a rank on "
            "another code path, uneven batches or shapes).");
        if (a.desyncs.size() > 1)
            out.push_back("  and " + std::to_string(a.desyncs.size() - 1) + " more desyncs (--verbose).");
    } else {
        out.push_back(healthyHeadline(a));
    }
    if (std::string u = unknownLine(a); !u.empty()) out.push_back(u);
    if (std::string m = absentLine(a); !m.empty()) out.push_back(m);
    if (!a.uncertain.empty()) {
        out.push_back(desyncLine(a, a.uncertain.front(), "  note: "));
        if (a.uncertain.size() > 1)
            out.push_back("  and " + std::to_string(a.uncertain.size() - 1) + " more such notes (--verbose).");
    }
    if (a.verdict == Verdict::Hang) {
        std::vector<int> present;
        for (const StuckRank& s : a.stuck)
            if (s.member >= 0) present.push_back(shownRank(s));
        std::sort(present.begin(), present.end());
        present.erase(std::unique(present.begin(), present.end()), present.end());
        if (!present.empty()) {
            const bool one = present.size() == 1;
            out.push_back("Look at what " + rankList(present) + (one ? " was" : " were") +
                          " doing instead (py-spy dump, gdb, " + (one ? "its" : "their") +
                          " logs): the waiting ranks only wait for " + (one ? "it." : "them."));
        }
    }
    return out;
}

std::string hangHeadline(const HangAnalysis& a) {
    const std::vector<std::string> lines = verdictLines(a);
    if (lines.empty()) return {};
    std::string first = lines.front();
    if (!first.empty() && first.back() == ':') first.back() = '.';  // "HANG: 3 groups wait for ranks 1 and 2:"
    return first;
}

std::string hangParagraph(const HangAnalysis& a) {
    std::string out;
    for (const std::string& line : verdictLines(a)) {
        const size_t first = line.find_first_not_of(' ');
        if (first == std::string::npos) continue;
        out += (out.empty() ? "" : " ") + capitalized(line.substr(first));
    }
    return out;
}

std::string formatHangText(const HangAnalysis& a, bool verbose) {
    std::string out = "overlapscope hang: " + std::to_string(a.communicators.size()) + " communicator" +
                      (a.communicators.size() == 1 ? "" : "s") + " from " + std::to_string(a.inputs.size()) + " input" +
                      (a.inputs.size() == 1 ? "" : "s") + "\n";
    for (const std::string& line : verdictLines(a)) out += line + "\n";
    if (!verbose) {
        out += "(--verbose: each rank's progress and the evidence; --format json: all of it.)\n";
        return out;
    }
    out += progressTables(a);
    for (size_t i = a.verdict == Verdict::Desync ? 1 : 0; i < a.desyncs.size(); ++i)
        out += desyncLine(a, a.desyncs[i], "desync: ") + "\n";
    for (size_t i = 1; i < a.uncertain.size(); ++i) out += desyncLine(a, a.uncertain[i], "note: ") + "\n";
    for (const auto& w : a.warnings) out += "warning: " + p(w) + "\n";
    return out;
}

}  // namespace osc::hang
