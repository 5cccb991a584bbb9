#include "analyzer/import/kineto_event_parser.h"

#include "analyzer/import/kineto_fields.h"

#include <cstddef>

namespace osc::kineto {

using json_in_place::Cursor;

namespace {

// The depth of an event's own fields, for Cursor::skipValue's limit.
constexpr int kEventDepth = 1;

// Reads `"key":` (after white space) and returns lookup(its text): the key
// learnt at `position` where its bytes come next, else the key read and
// then learnt there.
template <typename Lookup>
[[gnu::always_inline]] inline uint8_t keyAt(Cursor& c, std::string& scratch, KeyPredictor& predictor, size_t position,
                                            Lookup lookup) {
    if (c.peek() != '"') Cursor::fail();
    uint8_t key = 0;
    if (c.end - c.p >= static_cast<std::ptrdiff_t>(KeyPredictor::kBytes) && predictor.match(c.p, position, key))
        return key;
    const char* from = c.p;
    ++c.p;
    const std::string_view text = c.string(scratch);
    c.expect(':');
    key = lookup(text);
    if (text.data() == from + 1) predictor.learn(position, from, c.p, key);  // not decoded from escapes
    return key;
}

// The args slot of an event's category.
size_t argSlot(const std::string& cat, size_t slots) {
    if (cat.empty()) return 0;
    const auto at = [&](size_t i) { return static_cast<size_t>(static_cast<unsigned char>(cat[i])); };
    return (cat.size() * 31 + at(0) * 7 + at(cat.size() / 2) * 3 + at(cat.size() - 1)) % slots;
}

// After a member: true for ',' (another follows), false for the closing `close`.
[[gnu::always_inline]] inline bool nextMember(Cursor& c, char close) {
    const int next = c.peek();
    ++c.p;
    if (next == ',') return true;
    if (next != close) Cursor::fail();
    return false;
}

}  // namespace

void EventParser::parse(Cursor& c, Event& event) {
    if (c.peek() != '{') Cursor::fail();  // SaxHandler: "traceEvents[N] is not an object"
    ++c.p;
    event.clear();
    if (c.peek() == '}') {
        ++c.p;
        return;
    }
    size_t position = 0;
    do {
        const uint8_t key = keyAt(c, key_, eventKeys_, position++, eventKey);
        const int first = c.peek();
        if (first == '{') {
            if (key == kArgs) {
                args(c, event);
                continue;
            }
            if (key != kEvOther)
                throw FormatError(path_, std::string("event field \"") + eventKeyName(key) + "\" is an object");
            c.skipValue(kEventDepth);
        } else if (first == '[') {
            if (key != kEvOther)
                throw FormatError(path_, std::string("event field \"") + eventKeyName(key) + "\" is an array");
            c.skipValue(kEventDepth);
        } else if (key == kEvOther) {
            c.skipValue(kEventDepth);
        } else if (int64_t ns = 0; (key == kTs || key == kDur) && c.decimalMicros(ns)) {
            setEventTime(event, key, ns, path_);  // most of a trace's numbers: no text kept, one pass
        } else {
            setEventField(event, key, c.scalar(value_), path_);
        }
    } while (nextMember(c, '}'));
}

void EventParser::args(Cursor& c, Event& event) {
    ++c.p;  // the '{'
    if (c.peek() == '}') {
        ++c.p;
        return;
    }
    KeyPredictor& predictor = argKeys_[argSlot(event.cat, kArgSlots)];
    size_t position = 0;
    do {
        const uint8_t key = keyAt(c, key_, predictor, position++, argKey);
        const int first = c.peek();
        if (first == '[' && (key == kGrid || key == kBlock) && launchShape_) {
            launchDimensions(c, event, key);
        } else if (first == '{' || first == '[' || key == kArgOther) {
            c.skipValue(kEventDepth + 1);
        } else {
            setArg(event, key, c.scalar(value_));
        }
    } while (nextMember(c, '}'));
}

void EventParser::launchDimensions(Cursor& c, Event& event, uint8_t key) {
    ++c.p;  // the '['
    if (c.peek() == ']') {
        ++c.p;
        return;
    }
    uint8_t index = 0;
    do {
        const int first = c.peek();
        if (first == '{' || first == '[') {
            c.skipValue(kEventDepth + 2);  // SaxHandler skips containers here and counts no element
        } else {
            const Scalar value = c.scalar(value_);
            if (index < 3) setLaunchDimension(event, key, index++, value);
        }
    } while (nextMember(c, ']'));
}

}  // namespace osc::kineto
