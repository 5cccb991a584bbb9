#include "analyzer/import/kineto_sax.h"

#include "analyzer/import/decimal_time.h"

#include <algorithm>
#include <limits>
#include <string_view>

namespace osc::kineto {
namespace {

// Keys we read, per frame, besides an event's (kineto_fields.h). 0 always means "ignored".
enum RootKey : uint8_t { kRootOther = 0, kTraceEvents, kDistInfo, kDevProps, kProcs, kBaseTime };
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

}  // namespace

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
            } else if (v.type == Scalar::Type::String || v.type == Scalar::Type::Float) {
                sink_.onTopLevelScalar(rootKey_, std::string(v.text));
            } else if (v.type != Scalar::Type::Other) {
                sink_.onTopLevelScalar(rootKey_,
                                       v.type == Scalar::Type::Integer ? std::to_string(v.i) : std::to_string(v.u));
            }
            break;
        case Frame::Events:
            fail("traceEvents[" + std::to_string(eventsSeen_) + "] is not an object");
        case Frame::Event:
            setEventField(event_, s.key, v, path_);
            break;
        case Frame::Args:
            setArg(event_, s.key, v);
            break;
        case Frame::ArgVector:
            if (s.index < 3) setLaunchDimension(event_, s.key, s.index++, v);
            break;
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
                    if (v.type == Scalar::Type::String) deviceProps_.name = v.text;
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
                    if (v.type == Scalar::Type::String) process_.host = v.text;
                    break;
                case kProcName:
                    if (v.type == Scalar::Type::String) process_.name = v.text;
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
    s.text = text;
    return onScalar(s);
}

bool SaxHandler::string(std::string& value) {
    Scalar s{Scalar::Type::String};
    s.text = value;
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
