#include "analyzer/import/kineto_sax.h"

#include "analyzer/import/decimal_time.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string_view>

namespace osc::kineto {
namespace {

// Keys we read, per frame. 0 always means "ignored".
enum RootKey : uint8_t { kRootOther = 0, kTraceEvents, kDistInfo, kDevProps, kProcs, kBaseTime };
enum EventKey : uint8_t { kEvOther = 0, kPh, kCat, kName, kPid, kTid, kTs, kDur, kArgs };
enum ArgKey : uint8_t {
    kArgOther = 0,
    kDevice,
    kStream,
    kCorrelation,
    kBytes,
    kRegisters,
    kSharedMem,
    kGrid,
    kBlock,
    kArgName,  // metadata events' name ("thread_name")
    // PyTorch's collective arguments on NCCL kernels.
    kCollName,
    kDtype,
    kInSplit,
    kOutSplit,
    kGroupName,
    kGroupRanks,
    kInNelems,
    kOutNelems,
    kGroupSize,
    kSrcRank,
    kDstRank,
    kSeq
};
enum DistKey : uint8_t { kDistOther = 0, kRank, kWorldSize };
enum DevKey : uint8_t { kDevOther = 0, kDevId, kDevName, kDevMem, kDevSms, kDevMajor, kDevMinor };
enum ProcKey : uint8_t {
    kProcOther = 0,
    kProcTracePid,
    kProcPid,
    kProcRank,
    kProcLocalRank,
    kProcWorld,
    kProcHost,
    kProcName
};

uint8_t rootKey(std::string_view k) {
    if (k == "traceEvents") return kTraceEvents;
    if (k == "distributedInfo") return kDistInfo;
    if (k == "deviceProperties") return kDevProps;
    if (k == "overlapscopeProcesses") return kProcs;
    if (k == "baseTimeNanoseconds") return kBaseTime;
    return kRootOther;
}

uint8_t eventKey(std::string_view k) {
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

uint8_t argKey(std::string_view k) {
    if (k == "device") return kDevice;
    if (k == "stream") return kStream;
    if (k == "correlation") return kCorrelation;
    if (k == "bytes") return kBytes;
    if (k == "registers per thread") return kRegisters;
    if (k == "shared memory") return kSharedMem;
    if (k == "grid") return kGrid;
    if (k == "block") return kBlock;
    if (k == "name") return kArgName;
    if (k == "Collective name") return kCollName;
    if (k == "dtype") return kDtype;
    if (k == "In split size") return kInSplit;
    if (k == "Out split size") return kOutSplit;
    if (k == "Process Group Name") return kGroupName;
    if (k == "Process Group Ranks") return kGroupRanks;
    if (k == "In msg nelems") return kInNelems;
    if (k == "Out msg nelems") return kOutNelems;
    if (k == "Group size") return kGroupSize;
    if (k == "Src Rank") return kSrcRank;
    if (k == "Dst Rank") return kDstRank;
    if (k == "Seq") return kSeq;
    return kArgOther;
}

uint8_t distKey(std::string_view k) {
    if (k == "rank") return kRank;
    if (k == "world_size") return kWorldSize;
    return kDistOther;
}

uint8_t devKey(std::string_view k) {
    if (k == "id") return kDevId;
    if (k == "name") return kDevName;
    if (k == "totalGlobalMem") return kDevMem;
    if (k == "numSms") return kDevSms;
    if (k == "computeMajor") return kDevMajor;
    if (k == "computeMinor") return kDevMinor;
    return kDevOther;
}

uint8_t procKey(std::string_view k) {
    if (k == "tracePid") return kProcTracePid;
    if (k == "pid") return kProcPid;
    if (k == "rank") return kProcRank;
    if (k == "localRank") return kProcLocalRank;
    if (k == "worldSize") return kProcWorld;
    if (k == "host") return kProcHost;
    if (k == "name") return kProcName;
    return kProcOther;
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

}  // namespace

// Integer-valued fields (ids, counts). Anything else reads as `fallback`: real
// traces put strings in pid/tid ("Spans") and we only need the numbers.
int64_t SaxHandler::integerOf(const Scalar& v, int64_t fallback) {
    switch (v.type) {
        case Scalar::Type::Integer:
            return v.i;
        case Scalar::Type::Unsigned:
            return v.u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ? static_cast<int64_t>(v.u)
                                                                                     : fallback;
        case Scalar::Type::Float: {
            // Rare (ids written as 3.0): parse the text only here.
            const double d = std::strtod(v.text->c_str(), nullptr);
            if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e18) return static_cast<int64_t>(d);
            return fallback;
        }
        default:
            return fallback;
    }
}

bool SaxHandler::onScalar(const Scalar& v) {
    if (stack_.empty()) fail("the file is a single JSON value, not a trace");
    auto integer = [&](int64_t fallback) { return integerOf(v, fallback); };
    auto nonNegative = [&]() {
        const int64_t x = integer(kAbsent);
        return x < 0 ? kAbsent : x;
    };
    State& s = top();
    switch (s.frame) {
        case Frame::Root:
            if (s.key == kBaseTime) {
                const int64_t base = integer(std::numeric_limits<int64_t>::min());
                if (base == std::numeric_limits<int64_t>::min() || base < 0 || base > kMaxAbsTimeNs)
                    fail("\"baseTimeNanoseconds\" is not a valid time");
                sink_.onBaseTimeNs(base);
            } else if (v.type == Scalar::Type::String) {
                sink_.onTopLevelScalar(rootKey_, *v.text);
            } else if (v.type != Scalar::Type::Other) {
                sink_.onTopLevelScalar(rootKey_, v.text                            ? *v.text
                                                 : v.type == Scalar::Type::Integer ? std::to_string(v.i)
                                                                                   : std::to_string(v.u));
            }
            break;
        case Frame::Events:
            fail("traceEvents[" + std::to_string(eventsSeen_) + "] is not an object");
        case Frame::Event:
            onEventField(s.key, v);
            break;
        case Frame::Args:
            onArg(s.key, v);
            break;
        case Frame::ArgVector: {
            int64_t* target = s.key == kGrid ? event_.grid : event_.block;
            if (s.index < 3) target[s.index++] = std::max<int64_t>(0, integer(0));
            break;
        }
        case Frame::DistInfo:
            if (s.key == kRank) distRank_ = integer(-1);
            if (s.key == kWorldSize) distWorldSize_ = integer(-1);
            break;
        case Frame::DevProp:
            switch (s.key) {
                case kDevId:
                    deviceProps_.id = nonNegative();
                    break;
                case kDevName:
                    if (v.type == Scalar::Type::String) deviceProps_.name = *v.text;
                    break;
                case kDevMem:
                    deviceProps_.totalMemory = std::max<int64_t>(0, integer(0));
                    break;
                case kDevSms:
                    deviceProps_.smCount = std::max<int64_t>(0, integer(0));
                    break;
                case kDevMajor:
                    deviceProps_.computeMajor = std::max<int64_t>(0, integer(0));
                    break;
                case kDevMinor:
                    deviceProps_.computeMinor = std::max<int64_t>(0, integer(0));
                    break;
                default:
                    break;
            }
            break;
        case Frame::Proc:
            switch (s.key) {
                case kProcTracePid:
                    process_.tracePid = integer(kAbsent);
                    break;
                case kProcPid:
                    process_.pid = integer(0);
                    break;
                case kProcRank:
                    process_.rank = integer(-1);
                    break;
                case kProcLocalRank:
                    process_.localRank = integer(-1);
                    break;
                case kProcWorld:
                    process_.worldSize = integer(-1);
                    break;
                case kProcHost:
                    if (v.type == Scalar::Type::String) process_.host = *v.text;
                    break;
                case kProcName:
                    if (v.type == Scalar::Type::String) process_.name = *v.text;
                    break;
                default:
                    break;
            }
            break;
        case Frame::DevProps:
        case Frame::Procs:
        case Frame::Skip:
            break;
    }
    return true;
}

void SaxHandler::onEventField(uint8_t key, const Scalar& v) {
    switch (key) {
        case kPh:
        case kCat:
        case kName: {
            if (v.type != Scalar::Type::String)
                fail(std::string("event field \"") + eventKeyName(key) + "\" is not a string");
            (key == kPh ? event_.ph : key == kCat ? event_.cat : event_.name) = *v.text;
            break;
        }
        case kPid:
        case kTid: {
            const int64_t x = integerOf(v, kAbsent);
            (key == kPid ? event_.pid : event_.tid) = x < 0 ? kAbsent : x;
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
                    ns = microsToNs(*v.text);
                    break;
                default:
                    fail(std::string("event field \"") + eventKeyName(key) + "\" is not a number");
            }
            if (!ns)
                fail(std::string("event field \"") + eventKeyName(key) + "\" is out of range (" +
                     (v.text                            ? v.text->substr(0, 40)
                      : v.type == Scalar::Type::Integer ? std::to_string(v.i)
                                                        : std::to_string(v.u)) +
                     " us)");
            if (key == kTs) {
                event_.hasTs = true;
                event_.tsNs = *ns;
            } else {
                if (*ns < 0) fail("negative event duration");
                event_.hasDur = true;
                event_.durNs = *ns;
            }
            break;
        }
        default:
            break;
    }
}

void SaxHandler::onArg(uint8_t key, const Scalar& v) {
    if (key == kArgOther) return;
    if (key >= kCollName) {
        onCommArg(key, v);
        return;
    }
    if (key == kArgName) {
        if (v.type == Scalar::Type::String) event_.argName = *v.text;
        return;
    }
    const int64_t x = integerOf(v, kAbsent);
    const int64_t value = x < 0 ? kAbsent : x;
    switch (key) {
        case kDevice:
            event_.device = value;
            break;
        case kStream:
            event_.stream = value;
            break;
        case kCorrelation:
            event_.correlation = value;
            break;
        case kBytes:
            event_.bytes = value;
            break;
        case kRegisters:
            event_.registers = value;
            break;
        case kSharedMem:
            event_.sharedMemory = value;
            break;
        default:
            break;
    }
}

void SaxHandler::onCommArg(uint8_t key, const Scalar& v) {
    CommArgs& c = event_.comm;
    if (key <= kGroupRanks) {
        if (v.type != Scalar::Type::String) return;
        // Bounded: these are names and short lists; a hostile file gets no more.
        const std::string text = v.text->substr(0, 1 << 16);
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
        const std::string& t = *v.text;
        int64_t n = 0;
        const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), n);
        if (ec == std::errc() && end == t.data() + t.size()) x = n;
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

bool SaxHandler::null() { return onScalar({Scalar::Type::Other}); }
bool SaxHandler::boolean(bool) { return onScalar({Scalar::Type::Other}); }

bool SaxHandler::number_integer(int64_t value) {
    Scalar s{Scalar::Type::Integer};
    s.i = value;
    return onScalar(s);
}

bool SaxHandler::number_unsigned(uint64_t value) {
    Scalar s{Scalar::Type::Unsigned};
    s.u = value;
    return onScalar(s);
}

bool SaxHandler::number_float(const std::string& text) {
    Scalar s{Scalar::Type::Float};
    s.text = &text;
    return onScalar(s);
}

bool SaxHandler::string(std::string& value) {
    Scalar s{Scalar::Type::String};
    s.text = &value;
    return onScalar(s);
}

bool SaxHandler::key(std::string& name) {
    State& s = top();
    switch (s.frame) {
        case Frame::Root:
            s.key = rootKey(name);
            rootKey_ = name;
            break;
        case Frame::Event:
            s.key = eventKey(name);
            break;
        case Frame::Args:
            s.key = argKey(name);
            break;
        case Frame::DistInfo:
            s.key = distKey(name);
            break;
        case Frame::DevProp:
            s.key = devKey(name);
            break;
        case Frame::Proc:
            s.key = procKey(name);
            break;
        default:
            break;
    }
    return true;
}

bool SaxHandler::start_object() {
    if (stack_.empty()) {
        push(Frame::Root);
        return true;
    }
    const State s = top();
    switch (s.frame) {
        case Frame::Root:
            push(s.key == kDistInfo ? Frame::DistInfo : Frame::Skip);
            break;
        case Frame::Events:
            event_.clear();
            push(Frame::Event);
            break;
        case Frame::Event:
            if (s.key == kArgs) {
                push(Frame::Args);
                break;
            }
            if (s.key != kEvOther) fail(std::string("event field \"") + eventKeyName(s.key) + "\" is an object");
            push(Frame::Skip);
            break;
        case Frame::DevProps:
            deviceProps_ = DeviceProperties{};
            push(Frame::DevProp);
            break;
        case Frame::Procs:
            process_ = ProcessInfo{};
            push(Frame::Proc);
            break;
        default:
            push(Frame::Skip);
            break;
    }
    return true;
}

bool SaxHandler::end_object() {
    const Frame frame = top().frame;
    stack_.pop_back();
    switch (frame) {
        case Frame::Event:
            ++eventsSeen_;
            sink_.onEvent(event_);
            break;
        case Frame::DistInfo:
            sink_.onDistributedInfo(distRank_, distWorldSize_);
            break;
        case Frame::DevProp:
            sink_.onDeviceProperties(deviceProps_);
            break;
        case Frame::Proc:
            sink_.onProcessInfo(process_);
            break;
        default:
            break;
    }
    return true;
}

bool SaxHandler::start_array() {
    if (stack_.empty()) {
        // The "JSON Array Format" of Chrome traces: just the events.
        sawTraceEvents_ = true;
        push(Frame::Root);
        push(Frame::Events);
        return true;
    }
    const State s = top();
    switch (s.frame) {
        case Frame::Root:
            if (s.key == kTraceEvents) {
                if (sawTraceEvents_) fail("more than one \"traceEvents\" array");
                sawTraceEvents_ = true;
                push(Frame::Events);
            } else if (s.key == kDevProps) {
                push(Frame::DevProps);
            } else if (s.key == kProcs) {
                push(Frame::Procs);
            } else {
                push(Frame::Skip);
            }
            break;
        case Frame::Events:
            fail("traceEvents[" + std::to_string(eventsSeen_) + "] is not an object");
        case Frame::Event:
            if (s.key != kEvOther) fail(std::string("event field \"") + eventKeyName(s.key) + "\" is an array");
            push(Frame::Skip);
            break;
        case Frame::Args:
            if (s.key == kGrid || s.key == kBlock) {
                push(Frame::ArgVector);
                top().key = s.key;
                break;
            }
            push(Frame::Skip);
            break;
        default:
            push(Frame::Skip);
            break;
    }
    return true;
}

bool SaxHandler::end_array() {
    stack_.pop_back();
    return true;
}

}  // namespace osc::kineto
