#include "analyzer/import/kineto_fields.h"

#include "analyzer/import/decimal_time.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>

namespace osc::kineto {

EventKey eventKey(std::string_view k) {
    switch (k.size()) {
        case 2:
            if (k == "ph") return kPh;
            if (k == "ts") return kTs;
            break;
        case 3:
            if (k == "cat") return kCat;
            if (k == "pid") return kPid;
            if (k == "tid") return kTid;
            if (k == "dur") return kDur;
            break;
        case 4:
            if (k == "name") return kName;
            if (k == "args") return kArgs;
            break;
        default:
            break;
    }
    return kEvOther;
}

// By length first: a kernel event has a dozen args, most of them ones we skip.
ArgKey argKey(std::string_view k) {
    switch (k.size()) {
        case 3:
            if (k == "Seq") return kSeq;
            break;
        case 4:
            if (k == "grid") return kGrid;
            if (k == "name") return kArgName;
            break;
        case 5:
            if (k == "bytes") return kBytes;
            if (k == "block") return kBlock;
            if (k == "dtype") return kDtype;
            break;
        case 6:
            if (k == "device") return kDevice;
            if (k == "stream") return kStream;
            break;
        case 8:
            if (k == "Src Rank") return kSrcRank;
            if (k == "Dst Rank") return kDstRank;
            break;
        case 10:
            if (k == "Group size") return kGroupSize;
            break;
        case 11:
            if (k == "correlation") return kCorrelation;
            break;
        case 13:
            if (k == "shared memory") return kSharedMem;
            if (k == "In split size") return kInSplit;
            if (k == "In msg nelems") return kInNelems;
            break;
        case 14:
            if (k == "Out split size") return kOutSplit;
            if (k == "Out msg nelems") return kOutNelems;
            break;
        case 15:
            if (k == "Collective name") return kCollName;
            break;
        case 18:
            if (k == "Process Group Name") return kGroupName;
            break;
        case 19:
            if (k == "Process Group Ranks") return kGroupRanks;
            break;
        case 20:
            if (k == "registers per thread") return kRegisters;
            break;
        default:
            break;
    }
    return kArgOther;
}

const char* eventKeyName(uint8_t key) {
    switch (key) {
        case kPh:
            return "ph";
        case kCat:
            return "cat";
        case kName:
            return "name";
        case kTs:
            return "ts";
        case kDur:
            return "dur";
        default:
            return "?";
    }
}

int64_t integerOf(const Scalar& v, int64_t fallback) {
    switch (v.type) {
        case Scalar::Type::Integer:
            return v.i;
        case Scalar::Type::Unsigned:
            return v.u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ? static_cast<int64_t>(v.u)
                                                                                     : fallback;
        case Scalar::Type::Float: {
            // Rare (ids written as 3.0): parse the text only here.
            const std::string text(v.text);
            const double d = std::strtod(text.c_str(), nullptr);
            if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e18) return static_cast<int64_t>(d);
            return fallback;
        }
        default:
            return fallback;
    }
}

void setEventField(Event& event, uint8_t key, const Scalar& v, const std::string& path) {
    auto fail = [&](const std::string& problem) { throw FormatError(path, problem); };
    switch (key) {
        case kPh:
        case kCat:
        case kName: {
            if (v.type != Scalar::Type::String)
                fail(std::string("event field \"") + eventKeyName(key) + "\" is not a string");
            (key == kPh ? event.ph : key == kCat ? event.cat : event.name) = v.text;
            break;
        }
        case kPid:
        case kTid: {
            const int64_t x = integerOf(v, kAbsent);
            (key == kPid ? event.pid : event.tid) = x < 0 ? kAbsent : x;
            break;
        }
        case kTs:
        case kDur: {
            std::optional<int64_t> ns;
            switch (v.type) {
                case Scalar::Type::Integer:
                    ns = microsToNs(v.i);
                    break;
                case Scalar::Type::Unsigned:
                    if (v.u <= static_cast<uint64_t>(kMaxAbsTimeNs)) ns = microsToNs(static_cast<int64_t>(v.u));
                    break;
                case Scalar::Type::Float:
                    ns = microsToNs(v.text);
                    break;
                default:
                    fail(std::string("event field \"") + eventKeyName(key) + "\" is not a number");
            }
            if (!ns)
                fail(std::string("event field \"") + eventKeyName(key) + "\" is out of range (" +
                     (v.type == Scalar::Type::Float     ? std::string(v.text.substr(0, 40))
                      : v.type == Scalar::Type::Integer ? std::to_string(v.i)
                                                        : std::to_string(v.u)) +
                     " us)");
            setEventTime(event, key, *ns, path);
            break;
        }
        default:
            break;
    }
}

void setEventTime(Event& event, uint8_t key, int64_t ns, const std::string& path) {
    if (key == kTs) {
        event.hasTs = true;
        event.tsNs = ns;
    } else {
        if (ns < 0) throw FormatError(path, "negative event duration");
        event.hasDur = true;
        event.durNs = ns;
    }
}

namespace {

void setCommArg(CommArgs& c, uint8_t key, const Scalar& v) {
    if (key <= kGroupRanks) {
        if (v.type != Scalar::Type::String) return;
        // Bounded: these are names and short lists; a hostile file gets no more.
        const std::string_view text = v.text.substr(0, 1 << 16);
        switch (key) {
            case kCollName:
                c.collective = text;
                break;
            case kDtype:
                c.dtype = text;
                break;
            case kInSplit:
                c.inSplit = text;
                break;
            case kOutSplit:
                c.outSplit = text;
                break;
            case kGroupName:
                c.groupName = text;
                break;
            default:
                c.groupRanks = text;
                break;
        }
        return;
    }
    int64_t x = kAbsent;
    if (v.type == Scalar::Type::String) {
        // PyTorch writes some numbers as text ("Src Rank": "3").
        int64_t n = 0;
        const auto [end, ec] = std::from_chars(v.text.data(), v.text.data() + v.text.size(), n);
        if (ec == std::errc() && end == v.text.data() + v.text.size()) x = n;
    } else {
        x = integerOf(v, kAbsent);
    }
    if (x < 0) x = kAbsent;
    switch (key) {
        case kInNelems:
            c.inNelems = x;
            break;
        case kOutNelems:
            c.outNelems = x;
            break;
        case kGroupSize:
            c.groupSize = x;
            break;
        case kSrcRank:
            c.srcRank = x;
            break;
        case kDstRank:
            c.dstRank = x;
            break;
        case kSeq:
            c.seq = x;
            break;
        default:
            break;
    }
}

}  // namespace

void setArg(Event& event, uint8_t key, const Scalar& v) {
    if (key == kArgOther) return;
    if (key >= kCollName) {
        setCommArg(event.comm, key, v);
        return;
    }
    if (key == kArgName) {
        if (v.type == Scalar::Type::String) event.argName = v.text;
        return;
    }
    const int64_t x = integerOf(v, kAbsent);
    const int64_t value = x < 0 ? kAbsent : x;
    switch (key) {
        case kDevice:
            event.device = value;
            break;
        case kStream:
            event.stream = value;
            break;
        case kCorrelation:
            event.correlation = value;
            break;
        case kBytes:
            event.bytes = value;
            break;
        case kRegisters:
            event.registers = value;
            break;
        case kSharedMem:
            event.sharedMemory = value;
            break;
        default:
            break;
    }
}

void setLaunchDimension(Event& event, uint8_t key, uint8_t index, const Scalar& value) {
    int64_t* target = key == kGrid ? event.grid : event.block;
    if (index < 3) target[index] = std::max<int64_t>(0, integerOf(value, 0));
}

}  // namespace osc::kineto
