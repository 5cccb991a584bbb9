#include "analyzer/hang/size_rules.h"

#include "analyzer/report/report_format.h"

#include <algorithm>
#include <cctype>

namespace osc::hang {
namespace {

std::string squeezed(std::string_view name) {
    std::string out;
    for (char c : name) {
        if (c == ' ' || c == '(') break;  // "broadcast (coalesced, 3 ops)"
        if (c != '_') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return out;
}

std::string familyOfOne(const std::string& s) {
    // Longest names first: "reducescatter" before "reduce", "allgather" before "gather".
    for (const char* f :
         {"alltoall", "allreduce", "allgather", "reducescatter", "broadcast", "barrier", "reduce", "gather", "scatter"})
        if (s.starts_with(f)) return f;
    return {};
}

SizeRule ruleOfFamily(const std::string& f) {
    if (f.empty()) return SizeRule::Unknown;
    if (f == "alltoall") return SizeRule::Free;
    if (f == "scatter") return SizeRule::EqualOutputs;
    return SizeRule::EqualInputs;
}

}  // namespace

std::string collectiveFamily(std::string_view collective) {
    const std::string s = squeezed(collective);
    // A coalesced call of several ops ("all_gather+broadcast"): one family only if they share it.
    std::string family;
    size_t from = 0;
    for (;;) {
        const size_t plus = s.find('+', from);
        const std::string f = familyOfOne(s.substr(from, plus == std::string::npos ? std::string::npos : plus - from));
        if (f.empty() || (!family.empty() && f != family)) return {};
        family = f;
        if (plus == std::string::npos) return family;
        from = plus + 1;
    }
}

SizeRule sizeRuleOf(std::string_view collective) {
    const std::string s = squeezed(collective);
    // A coalesced call's parts each have a rule: all equal, or the loosest.
    SizeRule rule = SizeRule::EqualInputs;
    size_t from = 0;
    for (bool first = true;; first = false) {
        const size_t plus = s.find('+', from);
        const SizeRule r =
            ruleOfFamily(familyOfOne(s.substr(from, plus == std::string::npos ? std::string::npos : plus - from)));
        if (r == SizeRule::Unknown || r == SizeRule::Free) return r;
        if (!first && r != rule) return SizeRule::Unknown;
        rule = r;
        if (plus == std::string::npos) return rule;
        from = plus + 1;
    }
}

SizeVerdict compareCalls(const std::vector<std::pair<int, const Call*>>& calls, const CommunicatorProgress& comm) {
    SizeVerdict v;
    const Call& first = *calls.front().second;
    for (const auto& [m, c] : calls)
        if (!c->collective.empty() && !first.collective.empty() && c->collective != first.collective) {
            v.field = "collective";
            return v;
        }
    for (const auto& [m, c] : calls)
        if (!c->dtype.empty() && !first.dtype.empty() && c->dtype != first.dtype) {
            v.field = "dtype";
            return v;
        }
    const auto differ = [&](auto bytesOf) {
        for (const auto& [m, c] : calls) {
            const std::optional<uint64_t> a = bytesOf(*c), b = bytesOf(first);
            if (a && b ? *a != *b
                       : (!a && !b && !c->shapes.empty() && !first.shapes.empty() && c->shapes != first.shapes))
                return true;
        }
        return false;
    };
    const auto in = [](const Call& c) { return c.bytes; };
    const auto out = [](const Call& c) { return c.outputBytes; };
    switch (sizeRuleOf(first.collective)) {
        case SizeRule::EqualInputs:
            if (differ(in)) v.field = "bytes";
            return v;
        case SizeRule::EqualOutputs:
            if (differ(out)) v.field = "bytes";
            return v;
        case SizeRule::Free: {
            // What every member sends is what every member receives, when all are here.
            if (comm.size <= 0 || calls.size() != static_cast<size_t>(comm.size)) return v;
            uint64_t sent = 0, received = 0;
            for (const auto& [m, c] : calls) {
                if (!c->bytes || !c->outputBytes || __builtin_add_overflow(sent, *c->bytes, &sent) ||
                    __builtin_add_overflow(received, *c->outputBytes, &received))
                    return v;
            }
            if (sent != received) {
                v.field = "bytes";
                v.uncertain = true;
                v.note = "its sizes differ per rank, as an all-to-all's may, but all ranks send " +
                         report::formatBytes(sent) + " and receive " + report::formatBytes(received) +
                         " in all: a rank may send what no peer expects";
            }
            return v;
        }
        case SizeRule::Unknown:
            if (differ(in) || differ(out)) {
                v.field = "bytes";
                v.uncertain = true;
                v.note = "its sizes differ per rank; whether " +
                         (first.collective.empty() ? std::string("this collective") : first.collective) +
                         " needs equal sizes is not known here";
            }
            return v;
    }
    return v;
}

}  // namespace osc::hang
