// One traceEvents element read in place into an Event, for the parallel
// reader: keys looked up as they are met, the fields we use converted by
// kineto_fields.h exactly as SaxHandler converts them, everything else
// skipped without being handed over. Checks nothing SaxHandler does not and
// misses nothing it does: a value SaxHandler refuses throws (FormatError, or
// json_in_place::Unparsed for bad JSON), and the caller then leaves the file
// to the streaming reader, which names the problem.
#pragma once

#include "analyzer/import/json_in_place.h"
#include "analyzer/import/key_predictor.h"
#include "analyzer/import/kineto_event.h"

#include <string>

namespace osc::kineto {

class EventParser {
public:
    // `path` names the file in FormatErrors. Without `launchShape`, the
    // arrays args.grid and args.block are skipped (checked as JSON only, all
    // SaxHandler checks of them): a load without launch details keeps neither.
    explicit EventParser(std::string path, bool launchShape = true)
        : path_(std::move(path)), launchShape_(launchShape) {}

    // The element at the cursor (white space may come first) into `event`;
    // the cursor ends just after it.
    void parse(json_in_place::Cursor& c, Event& event);

private:
    void args(json_in_place::Cursor& c, Event& event);
    void launchDimensions(json_in_place::Cursor& c, Event& event, uint8_t key);

    std::string path_;
    bool launchShape_ = true;
    std::string key_, value_;  // scratch for strings with escapes
    // The keys of events, and of args per event category (a few slots,
    // by a hash of "cat": categories that share one only predict worse).
    static constexpr size_t kArgSlots = 16;
    KeyPredictor eventKeys_;
    KeyPredictor argKeys_[kArgSlots];
};

}  // namespace osc::kineto
