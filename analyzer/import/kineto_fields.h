// What each field of a trace event means, in one place for both ways the
// reader parses events: the streaming SAX handler (kineto_sax.h) and the
// in-place event parser of the parallel reader (kineto_event_parser.h). Keys
// are looked up once per field; values arrive as a Scalar in whatever form
// JSON gave them and are checked and converted here.
#pragma once

#include "analyzer/capture/capture_error.h"
#include "analyzer/import/kineto_event.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace osc::kineto {

// A well-formed JSON document that is not a usable trace (a field of the wrong
// type, an absurd time): a CaptureError naming the file. readKinetoTrace,
// which knows where the parser stands, adds the line.
class FormatError : public CaptureError {
public:
    using CaptureError::CaptureError;
};

// Keys we read in an event object. 0 always means "ignored".
enum EventKey : uint8_t { kEvOther = 0, kPh, kCat, kName, kPid, kTid, kTs, kDur, kArgs };
// Keys we read in an event's "args".
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

EventKey eventKey(std::string_view key);
ArgKey argKey(std::string_view key);
// "ph", "ts", ... for messages.
const char* eventKeyName(uint8_t key);

// A scalar value in any of the forms JSON gives it. `text` holds strings, and
// numbers that are not integers (or do not fit 64 bits) as written.
struct Scalar {
    enum class Type : uint8_t { Integer, Unsigned, Float, String, Other } type;
    int64_t i = 0;
    uint64_t u = 0;
    std::string_view text = {};
};

// Integer-valued fields (ids, counts). Anything else reads as `fallback`:
// real traces put strings in pid/tid ("Spans") and we only need the numbers.
int64_t integerOf(const Scalar& value, int64_t fallback);

// A scalar under event key `key` / arg key `key`, stored into `event`. A value
// of the wrong type or range for ph, cat, name, ts or dur throws FormatError
// naming `path`.
void setEventField(Event& event, uint8_t key, const Scalar& value, const std::string& path);
// A time already in ns (key kTs or kDur), as setEventField stores it.
void setEventTime(Event& event, uint8_t key, int64_t ns, const std::string& path);
void setArg(Event& event, uint8_t key, const Scalar& value);
// Element `index` (counted from 0, only the first three kept) of args.grid or
// args.block.
void setLaunchDimension(Event& event, uint8_t key, uint8_t index, const Scalar& value);

}  // namespace osc::kineto
