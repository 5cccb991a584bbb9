// One value read from a Flight Recorder dump (a JSON object, or what a
// pickle built), as both dump readers hand it over: a flat tree in preorder,
// nodes in one vector and text in one buffer, so that reading a dump of a
// million entries reuses the same storage entry after entry instead of
// allocating per value. Tuples read as lists (JSON has none). The fields'
// meaning is flight_recorder_fields.cpp's business; this only holds them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace osc::hang {

enum class DataKind : uint8_t { None, Bool, Int, Float, Text, Bytes, List, Dict };

// 32 bytes: a dump of a million entries builds a few dozen per entry.
struct DataNode {
    DataKind kind = DataKind::None;
    bool boolean = false;
    // An integer beyond int64 (a pickle's long, JSON digits past 2^63):
    // `integer` is then 0 and `text` holds its decimal digits.
    bool bigInt = false;
    uint32_t children = 0;              // list items; a dict's keys and values, alternating
    uint32_t end = 0;                   // one past this node's subtree: the next sibling
    uint32_t textAt = 0, textSize = 0;  // Text, Bytes, big integers
    union {
        int64_t integer = 0;  // Int
        double real;          // Float
    };
};

class DataTree {
public:
    void clear() {
        nodes_.clear();
        text_.clear();
    }
    size_t size() const { return nodes_.size(); }
    const DataNode& operator[](uint32_t i) const { return nodes_[i]; }
    std::string_view text(uint32_t i) const {
        const DataNode& n = nodes_[i];
        return std::string_view(text_).substr(n.textAt, n.textSize);
    }

    // Building, in preorder: scalars, and containers opened then closed.
    uint32_t addNone() { return push(DataNode{}); }
    void reserve(size_t nodes, size_t textBytes) {
        nodes_.reserve(nodes);
        text_.reserve(textBytes);
    }
    uint32_t addBool(bool v) {
        DataNode n;
        n.kind = DataKind::Bool;
        n.boolean = v;
        return push(n);
    }
    uint32_t addInt(int64_t v) {
        DataNode n;
        n.kind = DataKind::Int;
        n.integer = v;
        return push(n);
    }
    uint32_t addBigInt(std::string_view digits);
    uint32_t addFloat(double v) {
        DataNode n;
        n.kind = DataKind::Float;
        n.real = v;
        return push(n);
    }
    uint32_t addText(std::string_view s, DataKind kind = DataKind::Text);
    uint32_t open(DataKind kind) {
        DataNode n;
        n.kind = kind;
        return push(n);
    }
    // Closes container `at`, whose direct children were `children` values.
    void close(uint32_t at, uint32_t children) {
        nodes_[at].children = children;
        nodes_[at].end = static_cast<uint32_t>(nodes_.size());
    }

    // Appends `from`'s subtree at `at` (its nodes in preorder, its texts).
    uint32_t copy(const DataTree& from, uint32_t at);

    // Reading: a dict's value for `key`, a list's items.
    std::optional<uint32_t> find(uint32_t dict, std::string_view key) const;
    std::vector<uint32_t> items(uint32_t list) const;

private:
    uint32_t push(const DataNode& n);
    std::vector<DataNode> nodes_;
    std::string text_;
};

// What a dump reader hands over: each top-level field but "entries" once,
// and each item of the top-level "entries" list as soon as it is read.
class DumpSink {
public:
    virtual ~DumpSink() = default;
    virtual void field(std::string_view key, const DataTree& value) = 0;
    virtual void entry(const DataTree& value) = 0;
};

}  // namespace osc::hang
