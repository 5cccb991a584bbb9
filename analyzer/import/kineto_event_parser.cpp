#include "analyzer/import/kineto_event_parser.h"

#include "analyzer/import/kineto_fields.h"

namespace osc::kineto {

using json_in_place::Cursor;

namespace {

// The depth of an event's own fields, for Cursor::skipValue's limit.
constexpr int kEventDepth = 1;

// Reads `"key":` (p at the quote) and returns the key's text.
std::string_view keyOf(Cursor& c, std::string& scratch) {
    if (c.peek() != '"') Cursor::fail();
    ++c.p;
    const std::string_view key = c.string(scratch);
    c.expect(':');
    return key;
}

// After a member: true for ',' (another follows), false for the closing `close`.
bool nextMember(Cursor& c, char close) {
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
    do {
        const uint8_t key = eventKey(keyOf(c, key_));
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
    do {
        const uint8_t key = argKey(keyOf(c, key_));
        const int first = c.peek();
        if (first == '[' && (key == kGrid || key == kBlock)) {
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
