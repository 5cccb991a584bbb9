#include "analyzer/import/kineto_comm_args.h"

#include "analyzer/import/kineto_names.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace osc::kineto {
namespace {

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

bool isAllToAll(const std::string& name) {
    const std::string n = lower(name);
    return n.rfind("all_to_all", 0) == 0 || n.rfind("alltoall", 0) == 0;
}

// Larger than any expert-parallel group in use (hundreds of ranks); a hostile
// group size stops here, since an all-to-all makes two rows per member.
constexpr size_t kMaxGroup = 4096;
// Rows per process: a trace claiming more gets no more (bounded memory).
constexpr size_t kMaxRowsPerProcess = 32u << 20;

}  // namespace

uint64_t groupHash(const std::string& name) {
    uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
    for (unsigned char c : "pytorch-process-group:" + name) {
        h ^= c;
        h *= 0x100000001b3ull;
    }
    return h;
}

std::vector<int64_t> parseIntList(const std::string& text, bool& ok, bool* truncated) {
    std::vector<int64_t> out;
    ok = false;
    if (truncated) *truncated = false;
    size_t i = 0;
    const auto skip = [&] {
        while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    };
    skip();
    if (i >= text.size() || text[i] != '[') return out;
    ++i;
    skip();
    if (i < text.size() && text[i] == ']') {
        ok = true;
        return out;
    }
    while (i < text.size() && out.size() < kMaxGroup) {
        int64_t v = 0;
        const auto [end, ec] = std::from_chars(text.data() + i, text.data() + text.size(), v);
        if (ec != std::errc() || v < 0) return {};
        out.push_back(v);
        i = static_cast<size_t>(end - text.data());
        skip();
        if (i < text.size() && text[i] == ']') {
            ok = true;
            return out;
        }
        if (i >= text.size() || text[i] != ',') return {};
        ++i;
        skip();
        // PyTorch keeps the first 30 entries of a longer list: "[0, 1, ..., 29, ...]".
        if (truncated && text.compare(i, 3, "...") == 0) {
            i += 3;
            skip();
            if (i >= text.size() || text[i] != ']') return {};
            *truncated = ok = true;
            return out;
        }
    }
    return {};
}

int64_t groupRankOf(const std::vector<int64_t>& members, bool truncated, int64_t groupSize, int64_t global) {
    if (members.empty()) return truncated ? -1 : global;
    if (const auto it = std::find(members.begin(), members.end(), global); it != members.end())
        return it - members.begin();
    if (!truncated || members.size() < 2 || groupSize <= 0) return -1;
    // Past the kept prefix: only a group whose prefix is evenly spaced (new_group
    // over a range, the usual pipeline, data and expert groups) is extended.
    const int64_t start = members[0], stride = members[1] - members[0];
    if (stride <= 0) return -1;
    for (size_t k = 2; k < members.size(); ++k)
        if (members[k] - members[k - 1] != stride) return -1;
    if (global < start || (global - start) % stride != 0) return -1;
    const int64_t index = (global - start) / stride;
    return index < groupSize ? index : -1;
}

int64_t ncclElementsOf(const CommArgs& a, std::string_view func) {
    const int64_t n = func == "ReduceScatter" && a.outNelems != kAbsent ? a.outNelems : a.inNelems;
    return n == kAbsent || n > (int64_t{1} << 50) ? -1 : n;
}

void appendArgsRow(CollectiveTable& t, StringTable& strings, uint32_t func, uint32_t dtype, uint64_t elements,
                   uint64_t bytes, int32_t rank, int32_t nranks, uint32_t device, TimeNs start, TimeNs end) {
    t.commHash.push_back(0);
    t.rank.push_back(rank);
    t.nranks.push_back(nranks);
    t.seqNumber.push_back(t.seqNumber.size());
    t.func.push_back(func);
    t.datatype.push_back(dtype);
    t.algo.push_back(strings.intern(""));
    t.proto.push_back(strings.intern(""));
    t.count.push_back(elements);
    t.bytes.push_back(bytes);
    t.root.push_back(-1);
    t.nChannels.push_back(-1);
    t.device.push_back(device);
    t.enqueue.push_back(-1);
    t.gpuStart.push_back(start);
    t.gpuEnd.push_back(end);
}

const std::string& groupOf(const CommArgs& a) { return a.groupName.empty() ? a.groupRanks : a.groupName; }

GroupMembers groupMembersOf(const CommArgs& a) {
    GroupMembers g;
    g.ranks = parseIntList(a.groupRanks, g.listed, &g.truncated);
    g.size = a.groupSize >= 0 ? a.groupSize : g.listed && !g.truncated ? static_cast<int64_t>(g.ranks.size()) : -1;
    return g;
}

bool isSendOrRecv(const CommArgs& a) {
    const std::string n = lower(a.collective);
    return n == "send" || n == "recv";
}

bool describesSendsOrReceives(const CommArgs& a) {
    return isSendOrRecv(a) || isAllToAll(a.collective) ||
           (lower(a.collective) == "coalesced" && (!a.inSplit.empty() || !a.outSplit.empty()));
}

void appendCommRows(Process& p, StringTable& strings, const PendingComm& c, int processRank) {
    const CommArgs& a = c.args;
    const GroupMembers g = groupMembersOf(a);
    const int64_t size = g.size;
    // Group rank of a global rank ("Dst Rank", "Src Rank" and our own rank are global).
    const auto groupRank = [&](int64_t global) -> int64_t {
        if (!g.listed) return a.groupRanks.empty() ? global : -1;
        return groupRankOf(g.ranks, g.truncated, size, global);
    };
    const int64_t self = processRank >= 0 ? groupRank(processRank) : -1;
    if (self < 0 || size <= 0 || size > static_cast<int64_t>(kMaxGroup)) return;
    const uint64_t element = static_cast<uint64_t>(dtypeBytes(a.dtype));
    const uint32_t func[2] = {strings.intern("Recv"), strings.intern("Send")};
    const uint32_t dtype = strings.intern(a.dtype), none = strings.intern("");
    const uint64_t comm = groupHash(groupOf(a));
    const auto add = [&](bool send, int64_t peer, uint64_t elements) {
        if (elements > (uint64_t{1} << 56)) return;  // no real message; keeps bytes from overflowing
        auto& t = p.collectives;
        if (t.size() >= kMaxRowsPerProcess) return;
        t.commHash.push_back(comm);
        t.rank.push_back(static_cast<int32_t>(self));
        t.nranks.push_back(static_cast<int32_t>(size));
        // A Send/Recv row's number counts per peer and direction; PyTorch's
        // "Seq" counts the group's collectives (Process::groupCalls keeps it).
        t.seqNumber.push_back(0);
        t.p2pNumbered = false;
        t.func.push_back(func[send ? 1 : 0]);
        t.datatype.push_back(dtype);
        t.algo.push_back(none);
        t.proto.push_back(none);
        t.count.push_back(elements);
        t.bytes.push_back(elements * element);
        t.root.push_back(static_cast<int32_t>(peer));
        t.nChannels.push_back(0);
        t.device.push_back(c.device);
        t.enqueue.push_back(-1);
        t.gpuStart.push_back(c.start);
        t.gpuEnd.push_back(c.end);
    };
    const std::string name = lower(a.collective);
    if (name == "send" || name == "recv") {
        const bool send = name == "send";
        const int64_t peer = groupRank(send ? a.dstRank : a.srcRank);
        const int64_t n = send ? a.inNelems : (a.outNelems >= 0 ? a.outNelems : a.inNelems);
        if (peer >= 0 && peer < size && n >= 0) add(send, peer, static_cast<uint64_t>(n));
        return;
    }
    // Split sizes are in rows of the first dimension (all_to_all_single);
    // an empty list splits evenly. An all-to-all names every peer, even one
    // it sends nothing; a coalesced group only the peers it exchanges with.
    const bool every = isAllToAll(a.collective);
    for (int dir = 0; dir < 2; ++dir) {
        const bool send = dir == 0;
        const int64_t total = send ? a.inNelems : (a.outNelems >= 0 ? a.outNelems : a.inNelems);
        bool ok = false;
        std::vector<int64_t> split = parseIntList(send ? a.inSplit : a.outSplit, ok);
        if (!ok || total < 0) continue;
        if (split.empty()) {
            if (!every) continue;
            split.assign(static_cast<size_t>(size), 1);
        }
        if (static_cast<int64_t>(split.size()) != size) continue;
        int64_t rows = 0;
        bool overflow = false;
        for (int64_t v : split) overflow |= __builtin_add_overflow(rows, v, &rows);
        if (overflow) continue;
        const int64_t perRow = rows > 0 ? total / rows : 0;
        for (int64_t peer = 0; peer < size; ++peer) {
            const int64_t n = split[static_cast<size_t>(peer)] * perRow;
            if (peer == self || (!every && n == 0)) continue;
            add(send, peer, static_cast<uint64_t>(n));
        }
    }
}

}  // namespace osc::kineto
