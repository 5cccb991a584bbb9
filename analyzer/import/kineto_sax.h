// The streaming (SAX) side of the Kineto reader: turns JsonScanner's parse
// callbacks into checked Events for a Sink, never building a DOM, so memory
// stays at the size of what the sink keeps however large the trace is.
#pragma once

#include "analyzer/import/kineto_event.h"
#include "analyzer/import/kineto_fields.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace osc::kineto {

class SaxHandler {
public:
    // `path` names the file in FormatErrors.
    SaxHandler(Sink& sink, std::string path) : sink_(sink), path_(std::move(path)) {}

    bool sawTraceEvents() const { return sawTraceEvents_; }
    // Just after start_array() of the traceEvents array: its elements are
    // events (a reader may hand them to the sink another way, then call
    // end_array()).
    bool inEventsArray() const { return !stack_.empty() && stack_.back().frame == Frame::Events; }
    uint64_t eventsSeen() const { return eventsSeen_; }
    // The JsonScanner handler interface.
    bool null();
    bool boolean(bool value);
    bool number_integer(int64_t value);
    bool number_unsigned(uint64_t value);
    bool number_float(const std::string& text);
    bool string(std::string& value);
    bool start_object();
    bool key(std::string& name);
    bool end_object();
    bool start_array();
    bool end_array();

private:
    enum class Frame : uint8_t { Root, Events, Event, Args, ArgVector, DistInfo, DevProps, DevProp, Procs, Proc, Skip };
    struct State {
        Frame frame;
        uint8_t key = 0;    // meaning depends on the frame; 0 = a key we ignore
        uint8_t index = 0;  // next element of an ArgVector
    };
    bool onScalar(const Scalar& value);
    void push(Frame frame) { stack_.push_back({frame}); }
    State& top() { return stack_.back(); }
    [[noreturn]] void fail(const std::string& problem) const { throw FormatError(path_, problem); }

    Sink& sink_;
    std::string path_;
    std::vector<State> stack_;
    Event event_;
    DeviceProperties deviceProps_;
    ProcessInfo process_;
    int64_t distRank_ = -1, distWorldSize_ = -1;
    std::string rootKey_;
    bool sawTraceEvents_ = false;
    uint64_t eventsSeen_ = 0;
};

}  // namespace osc::kineto
